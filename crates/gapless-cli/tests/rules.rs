//! Rules through the command line (SPEC §7), embedded and against
//! `gapless serve`: recording, showing and deleting rules, firings as
//! windows complete, are withdrawn and complete again, `firings --wait`
//! and `wait`.

mod common;

use std::time::{Duration, Instant};

use common::{ok, Gapless, PgSchema, Server};
use serde_json::{json, Value};

/// `[10:00 + 15 i, +15m)` of 2025-06-14.
fn slice(g: &Gapless, i: u32, extra: &[&str]) -> common::Output {
    let (s, e) = (i * 15, (i + 1) * 15);
    let at = |m: u32| format!("2025-06-14T{:02}:{:02}Z", 10 + m / 60, m % 60);
    let mut args = vec![
        "emit".to_string(),
        "orders".to_string(),
        "--start".to_string(),
        at(s),
        "--end".to_string(),
        at(e),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    g.run(&args, None)
}

/// The firings' (kind, key, generation) after `after`.
fn firings(g: &Gapless, after: i64) -> Vec<(String, String, u64)> {
    let out = ok(&g.run(&["firings", "--after", &after.to_string(), "--json"], None));
    out["firings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["key"].as_str().unwrap().to_string(),
                f["generation"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `rule windows` of orders_hourly over 10:00 to 13:00 agrees with its
/// firings (a window is complete where its latest `complete` firing was
/// not withdrawn since) and with `windows` of its one asset (the same
/// starts, ends, ratios and gaps; complete only where something is covered).
fn rule_windows_follow_firings(g: &Gapless) {
    let range = [
        "--start",
        "2025-06-14T10:00Z",
        "--end",
        "2025-06-14T13:00Z",
        "--json",
    ];
    let mut args = vec!["rule", "windows", "orders_hourly"];
    args.extend(range);
    let got = ok(&g.run(&args, None));
    let mut args = vec!["windows", "orders", "--every", "1h"];
    args.extend(range);
    let asset = ok(&g.run(&args, None));
    let mut state = std::collections::HashMap::new();
    let page = ok(&g.run(&["firings", "--rule", "orders_hourly", "--json"], None));
    for f in page["firings"].as_array().unwrap() {
        let start = f["window"]["start"].as_str().unwrap().to_string();
        match f["kind"].as_str().unwrap() {
            "complete" => state.insert(start, true),
            "incomplete" => state.insert(start, false),
            _ => None,
        };
    }
    let (ws, want) = (
        got["windows"].as_array().unwrap(),
        asset["windows"].as_array().unwrap(),
    );
    assert_eq!(ws.len(), 3, "{got}");
    for (w, a) in ws.iter().zip(want) {
        for field in ["start", "end", "covered_ratio", "missing", "missing_count"] {
            assert_eq!(w[field], a[field], "{field} of {w}");
        }
        let fired = state
            .get(w["start"].as_str().unwrap())
            .copied()
            .unwrap_or(false);
        assert_eq!(w["complete"], fired, "{w} against the firings {page}");
        assert_eq!(
            w["complete"],
            a["complete"].as_bool().unwrap() && a["covered_ratio"] != 0.0
        );
    }
    assert_eq!(got["rule"], "orders_hourly");
    assert_eq!(got["assets"], json!(["orders"]));
}

fn scenario(g: &Gapless) {
    // Three of the four slices of 10:00; 11:00 whole.
    for i in [0, 2, 3, 4, 5, 6, 7] {
        ok(&slice(g, i, &["--json"]));
    }
    let set = [
        "rule",
        "set",
        "orders_hourly",
        "--assets",
        "orders",
        "--every",
        "1h",
        "--from",
        "2025-06-14",
        "--deadline",
        "30m",
        "--json",
    ];
    let created = ok(&g.run(&set, None));
    assert_eq!(created["outcome"], "created");
    assert_eq!(created["firings"], 1, "11:00 is already complete");
    let shown = ok(&g.run(&["rule", "show", "orders_hourly", "--json"], None));
    assert_eq!(
        shown,
        json!({"rule": "orders_hourly", "assets": ["orders"], "every": "1h", "tz": "UTC",
               "policy": "full", "from": "2025-06-14T00:00:00Z", "until": null,
               "deadline": "PT30M", "target": null, "key_format": "%Y-%m-%dT%H:%M:%S"})
    );
    // Deploy scripts run it again: nothing changes.
    assert_eq!(ok(&g.run(&set, None))["outcome"], "unchanged");
    let listed = ok(&g.run(&["rules", "--json"], None));
    assert_eq!(listed, json!({"rules": [shown.clone()], "next": null}));
    // A new definition is refused; new settings are taken.
    let mut other = set.to_vec();
    other[6] = "30m";
    let refused = g.run(&other, None);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("every 1h (given 30m)")
            && refused.stderr.contains("delete it first"),
        "{}",
        refused.stderr
    );
    let mut keys = set.to_vec();
    keys.pop();
    keys.extend(["--key-format", "%Y%m%d%H", "--json"]);
    assert_eq!(ok(&g.run(&keys, None))["outcome"], "updated");

    rule_windows_follow_firings(g);
    let first = firings(g, 0);
    assert_eq!(
        first,
        [("complete".into(), "2025-06-14T11:00:00".into(), 1)]
    );
    let page = ok(&g.run(&["firings", "--json"], None));
    let f = &page["firings"][0];
    let mut fields: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "covered_ratio",
            "delivery",
            "generation",
            "key",
            "kind",
            "recorded_at",
            "rule",
            "seq",
            "window"
        ]
    );
    assert_eq!(
        f["window"],
        json!({"start": "2025-06-14T11:00:00Z", "end": "2025-06-14T12:00:00Z"})
    );
    assert_eq!(
        f["delivery"],
        json!({"target": null, "state": "none", "attempts": 0, "last_error": null})
    );
    assert_eq!(page["next"], Value::Null);
    let seen = f["seq"].as_i64().unwrap();

    // The missing slice lands: 10:00 fires, keyed by the new format.
    ok(&slice(g, 1, &["--json"]));
    assert_eq!(
        firings(g, seen),
        [("complete".into(), "2025061410".into(), 1)]
    );
    // A retraction withdraws it; landing again fires generation 2.
    ok(&slice(g, 1, &["--retract"]));
    ok(&slice(g, 1, &[]));
    assert_eq!(
        firings(g, seen)[1..],
        [
            ("incomplete".into(), "2025061410".into(), 1),
            ("complete".into(), "2025061410".into(), 2)
        ]
    );
    rule_windows_follow_firings(g);
    ok(&slice(g, 1, &["--retract"]));
    rule_windows_follow_firings(g);
    ok(&slice(g, 1, &[]));
    rule_windows_follow_firings(g);
    // The same slice again changes nothing.
    ok(&slice(g, 1, &[]));
    assert_eq!(firings(g, seen).len(), 5);
    // The newest two, in ledger order, and no next page.
    let all = ok(&g.run(&["firings", "--json"], None))["firings"].clone();
    let newest = ok(&g.run(&["firings", "--newest", "--limit", "2", "--json"], None));
    let all = all.as_array().unwrap();
    assert_eq!(
        newest["firings"].as_array().unwrap()[..],
        all[all.len() - 2..]
    );
    assert_eq!(newest["next"], Value::Null);
    let after = all[all.len() - 4]["seq"].to_string();
    let tail = ok(&g.run(&["firings", "--newest", "--after", &after, "--json"], None));
    assert_eq!(
        tail["firings"].as_array().unwrap()[..],
        all[all.len() - 3..]
    );
    let keys = g.run(
        &[
            "rule",
            "windows",
            "orders_hourly",
            "--start",
            "2025-06-14T10:00Z",
            "--end",
            "2025-06-14T11:00Z",
        ],
        None,
    );
    assert!(
        keys.stdout
            .contains("rule orders_hourly (orders): every 1h in UTC"),
        "{}",
        keys.stdout
    );
    let long = g.run(
        &[
            "rule",
            "windows",
            "orders_hourly",
            "--start",
            "2025-06-14",
            "--end",
            "2030-01-01",
        ],
        None,
    );
    assert_eq!(long.code, 2);
    assert!(
        long.stderr.contains("more than the limit of 10000"),
        "{}",
        long.stderr
    );
    // Human output.
    let human = g.run(&["firings", "--rule", "orders_hourly"], None);
    assert_eq!(human.code, 0);
    assert!(human.stdout.contains("incomplete"), "{}", human.stdout);

    // Unknown names are errors with the nearest name.
    let unknown = g.run(&["rule", "show", "orders_hourli"], None);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown
            .stderr
            .contains("unknown rule \"orders_hourli\" (did you mean \"orders_hourly\"?)"),
        "{}",
        unknown.stderr
    );
    let typo = g.run(
        &[
            "rule",
            "set",
            "x",
            "--assets",
            "ordres",
            "--every",
            "1h",
            "--from",
            "2025-06-14",
        ],
        None,
    );
    assert_eq!(typo.code, 2);
    assert!(
        typo.stderr.contains("did you mean \"orders\""),
        "{}",
        typo.stderr
    );
    let bad = g.run(
        &[
            "rule",
            "set",
            "bad name",
            "--assets",
            "orders",
            "--every",
            "1h",
            "--from",
            "2025-06-14",
        ],
        None,
    );
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("rule name"), "{}", bad.stderr);

    let deleted = ok(&g.run(&["rule", "delete", "orders_hourly", "--json"], None));
    assert_eq!(deleted, json!({"rule": "orders_hourly", "deleted": true}));
    assert_eq!(g.run(&["rule", "delete", "orders_hourly"], None).code, 2);
    assert!(firings(g, 0).is_empty());
}

