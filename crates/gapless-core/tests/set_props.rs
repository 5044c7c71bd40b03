//! `IntervalSet` against a brute-force model: a timeline of 200 one-µs ticks,
//! one bool per tick. Intervals are short and the timeline small, so touching,
//! nesting and exact-boundary cases come up constantly.

use gapless_core::{Instant, Interval, IntervalSet};
use proptest::prelude::*;

mod ticks;

use ticks::{iv, t, ticks, TICKS};

fn runs(set: &IntervalSet) -> Vec<(i64, i64)> {
    set.runs().map(ticks).collect()
}

/// An interval of ticks: mostly short (so many touch), sometimes anything.
fn interval() -> impl Strategy<Value = (i64, i64)> {
    ticks::interval(12)
}

/// Default limits, or tiny ones that push inserts through the buffer and
/// spread runs over many small chunks.
fn new_set() -> impl Strategy<Value = (usize, usize, usize)> {
    prop_oneof![Just((usize::MAX, 0, 0)), (0..4usize, 1..8usize, 1..6usize)]
}

fn make_set((eager, compact, chunk): (usize, usize, usize)) -> IntervalSet {
    if eager == usize::MAX {
        IntervalSet::new()
    } else {
        IntervalSet::with_buffer_limits(eager, compact, chunk)
    }
}

/// The model: which ticks are in the set.
#[derive(Clone)]
struct Model(Vec<bool>);

impl Model {
    fn new() -> Self {
        Model(vec![false; TICKS as usize])
    }
    fn paint(&mut self, (a, b): (i64, i64), on: bool) {
        for x in a..b {
            self.0[x as usize] = on;
        }
    }
    fn get(&self, x: i64) -> bool {
        (0..TICKS).contains(&x) && self.0[x as usize]
    }
    /// Maximal runs of ticks equal to `on` within `[a, b)`.
    fn runs_within(&self, (a, b): (i64, i64), on: bool) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        let mut x = a;
        while x < b {
            if self.get(x) == on {
                let s = x;
                while x < b && self.get(x) == on {
                    x += 1;
                }
                out.push((s, x));
            } else {
                x += 1;
            }
        }
        out
    }
    fn runs(&self) -> Vec<(i64, i64)> {
        self.runs_within((0, TICKS), true)
    }
}

fn assert_invariant(set: &IntervalSet) {
    let r: Vec<_> = set.runs().collect();
    for w in r.windows(2) {
        assert!(
            w[0].end() < w[1].start(),
            "runs not sorted/disjoint/non-adjacent: {r:?}"
        );
    }
    assert_eq!(set.run_count(), r.len());
    assert_eq!(set.is_empty(), r.is_empty());
}

/// Every query of `set` on `range` and at `x`, against the model.
fn check_queries(set: &IntervalSet, model: &Model, range: (i64, i64), x: i64) {
    let model_runs = model.runs();
    assert_eq!(runs(set), model_runs);
    assert_invariant(set);
    let count = model.0.iter().filter(|&&b| b).count();
    assert_eq!(set.measure(), count as i128);
    assert_eq!(
        set.span().map(ticks),
        model_runs
            .first()
            .map(|f| (f.0, model_runs.last().unwrap().1))
    );

    let r = iv(range.0, range.1);
    let gaps: Vec<_> = set.gaps(r).into_iter().map(ticks).collect();
    assert_eq!(gaps, model.runs_within(range, false), "gaps of {range:?}");
    assert!(
        set.gaps_iter(r).map(ticks).eq(gaps.iter().copied()),
        "gaps_iter of {range:?}"
    );
    assert_eq!(runs(&set.complement(r)), gaps, "complement of {range:?}");
    let covered = (range.0..range.1).filter(|&y| model.get(y)).count() as i64;
    assert_eq!(
        set.covered_micros(r),
        covered,
        "covered_micros of {range:?}"
    );
    assert_eq!(
        set.covers(r),
        covered == range.1 - range.0,
        "covers {range:?}"
    );
    let overlapping: Vec<_> = set.runs_overlapping(r).map(ticks).collect();
    let expected: Vec<_> = model_runs
        .iter()
        .copied()
        .filter(|&(a, b)| a < range.1 && range.0 < b)
        .collect();
    assert_eq!(overlapping, expected, "runs_overlapping {range:?}");

    let containing = model_runs.iter().copied().find(|&(a, b)| a <= x && x < b);
    assert_eq!(
        set.run_containing(t(x)).map(ticks),
        containing,
        "run_containing {x}"
    );
    assert_eq!(set.contains(t(x)), model.get(x));
}

