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

/// The producers of part 1.
const PRODUCERS: usize = 64;

/// One server of part 1: whether the ten rules watch its asset, each
/// producer's next event, and what its producers did in all its turns.
struct Side {
    server: Server,
    rules: bool,
    next: Vec<i64>,
    lat: Lat,
    secs: f64,
}

impl Side {
    /// A fresh server on `db` with the asset declared and, with `rules`,
    /// the ten rules on it; paused.
    fn new(db: &str, rules: bool) -> Side {
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
        server.pause();
        Side {
            server,
            rules,
            next: vec![0; PRODUCERS],
            lat: Lat::default(),
            secs: 0.0,
        }
    }

    /// The producers POST single events for `secs`, producer `t` the slots
    /// `t`, `t + 64`, ... from where its last turn stopped (so a producer
    /// that falls behind leaves holes behind the stream's end, as in one
    /// long run).
    fn turn(&mut self, secs: f64) {
        self.server.resume();
        let deadline = Instant::now() + Duration::from_secs_f64(secs);
        let t0 = Instant::now();
        let handles: Vec<_> = (self.next.iter().enumerate())
            .map(|(t, &from)| {
                let url = format!("{}/v1/events", self.server.base);
                std::thread::spawn(move || {
                    let agent = agent();
                    let mut lat = Lat::default();
                    let mut i = from;
                    while Instant::now() < deadline {
                        let s = T0 + (i * PRODUCERS as i64 + t as i64) * SLOT;
                        let body = format!(
                            r#"{{"asset":"load-s","id":"a-{t}-{i}","start":"{}","end":"{}"}}"#,
                            ts(s),
                            ts(s + SLOT)
                        );
                        lat.post(&agent, &url, "application/json", &body, 1, "single");
                        i += 1;
                    }
                    (lat, i)
                })
            })
            .collect();
        for (t, (lat, i)) in join(handles).into_iter().enumerate() {
            self.lat.merge(lat);
            self.next[t] = i;
        }
        self.secs += t0.elapsed().as_secs_f64();
        self.server.pause();
    }

    /// The firings recorded.
    fn fired(&self) -> u64 {
        self.server.resume();
        let agent = agent();
        let base = &self.server.base;
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
                Some(next) if n > 0 => after = next,
                _ => break,
            }
        }
        fired
    }
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

/// `rounds` rounds, each on a fresh pair of ledgers without and with the
/// rules, whose servers take [`many::TURNS`] turns of a tenth of `secs`
/// each in the order A B B A A B ..., the other one paused: the median of
/// the rounds' ratios of rates (the machine's speed changes by spells of
/// seconds, and turns let a spell weigh on both alike).
fn posts(label: &str, db: &dyn Fn(usize) -> String, secs: u64, rounds: usize) -> f64 {
    println!("\n== single-event POSTs, {PRODUCERS} producers: {label} ({secs} s each) ==");
    let (mut without, mut with, mut ratios, mut fired) = (Vec::new(), Vec::new(), Vec::new(), 0);
    for round in 0..rounds {
        let mut sides = [
            Side::new(&db(2 * round), false),
            Side::new(&db(2 * round + 1), true),
        ];
        let turn = secs as f64 / many::TURNS as f64;
        for t in 0..many::TURNS {
            let order = if t % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                sides[i].turn(turn);
            }
        }
        let [a, b] = sides.each_mut().map(|side| {
            let label = if side.rules {
                "with 10 rules"
            } else {
                "without rules"
            };
            println!("{}", side.lat.line(label, side.secs));
            side.lat.events as f64 / side.secs
        });
        fired += sides[1].fired();
        println!("  round {}: ratio {:.3}", round + 1, b / a);
        without.push(a);
        with.push(b);
        ratios.push(b / a);
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
