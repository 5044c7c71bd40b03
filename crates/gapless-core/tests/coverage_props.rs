//! Latest-wins `Coverage` against a brute-force model: events painted one by
//! one, in sequence order, onto a timeline of 200 one-µs ticks.

use gapless_core::{
    Coverage, CoverageReport, EventKind, Instant, Interval, IntervalSet, MICROS_PER_MINUTE,
};
use proptest::prelude::*;

mod ticks;

use ticks::{iv, t, ticks, BASE, TICKS};

/// Random tick ranges of up to 12 ticks, now and then longer.
fn interval() -> impl Strategy<Value = (i64, i64)> {
    ticks::interval(12)
}

fn event() -> impl Strategy<Value = (EventKind, (i64, i64))> {
    (
        prop_oneof![3 => Just(EventKind::Landed), 1 => Just(EventKind::Retracted)],
        interval(),
    )
}

/// The model: for each tick, the (seq, kind) of the latest event containing it.
fn paint(events: &[(EventKind, (i64, i64))]) -> Vec<Option<(usize, EventKind)>> {
    let mut line = vec![None; TICKS as usize];
    for (seq, &(kind, (a, b))) in events.iter().enumerate() {
        for x in a..b {
            line[x as usize] = Some((seq, kind));
        }
    }
    line
}

fn covered(line: &[Option<(usize, EventKind)>], x: i64) -> bool {
    (0..TICKS).contains(&x) && matches!(line[x as usize], Some((_, EventKind::Landed)))
}

fn apply_all(mut cov: Coverage, events: &[(EventKind, (i64, i64))]) -> Coverage {
    for &(kind, (a, b)) in events {
        cov.apply(kind, iv(a, b));
    }
    cov
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// report and frontier agree with the painted timeline, whether the set
    /// behind the coverage buffers inserts or not.
    #[test]
    fn latest_wins(events in prop::collection::vec(event(), 0..40), range in interval(),
                   origin in -1..=TICKS, small_limits in any::<bool>()) {
        let line = paint(&events);
        let start = if small_limits { Coverage::from_set(IntervalSet::with_buffer_limits(1, 2, 2)) } else { Coverage::new() };
        let cov = apply_all(start, &events);

        let report = cov.report(iv(range.0, range.1));
        let mut missing = Vec::new();
        let mut x = range.0;
        while x < range.1 {
            if covered(&line, x) { x += 1; continue; }
            let s = x;
            while x < range.1 && !covered(&line, x) { x += 1; }
            missing.push((s, x));
        }
        let covered_ticks = (range.0..range.1).filter(|&x| covered(&line, x)).count() as i64;
        let got: Vec<_> = report.missing.iter().copied().map(ticks).collect();
        prop_assert_eq!(got, missing.clone());
        prop_assert_eq!(report.covered, missing.is_empty());
        // Small integers: the plain f64 division is exact enough to compare.
        prop_assert_eq!(report.covered_ratio, covered_ticks as f64 / (range.1 - range.0) as f64);

        let mut end = origin;
        while covered(&line, end) { end += 1; }
        prop_assert_eq!(cov.frontier(t(origin)), t(end));

        // The covered set is exactly the landed ticks.
        let set_ticks: Vec<_> = cov.set().runs().map(ticks).collect();
        let mut model_runs = Vec::new();
        let mut x = 0;
        while x < TICKS {
            if !covered(&line, x) { x += 1; continue; }
            let s = x;
            while covered(&line, x) { x += 1; }
            model_runs.push((s, x));
        }
        prop_assert_eq!(set_ticks, model_runs);
    }

    /// Without retractions coverage is the union of the intervals.
    #[test]
    fn landed_only_is_union(ivs in prop::collection::vec(interval(), 0..40)) {
        let events: Vec<_> = ivs.iter().map(|&i| (EventKind::Landed, i)).collect();
        let cov = apply_all(Coverage::new(), &events);
        let union = IntervalSet::from_intervals(ivs.iter().map(|&(a, b)| iv(a, b)));
        prop_assert_eq!(cov.set(), &union);
    }

    /// The ratio depends only on the quotient, so scaling both terms (past
    /// 2^53, where naive f64 division rounds the operands) changes nothing.
    #[test]
    fn ratio_is_the_rounded_quotient(total in 1..1_000_000i64, c in any::<prop::sample::Index>(), k in 1..(1i64 << 40)) {
        let covered = c.index(total as usize + 1) as i64;
        let k = k % ((1i64 << 62) / total) + 1;
        let exact = covered as f64 / total as f64; // both < 2^53: one rounding
        prop_assert_eq!(CoverageReport::ratio(covered, total), exact);
        prop_assert_eq!(CoverageReport::ratio(covered * k, total * k), exact);
    }

    /// Monotone in the covered part and within 0..=1.
    #[test]
    fn ratio_is_monotone(total in 1..(1i64 << 62), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
        let (x, y) = (a.index(total as usize + 1) as i64, b.index(total as usize + 1) as i64);
        let (lo, hi) = (x.min(y), x.max(y));
        let (rl, rh) = (CoverageReport::ratio(lo, total), CoverageReport::ratio(hi, total));
        prop_assert!((0.0..=1.0).contains(&rl) && (0.0..=1.0).contains(&rh));
        prop_assert!(rl <= rh);
    }
}

