//! The PostgreSQL backend: the shared story, each scenario in a fresh
//! schema, plus what only a shared server can show (replicas, concurrent
//! writers, migrations racing, foreign schemas, connection errors).
//!
//! The server is `GAPLESS_TEST_PG` (default
//! `postgres://postgres@127.0.0.1:5432/test`); every test makes its own
//! uniquely named schema and drops it at the end.

mod story;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use gapless_core::{AssetDecl, Duration, Instant, NewEvent};
use gapless_store::{EventQuery, PostgresStore, Store, StoreError};
use story::{all_events, all_time, iv, landed, replay, retracted, t, with_id, Rng};

fn url() -> String {
    std::env::var("GAPLESS_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

fn admin() -> postgres::Client {
    postgres::Client::connect(&url(), postgres::NoTls).unwrap_or_else(|e| {
        panic!(
            "PostgreSQL at {} is not reachable ({e}); set GAPLESS_TEST_PG",
            url()
        )
    })
}

/// `url` with one more query parameter.
fn with_param(url: &str, kv: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{kv}")
}

/// A uniquely named schema, dropped with everything in it at the end.
struct Schema {
    name: String,
}

/// A name no other test uses.
fn unique_name(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let name = format!(
        "gt_{tag}_{}_{}_{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    assert!(name.len() <= 63, "name too long: {name}");
    name
}

impl Schema {
    fn new(tag: &str) -> Schema {
        Schema {
            name: unique_name(tag),
        }
    }

    fn open(&self) -> PostgresStore {
        PostgresStore::open_in_schema(&url(), &self.name).unwrap()
    }

    fn url(&self) -> String {
        with_param(&url(), &format!("schema={}", self.name))
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name);
        if let Err(e) = admin().batch_execute(&sql) {
            eprintln!("could not drop schema {}: {e}", self.name);
        }
    }
}

fn received() -> Instant {
    t(1_000_000)
}

/// Each scenario of the story in a fresh schema, then the store's
/// invariants.
macro_rules! story_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let schema = Schema::new(&stringify!($name)[..8.min(stringify!($name).len())]);
                let store = schema.open();
                story::$name(&store);
                story::check_invariants(&store);
            }
        )*
        /// Every scenario is wired up above.
        #[test]
        fn story_is_complete() {
            let wired = [$(stringify!($name)),*];
            for (name, _) in story::SCENARIOS {
                assert!(wired.contains(name), "scenario {name} is not run for PostgreSQL");
            }
        }
    };
}

story::with_scenarios!(story_tests);

#[test]
fn store_is_send_and_sync() {
    fn check<T: Send + Sync + 'static>() {}
    check::<PostgresStore>();
}

/// A server opens the store, uses it from blocking tasks and drops it at the
/// end of its async `main`: no panic (the client's own runtime must not run
/// on a runtime thread).
#[test]
fn usable_from_blocking_tasks_and_droppable_in_async_code() {
    let schema = Schema::new("tokio");
    let rt = runtime();
    rt.block_on(async {
        let store = std::sync::Arc::new(schema.open());
        let s = store.clone();
        let got = tokio::task::spawn_blocking(move || s.append(&[landed("A", 0, 1)], received()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got.accepted, 1);
        let s = store.clone();
        let n = tokio::task::spawn_blocking(move || all_events(&*s, "A", 10).len())
            .await
            .unwrap();
        assert_eq!(n, 1);
        drop(store);
    });
}

/// Inside a tokio runtime the store's short reads can be awaited on the
/// caller's task, and they answer as the blocking reads and as a painted
/// timeline do, after every batch of random landings and retractions, for
/// random ranges and instants (an asset with no events included). Outside
/// a runtime there are none.
#[test]
fn nonblocking_reads_answer_as_the_painted_timeline() {
    let schema = Schema::new("nonblocking");
    let store = schema.open();
    assert!(
        store.nonblocking().is_none(),
        "no runtime, no nonblocking reads"
    );
    let rt = runtime();
    let mut rng = Rng::new(7);
    // The timeline painted minute by minute: Some(true) landed last.
    let mut painted = vec![None::<bool>; 400];
    for round in 0..12 {
        let batch: Vec<NewEvent> = (0..1 + rng.below(8))
            .map(|_| {
                let a = rng.below(380) as i64;
                let b = a + 1 + rng.below(20) as i64;
                if rng.below(4) == 0 {
                    retracted("A", a, b)
                } else {
                    landed("A", a, b)
                }
            })
            .collect();
        for e in &batch {
            let (a, b) = (minute_of(e.interval.start()), minute_of(e.interval.end()));
            for m in a..b {
                painted[m as usize] = Some(e.kind == gapless_core::EventKind::Landed);
            }
        }
        store.append(&batch, received()).unwrap();
        let questions: Vec<(i64, i64)> = (0..30)
            .map(|_| {
                let a = rng.below(400) as i64;
                (a, a + 1 + rng.below((400 - a) as u64) as i64)
            })
            .collect();
        let blocking: Vec<_> = questions
            .iter()
            .map(|&(a, b)| {
                (
                    store.coverage("A", iv(a, b)).unwrap(),
                    store.run_containing("A", t(a)).unwrap(),
                )
            })
            .collect();
        let awaited: Vec<_> = rt.block_on(async {
            let reads = store.nonblocking().expect("inside a runtime");
            let mut out = Vec::new();
            for &(a, b) in &questions {
                out.push((
                    reads.coverage("A", iv(a, b)).await.unwrap(),
                    reads.run_containing("A", t(a)).await.unwrap(),
                ));
                let none = reads.coverage("none", iv(a, b)).await.unwrap();
                assert!(none.is_empty());
                assert_eq!(reads.run_containing("none", t(a)).await.unwrap(), None);
            }
            out
        });
        for (((a, b), (cov, run)), want) in questions.iter().zip(&awaited).zip(&blocking) {
            assert_eq!((cov, run), (&want.0, &want.1), "round {round} [{a}, {b})");
            let covered: Vec<i64> = (*a..*b).filter(|&m| cov.contains(t(m))).collect();
            let expected: Vec<i64> = (*a..*b)
                .filter(|&m| painted[m as usize] == Some(true))
                .collect();
            assert_eq!(covered, expected, "round {round} [{a}, {b})");
            let frontier = (*a..400)
                .find(|&m| painted[m as usize] != Some(true))
                .unwrap_or(400);
            let want_run = (frontier > *a).then_some(frontier);
            assert_eq!(
                run.map(|r| minute_of(r.end())),
                want_run,
                "round {round}: the run at {a}"
            );
        }
    }
}

/// The server drops the short-read connections (a restart): the next
/// awaited read connects again by itself; with the server's connections
/// refused, it is `Unavailable`.
#[test]
fn nonblocking_reads_reconnect() {
    let schema = Schema::new("nbreconnect");
    let app = schema.name.clone();
    let url = with_param(&schema.url(), &format!("application_name={app}"));
    let store = PostgresStore::open(&url).unwrap();
    store.append(&[landed("A", 0, 5)], received()).unwrap();
    let rt = runtime();
    for round in 0..3 {
        let got = rt.block_on(async {
            let reads = store.nonblocking().unwrap();
            (
                reads.coverage("A", iv(0, 10)).await.unwrap(),
                reads.run_containing("A", t(1)).await.unwrap(),
            )
        });
        assert_eq!(got.1, Some(iv(0, 5)), "round {round}");
        assert_eq!(got.0.runs().collect::<Vec<_>>(), vec![iv(0, 5)]);
        let killed = terminate_sessions(&app);
        assert!(killed >= 1, "round {round}: no connection to drop");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A server's kind of runtime: two workers, I/O and timers.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// End every session of application `app` (a restart, as the store sees
/// it); how many there were.
fn terminate_sessions(app: &str) -> i64 {
    admin()
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = $1",
            &[&app],
        )
        .unwrap()
        .get(0)
}

/// The minutes after the story's base of `i`.
fn minute_of(i: Instant) -> i64 {
    (i.as_micros() - t(0).as_micros()) / (t(1).as_micros() - t(0).as_micros())
}

#[test]
fn run_all_via_open() {
    let schemas = std::sync::Mutex::new(Vec::new());
    story::run_all(&|| {
        let schema = Schema::new("open");
        let store = gapless_store::open(&schema.url()).unwrap();
        schemas.lock().unwrap().push(schema);
        store
    });
}

fn open_err(url: &str) -> String {
    match PostgresStore::open(url) {
        Err(e @ StoreError::Open { .. }) => e.to_string(),
        Err(e) => panic!("expected an Open error, got {e:?}"),
        Ok(_) => panic!("{url} opened as a ledger"),
    }
}

#[test]
fn reopen_preserves_everything() {
    let schema = Schema::new("reopen");
    let decl = AssetDecl {
        key_span: Some(Duration::parse("PT5M").unwrap()),
        tz: jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
    };
    let (log, cover, listing) = {
        let store = schema.open();
        store
            .append(
                &[
                    with_id(landed("A", 0, 10), "a"),
                    landed("A", 20, 30),
                    retracted("A", 5, 6),
                    landed("B", 0, 1),
                ],
                received(),
            )
            .unwrap();
        store.declare_asset("A", &decl).unwrap();
        (
            all_events(&store, "A", 100),
            store.coverage("A", all_time()).unwrap(),
            store.assets().unwrap(),
        )
    };
    let store = PostgresStore::open(&schema.url()).unwrap();
    assert_eq!(store.schema(), schema.name);
    assert_eq!(all_events(&store, "A", 100), log);
    assert_eq!(store.coverage("A", all_time()).unwrap(), cover);
    assert_eq!(store.assets().unwrap(), listing);
    let got = store.asset_decl("A").unwrap().unwrap();
    assert_eq!(got.tz.iana_name(), Some("Europe/Berlin"));
    assert_eq!(got.key_span.unwrap().fixed_micros(), Some(300_000_000));
    // Idempotency and the sequence carry over.
    let again = store
        .append(
            &[with_id(landed("A", 0, 10), "a"), landed("A", 40, 50)],
            received(),
        )
        .unwrap();
    assert_eq!((again.accepted, again.duplicates), (1, 1));
    let after = all_events(&store, "A", 100);
    assert!(after.last().unwrap().seq > log.last().unwrap().seq);
    assert_eq!(store.coverage("A", all_time()).unwrap(), replay(&after));
}

/// Two stores (two `gapless serve` processes) on one schema: each sees the
/// other's acknowledged writes at once.
#[test]
fn replicas_read_each_others_writes() {
    let schema = Schema::new("replicas");
    let a = schema.open();
    let b = schema.open();
    for i in 0..20_i64 {
        let (w, r) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let got = w
            .append(
                &[with_id(landed("A", i * 10, i * 10 + 5), &format!("e{i}"))],
                received(),
            )
            .unwrap();
        assert_eq!(got.accepted, 1);
        // The other replica, right after the acknowledgement.
        let log = all_events(r, "A", 7);
        assert_eq!(log.len() as i64, i + 1);
        assert_eq!(
            r.run_containing("A", t(i * 10)).unwrap(),
            Some(iv(i * 10, i * 10 + 5))
        );
        assert_eq!(
            r.coverage("A", all_time()).unwrap().run_count() as i64,
            i + 1
        );
        // A duplicate through the other replica is recognised.
        let dup = r
            .append(
                &[with_id(landed("A", i * 10, i * 10 + 5), &format!("e{i}"))],
                received(),
            )
            .unwrap();
        assert_eq!((dup.accepted, dup.duplicates), (0, 1));
    }
    let conflict = b
        .append(&[with_id(landed("A", 0, 6), "e0")], received())
        .unwrap_err();
    assert!(matches!(conflict, StoreError::Conflict { index: 0, .. }));
    assert_eq!(a.assets().unwrap(), b.assets().unwrap());
}

/// Writers on several replicas hammer one asset with overlapping landed and
/// retracted events (and batches across two assets in both orders): the
/// coverage runs stay exactly the latest-wins replay of the log in sequence
/// order, so sequence order is the order the runs were updated in.
#[test]
fn concurrent_writers_keep_coverage_exact() {
    let schema = Schema::new("writers");
    let stores: Vec<PostgresStore> = (0..3).map(|_| schema.open()).collect();
    let accepted = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for w in 0..6_u64 {
            let store = &stores[w as usize % stores.len()];
            let accepted = &accepted;
            s.spawn(move || {
                let mut rng = Rng::new(w + 1);
                for round in 0..40 {
                    let n = 1 + rng.below(6) as usize;
                    let mut batch: Vec<NewEvent> = Vec::new();
                    for _ in 0..n {
                        let asset = if rng.below(3) == 0 { "B" } else { "A" };
                        let a = rng.below(200) as i64;
                        let b = a + 1 + rng.below(30) as i64;
                        let ev = if rng.below(4) == 0 {
                            retracted(asset, a, b)
                        } else {
                            landed(asset, a, b)
                        };
                        batch.push(ev);
                    }
                    // Sometimes with ids, so that idempotency runs concurrently too.
                    if round % 3 == 0 {
                        let id = format!("w{w}-r{round}");
                        batch[0] = with_id(batch[0].clone(), &id);
                    }
                    let got = store.append(&batch, received()).unwrap();
                    accepted.fetch_add(got.accepted, Ordering::Relaxed);
                }
            });
        }
    });
    for store in &stores {
        for asset in ["A", "B"] {
            let log = all_events(store, asset, 1000);
            for w in log.windows(2) {
                assert!(w[0].seq < w[1].seq, "sequence not increasing");
            }
            assert_eq!(
                store.coverage(asset, all_time()).unwrap(),
                replay(&log),
                "asset {asset}"
            );
        }
    }
    let total: u64 = stores[0].assets().unwrap().iter().map(|a| a.events).sum();
    assert_eq!(total, accepted.load(Ordering::Relaxed));
}

