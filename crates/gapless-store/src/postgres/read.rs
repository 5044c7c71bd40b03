//! Reads: coverage runs, events, declarations, the asset listing.
//!
//! Each answer comes from one statement, so it sees one committed state
//! (read committed takes a snapshot per statement). The only extra
//! statement, the asset statistics behind the choice of plan for a page of
//! events, affects speed, never the answer.

use gapless_core::{AssetDecl, Duration, Instant, Interval, IntervalSet};
use postgres::Row;

use super::append::{kind_code, kind_of};
use super::{corrupt, Conn, Fail};
use crate::{AssetSummary, EventPage, EventQuery, Result, StoreError, StoredEvent};

/// The most events one page holds.
pub(crate) const MAX_PAGE: usize = 10_000;

const ASSET_STATS: &str = "SELECT id, event_count, min_start_us, max_end_us \
     FROM assets WHERE name = $1";

const RUNS_OVERLAPPING: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = (SELECT id FROM assets WHERE name = $1) \
     AND start_us < $3 AND end_us > $2 AND start_us >= coalesce( \
         (SELECT start_us FROM coverage_runs \
          WHERE asset_id = (SELECT id FROM assets WHERE name = $1) AND start_us <= $2 \
          ORDER BY start_us DESC LIMIT 1), $2) \
     ORDER BY start_us";

const RUN_CONTAINING: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = (SELECT id FROM assets WHERE name = $1) AND start_us <= $2 \
     ORDER BY start_us DESC LIMIT 1";

/// A page in sequence order, no range.
const EVENTS_BY_SEQ: &str = "SELECT seq, id, start_us, end_us, kind, extra, produced_at, \
     received_at FROM events \
     WHERE asset_id = $1 AND seq > $2 AND ($3::smallint IS NULL OR kind = $3) \
     ORDER BY asset_id, seq LIMIT $4";

/// A page of a wide range: walk the sequence index, filter by range (`+ 0`
/// keeps the planner off the start index).
const EVENTS_BY_SEQ_IN_RANGE: &str = "SELECT seq, id, start_us, end_us, kind, extra, \
     produced_at, received_at FROM events \
     WHERE asset_id = $1 AND seq > $2 AND ($3::smallint IS NULL OR kind = $3) \
     AND start_us + 0 < $6 AND end_us + 0 > $5 \
     ORDER BY asset_id, seq LIMIT $4";

/// A page of a narrow range: seek the start index (no event starts earlier
/// than the range start minus the longest event), then sort by sequence.
const EVENTS_BY_START: &str = "WITH r AS MATERIALIZED ( \
     SELECT seq, id, start_us, end_us, kind, extra, produced_at, received_at FROM events \
     WHERE asset_id = $1 \
     AND start_us >= $5 - (SELECT max_len_us FROM assets WHERE id = $1) \
     AND start_us < $6 AND end_us > $5 AND seq > $2 \
     AND ($3::smallint IS NULL OR kind = $3)) \
     SELECT * FROM r ORDER BY seq LIMIT $4";

const EVENTS_OVERLAPPING: &str = "SELECT seq, id, start_us, end_us, kind, extra, produced_at, \
     received_at FROM events \
     WHERE asset_id = (SELECT id FROM assets WHERE name = $1) \
     AND start_us >= $2 - (SELECT max_len_us FROM assets WHERE name = $1) \
     AND start_us < $3 AND end_us > $2 \
     ORDER BY seq";

const ASSET_DECL: &str = "SELECT key_span, tz FROM assets WHERE name = $1";

const ASSETS: &str = "SELECT a.name, a.event_count, \
       (SELECT start_us FROM coverage_runs r WHERE r.asset_id = a.id ORDER BY start_us LIMIT 1), \
       (SELECT end_us FROM coverage_runs r WHERE r.asset_id = a.id \
        ORDER BY start_us DESC LIMIT 1) \
     FROM assets a ORDER BY a.name COLLATE \"C\"";

