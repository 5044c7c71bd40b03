//! The benches of the `gapless` binary and its server as a whole: plain
//! binaries (`harness = false`) that run real `gapless` processes and print
//! what they measure beside a baseline measured in the same run, and the
//! targets each figure is held to, `met` or `MISSED`. They live in a crate
//! of their own so that the command line's build needs none of their
//! dependencies (axum, tokio, the PostgreSQL client for the comparisons).
//! The criterion benches of one crate's internals stay in that crate
//! (`gapless-core`'s index, `gapless-store`'s append and judge,
//! `gapless-server`'s ingest).
//!
//! Each runs only under `cargo bench` (`cargo test --benches` and the
//! workspace's build of every target compile them, and they return at
//! once). They run the `gapless` binary built in the same target folder, so
//! build it first, in the same profile; `scripts/bench/run` does both:
//!
//! ```text
//! cargo build --release -p gapless-cli
//! cargo bench -p gapless-bench --bench load
//! ```
//!
//! # Layout
//!
//! - `benches/ledger.rs`: bulk ingest of a year, `check` of a month as a
//!   whole process, against the task-side Python of `scripts/bench/`; many
//!   assets against five on SQLite, and 10,000 interleaved assets against
//!   10 on PostgreSQL with the bytes each event takes.
//! - `benches/load.rs`: `gapless serve` under concurrent producers and
//!   consumers on both backends, and the same gap questions against a
//!   PostgreSQL multirange query, with what a bare round trip costs.
//! - `benches/rules/`: what ten rules cost single-event POSTs and a 1h
//!   rule a large ingest (`main.rs`), and what 10,000 single-asset rules
//!   cost POSTs spread over their assets, a question and an interleaved
//!   ingest (`many.rs`).
//! - `benches/buckets.rs`: the web page's picture of a year.
//! - `benches/assets.rs`: a page of the assets overview of 10,000 assets
//!   against one asset, on both backends.
//! - `benches/retention.rs`: bytes per event on both backends before and
//!   after `gapless prune` of 90%, free space reused, compaction, and a
//!   writer's appends beside the prune.
//! - this library: what they share: the binary ([`gapless`]), time stamps,
//!   a deterministic generator, `gapless serve` processes, the fixed-answer
//!   servers, a blocking client, latency records and the single-event
//!   producers.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gapless_api::CheckAnswer;

/// The environment variable naming another `gapless` binary to bench.
pub const BIN_ENV: &str = "GAPLESS_BIN";

/// The `gapless` binary the benches run: [`BIN_ENV`] if set, otherwise the
/// one cargo built into this bench's target folder. Cargo gives a bench the
/// path of its own package's binaries only, and `gapless` is another
/// package's; a bench runs as `target/PROFILE/deps/NAME-HASH`, beside which
/// `target/PROFILE/gapless` is the command line built in the same profile.
/// When it is missing the bench stops with one line saying how to build it.
pub fn gapless() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os(BIN_ENV).filter(|v| !v.is_empty()) {
            return PathBuf::from(bin);
        }
        let exe = std::env::current_exe().expect("the bench's own path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("a bench runs from target/PROFILE/deps");
        let bin = profile_dir.join(format!("gapless{}", std::env::consts::EXE_SUFFIX));
        if !bin.is_file() {
            let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") => String::new(),
                Some("release") | None => " --release".to_string(),
                Some(other) => format!(" --profile {other}"),
            };
            eprintln!(
                "no gapless binary at {}: build it first with `cargo build{profile} -p \
                 gapless-cli`, or set {BIN_ENV}",
                bin.display()
            );
            std::process::exit(2);
        }
        bin
    })
}

/// `gapless --db DB ARGS...` run to its end, which must succeed (a
/// failure stops the bench with its standard error): its output.
pub fn run_gapless(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new(gapless())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run gapless");
    assert!(
        out.status.success(),
        "gapless {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// 2025-06-01T00:00:00Z: the first slot of every data set.
pub const T0: i64 = 1_748_736_000;
pub const SLOT: i64 = 300;
pub const DAY: i64 = 86_400;

pub fn ts(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).unwrap().to_string()
}

pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How a bench prints a target: `met` or `MISSED`.
pub fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// Which slices [`three_second_slices`] leaves out or withdraws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holes {
    /// Every slice lands.
    None,
    /// Every 2,000th slice is lost, and every 5,000th event withdraws the
    /// slice a hundred before it instead of landing its own: a year with
    /// thousands of gaps, some missing, some retracted.
    LostAndRetracted,
}

