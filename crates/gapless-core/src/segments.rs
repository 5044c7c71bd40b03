//! Which event is the latest on each maximal part of a range.

use std::collections::{BTreeMap, BinaryHeap};

use crate::{EventKind, Instant, Interval};

/// One event as [`segments`] needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentSource {
    /// The ledger's sequence number: higher is later.
    pub seq: i64,
    /// The event's interval.
    pub interval: Interval,
    /// Landed or retracted.
    pub kind: EventKind,
}

/// A maximal part of a range on which one event is the latest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// The part, clipped to the queried range.
    pub interval: Interval,
    /// The winning event's kind.
    pub kind: EventKind,
    /// The winning event's sequence number.
    pub seq: i64,
}

/// The segments of `range`: the maximal parts of it on which one event is the
/// latest (highest `seq`) among those containing each instant, clipped to
/// `range`, in time order.
///
/// `events` must hold every event that overlaps `range`, in any order; events
/// outside it are ignored. Parts of `range` no event covers have no segment.
/// Retracted winners are segments too (of kind `retracted`): they say which
/// event made that part a gap.
///
/// # Properties
///
/// - Segments are in order, disjoint, each inside `range`, and two adjacent
///   segments never have the same winner (they would be one segment).
/// - The `landed` segments are exactly the [`Coverage`](crate::Coverage) of
///   the same events within `range`.
/// - Sequence numbers are unique in a ledger; should two events share one, the
///   one later in `events` wins, as if applied in slice order.
/// - O(m log m) for m events: a sweep over the event boundaries with a heap
///   of the events open at each point, latest on top.
///
/// # Example
///
/// The conformance case "retraction then partial re-landing":
///
/// ```
/// use gapless_core::{segments, EventKind, Interval, SegmentSource};
///
/// let iv = |a, b| Interval::from_micros(a, b).unwrap();
/// let ev = |seq, interval, kind| SegmentSource { seq, interval, kind };
/// let events = [
///     ev(3, iv(15, 30), EventKind::Landed),
///     ev(1, iv(0, 60), EventKind::Landed),
///     ev(2, iv(10, 40), EventKind::Retracted),
/// ];
/// let got: Vec<_> = segments(&events, iv(0, 60))
///     .iter()
///     .map(|s| (s.interval, s.seq, s.kind))
///     .collect();
/// assert_eq!(got, [
///     (iv(0, 10), 1, EventKind::Landed),
///     (iv(10, 15), 2, EventKind::Retracted),
///     (iv(15, 30), 3, EventKind::Landed),
///     (iv(30, 40), 2, EventKind::Retracted),
///     (iv(40, 60), 1, EventKind::Landed),
/// ]);
/// ```
pub fn segments(events: &[SegmentSource], range: Interval) -> Vec<Segment> {
    // Events clipped to the range, by start: (clipped, index in `events`).
    let mut open: Vec<(Interval, usize)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.interval.intersect(range).map(|iv| (iv, i)))
        .collect();
    open.sort_unstable_by_key(|(iv, _)| iv.start());

    // Every point where the winner may change.
    let mut points: Vec<Instant> = open
        .iter()
        .flat_map(|(iv, _)| [iv.start(), iv.end()])
        .collect();
    points.sort_unstable();
    points.dedup();

    // Max-heap of the events started so far, latest on top: (seq, position in
    // `events`, index in `open`). Ended events are dropped lazily, only when
    // they reach the top: whatever is below the top cannot win anyway.
    let mut heap: BinaryHeap<(i64, usize, usize)> = BinaryHeap::new();
    let mut next = 0;
    let mut out: Vec<Segment> = Vec::new();
    let mut last_winner = usize::MAX;
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        while let Some(&(_, i)) = open.get(next).filter(|(iv, _)| iv.start() <= a) {
            heap.push((events[i].seq, i, next));
            next += 1;
        }
        while heap.peek().is_some_and(|&(_, _, k)| open[k].0.end() <= a) {
            heap.pop();
        }
        let Some(&(seq, i, _)) = heap.peek() else {
            continue;
        };
        match out.last_mut() {
            // The same event again, right after its previous piece: extend.
            Some(last) if last_winner == i && last.interval.end() == a => {
                last.interval = Interval::new(last.interval.start(), b).expect("a < b");
            }
            _ => out.push(Segment {
                interval: Interval::new(a, b).expect("points are sorted and distinct"),
                kind: events[i].kind,
                seq,
            }),
        }
        last_winner = i;
    }
    out
}

