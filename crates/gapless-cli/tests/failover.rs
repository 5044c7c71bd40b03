//! PostgreSQL failover under load (SPEC §5, several hosts): a primary and a
//! synchronous streaming standby made with `initdb` and `pg_basebackup -R`,
//! one `gapless serve` given both hosts with `target_session_attrs=
//! read-write`, four producers posting events with ids and a quarter-hour
//! rule delivering to a webhook. The primary's processes are
//! killed with SIGKILL mid-load and the standby promoted; the same server,
//! never restarted, finds the new primary by itself.
//!
//! Checked afterwards, on the new primary: every acknowledged event is
//! there, coverage is exactly what the producers wrote, each window fired
//! once and its firing reached the receiver (once in effect: by its
//! `Idempotency-Key`), and the producers saw only 2xx and 503 answers or
//! refused connections, never another status. The time without a primary
//! as the producers saw it is printed.

mod common;
#[path = "common/pg_cluster.rs"]
mod pg_cluster;
#[path = "common/receiver.rs"]
mod receiver;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{ok, Gapless, Server};
use pg_cluster::{wait_until, PgCluster};
use receiver::{Behaviour, Receiver};
use serde_json::{json, Value};

/// Producers posting at once.
const PRODUCERS: usize = 4;

/// Events each producer posts: one-minute slices, producer `p` posting
/// minute `4k + p`, so together they tile `PRODUCERS * PER_PRODUCER`
/// minutes from the origin.
const PER_PRODUCER: usize = 240;

/// A producer's pause between acknowledged events, so that the load spans
/// the crash instead of finishing before it.
const PACE: Duration = Duration::from_millis(15);

/// The share of the events acknowledged when the primary is killed: the
/// crash comes mid-load however fast the machine is.
const CRASH_AT_EIGHTH: usize = 8;

/// The pause before posting an event again after a 503 or a refused
/// connection.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// The first minute the producers write.
const ORIGIN: &str = "2025-06-14T00:00:00Z";

fn minute(m: usize) -> String {
    let t: jiff::Timestamp = ORIGIN.parse().unwrap();
    let t = t + jiff::SignedDuration::from_mins(m as i64);
    t.to_string()
}

/// What the producers saw.
#[derive(Default)]
struct Seen {
    /// Acknowledged event ids, and when each was acknowledged.
    acked: BTreeMap<String, Instant>,
    /// Answers by status (0: no answer: connection refused or reset).
    statuses: BTreeMap<u16, usize>,
    /// Answers other than 2xx and 503, with their bodies.
    unexpected: Vec<String>,
}

