//! `gapless ingest --format` (SPEC §10) on the real producer captures in
//! `python/tests/producers/data/` (Spark 4 progress, pyiceberg snapshots, an
//! Airflow asset-event page, openlineage-python's file transport output),
//! embedded and through a server: the coverage each capture describes,
//! reruns as duplicates, and one-line errors; and the OpenLineage file
//! stored as `POST /api/v1/lineage` stores the same events.

mod common;

use std::path::PathBuf;

use common::{ok, Gapless, Server};
use serde_json::{json, Value};

fn capture(name: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "python",
        "tests",
        "producers",
        "data",
        name,
    ]
    .iter()
    .collect();
    path.display().to_string()
}

fn segments(g: &Gapless, asset: &str, start: &str, end: &str) -> Vec<(String, String, String)> {
    let out = ok(&g.run(
        &["segments", asset, "--start", start, "--end", end, "--json"],
        None,
    ));
    out["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["start"].as_str().unwrap().to_string(),
                s["end"].as_str().unwrap().to_string(),
                s["event"]["id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Watermark mode: batches 3-6 of the capture tile
/// [11:30:50.416, 11:31:09.416) without a hole (their min/max would leave
/// one between every two batches); batches 0-2 say nothing yet.
fn spark(g: &Gapless) {
    let file = capture("spark_progress_all.json");
    let args = [
        "ingest",
        &file,
        "--format",
        "spark-progress",
        "--asset",
        "clicks",
        "--json",
    ];
    let out = g.run(&args, None);
    assert_eq!(
        ok(&out),
        serde_json::json!({"accepted": 4, "duplicates": 0})
    );
    assert!(
        out.stderr
            .contains("4 events from 7 spark-progress records; left out 3: 2 no watermark yet, 1 the first watermark"),
        "{}",
        out.stderr
    );
    let q = "e65b5d88-ca68-4712-8046-97f7a8bd1799";
    let segs = segments(g, "clicks", "2026-11-30T11:30Z", "2026-11-30T11:32Z");
    let ids: Vec<String> = segs.iter().map(|s| s.2.clone()).collect();
    assert_eq!(ids, (3..=6).map(|b| format!("{q}:{b}")).collect::<Vec<_>>());
    assert_eq!(segs[0].0, "2026-11-30T11:30:50.416Z");
    assert_eq!(segs[3].1, "2026-11-30T11:31:09.416Z");
    let check = g.run(
        &[
            "check",
            "clicks",
            "--start",
            "2026-11-30T11:30:50.416Z",
            "--end",
            "2026-11-30T11:31:09.416Z",
        ],
        None,
    );
    assert_eq!(check.code, 0, "{:?}", check.stdout);
    // A log that holds the run twice (a restart replays its batches): the
    // same ids and intervals, so nothing new.
    assert_eq!(
        ok(&g.run(&args, None)),
        serde_json::json!({"accepted": 0, "duplicates": 4})
    );
    // The log of a restarted run: batches 5 and 6 again (a new runId), then
    // batch 7. The re-run of 6 is what the first run recorded (left out,
    // not a conflict); 7 continues the time line.
    let all: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut restarted: Vec<serde_json::Value> = all[5..7].to_vec();
    let mut seventh = all[6].clone();
    seventh["batchId"] = 7.into();
    seventh["eventTime"]["watermark"] = "2026-11-30T11:31:14.416Z".into();
    restarted.push(seventh);
    for p in &mut restarted {
        p["runId"] = "a-later-run".into();
    }
    let log = g.dir.path().join("restarted.json");
    std::fs::write(&log, serde_json::to_string(&restarted).unwrap()).unwrap();
    let log = log.display().to_string();
    let out = g.run(
        &[
            "ingest",
            &log,
            "--format",
            "spark-progress",
            "--asset",
            "clicks",
            "--json",
        ],
        None,
    );
    assert_eq!(
        ok(&out),
        serde_json::json!({"accepted": 1, "duplicates": 0})
    );
    assert!(
        out.stderr
            .contains("1 batches another run of the query recorded"),
        "{}",
        out.stderr
    );
    let segs = segments(g, "clicks", "2026-11-30T11:31Z", "2026-11-30T11:32Z");
    assert_eq!(
        segs.last().unwrap(),
        &(
            "2026-11-30T11:31:09.416Z".to_string(),
            "2026-11-30T11:31:14.416Z".to_string(),
            format!("{q}:7")
        )
    );
    // The extra keeps what the progress said.
    let events = ok(&g.run(
        &[
            "events",
            "clicks",
            "--start",
            "2026-11-30",
            "--end",
            "2026-12-01",
            "--json",
        ],
        None,
    ));
    let extra = &events["events"][0]["extra"];
    assert_eq!(extra["batch_id"], 3);
    assert_eq!(extra["num_input_rows"], 200);
    assert_eq!(extra["run_id"], "72be8e83-81ca-4532-bce8-a19443140f07");
    assert_eq!(extra["offsets"][0]["start"], 8);
}

/// Three 5-minute appends, then the overwrite of the hour (a delete and an
/// append): one batch, so a rule on the hour fires `complete` once and
/// never `incomplete`; the hour's segment is the overwrite's append, its
/// 64-bit id exact.
fn iceberg(g: &Gapless) {
    ok(&g.run(&["asset", "set", "ice", "--tz", "UTC"], None));
    ok(&g.run(
        &[
            "rule",
            "set",
            "ice_hourly",
            "--assets",
            "ice",
            "--every",
            "1h",
            "--from",
            "2025-06-01",
        ],
        None,
    ));
    let file = capture("iceberg_snapshots.json");
    let no_uuid = g.run(
        &[
            "ingest",
            &file,
            "--format",
            "iceberg-snapshots",
            "--asset",
            "ice",
        ],
        None,
    );
    assert_eq!(no_uuid.code, 2);
    assert!(
        no_uuid.stderr.contains("no table-uuid"),
        "{}",
        no_uuid.stderr
    );
    let uuid = "7d8f0e2a-5a47-4a36-9a8e-1f6f5cfbd001";
    let args = [
        "ingest",
        &file,
        "--format",
        "iceberg-snapshots",
        "--asset",
        "ice",
        "--table-uuid",
        uuid,
        "--json",
    ];
    assert_eq!(
        ok(&g.run(&args, None)),
        serde_json::json!({"accepted": 5, "duplicates": 0})
    );
    let segs = segments(g, "ice", "2025-06-01T10:00Z", "2025-06-01T11:00Z");
    assert_eq!(
        segs,
        [(
            "2025-06-01T10:00:00Z".to_string(),
            "2025-06-01T11:00:00Z".to_string(),
            format!("iceberg:{uuid}:4884366213967367083")
        )]
    );
    let firings = ok(&g.run(&["firings", "--rule", "ice_hourly", "--json"], None));
    let kinds: Vec<(&str, &str)> = firings["firings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap(), f["key"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("complete", "2025-06-01T10:00:00")]);
    assert_eq!(
        ok(&g.run(&args, None)),
        serde_json::json!({"accepted": 0, "duplicates": 5})
    );
}

/// An Airflow page: interval extras and ISO interval keys are placed; a
/// discrete key only once its asset declares a key span (before, it is left
/// out and said so); assets named by URI, or by name.
fn airflow(g: &Gapless) {
    let file = capture("airflow_asset_events_synthetic.json");
    let args = [
        "ingest",
        &file,
        "--format",
        "airflow-asset-events",
        "--json",
    ];
    let out = g.run(&args, None);
    let first = ok(&out);
    assert!(
        out.stderr
            .contains("discrete keys of assets without a key span"),
        "{}",
        out.stderr
    );
    ok(&g.run(
        &[
            "asset",
            "set",
            "s3://lake/events/clicks",
            "--key-span",
            "1h",
        ],
        None,
    ));
    let second = ok(&g.run(&args, None));
    assert_eq!(
        second["duplicates"], first["accepted"],
        "{first} then {second}"
    );
    assert!(second["accepted"].as_u64().unwrap() >= 1, "{second}");
    let by_name = ok(&g.run(
        &[
            "ingest",
            &file,
            "--format",
            "airflow-asset-events",
            "--asset-from",
            "name",
            "--json",
        ],
        None,
    ));
    assert!(by_name["accepted"].as_u64().unwrap() >= 1, "{by_name}");
    let assets = ok(&g.run(&["assets", "--json"], None));
    let names: Vec<&str> = assets["assets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["asset"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"clicks") && names.contains(&"s3://lake/events/clicks"),
        "{names:?}"
    );
}

/// The OpenLineage capture: the two `COMPLETE` hours land on both outputs,
/// one event each per run; `START`, `FAIL`, a run without `nominalTime` and
/// a dataset event are left out and said so; a replay is all duplicates.
fn openlineage(g: &Gapless) {
    let file = capture("openlineage_events.ndjson");
    let args = ["ingest", &file, "--format", "openlineage", "--json"];
    let out = g.run(&args, None);
    assert_eq!(ok(&out), json!({"accepted": 4, "duplicates": 0}));
    assert!(
        out.stderr.contains(
            "4 events one per output of each recorded run event; left out 7: \
             4 eventType START (only COMPLETE records), 1 eventType FAIL (only COMPLETE records), \
             1 no nominalTime and no partition key, 1 not a run event (no run: a dataset or job event)"
        ),
        "{}",
        out.stderr
    );
    for asset in ["s3://lake/orders", "postgres://db:5432/shop.public.orders"] {
        let segs = segments(g, asset, "2025-06-01T00:00:00Z", "2025-06-01T03:00:00Z");
        assert_eq!(segs.len(), 2, "{asset}: {segs:?}");
        assert_eq!(
            (segs[0].0.as_str(), segs[0].1.as_str()),
            ("2025-06-01T00:00:00Z", "2025-06-01T01:00:00Z")
        );
        assert_eq!(
            (segs[1].0.as_str(), segs[1].1.as_str()),
            ("2025-06-01T01:00:00Z", "2025-06-01T02:00:00Z")
        );
        assert!(segs[0].2.starts_with("openlineage:") && segs[1].2.starts_with("openlineage:"));
        assert_ne!(segs[0].2, segs[1].2, "one run an hour");
        // The failed hour is a gap.
        let check = g.run(
            &[
                "check",
                asset,
                "--start",
                "2025-06-01T00:00:00Z",
                "--end",
                "2025-06-01T03:00:00Z",
                "--json",
            ],
            None,
        );
        assert_eq!(check.code, 1, "{}", check.stderr);
        assert_eq!(
            check.json()["missing"],
            json!([{"start": "2025-06-01T02:00:00Z", "end": "2025-06-01T03:00:00Z"}])
        );
    }
    assert_eq!(
        ok(&g.run(&args, None)),
        json!({"accepted": 0, "duplicates": 4})
    );
}

fn errors(g: &Gapless) {
    let file = capture("spark_progress.json");
    let out = g.run(&["ingest", &file, "--format", "spark-progress"], None);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("spark-progress: needs the asset to record into (--asset)"),
        "{}",
        out.stderr
    );
    let out = g.run(
        &["ingest", "-", "--format", "spark-progress", "--asset", "a"],
        Some("{\"id\": 1"),
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("standard input: JSON value 1:"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    let out = g.run(&["ingest", "-", "--format", "parquet"], Some(""));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(
            "expected one of spark-progress, iceberg-snapshots, airflow-asset-events, openlineage"
        ),
        "{}",
        out.stderr
    );
}

fn all(g: &Gapless) {
    spark(g);
    iceberg(g);
    airflow(g);
    openlineage(g);
    errors(g);
}

#[test]
fn producer_formats_embedded() {
    all(&Gapless::new());
}

#[test]
fn producer_formats_over_http() {
    let mut g = Gapless::new();
    let server = Server::start(&g);
    g.url = Some(server.url.clone());
    all(&g);
}

/// The events of `asset` on `g`'s ledger, without what only says when this
/// ledger stored them.
fn stored(g: &Gapless, asset: &str) -> Vec<Value> {
    let out = ok(&g.run(&["events", asset, "--json"], None));
    let mut events = out["events"].as_array().unwrap().clone();
    for e in &mut events {
        e.as_object_mut().unwrap().remove("received_at");
    }
    events
}

#[test]
fn openlineage_replayed_from_a_file_stores_what_the_route_stores() {
    let file = capture("openlineage_events.ndjson");
    let replayed = Gapless::new();
    ok(&replayed.run(
        &["ingest", &file, "--format", "openlineage", "--json"],
        None,
    ));

    let posted = Gapless::new();
    let server = Server::start(&posted);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    // As the HTTP transport sends them: one event a request.
    let text = std::fs::read_to_string(&file).unwrap();
    let mut accepted = 0;
    for line in text.lines() {
        let mut r = agent
            .post(format!("{}/api/v1/lineage", server.url))
            .content_type("application/json")
            .send(line.as_bytes())
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let answer: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        accepted += answer["accepted"].as_u64().unwrap();
    }
    assert_eq!(accepted, 4);
    drop(server);
    for asset in ["s3://lake/orders", "postgres://db:5432/shop.public.orders"] {
        let (a, b) = (stored(&replayed, asset), stored(&posted, asset));
        assert_eq!(a.len(), 2, "{a:?}");
        assert_eq!(a, b, "{asset}");
    }
}
