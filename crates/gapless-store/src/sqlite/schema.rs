//! Opening a SQLite file as a ledger: recognising it, creating the schema,
//! and the connection settings.
//!
//! # Schema (version 8)
//!
//! ```sql
//! -- header: PRAGMA application_id = 0x47504C53 ('GPLS'), PRAGMA user_version = 8
//! CREATE TABLE assets (
//!     id           INTEGER PRIMARY KEY,
//!     name         TEXT NOT NULL UNIQUE,
//!     key_span     TEXT,                -- ISO 8601 duration, NULL: none declared
//!     tz           TEXT,                -- IANA name, NULL: never declared
//!     event_count  INTEGER NOT NULL DEFAULT 0,
//!     max_len_us   INTEGER NOT NULL DEFAULT 0, -- longest event, for range seeks
//!     min_start_us INTEGER,             -- hull of all events (planner estimates)
//!     max_end_us   INTEGER,
//!     last_received_us INTEGER,         -- version 3: when its last event was stored
//!     pruned_before_us INTEGER,         -- version 4: the latest prune that removed
//!                                       -- some of its events (NULL: never pruned)
//!     -- version 5: the overview's inputs (overview.rs), kept by every append
//!     -- that changes its coverage runs
//!     first_start_us INTEGER,           -- its first run (NULL: nothing covered)
//!     first_end_us INTEGER,
//!     last_end_us  INTEGER,             -- the end of its last run
//!     recent_runs  BLOB DEFAULT X''     -- version 6: its runs ending within a week
//!                                       -- before last_end_us, each (start, end) as
//!                                       -- two big-endian 8-byte integers (version
//!                                       -- 5: TEXT, JSON [[start, end], ...])
//!                                       -- (NULL: more than overview::RECENT_RUNS)
//! );
//! CREATE TABLE events (
//!     seq         INTEGER PRIMARY KEY,  -- the sequence (rowid, never deleted)
//!     asset_id    INTEGER NOT NULL,
//!     id          TEXT,                 -- the producer's idempotency key
//!     start_us    INTEGER NOT NULL,
//!     end_us      INTEGER NOT NULL,
//!     kind        INTEGER NOT NULL,     -- 0 landed, 1 retracted
//!     extra       TEXT,                 -- the JSON text, byte for byte
//!     produced_at INTEGER,
//!     received_at INTEGER NOT NULL
//! );
//! CREATE UNIQUE INDEX events_asset_id ON events (asset_id, id) WHERE id IS NOT NULL;
//! CREATE INDEX events_asset_start ON events (asset_id, start_us);
//! -- retractions are few: listing them by kind is a seek, not a scan
//! CREATE INDEX events_retracted ON events (asset_id) WHERE kind = 1;
//! CREATE TABLE coverage_runs (
//!     asset_id INTEGER NOT NULL, start_us INTEGER NOT NULL, end_us INTEGER NOT NULL,
//!     PRIMARY KEY (asset_id, start_us)
//! ) WITHOUT ROWID;
//! -- version 2: rules (SPEC §7)
//! CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
//! -- ('ledger_id', 32 random hex digits): names the ledger in delivery keys
//! CREATE TABLE rules (
//!     id          INTEGER PRIMARY KEY,
//!     name        TEXT NOT NULL UNIQUE,
//!     assets      TEXT NOT NULL,        -- JSON array of asset names, in name order
//!     every       TEXT NOT NULL,        -- grid, policy, zone: canonical text
//!     tz          TEXT NOT NULL,
//!     policy      TEXT NOT NULL,
//!     from_us     INTEGER NOT NULL,
//!     until_us    INTEGER,
//!     deadline    TEXT,                 -- ISO 8601 duration
//!     target      TEXT,
//!     key_format  TEXT NOT NULL,
//!     created_us  INTEGER NOT NULL,
//!     deadlines_us INTEGER NOT NULL     -- deadlines (window end + deadline) judged up to here
//! );
//! CREATE TABLE rule_assets (asset_id INTEGER NOT NULL, rule_id INTEGER NOT NULL,
//!     PRIMARY KEY (asset_id, rule_id)) WITHOUT ROWID;
//! CREATE TABLE rule_windows (           -- windows whose state is not the initial one,
//!     -- version 8: a row a run of windows with one record, [start_us, end_us)
//!     rule_id INTEGER NOT NULL, start_us INTEGER NOT NULL, end_us INTEGER NOT NULL,
//!     complete INTEGER NOT NULL, generation INTEGER NOT NULL, late INTEGER NOT NULL,
//!     PRIMARY KEY (rule_id, start_us)) WITHOUT ROWID;
//! CREATE TABLE firings (
//!     seq           INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, also after a delete
//!     rule_id       INTEGER NOT NULL,
//!     kind          INTEGER NOT NULL,   -- 0 complete, 1 incomplete, 2 late
//!                   -- (checked: `kind = 0 OR kind = 1 OR kind = 2`, version 7)
//!     start_us      INTEGER NOT NULL, end_us INTEGER NOT NULL,
//!     key           TEXT NOT NULL,
//!     generation    INTEGER NOT NULL,
//!     covered_ratio REAL NOT NULL,
//!     recorded_us   INTEGER NOT NULL,
//!     target        TEXT,
//!     state         INTEGER NOT NULL,   -- 0 none, 1 pending, 2 delivered, 3 failed
//!                   -- (checked likewise, version 7; `IN` lists before)
//!     attempts      INTEGER NOT NULL DEFAULT 0,
//!     last_error    TEXT,
//!     next_try_us   INTEGER,            -- a pending firing's next attempt
//!     lease_owner   TEXT,               -- the deliverer holding it, until lease_until_us
//!     lease_until_us INTEGER
//! );
//! CREATE INDEX firings_rule ON firings (rule_id, seq);
//! CREATE INDEX firings_pending ON firings (next_try_us) WHERE state = 1;
//! ```
//!
//! An older ledger is brought to version 8 when it is opened: version 1 (no
//! rules) gets the rules' tables, version 2 the assets' `last_received_us`
//! (from their events' `received_at`), version 3 the assets'
//! `pruned_before_us` (NULL: nothing was pruned before it existed), version
//! 4 the assets' overview inputs (from their coverage runs), version 5 the
//! recent runs as bytes instead of JSON text (refilled from the coverage
//! runs), version 6 the firings' checks as comparisons, version 7 its rules'
//! window records joined into runs. Each asset's overview inputs are
//! filled once, after the last migration, in the migrations' transaction.
//!
//! Instants are microseconds since the Unix epoch. `coverage_runs` holds the
//! sorted, disjoint, non-adjacent covered runs of each asset, kept up to date
//! in the transaction of every append.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::{Result, StoreError};

