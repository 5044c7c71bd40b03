//! The web page's picture of a year, a plain binary (`cargo
//! bench -p gapless-bench --bench buckets`): one asset with 10,000,000
//! three-second slices (347 days; every 2,000th lost, every 5,000th a
//! retraction: about 7,000 gaps), ingested into a SQLite ledger, served by
//! `gapless serve`, and the year asked of `GET …/buckets` in 100, 1,000 and
//! 10,000 parts. Each time is a whole HTTP round trip on loopback (an upper
//! bound of the server's time), the median of 21; the baseline, measured in
//! the same run, is `GET …/coverage` of the same year, which reads the same
//! runs and answers its gaps.
//!
//! `GAPLESS_BENCH_EVENTS` changes the number of slices.

use std::time::Instant;

use gapless_bench::*;

/// The median of `runs` timed calls of `f`, in milliseconds.
fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[runs / 2]
}

fn get(agent: &ureq::Agent, url: &str) -> String {
    let mut r = agent.get(url).call().expect("GET");
    assert_eq!(r.status().as_u16(), 200, "{url}");
    r.body_mut().read_to_string().unwrap()
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` would pass
    // nothing: run only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let total: u64 = env_or("GAPLESS_BENCH_EVENTS", 10_000_000);
    let dir = tempfile::tempdir().unwrap();
    let (file, db) = (dir.path().join("year.ndjson"), dir.path().join("year.db"));
    let t = Instant::now();
    three_second_slices(&file, total, Holes::LostAndRetracted);
    run_gapless(&db, &["ingest", file.to_str().unwrap()]);
    println!(
        "a ledger of {total} slices of one asset, made in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let server = Server::start(db.to_str().unwrap());
    let agent = agent();
    let year = "start=2025-01-01&end=2026-01-01";
    let check = format!("{}/v1/assets/stream/coverage?{year}", server.base);
    let answer: serde_json::Value = serde_json::from_str(&get(&agent, &check)).unwrap();
    println!(
        "the year: {} gaps, {:.4} covered",
        answer["missing_count"], answer["covered_ratio"]
    );
    let baseline = median_ms(21, || {
        get(&agent, &check);
    });
    println!("baseline, GET coverage of the year: {baseline:.2} ms");
    for n in [100, 1_000, 10_000] {
        let url = format!(
            "{}/v1/assets/stream/buckets?{year}&buckets={n}",
            server.base
        );
        let body = get(&agent, &url);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["buckets"].as_array().unwrap().len(), n);
        let ms = median_ms(21, || {
            get(&agent, &url);
        });
        println!(
            "GET buckets of the year in {n} parts ({} KiB): {ms:.2} ms = {:.2}x the baseline (target < 100 ms: {})",
            body.len() / 1024,
            ms / baseline,
            verdict(ms < 100.0)
        );
    }
}
