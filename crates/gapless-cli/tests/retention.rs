//! Retention (SPEC §3, `prune`): a pruned ledger answers every coverage
//! question exactly as a twin that never prunes, on both backends; its
//! segments and events say where their detail was pruned; a prune killed
//! mid-way loses nothing it was not to remove; and the command and route
//! refuse bad input in one line.

mod common;

use std::sync::Arc;

use common::{Gapless, PgSchema, Server};
use gapless_api::{
    Ask, PruneRequest, RuleWindowsRequest, SegmentAnswer, SegmentsAnswer, WindowsAnswer,
};
use gapless_core::{
    EventKind, Grid, Instant, Interval, NewEvent, Policy, Rule, RuleDef, RuleSettings,
};
use gapless_ledger::{Ledger, WindowsQuery};
use gapless_store::{FiringQuery, Store};
use serde_json::{json, Value};

/// A small deterministic generator, so a failure replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const MINUTE: i64 = 60_000_000;
/// 2025-06-01T00:00:00Z.
const BASE: i64 = 1_748_736_000_000_000;
/// The events' time line: three days of minutes.
const TICKS: i64 = 3 * 24 * 60;

fn at(m: i64) -> Instant {
    Instant::from_micros(BASE + m * MINUTE).unwrap()
}

fn iv(a: i64, b: i64) -> Interval {
    Interval::new(at(a), at(b)).unwrap()
}

fn random_range(rng: &mut Rng) -> Interval {
    let a = rng.below(TICKS as u64) as i64 - 60;
    iv(a, a + 1 + rng.below(24 * 60) as i64)
}

/// Every page of `segments`, each of at most `limit`, joined where a page
/// cut one (same event, same kind, touching).
fn all_segments(
    l: &Ledger,
    asset: &str,
    range: Interval,
    limit: usize,
) -> (Vec<SegmentAnswer>, Option<Instant>) {
    let mut out: Vec<SegmentAnswer> = Vec::new();
    let (mut after, mut first) = (None, None::<SegmentsAnswer>);
    loop {
        let page = l.segments_in(asset, range, Some(limit), after).unwrap();
        for s in &page.segments {
            match out.last_mut() {
                Some(p) if p.event == s.event && p.kind == s.kind && p.end == s.start => {
                    p.end = s.end
                }
                _ => out.push(s.clone()),
            }
        }
        let next = page.next.clone();
        first.get_or_insert(page);
        match next {
            Some(n) => after = Some(gapless_core::parse_instant(&n, None).unwrap()),
            None => return (out, first.unwrap().pruned_before),
        }
    }
}

/// What `segments` of a never-pruned ledger become once its detail before
/// `watermark` is pruned: cut at the watermark, no event before it, the
/// parts of one kind there joined.
fn as_pruned(segments: &[SegmentAnswer], watermark: Option<Instant>) -> Vec<SegmentAnswer> {
    let Some(w) = watermark else {
        return segments.to_vec();
    };
    let mut out: Vec<SegmentAnswer> = Vec::new();
    for s in segments {
        let mut pieces = Vec::new();
        if s.start < w {
            pieces.push(SegmentAnswer {
                end: s.end.min(w),
                event: None,
                ..s.clone()
            });
        }
        if s.end > w {
            pieces.push(SegmentAnswer {
                start: s.start.max(w),
                ..s.clone()
            });
        }
        for p in pieces {
            match out.last_mut() {
                Some(q)
                    if q.event.is_none()
                        && p.event.is_none()
                        && q.kind == p.kind
                        && q.end == p.start =>
                {
                    q.end = p.end
                }
                _ => out.push(p),
            }
        }
    }
    out
}

fn rules() -> Vec<Rule> {
    let rule = |name: &str, assets: &[&str], every: &str, tz: &str, policy: &str| Rule {
        name: name.to_string(),
        def: RuleDef::new(
            assets.iter().map(|s| s.to_string()).collect(),
            Grid::parse(every).unwrap(),
            tz,
            Policy::parse(policy).unwrap(),
            at(0),
            None,
        )
        .unwrap(),
        settings: RuleSettings::default(),
    };
    vec![
        rule("both_hourly", &["a", "b"], "1h", "UTC", "full"),
        rule("a_daily", &["a"], "1d", "Europe/Berlin", "ratio>=0.5"),
    ]
}