/// `GPLS` in the SQLite header's application id field.
pub(crate) const APPLICATION_ID: i32 = 0x4750_4C53;
/// The schema version in the header's user version field.
pub(crate) const SCHEMA_VERSION: i32 = 8;
/// How many prepared statements a reading connection keeps: each one held
/// is memory a server has once per connection.
const READER_STATEMENTS: usize = 32;
/// How many the write connection keeps: room for every statement an append
/// and its rules' judging prepare (the rules' writes and state reads in
/// seven sizes each among them), since a statement evicted is parsed and
/// planned again, which costs more than running it.
const WRITER_STATEMENTS: usize = 96;
/// How long a connection waits for another process's write lock.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// Page size of new ledgers: the fastest for bulk appends in the `ledger`
/// bench (smaller pages are slower, larger ones no faster).
const PAGE_SIZE: i64 = 16_384;

const CREATE: &str = "
CREATE TABLE assets (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    key_span     TEXT,
    tz           TEXT,
    event_count  INTEGER NOT NULL DEFAULT 0,
    max_len_us   INTEGER NOT NULL DEFAULT 0,
    min_start_us INTEGER,
    max_end_us   INTEGER
);
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY,
    asset_id    INTEGER NOT NULL,
    id          TEXT,
    start_us    INTEGER NOT NULL,
    end_us      INTEGER NOT NULL,
    kind        INTEGER NOT NULL CHECK (kind IN (0, 1)),
    extra       TEXT,
    produced_at INTEGER,
    received_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX events_asset_id ON events (asset_id, id) WHERE id IS NOT NULL;
