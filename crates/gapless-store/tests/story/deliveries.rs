//! The delivery part of the story (SPEC §7, targets), on every backend:
//! deliverers claim pending firings with a lease, finish them only while
//! they hold it, and retry them when they are due.

use std::collections::HashSet;
use std::time::Duration as StdDuration;

use gapless_core::{Grid, Instant, Policy, Rule, RuleDef, RuleSettings};
use gapless_store::{DeliveryOutcome, DeliveryState, Firing, FiringQuery, Store};

const LEASE: StdDuration = StdDuration::from_secs(60);

fn decl() -> gapless_core::AssetDecl {
    gapless_core::AssetDecl {
        key_span: None,
        tz: jiff::tz::TimeZone::UTC,
    }
}

/// An hourly rule on `orders` delivering to `target`.
fn hourly(name: &str, target: Option<&str>) -> Rule {
    Rule {
        name: name.to_string(),
        def: RuleDef::new(
            vec!["orders".into()],
            Grid::parse("1h").unwrap(),
            "UTC",
            Policy::Full,
            super::t(0),
            None,
        )
        .unwrap(),
        settings: RuleSettings {
            target: target.map(str::to_string),
            ..RuleSettings::default()
        },
    }
}

/// A ledger with `hours` complete hourly windows of rule `hook_hourly`
/// (target `hook`) and as many of `plain` (no target): pending firings.
fn pending(store: &dyn Store, hours: i64) {
    store.declare_asset("orders", &decl()).unwrap();
    let now = super::t(10_000);
    store
        .put_rule(&hourly("hook_hourly", Some("hook")), now)
        .unwrap();
    store.put_rule(&hourly("plain", None), now).unwrap();
    store
        .append(&[super::landed("orders", 0, 60 * hours)], now)
        .unwrap();
}

/// Microseconds after `at`.
fn later(at: Instant, d: StdDuration) -> Instant {
    Instant::from_micros(at.as_micros() + d.as_micros() as i64).unwrap()
}

fn firing(store: &dyn Store, seq: i64) -> Firing {
    store
        .firings(&FiringQuery::default())
        .unwrap()
        .firings
        .into_iter()
        .find(|f| f.seq == seq)
        .unwrap()
}

fn seqs(fs: &[Firing]) -> Vec<i64> {
    fs.iter().map(|f| f.seq).collect()
}

/// Claims are exclusive, in sequence order, and only of pending firings;
/// an expired lease is claimed again; the deliverer that lost it cannot
/// finish; the new holder can.
pub fn claims_are_exclusive_and_leases_expire(store: &dyn Store) {
    pending(store, 3);
    let all = store.firings(&FiringQuery::default()).unwrap().firings;
    assert_eq!(all.len(), 6);
    let hook: Vec<i64> = all
        .iter()
        .filter(|f| f.delivery.state == DeliveryState::Pending)
        .map(|f| f.seq)
        .collect();
    assert_eq!(hook.len(), 3, "{all:?}");
    let now = super::t(20_000);
    let a = store.claim_deliveries("a", now, LEASE, 2).unwrap();
    assert_eq!(seqs(&a), hook[..2]);
    assert!(a.iter().all(|f| f.rule == "hook_hourly"
        && f.delivery.state == DeliveryState::Pending
        && f.delivery.target.as_deref() == Some("hook")
        && f.delivery.attempts == 0));
    let b = store.claim_deliveries("b", now, LEASE, 10).unwrap();
    assert_eq!(seqs(&b), hook[2..]);
    assert!(store
        .claim_deliveries("c", now, LEASE, 10)
        .unwrap()
        .is_empty());
    // Just before the leases end nothing is free; at their end all are.
    let before = Instant::from_micros(later(now, LEASE).as_micros() - 1).unwrap();
    assert!(store
        .claim_deliveries("c", before, LEASE, 10)
        .unwrap()
        .is_empty());
    let c = store
        .claim_deliveries("c", later(now, LEASE), LEASE, 10)
        .unwrap();
    assert_eq!(seqs(&c), hook);
    assert!(a.iter().chain(&b).all(|f| !f.delivery.reclaimed));
    assert!(c.iter().all(|f| f.delivery.reclaimed), "{c:?}");
    assert!(store
        .firings(&FiringQuery::default())
        .unwrap()
        .firings
        .iter()
        .all(|f| !f.delivery.reclaimed));
    // "a" lost its leases to "c": its finish does nothing.
    assert!(!store
        .finish_delivery(hook[0], "a", &DeliveryOutcome::Delivered)
        .unwrap());
    assert_eq!(
        firing(store, hook[0]).delivery.state,
        DeliveryState::Pending
    );
    assert!(store
        .finish_delivery(hook[0], "c", &DeliveryOutcome::Delivered)
        .unwrap());
    let done = firing(store, hook[0]);
    assert_eq!(done.delivery.state, DeliveryState::Delivered);
    assert_eq!(done.delivery.attempts, 1);
    assert_eq!(done.delivery.last_error, None);
    // Finished once: not again, not by anyone.
    assert!(!store
        .finish_delivery(hook[0], "c", &DeliveryOutcome::Delivered)
        .unwrap());
    // A delivered firing is never claimed again; the other two are, once
    // their leases end.
    let end = later(later(now, LEASE), LEASE);
    let d = store.claim_deliveries("d", end, LEASE, 10).unwrap();
    assert_eq!(seqs(&d), hook[1..]);
    // A firing whose rule was deleted cannot be finished.
    assert!(store.delete_rule("hook_hourly").unwrap());
    assert!(!store
        .finish_delivery(hook[1], "d", &DeliveryOutcome::Delivered)
        .unwrap());
}

