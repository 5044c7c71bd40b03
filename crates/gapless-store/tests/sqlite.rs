//! The SQLite backend: the shared story on fresh files, plus what only a
//! file can show (reopening, foreign files, permissions, durability).

mod story;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gapless_core::{AssetDecl, Duration, Grid, Instant, Policy, Rule, RuleDef, RuleSettings};
use gapless_store::{AssetOverview, EventQuery, SqliteStore, Store, StoreError};
use story::{all_events, all_time, iv, landed, replay, retracted, t, with_id};

fn fresh(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

fn received() -> Instant {
    t(1_000_000)
}

/// Rule `name`: the hours of `asset` from the base, complete when full.
fn hourly(name: &str, asset: &str, settings: RuleSettings) -> Rule {
    Rule {
        name: name.into(),
        def: RuleDef::new(
            vec![asset.into()],
            Grid::parse("1h").unwrap(),
            "UTC",
            Policy::Full,
            t(0),
            None,
        )
        .unwrap(),
        settings,
    }
}

/// Each scenario of the story on a fresh ledger file, then the store's
/// invariants: the backend-neutral ones and SQLite's own `verify`.
macro_rules! story_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let dir = tempfile::tempdir().unwrap();
                let store = SqliteStore::open(fresh(&dir, "ledger.db")).unwrap();
                story::$name(&store);
                story::check_invariants(&store);
                store.verify().unwrap();
            }
        )*
        /// Every scenario is wired up above.
        #[test]
        fn story_is_complete() {
            let wired = [$(stringify!($name)),*];
            for (name, _) in story::SCENARIOS {
                assert!(wired.contains(name), "scenario {name} is not run for SQLite");
            }
        }
    };
}

story::with_scenarios!(story_tests);

#[test]
fn store_is_send_and_sync() {
    fn check<T: Send + Sync + 'static>() {}
    check::<SqliteStore>();
}

#[test]
fn run_all_via_open() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::cell::Cell::new(0);
    story::run_all(&|| {
        n.set(n.get() + 1);
        gapless_store::open(fresh(&dir, &format!("l{}.db", n.get())).to_str().unwrap()).unwrap()
    });
}

fn open_err(path: &Path) -> String {
    match SqliteStore::open(path) {
        Err(e @ StoreError::Open { .. }) => e.to_string(),
        Err(e) => panic!("expected an Open error, got {e:?}"),
        Ok(_) => panic!("{} opened as a ledger", path.display()),
    }
}

#[test]
fn reopen_preserves_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let decl = AssetDecl {
        key_span: Some(Duration::parse("PT5M").unwrap()),
        tz: jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
    };
    let (log, cover, listing) = {
        let store = SqliteStore::open(&path).unwrap();
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
    let store = SqliteStore::open(&path).unwrap();
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

#[test]
fn garbage_file_is_not_a_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "notes.txt");
    let garbage: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    let msg = open_err(&path);
    assert!(msg.contains("not a gapless ledger"), "{msg}");
    assert!(msg.contains("notes.txt"), "{msg}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        garbage,
        "the file was changed"
    );

    let short = fresh(&dir, "short.txt");
    std::fs::write(&short, "hello\n").unwrap();
    let msg = open_err(&short);
    assert!(msg.contains("not a gapless ledger"), "{msg}");
}

/// A storage error keeps SQLite's own error as its source, behind the
/// same one-line message.
#[test]
fn errors_keep_sqlite_s_error_as_their_source() {
    use std::error::Error as _;

    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "notes.txt");
    std::fs::write(
        &path,
        "this is not a database, it is a long line of text\n".repeat(100),
    )
    .unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot open ledger {}: not a gapless ledger (not a SQLite database)",
            path.display()
        )
    );
    let cause = err
        .source()
        .and_then(|s| s.downcast_ref::<rusqlite::Error>())
        .unwrap_or_else(|| panic!("no SQLite error under {err:?}"));
    assert_eq!(
        cause.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase)
    );

    // A fault of a ledger in use: a pragma that answers nothing.
    let store = SqliteStore::open(fresh(&dir, "ledger.db")).unwrap();
    let err = store.pragma("no_such_pragma").unwrap_err();
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    assert_eq!(err.to_string(), "storage failure: Query returned no rows");
    assert!(
        matches!(
            err.source()
                .and_then(|s| s.downcast_ref::<rusqlite::Error>()),
            Some(rusqlite::Error::QueryReturnedNoRows)
        ),
        "{err:?}"
    );
    // A clone shares the cause.
    assert!(err.clone().source().is_some());
}

