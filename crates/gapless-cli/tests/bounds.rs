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

/// The address space `gapless serve` gets in [`worst_requests_under_a_memory_limit`]:
/// an idle server maps a few hundred MiB at most (thread stacks, allocator
/// arenas); one answering the worst requests below without their bounds
/// would need many GiB (a 10,000-year `windows` alone).
const MEMORY_LIMIT: u64 = 1 << 30;

/// 200,000 one-minute events of `clicks` from 2025-01-01, every tenth
/// retracting a slice three minutes earlier instead of landing its own
/// (so 40,000 gaps in all), as NDJSON.
fn many_events() -> String {
    let base = 1_735_689_600_i64; // 2025-01-01T00:00:00Z
    let mut out = String::with_capacity(17 << 20);
    for i in 0..200_000_i64 {
        let (m, kind) = if i % 10 == 5 {
            (i - 3, ",\"kind\":\"retracted\"")
        } else {
            (i, "")
        };
        let s = jiff::Timestamp::from_second(base + m * 60).unwrap();
        let e = jiff::Timestamp::from_second(base + m * 60 + 60).unwrap();
        out.push_str(&format!(
            "{{\"asset\":\"clicks\",\"start\":\"{s}\",\"end\":\"{e}\"{kind}}}\n"
        ));
    }
    // 999 more assets, each covering 2025-01-01.
    for i in 0..999 {
        out.push_str(&format!(
            "{{\"asset\":\"a{i}\",\"start\":\"2025-01-01\",\"end\":\"2025-01-02\"}}\n"
        ));
    }
    // `holes`: 110,000 one-second events a second apart, so 110,000 gaps
    // in 61 hours: more than the missing lists of one windows answer hold.
    for i in 0..110_000_i64 {
        let s = jiff::Timestamp::from_second(base + 2 * i).unwrap();
        let e = jiff::Timestamp::from_second(base + 2 * i + 1).unwrap();
        out.push_str(&format!(
            "{{\"asset\":\"holes\",\"start\":\"{s}\",\"end\":\"{e}\"}}\n"
        ));
    }
    out
}

/// The anonymous memory of process `pid` (its heap: not the ledger's file
/// mapped in), in bytes.
fn anonymous_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no RssAnon in /proc/{pid}/status"));
    kib << 10
}

/// What the server's heap may hold once its answers are sent: its caches
/// and a fraction of its peak, which the largest answers at once take to
/// hundreds of megabytes; more kept after them is memory not given back.
const MEMORY_AT_REST: u64 = 96 << 20;

/// A key format whose keys are the longest allowed: the default, then
/// literal text up to 250 bytes.
fn longest_key_format() -> String {
    let format = format!("{}{}", gapless_core::DEFAULT_KEY_FORMAT, "x".repeat(231));
    assert_eq!(format.len(), 248);
    format
}

/// `gapless serve` on `g`'s ledger under `prlimit --as=limit`, on a port of
/// its own: the child and its URL.
fn serve_limited(g: &Gapless, limit: u64) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut cmd = std::process::Command::new("prlimit");
    cmd.arg(format!("--as={limit}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_gapless"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .current_dir(g.dir.path())
        .env_remove("GAPLESS_URL")
        .env("GAPLESS_DB", &g.db)
        .env("RUST_LOG", "warn")
        // The limit is on address space, and glibc (SQLite's allocator;
        // the binary's own is mimalloc) reserves 64 MiB of it for each
        // malloc arena, up to eight per core: a burst of requests on fresh
        // threads could spend the limit on reservations it never touches.
        // Two arenas keep the limit a limit on memory.
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn prlimit gapless serve");
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("gapless serve exited before listening")
            .unwrap();
        if let Some(rest) = line.strip_prefix("listening on ") {
            break rest.trim().to_string();
        }
    };
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            eprintln!("serve: {line}");
        }
    });
    (child, url)
}

/// One answer: status and JSON body (null when the body is not JSON).
fn answer(agent: &ureq::Agent, method: &str, url: &str, body: Option<&str>) -> (u16, Value, usize) {
    let sent = match body {
        None => agent.get(url).call(),
        Some(b) => agent
            .post(url)
            .content_type("application/json")
            .send(b.as_bytes()),
    };
    let mut r = sent.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = r.status().as_u16();
    let text = r
        .body_mut()
        .with_config()
        .limit(1 << 30)
        .read_to_string()
        .unwrap();
    let len = text.len();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        len,
    )
}

