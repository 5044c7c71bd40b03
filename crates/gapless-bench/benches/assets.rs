//! The assets overview of a platform, a plain binary (`cargo bench -p
//! gapless-bench --bench assets`): a ledger of 10,000 assets (three events
//! each over the last eight days, so that each has runs in its day and its
//! week and a gap), served by `gapless serve`, first on a SQLite file, then
//! on a fresh PostgreSQL schema. Asked: a page of `GET /v1/assets?limit=100`
//! (each asset with its frontier and its covered share of the last day and
//! week) from cursors spread over the listing, against the baseline of the
//! same run, `GET /v1/assets/{asset}` of one asset (one row, no overview);
//! the ratio is printed. The target, a page at most 2x a single `asset
//! show`, is judged as whole commands (`gapless assets --limit 100`
//! against `gapless asset show`), where each command's start and its
//! connection count, as they do for a user. Also shown: a page of a
//! prefix (a seek of the name index), of a substring (a scan of the names),
//! every page of the listing (what one answer of every asset was), the
//! client's parse of one page's answer alone (into a `serde_json::Value`,
//! and into `gapless_api::AssetsAnswer`, as gapless-client and the timed
//! requests read it: part of each page's time), and
//! `POST /v1/buckets` of a page's rows (100 assets, 100 parts each). Each
//! time is a whole HTTP round trip on loopback, the median of 101 (21 for
//! the listing).
//!
//! `GAPLESS_BENCH_ASSETS` (default 10000) the number of assets;
//! `GAPLESS_LOAD_PG` (default `postgres://postgres@127.0.0.1:5432/test`,
//! `off` to skip) the PostgreSQL database; its schema is dropped at the end.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Instant;

use gapless_bench::*;

/// The median of `runs` timed calls of `f`, in milliseconds.
fn median_ms(runs: usize, mut f: impl FnMut(usize)) -> f64 {
    let mut v: Vec<f64> = (0..runs)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[runs / 2]
}

fn get(agent: &ureq::Agent, url: &str) -> serde_json::Value {
    let mut r = agent.get(url).call().expect("GET");
    assert_eq!(r.status().as_u16(), 200, "{url}");
    serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
}

/// The answer at `url` read as gapless-client reads it: into its
/// `gapless-api` type, straight from the bytes.
fn get_typed<T: serde::de::DeserializeOwned>(agent: &ureq::Agent, url: &str) -> T {
    let mut r = agent.get(url).call().expect("GET");
    assert_eq!(r.status().as_u16(), 200, "{url}");
    serde_json::from_slice(&r.body_mut().read_to_vec().unwrap()).unwrap()
}

fn name(i: usize) -> String {
    format!("s3://lake/team{}/table{i:05}", i % 50)
}

/// Percent-encoded for a path segment or a query value.
fn enc(s: &str) -> String {
    s.bytes().fold(String::new(), |mut out, b| {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
        out
    })
}

/// The events of `n` assets as NDJSON: each covered from 8 days ago to 30
/// hours ago and from 20 hours ago to a random hour of the last 12, with a
/// retraction inside the first run.
fn ledger_file(path: &std::path::Path, n: usize) {
    let now = jiff::Timestamp::now().as_second();
    let at = |h: i64| ts(now - h * 3600);
    let mut rng = Rng(7);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..n {
        let a = name(i);
        let to = rng.below(12) as i64;
        writeln!(
            out,
            "{{\"asset\":\"{a}\",\"start\":\"{}\",\"end\":\"{}\"}}\n\
             {{\"asset\":\"{a}\",\"start\":\"{}\",\"end\":\"{}\"}}\n\
             {{\"asset\":\"{a}\",\"start\":\"{}\",\"end\":\"{}\",\"kind\":\"retracted\"}}",
            at(192),
            at(30),
            at(20),
            at(to),
            at(100),
            at(99)
        )
        .unwrap();
    }
}

