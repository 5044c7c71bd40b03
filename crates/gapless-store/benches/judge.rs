//! What rules cost an append, in-process (`cargo bench -p gapless-store
//! --bench judge [-- EVENTS]`): single-event batches in groups of 64 (as a
//! busy server commits them) into a fresh SQLite ledger, without rules and
//! with the ten rules of the HTTP bench on the asset, alternating, twice
//! each: the CPU time per event of each and their ratio. Set
//! `GAPLESS_TEST_PG` (a PostgreSQL URL) to run it on PostgreSQL too.

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
            let s = base.as_micros() + i * FIVE_MIN_US;
            NewEvent {
                asset: "orders".into(),
                id: Some(format!("e{i}")),
                interval: Interval::from_micros(s, s + FIVE_MIN_US).unwrap(),
                kind: EventKind::Landed,
                extra: None,
                produced_at: None,
            }
        })
        .collect();
    let now = Instant::from_micros(base.as_micros() + 400 * 86_400_000_000).unwrap();
    let (c0, t0) = (cpu(), std::time::Instant::now());
    for group in events.chunks(64) {
        let batches: Vec<&[NewEvent]> = group.chunks(1).collect();
        for r in store.append_many(&batches, now) {
            r.unwrap();
        }
    }
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    compare(
        "SQLite",
        &|i| Box::new(SqliteStore::open(path.join(format!("j{i}.db"))).unwrap()),
        n,
    );
    if let Ok(url) = std::env::var("GAPLESS_TEST_PG") {
        let tag = std::process::id();
        compare(
            "PostgreSQL",
            &|i| {
                Box::new(
                    PostgresStore::open_in_schema(&url, &format!("judge_bench_{tag}_{i}")).unwrap(),
                )
            },
            n / 4,
        );
        if let Ok(mut c) = postgres::Client::connect(&url, postgres::NoTls) {
            for i in 0..4 {
                let _ = c.batch_execute(&format!(
                    "DROP SCHEMA IF EXISTS judge_bench_{tag}_{i} CASCADE"
                ));
            }
        }
    }
}