/// A retry is due only at its next try; attempts count; a failure is final
/// until `retry_failed`; postponing and skipping do not count attempts.
pub fn retries_are_due_after_next_try(store: &dyn Store) {
    pending(store, 2);
    let now = super::t(20_000);
    let claimed = store.claim_deliveries("a", now, LEASE, 10).unwrap();
    let (first, second) = (claimed[0].seq, claimed[1].seq);
    let next = super::t(20_005);
    assert!(store
        .finish_delivery(
            first,
            "a",
            &DeliveryOutcome::Retry {
                error: "HTTP 503".into(),
                next_try: next,
            },
        )
        .unwrap());
    assert!(store
        .finish_delivery(second, "a", &DeliveryOutcome::Skipped)
        .unwrap());
    let skipped = firing(store, second);
    assert_eq!(skipped.delivery.state, DeliveryState::Delivered);
    assert_eq!(skipped.delivery.attempts, 0);
    let f = firing(store, first);
    assert_eq!(f.delivery.state, DeliveryState::Pending);
    assert_eq!(f.delivery.attempts, 1);
    assert_eq!(f.delivery.last_error.as_deref(), Some("HTTP 503"));
    // Its lease was freed but it is not due before `next`.
    assert!(store
        .claim_deliveries("b", super::t(20_004), LEASE, 10)
        .unwrap()
        .is_empty());
    let again = store.claim_deliveries("b", next, LEASE, 10).unwrap();
    assert_eq!(seqs(&again), [first]);
    assert_eq!(again[0].delivery.attempts, 1);
    assert!(!again[0].delivery.reclaimed, "finished, not lost");
    assert!(store
        .finish_delivery(
            first,
            "b",
            &DeliveryOutcome::Postponed {
                error: "target \"hook\" is not in the targets file".into(),
                next_try: super::t(20_006),
            },
        )
        .unwrap());
    let f = firing(store, first);
    assert_eq!(f.delivery.attempts, 1, "postponing is not an attempt");
    assert!(f
        .delivery
        .last_error
        .unwrap()
        .contains("not in the targets file"));
    let again = store
        .claim_deliveries("b", super::t(20_006), LEASE, 10)
        .unwrap();
    assert_eq!(seqs(&again), [first]);
    assert!(store
        .finish_delivery(
            first,
            "b",
            &DeliveryOutcome::Failed {
                error: "HTTP 400: bad request".into(),
            },
        )
        .unwrap());
    let f = firing(store, first);
    assert_eq!(f.delivery.state, DeliveryState::Failed);
    assert_eq!(f.delivery.attempts, 2);
    let far = super::t(1_000_000);
    assert!(store
        .claim_deliveries("c", far, LEASE, 10)
        .unwrap()
        .is_empty());
    assert_eq!(store.retry_failed(Some("plain")).unwrap(), 0);
    assert_eq!(store.retry_failed(Some("nosuch")).unwrap(), 0);
    assert_eq!(store.retry_failed(Some("hook_hourly")).unwrap(), 1);
    assert_eq!(store.retry_failed(None).unwrap(), 0);
    let f = firing(store, first);
    assert_eq!(f.delivery.state, DeliveryState::Pending);
    assert_eq!(f.delivery.attempts, 0);
    assert_eq!(
        f.delivery.last_error.as_deref(),
        Some("HTTP 400: bad request")
    );
    let again = store.claim_deliveries("c", far, LEASE, 10).unwrap();
    assert_eq!(seqs(&again), [first]);
}