/// Group commits (`append_many`) from several replicas at once, each group
/// touching assets in another order, with a conflicting batch now and then:
/// no deadlock, every good batch stored whole, every bad one not at all, and
/// coverage exact.
#[test]
fn concurrent_groups_keep_coverage_exact() {
    let schema = Schema::new("groups");
    let stores: Vec<PostgresStore> = (0..2).map(|_| schema.open()).collect();
    let accepted = std::sync::atomic::AtomicU64::new(0);
    let assets = ["A", "B", "C"];
    std::thread::scope(|s| {
        for w in 0..4_u64 {
            let store = &stores[w as usize % stores.len()];
            let accepted = &accepted;
            s.spawn(move || {
                let mut rng = Rng::new(100 + w);
                for round in 0..25 {
                    let groups: Vec<Vec<NewEvent>> = (0..3)
                        .map(|g| {
                            let mut batch: Vec<NewEvent> = (0..1 + rng.below(4))
                                .map(|_| {
                                    let asset = assets[rng.below(3) as usize];
                                    let a = rng.below(100) as i64;
                                    let b = a + 1 + rng.below(20) as i64;
                                    if rng.below(4) == 0 {
                                        retracted(asset, a, b)
                                    } else {
                                        landed(asset, a, b)
                                    }
                                })
                                .collect();
                            // The same id with other content in every third
                            // batch: a conflict with the first writer's.
                            if g == 2 && round % 3 == 0 {
                                let ev = landed("A", w as i64, w as i64 + 1);
                                batch.push(with_id(ev, "contested"));
                            }
                            batch
                        })
                        .collect();
                    let refs: Vec<&[NewEvent]> = groups.iter().map(Vec::as_slice).collect();
                    for r in store.append_many(&refs, received()) {
                        match r {
                            Ok(a) => {
                                accepted.fetch_add(a.accepted, Ordering::Relaxed);
                            }
                            Err(StoreError::Conflict { .. }) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            });
        }
    });
    let mut total = 0;
    for asset in assets {
        let log = all_events(&stores[1], asset, 1000);
        total += log.len() as u64;
        assert_eq!(
            stores[0].coverage(asset, all_time()).unwrap(),
            replay(&log),
            "asset {asset}"
        );
    }
    assert_eq!(total, accepted.load(Ordering::Relaxed));
}

/// `pool_size` bounds the connections of one store: more concurrent calls
/// wait for one and all succeed.
#[test]
fn pool_size_bounds_connections() {
    let schema = Schema::new("pool");
    let app = schema.name.clone();
    let url = with_param(
        &schema.url(),
        &format!("pool_size=2&application_name={app}"),
    );
    let store = PostgresStore::open(&url).unwrap();
    let most = std::sync::atomic::AtomicI64::new(0);
    std::thread::scope(|s| {
        for w in 0..8_i64 {
            let (store, most, app) = (&store, &most, &app);
            s.spawn(move || {
                let mut admin = admin();
                for i in 0..15_i64 {
                    let m = (w * 15 + i) * 2;
                    store.append(&[landed("A", m, m + 1)], received()).unwrap();
                    assert!(store.run_containing("A", t(m)).unwrap().is_some());
                    let n: i64 = admin
                        .query_one(
                            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                            &[app],
                        )
                        .unwrap()
                        .get(0);
                    most.fetch_max(n, Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(all_events(&store, "A", 1000).len(), 120);
    let most = most.load(Ordering::Relaxed);
    assert!((1..=2).contains(&most), "{most} connections");
}

/// The server drops the store's connections (a restart, an administrator):
/// the next calls reconnect by themselves.
#[test]
fn dropped_connections_are_replaced() {
    let schema = Schema::new("reconnect");
    let app = schema.name.clone();
    let url = with_param(&schema.url(), &format!("application_name={app}"));
    let store = PostgresStore::open(&url).unwrap();
    std::thread::scope(|s| {
        for w in 0..3_i64 {
            let store = &store;
            s.spawn(move || store.append(&[landed("A", w, w + 1)], received()).unwrap());
        }
    });
    for round in 0..3_i64 {
        let killed = terminate_sessions(&app);
        assert!(killed >= 1, "round {round}: no connection to drop");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let m = 10 + round * 2;
        store.append(&[landed("A", m, m + 1)], received()).unwrap();
        assert_eq!(store.run_containing("A", t(m)).unwrap(), Some(iv(m, m + 1)));
    }
    assert_eq!(all_events(&store, "A", 100).len(), 6);
}

/// Sessions are durable and bounded: synchronous commits, a lock timeout,
/// and an idle-in-transaction timeout so that a hung process cannot hold an
/// asset forever.
#[test]
fn session_settings() {
    let schema = Schema::new("settings");
    let store = schema.open();
    assert_eq!(store.setting("synchronous_commit").unwrap(), "on");
    assert_eq!(store.setting("lock_timeout").unwrap(), "30s");
    assert_eq!(
        store
            .setting("idle_in_transaction_session_timeout")
            .unwrap(),
        "1min"
    );
    assert_eq!(store.setting("search_path").unwrap(), schema.name);
    assert!(store.setting("no_such_setting").is_err());
}

/// A fault keeps the client's error as its source, behind the same
/// one-line message without SQL.
#[test]
fn faults_keep_the_client_s_error_as_their_source() {
    let schema = Schema::new("cause");
    let store = schema.open();
    let err = store.setting("no_such_setting").unwrap_err();
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "storage failure: PostgreSQL error 42704: unrecognized configuration parameter \
         \"no_such_setting\""
    );
    let client = std::error::Error::source(&err)
        .and_then(|s| s.downcast_ref::<tokio_postgres::Error>())
        .unwrap_or_else(|| panic!("no client error under {err:?}"));
    assert_eq!(
        client.code(),
        Some(&tokio_postgres::error::SqlState::UNDEFINED_OBJECT)
    );
}

/// Several processes starting at once on a new schema: one creates it, the
/// others find it ready.
#[test]
fn concurrent_opens_migrate_once() {
    let schema = Schema::new("migrate");
    let url = schema.url();
    let stores: Vec<PostgresStore> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|_| s.spawn(|| PostgresStore::open(&url).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    stores[0].append(&[landed("A", 0, 1)], received()).unwrap();
    for s in &stores {
        assert_eq!(all_events(s, "A", 10).len(), 1);
    }
    let versions: i64 = admin()
        .query_one(
            &format!("SELECT count(*) FROM \"{}\".gapless_version", schema.name),
            &[],
        )
        .unwrap()
        .get(0);
    // One row per migration, each applied once.
    assert_eq!(versions, 12);
}

#[test]
fn foreign_schema_is_not_a_ledger() {
    let schema = Schema::new("foreign");
    admin()
        .batch_execute(&format!(
            "CREATE SCHEMA \"{0}\"; CREATE TABLE \"{0}\".events (x int); INSERT INTO \"{0}\".events VALUES (1)",
            schema.name
        ))
        .unwrap();
    let msg = open_err(&schema.url());
    assert!(msg.contains("not a gapless ledger"), "{msg}");
    let rows: i64 = admin()
        .query_one(
            &format!("SELECT count(*) FROM \"{}\".events", schema.name),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(rows, 1, "the foreign table was changed");
}

#[test]
fn newer_schema_is_refused() {
    let schema = Schema::new("newer");
    drop(schema.open());
    admin()
        .batch_execute(&format!(
            "INSERT INTO \"{}\".gapless_version (version) VALUES (99)",
            schema.name
        ))
        .unwrap();
    let msg = open_err(&schema.url());
    assert!(msg.contains("schema version 99"), "{msg}");
}

#[test]
fn damaged_schema_is_refused() {
    let schema = Schema::new("damaged");
    drop(schema.open());
    admin()
        .batch_execute(&format!("DROP TABLE \"{}\".coverage_runs", schema.name))
        .unwrap();
    let msg = open_err(&schema.url());
    assert!(msg.contains("coverage_runs is missing"), "{msg}");
}

/// A message of `Unavailable` names no connection details.
fn assert_no_connection_details(msg: &str, details: &[&str]) {
    for d in [
        "postgres://",
        "127.0.0.1",
        "5432",
        "someone",
        "s3cret",
        "pw@",
    ]
    .iter()
    .chain(details)
    {
        assert!(!msg.contains(d), "{d:?} in {msg:?}");
    }
}

/// A server that cannot be reached is `Unavailable` (not `Open`: nothing is
/// wrong with the ledger), with a message that names no user, host, port or
/// database.
#[test]
fn unreachable_server_is_unavailable_without_connection_details() {
    let err = PostgresStore::open("postgres://someone:s3cret@127.0.0.1:1/db?connect_timeout=2")
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    let msg = err.to_string();
    assert_eq!(
        msg,
        "cannot open ledger: the ledger's database is unavailable"
    );
    // The client's error is kept as the source, the socket's under it.
    let client = std::error::Error::source(&err)
        .and_then(|s| s.downcast_ref::<tokio_postgres::Error>())
        .unwrap_or_else(|| panic!("no client error under {err:?}"));
    let refused = std::error::Error::source(client)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .unwrap_or_else(|| panic!("no I/O error under {client:?}"));
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    assert_no_connection_details(&msg, &[":1/", "db?"]);
    // Through open() too, as `--db` does.
    let err = gapless_store::open("postgresql://u:pw@127.0.0.1:1/db").unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert_no_connection_details(&err.to_string(), &[]);
}

/// A login role of its own for one test, dropped at the end (after the
/// schemas it owns: declare it first).
struct Role {
    name: String,
}

impl Role {
    fn new(tag: &str) -> Role {
        let name = unique_name(tag);
        admin()
            .batch_execute(&format!("CREATE ROLE {name} LOGIN SUPERUSER"))
            .unwrap();
        Role { name }
    }

    /// Allow or refuse its logins.
    fn login(&self, allowed: bool) {
        let what = if allowed { "LOGIN" } else { "NOLOGIN" };
        admin()
            .batch_execute(&format!("ALTER ROLE {} {what}", self.name))
            .unwrap();
    }

    /// Terminate its sessions: how many there were.
    fn terminate(&self) -> i64 {
        admin()
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE usename = $1",
                &[&self.name],
            )
            .unwrap()
            .get(0)
    }
}

impl Drop for Role {
    fn drop(&mut self) {
        self.terminate();
        let sql = format!("DROP ROLE IF EXISTS {}", self.name);
        if let Err(e) = admin().batch_execute(&sql) {
            eprintln!("could not drop role {}: {e}", self.name);
        }
    }
}

/// Connections lost for good are `Unavailable`, with a message that names
/// no user, host, port, database or schema, and the store recovers by
/// itself once the server takes connections again: the server drops the
/// store's sessions while refusing new logins (the retry on a new
/// connection fails), and a session dropped in the middle of an append on a
/// fresh connection (not retried: the append may have done anything).
#[test]
fn lost_connections_are_unavailable_and_recover() {
    let role = Role::new("unavail");
    let schema = Schema::new("unavail");
    let url = with_param(&schema.url(), &format!("user={}", role.name));
    let store = PostgresStore::open(&url).unwrap();
    store.append(&[landed("A", 0, 1)], received()).unwrap();
    let details = [role.name.as_str(), schema.name.as_str(), "test"];

    // Sessions gone and no new ones: the next calls are unavailable.
    role.login(false);
    assert!(role.terminate() >= 1);
    std::thread::sleep(std::time::Duration::from_millis(50));
    let err = store.append(&[landed("A", 1, 2)], received()).unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert_eq!(err.to_string(), "the ledger's database is unavailable");
    assert_no_connection_details(&err.to_string(), &details);
    let err = store.coverage("A", all_time()).unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    let results = store.append_many(&[&[landed("A", 1, 2)], &[landed("B", 0, 1)]], received());
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(StoreError::Unavailable { .. }))),
        "{results:?}"
    );

    // Logins allowed again: the next call connects.
    role.login(true);
    assert_eq!(store.run_containing("A", t(0)).unwrap(), Some(iv(0, 1)));

    // A session dropped while its append waits for another writer's lock,
    // on a connection the call opened itself (its pooled one is dropped
    // first, so the call moves to a new one): not retried, unavailable.
    role.terminate();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut holder = admin();
    let mut tx = holder.transaction().unwrap();
    tx.execute(
        &format!(
            "SELECT 1 FROM \"{}\".assets WHERE name = 'A' FOR UPDATE",
            schema.name
        ),
        &[],
    )
    .unwrap();
    std::thread::scope(|s| {
        let waiting = s.spawn(|| store.append(&[landed("A", 5, 6)], received()));
        let mut watcher = admin();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let n: i64 = watcher
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity \
                     WHERE usename = $1 AND wait_event_type = 'Lock'",
                    &[&role.name],
                )
                .unwrap()
                .get(0);
            if n >= 1 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the append never waited"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(role.terminate() >= 1);
        let err = waiting.join().unwrap().unwrap_err();
        assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
        assert_no_connection_details(&err.to_string(), &details);
    });
    tx.rollback().unwrap();

    // And the store works again, with nothing of the failed appends stored.
    store.append(&[landed("A", 1, 2)], received()).unwrap();
    let log = all_events(&store, "A", 100);
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(
        store
            .coverage("A", all_time())
            .unwrap()
            .runs()
            .collect::<Vec<_>>(),
        vec![iv(0, 2)]
    );
    story::check_invariants(&store);
    drop(store);
    drop(schema);
}

#[test]
fn missing_database_is_an_open_error() {
    let base = url();
    let Some(slash) = base[base.find("://").unwrap() + 3..].find('/') else {
        return;
    };
    let cut = base.find("://").unwrap() + 3 + slash;
    let bad = format!("{}/no_such_db_for_gapless", &base[..cut]);
    let msg = open_err(&bad);
    assert!(msg.contains("no_such_db_for_gapless"), "{msg}");
    assert!(!msg.contains("SELECT"), "{msg}");
}

/// TLS settings that cannot work are refused before connecting, naming the
/// parameter and not the password (TLS connections themselves:
/// `postgres_tls.rs` and the command line's `pg_tls.rs`).
#[test]
fn unusable_tls_settings_are_clear_open_errors() {
    for (params, says) in [
        (
            "sslmode=verify-full",
            "sslmode=verify-full needs sslrootcert=FILE",
        ),
        (
            "sslmode=verify-ca",
            "sslmode=verify-ca needs sslrootcert=FILE",
        ),
        (
            "sslmode=require&sslrootcert=/nonexistent/root.crt",
            "sslrootcert /nonexistent/root.crt: cannot read it",
        ),
        ("sslmode=allow", "invalid sslmode \"allow\""),
    ] {
        let msg = open_err(&format!("postgres://u:pw@127.0.0.1:1/x?{params}"));
        assert!(msg.contains(says), "{params}: {msg}");
        assert!(!msg.contains("pw"), "{msg}");
    }
}

#[test]
fn non_utf8_database_is_refused() {
    let db = Schema::new("latin1").name.clone();
    let mut admin = admin();
    admin
        .batch_execute(&format!(
            "CREATE DATABASE {db} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
        ))
        .unwrap();
    let base = url();
    let scheme_end = base.find("://").unwrap() + 3;
    let path = base[scheme_end..].find('/').map(|i| scheme_end + i);
    let other = match path {
        Some(i) => {
            let rest = base[i + 1..].find('?').map_or("", |q| &base[i + 1 + q..]);
            format!("{}/{db}{rest}", &base[..i])
        }
        None => format!("{base}/{db}"),
    };
    let msg = open_err(&other);
    admin.batch_execute(&format!("DROP DATABASE {db}")).unwrap();
    assert!(msg.contains("UTF8"), "{msg}");
}

#[test]
fn bad_url_is_an_open_error() {
    let msg = open_err("postgres://h/db?nonsense=1");
    assert!(msg.contains("invalid URL"), "{msg}");
}

#[test]
fn nul_characters_are_refused_with_the_event_named() {
    let schema = Schema::new("nul");
    let store = schema.open();
    let err = store
        .append(
            &[landed("A", 0, 1), with_id(landed("A", 1, 2), "a\0b")],
            received(),
        )
        .unwrap_err();
    match err {
        StoreError::Invalid(msg) => assert!(msg.contains("event 1"), "{msg}"),
        other => panic!("{other:?}"),
    }
    assert!(all_events(&store, "A", 10).is_empty());
}

/// Big batches go through `COPY`; they behave exactly as small ones.
#[test]
fn big_batch_through_copy() {
    let schema = Schema::new("copy");
    let store = schema.open();
    let mut batch: Vec<NewEvent> = (0..5_000_i64)
        .map(|i| {
            let mut ev = with_id(landed("A", i * 2, i * 2 + 1), &format!("k{i}"));
            ev.extra = Some(format!("{{\"b\": {i}, \"a\": \"é\\u0000\"}}"));
            ev.produced_at = Some(t(i));
            ev
        })
        .collect();
    batch.push(retracted("A", 100, 200));
    let got = store.append(&batch, received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (5_001, 0));
    let log = all_events(&store, "A", 10_000);
    assert_eq!(log.len(), 5_001);
    assert_eq!(log[7].extra.as_deref(), batch[7].extra.as_deref());
    assert_eq!(log[7].produced_at, Some(t(7)));
    assert_eq!(store.coverage("A", all_time()).unwrap(), replay(&log));
    // Again: all duplicates, and one conflict at the end rolls back.
    let again = store.append(&batch, received()).unwrap();
    assert_eq!((again.accepted, again.duplicates), (1, 5_000));
    let mut bad = batch.clone();
    bad.push(with_id(landed("A", 0, 3), "k0"));
    let err = store.append(&bad, received()).unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { index: 5_001, .. }),
        "{err:?}"
    );
    assert_eq!(all_events(&store, "A", 10_000).len(), 5_002);
}

/// An append's reads and writes stay index seeks as the ledger grows,
/// though their plans are made once per connection while the tables are
/// tiny and then kept: counted by the server (the sequential scans of the
/// tables an append reads or writes), not timed.
#[test]
fn append_plans_stay_index_seeks_as_the_ledger_grows() {
    let schema = Schema::new("plans");
    let store = schema.open();
    // The statistics of a tiny table (as autovacuum takes them after its
    // first 50 rows), then none as it grows (which would have the plans
    // made again): a ledger that grows faster than autovacuum looks at it.
    let events = format!("\"{}\".events", schema.name);
    for table in ["events", "assets", "coverage_runs"] {
        admin()
            .batch_execute(&format!(
                "ALTER TABLE \"{}\".{table} SET (autovacuum_enabled = false)",
                schema.name
            ))
            .unwrap();
    }
    let mut n = 0_i64;
    for _ in 0..60 {
        append_one(&store, "A", &mut n);
    }
    admin().batch_execute(&format!("ANALYZE {events}")).unwrap();
    for _ in 0..10 {
        append_one(&store, "A", &mut n);
    }
    // Thousands of assets, as producers create them after the server
    // started.
    let bulk: Vec<NewEvent> = (n..n + 20_000)
        .map(|i| {
            let asset = format!("g{}", i % 2_000);
            with_id(landed(&asset, i * 2, i * 2 + 1), &format!("k{i}"))
        })
        .collect();
    store.append(&bulk, received()).unwrap();
    n += 20_000;
    let before = seq_scans(&schema, &store, &mut n);
    for g in 0..20 {
        append_one(&store, &format!("g{g}"), &mut n);
    }
    let after = seq_scans(&schema, &store, &mut n);
    assert_eq!(
        after, before,
        "appends scanned tables (sequential scans of each)"
    );
}

/// Append the `n`th single event, on `asset` (with an id, so its append
/// reads the stored ids).
fn append_one(store: &PostgresStore, asset: &str, n: &mut i64) {
    let ev = with_id(landed(asset, *n * 2, *n * 2 + 1), &format!("k{n}"));
    store.append(&[ev], received()).unwrap();
    *n += 1;
}

/// The sequential scans of each table an append reads or writes, by name,
/// once the server's statistics count all `n` events inserted: a session
/// sends its counts at the end of a transaction, at most once a second, so
/// this appends one more event a second until they do.
fn seq_scans(schema: &Schema, store: &PostgresStore, n: &mut i64) -> Vec<(String, i64)> {
    let mut admin = admin();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        append_one(store, "A", n);
        let inserted: i64 = admin
            .query_one(
                "SELECT n_tup_ins FROM pg_stat_user_tables \
                 WHERE schemaname = $1 AND relname = 'events'",
                &[&schema.name],
            )
            .unwrap()
            .get(0);
        if inserted == *n {
            return admin
                .query(
                    "SELECT relname::text, seq_scan FROM pg_stat_user_tables \
                     WHERE schemaname = $1 AND relname IN \
                       ('events', 'assets', 'coverage_runs', 'rule_windows', 'firings') \
                     ORDER BY relname",
                    &[&schema.name],
                )
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the statistics never counted {n} events"
        );
    }
}

/// The child side of `killed_process_loses_no_acknowledged_event`.
#[test]
fn crash_child() {
    let Ok(db) = std::env::var("GAPLESS_CRASH_CHILD_PG") else {
        return;
    };
    let store = PostgresStore::open(&db).unwrap();
    let mut out = std::io::stdout();
    for b in 0..1_000_000_i64 {
        let batch: Vec<_> = (0..50)
            .map(|i| landed("A", b * 50 + i, b * 50 + i + 1))
            .collect();
        store.append(&batch, received()).unwrap();
        use std::io::Write;
        writeln!(out, "acked {b}").unwrap();
        out.flush().unwrap();
    }
}

/// Kill -9 a process that is appending: every acknowledged batch is there,
/// no batch is there in part, and coverage matches the log.
#[test]
fn killed_process_loses_no_acknowledged_event() {
    let schema = Schema::new("crash");
    drop(schema.open());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env("GAPLESS_CRASH_CHILD_PG", schema.url())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut acked = -1_i64;
    let reader = BufReader::new(child.stdout.take().unwrap());
    for line in reader.lines() {
        let line = line.unwrap();
        if let Some(b) = line.strip_prefix("acked ") {
            acked = b.parse().unwrap();
            if acked >= 40 {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(acked >= 40, "the child did not get going");
    // The server notices the dead client and rolls its open transaction back.
    let store = schema.open();
    let log = all_events(&store, "A", 10_000);
    assert!(
        log.len() as i64 >= (acked + 1) * 50,
        "{} events, {} batches acknowledged",
        log.len(),
        acked + 1
    );
    assert_eq!(log.len() % 50, 0, "a batch was stored in part");
    assert_eq!(store.coverage("A", all_time()).unwrap(), replay(&log));
    let page = store
        .events(
            "A",
            &EventQuery {
                limit: 1,
                ..EventQuery::default()
            },
        )
        .unwrap();
    assert_eq!(page.events[0].interval, iv(0, 1));
}

/// Append rates (run with `--ignored --nocapture`, in release).
#[test]
#[ignore]
fn bench_append() {
    let schema = Schema::new("bench");
    let store = schema.open();
    for (batches, size, ids) in [
        (1, 100_000, false),
        (1, 100_000, true),
        (200, 500, true),
        (2000, 1, true),
    ] {
        let start = std::time::Instant::now();
        let base = store
            .assets()
            .unwrap()
            .iter()
            .map(|a| a.events)
            .sum::<u64>() as i64;
        for b in 0..batches {
            let batch: Vec<NewEvent> = (0..size)
                .map(|i| {
                    let k = base + (b * size + i) as i64;
                    let ev = landed("A", k * 5, k * 5 + 5);
                    if ids {
                        with_id(ev, &format!("id-{k}"))
                    } else {
                        ev
                    }
                })
                .collect();
            store.append(&batch, received()).unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        let n = (batches * size) as f64;
        eprintln!(
            "{batches} x {size} (ids: {ids}): {:.0} events/s, {:.2} ms/batch",
            n / secs,
            secs * 1000.0 / batches as f64
        );
    }
    // The server's group commit: 16 one-event requests per transaction.
    let start = std::time::Instant::now();
    for g in 0..125_i64 {
        let batches: Vec<Vec<NewEvent>> = (0..16)
            .map(|i| {
                let k = 1_000_000 + g * 16 + i;
                vec![with_id(landed("G", k * 5, k * 5 + 5), &format!("g-{k}"))]
            })
            .collect();
        let refs: Vec<&[NewEvent]> = batches.iter().map(Vec::as_slice).collect();
        for r in store.append_many(&refs, received()) {
            r.unwrap();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "append_many 125 x 16 x 1: {:.0} requests/s, {:.2} ms/group",
        2000.0 / secs,
        secs * 1000.0 / 125.0
    );
}

/// A schema of version 1 (before rules) is brought to version 2 when
/// opened, keeping its events.
#[test]
fn version_1_schema_is_migrated() {
    let schema = Schema::new("v1");
    schema
        .open()
        .append(&[landed("a", 0, 60)], received())
        .unwrap();
    admin()
        .batch_execute(&format!(
            "SET search_path TO \"{}\"; {EVENTS_AS_VERSION_10} \
             DROP TABLE meta, rules, rule_assets, rule_windows, \
             firing_clock, firings; DROP INDEX events_retracted; \
             ALTER TABLE assets DROP COLUMN last_received_us; \
             ALTER TABLE assets DROP COLUMN pruned_before_us; \
             DELETE FROM gapless_version WHERE version >= 2",
            schema.name
        ))
        .unwrap();
    let store = schema.open();
    assert_eq!(all_events(&store, "a", 10).len(), 1);
    assert_eq!(store.ledger_id().unwrap().len(), 32);
    assert!(store.rules().unwrap().is_empty());
    assert_eq!(
        store.asset("a").unwrap().unwrap().last_received,
        Some(received())
    );
}

/// Two replicas complete the two assets of one rule at the same moment,
/// window after window: each window fires exactly once, and firing numbers
/// follow commit order (a reader paging with `after` misses none).
#[test]
fn two_replicas_completing_one_rule_fire_once() {
    use gapless_core::RuleSettings;
    let (_schema, one, two) = two_replicas("rulerace");
    let decl = utc();
    one.declare_asset("a", &decl).unwrap();
    one.declare_asset("b", &decl).unwrap();
    let rule = hourly_rule("both", &["a", "b"], RuleSettings::default());
    one.put_rule(&rule, received()).unwrap();
    let hours = 60;
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for (store, asset) in [(&one, "a"), (&two, "b")] {
            let barrier = &barrier;
            s.spawn(move || {
                for h in 0..hours {
                    barrier.wait();
                    store
                        .append(&[landed(asset, h * 60, h * 60 + 60)], received())
                        .unwrap();
                }
            });
        }
    });
    let fired = story::rules::firings_after(&one, None);
    assert_eq!(
        fired.len(),
        hours as usize,
        "one firing per hour: {fired:#?}"
    );
    let mut starts: Vec<_> = fired.iter().map(|f| f.window.start()).collect();
    starts.sort();
    starts.dedup();
    assert_eq!(starts.len(), hours as usize);
    assert!(fired.iter().all(|f| f.generation == 1));
}

/// Two replicas judging deadlines, each with the rules as it last read
/// them: a window is late once whichever judges it, a replica that read the
/// rules before the other judged finds nothing left, and a rule deleted or
/// changed by one is judged as the ledger now has it by the other.
#[test]
fn two_replicas_judging_deadlines_fire_late_once() {
    use gapless_core::{FiringKind, RuleSettings};
    let (_schema, one, two) = two_replicas("deadrace");
    let decl = utc();
    let rule = |name: &str, asset: &str, deadline: &str| {
        let settings = RuleSettings {
            deadline: Some(Duration::parse(deadline).unwrap()),
            ..RuleSettings::default()
        };
        hourly_rule(name, &[asset], settings)
    };
    for a in ["a", "b"] {
        one.declare_asset(a, &decl).unwrap();
        one.put_rule(&rule(&format!("r{a}"), a, "PT30M"), t(0))
            .unwrap();
    }
    // Both read the rules; [0, 60) and [60, 120) of both rules are late
    // by 150: four firings, from whichever replica judges first.
    assert_eq!(one.judge_deadlines(t(10)).unwrap(), 0);
    assert_eq!(two.judge_deadlines(t(10)).unwrap(), 0);
    assert_eq!(one.judge_deadlines(t(150)).unwrap(), 4);
    assert_eq!(two.judge_deadlines(t(150)).unwrap(), 0);
    assert_eq!(two.judge_deadlines(t(210)).unwrap(), 2);
    assert_eq!(one.judge_deadlines(t(210)).unwrap(), 0);
    // One deletes a rule and moves the other's deadline: the other replica
    // judges what the ledger now holds.
    assert!(one.delete_rule("ra").unwrap());
    one.put_rule(&rule("rb", "b", "PT2H"), t(0)).unwrap();
    // [180, 240) of rb is late at 240 + 120 = 360, not 270.
    assert_eq!(two.judge_deadlines(t(300)).unwrap(), 0);
    assert_eq!(two.judge_deadlines(t(360)).unwrap(), 1);
    assert_eq!(one.judge_deadlines(t(400)).unwrap(), 0);
    let late: Vec<(String, i64)> = story::rules::firings_after(&one, None)
        .iter()
        .filter(|f| f.kind == FiringKind::Late)
        .map(|f| {
            (
                f.rule.clone(),
                (f.window.start().as_micros() - t(0).as_micros()) / 60_000_000,
            )
        })
        .collect();
    assert_eq!(
        late,
        [
            ("rb".to_string(), 0),
            ("rb".to_string(), 60),
            ("rb".to_string(), 120),
            ("rb".to_string(), 180)
        ]
    );
}

/// Two replicas that keep the window states of the rules they judged judge
/// as stores that keep nothing (each step on a store opened for it):
/// appends to the rules' asset from either replica, in order and out of
/// it, retractions, deadline passes, a rule's key format changed, a rule
/// of two assets beside them; the firings and the recorded window states
/// the same after every step.
#[test]
fn replicas_that_keep_window_states_judge_as_stores_that_keep_none() {
    use gapless_core::RuleSettings;
    #[derive(Debug, Clone)]
    enum Step {
        Append(usize, NewEvent),
        Deadlines(usize, i64),
        KeyFormat(usize, i64, &'static str),
    }
    // Minutes on a grid of 15, hours 0..12. Mostly a stream: the next slot
    // after the last, from the replica that wrote the last (what a
    // replica keeps is then still the ledger's); sometimes another
    // replica, an older slot, a retraction, a deadline pass or a rule set.
    let mut rng = story::Rng::new(24);
    // First the two cases themselves. The first replica knows the hour
    // [0, 60) half covered (from its second append: the first reads the
    // rules); the other's deadline pass records it late; the first
    // completes it, and must record it complete and late. Then the first
    // knows [60, 120) half covered, the other completes it, and the first
    // covering it again must not fire it again.
    let mut steps = vec![
        Step::Append(0, landed("a", 0, 15)),
        Step::Append(0, landed("a", 15, 30)),
        Step::Deadlines(1, 100),
        Step::Append(0, landed("a", 30, 60)),
        Step::Append(0, landed("a", 60, 90)),
        Step::Append(1, landed("a", 90, 120)),
        Step::Append(0, landed("a", 60, 120)),
    ];
    let (mut clock, mut replica, mut next) = (100, 0, 120);
    for i in 0..240 {
        if rng.below(6) == 0 {
            replica = 1 - replica;
        }
        let start = if rng.below(4) == 0 {
            15 * rng.below(48) as i64
        } else {
            // A slot skipped now and then: a hole that a deadline may pass.
            next = (next + 15 * (1 + i64::from(rng.below(4) == 0))) % 720;
            next
        };
        let end = start + 15 * (1 + rng.below(2) as i64);
        steps.push(match rng.below(20) {
            0..=13 => Step::Append(
                replica,
                landed(if i % 7 == 0 { "b" } else { "a" }, start, end),
            ),
            14..=15 => Step::Append(replica, retracted("a", start, end)),
            16..=18 => {
                // Faster than the stream: windows it has not reached yet
                // pass their deadline.
                clock += 120;
                Step::Deadlines(replica, clock)
            }
            _ => Step::KeyFormat(
                replica,
                clock,
                if i % 2 == 0 { "%H" } else { "%Y-%m-%dT%H" },
            ),
        });
    }
    let rules = |format: &str| {
        let settings = RuleSettings {
            deadline: Some(Duration::parse("PT30M").unwrap()),
            key_format: format.to_string(),
            ..RuleSettings::default()
        };
        [
            hourly_rule("one_asset", &["a"], settings.clone()),
            hourly_rule("two_assets", &["a", "b"], settings),
        ]
    };
    let setup = |store: &PostgresStore| {
        for a in ["a", "b"] {
            store.declare_asset(a, &utc()).unwrap();
        }
        for r in rules("%Y-%m-%dT%H:%M:%S") {
            store.put_rule(&r, t(0)).unwrap();
        }
    };
    let apply = |store: &PostgresStore, step: &Step| match step {
        Step::Append(_, ev) => {
            // Events without ids: none is refused.
            store.append(std::slice::from_ref(ev), received()).unwrap();
        }
        Step::Deadlines(_, at) => {
            store.judge_deadlines(t(*at)).unwrap();
        }
        Step::KeyFormat(_, at, f) => {
            for r in rules(f) {
                store.put_rule(&r, t(*at)).unwrap();
            }
        }
    };
    let windows = |schema: &Schema| -> Vec<(String, i64, i64, bool, i64, bool)> {
        admin()
            .query(
                &format!(
                    "SELECT r.name, w.start_us, w.end_us, w.complete, w.generation, w.late \
                     FROM \"{0}\".rule_windows w JOIN \"{0}\".rules r ON r.id = w.rule_id \
                     ORDER BY 1, 2",
                    schema.name
                ),
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)))
            .collect()
    };
    let fired = |store: &PostgresStore| -> Vec<_> {
        story::rules::firings_after(store, None)
            .into_iter()
            .map(|f| (f.rule, f.kind, f.window, f.key, f.generation))
            .collect()
    };
    let (kept, one, two) = two_replicas("keeps");
    let none = Schema::new("keepsnone");
    setup(&one);
    setup(&none.open());
    for (i, step) in steps.iter().enumerate() {
        let replica = match step {
            Step::Append(r, _) | Step::Deadlines(r, _) | Step::KeyFormat(r, _, _) => *r,
        };
        apply([&one, &two][replica], step);
        let fresh = none.open();
        apply(&fresh, step);
        assert_eq!(
            fired(&one),
            fired(&fresh),
            "firings after step {i}: {step:?}"
        );
        assert_eq!(
            windows(&kept),
            windows(&none),
            "window states after step {i}: {step:?}"
        );
    }
}

/// A window run that a connection knows as stored, and changes in place,
/// is written whole when its row is gone: the recorded states end as a
/// store's that never lost it.
#[test]
fn a_known_run_that_is_not_stored_is_written_whole() {
    use gapless_core::RuleSettings;
    let states = |schema: &Schema| -> Vec<(i64, i64, bool, i64, bool)> {
        admin()
            .query(
                &format!(
                    "SELECT start_us, end_us, complete, generation, late \
                     FROM \"{}\".rule_windows ORDER BY 1",
                    schema.name
                ),
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
            .collect()
    };
    let (lost, whole) = (Schema::new("lostrun"), Schema::new("wholerun"));
    let stores = [lost.open(), whole.open()];
    for store in &stores {
        store.declare_asset("a", &utc()).unwrap();
        let rule = hourly_rule("r", &["a"], RuleSettings::default());
        store.put_rule(&rule, t(0)).unwrap();
        // The second append completes the first hour: its run is stored
        // and, from then on, known to the connection.
        for (start, end) in [(0, 30), (30, 60)] {
            store
                .append(&[landed("a", start, end)], received())
                .unwrap();
        }
    }
    assert_eq!(states(&lost).len(), 1, "the first hour's run");
    admin()
        .batch_execute(&format!("DELETE FROM \"{}\".rule_windows", lost.name))
        .unwrap();
    // The next hour extends the run the connection knows.
    for store in &stores {
        store.append(&[landed("a", 60, 120)], received()).unwrap();
    }
    assert_eq!(states(&lost), states(&whole));
}

/// Two replicas take turns with group commits on a rule's asset: each
/// judges the window states the other wrote.
#[test]
fn group_commits_of_two_replicas_judge_each_other_s_states() {
    let (_schema, one, two) = two_replicas("turns");
    story::rules::group_commits_take_turns_with_another_store(&one, &two);
}

/// A fresh schema and two stores on it, two replicas of one ledger.
fn two_replicas(tag: &str) -> (Schema, PostgresStore, PostgresStore) {
    let schema = Schema::new(tag);
    let (one, two) = (schema.open(), schema.open());
    (schema, one, two)
}

/// An asset in UTC with no key span.
fn utc() -> AssetDecl {
    AssetDecl {
        key_span: None,
        tz: jiff::tz::TimeZone::UTC,
    }
}

/// An hourly rule `name` on `assets` from t(0), with `settings`.
fn hourly_rule(
    name: &str,
    assets: &[&str],
    settings: gapless_core::RuleSettings,
) -> gapless_core::Rule {
    gapless_core::Rule {
        name: name.into(),
        def: gapless_core::RuleDef::new(
            assets.iter().map(|a| a.to_string()).collect(),
            gapless_core::Grid::parse("1h").unwrap(),
            "UTC",
            gapless_core::Policy::Full,
            t(0),
            None,
        )
        .unwrap(),
        settings,
    }
}

/// A replica keeps the rules it read; another changes them between its
/// appends (a new target, a new rule, a deletion): each append judges the
/// rules as the ledger has them when it commits, and a deleted rule leaves
/// no window behind.
#[test]
fn appends_judge_the_rules_another_replica_changed() {
    use gapless_core::RuleSettings;
    let (schema, one, two) = two_replicas("rulestale");
    let decl = utc();
    one.declare_asset("a", &decl).unwrap();
    let target = |t: &str| RuleSettings {
        target: Some(t.into()),
        ..RuleSettings::default()
    };
    let hour = |h: i64| landed("a", h * 60, h * 60 + 60);
    two.put_rule(&hourly_rule("r", &["a"], target("t1")), received())
        .unwrap();
    one.append(&[hour(0)], received()).unwrap();
    two.put_rule(&hourly_rule("r", &["a"], target("t2")), received())
        .unwrap();
    one.append(&[hour(1)], received()).unwrap();
    let targets: Vec<Option<String>> = story::rules::firings_after(&one, None)
        .iter()
        .map(|f| f.delivery.target.clone())
        .collect();
    assert_eq!(
        targets,
        [Some("t1".to_string()), Some("t2".to_string())],
        "r fired with the target it had at each append"
    );
    // A new rule judges the two hours there are when it is created.
    two.put_rule(
        &hourly_rule("s", &["a"], RuleSettings::default()),
        received(),
    )
    .unwrap();
    one.append(&[hour(2)], received()).unwrap();
    assert!(two.delete_rule("r").unwrap());
    one.append(&[hour(3)], received()).unwrap();
    let fired: Vec<(String, i64, Option<String>)> = story::rules::firings_after(&one, None)
        .iter()
        .map(|f| {
            (
                f.rule.clone(),
                (f.window.start().as_micros() - t(0).as_micros()) / 3_600_000_000,
                f.delivery.target.clone(),
            )
        })
        .collect();
    let f = |r: &str, h: i64, t: Option<&str>| (r.to_string(), h, t.map(String::from));
    assert_eq!(
        fired,
        [
            f("s", 0, None),
            f("s", 1, None),
            f("s", 2, None),
            f("s", 3, None),
        ]
        .into_iter()
        .collect::<Vec<_>>(),
        "r's firings went with it; s fired each hour once"
    );
    let mut admin = admin();
    let rows = admin
        .query(
            &format!(
                "SELECT r.name, w.start_us, w.end_us, w.complete FROM \"{}\".rule_windows w \
                 JOIN \"{0}\".rules r ON r.id = w.rule_id",
                schema.name
            ),
            &[],
        )
        .unwrap();
    let runs: Vec<(String, i64, i64, bool)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    assert_eq!(
        runs,
        [(
            "s".to_string(),
            t(0).as_micros(),
            t(4 * 60).as_micros(),
            true
        )],
        "only s's four windows are recorded, as one run"
    );
}

/// A rule of one asset, whose windows appends judge under the asset's lock
/// alone, while another replica judges its deadlines window by window at
/// the same moments: every window fires `complete` once, `late` at most
/// once and only before it, and ends recorded complete (no judging wrote
/// over another's record).
#[test]
fn deadline_passes_racing_appends_keep_each_window_s_record() {
    use gapless_core::{FiringKind, RuleSettings};
    let (schema, one, two) = two_replicas("deadappend");
    let decl = utc();
    one.declare_asset("a", &decl).unwrap();
    let settings = RuleSettings {
        deadline: Some(Duration::parse("PT1M").unwrap()),
        ..RuleSettings::default()
    };
    one.put_rule(&hourly_rule("r", &["a"], settings), t(0))
        .unwrap();
    let hours = 60_i64;
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        let barrier = &barrier;
        let one = &one;
        let two = &two;
        s.spawn(move || {
            for h in 0..hours {
                barrier.wait();
                one.append(&[landed("a", h * 60, h * 60 + 60)], received())
                    .unwrap();
            }
        });
        s.spawn(move || {
            for h in 0..hours {
                barrier.wait();
                // Window h is late from h * 60 + 61 on.
                two.judge_deadlines(t(h * 60 + 61)).unwrap();
            }
        });
    });
    let fired = story::rules::firings_after(&one, None);
    for h in 0..hours {
        let of: Vec<FiringKind> = fired
            .iter()
            .filter(|f| f.window.start() == t(h * 60))
            .map(|f| f.kind)
            .collect();
        assert!(
            of == [FiringKind::Complete] || of == [FiringKind::Late, FiringKind::Complete],
            "window {h}: {of:?}"
        );
    }
    // Runs of windows: each window counted by its hours.
    let mut admin = admin();
    let rows = admin
        .query(
            &format!(
                "SELECT coalesce(sum((end_us - start_us) / 3600000000) \
                   FILTER (WHERE complete AND generation = 1), 0)::bigint, \
                 coalesce(sum((end_us - start_us) / 3600000000), 0)::bigint \
                 FROM \"{}\".rule_windows",
                schema.name
            ),
            &[],
        )
        .unwrap();
    assert_eq!(
        (rows[0].get::<_, i64>(0), rows[0].get::<_, i64>(1)),
        (hours, hours),
        "every window recorded complete"
    );
}

/// Per asset, its listing entry, every event in sequence order, its
/// coverage and its retractions over all time.
type Answers = Vec<(
    gapless_store::AssetSummary,
    Vec<gapless_store::StoredEvent>,
    gapless_core::IntervalSet,
    gapless_core::IntervalSet,
)>;

/// Everything a ledger answers about `assets` ([`Answers`]).
fn answers(store: &PostgresStore, assets: &[&str]) -> Answers {
    assets
        .iter()
        .map(|&a| {
            (
                store.asset(a).unwrap().unwrap(),
                all_events(store, a, 7),
                store.coverage(a, all_time()).unwrap(),
                store.retractions(a, all_time()).unwrap(),
            )
        })
        .collect()
}

/// A ledger of schema version 3 (events in the old column order, the ids
/// under a unique index of their text) opened by this build is migrated to
/// the current version and answers the same; ids still make duplicates and conflicts.
#[test]
fn version_3_schema_is_migrated() {
    let schema = Schema::new("v3");
    let before = mixed_events(&schema);
    admin()
        .batch_execute(&format!(
            "SET search_path TO \"{}\"; {EVENTS_AS_VERSION_10}
             CREATE TABLE events_v3 (
                 seq bigint NOT NULL, asset_id bigint NOT NULL, id text,
                 start_us bigint NOT NULL, end_us bigint NOT NULL,
                 kind smallint NOT NULL CHECK (kind IN (0, 1)), extra text,
                 produced_at bigint, received_at bigint NOT NULL, CHECK (start_us < end_us));
             INSERT INTO events_v3 SELECT seq, asset_id, id, start_us, end_us, kind, extra,
                 produced_at, received_at FROM events ORDER BY seq;
             DROP TABLE events;
             ALTER TABLE events_v3 RENAME TO events;
             ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (asset_id, seq);
             ALTER TABLE events ADD CONSTRAINT events_asset_id_id_key UNIQUE (asset_id, id);
             CREATE INDEX events_asset_start ON events (asset_id, start_us);
             CREATE INDEX events_retracted ON events (asset_id, start_us) WHERE kind = 1;
             DELETE FROM gapless_version WHERE version >= 4",
            schema.name
        ))
        .unwrap();
    let store = schema.open();
    assert_eq!(answers(&store, &MIXED_ASSETS), before);
    ids_still_decide(&schema, &store, &before);
}

/// A ledger of schema version 10 (events in ten columns: the kind, `extra`
/// and `produced_at` each a column of its own) opened by this build is
/// migrated to the current version, events in eight columns, and answers
/// the same; ids still make duplicates and conflicts.
#[test]
fn version_10_events_are_rewritten_in_eight_columns() {
    let schema = Schema::new("v10");
    let before = mixed_events(&schema);
    let columns = |admin: &mut postgres::Client| -> Vec<String> {
        admin
            .query(
                "SELECT column_name::text FROM information_schema.columns \
                 WHERE table_schema = $1 AND table_name = 'events' ORDER BY ordinal_position",
                &[&schema.name],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    let mut admin = admin();
    admin
        .batch_execute(&format!(
            "SET search_path TO \"{}\"; {EVENTS_AS_VERSION_10} \
             DELETE FROM gapless_version WHERE version >= 11",
            schema.name
        ))
        .unwrap();
    assert_eq!(
        columns(&mut admin).len(),
        10,
        "events as version 10 kept them"
    );
    let store = schema.open();
    assert_eq!(
        columns(&mut admin),
        [
            "seq",
            "asset_id",
            "start_us",
            "end_us",
            "received_at",
            "n",
            "id",
            "detail"
        ]
    );
    assert_eq!(answers(&store, &MIXED_ASSETS), before);
    ids_still_decide(&schema, &store, &before);
}

/// What version 10 kept of the current `events` (`search_path` set to the
/// ledger): ten columns, the indexes of version 8.
const EVENTS_AS_VERSION_10: &str = "
    CREATE TABLE events_v10 (
        seq bigint NOT NULL, asset_id bigint NOT NULL, start_us bigint NOT NULL,
        end_us bigint NOT NULL, received_at bigint NOT NULL, produced_at bigint,
        n integer NOT NULL, kind smallint NOT NULL CHECK (kind IN (0, 1)), id text, extra text,
        CHECK (start_us < end_us));
    INSERT INTO events_v10 SELECT seq, asset_id, start_us, end_us, received_at,
        CASE WHEN get_byte(detail, 0) & 1 = 1
            THEN ('x' || encode(substr(detail, 2, 8), 'hex'))::bit(64)::bigint END,
        abs(n), (n < 0)::int, id,
        CASE WHEN get_byte(detail, 0) & 2 = 2
            THEN convert_from(substr(detail, 2 + 8 * (get_byte(detail, 0) & 1)), 'UTF8') END
        FROM events ORDER BY asset_id, seq;
    DROP TABLE events;
    ALTER TABLE events_v10 RENAME TO events;
    CREATE INDEX events_asset_n ON events (asset_id, (n >> 6));
    CREATE INDEX events_asset_start ON events (asset_id, (start_us >> 32));
    CREATE INDEX events_retracted ON events (asset_id, start_us) WHERE kind = 1;
    CREATE INDEX events_id_hash ON events (hashtextextended(id, asset_id)) WHERE id IS NOT NULL;";

/// The assets of [`mixed_events`].
const MIXED_ASSETS: [&str; 3] = ["a", "b", "c"];

/// A ledger of 1,000 events over [`MIXED_ASSETS`] of every kind of event:
/// landed and retracted, with and without id, some with `extra` and
/// `produced_at`, one with a `produced_at` before 1970; and its answers.
fn mixed_events(schema: &Schema) -> Answers {
    let assets = MIXED_ASSETS;
    {
        let store = schema.open();
        let mut rng = Rng::new(0x0003_0004_AB1E_0001);
        for round in 0..20_i64 {
            let batch: Vec<NewEvent> = (0..50_i64)
                .map(|i| {
                    let asset = assets[rng.below(3) as usize];
                    let a = rng.below(600) as i64;
                    let ev = if rng.below(8) == 0 {
                        retracted(asset, a, a + 1 + rng.below(20) as i64)
                    } else {
                        landed(asset, a, a + 1 + rng.below(30) as i64)
                    };
                    let mut ev = match rng.below(4) {
                        0 => ev,
                        _ => with_id(ev, &format!("id-{round}-{i}")),
                    };
                    match rng.below(10) {
                        0 => ev.extra = Some(format!("{{\"n\": {i}, \"é\": \"ü\"}}")),
                        1 => ev.produced_at = Some(t(a)),
                        2 => {
                            ev.extra = Some(format!("{{\"n\": {i}}}"));
                            ev.produced_at = Some(t(a));
                        }
                        _ => {}
                    }
                    ev
                })
                .collect();
            store.append(&batch, t(100_000 + round)).unwrap();
        }
        let early = NewEvent {
            produced_at: Some(t(-10_000_000)),
            ..landed("c", 700, 701)
        };
        store.append(&[early], t(100_100)).unwrap();
        answers(&store, &assets)
    }
}

/// Each index of `events` as this build makes it, and stored ids deciding
/// as they did: with their content a duplicate, with other content a
/// conflict that stores nothing.
fn ids_still_decide(schema: &Schema, store: &PostgresStore, before: &Answers) {
    let indexes: Vec<String> = admin()
        .query(
            "SELECT indexname::text FROM pg_indexes WHERE schemaname = $1 \
             AND tablename = 'events' ORDER BY 1",
            &[&schema.name],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        indexes,
        [
            "events_asset_n",
            "events_asset_start",
            "events_id_hash",
            "events_retracted"
        ]
    );
    // Every stored id again: with its content a duplicate, with other
    // content a conflict that stores nothing.
    let again: Vec<NewEvent> = before
        .iter()
        .zip(MIXED_ASSETS)
        .flat_map(|((_, events, _, _), asset)| {
            events
                .iter()
                .filter(|e| e.id.is_some())
                .map(move |e| NewEvent {
                    asset: asset.into(),
                    id: e.id.clone(),
                    interval: e.interval,
                    kind: e.kind,
                    extra: e.extra.clone(),
                    produced_at: e.produced_at,
                })
        })
        .collect();
    assert!(again
        .iter()
        .any(|e| e.extra.is_some() && e.produced_at.is_some()));
    let got = store.append(&again, t(200_000)).unwrap();
    assert_eq!((got.accepted, got.duplicates as usize), (0, again.len()));
    let other = NewEvent {
        interval: iv(9_000, 9_001),
        ..again[0].clone()
    };
    match store.append(&[landed("a", 0, 1), other], t(200_000)) {
        Err(StoreError::Conflict { index: 1, .. }) => {}
        got => panic!("expected a conflict, got {got:?}"),
    }
    assert_eq!(&answers(store, &MIXED_ASSETS), before);
}

/// A current schema holding the overview story's fixture, and its pages.
fn overview_schema(name: &str) -> (Schema, Vec<Vec<gapless_store::AssetOverview>>) {
    let schema = Schema::new(name);
    let store = schema.open();
    story::listing::overview_fixture(&store);
    let pages = story::listing::overview_pages(&store);
    (schema, pages)
}

/// A schema of version 6 (before the overview's inputs of version 7) is
/// brought to the current version when opened, each asset's inputs filled
/// from its coverage runs: its pages answer as before, as of any instant.
#[test]
fn version_6_schema_is_migrated() {
    let (schema, before) = overview_schema("v6");
    admin()
        .batch_execute(&format!(
            "SET search_path TO \"{}\"; {EVENTS_AS_VERSION_10} \
             ALTER TABLE assets DROP COLUMN first_start_us, \
             DROP COLUMN first_end_us, DROP COLUMN last_end_us, DROP COLUMN recent_runs; \
             DELETE FROM gapless_version WHERE version >= 7",
            schema.name
        ))
        .unwrap();
    let store = schema.open();
    assert_eq!(story::listing::overview_pages(&store), before);
}

/// A schema of version 8 (recent runs kept as JSON text) is brought to the
/// current version when opened, each asset's recent runs kept again as
/// bytes: its pages answer as before, as of any instant, also for an asset
/// covered before 1970; an asset created afterwards keeps no runs as bytes.
#[test]
fn version_8_schema_is_migrated() {
    let (schema, before) = overview_schema("v8");
    let mut admin = admin();
    let mut tx = admin.transaction().unwrap();
    tx.batch_execute(&format!("SET LOCAL search_path TO \"{}\"", schema.name))
        .unwrap();
    // What version 8 kept: `[[start, end], ...]`, '[]' for none.
    let kept = story::listing::kept_rows_as_json(
        tx.query("SELECT id, recent_runs FROM assets", &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect(),
    );
    tx.batch_execute(EVENTS_AS_VERSION_10).unwrap();
    tx.batch_execute(
        "ALTER TABLE assets ALTER COLUMN recent_runs DROP DEFAULT, \
         ALTER COLUMN recent_runs TYPE text USING NULL, \
         ALTER COLUMN recent_runs SET DEFAULT '[]'; \
         DELETE FROM gapless_version WHERE version >= 9",
    )
    .unwrap();
    for (id, json) in &kept {
        tx.execute(
            "UPDATE assets SET recent_runs = $2 WHERE id = $1",
            &[id, json],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    let store = schema.open();
    assert_eq!(story::listing::overview_pages(&store), before);
    let decl = utc();
    store.declare_asset("new", &decl).unwrap();
    let q = format!(
        "SELECT recent_runs FROM \"{}\".assets WHERE name = 'new'",
        schema.name
    );
    let new: Vec<u8> = admin.query_one(&q, &[]).unwrap().get(0);
    assert!(new.is_empty());
}

/// A schema of version 9 (a row of `rule_windows` a window) is brought to
/// the current version when opened, the rows of windows that follow one
/// another with one record joined into runs: judging goes on from them as
/// before (no window fires again), and a run that grows keeps its row.
#[test]
fn version_9_rule_windows_are_joined_into_runs() {
    let schema = Schema::new("v9");
    let fired = story::rules::window_runs_fixture(&schema.open());
    let mut admin = admin();
    let mut tx = admin.transaction().unwrap();
    tx.batch_execute(&format!("SET LOCAL search_path TO \"{}\"", schema.name))
        .unwrap();
    tx.batch_execute(EVENTS_AS_VERSION_10).unwrap();
    // What version 9 kept: a row for each window, on pages filled full.
    tx.batch_execute(
        "CREATE TABLE windows_v9 AS SELECT w.rule_id, h AS start_us, \
           h + 3600000000 AS end_us, w.complete, w.generation, w.late \
         FROM rule_windows w, generate_series(w.start_us, w.end_us - 1, 3600000000) AS h; \
         DELETE FROM rule_windows; ALTER TABLE rule_windows RESET (fillfactor); \
         INSERT INTO rule_windows SELECT * FROM windows_v9; DROP TABLE windows_v9; \
         DELETE FROM gapless_version WHERE version >= 10",
    )
    .unwrap();
    let kept: i64 = tx
        .query_one("SELECT count(*) FROM rule_windows", &[])
        .unwrap()
        .get(0);
    assert_eq!(kept, 9, "a row a window, as version 9 kept them");
    tx.commit().unwrap();
    let store = schema.open();
    let runs = |admin: &mut postgres::Client| -> Vec<(i64, i64, bool, i64)> {
        admin
            .query(
                &format!(
                    "SELECT (start_us - $1) / 3600000000, (end_us - $1) / 3600000000, \
                       complete, generation \
                     FROM \"{}\".rule_windows ORDER BY start_us",
                    schema.name
                ),
                &[&t(0).as_micros()],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect()
    };
    assert_eq!(runs(&mut admin), story::rules::FIXTURE_RUNS);
    story::rules::window_runs_grow(&store, fired);
    assert_eq!(runs(&mut admin), story::rules::GROWN_RUNS);
}