/// What the planner needs to know about an asset.
struct AssetStats {
    id: i64,
    events: i64,
    hull: Option<(i64, i64)>,
}

fn instant(us: i64, what: &str) -> Result<Instant> {
    Instant::from_micros(us).map_err(|_| corrupt(what))
}

fn interval(start: i64, end: i64, what: &str) -> Result<Interval> {
    Interval::from_micros(start, end).map_err(|_| corrupt(what))
}

/// The event of a row of the event columns.
fn event_of(r: &Row) -> Result<StoredEvent> {
    let produced: Option<i64> = r.try_get(6)?;
    Ok(StoredEvent {
        seq: r.try_get(0)?,
        id: r.try_get(1)?,
        interval: interval(r.try_get(2)?, r.try_get(3)?, "event interval")?,
        kind: kind_of(r.try_get(4)?)?,
        extra: r.try_get(5)?,
        produced_at: produced
            .map(|p| instant(p, "event produced_at"))
            .transpose()?,
        received_at: instant(r.try_get(7)?, "event received_at")?,
    })
}

fn events_of(rows: Vec<Row>) -> Result<Vec<StoredEvent>> {
    rows.iter().map(event_of).collect()
}

pub(crate) fn coverage(conn: &mut Conn, asset: &str, range: Interval) -> Result<IntervalSet, Fail> {
    let (start, end) = (range.start().as_micros(), range.end().as_micros());
    let s = conn.stmts.get(&mut conn.client, RUNS_OVERLAPPING)?;
    let runs = conn
        .client
        .query(&s, &[&asset, &start, &end])?
        .iter()
        .map(|r| interval(r.get(0), r.get(1), "coverage run"))
        .collect::<Result<Vec<_>>>()?;
    Ok(IntervalSet::from_sorted_runs(runs)
        .map_err(|e| corrupt(format_args!("set of coverage runs ({e})")))?)
}

pub(crate) fn run_containing(
    conn: &mut Conn,
    asset: &str,
    t: Instant,
) -> Result<Option<Interval>, Fail> {
    let s = conn.stmts.get(&mut conn.client, RUN_CONTAINING)?;
    let run = conn.client.query_opt(&s, &[&asset, &t.as_micros()])?;
    match run.map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1))) {
        Some((s, e)) if e > t.as_micros() => Ok(Some(interval(s, e, "coverage run")?)),
        _ => Ok(None),
    }
}

/// How to find the events of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Walk the asset's events in sequence order, filtering by range.
    BySeq,
    /// Seek the range in the start index, then sort by sequence.
    ByStart,
}

/// Pick the cheaper plan for a page of `limit` events overlapping `range`
/// (as the SQLite backend does).
///
/// With `f` the share of the asset's time hull that `range` covers and `n`
/// its event count, a walk in sequence order reads about `limit / f` events
/// to fill a page, a seek by start reads about `f * n`.
fn plan(stats: &AssetStats, range: Interval, limit: usize) -> Plan {
    let Some((lo, hi)) = stats.hull else {
        return Plan::ByStart;
    };
    let width = (hi - lo).max(1) as f64;
    let overlap =
        (range.end().as_micros().min(hi) - range.start().as_micros().max(lo)).max(0) as f64;
    let f = (overlap / width).clamp(1e-12, 1.0);
    if f * stats.events as f64 <= limit as f64 / f {
        Plan::ByStart
    } else {
        Plan::BySeq
    }
}

