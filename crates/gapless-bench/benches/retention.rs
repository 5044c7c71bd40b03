//! The retention bench, a plain binary (`cargo bench -p gapless-bench
//! --bench retention`): what a ledger's events take on disk, and what
//! `gapless prune` gives back, on both backends.
//!
//! N three-second slices of one asset (default 1,000,000; every 2,000th
//! lost, every 5,000th a retraction), ingested with `gapless ingest`; then
//! `gapless prune` of the first 90% of them while a writer appends single
//! events of another asset beside it (about a hundred a second); then 10% more events; then a
//! compaction. Sizes are printed in bytes per event ingested:
//!
//! - SQLite: the ledger file (closed, so its WAL is checkpointed into it)
//!   and its free pages (`PRAGMA freelist_count`). A prune frees pages
//!   that later events reuse (the file does not grow); the file shrinks
//!   only with `VACUUM`.
//! - PostgreSQL: `pg_total_relation_size` of `events` (table, TOAST and
//!   indexes). A prune leaves dead rows that (auto)vacuum makes reusable
//!   (later events fill them: the relation does not grow); only `VACUUM
//!   FULL` gives the space back to the file system.
//!
//! The baselines of the same run: the bytes per event before the prune,
//! and the writer's longest append without a prune running. Targets: after
//! compaction at most 1.25 times the bytes per event left of before, 10%
//! more events after the prune growing the storage by at most 2% (SQLite)
//! or 5% (PostgreSQL, after a plain `VACUUM`), and no append waiting more
//! than 1 s for a prune (each step is one bounded transaction, with a
//! pause after it).
//!
//! `GAPLESS_BENCH_EVENTS` changes N; `GAPLESS_BENCH_PG` names the
//! PostgreSQL server (`off` skips it; default the local test server).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gapless_bench::{env_or, run_gapless, three_second_slices, ts, verdict, Holes};
use gapless_core::NewEvent;
use gapless_store::Store;

/// 2025-01-01T00:00:00Z, where [`three_second_slices`] start.
const T0: i64 = 1_735_689_600;
/// 2030-01-01T00:00:00Z: the writer's events, which no prune reaches.
const WRITER_T0: i64 = 1_893_456_000;
/// The writer's pause between two appends: about a hundred a second.
const WRITER_PAUSE: Duration = Duration::from_millis(10);

/// `count` more three-second slices after the first `from`, ids of their
/// own.
fn more_slices(path: &Path, from: u64, count: u64) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in from as i64..(from + count) as i64 {
        writeln!(
            out,
            r#"{{"asset":"stream","id":"m{i}","start":"{}","end":"{}"}}"#,
            ts(T0 + 3 * i),
            ts(T0 + 3 * i + 3)
        )
        .unwrap();
    }
}