#[derive(Debug, Clone)]
enum Op {
    Insert((i64, i64)),
    Remove((i64, i64)),
    Query((i64, i64), i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => interval().prop_map(Op::Insert),
        2 => interval().prop_map(Op::Remove),
        1 => (interval(), -1..=TICKS).prop_map(|(r, x)| Op::Query(r, x)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// insert is union, remove is difference, and every query agrees with the
    /// model at every point of a random sequence (queries in the middle
    /// exercise the merged-view cache between buffered inserts).
    #[test]
    fn ops_match_model(limits in new_set(), ops in prop::collection::vec(op(), 0..80),
                       range in interval(), x in -1..=TICKS) {
        let mut set = make_set(limits);
        let mut model = Model::new();
        for op in ops {
            match op {
                Op::Insert(i) => { set.insert(iv(i.0, i.1)); model.paint(i, true); }
                Op::Remove(i) => { set.remove(iv(i.0, i.1)); model.paint(i, false); }
                Op::Query(r, y) => check_queries(&set, &model, r, y),
            }
        }
        check_queries(&set, &model, range, x);
        // Clones and equality see the instants, not the buffering state.
        let clone = set.clone();
        prop_assert_eq!(&clone, &set);
        prop_assert_eq!(runs(&clone), model.runs());
    }

    /// from_intervals, in any order, is the union, and equals inserting one by
    /// one whatever the buffering limits.
    #[test]
    fn from_intervals_is_union(limits in new_set(), ivs in prop::collection::vec(interval(), 0..60)) {
        let mut model = Model::new();
        let mut one_by_one = make_set(limits);
        for &i in &ivs {
            model.paint(i, true);
            one_by_one.insert(iv(i.0, i.1));
        }
        let bulk = IntervalSet::from_intervals(ivs.iter().map(|&(a, b)| iv(a, b)));
        prop_assert_eq!(runs(&bulk), model.runs());
        assert_invariant(&bulk);
        prop_assert_eq!(&bulk, &one_by_one);
        let collected: IntervalSet = ivs.iter().map(|&(a, b)| iv(a, b)).collect();
        prop_assert_eq!(&collected, &bulk);
        let mut extended = IntervalSet::new();
        extended.extend(ivs.iter().map(|&(a, b)| iv(a, b)));
        prop_assert_eq!(&extended, &bulk);
    }

    /// from_sorted_runs accepts exactly the sorted, disjoint, non-adjacent
    /// lists, keeps them as given, and names the first offending run.
    #[test]
    fn from_sorted_runs_checks(ivs in prop::collection::vec(interval(), 0..6)) {
        let first_bad = ivs.windows(2).position(|w| w[0].1 >= w[1].0);
        let result = IntervalSet::from_sorted_runs(ivs.iter().map(|&(a, b)| iv(a, b)).collect());
        match (first_bad, result) {
            (None, Ok(set)) => prop_assert_eq!(runs(&set), ivs),
            (Some(i), Err(e)) => {
                let msg = e.message();
                prop_assert!(msg.contains(&format!("run {} ", i + 1)), "{}", msg);
                let (p, n) = (ivs[i], ivs[i + 1]);
                let why = if n.0 < p.0 { "starts before" } else if n.0 < p.1 { "overlaps" } else { "touches" };
                prop_assert!(msg.contains(why), "{} should say {}", msg, why);
            }
            (bad, res) => prop_assert!(false, "first bad {:?}, got {:?}", bad, res),
        }
    }

    /// The runs of any set round-trip through from_sorted_runs; breaking them
    /// by making one run touch or overlap the next is rejected.
    #[test]
    fn from_sorted_runs_round_trip(ivs in prop::collection::vec(interval(), 1..40), which in any::<prop::sample::Index>(), grow in 0..3i64) {
        let set = IntervalSet::from_intervals(ivs.iter().map(|&(a, b)| iv(a, b)));
        let good: Vec<Interval> = set.runs().collect();
        prop_assert_eq!(&IntervalSet::from_sorted_runs(good.clone()).unwrap(), &set);
        if good.len() >= 2 {
            let i = which.index(good.len() - 1);
            let mut bad = good.clone();
            bad[i] = Interval::new(bad[i].start(), bad[i + 1].start().checked_add_micros(grow).unwrap()).unwrap();
            let err = IntervalSet::from_sorted_runs(bad).unwrap_err();
            prop_assert!(err.message().contains(&format!("run {} ", i + 1)), "{}", err);
            let mut swapped = good.clone();
            swapped.swap(i, i + 1);
            prop_assert!(IntervalSet::from_sorted_runs(swapped).unwrap_err().message().contains("starts before"));
        }
    }

    /// Intersection of any number of sets is the tick-wise AND (empty for none).
    #[test]
    fn intersection_matches_model(sets in prop::collection::vec(prop::collection::vec(interval(), 0..25), 0..5)) {
        let built: Vec<IntervalSet> = sets
            .iter()
            .map(|ivs| IntervalSet::from_intervals(ivs.iter().map(|&(a, b)| iv(a, b))))
            .collect();
        let mut model = Model::new();
        if !sets.is_empty() {
            model.0 = vec![true; TICKS as usize];
            for ivs in &sets {
                let mut m = Model::new();
                for &i in ivs { m.paint(i, true); }
                for x in 0..TICKS as usize { model.0[x] &= m.0[x]; }
            }
        }
        let both = IntervalSet::intersection(built.iter());
        assert_invariant(&both);
        prop_assert_eq!(runs(&both), model.runs());
    }
}

#[test]
fn touching_intervals_merge_in_any_order() {
    let mut set = IntervalSet::new();
    set.insert(iv(10, 20));
    set.insert(iv(30, 40));
    set.insert(iv(20, 30)); // touches both neighbours
    assert_eq!(runs(&set), [(10, 40)]);
    set.insert(iv(0, 10)); // touches from the left
    set.insert(iv(40, 41)); // touches from the right
    assert_eq!(runs(&set), [(0, 41)]);
}

#[test]
fn one_microsecond_intervals() {
    let mut set = IntervalSet::new();
    set.insert(iv(5, 6));
    set.insert(iv(7, 8));
    assert_eq!(runs(&set), [(5, 6), (7, 8)]);
    assert_eq!(set.gaps(iv(5, 8)), [iv(6, 7)]);
    set.insert(iv(6, 7));
    assert_eq!(runs(&set), [(5, 8)]);
    set.remove(iv(6, 7));
    assert_eq!(runs(&set), [(5, 6), (7, 8)]);
    assert_eq!(set.run_containing(t(5)), Some(iv(5, 6)));
    assert_eq!(set.run_containing(t(6)), None);
}

#[test]
fn removal_inside_across_and_on_boundaries() {
    let base = || IntervalSet::from_intervals([iv(0, 10), iv(20, 30)]);
    let mut s = base();
    s.remove(iv(3, 4)); // inside: splits
    assert_eq!(runs(&s), [(0, 3), (4, 10), (20, 30)]);
    let mut s = base();
    s.remove(iv(5, 25)); // across a gap
    assert_eq!(runs(&s), [(0, 5), (25, 30)]);
    let mut s = base();
    s.remove(iv(10, 20)); // exactly the gap: touches both runs, removes nothing
    assert_eq!(s, base());
    let mut s = base();
    s.remove(iv(0, 10)); // exactly a run
    assert_eq!(runs(&s), [(20, 30)]);
    let mut s = base();
    s.remove(iv(0, 30)); // everything
    assert!(s.is_empty());
}

#[test]
fn queries_inside_a_gap() {
    let set = IntervalSet::from_intervals([iv(0, 10), iv(20, 30)]);
    assert_eq!(set.gaps(iv(12, 18)), [iv(12, 18)]);
    assert_eq!(set.gaps(iv(10, 20)), [iv(10, 20)]);
    assert_eq!(set.covered_micros(iv(12, 18)), 0);
    assert_eq!(set.runs_overlapping(iv(10, 20)).count(), 0);
    assert!(set.complement(iv(0, 30)).runs().eq([iv(10, 20)]));
}

#[test]
fn empty_set() {
    let set = IntervalSet::new();
    assert!(set.is_empty());
    assert_eq!(set.run_count(), 0);
    assert_eq!(set.measure(), 0);
    assert_eq!(set.span(), None);
    assert_eq!(set.gaps(iv(0, 5)), [iv(0, 5)]);
    assert_eq!(set.covered_micros(iv(0, 5)), 0);
    assert_eq!(set.run_containing(t(0)), None);
    assert!(IntervalSet::intersection([&set, &IntervalSet::from_intervals([iv(0, 5)])]).is_empty());
    assert!(IntervalSet::from_sorted_runs(vec![]).unwrap().is_empty());
    assert!(IntervalSet::from_intervals([]).is_empty());
    let mut s = IntervalSet::new();
    s.remove(iv(0, 5));
    assert!(s.is_empty());
}

#[test]
fn from_sorted_runs_rejects_bad_input_with_a_reason() {
    let err = |runs: Vec<Interval>| IntervalSet::from_sorted_runs(runs).unwrap_err().to_string();
    let e = err(vec![iv(0, 5), iv(10, 15), iv(8, 9)]);
    assert!(
        e.contains("run 2") && e.contains("starts before run 1"),
        "{e}"
    );
    let e = err(vec![iv(0, 5), iv(4, 9)]);
    assert!(e.contains("run 1") && e.contains("overlaps run 0"), "{e}");
    let e = err(vec![iv(0, 5), iv(5, 9)]);
    assert!(e.contains("run 1") && e.contains("touches run 0"), "{e}");
    // The message names the runs by their instants.
    assert!(e.contains("2025-06-01T10:00:00.000005Z"), "{e}");
}

#[test]
fn whole_instant_range() {
    let all = Interval::new(Instant::MIN, Instant::MAX).unwrap();
    let mut set = IntervalSet::from_intervals([all]);
    assert_eq!(set.measure(), i128::from(all.len_micros()));
    set.remove(iv(0, 1));
    assert_eq!(set.run_count(), 2);
    assert_eq!(set.gaps(all), [iv(0, 1)]);
}

/// A large shuffled insert through the default limits (buffer, compaction,
/// cache) against a sort-and-merge of the same intervals.
#[test]
fn large_shuffled_insert_matches_bulk() {
    use rand::{seq::SliceRandom, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut ivs: Vec<Interval> = (0..200_000i64)
        .filter(|i| i % 97 != 3)
        .map(|i| iv(i * 10, i * 10 + 10 + (i % 5 == 0) as i64 * 3))
        .collect();
    ivs.shuffle(&mut rng);
    let mut set = IntervalSet::new();
    for (k, &i) in ivs.iter().enumerate() {
        set.insert(i);
        if k == 150_000 {
            assert!(set.run_count() > 1); // a query in the middle
        }
    }
    let bulk = IntervalSet::from_intervals(ivs.iter().copied());
    assert_eq!(set, bulk);
    let missing = (0..200_000).filter(|i| i % 97 == 3).count();
    assert_eq!(bulk.run_count(), missing + 1);
}

/// Sort-and-merge reference for large inputs, in plain integers.
fn reference_union(ivs: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut v = ivs.to_vec();
    v.sort();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Inputs large enough for the radix sort of the bulk and buffered paths:
    /// any span (negative instants, whole range, all starts equal, coarse
    /// grids with constant low bits) against a plain sort-and-merge.
    #[test]
    fn large_inputs_match_reference(
        n in 500..3000usize,
        origin in Instant::MIN.as_micros()..Instant::MAX.as_micros() / 2,
        spread_bits in 0..58u32,
        grid_bits in 0..20u32,
        seed in any::<u64>(),
    ) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let spread = 1i64 << spread_bits;
        let ivs: Vec<(i64, i64)> = (0..n)
            .map(|_| {
                let s = origin + ((rng.random_range(0..spread) >> grid_bits) << grid_bits);
                let len = rng.random_range(1..=(spread / 64).max(1) + 1);
                (s, (s + len).min(Instant::MAX.as_micros()))
            })
            .filter(|&(s, e)| s < e)
            .collect();
        let expected = reference_union(&ivs);
        let to_iv = |&(s, e): &(i64, i64)| Interval::from_micros(s, e).unwrap();
        let bulk = IntervalSet::from_intervals(ivs.iter().map(to_iv));
        let got: Vec<_> = bulk.runs().map(|r| (r.start().as_micros(), r.end().as_micros())).collect();
        prop_assert_eq!(&got, &expected);
        let mut buffered = IntervalSet::with_buffer_limits(0, 600, 16);
        for iv in ivs.iter().map(to_iv) {
            buffered.insert(iv);
        }
        prop_assert_eq!(&buffered, &bulk);
    }
}

/// Inserts in the middle alternating with queries (the eager-after-query
/// path) on a set large enough that the default limits would buffer them.
#[test]
fn alternating_inserts_and_queries() {
    let mut set = IntervalSet::from_intervals((0..1000).map(|i| iv(i * 10, i * 10 + 5)));
    let mut model = Model::new();
    // The model mirrors the first TICKS ticks; the rest is checked by counts.
    for i in 0..TICKS / 10 {
        model.paint((i * 10, i * 10 + 5), true);
    }
    for (k, i) in [7i64, 3, 15, 1, 9, 0, 18, 12].into_iter().enumerate() {
        set.insert(iv(i * 10 + 5, i * 10 + 10));
        model.paint((i * 10 + 5, i * 10 + 10), true);
        assert_eq!(set.run_count(), 1000 - (k + 1));
        let first: Vec<_> = set.runs_overlapping(iv(0, TICKS)).map(ticks).collect();
        // Ticks 195..200 are not covered, so no run crosses the model's end.
        let expected = model.runs();
        assert_eq!(first, expected);
    }
}

/// Queries take `&self` behind a lazily built cache: the set must still be
/// shareable across threads (the server holds ledgers in `Arc`s).
#[test]
fn interval_set_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<IntervalSet>();
    // Concurrent first queries on a set with buffered inserts agree.
    let mut set = IntervalSet::with_buffer_limits(0, 1_000_000, 64);
    for i in (0..2000).rev() {
        set.insert(iv(i * 3, i * 3 + 2));
    }
    let set = std::sync::Arc::new(set);
    let counts: Vec<usize> = (0..4)
        .map(|_| {
            let set = set.clone();
            std::thread::spawn(move || set.run_count())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    assert_eq!(counts, [2000; 4]);
}
