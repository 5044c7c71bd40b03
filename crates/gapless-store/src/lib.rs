//! Durable storage for the gapless ledger.
//!
//! # Layout
//!
//! - [`Store`]: the one storage trait; every backend passes the same story of
//!   tests (`tests/story/mod.rs`).
//! - [`SqliteStore`]: the embedded default, one SQLite file (`sqlite/`).
//! - [`PostgresStore`]: one PostgreSQL schema shared by any number of
//!   processes (`postgres/`).
//! - [`StoredEvent`], [`EventQuery`], [`EventPage`], [`AssetSummary`],
//!   [`Appended`]: what goes in and comes out (`model.rs`).
//! - [`AssetQuery`], [`AssetPage`], [`AssetOverview`], [`RuleQuery`],
//!   [`RulePage`]: the listings a page at a time (`listing.rs`, which also
//!   turns a name prefix into a range of the name index).
//! - [`StoredRule`], [`RulePut`], [`Firing`], [`FiringQuery`],
//!   [`FiringPage`]: rules and their firings (`rule/mod.rs`), judged in the
//!   transaction of every append that touches a rule's assets;
//!   [`DeliveryOutcome`]: how a deliverer finishes a firing it claimed;
//!   [`TargetKinds`]: what a target takes, so that the firings it does not
//!   take are delivered unsent in one write, or recorded so from the start
//!   ([`Store::settle_untaken`]).
//! - [`StoreError`]: what can go wrong, the backend's own error kept as its
//!   [`Cause`] (`error.rs`).
//! - [`open`]: picks the backend from a `--db` value (`open.rs`).
//! - [`NonBlockingReads`]: the short reads an async caller awaits on its
//!   own task, for a backend whose driver is asynchronous (PostgreSQL).
//!
//! What the backends share is written once:
//!
//! - `codec.rs`: how an event's fields are stored (kind, instants as
//!   microseconds, extra, id) and read back.
//! - `page.rs`: planning a page of events (the page limit, walk or seek,
//!   the next cursor).
//! - `delta.rs`: what one append does to one asset (new events, count,
//!   longest, hull).
//! - `runs.rs`: the coverage runs an append changes (replay and diff).
//! - `overview.rs`: an asset's overview inputs, kept with it by every
//!   append that changes its runs (first run, last run's end, recent
//!   runs), and a page row's overview made from them.
//! - `decl.rs`: checking asset names and declarations, reading them back.
//! - `rule/codec.rs`, `rule/judge.rs`: how rules and firings are stored;
//!   judging a group of batches' windows in memory.

mod codec;
mod decl;
mod delta;
mod error;
mod listing;
mod model;
mod open;
mod overview;
mod page;
mod postgres;
mod rule;
mod runs;
mod sqlite;

pub use self::postgres::PostgresStore;
pub use error::{Cause, StoreError};
pub use listing::{
    AssetOverview, AssetPage, AssetQuery, RulePage, RuleQuery, DAY_US, MAX_LIST_PAGE,
    RULES_PAGE_BYTES, WEEK_US,
};
pub use model::{Appended, AssetSummary, EventPage, EventQuery, StoredEvent};
pub use open::{open, open_existing};
pub use rule::{
    Delivery, DeliveryOutcome, DeliveryState, Firing, FiringPage, FiringQuery, RulePut, StoredRule,
    TargetKinds,
};
pub use sqlite::SqliteStore;

use gapless_core::{AssetDecl, Instant, Interval, IntervalSet, NewEvent, Rule};

/// Events read at a time by [`Store::scan_overlapping`]: with `extra`
/// objects of up to 64 KiB, a page is at most 16 MiB.
pub const SCAN_PAGE: usize = 256;

/// The storage result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A map keyed by the ledger's own row ids (of assets, rules, windows),
/// hashed with foldhash rather than SipHash: judging looks ids up for every
/// window of every batch, and no client chooses them.
pub(crate) type IdMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// A set of the ledger's own row ids, as [`IdMap`].
pub(crate) type IdSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// A read of [`NonBlockingReads`] in flight.
pub type ReadFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T>> + Send + 'a>>;

/// The short reads (one index seek: coverage, the run at an instant) of a
/// backend whose driver is asynchronous, awaited on the caller's own task.
///
/// A synchronous backend call from async code goes to a blocking thread
/// and back: two thread wake-ups, which on a 2-core machine cost more than
/// the read itself. Each read answers exactly as the [`Store`] method of the
/// same name.
pub trait NonBlockingReads: Send + Sync {
    /// As [`Store::coverage`].
    fn coverage<'a>(&'a self, asset: &'a str, range: Interval) -> ReadFuture<'a, IntervalSet>;