fn bench(backend: &str, db: &str, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("assets.ndjson");
    ledger_file(&file, n);
    let t = Instant::now();
    run_gapless(db, &["ingest", file.to_str().unwrap()]);
    println!(
        "{backend}: a ledger of {n} assets ({} events), made in {:.1} s",
        3 * n,
        t.elapsed().as_secs_f64()
    );
    let server = Server::start(db);
    let agent = agent();
    let base = &server.base;
    // Cursors spread over the listing: the first page and the cursors of
    // a walk in twenty steps.
    let sorted: Vec<String> = {
        let mut v: Vec<String> = (0..n).map(name).collect();
        v.sort();
        v
    };
    let step = n.div_ceil(20).clamp(1, 1000);
    let mut after: Vec<String> = Vec::new();
    let mut url = format!("{base}/v1/assets?limit={step}");
    while let Some(c) = get(&agent, &url)["next"].as_str() {
        after.push(c.to_string());
        url = format!("{base}/v1/assets?limit={step}&after={c}");
    }
    assert!(!after.is_empty(), "a listing of one page");
    let page_url = |i: usize| match i % (after.len() + 1) {
        0 => format!("{base}/v1/assets?limit=100"),
        k => format!("{base}/v1/assets?limit=100&after={}", after[k - 1]),
    };
    let p = get(&agent, &page_url(0));
    assert_eq!(p["assets"].as_array().unwrap().len(), 100.min(n));
    let day = p["assets"][0]["covered_ratio_day"].as_f64().unwrap();
    assert!(day > 0.0 && day < 1.0, "{p}");
    let mut rng = Rng(11);
    let one_url: Vec<String> = (0..101)
        .map(|_| {
            format!(
                "{base}/v1/assets/{}",
                enc(&name(rng.below(n as u64) as usize))
            )
        })
        .collect();
    // Warm both.
    for (i, one) in one_url.iter().enumerate().take(21) {
        get(&agent, &page_url(i));
        get(&agent, one);
    }
    let baseline = median_ms(101, |i| {
        let one: gapless_api::AssetAnswer = get_typed(&agent, &one_url[i]);
        assert!(one.events > 0);
    });
    println!("{backend}: baseline, GET /v1/assets/{{asset}}: {baseline:.2} ms");
    let page = median_ms(101, |i| {
        let page: gapless_api::AssetsAnswer = get_typed(&agent, &page_url(i));
        assert_eq!(page.assets.len(), 100.min(n));
    });
    // Over bare HTTP the page is compared with a round trip that does
    // almost nothing (one row, no overview) and whose length is mostly the
    // machine's wake-up of the other side: printed, not judged. The target
    // is judged as the commands a user runs, below.
    println!(
        "{backend}: GET /v1/assets?limit=100 (a page with its overviews): {page:.2} ms = {:.2}x the baseline",
        page / baseline
    );
    // The same comparison as a user at a terminal makes it: `gapless
    // assets --limit 100` against `gapless asset show NAME`, whole commands
    // against the server, their output written to a pipe that is drained.
    let command = |args: &[&str]| {
        let out = std::process::Command::new(gapless())
            .args(["--url", base.as_str()])
            .args(args)
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("run gapless");
        assert!(out.status.success(), "gapless {args:?}");
        assert!(!out.stdout.is_empty());
    };
    let shown = median_ms(41, |i| command(&["asset", "show", &name(i * 241 % n)]));
    let listed = median_ms(41, |_| command(&["assets", "--limit", "100"]));
    println!(
        "{backend}: as commands, `gapless assets --limit 100` {listed:.2} ms = {:.2}x `gapless asset show` {shown:.2} ms (target <= 2x: {})",
        listed / shown,
        verdict(listed <= 2.0 * shown)
    );
    // What of a page's time is the client's own reading of its answer:
    // the part no store can save. Read into a `serde_json::Value`, as a
    // script that does not know the shape would, it costs about twice the
    // typed read the timed requests do.
    let body = agent
        .get(&page_url(1))
        .call()
        .expect("GET")
        .body_mut()
        .read_to_string()
        .unwrap();
    let parse = median_ms(101, |_| {
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(v["assets"].is_array());
    });
    println!(
        "{backend}: a page's answer ({} bytes) parsed alone by the client: {parse:.2} ms = {:.2}x the baseline",
        body.len(),
        parse / baseline
    );
    // The same answer read as the timed requests and the Rust client
    // (gapless-client) read it: into its type, instants and names straight
    // from the text.
    let typed = median_ms(101, |_| {
        let page: gapless_api::AssetsAnswer = serde_json::from_slice(body.as_bytes()).unwrap();
        assert!(!page.assets.is_empty());
    });
    println!(
        "{backend}: ... read into gapless_api::AssetsAnswer, as gapless-client reads it: {typed:.2} ms = {:.2}x the baseline",
        typed / baseline
    );
    let prefix = median_ms(101, |i| {
        get(
            &agent,
            &format!(
                "{base}/v1/assets?limit=100&prefix={}",
                enc(&format!("s3://lake/team{}/", i % 50))
            ),
        );
    });
    println!(
        "{backend}: GET /v1/assets?prefix=…&limit=100 (a seek of the name index): {prefix:.2} ms = {:.2}x the baseline",
        prefix / baseline
    );
    let contains = median_ms(101, |i| {
        get(
            &agent,
            &format!("{base}/v1/assets?limit=100&contains=table{:03}", i % 100),
        );
    });
    println!(
        "{backend}: GET /v1/assets?contains=…&limit=100 (a scan of the names): {contains:.2} ms = {:.2}x the baseline",
        contains / baseline
    );
    let every = median_ms(21, |_| {
        let mut url = format!("{base}/v1/assets?limit=1000");
        let mut seen = 0;
        loop {
            let p = get(&agent, &url);
            seen += p["assets"].as_array().unwrap().len();
            match p["next"].as_str() {
                Some(c) => url = format!("{base}/v1/assets?limit=1000&after={c}"),
                None => break,
            }
        }
        assert_eq!(seen, n);
    });
    println!(
        "{backend}: every page of the listing (limit=1000, {n} assets): {every:.2} ms = {:.2}x the baseline",
        every / baseline
    );
    let now = jiff::Timestamp::now().as_second();
    let items: Vec<serde_json::Value> = sorted
        .iter()
        .take(100)
        .map(|a| serde_json::json!({"asset": a, "start": ts(now - 7 * 86_400), "end": ts(now)}))
        .collect();
    let body = serde_json::json!({"assets": items, "buckets": 100}).to_string();
    let bars = median_ms(21, |_| {
        let (status, text) = post(
            &agent,
            &format!("{base}/v1/buckets"),
            "application/json",
            &body,
        );
        assert_eq!(status, 200, "{text}");
    });
    println!(
        "{backend}: POST /v1/buckets, a page's bars (100 assets x 100 parts): {bars:.2} ms = {:.2}x the baseline",
        bars / baseline
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` would pass
    // nothing: run only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n: usize = env_or("GAPLESS_BENCH_ASSETS", 10_000);
    let dir = tempfile::tempdir().unwrap();
    bench("sqlite", dir.path().join("assets.db").to_str().unwrap(), n);
    let pg_url: String = env_or(
        "GAPLESS_LOAD_PG",
        "postgres://postgres@127.0.0.1:5432/test".to_string(),
    );
    if pg_url == "off" {
        return;
    }
    let Ok(mut pg) = postgres::Client::connect(&pg_url, postgres::NoTls) else {
        println!("postgres: {pg_url} cannot be reached: skipped");
        return;
    };
    let schema = format!("gapless_assets_{}", std::process::id());
    let sep = if pg_url.contains('?') { '&' } else { '?' };
    bench("postgres", &format!("{pg_url}{sep}schema={schema}"), n);
    if let Err(e) = pg.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")) {
        eprintln!("cannot drop schema {schema}: {e}");
    }
}
