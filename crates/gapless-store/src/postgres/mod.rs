//! The PostgreSQL backend: one schema of one database, shared by any number
//! of processes.
//!
//! # Layout
//!
//! - `schema.rs`: the schema, migrations, recognising a ledger schema.
//! - `append.rs`: appends: idempotency, sequence, coverage runs kept up to
//!   date in the same transaction.
//! - `read.rs`: coverage, events, declarations and the asset listing.
//!
//! # Concurrency
//!
//! Appends to one asset are serialised by a row lock on the asset's row
//! (`SELECT ... FOR UPDATE`, taken in name order), held to commit. Sequence
//! numbers are drawn while the lock is held, so for every asset a transaction
//! that commits later has higher sequence numbers (latest-wins order is commit
//! order), and the coverage runs are read and replaced under the same lock,
//! so they stay exact with several writers. Appends to different assets run
//! in parallel. Reads take no locks and each answer is one statement (one
//! snapshot), so every replica sees a commit as soon as it has returned.
//!
//! # Threads and async
//!
//! The store is synchronous and `Send + Sync`; connections are pooled. The
//! `postgres` client runs its own small runtime, so the [`crate::Store`]
//! methods must not be called from a thread that drives a tokio runtime (the
//! client panics there): async callers use `tokio::task::spawn_blocking`.
//! Opening and dropping the store are safe anywhere (they connect and close
//! on a thread of their own).
//!
//! # Connecting
//!
//! `postgres://user:password@host:port/db?schema=NAME&pool_size=N&...`: the
//! usual libpq-style URL and parameters, plus two of gapless's own: `schema`
//! (default `gapless`), the PostgreSQL schema that holds the ledger (created
//! when missing, so several ledgers can share a database), and `pool_size`
//! (default 16), the most connections one process opens. Messages name the
//! URL without its password. TLS is not supported yet (`sslmode=require` is
//! refused): use a trusted network or a local socket.
//!
//! # Failures
//!
//! A connection the server dropped (restart, administrator) is replaced, and
//! a call that failed on it before committing anything runs once more; an
//! append that deadlocks with other writers is retried. A failed commit is
//! never retried (its outcome is unknown): the error is returned.

mod append;
mod read;
mod schema;

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use gapless_core::{AssetDecl, Instant, Interval, IntervalSet, NewEvent};
use postgres::error::SqlState;
use postgres::{Client, GenericClient, NoTls, Statement};

use crate::{Appended, AssetSummary, EventPage, EventQuery, Result, StoreError, StoredEvent};

/// The schema used when the URL names none.
pub(crate) const DEFAULT_SCHEMA: &str = "gapless";

/// Connections one store opens at most, unless the URL says `pool_size`.
pub(crate) const DEFAULT_POOL_SIZE: usize = 16;
/// How long a call waits for a connection when all are busy.
const POOL_WAIT: Duration = Duration::from_secs(30);
/// How long connecting may take unless the URL says `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a write waits for another writer of the same asset.
const LOCK_TIMEOUT: Duration = Duration::from_secs(30);
/// A transaction of this process that stays idle this long (the process
/// hangs) is ended by the server, so that it cannot hold assets forever.
const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(60);
/// How often an append is tried when it deadlocks with another writer.
const APPEND_TRIES: u32 = 5;

/// A ledger in a PostgreSQL schema.
///
/// `Send + Sync`: share it between threads behind an `Arc`. Not to be called
/// from inside a tokio runtime (see the module documentation).
pub struct PostgresStore {
    /// The URL without password, for messages.
    location: String,
    schema: String,
    config: postgres::Config,
    pool: Mutex<Pool>,
    /// Signalled when a connection is returned or closed.
    freed: Condvar,
    pool_size: usize,
}

/// The connections of a store.
#[derive(Default)]
struct Pool {
    idle: Vec<Conn>,
    /// Connections open, idle or in use.
    open: usize,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.location)
            .field("schema", &self.schema)
            .field("pool_size", &self.pool_size)
            .finish_non_exhaustive()
    }
}

/// One connection and its prepared statements.
pub(crate) struct Conn {
    pub(crate) client: Client,
    pub(crate) stmts: Stmts,
}

