//! Reads: coverage runs, events, declarations, the asset listing and its
//! pages.
//!
//! Each answer comes from one statement, so it sees one committed state
//! (read committed takes a snapshot per statement). The only extra
//! statement, the asset statistics behind the choice of plan for a page of
//! events, affects speed, never the answer.

use gapless_core::{AssetDecl, Instant, Interval, IntervalSet};
use tokio_postgres::Row;

use super::error::Fail;
use super::pool::Conn;
use super::row::{self, event_columns};
use crate::codec::{self, interval, EventRow};
use crate::listing::{self, AssetPage, AssetQuery};
use crate::overview;
use crate::page::{self, Path, Shape, Walk};
use crate::{AssetSummary, EventPage, EventQuery, Result, StoredEvent};

const ASSET_STATS: &str = "SELECT id, event_count, min_start_us, max_end_us, last_n \
     FROM assets WHERE name = $1";

pub(super) const RUNS_OVERLAPPING: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = (SELECT id FROM assets WHERE name = $1) \
     AND start_us < $3 AND end_us > $2 AND start_us >= coalesce( \
         (SELECT start_us FROM coverage_runs \
          WHERE asset_id = (SELECT id FROM assets WHERE name = $1) AND start_us <= $2 \
          ORDER BY start_us DESC LIMIT 1), $2) \
     ORDER BY start_us";

/// The intervals of asset $1's retractions that overlap [$2, $3), from
/// their own partial index: the range index would walk every event of the
/// range.
const RETRACTIONS: &str = "SELECT start_us, end_us FROM events \
     WHERE asset_id = (SELECT id FROM assets WHERE name = $1) AND n < 0 \
     AND start_us < $3 AND end_us > $2";

pub(super) const RUN_CONTAINING: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = (SELECT id FROM assets WHERE name = $1) AND start_us <= $2 \
     ORDER BY start_us DESC LIMIT 1";

/// Part of a walk in sequence order: the asset's events numbered after the
/// cursor $2 in the groups of 64 numbers before $7 (the index of
/// `(asset_id, abs(n) >> 6)`: a retraction's number is negated), of kind $3
/// and overlapping [$5, $6) (`+ 0` keeps the planner off the start index),
/// in number order, at most $4.
const EVENTS_WALK: &str = concat!(
    "SELECT ",
    event_columns!(),
    " FROM events \
     WHERE asset_id = $1 AND (abs(n) >> 6) >= (($2::bigint + 1) >> 6) \
     AND (abs(n) >> 6) < $7::bigint AND abs(n) > $2::bigint \
     AND ($3::smallint IS NULL OR (n < 0) = ($3 = 1)) \
     AND start_us + 0 < $6 AND end_us + 0 > $5 \
     ORDER BY asset_id, (abs(n) >> 6), abs(n) LIMIT $4"
);

/// The most groups of 64 numbers one statement of a walk reads. A walk
/// whose range or kind leaves few events goes on in further statements, so
/// that whatever plan PostgreSQL picks (it may gather and sort the matching
/// rows rather than walk the index in order) none reads more of the asset's
/// events than this at once.
const WALK_GROUPS: i64 = 1 << 10;

/// The bits of an event's number below its group: the index of `events`
/// holds `abs(n) >> 6` (schema.rs), which the statements above write out.
const GROUP_BITS: u32 = 6;

/// A page of a narrow range: seek the start index (no event starts earlier
/// than the range start minus the longest event; the index holds each
/// start's group of 2^32 microseconds, about 72 minutes, and the rows are
/// checked against the range), then sort by number.
const EVENTS_BY_START: &str = concat!(
    "WITH m AS (SELECT $5::bigint - max_len_us AS lo FROM assets WHERE id = $1), \
     r AS MATERIALIZED ( \
     SELECT ",
    event_columns!(),
    " FROM events, m \
     WHERE asset_id = $1 \
     AND (start_us >> 32) >= (m.lo >> 32) AND (start_us >> 32) <= (($6::bigint - 1) >> 32) \
     AND start_us >= m.lo AND start_us < $6 AND end_us > $5 AND abs(n) > $2::bigint \
     AND ($3::smallint IS NULL OR (n < 0) = ($3 = 1))) \
     SELECT * FROM r ORDER BY abs(n) LIMIT $4"
);

