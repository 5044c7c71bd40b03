//! Coverage summarised to equal parts of a range: what a picture of a
//! year needs, without the runs or the events themselves.

use crate::{Interval, IntervalSet};

/// One equal part of a range, with how much of it is covered, retracted
/// (the latest event there is a retraction) and missing (no event has ever
/// covered it): the three add up to its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// The part of the range.
    pub range: Interval,
    /// Covered microseconds.
    pub covered_us: i64,
    /// Microseconds whose latest event is a retraction.
    pub retracted_us: i64,
}

impl Bucket {
    /// Microseconds no event has ever covered.
    pub fn missing_us(&self) -> i64 {
        self.range.len_micros() - self.covered_us - self.retracted_us
    }
}

/// The bounds of `range` cut into `n` equal parts (`n` at least 1; at most
/// one part per microsecond): part `i` starts at `start + ⌊i·len/n⌋`, so
/// the lengths differ by at most one microsecond and the last part ends at
/// `range.end()`.
///
/// # Example
///
/// ```
/// use gapless_core::{bucket_bounds, Interval};
///
/// let iv = |a, b| Interval::from_micros(a, b).unwrap();
/// assert_eq!(bucket_bounds(iv(0, 10), 3), [iv(0, 3), iv(3, 6), iv(6, 10)]);
/// assert_eq!(bucket_bounds(iv(0, 2), 5), [iv(0, 1), iv(1, 2)]);
/// ```
pub fn bucket_bounds(range: Interval, n: usize) -> Vec<Interval> {
    let len = range.len_micros();
    let n = (n.max(1) as i64).min(len);
    let start = range.start().as_micros();
    // i·len reaches 10^4 · 3·10^17: beyond i64.
    let at = |i: i64| start + (i128::from(i) * i128::from(len) / i128::from(n)) as i64;
    (0..n)
        .map(|i| Interval::from_micros(at(i), at(i + 1)).expect("parts are at least 1 µs long"))
        .collect()
}

/// `range` cut into `n` equal parts (as [`bucket_bounds`]), each with the
/// measure of `covered` in it and of `retractions` outside `covered`.
///
/// `covered` is the asset's coverage and `retractions` the union of its
/// retracted events' intervals, both around `range` (runs may reach past
/// it). An instant under some retraction and not covered has a retraction
/// as its latest event: a landing after it would cover it. O(n + runs).
///
/// # Example
///
/// ```
/// use gapless_core::{buckets, Interval, IntervalSet};
///
/// let iv = |a, b| Interval::from_micros(a, b).unwrap();
/// let covered = IntervalSet::from_intervals([iv(0, 4), iv(8, 10)]);
/// let retracted = IntervalSet::from_intervals([iv(3, 6)]);
/// let b = buckets(&covered, &retracted, iv(0, 10), 2);
/// assert_eq!((b[0].covered_us, b[0].retracted_us, b[0].missing_us()), (4, 1, 0));
/// assert_eq!((b[1].covered_us, b[1].retracted_us, b[1].missing_us()), (2, 1, 2));
/// ```
pub fn buckets(
    covered: &IntervalSet,
    retractions: &IntervalSet,
    range: Interval,
    n: usize,
) -> Vec<Bucket> {
    let bounds = bucket_bounds(range, n);
    let covered_us = spread(covered.runs_overlapping(range), &bounds);
    let retracted = if retractions.is_empty() {
        vec![0; bounds.len()]
    } else {
        let outside = covered.complement(range);
        let only = IntervalSet::intersection([retractions, &outside]);
        spread(only.runs_overlapping(range), &bounds)
    };
    bounds
        .into_iter()
        .zip(covered_us.into_iter().zip(retracted))
        .map(|(range, (covered_us, retracted_us))| Bucket {
            range,
            covered_us,
            retracted_us,
        })
        .collect()
}

/// The microseconds of `runs` (sorted, disjoint) in each of `bounds`
/// (contiguous, in order): one walk of both.
fn spread(runs: impl Iterator<Item = Interval>, bounds: &[Interval]) -> Vec<i64> {
    let mut out = vec![0; bounds.len()];
    let (Some(first), Some(last)) = (bounds.first(), bounds.last()) else {
        return out;
    };
    let mut i = 0;
    for run in runs {
        let mut s = run.start().max(first.start());
        let e = run.end().min(last.end());
        while s < e {
            while bounds[i].end() <= s {
                i += 1;
            }
            let part_end = e.min(bounds[i].end());
            out[i] += part_end.as_micros() - s.as_micros();
            s = part_end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Coverage, EventKind};
    use proptest::prelude::*;

    fn iv(a: i64, b: i64) -> Interval {
        Interval::from_micros(a, b).unwrap()
    }

    #[test]
    fn bounds_cover_the_range_in_equal_parts() {
        let b = bucket_bounds(iv(-7, 1_000_003), 7);
        assert_eq!(b.len(), 7);
        assert_eq!(b[0].start().as_micros(), -7);
        assert_eq!(b[6].end().as_micros(), 1_000_003);
        assert!(b.windows(2).all(|w| w[0].end() == w[1].start()));
        let lens: Vec<i64> = b.iter().map(|p| p.len_micros()).collect();
        assert!(lens.iter().max().unwrap() - lens.iter().min().unwrap() <= 1);
        // A range of the whole calendar in ten thousand parts.
        let all = Interval::new(crate::Instant::MIN, crate::Instant::MAX).unwrap();
        let b = bucket_bounds(all, 10_000);
        assert_eq!((b.len(), b[9_999].end()), (10_000, all.end()));
    }

    proptest! {
        /// Against a painted timeline: each microsecond's latest event
        /// decides its state, and each bucket counts its own microseconds.
        #[test]
        fn buckets_match_a_painted_timeline(
            events in prop::collection::vec((0i64..60, 1i64..20, any::<bool>()), 0..25),
            start in -5i64..40,
            len in 1i64..80,
            n in 1usize..100,
        ) {
            let range = iv(start, start + len);
            let mut coverage = Coverage::new();
            let mut retractions = IntervalSet::new();
            // 0: never, 1: covered, 2: retracted.
            let mut paint = [0u8; 130];
            for &(s, l, landed) in &events {
                let kind = if landed { EventKind::Landed } else { EventKind::Retracted };
                coverage.apply(kind, iv(s, s + l));
                if !landed {
                    retractions.insert(iv(s, s + l));
                }
                for t in s..s + l {
                    paint[(t + 5) as usize] = if landed { 1 } else { 2 };
                }
            }
            let got = buckets(coverage.set(), &retractions, range, n);
            let parts = (n as i64).min(len);
            prop_assert_eq!(got.len() as i64, parts);
            for (i, b) in got.iter().enumerate() {
                let (lo, hi) = (start + i as i64 * len / parts, start + (i as i64 + 1) * len / parts);
                prop_assert_eq!(b.range, iv(lo, hi));
                let count = |state| (lo..hi).filter(|&t| paint[(t + 5) as usize] == state).count() as i64;
                prop_assert_eq!(b.covered_us, count(1));
                prop_assert_eq!(b.retracted_us, count(2));
                prop_assert_eq!(b.missing_us(), count(0));
            }
        }
    }
}