/// `total` three-second slices of asset `stream` from 2025-01-01, in
/// order, as NDJSON with ids (ten million are 347 days).
pub fn three_second_slices(path: &std::path::Path, total: u64, holes: Holes) {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let t0 = 1_735_689_600_i64;
    for i in 0..total as i64 {
        let (mut s, mut kind) = (t0 + 3 * i, "landed");
        if holes == Holes::LostAndRetracted {
            if i % 2_000 == 1_999 {
                continue;
            }
            if i % 5_000 == 4_999 {
                (s, kind) = (s - 300, "retracted");
            }
        }
        writeln!(
            out,
            r#"{{"asset":"stream","id":"s{i}","start":"{}","end":"{}","kind":"{kind}"}}"#,
            ts(s),
            ts(s + 3)
        )
        .unwrap();
    }
}

/// A small deterministic generator.
#[derive(Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// A `gapless serve` process, killed when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    pub base: String,
}

impl Server {
    pub fn start(db: &str) -> Server {
        Server::start_with(db, &[])
    }

    /// A server on `db` with more arguments of `gapless serve` (a targets
    /// file).
    pub fn start_with(db: &str, args: &[&str]) -> Server {
        let mut child = Command::new(gapless())
            .args(["serve", "--listen", "127.0.0.1:0", "--db", db])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start gapless serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let base = loop {
            let line = lines
                .next()
                .expect("gapless serve stopped before listening")
                .unwrap();
            if let Some(addr) = line.strip_prefix("listening on ") {
                break addr.trim().to_string();
            }
            eprintln!("server: {line}");
        };
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                eprintln!("server: {line}");
            }
        });
        Server { child, base }
    }

    /// Freeze the server's process (`SIGSTOP`), every thread of it, until
    /// [`Server::resume`]: while another server is measured, nothing of
    /// this one (its deliverer, its deadline passes) runs beside it.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Let a paused server run again (`SIGCONT`).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    /// Stop the server as an operator does (`SIGTERM`) and wait for it to
    /// exit: it finishes what is in flight and closes its ledger, so that
    /// the next process opens a ledger with nothing left to recover (a
    /// killed SQLite server leaves its write-ahead log for the next one).
    pub fn stop(mut self) {
        self.signal("-TERM");
        let status = self.child.wait().expect("wait for gapless serve");
        assert!(status.success(), "gapless serve stopped with {status}");
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal} {pid}: {status}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP server on loopback that answers every request with one fixed
/// JSON body at once: what a round trip costs with no work behind it. Its
/// threads end with the bench's process.
#[derive(Debug)]
pub struct Floor {
    pub base: String,
}

impl Floor {
    pub fn start(body: String) -> Floor {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let answer = answer.clone();
                std::thread::spawn(move || {
                    let _ = conn.set_nodelay(true);
                    let mut buf = vec![0u8; 1 << 16];
                    let mut have = 0;
                    loop {
                        match conn.read(&mut buf[have..]) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => have += n,
                        }
                        // Requests without a body: one ends at its blank line.
                        while let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n")
                        {
                            if conn.write_all(answer.as_bytes()).is_err() {
                                return;
                            }
                            buf.copy_within(end + 4..have, 0);
                            have -= end + 4;
                        }
                    }
                });
            }
        });
        Floor { base }
    }
}

/// The same fixed answer from the framework the server is built on (axum
/// on hyper and tokio, two workers, nothing else), in a process of its own
/// as `gapless serve` is: what a round trip through it costs with no work
/// behind it. The process is this bench's binary, started with
/// [`AXUM_FLOOR`] set; it ends when dropped.
#[derive(Debug)]
pub struct AxumFloor {
    child: Child,
    pub base: String,
}

/// The environment variable that makes a bench binary an [`AxumFloor`]
/// serving its value.
pub const AXUM_FLOOR: &str = "GAPLESS_BENCH_AXUM_FLOOR";

impl AxumFloor {
    pub fn start(body: String) -> AxumFloor {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(AXUM_FLOOR, body)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        AxumFloor {
            child,
            base: format!("http://{}", line.trim()),
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// In a process started by [`AxumFloor::start`]: print the address and
    /// serve until killed. Otherwise return at once.
    pub fn serve_if_asked() {
        let Ok(body) = std::env::var(AXUM_FLOOR) else {
            return;
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            println!("{}", listener.local_addr().unwrap());
            let body: &'static str = Box::leak(body.into_boxed_str());
            let app = axum::Router::new().fallback(move || async move {
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    body,
                )
            });
            axum::serve(listener, app).await.unwrap();
        });
        std::process::exit(0);
    }
}