fn json_of<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

/// Random batches of two assets on two ledgers, one pruned now and then at
/// random instants (of one asset or all): after every batch each answer
/// read from the coverage (check, windows, frontier, buckets, the joint
/// coverage, rule windows and the firings of the rules) is the twin's, the
/// segments are the twin's as pruned, and events and segments that start
/// before the watermark carry it.
fn pruned_answers_as_the_twin(pruned: Arc<dyn Store>, twin: Arc<dyn Store>) {
    let (p, t) = (Ledger::new(pruned.clone()), Ledger::new(twin.clone()));
    let assets = ["a", "b"];
    let decl = gapless_core::AssetDecl {
        key_span: None,
        tz: jiff::tz::TimeZone::UTC,
    };
    for s in [&pruned, &twin] {
        for a in assets {
            s.declare_asset(a, &decl).unwrap();
        }
        for r in rules() {
            s.put_rule(&r, at(0)).unwrap();
        }
    }
    let mut rng = Rng(0x5EED_9A11_0C0F_FEE5);
    let mut watermark: [Option<Instant>; 2] = [None, None];
    let (mut p_seen, mut t_seen) = (None, None);
    let mut prunes = 0;
    for step in 0..60 {
        let now = at(step * TICKS / 60);
        let batch: Vec<NewEvent> = (0..1 + rng.below(6))
            .map(|_| {
                let a = rng.below(TICKS as u64) as i64;
                NewEvent {
                    asset: assets[rng.below(2) as usize].to_string(),
                    id: None,
                    interval: iv(a, a + 5 + rng.below(180) as i64),
                    kind: if rng.below(5) == 0 {
                        EventKind::Retracted
                    } else {
                        EventKind::Landed
                    },
                    extra: None,
                    produced_at: None,
                }
            })
            .collect();
        pruned.append(&batch, now).unwrap();
        twin.append(&batch, now).unwrap();
        // The firings of this batch: the same on both (read before a
        // prune, which may remove them).
        let firings = |s: &Arc<dyn Store>, after: &mut Option<i64>| -> Vec<Value> {
            let page = s
                .firings(&FiringQuery {
                    after: *after,
                    limit: 10_000,
                    ..FiringQuery::default()
                })
                .unwrap();
            if let Some(f) = page.firings.last() {
                *after = Some(f.seq);
            }
            page.firings
                .iter()
                .map(|f| json!([f.rule, f.kind, f.window, f.generation, f.covered_ratio]))
                .collect()
        };
        assert_eq!(
            firings(&pruned, &mut p_seen),
            firings(&twin, &mut t_seen),
            "step {step}: firings"
        );
        if rng.below(3) == 0 {
            prunes += 1;
            let before = at(rng.below(TICKS as u64) as i64);
            let one = (rng.below(3) == 0).then(|| assets[rng.below(2) as usize]);
            let answer = p
                .prune(&PruneRequest {
                    before: before.to_string(),
                    asset: one.map(str::to_string),
                    tz: None,
                })
                .unwrap();
            assert_eq!(answer.before, before);
            for (i, a) in assets.iter().enumerate() {
                let w = p
                    .asset(&gapless_api::AssetRequest {
                        asset: a.to_string(),
                    })
                    .unwrap();
                if w.pruned_before != watermark[i] {
                    assert_eq!(
                        w.pruned_before,
                        Some(before),
                        "step {step}: watermark of {a}"
                    );
                    watermark[i] = w.pruned_before;
                }
            }
        }

        for (i, a) in assets.iter().enumerate() {
            let range = random_range(&mut rng);
            let at_step = format!("step {step}, {a} over {range:?}");
            for policy in ["full", "gap<30m", "ratio>=0.5"] {
                let policy = Policy::parse(policy).unwrap();
                assert_eq!(
                    json_of(&p.check(a, range, &policy).unwrap()),
                    json_of(&t.check(a, range, &policy).unwrap()),
                    "{at_step}: check"
                );
            }
            let zone = jiff::tz::TimeZone::get("Europe/Berlin").unwrap();
            let q = WindowsQuery {
                range,
                grid: Grid::parse("1h").unwrap(),
                zone: &zone,
                zone_name: "Europe/Berlin",
                policy: Policy::parse("gap<10m").unwrap(),
                incomplete_only: false,
                key_format: "%Y-%m-%dT%H:%M:%S",
            };
            let windows = |l: &Ledger| -> WindowsAnswer { l.windows_in(a, &q).unwrap() };
            assert_eq!(
                json_of(&windows(&p)),
                json_of(&windows(&t)),
                "{at_step}: windows"
            );
            assert_eq!(
                json_of(&p.buckets_in(a, range, 37).unwrap()),
                json_of(&t.buckets_in(a, range, 37).unwrap()),
                "{at_step}: buckets"
            );
            assert_eq!(
                json_of(&p.frontier_from(a, range.start()).unwrap()),
                json_of(&t.frontier_from(a, range.start()).unwrap()),
                "{at_step}: frontier"
            );
            let both = ["a".to_string(), "b".to_string()];
            assert_eq!(
                json_of(&p.check_all(&both, range).unwrap()),
                json_of(&t.check_all(&both, range).unwrap()),
                "{at_step}: joint coverage"
            );
            for r in rules() {
                let q = RuleWindowsRequest {
                    name: r.name.clone(),
                    start: range.start().to_string(),
                    end: range.end().to_string(),
                    tz: None,
                };
                assert_eq!(
                    json_of(&p.rule_windows(&q).unwrap()),
                    json_of(&t.rule_windows(&q).unwrap()),
                    "{at_step}: rule windows of {}",
                    r.name
                );
            }
            // Segments: the twin's, as pruned; the watermark said where
            // the pages start before it.
            let limit = 1 + rng.below(6) as usize;
            let (got, said) = all_segments(&p, a, range, limit);
            let (twin_segments, _) = all_segments(&t, a, range, 10_000);
            let w = watermark[i].filter(|&w| w > range.start());
            assert_eq!(got, as_pruned(&twin_segments, w), "{at_step}: segments");
            assert_eq!(said, w, "{at_step}: segments' pruned_before");
            // Events: every event that reaches past the watermark is there,
            // and the answer says when its range starts before it.
            let listed = p
                .events_page(a, Some(range), None, Some(10_000), None)
                .unwrap();
            assert_eq!(listed.pruned_before, w, "{at_step}: events' pruned_before");
            let whole = t
                .events_page(a, Some(range), None, Some(10_000), None)
                .unwrap();
            let kept: Vec<_> = whole
                .events
                .iter()
                .filter(|e| {
                    watermark[i].is_none_or(|w| e.end > w) || e.kind == EventKind::Retracted
                })
                .map(|e| (e.seq, e.start, e.end))
                .collect();
            let have: Vec<_> = listed
                .events
                .iter()
                .map(|e| (e.seq, e.start, e.end))
                .collect();
            assert!(
                kept.iter().all(|k| have.contains(k)),
                "{at_step}: events {have:?} lack some of {kept:?}"
            );
        }
    }
    assert!(
        prunes > 10 && watermark.iter().all(Option::is_some),
        "the run prunes"
    );
}

