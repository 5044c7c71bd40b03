//! The cost of rules, a plain binary (`cargo bench -p gapless-bench
//! --bench rules`):
//!
//! 1. 64 producers POST single events to one asset of a real `gapless
//!    serve` for a bounded time, on a fresh ledger without rules and on one
//!    with 10 rules on that asset (grids from 15 minutes to a month, several
//!    policies), alternating, three rounds, on SQLite and on PostgreSQL: the
//!    median of the rounds' ratios of acknowledged rates (target: at least
//!    0.90);
//! 2. `gapless ingest` of N events (default 10,000,000 three-second slices
//!    of one asset, one atomic batch) into a fresh SQLite ledger without a
//!    rule and with a 1h rule on the asset, alternating, twice each: the
//!    median times and their ratio (target: at most 1.10);
//! 3. many rules (`many.rs`): 10,000 assets with one single-asset rule
//!    each against the same assets without rules, on SQLite and on
//!    PostgreSQL: single-event POSTs from 64 producers spread over the
//!    assets and the median latency of a `check` over HTTP after them, and
//!    `gapless ingest` of a file interleaving every asset's events, each
//!    timed from a checkpoint (target: both rates at least 0.90 of those
//!    without rules, the check unchanged).
//!
//! Both configurations run in the same process on the same machine, so the
//! ratios hold whatever else the machine is doing on average; the firings
//! the rules recorded are counted to show they did their work.
//!
//! Environment: `GAPLESS_RULES_SECS` (default 10) the length of each POST
//! phase, `GAPLESS_RULES_ROUNDS` (default 3) the rounds,
//! `GAPLESS_RULES_EVENTS` (default 10000000) N, `GAPLESS_RULES_ASSETS`
//! (default 10000) the assets and rules of part 3, `GAPLESS_RULES_PER_ASSET`
//! (default 100) each asset's events in its ingest file,
//! `GAPLESS_RULES_PHASES` (default `ten,ingest,many`) which parts run,
//! (`many-posts` or `many-ingest`: half of part 3),
//! `GAPLESS_RULES_DEADLINE` (default `1h`, `none` for none) the deadline and
//! `GAPLESS_RULES_TARGET` (default `hook`, `none` for none) the target of
//! part 3's rules, `GAPLESS_RULES_SQLITE` (`off` skips SQLite in part 3),
//! `GAPLESS_LOAD_PG` (default `postgres://postgres@127.0.0.1:5432/test`,
//! `off` to skip).

use std::path::Path;
use std::time::{Duration, Instant};

use gapless_bench::*;

mod many;

/// The ten rules on the loaded asset: grids from 15 minutes to a month,
/// several zones and policies.
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

fn get(agent: &ureq::Agent, url: &str) -> serde_json::Value {
    let mut r = agent.get(url).call().expect("GET");
    serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
}