/// Run `gapless --db DB ARGS`: its time and what it printed.
fn run(db: &str, args: &[&str]) -> (Duration, String) {
    let t = Instant::now();
    let out = run_gapless(db, args);
    (
        t.elapsed(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `gapless prune --before BEFORE` on `db`: its time and how many events
/// it removed.
fn prune(db: &str, before: &str) -> (Duration, u64) {
    let (took, out) = run(db, &["prune", "--before", before, "--json"]);
    let answer: serde_json::Value = serde_json::from_str(&out).unwrap();
    (took, answer["events_removed"].as_u64().unwrap())
}

/// Single-event appends of asset `writer`, [`WRITER_PAUSE`] apart, until
/// `stop`: the time of each.
fn write_until(store: Arc<dyn Store>, stop: Arc<AtomicBool>, at: i64) -> Vec<Duration> {
    let mut out = Vec::new();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let s = gapless_core::Instant::from_micros((at + i) * 1_000_000).unwrap();
        let e = gapless_core::Instant::from_micros((at + i + 1) * 1_000_000).unwrap();
        let ev = NewEvent {
            asset: "writer".into(),
            id: None,
            interval: gapless_core::Interval::new(s, e).unwrap(),
            kind: gapless_core::EventKind::Landed,
            extra: None,
            produced_at: None,
        };
        let t = Instant::now();
        store.append(&[ev], gapless_ledger::now()).unwrap();
        out.push(t.elapsed());
        i += 1;
        // A producer's pace, not a loop that holds the write lock back to
        // back (another process's SQLite writer, polling, would never get
        // it between two appends).
        std::thread::sleep(WRITER_PAUSE);
    }
    out
}

/// The writer's appends over `secs` with nothing else running, and while
/// `prune` runs: (median, longest) of each, and the prune's time.
fn writer_beside<T>(
    store: Arc<dyn Store>,
    prune: impl FnOnce() -> T,
) -> ((Duration, Duration), (Duration, Duration), T) {
    let stats = |mut v: Vec<Duration>| {
        v.sort();
        (v[v.len() / 2], *v.last().unwrap())
    };
    let stop = Arc::new(AtomicBool::new(false));
    let alone = {
        let (s, st) = (store.clone(), stop.clone());
        let h = std::thread::spawn(move || write_until(s, st, WRITER_T0));
        std::thread::sleep(Duration::from_secs(2));
        stop.store(true, Ordering::Relaxed);
        h.join().unwrap()
    };
    stop.store(false, Ordering::Relaxed);
    let (s, st) = (store, stop.clone());
    let h = std::thread::spawn(move || write_until(s, st, WRITER_T0 + 1_000_000));
    let took = prune();
    stop.store(true, Ordering::Relaxed);
    let beside = h.join().unwrap();
    (stats(alone), stats(beside), took)
}

fn per_event(bytes: u64, events: u64) -> String {
    format!("{:>8.1} B/event", bytes as f64 / events as f64)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn sqlite(dir: &Path, file: &Path, more: &Path, total: u64, before: &str) {
    let db = dir.join("retention.db");
    let db_text = db.to_str().unwrap();
    let (took, _) = run(db_text, &["ingest", file.to_str().unwrap()]);
    let size = || std::fs::metadata(&db).unwrap().len();
    let free = || -> u64 {
        let c = rusqlite::Connection::open(&db).unwrap();
        let pages: i64 = c
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .unwrap();
        let page: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        (pages * page) as u64
    };
    let full = size();
    println!(
        "SQLite: {total} events ingested in {:.1} s: file {full} bytes {}",
        took.as_secs_f64(),
        per_event(full, total)
    );
    let store: Arc<dyn Store> = Arc::from(gapless_store::open(db_text).unwrap());
    let (alone, beside, (pruned, removed)) =
        writer_beside(store.clone(), || prune(db_text, before));
    drop(store);
    let (after, freed) = (size(), free());
    println!(
        "  prune of {removed} events in {:.1} s: file {after} bytes {}, of which free pages {freed} bytes",
        pruned.as_secs_f64(),
        per_event(after, total)
    );
    println!(
        "  writer's appends: median {} longest {} alone; median {} longest {} beside the prune: {}",
        ms(alone.0),
        ms(alone.1),
        ms(beside.0),
        ms(beside.1),
        verdict(beside.1 <= Duration::from_secs(1))
    );
    run(db_text, &["ingest", more.to_str().unwrap()]);
    let grown = size();
    let growth = grown as f64 / after as f64 - 1.0;
    println!(
        "  10% more events after it: file {grown} bytes ({:+.2}%: free pages reused, target at most +2%): {}",
        growth * 100.0,
        verdict(growth <= 0.02)
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("VACUUM").unwrap();
    drop(c);
    let vacuumed = size();
    let left = total - removed + total / 10;
    let ratio = (vacuumed as f64 / left as f64) / (full as f64 / total as f64);
    println!(
        "  VACUUM: file {vacuumed} bytes, {} of the {left} left ({ratio:.2} times the bytes per event before, target at most 1.25): {}",
        per_event(vacuumed, left),
        verdict(ratio <= 1.25)
    );
}

fn postgres(pg_url: &str, file: &Path, more: &Path, total: u64, before: &str) {
    let mut admin = match postgres::Client::connect(pg_url, postgres::NoTls) {
        Ok(c) => c,
        Err(e) => {
            println!("PostgreSQL at {pg_url} unreachable ({e}): skipped");
            return;
        }
    };
    let schema = format!("gapless_retention_{}", std::process::id());
    let sep = if pg_url.contains('?') { '&' } else { '?' };
    let url = format!("{pg_url}{sep}schema={schema}");
    let (took, _) = run(&url, &["ingest", file.to_str().unwrap()]);
    let events = format!("\"{schema}\".events");
    let size = |admin: &mut postgres::Client| -> (u64, u64) {
        let r = admin
            .query_one(
                "SELECT pg_total_relation_size($1::text::regclass), \
                 pg_relation_size($1::text::regclass)",
                &[&events],
            )
            .unwrap();
        (r.get::<_, i64>(0) as u64, r.get::<_, i64>(1) as u64)
    };
    let (full, heap) = size(&mut admin);
    println!(
        "PostgreSQL: {total} events ingested in {:.1} s: events {full} bytes {} (table {})",
        took.as_secs_f64(),
        per_event(full, total),
        per_event(heap, total)
    );
    let store: Arc<dyn Store> = Arc::from(gapless_store::open(&url).unwrap());
    let (alone, beside, (pruned, removed)) = writer_beside(store.clone(), || prune(&url, before));
    drop(store);
    let (after, _) = size(&mut admin);
    println!(
        "  prune of {removed} events in {:.1} s: events {after} bytes {} (dead rows until vacuumed)",
        pruned.as_secs_f64(),
        per_event(after, total)
    );
    println!(
        "  writer's appends: median {} longest {} alone; median {} longest {} beside the prune: {}",
        ms(alone.0),
        ms(alone.1),
        ms(beside.0),
        ms(beside.1),
        verdict(beside.1 <= Duration::from_secs(1))
    );
    admin.batch_execute(&format!("VACUUM {events}")).unwrap();
    let (vacuumed, _) = size(&mut admin);
    println!(
        "  VACUUM: events {vacuumed} bytes {} (the space is free for reuse, not returned)",
        per_event(vacuumed, total)
    );
    run(&url, &["ingest", more.to_str().unwrap()]);
    let (grown, _) = size(&mut admin);
    let growth = grown as f64 / vacuumed as f64 - 1.0;
    println!(
        "  10% more events after it: events {grown} bytes ({:+.2}%: dead rows' space reused, target at most +5%): {}",
        growth * 100.0,
        verdict(growth <= 0.05)
    );
    admin
        .batch_execute(&format!("VACUUM FULL {events}"))
        .unwrap();
    let (compact, _) = size(&mut admin);
    let left = total - removed + total / 10;
    let ratio = (compact as f64 / left as f64) / (full as f64 / total as f64);
    println!(
        "  VACUUM FULL: events {compact} bytes, {} of the {left} left ({ratio:.2} times the bytes per event before, target at most 1.25): {}",
        per_event(compact, left),
        verdict(ratio <= 1.25)
    );
    admin
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .unwrap();
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` would pass
    // nothing: run only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let total: u64 = env_or("GAPLESS_BENCH_EVENTS", 1_000_000);
    let pg_url: String = env_or(
        "GAPLESS_BENCH_PG",
        "postgres://postgres@127.0.0.1:5432/test".to_string(),
    );
    let dir = tempfile::tempdir().unwrap();
    let (file, more) = (
        dir.path().join("slices.ndjson"),
        dir.path().join("more.ndjson"),
    );
    three_second_slices(&file, total, Holes::LostAndRetracted);
    more_slices(&more, total, total / 10);
    // The first 90% of the slices end by then.
    let before = ts(T0 + 3 * (total as i64 * 9 / 10));
    println!("prune --before {before}: 90% of the events");
    sqlite(dir.path(), &file, &more, total, &before);
    if pg_url != "off" {
        postgres(&pg_url, &file, &more, total, &before);
    }
}
