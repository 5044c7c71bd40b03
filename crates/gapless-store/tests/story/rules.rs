//! The rules part of the story (SPEC §7), on every backend.
//!
//! The main scenario checks the ledger's firings against a brute-force
//! model: events are painted onto a timeline of ticks batch by batch, and
//! after each batch *every* window of every rule is judged from the ticks
//! (joint coverage of the rule's assets, the policy, "nothing covered is
//! never complete"); each change of a window's state is an expected firing.
//! The ledger judges only the windows a batch touches, in its transaction:
//! both must give the same firings in the same order.

use std::collections::HashMap;

use gapless_core::{
    parse_instant, CoverageReport, Duration, EventKind, FiringKind, Grid, Instant, Interval,
    NewEvent, Policy, Rule, RuleDef, RuleSettings,
};
use gapless_store::{DeliveryState, Firing, FiringQuery, RulePut, Store, StoreError};

use super::Rng;

const MINUTE: i64 = 60_000_000;
const HOUR: i64 = 60 * MINUTE;

/// The scale of one run of the model: a tick, the time line's start and
/// length in ticks (events lie inside), and the grids, zones and policies
/// that make sense at that scale.
pub(super) struct Scale {
    pub(super) tick: i64,
    pub(super) base: Instant,
    pub(super) ticks: i64,
    /// Ticks before and after the events, so that every window that
    /// overlaps them lies on the painted time line.
    margin: i64,
    event_ticks: (i64, i64),
    grids: &'static [&'static str],
    zones: &'static [&'static str],
    policies: &'static [&'static str],
}

/// Minutes over three days around Europe's fall-back night.
pub(super) fn minutes() -> Scale {
    Scale {
        tick: MINUTE,
        base: parse_instant("2025-10-25T00:00:00Z", None).unwrap(),
        ticks: 3 * 24 * 60,
        margin: 2 * 24 * 60,
        event_ticks: (5, 180),
        grids: &["15m", "30m", "1h", "3h", "1d"],
        zones: &["UTC", "Europe/Berlin", "Asia/Kolkata", "America/New_York"],
        policies: &["full", "ratio>=0.5", "ratio>=0.9", "gap<10m"],
    }
}

/// Hours over ten weeks across two month ends and a DST change.
pub(super) fn hours() -> Scale {
    Scale {
        tick: HOUR,
        base: parse_instant("2025-10-01T00:00:00Z", None).unwrap(),
        ticks: 70 * 24,
        margin: 40 * 24,
        event_ticks: (6, 24 * 5),
        grids: &["1d", "1w", "1mo"],
        zones: &["UTC", "Europe/Berlin", "America/New_York"],
        policies: &["full", "ratio>=0.75", "gap<6h"],
    }
}

/// The painted time line: per asset, per tick, covered or not.
pub(super) struct Model<'s> {
    scale: &'s Scale,
    lo: i64,
    ticks: HashMap<String, Vec<bool>>,
    /// Per rule name and window start: (complete, generation).
    states: HashMap<(String, Instant), (bool, u32)>,
}

/// An expected firing: rule, kind, window, generation, covered ratio.
pub(super) type Expected = (String, FiringKind, Interval, u32, f64);

