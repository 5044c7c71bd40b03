//! The OpenAPI document is honest: every served route is in it, every route
//! in it is served, and each answer schema has exactly the fields of the
//! JSON the server really sends.

mod common;

use std::collections::BTreeSet;

use common::{at, event, TestServer};
use serde_json::{json, Value};

/// Every route the server serves (SPEC §4 and the extensions).
const ROUTES: &[(&str, &str)] = &[
    ("post", "/v1/events"),
    ("post", "/api/v1/lineage"),
    ("get", "/v1/assets"),
    ("get", "/v1/assets/{asset}"),
    ("put", "/v1/assets/{asset}"),
    ("get", "/v1/assets/{asset}/coverage"),
    ("get", "/v1/assets/{asset}/windows"),
    ("get", "/v1/assets/{asset}/segments"),
    ("get", "/v1/assets/{asset}/buckets"),
    ("get", "/v1/assets/{asset}/events"),
    ("get", "/v1/assets/{asset}/frontier"),
    ("post", "/v1/coverage"),
    ("post", "/v1/buckets"),
    ("post", "/v1/prune"),
    ("get", "/v1/rules"),
    ("get", "/v1/rules/{name}"),
    ("put", "/v1/rules/{name}"),
    ("delete", "/v1/rules/{name}"),
    ("get", "/v1/rules/{name}/windows"),
    ("get", "/v1/firings"),
    ("get", "/v1/assets/{asset}/wait"),
    ("get", "/healthz"),
    ("get", "/metrics"),
    ("get", "/openapi.json"),
];

fn property_names(doc: &Value, schema: &str) -> BTreeSet<String> {
    let s = &doc["components"]["schemas"][schema];
    assert!(s.is_object(), "no schema {schema}");
    // A flattened struct is an allOf of a reference and its own fields.
    if let Some(parts) = s["allOf"].as_array() {
        return parts
            .iter()
            .flat_map(|p| match p["$ref"].as_str() {
                Some(r) => property_names(doc, r.trim_start_matches("#/components/schemas/")),
                None => p["properties"]
                    .as_object()
                    .unwrap_or_else(|| panic!("{schema}: a part without properties"))
                    .keys()
                    .cloned()
                    .collect(),
            })
            .collect();
    }
    s["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{schema} has no properties"))
        .keys()
        .cloned()
        .collect()
}

fn names(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

#[test]
fn the_document_lists_exactly_the_served_routes() {
    let server = TestServer::start();
    let c = server.client();
    let r = c.get("/openapi.json");
    assert_eq!(r.status, 200);
    assert!(r
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    let doc = r.json();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );

    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "put", "post", "delete", "patch"].contains(&method.as_str()) {
                documented.insert((method.clone(), path.clone()));
            }
        }
    }
    let served: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(documented, served);

    // Each documented route is really routed (no 404 or 405).
    for (method, path) in &documented {
        let path = path.replace("{asset}", "x");
        let r = c.send(
            &method.to_uppercase(),
            &path,
            &[("Content-Type", "application/json")],
            b"{}",
        );
        // A 404 may only be the asset's (`x` is unknown), never the route's.
        let unrouted =
            r.status == 405 || (r.status == 404 && r.error().starts_with("no such route"));
        assert!(!unrouted, "{method} {path}: {} {}", r.status, r.text());
    }
    // This document is what the library exposes too.
    let lib = serde_json::to_value(gapless_server::openapi()).unwrap();
    assert_eq!(lib["paths"], doc["paths"]);
}

