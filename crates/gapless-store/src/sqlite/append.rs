//! Appends and declarations: everything that writes.
//!
//! One append is one `BEGIN IMMEDIATE` transaction:
//!
//! 1. Each event is inserted with `ON CONFLICT (asset_id, id) DO NOTHING`;
//!    when nothing was inserted the stored event is read and compared: the
//!    same content is a duplicate (counted, not applied), other content a
//!    conflict (the transaction is rolled back). Earlier events of the same
//!    batch are already inserted, so duplicates inside a batch behave the
//!    same as across batches. A large chunk of many interleaved assets is
//!    inserted asset by asset, each event at the sequence number of its
//!    place in the chunk (see `Appender::push`).
//! 2. Per asset, once: the stored coverage runs that touch the hull of the
//!    batch's new events (adjacent ones included) are loaded, the new events
//!    applied in order, and the rows that this changes written (usually the
//!    end of one run moves).
//! 3. Per asset: event count, longest event and event hull updated.
//! 4. Per asset whose runs changed, once a transaction (a group commit
//!    holds many batches): its overview inputs (`overview.rs`).
//! 5. Commit (`synchronous = FULL`: durable on return).

use std::collections::HashMap;

use gapless_core::{AssetDecl, Instant, IntervalSet, NewEvent};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::rules::WatchCache;
use super::Writer;
use crate::codec::{decode_content, encode};
use crate::decl::{check_asset_name, check_decl};
use crate::delta::AssetDelta;
use crate::rule::Untaken;
use crate::{Appended, Result, StoreError};

/// An event at sequence number ?1 (NULL: the next one).
pub(super) const INSERT_WITH_ID: &str = "INSERT INTO events \
     (seq, asset_id, id, start_us, end_us, kind, extra, produced_at, received_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
     ON CONFLICT (asset_id, id) WHERE id IS NOT NULL DO NOTHING";
const INSERT_NO_ID: &str = "INSERT INTO events \
     (seq, asset_id, id, start_us, end_us, kind, extra, produced_at, received_at) \
     VALUES (?1, ?2, NULL, ?3, ?4, ?5, ?6, ?7, ?8)";
/// The sequence number the next event takes.
const NEXT_SEQ: &str = "SELECT coalesce(max(seq), 0) + 1 FROM events";
/// The smallest chunk stored asset by asset when its assets interleave.
const SORT_CHUNK: usize = 1_024;
/// The fewest assets in a chunk for that: a few assets' places in the
/// indexes stay in the CPU's caches, and storing out of sequence order
/// splits the events table's pages (5 interleaved assets: 4.6 s for two
/// million events in file order, 5.7 s asset by asset).
const SORT_ASSETS: usize = 64;
/// The start of asset ?1's run starting at or before ?2.
pub(super) const RUN_START_AT_OR_BEFORE: &str = "SELECT start_us FROM coverage_runs \
     WHERE asset_id = ?1 AND start_us <= ?2 ORDER BY start_us DESC LIMIT 1";
/// Asset ?1's runs starting in [?2, ?3].
pub(super) const RUNS_STARTING_IN: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = ?1 AND start_us >= ?2 AND start_us <= ?3 ORDER BY start_us";
/// Delete asset ?1's run starting at ?2.
pub(super) const DELETE_RUN: &str =
    "DELETE FROM coverage_runs WHERE asset_id = ?1 AND start_us = ?2";
/// Move the end of asset ?1's run starting at ?2 to ?3.
pub(super) const UPDATE_RUN: &str =
    "UPDATE coverage_runs SET end_us = ?3 WHERE asset_id = ?1 AND start_us = ?2";
const INSERT_RUN: &str =
    "INSERT INTO coverage_runs (asset_id, start_us, end_us) VALUES (?1, ?2, ?3)";
/// Asset ?1's first run.
pub(super) const FIRST_RUN: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = ?1 ORDER BY start_us LIMIT 1";
/// Asset ?1's runs from the last back, at most ?2 of them.
pub(super) const LAST_RUNS: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = ?1 ORDER BY start_us DESC LIMIT ?2";
/// Set asset ?1's overview inputs: its first run (?2, ?3), the end of its
/// last (?4), its recent runs (?5).
const SET_OVERVIEW: &str = "UPDATE assets SET first_start_us = ?2, first_end_us = ?3, \
     last_end_us = ?4, recent_runs = ?5 WHERE id = ?1";
