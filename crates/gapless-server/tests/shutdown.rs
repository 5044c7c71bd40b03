//! Graceful shutdown: requests in flight when the signal comes finish (their
//! batches whole), then the server stops and the port closes.

mod common;

use std::time::Duration;

use common::TestServer;
use serde_json::json;

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
    let big_client = c.clone();
    let big_thread = std::thread::spawn(move || big_client.post_ndjson("/v1/events", &big));
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
    std::thread::sleep(Duration::from_millis(20));
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
    let stored: Vec<String> = ledger
        .events_page("small", None, None, None, None)
        .unwrap()
        .events
        .into_iter()
        .filter_map(|e| e.id)
        .collect();
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
