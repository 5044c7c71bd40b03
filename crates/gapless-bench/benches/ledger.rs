//! The ledger bench, a plain binary (`cargo bench -p gapless-bench
//! --bench ledger`):
//!
//! 1. bulk-ingest N events (default 10,000,000: a year of micro-batches for
//!    five assets, some overlapping, some retracted, a few lost) through
//!    `gapless ingest`, one process, one atomic batch;
//! 2. open that ledger and answer `check` for one month of one asset, as a
//!    whole process, with its peak memory;
//! 3. the task-side approach on the same file: a Python script that reads
//!    that month's events and sorts, merges and complements them;
//! 4. many assets: M five-minute events (default 2,000,000)
//!    spread over 1,000 assets, interleaved as a shared pipeline writes
//!    them, against the same count over 5 assets: the ingest rate of each,
//!    their ratio, a one-week `check` in each, and the SQLite ledger's
//!    bytes per event;
//! 5. many assets on PostgreSQL: A assets (default 10,000) with 1,000
//!    five-minute events each, interleaved as in 4, in atomic files of
//!    500,000 events through `gapless ingest`, against the same events
//!    over 10 assets, each in a fresh schema: the ingest rate of each and
//!    their ratio, the bytes per event of `events` (table and indexes), and
//!    one-day and one-month `check`s in each.
//!
//! `GAPLESS_BENCH_EVENTS` changes N (e.g. 1000000 for a quick run),
//! `GAPLESS_BENCH_SPREAD_EVENTS` changes M, `GAPLESS_BENCH_PG_ASSETS`
//! changes A and `GAPLESS_BENCH_PG_PER_ASSET` the events of each;
//! `GAPLESS_LOAD_PG` (default `postgres://postgres@127.0.0.1:5432/test`)
//! names the PostgreSQL database, `off` skips 5; `GAPLESS_BENCH_PHASES`
//! (default `year,spread,pg`) which parts run: `year` is 1-3, `spread` 4,
//! `pg` 5.
#![allow(unsafe_code)] // getrusage: peak memory of the child processes.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use gapless_bench::{env_or, gapless, ts, verdict};

const ASSETS: u64 = 5;
const YEAR_START: i64 = 1_735_689_600; // 2025-01-01T00:00:00Z
const YEAR_SECS: i64 = 365 * 86_400;

/// A year of micro-batches per asset in arrival order: every 1,000th batch
/// re-runs a wider slice (overlap), every 5,000th withdraws an earlier one,
/// every 2,000th is lost.
fn generate(path: &Path, total: u64) -> u64 {
    use std::io::Write;
    let per_asset = total / ASSETS;
    let step = (YEAR_SECS as u64 / per_asset).max(1) as i64;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut written = 0;
    for i in 0..per_asset as i64 {
        for a in 0..ASSETS {
            let start = YEAR_START + i * step;
            let mut end = start + step;
            let mut kind = "landed";
            let mut s = start;
            if i % 2_000 == 1_999 {
                continue;
            }
            if i % 1_000 == 500 {
                s = start - 10 * step;
                end = start + step;
            }
            if i % 5_000 == 4_999 {
                s = start - 100 * step;
                end = s + step;
                kind = "retracted";
            }
            writeln!(
                out,
                r#"{{"asset":"stream-{a}","id":"s{a}-{i}","start":"{}","end":"{}","kind":"{kind}"}}"#,
                ts(s),
                ts(end)
            )
            .unwrap();
            written += 1;
        }
    }
    written
}

/// Peak resident memory of the largest child waited for so far, in MiB.
fn children_peak_mib() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a rusage into the pointer it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr());
        usage.assume_init()
    };
    usage.ru_maxrss as f64 / 1024.0
}

fn timed(cmd: &mut Command) -> (Duration, std::process::Output) {
    let t = Instant::now();
    let out = cmd.output().expect("run");
    (t.elapsed(), out)
}

