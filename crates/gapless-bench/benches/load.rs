//! The load bench, a plain binary (`cargo bench -p gapless-bench
//! --bench load`). It starts real `gapless serve` processes on loopback
//! (127.0.0.1:0), first on a SQLite file, then on a fresh PostgreSQL schema,
//! and for each:
//!
//! 1. 64 concurrent producers POST single events (distinct ids, 5-minute
//!    intervals) for a bounded time: acknowledged events/s, p50/p99;
//! 2. a few producers POST batches of 1,000: events/s, p50/p99;
//! 3. consumers ask `GET /v1/assets/{a}/coverage` for random ranges while
//!    producers keep posting: p50/p99 of both.
//!
//! Then the comparison: a month of 5-minute events (8,640 for one asset, a
//! few gaps, no retractions, plus other assets as noise) goes into gapless
//! (both backends) and into a PostgreSQL table `ev(asset text, span
//! tstzrange)` with a GiST index, and the same 1,000 random one-month /
//! one-day / one-hour gap questions are answered both ways: gapless over
//! HTTP, PostgreSQL's own multirange query through a prepared statement
//! (and, for context, `Ledger::check` in-process on each server's
//! ledger). Every answer is checked equal; the medians, their ratios and
//! what HTTP adds over the in-process answer are printed, beside what a
//! round trip costs with no work behind it (a loopback server sending one
//! fixed answer, read by the same client; the same answer from axum in a
//! process of its own, as `gapless serve` is: the framework's floor; a
//! prepared `SELECT 1` for the database). The SQLite server's questions
//! are asked once more with the client, that server and both fixed-answer
//! servers held to one CPU ([`OneCpu`]), where gapless's own work is
//! judged. The output closes with the targets of docs/BENCHMARKS.md, each
//! met or MISSED.
//!
//! Clients are blocking (`ureq`), one kept-alive connection per thread. The
//! servers run with `RUST_LOG=warn` (no per-request log lines). Everything
//! stops by itself: each phase is bounded in time, servers are killed when
//! the bench ends, the PostgreSQL schemas it made are dropped.
//!
//! Environment: `GAPLESS_LOAD_SECS` (default 10) the length of each timed
//! phase; `GAPLESS_LOAD_PG` (default
//! `postgres://postgres@127.0.0.1:5432/test`) the PostgreSQL database, `off`
//! to skip PostgreSQL; `GAPLESS_LOAD_QUESTIONS` (default 1000);
//! `GAPLESS_LOAD_YEAR=1` adds the larger case: a year of 10-second batches
//! (3.15M rows) of one asset; `GAPLESS_LOAD_PHASES` (default `load,compare`)
//! which parts run (one alone, to profile it).

#![allow(unsafe_code)] // sched_getaffinity, sched_setaffinity: `OneCpu`.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gapless_ledger::Ledger;

use gapless_bench::*;

/// `threads` producers POSTing NDJSON batches of `size` until `deadline`.
fn batches(
    base: &str,
    asset: &str,
    threads: i64,
    size: i64,
    deadline: Instant,
) -> Vec<std::thread::JoinHandle<Lat>> {
    (0..threads)
        .map(|t| {
            let url = format!("{base}/v1/events");
            let asset = asset.to_string();
            std::thread::spawn(move || {
                let agent = agent();
                let mut lat = Lat::default();
                let mut k = 0;
                while Instant::now() < deadline {
                    let mut body = String::with_capacity(size as usize * 110);
                    for j in 0..size {
                        let s = T0 + ((k * threads + t) * size + j) * SLOT;
                        body.push_str(&format!(
                            "{{\"asset\":\"{asset}\",\"id\":\"b-{t}-{k}-{j}\",\"start\":\"{}\",\"end\":\"{}\"}}\n",
                            ts(s),
                            ts(s + SLOT)
                        ));
                    }
                    lat.post(&agent, &url, "application/x-ndjson", &body, size as u64, "batch");
                    k += 1;
                }
                lat
            })
        })
        .collect()
}

/// `threads` consumers asking coverage of random ranges (an hour to 30
/// days) within the first `slots` slots of `asset` until `deadline`.
fn consumers(
    base: &str,
    asset: &str,
    threads: u64,
    slots: i64,
    deadline: Instant,
) -> Vec<std::thread::JoinHandle<Lat>> {
    (0..threads)
        .map(|t| {
            let (base, asset) = (base.to_string(), asset.to_string());
            std::thread::spawn(move || {
                let agent = agent();
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (t + 1));
                let mut lat = Lat::default();
                let span = slots * SLOT;
                while Instant::now() < deadline {
                    let len = 3_600 + rng.below(30 * DAY as u64) as i64;
                    let s = T0 + rng.below(span.max(1) as u64) as i64;
                    let t0 = Instant::now();
                    let _ = coverage(&agent, &base, &asset, s, s + len);
                    lat.micros.push(t0.elapsed().as_micros() as u64);
                    lat.events += 1;
                }
                lat
            })
        })
        .collect()
}