#[test]
fn rules_embedded() {
    scenario(&Gapless::new());
}

#[test]
fn rules_over_http() {
    let mut g = Gapless::new();
    let server = Server::start(&g);
    g.url = Some(server.url.clone());
    scenario(&g);
}

#[test]
fn rules_on_postgres_over_http() {
    let schema = common::PgSchema::new();
    let mut g = Gapless::postgres(&schema);
    let server = Server::start(&g);
    g.url = Some(server.url.clone());
    scenario(&g);
}

/// `wait` returns as soon as the range completes (exit 0), or exits 1 with
/// the gaps when the timeout passes; `firings --wait` answers as soon as a
/// window fires.
fn waits(g: &Gapless) {
    for i in [0, 1, 3] {
        ok(&slice(g, i, &[]));
    }
    ok(&g.run(
        &[
            "rule",
            "set",
            "h",
            "--assets",
            "orders",
            "--every",
            "1h",
            "--from",
            "2025-06-14",
        ],
        None,
    ));
    let range = ["--start", "2025-06-14T10:00Z", "--end", "2025-06-14T11:00Z"];
    let mut late = vec!["wait", "orders", "--timeout", "1s"];
    late.extend(range);
    let t = Instant::now();
    let timed_out = g.run(&late, None);
    assert_eq!(timed_out.code, 1, "{timed_out:?}");
    assert!(t.elapsed() >= Duration::from_secs(1));
    assert!(timed_out.stdout.contains("10:30"), "{}", timed_out.stdout);
    // A wait of zero is a check.
    let mut now = vec!["wait", "orders", "--timeout", "0s"];
    now.extend(range);
    let checked = g.run(&now, None);
    assert_eq!(checked.code, 1, "{checked:?}");
    assert!(checked.stdout.contains("10:30"), "{}", checked.stdout);

    // A waiter and a firings long poll, then the missing slice.
    let mut long = vec!["wait", "orders", "--timeout", "60s", "--json"];
    long.extend(range);
    let mut wait_cmd = g.command();
    let mut poll_cmd = g.command();
    if let Some(url) = &g.url {
        wait_cmd.env("GAPLESS_URL", url);
        poll_cmd.env("GAPLESS_URL", url);
    }
    wait_cmd.args(&long);
    poll_cmd.args(["firings", "--wait", "60s", "--json"]);
    let started = Instant::now();
    let waiter = std::thread::spawn(move || common::run(&mut wait_cmd, None));
    let poller = std::thread::spawn(move || common::run(&mut poll_cmd, None));
    std::thread::sleep(Duration::from_millis(500));
    ok(&slice(g, 2, &[]));
    let waited = waiter.join().unwrap();
    let polled = poller.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "woken, not timed out"
    );
    assert_eq!(ok(&waited)["complete"], true);
    let page = ok(&polled);
    assert_eq!(page["firings"][0]["key"], "2025-06-14T10:00:00");
}

