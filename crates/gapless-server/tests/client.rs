//! Client mode gives the embedded answers: every question through
//! `gapless_client::Client` equals the embedded `Ledger`'s own answer on the
//! same file (both asked through `gapless_api::Ask`, with the same
//! requests), and errors come back with the server's message, kind and
//! position.

mod common;

use common::{at, TestServer};
use gapless_api::{
    Ask, BodyFormat, CoverageRequest, DeclareRequest, ErrorKind, EventsRequest, FrontierRequest,
    IngestAnswer, MultiCoverageRequest, Position, RecordRequest, Result, SegmentsRequest, Unit,
    WindowsRequest,
};
use gapless_client::Client;

fn record(ledger: &dyn Ask, format: BodyFormat, text: &str) -> Result<IngestAnswer> {
    ledger.record(RecordRequest {
        body: &mut text.as_bytes(),
        format,
        source: "the test's events",
        size: Some(text.len() as u64),
    })
}

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
    let a = record(&client, BodyFormat::Ndjson, &lines).unwrap();
    assert_eq!((a.accepted, a.duplicates), (2, 0));
    let one = format!("{{\"asset\": \"{asset}\", \"id\": \"1\", \"start\": \"{}\", \"end\": \"{}\", \"extra\": {{\"n\": 1}}}}", at(0), at(5));
    let a = record(&client, BodyFormat::Json, &one).unwrap();
    assert_eq!((a.accepted, a.duplicates), (0, 1));

    let ledger = common::ledger_at(&server.db());
    let both: [&dyn Ask; 2] = [&client, &ledger];
    let [remote, embedded] = both.map(|l| {
        let coverage = l
            .coverage(&CoverageRequest {
                asset: asset.into(),
                start: at(0),
                end: at(30),
                ..Default::default()
            })
            .unwrap();
        let windows = l
            .windows(&WindowsRequest {
                asset: asset.into(),
                start: at(0),
                end: at(30),
                every: "10m".into(),
                policy: Some("ratio>=0.5".into()),
                ..Default::default()
            })
            .unwrap();
        let segments = l
            .segments(&SegmentsRequest {
                asset: asset.into(),
                start: at(0),
                end: at(30),
                ..Default::default()
            })
            .unwrap();
        let events = l
            .events(&EventsRequest {
                asset: asset.into(),
                start: Some(at(0)),
                end: Some(at(30)),
                kind: Some("landed".into()),
                limit: Some("1".into()),
                ..Default::default()
            })
            .unwrap();
        let frontier = l
            .frontier(&FrontierRequest {
                asset: asset.into(),
                origin: Some(at(0)),
                ..Default::default()
            })
            .unwrap();
        let all = l
            .coverage_all(&MultiCoverageRequest {
                assets: vec![asset.into()],
                start: at(0),
                end: at(30),
                ..Default::default()
            })
            .unwrap();
        (
            coverage,
            windows,
            segments,
            events,
            frontier,
            // The clock each read the page at is its own.
            gapless_api::AssetsAnswer {
                as_of: gapless_core::Instant::MIN,
                ..l.assets(&Default::default()).unwrap()
            },
            all,
        )
    });
    assert_eq!(remote, embedded);
    assert!(!remote.0.covered && remote.3.next.is_some(), "{remote:?}");

    let d = client
        .declare(&DeclareRequest {
            asset: "keyed".into(),
            key_span: Some("PT5M".into()),
            tz: Some("Europe/Berlin".into()),
        })
        .unwrap();
    assert_eq!(
        (d.asset.as_str(), d.key_span.as_deref(), d.tz.as_str()),
        ("keyed", Some("PT5M"), "Europe/Berlin")
    );

    // Errors: the embedded message, kind and position.
    let reversed = CoverageRequest {
        asset: asset.into(),
        start: "2025-06-02".into(),
        end: "2025-06-01".into(),
        ..Default::default()
    };
    let [remote, embedded] = both.map(|l| l.coverage(&reversed).unwrap_err());
    assert_eq!(remote.kind(), ErrorKind::BadInput);
    assert_eq!(remote.to_string(), embedded.to_string());
    let conflicting = format!(
        "{{\"asset\": \"{asset}\", \"id\": \"1\", \"start\": \"{}\", \"end\": \"{}\"}}",
        at(0),
        at(6)
    );
    let e = record(&client, BodyFormat::Json, &conflicting).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    let bad = "{\"asset\": \"x\"}\nnope\n";
    let [remote, embedded] = both.map(|l| record(l, BodyFormat::Ndjson, bad).unwrap_err());
    assert_eq!(
        remote.position(),
        Some(Position {
            unit: Unit::Line,
            number: 1
        })
    );
    assert_eq!(remote.to_string(), embedded.to_string());
    assert!(remote.to_string().starts_with("line 1: "), "{remote}");
}

#[test]
fn tokens_and_unreachable_servers() {
    let tokens = gapless_server::Tokens::parse(
        r#"[{"secret": "reader-secret-0123456789", "scopes": ["read"]}]"#,
    )
    .unwrap();
    let server = TestServer::with_tokens(tokens);
    let url = format!("http://{}", server.addr);
    let e = Client::new(&url)
        .unwrap()
        .assets(&Default::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Denied);
    assert!(e.to_string().contains("missing bearer token"), "{e}");
    let reader = Client::new(&url)
        .unwrap()
        .with_token(Some("reader-secret-0123456789".into()));
    assert!(reader
        .assets(&Default::default())
        .unwrap()
        .assets
        .is_empty());
    let event = format!(
        "{{\"asset\": \"a\", \"start\": \"{}\", \"end\": \"{}\"}}",
        at(0),
        at(5)
    );
    let e = record(&reader, BodyFormat::Json, &event).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Denied);
    assert!(e.to_string().contains("write scope"), "{e}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let e = Client::new(&format!("http://{closed}"))
        .unwrap()
        .assets(&Default::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
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
        let e = record(&client, BodyFormat::Ndjson, &ndjson).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadInput, "{lines}: {e}");
        assert!(
            e.to_string().contains("larger than the server's limit"),
            "{e}"
        );
    }
    // The connection kept alive still serves the next question.
    assert!(client
        .clone()
        .assets(&Default::default())
        .unwrap()
        .assets
        .is_empty());
}

#[test]
fn ingest_streams_its_body_with_chunked_transfer() {
    // A reader of unknown size: the client cannot know the length, so the
    // body goes out chunked as it is read, and the server takes it whole.
    let server = TestServer::start();
    let client = Client::new(&format!("http://{}", server.addr)).unwrap();
    let ndjson: String = (0..5_000)
        .map(|i| {
            format!(
                "{{\"asset\": \"s\", \"id\": \"{i}\", \"start\": \"{}\", \"end\": \"{}\"}}\n",
                at(i % 50),
                at(i % 50 + 1)
            )
        })
        .collect();
    let mut body = std::io::Read::chain(ndjson.as_bytes(), &b""[..]);
    let a = client
        .record(RecordRequest {
            body: &mut body,
            format: BodyFormat::Ndjson,
            source: "a stream",
            size: None,
        })
        .unwrap();
    assert_eq!((a.accepted, a.duplicates), (5_000, 0));
}
