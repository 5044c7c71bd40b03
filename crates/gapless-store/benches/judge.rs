//! What rules cost an append, in-process (`cargo bench -p gapless-store
//! --bench judge [-- EVENTS]`):
//!
//! 1. single-event batches in groups of 64 (as a busy server commits them)
//!    into a fresh SQLite ledger, without rules and with the ten rules of
//!    the HTTP bench on the asset, alternating, twice each: the CPU time per
//!    event of each and their ratio;
//! 2. many assets (`GAPLESS_JUDGE_ASSETS`, default 10,000; 0 skips it), one
//!    hourly rule with a deadline and a target on each, against the same
//!    assets without rules: single 15-minute events in groups of 32, the
//!    `j`-th on asset `j mod N`, as the HTTP bench's 64 producers send
//!    them (every fourth event of an asset completes an hour), four rounds
//!    alternating: wall time and CPU time per event and the ratio of the
//!    rates. One connection and no HTTP, so that what is left is the
//!    store's own work and, on PostgreSQL, the database's.
//!
//! Set `GAPLESS_TEST_PG` (a PostgreSQL URL) to run both on PostgreSQL too;
//! `EVENTS` 0 skips part 1, `GAPLESS_JUDGE_SQLITE=off` skips SQLite (to
//! try a change of one backend's judging in a minute).

use gapless_core::{
    parse_instant, AssetDecl, EventKind, Grid, Instant, Interval, NewEvent, Policy, Rule, RuleDef,
    RuleSettings,
};
use gapless_store::{FiringQuery, PostgresStore, SqliteStore, Store};

const RULES: [(&str, &str, &str); 10] = [
    ("15m", "UTC", "full"),
    ("30m", "UTC", "ratio>=0.9"),
    ("1h", "UTC", "full"),
    ("1h", "Europe/Berlin", "gap<10m"),
    ("2h", "UTC", "full"),
    ("6h", "America/New_York", "full"),
    ("12h", "UTC", "ratio>=0.5"),
    ("1d", "Europe/Berlin", "full"),
    ("1w", "UTC", "full"),
    ("1mo", "UTC", "full"),
];
const FIVE_MIN_US: i64 = 300_000_000;

/// CPU time of this process in seconds, to see past a busy machine.
fn cpu() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap();
    let f: Vec<&str> = s.rsplit(')').next().unwrap().split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// A landed event of `asset` with `id`, `len` microseconds from `start`.
fn landed(asset: String, id: String, start: i64, len: i64) -> NewEvent {
    NewEvent {
        asset,
        id: Some(id),
        interval: Interval::from_micros(start, start + len).unwrap(),
        kind: EventKind::Landed,
        extra: None,
        produced_at: None,
    }
}

/// Append `events` as single-event batches, `group` batches a commit (as a
/// busy server's group commit does), in the order the requests of a
/// group reach a server: not in the order of their events.
fn append_singles(store: &dyn Store, events: &[NewEvent], group: usize, now: Instant) {
    for g in events.chunks(group) {
        let mut batches: Vec<&[NewEvent]> = g.chunks(1).collect();
        arrival_order(&mut batches);
        for r in store.append_many(&batches, now) {
            r.unwrap();
        }
    }
}

/// Put a group's requests in an order they may reach a server in from as
/// many producers, each sending its next event when its last is
/// answered: not the order of their events (a fixed permutation, so that
/// runs compare).
fn arrival_order<T: Copy>(batches: &mut [T]) {
    let n = batches.len();
    // `k * 37 mod n` is a permutation when 37 does not divide `n`.
    if n < 2 || n % 37 == 0 {
        return;
    }
    let was = batches.to_vec();
    for (k, b) in batches.iter_mut().enumerate() {
        *b = was[(k * 37) % n];
    }
}

/// Seconds of CPU and of wall time per event for `n` single events, with
/// the rules or none.
fn run(store: &dyn Store, rules: bool, n: usize) -> (f64, f64, usize) {
    let base = parse_instant("2025-06-01", None).unwrap();
    store
        .declare_asset(
            "orders",
            &AssetDecl {
                key_span: None,
                tz: jiff::tz::TimeZone::UTC,
            },
        )
        .unwrap();
    if rules {
        for (i, (every, tz, policy)) in RULES.iter().enumerate() {
            let rule = Rule {
                name: format!("r{i}"),
                def: RuleDef::new(
                    vec!["orders".into()],
                    Grid::parse(every).unwrap(),
                    tz,
                    Policy::parse(policy).unwrap(),
                    base,
                    None,
                )
                .unwrap(),
                settings: RuleSettings::default(),
            };
            store.put_rule(&rule, base).unwrap();
        }
    }
    let events: Vec<NewEvent> = (0..n as i64)
        .map(|i| {
            landed(
                "orders".into(),
                format!("e{i}"),
                base.as_micros() + i * FIVE_MIN_US,
                FIVE_MIN_US,
            )
        })
        .collect();
    let now = Instant::from_micros(base.as_micros() + 400 * 86_400_000_000).unwrap();
    let (c0, t0) = (cpu(), std::time::Instant::now());
    append_singles(store, &events, 64, now);
    let (c, t) = (cpu() - c0, t0.elapsed().as_secs_f64());
    let fired = store
        .firings(&FiringQuery {
            limit: 10_000,
            ..FiringQuery::default()
        })
        .unwrap()
        .firings
        .len();
    (c / n as f64, t / n as f64, fired)
}

/// How many events part 2's groups hold: about what a group of the HTTP
/// bench's 64 producers holds.
const MANY_GROUP: usize = 32;
const FIFTEEN_MIN_US: i64 = 900_000_000;