#[test]
fn answer_schemas_have_exactly_the_answers_fields() {
    let server = TestServer::start();
    let c = server.client();
    let doc = c.get("/openapi.json").json();
    let mut e = event("a", &at(0), &at(5), Some("1"));
    e["extra"] = json!({"k": 1});
    e["produced_at"] = json!(at(6));
    let ingest = c.post_json("/v1/events", &e).json();
    let range = format!("start={}&end={}", at(0), at(10));
    let check = c.get(&format!("/v1/assets/a/coverage?{range}")).json();
    let windows = c
        .get(&format!("/v1/assets/a/windows?{range}&every=5m"))
        .json();
    let segments = c.get(&format!("/v1/assets/a/segments?{range}")).json();
    let events = c.get("/v1/assets/a/events").json();
    let frontier = c
        .get(&format!("/v1/assets/a/frontier?origin={}", at(0)))
        .json();
    let assets = c.get("/v1/assets").json();
    let decl = c
        .put_json("/v1/assets/a", &json!({"key_span": "PT5M"}))
        .json();
    let multi = c
        .post_json(
            "/v1/coverage",
            &json!({"assets": ["a"], "start": at(0), "end": at(10)}),
        )
        .json();
    let error = c.get("/v1/assets/a/coverage?start=x&end=y").json();
    let health = c.get("/healthz").json();
    let rule_set = c
        .put_json(
            "/v1/rules/r",
            &json!({"assets": ["a"], "every": "5m", "from": at(0), "target": "t"}),
        )
        .json();
    let rule = c.get("/v1/rules/r").json();
    let rules = c.get("/v1/rules").json();
    let firings = c.get("/v1/firings").json();
    let rule_windows = c.get(&format!("/v1/rules/r/windows?{range}")).json();
    let buckets = c.get(&format!("/v1/assets/a/buckets?{range}")).json();
    let buckets_many = c
        .post_json(
            "/v1/buckets",
            &json!({"assets": [{"asset": "a", "start": at(0), "end": at(10)}], "buckets": 3}),
        )
        .json();
    let waited = c
        .get(&format!("/v1/assets/a/wait?{range}&timeout=1s"))
        .json();
    let deleted = c.send("DELETE", "/v1/rules/r", &[], b"").json();
    let pruned = c.post_json("/v1/prune", &json!({"before": at(5)})).json();
    let segments_pruned = c.get(&format!("/v1/assets/a/segments?{range}")).json();

    let cases = [
        ("IngestAnswer", &ingest),
        ("CheckAnswer", &check),
        ("Interval", &check["missing"][0]),
        ("WindowsAnswer", &windows),
        ("WindowAnswer", &windows["windows"][0]),
        ("SegmentsAnswer", &segments),
        ("SegmentAnswer", &segments["segments"][0]),
        ("EventRef", &segments["segments"][0]["event"]),
        ("EventsAnswer", &events),
        ("EventAnswer", &events["events"][0]),
        ("FrontierAnswer", &frontier),
        ("AssetsAnswer", &assets),
        ("AssetOverviewAnswer", &assets["assets"][0]),
        ("DeclAnswer", &decl),
        ("MultiCheckAnswer", &multi),
        ("ErrorBody", &error),
        ("Health", &health),
        ("RuleSetAnswer", &rule_set),
        ("RuleAnswer", &rule),
        ("RulesAnswer", &rules),
        ("FiringsAnswer", &firings),
        ("FiringAnswer", &firings["firings"][0]),
        ("WindowRef", &firings["firings"][0]["window"]),
        ("DeliveryAnswer", &firings["firings"][0]["delivery"]),
        ("RuleWindowsAnswer", &rule_windows),
        ("WindowAnswer", &rule_windows["windows"][0]),
        ("BucketsAnswer", &buckets),
        ("BucketAnswer", &buckets["buckets"][0]),
        ("MultiBucketsAnswer", &buckets_many),
        ("BucketsAnswer", &buckets_many["buckets"][0]),
        ("CheckAnswer", &waited),
        ("RuleDeletedAnswer", &deleted),
        ("PruneAnswer", &pruned),
        ("SegmentsAnswer", &segments_pruned),
    ];
    for (schema, answer) in cases {
        assert_eq!(
            property_names(&doc, schema),
            names(answer),
            "{schema} vs {answer}"
        );
    }
}

/// The statuses the document lists for `method` `path` (its template).
fn documented_statuses(doc: &Value, method: &str, path: &str) -> BTreeSet<u16> {
    let responses = &doc["paths"][path][method]["responses"];
    responses
        .as_object()
        .unwrap_or_else(|| panic!("{method} {path} is not documented"))
        .keys()
        .map(|k| k.parse().unwrap())
        .collect()
}