#[test]
fn foreign_sqlite_database_is_not_a_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "other.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'x');")
            .unwrap();
    }
    let msg = open_err(&path);
    assert!(msg.contains("not a gapless ledger"), "{msg}");
    let c = rusqlite::Connection::open(&path).unwrap();
    let tables: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1, "the foreign database was changed");

    // Another application's id on an otherwise empty database.
    let path = fresh(&dir, "app.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.pragma_update(None, "application_id", 1234).unwrap();
    }
    assert!(open_err(&path).contains("not a gapless ledger"));
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    drop(SqliteStore::open(&path).unwrap());
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
    }
    let msg = open_err(&path);
    assert!(msg.contains("schema version 99"), "{msg}");
}

#[test]
fn empty_file_becomes_a_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "empty.db");
    std::fs::write(&path, b"").unwrap();
    let store = SqliteStore::open(&path).unwrap();
    store.append(&[landed("A", 0, 1)], received()).unwrap();
    assert_eq!(all_events(&store, "A", 10).len(), 1);
}

#[test]
fn unopenable_paths_are_open_errors() {
    let dir = tempfile::tempdir().unwrap();
    // A directory.
    let msg = open_err(dir.path());
    assert!(msg.contains("directory"), "{msg}");
    // A missing directory.
    let msg = open_err(&dir.path().join("missing/ledger.db"));
    assert!(msg.contains("does not exist"), "{msg}");
    // No path; an in-memory database is no ledger.
    assert!(open_err(Path::new("")).contains("empty"));
    assert!(open_err(Path::new(":memory:")).contains("WAL"));
    // Below a file.
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let msg = open_err(&dir.path().join("file/ledger.db"));
    assert!(msg.contains("is not a directory"), "{msg}");
}

/// Whether this process can write where permissions say it cannot (root).
fn permissions_are_bypassed(dir: &Path) -> bool {
    let probe = dir.join(".probe");
    let bypassed = std::fs::write(&probe, "x").is_ok();
    let _ = std::fs::remove_file(&probe);
    bypassed
}

#[cfg(unix)]
#[test]
fn read_only_directory_is_an_open_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    if permissions_are_bypassed(&ro) {
        eprintln!("skipped: running with permission checks bypassed (root)");
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
        return;
    }
    let msg = open_err(&ro.join("ledger.db"));
    assert!(msg.contains("ro"), "{msg}");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn durability_settings() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.pragma("journal_mode").unwrap(), "wal");
    // 2 = FULL: the WAL is synced at every commit.
    assert_eq!(store.pragma("synchronous").unwrap(), "2");
    assert_eq!(store.pragma("application_id").unwrap(), "1196444755");
    assert_eq!(store.pragma("user_version").unwrap(), "8");
    assert!(store.pragma("synchronous; DROP TABLE events").is_err());
    // WAL mode is a property of the file.
    let c = rusqlite::Connection::open(&path).unwrap();
    let mode: String = c
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn two_stores_on_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    std::thread::scope(|s| {
        for (w, store) in [&a, &b].into_iter().enumerate() {
            s.spawn(move || {
                for i in 0..50_i64 {
                    let m = (i * 2 + w as i64) * 3;
                    store
                        .append(
                            &[with_id(landed("A", m, m + 3), &format!("{w}-{i}"))],
                            received(),
                        )
                        .unwrap();
                }
            });
        }
    });
    for store in [&a, &b] {
        let log = all_events(store, "A", 1000);
        assert_eq!(log.len(), 100);
        assert_eq!(
            store
                .coverage("A", all_time())
                .unwrap()
                .runs()
                .collect::<Vec<_>>(),
            vec![iv(0, 300)]
        );
        assert_eq!(store.coverage("A", all_time()).unwrap(), replay(&log));
    }
}