const ASSET_DECL: &str = "SELECT key_span, tz FROM assets WHERE name = $1";

const ASSETS: &str = "SELECT a.name, a.event_count, \
       (SELECT start_us FROM coverage_runs r WHERE r.asset_id = a.id ORDER BY start_us LIMIT 1), \
       (SELECT end_us FROM coverage_runs r WHERE r.asset_id = a.id \
        ORDER BY start_us DESC LIMIT 1), \
       a.last_received_us, a.key_span, a.tz, a.pruned_before_us \
     FROM assets a ORDER BY a.name COLLATE \"C\"";

/// The event of a row of [`event_columns!`]; its cursor is its number.
fn event_of(r: &Row) -> Result<StoredEvent> {
    let c = row::content(r.try_get(4)?, r.try_get(5)?)?;
    codec::decode(EventRow {
        seq: r.try_get(0)?,
        id: r.try_get(1)?,
        start: r.try_get(2)?,
        end: r.try_get(3)?,
        kind: c.kind,
        extra: c.detail.extra,
        produced_at: c.detail.produced_at,
        received_at: r.try_get(6)?,
        cursor: c.number.into(),
    })
}

fn events_of(rows: Vec<Row>) -> Result<Vec<StoredEvent>> {
    rows.iter().map(event_of).collect()
}

pub(crate) fn coverage(conn: &mut Conn, asset: &str, range: Interval) -> Result<IntervalSet, Fail> {
    let (start, end) = (range.start().as_micros(), range.end().as_micros());
    let s = conn.stmts.get(&mut conn.client, RUNS_OVERLAPPING)?;
    Ok(runs_of(&conn.client.query(&s, &[&asset, &start, &end])?)?)
}

/// The coverage of the rows of [`RUNS_OVERLAPPING`].
pub(super) fn runs_of(rows: &[Row]) -> Result<IntervalSet> {
    let runs = rows
        .iter()
        .map(|r| interval(r.get(0), r.get(1), "coverage run"))
        .collect::<Result<Vec<_>>>()?;
    codec::run_set(runs)
}

pub(crate) fn retractions(
    conn: &mut Conn,
    asset: &str,
    range: Interval,
) -> Result<IntervalSet, Fail> {
    let (start, end) = (range.start().as_micros(), range.end().as_micros());
    let s = conn.stmts.get(&mut conn.client, RETRACTIONS)?;
    let mut out = IntervalSet::new();
    for r in conn.client.query(&s, &[&asset, &start, &end])? {
        out.insert(interval(r.get(0), r.get(1), "retracted event")?);
    }
    Ok(out)
}

pub(crate) fn run_containing(
    conn: &mut Conn,
    asset: &str,
    t: Instant,
) -> Result<Option<Interval>, Fail> {
    let s = conn.stmts.get(&mut conn.client, RUN_CONTAINING)?;
    Ok(run_at(
        conn.client.query_opt(&s, &[&asset, &t.as_micros()])?,
        t,
    )?)
}

/// The run containing `t` from the row of [`RUN_CONTAINING`] (the run
/// starting last at or before `t`, which may end before it).
pub(super) fn run_at(row: Option<Row>, t: Instant) -> Result<Option<Interval>> {
    match row.map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1))) {
        Some((s, e)) if e > t.as_micros() => Ok(Some(interval(s, e, "coverage run")?)),
        _ => Ok(None),
    }
}