impl<'s> Model<'s> {
    pub(super) fn new(scale: &'s Scale, assets: &[String]) -> Model<'s> {
        let n = (scale.ticks + 2 * scale.margin) as usize;
        Model {
            scale,
            lo: scale.base.as_micros() - scale.margin * scale.tick,
            ticks: assets.iter().map(|a| (a.clone(), vec![false; n])).collect(),
            states: HashMap::new(),
        }
    }

    pub(super) fn paint(&mut self, ev: &NewEvent) {
        let t = self.scale.tick;
        let a = ((ev.interval.start().as_micros() - self.lo) / t) as usize;
        let b = ((ev.interval.end().as_micros() - self.lo) / t) as usize;
        let line = self.ticks.get_mut(&ev.asset).expect("a known asset");
        for tick in &mut line[a..b] {
            *tick = ev.kind == EventKind::Landed;
        }
    }

    /// Joint coverage of `assets` over window `w`: covered ticks of the
    /// window, the longest uncovered stretch in ticks, the window's ticks.
    fn joint(&self, assets: &[String], w: Interval) -> (i64, i64, i64) {
        let t = self.scale.tick;
        let a = ((w.start().as_micros() - self.lo) / t) as usize;
        let b = ((w.end().as_micros() - self.lo) / t) as usize;
        let (mut covered, mut gap, mut longest) = (0, 0, 0);
        for i in a..b {
            if assets.iter().all(|x| self.ticks[x][i]) {
                covered += 1;
                gap = 0;
            } else {
                gap += 1;
                longest = longest.max(gap);
            }
        }
        (covered, longest, (b - a) as i64)
    }

    fn complete(&self, policy: Policy, covered: i64, longest_gap: i64, total: i64) -> bool {
        if covered == 0 {
            return false;
        }
        match policy {
            Policy::Full => covered == total,
            Policy::RatioAtLeast(r) => {
                covered == total || CoverageReport::ratio(covered, total) >= r
            }
            Policy::GapBelow(d) => longest_gap * self.scale.tick < d.fixed_micros().unwrap(),
        }
    }

    /// Judge every window of every rule (in name order); the changes.
    pub(super) fn judge(&mut self, rules: &[Rule]) -> Vec<Expected> {
        let span = Interval::from_micros(
            self.scale.base.as_micros(),
            self.scale.base.as_micros() + self.scale.ticks * self.scale.tick,
        )
        .unwrap();
        let mut out = Vec::new();
        for r in rules {
            for w in r.def.windows(span) {
                let (covered, gap, total) = self.joint(r.def.assets(), w);
                let now = self.complete(r.def.policy(), covered, gap, total);
                let ratio = CoverageReport::ratio(covered, total);
                let state = self.states.entry((r.name.clone(), w.start())).or_default();
                match (state.0, now) {
                    (false, true) => {
                        state.1 += 1;
                        state.0 = true;
                        out.push((r.name.clone(), FiringKind::Complete, w, state.1, ratio));
                    }
                    (true, false) => {
                        state.0 = false;
                        out.push((r.name.clone(), FiringKind::Incomplete, w, state.1, ratio));
                    }
                    _ => {}
                }
            }
        }
        out
    }
}

fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len() as u64) as usize]
}

pub(super) fn random_rule(rng: &mut Rng, scale: &Scale, assets: &[String], name: &str) -> Rule {
    let n = 1 + rng.below(assets.len() as u64) as usize;
    let mut chosen: Vec<String> = assets.to_vec();
    // A random subset of n assets.
    for i in 0..chosen.len() {
        let j = i + rng.below((chosen.len() - i) as u64) as usize;
        chosen.swap(i, j);
    }
    chosen.truncate(n);
    let from_ticks = rng.below(scale.ticks as u64 / 4) as i64;
    let from = Instant::from_micros(scale.base.as_micros() + from_ticks * scale.tick).unwrap();
    let until = (rng.below(3) == 0).then(|| {
        let t = scale.ticks / 2 + rng.below(scale.ticks as u64 / 2) as i64;
        Instant::from_micros(scale.base.as_micros() + t * scale.tick).unwrap()
    });
    let def = RuleDef::new(
        chosen,
        Grid::parse(pick(rng, scale.grids)).unwrap(),
        pick(rng, scale.zones),
        Policy::parse(pick(rng, scale.policies)).unwrap(),
        from,
        until,
    )
    .unwrap();
    Rule {
        name: name.to_string(),
        def,
        settings: RuleSettings {
            target: (rng.below(2) == 0).then(|| "hook".to_string()),
            ..RuleSettings::default()
        },
    }
}

pub(super) fn random_event(rng: &mut Rng, scale: &Scale, assets: &[String]) -> NewEvent {
    let (lo, hi) = scale.event_ticks;
    let len = lo + rng.below((hi - lo) as u64) as i64;
    // Starts on a multiple of 5 ticks half the time: slices that line up.
    let mut start = rng.below((scale.ticks - len) as u64) as i64;
    if rng.below(2) == 0 {
        start -= start % 5;
    }
    let at = |k: i64| Instant::from_micros(scale.base.as_micros() + k * scale.tick).unwrap();
    NewEvent {
        asset: assets[rng.below(assets.len() as u64) as usize].clone(),
        id: None,
        interval: Interval::new(at(start), at(start + len)).unwrap(),
        kind: if rng.below(5) == 0 {
            EventKind::Retracted
        } else {
            EventKind::Landed
        },
        extra: None,
        produced_at: None,
    }
}

