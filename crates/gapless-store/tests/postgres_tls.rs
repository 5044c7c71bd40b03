//! The storage story over TLS (`sslmode=verify-full` with a root
//! certificate made in the test), on a private cluster that takes TCP
//! connections only over TLS: every scenario passes as over plain TCP.

#[path = "../../gapless-cli/tests/common/pg_cluster.rs"]
mod pg_cluster;
// One test runs every scenario (`run_all`) on one cluster, stopped at its
// end: the per-scenario macro is not used here.
#[allow(unused_macros, unused_imports)]
mod story;

use std::sync::atomic::{AtomicU32, Ordering};

use gapless_store::{PostgresStore, Store};
use pg_cluster::PgCluster;

#[test]
fn the_story_over_tls() {
    let (cluster, files) = PgCluster::start_tls_only();
    let next = AtomicU32::new(0);
    let make = || -> Box<dyn Store> {
        let url = format!(
            "postgres://postgres@localhost:{}/postgres?schema=story_{}&sslmode=verify-full&sslrootcert={}",
            cluster.port,
            next.fetch_add(1, Ordering::Relaxed),
            files.ca.display()
        );
        Box::new(PostgresStore::open(&url).unwrap_or_else(|e| panic!("{url}: {e}")))
    };
    story::run_all(&make);
    // Plain TCP is refused by this server: the story did run over TLS.
    let plain = format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port);
    let e = PostgresStore::open(&plain).unwrap_err().to_string();
    assert!(e.contains("takes only TLS"), "{e}");
}
