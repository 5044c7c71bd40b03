//! Which event is the latest on each maximal part of a range.

use std::collections::BinaryHeap;

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
