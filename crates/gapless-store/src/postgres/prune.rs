//! Pruning: removing the detail of old events and firings in bounded
//! transactions (SPEC §3, `prune`).
//!
//! As in the SQLite backend: coverage runs need no old events, retracted
//! events stay (the retractions are read from them). Each step locks the
//! asset's row as an append does, so it waits for (and makes wait) only
//! that asset's appends, for one bounded delete; any number of processes
//! may prune at once, each step removing what is still there.

use gapless_core::Instant;

use super::error::Fail;
use super::pool::Conn;

const LOCK_ASSET: &str = "SELECT id FROM assets WHERE name = $1 FOR UPDATE";

/// Up to $3 of asset $1's landed events (a positive number) that end at
/// or before $2, found on the start index (an event that ends by $2 starts
/// before it), deleted by their row addresses (the asset's row lock keeps
/// them where they are).
const PRUNE_EVENTS: &str = "DELETE FROM events WHERE ctid = ANY(ARRAY( \
     SELECT ctid FROM events WHERE asset_id = $1 AND (start_us >> 32) <= ($2::bigint >> 32) \
     AND start_us < $2 AND end_us <= $2 AND n > 0 LIMIT $3))";

/// The asset's count, and its watermark raised to $3.
const PRUNED: &str = "UPDATE assets SET event_count = event_count - $2, \
     pruned_before_us = greatest(coalesce(pruned_before_us, $3), $3) WHERE id = $1";

/// Up to $2 firings recorded before $1 whose delivery is not pending;
/// rows a deliverer holds at this moment are left for the next step.
const PRUNE_FIRINGS: &str = "DELETE FROM firings WHERE seq IN ( \
     SELECT seq FROM firings WHERE recorded_us < $1 AND state <> 1 ORDER BY seq LIMIT $2 \
     FOR UPDATE SKIP LOCKED)";

pub(crate) fn prune_events(
    conn: &mut Conn,
    asset: &str,
    before: Instant,
    limit: usize,
) -> Result<u64, Fail> {
    let mut tx = conn.client.transaction();
    let Some(row) = tx.query_opt(LOCK_ASSET, &[&asset])? else {
        return Ok(0);
    };
    let id: i64 = row.get(0);
    let before = before.as_micros();
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let n = tx.execute(PRUNE_EVENTS, &[&id, &before, &limit])?;
    if n > 0 {
        tx.execute(PRUNED, &[&id, &(n as i64), &before])?;
    }
    tx.commit().map_err(Fail::Commit)?;
    Ok(n)
}

pub(crate) fn prune_firings(conn: &mut Conn, before: Instant, limit: usize) -> Result<u64, Fail> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    Ok(conn
        .client
        .execute(PRUNE_FIRINGS, &[&before.as_micros(), &limit])?)
}
