//! A request hyper cannot parse is answered in SPEC §4's words, over a raw
//! TCP socket: never hyper's empty-bodied 400.

mod common;

use common::{raw_exchange, TestServer};

#[test]
fn an_unencoded_angle_bracket_gets_the_json_error_with_a_hint() {
    let server = TestServer::start();
    let cases: [(&[u8], u16, &str); 4] = [
        (
            b"GET /v1/assets/a/coverage?start=<2025&end=2026 HTTP/1.1\r\nhost: x\r\n\r\n",
            400,
            "%3C for <",
        ),
        (
            b"GET /v1/assets?x=\"quoted\" HTTP/1.1\r\nhost: x\r\n\r\n",
            400,
            "percent-encode",
        ),
        (
            b"GET /healthz HTTP/1.1\r\nno colon here\r\n\r\n",
            400,
            "not valid HTTP",
        ),
        (
            b"G<T /healthz HTTP/1.1\r\nhost: x\r\n\r\n",
            400,
            "not valid HTTP",
        ),
    ];
    for (request, status, hint) in cases {
        let r = raw_exchange(server.addr, request);
        let shown = String::from_utf8_lossy(request);
        assert_eq!(r.status, status, "{shown}: {}", r.text());
        assert_eq!(
            r.header("content-type"),
            Some("application/json"),
            "{shown}"
        );
        let v = r.json();
        assert!(v["error"].as_str().unwrap().contains(hint), "{shown}: {v}");
        assert_eq!(v["detail"], serde_json::Value::Null, "{shown}");
        assert_eq!(r.header("connection"), Some("close"), "{shown}");
    }
    // Headers over hyper's limit: 431, in words too.
    let mut big = b"GET /healthz HTTP/1.1\r\nhost: x\r\n".to_vec();
    for i in 0..2000 {
        big.extend_from_slice(format!("x-h{i}: {}\r\n", "v".repeat(100)).as_bytes());
    }
    big.extend_from_slice(b"\r\n");
    let r = raw_exchange(server.addr, &big);
    assert_eq!(r.status, 431, "{}", r.text());
    assert!(r.json()["error"]
        .as_str()
        .unwrap()
        .contains("headers are too large"));

    // The server is fine, and a well-formed request on a kept-alive
    // connection is answered as before, after a malformed one elsewhere.
    let r = raw_exchange(
        server.addr,
        b"GET /v1/assets/a/coverage?start=%3C2025&end=2026 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.json()["error"].as_str().unwrap().contains("start"),
        "{}",
        r.text()
    );
    assert_eq!(server.client().get("/healthz").status, 200);
}
