//! Many rules: one single-asset rule per asset, as a platform with one rule
//! per table runs them, against the same ledger without rules.
//!
//! Each configuration starts from a fresh ledger with `N` declared assets
//! (`a0` …) and, with rules, rule `r{i}` on asset `a{i}` (every hour, a
//! deadline of an hour unless `GAPLESS_RULES_DEADLINE` says another or
//! `none`, target `hook` unless `GAPLESS_RULES_TARGET` says another or
//! `none`), created over HTTP from 16 threads
//! (the time it took is printed). The server runs with a targets file in
//! both, so its deliverer and its deadline judging run beside the writes;
//! `hook` takes only `late` firings, so the `complete` ones are marked
//! delivered without a request leaving the machine.
//!
//! - single-event POSTs: 64 producers, the `j`-th event of the run on
//!   asset `j mod N`, each asset's events 15-minute slots one after the
//!   other; both servers run, taking turns of a tenth of the phase (the
//!   one waiting is paused with `SIGSTOP`, so nothing of it runs beside the
//!   other); then the median latency of `check` questions over HTTP (one
//!   day of one asset, one client, one after another);
//! - interleaved ingest: `gapless ingest` of one file (one atomic batch)
//!   holding `K` five-minute events of every asset, interleaved in time as
//!   a shared pipeline writes them; the rounds alternate which goes first.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gapless_bench::*;

/// What a run measures, and where.
pub struct Many<'a> {
    /// How many assets (and rules).
    pub assets: usize,
    /// The length of each POST phase.
    pub secs: u64,
    /// Rounds of each comparison.
    pub rounds: usize,
    /// Events per asset in the ingest file.
    pub per_asset: usize,
    /// A scratch directory (the targets file, SQLite ledgers, the file).
    pub dir: &'a Path,
    /// The rules' deadline (`None`: none).
    pub deadline: Option<String>,
    /// The rules' target (`None`: none).
    pub target: Option<String>,
    /// Whether the POSTs and the ingest run.
    pub posts: bool,
    pub ingest: bool,
    /// Called before each timed ingest, once its ledger is made: writes
    /// out what making it left to write (a checkpoint), so that the
    /// 10,000 rules just created are not flushed during the ingest that
    /// has them, and not during the other.
    pub settle: &'a dyn Fn(),
}

/// The ratios a backend got: POSTs with rules / without, ingest rate with
/// rules / without, and the check latencies (µs) without and with.
pub struct Ratios {
    pub posts: f64,
    pub ingest: f64,
    pub check: (f64, f64),
}

/// How many turns each server takes in a round of POSTs, the two taking
/// them in the order A B B A A B ...: the machine's speed changes by
/// spells of seconds (other work, its cores' modes), and turns of a second
/// let such a spell weigh on both alike instead of on whichever ran in it.
pub(crate) const TURNS: u64 = 10;

/// One server of a POST comparison: its producers' next event number, and
/// what they did in all its turns.
struct Side {
    server: Server,
    rules: bool,
    next: Arc<AtomicUsize>,
    lat: Lat,
    secs: f64,
}

impl Side {
    fn new(server: Server, rules: bool) -> Side {
        Side {
            server,
            rules,
            next: Arc::new(AtomicUsize::new(0)),
            lat: Lat::default(),
            secs: 0.0,
        }
    }
}

/// `n` jobs over 16 threads.
fn parallel(n: usize, job: impl Fn(&ureq::Agent, usize) + Send + Sync + 'static) {
    let job = Arc::new(job);
    let next = Arc::new(AtomicUsize::new(0));
    let handles = (0..16)
        .map(|_| {
            let (job, next) = (job.clone(), next.clone());
            std::thread::spawn(move || {
                let agent = agent();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    job(&agent, i);
                }
            })
        })
        .collect();
    join(handles);
}

