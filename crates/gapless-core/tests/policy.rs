//! Policies: parsing, canonical text and completeness.

use gapless_core::{
    parse_instant, CoverageReport, Duration, Grid, Interval, IntervalSet, Policy, RuleDef,
    MICROS_PER_MINUTE as MINUTE,
};
use proptest::prelude::*;

/// A report of a one-hour window with gaps of the given minutes.
fn report(gaps: &[i64]) -> CoverageReport {
    let mut at = 0;
    let missing: Vec<Interval> = gaps
        .iter()
        .map(|m| {
            let iv = Interval::from_micros(at, at + m * MINUTE).unwrap();
            at += m * MINUTE + MINUTE;
            iv
        })
        .collect();
    let gap: i64 = gaps.iter().sum();
    CoverageReport {
        covered: missing.is_empty(),
        covered_ratio: (60 - gap) as f64 / 60.0,
        missing,
    }
}

#[test]
fn forms_and_canonical_text() {
    let cases = [
        ("full", Policy::Full, "full"),
        (" full ", Policy::Full, "full"),
        ("ratio>=0.95", Policy::RatioAtLeast(0.95), "ratio>=0.95"),
        ("ratio >= 0.95", Policy::RatioAtLeast(0.95), "ratio>=0.95"),
        ("ratio>=1", Policy::RatioAtLeast(1.0), "ratio>=1"),
        ("ratio>=1.0", Policy::RatioAtLeast(1.0), "ratio>=1"),
        ("ratio>=0", Policy::RatioAtLeast(0.0), "ratio>=0"),
        ("ratio>=.5", Policy::RatioAtLeast(0.5), "ratio>=0.5"),
        (
            "gap<5m",
            Policy::GapBelow(Duration::parse("5m").unwrap()),
            "gap<5m",
        ),
        (
            "gap<PT5M",
            Policy::GapBelow(Duration::parse("5m").unwrap()),
            "gap<5m",
        ),
        (
            "gap < PT0.5S",
            Policy::GapBelow(Duration::parse("500ms").unwrap()),
            "gap<0.5s",
        ),
        (
            "gap<1d",
            Policy::GapBelow(Duration::parse("24h").unwrap()),
            "gap<1d",
        ),
        (
            "gap<1h30m",
            Policy::GapBelow(Duration::parse("90m").unwrap()),
            "gap<1h30m",
        ),
    ];
    for (text, want, canonical) in cases {
        let p = Policy::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        if let (Policy::GapBelow(a), Policy::GapBelow(b)) = (p, want) {
            assert_eq!(a.fixed_micros(), b.fixed_micros(), "{text}");
        } else {
            assert_eq!(p, want, "{text}");
        }
        assert_eq!(p.to_string(), canonical, "{text}");
        assert_eq!(canonical.parse::<Policy>().unwrap(), p, "{text}");
    }
    assert_eq!(Policy::default(), Policy::Full);
}

#[test]
fn errors() {
    let cases = [
        ("", "expected full, ratio>=R (such as ratio>=0.95) or gap<D (such as gap<5m)"),
        ("Full", "expected full, ratio>=R (such as ratio>=0.95) or gap<D (such as gap<5m)"),
        ("all", "expected full, ratio>=R (such as ratio>=0.95) or gap<D (such as gap<5m)"),
        ("ratio>0.9", "expected \">=\" after \"ratio\", as in ratio>=0.95"),
        ("ratio>=", "expected a ratio from 0 to 1 after \">=\", found \"\""),
        ("ratio>=x", "expected a ratio from 0 to 1 after \">=\", found \"x\""),
        ("ratio>=-0.1", "expected a ratio from 0 to 1 after \">=\", found \"-0.1\""),
        ("ratio>=1e-1", "expected a ratio from 0 to 1 after \">=\", found \"1e-1\""),
        ("ratio>=NaN", "expected a ratio from 0 to 1 after \">=\", found \"NaN\""),
        ("ratio>=inf", "expected a ratio from 0 to 1 after \">=\", found \"inf\""),
        ("ratio>=1.5", "the ratio 1.5 must be from 0 to 1"),
        ("ratio>=95", "the ratio 95 must be from 0 to 1"),
        ("gap5m", "expected \"<\" after \"gap\", as in gap<5m"),
        ("gap<=5m", "use \"gap<D\" (every gap shorter than D), not \"<=\""),
        ("gap<", "duration \"\": empty; expected a duration such as PT5M or 5m"),
        ("gap<5x", "duration \"5x\": unknown unit \"x\"; use s, m, h, d, w, mo or y (e.g. 5m) or ISO 8601 (PT5M)"),
        ("gap<0s", "duration \"0s\": a duration must be longer than zero"),
        ("gap<1mo", "duration 1mo has months or years, which have no fixed length"),
        ("gap<P1Y", "duration 1y has months or years, which have no fixed length"),
    ];
    for (text, reason) in cases {
        assert_eq!(
            Policy::parse(text).unwrap_err().to_string(),
            format!("invalid policy {text:?}: {reason}"),
            "{text}"
        );
    }
}

