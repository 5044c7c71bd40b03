//! Reads: coverage runs, events, declarations, the asset listing and its
//! pages.
//!
//! Each read that takes more than one statement runs in one read
//! transaction, so it sees one committed state.

use gapless_core::{AssetDecl, Instant, Interval, IntervalSet};
use rusqlite::{params, Connection, OptionalExtension, Row};

use crate::codec::{self, event_columns, interval, kind_of, EventRow};
use crate::listing::{self, AssetPage, AssetQuery};
use crate::overview;
use crate::page::{self, Path, Shape, Walk};
use crate::{AssetSummary, EventPage, EventQuery, Result, StoredEvent};

/// `SELECT` of every column of an event, as [`event_of`] reads them.
macro_rules! select_event {
    () => {
        concat!("SELECT ", event_columns!(), " FROM events ")
    };
}

/// Runs of an asset overlapping [?2, ?3) (the caller drops one ending at
/// ?2): one seek back to the run starting at or before ?2, then forward.
/// The asset is `$asset`, an SQL expression of its id.
macro_rules! runs_overlapping {
    ($asset:literal) => {
        concat!(
            "SELECT start_us, end_us FROM coverage_runs WHERE asset_id = ",
            $asset,
            " AND start_us < ?3 AND start_us >= coalesce(",
            "(SELECT start_us FROM coverage_runs WHERE asset_id = ",
            $asset,
            " AND start_us <= ?2 ORDER BY start_us DESC LIMIT 1), ?2) ORDER BY start_us"
        )
    };
}

/// [`runs_overlapping!`] of asset ?1 by id.
pub(super) const RUNS_OVERLAPPING: &str = runs_overlapping!("?1");

/// [`runs_overlapping!`] of the asset named ?1: one statement, so one
/// snapshot without a transaction around it (its `BEGIN` and `COMMIT`
/// would be a third of a short question's work).
const RUNS_OVERLAPPING_NAMED: &str = runs_overlapping!("(SELECT id FROM assets WHERE name = ?1)");

/// The intervals of asset ?1's retractions that overlap [?2, ?3), from
/// their own index: the range index would walk every event of the range.
const RETRACTIONS: &str = "SELECT start_us, end_us FROM events INDEXED BY events_retracted \
     WHERE asset_id = (SELECT id FROM assets WHERE name = ?1) AND kind = 1 \
     AND start_us < ?3 AND end_us > ?2";

/// The run of asset ?1 (by id) starting at or before ?2.
pub(super) const RUN_AT_OR_BEFORE_ID: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = ?1 AND start_us <= ?2 ORDER BY start_us DESC LIMIT 1";

/// The run of asset named ?1 starting at or before ?2.
pub(super) const RUN_AT_OR_BEFORE: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = (SELECT id FROM assets WHERE name = ?1) AND start_us <= ?2 \
     ORDER BY start_us DESC LIMIT 1";

/// A page by walking all events in sequence order from cursor ?2: asset ?1,
/// kind ?3 or any, overlapping [?5, ?6), at most ?4.
pub(super) const EVENTS_WALK: &str = concat!(
    select_event!(),
    "NOT INDEXED WHERE seq > ?2 AND asset_id = ?1 AND (?3 IS NULL OR kind = ?3) \
     AND start_us < ?6 AND end_us > ?5 ORDER BY seq LIMIT ?4"
);

/// A page by seeking the start index: as [`EVENTS_WALK`], with ?7 the
/// range start less the asset's longest event.
pub(super) const EVENTS_SEEK: &str = concat!(
    select_event!(),
    "INDEXED BY events_asset_start \
     WHERE asset_id = ?1 AND start_us >= ?7 AND start_us < ?6 \
     AND end_us > ?5 AND seq > ?2 AND (?3 IS NULL OR kind = ?3) \
     ORDER BY seq LIMIT ?4"
);

/// A page of asset ?1's retractions after cursor ?2 overlapping [?4, ?5),
/// at most ?3.
pub(super) const EVENTS_RETRACTED: &str = concat!(
    select_event!(),
    "INDEXED BY events_retracted \
     WHERE asset_id = ?1 AND kind = 1 AND seq > ?2 AND start_us < ?5 AND end_us > ?4 \
     ORDER BY seq LIMIT ?3"
);

/// What a page or a range read needs to know about an asset.
struct AssetStats {
    id: i64,
    max_len: i64,
    shape: Shape,
}

