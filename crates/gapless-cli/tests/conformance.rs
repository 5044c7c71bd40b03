//! Every worked example of `docs/conformance/cases.json`, run through the
//! `gapless` binary (embedded, and in client mode against `gapless serve`)
//! and in-process through `gapless_api::Ask` (the embedded `Ledger`, and
//! `gapless_client::Client` against `gapless serve`), on SQLite and on
//! PostgreSQL, a fresh ledger each case.

mod common;

use std::sync::Arc;

use common::{conformance_cases, subset_mismatch, Gapless, PgSchema, Server};
use gapless_api::{
    Ask, BodyFormat, BucketsRequest, CoverageRequest, DeclareRequest, Error, FrontierRequest,
    RecordRequest, SegmentsRequest, WindowsRequest,
};
use serde_json::Value;

fn query_args(q: &Value) -> Vec<String> {
    let s = |k: &str| q[k].as_str().map(str::to_string);
    let mut args = vec![s("command").expect("command"), s("asset").expect("asset")];
    for flag in ["start", "end", "origin", "every", "tz", "policy", "buckets"] {
        if let Some(v) = s(flag) {
            args.push(format!("--{flag}"));
            args.push(v);
        }
    }
    args.push("--json".into());
    args
}

/// What one step gave: the exit code the command line would give, the JSON
/// answer (null on an error), and the error message.
struct Outcome {
    code: i32,
    json: Value,
    error: String,
}

/// A way to reach the ledger of one case.
trait Runner {
    fn declare(&self, asset: &str, key_span: Option<&str>, tz: Option<&str>) -> Outcome;
    fn ingest(&self, ndjson: &str) -> Outcome;
    fn query(&self, q: &Value) -> Outcome;
    /// How many events of `asset` are stored.
    fn stored(&self, asset: &str) -> Option<usize>;
}

/// The `gapless` binary.
impl Runner for Gapless {
    fn declare(&self, asset: &str, key_span: Option<&str>, tz: Option<&str>) -> Outcome {
        let mut args = vec!["asset".to_string(), "set".into(), asset.into()];
        if let Some(span) = key_span {
            args.extend(["--key-span".into(), span.into()]);
        }
        if let Some(tz) = tz {
            args.extend(["--tz".into(), tz.into()]);
        }
        outcome(self.run(&args, None))
    }

    fn ingest(&self, ndjson: &str) -> Outcome {
        outcome(self.run(&["ingest", "-", "--json"], Some(ndjson)))
    }

    fn query(&self, q: &Value) -> Outcome {
        outcome(self.run(&query_args(q), None))
    }

    fn stored(&self, asset: &str) -> Option<usize> {
        let out = self.run(&["assets", "--json"], None);
        stored_of(&out.json(), asset)
    }
}

fn outcome(out: common::Output) -> Outcome {
    Outcome {
        code: out.code,
        json: serde_json::from_str(&out.stdout).unwrap_or(Value::Null),
        error: out.stderr.trim_end().to_string(),
    }
}

/// In-process, through the one interface.
struct InProcess(Box<dyn Ask>);

fn answered<T: serde::Serialize>(answer: Result<T, Error>, code: impl Fn(&T) -> i32) -> Outcome {
    match answer {
        Ok(a) => Outcome {
            code: code(&a),
            json: serde_json::to_value(&a).unwrap(),
            error: String::new(),
        },
        Err(e) => Outcome {
            code: 2,
            json: Value::Null,
            error: e.to_string(),
        },
    }
}

impl Runner for InProcess {
    fn declare(&self, asset: &str, key_span: Option<&str>, tz: Option<&str>) -> Outcome {
        let request = DeclareRequest {
            asset: asset.into(),
            key_span: key_span.map(str::to_string),
            tz: tz.map(str::to_string),
        };
        answered(self.0.declare(&request), |_| 0)
    }

    fn ingest(&self, ndjson: &str) -> Outcome {
        let answer = self.0.record(RecordRequest {
            body: &mut ndjson.as_bytes(),
            format: BodyFormat::Ndjson,
            source: "standard input",
            size: Some(ndjson.len() as u64),
        });
        answered(answer, |_| 0)
    }

    fn query(&self, q: &Value) -> Outcome {
        let text = |k: &str| q[k].as_str().map(str::to_string);
        let asset = text("asset").expect("asset");
        let (start, end, tz) = (text("start"), text("end"), text("tz"));
        match q["command"].as_str().expect("command") {
            "check" => answered(
                self.0.coverage(&CoverageRequest {
                    asset,
                    start: start.expect("start"),
                    end: end.expect("end"),
                    policy: text("policy"),
                    tz,
                    ..Default::default()
                }),
                |a| if a.complete { 0 } else { 1 },
            ),
            "windows" => answered(
                self.0.windows(&WindowsRequest {
                    asset,
                    start: start.expect("start"),
                    end: end.expect("end"),
                    every: text("every").expect("every"),
                    tz,
                    policy: text("policy"),
                    ..Default::default()
                }),
                |_| 0,
            ),
            "segments" => answered(
                self.0.segments(&SegmentsRequest {
                    asset,
                    start: start.expect("start"),
                    end: end.expect("end"),
                    tz,
                    ..Default::default()
                }),
                |_| 0,
            ),
            "buckets" => answered(
                self.0.buckets(&BucketsRequest {
                    asset,
                    start: start.expect("start"),
                    end: end.expect("end"),
                    buckets: text("buckets"),
                    tz,
                }),
                |_| 0,
            ),
            "frontier" => answered(
                self.0.frontier(&FrontierRequest {
                    asset,
                    origin: text("origin"),
                    tz,
                }),
                |_| 0,
            ),
            other => panic!("no such command in the cases: {other}"),
        }
    }

