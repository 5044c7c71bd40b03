//! Bounded answers (issue 8, point 6): `segments` pages on both backends,
//! embedded and over HTTP, and the whole answer the command line prints by
//! following the pages is the unpaged one.

mod common;

use common::{Gapless, PgSchema, Server};
use serde_json::Value;

/// `2025-06-14T00:00Z` plus `m` minutes, as the ledger prints it.
fn at(m: i64) -> String {
    let t = jiff::Timestamp::from_second(1_749_859_200 + m * 60).unwrap();
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// 2,500 one-minute slices `s0`..; then `r1` retracts minutes 100..200 and
/// `big` lands 150..1500 over them. The segments of minutes 0..2500, by
/// brute force: (start, end, event id).
fn ledger(g: &Gapless) -> Vec<(i64, i64, String)> {
    let mut ndjson = String::new();
    for i in 0..2500 {
        ndjson.push_str(&format!(
            "{{\"asset\":\"clicks\",\"id\":\"s{i}\",\"start\":\"{}\",\"end\":\"{}\"}}\n",
            at(i),
            at(i + 1)
        ));
    }
    let out = g.run(&["ingest", "-"], Some(&ndjson));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let more = format!(
        "{{\"asset\":\"clicks\",\"id\":\"r1\",\"kind\":\"retracted\",\"start\":\"{}\",\"end\":\"{}\"}}\n\
         {{\"asset\":\"clicks\",\"id\":\"big\",\"start\":\"{}\",\"end\":\"{}\"}}\n",
        at(100),
        at(200),
        at(150),
        at(1500)
    );
    let out = g.run(&["ingest", "-"], Some(&more));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut want: Vec<(i64, i64, String)> = (0..100).map(|i| (i, i + 1, format!("s{i}"))).collect();
    want.push((100, 150, "r1".into()));
    want.push((150, 1500, "big".into()));
    want.extend((1500..2500).map(|i| (i, i + 1, format!("s{i}"))));
    want
}

fn flat(v: &Value) -> Vec<(String, String, String)> {
    v["segments"]
        .as_array()
        .unwrap_or_else(|| panic!("no segments in {v}"))
        .iter()
        .map(|s| {
            (
                s["start"].as_str().unwrap().to_string(),
                s["end"].as_str().unwrap().to_string(),
                s["event"]["id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn segments_page_and_follow(g: &Gapless, mode: &str, want: &[(i64, i64, String)]) {
    let want: Vec<_> = want
        .iter()
        .map(|(a, b, id)| (at(*a), at(*b), id.clone()))
        .collect();
    let range = ["--start", "2025-06-14", "--end", &at(2500)];
    // Every page followed by the command line: one answer.
    let mut args = vec!["segments", "clicks"];
    args.extend(range);
    args.push("--json");
    let out = g.run(&args, None);
    assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).expect(&out.stdout[..200]);
    assert_eq!(v["next"], Value::Null, "{mode}");
    assert_eq!(flat(&v), want, "{mode}");
    // Readable: the rows and the count.
    let out = g.run(&args[..args.len() - 1], None);
    assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
    assert!(
        out.stdout.ends_with("1102 segments\n"),
        "{mode}: {}",
        &out.stdout[out.stdout.len() - 200..]
    );
    assert_eq!(out.stdout.lines().count(), 2 + 1102 + 1, "{mode}");

    // One page at a time with --limit, following `next` by hand: at most
    // the limit each, and the pages joined are the same answer.
    let mut joined: Vec<(String, String, String)> = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = vec!["segments", "clicks", "--limit", "400", "--json"];
        args.extend(range);
        if let Some(a) = &after {
            args.extend(["--after", a.as_str()]);
        }
        let out = g.run(&args, None);
        assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
        let v: Value = serde_json::from_str(&out.stdout).unwrap();
        let page = flat(&v);
        assert!(
            !page.is_empty() && page.len() <= 400,
            "{mode}: {}",
            page.len()
        );
        for s in page {
            match joined.last_mut() {
                Some(l) if l.2 == s.2 && l.1 == s.0 => l.1 = s.1,
                _ => joined.push(s),
            }
        }
        pages += 1;
        match v["next"].as_str() {
            Some(n) => after = Some(n.to_string()),
            None => break,
        }
    }
    assert!(pages >= 3, "{mode}: {pages} pages");
    assert_eq!(joined, want, "{mode}");

    // A page out of bounds is refused naming the limit.
    let mut args = vec!["segments", "clicks", "--limit", "10001"];
    args.extend(range);
    let out = g.run(&args, None);
    assert_eq!(out.code, 2, "{mode}");
    assert!(
        out.stderr.contains("give 1 to 10000"),
        "{mode}: {}",
        out.stderr
    );
}

fn both(g: &mut Gapless, backend: &str) {
    let want = ledger(g);
    segments_page_and_follow(g, &format!("{backend} embedded"), &want);
    let server = Server::start(g);
    g.url = Some(server.url.clone());
    segments_page_and_follow(g, &format!("{backend} client"), &want);
    g.url = None;
}

#[test]
fn segments_page_with_a_cursor_on_sqlite() {
    both(&mut Gapless::new(), "sqlite");
}

#[test]
fn segments_page_with_a_cursor_on_postgres() {
    let schema = PgSchema::new();
    both(&mut Gapless::postgres(&schema), "postgres");
}

/// NDJSON of `n` events with ids `p{i}`, one minute each from minute `from`.
fn ndjson(from: i64, n: i64) -> String {
    (from..from + n)
        .map(|i| {
            format!(
                "{{\"asset\":\"parts\",\"id\":\"p{i}\",\"start\":\"{}\",\"end\":\"{}\",\"extra\":{{\"pad\":\"{}\"}}}}\n",
                at(i),
                at(i + 1),
                "x".repeat(40)
            )
        })
        .collect()
}

fn stored(g: &Gapless) -> u64 {
    let out = g.run(&["asset", "show", "parts", "--json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str::<Value>(&out.stdout).unwrap()["events"]
        .as_u64()
        .unwrap()
}

/// `--url … ingest` of a file larger than the server's body limit
/// (`serve --body-limit`): sent in parts at line ends, each atomic, and the
/// output says so; a failed part is named with what is stored, and sending
/// the file again stores the rest.
#[test]
fn ingest_over_url_sends_a_large_file_in_parts() {
    let mut g = Gapless::new();
    let out = g.run(&["asset", "set", "parts"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let server = Server::start_with(&g, |c| {
        c.args(["--body-limit", "65536"]);
    });
    let local = Gapless {
        dir: tempfile::tempdir().unwrap(),
        db: g.db.clone(),
        url: None,
    };
    g.url = Some(server.url.clone());

    // The limit is enforced and named.
    let small = ndjson(0, 10);
    let file = g.dir.path().join("small.ndjson");
    std::fs::write(&file, &small).unwrap();
    let out = g.run(&["ingest", file.to_str().unwrap(), "--json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("parts"), "one request: {}", out.stderr);

    let big = ndjson(10, 6000); // about 0.9 MB: 13 times the limit
    assert!(big.len() > 12 * 65536, "{}", big.len());
    let file = g.dir.path().join("big.ndjson");
    std::fs::write(&file, &big).unwrap();
    let out = g.run(&["ingest", file.to_str().unwrap(), "--json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["accepted"], 6000, "{v}");
    assert!(out.stderr.contains("parts of at most"), "{}", out.stderr);
    assert!(
        out.stderr.contains("atomically on its own"),
        "{}",
        out.stderr
    );
    assert_eq!(stored(&local), 6010);

    // A bad line in the middle: the part with it fails, the ones before
    // are stored, and the message says so in one line.
    let mut text = ndjson(10_000, 3000);
    let bad = 2001;
    let mut lines: Vec<&str> = text.lines().collect();
    lines[bad - 1] = "{\"asset\":\"parts\",\"id\":\"oops\",\"start\":\"2025-06-14T00:00Z\"}";
    text = lines.join("\n") + "\n";
    let file = g.dir.path().join("bad.ndjson");
    std::fs::write(&file, &text).unwrap();
    let out = g.run(&["ingest", file.to_str().unwrap()], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    let message = out.stderr.trim();
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains(&format!("line {bad}")), "{message}");
    assert!(message.contains("is not stored;"), "{message}");
    assert!(message.contains("are stored"), "{message}");
    assert!(
        message.contains("safe when its events carry ids"),
        "{message}"
    );
    let after_failure = stored(&local);
    assert!(
        after_failure > 6010 && after_failure < 6010 + 2000,
        "{after_failure}"
    );
    // Fixed and sent again: the stored ones are duplicates, the rest new.
    let fixed = ndjson(10_000, 3000);
    std::fs::write(&file, &fixed).unwrap();
    let out = g.run(&["ingest", file.to_str().unwrap(), "--json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v["duplicates"].as_u64().unwrap(),
        after_failure - 6010,
        "{v}"
    );
    assert_eq!(stored(&local), 9010);

    // Standard input is parted the same way.
    let out = g.run(&["ingest", "-", "--json"], Some(&ndjson(20_000, 1000)));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("parts"), "{}", out.stderr);
    assert_eq!(stored(&local), 10_010);
}