CREATE INDEX events_asset_start ON events (asset_id, start_us);
CREATE INDEX events_retracted ON events (asset_id) WHERE kind = 1;
CREATE TABLE coverage_runs (
    asset_id INTEGER NOT NULL,
    start_us INTEGER NOT NULL,
    end_us   INTEGER NOT NULL,
    PRIMARY KEY (asset_id, start_us)
) WITHOUT ROWID;
";

/// From version 1 to 2: rules and firings.
const RULES: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('ledger_id', lower(hex(randomblob(16))));
CREATE TABLE rules (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    assets       TEXT NOT NULL,
    every        TEXT NOT NULL,
    tz           TEXT NOT NULL,
    policy       TEXT NOT NULL,
    from_us      INTEGER NOT NULL,
    until_us     INTEGER,
    deadline     TEXT,
    target       TEXT,
    key_format   TEXT NOT NULL,
    created_us   INTEGER NOT NULL,
    deadlines_us INTEGER NOT NULL
);
CREATE TABLE rule_assets (
    asset_id INTEGER NOT NULL,
    rule_id  INTEGER NOT NULL,
    PRIMARY KEY (asset_id, rule_id)
) WITHOUT ROWID;
CREATE TABLE rule_windows (
    rule_id    INTEGER NOT NULL,
    start_us   INTEGER NOT NULL,
    end_us     INTEGER NOT NULL,
    complete   INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    late       INTEGER NOT NULL,
    PRIMARY KEY (rule_id, start_us)
) WITHOUT ROWID;
CREATE TABLE firings (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    rule_id        INTEGER NOT NULL,
    kind           INTEGER NOT NULL CHECK (kind IN (0, 1, 2)),
    start_us       INTEGER NOT NULL,
    end_us         INTEGER NOT NULL,
    key            TEXT NOT NULL,
    generation     INTEGER NOT NULL,
    covered_ratio  REAL NOT NULL,
    recorded_us    INTEGER NOT NULL,
    target         TEXT,
    state          INTEGER NOT NULL CHECK (state IN (0, 1, 2, 3)),
    attempts       INTEGER NOT NULL DEFAULT 0,
    last_error     TEXT,
    next_try_us    INTEGER,
    lease_owner    TEXT,
    lease_until_us INTEGER
);
CREATE INDEX firings_rule ON firings (rule_id, seq);
CREATE INDEX firings_pending ON firings (next_try_us) WHERE state = 1;
";

/// From version 2 to 3: when each asset's last event was stored.
const LAST_RECEIVED: &str = "
ALTER TABLE assets ADD COLUMN last_received_us INTEGER;
UPDATE assets SET last_received_us =
    (SELECT max(received_at) FROM events e WHERE e.asset_id = assets.id);
";

/// From version 3 to 4: up to when each asset's event detail was pruned
/// (SPEC §3, `prune`).
const PRUNED_BEFORE: &str = "
ALTER TABLE assets ADD COLUMN pruned_before_us INTEGER;
";

/// From version 4 to 5: each asset's overview inputs (`overview.rs`),
/// filled for the assets of an older ledger by [`fill_overviews`].
const OVERVIEW: &str = "
ALTER TABLE assets ADD COLUMN first_start_us INTEGER;
ALTER TABLE assets ADD COLUMN first_end_us INTEGER;
ALTER TABLE assets ADD COLUMN last_end_us INTEGER;
ALTER TABLE assets ADD COLUMN recent_runs TEXT DEFAULT '[]';
";

