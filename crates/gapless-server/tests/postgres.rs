//! The server over the PostgreSQL store: the synchronous client runs only on
//! blocking threads, group commit keeps each request's counts and isolates a
//! conflict. The server is `GAPLESS_TEST_PG` (default
//! `postgres://postgres@127.0.0.1:5432/test`); the test works in its own
//! schema and drops it.

mod common;

use std::sync::{Arc, Barrier};

use common::{event, TestServer};
use gapless_ledger::Ledger;
use gapless_server::ServerConfig;
use serde_json::json;

fn url() -> (String, bool) {
    match std::env::var("GAPLESS_TEST_PG") {
        Ok(u) => (u, true),
        Err(_) => ("postgres://postgres@127.0.0.1:5432/test".to_string(), false),
    }
}

struct Schema(String);

impl Drop for Schema {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&url().0, postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.0));
        }
    }
}

/// A ledger on a fresh PostgreSQL schema (named from `tag`; dropped with
/// the returned guard); none when PostgreSQL is not reachable and not
/// required.
fn pg_ledger(tag: &str) -> Option<(Schema, Ledger)> {
    let (url, required) = url();
    if let Err(e) = postgres::Client::connect(&url, postgres::NoTls) {
        assert!(!required, "PostgreSQL at {url} is not reachable: {e}");
        eprintln!("skipped: no PostgreSQL at {url} ({e}); set GAPLESS_TEST_PG");
        return None;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let schema = Schema(format!("{tag}_{}_{nanos}", std::process::id()));
    let store = gapless_store::PostgresStore::open_in_schema(&url, &schema.0).unwrap();
    Some((schema, Ledger::new(Arc::new(store))))
}

fn slot(i: usize) -> String {
    format!("2025-06-01T{:02}:{:02}:00Z", 10 + i / 60, i % 60)
}

#[test]
fn group_commit_over_postgres() {
    let Some((_schema, ledger)) = pg_ledger("gs_server") else {
        return;
    };
    let mut server = TestServer::with_ledger(
        tempfile::tempdir().unwrap(),
        ledger,
        ServerConfig::default(),
    );
    let c = server.client();
    let r = c.post_json(
        "/v1/events",
        &event("pg", &slot(200), &slot(201), Some("taken")),
    );
    assert_eq!(r.status, 200, "{}", r.text());

    const N: usize = 48;
    let barrier = Arc::new(Barrier::new(N));
    let threads: Vec<_> = (0..N)
        .map(|i| {
            let (c, barrier) = (c.clone(), barrier.clone());
            std::thread::spawn(move || {
                let body = if i == 5 {
                    event("pg", &slot(200), &slot(202), Some("taken"))
                } else {
                    event("pg", &slot(i), &slot(i + 1), Some(&format!("e{i}")))
                };
                barrier.wait();
                let r = c.post_json("/v1/events", &body);
                (i, r.status, r.json())
            })
        })
        .collect();
    for t in threads {
        let (i, status, v) = t.join().unwrap();
        if i == 5 {
            assert_eq!(status, 409, "{v}");
        } else {
            assert_eq!(
                (status, v.clone()),
                (200, json!({"accepted": 1, "duplicates": 0})),
                "{i}: {v}"
            );
        }
    }
    let v = c
        .get(&format!(
            "/v1/assets/pg/coverage?start={}&end={}",
            slot(0),
            slot(N)
        ))
        .json();
    assert_eq!(
        v["missing"],
        json!([{"start": slot(5), "end": slot(6)}]),
        "{v}"
    );
    assert_eq!(c.get("/v1/assets").json()["assets"][0]["events"], N as u64);
    server.stop().unwrap();
}

/// A server on a fresh SQLite file and one on a fresh PostgreSQL schema
/// (named from `tag`; dropped with the returned guard); none when
/// PostgreSQL is not reachable and not required.
fn servers_on_both_backends(tag: &str) -> Option<(Schema, TestServer, TestServer)> {
    let (schema, ledger) = pg_ledger(tag)?;
    let pg = TestServer::with_ledger(
        tempfile::tempdir().unwrap(),
        ledger,
        ServerConfig::default(),
    );
    Some((schema, TestServer::start(), pg))
}

/// Found by scripts/fuzz-api (schemathesis) on PostgreSQL: a question
/// about an asset name with a NUL (`POST /v1/coverage` with `"assets":
/// ["a\u0000b"]`) was a 500 (PostgreSQL refuses a NUL in text), where
/// SQLite said 404. A name no event can have is bad input, in the same
/// words on both backends.
#[test]
fn a_question_about_an_impossible_asset_name_is_bad_input_on_both_backends() {
    let Some((_schema, sqlite, pg)) = servers_on_both_backends("gs_names") else {
        return;
    };
    let range = format!("start={}&end={}", slot(0), slot(5));
    let mut answers = Vec::new();
    for server in [&sqlite, &pg] {
        let c = server.client();
        assert_eq!(
            c.post_json("/v1/events", &event("a", &slot(0), &slot(5), None))
                .status,
            200
        );
        let rs = [
            c.post_json(
                "/v1/coverage",
                &json!({"assets": ["a", "a\u{0}b"], "start": slot(0), "end": slot(5)}),
            ),
            c.get("/v1/assets/a%00b"),
            c.get(&format!("/v1/assets/a%00b/coverage?{range}")),
            c.get(&format!("/v1/assets/a%00b/windows?{range}&every=1m")),
            c.get("/v1/assets/a%01b/events"),
            c.get("/v1/assets/a%00b/frontier"),
        ];
        for r in &rs {
            assert_eq!(r.status, 400, "{}", r.text());
            assert!(
                r.error().contains("invalid asset name \"a\\0b\"")
                    || r.error().contains("invalid asset name \"a\\u{1}b\""),
                "{}",
                r.error()
            );
        }
        answers.push(rs.iter().map(|r| r.error()).collect::<Vec<_>>());
    }
    assert_eq!(answers[0], answers[1]);
    assert!(answers[0][0].starts_with("assets: "), "{}", answers[0][0]);
    assert!(answers[0][1].starts_with("asset: "), "{}", answers[0][1]);
}

/// The same for rules: `GET /v1/firings?rule=` with a NUL in the name
/// (found by the API fuzzer) was a 500 on PostgreSQL. A rule name no rule
/// can have is bad input on every rule route, in the same words on both
/// backends, and a valid unknown name is still 404.
#[test]
fn a_question_about_an_impossible_rule_name_is_bad_input_on_both_backends() {
    let Some((_schema, sqlite, pg)) = servers_on_both_backends("gs_rules") else {
        return;
    };
    let range = format!("start={}&end={}", slot(0), slot(5));
    let mut answers = Vec::new();
    for server in [&sqlite, &pg] {
        let c = server.client();
        let rs = [
            c.get("/v1/firings?rule=%F3%8C%AD%A9%00j&wait=1s"),
            c.get("/v1/firings?rule=a%00b&newest=true"),
            c.get("/v1/rules/a%00b"),
            c.get(&format!("/v1/rules/a%00b/windows?{range}")),
            c.send("DELETE", "/v1/rules/a%00b", &[], b""),
            c.get("/v1/firings?rule=a%20b"),
        ];
        for r in &rs {
            assert_eq!(r.status, 400, "{}", r.text());
            assert!(r.error().starts_with("rule: "), "{}", r.error());
        }
        let nul_key = c.put_json(
            "/v1/rules/hourly",
            &json!({"assets": ["a"], "every": "1h", "from": slot(0), "key_format": "%Y\u{0}%m"}),
        );
        assert_eq!(nul_key.status, 400, "{}", nul_key.text());
        assert!(
            nul_key
                .error()
                .contains("control character '\\0' is not allowed"),
            "{}",
            nul_key.error()
        );
        let unknown = c.get("/v1/firings?rule=no_such_rule");
        assert_eq!(unknown.status, 404, "{}", unknown.text());
        assert!(unknown.error().contains("unknown rule \"no_such_rule\""));
        answers.push(rs.iter().map(|r| r.error()).collect::<Vec<_>>());
    }
    assert_eq!(answers[0], answers[1]);
}

/// Found by the API fuzzer on PostgreSQL: `GET /v1/assets?prefix=C%00` was
/// a 500 (PostgreSQL refuses a NUL in text). A name filter or a cursor
/// holding a character no name can is bad input, in the same words on
/// both backends; a filter that merely matches nothing is an empty page.
#[test]
fn a_name_filter_no_name_can_match_is_bad_input_on_both_backends() {
    let Some((_schema, sqlite, pg)) = servers_on_both_backends("gs_filter") else {
        return;
    };
    let mut answers = Vec::new();
    for server in [&sqlite, &pg] {
        let c = server.client();
        assert_eq!(
            c.post_json("/v1/events", &event("C", &slot(0), &slot(5), None))
                .status,
            200
        );
        let rs = [
            (c.get("/v1/assets?prefix=C%00"), "prefix: "),
            (c.get("/v1/assets?contains=%00"), "contains: "),
            (c.get("/v1/assets?prefix=C&contains=a%1Fb"), "contains: "),
            (c.get("/v1/rules?prefix=r%00"), "prefix: "),
            (c.get("/v1/assets?after=YQA"), "after: invalid cursor"),
            (c.get("/v1/rules?after=YQA"), "after: invalid cursor"),
        ];
        for (r, start) in &rs {
            assert_eq!(r.status, 400, "{}", r.text());
            assert!(r.error().starts_with(start), "{}", r.error());
        }
        let none = c.get("/v1/assets?prefix=D").json();
        assert_eq!(none["assets"], json!([]));
        assert_eq!(none["next"], json!(null));
        answers.push(rs.iter().map(|r| r.0.error()).collect::<Vec<_>>());
    }
    assert_eq!(answers[0], answers[1]);
}

/// `POST /api/v1/lineage` over PostgreSQL: the declaration a discrete key
/// needs and the passes after a conflict all read the store on blocking
/// threads; a re-delivered batch is all duplicates.
#[test]
fn openlineage_events_over_postgres() {
    let Some((_schema, ledger)) = pg_ledger("gs_lineage") else {
        return;
    };
    let server = TestServer::with_ledger(
        tempfile::tempdir().unwrap(),
        ledger,
        ServerConfig::default(),
    );
    let c = server.client();
    let r = c.put_json(
        "/v1/assets/s3%3A%2F%2Flake%2Fhourly",
        &json!({"key_span": "PT1H"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let run = |id: &str, facets: serde_json::Value, time: &str| {
        json!({"eventType": "COMPLETE", "eventTime": time, "producer": "p",
               "run": {"runId": id, "facets": facets},
               "job": {"namespace": "etl", "name": "hourly"},
               "outputs": [{"namespace": "s3://lake", "name": "hourly"}]})
    };
    let nominal = json!({"nominalTime": {"nominalStartTime": slot(0), "nominalEndTime": slot(60)}});
    let keyed = json!({"airflow": {"dagRun": {"partition_key": "2025-06-01T11:00:00"}}});
    let first = c.post_json("/api/v1/lineage", &run("a", nominal.clone(), &slot(61)));
    assert_eq!(first.json()["accepted"], 1, "{}", first.text());
    let batch = json!([
        run("a", nominal.clone(), &slot(62)),
        run("b", keyed, &slot(121)),
    ]);
    let answer = c.post_json("/api/v1/lineage", &batch).json();
    assert_eq!(answer["accepted"], 1, "{answer}");
    assert_eq!(answer["skipped"], 1, "{answer}");
    let again = c.post_json("/api/v1/lineage", &batch).json();
    assert_eq!(
        (&again["accepted"], &again["duplicates"]),
        (&json!(0), &json!(1)),
        "{again}"
    );
    let covered = c
        .get(&format!(
            "/v1/assets/s3%3A%2F%2Flake%2Fhourly/coverage?start={}&end=2025-06-01T12:00:00Z",
            slot(0)
        ))
        .json();
    assert_eq!(covered["covered"], true, "{covered}");
}
