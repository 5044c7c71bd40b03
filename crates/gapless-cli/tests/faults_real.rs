//! Real faults under a real `gapless serve`: its PostgreSQL killed
//! (`pg_ctl stop -m immediate`) and started again during load, and a SQLite
//! ledger on a small tmpfs filled up. Faults are 503 with a message saying
//! which and naming no connection details, never 4xx; nothing acknowledged
//! is lost; the server recovers without a restart; the command line exits 2
//! with the same words.

mod common;
#[path = "common/pg_cluster.rs"]
mod pg_cluster;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Gapless, Server};
use gapless_core::Interval;
use pg_cluster::{poll_until, wait_until, PgCluster};
use serde_json::Value;

const DAY0: i64 = 1_748_736_000_000_000; // 2025-06-01T00:00:00Z in µs
const MINUTE: i64 = 60_000_000;

/// The `n`-th minute from 2025-06-01.
fn minute(n: i64) -> Interval {
    Interval::from_micros(DAY0 + n * MINUTE, DAY0 + (n + 1) * MINUTE).unwrap()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .new_agent()
}

/// `method path` with `body` (JSON when not empty): the status and body,
/// or why there was no answer.
fn send(base: &str, method: &str, path: &str, body: &str) -> Result<(u16, String), String> {
    let request = ureq::http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .header("Connection", "close")
        .header("Content-Type", "application/json")
        .body(body.as_bytes())
        .unwrap();
    let mut response = agent()
        .run(request)
        .map_err(|e| format!("{method} {path}: no answer: {e}"))?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("{method} {path}: body: {e}"))?;
    Ok((status, text))
}

fn get_json(base: &str, path: &str) -> Value {
    let (status, body) = send(base, "GET", path, "").unwrap();
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// Every event of `asset`, page by page.
fn all_events(base: &str, asset: &str) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = String::new();
    loop {
        let page = get_json(
            base,
            &format!("/v1/assets/{asset}/events?limit=1000{after}"),
        );
        events.extend(page["events"].as_array().unwrap().iter().cloned());
        match page["next"].as_str() {
            Some(n) => after = format!("&after={n}"),
            None => return events,
        }
    }
}

/// The missing intervals of `asset` over `range`.
fn missing(base: &str, asset: &str, range: Interval) -> Vec<Interval> {
    let v = get_json(
        base,
        &format!(
            "/v1/assets/{asset}/coverage?start={}&end={}",
            range.start(),
            range.end()
        ),
    );
    serde_json::from_value(v["missing"].clone()).unwrap()
}

/// What the producers saw.
#[derive(Default)]
struct Tally {
    /// Acknowledged events: id and interval.
    acked: Vec<(String, Interval)>,
    /// When the last acknowledgement came.
    last_ack: Option<Instant>,
    /// 503 answers.
    unavailable: usize,
    /// Anything else that is not a 2xx: status and body (or no answer).
    wrong: Vec<String>,
}

/// An error body that names a connection detail or does not say what
/// happened.
fn leak(body: &str, forbidden: &[&str], says: &str) -> Option<String> {
    let v: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(_) => return Some(format!("not JSON: {body}")),
    };
    let msg = v["error"].as_str().unwrap_or_default();
    if !msg.contains(says) {
        return Some(format!("the message does not say {says:?}: {body}"));
    }
    forbidden
        .iter()
        .find(|f| body.contains(*f))
        .map(|f| format!("the body names {f:?}: {body}"))
}