    /// As [`Store::run_containing`].
    fn run_containing<'a>(&'a self, asset: &'a str, t: Instant)
        -> ReadFuture<'a, Option<Interval>>;
}

/// A durable, sequenced ledger of events with per-asset coverage kept up to
/// date in the same transaction as each append.
///
/// Backends are synchronous; the server calls them from blocking tasks,
/// except for short reads: inline where they take microseconds
/// ([`Store::reads_inline`]), awaited where the driver is asynchronous
/// ([`Store::nonblocking`]).
///
/// # Errors
///
/// Any method may fail with [`StoreError::Unavailable`] (the database
/// cannot be reached), [`StoreError::Full`] (no room for a write),
/// [`StoreError::Open`] (a new read connection to a ledger file that went
/// away) or [`StoreError::Backend`] (a fault of the backend or of the
/// ledger's own data), each keeping the backend's error as its source. A
/// method's own `# Errors` says what else it may answer.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Append `batch` atomically, in order, numbering each new event with the
    /// next sequence and stamping it `received_at`.
    ///
    /// An event whose `(asset, id)` is already stored (or earlier in the same
    /// batch) with the same content is a duplicate: counted, not stored.
    ///
    /// # Errors
    ///
    /// [`StoreError::Conflict`] when an `(asset, id)` is stored with other
    /// content, [`StoreError::Invalid`] for an event whose asset name is not
    /// one; nothing of the batch is then stored. A backend failure leaves
    /// nothing stored either. The acknowledged batch is durable on return.
    fn append(&self, batch: &[NewEvent], received_at: Instant) -> Result<Appended>;

    /// Append one atomic batch that arrives in chunks (e.g. while a file is
    /// still being parsed): the same as [`Store::append`] of all the chunks
    /// concatenated, `Conflict` indexes counting from the batch's first
    /// event. A chunk that is an `Err` aborts the batch: nothing of it is
    /// stored and that error is returned.
    ///
    /// The default collects the chunks, then appends them. A backend may
    /// store each chunk as it comes, so that the caller's parsing (on
    /// another thread) and storing overlap, and hand each back to `stored`
    /// once it is written: memory then stays bounded by the chunks in
    /// flight, and the caller frees them on the thread that allocated
    /// them (freeing on another contends for that thread's allocator
    /// arena).
    ///
    /// # Errors
    ///
    /// As [`Store::append`], or the first chunk that is an `Err`.
    fn append_chunks(
        &self,
        chunks: &mut dyn Iterator<Item = Result<Vec<NewEvent>>>,
        stored: &mut dyn FnMut(Vec<NewEvent>),
        received_at: Instant,
    ) -> Result<Appended> {
        let _ = stored;
        // Gathered whole, then moved once into a vector of the batch's
        // size: grown a chunk at a time, every event would be copied again
        // at each doubling.
        let chunks = chunks.collect::<Result<Vec<_>>>()?;
        let mut all = Vec::with_capacity(chunks.iter().map(Vec::len).sum());
        for chunk in chunks {
            all.extend(chunk);
        }
        self.append(&all, received_at)
    }

    /// Whether a short read (coverage, frontier: one index seek) may run
    /// right on an async runtime's thread instead of a blocking one.
    ///
    /// True for a backend whose reads are plain blocking calls of
    /// microseconds (SQLite), where the hand-over to a blocking thread and
    /// back costs more than the read. False (the default) for a backend that
    /// must never run on a runtime thread (the PostgreSQL client starts a
    /// runtime of its own).
    fn reads_inline(&self) -> bool {
        false
    }

    /// The short reads to await on the caller's task, when the backend has
    /// them and the calling thread is inside a tokio runtime (which drives
    /// them); `None` otherwise (the default), and the caller uses the
    /// blocking methods.
    fn nonblocking(&self) -> Option<&dyn NonBlockingReads> {
        None
    }

    /// Append several independent batches (the server's group commit), each
    /// atomically on its own, with one result per batch in order: its own
    /// counts, or its own error with nothing of *that* batch stored (a
    /// `Conflict` index is then the position in that batch). Batches are
    /// applied in order, so a later batch sees an earlier one's events (for
    /// duplicates).
    ///
    /// The default appends each batch in its own transaction. A backend may
    /// override it to share one durable commit: one transaction with a
    /// savepoint per batch, rolling back to the savepoint on a conflict. When
    /// that shared commit itself fails, every batch's result is the error.
    fn append_many(&self, batches: &[&[NewEvent]], received_at: Instant) -> Vec<Result<Appended>> {
        batches
            .iter()
            .map(|batch| self.append(batch, received_at))
            .collect()
    }

    /// The covered instants of `asset` in runs that overlap `range`
    /// (unclipped). Empty for an unknown asset.
    fn coverage(&self, asset: &str, range: Interval) -> Result<IntervalSet>;

    /// The union of the intervals of `asset`'s retracted events that
    /// overlap `range` (unclipped); empty for an unknown asset. Where it is
    /// not covered, the latest event is a retraction: with
    /// [`Store::coverage`], what is withdrawn rather than never recorded.
    /// Read from an index of the retractions alone (they are few), never by
    /// a walk of the events.
    fn retractions(&self, asset: &str, range: Interval) -> Result<IntervalSet>;

    /// The covered run that contains `t`, if any.
    fn run_containing(&self, asset: &str, t: Instant) -> Result<Option<Interval>>;

    /// Events of `asset` in sequence order per `query`, one page.
    fn events(&self, asset: &str, query: &EventQuery) -> Result<EventPage>;

    /// Every event of `asset` whose interval overlaps `range`, in sequence
    /// order, all at once: for tests and small ranges. Questions use
    /// [`Store::scan_overlapping`], whose memory does not grow with the
    /// events.
    fn events_overlapping(&self, asset: &str, range: Interval) -> Result<Vec<StoredEvent>> {
        let mut out = Vec::new();
        self.scan_overlapping(asset, range, &mut |e| {
            out.push(e.clone());
            range.end()
        })?;
        Ok(out)
    }

    /// Stream the events of `asset` whose interval overlaps `range` to `f`,
    /// in sequence order, reading them [`SCAN_PAGE`] at a time (so memory
    /// stays bounded however many there are). `f` returns the end of the
    /// part of `range` it still wants (at most `range.end()`, above
    /// `range.start()`): later reads skip the events that do not overlap
    /// `[range.start(), that end)`. Returns how many events `f` saw.
    ///
    /// Pages are read one after the other, not in one snapshot: events
    /// appended meanwhile have higher sequences (per asset, sequence order
    /// is commit order), so what `f` sees is always every overlapping
    /// event up to some sequence, never a hole.
    ///
    /// The default reads pages of [`Store::events`] by sequence cursor.
    fn scan_overlapping(
        &self,
        asset: &str,
        range: Interval,
        f: &mut dyn FnMut(&StoredEvent) -> Instant,
    ) -> Result<u64> {
        let (start, mut end) = (range.start(), range.end());
        let mut after = None;
        let mut seen = 0;
        loop {
            let page = self.events(
                asset,
                &EventQuery {
                    range: Some(Interval::new(start, end).expect("end stays above start")),
                    kind: None,
                    limit: SCAN_PAGE,
                    after,
                },
            )?;
            for e in &page.events {
                if e.interval.start() < end && e.interval.end() > start {
                    seen += 1;
                    end = f(e).clamp(start, range.end());
                }
            }
            match page.next {
                Some(n) if end > start => after = Some(n),
                _ => return Ok(seen),
            }
        }
    }

    /// The declaration of `asset` (key span, time zone), if any.
    fn asset_decl(&self, asset: &str) -> Result<Option<AssetDecl>>;

    /// Declare `asset`'s key span and time zone, creating it if needed.
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] for a bad asset name or declaration.
    fn declare_asset(&self, asset: &str, decl: &AssetDecl) -> Result<()>;

    /// Every asset with its event count, first and last covered instants and
    /// declaration: every asset that has an event or a declaration.
    fn assets(&self) -> Result<Vec<AssetSummary>>;

    /// One asset as [`Store::assets`] lists it, or `None` for an asset the
    /// ledger has never seen (no event, no declaration).
    ///
    /// The default picks it out of the listing; both backends read the one
    /// row instead.
    fn asset(&self, asset: &str) -> Result<Option<AssetSummary>> {
        Ok(self.assets()?.into_iter().find(|a| a.asset == asset))
    }

    /// One page of assets in name order (SPEC §4, `GET /v1/assets`), each
    /// with its overview as of `now`: its first run's end and its covered
    /// microseconds of the last day and week. Read in one statement (a
    /// seek of the name index for a prefix), never one per asset.
    fn assets_page(&self, query: &AssetQuery, now: Instant) -> Result<AssetPage>;

    /// Record `rule` (SPEC §7): a new rule gets a `complete` firing for each
    /// of its windows that is already complete, in the same transaction; an
    /// existing rule with the same definition takes the new settings (or
    /// stays as it is).
    ///
    /// # Errors
    ///
    /// [`StoreError::Conflicting`] when a rule of that name exists with
    /// another definition; [`StoreError::Invalid`] for bad settings or an
    /// asset the ledger does not know.
    fn put_rule(&self, rule: &Rule, now: Instant) -> Result<RulePut>;

    /// The rule named `name`, if any.
    fn rule(&self, name: &str) -> Result<Option<StoredRule>>;

    /// Every rule, in name order.
    fn rules(&self) -> Result<Vec<StoredRule>>;

    /// One page of rules in name order, ending at its limit or once the
    /// rules' asset lists reach the query's bytes (at most
    /// [`RULES_PAGE_BYTES`]); read in one statement, never the whole
    /// listing.
    fn rules_page(&self, query: &RuleQuery) -> Result<RulePage>;

    /// Remove rule `name`, its window states and its firings; whether it
    /// existed.
    fn delete_rule(&self, name: &str) -> Result<bool>;

    /// One page of firings in sequence order.
    fn firings(&self, query: &FiringQuery) -> Result<FiringPage>;

    /// Record a `late` firing for each window of a rule with a deadline
    /// that is not complete at its end plus the deadline, for the deadlines
    /// that passed by `now` since the last call (deadlines that passed
    /// before a rule was created are not judged). How many fired.
    fn judge_deadlines(&self, now: Instant) -> Result<u64>;

    /// Lease up to `limit` (at most 1,000) pending firings to `owner` until
    /// `now + lease`: those whose next try is due by `now` and whose lease
    /// is free or expired, in sequence order. On PostgreSQL the rows are
    /// taken with `FOR UPDATE SKIP LOCKED`, so deliverers sharing a ledger
    /// never claim the same firing at once.
    fn claim_deliveries(
        &self,
        owner: &str,
        now: Instant,
        lease: std::time::Duration,
        limit: usize,
    ) -> Result<Vec<Firing>>;

    /// Mark `delivered` without sending (attempts unchanged, no error, as
    /// [`DeliveryOutcome::Skipped`] would) every pending firing due by
    /// `now` whose lease is free or expired, whose target is named in
    /// `takes` and whose kind that target does not take; how many. One
    /// write for them all instead of a claim and a finish each. Rows
    /// another deliverer is claiming at this moment are left to it. The
    /// default skips nothing: such firings are then skipped one by one
    /// when claimed.
    fn skip_deliveries(&self, now: Instant, takes: &[TargetKinds<'_>]) -> Result<u64> {
        let _ = (now, takes);
        Ok(0)
    }

    /// From now on, record each firing this store records (appends, new
    /// rules, deadline passes) whose target is named in `takes` and does
    /// not take its kind `delivered` unsent, as [`Store::skip_deliveries`]
    /// would mark it later: the firing is written once instead of twice.
    /// Called again, `takes` replaces what it was told before. The default
    /// records them pending, to be skipped by a deliverer.
    fn settle_untaken(&self, takes: &[TargetKinds<'_>]) {
        let _ = takes;
    }

    /// How many firings this store has recorded delivered unsent
    /// ([`Store::settle_untaken`]) since it was opened.
    fn settled_untaken(&self) -> u64 {
        0
    }

    /// Finish firing `seq`'s delivery attempt as `outcome` and free its
    /// lease, only while `owner` still holds it (no other deliverer has
    /// claimed it since, and it is still pending); whether it did.
    fn finish_delivery(&self, seq: i64, owner: &str, outcome: &DeliveryOutcome) -> Result<bool>;

    /// Make the `failed` firings (of rule `rule`, or all) pending again,
    /// due at once with their attempts counted from 0; how many.
    fn retry_failed(&self, rule: Option<&str>) -> Result<u64>;

    /// The ledger's id: random, made when the ledger was created, the same
    /// for every process that shares it (delivery keys name it).
    fn ledger_id(&self) -> Result<String>;

    /// Remove up to `limit` of `asset`'s landed events that end at or
    /// before `before`, in one transaction, and when any was removed lower
    /// the asset's event count and raise its
    /// [`AssetSummary::pruned_before`] to `before`; how many were removed
    /// (0 for an unknown asset). A caller repeats it until it removes fewer
    /// than `limit`: each step holds the asset's writers back for one
    /// bounded delete only.
    ///
    /// Every answer read from the coverage runs and the retractions stays
    /// as it was: appends keep the runs from the stored runs and the batch
    /// alone, and retracted events are never removed. A later event with
    /// the id of a removed one is stored as new. SQLite keeps the ledger's
    /// newest event (its next sequence is one above the highest stored).
    fn prune_events(&self, asset: &str, before: Instant, limit: usize) -> Result<u64>;

    /// Remove up to `limit` firings recorded before `before` whose delivery
    /// is not `pending`, in one transaction; how many. Firing numbers are
    /// never reused.
    fn prune_firings(&self, before: Instant, limit: usize) -> Result<u64>;
}
