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
