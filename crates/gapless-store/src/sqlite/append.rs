//! Appends and declarations: everything that writes.
//!
//! One append is one `BEGIN IMMEDIATE` transaction:
//!
//! 1. Each event is inserted with `ON CONFLICT (asset_id, id) DO NOTHING`;
//!    when nothing was inserted the stored event is read and compared: the
//!    same content is a duplicate (counted, not applied), other content a
//!    conflict (the transaction is rolled back). Earlier events of the same
//!    batch are already inserted, so duplicates inside a batch behave the
//!    same as across batches.
//! 2. Per asset, once: the stored coverage runs that touch the hull of the
//!    batch's new events (adjacent ones included) are loaded, the new events
//!    applied in order, and the touched runs replaced by the result.
//! 3. Per asset: event count, longest event and event hull updated.
//! 4. Commit (`synchronous = FULL`: durable on return).

use std::collections::HashMap;

use gapless_core::{AssetDecl, EventKind, Instant, Interval, NewEvent};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::corrupt;
use crate::decl::{check_asset_name, check_decl};
use crate::runs::{rebuild, Rebuilt};
use crate::{Appended, Result, StoreError};

pub(super) const INSERT_WITH_ID: &str = "INSERT INTO events \
     (asset_id, id, start_us, end_us, kind, extra, produced_at, received_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
     ON CONFLICT (asset_id, id) WHERE id IS NOT NULL DO NOTHING";
const INSERT_NO_ID: &str = "INSERT INTO events \
     (asset_id, id, start_us, end_us, kind, extra, produced_at, received_at) \
     VALUES (?1, NULL, ?2, ?3, ?4, ?5, ?6, ?7)";
/// The start of asset ?1's run starting at or before ?2.
pub(super) const RUN_START_AT_OR_BEFORE: &str = "SELECT start_us FROM coverage_runs \
     WHERE asset_id = ?1 AND start_us <= ?2 ORDER BY start_us DESC LIMIT 1";
/// Asset ?1's runs starting in [?2, ?3].
pub(super) const RUNS_STARTING_IN: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = ?1 AND start_us >= ?2 AND start_us <= ?3 ORDER BY start_us";
/// Delete asset ?1's runs starting in [?2, ?3].
pub(super) const DELETE_RUNS_STARTING_IN: &str =
    "DELETE FROM coverage_runs WHERE asset_id = ?1 AND start_us >= ?2 AND start_us <= ?3";
pub(super) const STORED_BY_ID: &str = "SELECT start_us, end_us, kind, extra, produced_at \
     FROM events WHERE asset_id = ?1 AND id = ?2";

/// The write connection's page cache.
pub(crate) const WRITER_CACHE_MIB: i64 = 64;
/// A batch of at least this many events gets a bigger page cache while it
/// is appended: with the normal cache, pages spilled to the WAL
/// mid-transaction and read back cost about a quarter of the time of a
/// two-million-event batch.
const BIG_BATCH: usize = 100_000;
/// The page cache of a big batch (allocated only as pages are touched).
const BIG_BATCH_CACHE_MIB: i64 = 1024;

/// The stored integer of a kind.
pub(crate) fn kind_code(kind: EventKind) -> i64 {
    match kind {
        EventKind::Landed => 0,
        EventKind::Retracted => 1,
    }
}

/// The kind of a stored integer.
pub(crate) fn kind_of(code: i64) -> Result<EventKind> {
    match code {
        0 => Ok(EventKind::Landed),
        1 => Ok(EventKind::Retracted),
        _ => Err(corrupt(format_args!("event kind {code}"))),
    }
}

/// What one append does to one asset.
struct AssetBatch {
    name: String,
    id: i64,
    /// The new (not duplicate) events, in batch order.
    events: Vec<(EventKind, Interval)>,
    max_len: i64,
    min_start: i64,
    max_end: i64,
}

/// The stored event of a row of [`STORED_BY_ID`], for [`NewEvent::same_content`]
/// (asset and id are not compared there).
fn stored_content(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<NewEvent>> {
    let (start, end, kind): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
    let extra: Option<String> = r.get(3)?;
    let produced: Option<i64> = r.get(4)?;
    Ok((|| {
        Ok(NewEvent {
            asset: String::new(),
            id: None,
            interval: Interval::from_micros(start, end).map_err(|_| corrupt("event interval"))?,
            kind: kind_of(kind)?,
            extra,
            produced_at: produced
                .map(|p| Instant::from_micros(p).map_err(|_| corrupt("event produced_at")))
                .transpose()?,
        })
    })())
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
    conn: &mut Connection,
    batch: &[NewEvent],
    received_at: Instant,
) -> Result<Appended> {
    let big = batch.len() >= BIG_BATCH;
    if big {
        conn.pragma_update(None, "cache_size", -1024 * BIG_BATCH_CACHE_MIB)?;
    }
    let out = (|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // On an error the transaction is dropped: rolled back.
        let out = append_in(&tx, batch, received_at)?;
        tx.commit()?;
        Ok(out)
    })();
    if big {
        // Shrinking the cache frees the pages beyond it.
        conn.pragma_update(None, "cache_size", -1024 * WRITER_CACHE_MIB)?;
    }
    out
}