/// Found by scripts/fuzz-api (schemathesis): every status a route answers
/// is one the document lists for it; first `POST /v1/coverage`, whose 404
/// for an asset the ledger has never seen was missing.
#[test]
fn every_status_answered_is_documented() {
    let server = TestServer::start();
    let c = server.client();
    let doc = c.get("/openapi.json").json();
    assert_eq!(
        c.post_json("/v1/events", &event("a", &at(0), &at(5), Some("1")))
            .status,
        200
    );
    let range = format!("start={}&end={}", at(0), at(10));
    let json = [("Content-Type", "application/json")];
    let cases: Vec<(&str, &str, String, Value)> = vec![
        (
            "post",
            "/v1/events",
            "/v1/events".into(),
            json!({"asset": ""}),
        ),
        (
            "post",
            "/v1/events",
            "/v1/events".into(),
            event("a", &at(0), &at(5), Some("1")),
        ),
        (
            "post",
            "/v1/events",
            "/v1/events".into(),
            event("a", &at(0), &at(6), Some("1")),
        ),
        (
            "post",
            "/v1/coverage",
            "/v1/coverage".into(),
            json!({"assets": ["nosuch"], "start": at(0), "end": at(10)}),
        ),
        (
            "post",
            "/v1/coverage",
            "/v1/coverage".into(),
            json!({"assets": ["a"], "start": "x", "end": at(10)}),
        ),
        (
            "post",
            "/v1/coverage",
            "/v1/coverage".into(),
            json!({"assets": ["a"], "start": at(0), "end": at(10), "policy": "full"}),
        ),
        (
            "get",
            "/v1/assets/{asset}",
            "/v1/assets/nosuch".into(),
            Value::Null,
        ),
        (
            "get",
            "/v1/assets/{asset}/coverage",
            format!("/v1/assets/nosuch/coverage?{range}"),
            Value::Null,
        ),
        (
            "get",
            "/v1/assets/{asset}/coverage",
            "/v1/assets/a/coverage?start=x&end=y".into(),
            Value::Null,
        ),
        (
            "get",
            "/v1/assets/{asset}/windows",
            format!("/v1/assets/nosuch/windows?{range}&every=1h"),
            Value::Null,
        ),
        (
            "get",
            "/v1/assets/{asset}/segments",
            format!("/v1/assets/nosuch/segments?{range}"),
            Value::Null,
        ),
        (
            "get",
            "/v1/assets/{asset}/events",
            "/v1/assets/nosuch/events".into(),
            Value::Null,
        ),
        (
            "get",
            "/v1/assets/{asset}/frontier",
            "/v1/assets/nosuch/frontier".into(),
            Value::Null,
        ),
        (
            "put",
            "/v1/assets/{asset}",
            "/v1/assets/a".into(),
            json!({"tz": "Mars/Olympus"}),
        ),
        (
            "post",
            "/v1/buckets",
            "/v1/buckets".into(),
            json!({"assets": [{"asset": "nosuch", "start": at(0), "end": at(10)}]}),
        ),
        (
            "post",
            "/v1/buckets",
            "/v1/buckets".into(),
            json!({"assets": [{"asset": "a", "start": at(0), "end": at(10)}], "buckets": 0}),
        ),
        (
            "get",
            "/v1/assets",
            "/v1/assets?limit=0".into(),
            Value::Null,
        ),
        (
            "get",
            "/v1/rules",
            "/v1/rules?after=%21".into(),
            Value::Null,
        ),
        (
            "post",
            "/v1/prune",
            "/v1/prune".into(),
            json!({"before": "x"}),
        ),
        (
            "post",
            "/v1/prune",
            "/v1/prune".into(),
            json!({"before": at(0), "asset": "nosuch"}),
        ),
        (
            "post",
            "/v1/prune",
            "/v1/prune".into(),
            json!({"before": at(0), "other": 1}),
        ),
        (
            "post",
            "/v1/prune",
            "/v1/prune".into(),
            json!({"before": at(0)}),
        ),
    ];
    for (method, template, path, body) in cases {
        let r = if body.is_null() {
            c.send(&method.to_uppercase(), &path, &[], b"")
        } else {
            c.send(
                &method.to_uppercase(),
                &path,
                &json,
                body.to_string().as_bytes(),
            )
        };
        let documented = documented_statuses(&doc, method, template);
        assert!(
            documented.contains(&r.status),
            "{method} {path}: answered {} ({}), documented {documented:?}",
            r.status,
            r.text()
        );
    }
}

/// Found by scripts/fuzz-api (schemathesis): the body of `POST /v1/events`
/// was described as an externally tagged enum (`{"One": {...}}` or
/// `{"Many": [...]}`), which the server refuses, so the fuzzer never sent
/// a real event. It is one event object or an array of them.
#[test]
fn the_events_body_is_an_event_or_an_array_of_them() {
    let doc = serde_json::to_value(gapless_server::openapi()).unwrap();
    let body = &doc["paths"]["/v1/events"]["post"]["requestBody"]["content"];
    assert_eq!(
        body["application/json"]["schema"]["$ref"],
        "#/components/schemas/EventsBody"
    );
    let one_of = doc["components"]["schemas"]["EventsBody"]["oneOf"]
        .as_array()
        .expect("EventsBody is a oneOf");
    let event = "#/components/schemas/EventInput";
    assert_eq!(one_of.len(), 2, "{one_of:?}");
    assert_eq!(one_of[0]["$ref"], event, "{one_of:?}");
    assert_eq!(one_of[1]["type"], "array", "{one_of:?}");
    assert_eq!(one_of[1]["items"]["$ref"], event, "{one_of:?}");
    let input = &doc["components"]["schemas"]["EventInput"];
    assert_eq!(input["required"], json!(["asset"]));

    // The shapes it describes are what the server takes.
    let server = TestServer::start();
    let c = server.client();
    let e = common::event("a", &at(0), &at(5), None);
    assert_eq!(c.post_json("/v1/events", &e).status, 200);
    assert_eq!(c.post_json("/v1/events", &json!([e])).status, 200);
    assert_eq!(c.post_json("/v1/events", &json!({"One": e})).status, 400);
}