/// `gapless ingest` of `data` into `db`, as one process: how long it took.
fn ingest(bin: &Path, data: &Path, db: impl AsRef<OsStr>) -> Duration {
    let (took, out) = timed(
        Command::new(bin)
            .args(["ingest", data.to_str().unwrap(), "--json"])
            .env("GAPLESS_DB", db),
    );
    assert!(
        out.status.success(),
        "ingest failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// The median of 11 `gapless check` processes of `asset` over `range`
/// (its `--start`/`--end` arguments).
fn median_check(bin: &Path, db: impl AsRef<OsStr>, asset: &str, range: &[&str]) -> Duration {
    median_run(bin, db, "check", asset, range)
}

/// The median of 11 runs of `gapless COMMAND ASSET ARGS --json` as whole
/// processes (exit 0, or 1 for an incomplete `check`).
fn median_run(
    bin: &Path,
    db: impl AsRef<OsStr>,
    command: &str,
    asset: &str,
    args: &[&str],
) -> Duration {
    let times = (0..11)
        .map(|_| {
            let (took, out) = timed(
                Command::new(bin)
                    .args([command, asset])
                    .args(args)
                    .arg("--json")
                    .env("GAPLESS_DB", db.as_ref()),
            );
            assert!(
                out.status.code().is_some_and(|c| c <= 1),
                "{command} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            took
        })
        .collect();
    median(times)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` would pass
    // nothing: run only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let phases: String = env_or("GAPLESS_BENCH_PHASES", "year,spread,pg".to_string());
    let phase = |p: &str| phases.split(',').any(|x| x.trim() == p);
    let bin = gapless();
    let dir = tempfile::tempdir().unwrap();
    if phase("year") {
        year(bin, dir.path());
    }
    if phase("spread") {
        spread_sqlite(bin, dir.path());
    }
    if phase("pg") {
        spread_postgres(bin, dir.path());
    }
}

/// 1-3: a year of five assets, a month's `check`, the task-side script.
fn year(bin: &Path, dir: &Path) {
    let total: u64 = env_or("GAPLESS_BENCH_EVENTS", 10_000_000);
    let data = dir.join("year.ndjson");
    let db = dir.join("bench.db");

    let t = Instant::now();
    let n = generate(&data, total);
    let size = std::fs::metadata(&data).unwrap().len();
    println!(
        "generated {n} events ({:.0} MiB of NDJSON) in {:.1?}",
        size as f64 / 1048576.0,
        t.elapsed()
    );

    let took = ingest(bin, &data, &db);
    let ingest_peak = children_peak_mib();
    let rate = n as f64 / took.as_secs_f64();
    println!(
        "ingest: {n} events in {:.2} s = {:.0} events/s (target >= 500000: {}), peak memory {:.0} MiB (target <= 512 MiB: {}), ledger {:.0} MiB",
        took.as_secs_f64(),
        rate,
        verdict(rate >= 500_000.0),
        ingest_peak,
        verdict(ingest_peak <= 512.0),
        std::fs::metadata(&db).unwrap().len() as f64 / 1048576.0
    );

    let month = ["--start", "2025-06-01", "--end", "2025-07-01"];
    let check = median_check(bin, &db, "stream-2", &month);
    let check_peak = children_peak_mib(); // still the ingest's if larger
    println!(
        "check one month (whole process, median of 11): {:.1} ms (target < 50 ms: {})",
        check.as_secs_f64() * 1e3,
        verdict(check.as_millis() < 50)
    );
    let (_, out) = timed(
        Command::new("/usr/bin/time")
            .args(["-f", "%M"])
            .arg(bin)
            .args(["check", "stream-2"])
            .args(month)
            .env("GAPLESS_DB", &db),
    );
    let rss = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .and_then(|l| l.trim().parse::<f64>().ok());
    match rss {
        Some(kib) => println!("check peak memory: {:.1} MiB", kib / 1024.0),
        None => println!(
            "check peak memory: (no /usr/bin/time; largest child so far {check_peak:.0} MiB)"
        ),
    }

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bench/task_side.py");
    let mut py_times = Vec::new();
    for _ in 0..5 {
        let (took, out) = timed(
            Command::new("python3")
                .arg(&script)
                .arg(&db)
                .arg("stream-2")
                .arg("2025-06-01T00:00:00Z")
                .arg("2025-07-01T00:00:00Z"),
        );
        assert!(
            out.status.success(),
            "task-side script failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        py_times.push(took);
    }
    let py = median(py_times);
    let ratio = py.as_secs_f64() / check.as_secs_f64();
    println!(
        "task-side Python (read month, sort, merge, complement; median of 5): {:.1} ms; gapless check is {:.1}x faster (target >= 10x: {})",
        py.as_secs_f64() * 1e3,
        ratio,
        verdict(ratio >= 10.0)
    );
}

/// 4: many assets against five on SQLite.
fn spread_sqlite(bin: &Path, dir: &Path) {
    let spread: u64 = env_or("GAPLESS_BENCH_SPREAD_EVENTS", 2_000_000);
    let mut rates = Vec::new();
    for assets in [5, 1_000] {
        let data = dir.join(format!("spread-{assets}.ndjson"));
        let db = dir.join(format!("spread-{assets}.db"));
        let n = generate_spread(&data, spread, assets);
        let took = ingest(bin, &data, &db);
        let _ = std::fs::remove_file(&data);
        let rate = n as f64 / took.as_secs_f64();
        let (start, end) = (ts(YEAR_START), ts(YEAR_START + 7 * 86_400));
        let week = median_check(bin, &db, "spread-0", &["--start", &start, "--end", &end]);
        println!(
            "many assets: {n} five-minute events over {assets} assets, interleaved: {:.2} s = {rate:.0} events/s; check one week of one asset: {:.1} ms; ledger file {:.0} bytes per event",
            took.as_secs_f64(),
            week.as_secs_f64() * 1e3,
            std::fs::metadata(&db).unwrap().len() as f64 / n as f64
        );
        rates.push(rate);
    }
    let slower = rates[0] / rates[1];
    println!(
        "many assets: 1,000 assets ingest at 1/{slower:.2} of 5 assets' rate (target within 1.3x: {})",
        verdict(slower <= 1.3)
    );
}

/// `total` five-minute events over `assets` assets from 2025-01-01, each
/// slot of every asset before the next slot: a shared pipeline's order.
fn generate_spread(path: &Path, total: u64, assets: u64) -> u64 {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let slots = total / assets;
    for i in 0..slots as i64 {
        let start = YEAR_START + i * 300;
        let (s, e) = (ts(start), ts(start + 300));
        for a in 0..assets {
            writeln!(
                out,
                r#"{{"asset":"spread-{a}","id":"p{a}-{i}","start":"{s}","end":"{e}"}}"#
            )
            .unwrap();
        }
    }
    slots * assets
}

/// The events of slots `slots` of `assets` assets, as [`generate_spread`]
/// writes them, appended to `out`.
fn write_spread_slots(
    out: &mut impl std::io::Write,
    slots: std::ops::Range<i64>,
    assets: u64,
) -> std::io::Result<()> {
    for i in slots {
        let start = YEAR_START + i * 300;
        let (s, e) = (ts(start), ts(start + 300));
        for a in 0..assets {
            writeln!(
                out,
                r#"{{"asset":"spread-{a}","id":"p{a}-{i}","start":"{s}","end":"{e}"}}"#
            )?;
        }
    }
    Ok(())
}

/// The sizes of a PostgreSQL ledger's `events`: its event count, the
/// table's bytes (heap and TOAST) and its indexes' bytes, by index.
struct EventsSize {
    events: i64,
    table: i64,
    indexes: Vec<(String, i64)>,
}

impl EventsSize {
    fn read(client: &mut postgres::Client, schema: &str) -> EventsSize {
        let events = format!("\"{schema}\".events");
        let row = client
            .query_one(
                &format!("SELECT count(*), pg_table_size($1::text::regclass) FROM {events}"),
                &[&events],
            )
            .unwrap();
        let indexes = client
            .query(
                "SELECT c.relname::text, pg_relation_size(c.oid) FROM pg_index i \
                 JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::text::regclass \
                 ORDER BY c.relname",
                &[&events],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        EventsSize {
            events: row.get(0),
            table: row.get(1),
            indexes,
        }
    }

    fn per_event(&self, bytes: i64) -> f64 {
        bytes as f64 / self.events.max(1) as f64
    }

    fn total(&self) -> i64 {
        self.table + self.indexes.iter().map(|i| i.1).sum::<i64>()
    }
}

/// 5: many interleaved assets against few on PostgreSQL, in atomic files
/// as a shared pipeline writes them.
fn spread_postgres(bin: &Path, dir: &Path) {
    let pg_url: String = env_or(
        "GAPLESS_LOAD_PG",
        "postgres://postgres@127.0.0.1:5432/test".to_string(),
    );
    if pg_url == "off" {
        return;
    }
    let mut client = match postgres::Client::connect(&pg_url, postgres::NoTls) {
        Ok(c) => c,
        Err(e) => {
            println!("PostgreSQL at {pg_url} unreachable ({e}): its many-assets case is skipped");
            return;
        }
    };
    let many: u64 = env_or("GAPLESS_BENCH_PG_ASSETS", 10_000);
    let per_asset: u64 = env_or("GAPLESS_BENCH_PG_PER_ASSET", 1_000);
    const FEW: u64 = 10;
    const FILE_EVENTS: u64 = 500_000;
    let total = many * per_asset;
    let mut rates = Vec::new();
    let mut checks = Vec::new();
    for assets in [FEW, many] {
        let schema = format!("gapless_ledger_{}_{assets}", std::process::id());
        let sep = if pg_url.contains('?') { '&' } else { '?' };
        let url = format!("{pg_url}{sep}schema={schema}");
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
            .unwrap();
        let slots = (total / assets) as i64;
        let file_slots = (FILE_EVENTS / assets).max(1) as i64;
        let data = dir.join(format!("pg-spread-{assets}.ndjson"));
        let mut took = Duration::ZERO;
        let mut files = 0;
        for first in (0..slots).step_by(file_slots as usize) {
            let mut out =
                std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&data).unwrap());
            write_spread_slots(&mut out, first..(first + file_slots).min(slots), assets).unwrap();
            drop(out);
            took += ingest(bin, &data, &url);
            files += 1;
        }
        let _ = std::fs::remove_file(&data);
        let n = slots as u64 * assets;
        let rate = n as f64 / took.as_secs_f64();
        let size = EventsSize::read(&mut client, &schema);
        let check = |from: i64, to: i64| {
            let (s, e) = (ts(from), ts(to));
            median_check(bin, &url, "spread-1", &["--start", &s, "--end", &e])
        };
        let day = check(YEAR_START + 86_400, YEAR_START + 2 * 86_400);
        let month = check(YEAR_START, YEAR_START + 30 * 86_400);
        // The questions that read events rather than coverage runs: a
        // day's events (a range seek) and segments, and the asset's first
        // page of events in sequence order.
        let (s, e) = (ts(YEAR_START + 86_400), ts(YEAR_START + 2 * 86_400));
        let range = ["--start", s.as_str(), "--end", e.as_str()];
        let events_day = median_run(bin, &url, "events", "spread-1", &range);
        let segments_day = median_run(bin, &url, "segments", "spread-1", &range);
        let events_page = median_run(bin, &url, "events", "spread-1", &["--limit", "1000"]);
        println!(
            "PostgreSQL, many assets: {n} five-minute events over {assets} assets, interleaved, in {files} files: {:.2} s = {rate:.0} events/s; check one day {:.2} ms, one month {:.2} ms (whole process, median of 11)",
            took.as_secs_f64(),
            day.as_secs_f64() * 1e3,
            month.as_secs_f64() * 1e3,
        );
        let indexes: Vec<String> = size
            .indexes
            .iter()
            .map(|(name, b)| format!("{name} {:.0}", size.per_event(*b)))
            .collect();
        println!(
            "  events of one day {:.2} ms, segments of one day {:.2} ms, a page of 1,000 events in sequence order {:.2} ms (whole process, median of 11)",
            events_day.as_secs_f64() * 1e3,
            segments_day.as_secs_f64() * 1e3,
            events_page.as_secs_f64() * 1e3,
        );
        let per_event = size.per_event(size.total());
        println!(
            "  events: {:.0} bytes per event (target <= 150: {}): table {:.0}, indexes: {}",
            per_event,
            verdict(per_event <= 150.0),
            size.per_event(size.table),
            indexes.join(", ")
        );
        rates.push(rate);
        checks.push((day, month));
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
            .unwrap();
    }
    let ratio = rates[1] / rates[0];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "PostgreSQL, many assets: check one day {:.2} ms vs {:.2} ms, one month {:.2} ms vs {:.2} ms ({many} assets vs {FEW})",
        ms(checks[1].0),
        ms(checks[0].0),
        ms(checks[1].1),
        ms(checks[0].1)
    );
    println!(
        "PostgreSQL, many assets: {many} interleaved assets ingest at {ratio:.2}x the rate of {FEW} assets (target >= 0.8x: {})",
        verdict(ratio >= 0.8)
    );
}
