//! Retention (SPEC §3, `prune`), on every backend: random batches with
//! random prunes between them, checked after every step against models
//! that never prune: the painted time line of the rules' model (coverage,
//! firings of random rules) and the replay of every event ever appended
//! (coverage, retractions, the run at an instant).

use std::collections::{HashMap, HashSet};

use gapless_core::{Coverage, EventKind, Instant, Interval, IntervalSet, NewEvent, Rule};
use gapless_store::{DeliveryState, Store, StoredEvent};

use super::rules::{assert_firings, firings_after, minutes, random_event, random_rule, Model};
use super::{all_events, all_time, Rng};

/// The ledger's newest event (highest sequence) over `assets`.
fn newest(store: &dyn Store, assets: &[String]) -> Option<i64> {
    assets
        .iter()
        .filter_map(|a| all_events(store, a, 10_000).last().map(|e| e.seq))
        .max()
}

/// What a prune at `before` must leave of `events`: every event but the
/// landed ones that end by `before`, of which only the ledger's newest
/// (`keep`) may stay.
fn left(events: &[StoredEvent], before: Instant, keep: Option<i64>) -> Vec<StoredEvent> {
    events
        .iter()
        .filter(|e| {
            e.kind == EventKind::Retracted || e.interval.end() > before || Some(e.seq) == keep
        })
        .cloned()
        .collect()
}

