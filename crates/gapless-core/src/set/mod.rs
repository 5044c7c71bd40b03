//! Sorted, disjoint, non-adjacent runs of instants.
//!
//! # Design
//!
//! The runs live in sorted chunks of a few hundred (`Runs`): queries are
//! binary searches over the chunks' last ends, then within one contiguous
//! chunk, which beats a tree's pointer chasing on every read, and an edit in
//! the middle moves at most one chunk, not every run after it. Inserts take
//! one of two paths:
//!
//! - **eager**: when the interval lands at or near the end (what streaming
//!   producers do almost always), or only extends one run in place, it is
//!   applied to the runs at once: O(log n) plus at most a chunk's memmove.
//! - **buffered**: otherwise it is pushed to an unsorted pending buffer in
//!   O(1). The buffer is folded into the runs (sort it, by radix while it
//!   fits the cache, then one linear merge) when it grows as large as the
//!   runs, which keeps inserts amortized O(log k), and by the first query
//!   that needs the runs.
//!
//! When inserts and queries alternate, the first insert after a query is
//! eager wherever it lands: a chunk's memmove is far cheaper than a query
//! copying all runs to merge one buffered interval.
//!
//! Queries take `&self`, so the first query after buffered inserts cannot
//! fold the buffer in place: it builds the merged runs once into a
//! [`OnceLock`] cache, which every later query reuses and the next `&mut`
//! operation adopts as the runs (a move, no copy). The sorted-disjoint
//! invariant is therefore never visible as broken: every read goes through
//! the merged view.
//!
//! This file is the [`IntervalSet`] API and its buffering; the chunked run
//! storage is `runs.rs`, the radix sort and merge that fold the buffer in
//! are `merge.rs`.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::{Error, Instant, Interval, Result};

mod merge;
mod runs;

use merge::merge_into;
use runs::Runs;

/// An interval from bounds the caller has already ordered.
///
/// Every call site has just established `start < end`; the check stays (the
/// workspace forbids `unsafe`) but is a predictable branch.
#[inline]
fn span(start: Instant, end: Instant) -> Interval {
    Interval::new(start, end).expect("start < end by construction")
}

/// Tuning of the eager/buffered split. Only tests change it (see
/// [`IntervalSet::with_buffer_limits`]); the defaults were chosen by the
/// `index` bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Limits {
    /// An insert that would memmove at most this many runs is eager.
    eager_tail: usize,
    /// The pending buffer is folded in once it holds at least this many
    /// intervals and at least as many as there are runs.
    compact_at: usize,
    /// Runs per chunk when building; chunks split past twice this.
    chunk: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            eager_tail: 32,
            compact_at: 1 << 16,
            chunk: 256,
        }
    }
}

/// A set of instants kept as sorted, disjoint, non-adjacent runs.
///
/// Touching intervals merge: `[a, b)` and `[b, c)` make the one run `[a, c)`.
///
/// # Properties
///
/// - [`runs`](IntervalSet::runs) yields runs in increasing order, each ending
///   strictly before the next one starts (no overlap, no adjacency). So two
///   sets with the same instants have the same runs, and `==` compares
///   instants.
/// - The only ways to build a set are the checked [`from_sorted_runs`],
///   the normalizing [`from_intervals`], [`insert`], [`remove`] and the set
///   operations, so the invariant is carried by the type.
/// - Queries take `&self` and are O(log n + k) for k runs in the answer.
///   Appends at or near the end are O(1) amortized; inserts anywhere else are
///   O(log k) amortized (buffered, merged on demand).
/// - An insert or remove in the middle moves at most one chunk of a few
///   hundred runs (and, when a chunk splits or empties, the chunk index), so
///   edits and queries can alternate on large sets.
///
/// [`from_sorted_runs`]: IntervalSet::from_sorted_runs
/// [`from_intervals`]: IntervalSet::from_intervals
/// [`insert`]: IntervalSet::insert
/// [`remove`]: IntervalSet::remove
///
/// # Example
///
/// ```
/// use gapless_core::{Interval, IntervalSet};
///
/// let iv = |a, b| Interval::from_micros(a, b).unwrap();
/// let mut set = IntervalSet::new();
/// set.insert(iv(0, 10));
/// set.insert(iv(10, 20)); // touches: merges
/// set.insert(iv(30, 40));
/// set.remove(iv(5, 6));
/// assert_eq!(set.runs().collect::<Vec<_>>(), [iv(0, 5), iv(6, 20), iv(30, 40)]);
/// assert_eq!(set.gaps(iv(0, 50)), [iv(5, 6), iv(20, 30), iv(40, 50)]);
/// ```
#[derive(Default)]
pub struct IntervalSet {
    /// Sorted, disjoint, non-adjacent. The whole set when `pending` is empty.
    runs: Runs,
    /// Inserted intervals not yet merged into `runs`: any order, may overlap.
    pending: Vec<Interval>,
    /// `runs ∪ pending`, built by the first query after a buffered insert.
    /// Only ever set while `pending` is not empty (so the hot append path
    /// need not look at it).
    merged: OnceLock<Runs>,
    /// Set by every query, cleared by an insert that used it: whether the
    /// last operation was a read. Then the next insert in the middle is
    /// applied eagerly, because the query after it would otherwise copy all
    /// runs to merge one buffered interval: with inserts and queries
    /// alternating, a chunk's memmove per insert is the cheaper price.
    /// Atomic only so that queries can take `&self` and the set stays `Sync`.
    queried: AtomicBool,
    limits: Limits,
}