/// A body of `len` bytes sent chunked to `POST /v1/events` over a raw
/// socket (the server may answer and close before it is all sent): the
/// status line and body of the answer.
fn huge_body(addr: &str, len: usize) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let head = "POST /v1/events HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-ndjson\r\n\
                transfer-encoding: chunked\r\n\r\n";
    let _ = s.write_all(head.as_bytes());
    let chunk = vec![b' '; 1 << 20];
    let mut sent = 0;
    while sent < len {
        let frame = format!("{:x}\r\n", chunk.len());
        if s.write_all(frame.as_bytes()).is_err()
            || s.write_all(&chunk).is_err()
            || s.write_all(b"\r\n").is_err()
        {
            break;
        }
        sent += chunk.len();
    }
    let _ = s.write_all(b"0\r\n\r\n");
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

/// The worst requests, several at once, against `gapless serve` under a
/// memory limit on a ledger of 310,000 events: each is answered with a
/// bounded answer (a 400 naming the count and the limit, or a page; the
/// largest windows answers, of 10,000 windows with the longest keys or
/// with the most gaps, a few megabytes), the server is alive and answers
/// `/healthz` afterwards, and its memory falls back. The command line
/// under the same limit refuses the `windows` it cannot answer.
#[test]
fn worst_requests_under_a_memory_limit() {
    let g = Gapless::new();
    let out = g.run(&["ingest", "-"], Some(&many_events()));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (mut child, url) = serve_limited(&g, MEMORY_LIMIT);
    let addr = url.trim_start_matches("http://").to_string();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let q = |path: &str| format!("{url}/v1/assets/clicks/{path}");
    let all = "start=0001-01-01&end=9999-12-30";
    let many = |n: usize| {
        serde_json::json!({"assets": vec!["clicks"; n], "start": "0001-01-01", "end": "9999-12-30"})
            .to_string()
    };
    let mut distinct = vec!["clicks".to_string()];
    distinct.extend((0..999).map(|i| format!("a{i}")));
    let distinct =
        serde_json::json!({"assets": distinct, "start": "0001-01-01", "end": "9999-12-30"})
            .to_string();
    type Check = Box<dyn Fn(u16, &Value, usize) + Send + Sync>;
    // The probe's format: `%Y` 16,000 times, percent-encoded.
    let probe = "%25Y".repeat(16_000);
    let longest = longest_key_format().replace('%', "%25");
    let mut cases: Vec<(String, Option<String>, Check)> = vec![
        (
            q(&format!(
                "windows?start=2025-06-01&end=2026-07-20&every=1h&key_format={probe}"
            )),
            None,
            Box::new(|s, v, _| {
                assert_eq!(s, 400, "{v}");
                let e = v["error"].as_str().unwrap();
                assert!(
                    e.starts_with("key_format: ")
                        && e.contains("32000 bytes")
                        && e.contains("256 allowed"),
                    "{e}"
                );
            }),
        ),
        (
            q(&format!("windows?{all}&every=1m")),
            None,
            Box::new(|s, v, _| {
                assert_eq!(s, 400, "{v}");
                let e = v["error"].as_str().unwrap();
                assert!(
                    e.contains("5258962081 windows") && e.contains("limit of 10000"),
                    "{e}"
                );
            }),
        ),
        (
            q(&format!("windows?{all}&every=1h")),
            None,
            Box::new(|s, v, _| {
                assert_eq!(s, 400, "{v}");
                let e = v["error"].as_str().unwrap();
                assert!(
                    e.contains("87649369 windows") && e.contains("limit of 10000"),
                    "{e}"
                );
            }),
        ),
        (
            q(&format!("segments?{all}")),
            None,
            Box::new(|s, v, _| {
                assert_eq!(s, 200, "{v}");
                assert_eq!(v["segments"].as_array().unwrap().len(), 1000);
                assert!(v["next"].is_string(), "{}", v["next"]);
            }),
        ),
        (
            q(&format!("segments?{all}&limit=10000")),
            None,
            Box::new(|s, v, _| {
                assert_eq!(s, 200, "{v}");
                assert_eq!(v["segments"].as_array().unwrap().len(), 10_000);
            }),
        ),
        (
            q(&format!("coverage?{all}")),
            None,
            Box::new(|s, v, _| {
                assert_eq!(s, 200, "{v}");
                assert_eq!(v["missing"].as_array().unwrap().len(), 10_000);
                // 40,000 gaps among the events, one before them, one after.
                assert_eq!(v["missing_count"], 40_002, "{}", v["missing_count"]);
            }),
        ),
        (
            q("events?limit=10000"),
            None,
            Box::new(|s, v, _| {
                assert_eq!(s, 200, "{v}");
                assert_eq!(v["events"].as_array().unwrap().len(), 10_000);
                assert!(v["next"].is_string());
            }),
        ),
        (
            q("events?limit=10001"),
            None,
            Box::new(|s, v, _| {
                assert_eq!(s, 400, "{v}");
                assert!(
                    v["error"].as_str().unwrap().contains("give 1 to 10000"),
                    "{v}"
                );
            }),
        ),
        (
            format!("{url}/v1/coverage"),
            Some(many(1000)),
            Box::new(|s, v, _| {
                assert_eq!(s, 200, "{v}");
                assert_eq!(v["missing_count"], 40_002);
            }),
        ),
        (
            format!("{url}/v1/coverage"),
            Some(distinct),
            Box::new(|s, v, _| {
                assert_eq!(s, 200, "{v}");
                // 288 gaps of clicks on 2025-01-01, one before, one after.
                assert_eq!(v["missing_count"], 290);
            }),
        ),
        (
            format!("{url}/v1/coverage"),
            Some(many(100_000)),
            Box::new(|s, v, _| {
                assert_eq!(s, 400, "{v}");
                let e = v["error"].as_str().unwrap();
                assert!(
                    e.contains("100000 assets") && e.contains("limit of 1000"),
                    "{e}"
                );
            }),
        ),
    ];
    // The largest windows answers: 10,000 windows with the longest keys,
    // and the most gaps their missing lists hold together.
    let largest: Vec<(String, Option<String>, Check)> = vec![
        (
            q(&format!(
                "windows?start=2025-01-01&end=2025-05-19T21:20&every=20m&key_format={longest}"
            )),
            None,
            Box::new(|s, v, len| {
                assert_eq!(s, 200, "{v}");
                let windows = v["windows"].as_array().unwrap();
                assert_eq!(windows.len(), 10_000);
                assert!(windows
                    .iter()
                    .all(|w| w["key"].as_str().unwrap().len() == 250));
                assert!(len < 16 << 20, "an answer of {len} bytes");
            }),
        ),
        (
            format!(
                "{url}/v1/assets/holes/windows?start=2025-01-01&end=2025-01-03T13:00&every=1m\
                 &key_format={longest}"
            ),
            None,
            Box::new(|s, v, len| {
                assert_eq!(s, 200, "{v}");
                let windows = v["windows"].as_array().unwrap();
                let listed: usize = windows
                    .iter()
                    .map(|w| w["missing"].as_array().unwrap().len())
                    .sum();
                let counted: u64 = windows
                    .iter()
                    .map(|w| w["missing_count"].as_u64().unwrap())
                    .sum();
                // 30 gaps a window: more than the lists hold together.
                assert_eq!(counted, 30 * 3_660);
                assert_eq!(listed, 100_000);
                assert_eq!(windows[0]["missing"].as_array().unwrap().len(), 30);
                assert!(windows[3_659]["missing"].as_array().unwrap().is_empty());
                assert!(len < 16 << 20, "an answer of {len} bytes");
            }),
        ),
    ];
    let small = cases.len();
    cases.extend(largest);
    // The largest ones several times over, for a peak of hundreds of
    // megabytes that the server must give back.
    let repeats = |i: usize| if i < small { 1 } else { 4 };
    // Every case twice, all at once, and two huge bodies besides.
    std::thread::scope(|scope| {
        let mut running = Vec::new();
        for _ in 0..2 {
            for (i, (url, body, check)) in cases.iter().enumerate() {
                for _ in 0..repeats(i) {
                    let agent = agent.clone();
                    running.push(scope.spawn(move || {
                        let (s, v, len) = answer(&agent, "", url, body.as_deref());
                        if i < small {
                            assert!(len < 4 << 20, "{url}: an answer of {len} bytes");
                        }
                        check(s, &v, len);
                    }));
                }
            }
            let addr = addr.clone();
            running.push(scope.spawn(move || {
                let got = huge_body(&addr, 80 << 20);
                assert!(
                    got.starts_with("HTTP/1.1 413"),
                    "{}",
                    &got[..got.len().min(300)]
                );
                assert!(got.contains("limit of 67108864 bytes"), "{got}");
            }));
        }
        for t in running {
            t.join().unwrap();
        }
    });
    assert_eq!(child.try_wait().unwrap(), None, "gapless serve died");
    let (s, _, _) = answer(&agent, "GET", &format!("{url}/healthz"), None);
    assert_eq!(s, 200);
    // Its memory falls back once the answers are sent.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let kept = loop {
        let kept = anonymous_memory(child.id());
        if kept <= MEMORY_AT_REST || std::time::Instant::now() > until {
            break kept;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        kept <= MEMORY_AT_REST,
        "the server keeps {} MiB after its answers, more than {} MiB",
        kept >> 20,
        MEMORY_AT_REST >> 20
    );
    let _ = child.kill();
    let _ = child.wait();

    // The command line under the same limit: refused, not allocated.
    for (every, count) in [("1m", "5258962081"), ("1h", "87649369")] {
        let out = common::run(
            std::process::Command::new("prlimit")
                .arg(format!("--as={MEMORY_LIMIT}"))
                .arg("--")
                .arg(env!("CARGO_BIN_EXE_gapless"))
                .args([
                    "windows",
                    "clicks",
                    "--start",
                    "0001-01-01",
                    "--end",
                    "9999-12-30",
                ])
                .args(["--every", every])
                .env("GAPLESS_DB", &g.db)
                .env_remove("GAPLESS_URL"),
            None,
        );
        assert_eq!(out.code, 2, "{every}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!("{count} windows"))
                && out.stderr.contains("limit of 10000"),
            "{}",
            out.stderr
        );
    }
    // And segments over everything, every page followed, stays under it.
    let out = common::run(
        std::process::Command::new("prlimit")
            .arg(format!("--as={MEMORY_LIMIT}"))
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_gapless"))
            .args([
                "segments",
                "clicks",
                "--start",
                "2025-01-01",
                "--end",
                "2025-02-01",
                "--json",
            ])
            .env("GAPLESS_DB", &g.db)
            .env_remove("GAPLESS_URL"),
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["segments"].as_array().unwrap().len(), 31 * 1440 * 9 / 10);
}