pub(super) const STORED_BY_ID: &str = "SELECT start_us, end_us, kind, extra, produced_at \
     FROM events WHERE asset_id = ?1 AND id = ?2";

/// The write connection's page cache.
pub(crate) const WRITER_CACHE_MIB: i64 = 64;
/// A batch of at least this many events gets a bigger page cache while it
/// is appended: with the normal cache, pages spilled to the WAL
/// mid-transaction and read back cost about a quarter of the time of a
/// two-million-event batch.
const BIG_BATCH: usize = 100_000;
/// The page cache of a big batch (allocated only as pages are touched):
/// the bound of an append's memory, whatever its size. Smaller caches slow
/// the `ledger` bench's ten-million-event ingest, larger ones do not speed
/// it up and only raise its peak memory.
const BIG_BATCH_CACHE_MIB: i64 = 256;

/// The asset of an append in progress: its name (to find the slot of the
/// next event quickly) and what the batch does to it.
struct Slot {
    name: String,
    delta: AssetDelta,
}

/// The stored content of a row of [`STORED_BY_ID`], for
/// [`NewEvent::same_content`].
fn stored_content(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<NewEvent>> {
    Ok(decode_content(
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
    ))
}

/// The id of `asset`, created when missing.
fn asset_id(conn: &Connection, asset: &str) -> Result<i64> {
    let found: Option<i64> = conn
        .prepare_cached("SELECT id FROM assets WHERE name = ?1")?
        .query_row([asset], |r| r.get(0))
        .optional()?;
    match found {
        Some(id) => Ok(id),
        None => {
            conn.prepare_cached("INSERT INTO assets (name) VALUES (?1)")?
                .execute([asset])?;
            Ok(conn.last_insert_rowid())
        }
    }
}

/// Append `batch` in one transaction, durable on return.
pub(crate) fn append(
    w: &mut Writer,
    batch: &[NewEvent],
    received_at: Instant,
    untaken: &Untaken,
) -> Result<Appended> {
    let Writer { conn, watches } = w;
    let big = batch.len() >= BIG_BATCH;
    if big {
        conn.pragma_update(None, "cache_size", -1024 * BIG_BATCH_CACHE_MIB)?;
    }
    let out = (|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // On an error the transaction is dropped: rolled back.
        let (out, settled) = append_in(&tx, watches, batch, received_at, untaken)?;
        tx.commit()?;
        untaken.committed(settled);
        Ok(out)
    })();
    if big {
        // Shrinking the cache frees the pages beyond it.
        conn.pragma_update(None, "cache_size", -1024 * WRITER_CACHE_MIB)?;
    }
    out
}

/// Append each batch atomically on its own, sharing one transaction and so
/// one durable commit.
///
/// Most groups have no failing batch, and are stored first without a
/// savepoint per batch: a savepoint copies each page a batch touches
/// before changing it, which for a one-event batch is most of its cost.
/// When a batch is refused (a conflict, an invalid asset name), that
/// transaction is rolled back and the group stored again with a savepoint
/// per batch, so that the refused one alone is undone.
pub(crate) fn append_many(
    w: &mut Writer,
    batches: &[&[NewEvent]],
    received_at: Instant,
    untaken: &Untaken,
) -> Vec<Result<Appended>> {
    match append_all(w, batches, received_at, untaken) {
        Ok(out) => out,
        Err(StoreError::Conflict { .. } | StoreError::Invalid(_)) => {
            append_each(w, batches, received_at, untaken)
        }
        // A fault fails the group; the caller tries each batch alone.
        Err(e) => every(batches, e),
    }
}