/// Load phases against one server; returns the single-POST rate of phase 1.
fn load(label: &str, server: &Server, secs: u64) -> f64 {
    println!("\n== load: {label} ({secs} s per phase) ==");
    let base = &server.base;
    let phase = Duration::from_secs(secs);

    // 1. 64 producers, single events.
    let t = Instant::now();
    let mut lat = Lat::default();
    let mut next_slot = 0;
    for (l, n) in join(singles(base, "load-s", "a", 64, 0, t + phase)) {
        lat.merge(l);
        next_slot = next_slot.max(n);
    }
    let took = t.elapsed().as_secs_f64();
    let single_rate = lat.events as f64 / took;
    println!("{}", lat.line("64 producers, single-event POSTs", took));

    // 2. 4 producers, batches of 1,000.
    let t = Instant::now();
    let mut lat = Lat::default();
    for l in join(batches(base, "load-b", 4, 1_000, t + phase)) {
        lat.merge(l);
    }
    let took = t.elapsed().as_secs_f64();
    println!("{}", lat.line("4 producers, batches of 1,000", took));

    // 3. 8 consumers while 16 producers keep posting single events.
    let t = Instant::now();
    let deadline = t + phase;
    let producing = singles(base, "load-s", "c", 16, next_slot, deadline);
    let asking = consumers(base, "load-s", 8, next_slot, deadline);
    let mut asked = Lat::default();
    for l in join(asking) {
        asked.merge(l);
    }
    let mut posted = Lat::default();
    for (l, _) in join(producing) {
        posted.merge(l);
    }
    let took = t.elapsed().as_secs_f64();
    println!(
        "{}",
        posted.line("16 producers, single POSTs, with consumers", took)
    );
    let mut line = asked.line("8 consumers, GET coverage (1 h..30 d)", took);
    line = line.replacen("events/s", "questions/s", 1);
    println!("{line}");
    single_rate
}

/// One data set of the comparison.
struct DataSet {
    label: &'static str,
    days: i64,
    step: i64,
    noise: usize,
}

impl DataSet {
    fn events(&self) -> i64 {
        self.days * DAY / self.step
    }
    /// Gaps: every 997th event of the main asset is missing, and a run of
    /// twelve in the middle.
    fn missing(&self, i: i64) -> bool {
        i % 997 == 500 || (self.events() / 2..self.events() / 2 + 12).contains(&i)
    }
    /// `(asset, start, end)` of every event, the main asset `cmp` first.
    fn each(&self, mut f: impl FnMut(&str, i64, i64)) {
        let names: Vec<String> = std::iter::once("cmp".to_string())
            .chain((0..self.noise).map(|n| format!("noise-{n}")))
            .collect();
        for (a, name) in names.iter().enumerate() {
            for i in 0..self.events() {
                if a == 0 && self.missing(i) {
                    continue;
                }
                let s = T0 + i * self.step;
                f(name, s, s + self.step);
            }
        }
    }
}

fn to_micros(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_micros() as i64
}

fn system_time(secs: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs as u64)
}

fn median(v: &mut [f64]) -> f64 {
    percentile(v, 0.5)
}

/// The value below which a fraction `p` of `v` lies (`v` sorted in place).
fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

/// How one server did on the comparison's questions.
struct Compared {
    /// The server's backend (`sqlite`, `postgres`).
    name: String,
    /// The multirange query's median over the server's, per question kind
    /// (month, day, hour); empty without PostgreSQL.
    ratios: Vec<f64>,
    /// The server's median less `Ledger::check`'s in-process median, in
    /// microseconds, per question kind: what HTTP adds.
    overhead_us: Vec<f64>,
    /// The server's median less the bare axum server's (gapless's own
    /// work) less `Ledger::check`'s in-process median, in microseconds, per
    /// question kind: what gapless adds to the answer beyond the framework,
    /// measured with this client and both servers on one CPU ([`OneCpu`]),
    /// where no request waits for another core to wake; empty but for
    /// SQLite, whose answer involves no other process.
    own_over_answer_one_cpu_us: Vec<f64>,
}