#[test]
fn a_pruned_sqlite_ledger_answers_as_one_never_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let open = |name: &str| -> Arc<dyn Store> {
        Arc::from(gapless_store::open(dir.path().join(name).to_str().unwrap()).unwrap())
    };
    pruned_answers_as_the_twin(open("pruned.db"), open("twin.db"));
}

#[test]
fn a_pruned_postgres_ledger_answers_as_one_never_pruned() {
    let (one, two) = (PgSchema::new(), PgSchema::new());
    let open =
        |s: &PgSchema| -> Arc<dyn Store> { Arc::from(gapless_store::open(&s.url()).unwrap()) };
    pruned_answers_as_the_twin(open(&one), open(&two));
}

/// `gapless prune`'s bad input, embedded and against a server: one line
/// naming the input and the reason, exit 2, nothing removed; a token
/// without the admin scope is refused before anything else.
#[test]
fn prune_refuses_bad_input_in_one_line() {
    let g = Gapless::new();
    let out = g.run(&["prune", "--before", "2025-06-02"], None);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no ledger at"), "{}", out.stderr);
    let emit = |id: &str, a: &str, b: &str| {
        common::ok(&g.run(
            &["emit", "orders", "--start", a, "--end", b, "--id", id],
            None,
        ))
    };
    emit("1", "2025-06-01T00:00Z", "2025-06-01T01:00Z");
    emit("2", "2025-06-01T01:00Z", "2025-06-01T02:00Z");
    emit("3", "2025-06-01T02:00Z", "2025-06-01T03:00Z");
    let one_line = |out: &common::Output, says: &str| {
        assert_eq!(out.code, 2, "{out:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains(says), "{} lacks {says}", out.stderr);
        assert!(out.stdout.is_empty(), "{}", out.stdout);
    };
    one_line(
        &g.run(&["prune", "--before", "yesterday"], None),
        "before: invalid instant \"yesterday\"",
    );
    one_line(&g.run(&["prune"], None), "--before");
    one_line(
        &g.run(
            &["prune", "--before", "2025-06-02", "--asset", "ordres"],
            None,
        ),
        "unknown asset \"ordres\" (did you mean \"orders\"?)",
    );
    one_line(
        &g.run(
            &["prune", "--before", "2025-06-02", "--tz", "Mars/Olympus"],
            None,
        ),
        "Mars/Olympus",
    );
    for bad in ["1mo", "0s", "-5m", "soon"] {
        one_line(
            &g.run(&["serve", "--listen", "127.0.0.1:0", "--retain", bad], None),
            "--retain",
        );
    }
    let listed = common::ok(&g.run(&["asset", "show", "orders", "--json"], None));
    assert_eq!(
        (listed["events"].as_u64(), &listed["pruned_before"]),
        (Some(3), &Value::Null)
    );

    // Against a server with tokens: a reader's token is refused (403),
    // then the same errors as embedded (400, 404), then an admin's prune.
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        "[[token]]\nsecret = \"reader-secret-0123456789\"\nscopes = [\"read\"]\n\n\
         [[token]]\nsecret = \"admin-secret-0123456789\"\nscopes = [\"admin\"]\n",
    )
    .unwrap();
    let server = Server::start_with(&g, |c| {
        c.arg("--tokens-file").arg(&tokens);
    });
    let remote = |token: &str, args: &[&str]| {
        let mut cmd = g.command();
        cmd.env("GAPLESS_URL", &server.url)
            .env("GAPLESS_TOKEN", token)
            .args(args);
        common::run(&mut cmd, None)
    };
    const READER: &str = "reader-secret-0123456789";
    const ADMIN: &str = "admin-secret-0123456789";
    one_line(
        &remote(READER, &["prune", "--before", "2025-06-02"]),
        "admin",
    );
    one_line(
        &remote(ADMIN, &["prune", "--before", "yesterday"]),
        "before: invalid instant",
    );
    one_line(
        &remote(
            ADMIN,
            &["prune", "--before", "2025-06-02", "--asset", "ordres"],
        ),
        "did you mean \"orders\"?",
    );
    let got = common::ok(&remote(
        ADMIN,
        &["prune", "--before", "2025-06-01T02:00Z", "--json"],
    ));
    assert_eq!(
        got,
        json!({"before": "2025-06-01T02:00:00Z", "asset": null, "events_removed": 2,
               "firings_removed": 0, "assets_touched": 1})
    );
    let human = remote(ADMIN, &["prune", "--before", "2025-06-01T02:00Z"]);
    assert_eq!(common::ok(&human), Value::Null,);
    assert_eq!(
        human.stdout,
        "pruned before 2025-06-01T02:00:00Z: 0 events, 0 firings of 0 assets\n"
    );
    let shown = common::ok(&remote(READER, &["asset", "show", "orders", "--json"]));
    assert_eq!(shown["events"], 1);
    assert_eq!(shown["pruned_before"], "2025-06-01T02:00:00Z");
    // The answers over the pruned range say so.
    let segments = common::ok(&remote(
        READER,
        &[
            "segments",
            "orders",
            "--start",
            "2025-06-01",
            "--end",
            "2025-06-02",
            "--json",
        ],
    ));
    assert_eq!(
        segments["segments"],
        json!([
            {"start": "2025-06-01T00:00:00Z", "end": "2025-06-01T02:00:00Z", "kind": "landed", "event": null},
            {"start": "2025-06-01T02:00:00Z", "end": "2025-06-01T03:00:00Z", "kind": "landed",
             "event": {"id": "3", "seq": 3}}
        ])
    );
    assert_eq!(segments["pruned_before"], "2025-06-01T02:00:00Z");
    let events = common::ok(&remote(READER, &["events", "orders", "--json"]));
    assert_eq!(events["pruned_before"], "2025-06-01T02:00:00Z");
    let later = common::ok(&remote(
        READER,
        &[
            "events",
            "orders",
            "--start",
            "2025-06-01T02:00Z",
            "--end",
            "2025-06-02",
            "--json",
        ],
    ));
    assert_eq!(later["pruned_before"], Value::Null);
    // A pruned id is stored anew; a kept one is still a duplicate.
    let again = common::ok(&g.run(
        &[
            "emit",
            "orders",
            "--start",
            "2025-06-01T00:00Z",
            "--end",
            "2025-06-01T01:00Z",
            "--id",
            "1",
            "--json",
        ],
        None,
    ));
    assert_eq!(again, json!({"accepted": 1, "duplicates": 0}));
    let kept = common::ok(&g.run(
        &[
            "emit",
            "orders",
            "--start",
            "2025-06-01T02:00Z",
            "--end",
            "2025-06-01T03:00Z",
            "--id",
            "3",
            "--json",
        ],
        None,
    ));
    assert_eq!(kept, json!({"accepted": 0, "duplicates": 1}));
}