/// Two stores on one file take turns with group commits on a rule's asset:
/// each judges the window states the other wrote.
#[test]
fn group_commits_of_two_stores_judge_each_other_s_states() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let (one, two) = (
        SqliteStore::open(&path).unwrap(),
        SqliteStore::open(&path).unwrap(),
    );
    story::rules::group_commits_take_turns_with_another_store(&one, &two);
    one.verify().unwrap();
}

/// The child side of `two_processes_append_to_one_file`.
#[test]
fn writer_child() {
    let Ok(path) = std::env::var("GAPLESS_WRITER_CHILD_DB") else {
        return;
    };
    let store = SqliteStore::open(&path).unwrap();
    for i in 0..100_i64 {
        let m = i * 2 + 1;
        store
            .append(
                &[with_id(landed("A", m, m + 1), &format!("child-{i}"))],
                received(),
            )
            .unwrap();
    }
}

/// Two processes appending to one file at once: every event stored once,
/// coverage the replay of the log.
#[test]
fn two_processes_append_to_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let store = SqliteStore::open(&path).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "writer_child", "--test-threads=1"])
        .env("GAPLESS_WRITER_CHILD_DB", &path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for i in 0..100_i64 {
        let m = i * 2;
        store
            .append(
                &[with_id(landed("A", m, m + 1), &format!("parent-{i}"))],
                received(),
            )
            .unwrap();
    }
    assert!(child.wait().unwrap().success(), "the child failed");
    let log = all_events(&store, "A", 1000);
    assert_eq!(log.len(), 200);
    assert_eq!(
        store
            .coverage("A", all_time())
            .unwrap()
            .runs()
            .collect::<Vec<_>>(),
        vec![iv(0, 200)]
    );
    assert_eq!(store.coverage("A", all_time()).unwrap(), replay(&log));
    assert_eq!(store.assets().unwrap()[0].events, 200);
    store.verify().unwrap();
}

/// The child side of `killed_process_loses_no_acknowledged_event`.
#[test]
fn crash_child() {
    let Ok(path) = std::env::var("GAPLESS_CRASH_CHILD_DB") else {
        return;
    };
    let store = SqliteStore::open(&path).unwrap();
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

/// Kill -9 a process that is appending: every acknowledged batch is there
/// after reopening, and coverage matches the log.
#[test]
fn killed_process_loses_no_acknowledged_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    drop(SqliteStore::open(&path).unwrap());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env("GAPLESS_CRASH_CHILD_DB", &path)
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
    let store = SqliteStore::open(&path).unwrap();
    let log = all_events(&store, "A", 10_000);
    assert!(
        log.len() as i64 >= (acked + 1) * 50,
        "{} events, {} batches acknowledged",
        log.len(),
        acked + 1
    );
    assert_eq!(log.len() % 50, 0, "a batch was stored in part");
    assert_eq!(store.coverage("A", all_time()).unwrap(), replay(&log));
    store.verify().unwrap();
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

#[test]
fn bad_asset_name_is_invalid_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(fresh(&dir, "ledger.db")).unwrap();
    for bad in ["", "a\nb", &"x".repeat(513)] {
        let err = store
            .append(&[landed("ok", 0, 1), landed(bad, 0, 1)], received())
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
        assert!(err.to_string().contains("event 1"), "{err}");
    }
    assert!(store.assets().unwrap().is_empty());
    let decl = AssetDecl {
        key_span: None,
        tz: jiff::tz::TimeZone::UTC,
    };
    assert!(matches!(
        store.declare_asset("", &decl),
        Err(StoreError::Invalid(_))
    ));
}

/// Judging writes its rows skipping any the ledger refuses rather than
/// aborting (SQLite then keeps no statement journal); a refused row is a
/// fault that fails the batch whole, never a batch stored without its
/// firing.
#[test]
fn a_refused_firing_fails_its_batch_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let store = SqliteStore::open(&path).unwrap();
    store
        .append(&[landed("orders", 0, 30)], received())
        .unwrap();
    let rule = hourly("orders_hourly", "orders", RuleSettings::default());
    store.put_rule(&rule, received()).unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON firings BEGIN SELECT RAISE(IGNORE); END",
        )
        .unwrap();
    let err = store
        .append(&[landed("orders", 30, 60)], received())
        .unwrap_err();
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "storage failure: the ledger refused 1 of 1 firings judging wrote"
    );
    let single = store.append_many(&[&[landed("orders", 30, 60)][..]], received());
    assert!(
        matches!(single[0], Err(StoreError::Backend { .. })),
        "{single:?}"
    );
    assert_eq!(
        store
            .coverage("orders", iv(0, 60))
            .unwrap()
            .runs()
            .collect::<Vec<_>>(),
        vec![iv(0, 30)]
    );
    let firings = store.firings(&Default::default()).unwrap();
    assert!(firings.firings.is_empty(), "{firings:?}");
}

