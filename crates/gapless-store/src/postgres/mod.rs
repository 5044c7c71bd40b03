//! The PostgreSQL backend: one schema of one database, shared by any number
//! of processes.
//!
//! # Layout
//!
//! - `mod.rs`: the store itself ([`PostgresStore`]): opening, and each
//!   [`crate::Store`] call run on a pooled connection.
//! - `url.rs`: what a URL names (server, login, `schema`, `pool_size`,
//!   `sslmode`, `sslrootcert`) and the URL without password for messages.
//! - `tls.rs`: TLS on rustls with libpq's `sslmode` meanings.
//! - `client.rs`: one connection: a blocking client over the asynchronous
//!   driver that sends a transaction's statements together (pipelining).
//! - `pool.rs`: the connections, their session settings, and running a call
//!   with the retries that are safe.
//! - `error.rs`: PostgreSQL errors as storage errors.
//! - `schema.rs`: the schema, migrations, recognising a ledger schema,
//!   schema names and quoted identifiers.
//! - `row.rs`: an event as a row of `events`: the kind in the sign of its
//!   number, `produced_at` and `extra` as one column of bytes.
//! - `append.rs`: appends: idempotency, sequence, coverage runs kept up to
//!   date in the same transaction.
//! - `read.rs`: coverage, events, declarations and the asset listing.
//! - `prune.rs`: removing old events and firings in bounded transactions,
//!   each locking one asset as an append does.
//! - `nonblocking.rs`: the short reads (coverage, the run at an instant)
//!   on the asynchronous driver, for a server to await on its own task.
//! - `rules.rs`: rules, judging an append's windows under the rules' locks,
//!   deadlines, firings.
//! - `known.rs`: the window states an append's connection keeps of the
//!   rules it judged, and when they still hold.
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
//! The store is synchronous and `Send + Sync`; connections are pooled. Each
//! pooled connection runs its own small runtime, so the [`crate::Store`]
//! methods must not be called from a thread that drives a tokio runtime (the
//! client panics there): async callers use `tokio::task::spawn_blocking`,
//! except for the short reads of [`crate::Store::nonblocking`], which run
//! on connections of the asynchronous driver driven by the caller's
//! runtime. Those connections (a quarter of `pool_size`, one or two) are
//! taken out of the pool's: `pool_size` bounds them all.
//! Opening and dropping the store are safe anywhere (they connect and close
//! on a thread of their own).
//!
//! # Connecting
//!
//! `postgres://user:password@host:port/db?schema=NAME&pool_size=N&...`: the
//! usual libpq-style URL and parameters, plus two of gapless's own: `schema`
//! (default `gapless`), the PostgreSQL schema that holds the ledger (created
//! when missing, so several ledgers can share a database), and `pool_size`
//! (default 16), the most connections one process opens. `Open` messages
//! name the URL without its password. TLS: `sslmode=disable|prefer|require|
//! verify-ca|verify-full` and `sslrootcert=FILE` as libpq reads them (see
//! `tls.rs`); without `sslmode`, plain TCP.
//!
//! # Failures
//!
//! A connection the server dropped (restart, administrator) is replaced, and
//! a call that failed on it before committing anything runs once more; an
//! append that deadlocks with other writers is retried. A failed commit is
//! never retried (its outcome is unknown): the error is returned. A server
//! that cannot be reached (at opening or later), a connection lost for good
//! and a pool with no connection to be had are
//! [`StoreError::Unavailable`](crate::StoreError::Unavailable), a server out
//! of space (SQLSTATE class 53) is [`StoreError::Full`](crate::StoreError::Full):
//! fixed messages without connection details, which are logged instead.

/// The stored coverage runs that touch each `(asset, lo, hi)` of rows `u`
/// (columns `a`, `lo`, `hi`), adjacent ones included, as rows `u.a` (the
/// asset) and `r.start_us`, `r.end_us`: per asset the run with the greatest
/// start at or before `lo` when it reaches `lo`, then every run starting in
/// `(lo, hi]`.
macro_rules! runs_touching_lateral {
    () => {
        " CROSS JOIN LATERAL ( \
           (SELECT b.start_us, b.end_us FROM (SELECT start_us, end_us FROM coverage_runs \
             WHERE asset_id = u.a AND start_us <= u.lo ORDER BY start_us DESC LIMIT 1) AS b \
            WHERE b.end_us >= u.lo) \
           UNION ALL \
           (SELECT start_us, end_us FROM coverage_runs \
             WHERE asset_id = u.a AND start_us > u.lo AND start_us <= u.hi) \
         ) AS r"
    };
}

/// [`runs_touching_lateral`] for the `(asset id, lo, hi)` of the arrays
/// $1..$3: judging's read of coverage selects from it.
macro_rules! runs_touching_from {
    () => {
        concat!(
            "FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS u(a, lo, hi)",
            runs_touching_lateral!()
        )
    };
}

