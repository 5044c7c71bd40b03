//! Every malformed request is answered with the JSON error body of SPEC §4
//! in the command line's wording, saying what to send instead: never the
//! framework's text, never 422.

mod common;

use common::{at, TestServer};
use serde_json::json;

#[test]
fn query_strings_are_checked_against_the_question() {
    let server = TestServer::start();
    let c = server.client();
    let r = c.get(&format!("/v1/assets/a/coverage?start={}", at(0)));
    assert_eq!(r.status, 400);
    assert_eq!(
        r.error(),
        "missing query parameter \"end\": End of the range, exclusive"
    );
    let r = c.get(&format!(
        "/v1/assets/a/coverage?start={}&end={}&every=1h",
        at(0),
        at(5)
    ));
    assert_eq!(r.status, 400);
    assert!(
        r.error().starts_with("unknown query parameter \"every\": this question takes start, end, policy, min_ratio, max_gap, tz"),
        "{}",
        r.error()
    );
    let r = c.get(&format!(
        "/v1/assets/a/frontier?origin={}&origin={}",
        at(0),
        at(1)
    ));
    assert_eq!(
        (r.status, r.error().as_str()),
        (400, "query parameter \"origin\" is given more than once")
    );
    let r = c.get(&format!(
        "/v1/assets/a/windows?start={}&end={}&every=1h&incomplete=maybe",
        at(0),
        at(5)
    ));
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.error(),
        "query parameter \"incomplete\": give true or false, not \"maybe\""
    );
    // The listings name what they take.
    let r = c.get("/v1/assets?x=1");
    assert_eq!(
        (r.status, r.error().as_str()),
        (
            400,
            "unknown query parameter \"x\": this question takes prefix, contains, limit, after"
        )
    );
    let r = c.get("/v1/rules?contains=a");
    assert_eq!(
        (r.status, r.error().as_str()),
        (
            400,
            "unknown query parameter \"contains\": this question takes prefix, limit, after"
        )
    );
}

#[test]
fn json_bodies_name_the_field_and_the_type() {
    let server = TestServer::start();
    let c = server.client();
    let r = c.post_json(
        "/v1/coverage",
        &json!({"assets": ["a"], "start": at(0), "end": at(5), "policy": "full"}),
    );
    assert_eq!(r.status, 400);
    assert_eq!(
        r.error(),
        "unknown field \"policy\": the body takes assets, end, start, tz"
    );
    let r = c.post_json("/v1/coverage", &json!({"assets": ["a"], "start": at(0)}));
    assert_eq!(r.status, 400);
    assert!(
        r.error().starts_with("missing field \"end\""),
        "{}",
        r.error()
    );
    let r = c.post_json(
        "/v1/coverage",
        &json!({"assets": "a", "start": at(0), "end": at(5)}),
    );
    assert_eq!(r.status, 400);
    assert_eq!(
        r.error(),
        "field \"assets\": expected an array, found a string"
    );
    let r = c.post_json(
        "/v1/coverage",
        &json!({"assets": [1], "start": at(0), "end": at(5)}),
    );
    assert_eq!(
        r.error(),
        "field \"assets\": expected an array of strings, found an array"
    );

    // PUT /v1/assets/{asset}: a number for a zone is 400, not 422; an array
    // is not an object.
    let r = c.put_json("/v1/assets/a", &json!({"tz": 5}));
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.error(),
        "field \"tz\": expected a string or null, found a number"
    );
    let r = c.put_json("/v1/assets/a", &json!(["PT5M", "UTC"]));
    assert_eq!(r.status, 400);
    assert_eq!(
        r.error(),
        "the body must be a JSON object with the fields key_span, tz, found an array"
    );
    let r = c.send(
        "PUT",
        "/v1/assets/a",
        &[("Content-Type", "text/plain")],
        b"{}",
    );
    assert_eq!(r.status, 415);
    assert!(
        r.error().contains("send the body as application/json"),
        "{}",
        r.error()
    );
    let r = c.send(
        "PUT",
        "/v1/assets/a",
        &[("Content-Type", "application/json")],
        b"{\"tz\": ",
    );
    assert_eq!(r.status, 400);
    assert!(
        r.error().starts_with("the body is not JSON: "),
        "{}",
        r.error()
    );
}

#[test]
fn ndjson_sent_as_json_says_how_to_send_it() {
    let server = TestServer::start();
    let c = server.client();
    let line = |m: u32| json!({"asset": "a", "start": at(m), "end": at(m + 5)}).to_string();
    let body = format!("{}\n{}\n", line(0), line(5));
    let r = c.send(
        "POST",
        "/v1/events",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    );
    assert_eq!(r.status, 400);
    assert_eq!(
        r.error(),
        "the body holds 2 lines of JSON, not one object or array: send NDJSON with Content-Type: application/x-ndjson, or a JSON array"
    );
}

#[test]
fn a_413_says_the_limit() {
    let config = gapless_server::ServerConfig {
        body_limit: 1024,
        ..Default::default()
    };
    let server = TestServer::with_config(config);
    let r = server
        .client()
        .raw_post("/v1/events", "application/x-ndjson", &vec![b' '; 4096]);
    assert_eq!(r.status, 413);
    assert!(
        r.error()
            .starts_with("request body is larger than the server's limit of 1024 bytes"),
        "{}",
        r.error()
    );
}

/// Found while fuzzing the API: the routes without query parameters
/// ignored any (SPEC §4: unknown query parameters are errors), and a
/// question that takes none said it "takes " and stopped.
#[test]
fn routes_without_query_parameters_refuse_any() {
    let server = TestServer::start();
    let c = server.client();
    let e = common::event("a", &at(0), &at(5), None);
    assert_eq!(c.post_json("/v1/events", &e).status, 200);
    let refused = "unknown query parameter \"x\": this question takes no query parameters";
    let multi = json!({"assets": ["a"], "start": at(0), "end": at(5)});
    for r in [
        c.get("/v1/assets/a?x=1"),
        c.post_json("/v1/events?x=1", &e),
        c.put_json("/v1/assets/a?x=1", &json!({})),
        c.post_json("/v1/coverage?x=1", &multi),
    ] {
        assert_eq!((r.status, r.error()), (400, refused.to_string()));
    }
    // Nothing was stored or declared by the refused requests.
    let a = c.get("/v1/assets/a").json();
    assert_eq!(
        (a["events"].clone(), a["tz"].clone()),
        (json!(1), json!(null))
    );
}

/// Found while fuzzing the API: an `{asset}` whose percent-encoding is not
/// UTF-8 was answered in axum's words ("Invalid URL: Invalid UTF-8 in
/// `asset`"), and `GET /v1/assets/{asset}` did not document that 400.
#[test]
fn an_asset_path_that_is_not_utf8_is_named_in_our_words() {
    let server = TestServer::start();
    let c = server.client();
    let doc = c.get("/openapi.json").json();
    assert!(doc["paths"]["/v1/assets/{asset}"]["get"]["responses"]["400"].is_object());
    for path in [
        "/v1/assets/%FF".to_string(),
        format!("/v1/assets/%C3%28/coverage?start={}&end={}", at(0), at(5)),
        "/v1/assets/a%FFb/events".to_string(),
    ] {
        let r = c.get(&path);
        assert_eq!(r.status, 400, "{path}: {}", r.text());
        assert!(
            r.error().starts_with(
                "invalid asset name in the path: it is not UTF-8 once percent-decoded"
            ),
            "{path}: {}",
            r.error()
        );
    }
    let r = c.put_json("/v1/assets/%FF", &json!({}));
    assert_eq!(r.status, 400, "{}", r.text());
}