impl IntervalSet {
    /// The empty set.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::IntervalSet;
    ///
    /// assert!(IntervalSet::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty set with its own buffering limits: an insert is applied at
    /// once when it would move at most `eager_tail` runs, the pending buffer
    /// is merged in once it holds `compact_at` intervals (and as many as
    /// there are runs), and runs are stored in chunks of about `chunk`.
    ///
    /// A testing knob: small limits drive small sets through the buffered
    /// paths that the defaults reserve for large ones. Results never depend on
    /// the limits, only speed does.
    #[doc(hidden)]
    pub fn with_buffer_limits(eager_tail: usize, compact_at: usize, chunk: usize) -> Self {
        IntervalSet {
            limits: Limits {
                eager_tail,
                compact_at: compact_at.max(1),
                chunk: chunk.max(1),
            },
            ..Self::default()
        }
    }

    /// The set of `runs` from untrusted input (storage, the network), checked.
    ///
    /// # Errors
    ///
    /// When a run does not start after the previous run ends: the message
    /// names the offending run by position and says whether it is out of
    /// order, overlaps or touches its predecessor (touching runs must be
    /// given merged).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_sorted_runs(vec![iv(0, 5), iv(6, 9)]).unwrap();
    /// assert_eq!(set.run_count(), 2);
    ///
    /// let err = IntervalSet::from_sorted_runs(vec![iv(0, 5), iv(5, 9)]).unwrap_err();
    /// assert!(err.message().contains("run 1"), "{err}");
    /// assert!(err.message().contains("touches"), "{err}");
    /// ```
    pub fn from_sorted_runs(runs: Vec<Interval>) -> Result<Self> {
        for (i, pair) in runs.windows(2).enumerate() {
            let (prev, next) = (pair[0], pair[1]);
            let (why, hint) = if next.start() < prev.start() {
                ("starts before", ": runs must be sorted")
            } else if next.start() < prev.end() {
                ("overlaps", ": runs must be disjoint")
            } else if next.start() == prev.end() {
                ("touches", ": adjacent runs must be given merged")
            } else {
                continue;
            };
            return Err(Error::new(format!(
                "invalid interval set: run {} {next} {why} run {i} {prev}{hint}",
                i + 1
            )));
        }
        Ok(IntervalSet {
            runs: Runs::from_vec(runs, Limits::default().chunk),
            ..Self::default()
        })
    }

    /// The union of `intervals`, given in any order, overlapping or not.
    ///
    /// # Properties
    ///
    /// Equal to inserting them one by one, and as fast: O(n) for sorted
    /// input, O(n log n) otherwise.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(5, 10), iv(0, 5), iv(20, 30), iv(8, 12)]);
    /// assert_eq!(set.runs().collect::<Vec<_>>(), [iv(0, 12), iv(20, 30)]);
    /// ```
    pub fn from_intervals(intervals: impl IntoIterator<Item = Interval>) -> Self {
        // The insert paths are the fastest bulk load too: sorted input takes
        // the O(1) append path, unsorted input is sorted in cache-sized
        // chunks by the buffer's compactions.
        let mut set = IntervalSet::new();
        set.extend(intervals);
        set.compact();
        set
    }

