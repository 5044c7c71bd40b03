//! The coverage index against rangemap, range-set-blaze and the naive
//! collect-sort-merge, on the workloads of a coverage ledger:
//!
//! - 1,000,000 five-minute slots, 1% missing, inserted in shuffled order
//!   (backfills, retries, many producers) and in arrival order (a streaming
//!   producer extending the end);
//! - 10,000 one-day gap queries over the result.
//!
//! Run with `cargo bench -p gapless-core --bench index`. After the criterion
//! groups a ratio table is printed from one more timed run of each contender.

use std::hint::black_box;
use std::ops::Range;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use gapless_core::{Interval, IntervalSet, MICROS_PER_DAY as DAY, MICROS_PER_MINUTE};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use range_set_blaze::RangeSetBlaze;
use rangemap::RangeSet;

/// 2020-01-01T00:00:00Z.
const BASE: i64 = 1_577_836_800_000_000;
const FIVE_MIN: i64 = 5 * MICROS_PER_MINUTE;
const SLOTS: i64 = 1_000_000;
const QUERIES: usize = 10_000;
/// The naive approach re-reads every interval per query: it gets fewer
/// queries and its time is scaled up to `QUERIES` in the table.
const NAIVE_QUERIES: usize = 20;

struct Data {
    /// Arrival order: increasing, each starting where the previous ended
    /// except after a missing slot.
    arrival: Vec<Interval>,
    shuffled: Vec<Interval>,
    shuffled_ranges: Vec<Range<i64>>,
    arrival_ranges: Vec<Range<i64>>,
    queries: Vec<Interval>,
}

fn data() -> Data {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    let arrival: Vec<Interval> = (0..SLOTS)
        .filter(|_| !rng.random_bool(0.01))
        .map(|i| Interval::from_micros(BASE + i * FIVE_MIN, BASE + (i + 1) * FIVE_MIN).unwrap())
        .collect();
    let mut shuffled = arrival.clone();
    shuffled.shuffle(&mut rng);
    let range = |iv: &Interval| iv.start().as_micros()..iv.end().as_micros();
    let span = SLOTS * FIVE_MIN;
    let queries = (0..QUERIES)
        .map(|_| {
            let start =
                BASE + rng.random_range(0..(span - DAY) / MICROS_PER_MINUTE) * MICROS_PER_MINUTE;
            Interval::from_micros(start, start + DAY).unwrap()
        })
        .collect();
    Data {
        shuffled_ranges: shuffled.iter().map(range).collect(),
        arrival_ranges: arrival.iter().map(range).collect(),
        arrival,
        shuffled,
        queries,
    }
}

fn gapless_insert(ivs: &[Interval]) -> IntervalSet {
    let mut set = IntervalSet::new();
    for &iv in ivs {
        set.insert(iv);
    }
    // A query, so any buffered inserts are merged inside the measurement.
    black_box(set.run_count());
    set
}

fn gapless_bulk(ivs: &[Interval]) -> IntervalSet {
    let set = IntervalSet::from_intervals(ivs.iter().copied());
    black_box(set.run_count());
    set
}

fn rangemap_insert(ranges: &[Range<i64>]) -> RangeSet<i64> {
    let mut set = RangeSet::new();
    for r in ranges {
        set.insert(r.clone());
    }
    set
}

fn blaze_from_iter(ranges: &[Range<i64>]) -> RangeSetBlaze<i64> {
    ranges.iter().map(|r| r.start..=r.end - 1).collect()
}

fn blaze_insert(ranges: &[Range<i64>]) -> RangeSetBlaze<i64> {
    let mut set = RangeSetBlaze::new();
    for r in ranges {
        set.ranges_insert(r.start..=r.end - 1);
    }
    set
}

/// The approach without an index: sort everything, merge.
fn naive_merge(ranges: &[Range<i64>]) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = ranges.iter().map(|r| (r.start, r.end)).collect();
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Per query: collect the intervals overlapping it, sort, merge, complement.
fn naive_gaps(ranges: &[Range<i64>], q: &Range<i64>) -> usize {
    let hits: Vec<Range<i64>> = ranges
        .iter()
        .filter(|r| r.start < q.end && q.start < r.end)
        .cloned()
        .collect();
    let merged = naive_merge(&hits);
    let mut gaps = 0;
    let mut cursor = q.start;
    for (s, e) in merged {
        if s > cursor {
            gaps += 1;
        }
        cursor = cursor.max(e);
    }
    gaps + usize::from(cursor < q.end)
}

fn gapless_queries(set: &IntervalSet, queries: &[Interval]) -> usize {
    queries.iter().map(|&q| set.gaps(q).len()).sum()
}

