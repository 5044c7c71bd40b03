//! Client mode prints exactly what embedded mode prints: the same scenario
//! run with `--db` on one ledger and with `--url` against `gapless serve` on
//! another gives the same standard output, errors and exit codes.

mod common;

use common::{Gapless, Server};

fn scenario_input() -> String {
    let mut lines = String::new();
    for i in 0..96 {
        if i == 40 || i == 41 {
            continue; // two lost batches
        }
        let (s, e) = (i * 15, (i + 1) * 15);
        lines.push_str(&format!(
            "{{\"asset\":\"s3://lake/orders v2\",\"id\":\"b{i}\",\"start\":\"2025-06-14T{:02}:{:02}:00Z\",\"end\":\"{}\",\"extra\":{{\"rows\": {i}, \"b\":1}}}}\n",
            s / 60,
            s % 60,
            if e == 1440 { "2025-06-15T00:00:00Z".to_string() } else { format!("2025-06-14T{:02}:{:02}:00Z", e / 60, e % 60) }
        ));
    }
    lines
}

/// Every command, human and JSON, good and bad input.
fn steps() -> Vec<(Vec<&'static str>, Option<String>)> {
    let a = "s3://lake/orders v2";
    let mut steps: Vec<(Vec<&'static str>, Option<String>)> = vec![
        (vec!["ingest", "-", "--json"], Some(scenario_input())),
        (vec!["ingest", "-"], Some(scenario_input())),
        (
            vec![
                "emit",
                a,
                "--start",
                "2025-06-14T12:00Z",
                "--end",
                "2025-06-14T12:30Z",
                "--retract",
                "--id",
                "bad",
                "--extra",
                "{\"why\": \"late rows\"}",
            ],
            None,
        ),
        (
            vec![
                "emit",
                a,
                "--start",
                "2025-06-14T12:00Z",
                "--end",
                "2025-06-14T12:30Z",
                "--id",
                "bad",
            ],
            None,
        ),
        (
            vec![
                "emit",
                a,
                "--start",
                "2025-06-14T12:30Z",
                "--end",
                "2025-06-14T12:00Z",
            ],
            None,
        ),
        (
            vec!["ingest", "-"],
            Some(
                "{\"asset\":\"x\",\"start\":\"2025-06-01\",\"end\":\"2025-06-02\"}\nnot json\n"
                    .into(),
            ),
        ),
        (
            vec![
                "asset",
                "set",
                "keys",
                "--key-span",
                "PT5M",
                "--tz",
                "Europe/Berlin",
            ],
            None,
        ),
        (vec!["asset", "set", "keys", "--tz", "Mars/Olympus"], None),
        (
            vec!["ingest", "-", "--json"],
            Some("{\"asset\":\"keys\",\"partition_key\":\"2025-06-01T10:05:00\"}\n".into()),
        ),
        (vec!["assets"], None),
        (vec!["asset", "list", "--json"], None),
    ];
    for json in [false, true] {
        let j = |mut v: Vec<&'static str>| {
            if json {
                v.push("--json");
            }
            v
        };
        steps.extend([
            (
                j(vec![
                    "check",
                    a,
                    "--start",
                    "2025-06-14",
                    "--end",
                    "2025-06-15",
                ]),
                None,
            ),
            (
                j(vec![
                    "check",
                    a,
                    "--start",
                    "2025-06-14",
                    "--end",
                    "2025-06-15",
                    "--policy",
                    "gap<PT31M",
                ]),
                None,
            ),
            (
                j(vec![
                    "check",
                    a,
                    "--start",
                    "2025-06-14",
                    "--end",
                    "2025-06-15",
                    "--policy",
                    "ratio>=0.9",
                ]),
                None,
            ),
            (
                j(vec![
                    "check",
                    a,
                    "--start",
                    "2025-06-14T00:00Z",
                    "--end",
                    "2025-06-14T10:00Z",
                ]),
                None,
            ),
            (
                j(vec![
                    "check",
                    a,
                    "--start",
                    "2025-06-14",
                    "--end",
                    "2025-06-15",
                    "--tz",
                    "Asia/Kolkata",
                ]),
                None,
            ),
            (
                j(vec![
                    "windows",
                    a,
                    "--start",
                    "2025-06-14",
                    "--end",
                    "2025-06-15",
                    "--every",
                    "6h",
                    "--tz",
                    "Europe/Berlin",
                ]),
                None,
            ),
            (
                j(vec![
                    "segments",
                    a,
                    "--start",
                    "2025-06-14T09:00Z",
                    "--end",
                    "2025-06-14T13:00Z",
                ]),
                None,
            ),
            (j(vec!["frontier", a, "--origin", "2025-06-14"]), None),
            (
                j(vec!["frontier", a, "--origin", "2025-06-14T10:05Z"]),
                None,
            ),
            (
                j(vec![
                    "events",
                    a,
                    "--start",
                    "2025-06-14T11:00Z",
                    "--end",
                    "2025-06-14T13:00Z",
                    "--limit",
                    "3",
                ]),
                None,
            ),
            (j(vec!["events", a, "--kind", "retracted"]), None),
            (
                j(vec![
                    "check",
                    "nobody",
                    "--start",
                    "2025-06-14",
                    "--end",
                    "2025-06-15",
                ]),
                None,
            ),
            (
                j(vec![
                    "check",
                    a,
                    "--start",
                    "2025-06-15",
                    "--end",
                    "2025-06-14",
                ]),
                None,
            ),
            (
                j(vec![
                    "check",
                    a,
                    "--start",
                    "yesterday",
                    "--end",
                    "2025-06-14",
                ]),
                None,
            ),
            (
                j(vec![
                    "windows",
                    a,
                    "--start",
                    "2025-06-14",
                    "--end",
                    "2025-06-15",
                    "--every",
                    "7q",
                ]),
                None,
            ),
            (
                j(vec![
                    "check",
                    a,
                    "--start",
                    "2025-06-14",
                    "--end",
                    "2025-06-15",
                    "--policy",
                    "mostly",
                ]),
                None,
            ),
            (j(vec!["events", a, "--after", "abc"]), None),
        ]);
    }
    steps
}

