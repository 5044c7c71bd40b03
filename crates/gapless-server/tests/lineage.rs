//! `POST /api/v1/lineage` over a real socket: OpenLineage run events as
//! the HTTP transport sends them (one event, gzip, a bearer token), arrays
//! and NDJSON; what a `COMPLETE` records, what every other event does not,
//! re-delivery, and that nothing an emitter sends about coverage is an
//! error while a body that is not JSON is.

mod common;

use std::io::Write;

use common::{enc, TestServer};
use gapless_server::Tokens;
use serde_json::{json, Value};

const RUN: &str = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

/// A run event of the job `orders_dag.load` writing `s3://lake/orders` and
/// `postgres://db:5432/shop.public.orders`, with `facets` as its run facets.
fn run_event(event_type: &str, run_id: &str, facets: Value) -> Value {
    json!({
        "eventType": event_type,
        "eventTime": "2025-06-01T01:02:03.5Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id, "facets": facets},
        "job": {"namespace": "airflow-prod", "name": "orders_dag.load"},
        "inputs": [{"namespace": "s3://raw", "name": "orders"}],
        "outputs": [
            {"namespace": "s3://lake", "name": "orders"},
            {"namespace": "postgres://db:5432", "name": "shop.public.orders"}
        ]
    })
}

fn nominal(start: &str, end: &str) -> Value {
    json!({"nominalTime": {
        "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json",
        "nominalStartTime": start, "nominalEndTime": end}})
}

fn hour(h: u32) -> String {
    format!("2025-06-01T{h:02}:00:00Z")
}

fn complete(run_id: &str, from: u32, to: u32) -> Value {
    run_event("COMPLETE", run_id, nominal(&hour(from), &hour(to)))
}

/// The asset's events (`GET .../events`), or none when the ledger has never
/// seen it.
fn events(c: &common::Client, asset: &str) -> Vec<Value> {
    let r = c.get(&format!("/v1/assets/{}/events", enc(asset)));
    if r.status == 404 {
        return Vec::new();
    }
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["events"].as_array().unwrap().clone()
}

fn missing(c: &common::Client, asset: &str, start: &str, end: &str) -> Value {
    let r = c.get(&format!(
        "/v1/assets/{}/coverage?start={start}&end={end}",
        enc(asset)
    ));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["missing"].clone()
}