pub(crate) fn events(conn: &mut Conn, asset: &str, query: &EventQuery) -> Result<EventPage, Fail> {
    let limit = match query.limit {
        0 => MAX_PAGE,
        n => n.min(MAX_PAGE),
    };
    let s = conn.stmts.get(&mut conn.client, ASSET_STATS)?;
    let Some(stats) = conn.client.query_opt(&s, &[&asset])? else {
        return Ok(EventPage {
            events: Vec::new(),
            next: None,
        });
    };
    let lo: Option<i64> = stats.get(2);
    let hi: Option<i64> = stats.get(3);
    let stats = AssetStats {
        id: stats.get(0),
        events: stats.get(1),
        hull: lo.zip(hi),
    };
    let after = query.after.unwrap_or(i64::MIN);
    let kind: Option<i16> = query.kind.map(kind_code);
    let n = limit as i64;
    let rows = match query.range {
        None => {
            let s = conn.stmts.get(&mut conn.client, EVENTS_BY_SEQ)?;
            conn.client.query(&s, &[&stats.id, &after, &kind, &n])?
        }
        Some(range) => {
            let (start, end) = (range.start().as_micros(), range.end().as_micros());
            let sql = match plan(&stats, range, limit) {
                Plan::BySeq => EVENTS_BY_SEQ_IN_RANGE,
                Plan::ByStart => EVENTS_BY_START,
            };
            let s = conn.stmts.get(&mut conn.client, sql)?;
            conn.client
                .query(&s, &[&stats.id, &after, &kind, &n, &start, &end])?
        }
    };
    let events = events_of(rows)?;
    let next = if events.len() == limit {
        events.last().map(|e| e.seq)
    } else {
        None
    };
    Ok(EventPage { events, next })
}

pub(crate) fn events_overlapping(
    conn: &mut Conn,
    asset: &str,
    range: Interval,
) -> Result<Vec<StoredEvent>, Fail> {
    let (start, end) = (range.start().as_micros(), range.end().as_micros());
    let s = conn.stmts.get(&mut conn.client, EVENTS_OVERLAPPING)?;
    Ok(events_of(conn.client.query(&s, &[&asset, &start, &end])?)?)
}

pub(crate) fn asset_decl(conn: &mut Conn, asset: &str) -> Result<Option<AssetDecl>, Fail> {
    let s = conn.stmts.get(&mut conn.client, ASSET_DECL)?;
    let Some(row) = conn.client.query_opt(&s, &[&asset])? else {
        return Ok(None);
    };
    let span: Option<String> = row.get(0);
    let Some(tz) = row.get::<_, Option<String>>(1) else {
        return Ok(None);
    };
    let tz = jiff::tz::TimeZone::get(&tz).map_err(|_| {
        StoreError::Backend(format!(
            "asset {asset:?} is declared with time zone {tz:?}, which this build does not know"
        ))
    })?;
    let key_span = span
        .map(|s| Duration::parse(&s).map_err(|_| corrupt(format_args!("key span {s:?}"))))
        .transpose()?;
    Ok(Some(AssetDecl { key_span, tz }))
}

pub(crate) fn assets(conn: &mut Conn) -> Result<Vec<AssetSummary>, Fail> {
    let s = conn.stmts.get(&mut conn.client, ASSETS)?;
    let mut out = Vec::new();
    for r in conn.client.query(&s, &[])? {
        let first: Option<i64> = r.get(2);
        let last: Option<i64> = r.get(3);
        let events: i64 = r.get(1);
        out.push(AssetSummary {
            asset: r.get(0),
            events: u64::try_from(events).map_err(|_| corrupt("event count"))?,
            first_covered: first.map(|t| instant(t, "coverage run")).transpose()?,
            last_covered: last.map(|t| instant(t, "coverage run")).transpose()?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(a: i64, b: i64) -> Interval {
        Interval::from_micros(a, b).unwrap()
    }

    #[test]
    fn plan_prefers_the_start_index_for_narrow_ranges() {
        let stats = AssetStats {
            id: 1,
            events: 10_000_000,
            hull: Some((0, 1_000_000_000)),
        };
        assert_eq!(plan(&stats, iv(0, 1_000), 100), Plan::ByStart);
        assert_eq!(plan(&stats, iv(-5, 1_000_000_000), 100), Plan::BySeq);
        assert_eq!(
            plan(&stats, iv(2_000_000_000, 3_000_000_000), 100),
            Plan::ByStart
        );
        let empty = AssetStats {
            id: 1,
            events: 0,
            hull: None,
        };
        assert_eq!(plan(&empty, iv(0, 1), 100), Plan::ByStart);
    }
}