/// The group in one transaction, the first failing batch failing it all
/// (nothing stored then).
fn append_all(
    w: &mut Writer,
    batches: &[&[NewEvent]],
    received_at: Instant,
    untaken: &Untaken,
) -> Result<Vec<Result<Appended>>> {
    let Writer { conn, watches } = w;
    // On an error the transaction is dropped: rolled back.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut group = super::rules::GroupJudge::start(&tx, watches, batches)?;
    let mut out = Vec::with_capacity(batches.len());
    let mut stale = Vec::new();
    for batch in batches {
        let stored = store_batch(&tx, batch, received_at)?;
        group.batch(&tx, &judged_events(&stored.deltas), &stored.rebuilt())?;
        stale.extend_from_slice(&stored.stale);
        out.push(Ok(stored.counts));
    }
    refresh_overviews(&tx, &mut stale)?;
    let settled = group.finish(&tx, received_at, untaken)?;
    tx.commit()?;
    untaken.committed(settled);
    Ok(out)
}

/// The group with a savepoint per batch: a failing batch stores nothing
/// and gets its own error, the others are stored.
fn append_each(
    w: &mut Writer,
    batches: &[&[NewEvent]],
    received_at: Instant,
    untaken: &Untaken,
) -> Vec<Result<Appended>> {
    let Writer { conn, watches } = w;
    let all = |e: StoreError| every(batches, e);
    let mut tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => return all(e.into()),
    };
    // The rules on the group's assets, judged in memory after each batch
    // (on the coverage read before the group) and written once at the end.
    let mut group = match super::rules::GroupJudge::start(&tx, watches, batches) {
        Ok(g) => g,
        Err(e) => return all(e),
    };
    let mut out = Vec::with_capacity(batches.len());
    let mut stale = Vec::new();
    for batch in batches {
        if batch.is_empty() {
            out.push(Ok(Appended::default()));
            continue;
        }
        let sp = match tx.savepoint() {
            Ok(sp) => sp,
            Err(e) => return all(e.into()),
        };
        match store_batch(&sp, batch, received_at) {
            Ok(stored) => {
                if let Err(e) = sp.commit() {
                    return all(e.into());
                }
                if let Err(e) = group.batch(&tx, &judged_events(&stored.deltas), &stored.rebuilt())
                {
                    return all(e);
                }
                stale.extend_from_slice(&stored.stale);
                out.push(Ok(stored.counts));
            }
            Err(e) => {
                // Dropping the savepoint rolls this batch back.
                drop(sp);
                // Some faults (a full disk, I/O) make SQLite roll back the
                // whole transaction, the earlier batches with it: then
                // none of the group is stored.
                if tx.is_autocommit() {
                    return all(e);
                }
                out.push(Err(e));
            }
        }
    }
    if let Err(e) = refresh_overviews(&tx, &mut stale) {
        return all(e.into());
    }
    let settled = match group.finish(&tx, received_at, untaken) {
        Ok(settled) => settled,
        Err(e) => return all(e),
    };
    match tx.commit() {
        Ok(()) => {
            untaken.committed(settled);
            out
        }
        Err(e) => all(e.into()),
    }
}

/// The work of one append inside an open transaction or savepoint: its
/// counts, and how many firings it recorded delivered unsent.
fn append_in(
    tx: &Connection,
    watches: &mut WatchCache,
    batch: &[NewEvent],
    received_at: Instant,
    untaken: &Untaken,
) -> Result<(Appended, u64)> {
    let mut stored = store_batch(tx, batch, received_at)?;
    let settled = stored.judge(tx, watches, received_at, untaken)?;
    refresh_overviews(tx, &mut stored.stale)?;
    Ok((stored.counts, settled))
}

/// Append one atomic batch that arrives in chunks: each chunk is stored as
/// it comes, the coverage once at the end, one commit.
pub(crate) fn append_chunks(
    w: &mut Writer,
    chunks: &mut dyn Iterator<Item = Result<Vec<NewEvent>>>,
    stored: &mut dyn FnMut(Vec<NewEvent>),
    received_at: Instant,
    untaken: &Untaken,
) -> Result<Appended> {
    let Writer { conn, watches } = w;
    let mut big = false;
    let out = (|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut appender = Appender::new(received_at);
        for chunk in chunks {
            // An error (of the chunks' source or of storing) drops the
            // transaction: nothing of the batch is stored.
            let chunk = chunk?;
            appender.push(&tx, &chunk)?;
            stored(chunk);
            if !big && appender.seen >= BIG_BATCH {
                big = true;
                tx.pragma_update(None, "cache_size", -1024 * BIG_BATCH_CACHE_MIB)?;
            }
        }
        let mut stored = appender.finish(&tx)?;
        let settled = stored.judge(&tx, watches, received_at, untaken)?;
        refresh_overviews(&tx, &mut stored.stale)?;
        tx.commit()?;
        untaken.committed(settled);
        Ok(stored.counts)
    })();
    if big {
        conn.pragma_update(None, "cache_size", -1024 * WRITER_CACHE_MIB)?;
    }
    out
}

