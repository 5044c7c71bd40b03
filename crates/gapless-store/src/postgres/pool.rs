//! The connections of a store: a pool of at most `pool_size`, each with its
//! prepared statements and session settings, and [`Pool::run`], which runs
//! a call on one and tries again where that is safe.
//!
//! A connection the server dropped (restart, administrator) is replaced,
//! and a call that failed on a pooled connection before committing anything
//! runs once more on a new one; an append that deadlocks with other writers
//! is retried. A failed commit is never retried (its outcome is unknown).
//! When no connection can be had (the server is down, refuses logins, or all
//! connections stay busy), the call fails with [`StoreError::Unavailable`];
//! the next call connects again.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use tokio_postgres::Statement;

use super::client::{Client, Prepare};

use super::error::{classify, connect_failed, describe, is_broken, retryable, store_error, Fail};
use super::schema::quote_ident;
use super::tls::Tls;
use crate::error::UNAVAILABLE;
use crate::{Result, StoreError};

/// Connections one store opens at most, unless the URL says `pool_size`.
pub(crate) const DEFAULT_POOL_SIZE: usize = 16;
/// How long a call waits for a connection when all are busy.
const POOL_WAIT: Duration = Duration::from_secs(30);
/// How long a write waits for another writer of the same asset.
pub(crate) const LOCK_TIMEOUT: Duration = Duration::from_secs(30);
/// A transaction of this process that stays idle this long (the process
/// hangs) is ended by the server, so that it cannot hold assets forever.
const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(60);
/// How often an append is tried when it deadlocks with another writer.
pub(crate) const APPEND_TRIES: u32 = 5;

/// The settings of every session of a store whose ledger is in `schema`.
///
/// No JIT: every statement of a store is an index seek or a batch written
/// from arrays, done in milliseconds, while compiling one takes the server
/// a quarter of a second. The planner's estimate for a join with an array
/// of unknown length (an `unnest` of a batch's firings beside a one-row
/// table without statistics) can pass the JIT's thresholds all the same.
pub(crate) fn session_settings(schema: &str) -> String {
    format!(
        "SET search_path TO {}; SET synchronous_commit TO on; SET jit TO off; \
         SET lock_timeout TO '{}s'; SET idle_in_transaction_session_timeout TO '{}s'",
        quote_ident(schema),
        LOCK_TIMEOUT.as_secs(),
        IDLE_IN_TRANSACTION_TIMEOUT.as_secs()
    )
}

/// One connection and its prepared statements.
pub(crate) struct Conn {
    pub(crate) client: Client,
    pub(crate) stmts: Stmts,
    /// The rules as appends on this connection last read them.
    pub(crate) watches: super::rules::WatchCache,
}

/// Statements prepared on one connection, by SQL text.
#[derive(Default)]
pub(crate) struct Stmts(HashMap<&'static str, Statement>);

impl Stmts {
    /// The statement of `sql`, prepared on first use.
    pub(crate) fn get(
        &mut self,
        client: &mut impl Prepare,
        sql: &'static str,
    ) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.0.get(sql) {
            return Ok(s.clone());
        }
        let s = client.prepare(sql)?;
        self.0.insert(sql, s.clone());
        Ok(s)
    }
}

/// The connections of one store.
pub(crate) struct Pool {
    /// The URL without password, for the log.
    location: String,
    /// The schema every session works in.
    schema: String,
    config: tokio_postgres::Config,
    tls: Tls,
    size: usize,
    state: Mutex<State>,
    /// Signalled when a connection is returned or closed.
    freed: Condvar,
}

/// The connections of a pool.
#[derive(Default)]
struct State {
    idle: Vec<Conn>,
    /// Connections open, idle or in use.
    open: usize,
}

impl Pool {
    /// A pool of at most `size` connections (default
    /// [`DEFAULT_POOL_SIZE`]) to `config`'s server, sessions in `schema`,
    /// starting with `first` (already connected).
    pub(crate) fn new(
        location: String,
        config: tokio_postgres::Config,
        tls: Tls,
        schema: String,
        size: Option<usize>,
        first: Client,
    ) -> Result<Pool> {
        let pool = Pool {
            location,
            schema,
            config,
            tls,
            size: size.unwrap_or(DEFAULT_POOL_SIZE),
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        };
        let conn = pool.setup(first)?;
        let mut state = pool.lock();
        state.open = 1;
        state.idle.push(conn);
        drop(state);
        Ok(pool)
    }

    /// The URL without password.
    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    /// The schema of the sessions.
    pub(crate) fn schema(&self) -> &str {
        &self.schema
    }