fn post(c: &common::Client, body: &Value) -> Value {
    let r = c.post_json("/api/v1/lineage", body);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

fn reasons(answer: &Value) -> Vec<(String, u64)> {
    answer["skipped_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["reason"].as_str().unwrap().to_string(),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_complete_event_records_its_interval_on_each_output() {
    let server = TestServer::start();
    let c = server.client();
    let answer = post(&c, &complete(RUN, 0, 1));
    assert_eq!(
        answer,
        json!({"accepted": 2, "duplicates": 0, "skipped": 0, "skipped_reasons": []})
    );
    for asset in ["s3://lake/orders", "postgres://db:5432/shop.public.orders"] {
        let stored = events(&c, asset);
        assert_eq!(stored.len(), 1, "{asset}: {stored:?}");
        let e = &stored[0];
        assert_eq!(e["id"], format!("openlineage:{RUN}"));
        assert_eq!((&e["start"], &e["end"]), (&json!(hour(0)), &json!(hour(1))));
        assert_eq!(e["kind"], "landed");
        assert_eq!(e["produced_at"], "2025-06-01T01:02:03.5Z");
        assert_eq!(e["extra"]["job_name"], "orders_dag.load");
        assert_eq!(e["extra"]["run_id"], RUN);
        assert_eq!(missing(&c, asset, &hour(0), &hour(1)), json!([]));
    }
    // Inputs record nothing.
    assert!(events(&c, "s3://raw/orders").is_empty());
}

#[test]
fn start_running_fail_and_abort_record_nothing() {
    let server = TestServer::start();
    let c = server.client();
    let facets = nominal(&hour(0), &hour(1));
    let ndjson: String = ["START", "RUNNING", "FAIL", "ABORT"]
        .iter()
        .map(|t| run_event(t, RUN, facets.clone()).to_string() + "\n")
        .collect();
    let r = c.post_ndjson("/api/v1/lineage", &ndjson);
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!(answer["accepted"], 0);
    assert_eq!(answer["skipped"], 4);
    assert_eq!(
        reasons(&answer),
        ["START", "RUNNING", "FAIL", "ABORT"]
            .iter()
            .map(|t| (format!("eventType {t} (only COMPLETE records)"), 1))
            .collect::<Vec<_>>()
    );
    assert!(events(&c, "s3://lake/orders").is_empty());
}

#[test]
fn a_redelivered_event_is_a_duplicate_and_a_batch_records_each_run() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(post(&c, &complete(RUN, 0, 1))["accepted"], 2);
    let again = post(&c, &complete(RUN, 0, 1));
    assert_eq!(
        (&again["accepted"], &again["duplicates"]),
        (&json!(0), &json!(2))
    );

    // An array: two more hourly runs, a START, and the first run again.
    let batch = json!([
        complete("run-2", 1, 2),
        run_event("START", "run-3", nominal(&hour(2), &hour(3))),
        complete("run-3", 2, 3),
        complete(RUN, 0, 1),
    ]);
    let answer = post(&c, &batch);
    assert_eq!(answer["accepted"], 4, "{answer}");
    assert_eq!(answer["duplicates"], 2, "{answer}");
    assert_eq!(answer["skipped"], 1, "{answer}");
    assert_eq!(
        missing(&c, "s3://lake/orders", &hour(0), &hour(4)),
        json!([{"start": hour(3), "end": hour(4)}])
    );
}

#[test]
fn gzip_bodies_are_inflated_and_other_encodings_refused() {
    let server = TestServer::start();
    let c = server.client();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(3));
    gz.write_all(complete(RUN, 0, 1).to_string().as_bytes())
        .unwrap();
    let body = gz.finish().unwrap();
    let headers = [
        ("Content-Type", "application/json"),
        ("Content-Encoding", "gzip"),
    ];
    let r = c.send("POST", "/api/v1/lineage", &headers, &body);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["accepted"], 2);

    let r = c.send("POST", "/api/v1/lineage", &headers, b"not gzip at all");
    assert_eq!(r.status, 400);
    assert!(r.error().contains("not valid gzip"), "{}", r.error());

    let r = c.send(
        "POST",
        "/api/v1/lineage",
        &[("Content-Encoding", "br")],
        &body,
    );
    assert_eq!(r.status, 415);
    assert!(r.error().contains("Content-Encoding br"), "{}", r.error());
}

#[test]
fn bad_json_is_a_400_naming_what_is_wrong_and_nothing_is_stored() {
    let server = TestServer::start();
    let c = server.client();
    let good = complete(RUN, 0, 1).to_string();
    let body = format!("{good}\n{{\"eventType\": \"COMPLETE\",");
    let r = c.post_ndjson("/api/v1/lineage", &body);
    assert_eq!(r.status, 400);
    let message = r.error();
    assert!(message.starts_with("the body: JSON value 2: "), "{message}");
    assert!(events(&c, "s3://lake/orders").is_empty());

    let r = c.send("POST", "/api/v1/lineage", &[], b"");
    assert_eq!(r.status, 400);
    assert!(r.error().starts_with("the body is empty"), "{}", r.error());
}

#[test]
fn events_that_say_nothing_of_time_are_skipped_with_their_reason() {
    let server = TestServer::start();
    let c = server.client();
    let batch = json!([
        run_event("COMPLETE", "no-time", json!({})),
        run_event(
            "COMPLETE",
            "manual",
            nominal(&hour(5), &hour(5)),
        ),
        {"eventTime": "2025-06-01T00:00:00Z", "producer": "p",
         "dataset": {"namespace": "s3://lake", "name": "orders"}},
    ]);
    let answer = post(&c, &batch);
    assert_eq!(answer["accepted"], 0);
    assert_eq!(
        reasons(&answer),
        vec![
            ("no nominalTime and no partition key".to_string(), 1),
            (
                "nominalTime is empty or reversed (and no partition key)".to_string(),
                1
            ),
            (
                "not a run event (no run: a dataset or job event)".to_string(),
                1
            ),
        ]
    );
    assert!(events(&c, "s3://lake/orders").is_empty());
}