    fn stored(&self, asset: &str) -> Option<usize> {
        let assets = serde_json::to_value(self.0.assets(&Default::default()).ok()?).unwrap();
        stored_of(&assets, asset)
    }
}

/// The events of `asset` in an `assets` answer (none when it is not listed).
fn stored_of(assets: &Value, asset: &str) -> Option<usize> {
    let list = assets["assets"].as_array()?;
    Some(
        list.iter()
            .find(|a| a["asset"] == asset)
            .map_or(0, |a| a["events"].as_u64().unwrap() as usize),
    )
}

/// How the commands reach the ledger.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// `gapless --db FILE ...`
    Embedded,
    /// `gapless --url http://... ...` against `gapless serve` on that ledger.
    Client,
    /// `Ledger` as `Ask`, in this process.
    AskEmbedded,
    /// `gapless_client::Client` as `Ask`, against `gapless serve`.
    AskClient,
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

#[test]
fn every_case_through_ask_embedded() {
    every_case(Mode::AskEmbedded, Backend::Sqlite);
}

#[test]
fn every_case_through_ask_client() {
    every_case(Mode::AskClient, Backend::Sqlite);
}

#[test]
fn every_case_through_ask_embedded_on_postgres() {
    every_case(Mode::AskEmbedded, Backend::Postgres);
}

#[test]
fn every_case_through_ask_client_on_postgres() {
    every_case(Mode::AskClient, Backend::Postgres);
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
        let server = matches!(mode, Mode::Client | Mode::AskClient).then(|| Server::start(&g));
        let runner: Box<dyn Runner> = match mode {
            Mode::Embedded => Box::new(g),
            Mode::Client => {
                g.url = Some(server.as_ref().unwrap().url.clone());
                Box::new(g)
            }
            Mode::AskEmbedded => {
                let store = gapless_store::open(g.db.to_str().unwrap()).unwrap();
                Box::new(InProcess(Box::new(gapless_ledger::Ledger::new(Arc::from(
                    store,
                )))))
            }
            Mode::AskClient => {
                let url = &server.as_ref().unwrap().url;
                Box::new(InProcess(Box::new(
                    gapless_client::Client::new(url).unwrap(),
                )))
            }
        };
        for step in case["setup"].as_array().into_iter().flatten() {
            assert_eq!(step["command"], "asset set", "{name}: unknown setup step");
            let out = runner.declare(
                step["asset"].as_str().unwrap(),
                step["key_span"].as_str(),
                step["tz"].as_str(),
            );
            assert_eq!(out.code, 0, "{name}: setup failed: {}", out.error);
        }

        if let Some(events) = case["events"].as_array() {
            let ndjson: String = events.iter().map(|e| format!("{e}\n")).collect();
            let out = runner.ingest(&ndjson);
            let expect = case
                .get("expect_ingest")
                .cloned()
                .unwrap_or(serde_json::json!({"exit": 0}));
            if out.code != expect["exit"].as_i64().unwrap() as i32 {
                failures.push(format!("{name}: ingest exit {} ({})", out.code, out.error));
                continue;
            }
            if let Some(m) = subset_mismatch(&strip_exit(&expect), &out.json) {
                failures.push(format!("{name}: ingest: {m}"));
            }
        }

        for q in case["queries"].as_array().into_iter().flatten() {
            let args = query_args(q);
            let out = runner.query(q);
            let expect = &q["expect"];
            if let Some(code) = expect["exit"].as_i64() {
                if out.code != code as i32 {
                    failures.push(format!(
                        "{name}: {args:?}: exit {} not {code} ({})",
                        out.code, out.error
                    ));
                }
            } else if out.code != 0 {
                failures.push(format!(
                    "{name}: {args:?}: exit {} ({})",
                    out.code, out.error
                ));
                continue;
            }
            if let Some(m) = subset_mismatch(&strip_exit(expect), &out.json) {
                failures.push(format!("{name}: {args:?}: {m}"));
            }
        }

        if let Some(bad) = case["error_lines"].as_array() {
            let good = r#"{"asset": "orders", "id": "good", "start": "2025-06-01T00:00:00Z", "end": "2025-06-01T00:05:00Z"}"#;
            for line in bad {
                let out = runner.ingest(&format!("{good}\n{line}\n"));
                if out.code != 2 {
                    failures.push(format!("{name}: {line}: exit {} not 2", out.code));
                }
                let msg = out.error.trim_start_matches("gapless: ");
                if !msg.starts_with("line 2: ") || msg.contains('\n') {
                    failures.push(format!(
                        "{name}: {line}: error is not one line naming line 2: {msg:?}"
                    ));
                }
                if runner.stored("orders") != Some(0) {
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