/// Append each batch atomically on its own (a savepoint each), sharing one
/// transaction and so one durable commit.
pub(crate) fn append_many(
    conn: &mut Connection,
    batches: &[&[NewEvent]],
    received_at: Instant,
) -> Vec<Result<Appended>> {
    // The shared transaction failed: every batch's result is that error.
    let all = |e: StoreError| -> Vec<Result<Appended>> {
        batches.iter().map(|_| Err(e.clone())).collect()
    };
    let mut tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => return all(e.into()),
    };
    let mut out = Vec::with_capacity(batches.len());
    for batch in batches {
        if batch.is_empty() {
            out.push(Ok(Appended::default()));
            continue;
        }
        let sp = match tx.savepoint() {
            Ok(sp) => sp,
            Err(e) => return all(e.into()),
        };
        match append_in(&sp, batch, received_at) {
            Ok(counts) => {
                if let Err(e) = sp.commit() {
                    return all(e.into());
                }
                out.push(Ok(counts));
            }
            // Dropping the savepoint rolls this batch back.
            Err(e) => out.push(Err(e)),
        }
    }
    match tx.commit() {
        Ok(()) => out,
        Err(e) => all(e.into()),
    }
}

/// The work of one append inside an open transaction or savepoint.
fn append_in(tx: &Connection, batch: &[NewEvent], received_at: Instant) -> Result<Appended> {
    let mut appender = Appender::new(received_at);
    appender.push(tx, batch)?;
    appender.finish(tx)
}

/// Append one atomic batch that arrives in chunks: each chunk is stored as
/// it comes, the coverage once at the end, one commit.
pub(crate) fn append_chunks(
    conn: &mut Connection,
    chunks: &mut dyn Iterator<Item = Result<Vec<NewEvent>>>,
    received_at: Instant,
) -> Result<Appended> {
    let mut big = false;
    let out = (|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut appender = Appender::new(received_at);
        // The chunks are freed after the commit, not while storing: freeing
        // memory that another thread allocated (the parser's) contends
        // for its allocator arena.
        let mut done = Vec::new();
        for chunk in chunks {
            // An error (of the chunks' source or of storing) drops the
            // transaction: nothing of the batch is stored.
            let chunk = chunk?;
            appender.push(&tx, &chunk)?;
            done.push(chunk);
            if !big && appender.seen >= BIG_BATCH {
                big = true;
                tx.pragma_update(None, "cache_size", -1024 * BIG_BATCH_CACHE_MIB)?;
            }
        }
        let out = appender.finish(&tx)?;
        tx.commit()?;
        Ok(out)
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
    assets: Vec<AssetBatch>,
    slot_of: HashMap<String, usize>,
    /// The slot of the previous event's asset: batches usually run long
    /// stretches of one asset.
    last: Option<usize>,
    /// Events pushed before the current chunk (for `Conflict` indexes).
    seen: usize,
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
                self.assets.push(AssetBatch {
                    name: asset.to_string(),
                    id,
                    events: Vec::new(),
                    max_len: 0,
                    min_start: i64::MAX,
                    max_end: i64::MIN,
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
    /// # Errors
    ///
    /// `Conflict` with the event's position in the whole batch.
    fn push(&mut self, tx: &Connection, chunk: &[NewEvent]) -> Result<()> {
        let mut insert_with_id = tx.prepare_cached(INSERT_WITH_ID)?;
        let mut insert_no_id = tx.prepare_cached(INSERT_NO_ID)?;
        let mut stored_by_id = tx.prepare_cached(STORED_BY_ID)?;
        let received = self.received;
        for (i, ev) in chunk.iter().enumerate() {
            let index = self.seen + i;
            let slot = self.slot(tx, index, &ev.asset)?;
            let a = &mut self.assets[slot];
            let start = ev.interval.start().as_micros();
            let end = ev.interval.end().as_micros();
            let kind = kind_code(ev.kind);
            let produced = ev.produced_at.map(Instant::as_micros);
            let extra = ev.extra.as_deref();
            match ev.id.as_deref() {
                Some(id) => {
                    let inserted = insert_with_id.execute(params![
                        a.id, id, start, end, kind, extra, produced, received
                    ])?;
                    if inserted == 0 {
                        let stored =
                            stored_by_id.query_row(params![a.id, id], stored_content)??;
                        if stored.same_content(ev) {
                            self.out.duplicates += 1;
                            continue;
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
                    insert_no_id
                        .execute(params![a.id, start, end, kind, extra, produced, received])?;
                }
            }
            self.out.accepted += 1;
            a.events.push((ev.kind, ev.interval));
            a.max_len = a.max_len.max(end - start);
            a.min_start = a.min_start.min(start);
            a.max_end = a.max_end.max(end);
        }
        self.seen += chunk.len();
        Ok(())
    }

    /// Bring each asset's coverage runs and statistics up to date.
    fn finish(self, tx: &Connection) -> Result<Appended> {
        for a in &self.assets {
            if a.events.is_empty() {
                continue;
            }
            update_coverage(tx, a)?;
            tx.prepare_cached(
                "UPDATE assets SET event_count = event_count + ?2, \
                 max_len_us = max(max_len_us, ?3), \
                 min_start_us = min(coalesce(min_start_us, ?4), ?4), \
                 max_end_us = max(coalesce(max_end_us, ?5), ?5) \
                 WHERE id = ?1",
            )?
            .execute(params![
                a.id,
                a.events.len() as i64,
                a.max_len,
                a.min_start,
                a.max_end
            ])?;
        }
        Ok(self.out)
    }
}

/// Replace the asset's stored runs that touch the batch's hull by the result
/// of applying the batch's new events to them.
fn update_coverage(conn: &Connection, a: &AssetBatch) -> Result<()> {
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
    let Rebuilt { replaced, set } = rebuild(runs, &a.events)?;
    if let Some((first, last)) = replaced {
        conn.prepare_cached(DELETE_RUNS_STARTING_IN)?
            .execute(params![a.id, first, last])?;
    }
    let mut insert = conn.prepare_cached(
        "INSERT INTO coverage_runs (asset_id, start_us, end_us) VALUES (?1, ?2, ?3)",
    )?;
    for run in set.runs() {
        insert.execute(params![
            a.id,
            run.start().as_micros(),
            run.end().as_micros()
        ])?;
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