#[test]
fn postgres_killed_and_started_again_under_load_loses_nothing_acknowledged() {
    const PRODUCERS: i64 = 4;
    let cluster = PgCluster::start();
    cluster.psql("postgres", "CREATE DATABASE outage_db");
    // Fewer connections than producers: a connection the outage leaked from
    // the pool's count would leave the writes waiting after the recovery.
    let url = cluster.url(
        "outage_db",
        "schema=outage_schema&connect_timeout=5&pool_size=3",
    );
    let port = cluster.port.to_string();
    let forbidden = [
        "127.0.0.1",
        port.as_str(),
        "postgres",
        "outage_db",
        "outage_schema",
    ];
    let mut g = Gapless::new();
    g.db = url.clone().into();
    let server = Server::start(&g);
    let base = server.url.clone();

    let tally = Arc::new(Mutex::new(Tally::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (base, tally, stop) = (base.clone(), tally.clone(), stop.clone());
            let forbidden: Vec<String> = forbidden.iter().map(|s| s.to_string()).collect();
            std::thread::spawn(move || {
                let forbidden: Vec<&str> = forbidden.iter().map(String::as_str).collect();
                let mut k = 0;
                // Bounded: at most this many requests, or until told.
                for _ in 0..20_000 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // The same event again until it is acknowledged (a 503
                    // after a lost commit may have stored it: then it is a
                    // duplicate).
                    let id = format!("p{p}-{k}");
                    let iv = minute(p * 100_000 + k);
                    let body = format!(
                        r#"{{"asset":"load","id":"{id}","start":"{}","end":"{}"}}"#,
                        iv.start(),
                        iv.end()
                    );
                    match send(&base, "POST", "/v1/events", &body) {
                        Ok((200..=299, _)) => {
                            let mut t = tally.lock().unwrap();
                            t.acked.push((id, iv));
                            t.last_ack = Some(Instant::now());
                            k += 1;
                        }
                        Ok((503, text)) => {
                            let problem = leak(&text, &forbidden, "unavailable");
                            let mut t = tally.lock().unwrap();
                            t.unavailable += 1;
                            t.wrong.extend(problem.map(|p| format!("503 {p}")));
                            drop(t);
                            // Pacing while the database is down.
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        Ok((status, text)) => {
                            tally.lock().unwrap().wrong.push(format!("{status} {text}"));
                        }
                        Err(e) => tally.lock().unwrap().wrong.push(e),
                    }
                }
            })
        })
        .collect();
    let acked = || tally.lock().unwrap().acked.len();
    let unavailable = || tally.lock().unwrap().unavailable;

    let range = Interval::from_micros(DAY0, DAY0 + 400_000 * MINUTE).unwrap();
    // A stop that ends the sessions with an error, then a crash.
    for mode in ["fast", "immediate"] {
        let enough = acked() + 40;
        let faults = unavailable() + 20;
        assert!(
            wait_until(Duration::from_secs(10), || acked() >= enough),
            "-m {mode}: too few acknowledgements before the fault: {}",
            acked()
        );
        cluster.stop(mode);
        let down = Instant::now();
        assert!(
            wait_until(Duration::from_secs(10), || unavailable() >= faults),
            "-m {mode}: no 503 while the database is down: {} acknowledged",
            acked()
        );
        // Reads and liveness while it is down.
        let (status, body) = send(&base, "GET", "/healthz", "").unwrap();
        assert_eq!(status, 200, "/healthz while the database is down: {body}");
        let (status, body) = send(
            &base,
            "GET",
            &format!(
                "/v1/assets/load/coverage?start={}&end={}",
                range.start(),
                range.end()
            ),
            "",
        )
        .unwrap();
        assert_eq!(status, 503, "a read while the database is down: {body}");
        assert_eq!(leak(&body, &forbidden, "unavailable"), None);
        // The command line: exit 2, the ledger is unavailable, no details.
        let out = g.run(
            &[
                "--db",
                &url,
                "check",
                "load",
                "--start",
                "2025-06-01",
                "--end",
                "2025-06-02",
            ],
            None,
        );
        assert_eq!(out.code, 2, "check with the database down: {out:?}");
        assert!(
            out.stderr.contains("unavailable") && out.stderr.lines().count() == 1,
            "check with the database down: {:?}",
            out.stderr
        );
        for f in forbidden {
            assert!(
                !out.stderr.contains(f),
                "the message names {f:?}: {:?}",
                out.stderr
            );
        }
        // And a write: nothing of the file is stored.
        let file = g.dir.path().join("down.ndjson");
        std::fs::write(&file, batch("load", "down", 900_000, 3, 10)).unwrap();
        let out = g.run(&["--db", &url, "ingest", file.to_str().unwrap()], None);
        assert_eq!(out.code, 2, "ingest with the database down: {out:?}");
        assert!(
            out.stderr.contains("unavailable") && out.stderr.lines().count() == 1,
            "ingest with the database down: {:?}",
            out.stderr
        );
        for f in forbidden {
            assert!(
                !out.stderr.contains(f),
                "the message names {f:?}: {:?}",
                out.stderr
            );
        }
        let acked_before = acked();

        cluster.restart();
        let up = Instant::now();
        let recovered = poll_until(Duration::from_secs(15), || {
            let t = tally.lock().unwrap();
            t.last_ack.filter(|&at| at > up).map(|at| at - up)
        });
        let recovered = recovered.unwrap_or_else(|| {
            panic!(
                "-m {mode}: no write succeeded within 15 s of the database's return ({} answers 503)",
                unavailable()
            )
        });
        eprintln!(
            "-m {mode}: {acked_before} acknowledged before the restart, {} answers 503 in all, \
             over {:.1?} down; writes again {:.1?} after the start",
            unavailable(),
            up - down,
            recovered
        );
    }
    // Writes go on after the recovery.
    let more = acked() + 40;
    assert!(
        wait_until(Duration::from_secs(10), || acked() >= more),
        "writes did not go on after the recovery"
    );
    stop.store(true, Ordering::Relaxed);
    for p in producers {
        p.join().unwrap();
    }
    let (status, _) = send(&base, "GET", "/healthz", "").unwrap();
    assert_eq!(status, 200);

    let tally = tally.lock().unwrap();
    assert!(
        tally.wrong.is_empty(),
        "answers other than 2xx and a proper 503: {:#?}",
        &tally.wrong[..tally.wrong.len().min(10)]
    );
    eprintln!(
        "{} acknowledged, {} answers 503",
        tally.acked.len(),
        tally.unavailable
    );
    // The details went to the log.
    assert!(
        server
            .log()
            .iter()
            .any(|l| l.contains("unavailable") && l.contains("outage_db")),
        "the server's log does not name the unavailable database"
    );
    // Every acknowledged event is stored, once, and covered.
    let stored: std::collections::HashMap<String, Value> = all_events(&base, "load")
        .into_iter()
        .map(|e| (e["id"].as_str().unwrap().to_string(), e))
        .collect();
    for (id, iv) in &tally.acked {
        let e = stored
            .get(id)
            .unwrap_or_else(|| panic!("acknowledged event {id} is not stored"));
        assert_eq!(
            (e["start"].as_str(), e["end"].as_str()),
            (
                Some(iv.start().to_string().as_str()),
                Some(iv.end().to_string().as_str())
            ),
            "{id}"
        );
    }
    let gaps = missing(&base, "load", range);
    for (id, iv) in &tally.acked {
        assert!(
            !gaps.iter().any(|g| g.overlaps(*iv)),
            "acknowledged event {id} ({iv:?}) is not covered"
        );
    }
    drop(server);
}

