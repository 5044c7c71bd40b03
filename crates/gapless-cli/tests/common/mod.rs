//! Running the real `gapless` binary in a fresh directory.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// A fresh working directory with its own ledger.
pub struct Gapless {
    pub dir: tempfile::TempDir,
    /// The `--db` value: a SQLite file in `dir`, or a PostgreSQL URL.
    pub db: PathBuf,
    /// When set, commands run in client mode against this server.
    pub url: Option<String>,
}

/// What one run printed and returned.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// `out` succeeded (exit 0, else the test fails showing both streams): its
/// JSON, or null for human output.
pub fn ok(out: &Output) -> Value {
    assert_eq!(
        out.code, 0,
        "stdout {:?} stderr {:?}",
        out.stdout, out.stderr
    );
    serde_json::from_str(&out.stdout).unwrap_or(Value::Null)
}

impl Output {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}): {:?} / {:?}",
                self.stdout, self.stderr
            )
        })
    }
}

impl Gapless {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("ledger.db");
        Gapless { dir, db, url: None }
    }

    /// A ledger in a PostgreSQL schema instead of a SQLite file.
    pub fn postgres(schema: &PgSchema) -> Self {
        let mut g = Gapless::new();
        g.db = PathBuf::from(schema.url());
        g
    }

    pub fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gapless"));
        c.current_dir(self.dir.path())
            .env_remove("GAPLESS_URL")
            .env("GAPLESS_DB", &self.db);
        c
    }

    pub fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S], stdin: Option<&str>) -> Output {
        let mut cmd = self.command();
        if let Some(url) = &self.url {
            cmd.env("GAPLESS_URL", url);
        }
        run(cmd.args(args), stdin)
    }
}

impl Gapless {
    /// Declare `assets` (comma-separated) and set rule `name` on them: a
    /// window every hour from 2025-06-14, delivered to `target`.
    pub fn hourly_rule(&self, name: &str, assets: &str, target: &str) {
        for a in assets.split(',') {
            ok(&self.run(&["asset", "set", a], None));
        }
        ok(&self.run(
            &[
                "rule",
                "set",
                name,
                "--assets",
                assets,
                "--every",
                "1h",
                "--from",
                "2025-06-14",
                "--target",
                target,
            ],
            None,
        ));
    }
}

pub fn run(cmd: &mut Command, stdin: Option<&str>) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gapless");
    {
        let mut pipe = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            // gapless may stop reading early (a bad line, a conflict): a
            // closed pipe is then expected, not a failure of the test.
            if let Err(e) = pipe.write_all(text.as_bytes()) {
                assert_eq!(
                    e.kind(),
                    std::io::ErrorKind::BrokenPipe,
                    "writing stdin: {e}"
                );
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The worked examples of the contract: `docs/conformance/cases.json` (or
/// `GAPLESS_CONFORMANCE`).
pub fn conformance_cases() -> Vec<Value> {
    let path = std::env::var_os("GAPLESS_CONFORMANCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/conformance/cases.json")
        });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the conformance cases at {}: {e}",
            path.display()
        )
    });
    let doc: Value = serde_json::from_str(&text).expect("cases.json is JSON");
    let cases = doc["cases"].as_array().expect("cases").clone();
    assert!(!cases.is_empty(), "no conformance cases");
    cases
}

/// Where `actual` differs from `expected`, checking only the fields that
/// `expected` lists (arrays must match element by element).
pub fn subset_mismatch(expected: &Value, actual: &Value) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().find_map(|(k, ev)| match a.get(k) {
            None => Some(format!("missing field {k:?}")),
            Some(av) => subset_mismatch(ev, av).map(|m| format!("{k}: {m}")),
        }),
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Some(format!("{} items, expected {}: {actual}", a.len(), e.len()));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .find_map(|(i, (ev, av))| subset_mismatch(ev, av).map(|m| format!("[{i}] {m}")))
        }
        (Value::Number(e), Value::Number(a)) => {
            (e.as_f64() != a.as_f64()).then(|| format!("{a}, expected {e}"))
        }
        (e, a) => (e != a).then(|| format!("{a}, expected {e}")),
    }
}

/// A `gapless serve` process on a loopback port of its own, killed on drop.
pub struct Server {
    child: std::process::Child,
    pub url: String,
    /// What it printed to standard error after `listening on`.
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Server {
    /// Serve `g`'s ledger.
    pub fn start(g: &Gapless) -> Server {
        Server::start_with(g, |_| {})
    }

    /// Serve `g`'s ledger with extra settings on the command.
    pub fn start_with(g: &Gapless, configure: impl FnOnce(&mut Command)) -> Server {
        use std::io::BufRead;
        let mut cmd = g.command();
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        configure(&mut cmd);
        let mut child = cmd.spawn().expect("spawn gapless serve");
        let stderr = child.stderr.take().unwrap();
        let mut lines = std::io::BufReader::new(stderr).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("gapless serve exited before listening")
                .expect("read stderr");
            if let Some(rest) = line.strip_prefix("listening on ") {
                break rest.trim().to_string();
            }
        };
        // Keep draining so the server never blocks on a full pipe.
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines {
                match line {
                    Ok(line) => kept.lock().unwrap().push(line),
                    // Not UTF-8: skipped, the pipe is still drained.
                    Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {}
                    Err(_) => break,
                }
            }
        });
        Server { child, url, log }
    }
}

impl Server {
    /// The lines it printed to standard error so far, after `listening on`.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL the server and reap it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Wait up to `limit` for the server to exit; its exit code.
    pub fn wait_exit(&mut self, limit: std::time::Duration) -> Option<i32> {
        let until = std::time::Instant::now() + limit;
        while std::time::Instant::now() < until {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A uniquely named PostgreSQL schema on the test server (`GAPLESS_TEST_PG`,
/// default `postgres://postgres@127.0.0.1:5432/test`), dropped on drop.
pub struct PgSchema {
    base: String,
    pub name: String,
}

impl PgSchema {
    pub fn new() -> PgSchema {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::var("GAPLESS_TEST_PG")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
        let name = format!(
            "gapless_cli_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        PgSchema { base, name }
    }

    /// The `--db` URL of a ledger in this schema.
    pub fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}schema={}", self.base, self.name)
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.base, postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
        }
    }
}
