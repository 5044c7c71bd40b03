//! Pruning: removing the detail of old events and firings in bounded
//! transactions (SPEC §3, `prune`).
//!
//! Coverage runs are kept up to date by every append from the stored runs
//! and the batch alone, so removing old landed events changes no answer
//! read from them. Retracted events stay: `retractions` (the `buckets`'
//! retracted time) is read from them, and they are few.

use gapless_core::Instant;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::Result;

/// Up to ?3 of asset ?1's landed events that end at or before ?2, found on
/// the start index (an event that ends by ?2 starts before it). The
/// ledger's newest event is never among them: SQLite numbers a new event
/// one above the highest stored sequence, which must never go back.
const PRUNE_EVENTS: &str = "DELETE FROM events WHERE seq IN ( \
     SELECT seq FROM events INDEXED BY events_asset_start \
     WHERE asset_id = ?1 AND start_us < ?2 AND end_us <= ?2 AND kind = 0 \
     AND seq < (SELECT max(seq) FROM events) LIMIT ?3)";

/// The asset's count, and its watermark raised to ?3.
const PRUNED: &str = "UPDATE assets SET event_count = event_count - ?2, \
     pruned_before_us = max(coalesce(pruned_before_us, ?3), ?3) WHERE id = ?1";

/// Up to ?2 firings recorded before ?1 whose delivery is not pending.
const PRUNE_FIRINGS: &str = "DELETE FROM firings WHERE seq IN ( \
     SELECT seq FROM firings WHERE recorded_us < ?1 AND state <> 1 ORDER BY seq LIMIT ?2)";

pub(crate) fn prune_events(
    conn: &mut Connection,
    asset: &str,
    before: Instant,
    limit: usize,
) -> Result<u64> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let id: Option<i64> = tx
        .prepare_cached("SELECT id FROM assets WHERE name = ?1")?
        .query_row([asset], |r| r.get(0))
        .optional()?;
    let Some(id) = id else {
        return Ok(0);
    };
    let before = before.as_micros();
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let n = tx
        .prepare_cached(PRUNE_EVENTS)?
        .execute(params![id, before, limit])?;
    if n > 0 {
        tx.prepare_cached(PRUNED)?
            .execute(params![id, n as i64, before])?;
    }
    tx.commit()?;
    Ok(n as u64)
}

pub(crate) fn prune_firings(conn: &mut Connection, before: Instant, limit: usize) -> Result<u64> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let n = conn
        .prepare_cached(PRUNE_FIRINGS)?
        .execute(params![before.as_micros(), limit])?;
    Ok(n as u64)
}