/// A big batch (a bigger page cache while it runs) stores the same as any
/// other, and the cache is back to normal after, also after a conflict.
#[test]
fn big_batch_and_cache_size() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(fresh(&dir, "ledger.db")).unwrap();
    let normal = store.pragma("cache_size").unwrap();
    let mut batch: Vec<_> = (0..120_000_i64)
        .map(|i| with_id(landed("A", i, i + 1), &i.to_string()))
        .collect();
    batch.push(with_id(landed("A", 0, 2), "0")); // conflicts with the first
    let err = store.append(&batch, received()).unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { index: 120_000, .. }),
        "{err:?}"
    );
    assert_eq!(store.pragma("cache_size").unwrap(), normal);
    assert!(store.assets().unwrap().is_empty());
    batch.pop();
    let got = store.append(&batch, received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (120_000, 0));
    assert_eq!(store.pragma("cache_size").unwrap(), normal);
    assert_eq!(
        store
            .coverage("A", all_time())
            .unwrap()
            .runs()
            .collect::<Vec<_>>(),
        vec![iv(0, 120_000)]
    );
    assert_eq!(store.assets().unwrap()[0].events, 120_000);

    // The same in chunks: the cache grows once past the threshold.
    let mut chunks = (0..12_i64).map(|c| {
        Ok((0..10_000_i64)
            .map(|i| landed("B", c * 10_000 + i, c * 10_000 + i + 1))
            .collect::<Vec<_>>())
    });
    let mut handed_back = 0;
    let got = store
        .append_chunks(&mut chunks, &mut |c| handed_back += c.len(), received())
        .unwrap();
    assert_eq!((got.accepted, got.duplicates), (120_000, 0));
    // Each chunk comes back once stored, for the caller to free.
    assert_eq!(handed_back, 120_000);
    assert_eq!(store.pragma("cache_size").unwrap(), normal);
    assert_eq!(
        store
            .coverage("B", all_time())
            .unwrap()
            .runs()
            .collect::<Vec<_>>(),
        vec![iv(0, 120_000)]
    );
}

/// Closing the store checkpoints: no WAL is left beside the file.
#[test]
fn closing_removes_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let store = SqliteStore::open(&path).unwrap();
    store.append(&[landed("A", 0, 1)], received()).unwrap();
    assert_eq!(all_events(&store, "A", 10).len(), 1); // opens a reader
    let wal = fresh(&dir, "ledger.db-wal");
    assert!(wal.exists());
    drop(store);
    assert!(!wal.exists(), "WAL left behind");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(all_events(&store, "A", 10).len(), 1);
}

/// `verify` notices a ledger whose runs or statistics disagree with its
/// events.
#[test]
fn verify_finds_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let store = SqliteStore::open(&path).unwrap();
    store
        .append(&[landed("A", 0, 10), retracted("A", 2, 3)], received())
        .unwrap();
    store.verify().unwrap();
    let damage = |sql: &str, what: &str| {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(&format!("BEGIN; {sql}; COMMIT;")).unwrap();
        let err = store.verify().unwrap_err().to_string();
        assert!(err.contains(what), "{err}");
    };
    damage("UPDATE coverage_runs SET end_us = end_us + 1 WHERE start_us = (SELECT max(start_us) FROM coverage_runs)", "coverage");
    damage("DELETE FROM coverage_runs", "coverage");
    damage("UPDATE assets SET event_count = 5", "event count");
}