fn asset_stats(conn: &Connection, asset: &str) -> Result<Option<AssetStats>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, event_count, max_len_us, min_start_us, max_end_us \
             FROM assets WHERE name = ?1",
        )?
        .query_row([asset], |r| {
            let lo: Option<i64> = r.get(3)?;
            let hi: Option<i64> = r.get(4)?;
            Ok(AssetStats {
                id: r.get(0)?,
                max_len: r.get(2)?,
                shape: Shape {
                    events: r.get(1)?,
                    hull: lo.zip(hi),
                },
            })
        })
        .optional()?)
}

/// The event of a row of [`select_event!`].
fn event_of(r: &Row<'_>) -> Result<StoredEvent> {
    let seq = r.get(0)?;
    codec::decode(EventRow {
        seq,
        id: r.get(1)?,
        start: r.get(2)?,
        end: r.get(3)?,
        kind: r.get(4)?,
        extra: r.get(5)?,
        produced_at: r.get(6)?,
        received_at: r.get(7)?,
        // Pages walk the rowid, which is the sequence number.
        cursor: seq,
    })
}

/// The runs of asset `id` overlapping `range`, unclipped, in order: one seek
/// to the run with the greatest start at or before the range, then forward.
pub(super) fn runs_overlapping(
    conn: &Connection,
    id: i64,
    range: Interval,
) -> Result<Vec<Interval>> {
    runs_of(conn, RUNS_OVERLAPPING, id, range)
}

/// The runs of `asset` overlapping `range`, unclipped, in order, by
/// `sql` ([`RUNS_OVERLAPPING`] or [`RUNS_OVERLAPPING_NAMED`]).
fn runs_of(
    conn: &Connection,
    sql: &str,
    asset: impl rusqlite::ToSql,
    range: Interval,
) -> Result<Vec<Interval>> {
    let (start, end) = (range.start().as_micros(), range.end().as_micros());
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(params![asset, start, end])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let (s, e): (i64, i64) = (r.get(0)?, r.get(1)?);
        if e > start {
            out.push(interval(s, e, "coverage run")?);
        }
    }
    Ok(out)
}

/// An unknown asset has no runs: the caller tells it from a known one
/// with none.
pub(crate) fn coverage(conn: &mut Connection, asset: &str, range: Interval) -> Result<IntervalSet> {
    codec::run_set(runs_of(conn, RUNS_OVERLAPPING_NAMED, asset, range)?)
}

pub(crate) fn retractions(
    conn: &mut Connection,
    asset: &str,
    range: Interval,
) -> Result<IntervalSet> {
    let mut stmt = conn.prepare_cached(RETRACTIONS)?;
    let mut rows = stmt.query(params![
        asset,
        range.start().as_micros(),
        range.end().as_micros()
    ])?;
    let mut out = IntervalSet::new();
    while let Some(r) = rows.next()? {
        out.insert(interval(r.get(0)?, r.get(1)?, "retracted event")?);
    }
    Ok(out)
}

