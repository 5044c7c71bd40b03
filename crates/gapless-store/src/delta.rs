//! What one append does to one asset, the same in both backends: its new
//! events in batch order, compacted (for the coverage replay), how many,
//! the longest and their hull (for the asset's statistics), and from them
//! the coverage rows to change ([`crate::runs`]).

use gapless_core::{EventKind, Interval};

use crate::codec::Encoded;
use crate::runs::{changes, RunChanges};
use crate::Result;

/// The new (not duplicate) events of one batch or group for one asset.
#[derive(Debug)]
pub(crate) struct AssetDelta {
    /// The asset's id in the backend.
    pub(crate) id: i64,
    /// The new events, in batch order, compacted: an event of the same
    /// kind as the one before it that overlaps or touches it is merged
    /// into it, which paints the timeline as the two would. A contiguous
    /// backfill of millions of events is then a handful of entries, and
    /// the memory of an append does not grow with its size.
    pub(crate) events: Vec<(EventKind, Interval)>,
    /// How many new events (before compaction).
    count: i64,
    /// The longest new event, in microseconds.
    pub(crate) max_len: i64,
    /// The earliest start of the new events.
    pub(crate) min_start: i64,
    /// The latest end of the new events.
    pub(crate) max_end: i64,
}

impl AssetDelta {
    /// No new events yet for asset `id`.
    pub(crate) fn new(id: i64) -> AssetDelta {
        AssetDelta {
            id,
            events: Vec::new(),
            count: 0,
            max_len: 0,
            min_start: i64::MAX,
            max_end: i64::MIN,
        }
    }

    /// Count one new event, `stored` its columns.
    #[inline]
    pub(crate) fn push(&mut self, kind: EventKind, interval: Interval, stored: &Encoded<'_>) {
        self.count += 1;
        match self.events.last_mut() {
            Some((k, last))
                if *k == kind
                    && last.start() <= interval.end()
                    && interval.start() <= last.end() =>
            {
                *last = Interval::new(
                    last.start().min(interval.start()),
                    last.end().max(interval.end()),
                )
                .expect("the hull of two intervals is one");
            }
            _ => self.events.push((kind, interval)),
        }
        self.max_len = self.max_len.max(stored.len());
        self.min_start = self.min_start.min(stored.start);
        self.max_end = self.max_end.max(stored.end);
    }

    /// How many new events (for the asset's event count).
    pub(crate) fn count(&self) -> i64 {
        self.count
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The coverage rows to change, given the stored runs (in start order)
    /// that touch `[min_start, max_end]` (adjacent ones included).
    ///
    /// # Errors
    ///
    /// A fault when the stored runs are damaged.
    pub(crate) fn run_changes(&self, stored: &[(i64, i64)]) -> Result<RunChanges> {
        changes(stored, &self.events)
    }
}
