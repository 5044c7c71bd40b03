//! Append throughput of the SQLite backend.
//!
//! `cargo bench -p gapless-store --bench append [-- EVENTS [BATCH]]`
//!
//! Appends EVENTS (default 1,000,000) events of 4 assets (5-minute
//! intervals, a producer id and a small `extra` each, as `gapless ingest`
//! gets them) to a fresh ledger file, in batches of BATCH (default 10,000)
//! and then again in one batch of all, and prints events/s. Then reads:
//! a coverage query and a page of events. Set `BENCH_DIR` to put the file on
//! another disk (default: the system temp dir).

use std::time::Instant as Clock;

use gapless_core::{EventKind, Instant, Interval, NewEvent, RawEvent};
use gapless_store::{EventQuery, SqliteStore, Store};

const ASSETS: [&str; 4] = [
    "s3://lake/orders",
    "s3://lake/payments",
    "kafka://clicks",
    "db.public.users",
];
/// 2025-01-01T00:00:00Z.
const BASE_US: i64 = 1_735_689_600_000_000;
const FIVE_MIN_US: i64 = 300_000_000;

fn events(n: usize, offset_steps: i64, tag: &str) -> Vec<NewEvent> {
    (0..n)
        .map(|i| {
            let asset = ASSETS[i % ASSETS.len()];
            let step = offset_steps + (i / ASSETS.len()) as i64;
            let start = BASE_US + step * FIVE_MIN_US;
            NewEvent {
                asset: asset.to_string(),
                id: Some(format!("{tag}-{step}")),
                interval: Interval::from_micros(start, start + FIVE_MIN_US).unwrap(),
                kind: EventKind::Landed,
                extra: Some(format!(
                    r#"{{"rows": {}, "file": "part-{step:08}.parquet"}}"#,
                    i % 977
                )),
                produced_at: Some(Instant::from_micros(start + FIVE_MIN_US + 1_000_000).unwrap()),
            }
        })
        .collect()
}