/// `verify` notices an asset whose kept overview inputs disagree with its
/// coverage runs.
#[test]
fn verify_finds_a_damaged_overview() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let store = SqliteStore::open(&path).unwrap();
    store
        .append(&[landed("A", 0, 10), landed("A", 20, 30)], received())
        .unwrap();
    store.verify().unwrap();
    for sql in [
        "UPDATE assets SET first_end_us = first_end_us + 1",
        "UPDATE assets SET last_end_us = NULL",
        "UPDATE assets SET recent_runs = X''",
        "UPDATE assets SET recent_runs = NULL",
        // Not a whole number of runs.
        "UPDATE assets SET recent_runs = substr(recent_runs, 2)",
        // The runs in reverse: their starts after their ends.
        "UPDATE assets SET recent_runs = unhex(printf('%016x%016x%016x%016x', \
         last_end_us, last_end_us - 600000000, first_end_us, first_start_us))",
    ] {
        let c = rusqlite::Connection::open(&path).unwrap();
        let saved: (Option<i64>, Option<i64>, Option<Vec<u8>>) = c
            .query_row(
                "SELECT first_end_us, last_end_us, recent_runs FROM assets",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        c.execute_batch(sql).unwrap();
        let err = store.verify().unwrap_err().to_string();
        assert!(err.contains("overview"), "{sql}: {err}");
        c.execute(
            "UPDATE assets SET first_end_us = ?1, last_end_us = ?2, recent_runs = ?3",
            rusqlite::params![saved.0, saved.1, saved.2],
        )
        .unwrap();
        store.verify().unwrap();
    }
}

/// A ledger of schema version 1 (before rules) is brought to version 2 when
/// opened, keeping its events.
#[test]
fn version_1_ledger_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        store.append(&[landed("a", 0, 60)], received()).unwrap();
    }
    {
        // Make it what version 1 wrote: no rule tables.
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "DROP TABLE meta; DROP TABLE rules; DROP TABLE rule_assets; \
             DROP TABLE rule_windows; DROP TABLE firings; \
             ALTER TABLE assets DROP COLUMN last_received_us; \
             ALTER TABLE assets DROP COLUMN pruned_before_us; PRAGMA user_version = 1;",
        )
        .unwrap();
        c.execute_batch(DROP_OVERVIEW_COLUMNS).unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.pragma("user_version").unwrap(), "8");
    assert_eq!(all_events(&store, "a", 10).len(), 1);
    assert_eq!(store.ledger_id().unwrap().len(), 32);
    assert!(store.rules().unwrap().is_empty());
    assert_eq!(
        store.asset("a").unwrap().unwrap().last_received,
        Some(received())
    );
    store.verify().unwrap();
}

/// A ledger of schema version 2 (before `last_received_us`) is brought to
/// the current version when opened, each asset's last received instant read from
/// its events.
#[test]
fn version_2_ledger_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let later = Instant::from_micros(received().as_micros() + 5).unwrap();
    {
        let store = SqliteStore::open(&path).unwrap();
        store.append(&[landed("a", 0, 60)], received()).unwrap();
        store.append(&[landed("a", 60, 120)], later).unwrap();
        let decl = AssetDecl {
            key_span: None,
            tz: jiff::tz::TimeZone::UTC,
        };
        store.declare_asset("declared", &decl).unwrap();
    }
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "ALTER TABLE assets DROP COLUMN last_received_us; \
             ALTER TABLE assets DROP COLUMN pruned_before_us; PRAGMA user_version = 2;",
        )
        .unwrap();
        c.execute_batch(DROP_OVERVIEW_COLUMNS).unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.pragma("user_version").unwrap(), "8");
    assert_eq!(
        store.asset("a").unwrap().unwrap().last_received,
        Some(later)
    );
    assert_eq!(
        store.asset("declared").unwrap().unwrap().last_received,
        None
    );
    store.verify().unwrap();
}

/// A ledger of schema version 3 (before `pruned_before_us`) is brought to
/// the current version when opened: nothing of it was pruned.
#[test]
fn version_3_ledger_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        store.append(&[landed("a", 0, 60)], received()).unwrap();
    }
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "ALTER TABLE assets DROP COLUMN pruned_before_us; PRAGMA user_version = 3;",
        )
        .unwrap();
        c.execute_batch(DROP_OVERVIEW_COLUMNS).unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.pragma("user_version").unwrap(), "8");
    let a = store.asset("a").unwrap().unwrap();
    assert_eq!((a.events, a.pruned_before), (1, None));
    store.verify().unwrap();
}