#[test]
fn completeness() {
    let whole = report(&[]);
    let one_short = report(&[1]);
    let three = report(&[3]);
    let two_small = report(&[2, 2]);

    let full = Policy::Full;
    assert!(full.is_complete(&whole));
    assert!(!full.is_complete(&one_short));

    let r = Policy::parse("ratio>=0.95").unwrap();
    assert!(r.is_complete(&whole));
    assert!(r.is_complete(&three)); // exactly 0.95
    assert!(!r.is_complete(&report(&[4])));
    assert!(!r.is_complete(&two_small)); // 56 of 60 minutes
                                         // ratio>=1 is full, even when the ratio rounds to 1.
    let all = Policy::parse("ratio>=1").unwrap();
    assert!(all.is_complete(&whole));
    let tiny_gap = CoverageReport {
        covered: false,
        covered_ratio: 1.0,
        missing: vec![Interval::from_micros(0, 1).unwrap()],
    };
    assert!(!all.is_complete(&tiny_gap));
    assert!(Policy::parse("ratio>=0")
        .unwrap()
        .is_complete(&report(&[60])));

    let g = Policy::parse("gap<3m").unwrap();
    assert!(g.is_complete(&whole));
    assert!(g.is_complete(&two_small));
    assert!(!g.is_complete(&three)); // a 3-minute gap is not shorter than 3 minutes
    assert!(Policy::parse("gap<4m").unwrap().is_complete(&three));
}

/// A second, the unit of the judged timelines below.
const SECOND: i64 = 1_000_000;

/// One of the policies, with ratios and gap lengths near those a timeline
/// of a few dozen seconds reaches.
fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Full),
        Just(Policy::RatioAtLeast(1.0)),
        Just(Policy::RatioAtLeast(0.0)),
        (0..=20u32).prop_map(|k| Policy::RatioAtLeast(f64::from(k) / 20.0)),
        (1..12u32).prop_map(|s| Policy::parse(&format!("gap<{s}s")).unwrap()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A window judged against a set of runs is what a painted timeline
    /// says: its covered seconds, its gaps read off second by second, and
    /// nothing covered never complete.
    #[test]
    fn judge_is_the_painted_timeline(
        runs in prop::collection::vec((0..40i64, 1..8i64), 0..8),
        (a, len) in (0..40i64, 1..24i64),
        policy in policy(),
    ) {
        let w = Interval::from_micros(a * SECOND, (a + len) * SECOND).unwrap();
        let set = IntervalSet::from_intervals(
            runs.iter().map(|&(s, l)| Interval::from_micros(s * SECOND, (s + l) * SECOND).unwrap()),
        );
        let painted: Vec<bool> = (a..a + len)
            .map(|t| runs.iter().any(|&(s, l)| s <= t && t < s + l))
            .collect();
        let covered = painted.iter().filter(|c| **c).count() as i64;
        let mut longest = 0;
        let mut here = 0;
        for c in &painted {
            here = if *c { 0 } else { here + 1 };
            longest = longest.max(here);
        }
        let complete = covered > 0
            && match policy {
                Policy::Full => covered == len,
                Policy::RatioAtLeast(r) if r >= 1.0 => covered == len,
                Policy::RatioAtLeast(r) => CoverageReport::ratio(covered, len) >= r,
                Policy::GapBelow(d) => longest * SECOND < d.fixed_micros().unwrap(),
            };
        let from = parse_instant("1970-01-01", None).unwrap();
        let def = RuleDef::new(vec!["a".into()], Grid::parse("1h").unwrap(), "UTC", policy, from, None)
            .unwrap();
        let judged = def.judge(w, &set);
        prop_assert_eq!(judged.complete, complete, "{:?} over {:?}", policy, painted);
        prop_assert_eq!(judged.covered_ratio, CoverageReport::ratio(covered, len));
        prop_assert_eq!(judged, def.judge_report(w, &CoverageReport::of(&set, w)));
    }
}