/// The rate of 64 single-event producers against a fresh server on `db`,
/// with the ten rules or none; and the firings recorded.
fn post_rate(db: &str, rules: bool, secs: u64) -> (f64, u64) {
    let server = Server::start(db);
    let agent = agent();
    let base = &server.base;
    put(
        &agent,
        &format!("{base}/v1/assets/load-s"),
        r#"{"tz": "UTC"}"#,
    );
    if rules {
        for (i, (every, tz, policy)) in RULES.iter().enumerate() {
            put(
                &agent,
                &format!("{base}/v1/rules/r{i}"),
                &format!(
                    r#"{{"assets": ["load-s"], "every": "{every}", "tz": "{tz}", "policy": "{policy}", "from": "2025-06-01"}}"#
                ),
            );
        }
    }
    let t = Instant::now();
    let mut lat = Lat::default();
    for (l, _) in join(singles(
        base,
        "load-s",
        "a",
        64,
        0,
        t + Duration::from_secs(secs),
    )) {
        lat.merge(l);
    }
    let took = t.elapsed().as_secs_f64();
    let label = if rules {
        "with 10 rules"
    } else {
        "without rules"
    };
    println!("{}", lat.line(label, took));
    let mut fired = 0;
    let mut after = 0;
    loop {
        let page = get(
            &agent,
            &format!("{base}/v1/firings?after={after}&limit=10000"),
        );
        let n = page["firings"].as_array().unwrap().len() as u64;
        fired += n;
        match page["next"].as_i64() {
            Some(next) => after = next,
            None => break,
        }
        if n == 0 {
            break;
        }
    }
    (lat.events as f64 / took, fired)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Alternate without and with rules, `rounds` times: the median of each
/// round's ratio of rates (a pair measured back to back sees the same
/// machine, so a slow stretch moves both of its phases).
fn posts(label: &str, db: &dyn Fn(usize) -> String, secs: u64, rounds: usize) -> f64 {
    println!("\n== single-event POSTs, 64 producers: {label} ({secs} s each) ==");
    let (mut without, mut with, mut ratios, mut fired) = (Vec::new(), Vec::new(), Vec::new(), 0);
    for round in 0..rounds {
        let a = post_rate(&db(2 * round), false, secs).0;
        let (b, f) = post_rate(&db(2 * round + 1), true, secs);
        println!("  round {}: ratio {:.3}", round + 1, b / a);
        without.push(a);
        with.push(b);
        ratios.push(b / a);
        fired += f;
    }
    let ratio = median(ratios);
    println!(
        "  median {:.0} events/s without, {:.0} with 10 rules ({fired} firings): median ratio {ratio:.3}",
        median(without),
        median(with),
    );
    ratio
}

fn gapless(db: &Path, args: &[&str]) -> std::process::Output {
    gapless_bench::run_gapless(db, args)
}

/// One ingest of `file` into a fresh ledger, with a 1h rule or none: its
/// time, and the firings recorded.
fn ingest(dir: &Path, file: &Path, rule: bool, n: usize) -> (Duration, usize) {
    let db = dir.join(format!("ingest-{n}.db"));
    gapless(&db, &["asset", "set", "stream", "--tz", "UTC"]);
    if rule {
        gapless(
            &db,
            &[
                "rule",
                "set",
                "hourly",
                "--assets",
                "stream",
                "--every",
                "1h",
                "--from",
                "2025-01-01",
            ],
        );
    }
    let t = Instant::now();
    gapless(&db, &["ingest", file.to_str().unwrap()]);
    let took = t.elapsed();
    let fired = if rule {
        let out = gapless(
            &db,
            &["firings", "--rule", "hourly", "--limit", "10000", "--json"],
        );
        let page: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        page["firings"].as_array().unwrap().len()
    } else {
        0
    };
    let _ = std::fs::remove_file(&db);
    (took, fired)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let secs: u64 = env_or("GAPLESS_RULES_SECS", 10);
    let rounds: usize = env_or("GAPLESS_RULES_ROUNDS", 3);
    let events: u64 = env_or("GAPLESS_RULES_EVENTS", 10_000_000);
    let assets: usize = env_or("GAPLESS_RULES_ASSETS", 10_000);
    let per_asset: usize = env_or("GAPLESS_RULES_PER_ASSET", 100);
    let phases: String = env_or("GAPLESS_RULES_PHASES", "ten,ingest,many".to_string());
    let phase = |p: &str| phases.split(',').any(|q| q.trim() == p);
    let pg_url: String = env_or(
        "GAPLESS_LOAD_PG",
        "postgres://postgres@127.0.0.1:5432/test".to_string(),
    );
    let dir = tempfile::tempdir().unwrap();
    let mut pg = (pg_url != "off")
        .then(|| postgres::Client::connect(&pg_url, postgres::NoTls).ok())
        .flatten();
    let schema = format!("gapless_rules_{}", std::process::id());
    let sep = if pg_url.contains('?') { '&' } else { '?' };
    let pg_db = |i: usize| format!("{pg_url}{sep}schema={schema}_{i}");
    // Every schema a phase made (`pg_db(i)` for i below this) is dropped.
    let mut pg_schemas = 0;

    let (mut sqlite_ratio, mut pg_ratio) = (None, None);
    if phase("ten") {
        sqlite_ratio = Some(posts(
            "SQLite",
            &|i| {
                dir.path()
                    .join(format!("posts-{i}.db"))
                    .display()
                    .to_string()
            },
            secs,
            rounds,
        ));
        if pg.is_some() {
            pg_ratio = Some(posts("PostgreSQL", &pg_db, secs, rounds));
            pg_schemas = 2 * rounds;
        }
    }

    let mut ingest_ratio = None;
    if phase("ingest") {
        println!("\n== ingest of {events} events, one asset, one batch ==");
        let file = dir.path().join("events.ndjson");
        three_second_slices(&file, events, Holes::None);
        let (mut without, mut with) = (Vec::new(), Vec::new());
        for round in 0..2 {
            let (t, _) = ingest(dir.path(), &file, false, 2 * round);
            println!("  without a rule: {:.2} s", t.as_secs_f64());
            without.push(t.as_secs_f64());
            let (t, fired) = ingest(dir.path(), &file, true, 2 * round + 1);
            println!(
                "  with a 1h rule: {:.2} s ({fired} firings)",
                t.as_secs_f64()
            );
            with.push(t.as_secs_f64());
        }
        let _ = std::fs::remove_file(&file);
        let ratio = median(with) / median(without);
        println!("  ratio with / without: {ratio:.3}");
        ingest_ratio = Some(ratio);
    }

    // The file system's and PostgreSQL's dirty pages written out.
    let settle = || {
        let _ = std::process::Command::new("sync").status();
        if pg.is_some() {
            let mut c = postgres::Client::connect(&pg_url, postgres::NoTls).expect("PostgreSQL");
            c.batch_execute("CHECKPOINT").expect("CHECKPOINT");
        }
    };
    let (mut many_sqlite, mut many_pg) = (None, None);
    if phase("many") || phase("many-posts") || phase("many-ingest") {
        let many = many::Many {
            assets,
            secs,
            rounds,
            per_asset,
            dir: dir.path(),
            deadline: Some(env_or("GAPLESS_RULES_DEADLINE", "1h".to_string()))
                .filter(|d| d != "none"),
            target: Some(env_or("GAPLESS_RULES_TARGET", "hook".to_string()))
                .filter(|d| d != "none"),
            posts: phase("many-posts") || phase("many"),
            ingest: phase("many-ingest") || phase("many"),
            settle: &settle,
        };
        if env_or("GAPLESS_RULES_SQLITE", "on".to_string()) != "off" {
            many_sqlite = Some(many.run("SQLite", &|i| {
                dir.path()
                    .join(format!("many-{i}.db"))
                    .display()
                    .to_string()
            }));
        }
        if pg.is_some() {
            let first = pg_schemas;
            many_pg = Some(many.run("PostgreSQL", &|i| pg_db(first + i)));
            pg_schemas += 1 + 4 * rounds;
        }
    }
    if let Some(c) = &mut pg {
        for i in 0..pg_schemas {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema}_{i} CASCADE"));
        }
    }

    println!("\n== targets ==");
    if let Some(r) = sqlite_ratio {
        println!(
            "  single-event POSTs with 10 rules / without, SQLite: {r:.3} (target >= 0.90: {})",
            verdict(r >= 0.9)
        );
    }
    if let Some(r) = pg_ratio {
        println!(
            "  single-event POSTs with 10 rules / without, PostgreSQL: {r:.3} (target >= 0.90: {})",
            verdict(r >= 0.9)
        );
    }
    if let Some(r) = ingest_ratio {
        println!(
            "  10M-event ingest time with a 1h rule / without: {r:.3} (target <= 1.10: {})",
            verdict(r <= 1.1)
        );
    }
    if let Some(r) = &many_sqlite {
        many::targets("SQLite", assets, r);
    }
    if let Some(r) = &many_pg {
        many::targets("PostgreSQL", assets, r);
    }
}