/// The overview's columns of version 5, dropped to make an older ledger.
const DROP_OVERVIEW_COLUMNS: &str = "ALTER TABLE assets DROP COLUMN first_start_us; \
     ALTER TABLE assets DROP COLUMN first_end_us; ALTER TABLE assets DROP COLUMN last_end_us; \
     ALTER TABLE assets DROP COLUMN recent_runs;";

/// A current ledger holding the overview story's fixture, and its pages.
fn overview_ledger(dir: &tempfile::TempDir) -> (PathBuf, Vec<Vec<AssetOverview>>) {
    let path = fresh(dir, "ledger.db");
    let store = SqliteStore::open(&path).unwrap();
    story::listing::overview_fixture(&store);
    let pages = story::listing::overview_pages(&store);
    (path, pages)
}

/// A ledger of schema version 4 (before the overview's inputs) is brought
/// to the current version when opened, each asset's inputs filled from its coverage
/// runs: its pages answer as before, as of any instant.
#[test]
fn version_4_ledger_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let (path, before) = overview_ledger(&dir);
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(DROP_OVERVIEW_COLUMNS).unwrap();
        c.execute_batch("PRAGMA user_version = 4;").unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.pragma("user_version").unwrap(), "8");
    assert_eq!(story::listing::overview_pages(&store), before);
    store.verify().unwrap();
}

/// A ledger of schema version 5 (recent runs kept as JSON text) is brought
/// to version 6 when opened, each asset's recent runs kept again as bytes:
/// its pages answer as before, as of any instant, also for an asset
/// covered before 1970; an asset created afterwards keeps no runs as bytes.
#[test]
fn version_5_ledger_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let (path, before) = overview_ledger(&dir);
    {
        // What version 5 kept: `[[start, end], ...]`, '[]' for none.
        let c = rusqlite::Connection::open(&path).unwrap();
        let kept = story::listing::kept_rows_as_json(
            c.prepare("SELECT id, recent_runs FROM assets")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap(),
        );
        c.execute_batch(
            "ALTER TABLE assets DROP COLUMN recent_runs; \
             ALTER TABLE assets ADD COLUMN recent_runs TEXT DEFAULT '[]'; \
             PRAGMA user_version = 5;",
        )
        .unwrap();
        for (id, json) in kept {
            c.execute(
                "UPDATE assets SET recent_runs = ?2 WHERE id = ?1",
                rusqlite::params![id, json],
            )
            .unwrap();
        }
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.pragma("user_version").unwrap(), "8");
    assert_eq!(story::listing::overview_pages(&store), before);
    store.verify().unwrap();
    let decl = AssetDecl {
        key_span: None,
        tz: jiff::tz::TimeZone::UTC,
    };
    store.declare_asset("new", &decl).unwrap();
    store.verify().unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    let kinds: Vec<String> = c
        .prepare("SELECT DISTINCT typeof(recent_runs) FROM assets ORDER BY 1")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(kinds, ["blob", "null"]);
    let new: Vec<u8> = c
        .query_row(
            "SELECT recent_runs FROM assets WHERE name = 'new'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(new.is_empty());
}

