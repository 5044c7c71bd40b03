//! Latest-wins ledger state.
// STUB: implemented by the interval-set work (see issue 2).

use crate::{EventKind, Instant, Interval, IntervalSet};

/// Coverage of one asset: events applied in sequence order, the latest event
/// containing an instant decides whether it is covered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    set: IntervalSet,
}

/// The coverage answer for one range.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CoverageReport {
    /// No gap in the range.
    pub covered: bool,
    /// Covered share of the range, 0.0 to 1.0.
    pub covered_ratio: f64,
    /// The gaps, in order.
    pub missing: Vec<Interval>,
}

impl Coverage {
    /// No events yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Coverage whose covered instants are `set`.
    pub fn from_set(set: IntervalSet) -> Self {
        Coverage { set }
    }
    /// Apply the next event in sequence order.
    pub fn apply(&mut self, kind: EventKind, iv: Interval) {
        todo!("{kind:?} {iv}")
    }
    /// The covered instants.
    pub fn set(&self) -> &IntervalSet {
        &self.set
    }
    /// Coverage, ratio and gaps of `range`.
    pub fn report(&self, range: Interval) -> CoverageReport {
        todo!("{range}")
    }
    /// The end of the covered run that starts at (contains) `origin`, or
    /// `origin` when it is not covered.
    pub fn frontier(&self, origin: Instant) -> Instant {
        todo!("{origin}")
    }
}