/// CPU time of this thread in seconds (Linux), to see past a busy machine.
fn cpu() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(s.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

/// A stopwatch of wall and CPU time.
struct Watch(Clock, Option<f64>);

impl Watch {
    fn start() -> Watch {
        Watch(Clock::now(), cpu())
    }
    fn rate(&self, n: usize) -> String {
        let secs = self.0.elapsed().as_secs_f64();
        let cpu = cpu().zip(self.1).map(|(b, a)| b - a);
        let mut out = format!(
            "{:>9.0} events/s ({n} events in {secs:.2} s",
            n as f64 / secs
        );
        if let Some(c) = cpu {
            out += &format!("; {:.0} events per CPU-second", n as f64 / c);
        }
        out + ")"
    }
}

/// `n` NDJSON lines as producers send them, from `offset_steps` on.
fn ndjson(n: usize, offset_steps: i64) -> Vec<String> {
    events(n, offset_steps, "j")
        .into_iter()
        .map(|e| {
            format!(
                r#"{{"asset":"{}","id":"{}","start":"{}","end":"{}","produced_at":"{}","extra":{}}}"#,
                e.asset,
                e.id.unwrap(),
                e.interval.start(),
                e.interval.end(),
                e.produced_at.unwrap(),
                e.extra.unwrap()
            )
        })
        .collect()
}

fn parse(line: &str) -> NewEvent {
    RawEvent::from_json(line).unwrap().resolve(None).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let n: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let batch: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let base = std::env::var_os("BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let dir = tempfile::tempdir_in(base).unwrap();
    let path = dir.path().join("bench.db");
    let store = SqliteStore::open(&path).unwrap();
    let received = Instant::from_micros(BASE_US + 400 * 86_400_000_000).unwrap();

    // Micro-batches.
    let data = events(n, 0, "a");
    let watch = Watch::start();
    for chunk in data.chunks(batch) {
        store.append(chunk, received).unwrap();
    }
    println!("append, batches of {batch}: {}", watch.rate(n));

    // The same again: all duplicates.
    let watch = Watch::start();
    let mut dups = 0;
    for chunk in data.chunks(batch) {
        dups += store.append(chunk, received).unwrap().duplicates;
    }
    assert_eq!(dups as usize, n);
    println!("re-append (duplicates): {}", watch.rate(n));
    drop(data);

    // One batch of everything, as `gapless ingest FILE` does.
    let steps = (n / ASSETS.len()) as i64;
    let data = events(n, steps, "b");
    let watch = Watch::start();
    store.append(&data, received).unwrap();
    println!("append, one batch of {n}: {}", watch.rate(n));
    drop(data);

    // NDJSON ingest as `gapless ingest` does it: parse every line, then
    // append; and with parsing on a second thread, chunks appended as they
    // are parsed (`append_chunks`).
    let lines = ndjson(n, 2 * steps);
    let watch = Watch::start();
    let parsed: Vec<NewEvent> = lines.iter().map(|l| parse(l)).collect();
    store.append(&parsed, received).unwrap();
    println!("parse then append, {n} NDJSON lines: {}", watch.rate(n));
    drop(parsed);
    let lines = ndjson(n, 3 * steps);
    let watch = Watch::start();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<NewEvent>>(4);
    let parse_cpu = std::thread::scope(|s| {
        let lines = &lines;
        let parser = s.spawn(move || {
            let start = cpu();
            for chunk in lines.chunks(10_000) {
                tx.send(chunk.iter().map(|l| parse(l)).collect()).unwrap();
            }
            cpu().zip(start).map(|(b, a)| b - a)
        });
        let got = store
            .append_chunks(&mut rx.into_iter().map(Ok), &mut drop, received)
            .unwrap();
        assert_eq!(got.accepted as usize, n);
        parser.join().unwrap()
    });
    if let Some(c) = parse_cpu {
        println!(
            "  (the parsing thread: {:.2} CPU-s, {:.0} lines per CPU-second)",
            c,
            n as f64 / c
        );
    }
    println!("parse || append_chunks, {n} lines: {}", watch.rate(n));
    drop(lines);

    // Reads.
    let all = Interval::from_micros(BASE_US, BASE_US + 2 * steps * FIVE_MIN_US).unwrap();
    let clock = Clock::now();
    let reps = 1_000;
    for i in 0..reps {
        let asset = ASSETS[i % ASSETS.len()];
        let start = BASE_US + (i as i64 * 7919 % (2 * steps)) * FIVE_MIN_US;
        let day = Interval::from_micros(start, start + 86_400_000_000).unwrap();
        let cov = store.coverage(asset, day).unwrap();
        assert_eq!(cov.run_count(), 1);
    }
    println!(
        "coverage of a day:         {:>10.1} µs/query",
        clock.elapsed().as_secs_f64() * 1e6 / reps as f64
    );
    let cov = store.coverage(ASSETS[0], all).unwrap();
    assert_eq!(cov.run_count(), 1);
    let clock = Clock::now();
    for i in 0..100 {
        let start = BASE_US + (i * 7919 % (2 * steps)) * FIVE_MIN_US;
        let range = Interval::from_micros(start, start + 86_400_000_000).unwrap();
        let page = store
            .events(
                ASSETS[1],
                &EventQuery {
                    range: Some(range),
                    limit: 100,
                    ..EventQuery::default()
                },
            )
            .unwrap();
        assert!(!page.events.is_empty());
    }
    println!(
        "events page in a day:      {:>10.1} µs/query",
        clock.elapsed().as_secs_f64() * 1e6 / 100.0
    );
    let clock = Clock::now();
    let mut after = None;
    for _ in 0..100 {
        let page = store
            .events(
                ASSETS[2],
                &EventQuery {
                    limit: 1000,
                    after,
                    ..EventQuery::default()
                },
            )
            .unwrap();
        after = page.next;
    }
    println!(
        "events page of 1000:       {:>10.1} µs/page",
        clock.elapsed().as_secs_f64() * 1e6 / 100.0
    );
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "ledger file: {:.1} MiB for {} events",
        size as f64 / 1048576.0,
        2 * n
    );
}
