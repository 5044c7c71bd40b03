//! The server crate alone serves with delivery (SPEC §7, targets): `run`
//! with targets delivers the ledger's firings to a webhook from a thread
//! beside the server, counts them in `/metrics`, and stops with the server.
//!
//! One test in a binary of its own: it stops the server as an operator
//! does, with SIGTERM to this process, which `run` handles.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use gapless_api::{Ask, BodyFormat, DeclareRequest, RecordRequest, RuleSetRequest};
use gapless_ledger::Ledger;
use gapless_server::ServerConfig;

/// A webhook receiver on loopback: answers 200 to each request and sends
/// its body down the channel.
fn receiver() -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end().to_ascii_lowercase();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("content-length:") {
                    length = n.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .unwrap();
            let _ = tx.send(String::from_utf8(body).unwrap());
        }
    });
    (url, rx)
}

/// Land `orders` over `[from, to)` o'clock of 2025-06-14.
fn land(ledger: &Ledger, from: u32, to: u32) {
    let event = format!(
        r#"{{"asset":"orders","start":"2025-06-14T{from:02}:00:00Z","end":"2025-06-14T{to:02}:00:00Z"}}"#
    );
    ledger
        .record(RecordRequest {
            body: &mut event.as_bytes(),
            format: BodyFormat::Json,
            source: "the event",
            size: None,
        })
        .unwrap();
}

fn get(url: &str) -> (u16, String) {
    match ureq::get(url).call() {
        Ok(mut r) => (
            r.status().as_u16(),
            r.body_mut().read_to_string().unwrap_or_default(),
        ),
        Err(_) => (0, String::new()),
    }
}

#[test]
fn run_delivers_firings_beside_the_server_and_stops_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = gapless_store::SqliteStore::open(dir.path().join("ledger.db")).unwrap();
    let ledger = Ledger::new(Arc::new(store));
    ledger
        .declare(&DeclareRequest {
            asset: "orders".into(),
            ..DeclareRequest::default()
        })
        .unwrap();
    ledger
        .set_rule(&RuleSetRequest {
            name: "orders_hourly".into(),
            assets: vec!["orders".into()],
            every: "1h".into(),
            from: "2025-06-14".into(),
            target: Some("hook".into()),
            ..RuleSetRequest::default()
        })
        .unwrap();
    // A target that takes only `late`: its rule's `complete` firings are
    // recorded delivered unsent, and counted as skipped.
    ledger
        .set_rule(&RuleSetRequest {
            name: "orders_quiet".into(),
            assets: vec!["orders".into()],
            every: "1h".into(),
            from: "2025-06-14".into(),
            target: Some("quiet".into()),
            ..RuleSetRequest::default()
        })
        .unwrap();
    let (url, delivered) = receiver();
    let targets = gapless_deliver::Targets::parse(&format!(
        "poll = \"50ms\"\n\
         [[target]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"{url}\"\n\
         [[target]]\nname = \"quiet\"\nkind = \"webhook\"\nurl = \"{url}\"\nkinds = [\"late\"]\n"
    ))
    .unwrap();
    // A free port: `run` binds the address it is given.
    let listen = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let config = ServerConfig {
        listen,
        targets: Some(targets),
        ..ServerConfig::default()
    };
    let (done, ran) = mpsc::channel();
    let served = ledger.clone();
    std::thread::spawn(move || {
        let _ = done.send(gapless_server::run(served, config));
    });
    let base = format!("http://{listen}");
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while get(&format!("{base}/healthz")).0 != 200 {
        assert!(
            std::time::Instant::now() < until,
            "the server never answered"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    land(&ledger, 10, 11);
    let body = delivered.recv_timeout(Duration::from_secs(10)).unwrap();
    let firing: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(firing["rule"], "orders_hourly", "{body}");
    assert_eq!(firing["key"], "2025-06-14T10:00:00", "{body}");
    // Counted once the deliverer has recorded the outcome, just after the
    // receiver answered.
    let until = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, metrics) = get(&format!("{base}/metrics"));
        assert_eq!(status, 200);
        if metrics.contains("gapless_deliveries_total{outcome=\"delivered\"} 1")
            && metrics.contains("gapless_deliveries_total{outcome=\"skipped\"} 1")
        {
            break;
        }
        assert!(std::time::Instant::now() < until, "{metrics}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (_, firings) = get(&format!("{base}/v1/firings"));
    let firings: serde_json::Value = serde_json::from_str(&firings).unwrap();
    let quiet: Vec<&serde_json::Value> = firings["firings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "orders_quiet")
        .collect();
    assert_eq!(quiet.len(), 1, "{firings}");
    assert_eq!(
        quiet[0]["delivery"],
        serde_json::json!({"target": "quiet", "state": "delivered", "attempts": 0, "last_error": null})
    );
    assert!(
        delivered.recv_timeout(Duration::from_millis(300)).is_err(),
        "a firing of a kind its target does not take was sent"
    );

    let killed = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    ran.recv_timeout(Duration::from_secs(10))
        .expect("run returns once signalled")
        .unwrap();
    // The deliverer stopped with the server: a new firing stays pending.
    land(&ledger, 11, 12);
    assert!(
        delivered.recv_timeout(Duration::from_millis(500)).is_err(),
        "delivered after the server stopped"
    );
}