/// An `events` page also ends once its `extra` objects reach 16 MiB, so
/// that 10,000 events of 64 KiB each are not one answer of 640 MiB; the
/// pages still hold every event once.
#[test]
fn events_pages_are_bounded_in_bytes_too() {
    let g = Gapless::new();
    let pad = "x".repeat(60 << 10);
    let ndjson: String = (0..600)
        .map(|i| {
            format!(
                "{{\"asset\":\"fat\",\"id\":\"f{i}\",\"start\":\"{}\",\"end\":\"{}\",\"extra\":{{\"pad\":\"{pad}\"}}}}\n",
                at(i),
                at(i + 1)
            )
        })
        .collect();
    let out = g.run(&["ingest", "-"], Some(&ndjson));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let mut args = vec!["events", "fat", "--limit", "10000", "--json"];
        if let Some(a) = &after {
            args.extend(["--after", a.as_str()]);
        }
        let out = g.run(&args, None);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.len() < 40 << 20,
            "an answer of {} bytes",
            out.stdout.len()
        );
        let v: Value = serde_json::from_str(&out.stdout).unwrap();
        let events = v["events"].as_array().unwrap();
        pages.push(events.len());
        seen.extend(events.iter().map(|e| e["id"].as_str().unwrap().to_string()));
        match v["next"].as_str() {
            Some(n) => after = Some(n.to_string()),
            None => break,
        }
    }
    assert!(pages.len() >= 2 && pages[0] < 600, "{pages:?}");
    let want: Vec<String> = (0..600).map(|i| format!("f{i}")).collect();
    assert_eq!(seen, want);
}
