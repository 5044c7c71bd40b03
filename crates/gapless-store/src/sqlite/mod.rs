//! The embedded SQLite backend: one file, WAL mode, durable commits.
//!
//! # Layout
//!
//! - `schema.rs`: the schema, recognising a ledger file, connection settings.
//! - `append.rs`: appends: idempotency, sequence, coverage runs kept up to
//!   date in the same transaction.
//! - `read.rs`: coverage, events, declarations and the asset listing.
//! - `prune.rs`: removing old events and firings in bounded transactions.
//! - `rules.rs`: rules, judging an append's windows in its transaction,
//!   deadlines, firings.
//!
//! # Concurrency
//!
//! One write connection behind a mutex (writes are serialised anyway) and a
//! pool of read connections, opened on demand, so reads run beside a write
//! (WAL readers see the last committed state). Other processes may use the
//! same file: a write waits up to 30 s for their write lock.
//!
//! # Durability
//!
//! WAL mode with `synchronous = FULL`: the WAL is synced at every commit, so
//! an acknowledged append survives a crash of the process or the machine.
//! `append_many` shares one commit (one sync) among its batches, each atomic
//! on its own (a group with a refused batch is stored again with a
//! savepoint per batch).
//!
//! # Failures
//!
//! A full disk (or a database at its size limit) is [`StoreError::Full`]
//! with a fixed message, SQLite's own words logged; nothing of the batch is
//! stored. When such a fault rolls back a group's shared transaction, every
//! batch of the group answers the error.
//!
//! # Costs
//!
//! - An append writes each new event to the table and two indexes and
//!   rewrites only the coverage runs that its events touch; appends at the
//!   end of an asset's time line touch one run.
//! - `coverage` and `run_containing` read only the runs they answer with
//!   (one index seek); nothing is replayed when a ledger is opened.
//! - An event page walks the events in sequence order or seeks the start
//!   index and sorts, whichever the asset's share of the events and the
//!   range's share of its time line make cheaper. `limit` 0 means the
//!   largest page (10,000).
//! - The write connection keeps a 64 MiB page cache; a batch of 100,000
//!   events or more may grow it to 256 MiB while it is appended. Beyond
//!   that an append's memory does not grow with its size: chunks go back
//!   to the caller once stored, and each asset's new events are kept
//!   compacted (a contiguous backfill is a handful of entries).

mod append;
mod prune;
mod read;
mod rules;
mod schema;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use gapless_core::{AssetDecl, Instant, Interval, IntervalSet, NewEvent, Rule};
use rusqlite::Connection;

use crate::error::FULL;
use crate::{
    Appended, AssetSummary, EventPage, EventQuery, FiringPage, FiringQuery, Result, RulePut,
    StoreError, StoredRule,
};
use crate::{AssetPage, AssetQuery, RulePage, RuleQuery};

/// A ledger in one SQLite file.
///
/// `Send + Sync`: share it between threads behind an `Arc`.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    // Fields drop in order: the readers close first, so that the writer is
    // the last connection and checkpoints and removes the WAL on closing.
    readers: Mutex<Vec<Connection>>,
    writer: Mutex<Writer>,
    untaken: crate::rule::Untaken,
}

/// The write connection and what it keeps between appends: the rules,
/// read again only when their version in the ledger moved.
#[derive(Debug)]
pub(crate) struct Writer {
    pub(crate) conn: Connection,
    pub(crate) watches: rules::WatchCache,
}

impl std::ops::Deref for Writer {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl std::ops::DerefMut for Writer {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// Read connections kept for reuse.
const MAX_IDLE_READERS: usize = 8;

impl SqliteStore {
    /// Open or create the ledger at `path`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Open`] when the file cannot be created or opened (missing
    /// directory, read-only directory, a directory), or is not a gapless
    /// ledger (another SQLite database, not a database at all, a newer schema);
    /// [`StoreError::Full`] when the disk has no room to create it.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        let writer = schema::open_writer(&path)?;
        Ok(SqliteStore {
            path,
            readers: Mutex::new(Vec::new()),
            writer: Mutex::new(Writer {
                conn: writer,
                watches: rules::WatchCache::default(),
            }),
            untaken: crate::rule::Untaken::default(),
        })
    }

