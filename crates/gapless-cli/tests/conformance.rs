//! Every worked example of `docs/conformance/cases.json`, run through the
//! `gapless` binary on a fresh SQLite ledger each.

mod common;

use common::{conformance_cases, subset_mismatch, Gapless, PgSchema, Server};
use serde_json::Value;

fn query_args(q: &Value) -> Vec<String> {
    let s = |k: &str| q[k].as_str().map(str::to_string);
    let mut args = vec![s("command").expect("command"), s("asset").expect("asset")];
    for flag in ["start", "end", "origin", "every", "tz", "policy"] {
        if let Some(v) = s(flag) {
            args.push(format!("--{flag}"));
            args.push(v);
        }
    }
    args.push("--json".into());
    args
}

/// How the commands reach the ledger.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// `gapless --db FILE ...`
    Embedded,
    /// `gapless --url http://... ...` against `gapless serve` on that ledger.
    Client,
}

/// Which backend holds the ledger.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Backend {
    Sqlite,
    Postgres,
}

#[test]
fn every_case_through_the_cli() {
    every_case(Mode::Embedded, Backend::Sqlite);
}

#[test]
fn every_case_through_the_server() {
    every_case(Mode::Client, Backend::Sqlite);
}

#[test]
fn every_case_through_the_cli_on_postgres() {
    every_case(Mode::Embedded, Backend::Postgres);
}

#[test]
fn every_case_through_the_server_on_postgres() {
    every_case(Mode::Client, Backend::Postgres);
}

fn every_case(mode: Mode, backend: Backend) {
    let cases = conformance_cases();
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?").to_string();
        let schema = (backend == Backend::Postgres).then(PgSchema::new);
        let mut g = match &schema {
            Some(schema) => Gapless::postgres(schema),
            None => Gapless::new(),
        };
        let _server = (mode == Mode::Client).then(|| {
            let server = Server::start(&g);
            g.url = Some(server.url.clone());
            server
        });
        for step in case["setup"].as_array().into_iter().flatten() {
            assert_eq!(step["command"], "asset set", "{name}: unknown setup step");
            let mut args = vec![
                "asset".to_string(),
                "set".into(),
                step["asset"].as_str().unwrap().into(),
            ];
            if let Some(span) = step["key_span"].as_str() {
                args.extend(["--key-span".into(), span.into()]);
            }
            if let Some(tz) = step["tz"].as_str() {
                args.extend(["--tz".into(), tz.into()]);
            }
            let out = g.run(&args, None);
            assert_eq!(out.code, 0, "{name}: setup failed: {}", out.stderr);
        }

        if let Some(events) = case["events"].as_array() {
            let ndjson: String = events.iter().map(|e| format!("{e}\n")).collect();
            let out = g.run(&["ingest", "-", "--json"], Some(&ndjson));
            let expect = case
                .get("expect_ingest")
                .cloned()
                .unwrap_or(serde_json::json!({"exit": 0}));
            if out.code != expect["exit"].as_i64().unwrap() as i32 {
                failures.push(format!("{name}: ingest exit {} ({})", out.code, out.stderr));
                continue;
            }
            if let Some(m) = subset_mismatch(&strip_exit(&expect), &out.json()) {
                failures.push(format!("{name}: ingest: {m}"));
            }
        }

        for q in case["queries"].as_array().into_iter().flatten() {
            let args = query_args(q);
            let out = g.run(&args, None);
            let expect = &q["expect"];
            if let Some(code) = expect["exit"].as_i64() {
                if out.code != code as i32 {
                    failures.push(format!(
                        "{name}: {args:?}: exit {} not {code} ({})",
                        out.code, out.stderr
                    ));
                }
            } else if out.code != 0 {
                failures.push(format!(
                    "{name}: {args:?}: exit {} ({})",
                    out.code, out.stderr
                ));
                continue;
            }
            if let Some(m) = subset_mismatch(&strip_exit(expect), &out.json()) {
                failures.push(format!("{name}: {args:?}: {m}"));
            }
        }

        if let Some(bad) = case["error_lines"].as_array() {
            let good = r#"{"asset": "orders", "id": "good", "start": "2025-06-01T00:00:00Z", "end": "2025-06-01T00:05:00Z"}"#;
            for line in bad {
                let out = g.run(&["ingest", "-"], Some(&format!("{good}\n{line}\n")));
                if out.code != 2 {
                    failures.push(format!("{name}: {line}: exit {} not 2", out.code));
                }
                let msg = out.stderr.trim_end();
                if !msg.contains("line 2") || msg.contains('\n') {
                    failures.push(format!(
                        "{name}: {line}: error is not one line naming line 2: {msg:?}"
                    ));
                }
                let events = g.run(&["events", "orders", "--json"], None);
                if events.json()["events"].as_array().map(Vec::len) != Some(0) {
                    failures.push(format!("{name}: {line}: something was stored"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} conformance failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn strip_exit(expect: &Value) -> Value {
    let mut e = expect.clone();
    if let Some(o) = e.as_object_mut() {
        o.remove("exit");
    }
    e
}
