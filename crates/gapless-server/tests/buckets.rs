//! `GET /v1/assets/{asset}/buckets` against a brute-force reference, over a
//! real server on SQLite and on PostgreSQL (`GAPLESS_TEST_PG`): random
//! batches of landings and retractions, and after every batch random ranges
//! in random numbers of parts. Each part must hold what painting the events
//! onto the time line gives, and its covered time must be the coverage
//! route's answer for that part's range.

mod common;

use std::sync::Arc;

use common::{enc, TestServer};
use gapless_ledger::Ledger;
use gapless_server::ServerConfig;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};

/// Minute `m` of 2025-06-01 as RFC 3339 (minutes may run past the day).
fn minute(m: i64) -> String {
    let t = jiff::Timestamp::from_second(1_748_736_000 + 60 * m).unwrap();
    t.to_string()
}

fn micros(text: &str) -> i64 {
    text.parse::<jiff::Timestamp>().unwrap().as_microsecond()
}

/// One event on the minute grid: start, length, landed or retracted.
type Ev = (i64, i64, bool);

/// The state of instant `t` (µs): 0 never recorded, 1 covered, 2 retracted
/// (the latest event containing it decides).
fn state_at(events: &[Ev], t: i64) -> u8 {
    let base = micros(&minute(0));
    events
        .iter()
        .rev()
        .find(|&&(s, l, _)| base + s * 60_000_000 <= t && t < base + (s + l) * 60_000_000)
        .map_or(0, |&(_, _, landed)| if landed { 1 } else { 2 })
}

/// Painting `[lo, hi)`: the states are constant between event boundaries,
/// so each piece between consecutive boundaries is judged at its start.
fn painted(events: &[Ev], lo: i64, hi: i64) -> [i64; 3] {
    let base = micros(&minute(0));
    let mut cuts: Vec<i64> = events
        .iter()
        .flat_map(|&(s, l, _)| [base + s * 60_000_000, base + (s + l) * 60_000_000])
        .filter(|&c| lo < c && c < hi)
        .collect();
    cuts.extend([lo, hi]);
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = [0; 3];
    for w in cuts.windows(2) {
        out[state_at(events, w[0]) as usize] += w[1] - w[0];
    }
    out
}