/// One append in progress: events stored so far, per asset what the
/// coverage update at the end needs.
struct Appender {
    received: i64,
    out: Appended,
    assets: Vec<Slot>,
    slot_of: HashMap<String, usize>,
    /// The slot of the previous event's asset: batches usually run long
    /// stretches of one asset.
    last: Option<usize>,
    /// Events pushed before the current chunk (for `Conflict` indexes).
    seen: usize,
}

/// What storing a batch did: its counts, and per asset with new events
/// what they were and the coverage runs they left.
struct StoredBatch {
    counts: Appended,
    deltas: Vec<AssetDelta>,
    /// Per delta (same order): the asset's runs, as now stored, that touch
    /// the hull of its new events.
    after: Vec<Around>,
    /// The assets whose runs changed: their overview inputs are to be
    /// brought up to date before the commit ([`refresh_overviews`]).
    stale: Vec<i64>,
}

/// An asset's coverage around an append's new events, as the append left
/// it: `runs`, every stored run that touches the hull of the new events,
/// are all of the asset's coverage over `known` (`[lo, hi]`, µs), which
/// holds the hull and the runs.
pub(crate) struct Around {
    pub(crate) runs: IntervalSet,
    pub(crate) known: (i64, i64),
}

impl StoredBatch {
    /// Judge the rules on the batch's assets (in the batch's transaction),
    /// their coverage answered from the runs just rebuilt where those
    /// tell it all. How many firings it recorded delivered unsent.
    fn judge(
        &self,
        tx: &Connection,
        watches: &mut WatchCache,
        now: Instant,
        untaken: &Untaken,
    ) -> Result<u64> {
        super::rules::judge_append(
            tx,
            watches,
            &judged_events(&self.deltas),
            &self.rebuilt(),
            now,
            untaken,
        )
    }

    /// Each asset's runs as judging takes them.
    fn rebuilt(&self) -> Vec<super::rules::Rebuilt<'_>> {
        self.deltas
            .iter()
            .zip(&self.after)
            .map(|(d, around)| (d.id, (d.min_start, d.max_end), around))
            .collect()
    }
}

/// Store `batch` whole in `tx`: its counts, and what it did to each asset.
fn store_batch(tx: &Connection, batch: &[NewEvent], received_at: Instant) -> Result<StoredBatch> {
    let mut appender = Appender::new(received_at);
    appender.push(tx, batch)?;
    appender.finish(tx)
}

/// `e` as every batch's result: the group's shared transaction failed.
fn every(batches: &[&[NewEvent]], e: StoreError) -> Vec<Result<Appended>> {
    batches.iter().map(|_| Err(e.clone())).collect()
}

impl Appender {
    fn new(received_at: Instant) -> Appender {
        Appender {
            received: received_at.as_micros(),
            out: Appended::default(),
            assets: Vec::new(),
            slot_of: HashMap::new(),
            last: None,
            seen: 0,
        }
    }

    /// The slot of `ev`'s asset, created (and the asset too) when new.
    fn slot(&mut self, tx: &Connection, index: usize, asset: &str) -> Result<usize> {
        if let Some(slot) = self.last.filter(|&s| self.assets[s].name == asset) {
            return Ok(slot);
        }
        let slot = match self.slot_of.get(asset) {
            Some(&slot) => slot,
            None => {
                check_asset_name(asset)
                    .map_err(|e| StoreError::Invalid(format!("event {index}: {e}")))?;
                let id = asset_id(tx, asset)?;
                self.assets.push(Slot {
                    name: asset.to_string(),
                    delta: AssetDelta::new(id),
                });
                self.slot_of
                    .insert(asset.to_string(), self.assets.len() - 1);
                self.assets.len() - 1
            }
        };
        self.last = Some(slot);
        Ok(slot)
    }

