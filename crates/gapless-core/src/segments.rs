//! Which event is the latest on each maximal part of a range.
// STUB: implemented by the interval-set work (see issue 2).

use crate::{EventKind, Interval};

/// One event as segments needs it.
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

/// The segments of `range`, in time order, given every event that overlaps it
/// (in any order). Parts of the range no event covers have no segment.
pub fn segments(events: &[SegmentSource], range: Interval) -> Vec<Segment> {
    todo!("{events:?} {range}")
}