#[test]
fn conformance_day_of_batches_ratio() {
    // 1440 minutes, 15 missing: Python prints 1425 / 1440 as this.
    let min = MICROS_PER_MINUTE;
    let day = Interval::from_micros(BASE, BASE + 1440 * min).unwrap();
    let mut cov = Coverage::new();
    for m in (0..1440).step_by(5) {
        if !(190..205).contains(&m) {
            cov.apply(
                EventKind::Landed,
                Interval::from_micros(BASE + m * min, BASE + (m + 5) * min).unwrap(),
            );
        }
    }
    let report = cov.report(day);
    assert_eq!(report.covered_ratio, 0.9895833333333334);
    assert_eq!(
        report.missing,
        [Interval::from_micros(BASE + 190 * min, BASE + 205 * min).unwrap()]
    );
    assert_eq!(
        cov.frontier(day.start()),
        Instant::from_micros(BASE + 190 * min).unwrap()
    );
}

#[test]
fn conformance_retraction_then_partial_relanding() {
    let min = 60;
    let m = |x: i64| x * min;
    let mut cov = Coverage::new();
    cov.apply(EventKind::Landed, iv(m(0), m(60)));
    cov.apply(EventKind::Retracted, iv(m(10), m(40)));
    cov.apply(EventKind::Landed, iv(m(15), m(30)));
    let report = cov.report(iv(m(0), m(60)));
    assert!(!report.covered);
    assert_eq!(report.covered_ratio, 0.75);
    assert_eq!(report.missing, [iv(m(10), m(15)), iv(m(30), m(40))]);
    assert_eq!(cov.frontier(t(m(0))), t(m(10)));
    assert_eq!(cov.frontier(t(m(20))), t(m(30)));
    assert_eq!(cov.frontier(t(m(35))), t(m(35)));
}

#[test]
fn microsecond_edges() {
    let mut cov = Coverage::new();
    cov.apply(EventKind::Landed, iv(0, 1));
    cov.apply(EventKind::Landed, iv(2, 1_000_000));
    cov.apply(EventKind::Retracted, iv(500_000, 500_001));
    let report = cov.report(iv(0, 1_000_000));
    assert_eq!(report.covered_ratio, 0.999998);
    assert_eq!(report.missing, [iv(1, 2), iv(500_000, 500_001)]);
    assert_eq!(cov.frontier(t(2)), t(500_000));
    assert_eq!(cov.frontier(t(0)), t(1));
}

#[test]
fn retraction_on_boundaries() {
    let mut cov = Coverage::new();
    cov.apply(EventKind::Landed, iv(10, 20));
    cov.apply(EventKind::Retracted, iv(0, 10)); // touches from the left
    cov.apply(EventKind::Retracted, iv(20, 30)); // touches from the right
    assert!(cov.report(iv(10, 20)).covered);
    cov.apply(EventKind::Retracted, iv(10, 20)); // exactly the run
    assert_eq!(cov.report(iv(10, 20)).covered_ratio, 0.0);
    cov.apply(EventKind::Landed, iv(10, 20)); // re-landed
    assert!(cov.report(iv(10, 20)).covered);
}

