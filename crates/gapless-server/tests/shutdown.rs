//! Graceful shutdown: requests in flight when the signal comes finish (their
//! batches whole), then the server stops and the port closes.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use common::{parse_answer, Resp, TestServer, TIMEOUT};
use serde_json::json;

/// POST `body` as NDJSON with `Expect: 100-continue`; once the server's
/// `100 Continue` shows the request is being handled, tell `handled`, wait
/// for `go`, then send the body and read the answer. So the request is in
/// flight from when `handled` hears until its answer, however slow the
/// machine.
fn post_in_flight(
    addr: SocketAddr,
    body: &str,
    handled: mpsc::Sender<()>,
    go: mpsc::Receiver<()>,
) -> Resp {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let head = format!(
        "POST /v1/events HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-ndjson\r\n\
         Content-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut interim = Vec::new();
    let mut byte = [0u8; 1];
    while !interim.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).expect("an interim answer");
        interim.push(byte[0]);
    }
    assert!(
        interim.starts_with(b"HTTP/1.1 100"),
        "not 100 Continue: {:?}",
        String::from_utf8_lossy(&interim)
    );
    handled.send(()).unwrap();
    go.recv().unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("the answer");
    parse_answer(&raw)
}

#[test]
fn requests_in_flight_finish_and_acknowledged_events_are_stored() {
    let mut server = TestServer::start();
    let c = server.client();
    // A big batch and a stream of small ones in flight when shutdown starts.
    let big: String = (0..20_000)
        .map(|i| {
            let s = 1_748_772_000 + i * 60;
            format!(
                "{{\"asset\":\"big\",\"start\":\"{}\",\"end\":\"{}\"}}\n",
                ts(s),
                ts(s + 60)
            )
        })
        .collect();
    let (handled, big_in_flight) = mpsc::channel();
    let (go, big_go) = mpsc::channel();
    let addr = server.addr;
    let big_thread = std::thread::spawn(move || post_in_flight(addr, &big, handled, big_go));
    let small: Vec<_> = (0..16)
        .map(|i| {
            let c = c.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(i * 3));
                let body = json!({"asset": "small", "id": format!("s{i}"), "start": ts(1_748_772_000 + i as i64 * 60), "end": ts(1_748_772_060 + i as i64 * 60)});
                std::panic::catch_unwind(|| c.post_json("/v1/events", &body)).ok()
            })
        })
        .collect();
    big_in_flight
        .recv_timeout(TIMEOUT)
        .expect("the big batch is being handled");
    // Some of the small ones get in before the signal, some after it.
    std::thread::sleep(Duration::from_millis(20));
    go.send(()).unwrap();
    server.stop().expect("a clean stop");

    let big = big_thread.join().unwrap();
    assert_eq!(big.status, 200, "{}", big.text());
    assert_eq!(big.json(), json!({"accepted": 20000, "duplicates": 0}));
    let acknowledged: Vec<String> = small
        .into_iter()
        .enumerate()
        .filter_map(|(i, t)| {
            t.join()
                .unwrap()
                .filter(|r| r.status == 200)
                .map(|_| format!("s{i}"))
        })
        .collect();

    // The port is closed; the ledger holds every acknowledged event.
    assert!(std::net::TcpStream::connect(server.addr).is_err());
    let ledger = common::ledger_at(&server.db());
    assert_eq!(
        ledger
            .events_page("big", None, None, Some(10_000), None)
            .unwrap()
            .events
            .len(),
        10_000
    );
    // With none acknowledged the asset may not exist at all.
    let stored: Vec<String> = if acknowledged.is_empty() {
        Vec::new()
    } else {
        ledger
            .events_page("small", None, None, None, None)
            .unwrap()
            .events
            .into_iter()
            .filter_map(|e| e.id)
            .collect()
    };
    for id in &acknowledged {
        assert!(
            stored.contains(id),
            "{id} was acknowledged but is not stored"
        );
    }
}

fn ts(unix: i64) -> String {
    jiff::Timestamp::from_second(unix).unwrap().to_string()
}