    /// The path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Check the ledger against itself: each asset's coverage runs equal a
    /// replay of its events in sequence order, and its event count, longest
    /// event and time hull match its events; plus SQLite's own integrity
    /// check. Reads every event: for tests and repairs, not for serving.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] naming the first mismatch.
    pub fn verify(&self) -> Result<()> {
        self.read(read::verify)
    }

    /// The value of SQLite pragma `name` on the write connection, as text
    /// (for diagnostics and tests: `journal_mode`, `synchronous`, ...).
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] when `name` is not a pragma name.
    pub fn pragma(&self, name: &str) -> Result<String> {
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(StoreError::Invalid(format!(
                "{name:?} is not a pragma name"
            )));
        }
        let conn = self.writer();
        let value: rusqlite::types::Value = conn.pragma_query_value(None, name, |r| r.get(0))?;
        Ok(match value {
            rusqlite::types::Value::Null => String::new(),
            rusqlite::types::Value::Integer(i) => i.to_string(),
            rusqlite::types::Value::Real(f) => f.to_string(),
            rusqlite::types::Value::Text(s) => s,
            rusqlite::types::Value::Blob(b) => format!("{b:?}"),
        })
    }

    fn writer(&self) -> MutexGuard<'_, Writer> {
        // A panic while holding the lock rolled its transaction back on
        // unwinding, so the connection is still usable.
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `f` on a read connection from the pool.
    fn read<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let pooled = self.readers.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut conn = match pooled {
            Some(c) => c,
            None => schema::open_reader(&self.path)?,
        };
        let out = f(&mut conn);
        if !conn.is_autocommit() {
            // Never put back a connection with an open transaction.
            return out;
        }
        let mut pool = self.readers.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < MAX_IDLE_READERS {
            pool.push(conn);
        }
        out
    }
}

/// A one-line description of a SQLite error, without SQL.
pub(crate) fn describe(e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode as C;
    match e {
        rusqlite::Error::SqliteFailure(err, msg) => match err.code {
            C::DatabaseBusy | C::DatabaseLocked => format!(
                "the ledger is locked by another process (waited {} s)",
                schema::BUSY_TIMEOUT.as_secs()
            ),
            C::ReadOnly => "the ledger file is read-only".into(),
            C::DatabaseCorrupt => "the ledger file is corrupt".into(),
            C::SystemIoFailure => {
                format!("I/O error ({})", msg.as_deref().unwrap_or("disk I/O error"))
            }
            _ => msg.clone().unwrap_or_else(|| err.to_string()),
        },
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}

/// A SQLite error as a storage error, caused by it: a full disk (or a
/// database at its size limit) is [`StoreError::Full`], logged with
/// SQLite's own words; anything else a fault.
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
            tracing::error!(error = %e, "SQLite: {FULL}");
            return StoreError::full(e);
        }
        StoreError::backend(describe(&e), e)
    }
}

impl crate::Store for SqliteStore {
    /// A coverage or frontier read is one index seek on a pooled read
    /// connection: tens of microseconds, less than a thread hand-over.
    fn reads_inline(&self) -> bool {
        true
    }

    fn append(&self, batch: &[NewEvent], received_at: Instant) -> Result<Appended> {
        if batch.is_empty() {
            return Ok(Appended::default());
        }
        let mut conn = self.writer();
        append::append(&mut conn, batch, received_at, &self.untaken)
    }

    fn append_chunks(
        &self,
        chunks: &mut dyn Iterator<Item = Result<Vec<NewEvent>>>,
        stored: &mut dyn FnMut(Vec<NewEvent>),
        received_at: Instant,
    ) -> Result<Appended> {
        let mut conn = self.writer();
        append::append_chunks(&mut conn, chunks, stored, received_at, &self.untaken)
    }