/// `serve --retain 30d` prunes what ended more than 30 days ago as it
/// starts, and logs it.
#[test]
fn serve_with_retain_prunes_at_start() {
    let g = Gapless::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let day = |d: i64| {
        Instant::from_micros((now - d * 86_400) * 1_000_000)
            .unwrap()
            .to_string()
    };
    for (id, from, to) in [
        ("old", 60, 50),
        ("older", 90, 60),
        ("recent", 10, 0),
        ("across", 40, 20),
    ] {
        common::ok(&g.run(
            &[
                "emit",
                "feed",
                "--start",
                &day(from),
                "--end",
                &day(to),
                "--id",
                id,
            ],
            None,
        ));
    }
    let server = Server::start_with(&g, |c| {
        c.args(["--retain", "30d"]).env("RUST_LOG", "info");
    });
    let mut shown = Value::Null;
    for _ in 0..500 {
        let mut cmd = g.command();
        cmd.env("GAPLESS_URL", &server.url)
            .args(["asset", "show", "feed", "--json"]);
        shown = common::ok(&common::run(&mut cmd, None));
        if shown["events"] == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(shown["events"], 2, "{shown}");
    let watermark =
        gapless_core::parse_instant(shown["pruned_before"].as_str().unwrap(), None).unwrap();
    let expected = Instant::from_micros((now - 30 * 86_400) * 1_000_000).unwrap();
    assert!(
        (watermark.as_micros() - expected.as_micros()).abs() < 60_000_000,
        "{watermark} is not now less 30 days"
    );
    // Coverage is whole: 90 to 50 days ago, pruned, without a gap.
    let mut cmd = g.command();
    cmd.env("GAPLESS_URL", &server.url).args([
        "check",
        "feed",
        "--start",
        &day(90),
        "--end",
        &day(50),
    ]);
    let checked = common::run(&mut cmd, None);
    assert_eq!(checked.code, 0, "{checked:?}");
    let mut logged = false;
    for _ in 0..100 {
        logged = server.log().iter().any(|l| l.contains("retention: pruned"));
        if logged {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(logged, "{:?}", server.log());
}

/// Events of the crash test: one-minute landed slices, a retraction every
/// 997 minutes and a long event every 10,007, each with its id.
fn crash_events(n: i64) -> Vec<(String, i64, i64, EventKind)> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push((format!("e{i}"), i, i + 1, EventKind::Landed));
        if i % 997 == 996 {
            out.push((format!("r{i}"), i - 5, i - 3, EventKind::Retracted));
        }
        if i % 10_007 == 10_006 {
            out.push((format!("l{i}"), i - 20_000, i + 300, EventKind::Landed));
        }
    }
    out
}

/// `gapless prune` killed with SIGKILL in the middle of a large prune
/// (caught there by watching the asset's event count fall): every step it
/// committed stays, coverage is exactly what it was, every event that was
/// not to be removed (ending after the instant, or retracted) is there,
/// the ledger checks out against itself, and pruning again finishes it.
#[test]
fn sigkill_mid_prune_loses_nothing_not_to_be_pruned() {
    const N: i64 = 300_000;
    let g = Gapless::new();
    let events = crash_events(N);
    let text: String = events
        .iter()
        .map(|(id, a, b, kind)| {
            format!(
                "{{\"asset\":\"big\",\"id\":\"{id}\",\"start\":\"{}\",\"end\":\"{}\",\"kind\":\"{}\"}}\n",
                at(*a),
                at(*b),
                kind.as_str()
            )
        })
        .collect();
    let file = g.dir.path().join("big.ndjson");
    std::fs::write(&file, text).unwrap();
    common::ok(&g.run(&["ingest", file.to_str().unwrap()], None));
    let mut model = gapless_core::Coverage::new();
    for (_, a, b, kind) in &events {
        model.apply(*kind, iv(*a, *b));
    }
    let count = || -> u64 {
        let mut cmd = g.command();
        cmd.args(["asset", "show", "big", "--json"]);
        common::ok(&common::run(&mut cmd, None))["events"]
            .as_u64()
            .unwrap()
    };
    let db = g.db.to_str().unwrap().to_string();
    // Each attempt prunes 40,000 minutes further; it is cut short once the
    // count is between what it was and what the prune leaves.
    let mut caught = None;
    for k in 1..=6_i64 {
        let before = at(k * 40_000);
        let left = events
            .iter()
            .filter(|(_, _, b, kind)| *kind == EventKind::Retracted || at(*b) > before)
            .count() as u64;
        let was = count();
        let mut child = g
            .command()
            .args(["prune", "--before", &before.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            let now = count();
            if now < was && now > left {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                caught = Some((before, left));
                break;
            }
        }
        if caught.is_some() {
            break;
        }
        assert_eq!(count(), left, "a prune that finished left {left}");
    }
    let (before, left) = caught.expect("a prune was caught mid-way in six attempts");

    let store = gapless_store::SqliteStore::open(&g.db).unwrap();
    store.verify().unwrap();
    drop(store);
    let store = gapless_store::open(&db).unwrap();
    let whole = iv(-30_000, N + 1_000);
    let runs: Vec<Interval> = store.coverage("big", whole).unwrap().runs().collect();
    let want: Vec<Interval> = model.set().runs().collect();
    assert_eq!(runs, want, "coverage after the kill");
    let mut ids = std::collections::HashSet::new();
    let mut after = None;
    loop {
        let page = store
            .events(
                "big",
                &gapless_store::EventQuery {
                    limit: 10_000,
                    after,
                    ..Default::default()
                },
            )
            .unwrap();
        ids.extend(page.events.iter().filter_map(|e| e.id.clone()));
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    let summary = store.asset("big").unwrap().unwrap();
    assert_eq!(summary.events, ids.len() as u64, "the count is the events'");
    assert!(summary.events > left, "the kill came before the end");
    for (id, _, b, kind) in &events {
        if *kind == EventKind::Retracted || at(*b) > before {
            assert!(ids.contains(id), "{id} was not to be pruned");
        }
    }
    assert_eq!(summary.pruned_before, Some(before));
    drop(store);
    // Pruning again finishes it.
    common::ok(&g.run(&["prune", "--before", &before.to_string()], None));
    assert_eq!(count(), left);
    let check = g
        .run(
            &[
                "check",
                "big",
                "--start",
                &whole.start().to_string(),
                "--end",
                &whole.end().to_string(),
                "--json",
            ],
            None,
        )
        .json();
    let missing: Vec<Interval> = serde_json::from_value(check["missing"].clone()).unwrap();
    assert_eq!(missing, model.report(whole).missing);
}