/// Version 6 checked a firing's kind and state `IN` lists; version 7 by
/// comparisons. A version 6 ledger is migrated in place: its firings are
/// kept, the table reads as a new ledger's, and the checks still refuse a
/// kind or state out of range.
#[test]
fn version_6_ledger_is_migrated() {
    use gapless_core::FiringKind;
    use gapless_store::FiringQuery;

    let firings_sql = |c: &rusqlite::Connection| -> String {
        c.query_row(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'firings'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let new_sql = {
        let store = SqliteStore::open(&path).unwrap();
        let decl = AssetDecl {
            key_span: None,
            tz: jiff::tz::TimeZone::UTC,
        };
        store.declare_asset("orders", &decl).unwrap();
        let settings = RuleSettings {
            target: Some("hook".into()),
            ..RuleSettings::default()
        };
        let rule = hourly("hourly", "orders", settings);
        store.put_rule(&rule, t(0)).unwrap();
        store.append(&[landed("orders", 0, 120)], t(120)).unwrap();
        drop(store);
        let c = rusqlite::Connection::open(&path).unwrap();
        let sql = firings_sql(&c);
        assert!(sql.contains("kind = 0 OR kind = 1 OR kind = 2"), "{sql}");
        // The table as version 6 made it.
        let old = sql
            .replace(
                "CHECK (kind = 0 OR kind = 1 OR kind = 2)",
                "CHECK (kind IN (0, 1, 2))",
            )
            .replace(
                "CHECK (state = 0 OR state = 1 OR state = 2 OR state = 3)",
                "CHECK (state IN (0, 1, 2, 3))",
            );
        let version: i64 = c
            .pragma_query_value(None, "schema_version", |r| r.get(0))
            .unwrap();
        c.execute_batch("PRAGMA writable_schema = ON").unwrap();
        c.execute(
            "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = 'firings'",
            [&old],
        )
        .unwrap();
        c.execute_batch(&format!(
            "PRAGMA schema_version = {}; PRAGMA writable_schema = OFF; PRAGMA user_version = 6;",
            version + 1
        ))
        .unwrap();
        sql
    };

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.pragma("user_version").unwrap(), "8");
    let c = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(firings_sql(&c), new_sql);
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let kinds = |store: &SqliteStore| -> Vec<FiringKind> {
        store
            .firings(&FiringQuery::default())
            .unwrap()
            .firings
            .iter()
            .map(|f| f.kind)
            .collect()
    };
    assert_eq!(kinds(&store), [FiringKind::Complete; 2]);
    store.append(&[landed("orders", 120, 180)], t(180)).unwrap();
    assert_eq!(kinds(&store), [FiringKind::Complete; 3]);
    for (kind, state) in [(3, 1), (-1, 1), (0, 4)] {
        let err = c
            .execute(
                "INSERT INTO firings (rule_id, kind, start_us, end_us, key, generation, \
                 covered_ratio, recorded_us, state) VALUES (1, ?1, 0, 1, 'k', 1, 1.0, 0, ?2)",
                [kind, state],
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("CHECK constraint failed"),
            "kind {kind}, state {state}: {err}"
        );
    }
    store.verify().unwrap();
}

/// A version 7 ledger (a row of `rule_windows` a window) is migrated when
/// opened, the rows of windows that follow one another with one record
/// joined into runs: judging goes on from them as before (no window fires
/// again), and a run that grows keeps its row.
#[test]
fn version_7_rule_windows_are_joined_into_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(&dir, "ledger.db");
    let fired = story::rules::window_runs_fixture(&SqliteStore::open(&path).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    // What version 7 kept: a row for each window.
    c.execute_batch(
        "CREATE TABLE windows_v7 AS WITH RECURSIVE h(rule_id, start_us, run_end, complete, \
           generation, late) AS ( \
           SELECT rule_id, start_us, end_us, complete, generation, late FROM rule_windows \
           UNION ALL SELECT rule_id, start_us + 3600000000, run_end, complete, generation, late \
           FROM h WHERE start_us + 3600000000 < run_end) \
         SELECT rule_id, start_us, start_us + 3600000000 AS end_us, complete, generation, late \
         FROM h; \
         DELETE FROM rule_windows; INSERT INTO rule_windows SELECT * FROM windows_v7; \
         DROP TABLE windows_v7; PRAGMA user_version = 7;",
    )
    .unwrap();
    let kept: i64 = c
        .query_row("SELECT count(*) FROM rule_windows", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, 9, "a row a window, as version 7 kept them");
    let runs = |c: &rusqlite::Connection| -> Vec<(i64, i64, bool, i64)> {
        c.prepare(
            "SELECT (start_us - ?1) / 3600000000, (end_us - ?1) / 3600000000, complete, \
             generation FROM rule_windows ORDER BY start_us",
        )
        .unwrap()
        .query_map([t(0).as_micros()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.pragma("user_version").unwrap(), "8");
    assert_eq!(runs(&c), story::rules::FIXTURE_RUNS);
    story::rules::window_runs_grow(&store, fired);
    assert_eq!(runs(&c), story::rules::GROWN_RUNS);
}