fn gapless_queries_lazy(set: &IntervalSet, queries: &[Interval]) -> usize {
    queries.iter().map(|&q| set.gaps_iter(q).count()).sum()
}

/// As a user who wants the gaps as a `Vec`, like `IntervalSet::gaps` gives.
fn rangemap_queries_vec(set: &RangeSet<i64>, queries: &[Range<i64>]) -> usize {
    queries
        .iter()
        .map(|q| set.gaps(q).collect::<Vec<_>>().len())
        .sum()
}

fn rangemap_queries(set: &RangeSet<i64>, queries: &[Range<i64>]) -> usize {
    queries.iter().map(|q| set.gaps(q).count()).sum()
}

fn bench(c: &mut Criterion, d: &Data) {
    let mut g = c.benchmark_group("insert shuffled 1M");
    g.bench_function("gapless insert", |b| b.iter(|| gapless_insert(&d.shuffled)));
    g.bench_function("gapless from_intervals", |b| {
        b.iter(|| gapless_bulk(&d.shuffled))
    });
    g.bench_function("rangemap insert", |b| {
        b.iter(|| rangemap_insert(&d.shuffled_ranges))
    });
    g.bench_function("range-set-blaze from_iter", |b| {
        b.iter(|| blaze_from_iter(&d.shuffled_ranges))
    });
    g.bench_function("range-set-blaze insert", |b| {
        b.iter(|| blaze_insert(&d.shuffled_ranges))
    });
    g.bench_function("naive sort+merge", |b| {
        b.iter(|| naive_merge(&d.shuffled_ranges))
    });
    g.finish();

    let mut g = c.benchmark_group("insert arrival order 1M");
    g.bench_function("gapless insert", |b| b.iter(|| gapless_insert(&d.arrival)));
    g.bench_function("rangemap insert", |b| {
        b.iter(|| rangemap_insert(&d.arrival_ranges))
    });
    g.bench_function("range-set-blaze from_iter", |b| {
        b.iter(|| blaze_from_iter(&d.arrival_ranges))
    });
    g.bench_function("range-set-blaze insert", |b| {
        b.iter(|| blaze_insert(&d.arrival_ranges))
    });
    g.finish();

    let set = gapless_bulk(&d.shuffled);
    let rm = rangemap_insert(&d.arrival_ranges);
    let q_ranges: Vec<Range<i64>> = d
        .queries
        .iter()
        .map(|q| q.start().as_micros()..q.end().as_micros())
        .collect();
    assert_eq!(
        gapless_queries(&set, &d.queries),
        rangemap_queries(&rm, &q_ranges)
    );
    let mut g = c.benchmark_group("gap queries (one day)");
    g.bench_function(BenchmarkId::new("gapless", QUERIES), |b| {
        b.iter(|| gapless_queries(&set, &d.queries))
    });
    g.bench_function(BenchmarkId::new("gapless gaps_iter", QUERIES), |b| {
        b.iter(|| gapless_queries_lazy(&set, &d.queries))
    });
    g.bench_function(BenchmarkId::new("rangemap", QUERIES), |b| {
        b.iter(|| rangemap_queries(&rm, &q_ranges))
    });
    g.bench_function(BenchmarkId::new("rangemap collected", QUERIES), |b| {
        b.iter(|| rangemap_queries_vec(&rm, &q_ranges))
    });
    g.bench_function(BenchmarkId::new("naive", NAIVE_QUERIES), |b| {
        b.iter(|| {
            q_ranges[..NAIVE_QUERIES]
                .iter()
                .map(|q| naive_gaps(&d.arrival_ranges, q))
                .sum::<usize>()
        })
    });
    g.finish();
}

