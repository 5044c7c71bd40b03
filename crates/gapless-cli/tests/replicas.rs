//! Stateless replicas: several `gapless serve` processes on one PostgreSQL
//! ledger give the same answers, and a write acknowledged by one is visible
//! in the very next read from any other (read-your-writes across replicas).

mod common;

use common::{Gapless, PgSchema, Server};

fn with_url(g: &Gapless, url: &str) -> Gapless {
    let mut other = Gapless::new();
    other.db = g.db.clone();
    other.url = Some(url.to_string());
    other
}

#[test]
fn a_write_acknowledged_by_one_replica_is_read_by_the_others() {
    let schema = PgSchema::new();
    let g = Gapless::postgres(&schema);
    let servers: Vec<Server> = (0..3).map(|_| Server::start(&g)).collect();
    let clients: Vec<Gapless> = servers.iter().map(|s| with_url(&g, &s.url)).collect();

    // Each 5-minute slice is written through one replica and checked at once
    // through the next one.
    for i in 0..60u32 {
        let writer = &clients[i as usize % 3];
        let reader = &clients[(i as usize + 1) % 3];
        let (s, e) = (i * 5, (i + 1) * 5);
        let start = format!("2025-06-14T{:02}:{:02}:00Z", s / 60, s % 60);
        let end = format!("2025-06-14T{:02}:{:02}:00Z", e / 60, e % 60);
        let out = writer.run(
            &[
                "emit",
                "orders",
                "--start",
                &start,
                "--end",
                &end,
                "--id",
                &format!("b{i}"),
                "--json",
            ],
            None,
        );
        assert_eq!(out.code, 0, "emit via replica {}: {}", i % 3, out.stderr);
        let out = reader.run(
            &[
                "frontier",
                "orders",
                "--origin",
                "2025-06-14T00:00:00Z",
                "--json",
            ],
            None,
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(
            out.json()["frontier"],
            end.as_str(),
            "replica {} missed the write of replica {}",
            (i + 1) % 3,
            i % 3
        );
    }

    // Every replica and the embedded ledger answer alike.
    let args = [
        "check",
        "orders",
        "--start",
        "2025-06-14T00:00:00Z",
        "--end",
        "2025-06-14T06:00:00Z",
        "--json",
    ];
    let embedded = g.run(&args, None);
    assert_eq!(embedded.code, 1);
    assert_eq!(
        embedded.json()["missing"][0]["start"],
        "2025-06-14T05:00:00Z"
    );
    for c in &clients {
        let out = c.run(&args, None);
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (embedded.code, embedded.stdout.as_str())
        );
    }

    // A retry through another replica is a duplicate, not a second event.
    let out = clients[2].run(
        &[
            "emit",
            "orders",
            "--start",
            "2025-06-14T00:00:00Z",
            "--end",
            "2025-06-14T00:05:00Z",
            "--id",
            "b0",
            "--json",
        ],
        None,
    );
    assert_eq!(out.json()["duplicates"], 1);
}