fn check_against_reference(server: &TestServer, asset: &str, seed_cases: u32) {
    let c = server.client();
    let mut runner = TestRunner::new(Config {
        cases: seed_cases,
        ..Config::default()
    });
    let batches = prop::collection::vec(
        prop::collection::vec((0i64..240, 1i64..60, prop::bool::weighted(0.75)), 1..6),
        1..6,
    );
    let asks = prop::collection::vec((-30i64..300, 1i64..360, 1usize..40, 0u64..1_000_000), 3);
    let case = std::cell::Cell::new(0);
    runner
        .run(&(batches, asks), |(batches, asks)| {
            case.set(case.get() + 1);
            let asset = format!("{asset}-{}", case.get());
            let mut events: Vec<Ev> = Vec::new();
            for batch in batches {
                let body: Vec<Value> = batch
                    .iter()
                    .map(|&(s, l, landed)| {
                        json!({"asset": asset, "start": minute(s), "end": minute(s + l),
                               "kind": if landed { "landed" } else { "retracted" }})
                    })
                    .collect();
                let r = c.post_json("/v1/events", &json!(body));
                prop_assert_eq!(r.status, 200, "{}", r.text());
                events.extend(batch);
                for &(from, len, n, shift) in &asks {
                    // Ranges start anywhere within a minute, not only on it.
                    let start = micros(&minute(from)) + shift as i64;
                    let end = micros(&minute(from + len));
                    let iso = |us: i64| jiff::Timestamp::from_microsecond(us).unwrap().to_string();
                    let r = c.get(&format!(
                        "/v1/assets/{}/buckets?start={}&end={}&buckets={n}",
                        enc(&asset),
                        iso(start),
                        iso(end)
                    ));
                    prop_assert_eq!(r.status, 200, "{}", r.text());
                    let v = r.json();
                    let parts = v["buckets"].as_array().unwrap();
                    prop_assert_eq!(parts.len(), n);
                    let mut sums = [0i64; 3];
                    let mut at = start;
                    for p in parts {
                        let (lo, hi) = (
                            micros(p["start"].as_str().unwrap()),
                            micros(p["end"].as_str().unwrap()),
                        );
                        prop_assert_eq!(lo, at, "parts follow each other");
                        at = hi;
                        let got = [
                            p["missing_us"].as_i64().unwrap(),
                            p["covered_us"].as_i64().unwrap(),
                            p["retracted_us"].as_i64().unwrap(),
                        ];
                        prop_assert_eq!(got, painted(&events, lo, hi), "part [{}, {})", lo, hi);
                        // The coverage route agrees on the part's range.
                        let check = c
                            .get(&format!(
                                "/v1/assets/{}/coverage?start={}&end={}",
                                enc(&asset),
                                p["start"].as_str().unwrap(),
                                p["end"].as_str().unwrap()
                            ))
                            .json();
                        let gaps: i64 = check["missing"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|g| {
                                micros(g["end"].as_str().unwrap())
                                    - micros(g["start"].as_str().unwrap())
                            })
                            .sum();
                        prop_assert_eq!(got[1], hi - lo - gaps, "coverage of [{}, {})", lo, hi);
                        for (s, g) in sums.iter_mut().zip(got) {
                            *s += g;
                        }
                    }
                    prop_assert_eq!(at, end);
                    prop_assert_eq!(
                        [
                            v["missing_us"].as_i64().unwrap(),
                            v["covered_us"].as_i64().unwrap(),
                            v["retracted_us"].as_i64().unwrap()
                        ],
                        sums
                    );
                }
                // The ranges at once (POST /v1/buckets, with the first
                // ask's count and the asset asked twice) answer each as
                // the single route does.
                let n = asks[0].2;
                let iso = |us: i64| jiff::Timestamp::from_microsecond(us).unwrap().to_string();
                let ranges: Vec<(String, String)> = asks
                    .iter()
                    .map(|&(from, len, _, shift)| {
                        (
                            iso(micros(&minute(from)) + shift as i64),
                            minute(from + len),
                        )
                    })
                    .collect();
                let items: Vec<Value> = ranges
                    .iter()
                    .map(|(s, e)| json!({"asset": asset, "start": s, "end": e}))
                    .collect();
                let r = c.post_json("/v1/buckets", &json!({"assets": items, "buckets": n}));
                prop_assert_eq!(r.status, 200, "{}", r.text());
                let many = r.json();
                prop_assert_eq!(many["buckets"].as_array().unwrap().len(), ranges.len());
                for (i, (s, e)) in ranges.iter().enumerate() {
                    let one = c
                        .get(&format!(
                            "/v1/assets/{}/buckets?start={s}&end={e}&buckets={n}",
                            enc(&asset)
                        ))
                        .json();
                    prop_assert_eq!(&many["buckets"][i], &one, "item {}", i + 1);
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn buckets_match_the_painted_timeline_on_sqlite() {
    let server = TestServer::start();
    check_against_reference(&server, "a", 24);
    // A short range in more parts than it has microseconds: one each.
    let c = server.client();
    let v = c
        .get("/v1/assets/a-1/buckets?start=2025-06-01T00:00:00Z&end=2025-06-01T00:00:00.000003Z&buckets=10")
        .json();
    assert_eq!(v["buckets"].as_array().unwrap().len(), 3, "{v}");
}

#[test]
fn buckets_refuse_bad_counts_and_unknown_assets() {
    let server = TestServer::start();
    let c = server.client();
    let r = c.post_json(
        "/v1/events",
        &json!({"asset": "orders", "start": minute(0), "end": minute(5)}),
    );
    assert_eq!(r.status, 200);
    let range = format!("start={}&end={}", minute(0), minute(10));
    for (n, words) in [
        ("0", "buckets: 0 is out of range: give 1 to 10000"),
        ("10001", "buckets: 10001 is out of range: give 1 to 10000"),
        ("many", "buckets: \"many\" is not a number: give 1 to 10000"),
    ] {
        let r = c.get(&format!("/v1/assets/orders/buckets?{range}&buckets={n}"));
        assert_eq!((r.status, r.error()), (400, words.to_string()));
    }
    let r = c.get(&format!("/v1/assets/ordres/buckets?{range}"));
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(r.error().contains("\"orders\""), "{}", r.error());
    // Several at once refuse what the single route refuses, and bound
    // their parts in all.
    let item = json!({"asset": "orders", "start": minute(0), "end": minute(10)});
    let nosuch = json!({"asset": "ordres", "start": minute(0), "end": minute(10)});
    let r = c.post_json("/v1/buckets", &json!({"assets": [item, nosuch]}));
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(
        r.error().starts_with("unknown asset \"ordres\""),
        "{}",
        r.error()
    );
    for (body, words) in [
        (
            json!({"assets": vec![item.clone(); 21], "buckets": 10000}),
            "buckets: 21 items of 10000 parts are 210000 parts, more than the limit of 200000: \
             ask for fewer items or parts at once",
        ),
        (
            json!({"assets": [item], "buckets": 0}),
            "buckets: 0 is out of range: give 1 to 10000",
        ),
        (
            json!({"assets": vec![item.clone(); 1001]}),
            "assets: 1001 items, more than the limit of 1000: ask about fewer at once",
        ),
        (
            json!({"assets": []}),
            "assets: give at least one asset and range",
        ),
        (
            json!({"assets": [item, {"asset": "orders", "start": minute(10), "end": minute(0)}]}),
            "assets item 2: range: ",
        ),
    ] {
        let r = c.post_json("/v1/buckets", &body);
        assert_eq!(r.status, 400, "{}", r.text());
        assert!(r.error().starts_with(words), "{}", r.error());
    }
    // Without a count: 100 parts.
    let v = c.get(&format!("/v1/assets/orders/buckets?{range}")).json();
    assert_eq!(v["buckets"].as_array().unwrap().len(), 100);
    assert_eq!(v["covered_us"], 300_000_000);
    assert_eq!(v["missing_us"], 300_000_000);
}

#[test]
fn buckets_match_the_painted_timeline_on_postgres() {
    let (url, required) = match std::env::var("GAPLESS_TEST_PG") {
        Ok(u) => (u, true),
        Err(_) => ("postgres://postgres@127.0.0.1:5432/test".to_string(), false),
    };
    if let Err(e) = postgres::Client::connect(&url, postgres::NoTls) {
        assert!(!required, "PostgreSQL at {url} is not reachable: {e}");
        eprintln!("skipped: no PostgreSQL at {url} ({e}); set GAPLESS_TEST_PG");
        return;
    }
    let schema = format!("gs_buckets_{}", std::process::id());
    let store = gapless_store::PostgresStore::open_in_schema(&url, &schema).unwrap();
    let server = TestServer::with_ledger(
        tempfile::tempdir().unwrap(),
        Ledger::new(Arc::new(store)),
        ServerConfig::default(),
    );
    check_against_reference(&server, "pg", 12);
    drop(server);
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
        .unwrap();
}
