//! The questions as a user asks them, on the command line and (the same
//! ledger served) over HTTP: naive instants in `--tz`, the policy flags that
//! need no quoting, backfill plans from `windows`, and bounded answers.

mod common;

use common::{Gapless, PgSchema, Server};
use serde_json::Value;

/// A ledger with `orders` covered on 2025-06-14 from 00:00 to 10:00 and from
/// 10:15 to 24:00 UTC (one 15-minute gap).
fn orders() -> Gapless {
    let g = Gapless::new();
    let ndjson = "{\"asset\": \"orders\", \"start\": \"2025-06-14T00:00Z\", \"end\": \"2025-06-14T10:00Z\"}\n\
                  {\"asset\": \"orders\", \"start\": \"2025-06-14T10:15Z\", \"end\": \"2025-06-15T00:00Z\"}\n";
    let out = g.run(&["ingest", "-"], Some(ndjson));
    assert_eq!(out.code, 0, "{}", out.stderr);
    g
}

fn json(g: &Gapless, args: &[&str]) -> (i32, Value) {
    let mut args = args.to_vec();
    args.push("--json");
    let out = g.run(&args, None);
    let v = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
    (out.code, v)
}

/// Both ways in on the same ledger: the binary on the file, and the binary
/// in client mode against `gapless serve` on it.
fn both(g: &mut Gapless, check: impl Fn(&Gapless, &str)) {
    check(g, "embedded");
    let server = Server::start(g);
    g.url = Some(server.url.clone());
    check(g, "client");
    g.url = None;
}