/// A small tmpfs mounted for one test, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mount a tmpfs of `size` (as `mount -o size=` reads it). Fails the
    /// test, saying why, where mounting is not permitted: never skipped.
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::Builder::new()
            .prefix("gapless-tmpfs-")
            .tempdir()
            .unwrap();
        let out = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "cannot mount a tmpfs at {} for the full-disk test (it needs root or \
             CAP_SYS_ADMIN, as CI has): {}",
            dir.path().display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Bytes free on it.
    fn free(&self) -> u64 {
        let out = std::process::Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(self.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("df: {}", String::from_utf8_lossy(&out.stdout)))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy: a process that still has a file open there lets go later.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// An NDJSON batch of `n` events of `asset` from minute `first`, each with
/// `pad` bytes of `extra`.
fn batch(asset: &str, tag: &str, first: i64, n: i64, pad: usize) -> String {
    (first..first + n)
        .map(|m| {
            let iv = minute(m);
            // Letters that do not compress (PostgreSQL compresses long
            // values): a xorshift of the minute.
            let mut x = (m as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let filler: String = (0..pad)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    char::from(b'a' + (x % 26) as u8)
                })
                .collect();
            format!(
                "{{\"asset\":\"{asset}\",\"id\":\"{tag}-{m}\",\"start\":\"{}\",\"end\":\"{}\",\
                 \"extra\":{{\"pad\":\"{filler}\"}}}}\n",
                iv.start(),
                iv.end()
            )
        })
        .collect()
}