/// Best of five wall-clock runs, in milliseconds (the minimum is the least
/// disturbed by other processes on a shared machine).
fn time_ms<T>(mut f: impl FnMut() -> T) -> f64 {
    (0..5)
        .map(|_| {
            let t = std::time::Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

fn ratio_table(d: &Data) {
    println!("\nratios (best of 5, std::time::Instant; ratio = other / gapless):");
    let line = |what: &str, ours: f64, name: &str, theirs: f64| {
        println!(
            "{what}: gapless {ours:.1} ms, {name} {theirs:.1} ms, ratio {:.1}x",
            theirs / ours
        );
    };
    let ins = time_ms(|| gapless_insert(&d.shuffled));
    let bulk = time_ms(|| gapless_bulk(&d.shuffled));
    line(
        "insert shuffled",
        ins,
        "rangemap insert",
        time_ms(|| rangemap_insert(&d.shuffled_ranges)),
    );
    let blaze = time_ms(|| blaze_from_iter(&d.shuffled_ranges));
    line("insert shuffled", ins, "range-set-blaze from_iter", blaze);
    line(
        "insert shuffled",
        ins,
        "range-set-blaze insert",
        time_ms(|| blaze_insert(&d.shuffled_ranges)),
    );
    line(
        "insert shuffled",
        ins,
        "naive sort+merge",
        time_ms(|| naive_merge(&d.shuffled_ranges)),
    );
    line(
        "bulk shuffled (from_intervals)",
        bulk,
        "range-set-blaze from_iter",
        blaze,
    );

    let arr = time_ms(|| gapless_insert(&d.arrival));
    line(
        "insert arrival order",
        arr,
        "rangemap insert",
        time_ms(|| rangemap_insert(&d.arrival_ranges)),
    );
    line(
        "insert arrival order",
        arr,
        "range-set-blaze from_iter",
        time_ms(|| blaze_from_iter(&d.arrival_ranges)),
    );
    line(
        "insert arrival order",
        arr,
        "range-set-blaze insert",
        time_ms(|| blaze_insert(&d.arrival_ranges)),
    );

    let set = gapless_bulk(&d.shuffled);
    let rm = rangemap_insert(&d.arrival_ranges);
    let q_ranges: Vec<Range<i64>> = d
        .queries
        .iter()
        .map(|q| q.start().as_micros()..q.end().as_micros())
        .collect();
    let ours = time_ms(|| gapless_queries(&set, &d.queries));
    let rm_ms = time_ms(|| rangemap_queries(&rm, &q_ranges));
    let rm_vec_ms = time_ms(|| rangemap_queries_vec(&rm, &q_ranges));
    let q = "10k one-day gap queries";
    line(
        &format!("{q} (gaps, Vec)"),
        ours,
        "rangemap (collected)",
        rm_vec_ms,
    );
    line(
        &format!("{q} (gaps, Vec)"),
        ours,
        "rangemap (counted)",
        rm_ms,
    );
    let lazy = time_ms(|| gapless_queries_lazy(&set, &d.queries));
    line(
        &format!("{q} (gaps_iter)"),
        lazy,
        "rangemap (counted)",
        rm_ms,
    );
    let naive = time_ms(|| {
        q_ranges[..NAIVE_QUERIES]
            .iter()
            .map(|q| naive_gaps(&d.arrival_ranges, q))
            .sum::<usize>()
    }) * (QUERIES / NAIVE_QUERIES) as f64;
    line(
        "10k one-day gap queries",
        ours,
        "naive (scaled from 20)",
        naive,
    );
}

/// Inserts in the middle alternating with one-day gap queries: the workload
/// a flat sorted `Vec` is bad at (a memmove of every later run per insert)
/// and a tree is good at; the chunked runs bound the memmove to one chunk.
/// Re-lands `holes` removed slots one by one on the 1M set, each followed by
/// a query. Returns (gapless ms, rangemap ms), best of five, setup untimed.
fn alternating(d: &Data, holes: usize) -> (f64, f64) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut relanded = d.arrival.clone();
    relanded.shuffle(&mut rng);
    relanded.truncate(holes);
    let mut base = IntervalSet::from_intervals(d.arrival.iter().copied());
    let mut rm_base = rangemap_insert(&d.arrival_ranges);
    for iv in &relanded {
        base.remove(*iv);
        rm_base.remove(iv.start().as_micros()..iv.end().as_micros());
    }
    let day = |iv: &Interval| {
        Interval::new(iv.start(), iv.start().checked_add_micros(DAY).unwrap()).unwrap()
    };
    let (mut ours, mut theirs) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..5 {
        let mut set = base.clone();
        let t = std::time::Instant::now();
        for iv in &relanded {
            set.insert(*iv);
            black_box(set.gaps(day(iv)).len());
        }
        ours = ours.min(t.elapsed().as_secs_f64() * 1e3);
        let mut rm = rm_base.clone();
        let t = std::time::Instant::now();
        for iv in &relanded {
            rm.insert(iv.start().as_micros()..iv.end().as_micros());
            let q = day(iv);
            black_box(
                rm.gaps(&(q.start().as_micros()..q.end().as_micros()))
                    .count(),
            );
        }
        theirs = theirs.min(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(set, IntervalSet::from_intervals(d.arrival.iter().copied()));
    }
    (ours, theirs)
}

fn main() {
    let d = data();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut c, &d);
    c.final_summary();
    ratio_table(&d);
    for holes in [1_000, 10_000] {
        let (ours, theirs) = alternating(&d, holes);
        println!(
            "{holes} middle inserts alternating with queries ({} to {} runs): gapless {ours:.1} ms, rangemap {theirs:.1} ms, ratio {:.1}x",
            IntervalSet::from_intervals(d.arrival.iter().copied()).run_count(),
            IntervalSet::from_intervals(d.arrival.iter().copied()).run_count() + holes,
            theirs / ours
        );
    }
}