    /// Adds the instants of `iv` (union).
    ///
    /// # Properties
    ///
    /// O(1) amortized when `iv` starts at or after the start of the last run
    /// (streaming producers extending the end). Elsewhere O(log n) plus at
    /// most a chunk's memmove when it lands near the end, changes a single
    /// run, or follows a query; else O(log k) amortized via the pending
    /// buffer (bulk loads in any order).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let mut set = IntervalSet::new();
    /// set.insert(iv(0, 5));
    /// set.insert(iv(5, 10));
    /// assert_eq!(set.runs().collect::<Vec<_>>(), [iv(0, 10)]);
    /// ```
    pub fn insert(&mut self, iv: Interval) {
        if !self.pending.is_empty() {
            // A query may have merged the buffer already: take that over.
            self.adopt_merged();
            if !self.pending.is_empty() {
                // Once buffering, keep buffering: the buffer is merged whole.
                self.push_pending(iv);
                return;
            }
        }
        // Fast path: at or after the start of the last run.
        let chunk = self.limits.chunk;
        if self.runs.try_append(iv, chunk) {
            return;
        }
        // Runs [a, b) overlap or touch `iv`; `p` is the first run ending
        // after it, part of the merge when it starts at or before its end.
        let a = self.runs.seek(iv.start(), true);
        let p = self.runs.seek(iv.end(), false);
        let (b, end) = match self.runs.get(p) {
            Some(r) if r.start() <= iv.end() => (self.runs.next_pos(p), r.end()),
            _ => (p, iv.end()),
        };
        let merged = match self.runs.get(a).filter(|_| a != b) {
            Some(first) => span(first.start().min(iv.start()), end),
            None => iv,
        };
        let in_place = a != b && self.runs.next_pos(a) == b;
        if in_place
            || self.runs.tail_from(a) <= self.limits.eager_tail
            || std::mem::take(self.queried.get_mut())
        {
            self.runs.splice(a, b, &[merged], chunk);
        } else {
            self.push_pending(iv);
        }
    }

    /// Removes the instants of `iv` (difference).
    ///
    /// # Properties
    ///
    /// O(log n) plus at most a chunk's memmove. It first merges any buffered
    /// inserts, because a removal must not be undone by an earlier insert:
    /// the first removal after a bulk load pays for that merge.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let mut set = IntervalSet::from_intervals([iv(0, 10)]);
    /// set.remove(iv(3, 4));
    /// set.remove(iv(9, 20));
    /// assert_eq!(set.runs().collect::<Vec<_>>(), [iv(0, 3), iv(4, 9)]);
    /// ```
    pub fn remove(&mut self, iv: Interval) {
        self.compact();
        // Runs [a, b) share instants with `iv`; touching runs are untouched.
        // `p` is the first run ending after `iv`: in [a, b) when it starts
        // inside `iv`, and then the only one reaching past it.
        let a = self.runs.seek(iv.start(), false);
        let p = self.runs.seek(iv.end(), false);
        let (b, right) = match self.runs.get(p) {
            Some(r) if r.start() < iv.end() => {
                (self.runs.next_pos(p), Some(span(iv.end(), r.end())))
            }
            _ => (p, None),
        };
        if a == b {
            return;
        }
        let first = self.runs.get(a).expect("a is before b");
        let left = (first.start() < iv.start()).then(|| span(first.start(), iv.start()));
        let pieces: Vec<Interval> = left.into_iter().chain(right).collect();
        self.runs.splice(a, b, &pieces, self.limits.chunk);
    }

