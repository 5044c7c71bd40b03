//! Sorted, disjoint, non-adjacent runs of instants.
// STUB: implemented by the interval-set work (see issue 2). Signatures are the
// contract other crates code against.

use crate::{Instant, Interval, Result};

/// A set of instants kept as sorted, disjoint, non-adjacent runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntervalSet {
    runs: Vec<Interval>,
}

impl IntervalSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Checked constructor for runs from untrusted input (e.g. storage):
    /// errors unless sorted, disjoint and non-adjacent.
    pub fn from_sorted_runs(runs: Vec<Interval>) -> Result<Self> {
        todo!("{runs:?}")
    }
    /// Bulk union of any intervals in any order.
    pub fn from_intervals(intervals: impl IntoIterator<Item = Interval>) -> Self {
        let _ = intervals.into_iter();
        todo!()
    }
    /// Union with one interval.
    pub fn insert(&mut self, iv: Interval) {
        todo!("{iv}")
    }
    /// Difference with one interval.
    pub fn remove(&mut self, iv: Interval) {
        todo!("{iv}")
    }
    /// The runs in order.
    pub fn runs(&self) -> impl Iterator<Item = Interval> + '_ {
        self.runs.iter().copied()
    }
    /// The runs that overlap `range`, unclipped, in order.
    pub fn runs_overlapping(&self, range: Interval) -> impl Iterator<Item = Interval> + '_ {
        let _ = range;
        self.runs.iter().copied()
    }
    /// Number of runs.
    pub fn run_count(&self) -> usize {
        self.runs.len()
    }
    /// No instant in the set.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
    /// Total microseconds in the set.
    pub fn measure(&self) -> i128 {
        todo!()
    }
    /// Microseconds of `range` in the set.
    pub fn covered_micros(&self, range: Interval) -> i64 {
        todo!("{range}")
    }
    /// The maximal parts of `range` not in the set, in order.
    pub fn gaps(&self, range: Interval) -> Vec<Interval> {
        todo!("{range}")
    }
    /// The set's complement within `range`.
    pub fn complement(&self, range: Interval) -> IntervalSet {
        todo!("{range}")
    }
    /// The instants in every one of `sets` (empty for no sets).
    pub fn intersection<'a>(sets: impl IntoIterator<Item = &'a IntervalSet>) -> IntervalSet {
        let _ = sets.into_iter();
        todo!()
    }
    /// The run that contains `t`.
    pub fn run_containing(&self, t: Instant) -> Option<Interval> {
        todo!("{t}")
    }
}