pub(crate) fn run_containing(
    conn: &mut Connection,
    asset: &str,
    t: Instant,
) -> Result<Option<Interval>> {
    let run: Option<(i64, i64)> = conn
        .prepare_cached(RUN_AT_OR_BEFORE)?
        .query_row(params![asset, t.as_micros()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    match run {
        Some((s, e)) if e > t.as_micros() => Ok(Some(interval(s, e, "coverage run")?)),
        _ => Ok(None),
    }
}

/// A page: the shared plan (a walk reads the whole ledger in sequence
/// order, retractions have an index of their own) as one statement.
pub(crate) fn events(conn: &mut Connection, asset: &str, query: &EventQuery) -> Result<EventPage> {
    let tx = conn.transaction()?;
    let Some(stats) = asset_stats(&tx, asset)? else {
        return Ok(page::empty());
    };
    let total: i64 = tx
        .prepare_cached("SELECT coalesce(max(seq), 0) FROM events")?
        .query_row([], |r| r.get(0))?;
    let plan = page::plan(query, &stats.shape, Walk::Ledger { total }, true);
    let (start, end) = plan.bounds();
    let (after, kind, limit) = (plan.after, plan.kind, plan.limit_arg());
    let lower = start.saturating_sub(stats.max_len);
    let (sql, args): (&str, Vec<&dyn rusqlite::ToSql>) = match plan.path {
        Path::Retractions => (
            EVENTS_RETRACTED,
            vec![&stats.id, &after, &limit, &start, &end],
        ),
        Path::Walk => (
            EVENTS_WALK,
            vec![&stats.id, &after, &kind, &limit, &start, &end],
        ),
        Path::Seek => (
            EVENTS_SEEK,
            vec![&stats.id, &after, &kind, &limit, &start, &end, &lower],
        ),
    };
    let events = collect_events(tx.prepare_cached(sql)?.query(&args[..])?)?;
    Ok(plan.page(events))
}

fn collect_events(mut rows: rusqlite::Rows<'_>) -> Result<Vec<StoredEvent>> {
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(event_of(r)?);
    }
    Ok(out)
}

pub(crate) fn asset_decl(conn: &mut Connection, asset: &str) -> Result<Option<AssetDecl>> {
    let row: Option<(Option<String>, Option<String>)> = conn
        .prepare_cached("SELECT key_span, tz FROM assets WHERE name = ?1")?
        .query_row([asset], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((span, tz)) = row else {
        return Ok(None);
    };
    crate::decl::stored_decl(asset, span, tz)
}

pub(crate) fn asset(conn: &mut Connection, asset: &str) -> Result<Option<AssetSummary>> {
    let mut stmt = conn.prepare_cached(
        "SELECT a.name, a.event_count, \
           (SELECT start_us FROM coverage_runs r WHERE r.asset_id = a.id ORDER BY start_us LIMIT 1), \
           (SELECT end_us FROM coverage_runs r WHERE r.asset_id = a.id ORDER BY start_us DESC LIMIT 1), \
           a.last_received_us, a.key_span, a.tz, a.pruned_before_us \
         FROM assets a WHERE a.name = ?1",
    )?;
    let mut rows = stmt.query([asset])?;
    match rows.next()? {
        Some(r) => Ok(Some(codec::summary(
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            (r.get(5)?, r.get(6)?),
            r.get(7)?,
        )?)),
        None => Ok(None),
    }
}

pub(crate) fn assets(conn: &mut Connection) -> Result<Vec<AssetSummary>> {
    let mut stmt = conn.prepare_cached(
        "SELECT a.name, a.event_count, \
           (SELECT start_us FROM coverage_runs r WHERE r.asset_id = a.id ORDER BY start_us LIMIT 1), \
           (SELECT end_us FROM coverage_runs r WHERE r.asset_id = a.id ORDER BY start_us DESC LIMIT 1), \
           a.last_received_us, a.key_span, a.tz, a.pruned_before_us \
         FROM assets a ORDER BY a.name",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(codec::summary(
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            (r.get(5)?, r.get(6)?),
            r.get(7)?,
        )?);
    }
    Ok(out)
}

/// Asset `a`'s covered microseconds since `$since` up to ?7, summed from
/// its coverage runs: the runs from the one starting last at or before
/// `$since` (one seek), clipped.
macro_rules! covered_since {
    ($since:literal) => {
        concat!(
            "(SELECT coalesce(sum(min(r.end_us, ?7) - max(r.start_us, ",
            $since,
            ")), 0) FROM coverage_runs r WHERE r.asset_id = a.id AND r.start_us < ?7 \
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

/// A page of assets (listing.rs): names at or after ?1 (and before ?8 in
/// the bounded form), after ?2, containing ?3 (or any), at most ?4 (the
/// name index walked in order until the page is full), each with its
/// overview's inputs as kept (`overview.rs`); only when those cannot
/// answer for ?7 (the asset's last run ends after it, or its recent runs
/// were too many to keep) its covered microseconds since ?5 (the week)
/// and ?6 (the day) summed from its coverage runs. One statement: one
/// snapshot.
macro_rules! assets_page {
    ($bound:literal) => {
        concat!(
            "SELECT a.name, a.event_count, a.first_start_us, a.first_end_us, a.last_end_us, \
               a.last_received_us, a.key_span, a.tz, a.pruned_before_us, a.recent_runs, \
               CASE WHEN a.recent_runs IS NULL OR a.last_end_us > ?7 THEN ",
            covered_since!("?5"),
            " END, CASE WHEN a.recent_runs IS NULL OR a.last_end_us > ?7 THEN ",
            covered_since!("?6"),
            " END FROM assets a WHERE a.name >= ?1 ",
            $bound,
            " AND a.name > ?2 AND (?3 IS NULL OR instr(a.name, ?3) > 0) ORDER BY a.name LIMIT ?4"
        )
    };
}

pub(super) const ASSETS_PAGE: &str = assets_page!("");
const ASSETS_PAGE_BOUNDED: &str = assets_page!("AND a.name < ?8");

pub(crate) fn assets_page(
    conn: &mut Connection,
    query: &AssetQuery,
    now: Instant,
) -> Result<AssetPage> {
    let limit = listing::limit(query.limit);
    let range = listing::name_range(query.prefix.as_deref(), query.after.as_deref());
    let recent = listing::recent(now);
    let (week, day, now) = recent;
    let n = limit as i64 + 1;
    let mut args: Vec<&dyn rusqlite::ToSql> = vec![
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
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(&args[..])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let row = overview::row(
            r.get(0)?,
            r.get(1)?,
            (r.get(2)?, r.get(3)?),
            r.get(4)?,
            r.get(5)?,
            (r.get(6)?, r.get(7)?),
            r.get(8)?,
            r.get(9)?,
            (r.get(10)?, r.get(11)?),
        )?;
        out.push(overview::overview(row, recent)?);
    }
    let (assets, next) = listing::page_of(out, limit, false, |a| a.summary.asset.as_str());
    Ok(AssetPage { assets, next })
}

pub(crate) fn verify(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction()?;
    let check: String = tx.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Err(crate::StoreError::fault(format!(
            "the ledger file fails SQLite's integrity check: {check}"
        )));
    }
    /// id, name, event count, longest event, hull start, hull end, pruned
    /// before; the overview's inputs: first run, last run's end, recent runs.
    type Row = (
        (i64, String, i64, i64, Option<i64>, Option<i64>, Option<i64>),
        ((Option<i64>, Option<i64>), Option<i64>, Option<Vec<u8>>),
    );
    let assets: Vec<Row> = {
        let mut stmt = tx.prepare(
            "SELECT id, name, event_count, max_len_us, min_start_us, max_end_us, \
             pruned_before_us, first_start_us, first_end_us, last_end_us, recent_runs \
             FROM assets",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                (
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ),
                ((r.get(7)?, r.get(8)?), r.get(9)?, r.get(10)?),
            ))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for ((id, name, count, max_len, lo, hi, pruned), (first_run, last_end, recent)) in assets {
        let mismatch = |what: &str| {
            Err(crate::StoreError::fault(format!(
                "asset {name:?}: {what} does not match its events"
            )))
        };
        let mut cov = gapless_core::Coverage::new();
        let (mut n, mut longest, mut hull) = (0_i64, 0_i64, None::<(i64, i64)>);
        let mut stmt = tx.prepare(
            "SELECT start_us, end_us, kind FROM events WHERE asset_id = ?1 ORDER BY seq",
        )?;
        let mut rows = stmt.query([id])?;
        while let Some(r) = rows.next()? {
            let (s, e): (i64, i64) = (r.get(0)?, r.get(1)?);
            cov.apply(kind_of(r.get(2)?)?, interval(s, e, "event interval")?);
            n += 1;
            longest = longest.max(e - s);
            hull = Some(hull.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
        }
        if n != count {
            return mismatch("event count");
        }
        // After a prune the longest event and the hull are bounds (what
        // range seeks and plans need), no longer exact.
        let bounded = |(a, b): (i64, i64)| lo.zip(hi).is_some_and(|(l, h)| l <= a && b <= h);
        if longest != max_len && (pruned.is_none() || longest > max_len) {
            return mismatch("longest event");
        }
        if hull != lo.zip(hi) && (pruned.is_none() || !hull.is_none_or(bounded)) {
            return mismatch("time hull");
        }
        let mut stmt = tx.prepare(
            "SELECT start_us, end_us FROM coverage_runs WHERE asset_id = ?1 ORDER BY start_us",
        )?;
        let runs = stmt
            .query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        // What a prune removed ends by its watermark: from there on the
        // replay of the events left is the whole story.
        let from = pruned.unwrap_or(i64::MIN);
        let clip = |runs: &mut dyn Iterator<Item = (i64, i64)>| -> Vec<(i64, i64)> {
            runs.filter(|&(_, e)| e > from)
                .map(|(s, e)| (s.max(from), e))
                .collect()
        };
        let want = clip(
            &mut cov
                .set()
                .runs()
                .map(|iv| (iv.start().as_micros(), iv.end().as_micros())),
        );
        if clip(&mut runs.iter().copied()) != want {
            return mismatch("coverage");
        }
        if !crate::overview::kept_matches(&runs, first_run, last_end, recent.as_deref()) {
            return mismatch("overview (its first, last and recent runs)");
        }
    }
    Ok(())
}