    fn append_many(&self, batches: &[&[NewEvent]], received_at: Instant) -> Vec<Result<Appended>> {
        if batches.iter().all(|b| b.is_empty()) {
            return batches.iter().map(|_| Ok(Appended::default())).collect();
        }
        let mut conn = self.writer();
        append::append_many(&mut conn, batches, received_at, &self.untaken)
    }

    fn coverage(&self, asset: &str, range: Interval) -> Result<IntervalSet> {
        self.read(|c| read::coverage(c, asset, range))
    }

    fn retractions(&self, asset: &str, range: Interval) -> Result<IntervalSet> {
        self.read(|c| read::retractions(c, asset, range))
    }

    fn run_containing(&self, asset: &str, t: Instant) -> Result<Option<Interval>> {
        self.read(|c| read::run_containing(c, asset, t))
    }

    fn events(&self, asset: &str, query: &EventQuery) -> Result<EventPage> {
        self.read(|c| read::events(c, asset, query))
    }

    fn asset_decl(&self, asset: &str) -> Result<Option<AssetDecl>> {
        self.read(|c| read::asset_decl(c, asset))
    }

    fn declare_asset(&self, asset: &str, decl: &AssetDecl) -> Result<()> {
        let mut conn = self.writer();
        append::declare_asset(&mut conn, asset, decl)
    }

    fn assets(&self) -> Result<Vec<AssetSummary>> {
        self.read(read::assets)
    }

    fn asset(&self, asset: &str) -> Result<Option<AssetSummary>> {
        self.read(|c| read::asset(c, asset))
    }

    fn assets_page(&self, query: &AssetQuery, now: Instant) -> Result<AssetPage> {
        self.read(|c| read::assets_page(c, query, now))
    }

    fn put_rule(&self, rule: &Rule, now: Instant) -> Result<RulePut> {
        rules::put_rule(&mut self.writer(), rule, now, &self.untaken)
    }

    fn rule(&self, name: &str) -> Result<Option<StoredRule>> {
        self.read(|c| rules::rule(c, name))
    }

    fn rules(&self) -> Result<Vec<StoredRule>> {
        self.read(rules::rules)
    }

    fn rules_page(&self, query: &RuleQuery) -> Result<RulePage> {
        self.read(|c| rules::rules_page(c, query))
    }

    fn delete_rule(&self, name: &str) -> Result<bool> {
        rules::delete_rule(&mut self.writer(), name)
    }

    fn firings(&self, query: &FiringQuery) -> Result<FiringPage> {
        self.read(|c| rules::firings(c, query))
    }

    fn judge_deadlines(&self, now: Instant) -> Result<u64> {
        let mut w = self.writer();
        let Writer { conn, watches } = &mut *w;
        rules::judge_deadlines(conn, &mut watches.deadlines, now, &self.untaken)
    }

    fn claim_deliveries(
        &self,
        owner: &str,
        now: Instant,
        lease: std::time::Duration,
        limit: usize,
    ) -> Result<Vec<crate::Firing>> {
        rules::claim_deliveries(&mut self.writer(), owner, now, lease, limit)
    }