/// Declare `n` assets `a0`.. and, with `rules`, an hourly rule on each with
/// a deadline and a target, as the HTTP bench's part 3 does.
fn many_setup(store: &dyn Store, n: usize, rules: bool) {
    let base = parse_instant("2025-06-01", None).unwrap();
    let utc = AssetDecl {
        key_span: None,
        tz: jiff::tz::TimeZone::UTC,
    };
    for i in 0..n {
        store.declare_asset(&format!("a{i}"), &utc).unwrap();
        if rules {
            let rule = Rule {
                name: format!("r{i}"),
                def: RuleDef::new(
                    vec![format!("a{i}")],
                    Grid::parse("1h").unwrap(),
                    "UTC",
                    Policy::parse("full").unwrap(),
                    base,
                    None,
                )
                .unwrap(),
                settings: RuleSettings {
                    deadline: Some(gapless_core::Duration::parse("1h").unwrap()),
                    target: Some("hook".into()),
                    ..RuleSettings::default()
                },
            };
            store.put_rule(&rule, base).unwrap();
        }
    }
}

/// Events `from..from + count` of part 2 on `n` assets: wall and CPU
/// seconds per event.
fn many_run(store: &dyn Store, n: usize, from: usize, count: usize) -> (f64, f64) {
    let base = parse_instant("2025-06-01", None).unwrap().as_micros();
    let events: Vec<NewEvent> = (from..from + count)
        .map(|j| {
            landed(
                format!("a{}", j % n),
                format!("p{j}"),
                base + (j / n) as i64 * FIFTEEN_MIN_US,
                FIFTEEN_MIN_US,
            )
        })
        .collect();
    let now = Instant::from_micros(base + 400 * 86_400_000_000).unwrap();
    let (c0, t0) = (cpu(), std::time::Instant::now());
    append_singles(store, &events, MANY_GROUP, now);
    let (c, t) = (cpu() - c0, t0.elapsed().as_secs_f64());
    (t / count as f64, c / count as f64)
}

/// Part 2 on two fresh ledgers, `fresh(0)` without rules and `fresh(1)`
/// with.
fn compare_many(label: &str, fresh: &dyn Fn(usize) -> Box<dyn Store>, n: usize) {
    let stores = [fresh(0), fresh(1)];
    for (i, store) in stores.iter().enumerate() {
        many_setup(store.as_ref(), n, i == 1);
        // Every asset's first event: the rules' windows and the caches
        // warm before anything is timed.
        many_run(store.as_ref(), n, 0, n);
    }
    const ROUNDS: usize = 4;
    let (mut from, mut sums) = (n, [(0.0, 0.0); 2]);
    for round in 0..ROUNDS {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let (wall, cpu) = many_run(stores[i].as_ref(), n, from, n);
            sums[i].0 += wall;
            sums[i].1 += cpu;
        }
        from += n;
    }
    for (i, (wall, cpu)) in sums.iter().enumerate() {
        println!(
            "  {label}, {n} assets, {}: {:.1} µs wall, {:.1} µs CPU per event",
            if i == 0 {
                "without rules".to_string()
            } else {
                format!("with {n} rules")
            },
            wall / ROUNDS as f64 * 1e6,
            cpu / ROUNDS as f64 * 1e6
        );
    }
    println!(
        "  {label}, {n} assets: rate with {n} rules / without: {:.3}",
        sums[0].0 / sums[1].0
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[v.len() / 2] + v[(v.len() - 1) / 2]) / 2.0
}

fn compare(label: &str, fresh: &dyn Fn(usize) -> Box<dyn Store>, n: usize) {
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for round in 0..2 {
        let (c, t, _) = run(fresh(2 * round).as_ref(), false, n);
        println!(
            "  {label} without rules: {:.1} µs CPU, {:.1} µs wall per event",
            c * 1e6,
            t * 1e6
        );
        without.push(c);
        let (c, t, fired) = run(fresh(2 * round + 1).as_ref(), true, n);
        println!(
            "  {label} with 10 rules: {:.1} µs CPU, {:.1} µs wall per event ({fired} firings in the first page)",
            c * 1e6,
            t * 1e6
        );
        with.push(c);
    }
    println!(
        "  {label}: CPU per event with 10 rules / without: {:.3}",
        median(with) / median(without)
    );
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let assets: usize = std::env::var("GAPLESS_JUDGE_ASSETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let sqlite = std::env::var("GAPLESS_JUDGE_SQLITE").map_or(true, |v| v != "off");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    if sqlite && n > 0 {
        compare(
            "SQLite",
            &|i| Box::new(SqliteStore::open(path.join(format!("j{i}.db"))).unwrap()),
            n,
        );
    }
    if sqlite && assets > 0 {
        compare_many(
            "SQLite",
            &|i| Box::new(SqliteStore::open(path.join(format!("m{i}.db"))).unwrap()),
            assets,
        );
    }
    if let Ok(url) = std::env::var("GAPLESS_TEST_PG") {
        let tag = std::process::id();
        if n > 0 {
            compare(
                "PostgreSQL",
                &|i| {
                    Box::new(
                        PostgresStore::open_in_schema(&url, &format!("judge_bench_{tag}_{i}"))
                            .unwrap(),
                    )
                },
                n / 4,
            );
        }
        if assets > 0 {
            compare_many(
                "PostgreSQL",
                &|i| {
                    Box::new(
                        PostgresStore::open_in_schema(
                            &url,
                            &format!("judge_bench_{tag}_{}", 4 + i),
                        )
                        .unwrap(),
                    )
                },
                assets,
            );
        }
        if let Ok(mut c) = postgres::Client::connect(&url, postgres::NoTls) {
            for i in 0..6 {
                let _ = c.batch_execute(&format!(
                    "DROP SCHEMA IF EXISTS judge_bench_{tag}_{i} CASCADE"
                ));
            }
        }
    }
}
