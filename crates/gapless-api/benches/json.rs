//! What an `Instant` costs in JSON, alone and in the largest answer that
//! carries many: 1,000 instants serialized and parsed, and a 100-asset page
//! of `GET /v1/assets?limit=100` (`AssetsAnswer`, about five instants an
//! asset) serialized as the server writes it and parsed as the Rust client
//! reads it.
//!
//! Run with `cargo bench -p gapless-api --bench json`. For instruction
//! counts, which stay put on a busy machine, set `GAPLESS_JSON_ITERS=N`:
//! the bench then runs each case N times without criterion and prints
//! nothing, for `valgrind --tool=callgrind` (the difference between two
//! values of N divided by their difference is one case's count).

use std::hint::black_box;

use criterion::Criterion;
use gapless_api::{AssetOverviewAnswer, AssetsAnswer};
use gapless_core::Instant;

/// 2025-06-01T00:00:00Z.
const BASE: i64 = 1_748_736_000_000_000;
const HOUR: i64 = 3_600_000_000;

/// 1,000 instants as a server writes them: most on whole seconds, some
/// with a fraction (receipt times), spread over a few years.
fn instants() -> Vec<Instant> {
    (0..1000_i64)
        .map(|i| {
            let fraction = if i % 3 == 0 {
                (i * 7_919) % 1_000_000
            } else {
                0
            };
            Instant::from_micros(BASE + (i - 500) * 37 * HOUR + fraction).unwrap()
        })
        .collect()
}

/// A page of 100 assets, as the assets bench's ledger answers it.
fn page() -> AssetsAnswer {
    let at = |h: i64, us: i64| Some(Instant::from_micros(BASE + h * HOUR + us).unwrap());
    let assets = (0..100_i64)
        .map(|i| AssetOverviewAnswer {
            asset: format!("s3://lake/team{}/table{i:05}", i % 50),
            events: 3,
            first_covered: at(-192, 0),
            last_covered: at(-2, 0),
            last_received: at(-1, 123_456 + i),
            key_span: None,
            tz: None,
            frontier: at(-100, 0),
            covered_ratio_day: 0.916_666_666_666_666_6,
            covered_ratio_week: 0.541_666_666_666_666_6,
            pruned_before: None,
        })
        .collect();
    AssetsAnswer {
        assets,
        next: Some("s3://lake/team49/table00099".to_string()),
        as_of: Instant::from_micros(BASE + 654_321).unwrap(),
    }
}

fn main() {
    let instants = instants();
    let instants_json = serde_json::to_vec(&instants).unwrap();
    let page = page();
    let page_json = serde_json::to_vec(&page).unwrap();
    assert_eq!(
        serde_json::from_slice::<Vec<Instant>>(&instants_json).unwrap(),
        instants
    );
    assert_eq!(
        serde_json::from_slice::<AssetsAnswer>(&page_json).unwrap(),
        page
    );

    if let Ok(n) = std::env::var("GAPLESS_JSON_ITERS") {
        let n: usize = n.parse().expect("GAPLESS_JSON_ITERS is a count");
        let case = std::env::var("GAPLESS_JSON_CASE").unwrap_or_default();
        for _ in 0..n {
            match case.as_str() {
                "instants-serialize" => {
                    black_box(serde_json::to_vec(black_box(&instants)).unwrap());
                }
                "instants-parse" => {
                    black_box(serde_json::from_slice::<Vec<Instant>>(black_box(&instants_json)).unwrap());
                }
                "page-serialize" => {
                    black_box(serde_json::to_vec(black_box(&page)).unwrap());
                }
                "page-parse" => {
                    black_box(serde_json::from_slice::<AssetsAnswer>(black_box(&page_json)).unwrap());
                }
                _ => panic!("GAPLESS_JSON_CASE is one of instants-serialize, instants-parse, page-serialize, page-parse"),
            }
        }
        return;
    }

    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("instants");
    g.bench_function("serialize 1000", |b| {
        b.iter(|| serde_json::to_vec(black_box(&instants)).unwrap())
    });
    g.bench_function("parse 1000", |b| {
        b.iter(|| serde_json::from_slice::<Vec<Instant>>(black_box(&instants_json)).unwrap())
    });
    g.finish();
    let mut g = c.benchmark_group("assets page");
    g.bench_function("serialize", |b| {
        b.iter(|| serde_json::to_vec(black_box(&page)).unwrap())
    });
    g.bench_function("parse", |b| {
        b.iter(|| serde_json::from_slice::<AssetsAnswer>(black_box(&page_json)).unwrap())
    });
    g.finish();
    c.final_summary();
    println!(
        "the page's answer: {} bytes; 1,000 instants: {} bytes",
        page_json.len(),
        instants_json.len()
    );
}
