//! Delivering firings to a real webhook receiver (SPEC §7, targets), by
//! `gapless deliver --once` and by `gapless serve --targets-file`: each
//! firing delivered once in effect, signed and keyed; retries with
//! backoff; `failed` after the last attempt and `--retry-failed`; a
//! timeout tried again; a target not in the file kept pending; and three
//! `serve` replicas on one PostgreSQL schema, one killed mid-delivery.

mod common;
#[path = "common/receiver.rs"]
mod receiver;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{ok, Gapless, PgSchema, Server};
use receiver::{Behaviour, Receiver};
use serde_json::Value;

const SECRET: &str = "a-webhook-secret-of-some-length";

/// A targets file in `g`'s directory.
fn targets(g: &Gapless, name: &str, text: &str) -> PathBuf {
    let path = g.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A webhook target `hook` at `url`, with `more` settings.
fn hook(url: &str, more: &str) -> String {
    format!(
        "[[target]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"{url}\"\nsecret = \"{SECRET}\"\n{more}"
    )
}

/// Land `asset` over hours `[from, to)` of 2025-06-14.
fn land(g: &Gapless, asset: &str, from: u32, to: u32, extra: &[&str]) {
    let at = |h: u32| format!("2025-06-14T{h:02}:00Z");
    let mut args = vec![
        "emit".to_string(),
        asset.to_string(),
        "--start".into(),
        at(from),
        "--end".into(),
        at(to),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    ok(&g.run(&args, None));
}

fn firings(g: &Gapless) -> Vec<Value> {
    ok(&g.run(&["firings", "--json"], None))["firings"]
        .as_array()
        .unwrap()
        .clone()
}

/// Wait up to `limit` until the firings satisfy `pred`.
fn wait_firings(g: &Gapless, limit: Duration, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let until = Instant::now() + limit;
    loop {
        let f = firings(g);
        if pred(&f) {
            return f;
        }
        assert!(
            Instant::now() < until,
            "firings not as wanted within {limit:?}: {f:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A server's `/metrics` text.
fn metrics(server: &Server) -> String {
    ureq::get(format!("{}/metrics", server.url))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap()
}

fn state(f: &Value) -> &str {
    f["delivery"]["state"].as_str().unwrap()
}

fn deliver_once(g: &Gapless, file: &std::path::Path, extra: &[&str]) -> common::Output {
    let mut args = vec![
        "deliver",
        "--once",
        "--targets-file",
        file.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = g.run(&args, None);
    assert_eq!(out.code, 0, "deliver --once: {out:?}");
    out
}

/// `deliver --once` sends each complete firing once, signed, with its
/// identity as the key and the firing JSON as the body; an `incomplete`
/// firing (not a kind the target takes) is delivered unsent; a second run
/// sends nothing.
#[test]
fn deliver_once_sends_each_firing_once_signed() {
    let rx = Receiver::start(Some(SECRET), Behaviour::default());
    let g = Gapless::new();
    g.hourly_rule("orders_hourly", "orders", "hook");
    land(&g, "orders", 10, 12, &[]);
    ok(&g.run(
        &[
            "emit",
            "orders",
            "--start",
            "2025-06-14T10:10Z",
            "--end",
            "2025-06-14T10:20Z",
            "--retract",
        ],
        None,
    ));
    let file = targets(&g, "targets.toml", &hook(&format!("{}/hook", rx.url), ""));
    deliver_once(&g, &file, &[]);
    let got = rx.received();
    assert_eq!(got.len(), 2, "{got:#?}");
    let fired = firings(&g);
    assert_eq!(fired.len(), 3, "{fired:#?}");
    let ledger = got[0].key.as_deref().unwrap().split(':').next().unwrap();
    assert!(!ledger.is_empty());
    for (r, f) in got.iter().zip(&fired) {
        assert_eq!(r.path, "/hook");
        assert!(r.signed, "bad signature: {r:?}");
        assert_eq!(
            r.key.as_deref(),
            Some(format!("{ledger}:orders_hourly:{}", f["seq"]).as_str())
        );
        for field in [
            "seq",
            "rule",
            "kind",
            "window",
            "key",
            "generation",
            "recorded_at",
        ] {
            assert_eq!(r.body[field], f[field], "{field}");
        }
        assert_eq!(r.body["delivery"]["state"], "pending");
        assert_eq!(r.body["delivery"]["target"], "hook");
        assert_eq!(r.status, 200);
    }
    assert_eq!(fired[0]["key"], "2025-06-14T10:00:00");
    assert_eq!(fired[1]["key"], "2025-06-14T11:00:00");
    for f in &fired[..2] {
        assert_eq!(state(f), "delivered");
        assert_eq!(f["delivery"]["attempts"], 1);
        assert_eq!(f["delivery"]["last_error"], Value::Null);
    }
    assert_eq!(fired[2]["kind"], "incomplete");
    assert_eq!(state(&fired[2]), "delivered", "not a kind hook takes");
    assert_eq!(fired[2]["delivery"]["attempts"], 0);
    deliver_once(&g, &file, &[]);
    assert_eq!(rx.received().len(), 2, "nothing is sent twice");
}

/// Through `serve --targets-file`: two 500s, then 200, with the waits
/// doubling; a target that always fails makes the firing `failed` after
/// `max_attempts`, and `deliver --once --retry-failed` delivers it.
#[test]
fn retries_back_off_then_fail_and_retry_failed() {
    let rx = Receiver::start(
        Some(SECRET),
        Behaviour {
            fail_first: 2,
            ..Behaviour::default()
        },
    );
    let g = Gapless::new();
    g.hourly_rule("orders_hourly", "orders", "hook");
    let file = targets(
        &g,
        "targets.toml",
        &format!(
            "poll = \"50ms\"\nlease = \"4s\"\n{}",
            hook(
                &rx.url,
                "max_attempts = 3\nbackoff = { base = \"300ms\", max = \"10s\" }\ntimeout = \"1s\"\n"
            )
        ),
    );
    let mut server = Server::start_with(&g, |c| {
        c.arg("--targets-file").arg(&file);
    });
    land(&g, "orders", 10, 11, &[]);
    let got = rx.wait_for(Duration::from_secs(10), |r| {
        r.iter().any(|x| x.status == 200)
    });
    let statuses: Vec<u16> = got.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [500, 500, 200]);
    assert!(got.iter().all(|r| r.key == got[0].key && r.signed));
    let (first, second) = (got[1].at - got[0].at, got[2].at - got[1].at);
    assert!(first >= Duration::from_millis(300), "{first:?}");
    assert!(second >= Duration::from_millis(600), "{second:?}");
    let f = wait_firings(&g, Duration::from_secs(5), |f| state(&f[0]) == "delivered");
    assert_eq!(f[0]["delivery"]["attempts"], 3);
    let text = metrics(&server);
    assert!(
        text.contains("gapless_deliveries_total{outcome=\"retried\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("gapless_deliveries_total{outcome=\"delivered\"} 1"),
        "{text}"
    );

    rx.set(Behaviour {
        fail_all: true,
        ..Behaviour::default()
    });
    land(&g, "orders", 11, 12, &[]);
    let f = wait_firings(&g, Duration::from_secs(10), |f| {
        f.len() == 2 && state(&f[1]) == "failed"
    });
    assert_eq!(f[1]["delivery"]["attempts"], 3);
    let error = f[1]["delivery"]["last_error"].as_str().unwrap();
    assert!(error.contains("HTTP 500"), "{error}");
    assert!(error.contains("gave up after 3 attempts"), "{error}");
    let sent = rx.received().len();
    assert_eq!(sent, 6);
    let text = metrics(&server);
    assert!(
        text.contains("gapless_deliveries_total{outcome=\"failed\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("gapless_deliveries_total{outcome=\"retried\"} 4"),
        "{text}"
    );
    server.kill();

    rx.set(Behaviour::default());
    deliver_once(&g, &file, &[]);
    assert_eq!(
        rx.received().len(),
        sent,
        "a failed firing waits for --retry-failed"
    );
    deliver_once(&g, &file, &["--retry-failed"]);
    let f = firings(&g);
    assert_eq!(state(&f[1]), "delivered", "{f:#?}");
    assert_eq!(f[1]["delivery"]["attempts"], 1);
    let last = rx.received();
    assert_eq!(last.len(), sent + 1);
    assert_eq!(last[sent].status, 200);
    assert_eq!(last[sent].key, last[3].key);
}

/// A request that outlasts the target's timeout is tried again; the
/// receiver answered 2xx once; a firing whose target is not in the file
/// stays pending, saying so.
#[test]
fn timeouts_are_tried_again_and_unknown_targets_wait() {
    let rx = Receiver::start(
        Some(SECRET),
        Behaviour {
            hang_first: 1,
            hang: Duration::from_millis(2500),
            ..Behaviour::default()
        },
    );
    let g = Gapless::new();
    g.hourly_rule("orders_hourly", "orders", "hook");
    g.hourly_rule("elsewhere", "orders", "nosuch");
    let file = targets(
        &g,
        "targets.toml",
        &format!(
            "poll = \"50ms\"\nlease = \"2s\"\n{}",
            hook(
                &rx.url,
                "timeout = \"500ms\"\nbackoff = { base = \"100ms\", max = \"1s\" }\n"
            )
        ),
    );
    let _server = Server::start_with(&g, |c| {
        c.arg("--targets-file").arg(&file);
    });
    land(&g, "orders", 10, 11, &[]);
    let got = rx.wait_for(Duration::from_secs(10), |r| {
        r.len() == 2 && r.iter().any(|x| x.status == 200)
    });
    assert_eq!(got[0].key, got[1].key);
    let answered: Vec<u16> = got.iter().map(|r| r.status).collect();
    assert_eq!(
        answered.iter().filter(|s| **s == 200).count(),
        1,
        "{got:#?}"
    );
    assert!(
        answered.contains(&0),
        "the timed-out request was abandoned: {got:#?}"
    );
    let f = wait_firings(&g, Duration::from_secs(5), |f| {
        f.iter()
            .any(|f| f["rule"] == "orders_hourly" && state(f) == "delivered")
            && f.iter()
                .any(|f| f["rule"] == "elsewhere" && !f["delivery"]["last_error"].is_null())
    });
    let delivered = f.iter().find(|f| f["rule"] == "orders_hourly").unwrap();
    assert_eq!(delivered["delivery"]["attempts"], 2);
    let waiting = f.iter().find(|f| f["rule"] == "elsewhere").unwrap();
    assert_eq!(state(waiting), "pending");
    assert_eq!(waiting["delivery"]["attempts"], 0);
    let error = waiting["delivery"]["last_error"].as_str().unwrap();
    assert!(
        error.contains("target \"nosuch\" is not in this deliverer's targets file"),
        "{error}"
    );
    // Nothing more reached the receiver (the unknown target is not sent).
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(rx.received().len(), 2);
}

/// Three `serve` replicas on one PostgreSQL schema, each delivering to the
/// receiver under its own path; producers complete the two assets of one
/// rule through different replicas at once; one replica is SIGKILLed while
/// a delivery of its is in flight. Every firing is delivered, one per
/// hour, and no key is answered 2xx twice.
#[test]
fn three_replicas_one_killed_mid_delivery() {
    let schema = PgSchema::new();
    let g = Gapless::postgres(&schema);
    let rx = Receiver::start(
        Some(SECRET),
        Behaviour {
            delay: Duration::from_millis(500),
            ..Behaviour::default()
        },
    );
    g.hourly_rule("both_hourly", "a,b", "hook");
    let mut servers: Vec<Server> = (0..3)
        .map(|i| {
            let file = targets(
                &g,
                &format!("targets{i}.toml"),
                &format!(
                    "poll = \"50ms\"\nlease = \"3s\"\n{}",
                    hook(
                        &format!("{}/r{i}", rx.url),
                        "timeout = \"1500ms\"\nbackoff = { base = \"200ms\", max = \"1s\" }\n"
                    )
                ),
            );
            Server::start_with(&g, |c| {
                c.arg("--targets-file").arg(&file);
            })
        })
        .collect();
    let urls: Vec<String> = servers.iter().map(|s| s.url.clone()).collect();
    let hours = 12u32;
    std::thread::scope(|s| {
        for (asset, shift) in [("a", 0usize), ("b", 1)] {
            let (g, urls) = (&g, &urls);
            s.spawn(move || {
                for h in 0..hours {
                    let url = &urls[(h as usize + shift) % 3];
                    let at = |h: u32| format!("2025-06-14T{h:02}:00Z");
                    let out = common::run(
                        g.command().env("GAPLESS_URL", url).args([
                            "emit",
                            asset,
                            "--start",
                            &at(h),
                            "--end",
                            &at(h + 1),
                        ]),
                        None,
                    );
                    assert_eq!(out.code, 0, "{out:?}");
                }
            });
        }
    });
    let killed = rx.wait_in_flight(Duration::from_secs(15), |p| p == "/r1");
    assert!(
        killed.is_some(),
        "replica 1 never delivered: {:#?}",
        rx.received()
    );
    servers[1].kill();
    let f = wait_firings(&g, Duration::from_secs(15), |f| {
        f.len() == hours as usize && f.iter().all(|f| state(f) == "delivered")
    });
    let keys: Vec<&str> = f.iter().map(|f| f["key"].as_str().unwrap()).collect();
    let want: Vec<String> = (0..hours)
        .map(|h| format!("2025-06-14T{h:02}:00:00"))
        .collect();
    assert_eq!(keys, want, "one firing per hour");
    assert!(f
        .iter()
        .all(|f| f["kind"] == "complete" && f["generation"] == 1));
    let got = rx.received();
    let mut answered: HashMap<String, usize> = HashMap::new();
    for r in &got {
        assert!(r.signed, "{r:?}");
        if r.status == 200 {
            *answered.entry(r.key.clone().unwrap()).or_default() += 1;
        }
    }
    for f in &f {
        let key = answered
            .iter()
            .find(|(k, _)| k.ends_with(&format!(":both_hourly:{}", f["seq"])))
            .map(|(_, n)| *n);
        assert_eq!(
            key,
            Some(1),
            "firing {} answered 2xx {key:?} times: {got:#?}",
            f["seq"]
        );
    }
    assert_eq!(answered.len(), hours as usize);
    // The killed replica's delivery was abandoned mid-way and went to a
    // survivor.
    let abandoned: Vec<_> = got
        .iter()
        .filter(|r| r.path == "/r1" && r.status == 0)
        .collect();
    assert_eq!(abandoned.len(), 1, "{got:#?}");
    let again = got
        .iter()
        .find(|r| r.key == abandoned[0].key && r.status == 200)
        .unwrap();
    assert_ne!(again.path, "/r1");
}

/// `deliver` and `serve` refuse a missing or bad targets file, and
/// `deliver` a ledger that does not exist, with one line naming the input.
#[test]
fn bad_targets_files_and_ledgers_are_refused() {
    let g = Gapless::new();
    let out = g.run(&["deliver", "--once"], None);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("no targets file: give --targets-file FILE or set GAPLESS_TARGETS_FILE"),
        "{out:?}"
    );
    let good = targets(&g, "good.toml", &hook("http://127.0.0.1:9", ""));
    let out = g.run(
        &[
            "deliver",
            "--once",
            "--targets-file",
            good.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("no ledger at"), "{out:?}");
    assert!(!g.db.exists(), "deliver creates no ledger");
    let bad = targets(
        &g,
        "bad.toml",
        &hook("http://127.0.0.1:9", "kinds = [\"done\"]\n"),
    );
    for args in [
        vec!["deliver", "--once", "--targets-file", bad.to_str().unwrap()],
        vec![
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--targets-file",
            bad.to_str().unwrap(),
        ],
    ] {
        let out = g.run(&args, None);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        let line = out.stderr.trim();
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(
            line.contains("bad.toml: target 1 (\"hook\"): kinds: unknown firing kind \"done\": use complete, incomplete or late"),
            "{line}"
        );
    }
    // The environment names the file too.
    let out = common::run(
        g.command()
            .env("GAPLESS_TARGETS_FILE", &bad)
            .args(["deliver", "--once"]),
        None,
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("bad.toml: target 1"), "{out:?}");
}

/// A target's URL may carry credentials (`user:password@`, `?token=`) and
/// a path: the errors of its deliveries, stored as `last_error` for any
/// reader and logged, name it by its name and host only. One target
/// answers 400, the other's port refuses connections; on both backends,
/// read through the ledger and over HTTP.
#[test]
fn delivery_errors_never_show_a_targets_url_credentials() {
    let schema = PgSchema::new();
    for g in [Gapless::new(), Gapless::postgres(&schema)] {
        let rx = Receiver::start(
            None,
            Behaviour {
                refuse_all: true,
                ..Behaviour::default()
            },
        );
        let port = rx.url.rsplit(':').next().unwrap().to_string();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let url = |port: &str| format!("http://user:secret@127.0.0.1:{port}/hook/x?token=abc");
        let file = targets(
            &g,
            "targets.toml",
            &format!(
                "[[target]]\nname = \"refusing\"\nkind = \"webhook\"\nurl = \"{}\"\n\n\
                 [[target]]\nname = \"closed\"\nkind = \"webhook\"\nurl = \"{}\"\n\
                 max_attempts = 1\n",
                url(&port),
                url(&closed_port.to_string()),
            ),
        );
        g.hourly_rule("to_refusing", "orders", "refusing");
        g.hourly_rule("to_closed", "returns", "closed");
        let server = Server::start_with(&g, |c| {
            c.args(["--targets-file", file.to_str().unwrap()]);
        });
        land(&g, "orders", 10, 11, &[]);
        land(&g, "returns", 10, 11, &[]);
        let stored = wait_firings(&g, Duration::from_secs(20), |f| {
            f.len() == 2 && f.iter().all(|f| state(f) == "failed")
        });
        assert_eq!(rx.received().len(), 1, "the 400 is not tried again");
        let served = ureq::get(format!("{}/v1/firings", server.url))
            .call()
            .unwrap()
            .into_body()
            .read_to_string()
            .unwrap();
        let served: Value = serde_json::from_str(&served).unwrap();
        let served = served["firings"].as_array().unwrap().clone();
        for firings in [&stored, &served] {
            let error = |rule: &str| {
                let f = firings.iter().find(|f| f["rule"] == rule).unwrap();
                f["delivery"]["last_error"].as_str().unwrap().to_string()
            };
            let refused = error("to_refusing");
            assert!(
                refused.starts_with(&format!(
                    "target \"refusing\" (http://127.0.0.1:{port}): HTTP 400"
                )),
                "{refused}"
            );
            let closed = error("to_closed");
            assert!(
                closed.starts_with(&format!(
                    "target \"closed\" (http://127.0.0.1:{closed_port}): connection refused"
                )),
                "{closed}"
            );
        }
        let log = server.log().join("\n");
        // Logged too, in the same words.
        assert!(
            log.contains("HTTP 400") && log.contains("connection refused"),
            "{log}"
        );
        let texts = [
            serde_json::to_string(&stored).unwrap(),
            serde_json::to_string(&served).unwrap(),
            log,
        ];
        for text in texts {
            for secret in ["secret", "user:", "token=abc", "/hook"] {
                assert!(!text.contains(secret), "{secret:?} shown: {text}");
            }
        }
    }
}