#[test]
fn waits_embedded() {
    waits(&Gapless::new());
}

#[test]
fn waits_over_http() {
    let mut g = Gapless::new();
    let server = Server::start(&g);
    g.url = Some(server.url.clone());
    waits(&g);
}

/// `--min-ratio` makes a `ratio>=R` rule embedded and through a server
/// (the client sends it as a JSON number); over HTTP the body takes a
/// number and names the field when given a string.
#[test]
fn min_ratio_is_a_number() {
    let mut g = Gapless::new();
    ok(&slice(&g, 0, &[]));
    let set = |g: &Gapless, name: &str| {
        ok(&g.run(
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
                "--min-ratio",
                "0.25",
                "--json",
            ],
            None,
        ))
    };
    assert_eq!(set(&g, "embedded")["policy"], "ratio>=0.25");
    let server = Server::start(&g);
    g.url = Some(server.url.clone());
    assert_eq!(set(&g, "remote")["policy"], "ratio>=0.25");
    let put = |body: &str| {
        let mut r = ureq::put(&format!("{}/v1/rules/raw", server.url))
            .config()
            .http_status_as_error(false)
            .build()
            .content_type("application/json")
            .send(body)
            .unwrap();
        let status = r.status().as_u16();
        (status, r.body_mut().read_to_string().unwrap())
    };
    let base = r#""assets": ["orders"], "every": "1h", "from": "2025-06-14""#;
    let (status, body) = put(&format!(r#"{{{base}, "min_ratio": "0.5"}}"#));
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains(r#"field \"min_ratio\": expected a number or null, found a string"#),
        "{body}"
    );
    let (status, body) = put(&format!(r#"{{{base}, "min_ratio": 1.5}}"#));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("min_ratio"), "{body}");
    let (status, body) = put(&format!(r#"{{{base}, "min_ratio": 0.5}}"#));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""policy":"ratio>=0.5""#), "{body}");
}

/// `rule set orders_hourly` on `orders`, hourly from 2025-06-14.
fn set_hourly(g: &Gapless) -> common::Output {
    g.run(
        &[
            "rule",
            "set",
            "orders_hourly",
            "--assets",
            "orders",
            "--every",
            "1h",
            "--from",
            "2025-06-14",
            "--json",
        ],
        None,
    )
}

/// Rules defined before the first producer writes: `rule set` creates the
/// ledger as `asset set` does, in a SQLite file and in a PostgreSQL schema.
/// Its assets must still be known (SPEC §7), so on a new ledger it says to
/// declare them, not that there is no ledger; once declared, the rule is
/// recorded and listed. A fresh server answers the same.
#[test]
fn rule_set_creates_the_ledger_on_both_backends() {
    let unknown = "gapless: unknown asset \"orders\": no event of it is recorded and it is not \
                   declared (declare it first with `gapless asset set`)";
    let schema = PgSchema::new();
    let server_ledger = Gapless::new();
    let server = Server::start(&server_ledger);
    let mut served = Gapless::new();
    served.url = Some(server.url.clone());
    for (g, way) in [
        (Gapless::new(), "sqlite"),
        (Gapless::postgres(&schema), "postgres"),
        (served, "server"),
    ] {
        let out = set_hourly(&g);
        assert_eq!((out.code, out.stderr.trim_end()), (2, unknown), "{way}");
        let rules = ok(&g.run(&["rules", "--json"], None));
        assert_eq!(
            rules,
            json!({"rules": [], "next": null}),
            "{way}: the ledger exists"
        );
        ok(&g.run(&["asset", "set", "orders"], None));
        assert_eq!(set_hourly(&g).json()["outcome"], "created", "{way}");
        let rules = ok(&g.run(&["rules", "--json"], None));
        assert_eq!(rules["rules"][0]["rule"], "orders_hourly", "{way}: {rules}");
        assert_eq!(rules["rules"][0]["assets"], json!(["orders"]), "{way}");
    }
}