#[test]
fn a_promoted_standby_takes_over_without_losing_an_acknowledged_event() {
    let primary = PgCluster::start_primary();
    let standby = PgCluster::standby_of(&primary);
    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write&connect_timeout=2",
        primary.port, standby.port
    );
    let mut g = Gapless::new();
    g.db = url.clone().into();

    let rx = Receiver::start(None, Behaviour::default());
    let targets = g.dir.path().join("targets.toml");
    std::fs::write(
        &targets,
        format!(
            "poll = \"100ms\"\n[[target]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"{}/hook\"\n",
            rx.url
        ),
    )
    .unwrap();
    ok(&g.run(&["asset", "set", "orders"], None));
    ok(&g.run(
        &[
            "rule",
            "set",
            "orders_15m",
            "--assets",
            "orders",
            "--every",
            "15m",
            "--from",
            ORIGIN,
            "--target",
            "hook",
        ],
        None,
    ));
    let server = Server::start_with(&g, |c| {
        c.arg("--targets-file").arg(&targets);
    });

    let seen = Arc::new(Mutex::new(Seen::default()));
    let posted = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (seen, posted, stop) = (seen.clone(), posted.clone(), stop.clone());
            let events = format!("{}/v1/events", server.url);
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(40)))
                    .build()
                    .into();
                for k in 0..PER_PRODUCER {
                    let m = k * PRODUCERS + p;
                    let id = format!("p{p}-{k}");
                    let body = json!({"asset": "orders", "start": minute(m), "end": minute(m + 1), "id": id});
                    loop {
                        assert!(!stop.load(Ordering::Relaxed), "stopped before {id} was acknowledged");
                        let answer = agent
                            .post(&events)
                            .header("content-type", "application/json")
                            .send(body.to_string());
                        let status = match answer {
                            Ok(mut r) => {
                                let status = r.status().as_u16();
                                if status != 200 && status != 503 {
                                    let text = r.body_mut().read_to_string().unwrap_or_default();
                                    seen.lock().unwrap().unexpected.push(format!("{status} {text}"));
                                }
                                status
                            }
                            Err(_) => 0,
                        };
                        let mut s = seen.lock().unwrap();
                        *s.statuses.entry(status).or_default() += 1;
                        if status == 200 {
                            s.acked.insert(id.clone(), Instant::now());
                            break;
                        }
                        drop(s);
                        std::thread::sleep(RETRY_PAUSE);
                    }
                    posted.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(PACE);
                }
            })
        })
        .collect();

    // The crash comes while the producers are writing.
    let total = PRODUCERS * PER_PRODUCER;
    wait_until(Duration::from_secs(60), || {
        posted.load(Ordering::Relaxed) >= total / CRASH_AT_EIGHTH
    });
    let before_crash = posted.load(Ordering::Relaxed);
    assert!(
        before_crash >= total / CRASH_AT_EIGHTH && before_crash < total,
        "the crash must come mid-load: {before_crash} events were acknowledged before it"
    );
    let crashed_at = Instant::now();
    primary.crash();
    standby.promote();
    let promoted_after = crashed_at.elapsed();

    let finished = wait_until(Duration::from_secs(120), || {
        posted.load(Ordering::Relaxed) == PRODUCERS * PER_PRODUCER
    });
    stop.store(!finished, Ordering::Relaxed);
    for p in producers {
        p.join().expect("a producer failed");
    }
    assert!(
        finished,
        "the producers did not finish within 120 s after the failover"
    );
    let seen = std::mem::take(&mut *seen.lock().unwrap());

    // The longest time between two acknowledgements around the crash: what
    // the producers saw as the time without a primary.
    let mut acks: Vec<Instant> = seen.acked.values().copied().collect();
    acks.sort();
    let outage = acks
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .expect("acknowledgements");
    println!(
        "failover: {} events acknowledged ({before_crash} before the crash), promotion took {:.2} s, \
         the producers saw no acknowledgement for {:.2} s; answers by status {:?}; whole run {:.1} s",
        seen.acked.len(),
        promoted_after.as_secs_f64(),
        outage.as_secs_f64(),
        seen.statuses,
        started.elapsed().as_secs_f64()
    );
    assert!(
        seen.unexpected.is_empty(),
        "answers other than 200 and 503 during the failover: {:?}",
        seen.unexpected
    );
    assert_eq!(seen.acked.len(), PRODUCERS * PER_PRODUCER);

    // Every acknowledged event is on the new primary, read through the
    // same server.
    let client = {
        let mut c = Gapless::new();
        c.url = Some(server.url.clone());
        c
    };
    let mut stored = BTreeSet::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = vec!["events", "orders", "--json", "--limit", "1000"];
        let cursor;
        if let Some(a) = &after {
            cursor = a.clone();
            args.extend(["--after", cursor.as_str()]);
        }
        let page = ok(&client.run(&args, None));
        for e in page["events"].as_array().expect("events") {
            stored.insert(e["id"].as_str().expect("an id").to_string());
        }
        match page["next"].as_str() {
            Some(n) => after = Some(n.to_string()),
            None => break,
        }
    }
    let acked: BTreeSet<String> = seen.acked.keys().cloned().collect();
    let missing: Vec<_> = acked.difference(&stored).collect();
    assert!(
        missing.is_empty(),
        "acknowledged but not on the new primary: {missing:?}"
    );

    // Coverage is exactly the minutes written.
    let end = minute(PRODUCERS * PER_PRODUCER);
    let check = ok(&client.run(
        &[
            "check", "orders", "--start", ORIGIN, "--end", &end, "--json",
        ],
        None,
    ));
    assert_eq!(
        check["covered_ratio"],
        json!(1.0),
        "coverage after the failover: {check}"
    );
    assert_eq!(
        check["missing"],
        json!([]),
        "coverage after the failover: {check}"
    );

    // Each quarter hour fired once, and each firing reached the receiver
    // once in effect.
    let windows = PRODUCERS * PER_PRODUCER / 15;
    let firings = |c: &Gapless| -> Vec<Value> {
        ok(&c.run(&["firings", "--json", "--limit", "1000"], None))["firings"]
            .as_array()
            .unwrap()
            .clone()
    };
    let delivered = wait_until(Duration::from_secs(60), || {
        let f = firings(&client);
        f.len() >= windows && f.iter().all(|f| f["delivery"]["state"] == "delivered")
    });
    let f = firings(&client);
    assert!(
        delivered,
        "not every firing was delivered after the failover: {f:#?}"
    );
    let keys: BTreeSet<&str> = f.iter().map(|f| f["key"].as_str().unwrap()).collect();
    assert_eq!(f.len(), windows, "one firing per complete window: {f:#?}");
    assert_eq!(keys.len(), windows, "no window fired twice");
    let received = rx.received();
    let by_key: BTreeSet<String> = received.iter().filter_map(|r| r.key.clone()).collect();
    assert_eq!(
        by_key.len(),
        windows,
        "the receiver got each firing (by Idempotency-Key) once in effect; {} requests",
        received.len()
    );
    println!(
        "failover: {windows} firings, {} requests to the receiver ({} sent again after an unknown outcome)",
        received.len(),
        received.len() - by_key.len()
    );
}
