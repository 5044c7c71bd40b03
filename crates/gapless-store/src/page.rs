//! Planning a page of events, the same in both backends: the page limit,
//! the bounds a query asks for, which way to find the events (walk them in
//! sequence order or seek the start index), and the cursor of the next
//! page. Each backend turns the plan into its own statement.

use gapless_core::{EventKind, Interval};

use crate::codec::kind_code;
use crate::{EventPage, EventQuery, StoredEvent};

/// The most events one page holds (also what `limit` 0 means).
pub(crate) const MAX_PAGE: usize = 10_000;

/// What the planner needs to know about an asset (from its row, so it may
/// lag a concurrent append: it affects speed, never the answer).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    /// Events stored.
    pub(crate) events: i64,
    /// The hull of the events' intervals, `None` without events.
    pub(crate) hull: Option<(i64, i64)>,
}

/// What a walk in sequence order reads, by backend.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Walk {
    /// Every event of the ledger from the cursor on (SQLite's rowid order),
    /// `total` of them: the asset's share of them decides.
    Ledger {
        /// Events in the ledger (an estimate is enough).
        total: i64,
    },
    /// Only the asset's events (an index on `(asset, seq)`, PostgreSQL).
    Asset,
}

/// Which way to find the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// Walk the events in sequence order from the cursor, keeping those
    /// that match, until the page is full.
    Walk,
    /// Seek the range in the start index, then sort by sequence. Only
    /// planned with a range when [`Walk::Asset`].
    Seek,
    /// Walk the asset's retractions (an index of their own) in sequence
    /// order. Only planned when the backend has that index.
    Retractions,
}

/// A planned page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Events at most: the query's limit capped at [`MAX_PAGE`].
    pub(crate) limit: usize,
    /// Only sequences above this.
    pub(crate) after: i64,
    /// Only this kind's stored integer.
    pub(crate) kind: Option<i16>,
    /// The range asked for, as microseconds.
    pub(crate) range: Option<(i64, i64)>,
    /// Which way to find the events.
    pub(crate) path: Path,
}

impl Plan {
    /// The range's bounds, the whole time line without one (every interval
    /// overlaps `[i64::MIN, i64::MAX)`).
    pub(crate) fn bounds(&self) -> (i64, i64) {
        self.range.unwrap_or((i64::MIN, i64::MAX))
    }

    /// The limit as a statement argument.
    pub(crate) fn limit_arg(&self) -> i64 {
        self.limit as i64
    }

    /// The page of the events found (at most [`Plan::limit`], in sequence
    /// order): a full page may be followed by more.
    pub(crate) fn page(&self, events: Vec<StoredEvent>) -> EventPage {
        let next = if events.len() == self.limit {
            events.last().map(|e| e.cursor)
        } else {
            None
        };
        EventPage { events, next }
    }
}

/// The page of an unknown asset.
pub(crate) fn empty() -> EventPage {
    EventPage {
        events: Vec::new(),
        next: None,
    }
}

/// The page limit of `limit` (0: the largest page).
pub(crate) fn limit(limit: usize) -> usize {
    match limit {
        0 => MAX_PAGE,
        n => n.min(MAX_PAGE),
    }
}

/// Plan a page of `query` for an asset of `shape`, where a walk reads as
/// `walk` says and `retraction_index` tells whether retractions have an
/// index of their own.
pub(crate) fn plan(query: &EventQuery, shape: &Shape, walk: Walk, retraction_index: bool) -> Plan {
    let limit = limit(query.limit);
    let path = if retraction_index && query.kind == Some(EventKind::Retracted) {
        Path::Retractions
    } else {
        cheaper(shape, walk, query.range, limit)
    };
    Plan {
        limit,
        after: query.after.unwrap_or(i64::MIN),
        kind: query.kind.map(kind_code),
        range: query
            .range
            .map(|r| (r.start().as_micros(), r.end().as_micros())),
        path,
    }
}