/// One page of segments, painted from events streamed in sequence order
/// with memory bounded by the page: [`segments`] of `[start, cut)`, where
/// `cut` is as far towards the range's end as `limit` segments reach.
///
/// Paint the events that overlap the range in sequence order (a later paint
/// wins, as a later event does); the painter keeps the latest-wins map of
/// `[start, cut)` only. Whenever it holds more than `limit` pieces, `cut`
/// moves down to the start of piece `limit + 1` and the pieces from there
/// on are dropped. That stays exact: which event is the latest on a part of
/// the time line depends only on the events restricted to that part, so
/// painting clipped to a smaller range gives that range's segments.
///
/// # Properties
///
/// - [`PagedSegments::finish`] gives exactly `segments(events, [start,
///   cut))` with at most `limit` segments, and `next = cut` when
///   `cut < end` (the next page starts there), `None` on the last page.
/// - The pages from `start`, then from each `next`, concatenated, are
///   [`segments`] of the whole range, except that a segment reaching past
///   a page's `cut` is split there: its two parts (same event) end one page
///   and start the next.
/// - Memory is O(limit) pieces, whatever the number of events; each paint
///   is O(log limit) plus the pieces it replaces.
#[derive(Debug, Clone)]
pub struct PagedSegments<T> {
    start: Instant,
    cut: Instant,
    end: Instant,
    limit: usize,
    /// Disjoint pieces by start: (end, seq, kind, the caller's tag).
    pieces: BTreeMap<Instant, (Instant, i64, EventKind, T)>,
}

impl<T: Clone> PagedSegments<T> {
    /// A page of at most `limit` segments (at least one) of `range`.
    pub fn new(range: Interval, limit: usize) -> Self {
        PagedSegments {
            start: range.start(),
            cut: range.end(),
            end: range.end(),
            limit: limit.max(1),
            pieces: BTreeMap::new(),
        }
    }

    /// The end of the part still painted: events that do not overlap
    /// `[start, cut)` change nothing, so a reader may skip them.
    pub fn cut(&self) -> Instant {
        self.cut
    }

    /// Paint one event, later in sequence than every event painted before
    /// (it wins where it overlaps them), carrying `tag` (e.g. its id).
    pub fn paint(&mut self, seq: i64, interval: Interval, kind: EventKind, tag: T) {
        let a = interval.start().max(self.start);
        let b = interval.end().min(self.cut);
        if a >= b {
            return;
        }
        // The piece that starts before `a` and reaches into it, then every
        // piece that starts inside [a, b).
        let mut hit: Vec<Instant> = self
            .pieces
            .range(..a)
            .next_back()
            .filter(|(_, p)| p.0 > a)
            .map(|(s, _)| *s)
            .into_iter()
            .collect();
        hit.extend(self.pieces.range(a..b).map(|(s, _)| *s));
        for s in hit {
            let (e, pseq, pkind, ptag) = self.pieces.remove(&s).expect("a listed piece");
            if s < a {
                self.pieces.insert(s, (a, pseq, pkind, ptag.clone()));
            }
            if e > b {
                self.pieces.insert(b, (e, pseq, pkind, ptag));
            }
        }
        self.pieces.insert(a, (b, seq, kind, tag));
        while self.pieces.len() > self.limit {
            let (s, _) = self.pieces.pop_last().expect("more than limit pieces");
            self.cut = s;
        }
    }

    /// The page: its segments in time order, each with its event's tag, and
    /// where the next page starts (`None`: this is the last).
    pub fn finish(self) -> (Vec<(Segment, T)>, Option<Instant>) {
        let next = (self.cut < self.end).then_some(self.cut);
        let segments = self
            .pieces
            .into_iter()
            .map(|(s, (e, seq, kind, tag))| {
                let interval = Interval::new(s, e).expect("pieces are not empty");
                (
                    Segment {
                        interval,
                        kind,
                        seq,
                    },
                    tag,
                )
            })
            .collect();
        (segments, next)
    }
}