/// Every firing after `after`, following the cursor.
pub fn firings_after(store: &dyn Store, after: Option<i64>) -> Vec<Firing> {
    let mut out = Vec::new();
    let mut after = after;
    loop {
        let page = store
            .firings(&FiringQuery {
                after,
                limit: 7,
                ..FiringQuery::default()
            })
            .unwrap();
        let n = page.firings.len();
        if let Some(last) = page.firings.last() {
            after = Some(last.seq);
        }
        out.extend(page.firings);
        if page.next.is_none() || n == 0 {
            return out;
        }
    }
}

pub(super) fn assert_firings(got: &[Firing], want: &[Expected], rules: &[Rule], at: &str) {
    let shown = |f: &Firing| {
        (
            f.rule.clone(),
            f.kind,
            f.window,
            f.generation,
            f.covered_ratio,
        )
    };
    let got_short: Vec<Expected> = got.iter().map(shown).collect();
    assert_eq!(
        got_short.len(),
        want.len(),
        "{at}: firings {got_short:#?}\nwant {want:#?}"
    );
    for (g, w) in got.iter().zip(want) {
        assert_eq!(
            (&g.rule, g.kind, g.window, g.generation),
            (&w.0, w.1, w.2, w.3),
            "{at}: firings {got_short:#?}\nwant {want:#?}"
        );
        assert!(
            (g.covered_ratio - w.4).abs() < 1e-12,
            "{at}: covered ratio {} != {}",
            g.covered_ratio,
            w.4
        );
        let rule = rules.iter().find(|r| r.name == g.rule).unwrap();
        assert_eq!(
            g.key,
            rule.def.key(g.window.start(), &rule.settings.key_format)
        );
        let state = if rule.settings.target.is_some() {
            DeliveryState::Pending
        } else {
            DeliveryState::None
        };
        assert_eq!(g.delivery.state, state, "{at}: delivery of {g:?}");
        assert_eq!(g.delivery.target, rule.settings.target);
    }
    for w in got.windows(2) {
        assert!(w[0].seq < w[1].seq, "{at}: firing numbers not increasing");
    }
}

/// Random rules and batches (single appends, groups, chunked appends) on
/// both scales: the ledger's firings are the model's, batch by batch.
pub fn rules_fire_as_the_model_judges(store: &dyn Store) {
    let assets: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    // A rule names assets the ledger knows.
    for a in &assets {
        store
            .declare_asset(
                a,
                &gapless_core::AssetDecl {
                    key_span: None,
                    tz: jiff::tz::TimeZone::UTC,
                },
            )
            .unwrap();
    }
    let now = parse_instant("2026-01-01T00:00:00Z", None).unwrap();
    let mut seen = None;
    for (round, scale) in [minutes(), hours(), minutes(), hours()].iter().enumerate() {
        let mut rng = Rng::new(0x5eed + round as u64);
        // Each round has rules of its own; earlier rounds' rules go.
        for r in store.rules().unwrap() {
            assert!(store.delete_rule(&r.rule.name).unwrap());
        }
        // Start from nothing covered on the model's time line.
        let wipe: Vec<NewEvent> = assets
            .iter()
            .map(|a| NewEvent {
                asset: a.clone(),
                id: None,
                interval: Interval::new(Instant::MIN, Instant::MAX).unwrap(),
                kind: EventKind::Retracted,
                extra: None,
                produced_at: None,
            })
            .collect();
        store.append(&wipe, now).unwrap();
        seen = firings_after(store, seen).last().map(|f| f.seq).or(seen);
        let mut model = Model::new(scale, &assets);
        let mut rules: Vec<Rule> = Vec::new();
        for step in 0..40 {
            if step % 10 == 0 && rules.len() < 4 {
                let rule = random_rule(&mut rng, scale, &assets, &format!("r{round}_{step}"));
                let put = store.put_rule(&rule, now).unwrap();
                rules.push(rule);
                rules.sort_by(|a, b| a.name.cmp(&b.name));
                let want: Vec<Expected> = model.judge(&rules).into_iter().collect();
                let got = firings_after(store, seen);
                assert_eq!(
                    put,
                    RulePut::Created {
                        firings: want.len() as u64
                    }
                );
                assert_firings(
                    &got,
                    &want,
                    &rules,
                    &format!("round {round} rule at step {step}"),
                );
                seen = got.last().map(|f| f.seq).or(seen);
            }
            // One append, a group of batches, or one batch in chunks.
            let shape = rng.below(3);
            let batches: Vec<Vec<NewEvent>> = (0..if shape == 1 { 3 } else { 1 })
                .map(|_| {
                    (0..1 + rng.below(4))
                        .map(|_| random_event(&mut rng, scale, &assets))
                        .collect()
                })
                .collect();
            let mut want = Vec::new();
            for b in &batches {
                for ev in b {
                    model.paint(ev);
                }
                want.extend(model.judge(&rules));
            }
            match shape {
                0 => {
                    store.append(&batches[0], now).unwrap();
                }
                1 => {
                    let refs: Vec<&[NewEvent]> = batches.iter().map(Vec::as_slice).collect();
                    for r in store.append_many(&refs, now) {
                        r.unwrap();
                    }
                }
                _ => {
                    let mut chunks = batches[0].chunks(1).map(|c| Ok(c.to_vec()));
                    store.append_chunks(&mut chunks, &mut drop, now).unwrap();
                }
            }
            let got = firings_after(store, seen);
            assert_firings(&got, &want, &rules, &format!("round {round} step {step}"));
            seen = got.last().map(|f| f.seq).or(seen);
        }
    }
}