/// From version 5 to 6: the recent runs as bytes instead of JSON text
/// (`overview.rs`), refilled by [`fill_overviews`]. A column's type and
/// default cannot be altered in SQLite: the column is made again.
const RECENT_BYTES: &str = "
ALTER TABLE assets DROP COLUMN recent_runs;
ALTER TABLE assets ADD COLUMN recent_runs BLOB DEFAULT X'';
";

/// From version 7 to 8: a row of `rule_windows` is a run of a rule's
/// windows with one record (`rule/records.rs`); the rows of windows that
/// follow one another with one record are joined.
const RULE_RUNS: &str = "
CREATE TEMP TABLE rule_runs AS
    SELECT rule_id, min(start_us) AS start_us, max(end_us) AS end_us, complete, generation, late
    FROM (SELECT *, sum(CASE WHEN joined THEN 0 ELSE 1 END)
            OVER (PARTITION BY rule_id ORDER BY start_us) AS run
          FROM (SELECT *, coalesce(lag(end_us) OVER w = start_us
                    AND lag(complete) OVER w = complete
                    AND lag(generation) OVER w = generation
                    AND lag(late) OVER w = late, 0) AS joined
                FROM rule_windows
                WHERE complete OR generation <> 0 OR late
                WINDOW w AS (PARTITION BY rule_id ORDER BY start_us)))
    GROUP BY rule_id, run, complete, generation, late;
DELETE FROM rule_windows;
INSERT INTO rule_windows (rule_id, start_us, end_us, complete, generation, late)
    SELECT rule_id, start_us, end_us, complete, generation, late FROM rule_runs;
DROP TABLE rule_runs;
";

/// Migration `i` brings a ledger from version `i + 1` to `i + 2`; the one
/// to version 7 is [`firing_checks`], run after them all.
const MIGRATIONS: [&str; 7] = [
    RULES,
    LAST_RECEIVED,
    PRUNED_BEFORE,
    OVERVIEW,
    RECENT_BYTES,
    "",
    RULE_RUNS,
];

/// The firings' kind and state checks as an `IN` list (version 6) and as
/// the comparisons that allow the same values (version 7). SQLite checks
/// a value `IN` a list of more than two by building a temporary index for
/// every row it writes, which was most of what writing a firing cost; it
/// checks the comparisons in place.
const FIRING_CHECKS: [(&str, &str); 2] = [
    (
        "CHECK (kind IN (0, 1, 2))",
        "CHECK (kind = 0 OR kind = 1 OR kind = 2)",
    ),
    (
        "CHECK (state IN (0, 1, 2, 3))",
        "CHECK (state = 0 OR state = 1 OR state = 2 OR state = 3)",
    ),
];

/// From version 6 to 7: [`FIRING_CHECKS`]. A check is no part of the
/// stored rows, and every stored row passes both forms, so the table's
/// definition is rewritten in place as SQLite documents for such changes
/// (`writable_schema`, then a new schema version, so that every connection
/// reads the definition again) rather than the table copied.
fn firing_checks(tx: &Connection) -> rusqlite::Result<()> {
    const FIRINGS: &str = "type = 'table' AND name = 'firings'";
    let old: String = tx.query_row(
        &format!("SELECT sql FROM sqlite_schema WHERE {FIRINGS}"),
        [],
        |r| r.get(0),
    )?;
    let new = FIRING_CHECKS
        .iter()
        .fold(old.clone(), |sql, (from, to)| sql.replace(from, to));
    if new == old {
        return Ok(());
    }
    let version: i64 = tx.pragma_query_value(None, "schema_version", |r| r.get(0))?;
    tx.pragma_update(None, "writable_schema", true)?;
    tx.execute(
        &format!("UPDATE sqlite_schema SET sql = ?1 WHERE {FIRINGS}"),
        [&new],
    )?;
    tx.pragma_update(None, "schema_version", version + 1)?;
    tx.pragma_update(None, "writable_schema", false)
}

/// A ledger older than this has its overview inputs filled after its
/// migrations: version 5 added them, version 6 changed how the recent runs
/// are kept.
const OVERVIEW_FILLED_VERSION: i32 = 6;

