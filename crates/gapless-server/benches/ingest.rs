//! Ingest throughput over HTTP on loopback: single-event POSTs one after
//! another (a commit each) against the same POSTs from 16 threads at once
//! (group commit shares commits between them).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gapless_ledger::Ledger;
use gapless_server::{AppState, ServerConfig};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Every status is an answer (asserted below), no redirects, bounded.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .new_agent()
}

/// One event, on a connection of its own (`Connection: close`), as the
/// bench has always measured.
fn post_one(agent: &ureq::Agent, url: &str) {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let start = jiff::Timestamp::from_second(1_700_000_000 + n as i64 * 60).unwrap();
    let end = jiff::Timestamp::from_second(1_700_000_060 + n as i64 * 60).unwrap();
    let body = format!(r#"{{"asset": "bench", "id": "{n}", "start": "{start}", "end": "{end}"}}"#);
    let mut answer = agent
        .post(url)
        .header("Connection", "close")
        .content_type("application/json")
        .send(&body)
        .expect("POST /v1/events");
    let status = answer.status().as_u16();
    let text = answer.body_mut().read_to_string().unwrap();
    assert_eq!(status, 200, "{text}");
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = gapless_store::SqliteStore::open(dir.path().join("bench.db")).unwrap();
    let ledger = Ledger::new(Arc::new(store));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/v1/events", listener.local_addr().unwrap());
    let agent = agent();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(async move {
        let state = AppState::new(ledger, ServerConfig::default());
        gapless_server::serve(listener, state, async move {
            let _ = stopped.await;
        })
        .await
    });

    const POSTS: usize = 64;
    let mut group = c.benchmark_group("ingest_http");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(POSTS as u64));
    group.bench_function("64 single-event POSTs, one at a time", |b| {
        b.iter(|| (0..POSTS).for_each(|_| post_one(&agent, &url)))
    });
    group.bench_function("64 single-event POSTs from 16 threads", |b| {
        b.iter(|| {
            std::thread::scope(|s| {
                for _ in 0..16 {
                    s.spawn(|| (0..POSTS / 16).for_each(|_| post_one(&agent, &url)));
                }
            })
        })
    });
    group.finish();
    let _ = stop.send(());
    runtime.block_on(server).unwrap().unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
