//! Every endpoint over a real socket: JSON shapes, percent-encoded asset
//! names, atomic batches, errors.

mod common;

use common::{at, enc, event, TestServer};
use serde_json::{json, Value};

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

#[test]
fn every_endpoint_answers_in_the_cli_json_shape() {
    let server = TestServer::start();
    let c = server.client();
    let a = "orders";

    // Record: one object, an array, NDJSON.
    let r = c.post_json("/v1/events", &event(a, &at(0), &at(5), Some("e1")));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json(), json!({"accepted": 1, "duplicates": 0}));
    let r = c.post_json(
        "/v1/events",
        &json!([
            event(a, &at(5), &at(10), Some("e2")),
            event(a, &at(0), &at(5), Some("e1"))
        ]),
    );
    assert_eq!(
        r.json(),
        json!({"accepted": 1, "duplicates": 1}),
        "{}",
        r.text()
    );
    let ndjson = format!(
        "{}\n\n{}\r\n",
        event(a, &at(15), &at(20), Some("e3")),
        json!({"asset": a, "partition_key": format!("{}/PT5M", at(20)), "id": "e4", "extra": {"rows": 7}})
    );
    let r = c.post_ndjson("/v1/events", &ndjson);
    assert_eq!(
        r.json(),
        json!({"accepted": 2, "duplicates": 0}),
        "{}",
        r.text()
    );

    // coverage = check
    let r = c.get(&format!(
        "/v1/assets/{a}/coverage?start={}&end={}",
        at(0),
        at(25)
    ));
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(
        keys(&v),
        [
            "asset",
            "complete",
            "covered",
            "covered_ratio",
            "end",
            "missing",
            "missing_count",
            "policy",
            "start"
        ]
    );
    assert_eq!(v["asset"], a);
    assert_eq!(v["covered"], false);
    assert_eq!(v["missing"], json!([{"start": at(10), "end": at(15)}]));
    assert_eq!(v["start"], at(0));
    assert_eq!(v["policy"], "full");
    let r = c.get(&format!(
        "/v1/assets/{a}/coverage?start={}&end={}&policy={}",
        at(0),
        at(25),
        enc("ratio>=0.8")
    ));
    assert_eq!(r.json()["complete"], true, "{}", r.text());

    // windows
    let r = c.get(&format!(
        "/v1/assets/{a}/windows?start={}&end={}&every=10m",
        at(0),
        at(20)
    ));
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(keys(&v), ["asset", "every", "policy", "tz", "windows"]);
    assert_eq!(v["tz"], "UTC");
    assert_eq!(v["windows"].as_array().unwrap().len(), 2);
    assert_eq!(
        keys(&v["windows"][0]),
        [
            "complete",
            "covered_ratio",
            "end",
            "key",
            "missing",
            "missing_count",
            "start"
        ]
    );
    assert_eq!(v["windows"][0]["complete"], true);
    assert_eq!(v["windows"][1]["complete"], false);

    // segments
    let r = c.get(&format!(
        "/v1/assets/{a}/segments?start={}&end={}",
        at(0),
        at(10)
    ));
    let v = r.json();
    assert_eq!(
        keys(&v),
        ["asset", "end", "next", "pruned_before", "segments", "start"],
        "{v}"
    );
    assert_eq!(keys(&v["segments"][0]), ["end", "event", "kind", "start"]);
    assert_eq!(v["segments"][0]["event"]["id"], "e1");
    assert_eq!(v["next"], Value::Null);

    // segments, paginated: a page of one, then the rest from its cursor
    let range = format!("start={}&end={}", at(0), at(10));
    let v = c
        .get(&format!("/v1/assets/{a}/segments?{range}&limit=1"))
        .json();
    assert_eq!(v["segments"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["segments"][0]["event"]["id"], "e1");
    assert_eq!(v["next"], at(5), "{v}");
    let v = c
        .get(&format!(
            "/v1/assets/{a}/segments?{range}&limit=1&after={}",
            enc(v["next"].as_str().unwrap())
        ))
        .json();
    assert_eq!(v["segments"][0]["event"]["id"], "e2", "{v}");
    assert_eq!(v["segments"][0]["start"], at(5));
    assert_eq!(v["next"], Value::Null);
    let r = c.get(&format!("/v1/assets/{a}/segments?{range}&limit=0"));
    assert_eq!(r.status, 400);
    assert!(r.text().contains("give 1 to 10000"), "{}", r.text());
    let r = c.get(&format!("/v1/assets/{a}/segments?{range}&after={}", at(10)));
    assert_eq!(r.status, 400);
    assert!(r.text().contains("outside the range"), "{}", r.text());

    // events, paginated
    let r = c.get(&format!("/v1/assets/{a}/events?limit=3"));
    let v = r.json();
    assert_eq!(
        keys(&v),
        ["asset", "events", "next", "pruned_before"],
        "{v}"
    );
    assert_eq!(v["events"].as_array().unwrap().len(), 3);
    assert_eq!(
        keys(&v["events"][0]),
        [
            "end",
            "extra",
            "id",
            "kind",
            "produced_at",
            "received_at",
            "seq",
            "start"
        ]
    );
    let next = v["next"].as_str().expect("a cursor").to_string();
    let v = c
        .get(&format!("/v1/assets/{a}/events?limit=3&after={next}"))
        .json();
    assert_eq!(v["events"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["events"][0]["extra"], json!({"rows": 7}));
    assert_eq!(v["next"], Value::Null);
    let v = c
        .get(&format!(
            "/v1/assets/{a}/events?start={}&end={}&kind=landed",
            at(0),
            at(6)
        ))
        .json();
    assert_eq!(v["events"].as_array().unwrap().len(), 2, "{v}");

    // frontier
    let v = c
        .get(&format!("/v1/assets/{a}/frontier?origin={}", at(0)))
        .json();
    assert_eq!(v, json!({"asset": a, "origin": at(0), "frontier": at(10)}));

    // assets
    let v = c.get("/v1/assets").json();
    assert_eq!(keys(&v), ["as_of", "assets", "next"]);
    assert_eq!(v["next"], Value::Null);
    assert_eq!(v["assets"][0]["asset"], a);
    assert_eq!(v["assets"][0]["events"], 4);
    assert_eq!(
        keys(&v["assets"][0]),
        [
            "asset",
            "covered_ratio_day",
            "covered_ratio_week",
            "events",
            "first_covered",
            "frontier",
            "key_span",
            "last_covered",
            "last_received",
            "pruned_before",
            "tz"
        ]
    );
    assert_eq!(v["assets"][0]["frontier"], at(10));
    // Stored by this server a moment ago.
    let received: jiff::Timestamp = v["assets"][0]["last_received"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let age = jiff::Timestamp::now().duration_since(received);
    assert!(
        age >= jiff::SignedDuration::ZERO && age < jiff::SignedDuration::from_secs(60),
        "{received}"
    );

    // several assets at once
    c.post_json("/v1/events", &event("payments", &at(0), &at(30), None));
    let r = c.post_json(
        "/v1/coverage",
        &json!({"assets": [a, "payments"], "start": at(0), "end": at(20)}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(
        keys(&v),
        [
            "assets",
            "covered",
            "covered_ratio",
            "end",
            "missing",
            "missing_count",
            "start"
        ]
    );
    assert_eq!(v["missing"], json!([{"start": at(10), "end": at(15)}]));

    // declare, then a discrete key resolves
    let r = c.put_json(
        "/v1/assets/hourly",
        &json!({"key_span": "PT1H", "tz": "Europe/Berlin"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"asset": "hourly", "key_span": "PT1H", "tz": "Europe/Berlin"})
    );
    let r = c.post_json(
        "/v1/events",
        &json!({"asset": "hourly", "partition_key": "2025-06-01T10:00:00"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = c.get("/v1/assets/hourly/events").json();
    assert_eq!(v["events"][0]["end"].as_str().unwrap().len(), 20, "{v}");

    // health, metrics
    assert_eq!(c.get("/healthz").json(), json!({"status": "ok"}));
    let m = c.get("/metrics");
    assert_eq!(m.status, 200);
    let text = m.text();
    assert!(text.contains("gapless_events_accepted_total 6"), "{text}");
    assert!(text.contains("gapless_events_duplicates_total 1"), "{text}");
    assert!(
        text.contains("gapless_asset_events{asset=\"orders\"} 4"),
        "{text}"
    );
    assert!(
        text.contains("gapless_http_request_duration_seconds_bucket"),
        "{text}"
    );
    assert!(
        text.contains("route=\"/v1/assets/{asset}/coverage\""),
        "{text}"
    );
}

#[test]
fn percent_encoded_asset_names_round_trip() {
    let server = TestServer::start();
    let c = server.client();
    for name in ["s3://lake/orders", "ümlaut name", "a?b#c%2Fd", "x/coverage"] {
        let r = c.post_json("/v1/events", &event(name, &at(0), &at(5), Some("1")));
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        let r = c.get(&format!(
            "/v1/assets/{}/coverage?start={}&end={}",
            enc(name),
            at(0),
            at(5)
        ));
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        let v = r.json();
        assert_eq!(v["asset"], name);
        assert_eq!(v["covered"], true, "{name}: {v}");
        for q in [
            "events",
            "segments?start=2025-06-01&end=2025-06-02",
            "frontier?origin=2025-06-01T10:00:00Z",
        ] {
            let r = c.get(&format!("/v1/assets/{}/{q}", enc(name)));
            assert_eq!(r.status, 200, "{name} {q}: {}", r.text());
            assert_eq!(r.json()["asset"], name);
        }
        let r = c.put_json(&format!("/v1/assets/{}", enc(name)), &json!({"tz": "UTC"}));
        assert_eq!(r.json()["asset"], name, "{}", r.text());
    }
    let names: Vec<Value> = c.get("/v1/assets").json()["assets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["asset"].clone())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
}

/// Events stored of `asset`: none for an asset the ledger has never seen.
fn stored(c: &common::Client, asset: &str) -> usize {
    let r = c.get(&format!("/v1/assets/{}/events", enc(asset)));
    if r.status == 404 {
        assert!(r.error().starts_with("unknown asset"), "{}", r.text());
        return 0;
    }
    r.json()["events"].as_array().unwrap().len()
}

#[test]
fn batches_are_atomic_and_errors_name_the_item() {
    let server = TestServer::start();
    let c = server.client();

    // A bad array item: 400 naming `event 3`, nothing stored.
    let r = c.post_json(
        "/v1/events",
        &json!([
            event("a", &at(0), &at(5), None),
            event("a", &at(5), &at(10), None),
            event("a", &at(10), &at(5), None)
        ]),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.error().starts_with("event 3: "), "{}", r.text());
    assert_eq!(r.json()["detail"], json!({"event": 3}));
    assert_eq!(stored(&c, "a"), 0);

    // A bad NDJSON line, counting blank lines: `line 4`.
    let body = format!(
        "{}\n\n{}\nnot json\n",
        event("a", &at(0), &at(5), None),
        event("a", &at(5), &at(10), None)
    );
    let r = c.post_ndjson("/v1/events", &body);
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.error().starts_with("line 4: "), "{}", r.text());
    assert_eq!(stored(&c, "a"), 0);

    // A conflict in the second item: 409 naming it, the first not stored.
    c.post_json("/v1/events", &event("b", &at(0), &at(5), Some("x")));
    let r = c.post_json(
        "/v1/events",
        &json!([
            event("b", &at(10), &at(15), Some("new")),
            event("b", &at(0), &at(6), Some("x"))
        ]),
    );
    assert_eq!(r.status, 409, "{}", r.text());
    let e = r.error();
    assert!(e.starts_with("event 2: ") && e.contains("conflict"), "{e}");
    assert_eq!(stored(&c, "b"), 1);

    // A single object's error has no position.
    let r = c.post_json(
        "/v1/events",
        &json!({"asset": "c", "start": "yesterday", "end": at(5)}),
    );
    assert_eq!(r.status, 400);
    assert!(!r.error().starts_with("event"), "{}", r.text());

    // Not JSON at all, an unknown content type, an empty array.
    let r = c.send(
        "POST",
        "/v1/events",
        &[("Content-Type", "application/json")],
        b"[{",
    );
    assert_eq!(r.status, 400, "{}", r.text());
    r.error();
    let r = c.send(
        "POST",
        "/v1/events",
        &[("Content-Type", "text/csv")],
        b"a,b",
    );
    assert_eq!(r.status, 415, "{}", r.text());
    r.error();
    assert_eq!(
        c.post_json("/v1/events", &json!([])).json(),
        json!({"accepted": 0, "duplicates": 0})
    );
}

#[test]
fn bad_queries_are_4xx_with_the_cli_messages() {
    let server = TestServer::start();
    let c = server.client();
    let cases = [
        (
            "/v1/assets/a/coverage?start=2025-06-02&end=2025-06-01",
            400,
            "range",
        ),
        (
            "/v1/assets/a/coverage?start=nope&end=2025-06-01",
            400,
            "start",
        ),
        (
            "/v1/assets/a/coverage?start=2025-06-01&end=2025-06-02&policy=most",
            400,
            "policy",
        ),
        (
            "/v1/assets/a/coverage?start=2025-06-01&end=2025-06-02&tz=Mars/Olympus",
            400,
            "tz",
        ),
        ("/v1/assets/a/coverage?start=2025-06-01", 400, "end"),
        (
            "/v1/assets/a/coverage?start=2025-06-01&end=2025-06-02&polcy=full",
            400,
            "polcy",
        ),
        (
            "/v1/assets/a/windows?start=2025-06-01&end=2025-06-02&every=7q",
            400,
            "every",
        ),
        ("/v1/assets/a/events?limit=0", 400, "limit"),
        ("/v1/assets/a/events?after=abc", 400, "after"),
        ("/v1/assets/a/events?kind=maybe", 400, "kind"),
        ("/v1/assets/a/events?start=2025-06-01", 400, "both"),
        ("/v1/assets/a/frontier?origin=later", 400, "origin"),
        (
            "/v1/assets?limit=0",
            400,
            "limit: 0 is out of range: give 1 to 1000",
        ),
        ("/v1/assets?limit=1001", 400, "limit: 1001 is out of range"),
        (
            "/v1/assets?limit=many",
            400,
            "limit: \"many\" is not a number",
        ),
        ("/v1/assets?after=%21%21", 400, "after: invalid cursor"),
        ("/v1/assets?prefix=a&sort=name", 400, "sort"),
        (
            "/v1/rules?limit=0",
            400,
            "limit: 0 is out of range: give 1 to 1000",
        ),
        ("/v1/rules?after=YQ%3D", 400, "after: invalid cursor"),
        ("/v1/rules?contains=a", 400, "contains"),
        ("/v1/nothing", 404, "no such route"),
        (
            "/v1/assets/s3://lake/orders/coverage",
            404,
            "percent-encode the asset name",
        ),
    ];
    for (path, status, needle) in cases {
        let r = c.get(path);
        assert_eq!(r.status, status, "{path}: {}", r.text());
        let e = r.error();
        assert!(e.contains(needle), "{path}: {e}");
    }
    let r = c.send("DELETE", "/v1/assets", &[], b"");
    assert_eq!(r.status, 405);
    r.error();
    let r = c.post_json(
        "/v1/coverage",
        &json!({"assets": [], "start": "2025-06-01", "end": "2025-06-02"}),
    );
    assert_eq!(r.status, 400);
    assert!(r.error().contains("assets"));
    let r = c.put_json("/v1/assets/a", &json!({"key_span": "forever"}));
    assert_eq!(r.status, 400);
    assert!(r.error().contains("key span"), "{}", r.text());
}

#[test]
fn bodies_over_the_limit_are_413() {
    let config = gapless_server::ServerConfig {
        body_limit: 1024,
        ..Default::default()
    };
    let server = TestServer::with_config(config);
    let c = server.client();
    let big: Vec<Value> = (0..100)
        .map(|i| event("a", &at(i % 50), &at(i % 50 + 1), None))
        .collect();
    // Raw: the server answers before it reads the body (see `raw_exchange`).
    let r = c.raw_post(
        "/v1/events",
        "application/json",
        json!(big).to_string().as_bytes(),
    );
    assert_eq!(r.status, 413, "{}", r.text());
    r.error();
    assert_eq!(stored(&c, "a"), 0);
}

#[test]
fn slow_requests_time_out_with_503() {
    let config = gapless_server::ServerConfig {
        request_timeout: std::time::Duration::from_millis(5),
        ..Default::default()
    };
    let server = TestServer::with_config(config);
    let c = server.client();
    let body: String = (0..20_000)
        .map(|i| {
            format!(
                "{}\n",
                event(
                    "a",
                    &format!("2025-06-01T00:00:00.{i:06}Z"),
                    "2025-06-02T00:00:00Z",
                    None
                )
            )
        })
        .collect();
    // Raw: the limit may pass while the body is still arriving, and the
    // server answers without reading the rest (see `raw_exchange`).
    let r = c.raw_post("/v1/events", "application/x-ndjson", body.as_bytes());
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(
        r.error().contains("took longer than the server's limit"),
        "{}",
        r.text()
    );
    assert_eq!(c.get("/healthz").status, 200);
}

/// `/metrics` as `series{labels}` to value (no `# ` lines).
fn samples(text: &str) -> std::collections::HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series.to_string(), value.parse().unwrap())
        })
        .collect()
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn metrics_per_asset_say_how_far_it_is_covered_when_it_was_written_and_what_was_retracted() {
    let server = TestServer::start();
    let c = server.client();
    let retraction = |asset: &str, start: &str, end: &str, id: Option<&str>| {
        let mut e = event(asset, start, end, id);
        e["kind"] = "retracted".into();
        e
    };
    let post = |body: Value, accepted: u64, duplicates: u64| {
        let r = c.post_json("/v1/events", &body);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(
            r.json(),
            json!({"accepted": accepted, "duplicates": duplicates})
        );
    };
    let before = unix_now();
    post(
        json!([
            event("orders", &at(0), &at(5), Some("e1")),
            event("orders", &at(5), &at(10), Some("e2"))
        ]),
        2,
        0,
    );
    post(retraction("orders", &at(5), &at(10), Some("r1")), 1, 0);
    // Again: a duplicate, stored once.
    post(retraction("orders", &at(5), &at(10), Some("r1")), 0, 1);
    // A batch with a duplicate: of its new events only the one without an
    // id is known to be stored, so r2 is not counted (see `Metrics::stored`).
    post(
        json!([
            event("orders", &at(0), &at(5), Some("e1")),
            retraction("orders", &at(10), &at(15), None),
            retraction("orders", &at(15), &at(20), Some("r2"))
        ]),
        2,
        1,
    );
    post(event("clicks", &at(0), &at(30), None), 1, 0);
    post(retraction("gone", &at(0), &at(5), None), 1, 0);
    let after = unix_now();

    let m = c.get("/metrics");
    assert_eq!(m.status, 200);
    let text = m.text();
    for family in [
        "# TYPE gapless_asset_events gauge",
        "# TYPE gapless_asset_last_covered_seconds gauge",
        "# TYPE gapless_asset_last_received_seconds gauge",
        "# TYPE gapless_asset_retractions counter",
    ] {
        assert!(text.contains(family), "{family}:\n{text}");
    }
    let s = samples(&text);
    let get = |name: &str, asset: &str| s.get(&format!("{name}{{asset=\"{asset}\"}}")).copied();
    // From the ledger: orders is covered 10:00 to 10:05 (10:05 to 10:10 is
    // retracted), clicks to 10:30, gone nowhere.
    assert_eq!(get("gapless_asset_events", "orders"), Some(5.0), "{text}");
    assert_eq!(get("gapless_asset_events", "gone"), Some(1.0), "{text}");
    let t1005 = 1_748_772_300.0; // 2025-06-01T10:05:00Z
    assert_eq!(
        get("gapless_asset_last_covered_seconds", "orders"),
        Some(t1005),
        "{text}"
    );
    assert_eq!(
        get("gapless_asset_last_covered_seconds", "clicks"),
        Some(t1005 + 25.0 * 60.0),
        "{text}"
    );
    assert_eq!(get("gapless_asset_last_covered_seconds", "gone"), None);
    // Counted by this server.
    for asset in ["orders", "clicks", "gone"] {
        let received = get("gapless_asset_last_received_seconds", asset)
            .unwrap_or_else(|| panic!("{asset}: no last received:\n{text}"));
        assert!(
            before - 1.0 <= received && received <= after + 1.0,
            "{asset}: {received} not in {before}..{after}"
        );
    }
    assert_eq!(
        get("gapless_asset_retractions_total", "orders"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        get("gapless_asset_retractions_total", "clicks"),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        get("gapless_asset_retractions_total", "gone"),
        Some(1.0),
        "{text}"
    );
}

/// An asset name with a quote or a backslash is one series of its own in
/// `/metrics`, its label value escaped as the text format requires: it
/// neither forges a label nor mixes into another asset's series.
#[test]
fn metrics_escape_hostile_asset_names() {
    let server = TestServer::start();
    let c = server.client();
    let names = [
        ("orders", 3),
        ("orders\",forged=\"1", 1),
        ("back\\slash", 2),
        ("a\"b\\\"c", 1),
    ];
    for (name, n) in names {
        let events: Vec<Value> = (0..n)
            .map(|i| event(name, &at(5 * i), &at(5 * i + 5), None))
            .collect();
        let r = c.post_json("/v1/events", &Value::Array(events));
        assert_eq!(r.status, 200, "{name}: {}", r.text());
    }
    let text = c.get("/metrics").text();
    let series: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("gapless_asset_events{"))
        .collect();
    assert_eq!(series.len(), names.len(), "{series:#?}");
    for line in [
        r#"gapless_asset_events{asset="orders"} 3"#,
        r#"gapless_asset_events{asset="orders\",forged=\"1"} 1"#,
        r#"gapless_asset_events{asset="back\\slash"} 2"#,
        r#"gapless_asset_events{asset="a\"b\\\"c"} 1"#,
        r#"gapless_asset_retractions_total{asset="orders\",forged=\"1"} 0"#,
    ] {
        assert!(text.lines().any(|l| l == line), "no {line}:\n{text}");
    }
}
