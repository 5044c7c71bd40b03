//! A fault keeps what caused it: the command line and a client get the
//! one-line message they always got, and the server's log line for the
//! fault carries the backend's own error under it.

mod common;

use common::{Gapless, PgSchema, Server};

/// The PostgreSQL server of the tests.
fn admin() -> postgres::Client {
    let base = std::env::var("GAPLESS_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    postgres::Client::connect(&base, postgres::NoTls)
        .unwrap_or_else(|e| panic!("PostgreSQL at {base} is not reachable ({e})"))
}

const EMIT: [&str; 6] = [
    "emit",
    "orders",
    "--start",
    "2025-06-01",
    "--end",
    "2025-06-02",
];

#[test]
fn a_fault_s_log_line_carries_the_backend_s_own_error() {
    let schema = PgSchema::new();
    let mut g = Gapless::postgres(&schema);
    let out = g.run(&["asset", "set", "orders"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let server = Server::start(&g);
    // The ledger damaged under the server: its events are gone.
    admin()
        .batch_execute(&format!("DROP TABLE {}.events CASCADE", schema.name))
        .unwrap();

    // A client: 500 with nothing of the ledger's internals.
    g.url = Some(server.url.clone());
    let out = g.run(&EMIT, None);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("internal server error") && !out.stderr.contains("events"),
        "{:?}",
        out.stderr
    );

    // The server's log: the store's words and, under them, PostgreSQL's
    // own error as the client library reports it.
    let logged = |log: &[String]| {
        log.iter().any(|l| {
            l.contains("request failed")
                && l.contains("storage failure: the ledger schema is damaged or was dropped")
                && l.contains("db error: ERROR: relation")
        })
    };
    // The log is read from the server's standard error on a thread of its
    // own: the line may come a little after the answer.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !logged(&server.log()) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let log = server.log();
    assert!(logged(&log), "{log:#?}");

    // The command line opening the damaged ledger: exit 2, one line that
    // names the ledger and what is wrong.
    g.url = None;
    let out = g.run(&EMIT, None);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.starts_with("gapless: cannot open ledger ")
            && out
                .stderr
                .trim_end()
                .ends_with("the ledger is damaged: table events is missing"),
        "{:?}",
        out.stderr
    );
    assert_eq!(out.stderr.trim_end().lines().count(), 1, "{:?}", out.stderr);
}