#[test]
fn an_airflow_partition_key_places_the_run_once_its_asset_declares_a_span() {
    let server = TestServer::start();
    let c = server.client();
    let keyed = |run: &str, key: &str| {
        run_event(
            "COMPLETE",
            run,
            json!({"airflow": {"dagRun": {"partition_key": key, "dag_id": "orders_dag"}}}),
        )
    };
    // An ISO interval key needs no declaration; a discrete key of an asset
    // without a key span is refused by the ledger, so skipped, while the
    // other output of the same event is stored.
    let r = c.put_json(
        &format!("/v1/assets/{}", enc("s3://lake/orders")),
        &json!({"key_span": "PT1H"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = post(
        &c,
        &json!([
            keyed("iso", "2025-06-01T00:00:00/2025-06-01T01:00:00"),
            keyed("discrete", "2025-06-01T01:00:00"),
        ]),
    );
    assert_eq!(answer["accepted"], 3, "{answer}");
    let why = reasons(&answer);
    assert_eq!(why.len(), 1, "{answer}");
    assert!(
        why[0].0.starts_with("refused by the ledger: ") && why[0].1 == 1,
        "{answer}"
    );
    assert_eq!(
        missing(&c, "s3://lake/orders", &hour(0), &hour(2)),
        json!([])
    );
    assert_eq!(
        missing(
            &c,
            "postgres://db:5432/shop.public.orders",
            &hour(0),
            &hour(2)
        ),
        json!([{"start": hour(1), "end": hour(2)}])
    );
}

#[test]
fn a_conflict_is_skipped_and_the_rest_of_the_batch_stored() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(post(&c, &complete(RUN, 0, 1))["accepted"], 2);
    // The same run said to cover another hour: a conflict for both outputs.
    let answer = post(&c, &json!([complete(RUN, 5, 6), complete("run-2", 1, 2)]));
    assert_eq!(answer["accepted"], 2, "{answer}");
    assert_eq!(answer["skipped"], 2, "{answer}");
    assert!(
        reasons(&answer)[0].0.starts_with("a conflict: "),
        "{answer}"
    );
    let stored = events(&c, "s3://lake/orders");
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0]["start"], hour(0), "the first event is unchanged");
}

#[test]
fn tokens_are_the_transports_bearer_and_prefixes_skip_what_they_do_not_allow() {
    let tokens = Tokens::parse(
        r#"
[[token]]
secret = "reader-secret-0123456789"
scopes = ["read"]

[[token]]
secret = "lake-writer-0123456789"
scopes = ["write", "read"]
prefixes = ["s3://lake/"]
"#,
    )
    .unwrap();
    let server = TestServer::with_tokens(tokens);
    let body = complete(RUN, 0, 1);

    let r = server.client().post_json("/api/v1/lineage", &body);
    assert_eq!(r.status, 401, "{}", r.text());
    let r = server
        .client_with("reader-secret-0123456789")
        .post_json("/api/v1/lineage", &body);
    assert_eq!(r.status, 403, "{}", r.text());

    let c = server.client_with("lake-writer-0123456789");
    let answer = post(&c, &body);
    assert_eq!(answer["accepted"], 1, "{answer}");
    assert_eq!(
        reasons(&answer),
        vec![("an asset outside the token's write prefixes".to_string(), 1)]
    );
    assert_eq!(events(&c, "s3://lake/orders").len(), 1);
}

#[test]
fn the_route_is_in_the_openapi_document() {
    let server = TestServer::start();
    let doc = server.client().get("/openapi.json").json();
    let post = &doc["paths"]["/api/v1/lineage"]["post"];
    let statuses: Vec<&String> = post["responses"].as_object().unwrap().keys().collect();
    for status in ["200", "400", "401", "403", "413", "415", "500", "503"] {
        assert!(
            statuses.iter().any(|s| *s == status),
            "{status}: {statuses:?}"
        );
    }
}