fn post_ndjson(base: &str, body: &str) -> (u16, String) {
    let mut response = agent()
        .post(format!("{base}/v1/events"))
        .header("Connection", "close")
        .header("Content-Type", "application/x-ndjson")
        .send(body)
        .unwrap_or_else(|e| panic!("POST /v1/events: no answer: {e}"));
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

/// The event count of `asset` in the ledger at `db`, through the command
/// line.
fn count(g: &Gapless, db: &str, asset: &str) -> u64 {
    let out = g.run(&["--db", db, "asset", "show", asset, "--json"], None);
    assert_eq!(out.code, 0, "asset show: {}", out.stderr);
    out.json()["events"].as_u64().unwrap()
}

#[test]
fn a_full_disk_is_503_storage_full_and_writes_resume_once_space_is_freed() {
    let fs = Tmpfs::mount("6m");
    let db = fs.path().join("ledger.db");
    fill_and_free(&fs, db.to_str().unwrap());
}

/// A PostgreSQL ledger whose tables live on a small tmpfs (a tablespace:
/// the server's own WAL stays on the big disk, so running out of room is
/// the tables' `could not extend file`, SQLSTATE 53100, not a crash of the
/// server).
#[test]
fn a_full_postgres_tablespace_is_503_storage_full_and_writes_resume() {
    let fs = Tmpfs::mount("16m");
    let cluster = PgCluster::start();
    let ts = fs.path().join("ts");
    std::fs::create_dir(&ts).unwrap();
    pg_cluster::give_to_postgres(&ts);
    cluster.psql(
        "postgres",
        &format!("CREATE TABLESPACE small LOCATION '{}'", ts.display()),
    );
    cluster.psql("postgres", "CREATE DATABASE full_db TABLESPACE small");
    let url = cluster.url("full_db", "schema=full_schema");
    fill_and_free(&fs, &url);
    drop(cluster);
}

/// The ledger at `db` (a file on `fs`, or a database whose tables are on
/// it), served: filled through the server until full, asked while full
/// (server and command line), then given room again.
fn fill_and_free(fs: &Tmpfs, db: &str) {
    let g = Gapless::new();
    let db_arg = db.to_string();
    let mut served = Gapless::new();
    served.db = db.into();
    let server = Server::start(&served);
    let base = server.url.clone();

    // Acknowledged before the disk fills.
    let (status, body) = post_ndjson(&base, &batch("disk", "early", 0, 50, 100));
    assert_eq!(status, 200, "{body}");
    let mut acked: u64 = 50;

    // Fill the disk but for a little, with a file of our own.
    let filler = fs.path().join("filler");
    let room = fs.free().saturating_sub(1024 * 1024);
    std::fs::write(&filler, vec![0u8; room as usize]).unwrap();

    // Write until it is full: 2xx until then, then 503 saying so.
    let mut full = 0;
    let mut first = 1_000;
    for _ in 0..500 {
        let (status, body) = post_ndjson(&base, &batch("disk", "fill", first, 20, 2_000));
        match status {
            200 => {
                acked += 20;
                first += 20;
            }
            503 => {
                let v: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(
                    v,
                    serde_json::json!({"error": "the ledger's storage is full", "detail": null}),
                    "a write to a full disk"
                );
                full += 1;
                if full == 5 {
                    break;
                }
            }
            other => panic!("a write to a filling disk answered {other}: {body}"),
        }
    }
    assert_eq!(
        full, 5,
        "the disk never filled ({acked} events acknowledged)"
    );
    eprintln!(
        "full after {acked} events acknowledged, {} bytes free",
        fs.free()
    );
    // Reads and liveness go on; what was acknowledged is there.
    let (status, _) = send(&base, "GET", "/healthz", "").unwrap();
    assert_eq!(status, 200);
    assert_eq!(all_events(&base, "disk").len() as u64, acked);

    // The command line on the full disk: exit 2, storage full, nothing of
    // the batch stored.
    let big = g.dir.path().join("big.ndjson");
    std::fs::write(&big, batch("disk", "big", 100_000, 2_000, 500)).unwrap();
    let before = count(&g, &db_arg, "disk");
    assert_eq!(before, acked);
    let out = g.run(&["--db", &db_arg, "ingest", big.to_str().unwrap()], None);
    assert_eq!(out.code, 2, "ingest on a full disk: {out:?}");
    assert!(
        out.stderr.contains("storage is full") && out.stderr.trim_end().lines().count() == 1,
        "ingest on a full disk: {:?}",
        out.stderr
    );
    assert_eq!(
        count(&g, &db_arg, "disk"),
        before,
        "a failed ingest stored events"
    );

    // Space again: writes succeed without a restart.
    std::fs::remove_file(&filler).unwrap();
    let (status, body) = post_ndjson(&base, &batch("disk", "after", 500_000, 20, 100));
    assert_eq!(status, 200, "a write once space is free: {body}");
    acked += 20;
    let out = g.run(&["--db", &db_arg, "ingest", big.to_str().unwrap()], None);
    assert_eq!(out.code, 0, "ingest once space is free: {}", out.stderr);
    acked += 2_000;
    let events = all_events(&base, "disk");
    assert_eq!(events.len() as u64, acked);
    drop(server);
}