/// Statements prepared on one connection, by SQL text.
#[derive(Default)]
pub(crate) struct Stmts(HashMap<&'static str, Statement>);

impl Stmts {
    /// The statement of `sql`, prepared on first use.
    pub(crate) fn get(
        &mut self,
        client: &mut impl GenericClient,
        sql: &'static str,
    ) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.0.get(sql) {
            return Ok(s.clone());
        }
        let s = client.prepare(sql)?;
        self.0.insert(sql, s.clone());
        Ok(s)
    }
}

/// A failure inside the backend: a database error (which may be retried) or
/// a finished storage error.
#[derive(Debug)]
pub(crate) enum Fail {
    Pg(postgres::Error),
    /// The commit itself failed: the outcome is unknown, never retried.
    Commit(postgres::Error),
    Store(StoreError),
}

impl From<postgres::Error> for Fail {
    fn from(e: postgres::Error) -> Fail {
        Fail::Pg(e)
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Fail {
        Fail::Store(e)
    }
}

impl From<Fail> for StoreError {
    fn from(f: Fail) -> StoreError {
        match f {
            Fail::Pg(e) | Fail::Commit(e) => StoreError::Backend(describe(&e)),
            Fail::Store(e) => e,
        }
    }
}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> StoreError {
        StoreError::Backend(describe(&e))
    }
}

/// The error and its causes on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out.replace('\n', " ")
}

/// A one-line description of a PostgreSQL error, without SQL.
pub(crate) fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::DISK_FULL {
            "the database server's disk is full".into()
        } else if *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
        {
            "the database server is shutting down or restarting".into()
        } else if *code == SqlState::T_R_DEADLOCK_DETECTED {
            format!("deadlock with other writers (tried {APPEND_TRIES} times)")
        } else if *code == SqlState::LOCK_NOT_AVAILABLE {
            format!(
                "another writer held the asset for more than {} s",
                LOCK_TIMEOUT.as_secs()
            )
        } else if *code == SqlState::QUERY_CANCELED {
            "the statement was cancelled (statement_timeout or an administrator)".into()
        } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
            "the database is read-only (a standby server?)".into()
        } else if *code == SqlState::UNDEFINED_TABLE {
            format!(
                "the ledger schema is damaged or was dropped ({})",
                db.message()
            )
        } else {
            format!("PostgreSQL error {}: {}", code.code(), db.message())
        }
    } else if e.is_closed() {
        "the connection to the database server was lost".into()
    } else {
        chain(e)
    }
}

/// Why opening failed, in words.
pub(crate) fn describe_open(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().replace('\n', " "),
        None => chain(e),
    }
}

/// `name` as a quoted SQL identifier.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Whether `e` means the connection is gone.
fn is_broken(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        return *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
            || db.severity() == "FATAL"
            || db.severity() == "PANIC";
    }
    // An I/O error on the socket.
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if s.is::<std::io::Error>() {
            return true;
        }
        src = s.source();
    }
    false
}

/// Whether `e` is a transient conflict between writers, worth another try.
fn retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