impl Drop for AxumFloor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A blocking client for the bench's loopback servers. Each step has its
/// own timeout and name resolution none: with a timeout on resolving (as
/// `timeout_global` sets), ureq resolves every request's address on a new
/// thread, even an IP literal of a pooled connection, and the bench
/// measured its own thread spawns (a third of its CPU under load).
pub fn agent() -> ureq::Agent {
    let limit = Some(Duration::from_secs(120));
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(limit)
        .timeout_send_request(limit)
        .timeout_send_body(limit)
        .timeout_recv_response(limit)
        .timeout_recv_body(limit)
        .build()
        .new_agent()
}

/// POST a body; the answer's status and text.
pub fn post(agent: &ureq::Agent, url: &str, content_type: &str, body: &str) -> (u16, String) {
    let mut r = agent
        .post(url)
        .content_type(content_type)
        .send(body)
        .expect("POST");
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

/// PUT a JSON body; anything but 200 fails the bench, naming the answer.
pub fn put(agent: &ureq::Agent, url: &str, body: &str) {
    let mut r = agent
        .put(url)
        .content_type("application/json")
        .send(body)
        .expect("PUT");
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap_or_default();
    assert_eq!(status, 200, "PUT {url}: {text}");
}

pub fn coverage(agent: &ureq::Agent, base: &str, asset: &str, s: i64, e: i64) -> CheckAnswer {
    let url = format!(
        "{base}/v1/assets/{asset}/coverage?start={}&end={}",
        ts(s),
        ts(e)
    );
    let mut r = agent.get(&url).call().expect("GET coverage");
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap();
    assert_eq!(status, 200, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// Latencies (µs) of one kind of operation and how many events they carried.
#[derive(Debug, Default)]
pub struct Lat {
    pub micros: Vec<u64>,
    pub events: u64,
    pub errors: u64,
}

impl Lat {
    /// POST `body` and count it: its latency, and its `events` when
    /// answered 200, else an error (the first one printed, naming `what`).
    pub fn post(
        &mut self,
        agent: &ureq::Agent,
        url: &str,
        content_type: &str,
        body: &str,
        events: u64,
        what: &str,
    ) {
        let t0 = Instant::now();
        let (status, text) = post(agent, url, content_type, body);
        self.micros.push(t0.elapsed().as_micros() as u64);
        if status == 200 {
            self.events += events;
        } else {
            self.errors += 1;
            if self.errors == 1 {
                eprintln!("POST {what}: {status} {text}");
            }
        }
    }
    pub fn merge(&mut self, other: Lat) {
        self.micros.extend(other.micros);
        self.events += other.events;
        self.errors += other.errors;
    }
    pub fn pct(&mut self, p: f64) -> f64 {
        if self.micros.is_empty() {
            return f64::NAN;
        }
        self.micros.sort_unstable();
        let i = ((self.micros.len() as f64 * p) as usize).min(self.micros.len() - 1);
        self.micros[i] as f64 / 1000.0
    }
    pub fn line(&mut self, what: &str, secs: f64) -> String {
        format!(
            "  {what:<44} {:>9.0} events/s  {:>8} requests  p50 {:>7.2} ms  p99 {:>7.2} ms{}",
            self.events as f64 / secs,
            self.micros.len(),
            self.pct(0.5),
            self.pct(0.99),
            if self.errors > 0 {
                format!("  ({} errors)", self.errors)
            } else {
                String::new()
            }
        )
    }
}

/// `threads` producers POSTing single events to `asset` until `deadline`;
/// producer `t`'s `i`-th event covers slot `first + i * threads + t`.
pub fn singles(
    base: &str,
    asset: &str,
    tag: &str,
    threads: i64,
    first: i64,
    deadline: Instant,
) -> Vec<std::thread::JoinHandle<(Lat, i64)>> {
    (0..threads)
        .map(|t| {
            let url = format!("{base}/v1/events");
            let (asset, tag) = (asset.to_string(), tag.to_string());
            std::thread::spawn(move || {
                let agent = agent();
                let mut lat = Lat::default();
                let mut i = 0;
                while Instant::now() < deadline {
                    let s = T0 + (first + i * threads + t) * SLOT;
                    let body = format!(
                        r#"{{"asset":"{asset}","id":"{tag}-{t}-{i}","start":"{}","end":"{}"}}"#,
                        ts(s),
                        ts(s + SLOT)
                    );
                    lat.post(&agent, &url, "application/json", &body, 1, "single");
                    i += 1;
                }
                (lat, first + i * threads)
            })
        })
        .collect()
}

/// Wait for every thread and collect what each returned.
pub fn join<T>(handles: Vec<std::thread::JoinHandle<T>>) -> Vec<T> {
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}