    fn skip_deliveries(&self, now: Instant, takes: &[crate::TargetKinds<'_>]) -> Result<u64> {
        rules::skip_deliveries(&mut self.writer(), now, takes)
    }

    fn settle_untaken(&self, takes: &[crate::TargetKinds<'_>]) {
        self.untaken.set(takes);
    }

    fn settled_untaken(&self) -> u64 {
        self.untaken.settled()
    }

    fn finish_delivery(
        &self,
        seq: i64,
        owner: &str,
        outcome: &crate::DeliveryOutcome,
    ) -> Result<bool> {
        rules::finish_delivery(&mut self.writer(), seq, owner, outcome)
    }

    fn retry_failed(&self, rule: Option<&str>) -> Result<u64> {
        rules::retry_failed(&mut self.writer(), rule)
    }

    fn ledger_id(&self) -> Result<String> {
        self.read(rules::ledger_id)
    }

    fn prune_events(&self, asset: &str, before: Instant, limit: usize) -> Result<u64> {
        prune::prune_events(&mut self.writer(), asset, before, limit)
    }

    fn prune_firings(&self, before: Instant, limit: usize) -> Result<u64> {
        prune::prune_firings(&mut self.writer(), before, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The query plan of `sql`, one line per step.
    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        // Parameters left unbound: only the plan is wanted.
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(r) = rows.next().unwrap() {
            out.push(r.get::<_, String>(3).unwrap());
        }
        out.join("\n")
    }

    /// Every hot statement is an index seek, never a full scan.
    #[test]
    fn hot_statements_seek() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("l.db")).unwrap();
        let conn = store.writer();
        let cases: [(&str, &[&str]); 21] = [
            (
                rules::FIRINGS_PAGE,
                &["SEARCH f USING INTEGER PRIMARY KEY (rowid>?)"],
            ),
            (
                rules::FIRINGS_PAGE_NEWEST,
                &["SEARCH f USING INTEGER PRIMARY KEY (rowid>?)"],
            ),
            (
                rules::RULE_FIRINGS_PAGE,
                &["SEARCH f USING INDEX firings_rule (rule_id=? AND seq>?)"],
            ),
            (
                rules::RULE_FIRINGS_PAGE_NEWEST,
                &["SEARCH f USING INDEX firings_rule (rule_id=? AND seq>?)"],
            ),
            (
                rules::DUE,
                &["SCAN firings USING INDEX firings_pending"],
            ),
            (
                rules::UNTAKEN_DUE,
                &["SCAN firings USING INDEX firings_pending"],
            ),
            (
                read::RUNS_OVERLAPPING,
                &["SEARCH coverage_runs USING PRIMARY KEY (asset_id=? AND start_us>? AND start_us<?)"],
            ),
            (
                read::RUN_AT_OR_BEFORE,
                &["SEARCH coverage_runs USING PRIMARY KEY (asset_id=? AND start_us<?)"],
            ),
            (
                read::EVENTS_SEEK,
                &["SEARCH events USING INDEX events_asset_start (asset_id=? AND start_us>? AND start_us<?)"],
            ),
            (
                read::EVENTS_WALK,
                &["SEARCH events USING INTEGER PRIMARY KEY (rowid>?)"],
            ),
            (
                read::EVENTS_RETRACTED,
                &["SEARCH events USING INDEX events_retracted (asset_id=? AND rowid>?)"],
            ),
            (
                append::RUN_START_AT_OR_BEFORE,
                &["SEARCH coverage_runs USING PRIMARY KEY (asset_id=? AND start_us<?)"],
            ),
            (
                append::RUNS_STARTING_IN,
                &["SEARCH coverage_runs USING PRIMARY KEY (asset_id=? AND start_us>? AND start_us<?)"],
            ),
            (
                append::DELETE_RUN,
                &["SEARCH coverage_runs USING PRIMARY KEY (asset_id=? AND start_us=?)"],
            ),
            (
                append::UPDATE_RUN,
                &["SEARCH coverage_runs USING PRIMARY KEY (asset_id=? AND start_us=?)"],
            ),
            (
                append::STORED_BY_ID,
                &["SEARCH events USING INDEX events_asset_id (asset_id=? AND id=?)"],
            ),
            (
                read::ASSETS_PAGE,
                &[
                    "SEARCH a USING INDEX sqlite_autoindex_assets_1 (name>?)",
                    "SEARCH r USING PRIMARY KEY (asset_id=? AND start_us>? AND start_us<?)",
                ],
            ),
            (
                rules::states_of(4),
                &[
                    "SEARCH w USING PRIMARY KEY (rule_id=? AND start_us>? AND start_us<?)",
                    "SEARCH p USING PRIMARY KEY (rule_id=? AND start_us<?)",
                ],
            ),
            (
                rules::DELETE_STATE_RUN,
                &["SEARCH rule_windows USING PRIMARY KEY (rule_id=? AND start_us=?)"],
            ),
            (
                append::FIRST_RUN,
                &["SEARCH coverage_runs USING PRIMARY KEY (asset_id=?)"],
            ),
            (
                append::LAST_RUNS,
                &["SEARCH coverage_runs USING PRIMARY KEY (asset_id=?)"],
            ),
        ];
        for (sql, wanted) in cases {
            let got = plan(&conn, sql);
            for w in wanted {
                assert!(got.contains(w), "{sql}\n--- plan:\n{got}\n--- wanted: {w}");
            }
            // The partial index of pending firings is walked whole, and
            // what it finds sorted: it holds only what is still to deliver.
            if got.contains("firings_pending") {
                continue;
            }
            // A statement's own rows of parameters are walked whole.
            let scans = got.lines().filter(|l| {
                l.contains("SCAN ") && !l.contains("CONSTANT ROWS") && l.trim() != "SCAN v"
            });
            assert_eq!(scans.count(), 0, "{sql}\n--- plan:\n{got}");
        }
        // What every append runs, an event at a time, sorts nothing: a
        // temporary B-tree is a file of its own, opened and closed on
        // every execution.
        for sql in [
            append::RUN_START_AT_OR_BEFORE,
            append::RUNS_STARTING_IN,
            append::DELETE_RUN,
            append::UPDATE_RUN,
            append::STORED_BY_ID,
            append::FIRST_RUN,
            append::LAST_RUNS,
            // A page of one rule's firings reads them in the index's order.
            rules::RULE_FIRINGS_PAGE,
            rules::RULE_FIRINGS_PAGE_NEWEST,
        ] {
            let got = plan(&conn, sql);
            assert!(!got.contains("TEMP B-TREE"), "{sql}\n--- plan:\n{got}");
        }
    }

    /// A ledger at its size limit (SQLite's `max_page_count`, as a full
    /// disk would) answers `Full`, naming no path, stores nothing of the
    /// batch, and works again once there is room.
    #[test]
    fn full_storage_is_full() {
        use crate::Store;
        use gapless_core::{EventKind, Interval};

        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("l.db")).unwrap();
        let ev = |i: i64| NewEvent {
            asset: "A".into(),
            id: Some(format!("id-{i}")),
            interval: Interval::from_micros(i * 10, i * 10 + 10).unwrap(),
            kind: EventKind::Landed,
            extra: Some(format!("{{\"pad\": \"{}\"}}", "x".repeat(200))),
            produced_at: None,
        };
        let at = Instant::from_micros(1).unwrap();
        store.append(&[ev(0)], at).unwrap();
        {
            let conn = store.writer();
            let pages: i64 = conn
                .pragma_query_value(None, "page_count", |r| r.get(0))
                .unwrap();
            conn.pragma_update(None, "max_page_count", pages).unwrap();
        }
        let batch: Vec<NewEvent> = (1..2_000).map(ev).collect();
        let err = store.append(&batch, at).unwrap_err();
        assert!(matches!(err, StoreError::Full { .. }), "{err:?}");
        let msg = err.to_string();
        assert_eq!(msg, "the ledger's storage is full");
        assert!(!msg.contains(&*dir.path().to_string_lossy()), "{msg}");
        // A group commit: every batch gets the error.
        let results = store.append_many(&[&batch[..1000], &batch[1000..]], at);
        assert!(
            results
                .iter()
                .all(|r| matches!(r, Err(StoreError::Full { .. }))),
            "{results:?}"
        );
        let listed = store.assets().unwrap();
        assert_eq!(listed[0].events, 1);
        store.verify().unwrap();

        store
            .writer()
            .pragma_update(None, "max_page_count", 1_073_741_823_i64)
            .unwrap();
        let got = store.append(&batch, at).unwrap();
        assert_eq!(got.accepted, 1_999);
        store.verify().unwrap();
    }
}