/// The overview inputs of every asset of a ledger migrated from before
/// [`OVERVIEW_FILLED_VERSION`], from its coverage runs, as appends keep
/// them.
fn fill_overviews(tx: &Connection) -> rusqlite::Result<()> {
    let ids: Vec<i64> = tx
        .prepare("SELECT id FROM assets")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in ids {
        super::append::refresh_overview(tx, id)?;
    }
    Ok(())
}

/// The tables a current ledger must have.
const TABLES: [&str; 8] = [
    "assets",
    "events",
    "coverage_runs",
    "meta",
    "rules",
    "rule_assets",
    "rule_windows",
    "firings",
];

fn open_error(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Open {
        location: path.display().to_string(),
        reason: reason.into(),
        source: None,
    }
}

/// Opening failed on a SQLite error: [`StoreError::Full`] for a full disk
/// (creating a ledger), else [`StoreError::Open`] saying why, caused by it.
fn open_failed(path: &Path, e: rusqlite::Error) -> StoreError {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
        return e.into();
    }
    StoreError::Open {
        location: path.display().to_string(),
        reason: open_reason(path, &e),
        source: Some(e.into()),
    }
}

/// Why opening failed, in words, from a SQLite error.
fn open_reason(path: &Path, e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode as C;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| ".".to_string(), |p| p.display().to_string());
    match e.sqlite_error_code() {
        Some(C::NotADatabase) => "not a gapless ledger (not a SQLite database)".into(),
        Some(C::CannotOpen) => {
            if path.is_dir() {
                "it is a directory".into()
            } else if !Path::new(&dir).exists() {
                format!("directory {dir} does not exist")
            } else if !Path::new(&dir).is_dir() {
                format!("{dir} is not a directory")
            } else {
                format!(
                    "the file cannot be created or opened (check that directory {dir} is writable and the file readable)"
                )
            }
        }
        Some(C::ReadOnly) | Some(C::PermissionDenied) => format!(
            "the file or directory {dir} is read-only (a ledger needs to write the file and its -wal and -shm files beside it)"
        ),
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => {
            "the ledger is locked by another process".into()
        }
        Some(C::DatabaseCorrupt) => "the file is corrupt".into(),
        _ => super::describe(e),
    }
}

/// Settings of every connection; `cache_mib` is its page cache.
fn configure(conn: &Connection, path: &Path, cache_mib: i64) -> Result<()> {
    let r = (|| -> rusqlite::Result<()> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Durable commits in WAL mode: the WAL is synced at every commit.
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.pragma_update(None, "cache_size", -1024 * cache_mib)?;
        // Reads map the file instead of copying pages.
        conn.pragma_update(None, "mmap_size", 268_435_456_i64)?;
        conn.set_prepared_statement_cache_capacity(READER_STATEMENTS);
        // The query planner's stability guarantee: plans never depend on
        // bound values. Without it this build of SQLite (with STAT4) marks
        // statements whose range or LIMIT parameters it looked at to be
        // prepared again on every new binding, which was a third of an
        // append's time; a ledger is never ANALYZEd, so those values could
        // not have chosen a better plan anyway.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        Ok(())
    })();
    r.map_err(|e| open_failed(path, e))
}