    /// Connections open at most.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Session settings of a new connection.
    fn setup(&self, mut client: Client) -> Result<Conn> {
        client
            .batch_execute(&session_settings(&self.schema))
            .map_err(|e| classify(e, Some(&self.location)))?;
        Ok(Conn {
            client,
            stmts: Stmts::default(),
            watches: super::rules::WatchCache::default(),
        })
    }

    fn connect(&self) -> Result<Conn> {
        let client = Client::connect(&self.config, &self.tls)
            .map_err(|e| connect_failed(e, &self.location))?;
        self.setup(client)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A pooled connection (`fresh`: `false`) or a new one, waiting while
    /// `size` are in use. With `prefer`, the idle connection it scores
    /// highest (the most recently returned of equals), else the most
    /// recently returned.
    fn checkout(&self, prefer: Option<fn(&Conn) -> usize>) -> Result<(Conn, bool)> {
        let deadline = std::time::Instant::now() + POOL_WAIT;
        let mut state = self.lock();
        loop {
            let pick = match prefer {
                Some(score) => (state.idle.iter().enumerate())
                    .max_by_key(|(i, c)| (score(c), *i))
                    .map(|(i, _)| i),
                None => state.idle.len().checked_sub(1),
            };
            if let Some(c) = pick.map(|i| state.idle.remove(i)) {
                if c.client.is_closed() {
                    state.open -= 1;
                    continue;
                }
                return Ok((c, false));
            }
            if state.open < self.size {
                state.open += 1;
                drop(state);
                return match self.connect() {
                    Ok(c) => Ok((c, true)),
                    Err(e) => {
                        self.lock().open -= 1;
                        self.freed.notify_one();
                        Err(e)
                    }
                };
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                tracing::error!(
                    location = %self.location,
                    "PostgreSQL: {UNAVAILABLE}: all {} connections stayed busy for {} s",
                    self.size,
                    POOL_WAIT.as_secs()
                );
                return Err(StoreError::Unavailable {
                    message: format!(
                        "{UNAVAILABLE}: all {} database connections stayed busy for {} s \
                         (raise pool_size?)",
                        self.size,
                        POOL_WAIT.as_secs()
                    ),
                    source: None,
                });
            }
            state = self
                .freed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn checkin(&self, conn: Conn) {
        let mut state = self.lock();
        if conn.client.is_closed() {
            state.open -= 1;
            drop(state);
            // Closing a dead connection does not wait for the server.
            drop(conn);
        } else {
            state.idle.push(conn);
            drop(state);
        }
        self.freed.notify_one();
    }

    /// Drop `conn` (dead) and every idle connection.
    fn discard(&self, conn: Option<Conn>) {
        let mut state = self.lock();
        let idle = std::mem::take(&mut state.idle);
        state.open -= idle.len() + usize::from(conn.is_some());
        drop(state);
        self.freed.notify_all();
        drop(idle);
        drop(conn);
    }

    /// Run `f` on a connection. When a pooled connection turns out to be
    /// dead (the server restarted), `f` runs once more on a new one; when
    /// writers deadlock, up to [`APPEND_TRIES`] times.
    pub(crate) fn run<T>(&self, f: impl FnMut(&mut Conn) -> Result<T, Fail>) -> Result<T> {
        self.run_on(None, f)
    }

    /// [`Pool::run`] for an append: on the idle connection that has read
    /// the most rules. Each connection keeps the rules its appends read
    /// (with thousands of rules, all of them: a pass of its own), and the
    /// connection a server's writer last returned may meanwhile serve a
    /// deadline pass or a read.
    pub(crate) fn run_append<T>(&self, f: impl FnMut(&mut Conn) -> Result<T, Fail>) -> Result<T> {
        self.run_on(Some(|c: &Conn| c.watches.rules_read()), f)
    }

    fn run_on<T>(
        &self,
        prefer: Option<fn(&Conn) -> usize>,
        mut f: impl FnMut(&mut Conn) -> Result<T, Fail>,
    ) -> Result<T> {
        let mut tries = 0;
        loop {
            tries += 1;
            let (conn, fresh) = self.checkout(prefer)?;
            // Returned to the pool even when `f` panics (a transaction
            // rolls back while unwinding).
            let mut conn = Lent {
                pool: self,
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
                Err(f) => return Err(store_error(f, &self.location)),
            }
        }
    }
}

/// A connection out of the pool, going back when dropped.
struct Lent<'a> {
    pool: &'a Pool,
    conn: Option<Conn>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            self.pool.checkin(c);
        }
    }
}

/// The `postgres` client closes a connection by running its own runtime,
/// which panics on a thread that drives a tokio runtime (a server dropping
/// its store at the end of an async `main`): close them on a thread of
/// their own.
impl Drop for Pool {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let idle = std::mem::take(&mut state.idle);
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
