//! `assets` and `rules` a page at a time, as a user asks on the command
//! line, embedded and over HTTP, on SQLite and PostgreSQL: pages followed by
//! their cursors equal every page at once and a filter of the names; each
//! asset's overview equals what `frontier` and `check` answer; bad limits
//! and cursors are one line naming the flag.

mod common;

use common::{Gapless, PgSchema, Server};
use serde_json::Value;

const NAMES: &[&str] = &[
    "a",
    "ab",
    "B",
    "b.x",
    "s3://lake/orders",
    "s3://lake/ünïcode",
    "with space",
    "amp&eq=",
    "日本",
];

fn json(g: &Gapless, args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let out = g.run(&args, None);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

fn names(v: &Value, key: &str, field: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a[field].as_str().unwrap().to_string())
        .collect()
}

fn by_bytes(mut names: Vec<String>) -> Vec<String> {
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    names
}

/// Assets covered over the last days (so the day's and week's shares are
/// neither all nor nothing), one only declared; rules over some of them.
fn fill(g: &Gapless) {
    let now = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).unwrap();
    let hours = |h: i64| (now - jiff::SignedDuration::from_hours(h)).to_string();
    let mut ndjson = String::new();
    for (i, name) in NAMES.iter().enumerate() {
        if i == 2 {
            continue;
        }
        let name = serde_json::to_string(name).unwrap();
        let (a, b) = (hours(30 + 7 * i as i64), hours(i as i64));
        ndjson.push_str(&format!(
            "{{\"asset\": {name}, \"start\": \"{a}\", \"end\": \"{b}\"}}\n"
        ));
        ndjson.push_str(&format!(
            "{{\"asset\": {name}, \"start\": \"{}\", \"end\": \"{}\", \"kind\": \"retracted\"}}\n",
            hours(20),
            hours(19)
        ));
    }
    let out = g.run(&["ingest", "-"], Some(&ndjson));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(g.run(&["asset", "set", NAMES[2]], None).code, 0);
    for (i, rule) in ["orders_hourly", "a_daily", "b-x", "B"].iter().enumerate() {
        let out = g.run(
            &[
                "rule",
                "set",
                rule,
                "--assets",
                NAMES[i],
                "--every",
                "1h",
                "--from",
                "2025-06-01",
            ],
            None,
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
}

fn pages_and_overviews(g: &Gapless, mode: &str) {
    let all = json(g, &["assets"]);
    assert_eq!(all["next"], Value::Null, "{mode}");
    let want = by_bytes(NAMES.iter().map(|s| s.to_string()).collect());
    assert_eq!(names(&all, "assets", "asset"), want, "{mode}");
    // `asset list` is the same listing.
    assert_eq!(
        names(&json(g, &["asset", "list"]), "assets", "asset"),
        want,
        "{mode}"
    );
    for (prefix, contains) in [
        (None, None),
        (Some("s3://lake/"), None),
        (None, Some("a")),
        (Some("a"), Some("b")),
        (Some("zz"), None),
    ] {
        let mut args = vec!["assets".to_string()];
        if let Some(p) = prefix {
            args.extend(["--prefix".into(), p.into()]);
        }
        if let Some(c) = contains {
            args.extend(["--contains".into(), c.into()]);
        }
        let filtered: Vec<String> = want
            .iter()
            .filter(|n| prefix.is_none_or(|p| n.starts_with(p)))
            .filter(|n| contains.is_none_or(|c| n.contains(c)))
            .cloned()
            .collect();
        let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(
            names(&json(g, &args_ref), "assets", "asset"),
            filtered,
            "{mode} {args:?}"
        );
        // Page by page, two at a time.
        let mut got = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let mut a = args.clone();
            a.extend(["--limit".into(), "2".into()]);
            if let Some(c) = &after {
                a.extend(["--after".into(), c.clone()]);
            }
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let page = json(g, &a);
            let n = names(&page, "assets", "asset");
            assert!(n.len() <= 2, "{mode}");
            got.extend(n);
            match page["next"].as_str() {
                Some(c) => after = Some(c.to_string()),
                None => break,
            }
        }
        assert_eq!(got, filtered, "{mode} {args:?} by pages");
    }
    // The overview is what the questions answer.
    let as_of = all["as_of"].as_str().unwrap().to_string();
    let as_of_us = as_of.parse::<jiff::Timestamp>().unwrap().as_microsecond();
    for a in all["assets"].as_array().unwrap() {
        let name = a["asset"].as_str().unwrap();
        if a["first_covered"].is_null() {
            assert_eq!(a["frontier"], Value::Null, "{mode} {name}");
            assert_eq!(a["covered_ratio_day"], 0.0, "{mode} {name}");
            continue;
        }
        let f = json(g, &["frontier", name]);
        assert_eq!(a["frontier"], f["frontier"], "{mode} {name}");
        for (field, hours) in [("covered_ratio_day", 24), ("covered_ratio_week", 168)] {
            let start = jiff::Timestamp::from_microsecond(as_of_us - hours * 3_600_000_000)
                .unwrap()
                .to_string();
            let out = g.run(
                &["check", name, "--start", &start, "--end", &as_of, "--json"],
                None,
            );
            let check: Value = serde_json::from_str(&out.stdout).unwrap();
            assert_eq!(a[field], check["covered_ratio"], "{mode} {name} {field}");
            assert!(a[field].as_f64().unwrap() > 0.0, "{mode} {name} {field}");
        }
    }
    // Readable: one line an asset, with the frontier and the shares.
    let out = g.run(&["assets", "--prefix", "s3://"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].contains("frontier") && lines[0].contains("week"),
        "{}",
        out.stdout
    );
    assert!(lines[1].starts_with("s3://lake/orders"), "{}", out.stdout);
    assert!(lines[1].contains('%'), "{}", out.stdout);
    assert_eq!(lines.len(), 4, "{}", out.stdout);

    // Rules, the same way.
    let rules = json(g, &["rules"]);
    let want = by_bytes(
        ["orders_hourly", "a_daily", "b-x", "B"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    );
    assert_eq!(names(&rules, "rules", "rule"), want, "{mode}");
    assert_eq!(rules["next"], Value::Null);
    let first = json(g, &["rule", "list", "--limit", "3"]);
    assert_eq!(names(&first, "rules", "rule"), want[..3], "{mode}");
    let next = first["next"].as_str().unwrap();
    let rest = json(g, &["rules", "--limit", "3", "--after", next]);
    assert_eq!(names(&rest, "rules", "rule"), want[3..], "{mode}");
    assert_eq!(rest["next"], Value::Null);
    assert_eq!(
        names(&json(g, &["rules", "--prefix", "b"]), "rules", "rule"),
        ["b-x"],
        "{mode}"
    );

    // Bad limits and cursors: one line naming the flag.
    for (args, words) in [
        (
            &["assets", "--limit", "0"][..],
            "limit: 0 is out of range: give 1 to 1000",
        ),
        (
            &["assets", "--limit", "1001"][..],
            "limit: 1001 is out of range: give 1 to 1000",
        ),
        (
            &["assets", "--after", "!"][..],
            "after: invalid cursor \"!\"",
        ),
        (
            &["rules", "--limit", "x"][..],
            "limit: \"x\" is not a number",
        ),
    ] {
        let out = g.run(args, None);
        assert_eq!(out.code, 2, "{mode} {args:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{mode}: {}", out.stderr);
        assert!(
            out.stderr.contains(words),
            "{mode} {args:?}: {}",
            out.stderr
        );
    }
}

fn both(g: &mut Gapless) {
    fill(g);
    pages_and_overviews(g, "embedded");
    let server = Server::start(g);
    g.url = Some(server.url.clone());
    pages_and_overviews(g, "client");
}

#[test]
fn listings_page_on_sqlite() {
    both(&mut Gapless::new());
}

#[test]
fn listings_page_on_postgres() {
    let schema = PgSchema::new();
    both(&mut Gapless::postgres(&schema));
}