    /// The runs in increasing order.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(7, 9), iv(0, 2)]);
    /// assert_eq!(set.runs().collect::<Vec<_>>(), [iv(0, 2), iv(7, 9)]);
    /// ```
    pub fn runs(&self) -> impl Iterator<Item = Interval> + '_ {
        self.view().iter()
    }

    /// The runs that share at least one instant with `range`, unclipped, in
    /// order. O(log n + k).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(0, 10), iv(20, 30), iv(40, 50)]);
    /// let hit: Vec<_> = set.runs_overlapping(iv(5, 20)).collect();
    /// assert_eq!(hit, [iv(0, 10)]); // [20, 30) only touches the range
    /// ```
    pub fn runs_overlapping(&self, range: Interval) -> impl Iterator<Item = Interval> + '_ {
        let runs = self.view();
        runs.iter_from(runs.seek(range.start(), false))
            .take_while(move |r| r.start() < range.end())
    }

    /// Number of runs.
    pub fn run_count(&self) -> usize {
        self.view().len()
    }

    /// Whether the set has no instant.
    pub fn is_empty(&self) -> bool {
        self.runs.len() == 0 && self.pending.is_empty()
    }

    /// Total microseconds in the set (an `i128`: the runs of 0001–9999 can
    /// sum past `i64` only in theory, but the type makes it impossible).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// assert_eq!(IntervalSet::from_intervals([iv(0, 10), iv(5, 15), iv(20, 21)]).measure(), 16);
    /// ```
    pub fn measure(&self) -> i128 {
        self.view().iter().map(|r| i128::from(r.len_micros())).sum()
    }

    /// Microseconds of `range` that are in the set. O(log n + k).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(0, 10), iv(20, 30)]);
    /// assert_eq!(set.covered_micros(iv(5, 25)), 10);
    /// ```
    pub fn covered_micros(&self, range: Interval) -> i64 {
        self.runs_overlapping(range)
            .map(|r| {
                r.end().min(range.end()).as_micros() - r.start().max(range.start()).as_micros()
            })
            .sum()
    }

    /// The maximal parts of `range` not in the set, in order. O(log n + k).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(10, 20)]);
    /// assert_eq!(set.gaps(iv(0, 30)), [iv(0, 10), iv(20, 30)]);
    /// assert_eq!(set.gaps(iv(12, 18)), []);
    /// assert_eq!(set.gaps(iv(22, 28)), [iv(22, 28)]);
    /// ```
    pub fn gaps(&self, range: Interval) -> Vec<Interval> {
        self.gaps_iter(range).collect()
    }

    /// The same gaps as [`gaps`](Self::gaps), lazily, without allocating:
    /// for callers that only count, sum or test them.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(10, 20), iv(25, 26)]);
    /// let longest = set.gaps_iter(iv(0, 30)).map(|g| g.len_micros()).max();
    /// assert_eq!(longest, Some(10));
    /// ```
    pub fn gaps_iter(&self, range: Interval) -> impl Iterator<Item = Interval> + '_ {
        let mut runs = self.runs_overlapping(range);
        // `None` once the tail gap (if any) has been produced.
        let mut cursor = Some(range.start());
        std::iter::from_fn(move || loop {
            let at = cursor?;
            match runs.next() {
                Some(r) => {
                    cursor = Some(at.max(r.end()));
                    if r.start() > at {
                        return Some(span(at, r.start()));
                    }
                }
                None => {
                    cursor = None;
                    return (at < range.end()).then(|| span(at, range.end()));
                }
            }
        })
    }

    /// The instants of `range` not in the set, as a set. O(log n + k).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(10, 20)]);
    /// let holes = set.complement(iv(0, 30));
    /// assert_eq!(holes.runs().collect::<Vec<_>>(), [iv(0, 10), iv(20, 30)]);
    /// ```
    pub fn complement(&self, range: Interval) -> IntervalSet {
        // Gaps are separated by runs of the set, so never adjacent.
        IntervalSet {
            runs: Runs::from_vec(self.gaps(range), self.limits.chunk),
            ..Self::default()
        }
    }

    /// The instants in every one of `sets`; the empty set for no sets.
    ///
    /// # Properties
    ///
    /// Each step walks the smaller operand and binary-searches the larger:
    /// O(m log n + k), so a small set intersected with a huge one is cheap.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let a = IntervalSet::from_intervals([iv(0, 10), iv(20, 30)]);
    /// let b = IntervalSet::from_intervals([iv(5, 25)]);
    /// let both = IntervalSet::intersection([&a, &b]);
    /// assert_eq!(both.runs().collect::<Vec<_>>(), [iv(5, 10), iv(20, 25)]);
    /// assert!(IntervalSet::intersection([]).is_empty());
    /// ```
    pub fn intersection<'a>(sets: impl IntoIterator<Item = &'a IntervalSet>) -> IntervalSet {
        let mut sets = sets.into_iter();
        let Some(first) = sets.next() else {
            return IntervalSet::new();
        };
        let mut acc: Vec<Interval> = first.runs().collect();
        for set in sets {
            if acc.is_empty() {
                break;
            }
            acc = intersect_runs(&acc, set.view());
        }
        IntervalSet {
            runs: Runs::from_vec(acc, Limits::default().chunk),
            ..Self::default()
        }
    }

    /// The run that contains `t`, if any. O(log n).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Instant, Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let t = |m| Instant::from_micros(m).unwrap();
    /// let set = IntervalSet::from_intervals([iv(0, 10)]);
    /// assert_eq!(set.run_containing(t(0)), Some(iv(0, 10)));
    /// assert_eq!(set.run_containing(t(10)), None); // half-open
    /// ```
    pub fn run_containing(&self, t: Instant) -> Option<Interval> {
        let runs = self.view();
        runs.get(runs.seek(t, false)).filter(|r| r.start() <= t)
    }

    /// Whether `t` is in the set. O(log n).
    pub fn contains(&self, t: Instant) -> bool {
        self.run_containing(t).is_some()
    }

    /// Whether every instant of `range` is in the set. O(log n).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(0, 10)]);
    /// assert!(set.covers(iv(2, 10)));
    /// assert!(!set.covers(iv(2, 11)));
    /// ```
    pub fn covers(&self, range: Interval) -> bool {
        self.run_containing(range.start())
            .is_some_and(|r| range.end() <= r.end())
    }

    /// From the start of the first run to the end of the last, or `None` for
    /// the empty set.
    pub fn span(&self) -> Option<Interval> {
        let runs = self.view();
        Some(span(runs.first()?.start(), runs.last()?.end()))
    }

    /// The sorted runs: `runs` itself, or the cached merge with the buffer.
    fn view(&self) -> &Runs {
        // Load first: readers on many threads then do not all write the flag.
        if !self.queried.load(Ordering::Relaxed) {
            self.queried.store(true, Ordering::Relaxed);
        }
        if self.pending.is_empty() {
            &self.runs
        } else {
            self.merged.get_or_init(|| {
                // `&self` cannot sort the buffer in place: sort a copy.
                let mut pending = self.pending.clone();
                merge_into(&self.runs, &mut pending, self.limits.chunk)
            })
        }
    }

    /// Takes over the merged cache a query built, if any (a move).
    fn adopt_merged(&mut self) {
        if let Some(merged) = self.merged.take() {
            self.runs = merged;
            self.pending.clear();
        }
    }

    fn push_pending(&mut self, iv: Interval) {
        self.pending.push(iv);
        // Fold in once the buffer is as large as the runs: the linear merge
        // then costs at most one step per buffered insert (amortized O(1)),
        // and the buffer never holds more than max(compact_at, runs) items.
        if self.pending.len() >= self.limits.compact_at.max(self.runs.len()) {
            self.compact();
        }
    }

    /// Merges the pending buffer into the runs.
    fn compact(&mut self) {
        self.adopt_merged();
        if !self.pending.is_empty() {
            self.runs = merge_into(&self.runs, &mut self.pending, self.limits.chunk);
            self.pending.clear();
        }
    }
}