impl Many<'_> {
    fn targets_file(&self) -> String {
        let path = self.dir.join("targets.toml");
        std::fs::write(
            &path,
            "[[target]]\nname = \"hook\"\nkind = \"webhook\"\n\
             url = \"http://127.0.0.1:9/unused\"\nkinds = [\"late\"]\n",
        )
        .unwrap();
        path.display().to_string()
    }

    /// A server on `db` with the assets declared and, with `rules`, a rule
    /// on each.
    fn server(&self, db: &str, rules: bool) -> Server {
        let server = Server::start_with(db, &["--targets-file", &self.targets_file()]);
        let base = server.base.clone();
        parallel(self.assets, move |agent, i| {
            put(agent, &format!("{base}/v1/assets/a{i}"), r#"{"tz": "UTC"}"#);
        });
        if rules {
            let t = Instant::now();
            let base = server.base.clone();
            let deadline = self
                .deadline
                .as_ref()
                .map(|d| format!(r#", "deadline": "{d}""#))
                .unwrap_or_default()
                + &self
                    .target
                    .as_ref()
                    .map(|t| format!(r#", "target": "{t}""#))
                    .unwrap_or_default();
            parallel(self.assets, move |agent, i| {
                put(
                    agent,
                    &format!("{base}/v1/rules/r{i}"),
                    &format!(
                        r#"{{"assets": ["a{i}"], "every": "1h", "from": "2025-06-01"{deadline}}}"#
                    ),
                );
            });
            println!(
                "  created {} rules in {:.2} s",
                self.assets,
                t.elapsed().as_secs_f64()
            );
        }
        server
    }

    /// 64 producers POST single events to `side`'s server for `secs`, the
    /// `j`-th event of its run on asset `j mod N`.
    fn post_turn(&self, side: &mut Side, secs: f64) {
        side.server.resume();
        let deadline = Instant::now() + Duration::from_secs_f64(secs);
        let n = self.assets;
        let t = Instant::now();
        let handles = (0..64)
            .map(|_| {
                let url = format!("{}/v1/events", side.server.base);
                let next = side.next.clone();
                std::thread::spawn(move || {
                    let agent = agent();
                    let mut lat = Lat::default();
                    while Instant::now() < deadline {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        let s = T0 + (j / n) as i64 * 900;
                        let body = format!(
                            r#"{{"asset":"a{}","id":"p{j}","start":"{}","end":"{}"}}"#,
                            j % n,
                            ts(s),
                            ts(s + 900)
                        );
                        lat.post(&agent, &url, "application/json", &body, 1, "single");
                    }
                    lat
                })
            })
            .collect();
        for l in join(handles) {
            side.lat.merge(l);
        }
        side.secs += t.elapsed().as_secs_f64();
        side.server.pause();
    }

    /// The median latency of a day's check over HTTP on `side`'s server
    /// (µs), one client asking one question after another.
    fn check_latency(&self, side: &Side) -> f64 {
        side.server.resume();
        let agent = agent();
        let mut micros: Vec<f64> = (0..500)
            .map(|q| {
                let t0 = Instant::now();
                let asset = format!("a{}", q % self.assets);
                coverage(&agent, &side.server.base, &asset, T0, T0 + DAY);
                t0.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        side.server.pause();
        median(&mut micros)
    }

    /// Single-event POSTs without rules (on `without`) and with (on
    /// `with`) for `secs` each, the two servers taking [`TURNS`] turns in
    /// the order A B B A A B ..., the other one paused: events/s and the
    /// check's median latency (µs) of each.
    fn post_rates(&self, without: &str, with: &str) -> [(f64, f64); 2] {
        let mut sides = [false, true].map(|rules| {
            let side = Side::new(
                self.server(if rules { with } else { without }, rules),
                rules,
            );
            side.server.pause();
            side
        });
        let turn = self.secs as f64 / TURNS as f64;
        for t in 0..TURNS {
            let order = if t % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                self.post_turn(&mut sides[i], turn);
            }
        }
        let n = self.assets;
        sides.each_mut().map(|side| {
            let label = if side.rules {
                format!("with {n} rules")
            } else {
                "without rules".to_string()
            };
            println!("{}", side.lat.line(&label, side.secs));
            let check = self.check_latency(side);
            println!("    check of a day over HTTP: median {check:.0} µs");
            (side.lat.events as f64 / side.secs, check)
        })
    }

    /// The ingest file: `per_asset` five-minute events of every asset,
    /// interleaved in time.
    fn ingest_file(&self) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.dir.join("interleaved.ndjson");
        let mut out =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
        for k in 0..self.per_asset as i64 {
            let s = T0 + k * SLOT;
            let (start, end) = (ts(s), ts(s + SLOT));
            for a in 0..self.assets {
                writeln!(
                    out,
                    r#"{{"asset":"a{a}","id":"i{k}","start":"{start}","end":"{end}"}}"#
                )
                .unwrap();
            }
        }
        out.flush().unwrap();
        path
    }

    /// `gapless ingest` of `file` into `db` (assets declared, rules on
    /// each or none): events/s.
    fn ingest_rate(&self, db: &str, file: &Path, rules: bool) -> f64 {
        self.server(db, rules).stop();
        (self.settle)();
        let t = Instant::now();
        run_gapless(db, &["ingest", file.to_str().unwrap()]);
        let took = t.elapsed().as_secs_f64();
        let events = (self.assets * self.per_asset) as f64;
        println!(
            "  {:<44} {:>9.0} events/s  {:.2} s",
            if rules {
                "ingest with rules"
            } else {
                "ingest without rules"
            },
            events / took,
            took
        );
        events / took
    }

    /// Both comparisons on one backend, `db(i)` the `i`-th fresh ledger.
    pub fn run(&self, label: &str, db: &dyn Fn(usize) -> String) -> Ratios {
        let n = self.assets;
        println!(
            "\n== {n} single-asset rules: single-event POSTs, 64 producers over {n} assets: {label} ({} s each) ==",
            self.secs
        );
        let (mut ratios, mut checks_without, mut checks_with) =
            (Vec::new(), Vec::new(), Vec::new());
        let mut fresh = 0;
        let mut next_db = || {
            fresh += 1;
            db(fresh)
        };
        for round in 0..if self.posts { self.rounds } else { 0 } {
            let (without, with) = (next_db(), next_db());
            let [(a, ca), (b, cb)] = self.post_rates(&without, &with);
            println!("  round {}: ratio {:.3}", round + 1, b / a);
            ratios.push(b / a);
            checks_without.push(ca);
            checks_with.push(cb);
        }
        let posts = median(&mut ratios);
        let check = (median(&mut checks_without), median(&mut checks_with));
        println!(
            "  median ratio {posts:.3}; check median {:.0} µs without rules, {:.0} µs with",
            check.0, check.1
        );

        println!(
            "\n== {n} single-asset rules: ingest of {} events interleaved over {n} assets, one batch: {label} ==",
            n * self.per_asset
        );
        let file = if self.ingest {
            self.ingest_file()
        } else {
            std::path::PathBuf::new()
        };
        let mut ratios = Vec::new();
        for round in 0..if self.ingest { self.rounds } else { 0 } {
            // A B, B A, A B, ...: a slow spell weighs on both alike.
            let (a, b) = if round % 2 == 0 {
                let a = self.ingest_rate(&next_db(), &file, false);
                (a, self.ingest_rate(&next_db(), &file, true))
            } else {
                let b = self.ingest_rate(&next_db(), &file, true);
                (self.ingest_rate(&next_db(), &file, false), b)
            };
            println!("  round {}: ratio {:.3}", round + 1, b / a);
            ratios.push(b / a);
        }
        let ingest = median(&mut ratios);
        println!("  median ratio {ingest:.3}");
        Ratios {
            posts,
            ingest,
            check,
        }
    }
}

/// The median (NaN for none: a part that did not run).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Print the targets of one backend's run.
pub fn targets(label: &str, n: usize, r: &Ratios) {
    // A part that did not run (NaN) has no line.
    if !r.posts.is_nan() {
        println!(
            "  {n} rules, single-event POSTs with / without, {label}: {:.3} (target >= 0.90: {})",
            r.posts,
            verdict(r.posts >= 0.9)
        );
    }
    if !r.ingest.is_nan() {
        println!(
        "  {n} rules, interleaved ingest rate with / without, {label}: {:.3} (target >= 0.90: {})",
        r.ingest,
        verdict(r.ingest >= 0.9)
    );
    }
    let (without, with) = r.check;
    if without.is_nan() {
        return;
    }
    // "Unchanged": within a tenth, or 20 µs, of the latency without rules.
    let same = with <= without * 1.1 || with <= without + 20.0;
    println!(
        "  {n} rules, check over HTTP, {label}: {with:.0} µs with, {without:.0} µs without (target unchanged: {})",
        verdict(same)
    );
}