#[test]
fn empty_ledger() {
    let cov = Coverage::new();
    let report = cov.report(iv(0, 100));
    assert!(!report.covered);
    assert_eq!(report.covered_ratio, 0.0);
    assert_eq!(report.missing, [iv(0, 100)]);
    assert_eq!(cov.frontier(t(5)), t(5));
}

#[test]
fn ratio_rounds_once_for_huge_ranges() {
    // One µs missing of 2^58: the nearest f64 to 1 - 2^-58 is 1.0 (as in
    // Python); `covered` is what says the range is not complete.
    assert_eq!(CoverageReport::ratio((1 << 58) - 1, 1 << 58), 1.0);
    // Exactly a third of a huge range: the f64 nearest 1/3.
    let total = 3 * (1i64 << 57);
    assert_eq!(CoverageReport::ratio(1 << 57, total), 1.0 / 3.0);
    // Naive division rounds both operands first and can be off by an ulp:
    // a case where it is, found by search, keeps this test able to fail.
    let (c, tot) = naive_differs();
    let exact = CoverageReport::ratio(c, tot);
    assert_ne!(exact, c as f64 / tot as f64);
    assert!(is_nearest(exact, c, tot), "{c}/{tot} -> {exact}");
}

/// Whether `r` is the f64 nearest to `c / t`, checked with exact integer
/// arithmetic against the neighbours of `r` (for `r` in 1/256..1 and
/// `c, t < 2^60` every product below fits a u128).
fn is_nearest(r: f64, c: i64, t: i64) -> bool {
    // distance |r - c/t| compared as |r*t - c| on a common power-of-two scale.
    let err = |x: f64| -> u128 {
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32 - 1075;
        let mant = (bits & ((1 << 52) - 1)) | (1 << 52);
        // x = mant * 2^exp with exp in about -116..-53 here; scale by 2^-exp.
        let scale = (-exp) as u32;
        let lhs = u128::from(mant) * t as u128; // x*t * 2^scale
        let rhs = (c as u128) << scale;
        lhs.abs_diff(rhs)
    };
    // Compare at the same scale: neighbours may have a different exponent,
    // so bring all three to the largest scale.
    let neighbours = [
        f64::from_bits(r.to_bits() - 1),
        r,
        f64::from_bits(r.to_bits() + 1),
    ];
    let scales: Vec<u32> = neighbours
        .iter()
        .map(|x| (1075 - ((x.to_bits() >> 52) & 0x7ff) as i32) as u32)
        .collect();
    let top = *scales.iter().max().unwrap();
    let errs: Vec<u128> = neighbours
        .iter()
        .zip(&scales)
        .map(|(&x, &s)| err(x) << (top - s))
        .collect();
    errs[1] <= errs[0] && errs[1] <= errs[2]
}

/// A covered/total pair above 2^53 where naive division is not correctly
/// rounded.
fn naive_differs() -> (i64, i64) {
    let mut t = (1i64 << 57) + 12_345;
    loop {
        let c = t / 3 + 1;
        let naive = c as f64 / t as f64;
        if !is_nearest(naive, c, t) {
            return (c, t);
        }
        t += 7;
    }
}

#[test]
fn conformance_touching_and_overlapping_events_merge() {
    let m = |x: i64| x * MICROS_PER_MINUTE; // minutes after 10:00
    let mut cov = Coverage::new();
    cov.apply(EventKind::Landed, iv(m(0), m(5)));
    cov.apply(EventKind::Landed, iv(m(5), m(10)));
    cov.apply(EventKind::Landed, iv(m(8), m(20)));
    let report = cov.report(iv(m(0), m(30)));
    assert_eq!(report.covered_ratio, 0.6666666666666666);
    assert_eq!(report.missing, [iv(m(20), m(30))]);
    assert!(cov.report(iv(m(0), m(20))).covered);
    let before = cov.report(iv(-m(60), -m(30)));
    assert_eq!(
        (before.covered_ratio, before.missing),
        (0.0, vec![iv(-m(60), -m(30))])
    );
    assert_eq!(cov.frontier(t(m(0))), t(m(20)));
    assert_eq!(cov.set().run_count(), 1);
}