#[test]
fn tz_reads_every_naive_instant_of_the_question() {
    let mut g = orders();
    both(&mut g, |g, mode| {
        // Berlin is UTC+2 in June: 2025-06-14 local midnight is 22:00Z the
        // day before, 12:00 local is 10:00Z.
        let (_, v) = json(
            g,
            &[
                "check",
                "orders",
                "--start",
                "2025-06-14",
                "--end",
                "2025-06-14T12:00",
                "--tz",
                "Europe/Berlin",
            ],
        );
        assert_eq!(v["start"], "2025-06-13T22:00:00Z", "{mode}");
        assert_eq!(v["end"], "2025-06-14T10:00:00Z", "{mode}");
        // Without --tz, naive is UTC as before.
        let (_, v) = json(
            g,
            &[
                "check",
                "orders",
                "--start",
                "2025-06-14",
                "--end",
                "2025-06-14T12:00",
            ],
        );
        assert_eq!(v["end"], "2025-06-14T12:00:00Z", "{mode}");
        // An offset is an offset whatever --tz says.
        let (_, v) = json(
            g,
            &[
                "frontier",
                "orders",
                "--origin",
                "2025-06-14T02:00+02:00",
                "--tz",
                "Asia/Tokyo",
            ],
        );
        assert_eq!(v["origin"], "2025-06-14T00:00:00Z", "{mode}");
        assert_eq!(v["frontier"], "2025-06-14T10:00:00Z", "{mode}");
        // Without an origin: from the first covered instant.
        let (_, v) = json(g, &["frontier", "orders"]);
        assert_eq!(v["origin"], "2025-06-14T00:00:00Z", "{mode}");
        assert_eq!(v["frontier"], "2025-06-14T10:00:00Z", "{mode}");
    });
    // emit --tz: the stored event is the Berlin interval.
    let out = g.run(
        &[
            "emit",
            "clicks",
            "--start",
            "2025-10-26T01:00",
            "--end",
            "2025-10-26T03:00",
            "--tz",
            "Europe/Berlin",
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (_, v) = json(&g, &["events", "clicks"]);
    // 01:00 CEST is 23:00Z; 03:00 on the fall-back night is CET, 02:00Z.
    assert_eq!(v["events"][0]["start"], "2025-10-25T23:00:00Z");
    assert_eq!(v["events"][0]["end"], "2025-10-26T02:00:00Z");
}

#[test]
fn policy_flags_need_no_quoting_and_say_why_when_wrong() {
    let mut g = orders();
    both(&mut g, |g, mode| {
        let day = [
            "check",
            "orders",
            "--start",
            "2025-06-14",
            "--end",
            "2025-06-15",
        ];
        let with = |extra: &[&str]| {
            let mut a = day.to_vec();
            a.extend_from_slice(extra);
            json(g, &a)
        };
        // 15 minutes of a day is 1.04% missing: 98.96% covered.
        let (code, v) = with(&["--min-ratio", "0.98"]);
        assert_eq!(
            (code, v["policy"].as_str()),
            (0, Some("ratio>=0.98")),
            "{mode}"
        );
        let (code, _) = with(&["--min-ratio", "0.99"]);
        assert_eq!(code, 1, "{mode}");
        let (code, v) = with(&["--max-gap", "20m"]);
        assert_eq!((code, v["policy"].as_str()), (0, Some("gap<20m")), "{mode}");
        let (code, _) = with(&["--max-gap", "PT15M"]);
        assert_eq!(code, 1, "{mode}: the gap is 15 minutes, not shorter");
        let out = g.run(&[&day[..], &["--max-gap", "1mo"]].concat(), None);
        assert_eq!(out.code, 2, "{mode}");
        assert!(
            out.stderr.contains("max_gap: ") && out.stderr.contains("no fixed length"),
            "{mode}: {}",
            out.stderr
        );
        let out = g.run(&[&day[..], &["--min-ratio", "lots"]].concat(), None);
        assert_eq!(out.code, 2, "{mode}");
        assert!(out.stderr.contains("min_ratio: "), "{mode}: {}", out.stderr);
    });
    // Both at once: clap refuses on the command line; over HTTP the ledger
    // says which.
    let server = Server::start(&g);
    let body = ureq::get(format!(
        "{}/v1/assets/orders/coverage?start=2025-06-14&end=2025-06-15&min_ratio=0.5&max_gap=1h",
        server.url
    ))
    .config()
    .http_status_as_error(false)
    .build()
    .call()
    .unwrap()
    .into_body()
    .read_to_string()
    .unwrap();
    assert!(
        body.contains("give one of policy, min_ratio and max_gap"),
        "{body}"
    );
}

#[test]
fn windows_make_a_backfill_plan() {
    let mut g = orders();
    both(&mut g, |g, mode| {
        let out = g.run(
            &[
                "windows",
                "orders",
                "--start",
                "2025-06-14",
                "--end",
                "2025-06-15",
                "--every",
                "1h",
                "--incomplete",
                "--keys",
            ],
            None,
        );
        assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
        assert_eq!(out.stdout, "2025-06-14T10:00:00\n", "{mode}");
        let out = g.run(
            &[
                "windows",
                "orders",
                "--start",
                "2025-06-14",
                "--end",
                "2025-06-15",
                "--every",
                "6h",
                "--keys",
                "%Y%m%d%H",
                "--tz",
                "Asia/Kolkata",
            ],
            None,
        );
        assert_eq!(
            out.stdout, "2025061400\n2025061406\n2025061412\n2025061418\n",
            "{mode}"
        );
        let (code, v) = json(
            g,
            &[
                "windows",
                "orders",
                "--start",
                "2025-06-14",
                "--end",
                "2025-06-15",
                "--every",
                "1d",
                "--tz",
                "Europe/Berlin",
            ],
        );
        assert_eq!(code, 0, "{mode}");
        let keys: Vec<&str> = v["windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["key"].as_str().unwrap())
            .collect();
        // The dates are Berlin dates: one Berlin day, keyed by its local start.
        assert_eq!(keys, ["2025-06-14T00:00:00"], "{mode}");
        assert_eq!(v["windows"][0]["start"], "2025-06-13T22:00:00Z", "{mode}");
        assert_eq!(
            v["windows"][0]["missing_count"], 2,
            "{mode}: 22:00-24:00Z and 10:00-10:15Z"
        );
        let out = g.run(
            &[
                "windows",
                "orders",
                "--start",
                "2025-06-14",
                "--end",
                "2025-06-15",
                "--every",
                "1h",
                "--keys",
                "%Q%",
            ],
            None,
        );
        assert_eq!(out.code, 2, "{mode}: {}", out.stdout);
        assert!(
            out.stderr.contains("key_format: "),
            "{mode}: {}",
            out.stderr
        );
    });
}

#[test]
fn windows_and_gap_lists_are_bounded() {
    let mut g = orders();
    both(&mut g, |g, mode| {
        let started = std::time::Instant::now();
        let out = g.run(
            &[
                "windows",
                "orders",
                "--start",
                "0001-01-01",
                "--end",
                "9999-01-01",
                "--every",
                "1m",
            ],
            None,
        );
        assert_eq!(out.code, 2, "{mode}");
        assert!(
            out.stderr.contains("more than the limit of 10000"),
            "{mode}: {}",
            out.stderr
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{mode}: refusing took {:?}",
            started.elapsed()
        );
        let (code, v) = json(
            g,
            &[
                "windows",
                "orders",
                "--start",
                "2025-06-14",
                "--end",
                "2025-06-15",
                "--every",
                "5m",
            ],
        );
        assert_eq!(code, 0, "{mode}");
        assert_eq!(v["windows"].as_array().unwrap().len(), 288, "{mode}");
    });
    // 10,001 gaps: one-minute events every other minute.
    let ndjson: String = (0..10_001)
        .map(|i| {
            let start = 1_749_859_200 + i * 120; // 2025-06-14T00:00:00Z
            format!(
                "{{\"asset\": \"sparse\", \"start\": \"{}\", \"end\": \"{}\"}}\n",
                jiff::Timestamp::from_second(start).unwrap(),
                jiff::Timestamp::from_second(start + 60).unwrap()
            )
        })
        .collect();
    assert_eq!(g.run(&["ingest", "-"], Some(&ndjson)).code, 0);
    let (code, v) = json(
        &g,
        &[
            "check",
            "sparse",
            "--start",
            "2025-06-14T00:01Z",
            "--end",
            "2025-06-30",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(v["missing"].as_array().unwrap().len(), 10_000);
    assert_eq!(v["missing_count"], 10_001);
}

#[test]
fn output_a_person_can_read_at_scale() {
    let g = Gapless::new();
    // A year of hours with every eighth missing: 1,095 gaps.
    let ndjson: String = (0..365 * 24)
        .filter(|h| h % 8 != 3)
        .map(|h| {
            let start = 1_735_689_600 + h * 3600; // 2025-01-01T00:00:00Z
            format!(
                "{{\"asset\": \"year\", \"id\": \"h{h}\", \"start\": \"{}\", \"end\": \"{}\"}}\n",
                jiff::Timestamp::from_second(start).unwrap(),
                jiff::Timestamp::from_second(start + 3600).unwrap()
            )
        })
        .collect();
    assert_eq!(g.run(&["ingest", "-"], Some(&ndjson)).code, 0);
    let year = [
        "check",
        "year",
        "--start",
        "2025-01-01",
        "--end",
        "2026-01-01",
    ];
    let out = g.run(&year, None);
    assert_eq!(out.code, 1);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[1].starts_with("coverage |") && lines[1].ends_with('|'),
        "{}",
        out.stdout
    );
    assert_eq!(lines[2], "missing 1095 gaps, 45d 15h in all:");
    assert_eq!(lines.len(), 3 + 20 + 1, "{}", out.stdout);
    assert_eq!(
        lines[23],
        "  ... and 1075 more gaps, 44d 19h in all (--all lists them)"
    );
    let all = g.run(&[&year[..], &["--all"]].concat(), None);
    assert_eq!(all.stdout.lines().count(), 3 + 1095);

    // A JSON array is a batch too, named by its items.
    let out = g.run(
        &["ingest", "-"],
        Some(
            r#" [{"asset": "arr", "start": "2025-06-01", "end": "2025-06-02"}, {"asset": "arr"}]"#,
        ),
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with("gapless: event 2: missing interval"),
        "{}",
        out.stderr
    );
    let out = g.run(
        &["ingest", "-", "--json"],
        Some(r#"[{"asset": "arr", "start": "2025-06-01", "end": "2025-06-02"}]"#),
    );
    assert_eq!(out.json()["accepted"], 1, "{}", out.stderr);

    // Long ids keep the columns of `events`.
    let long = "a-producer-batch-id-that-is-much-longer-than-its-column";
    g.run(
        &[
            "emit",
            "ids",
            "--start",
            "2025-06-01",
            "--end",
            "2025-06-02",
            "--id",
            long,
        ],
        None,
    );
    g.run(
        &[
            "emit",
            "ids",
            "--start",
            "2025-06-02",
            "--end",
            "2025-06-03",
            "--id",
            "short",
        ],
        None,
    );
    let out = g.run(&["events", "ids"], None);
    let rows: Vec<&str> = out.stdout.lines().skip(1).take(2).collect();
    let column = |row: &str| row[..row.find("2025-06-0").unwrap()].chars().count();
    assert_eq!(column(rows[0]), column(rows[1]), "{}", out.stdout);
    assert!(rows[0].contains('…'));
}

/// On PostgreSQL too, a question about a schema that holds no ledger says
/// so, names the schema and how a ledger is created, and creates nothing.
#[test]
fn a_question_on_a_missing_postgresql_schema_says_how_to_create_one() {
    let schema = PgSchema::new();
    let g = Gapless::postgres(&schema);
    let out = g.run(&["assets"], None);
    assert_eq!(out.code, 2, "{out:?}");
    let line = out.stderr.trim_end();
    assert!(line.starts_with("gapless: no ledger at "), "{line}");
    assert!(
        line.ends_with(&format!(
            "(schema {:?}): emit, ingest, asset set, rule set or serve create one",
            schema.name
        )),
        "{line}"
    );
    assert_eq!(g.run(&["assets"], None).code, 2, "the question created it");
}

#[test]
fn a_question_never_creates_a_ledger_and_a_typo_is_not_zero_percent() {
    let g = Gapless::new();
    let out = g.run(
        &[
            "check",
            "ordres",
            "--start",
            "2025-06-01",
            "--end",
            "2025-06-02",
        ],
        None,
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert_eq!(
        out.stderr.trim_end(),
        format!(
            "gapless: no ledger at {}: emit, ingest, asset set, rule set or serve create one",
            g.db.display()
        )
    );
    assert!(!g.db.exists(), "a question left a ledger behind");
    for args in [
        &["assets"][..],
        &["frontier", "x", "--origin", "2025-06-01"],
    ] {
        assert_eq!(g.run(args, None).code, 2, "{args:?}");
    }
    assert!(!g.db.exists());

    let mut g = orders();
    assert_eq!(g.run(&["asset", "set", "pending"], None).code, 0);
    both(&mut g, |g, mode| {
        let day = ["--start", "2025-06-01", "--end", "2025-06-02"];
        let out = g.run(&[&["check", "ordres"][..], &day].concat(), None);
        assert_eq!(out.code, 2, "{mode}");
        assert_eq!(
            out.stderr.trim_end(),
            "gapless: unknown asset \"ordres\" (did you mean \"orders\"?)",
            "{mode}"
        );
        for q in [
            vec!["windows", "ordres", "--every", "1h"],
            vec!["segments", "ordres"],
            vec!["events", "ordres"],
        ] {
            let out = g.run(&[&q[..], &day].concat(), None);
            assert_eq!(out.code, 2, "{mode} {q:?}");
            assert!(
                out.stderr.contains("unknown asset \"ordres\""),
                "{mode} {q:?}: {}",
                out.stderr
            );
        }
        // Declared, no events yet: known, nothing covered.
        let out = g.run(&[&["check", "pending"][..], &day].concat(), None);
        assert_eq!(out.code, 1, "{mode}: {}", out.stderr);
        // Known, covered elsewhere: an empty answer, not an error.
        let (code, v) = json(g, &[&["check", "orders"][..], &day].concat());
        assert_eq!(
            (code, v["covered_ratio"].as_f64()),
            (1, Some(0.0)),
            "{mode}"
        );
    });
    let server = Server::start(&g);
    let r = ureq::get(format!(
        "{}/v1/assets/ordres/coverage?start=2025-06-01&end=2025-06-02",
        server.url
    ))
    .config()
    .http_status_as_error(false)
    .build()
    .call()
    .unwrap();
    assert_eq!(r.status().as_u16(), 404);
}

#[test]
fn asset_set_changes_only_what_it_is_told_and_asset_show_tells_all() {
    let mut g = orders();
    both(&mut g, |g, mode| {
        let (code, v) = json(
            g,
            &[
                "asset",
                "set",
                "clicks",
                "--key-span",
                "5m",
                "--tz",
                "Europe/Berlin",
            ],
        );
        assert_eq!(code, 0, "{mode}");
        assert_eq!(
            (v["key_span"].as_str(), v["tz"].as_str()),
            (Some("PT5M"), Some("Europe/Berlin")),
            "{mode}"
        );
        // --tz alone keeps the key span.
        let (_, v) = json(g, &["asset", "set", "clicks", "--tz", "UTC"]);
        assert_eq!(
            (v["key_span"].as_str(), v["tz"].as_str()),
            (Some("PT5M"), Some("UTC")),
            "{mode}"
        );
        // Nothing given changes nothing.
        let (_, v) = json(g, &["asset", "set", "clicks"]);
        assert_eq!(
            (v["key_span"].as_str(), v["tz"].as_str()),
            (Some("PT5M"), Some("UTC")),
            "{mode}"
        );
        // none clears the span.
        let (_, v) = json(g, &["asset", "set", "clicks", "--key-span", "none"]);
        assert_eq!(
            (v["key_span"].as_str(), v["tz"].as_str()),
            (None, Some("UTC")),
            "{mode}"
        );

        let (code, v) = json(g, &["asset", "show", "orders"]);
        assert_eq!(code, 0, "{mode}");
        assert_eq!(v["events"], 2, "{mode}");
        assert_eq!(v["first_covered"], "2025-06-14T00:00:00Z", "{mode}");
        assert_eq!(v["last_covered"], "2025-06-15T00:00:00Z", "{mode}");
        assert_eq!(v["tz"], Value::Null, "{mode}: never declared");
        assert!(v["last_received"].is_string(), "{mode}: {v}");
        let (_, declared) = json(g, &["asset", "show", "clicks"]);
        assert_eq!(
            declared["last_received"],
            Value::Null,
            "{mode}: no events yet"
        );
        let out = g.run(&["asset", "show", "clicks"], None);
        assert!(
            out.stdout.contains("time zone      UTC"),
            "{mode}: {}",
            out.stdout
        );
        let out = g.run(&["asset", "show", "ordrs"], None);
        assert_eq!(out.code, 2, "{mode}");
        assert!(
            out.stderr.contains("did you mean \"orders\""),
            "{mode}: {}",
            out.stderr
        );
        // The listing carries the declarations.
        let (_, v) = json(g, &["assets"]);
        let clicks = v["assets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["asset"] == "clicks")
            .unwrap()
            .clone();
        assert_eq!(
            (clicks["events"].as_u64(), clicks["tz"].as_str()),
            (Some(0), Some("UTC")),
            "{mode}"
        );
    });
}

/// Key formats and keys are bounded (SPEC §3, §7): a format of at most 256
/// bytes, keys of at most 250 (the longest Airflow stores), refused in one
/// line naming `key_format` otherwise, by `windows` (also for a key that
/// only its zone makes too long) and by `rule set`; a rule watches at most
/// 1,000 assets. On both backends, embedded and over HTTP.
fn keys_are_bounded(g: &mut Gapless) {
    let longest = format!("{}{}", "%Y-%m-%dT%H:%M:%S", "x".repeat(231));
    let range = ["orders", "--start", "2025-06-14", "--end", "2025-06-15"];
    both(g, |g, mode| {
        let windows = |keys: &str, tz: &str| {
            let mut args = vec!["windows"];
            args.extend(range);
            args.extend(["--every", "6h", "--tz", tz, "--keys", keys]);
            g.run(&args, None)
        };
        let refused = |out: common::Output, says: &[&str]| {
            let printed = &out.stdout[..out.stdout.len().min(300)];
            assert_eq!(out.code, 2, "{mode}: printed {printed}");
            let msg = out.stderr.trim_end();
            assert_eq!(msg.lines().count(), 1, "{mode}: {msg}");
            assert!(msg.starts_with("gapless: key_format: "), "{mode}: {msg}");
            for s in says {
                assert!(msg.contains(s), "{mode}: {msg} does not say {s}");
            }
            assert!(msg.len() < 400, "{mode}: the format is echoed whole: {msg}");
        };
        refused(
            windows(&"%Y".repeat(16_000), "UTC"),
            &["32000 bytes", "256 allowed"],
        );
        let out = windows(&longest, "UTC");
        assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
        assert!(out.stdout.lines().all(|k| k.len() == 250), "{mode}");
        refused(
            windows(&format!("{longest}y"), "UTC"),
            &["251 bytes", "250"],
        );
        // 24 bytes in UTC, 256 in this zone: refused when formatted.
        let zone = "America/Argentina/ComodRivadavia";
        refused(windows(&"%Q".repeat(8), zone), &["256 bytes", "250"]);

        let rule = |name: &str, tz: &str, format: &str| {
            g.run(
                &[
                    "rule",
                    "set",
                    name,
                    "--assets",
                    "orders",
                    "--every",
                    "1h",
                    "--from",
                    "2025-06-14",
                    "--tz",
                    tz,
                    "--key-format",
                    format,
                ],
                None,
            )
        };
        refused(rule("r1", "UTC", &"x".repeat(257)), &["257 bytes", "256"]);
        refused(rule("r1", zone, &"%Q".repeat(8)), &["256 bytes", "250"]);
        let out = rule(&format!("longest_{mode}"), "UTC", &longest);
        assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
        let assets: Vec<String> = (0..1_001).map(|i| format!("a{i}")).collect();
        let out = g.run(
            &[
                "rule",
                "set",
                "wide",
                "--assets",
                &assets.join(","),
                "--every",
                "1h",
                "--from",
                "2025-06-14",
            ],
            None,
        );
        assert_eq!(out.code, 2, "{mode}: {}", out.stdout);
        assert!(
            out.stderr.contains("1001 assets") && out.stderr.contains("limit of 1000"),
            "{mode}: {}",
            out.stderr
        );
    });
}

#[test]
fn keys_are_bounded_on_sqlite() {
    keys_are_bounded(&mut orders());
}

#[test]
fn keys_are_bounded_on_postgres() {
    let schema = common::PgSchema::new();
    let mut g = Gapless::postgres(&schema);
    let ndjson = "{\"asset\": \"orders\", \"start\": \"2025-06-14T00:00Z\", \"end\": \"2025-06-14T10:00Z\"}\n";
    let out = g.run(&["ingest", "-"], Some(ndjson));
    assert_eq!(out.code, 0, "{}", out.stderr);
    keys_are_bounded(&mut g);
}
