//! Keeping each asset's overview inputs (`overview.rs`) equal to its
//! coverage runs: after every append that changes them, and for every
//! asset when a schema older than [`FILLED_VERSION`] is migrated.

use tokio_postgres::types::ToSql;

use super::client::Transaction;
use crate::overview::RECENT_RUNS;
use crate::WEEK_US;

/// A schema older than this has its overview inputs filled after its
/// migrations: version 7 added them, version 9 changed how the recent runs
/// are kept.
pub(super) const FILLED_VERSION: i32 = 9;

/// The overview inputs of the assets of $1 (ids) from their coverage runs:
/// the first run, the end of the last run, and the runs ending after the
/// week ($2 microseconds) before that end, at most $3 of them (else NULL),
/// found from the run starting at or before that instant (one seek); each
/// run its start and end as `int8send` writes them, big-endian.
pub(super) const REFRESH: &str = "UPDATE assets a SET \
     first_start_us = f.start_us, first_end_us = f.end_us, last_end_us = l.end_us, \
     recent_runs = t.runs \
     FROM unnest($1::bigint[]) AS u(id) \
     LEFT JOIN LATERAL (SELECT start_us, end_us FROM coverage_runs WHERE asset_id = u.id \
       ORDER BY start_us LIMIT 1) f ON true \
     LEFT JOIN LATERAL (SELECT end_us, end_us - $2::bigint AS since FROM coverage_runs \
       WHERE asset_id = u.id ORDER BY start_us DESC LIMIT 1) l ON true \
     CROSS JOIN LATERAL (SELECT CASE WHEN count(*) <= $3::bigint \
         THEN coalesce(string_agg(int8send(r.start_us) || int8send(r.end_us), ''::bytea \
           ORDER BY r.start_us), ''::bytea) \
         END AS runs \
       FROM (SELECT start_us, end_us FROM coverage_runs WHERE asset_id = u.id \
         AND end_us > l.since AND start_us >= coalesce((SELECT start_us FROM coverage_runs \
           WHERE asset_id = u.id AND start_us <= l.since ORDER BY start_us DESC LIMIT 1), \
           l.since) \
         ORDER BY start_us DESC LIMIT $3::bigint + 1) r) t \
     WHERE a.id = u.id";

/// [`REFRESH`]'s parameters after the ids: the week and the most recent
/// runs kept.
pub(super) const REFRESH_AFTER_IDS: [&(dyn ToSql + Sync); 2] = [&WEEK_US, &RECENT_RUNS];

/// Fill the overview inputs of every asset (a schema migrated from before
/// [`FILLED_VERSION`]).
pub(super) fn fill(tx: &mut Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    let ids: Vec<i64> = tx
        .query("SELECT id FROM assets", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let [week, runs] = REFRESH_AFTER_IDS;
    tx.execute(REFRESH, &[&ids, week, runs])?;
    Ok(())
}