fn decl() -> gapless_core::AssetDecl {
    gapless_core::AssetDecl {
        key_span: None,
        tz: jiff::tz::TimeZone::UTC,
    }
}

fn hourly(name: &str, assets: &[&str]) -> Rule {
    Rule {
        name: name.to_string(),
        def: RuleDef::new(
            assets.iter().map(|s| s.to_string()).collect(),
            Grid::parse("1h").unwrap(),
            "UTC",
            Policy::Full,
            super::t(0),
            None,
        )
        .unwrap(),
        settings: RuleSettings::default(),
    }
}

/// `rule set` again is a no-op, new settings are taken, a new definition
/// is refused, unknown assets are refused, delete removes the firings.
pub fn rule_definitions_cannot_change(store: &dyn Store) {
    let now = super::t(10_000);
    store.declare_asset("orders", &decl()).unwrap();
    store
        .append(&[super::landed("orders", 0, 60)], now)
        .unwrap();
    let rule = hourly("orders_hourly", &["orders"]);
    assert_eq!(
        store.put_rule(&rule, now).unwrap(),
        RulePut::Created { firings: 1 }
    );
    assert_eq!(store.put_rule(&rule, now).unwrap(), RulePut::Unchanged);
    let mut moved = rule.clone();
    moved.settings.target = Some("airflow".into());
    moved.settings.deadline = Some(Duration::parse("PT30M").unwrap());
    moved.settings.key_format = "%Y%m%d%H".into();
    assert_eq!(store.put_rule(&moved, now).unwrap(), RulePut::Updated);
    let stored = store.rule("orders_hourly").unwrap().unwrap();
    assert_eq!(stored.rule, moved);
    assert_eq!(stored.created_at, now);
    // The firing recorded before keeps what it was recorded with.
    let page = store.firings(&FiringQuery::default()).unwrap();
    assert_eq!(page.firings.len(), 1);
    assert_eq!(page.firings[0].key, "2025-06-01T00:00:00");
    assert_eq!(page.firings[0].delivery.state, DeliveryState::None);

    let mut other = rule.clone();
    other.def = RuleDef::new(
        vec!["orders".into()],
        Grid::parse("30m").unwrap(),
        "UTC",
        Policy::Full,
        super::t(0),
        None,
    )
    .unwrap();
    match store.put_rule(&other, now) {
        Err(StoreError::Conflicting(m)) => {
            assert!(m.contains("every 1h (given 30m)"), "{m}");
            assert!(m.contains("gapless rule delete orders_hourly"), "{m}");
        }
        other => panic!("a new definition must be refused: {other:?}"),
    }
    match store.put_rule(&hourly("x", &["nosuch"]), now) {
        Err(StoreError::Invalid(m)) => assert!(m.contains("unknown asset \"nosuch\""), "{m}"),
        other => panic!("an unknown asset must be refused: {other:?}"),
    }
    assert!(store.rule("x").unwrap().is_none());
    let mut bad = rule.clone();
    bad.name = "bad name".into();
    assert!(matches!(
        store.put_rule(&bad, now),
        Err(StoreError::Invalid(_))
    ));
    bad = rule.clone();
    bad.settings.key_format = "%Y%".into();
    assert!(matches!(
        store.put_rule(&bad, now),
        Err(StoreError::Invalid(_))
    ));

    // New events fire with the new settings: a pending delivery, new keys.
    store
        .append(&[super::landed("orders", 60, 120)], now)
        .unwrap();
    let page = store.firings(&FiringQuery::default()).unwrap();
    assert_eq!(page.firings.len(), 2);
    assert_eq!(page.firings[1].key, "2025060101");
    assert_eq!(page.firings[1].delivery.state, DeliveryState::Pending);
    assert_eq!(page.firings[1].delivery.target.as_deref(), Some("airflow"));
    assert_eq!(page.firings[1].delivery.attempts, 0);

    assert_eq!(store.rules().unwrap().len(), 1);
    assert!(store.delete_rule("orders_hourly").unwrap());
    assert!(!store.delete_rule("orders_hourly").unwrap());
    assert!(store.rules().unwrap().is_empty());
    assert!(store
        .firings(&FiringQuery::default())
        .unwrap()
        .firings
        .is_empty());
    // The same name again starts afresh: generation 1 again.
    store.put_rule(&rule, now).unwrap();
    let page = store.firings(&FiringQuery::default()).unwrap();
    assert_eq!(page.firings.len(), 2);
    assert!(page.firings.iter().all(|f| f.generation == 1));
    // Firing numbers are never reused.
    assert!(page.firings[0].seq > 2);
    assert!(!store.ledger_id().unwrap().is_empty());
    assert_eq!(store.ledger_id().unwrap(), store.ledger_id().unwrap());
}