/// Open `path` for writing, creating and initialising it when it is new or
/// empty, and check that it is a gapless ledger.
pub(crate) fn open_writer(path: &Path) -> Result<Connection> {
    if path.as_os_str().is_empty() {
        return Err(open_error(path, "no file named (the path is empty)"));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(path, flags).map_err(|e| open_failed(path, e))?;
    configure(&conn, path, super::append::WRITER_CACHE_MIB)?;
    conn.set_prepared_statement_cache_capacity(WRITER_STATEMENTS);
    let fail = |e: rusqlite::Error| open_failed(path, e);
    // SQLite quietly opens a write-protected file read-only.
    if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
        return Err(open_error(
            path,
            "the file is read-only (a ledger needs to write the file and its -wal and -shm files beside it)",
        ));
    }

    match recognise(&conn, path)? {
        Kind::Ledger => {}
        Kind::Older(_) => {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(fail)?;
            // Another process may have migrated it meanwhile.
            if let Kind::Older(version) = recognise(&tx, path)? {
                for sql in &MIGRATIONS[version as usize - 1..] {
                    tx.execute_batch(sql).map_err(fail)?;
                }
                firing_checks(&tx).map_err(fail)?;
                if version < OVERVIEW_FILLED_VERSION {
                    fill_overviews(&tx).map_err(fail)?;
                }
                tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                    .map_err(fail)?;
            }
            tx.commit().map_err(fail)?;
        }
        Kind::Empty => {
            // A new file: the page size can only be chosen before the first
            // table and before WAL mode.
            conn.pragma_update(None, "page_size", PAGE_SIZE)
                .map_err(fail)?;
            set_wal(&conn, path)?;
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(fail)?;
            // Another process may have initialised it meanwhile.
            match recognise(&tx, path)? {
                Kind::Ledger | Kind::Older(_) => {}
                Kind::Empty => {
                    tx.execute_batch(CREATE).map_err(fail)?;
                    for sql in MIGRATIONS {
                        tx.execute_batch(sql).map_err(fail)?;
                    }
                    firing_checks(&tx).map_err(fail)?;
                    tx.pragma_update(None, "application_id", APPLICATION_ID)
                        .map_err(fail)?;
                    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                        .map_err(fail)?;
                }
            }
            tx.commit().map_err(fail)?;
        }
    }
    set_wal(&conn, path)?;
    conn.pragma_update(None, "journal_size_limit", 67_108_864_i64)
        .map_err(fail)?;
    Ok(conn)
}

/// Open another connection to an existing ledger, for reading.
pub(crate) fn open_reader(path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| open_failed(path, e))?;
    // Reads mostly come from the memory map.
    configure(&conn, path, 16)?;
    conn.pragma_update(None, "query_only", true)
        .map_err(|e| open_failed(path, e))?;
    Ok(conn)
}

fn set_wal(conn: &Connection, path: &Path) -> Result<()> {
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(|e| open_failed(path, e))?;
    if mode.eq_ignore_ascii_case("wal") {
        Ok(())
    } else {
        Err(open_error(
            path,
            format!("cannot switch the file to WAL mode (journal mode stays {mode})"),
        ))
    }
}

enum Kind {
    /// A gapless ledger of this schema version.
    Ledger,
    /// A gapless ledger of an older version: to be migrated.
    Older(i32),
    /// An empty database (new file): to be initialised.
    Empty,
}

/// What the file is; an error when it is not a gapless ledger.
fn recognise(conn: &Connection, path: &Path) -> Result<Kind> {
    let fail = |e: rusqlite::Error| open_failed(path, e);
    let app: i32 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(fail)?;
    let version: i32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(fail)?;
    let objects: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
        .map_err(fail)?;
    if app == APPLICATION_ID {
        if version > SCHEMA_VERSION {
            return Err(open_error(
                path,
                format!(
                    "the ledger has schema version {version}, newer than this gapless understands ({SCHEMA_VERSION}); upgrade gapless"
                ),
            ));
        }
        let tables: &[&str] = match version {
            1 => &TABLES[..3],
            2..=SCHEMA_VERSION => &TABLES,
            _ => {
                return Err(open_error(
                    path,
                    format!("the ledger has unknown schema version {version}"),
                ))
            }
        };
        for &table in tables {
            let found: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .map_err(fail)?;
            if found == 0 {
                return Err(open_error(
                    path,
                    format!("the ledger is damaged: table {table} is missing"),
                ));
            }
        }
        Ok(if version < SCHEMA_VERSION {
            Kind::Older(version)
        } else {
            Kind::Ledger
        })
    } else if app == 0 && version == 0 && objects == 0 {
        Ok(Kind::Empty)
    } else {
        Err(open_error(
            path,
            "not a gapless ledger (a SQLite database of another application)",
        ))
    }
}