    /// Store the new events of `chunk`, count the duplicates.
    ///
    /// A large chunk of many assets (a shared pipeline's file interleaves
    /// them) is stored asset by asset, each asset's events in their order,
    /// each with the sequence number its place in the chunk gives it: an
    /// index insert then lands next to the one before, where in the file's
    /// order each went to another asset's part of the index (cold pages;
    /// 1,000 interleaved assets ingested 2.4 times slower than 5).
    ///
    /// # Errors
    ///
    /// `Conflict` with the position of the chunk's first conflicting event
    /// in the whole batch.
    fn push(&mut self, tx: &Connection, chunk: &[NewEvent]) -> Result<()> {
        // Every asset's slot in the chunk's order: a bad name is named at
        // its own position.
        let mut slots = Vec::with_capacity(chunk.len());
        for (i, ev) in chunk.iter().enumerate() {
            slots.push(self.slot(tx, self.seen + i, &ev.asset)?);
        }
        let interleaved = chunk.len() >= SORT_CHUNK && {
            let mut seen = vec![false; self.assets.len()];
            let mut distinct = 0;
            for &s in &slots {
                distinct += usize::from(!std::mem::replace(&mut seen[s], true));
            }
            distinct >= SORT_ASSETS
        };
        let mut stmts = Inserts {
            with_id: tx.prepare_cached(INSERT_WITH_ID)?,
            no_id: tx.prepare_cached(INSERT_NO_ID)?,
            stored_by_id: tx.prepare_cached(STORED_BY_ID)?,
        };
        let result = if interleaved {
            let first_seq: i64 = tx.prepare_cached(NEXT_SEQ)?.query_row([], |r| r.get(0))?;
            let mut order: Vec<u32> = (0..chunk.len() as u32).collect();
            order.sort_by_key(|&i| slots[i as usize]);
            // Asset by asset, a later event's conflict may come first: the
            // one named is the earliest in the chunk.
            let mut first_conflict: Option<(usize, StoreError)> = None;
            for i in order {
                let i = i as usize;
                let seq = Some(first_seq + i as i64);
                match self.store_one(&mut stmts, slots[i], self.seen + i, &chunk[i], seq) {
                    Ok(()) => {}
                    Err(e @ StoreError::Conflict { .. }) => {
                        if first_conflict.as_ref().is_none_or(|&(at, _)| i < at) {
                            first_conflict = Some((i, e));
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            first_conflict.map_or(Ok(()), |(_, e)| Err(e))
        } else {
            chunk.iter().enumerate().try_for_each(|(i, ev)| {
                self.store_one(&mut stmts, slots[i], self.seen + i, ev, None)
            })
        };
        self.seen += chunk.len();
        result
    }

    /// Store one event (at sequence number `seq`, or the next one) unless
    /// its id is stored with the same content (a duplicate, counted).
    ///
    /// # Errors
    ///
    /// `Conflict` at `index` when its id is stored with other content.
    fn store_one(
        &mut self,
        stmts: &mut Inserts<'_>,
        slot: usize,
        index: usize,
        ev: &NewEvent,
        seq: Option<i64>,
    ) -> Result<()> {
        let a = &mut self.assets[slot].delta;
        let c = encode(ev);
        let (start, end, kind, extra, produced) = (c.start, c.end, c.kind, c.extra, c.produced_at);
        let received = self.received;
        match c.id {
            Some(id) => {
                let inserted = stmts.with_id.execute(params![
                    seq, a.id, id, start, end, kind, extra, produced, received
                ])?;
                if inserted == 0 {
                    let stored = stmts
                        .stored_by_id
                        .query_row(params![a.id, id], stored_content)??;
                    if stored.same_content(ev) {
                        self.out.duplicates += 1;
                        return Ok(());
                    }
                    // The caller drops the transaction: rolled back.
                    return Err(StoreError::Conflict {
                        index,
                        asset: ev.asset.clone(),
                        id: id.to_string(),
                    });
                }
            }
            None => {
                stmts.no_id.execute(params![
                    seq, a.id, start, end, kind, extra, produced, received
                ])?;
            }
        }
        self.out.accepted += 1;
        a.push(ev.kind, ev.interval, &c);
        Ok(())
    }

    /// Bring each asset's coverage runs and statistics up to date: the
    /// counts, and each asset's new events (for judging rules).
    fn finish(self, tx: &Connection) -> Result<StoredBatch> {
        let mut deltas = Vec::with_capacity(self.assets.len());
        let mut after = Vec::with_capacity(self.assets.len());
        let mut stale = Vec::new();
        for Slot { delta: a, .. } in self.assets {
            if a.is_empty() {
                continue;
            }
            let (around, changed) = update_coverage(tx, &a)?;
            after.push(around);
            if changed {
                stale.push(a.id);
            }
            tx.prepare_cached(
                "UPDATE assets SET event_count = event_count + ?2, \
                 max_len_us = max(max_len_us, ?3), \
                 min_start_us = min(coalesce(min_start_us, ?4), ?4), \
                 max_end_us = max(coalesce(max_end_us, ?5), ?5), \
                 last_received_us = ?6 \
                 WHERE id = ?1",
            )?
            .execute(params![
                a.id,
                a.count(),
                a.max_len,
                a.min_start,
                a.max_end,
                self.received
            ])?;
            deltas.push(a);
        }
        Ok(StoredBatch {
            counts: self.out,
            deltas,
            after,
            stale,
        })
    }
}

/// The statements that store a chunk's events.
struct Inserts<'c> {
    with_id: rusqlite::CachedStatement<'c>,
    no_id: rusqlite::CachedStatement<'c>,
    stored_by_id: rusqlite::CachedStatement<'c>,
}

/// The new events of `deltas` as judging takes them.
fn judged_events(deltas: &[AssetDelta]) -> Vec<crate::rule::judge::AssetEvents<'_>> {
    deltas.iter().map(|d| (d.id, d.events.as_slice())).collect()
}

/// Keep asset `id`'s overview inputs equal to what its coverage runs now
/// say (`overview.rs`): its first run, the end of its last, and its runs
/// ending after the week before that end (NULL past
/// [`RECENT_RUNS`](crate::overview::RECENT_RUNS)).
///
/// Read by two seeks and written by plain values: the same inputs made in
/// one SQL statement (an ordered `group_concat`, a join) opened a
/// temporary B-tree on every call, about half of a single-event append.
/// The start of the asset's first run and the end of its last, as read.
pub(super) fn refresh_overview(
    conn: &Connection,
    id: i64,
) -> rusqlite::Result<(Option<i64>, Option<i64>)> {
    use crate::overview::RECENT_RUNS;
    let first: Option<(i64, i64)> = conn
        .prepare_cached(FIRST_RUN)?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    // Runs are disjoint and in start order, so their ends rise too: the
    // recent ones are the last ones, read back until one ends too early.
    let mut recent: Vec<(i64, i64)> = Vec::new();
    let mut last_end = None;
    let mut too_many = false;
    {
        let mut stmt = conn.prepare_cached(LAST_RUNS)?;
        let mut rows = stmt.query(params![id, RECENT_RUNS + 1])?;
        while let Some(r) = rows.next()? {
            let (s, e): (i64, i64) = (r.get(0)?, r.get(1)?);
            let since = *last_end.get_or_insert(e) - crate::WEEK_US;
            if e <= since {
                break;
            }
            if recent.len() as i64 == RECENT_RUNS {
                too_many = true;
                break;
            }
            recent.push((s, e));
        }
    }
    let bytes: Option<Vec<u8>> = (!too_many).then(|| {
        let mut bytes = Vec::with_capacity(recent.len() * 16);
        for &(s, e) in recent.iter().rev() {
            bytes.extend_from_slice(&s.to_be_bytes());
            bytes.extend_from_slice(&e.to_be_bytes());
        }
        bytes
    });
    conn.prepare_cached(SET_OVERVIEW)?.execute(params![
        id,
        first.map(|f| f.0),
        first.map(|f| f.1),
        last_end,
        bytes
    ])?;
    Ok((first.map(|f| f.0), last_end))
}

/// Bring the asset's stored runs that touch the batch's hull up to date
/// with the batch's new events: only the rows that change are written,
/// and the asset's overview inputs when any is. The runs that touch the
/// hull now, and where they are the whole coverage.
fn update_coverage(conn: &Connection, a: &AssetDelta) -> Result<(Around, bool)> {
    let (hull_start, hull_end) = (a.min_start, a.max_end);
    // The run with the greatest start at or before the hull (it may reach
    // into or touch the hull), then every run starting up to the hull's end.
    let lower: i64 = conn
        .prepare_cached(RUN_START_AT_OR_BEFORE)?
        .query_row(params![a.id, hull_start], |r| r.get(0))
        .optional()?
        .unwrap_or(hull_start);
    let mut runs = Vec::new();
    {
        let mut stmt = conn.prepare_cached(RUNS_STARTING_IN)?;
        let mut rows = stmt.query(params![a.id, lower, hull_end])?;
        while let Some(r) = rows.next()? {
            let (s, e): (i64, i64) = (r.get(0)?, r.get(1)?);
            if e >= hull_start {
                runs.push((s, e));
            }
        }
    }
    let after = crate::runs::rebuild(&runs, &a.events)?;
    let changes = crate::runs::diff(&runs, &after);
    let changed =
        !(changes.deleted.is_empty() && changes.updated.is_empty() && changes.inserted.is_empty());
    if !changes.deleted.is_empty() {
        let mut delete = conn.prepare_cached(DELETE_RUN)?;
        for s in changes.deleted {
            delete.execute(params![a.id, s])?;
        }
    }
    if !changes.updated.is_empty() {
        let mut update = conn.prepare_cached(UPDATE_RUN)?;
        for (s, e) in changes.updated {
            update.execute(params![a.id, s, e])?;
        }
    }
    if !changes.inserted.is_empty() {
        let mut insert = conn.prepare_cached(INSERT_RUN)?;
        for (s, e) in changes.inserted {
            insert.execute(params![a.id, s, e])?;
        }
    }
    // Runs are disjoint and never touch: no other run reaches the span
    // from the hull to the far ends of the runs that touch it. When those
    // are the asset's first or last run (the overview's inputs, read when
    // they change), nothing lies beyond them either: a stream's windows
    // reaching past its last event are judged without reading the ledger.
    let span = after
        .span()
        .map(|s| (s.start().as_micros(), s.end().as_micros()));
    let mut known = span.map_or((hull_start, hull_end), |(s, e)| {
        (s.min(hull_start), e.max(hull_end))
    });
    if changed {
        let (first, last) = first_and_last(conn, a.id)?;
        if first.is_none() || first == span.map(|s| s.0) {
            known.0 = i64::MIN;
        }
        if last.is_none() || last == span.map(|s| s.1) {
            known.1 = i64::MAX;
        }
    }
    Ok((Around { runs: after, known }, changed))
}

/// The start of asset `id`'s first run and the end of its last: two seeks.
fn first_and_last(conn: &Connection, id: i64) -> rusqlite::Result<(Option<i64>, Option<i64>)> {
    let first = conn
        .prepare_cached(FIRST_RUN)?
        .query_row([id], |r| r.get(0))
        .optional()?;
    let last = conn
        .prepare_cached(LAST_RUNS)?
        .query_row(params![id, 1], |r| r.get(1))
        .optional()?;
    Ok((first, last))
}

/// Bring the overview inputs of the assets `stale` up to date, each once
/// (an asset may be named many times): once a transaction, before its
/// commit, not once a batch. A group of single events on one stream would
/// otherwise read the stream's recent runs (up to
/// [`RECENT_RUNS`](crate::overview::RECENT_RUNS) of them) again for each
/// event, though only the last reading is ever seen.
fn refresh_overviews(conn: &Connection, stale: &mut Vec<i64>) -> rusqlite::Result<()> {
    stale.sort_unstable();
    stale.dedup();
    for &id in stale.iter() {
        refresh_overview(conn, id)?;
    }
    Ok(())
}

pub(crate) fn declare_asset(conn: &mut Connection, asset: &str, decl: &AssetDecl) -> Result<()> {
    let (span, tz) = check_decl(asset, decl)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let id = asset_id(&tx, asset)?;
    tx.prepare_cached("UPDATE assets SET key_span = ?2, tz = ?3 WHERE id = ?1")?
        .execute(params![id, span, tz])?;
    tx.commit()?;
    Ok(())
}