/// The cheaper of a walk and a seek for a page of `limit` events,
/// optionally only those overlapping `range`.
///
/// With `n` the asset's events, `p` its share of what a walk reads and `f`
/// the share of its time hull that the range covers, a walk reads about
/// `limit / (p f)` events to fill a page, a seek reads about `f n` (and
/// sorts them). A walk of the asset's own events without a range never
/// reads more than a seek.
fn cheaper(shape: &Shape, walk: Walk, range: Option<Interval>, limit: usize) -> Path {
    if matches!(walk, Walk::Asset) && range.is_none() {
        return Path::Walk;
    }
    let Some((lo, hi)) = shape.hull else {
        return Path::Seek;
    };
    let f = match range {
        None => 1.0,
        Some(range) => {
            let width = (hi - lo).max(1) as f64;
            let overlap =
                (range.end().as_micros().min(hi) - range.start().as_micros().max(lo)).max(0) as f64;
            (overlap / width).clamp(1e-12, 1.0)
        }
    };
    let n = shape.events.max(1) as f64;
    let p = match walk {
        Walk::Ledger { total } => (n / total.max(1) as f64).clamp(1e-12, 1.0),
        Walk::Asset => 1.0,
    };
    if f * n <= limit as f64 / (p * f) {
        Path::Seek
    } else {
        Path::Walk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(a: i64, b: i64) -> Interval {
        Interval::from_micros(a, b).unwrap()
    }

    fn path(shape: &Shape, walk: Walk, range: Option<Interval>, limit: usize) -> Path {
        let query = EventQuery {
            range,
            limit,
            ..EventQuery::default()
        };
        plan(&query, shape, walk, true).path
    }

    /// A walk of the whole ledger (SQLite).
    #[test]
    fn plan_walks_for_big_assets_and_seeks_for_narrow_ranges() {
        let big = Shape {
            events: 2_500_000,
            hull: Some((0, 1_000_000_000)),
        };
        let walk = Walk::Ledger { total: 10_000_000 };
        assert_eq!(path(&big, walk, None, 100), Path::Walk);
        assert_eq!(path(&big, walk, Some(iv(0, 1_000)), 100), Path::Seek);
        assert_eq!(
            path(&big, walk, Some(iv(-5, 1_000_000_000)), 100),
            Path::Walk
        );
        assert_eq!(
            path(&big, walk, Some(iv(2_000_000_000, 3_000_000_000)), 100),
            Path::Seek
        );
        let rare = Shape { events: 100, ..big };
        assert_eq!(path(&rare, walk, None, 100), Path::Seek);
        let empty = Shape {
            events: 0,
            hull: None,
        };
        assert_eq!(path(&empty, walk, Some(iv(0, 1)), 100), Path::Seek);
    }

    /// A walk of the asset's own events (PostgreSQL).
    #[test]
    fn plan_prefers_the_start_index_for_narrow_ranges() {
        let shape = Shape {
            events: 10_000_000,
            hull: Some((0, 1_000_000_000)),
        };
        let walk = Walk::Asset;
        assert_eq!(path(&shape, walk, Some(iv(0, 1_000)), 100), Path::Seek);
        assert_eq!(
            path(&shape, walk, Some(iv(-5, 1_000_000_000)), 100),
            Path::Walk
        );
        assert_eq!(
            path(&shape, walk, Some(iv(2_000_000_000, 3_000_000_000)), 100),
            Path::Seek
        );
        let empty = Shape {
            events: 0,
            hull: None,
        };
        assert_eq!(path(&empty, walk, Some(iv(0, 1)), 100), Path::Seek);
        // Without a range the asset's own events are walked.
        assert_eq!(path(&shape, walk, None, 100), Path::Walk);
        assert_eq!(path(&empty, walk, None, 100), Path::Walk);
    }

    #[test]
    fn retractions_have_their_own_path_where_indexed() {
        let shape = Shape {
            events: 10,
            hull: Some((0, 10)),
        };
        let query = EventQuery {
            kind: Some(EventKind::Retracted),
            ..EventQuery::default()
        };
        let walk = Walk::Ledger { total: 10 };
        assert_eq!(plan(&query, &shape, walk, true).path, Path::Retractions);
        assert_ne!(plan(&query, &shape, walk, false).path, Path::Retractions);
        assert_eq!(plan(&query, &shape, walk, true).kind, Some(1));
    }

    #[test]
    fn limits_and_cursors() {
        assert_eq!(limit(0), MAX_PAGE);
        assert_eq!(limit(5), 5);
        assert_eq!(limit(MAX_PAGE + 1), MAX_PAGE);
        let query = EventQuery {
            limit: 2,
            after: Some(7),
            ..EventQuery::default()
        };
        let p = plan(
            &query,
            &Shape {
                events: 0,
                hull: None,
            },
            Walk::Asset,
            false,
        );
        assert_eq!((p.after, p.bounds()), (7, (i64::MIN, i64::MAX)));
        let ev = |seq| StoredEvent {
            seq,
            id: None,
            interval: iv(0, 1),
            kind: EventKind::Landed,
            extra: None,
            produced_at: None,
            received_at: gapless_core::Instant::from_micros(0).unwrap(),
            cursor: seq,
        };
        assert_eq!(p.page(vec![ev(8), ev(9)]).next, Some(9));
        assert_eq!(p.page(vec![ev(8)]).next, None);
        assert_eq!(p.page(Vec::new()).next, None);
    }
}