/// An answer's gaps as `(start, end)` microseconds, the form every way of
/// asking is compared in.
fn gaps(a: &gapless_api::CheckAnswer) -> Vec<(i64, i64)> {
    a.missing
        .iter()
        .map(|m| (m.start().as_micros(), m.end().as_micros()))
        .collect()
}

/// `values`, one per question kind of [`KINDS`], as `kind value, ...`.
fn by_kind(values: impl IntoIterator<Item = String>) -> String {
    KINDS
        .iter()
        .zip(values)
        .map(|(k, v)| format!("{} {v}", k.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How much more than the in-process answer gapless's own work over HTTP
/// (its median less the bare axum server's) may cost, in microseconds: the
/// request's routing, log, metrics, parameters and serialization, which
/// should be small beside a round trip.
const OWN_WORK_OVER_ANSWER_US: f64 = 25.0;

/// The question kinds of [`compare`], in its order.
const KINDS: [(&str, i64); 3] = [
    ("one month", 30 * DAY),
    ("one day", DAY),
    ("one hour", 3_600),
];

/// Load `data` into the servers and the `ev` table, ask the same questions
/// every way, check the answers agree; how each server did.
fn compare(
    data: &DataSet,
    servers: &[(&str, &Server, &str)],
    pg: Option<(&mut postgres::Client, &str)>,
    questions: usize,
) -> Vec<Compared> {
    println!(
        "\n== comparison: {} ({} events of `cmp`, {} noise assets) ==",
        data.label,
        data.events(),
        data.noise
    );
    // Load gapless: NDJSON batches of 100,000 events.
    for (name, server, _) in servers {
        let t = Instant::now();
        let agent = agent();
        let url = format!("{}/v1/events", server.base);
        let mut body = String::new();
        let mut n = 0;
        let mut lines = 0;
        let flush = |body: &mut String, lines: &mut usize| {
            if *lines > 0 {
                let (status, text) = post(&agent, &url, "application/x-ndjson", body);
                assert_eq!(status, 200, "{text}");
                body.clear();
                *lines = 0;
            }
        };
        data.each(|asset, s, e| {
            body.push_str(&format!(
                "{{\"asset\":\"{asset}\",\"id\":\"{asset}-{s}\",\"start\":\"{}\",\"end\":\"{}\"}}\n",
                ts(s),
                ts(e)
            ));
            lines += 1;
            n += 1;
            if lines == 100_000 {
                flush(&mut body, &mut lines);
            }
        });
        flush(&mut body, &mut lines);
        println!(
            "  loaded {n} events into gapless ({name}) in {:.1?}",
            t.elapsed()
        );
    }
    // Load PostgreSQL's table.
    let mut pg = pg.map(|(client, schema)| {
        let t = Instant::now();
        let table = format!("{schema}.ev_{}", data.label.replace(' ', "_"));
        client
            .batch_execute(&format!(
                "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (asset text NOT NULL, span tstzrange NOT NULL)"
            ))
            .unwrap();
        let mut copy = client
            .copy_in(&format!("COPY {table} (asset, span) FROM STDIN"))
            .unwrap();
        let mut buf = Vec::with_capacity(1 << 20);
        data.each(|asset, s, e| {
            writeln!(buf, "{asset}\t[{},{})", ts(s), ts(e)).unwrap();
            if buf.len() > (1 << 20) {
                copy.write_all(&buf).unwrap();
                buf.clear();
            }
        });
        copy.write_all(&buf).unwrap();
        copy.finish().unwrap();
        let index = if client
            .batch_execute("CREATE EXTENSION IF NOT EXISTS btree_gist")
            .is_ok()
        {
            client
                .batch_execute(&format!("CREATE INDEX ON {table} USING gist (asset, span)"))
                .unwrap();
            "GiST (asset, span) with btree_gist"
        } else {
            client
                .batch_execute(&format!(
                    "CREATE INDEX ON {table} USING gist (span); CREATE INDEX ON {table} (asset)"
                ))
                .unwrap();
            "GiST (span) + btree (asset)"
        };
        client.batch_execute(&format!("ANALYZE {table}")).unwrap();
        // What any question answered by the database costs here: one round
        // trip of a prepared statement that reads nothing.
        let round_trip = client.prepare("SELECT 1::int4").unwrap();
        println!(
            "  loaded PostgreSQL table {table}, index {index}, in {:.1?}",
            t.elapsed()
        );
        // The query, its gaps' bounds read by a wrapper.
        let statement = client
            .prepare(&format!(
                "SELECT lower(g), upper(g) FROM (
                   SELECT unnest(tstzmultirange(tstzrange($2, $3, '[)')) - coalesce(range_agg(span), '{{}}'))
                   FROM {table} WHERE asset = $1 AND span && tstzrange($2, $3, '[)')
                 ) AS q(g)"
            ))
            .unwrap();
        (client, statement, round_trip)
    });

    // Each server's ledger opened in this process, for its in-process
    // answer.
    let ledgers: Vec<Ledger> = servers
        .iter()
        .map(|(_, _, db)| Ledger::new(Arc::from(gapless_store::open(db).unwrap())))
        .collect();
    let policy = gapless_api::params::policy(None).unwrap();
    let agents: Vec<ureq::Agent> = servers.iter().map(|_| agent()).collect();

    let kinds = KINDS;
    let span = data.days * DAY;
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    // What any HTTP round trip costs here: a server that does nothing but
    // send one fixed answer (a real one-day answer, read back the same way).
    let day = gapless_core::Interval::from_micros(T0 * 1_000_000, (T0 + DAY) * 1_000_000).unwrap();
    let fixed = serde_json::to_string(&ledgers[0].check("cmp", day, &policy).unwrap()).unwrap();
    let axum_floor = AxumFloor::start(fixed.clone());
    let floor = Floor::start(fixed);
    let floor_agent = agent();
    let axum_agent = agent();
    // [kind][method] -> latencies in ms; methods: servers..., each one's
    // ledger in-process..., the fixed answer, the framework's fixed answer,
    // pg's query, pg's round trip.
    let methods = 2 * servers.len() + 4;
    let mut times = vec![vec![Vec::new(); methods]; kinds.len()];
    let mut with_gaps = 0;
    let warmup = 20;
    // Each question's kind and range, asked again on one CPU below.
    let mut asked = Vec::with_capacity(questions + warmup);
    for q in 0..questions + warmup {
        let k = q % kinds.len();
        let len = kinds[k].1;
        let s = T0 - len / 10 + rng.below((span - len + len / 5).max(1) as u64) as i64;
        let e = s + len;
        asked.push((k, s, e));
        let mut answers: Vec<Vec<(i64, i64)>> = Vec::new();
        let mut took = Vec::new();
        for ((_, server, _), agent) in servers.iter().zip(&agents) {
            let t = Instant::now();
            let a = coverage(agent, &server.base, "cmp", s, e);
            took.push(t.elapsed().as_secs_f64() * 1e3);
            answers.push(gaps(&a));
        }
        let range = gapless_core::Interval::from_micros(s * 1_000_000, e * 1_000_000).unwrap();
        for ledger in &ledgers {
            let t = Instant::now();
            let a = ledger.check("cmp", range, &policy).unwrap();
            took.push(t.elapsed().as_secs_f64() * 1e3);
            answers.push(gaps(&a));
        }
        let t = Instant::now();
        coverage(&floor_agent, &floor.base, "cmp", s, e);
        took.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        coverage(&axum_agent, &axum_floor.base, "cmp", s, e);
        took.push(t.elapsed().as_secs_f64() * 1e3);
        if let Some((client, statement, round_trip)) = pg.as_mut() {
            let t = Instant::now();
            let rows = client
                .query(&*statement, &[&"cmp", &system_time(s), &system_time(e)])
                .unwrap();
            took.push(t.elapsed().as_secs_f64() * 1e3);
            answers.push(
                rows.iter()
                    .map(|r| {
                        (
                            to_micros(r.get::<_, SystemTime>(0)),
                            to_micros(r.get::<_, SystemTime>(1)),
                        )
                    })
                    .collect(),
            );
            let t = Instant::now();
            let one: i32 = client.query_one(&*round_trip, &[]).unwrap().get(0);
            took.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(one, 1);
        }
        for (i, a) in answers.iter().enumerate().skip(1) {
            assert_eq!(a, &answers[0], "question {q} [{s}, {e}) answer {i}");
        }
        if q >= warmup {
            with_gaps += usize::from(!answers[0].is_empty());
            for (m, t) in took.into_iter().enumerate() {
                times[k][m].push(t);
            }
        }
    }
    println!(
        "  {questions} questions ({} each of {}), every answer equal ({with_gaps} with gaps)",
        questions / kinds.len(),
        kinds.map(|k| k.0).join(" / ")
    );
    let mut names: Vec<String> = servers
        .iter()
        .map(|(n, _, _)| format!("gapless HTTP ({n})"))
        .collect();
    for (n, _, _) in servers {
        names.push(format!("Ledger::check in-process ({n})"));
    }
    names.push("HTTP server sending a fixed answer".into());
    names.push("axum server sending it, no work".into());
    if pg.is_some() {
        names.push("PostgreSQL multirange query".into());
        names.push("PostgreSQL round trip (SELECT 1)".into());
    }
    let medians = median_table("median latency, ms", &names, &mut times, 3);
    let floor_m = 2 * servers.len();
    let axum_m = floor_m + 1;
    let mut out: Vec<Compared> = servers
        .iter()
        .enumerate()
        .map(|(m, (name, _, _))| Compared {
            name: name.to_string(),
            ratios: Vec::new(),
            overhead_us: (0..kinds.len())
                .map(|k| 1e3 * (medians[m][k] - medians[servers.len() + m][k]))
                .collect(),
            own_over_answer_one_cpu_us: Vec::new(),
        })
        .collect();
    for c in &out {
        println!(
            "  HTTP ({0}) over in-process ({0}), median µs: {1}",
            c.name,
            by_kind(c.overhead_us.iter().map(|us| format!("{us:.0}")))
        );
    }
    // Method `a`'s median less method `b`'s, in µs, per question kind.
    let over_us = |a: usize, b: usize| {
        by_kind((0..kinds.len()).map(|k| format!("{:.0}", 1e3 * (medians[a][k] - medians[b][k]))))
    };
    for (m, (name, _, _)) in servers.iter().enumerate() {
        println!(
            "  HTTP ({name}) over the fixed-answer server (its own work), median µs: {}",
            over_us(m, floor_m)
        );
    }
    // What axum, hyper and tokio cost alone, against the in-process answer
    // (the target's budget) and against gapless's server.
    println!(
        "  axum with no work over in-process ({}), median µs: {}",
        servers[0].0,
        over_us(axum_m, servers.len())
    );
    for (m, (name, _, _)) in servers.iter().enumerate() {
        println!(
            "  HTTP ({name}) over axum with no work (gapless's own work), median µs: {}",
            over_us(m, axum_m)
        );
    }
    // The same at the 10th percentile: a loopback round trip here is one
    // of two populations (the server's worker still awake, or parked and
    // woken by the kernel) whose mix moves the medians; the fast ones
    // compare the work itself.
    let p10s: Vec<Vec<f64>> = (0..names.len())
        .map(|m| {
            (0..kinds.len())
                .map(|k| percentile(&mut times[k][m], 0.1))
                .collect()
        })
        .collect();
    let p10 = |m: usize, k: usize| p10s[m][k];
    for (m, (name, _, _)) in servers.iter().enumerate() {
        let own: Vec<String> = (0..kinds.len())
            .map(|k| {
                let work = p10(m, k) - p10(axum_m, k);
                let answer = p10(servers.len() + m, k);
                format!(
                    "{:.0} ({:+.0} over the answer)",
                    1e3 * work,
                    1e3 * (work - answer)
                )
            })
            .collect();
        println!(
            "  HTTP ({name}) over axum with no work (gapless's own work), 10th percentile µs: {}",
            by_kind(own)
        );
    }
    one_cpu(
        servers,
        &ledgers,
        (&floor, &axum_floor),
        &asked[warmup..],
        &mut out,
    );
    if pg.is_some() {
        let pgm = names.len() - 2;
        for (m, c) in out.iter_mut().enumerate() {
            let r: Vec<f64> = (0..kinds.len())
                .map(|k| medians[pgm][k] / medians[m][k])
                .collect();
            println!(
                "  ratio multirange / gapless HTTP ({}):  {}",
                c.name,
                by_kind(r.iter().map(|r| format!("{r:.1}x")))
            );
            c.ratios = r;
        }
        for (m, (name, _, _)) in servers.iter().enumerate() {
            let r: Vec<f64> = (0..kinds.len())
                .map(|k| medians[pgm][k] / medians[servers.len() + m][k])
                .collect();
            println!(
                "  ratio multirange / Ledger::check in-process ({name}): {}",
                by_kind(r.iter().map(|r| format!("{r:.1}x")))
            );
        }
        // A gapless answer read from PostgreSQL is one HTTP round trip plus
        // one database round trip: where the query's own work is less
        // than an HTTP round trip, no such answer can be faster than it.
        println!(
            "  multirange query over a bare database round trip (the query's own work), median µs: {}",
            over_us(pgm, pgm + 1)
        );
    }
    out
}

/// Print a table of `times` (`[kind][method]`, one row a method named by
/// `names`, under `title` and the kinds) with `decimals`; the medians,
/// `[method][kind]`.
fn median_table(
    title: &str,
    names: &[String],
    times: &mut [Vec<Vec<f64>>],
    decimals: usize,
) -> Vec<Vec<f64>> {
    println!(
        "  {title:<36} {}",
        KINDS.map(|k| format!("{:>11}", k.0)).join("")
    );
    let mut medians = vec![vec![f64::NAN; KINDS.len()]; names.len()];
    for (m, name) in names.iter().enumerate() {
        let mut row = format!("  {name:<36} ");
        for (k, kind) in times.iter_mut().enumerate() {
            medians[m][k] = median(&mut kind[m]);
            row.push_str(&format!("{:>11.decimals$}", medians[m][k]));
        }
        println!("{row}");
    }
    medians
}

/// The questions `asked` again with this client, the SQLite servers, their
/// ledgers in process and both fixed-answer servers held to one CPU
/// ([`OneCpu`]): medians and what gapless's own work is there, into each
/// SQLite server's [`Compared`]. Without it, which requests wait for a
/// parked core to wake is decided by where the scheduler placed each side,
/// and that wait, the same for every server, moves the medians by more than
/// the work they are meant to compare.
fn one_cpu(
    servers: &[(&str, &Server, &str)],
    ledgers: &[Ledger],
    (floor, axum_floor): (&Floor, &AxumFloor),
    asked: &[(usize, i64, i64)],
    out: &mut [Compared],
) {
    let sqlite: Vec<usize> = (0..servers.len())
        .filter(|&m| servers[m].0 == "sqlite")
        .collect();
    if sqlite.is_empty() {
        return;
    }
    let policy = gapless_api::params::policy(None).unwrap();
    let agents: Vec<ureq::Agent> = sqlite.iter().map(|_| agent()).collect();
    let (floor_agent, axum_agent) = (agent(), agent());
    let mut pids: Vec<u32> = sqlite.iter().map(|&m| servers[m].1.pid()).collect();
    pids.push(axum_floor.pid());
    let pinned = OneCpu::pin(&pids);
    let cpu = pinned.cpu;
    // [kind][method]: the servers, their ledgers, the fixed answer, axum's.
    let methods = 2 * sqlite.len() + 2;
    let mut times = vec![vec![Vec::new(); methods]; KINDS.len()];
    // Warm the connections on this CPU, then ask every question.
    let warm = asked.len().min(20);
    for (q, &(k, s, e)) in asked[..warm].iter().chain(asked).enumerate() {
        let range = gapless_core::Interval::from_micros(s * 1_000_000, e * 1_000_000).unwrap();
        let mut took = Vec::new();
        let mut time = |f: &mut dyn FnMut() -> gapless_api::CheckAnswer| {
            let t = Instant::now();
            let answer = f();
            took.push(t.elapsed().as_secs_f64() * 1e6);
            gaps(&answer)
        };
        let mut answers = Vec::new();
        for (i, &m) in sqlite.iter().enumerate() {
            answers.push(time(&mut || {
                coverage(&agents[i], &servers[m].1.base, "cmp", s, e)
            }));
        }
        for &m in &sqlite {
            answers.push(time(&mut || {
                ledgers[m].check("cmp", range, &policy).unwrap()
            }));
        }
        // The fixed answers are one day's, whatever was asked.
        time(&mut || coverage(&floor_agent, &floor.base, "cmp", s, e));
        time(&mut || coverage(&axum_agent, &axum_floor.base, "cmp", s, e));
        for a in &answers[1..] {
            assert_eq!(a, &answers[0], "question [{s}, {e}) on one CPU");
        }
        if q >= warm {
            for (m, t) in took.into_iter().enumerate() {
                times[k][m].push(t);
            }
        }
    }
    drop(pinned);
    let mut names: Vec<String> = sqlite
        .iter()
        .map(|&m| format!("gapless HTTP ({})", servers[m].0))
        .collect();
    names.extend(
        sqlite
            .iter()
            .map(|&m| format!("Ledger::check in-process ({})", servers[m].0)),
    );
    names.push("HTTP server sending a fixed answer".into());
    names.push("axum server sending it, no work".into());
    println!(
        "  on CPU {cpu} alone (this client, the SQLite server and both fixed-answer servers):"
    );
    let medians = median_table("median latency, µs", &names, &mut times, 1);
    let axum_m = methods - 1;
    for (i, &m) in sqlite.iter().enumerate() {
        let name = servers[m].0;
        let answer = sqlite.len() + i;
        println!(
            "  HTTP ({name}) over in-process ({name}), one CPU, median µs: {}",
            by_kind((0..KINDS.len()).map(|k| format!("{:.0}", medians[i][k] - medians[answer][k])))
        );
        let own: Vec<f64> = (0..KINDS.len())
            .map(|k| medians[i][k] - medians[axum_m][k])
            .collect();
        let over: Vec<f64> = own
            .iter()
            .zip(&medians[answer])
            .map(|(w, a)| w - a)
            .collect();
        println!(
            "  HTTP ({name}) over axum with no work (gapless's own work), one CPU, median µs: {}",
            by_kind(
                own.iter()
                    .zip(&over)
                    .map(|(w, o)| format!("{w:.0} ({o:+.0} over the answer)"))
            )
        );
        out[m].own_over_answer_one_cpu_us = over;
    }
}

/// Every thread of this process and of `pids` held to one CPU, the first
/// this process may use, until dropped (then each is allowed every CPU of
/// this process's mask again); a thread started meanwhile inherits its
/// starter's CPU. On a virtual machine a wake-up that crosses to another
/// core waits for that core to be woken itself, which costs more than a
/// question's whole work and happens to some requests and not to others,
/// by where the scheduler placed each side; on one CPU every request is
/// handed over the same way, and what differs between two servers is
/// their work.
#[derive(Debug)]
struct OneCpu {
    pids: Vec<u32>,
    all: libc::cpu_set_t,
    cpu: usize,
}

impl OneCpu {
    fn pin(pids: &[u32]) -> OneCpu {
        // SAFETY: `cpu_set_t` is plain bits; the kernel writes at most its
        // size.
        let all = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let got = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
            assert_eq!(
                got,
                0,
                "sched_getaffinity: {}",
                std::io::Error::last_os_error()
            );
            set
        };
        // SAFETY: reads bits of a set this process owns.
        let cpu = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| unsafe { libc::CPU_ISSET(c, &all) })
            .expect("a CPU this process may use");
        // SAFETY: as above.
        let one = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            set
        };
        let mut pids = pids.to_vec();
        pids.push(std::process::id());
        for &pid in &pids {
            set_threads(pid, &one);
        }
        OneCpu { pids, all, cpu }
    }
}

