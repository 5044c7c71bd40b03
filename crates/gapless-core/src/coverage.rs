//! Latest-wins ledger state.

use crate::{EventKind, Instant, Interval, IntervalSet};

/// Coverage of one asset: the events applied in sequence order, where the
/// latest event whose interval contains an instant decides whether that
/// instant is covered.
///
/// # Properties
///
/// - Applying a `landed` event is a union with its interval and applying a
///   `retracted` one a difference, so after any sequence of events an instant
///   is covered exactly when the last event containing it is `landed`
///   (SPEC §1, "coverage"). With only `landed` events this is the union.
/// - The state is one [`IntervalSet`]: applying an event is as cheap as an
///   insert or a remove, and reports are O(log n + k).
///
/// # Example
///
/// ```
/// use gapless_core::{Coverage, EventKind, Interval};
///
/// let iv = |a, b| Interval::from_micros(a, b).unwrap();
/// let mut cov = Coverage::new();
/// cov.apply(EventKind::Landed, iv(0, 60));
/// cov.apply(EventKind::Retracted, iv(10, 40));
/// cov.apply(EventKind::Landed, iv(15, 30));
/// let report = cov.report(iv(0, 60));
/// assert!(!report.covered);
/// assert_eq!(report.covered_ratio, 0.75);
/// assert_eq!(report.missing, [iv(10, 15), iv(30, 40)]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    set: IntervalSet,
}

/// The coverage answer for one range.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CoverageReport {
    /// No gap in the range.
    pub covered: bool,
    /// Covered share of the range, 0.0 to 1.0: covered microseconds divided by
    /// the range's microseconds, rounded once (see [`CoverageReport::ratio`]).
    pub covered_ratio: f64,
    /// The gaps, in order.
    pub missing: Vec<Interval>,
}

impl CoverageReport {
    /// The report of `range` against the covered instants `set`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{CoverageReport, Interval, IntervalSet};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let set = IntervalSet::from_intervals([iv(0, 1425)]);
    /// let report = CoverageReport::of(&set, iv(0, 1440));
    /// assert_eq!(report.covered_ratio, 0.9895833333333334);
    /// assert_eq!(report.missing, [iv(1425, 1440)]);
    /// ```
    pub fn of(set: &IntervalSet, range: Interval) -> CoverageReport {
        let missing = set.gaps(range);
        let missing_micros: i64 = missing.iter().map(|g| g.len_micros()).sum();
        CoverageReport {
            covered: missing.is_empty(),
            covered_ratio: Self::ratio(range.len_micros() - missing_micros, range.len_micros()),
            missing,
        }
    }

    /// `covered / total` as the `f64` nearest to the exact quotient, like
    /// Python's `covered / total` on integers.
    ///
    /// `covered as f64 / total as f64` rounds three times once the operands pass
    /// 2^53 µs (about 285 years), so the quotient is computed in integers and
    /// rounded once.
    ///
    /// # Properties
    ///
    /// For `0 <= covered <= total` and `total > 0`: the result is in
    /// `0.0..=1.0`, monotone in `covered`, and depends only on the quotient
    /// (`ratio(c * k, t * k) == ratio(c, t)`). Like Python's, it can round to
    /// `1.0` when less than 2^-54 of the range is missing (a microsecond in
    /// more than 570 years): [`CoverageReport::covered`] is the exact answer.
    ///
    /// # Panics
    ///
    /// When `total <= 0` or `covered` is outside `0..=total`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::CoverageReport;
    ///
    /// assert_eq!(CoverageReport::ratio(1425, 1440), 0.9895833333333334);
    /// assert_eq!(CoverageReport::ratio(0, 7), 0.0);
    /// assert_eq!(CoverageReport::ratio(1 << 55, 3 << 55), 1.0 / 3.0);
    /// ```
    pub fn ratio(covered: i64, total: i64) -> f64 {
        assert!(
            total > 0 && (0..=total).contains(&covered),
            "covered {covered} of total {total}"
        );
        if covered == 0 {
            return 0.0;
        }
        let (c, t) = (covered as u128, total as u128);
        // Scale so the integer quotient has 56 or 57 significant bits: two more
        // than an f64 keeps, so a nonzero remainder can be folded into the lowest
        // bit ("sticky") without touching the rounding decision. c < 2^63 and
        // t < 2^63, so c << shift < 2^(56 + 63) fits in u128.
        let shift = 55 + (128 - t.leading_zeros()) - (128 - c.leading_zeros()) + 1;
        let scaled = c << shift;
        let (q, r) = (scaled / t, scaled % t);
        let q = q | u128::from(r != 0);
        // u128 -> f64 rounds to nearest, ties to even; dividing by 2^shift is
        // exact (shift <= 120, far from subnormals).
        (q as f64) / 2f64.powi(shift as i32)
    }
}

impl Coverage {
    /// No events yet: nothing covered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Coverage whose covered instants are `set` (e.g. loaded from storage).
    pub fn from_set(set: IntervalSet) -> Self {
        Coverage { set }
    }

    /// Applies the next event in sequence order: `landed` covers `iv`,
    /// `retracted` uncovers it, whatever earlier events said.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Coverage, EventKind, Interval};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let mut cov = Coverage::new();
    /// cov.apply(EventKind::Retracted, iv(0, 10)); // nothing to retract yet
    /// cov.apply(EventKind::Landed, iv(0, 10));
    /// assert!(cov.report(iv(0, 10)).covered);
    /// ```
    pub fn apply(&mut self, kind: EventKind, iv: Interval) {
        match kind {
            EventKind::Landed => self.set.insert(iv),
            EventKind::Retracted => self.set.remove(iv),
        }
    }

    /// The covered instants.
    pub fn set(&self) -> &IntervalSet {
        &self.set
    }

    /// The covered instants, by value.
    pub fn into_set(self) -> IntervalSet {
        self.set
    }

    /// Whether `range` is covered, its covered ratio and its gaps.
    /// O(log n + k) for k gaps.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Coverage, EventKind, Interval};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let mut cov = Coverage::new();
    /// cov.apply(EventKind::Landed, iv(0, 20));
    /// let report = cov.report(iv(0, 30));
    /// assert_eq!((report.covered, report.missing), (false, vec![iv(20, 30)]));
    /// assert_eq!(report.covered_ratio, 2.0 / 3.0);
    /// ```
    pub fn report(&self, range: Interval) -> CoverageReport {
        CoverageReport::of(&self.set, range)
    }

    /// "Complete up to": the end of the covered run that contains `origin`,
    /// or `origin` itself when it is not covered. O(log n).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Coverage, EventKind, Instant, Interval};
    ///
    /// let iv = |a, b| Interval::from_micros(a, b).unwrap();
    /// let t = |m| Instant::from_micros(m).unwrap();
    /// let mut cov = Coverage::new();
    /// cov.apply(EventKind::Landed, iv(0, 10));
    /// cov.apply(EventKind::Landed, iv(10, 25)); // touching: one run
    /// assert_eq!(cov.frontier(t(3)), t(25));
    /// assert_eq!(cov.frontier(t(25)), t(25)); // not covered
    /// ```
    pub fn frontier(&self, origin: Instant) -> Instant {
        self.set.run_containing(origin).map_or(origin, |r| r.end())
    }
}