mod append;
mod client;
mod error;
mod known;
mod nonblocking;
mod overview;
mod pool;
mod prune;
mod read;
mod row;
mod rules;
mod schema;
mod tls;
mod url;

use gapless_core::{AssetDecl, Instant, Interval, IntervalSet, NewEvent, Rule};

use self::error::open_failed;
use self::pool::Pool;
use self::url::Target;
use crate::{
    Appended, AssetSummary, EventPage, EventQuery, FiringPage, FiringQuery, Result, RulePut,
    StoredRule,
};
use crate::{AssetPage, AssetQuery, RulePage, RuleQuery};

/// A ledger in a PostgreSQL schema.
///
/// `Send + Sync`: share it between threads behind an `Arc`. Not to be called
/// from inside a tokio runtime (see the module documentation).
pub struct PostgresStore {
    pool: Pool,
    reads: nonblocking::Reads,
    untaken: crate::rule::Untaken,
    /// The window states the store's appends know ([`known`]).
    known: std::sync::Mutex<known::KnownStates>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.pool.location())
            .field("schema", &self.pool.schema())
            .field("pool_size", &(self.pool.size() + self.reads.len()))
            .finish_non_exhaustive()
    }
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
    /// [`crate::StoreError::Unavailable`] when the server cannot be reached
    /// (the message names no connection details; they are logged).
    /// [`crate::StoreError::Open`] when the URL is bad, the server refuses
    /// the login or the database, or the schema is not a gapless ledger
    /// (another application's tables, a newer schema version). The message
    /// names the URL without its password.
    pub fn open(url: &str) -> Result<PostgresStore> {
        Self::open_target(url::parse(url, None)?, true)
    }

    /// Open the ledger at `url` as [`PostgresStore::open`] does, but only
    /// when its schema exists: nothing is created.
    ///
    /// # Errors
    ///
    /// [`crate::StoreError::Missing`] when the schema does not exist; else
    /// as [`PostgresStore::open`].
    pub fn open_existing(url: &str) -> Result<PostgresStore> {
        Self::open_target(url::parse(url, None)?, false)
    }

    /// Open the ledger at `url` in PostgreSQL schema `schema` (created when
    /// missing). A `schema` parameter in the URL is ignored.
    ///
    /// # Errors
    ///
    /// As [`PostgresStore::open`].
    pub fn open_in_schema(url: &str, schema: &str) -> Result<PostgresStore> {
        Self::open_target(url::parse(url, Some(schema))?, true)
    }

    /// Opening connects (the client's own runtime), so it runs on a thread of
    /// its own: callers may open the store from async code.
    fn open_target(target: Target, create: bool) -> Result<PostgresStore> {
        std::thread::scope(|s| {
            let opening = s.spawn(|| Self::open_here(target, create));
            match opening.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    fn open_here(target: Target, create: bool) -> Result<PostgresStore> {
        let Target {
            location,
            config,
            schema,
            pool_size,
            tls,
        } = target;
        let mut client =
            client::Client::connect(&config, &tls).map_err(|e| open_failed(&location, e))?;
        schema::migrate(&mut client, &location, &schema, create)?;
        let size = pool_size.unwrap_or(pool::DEFAULT_POOL_SIZE);
        let short = nonblocking::connections_of(size);
        let reads = nonblocking::Reads::new(
            location.clone(),
            schema.clone(),
            config.clone(),
            tls.clone(),
            short,
        );
        let pool = Pool::new(location, config, tls, schema, Some(size - short), client)?;
        Ok(PostgresStore {
            pool,
            reads,
            untaken: crate::rule::Untaken::default(),
            known: std::sync::Mutex::default(),
        })
    }

    /// The URL without password.
    pub fn location(&self) -> &str {
        self.pool.location()
    }

    /// The PostgreSQL schema that holds the ledger.
    pub fn schema(&self) -> &str {
        self.pool.schema()
    }

    /// The value of a PostgreSQL setting in the store's sessions (for tests
    /// and diagnostics).
    ///
    /// # Errors
    ///
    /// [`crate::StoreError::Backend`] for an unknown setting.
    pub fn setting(&self, name: &str) -> Result<String> {
        self.pool.run(|c| {
            let row = c.client.query_one("SELECT current_setting($1)", &[&name])?;
            Ok(row.get(0))
        })
    }
}

impl crate::Store for PostgresStore {
    fn append(&self, batch: &[NewEvent], received_at: Instant) -> Result<Appended> {
        if batch.is_empty() {
            return Ok(Appended::default());
        }
        append::check_batch(batch)?;
        self.pool
            .run_append(|c| append::append(c, batch, received_at, &self.untaken, &self.known))
    }

    /// One transaction, one durable commit, a savepoint per batch.
    fn append_many(&self, batches: &[&[NewEvent]], received_at: Instant) -> Vec<Result<Appended>> {
        if batches.iter().all(|b| b.is_empty()) {
            return batches.iter().map(|_| Ok(Appended::default())).collect();
        }
        match self.pool.run_append(|c| {
            append::append_many(c, batches, received_at, &self.untaken, &self.known)
        }) {
            Ok(results) => results,
            Err(e) => batches.iter().map(|_| Err(e.clone())).collect(),
        }
    }

    fn coverage(&self, asset: &str, range: Interval) -> Result<IntervalSet> {
        self.pool.run(|c| read::coverage(c, asset, range))
    }

    /// Inside a tokio runtime, which drives the connections.
    fn nonblocking(&self) -> Option<&dyn crate::NonBlockingReads> {
        let runtime = tokio::runtime::Handle::try_current().is_ok();
        (runtime && self.reads.len() > 0).then_some(&self.reads as &dyn crate::NonBlockingReads)
    }

    fn retractions(&self, asset: &str, range: Interval) -> Result<IntervalSet> {
        self.pool.run(|c| read::retractions(c, asset, range))
    }

    fn run_containing(&self, asset: &str, t: Instant) -> Result<Option<Interval>> {
        self.pool.run(|c| read::run_containing(c, asset, t))
    }

    fn events(&self, asset: &str, query: &EventQuery) -> Result<EventPage> {
        self.pool.run(|c| read::events(c, asset, query))
    }

    fn asset_decl(&self, asset: &str) -> Result<Option<AssetDecl>> {
        self.pool.run(|c| read::asset_decl(c, asset))
    }

    fn declare_asset(&self, asset: &str, decl: &AssetDecl) -> Result<()> {
        let (span, tz) = crate::decl::check_decl(asset, decl)?;
        self.pool
            .run(|c| append::declare_asset(c, asset, span.as_deref(), &tz))
    }

    fn assets(&self) -> Result<Vec<AssetSummary>> {
        self.pool.run(read::assets)
    }

    fn asset(&self, asset: &str) -> Result<Option<AssetSummary>> {
        self.pool.run(|c| read::asset(c, asset))
    }

    fn assets_page(&self, query: &AssetQuery, now: Instant) -> Result<AssetPage> {
        self.pool.run(|c| read::assets_page(c, query, now))
    }

    fn put_rule(&self, rule: &Rule, now: Instant) -> Result<RulePut> {
        self.pool
            .run(|c| rules::put_rule(c, rule, now, &self.untaken))
    }

    fn rule(&self, name: &str) -> Result<Option<StoredRule>> {
        self.pool.run(|c| rules::rule(c, name))
    }

    fn rules(&self) -> Result<Vec<StoredRule>> {
        self.pool.run(rules::rules)
    }

    fn rules_page(&self, query: &RuleQuery) -> Result<RulePage> {
        self.pool.run(|c| rules::rules_page(c, query))
    }

    fn delete_rule(&self, name: &str) -> Result<bool> {
        self.pool.run(|c| rules::delete_rule(c, name))
    }

    fn firings(&self, query: &FiringQuery) -> Result<FiringPage> {
        self.pool.run(|c| rules::firings(c, query))
    }

    fn judge_deadlines(&self, now: Instant) -> Result<u64> {
        self.pool
            .run(|c| rules::judge_deadlines(c, now, &self.untaken))
    }

    fn claim_deliveries(
        &self,
        owner: &str,
        now: Instant,
        lease: std::time::Duration,
        limit: usize,
    ) -> Result<Vec<crate::Firing>> {
        self.pool
            .run(|c| rules::claim_deliveries(c, owner, now, lease, limit))
    }

    fn skip_deliveries(&self, now: Instant, takes: &[crate::TargetKinds<'_>]) -> Result<u64> {
        self.pool.run(|c| rules::skip_deliveries(c, now, takes))
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
        self.pool
            .run(|c| rules::finish_delivery(c, seq, owner, outcome))
    }

    fn retry_failed(&self, rule: Option<&str>) -> Result<u64> {
        self.pool.run(|c| rules::retry_failed(c, rule))
    }

    fn ledger_id(&self) -> Result<String> {
        self.pool.run(rules::ledger_id)
    }

    fn prune_events(&self, asset: &str, before: Instant, limit: usize) -> Result<u64> {
        self.pool
            .run(|c| prune::prune_events(c, asset, before, limit))
    }

    fn prune_firings(&self, before: Instant, limit: usize) -> Result<u64> {
        self.pool.run(|c| prune::prune_firings(c, before, limit))
    }
}