/// When each ledger stored an event is the clock of each run: the one
/// thing allowed to differ (`received_at` of events, `last_received` of
/// assets, the `as_of` of an assets page; in readable output, any instant
/// of the last day).
fn mask_received_at(stdout: &str) -> String {
    let clock = "<clock>";
    match serde_json::from_str::<serde_json::Value>(stdout) {
        Ok(mut v) => {
            if let Some(events) = v.get_mut("events").and_then(|e| e.as_array_mut()) {
                for e in events {
                    e["received_at"] = clock.into();
                }
            }
            if let Some(assets) = v.get_mut("assets").and_then(|e| e.as_array_mut()) {
                for a in assets.iter_mut().filter(|a| a.is_object()) {
                    a["last_received"] = clock.into();
                }
            }
            if let Some(last) = v.get_mut("last_received") {
                *last = clock.into();
            }
            if let Some(as_of) = v.get_mut("as_of") {
                *as_of = clock.into();
            }
            format!("{v}\n")
        }
        Err(_) => {
            let now = jiff::Timestamp::now();
            let recent = |word: &str| {
                word.parse::<jiff::Timestamp>().is_ok_and(|t| {
                    now.duration_since(t).abs() < jiff::SignedDuration::from_hours(24)
                })
            };
            // Column widths follow the masked instants: compare words.
            stdout
                .lines()
                .map(|line| {
                    line.split_whitespace()
                        .map(|w| if recent(w) { clock } else { w })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
    }
}

#[test]
fn client_mode_prints_what_embedded_mode_prints() {
    let embedded = Gapless::new();
    let mut remote = Gapless::new();
    let server = Server::start(&remote);
    remote.url = Some(server.url.clone());

    for (args, stdin) in steps() {
        let a = embedded.run(&args, stdin.as_deref());
        let b = remote.run(&args, stdin.as_deref());
        assert_eq!(
            a.code, b.code,
            "{args:?}: exit codes differ: {} / {}",
            a.stderr, b.stderr
        );
        assert_eq!(
            mask_received_at(&a.stdout),
            mask_received_at(&b.stdout),
            "{args:?}: output differs"
        );
        assert_eq!(a.stderr, b.stderr, "{args:?}: errors differ");
        if a.code == 2 {
            assert!(
                a.stderr.trim_end().lines().count() == 1,
                "{args:?}: error is not one line: {}",
                a.stderr
            );
        }
    }
}