impl Drop for OneCpu {
    fn drop(&mut self) {
        for &pid in &self.pids {
            set_threads(pid, &self.all);
        }
    }
}

/// Every thread of process `pid` allowed only the CPUs of `set`; threads
/// that end meanwhile are passed over.
fn set_threads(pid: u32, set: &libc::cpu_set_t) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return;
    };
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: `set` is a valid set of the size passed.
        unsafe {
            libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), set);
        }
    }
}

/// The PostgreSQL URL `url` with its ledger in `schema`.
fn in_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}schema={schema}")
}

fn main() {
    AxumFloor::serve_if_asked();
    // `cargo bench` passes --bench; `cargo test --benches` would pass
    // nothing: run only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let secs: u64 = env_or("GAPLESS_LOAD_SECS", 10);
    let questions: usize = env_or("GAPLESS_LOAD_QUESTIONS", 1_000);
    let pg_url: String = env_or(
        "GAPLESS_LOAD_PG",
        "postgres://postgres@127.0.0.1:5432/test".to_string(),
    );
    let dir = tempfile::tempdir().unwrap();

    // PostgreSQL, when reachable: one fresh schema for the gapless ledger,
    // one for the comparison's tables; both dropped at the end.
    let schema = format!("gapless_load_{}", std::process::id());
    let cmp_schema = format!("{schema}_cmp");
    let mut pg = if pg_url == "off" {
        None
    } else {
        match postgres::Client::connect(&pg_url, postgres::NoTls) {
            Ok(mut c) => {
                c.batch_execute(&format!(
                    "DROP SCHEMA IF EXISTS {cmp_schema} CASCADE; CREATE SCHEMA {cmp_schema}"
                ))
                .unwrap();
                Some(c)
            }
            Err(e) => {
                println!("PostgreSQL at {pg_url} unreachable ({e}): its phases are skipped");
                None
            }
        }
    };

    let phases: String = env_or("GAPLESS_LOAD_PHASES", "load,compare".to_string());
    let phase = |name: &str| phases.split(',').any(|p| p.trim() == name);

    // The comparison runs first, on fresh ledgers and a quiet database: the
    // load phases leave PostgreSQL busy with their rows (autovacuum, the
    // checkpointer) for a while after they end.
    let mut compared = Vec::new();
    let mut year = Vec::new();
    let cmp_schema_ledger = format!("{schema}_ledger");
    if phase("compare") {
        let month = DataSet {
            label: "month",
            days: 30,
            step: SLOT,
            noise: 4,
        };
        let cmp_file = dir.path().join("cmp.db");
        let cmp_sqlite = Server::start(cmp_file.to_str().unwrap());
        let cmp_pg_url = in_schema(&pg_url, &cmp_schema_ledger);
        let cmp_pg = pg.as_ref().map(|_| Server::start(&cmp_pg_url));
        let mut servers: Vec<(&str, &Server, &str)> =
            vec![("sqlite", &cmp_sqlite, cmp_file.to_str().unwrap())];
        if let Some(s) = &cmp_pg {
            servers.push(("postgres", s, &cmp_pg_url));
        }
        compared = compare(
            &month,
            &servers,
            pg.as_mut().map(|c| (c, cmp_schema.as_str())),
            questions,
        );
        drop(servers);
        drop(cmp_sqlite);
        drop(cmp_pg);

        if std::env::var("GAPLESS_LOAD_YEAR").is_ok_and(|v| v == "1") {
            let year_set = DataSet {
                label: "year",
                days: 365,
                step: 10,
                noise: 0,
            };
            let file = dir.path().join("year.db");
            let server = Server::start(file.to_str().unwrap());
            year = compare(
                &year_set,
                &[("sqlite", &server, file.to_str().unwrap())],
                pg.as_mut().map(|c| (c, cmp_schema.as_str())),
                questions,
            );
        }
    }

    let (mut sqlite_rate, mut pg_rate) = (f64::NAN, None);
    if phase("load") {
        let sqlite_file = dir.path().join("load.db");
        let sqlite = Server::start(sqlite_file.to_str().unwrap());
        sqlite_rate = load("SQLite", &sqlite, secs);
        drop(sqlite);
        let pg_server = pg
            .as_ref()
            .map(|_| Server::start(&in_schema(&pg_url, &schema)));
        pg_rate = pg_server.as_ref().map(|s| load("PostgreSQL", s, secs));
    }

    if let Some(c) = pg.as_mut() {
        for s in [&schema, &cmp_schema, &cmp_schema_ledger] {
            if let Err(e) = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {s} CASCADE")) {
                eprintln!("cannot drop schema {s}: {e}");
            }
        }
    }

    println!("\n== targets ==");
    if phase("load") {
        println!(
            "  {:<68} {:>10.0} events/s  {}",
            "single-event POSTs, 64 producers, SQLite: >= 16,000 acknowledged/s",
            sqlite_rate,
            verdict(sqlite_rate >= 16_000.0)
        );
        if let Some(r) = pg_rate {
            println!(
                "  {:<68} {:>10.2}x         {}",
                "the same on PostgreSQL: >= 0.9x SQLite's rate",
                r / sqlite_rate,
                verdict(r >= 0.9 * sqlite_rate)
            );
        }
    }
    for c in &compared {
        for ((kind, _), r) in KINDS.iter().zip(&c.ratios) {
            let (want, text) = match (*kind, c.name.as_str()) {
                ("one month", "sqlite") => (25.0, ">= 25x"),
                ("one month", _) => (10.0, ">= 10x"),
                _ => (1.0, "faster"),
            };
            println!(
                "  {:<68} {:>10.1}x         {}",
                format!(
                    "{kind} questions, gapless HTTP ({}) {text} than multirange",
                    c.name
                ),
                r,
                verdict(if want > 1.0 { *r >= want } else { *r > 1.0 })
            );
        }
        if c.name == "sqlite" {
            for ((kind, _), us) in KINDS.iter().zip(&c.overhead_us) {
                println!(
                    "  {:<68} {:>10.0} µs        {}",
                    format!("{kind} questions, HTTP (sqlite) over in-process: <= 50 µs"),
                    us,
                    verdict(*us <= 50.0)
                );
            }
            // Of what HTTP adds, the framework's floor is axum's; what
            // gapless adds beyond it and beyond the answer itself (request
            // log, metrics, extractors, serializing) is held to a small
            // constant, measured on one CPU, where the wait for a parked
            // core (the machine's, not the server's) is left out.
            for ((kind, _), us) in KINDS.iter().zip(&c.own_over_answer_one_cpu_us) {
                println!(
                    "  {:<68} {:>10.0} µs        {}",
                    format!("{kind} questions, (sqlite) own work, one CPU: <= answer + 25 µs"),
                    us,
                    verdict(*us <= OWN_WORK_OVER_ANSWER_US)
                );
            }
        }
    }
    for c in &year {
        if let Some(r) = c.ratios.first() {
            println!(
                "  {:<68} {:>10.1}x         (no target)",
                format!(
                    "year of 10-s batches, one-month questions, gapless HTTP ({}) vs multirange",
                    c.name
                ),
                r
            );
        }
    }
    if phase("compare") && compared.iter().all(|c| c.ratios.is_empty()) {
        println!("  ratios to the multirange query: not measured (no PostgreSQL)");
    }
}