/// `url` without its password (in the authority or as a parameter).
pub fn redact(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(scheme_end) = out.find("://") {
        let rest = scheme_end + 3;
        let authority_end = out[rest..].find(['/', '?']).map_or(out.len(), |i| rest + i);
        if let Some(at) = out[rest..authority_end].rfind('@') {
            let userinfo = &out[rest..rest + at];
            if let Some(colon) = userinfo.find(':') {
                out.replace_range(rest + colon..rest + at, "");
            }
        }
        if let Some(q) = out.find('?') {
            let kept: Vec<&str> = out[q + 1..]
                .split('&')
                .filter(|kv| !kv.starts_with("password="))
                .collect();
            out = if kept.is_empty() {
                out[..q].to_string()
            } else {
                format!("{}?{}", &out[..q], kept.join("&"))
            };
        }
        out
    } else {
        // key=value form
        out.split_whitespace()
            .filter(|kv| !kv.starts_with("password="))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Percent-decode a URL component.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The URL parameters that gapless reads itself (PostgreSQL does not know
/// them).
#[derive(Debug, Default, PartialEq, Eq)]
struct OwnParams {
    schema: Option<String>,
    pool_size: Option<usize>,
}

/// Take gapless's own parameters (`schema`, `pool_size`) out of a URL.
fn split_params(url: &str) -> Result<(String, OwnParams), String> {
    let mut own = OwnParams::default();
    let Some(q) = url.find('?') else {
        return Ok((url.to_string(), own));
    };
    let mut kept = Vec::new();
    for kv in url[q + 1..].split('&') {
        if let Some(v) = kv.strip_prefix("schema=") {
            own.schema =
                Some(percent_decode(v).ok_or_else(|| format!("invalid schema parameter {v:?}"))?);
        } else if let Some(v) = kv.strip_prefix("pool_size=") {
            own.pool_size = Some(
                v.parse()
                    .ok()
                    .filter(|n| (1..=1000).contains(n))
                    .ok_or_else(|| format!("invalid pool_size {v:?} (1 to 1000)"))?,
            );
        } else {
            kept.push(kv);
        }
    }
    let base = &url[..q];
    let rebuilt = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rebuilt, own))
}

fn check_schema_name(location: &str, schema: &str) -> Result<()> {
    if schema.is_empty() || schema.len() > 63 || schema.contains('\0') {
        return Err(schema::open_error(
            location,
            format!("invalid schema name {schema:?} (1 to 63 bytes)"),
        ));
    }
    Ok(())
}

impl PostgresStore {
    /// Open the ledger at `url` (`postgres://` or `postgresql://`, or a
    /// `key=value` connection string), in the schema named by its `schema`
    /// parameter or `gapless`, creating or migrating the schema
    /// when needed. At most `pool_size` connections (parameter, default
    /// 16) are open at once; more concurrent calls wait.
    ///
    /// # Errors
    ///
    /// [`StoreError::Open`] when the server cannot be reached, refuses the
    /// login, or the schema is not a gapless ledger (another application's
    /// tables, a newer schema version). The message names the URL without
    /// its password.
    pub fn open(url: &str) -> Result<PostgresStore> {
        let location = redact(url);
        let (url, own) = split_params(url).map_err(|r| schema::open_error(&location, r))?;
        let schema = own.schema.unwrap_or_else(|| DEFAULT_SCHEMA.to_string());
        Self::open_with(&url, location, schema, own.pool_size)
    }

    /// Open the ledger at `url` in PostgreSQL schema `schema` (created when
    /// missing). A `schema` parameter in the URL is ignored.
    ///
    /// # Errors
    ///
    /// As [`PostgresStore::open`].
    pub fn open_in_schema(url: &str, schema: &str) -> Result<PostgresStore> {
        let location = redact(url);
        let (url, own) = split_params(url).map_err(|r| schema::open_error(&location, r))?;
        Self::open_with(&url, location, schema.to_string(), own.pool_size)
    }

    /// Opening connects (the client's own runtime), so it runs on a thread of
    /// its own: callers may open the store from async code.
    fn open_with(
        url: &str,
        location: String,
        schema: String,
        pool_size: Option<usize>,
    ) -> Result<PostgresStore> {
        std::thread::scope(|s| {
            let opening = s.spawn(|| Self::open_here(url, location, schema, pool_size));
            match opening.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    fn open_here(
        url: &str,
        location: String,
        schema: String,
        pool_size: Option<usize>,
    ) -> Result<PostgresStore> {
        check_schema_name(&location, &schema)?;
        let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| {
            schema::open_error(&location, format!("invalid URL: {}", describe_open(&e)))
        })?;
        if config.get_ssl_mode() == postgres::config::SslMode::Require {
            return Err(schema::open_error(
                &location,
                "TLS (sslmode=require) is not supported yet: connect over a trusted network \
                 or a local socket (sslmode=disable or prefer)",
            ));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("gapless");
        }
        let mut client = config
            .connect(NoTls)
            .map_err(|e| schema::open_error(&location, describe_open(&e)))?;
        schema::migrate(&mut client, &location, &schema)?;
        let store = PostgresStore {
            location,
            schema,
            config,
            pool: Mutex::new(Pool::default()),
            freed: Condvar::new(),
            pool_size: pool_size.unwrap_or(DEFAULT_POOL_SIZE),
        };
        let conn = store.setup(client)?;
        let mut pool = store.lock_pool();
        pool.open = 1;
        pool.idle.push(conn);
        drop(pool);
        Ok(store)
    }

    /// The URL without password.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The PostgreSQL schema that holds the ledger.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The value of a PostgreSQL setting in the store's sessions (for tests
    /// and diagnostics).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] for an unknown setting.
    pub fn setting(&self, name: &str) -> Result<String> {
        self.run(|c| {
            let row = c.client.query_one("SELECT current_setting($1)", &[&name])?;
            Ok(row.get(0))
        })
    }

    /// Session settings of a new connection.
    fn setup(&self, mut client: Client) -> Result<Conn> {
        client
            .batch_execute(&format!(
                "SET search_path TO {}; SET synchronous_commit TO on; \
                 SET lock_timeout TO '{}s'; SET idle_in_transaction_session_timeout TO '{}s'",
                quote_ident(&self.schema),
                LOCK_TIMEOUT.as_secs(),
                IDLE_IN_TRANSACTION_TIMEOUT.as_secs()
            ))
            .map_err(|e| StoreError::Backend(describe(&e)))?;
        Ok(Conn {
            client,
            stmts: Stmts::default(),
        })
    }

    fn connect(&self) -> Result<Conn> {
        let client = self.config.connect(NoTls).map_err(|e| {
            StoreError::Backend(format!(
                "cannot connect to {}: {}",
                self.location,
                describe_open(&e)
            ))
        })?;
        self.setup(client)
    }

    fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A pooled connection (`fresh`: `false`) or a new one, waiting while
    /// `pool_size` are in use.
    fn checkout(&self) -> Result<(Conn, bool)> {
        let deadline = std::time::Instant::now() + POOL_WAIT;
        let mut pool = self.lock_pool();
        loop {
            if let Some(c) = pool.idle.pop() {
                if c.client.is_closed() {
                    pool.open -= 1;
                    continue;
                }
                return Ok((c, false));
            }
            if pool.open < self.pool_size {
                pool.open += 1;
                drop(pool);
                return match self.connect() {
                    Ok(c) => Ok((c, true)),
                    Err(e) => {
                        self.lock_pool().open -= 1;
                        self.freed.notify_one();
                        Err(e)
                    }
                };
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Err(StoreError::Backend(format!(
                    "all {} database connections stayed busy for {} s (raise pool_size?)",
                    self.pool_size,
                    POOL_WAIT.as_secs()
                )));
            }
            pool = self
                .freed
                .wait_timeout(pool, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn checkin(&self, conn: Conn) {
        let mut pool = self.lock_pool();
        if conn.client.is_closed() {
            pool.open -= 1;
            drop(pool);
            // Closing a dead connection does not wait for the server.
            drop(conn);
        } else {
            pool.idle.push(conn);
            drop(pool);
        }
        self.freed.notify_one();
    }

    /// Drop `conn` (dead) and every idle connection.
    fn discard(&self, conn: Option<Conn>) {
        let mut pool = self.lock_pool();
        let idle = std::mem::take(&mut pool.idle);
        pool.open -= idle.len() + usize::from(conn.is_some());
        drop(pool);
        self.freed.notify_all();
        drop(idle);
        drop(conn);
    }

    /// Run `f` on a connection. When a pooled connection turns out to be
    /// dead (the server restarted), `f` runs once more on a new one; when
    /// writers deadlock, up to [`APPEND_TRIES`] times.
    fn run<T>(&self, mut f: impl FnMut(&mut Conn) -> Result<T, Fail>) -> Result<T> {
        let mut tries = 0;
        loop {
            tries += 1;
            let (conn, fresh) = self.checkout()?;
            // Returned to the pool even when `f` panics (a transaction
            // rolls back while unwinding).
            let mut conn = Lent {
                store: self,
                conn: Some(conn),
            };
            let out = f(conn.conn.as_mut().expect("lent"));
            let broken = conn.conn.as_ref().is_some_and(|c| c.client.is_closed())
                || matches!(&out, Err(Fail::Pg(e) | Fail::Commit(e)) if is_broken(e));
            if broken {
                // The server went away (restart, administrator): its other
                // connections in the pool are most likely dead too.
                let dead = conn.conn.take();
                self.discard(dead);
            }
            drop(conn);
            match out {
                Ok(v) => return Ok(v),
                // Nothing was committed (the commit was not reached): again
                // on a new connection.
                Err(Fail::Pg(e)) if broken && !fresh && tries == 1 => {
                    tracing::debug!("retrying on a new connection: {}", describe(&e));
                }
                Err(Fail::Pg(e)) if retryable(&e) && tries < APPEND_TRIES => {
                    std::thread::sleep(Duration::from_millis(5 << tries));
                }
                Err(f) => return Err(f.into()),
            }
        }
    }
}

/// A connection out of the pool, going back when dropped.
struct Lent<'a> {
    store: &'a PostgresStore,
    conn: Option<Conn>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            self.store.checkin(c);
        }
    }
}

/// The `postgres` client closes a connection by running its own runtime,
/// which panics on a thread that drives a tokio runtime (a server dropping
/// its store at the end of an async `main`): close them on a thread of
/// their own.
impl Drop for PostgresStore {
    fn drop(&mut self) {
        let pool = self.pool.get_mut().unwrap_or_else(|e| e.into_inner());
        let idle = std::mem::take(&mut pool.idle);
        if idle.is_empty() {
            return;
        }
        let closing = std::thread::Builder::new()
            .name("gapless-pg-close".into())
            .spawn(move || drop(idle));
        if let Ok(handle) = closing {
            let _ = handle.join();
        }
    }
}

impl crate::Store for PostgresStore {
    fn append(&self, batch: &[NewEvent], received_at: Instant) -> Result<Appended> {
        if batch.is_empty() {
            return Ok(Appended::default());
        }
        append::check_batch(batch)?;
        self.run(|c| append::append(c, batch, received_at))
    }

    /// One transaction, one durable commit, a savepoint per batch.
    fn append_many(&self, batches: &[&[NewEvent]], received_at: Instant) -> Vec<Result<Appended>> {
        if batches.iter().all(|b| b.is_empty()) {
            return batches.iter().map(|_| Ok(Appended::default())).collect();
        }
        match self.run(|c| append::append_many(c, batches, received_at)) {
            Ok(results) => results,
            Err(e) => batches.iter().map(|_| Err(e.clone())).collect(),
        }
    }

    fn coverage(&self, asset: &str, range: Interval) -> Result<IntervalSet> {
        self.run(|c| read::coverage(c, asset, range))
    }

    fn run_containing(&self, asset: &str, t: Instant) -> Result<Option<Interval>> {
        self.run(|c| read::run_containing(c, asset, t))
    }

    fn events(&self, asset: &str, query: &EventQuery) -> Result<EventPage> {
        self.run(|c| read::events(c, asset, query))
    }

    fn events_overlapping(&self, asset: &str, range: Interval) -> Result<Vec<StoredEvent>> {
        self.run(|c| read::events_overlapping(c, asset, range))
    }

    fn asset_decl(&self, asset: &str) -> Result<Option<AssetDecl>> {
        self.run(|c| read::asset_decl(c, asset))
    }

    fn declare_asset(&self, asset: &str, decl: &AssetDecl) -> Result<()> {
        let (span, tz) = crate::decl::check_decl(asset, decl)?;
        self.run(|c| append::declare_asset(c, asset, span.as_deref(), &tz))
    }

    fn assets(&self) -> Result<Vec<AssetSummary>> {
        self.run(read::assets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_drops_passwords() {
        assert_eq!(
            redact("postgres://u:secret@h:5432/db?sslmode=disable"),
            "postgres://u@h:5432/db?sslmode=disable"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact("postgresql://h/db?password=x&user=u"),
            "postgresql://h/db?user=u"
        );
        assert_eq!(redact("postgres://h/db?password=x"), "postgres://h/db");
        assert_eq!(redact("host=h password=x user=u"), "host=h user=u");
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u@h/db");
    }

    #[test]
    fn own_parameters_are_taken_out() {
        let own = |schema: Option<&str>, pool_size| OwnParams {
            schema: schema.map(str::to_string),
            pool_size,
        };
        assert_eq!(
            split_params("postgres://h/db?schema=a%20b&user=u&pool_size=4").unwrap(),
            (
                "postgres://h/db?user=u".to_string(),
                own(Some("a b"), Some(4))
            )
        );
        assert_eq!(
            split_params("postgres://h/db?schema=x").unwrap(),
            ("postgres://h/db".to_string(), own(Some("x"), None))
        );
        assert_eq!(
            split_params("postgres://h/db").unwrap(),
            ("postgres://h/db".to_string(), own(None, None))
        );
        assert!(split_params("postgres://h/db?schema=%zz").is_err());
        assert!(split_params("postgres://h/db?pool_size=0").is_err());
        assert!(split_params("postgres://h/db?pool_size=x").is_err());
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }
}