/// Two assets: only their joint coverage completes a window; a retraction
/// withdraws it and a re-landing fires generation 2; a filter by rule.
pub fn joint_coverage_and_generations(store: &dyn Store) {
    let now = super::t(10_000);
    store.declare_asset("a", &decl()).unwrap();
    store.declare_asset("b", &decl()).unwrap();
    store.put_rule(&hourly("both", &["a", "b"]), now).unwrap();
    store.put_rule(&hourly("only_a", &["a"]), now).unwrap();
    store.append(&[super::landed("a", 0, 60)], now).unwrap();
    let kinds = |rule: &str| -> Vec<(FiringKind, u32)> {
        store
            .firings(&FiringQuery {
                rule: Some(rule.into()),
                ..FiringQuery::default()
            })
            .unwrap()
            .firings
            .iter()
            .map(|f| (f.kind, f.generation))
            .collect()
    };
    assert_eq!(kinds("only_a"), [(FiringKind::Complete, 1)]);
    assert!(kinds("both").is_empty());
    store.append(&[super::landed("b", 0, 30)], now).unwrap();
    assert!(kinds("both").is_empty());
    store.append(&[super::landed("b", 30, 60)], now).unwrap();
    assert_eq!(kinds("both"), [(FiringKind::Complete, 1)]);
    store.append(&[super::retracted("a", 10, 20)], now).unwrap();
    store.append(&[super::landed("a", 10, 20)], now).unwrap();
    let want = [
        (FiringKind::Complete, 1),
        (FiringKind::Incomplete, 1),
        (FiringKind::Complete, 2),
    ];
    assert_eq!(kinds("both"), want);
    assert_eq!(kinds("only_a"), want);
    // The same landing again changes nothing.
    store.append(&[super::landed("a", 0, 60)], now).unwrap();
    assert_eq!(kinds("both").len(), 3);
    // One rule's firings a page at a time, and its newest, are those of
    // every rule's that are its own.
    let all = store.firings(&FiringQuery::default()).unwrap().firings;
    for rule in ["both", "only_a"] {
        let own: Vec<i64> = all
            .iter()
            .filter(|f| f.rule == rule)
            .map(|f| f.seq)
            .collect();
        let (mut paged, mut after) = (Vec::new(), None);
        loop {
            let page = store
                .firings(&FiringQuery {
                    rule: Some(rule.into()),
                    after,
                    limit: 1,
                    ..FiringQuery::default()
                })
                .unwrap();
            paged.extend(page.firings.iter().map(|f| f.seq));
            match page.next {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        assert_eq!(paged, own, "{rule}, a page at a time");
        let newest = store
            .firings(&FiringQuery {
                rule: Some(rule.into()),
                limit: 2,
                newest: true,
                ..FiringQuery::default()
            })
            .unwrap();
        let seqs: Vec<i64> = newest.firings.iter().map(|f| f.seq).collect();
        assert_eq!(seqs, own[own.len() - 2..], "{rule}, the newest two");
    }
}

/// Deadlines: one `late` firing per window not complete at its end plus
/// the deadline, none for windows whose deadline passed before the rule,
/// and `complete` still fires after `late`.
pub fn deadlines_fire_late_once(store: &dyn Store) {
    store.declare_asset("orders", &decl()).unwrap();
    let created = super::t(60);
    let mut rule = hourly("late_hourly", &["orders"]);
    rule.settings.deadline = Some(Duration::parse("PT30M").unwrap());
    store.put_rule(&rule, created).unwrap();
    // Window [0, 60) had its deadline at 90, after the rule's creation at 60.
    store
        .append(&[super::landed("orders", 0, 30)], created)
        .unwrap();
    assert_eq!(store.judge_deadlines(super::t(89)).unwrap(), 0);
    assert_eq!(store.judge_deadlines(super::t(90)).unwrap(), 1);
    assert_eq!(store.judge_deadlines(super::t(95)).unwrap(), 0);
    // Window [60, 120) completes before its deadline at 150: no late.
    store
        .append(&[super::landed("orders", 60, 120)], created)
        .unwrap();
    // Three windows' deadlines pass at once; [120, 180) and [180, 240) are late.
    assert_eq!(store.judge_deadlines(super::t(270)).unwrap(), 2);
    assert_eq!(store.judge_deadlines(super::t(270)).unwrap(), 0);
    store
        .append(&[super::landed("orders", 0, 60)], created)
        .unwrap();
    let fired: Vec<(FiringKind, i64)> = store
        .firings(&FiringQuery::default())
        .unwrap()
        .firings
        .iter()
        .map(|f| {
            (
                f.kind,
                (f.window.start().as_micros() - super::t(0).as_micros()) / MINUTE,
            )
        })
        .collect();
    assert_eq!(
        fired,
        [
            (FiringKind::Late, 0),
            (FiringKind::Complete, 60),
            (FiringKind::Late, 120),
            (FiringKind::Late, 180),
            (FiringKind::Complete, 0),
        ]
    );
    let late = &store.firings(&FiringQuery::default()).unwrap().firings[0];
    assert_eq!(late.generation, 0);
    assert_eq!(late.covered_ratio, 0.5);
    // A rule created late judges no deadline that passed before it.
    let mut after = hourly("after", &["orders"]);
    after.settings.deadline = Some(Duration::parse("PT1M").unwrap());
    store.put_rule(&after, super::t(1_000)).unwrap();
    // Only the first rule's twelve windows ending in (240, 970] are late.
    assert_eq!(store.judge_deadlines(super::t(1_000)).unwrap(), 12);
    // [960, 1020) ends at 1020: late from 1021 on.
    assert_eq!(store.judge_deadlines(super::t(1_021)).unwrap(), 1);
}

/// Two stores on one ledger (two processes, two replicas) take turns with
/// group commits on the asset of a rule: each judges the window states as
/// the other left them, not as its own last commit did. Hour 0 fires
/// `complete`, `incomplete` when withdrawn and `complete` again when
/// landed again, each once.
pub fn group_commits_take_turns_with_another_store(one: &dyn Store, two: &dyn Store) {
    one.declare_asset("a", &decl()).unwrap();
    one.put_rule(&hourly("r", &["a"]), super::t(0)).unwrap();
    let group = |store: &dyn Store, ev: NewEvent| {
        for r in store.append_many(&[&[ev]], super::t(1_000)) {
            r.unwrap();
        }
    };
    // One judges hour 0 incomplete and knows so; two completes it.
    group(one, super::landed("a", 0, 30));
    group(two, super::landed("a", 30, 60));
    // Complete already: nothing fires.
    group(one, super::landed("a", 10, 20));
    // Two knows it complete from its commit; one withdraws part of it.
    group(one, super::retracted("a", 0, 60));
    group(two, super::landed("a", 0, 60));
    group(one, super::landed("a", 30, 40));
    let fired: Vec<(FiringKind, i64, u32)> = firings_after(one, None)
        .iter()
        .map(|f| {
            (
                f.kind,
                (f.window.start().as_micros() - super::t(0).as_micros()) / MINUTE,
                f.generation,
            )
        })
        .collect();
    assert_eq!(
        fired,
        [
            (FiringKind::Complete, 0, 1),
            (FiringKind::Incomplete, 0, 1),
            (FiringKind::Complete, 0, 2),
        ]
    );
}

/// How many single-asset rules [`many_single_asset_rules`] puts on the
/// ledger, one per asset.
const MANY: usize = 500;

/// One single-asset rule per asset ([`MANY`] of each), as a platform with a
/// rule per table runs them, with deadlines on half: single appends,
/// groups, chunked appends and large batches interleaving every asset, then
/// deadline passes. Every firing is the model's, batch by batch (the model
/// judges every window of each rule on an asset the batch painted).
pub fn many_single_asset_rules(store: &dyn Store) {
    let scale = minutes();
    let assets: Vec<String> = (0..MANY).map(|i| format!("m{i:03}")).collect();
    for a in &assets {
        store.declare_asset(a, &decl()).unwrap();
    }
    // Created at the start of the time line: the deadlines of the windows
    // after it are judged.
    let created = scale.base;
    let mut rng = Rng::new(0x3a4e);
    let mut rules: Vec<Rule> = assets
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut rule = random_rule(
                &mut rng,
                &scale,
                std::slice::from_ref(a),
                &format!("s{i:03}"),
            );
            if i % 2 == 0 {
                let d = if rng.below(2) == 0 { "PT30M" } else { "PT2H" };
                rule.settings.deadline = Some(Duration::parse(d).unwrap());
            }
            rule
        })
        .collect();
    // Created in a shuffled order, so that the ledger's ids do not follow
    // the names: a batch's firings still come in name order, however its
    // rules were read (a few assets' by seeks, or all at once).
    let mut order: Vec<usize> = (0..rules.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for &i in &order {
        assert_eq!(
            store.put_rule(&rules[i], created).unwrap(),
            RulePut::Created { firings: 0 }
        );
    }
    rules.sort_by(|a, b| a.name.cmp(&b.name));
    let mut model = Model::new(&scale, &assets);
    // Per rule name and window start: fired `late`.
    let mut late: std::collections::HashSet<(String, Instant)> = Default::default();
    let mut last_pass = created;
    let mut seen = None;
    let tick = |k: i64| Instant::from_micros(scale.base.as_micros() + k * scale.tick).unwrap();
    for step in 0..40 {
        let shape = if step % 8 == 7 { 3 } else { rng.below(3) };
        let batches: Vec<Vec<NewEvent>> = if shape == 3 {
            // Three slices of every asset, interleaved as a shared pipeline
            // writes them (over a thousand events of hundreds of assets);
            // the first time, of 80 assets only: many assets whose rules
            // are read by seeks, before a batch of all of them has every
            // rule read at once.
            let assets = if step == 7 {
                &assets[..80]
            } else {
                &assets[..]
            };
            let len = 10 + rng.below(60) as i64;
            let first = rng.below((scale.ticks - 3 * len) as u64) as i64;
            let kind = if rng.below(4) == 0 {
                EventKind::Retracted
            } else {
                EventKind::Landed
            };
            vec![(0..3)
                .flat_map(|k| {
                    assets.iter().map(move |a| NewEvent {
                        asset: a.clone(),
                        id: None,
                        interval: Interval::new(tick(first + k * len), tick(first + (k + 1) * len))
                            .unwrap(),
                        kind,
                        extra: None,
                        produced_at: None,
                    })
                })
                .collect()]
        } else {
            (0..if shape == 1 { 3 } else { 1 })
                .map(|_| {
                    (0..1 + rng.below(8))
                        .map(|_| random_event(&mut rng, &scale, &assets))
                        .collect()
                })
                .collect()
        };
        let mut want = Vec::new();
        for b in &batches {
            for ev in b {
                model.paint(ev);
            }
            let painted: std::collections::HashSet<&str> =
                b.iter().map(|e| e.asset.as_str()).collect();
            let touched: Vec<Rule> = rules
                .iter()
                .filter(|r| painted.contains(r.def.assets()[0].as_str()))
                .cloned()
                .collect();
            want.extend(model.judge(&touched));
        }
        match shape {
            1 => {
                let refs: Vec<&[NewEvent]> = batches.iter().map(Vec::as_slice).collect();
                for r in store.append_many(&refs, created) {
                    r.unwrap();
                }
            }
            2 => {
                let mut chunks = batches[0].chunks(2).map(|c| Ok(c.to_vec()));
                store
                    .append_chunks(&mut chunks, &mut drop, created)
                    .unwrap();
            }
            _ => {
                store.append(&batches[0], created).unwrap();
            }
        }
        let got = firings_after(store, seen);
        assert_firings(&got, &want, &rules, &format!("many rules, step {step}"));
        seen = got.last().map(|f| f.seq).or(seen);

        if step % 10 == 9 {
            // A deadline pass 18 hours on: a `late` for each window of a
            // rule with a deadline whose end plus the deadline passed since
            // the last pass (the rule's creation at first) and which is not
            // complete now, once.
            let now = tick((step / 10 + 1) * 18 * 60);
            let span = Interval::new(scale.base, tick(scale.ticks)).unwrap();
            let mut want: Vec<Expected> = Vec::new();
            for r in &rules {
                let Some(d) = r.settings.deadline else {
                    continue;
                };
                let d = d.fixed_micros().unwrap();
                for w in r.def.windows(span) {
                    let due = w.end().as_micros() + d;
                    if due <= last_pass.as_micros() || due > now.as_micros() {
                        continue;
                    }
                    let (complete, generation) = model
                        .states
                        .get(&(r.name.clone(), w.start()))
                        .copied()
                        .unwrap_or_default();
                    if complete || !late.insert((r.name.clone(), w.start())) {
                        continue;
                    }
                    let (covered, _, total) = model.joint(r.def.assets(), w);
                    let ratio = CoverageReport::ratio(covered, total);
                    want.push((r.name.clone(), FiringKind::Late, w, generation, ratio));
                }
            }
            let n = store.judge_deadlines(now).unwrap();
            assert_eq!(n, want.len() as u64, "many rules, deadlines at step {step}");
            assert_eq!(store.judge_deadlines(now).unwrap(), 0);
            let got = firings_after(store, seen);
            assert_firings(
                &got,
                &want,
                &rules,
                &format!("many rules, deadlines at step {step}"),
            );
            seen = got.last().map(|f| f.seq).or(seen);
            last_pass = now;
        }
    }
}

/// Rule `r`, hourly on asset `a`, with hours 0-5 and 7-9 complete and hour
/// 3 withdrawn and landed again (its generation 2): for the migrations
/// that join window records into runs. How many firings it made.
pub fn window_runs_fixture(store: &dyn Store) -> usize {
    store.declare_asset("a", &decl()).unwrap();
    store.put_rule(&hourly("r", &["a"]), super::t(0)).unwrap();
    let hours = |from: i64, to: i64| super::landed("a", from * 60, to * 60);
    let at = super::t(1_000_000);
    store.append(&[hours(0, 6), hours(7, 10)], at).unwrap();
    store
        .append(&[super::retracted("a", 3 * 60, 4 * 60)], at)
        .unwrap();
    store.append(&[hours(3, 4)], at).unwrap();
    firings_after(store, None).len()
}

/// The runs of [`window_runs_fixture`]'s records: `(first hour, end hour,
/// complete, generation)`.
pub const FIXTURE_RUNS: [(i64, i64, bool, i64); 4] = [
    (0, 3, true, 1),
    (3, 4, true, 2),
    (4, 6, true, 1),
    (7, 10, true, 1),
];

/// After [`window_runs_fixture`] (`fired` firings), hour 6 and hour 10
/// land: each fires once, nothing before fires again.
pub fn window_runs_grow(store: &dyn Store, fired: usize) {
    let hours = |from: i64, to: i64| super::landed("a", from * 60, to * 60);
    store
        .append(&[hours(6, 7), hours(10, 11)], super::t(1_000_000))
        .unwrap();
    let new: Vec<(FiringKind, i64)> = firings_after(store, None)[fired..]
        .iter()
        .map(|f| {
            (
                f.kind,
                (f.window.start().as_micros() - super::t(0).as_micros()) / 3_600_000_000,
            )
        })
        .collect();
    assert_eq!(new, [(FiringKind::Complete, 6), (FiringKind::Complete, 10)]);
}

/// The runs after [`window_runs_grow`]: hour 6 joined the runs on either
/// side, hour 10 grew the last.
pub const GROWN_RUNS: [(i64, i64, bool, i64); 3] =
    [(0, 3, true, 1), (3, 4, true, 2), (4, 11, true, 1)];
