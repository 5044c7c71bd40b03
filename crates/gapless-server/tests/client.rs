//! Client mode gives the embedded answers: every question through
//! `gapless_server::client::Client` equals the `Ledger`'s own answer on the
//! same file, and errors come back with the server's message and kind.

mod common;

use common::{at, TestServer};
use gapless_ledger::{params, LedgerError};
use gapless_server::client::Client;

#[test]
fn client_answers_equal_embedded_answers() {
    let server = TestServer::start();
    let client = Client::new(&format!("http://{}", server.addr)).unwrap();
    let asset = "s3://lake/ümlaut orders";
    let lines = format!(
        "{{\"asset\": \"{asset}\", \"id\": \"1\", \"start\": \"{}\", \"end\": \"{}\", \"extra\": {{\"n\": 1}}}}\n{{\"asset\": \"{asset}\", \"start\": \"{}\", \"end\": \"{}\"}}\n",
        at(0),
        at(5),
        at(10),
        at(20)
    );
    let a = client.ingest_ndjson(&lines).unwrap();
    assert_eq!((a.accepted, a.duplicates), (2, 0));
    let a = client.emit_json(&format!("{{\"asset\": \"{asset}\", \"id\": \"1\", \"start\": \"{}\", \"end\": \"{}\", \"extra\": {{\"n\": 1}}}}", at(0), at(5))).unwrap();
    assert_eq!((a.accepted, a.duplicates), (0, 1));

    let ledger = common::ledger_at(&server.db());
    let range = params::range(&at(0), &at(30), None).unwrap();
    let full = params::policy(None).unwrap();
    assert_eq!(
        client.check(asset, &at(0), &at(30), None, None).unwrap(),
        ledger.check(asset, range, &full).unwrap()
    );
    let (utc, utc_name) = params::time_zone(None).unwrap();
    assert_eq!(
        client
            .windows(asset, &at(0), &at(30), "10m", None, Some("ratio>=0.5"))
            .unwrap(),
        ledger
            .windows(
                asset,
                range,
                &params::grid("10m").unwrap(),
                (&utc, &utc_name),
                &params::policy(Some("ratio>=0.5")).unwrap()
            )
            .unwrap()
    );
    assert_eq!(
        client.segments(asset, &at(0), &at(30), None).unwrap(),
        ledger.segments(asset, range).unwrap()
    );
    assert_eq!(
        client
            .events(
                asset,
                Some((&at(0), &at(30))),
                Some("landed"),
                Some(1),
                None,
                None
            )
            .unwrap(),
        ledger
            .events(
                asset,
                Some(range),
                Some(params::kind("landed").unwrap()),
                Some(1),
                None
            )
            .unwrap()
    );
    let origin = params::instant("origin", &at(0), None).unwrap();
    assert_eq!(
        client.frontier(asset, &at(0), None).unwrap(),
        ledger.frontier(asset, origin).unwrap()
    );
    assert_eq!(client.assets().unwrap(), ledger.assets().unwrap());
    assert_eq!(
        client
            .check_all(&[asset.to_string()], &at(0), &at(30), None)
            .unwrap(),
        ledger.check_all(&[asset.to_string()], range).unwrap()
    );
    let d = client
        .declare("keyed", Some("PT5M"), Some("Europe/Berlin"))
        .unwrap();
    assert_eq!(
        (d.asset.as_str(), d.key_span.as_deref(), d.tz.as_str()),
        ("keyed", Some("PT5M"), "Europe/Berlin")
    );

    // Errors: the server's message and kind.
    let e = client
        .check(asset, "2025-06-02", "2025-06-01", None, None)
        .unwrap_err();
    let embedded = params::range("2025-06-02", "2025-06-01", None).unwrap_err();
    assert!(matches!(e, LedgerError::BadInput(_)));
    assert_eq!(e.to_string(), embedded.to_string());
    let e = client
        .emit_json(&format!(
            "{{\"asset\": \"{asset}\", \"id\": \"1\", \"start\": \"{}\", \"end\": \"{}\"}}",
            at(0),
            at(6)
        ))
        .unwrap_err();
    assert!(matches!(e, LedgerError::Conflict(_)), "{e}");
    let e = client
        .ingest_ndjson("{\"asset\": \"x\"}\nnope\n")
        .unwrap_err();
    assert!(
        e.to_string().starts_with("line 1: ") || e.to_string().starts_with("line 2: "),
        "{e}"
    );
}

#[test]
fn tokens_and_unreachable_servers() {
    let tokens = gapless_server::Tokens::parse(
        r#"[{"secret": "reader-secret-0123456789", "scopes": ["read"]}]"#,
    )
    .unwrap();
    let server = TestServer::with_tokens(tokens);
    let url = format!("http://{}", server.addr);
    let e = Client::new(&url).unwrap().assets().unwrap_err();
    assert!(e.to_string().contains("missing bearer token"), "{e}");
    let reader = Client::new(&url)
        .unwrap()
        .with_token(Some("reader-secret-0123456789".into()));
    assert!(reader.assets().unwrap().assets.is_empty());
    let e = reader
        .emit_json(&format!(
            "{{\"asset\": \"a\", \"start\": \"{}\", \"end\": \"{}\"}}",
            at(0),
            at(5)
        ))
        .unwrap_err();
    assert!(e.to_string().contains("write scope"), "{e}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let e = Client::new(&format!("http://{closed}"))
        .unwrap()
        .assets()
        .unwrap_err();
    assert!(matches!(e, LedgerError::Unavailable(_)), "{e}");
    assert!(e.to_string().contains("cannot reach the server"), "{e}");
}

#[test]
fn a_body_over_the_limit_is_the_servers_answer_not_a_broken_connection() {
    let config = gapless_server::ServerConfig {
        body_limit: 64 * 1024,
        ..Default::default()
    };
    let server = TestServer::with_config(config);
    let client = Client::new(&format!("http://{}", server.addr)).unwrap();
    // Small enough to be sent whole, and large enough to ask for 100-continue.
    for lines in [1_000, 40_000] {
        let ndjson: String = (0..lines)
            .map(|i| {
                format!(
                    "{{\"asset\": \"a\", \"id\": \"{i}\", \"start\": \"{}\", \"end\": \"{}\"}}\n",
                    at(0),
                    at(5)
                )
            })
            .collect();
        let e = client.ingest_ndjson(&ndjson).unwrap_err();
        assert!(matches!(e, LedgerError::BadInput(_)), "{lines}: {e}");
        assert!(
            e.to_string().contains("larger than the server's limit"),
            "{e}"
        );
    }
    // The connection kept alive still serves the next question.
    assert!(client.clone().assets().unwrap().assets.is_empty());
}