/// Intersection of sorted, disjoint, non-adjacent runs: walks the smaller
/// side, binary-searches the larger.
fn intersect_runs(a: &[Interval], b: &Runs) -> Vec<Interval> {
    let mut out = Vec::new();
    // Pieces of one run are split by gaps of the other side, pieces of
    // different runs by gaps of their own side: never adjacent.
    let mut clip = |r: Interval, s: Interval| {
        out.push(span(r.start().max(s.start()), r.end().min(s.end())));
    };
    if a.len() <= b.len() {
        for &r in a {
            for s in b
                .iter_from(b.seek(r.start(), false))
                .take_while(|s| s.start() < r.end())
            {
                clip(r, s);
            }
        }
    } else {
        let mut lo = 0;
        for s in b.iter() {
            lo += a[lo..].partition_point(|r| r.end() <= s.start());
            for &r in a[lo..].iter().take_while(|r| r.start() < s.end()) {
                clip(r, s);
            }
        }
    }
    out
}

impl Clone for IntervalSet {
    /// Clones the merged runs, not the buffer.
    fn clone(&self) -> Self {
        IntervalSet {
            runs: self.view().clone(),
            limits: self.limits,
            ..Self::default()
        }
    }
}

impl PartialEq for IntervalSet {
    /// Same instants (buffering state and limits do not matter).
    fn eq(&self, other: &Self) -> bool {
        self.view().iter().eq(other.view().iter())
    }
}

impl Eq for IntervalSet {}

impl fmt::Debug for IntervalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntervalSet")
            .field("runs", &self.view().iter().collect::<Vec<_>>())
            .finish()
    }
}

impl FromIterator<Interval> for IntervalSet {
    /// Same as [`IntervalSet::from_intervals`].
    fn from_iter<I: IntoIterator<Item = Interval>>(iter: I) -> Self {
        IntervalSet::from_intervals(iter)
    }
}

impl Extend<Interval> for IntervalSet {
    /// Inserts each interval.
    fn extend<I: IntoIterator<Item = Interval>>(&mut self, iter: I) {
        for iv in iter {
            self.insert(iv);
        }
    }
}