/// A page: the shared plan (a walk reads only the asset's events, by their
/// numbers; retractions have no index of their own): a seek in one
/// statement, a walk in as many as its groups of numbers need. The asset's
/// statistics behind the plan come from a statement of their own.
pub(crate) fn events(conn: &mut Conn, asset: &str, query: &EventQuery) -> Result<EventPage, Fail> {
    let s = conn.stmts.get(&mut conn.client, ASSET_STATS)?;
    let Some(stats) = conn.client.query_opt(&s, &[&asset])? else {
        return Ok(page::empty());
    };
    let id: i64 = stats.get(0);
    let lo: Option<i64> = stats.get(2);
    let hi: Option<i64> = stats.get(3);
    let shape = Shape {
        events: stats.get(1),
        hull: lo.zip(hi),
    };
    let plan = page::plan(query, &shape, Walk::Asset, false);
    let rows = match (plan.path, plan.range) {
        (Path::Seek, Some((start, end))) => {
            let (after, kind, n) = (plan.after, plan.kind, plan.limit_arg());
            let s = conn.stmts.get(&mut conn.client, EVENTS_BY_START)?;
            conn.client
                .query(&s, &[&id, &after, &kind, &n, &start, &end])?
        }
        _ => walk(conn, id, stats.get::<_, i32>(4).into(), &plan)?,
    };
    Ok(plan.page(events_of(rows)?))
}

/// The rows of a walk of `plan` over asset `id`, whose last event is
/// numbered `last_n`: [`EVENTS_WALK`] over windows of groups, each twice the
/// one before up to [`WALK_GROUPS`], until the page is full or the numbers
/// run out. Each window's rows follow the last's in number order.
fn walk(conn: &mut Conn, id: i64, last_n: i64, plan: &page::Plan) -> Result<Vec<Row>, Fail> {
    let (start, end) = plan.bounds();
    let s = conn.stmts.get(&mut conn.client, EVENTS_WALK)?;
    let mut rows = Vec::new();
    let mut after = plan.after.max(0);
    let mut groups = ((plan.limit_arg() >> GROUP_BITS) + 1).min(WALK_GROUPS);
    loop {
        let want = plan.limit_arg() - rows.len() as i64;
        let until = ((after + 1) >> GROUP_BITS) + groups;
        rows.extend(
            conn.client
                .query(&s, &[&id, &after, &plan.kind, &want, &start, &end, &until])?,
        );
        if rows.len() as i64 >= plan.limit_arg() || until << GROUP_BITS > last_n {
            return Ok(rows);
        }
        after = (until << GROUP_BITS) - 1;
        groups = (groups * 2).min(WALK_GROUPS);
    }
}

pub(crate) fn asset_decl(conn: &mut Conn, asset: &str) -> Result<Option<AssetDecl>, Fail> {
    let s = conn.stmts.get(&mut conn.client, ASSET_DECL)?;
    let Some(row) = conn.client.query_opt(&s, &[&asset])? else {
        return Ok(None);
    };
    Ok(crate::decl::stored_decl(asset, row.get(0), row.get(1))?)
}

const ASSET: &str = "SELECT a.name, a.event_count, \
       (SELECT start_us FROM coverage_runs r WHERE r.asset_id = a.id ORDER BY start_us LIMIT 1), \
       (SELECT end_us FROM coverage_runs r WHERE r.asset_id = a.id \
        ORDER BY start_us DESC LIMIT 1), \
       a.last_received_us, a.key_span, a.tz, a.pruned_before_us \
     FROM assets a WHERE a.name = $1";

pub(crate) fn asset(conn: &mut Conn, asset: &str) -> Result<Option<AssetSummary>, Fail> {
    let s = conn.stmts.get(&mut conn.client, ASSET)?;
    let Some(r) = conn.client.query_opt(&s, &[&asset])? else {
        return Ok(None);
    };
    Ok(Some(codec::summary(
        r.get(0),
        r.get(1),
        r.get(2),
        r.get(3),
        r.get(4),
        (r.get(5), r.get(6)),
        r.get(7),
    )?))
}

pub(crate) fn assets(conn: &mut Conn) -> Result<Vec<AssetSummary>, Fail> {
    let s = conn.stmts.get(&mut conn.client, ASSETS)?;
    let mut out = Vec::new();
    for r in conn.client.query(&s, &[])? {
        out.push(codec::summary(
            r.get(0),
            r.get(1),
            r.get(2),
            r.get(3),
            r.get(4),
            (r.get(5), r.get(6)),
            r.get(7),
        )?);
    }
    Ok(out)
}