/// Deliverers claiming at the same moment from several threads each get
/// their own firings: every pending firing is claimed by exactly one.
pub fn concurrent_claims_never_share(store: &dyn Store) {
    pending(store, 40);
    let now = super::t(20_000);
    let claimed: Vec<Vec<i64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                s.spawn(move || {
                    let owner = format!("d{i}");
                    let mut mine = Vec::new();
                    loop {
                        let got = store.claim_deliveries(&owner, now, LEASE, 3).unwrap();
                        if got.is_empty() {
                            return mine;
                        }
                        for f in got {
                            assert!(store
                                .finish_delivery(f.seq, &owner, &DeliveryOutcome::Delivered)
                                .unwrap());
                            mine.push(f.seq);
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: Vec<i64> = claimed.iter().flatten().copied().collect();
    let unique: HashSet<i64> = all.iter().copied().collect();
    assert_eq!(all.len(), 40, "{claimed:?}");
    assert_eq!(unique.len(), 40, "a firing was claimed twice: {claimed:?}");
    let page = store.firings(&FiringQuery::default()).unwrap();
    for f in &page.firings {
        let want = if f.rule == "plain" {
            DeliveryState::None
        } else {
            DeliveryState::Delivered
        };
        assert_eq!(f.delivery.state, want, "{f:?}");
    }
}

/// A deliverer's bulk skip: every due firing whose target (one it names)
/// does not take the firing's kind is delivered unsent in one call,
/// attempts unchanged and no error, as a claim finished `Skipped` would
/// leave it. Firings leased to a deliverer, not due yet, of a target not
/// named, of a kind their target takes, or without a target stay as they
/// are; a lease that ran out does not protect its firing, and its holder
/// then cannot finish it.
pub fn untaken_kinds_are_skipped_at_once(store: &dyn Store) {
    use gapless_core::FiringKind::{Complete, Incomplete, Late};
    use gapless_store::TargetKinds;

    store.declare_asset("orders", &decl()).unwrap();
    let created = super::t(10_000);
    for (name, target) in [
        ("far_hourly", Some("far")),
        ("hook_hourly", Some("hook")),
        ("plain", None),
    ] {
        store.put_rule(&hourly(name, target), created).unwrap();
    }
    store
        .append(&[super::landed("orders", 0, 60 * 4)], created)
        .unwrap();
    let all = store.firings(&FiringQuery::default()).unwrap().firings;
    let of = |rule: &str| -> Vec<i64> {
        all.iter()
            .filter(|f| f.rule == rule)
            .map(|f| f.seq)
            .collect()
    };
    let (fars, hooks) = (of("far_hourly"), of("hook_hourly"));
    assert_eq!((fars.len(), hooks.len(), all.len()), (4, 4, 12), "{all:?}");
    assert!(all.iter().all(|f| f.kind == Complete));

    let now = super::t(20_000);
    let claimed = store.claim_deliveries("a", now, LEASE, 10).unwrap();
    let mut got = seqs(&claimed);
    got.sort_unstable();
    let mut want: Vec<i64> = fars.iter().chain(&hooks).copied().collect();
    want.sort_unstable();
    assert_eq!(got, want, "every pending firing");
    // "a" keeps hooks[0]; fars[0] is due again at `retry_at`, the others
    // at once, their lease free.
    let retry_at = super::t(20_100);
    assert!(store
        .finish_delivery(
            fars[0],
            "a",
            &DeliveryOutcome::Retry {
                error: "HTTP 503".into(),
                next_try: retry_at,
            },
        )
        .unwrap());
    for &seq in fars[1..].iter().chain(&hooks[1..]) {
        let postponed = DeliveryOutcome::Postponed {
            error: "target not in the file".into(),
            next_try: now,
        };
        assert!(store.finish_delivery(seq, "a", &postponed).unwrap());
    }

    let hook_late = [TargetKinds {
        target: "hook",
        kinds: &[Late],
    }];
    // hooks[0] is leased to "a"; far is not named.
    assert_eq!(store.skip_deliveries(now, &hook_late).unwrap(), 3);
    for &seq in &hooks[1..] {
        let f = firing(store, seq);
        assert_eq!(f.delivery.state, DeliveryState::Delivered, "{f:?}");
        assert_eq!((f.delivery.attempts, f.delivery.last_error), (0, None));
    }
    assert_eq!(
        firing(store, hooks[0]).delivery.state,
        DeliveryState::Pending
    );
    assert!(fars
        .iter()
        .all(|&s| firing(store, s).delivery.state == DeliveryState::Pending));
    assert_eq!(store.skip_deliveries(now, &hook_late).unwrap(), 0);
    assert_eq!(store.skip_deliveries(now, &[]).unwrap(), 0);

    // A target that takes the kind keeps its firings; fars[0] is not due
    // before its next try.
    let both = [
        TargetKinds {
            target: "hook",
            kinds: &[Complete, Late],
        },
        TargetKinds {
            target: "far",
            kinds: &[Late, Incomplete],
        },
    ];
    assert_eq!(store.skip_deliveries(now, &both).unwrap(), 3);
    assert_eq!(
        firing(store, fars[0]).delivery.state,
        DeliveryState::Pending
    );
    assert_eq!(
        firing(store, hooks[0]).delivery.state,
        DeliveryState::Pending
    );

    // At the next try fars[0] is due, and hooks[0]'s lease has run out.
    let late_only = [
        TargetKinds {
            target: "far",
            kinds: &[Late],
        },
        TargetKinds {
            target: "hook",
            kinds: &[Late],
        },
    ];
    assert_eq!(store.skip_deliveries(retry_at, &late_only).unwrap(), 2);
    let retried = firing(store, fars[0]);
    assert_eq!(retried.delivery.state, DeliveryState::Delivered);
    assert_eq!(retried.delivery.attempts, 1, "skipping is not an attempt");
    assert_eq!(retried.delivery.last_error, None);
    assert!(!store
        .finish_delivery(hooks[0], "a", &DeliveryOutcome::Delivered)
        .unwrap());
    assert_eq!(firing(store, hooks[0]).delivery.attempts, 0);

    for f in store.firings(&FiringQuery::default()).unwrap().firings {
        let want = if f.rule == "plain" {
            DeliveryState::None
        } else {
            DeliveryState::Delivered
        };
        assert_eq!(f.delivery.state, want, "{f:?}");
    }
    assert!(store
        .claim_deliveries("b", super::t(1_000_000), LEASE, 10)
        .unwrap()
        .is_empty());
}

/// Firings recorded delivered unsent: once a store is told what its
/// process's targets take, the firings it records for those targets of a
/// kind they do not take are `delivered` from the start (attempts 0, no
/// error), by appends, new rules and deadline passes alike, and counted;
/// firings of a target it was not told of, of a kind taken, or without a
/// target are recorded as before. Told again, the new kinds replace the old.
pub fn untaken_kinds_are_recorded_delivered(store: &dyn Store) {
    use gapless_core::FiringKind::{Complete, Late};
    use gapless_store::TargetKinds;

    let state = |f: &Firing| {
        (
            f.delivery.state,
            f.delivery.attempts,
            f.delivery.last_error.clone(),
        )
    };
    let of = |rule: &str| -> Vec<Firing> {
        store
            .firings(&FiringQuery::default())
            .unwrap()
            .firings
            .into_iter()
            .filter(|f| f.rule == rule)
            .collect()
    };
    store.declare_asset("orders", &decl()).unwrap();
    store
        .put_rule(&hourly("before", Some("hook")), super::t(0))
        .unwrap();
    store
        .append(&[super::landed("orders", 0, 60)], super::t(60))
        .unwrap();
    assert_eq!(store.settled_untaken(), 0);
    assert_eq!(
        of("before").iter().map(state).collect::<Vec<_>>(),
        [(DeliveryState::Pending, 0, None)],
        "recorded pending before the store is told"
    );

    store.settle_untaken(&[
        TargetKinds {
            target: "hook",
            kinds: &[Late],
        },
        TargetKinds {
            target: "quiet",
            kinds: &[Complete],
        },
    ]);
    for (name, target) in [
        ("hook_hourly", Some("hook")),
        ("far_hourly", Some("far")),
        ("plain", None),
    ] {
        store.put_rule(&hourly(name, target), super::t(60)).unwrap();
    }
    // A new rule judges the hour already complete: hook_hourly's firing is
    // recorded delivered.
    assert_eq!(store.settled_untaken(), 1);
    store
        .append(&[super::landed("orders", 60, 180)], super::t(180))
        .unwrap();
    let delivered = (DeliveryState::Delivered, 0, None);
    assert_eq!(
        of("hook_hourly").iter().map(state).collect::<Vec<_>>(),
        vec![delivered.clone(); 3]
    );
    assert_eq!(
        of("before").iter().map(state).collect::<Vec<_>>(),
        [
            (DeliveryState::Pending, 0, None),
            delivered.clone(),
            delivered.clone()
        ],
        "a firing recorded before keeps its state"
    );
    assert!(of("far_hourly")
        .iter()
        .all(|f| f.delivery.state == DeliveryState::Pending));
    assert!(of("plain")
        .iter()
        .all(|f| f.delivery.state == DeliveryState::None));
    assert_eq!(store.settled_untaken(), 5);
    // Nothing of hook's is left for a deliverer but the one from before.
    let claimed = store
        .claim_deliveries("a", super::t(20_000), LEASE, 100)
        .unwrap();
    let mut rules: Vec<&str> = claimed.iter().map(|f| f.rule.as_str()).collect();
    rules.sort_unstable();
    assert_eq!(rules, ["before", "far_hourly", "far_hourly", "far_hourly"]);

    // Deadline passes: `quiet` takes only `complete`, `hook` takes `late`.
    for (name, target) in [("quiet_late", "quiet"), ("hook_late", "hook")] {
        let mut rule = hourly(name, Some(target));
        rule.settings.deadline = Some(gapless_core::Duration::parse("PT30M").unwrap());
        store.put_rule(&rule, super::t(180)).unwrap();
    }
    // quiet_late's three complete hours are recorded pending: quiet takes
    // them; hook_late's are delivered unsent.
    assert_eq!(store.settled_untaken(), 8);
    store
        .append(&[super::landed("orders", 180, 200)], super::t(200))
        .unwrap();
    assert_eq!(store.judge_deadlines(super::t(270)).unwrap(), 2);
    let late = |rule: &str| -> Vec<_> {
        of(rule)
            .iter()
            .filter(|f| f.kind == Late)
            .map(state)
            .collect()
    };
    assert_eq!(late("quiet_late"), vec![delivered.clone()]);
    assert_eq!(late("hook_late"), [(DeliveryState::Pending, 0, None)]);
    assert_eq!(store.settled_untaken(), 9);

    // Told nothing, the store records every firing pending again.
    store.settle_untaken(&[]);
    store
        .append(&[super::landed("orders", 200, 240)], super::t(240))
        .unwrap();
    let last = of("hook_hourly").pop().unwrap();
    assert_eq!(last.window.start(), super::t(180));
    assert_eq!(state(&last), (DeliveryState::Pending, 0, None));
    assert_eq!(store.settled_untaken(), 9);
}
