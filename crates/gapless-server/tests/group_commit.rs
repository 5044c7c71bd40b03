//! Group commit under load: 64 concurrent single-event POSTs over real
//! sockets, with duplicates and one conflicting request among them.

mod common;

use std::sync::{Arc, Barrier};

use common::{event, TestServer};
use serde_json::{json, Value};

/// The minute `i` minutes after 2025-06-01T10:00Z.
fn slot(i: usize) -> String {
    format!("2025-06-01T{:02}:{:02}:00Z", 10 + i / 60, i % 60)
}

#[test]
fn concurrent_single_event_posts_are_all_durable_with_their_own_counts() {
    let server = TestServer::start();
    let c = server.client();
    // Already there: "dup" (resent below as a duplicate) and "taken" (resent
    // with other content: a conflict).
    c.post_json(
        "/v1/events",
        &event(
            "load",
            "2025-06-02T00:00:00Z",
            "2025-06-02T01:00:00Z",
            Some("dup"),
        ),
    );
    c.post_json(
        "/v1/events",
        &event(
            "load",
            "2025-06-03T00:00:00Z",
            "2025-06-03T01:00:00Z",
            Some("taken"),
        ),
    );

    const N: usize = 64;
    let barrier = Arc::new(Barrier::new(N));
    let threads: Vec<_> = (0..N)
        .map(|i| {
            let c = c.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let body = match i {
                    7 => event(
                        "load",
                        "2025-06-02T00:00:00Z",
                        "2025-06-02T01:00:00Z",
                        Some("dup"),
                    ),
                    13 => event(
                        "load",
                        "2025-06-03T00:00:00Z",
                        "2025-06-03T02:00:00Z",
                        Some("taken"),
                    ),
                    // Events without an id are never duplicates.
                    i if i % 2 == 0 => event("load", &slot(i), &slot(i + 1), None),
                    i => event("load", &slot(i), &slot(i + 1), Some(&format!("e{i}"))),
                };
                barrier.wait();
                let r = c.post_json("/v1/events", &body);
                (i, r.status, r.json())
            })
        })
        .collect();
    let mut accepted = 0;
    for t in threads {
        let (i, status, v) = t.join().unwrap();
        match i {
            7 => assert_eq!(
                (status, v.clone()),
                (200, json!({"accepted": 0, "duplicates": 1})),
                "{v}"
            ),
            13 => {
                assert_eq!(status, 409, "{v}");
                assert!(v["error"].as_str().unwrap().contains("conflict"), "{v}");
            }
            _ => {
                assert_eq!(
                    (status, v.clone()),
                    (200, json!({"accepted": 1, "duplicates": 0})),
                    "request {i}: {v}"
                );
                accepted += 1;
            }
        }
    }
    assert_eq!(accepted, N - 2);

    // Every acknowledged event is there, each once; the conflicting one is not.
    let v = c.get("/v1/assets/load/events?limit=1000").json();
    let events = v["events"].as_array().unwrap();
    assert_eq!(events.len(), 2 + N - 2, "{v}");
    let ids: Vec<&Value> = events
        .iter()
        .map(|e| &e["id"])
        .filter(|id| !id.is_null())
        .collect();
    assert_eq!(ids.len(), 2 + N / 2 - 2);
    let taken: Vec<&Value> = events.iter().filter(|e| e["id"] == "taken").collect();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0]["end"], "2025-06-03T01:00:00Z");

    // The metrics agree, and every request went through the writer.
    let m = c.get("/metrics").text();
    assert!(
        m.contains(&format!("gapless_events_accepted_total {}", 2 + N - 2)),
        "{m}"
    );
    assert!(m.contains("gapless_events_duplicates_total 1"), "{m}");
    assert!(m.contains("gapless_conflicts_total 1"), "{m}");
    assert!(
        m.contains(&format!("gapless_commit_requests_sum {}", 2 + N)),
        "{m}"
    );
    let groups: u64 = m
        .lines()
        .find_map(|l| l.strip_prefix("gapless_commit_groups_total "))
        .unwrap()
        .parse()
        .unwrap();
    eprintln!("{} requests in {groups} groups", N + 2);
    assert!(groups <= N as u64 + 2);
}