/// Asset `a`'s covered microseconds since `$since` up to $7, summed from
/// its coverage runs: the runs from the one starting last at or before
/// `$since` (one seek), clipped.
macro_rules! covered_since {
    ($since:literal) => {
        concat!(
            "(SELECT coalesce(sum(least(r.end_us, $7) - greatest(r.start_us, ",
            $since,
            ")), 0)::bigint FROM coverage_runs r WHERE r.asset_id = a.id AND r.start_us < $7 \
             AND r.end_us > ",
            $since,
            " AND r.start_us >= coalesce((SELECT start_us FROM coverage_runs \
               WHERE asset_id = a.id AND start_us <= ",
            $since,
            " ORDER BY start_us DESC LIMIT 1), ",
            $since,
            "))"
        )
    };
}

/// A page of assets (listing.rs): names at or after $1 (and before $8 in
/// the bounded form), after $2, containing $3 (or any), at most $4, each
/// with its overview's inputs as kept (`overview.rs`); only when those
/// cannot answer for $7 (the asset's last run ends after it, or its recent
/// runs were too many to keep) its covered microseconds since $5 (the
/// week) and $6 (the day) summed from its coverage runs. One statement,
/// one snapshot; names compare as bytes (`COLLATE "C"`, the
/// `assets_name_bytes` index) whatever the database's collation, as SQLite
/// compares them.
macro_rules! assets_page {
    ($bound:literal) => {
        concat!(
            "SELECT a.name, a.event_count, a.first_start_us, a.first_end_us, a.last_end_us, \
               a.last_received_us, a.key_span, a.tz, a.pruned_before_us, a.recent_runs, \
               CASE WHEN a.recent_runs IS NULL OR a.last_end_us > $7 THEN ",
            covered_since!("$5"),
            " END, CASE WHEN a.recent_runs IS NULL OR a.last_end_us > $7 THEN ",
            covered_since!("$6"),
            " END FROM assets a WHERE a.name COLLATE \"C\" >= $1 ",
            $bound,
            " AND a.name COLLATE \"C\" > $2 AND ($3::text IS NULL OR strpos(a.name, $3) > 0) \
             ORDER BY a.name COLLATE \"C\" LIMIT $4"
        )
    };
}

const ASSETS_PAGE: &str = assets_page!("");
const ASSETS_PAGE_BOUNDED: &str = assets_page!("AND a.name COLLATE \"C\" < $8");

pub(crate) fn assets_page(
    conn: &mut Conn,
    query: &AssetQuery,
    now: Instant,
) -> Result<AssetPage, Fail> {
    let limit = listing::limit(query.limit);
    let range = listing::name_range(query.prefix.as_deref(), query.after.as_deref());
    let recent = listing::recent(now);
    let (week, day, now) = recent;
    let n = limit as i64 + 1;
    let mut args: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![
        &range.lo,
        &range.after,
        &query.contains,
        &n,
        &week,
        &day,
        &now,
    ];
    let sql = match &range.hi {
        Some(hi) => {
            args.push(hi);
            ASSETS_PAGE_BOUNDED
        }
        None => ASSETS_PAGE,
    };
    let s = conn.stmts.get(&mut conn.client, sql)?;
    let mut out = Vec::new();
    for r in conn.client.query(&s, &args)? {
        let row = overview::row(
            r.get(0),
            r.get(1),
            (r.get(2), r.get(3)),
            r.get(4),
            r.get(5),
            (r.get(6), r.get(7)),
            r.get(8),
            r.get(9),
            (r.get(10), r.get(11)),
        )?;
        out.push(overview::overview(row, recent)?);
    }
    let (assets, next) = listing::page_of(out, limit, false, |a| a.summary.asset.as_str());
    Ok(AssetPage { assets, next })
}