/// Random batches, rules and prunes (of one asset or all, at instants
/// across the events and the firings' times): after every step the
/// coverage, retractions and runs are the never-pruned replay's, the
/// firings are the model's, a prune removes exactly the landed events that
/// end by its instant (and the settled firings recorded before it, never
/// a pending one), each asset's watermark is the latest prune that removed
/// some of its events, and an id whose event was pruned is stored anew.
pub fn prune_keeps_every_answer(store: &dyn Store) {
    let scale = minutes();
    let assets: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
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
    let mut rng = Rng::new(0x9B0E_7E7A_1A55);
    let at =
        |ticks: i64| Instant::from_micros(scale.base.as_micros() + ticks * scale.tick).unwrap();
    let mut model = Model::new(&scale, &assets);
    // Every event ever appended, per asset, in order: the never-pruned
    // replay.
    let mut ever: HashMap<String, Vec<(EventKind, Interval)>> = HashMap::new();
    let mut watermark: HashMap<String, Instant> = HashMap::new();
    let mut rules: Vec<Rule> = Vec::new();
    let mut seen = None;
    // What the prunes removed in all, and the pruned ids sent again.
    let (mut all_removed, mut all_firings, mut anew) = (0, 0, 0);
    // Ids of events that were stored when a prune ran (some of them pruned).
    let mut pruned_ids: HashSet<(String, String)> = HashSet::new();
    for step in 0..120_i64 {
        // Firings are recorded at the batch's time, which walks across the
        // events' time line, so prunes reach both.
        let now = at(step * scale.ticks / 120);
        if step % 30 == 0 {
            let rule = random_rule(&mut rng, &scale, &assets, &format!("r{step}"));
            store.put_rule(&rule, now).unwrap();
            rules.push(rule);
            rules.sort_by(|a, b| a.name.cmp(&b.name));
            let want = model.judge(&rules);
            let got = firings_after(store, seen);
            assert_firings(&got, &want, &rules, &format!("rule at step {step}"));
            seen = got.last().map(|f| f.seq).or(seen);
        }
        // A batch: random events, some with ids from a small pool whose
        // content is a function of the id (so a resent one is a duplicate
        // while its event is stored, and new once it was pruned).
        let mut batch: Vec<NewEvent> = Vec::new();
        for _ in 0..1 + rng.below(5) {
            let mut ev = random_event(&mut rng, &scale, &assets);
            if rng.below(3) == 0 {
                let k = rng.below(12) as i64;
                ev.id = Some(format!("pool-{k}"));
                ev.kind = EventKind::Landed;
                let start = at(k * 40);
                ev.interval = Interval::new(start, at(k * 40 + 30)).unwrap();
            }
            batch.push(ev);
        }
        let stored_ids: HashSet<(String, String)> = assets
            .iter()
            .flat_map(|a| {
                all_events(store, a, 10_000)
                    .into_iter()
                    .filter_map(|e| e.id.map(|id| (a.clone(), id)))
            })
            .collect();
        let ever_ids: HashSet<(String, String)> = batch
            .iter()
            .filter_map(|e| e.id.clone().map(|id| (e.asset.clone(), id)))
            .collect();
        let mut known = stored_ids.clone();
        let (mut accepted, mut duplicates) = (0, 0);
        for ev in &batch {
            let new = match &ev.id {
                Some(id) => known.insert((ev.asset.clone(), id.clone())),
                None => true,
            };
            if new {
                accepted += 1;
                model.paint(ev);
                ever.entry(ev.asset.clone())
                    .or_default()
                    .push((ev.kind, ev.interval));
            } else {
                duplicates += 1;
            }
        }
        anew += ever_ids
            .iter()
            .filter(|k| pruned_ids.contains(*k) && !stored_ids.contains(*k))
            .count();
        let got = store.append(&batch, now).unwrap();
        assert_eq!(
            (got.accepted, got.duplicates),
            (accepted, duplicates),
            "step {step}: a pruned id is stored anew, a stored one is a duplicate"
        );
        let want = model.judge(&rules);
        let got = firings_after(store, seen);
        assert_firings(&got, &want, &rules, &format!("step {step}"));
        seen = got.last().map(|f| f.seq).or(seen);

        // Now and then a prune, of one asset or of all.
        if rng.below(4) == 0 {
            let before = at(rng.below(scale.ticks as u64) as i64);
            let one = (rng.below(3) == 0).then(|| assets[rng.below(3) as usize].clone());
            let keep = newest(store, &assets);
            let events_before: HashMap<String, Vec<StoredEvent>> = assets
                .iter()
                .map(|a| (a.clone(), all_events(store, a, 10_000)))
                .collect();
            let firings_before = firings_after(store, None);
            let mut removed = 0;
            for a in &assets {
                if one.as_ref().is_none_or(|o| o == a) {
                    let n = store.prune_events(a, before, 3).unwrap();
                    assert!(n <= 3, "a step removes at most its limit");
                    let mut more = n;
                    let mut total = n;
                    while more == 3 {
                        more = store.prune_events(a, before, 3).unwrap();
                        total += more;
                    }
                    if total > 0 {
                        let w = watermark.entry(a.clone()).or_insert(before);
                        *w = (*w).max(before);
                    }
                    removed += total;
                }
            }
            let mut firings_removed = 0;
            if one.is_none() {
                while let n @ 1.. = store.prune_firings(before, 2).unwrap() {
                    firings_removed += n;
                }
            }
            let mut expected_removed = 0;
            for a in &assets {
                let was = &events_before[a];
                let now_ = all_events(store, a, 10_000);
                let want = if one.as_ref().is_none_or(|o| o == a) {
                    let strict = left(was, before, None);
                    let kept = left(was, before, keep);
                    assert!(
                        now_ == strict || now_ == kept,
                        "step {step}: prune of {a} before {before}: left {now_:?}\nwant {strict:?}"
                    );
                    now_.clone()
                } else {
                    was.clone()
                };
                assert_eq!(now_, want, "step {step}: {a} untouched");
                expected_removed += (was.len() - now_.len()) as u64;
            }
            assert_eq!(removed, expected_removed, "step {step}: counts");
            all_removed += removed;
            all_firings += firings_removed;
            let firings_now = firings_after(store, None);
            let gone: Vec<_> = firings_before
                .iter()
                .filter(|f| !firings_now.iter().any(|g| g.seq == f.seq))
                .collect();
            assert_eq!(gone.len() as u64, firings_removed, "step {step}");
            for a in &assets {
                for e in &events_before[a] {
                    if let Some(id) = &e.id {
                        pruned_ids.insert((a.clone(), id.clone()));
                    }
                }
            }
            for f in &gone {
                assert!(f.recorded_at < before, "step {step}: {f:?}");
                assert_ne!(f.delivery.state, DeliveryState::Pending, "step {step}");
            }
            if one.is_none() {
                for f in &firings_now {
                    assert!(
                        f.recorded_at >= before || f.delivery.state == DeliveryState::Pending,
                        "step {step}: {f:?} was to be pruned"
                    );
                }
            } else {
                assert!(
                    gone.is_empty(),
                    "step {step}: one asset's prune keeps firings"
                );
            }
        }

        // Every answer the coverage gives is the never-pruned replay's.
        for a in &assets {
            let mut cov = Coverage::new();
            let mut retracted = IntervalSet::new();
            for &(kind, iv) in ever.get(a).map_or(&[][..], Vec::as_slice) {
                cov.apply(kind, iv);
                if kind == EventKind::Retracted {
                    retracted.insert(iv);
                }
            }
            let got: Vec<_> = store.coverage(a, all_time()).unwrap().runs().collect();
            let want: Vec<_> = cov.set().runs().collect();
            assert_eq!(got, want, "step {step}: coverage of {a}");
            let got: Vec<_> = store.retractions(a, all_time()).unwrap().runs().collect();
            let want: Vec<_> = retracted.runs().collect();
            assert_eq!(got, want, "step {step}: retractions of {a}");
            for _ in 0..5 {
                let t = at(rng.below(scale.ticks as u64) as i64);
                assert_eq!(
                    store.run_containing(a, t).unwrap(),
                    cov.set().run_containing(t),
                    "step {step}: run of {a} at {t}"
                );
            }
            let summary = store.asset(a).unwrap().unwrap();
            assert_eq!(
                summary.pruned_before,
                watermark.get(a).copied(),
                "step {step}: watermark of {a}"
            );
        }
    }
    assert!(
        watermark.len() == assets.len(),
        "the run prunes every asset: {watermark:?}"
    );
    assert!(
        all_removed > 50 && all_firings > 5 && anew > 3,
        "the run prunes events ({all_removed}) and firings ({all_firings}) and resends \
         pruned ids ({anew})"
    );
}
