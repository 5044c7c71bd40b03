//! The storage test story: what every [`Store`] backend must do, written
//! against `&dyn Store` so each backend runs the same scenarios.
//!
//! A backend's test file includes this module (`mod story;`) and either calls
//! [`run_all`] with a factory of fresh, empty stores, or one `pub fn` per
//! scenario (see [`SCENARIOS`]) from its own `#[test]`s. After every
//! scenario, [`check_invariants`] checks the store against itself through
//! the trait alone, the same on every backend.
//!
//! Nothing here assumes how a backend numbers its sequence beyond "a later
//! event has a higher one" (PostgreSQL sequences may skip numbers).

#![allow(dead_code)]

pub mod deliveries;
pub mod listing;
pub mod prune;
pub mod rules;

pub use deliveries::{
    claims_are_exclusive_and_leases_expire, concurrent_claims_never_share,
    retries_are_due_after_next_try, untaken_kinds_are_recorded_delivered,
    untaken_kinds_are_skipped_at_once,
};
pub use listing::{
    asset_pages_match_a_filter_of_the_names, overviews_follow_appends_retractions_and_prunes,
    rule_pages_end_at_their_byte_budget, rule_pages_match_a_sort_of_the_names,
};
pub use prune::prune_keeps_every_answer;
pub use rules::{
    deadlines_fire_late_once, joint_coverage_and_generations, many_single_asset_rules,
    rule_definitions_cannot_change, rules_fire_as_the_model_judges,
};

use std::collections::HashSet;

use gapless_core::{
    AssetDecl, Coverage, Duration, EventKind, Instant, Interval, IntervalSet, NewEvent,
    PagedSegments, SegmentSource,
};
use gapless_store::{EventQuery, Store, StoreError, StoredEvent, SCAN_PAGE};

/// A factory of fresh, empty stores.
pub type Make<'a> = &'a dyn Fn() -> Box<dyn Store>;

/// A scenario: a function of a fresh store.
pub type Scenario = fn(&dyn Store);

/// Hands the name of every scenario to `$m!`, which each backend's test
/// file turns into one `#[test]` a scenario: one list for both backends
/// (`SCENARIOS` must name the same ones; each file checks that it does).
macro_rules! with_scenarios {
    ($m:ident) => {
        $m!(
            append_and_read_back,
            empty_batch,
            sequence_order,
            duplicates_within_and_across_batches,
            events_without_id_are_always_new,
            duplicate_is_not_applied_again,
            conflict_rolls_back_the_whole_batch,
            conflict_inside_one_batch,
            retraction_opens_a_gap_landed_closes_it,
            coverage_is_unclipped_and_touching_merges,
            coverage_matches_replay_of_random_batches,
            large_batches_of_interleaved_assets,
            many_assets_interleaved_with_conflicts,
            pagination_with_cursor,
            kind_and_range_filters,
            page_limit_is_capped,
            events_overlapping_in_sequence_order,
            sparse_pages_walk_every_event_in_order,
            scan_overlapping_pages_and_narrows,
            segments_paged_over_the_scan,
            assets_listing,
            asset_pages_match_a_filter_of_the_names,
            overviews_follow_appends_retractions_and_prunes,
            rule_pages_match_a_sort_of_the_names,
            rule_pages_end_at_their_byte_budget,
            unknown_asset_is_empty,
            declarations_round_trip,
            declaration_with_bad_tz_is_an_error,
            extra_byte_for_byte,
            concurrent_appends_and_reads,
            append_many_batches_are_independent,
            append_many_conflict_index_is_within_its_batch,
            append_chunks_is_one_atomic_batch,
            rules_fire_as_the_model_judges,
            rule_definitions_cannot_change,
            joint_coverage_and_generations,
            deadlines_fire_late_once,
            many_single_asset_rules,
            claims_are_exclusive_and_leases_expire,
            retries_are_due_after_next_try,
            concurrent_claims_never_share,
            untaken_kinds_are_skipped_at_once,
            untaken_kinds_are_recorded_delivered,
            prune_keeps_every_answer,
        );
    };
}
pub(crate) use with_scenarios;

/// Every scenario, by name, each on a fresh store.
pub const SCENARIOS: &[(&str, Scenario)] = &[
    ("append_and_read_back", append_and_read_back),
    ("empty_batch", empty_batch),
    ("sequence_order", sequence_order),
    (
        "duplicates_within_and_across_batches",
        duplicates_within_and_across_batches,
    ),
    (
        "events_without_id_are_always_new",
        events_without_id_are_always_new,
    ),
    (
        "duplicate_is_not_applied_again",
        duplicate_is_not_applied_again,
    ),
    (
        "conflict_rolls_back_the_whole_batch",
        conflict_rolls_back_the_whole_batch,
    ),
    ("conflict_inside_one_batch", conflict_inside_one_batch),
    (
        "retraction_opens_a_gap_landed_closes_it",
        retraction_opens_a_gap_landed_closes_it,
    ),
    (
        "coverage_is_unclipped_and_touching_merges",
        coverage_is_unclipped_and_touching_merges,
    ),
    (
        "coverage_matches_replay_of_random_batches",
        coverage_matches_replay_of_random_batches,
    ),
    (
        "large_batches_of_interleaved_assets",
        large_batches_of_interleaved_assets,
    ),
    (
        "many_assets_interleaved_with_conflicts",
        many_assets_interleaved_with_conflicts,
    ),
    ("pagination_with_cursor", pagination_with_cursor),
    ("kind_and_range_filters", kind_and_range_filters),
    ("page_limit_is_capped", page_limit_is_capped),
    (
        "events_overlapping_in_sequence_order",
        events_overlapping_in_sequence_order,
    ),
    (
        "sparse_pages_walk_every_event_in_order",
        sparse_pages_walk_every_event_in_order,
    ),
    (
        "scan_overlapping_pages_and_narrows",
        scan_overlapping_pages_and_narrows,
    ),
    ("segments_paged_over_the_scan", segments_paged_over_the_scan),
    ("assets_listing", assets_listing),
    (
        "asset_pages_match_a_filter_of_the_names",
        asset_pages_match_a_filter_of_the_names,
    ),
    (
        "overviews_follow_appends_retractions_and_prunes",
        overviews_follow_appends_retractions_and_prunes,
    ),
    (
        "rule_pages_match_a_sort_of_the_names",
        rule_pages_match_a_sort_of_the_names,
    ),
    (
        "rule_pages_end_at_their_byte_budget",
        rule_pages_end_at_their_byte_budget,
    ),
    ("unknown_asset_is_empty", unknown_asset_is_empty),
    ("declarations_round_trip", declarations_round_trip),
    (
        "declaration_with_bad_tz_is_an_error",
        declaration_with_bad_tz_is_an_error,
    ),
    ("extra_byte_for_byte", extra_byte_for_byte),
    ("concurrent_appends_and_reads", concurrent_appends_and_reads),
    (
        "append_many_batches_are_independent",
        append_many_batches_are_independent,
    ),
    (
        "append_many_conflict_index_is_within_its_batch",
        append_many_conflict_index_is_within_its_batch,
    ),
    (
        "append_chunks_is_one_atomic_batch",
        append_chunks_is_one_atomic_batch,
    ),
    (
        "rules_fire_as_the_model_judges",
        rules_fire_as_the_model_judges,
    ),
    (
        "rule_definitions_cannot_change",
        rule_definitions_cannot_change,
    ),
    (
        "joint_coverage_and_generations",
        joint_coverage_and_generations,
    ),
    ("deadlines_fire_late_once", deadlines_fire_late_once),
    ("many_single_asset_rules", many_single_asset_rules),
    (
        "claims_are_exclusive_and_leases_expire",
        claims_are_exclusive_and_leases_expire,
    ),
    (
        "retries_are_due_after_next_try",
        retries_are_due_after_next_try,
    ),
    (
        "concurrent_claims_never_share",
        concurrent_claims_never_share,
    ),
    (
        "untaken_kinds_are_skipped_at_once",
        untaken_kinds_are_skipped_at_once,
    ),
    (
        "untaken_kinds_are_recorded_delivered",
        untaken_kinds_are_recorded_delivered,
    ),
    ("prune_keeps_every_answer", prune_keeps_every_answer),
];

/// Run every scenario, each on a fresh store from `make`, and check the
/// store's invariants after each.
pub fn run_all(make: Make<'_>) {
    for (name, scenario) in SCENARIOS {
        eprintln!("story: {name}");
        let store = make();
        scenario(store.as_ref());
        check_invariants(store.as_ref());
    }
}

/// What must hold of any store after any scenario, checked through the
/// [`Store`] trait alone (so the same on every backend). For every asset of
/// the listing (names unique):
///
/// - its events, paged with the cursor, have strictly increasing sequences,
///   and the same list comes back whatever the page size and from
///   `events_overlapping` over the whole time line; a kind filter keeps
///   exactly the events of that kind;
/// - the listing's count is the number of events;
/// - `coverage` over the whole time line is the replay of those events in
///   sequence order, latest wins ([`Coverage`]);
/// - the first and last covered instants of the listing are the start of
///   the first run and the end of the last;
/// - `run_containing` finds each run at its start and its last microsecond,
///   and nothing at its end or just before its start (runs are disjoint
///   and never touch).
pub fn check_invariants(store: &dyn Store) {
    let listing = store.assets().unwrap();
    let names: HashSet<&str> = listing.iter().map(|a| a.asset.as_str()).collect();
    assert_eq!(
        names.len(),
        listing.len(),
        "asset names repeat: {listing:?}"
    );
    assert_eq!(
        store.asset("an asset no scenario names").unwrap(),
        None,
        "an unseen asset is not found"
    );
    for summary in &listing {
        let asset = summary.asset.as_str();
        assert_eq!(
            store.asset(asset).unwrap().as_ref(),
            Some(summary),
            "{asset}: asset() differs from its entry in assets()"
        );
        let log = all_events(store, asset, 257);
        assert_strictly_increasing(&log);
        assert_eq!(
            all_events(store, asset, 1_000_000),
            log,
            "{asset}: the events differ by page size"
        );
        assert_eq!(
            store.events_overlapping(asset, all_time()).unwrap(),
            log,
            "{asset}: events_overlapping over all time is not the log"
        );
        for kind in [EventKind::Landed, EventKind::Retracted] {
            let want: Vec<_> = log.iter().filter(|e| e.kind == kind).cloned().collect();
            assert_eq!(
                events_of_kind(store, asset, kind),
                want,
                "{asset}: the {kind:?} events"
            );
        }
        assert_eq!(
            summary.events,
            log.len() as u64,
            "{asset}: the listing's count is not the number of events"
        );
        if summary.pruned_before.is_none() {
            assert_eq!(
                summary.last_received,
                log.iter().map(|e| e.received_at).max(),
                "{asset}: last received is not the newest event's received_at"
            );
        }
        let cov = store.coverage(asset, all_time()).unwrap();
        // Before a prune's watermark the events that made the coverage may
        // be gone; from it on every event that reaches there is kept.
        let from = summary.pruned_before.unwrap_or(Instant::MIN);
        let after = |set: &IntervalSet| -> Vec<Interval> {
            set.runs()
                .filter(|r| r.end() > from)
                .map(|r| Interval::new(r.start().max(from), r.end()).unwrap())
                .collect()
        };
        assert_eq!(
            after(&cov),
            after(&replay(&log)),
            "{asset}: coverage is not the replay of the events"
        );
        let retracted = IntervalSet::from_intervals(
            log.iter()
                .filter(|e| e.kind == EventKind::Retracted)
                .map(|e| e.interval),
        );
        assert_eq!(
            runs(&store.retractions(asset, all_time()).unwrap()),
            runs(&retracted),
            "{asset}: retractions are not the union of the retracted events"
        );
        assert_eq!(
            (summary.first_covered, summary.last_covered),
            (
                cov.runs().next().map(|r| r.start()),
                cov.runs().last().map(|r| r.end())
            ),
            "{asset}: first and last covered do not match the runs"
        );
        for run in cov.runs() {
            let at = |us: i64| Instant::from_micros(us).ok();
            let containing = |t: Instant| store.run_containing(asset, t).unwrap();
            assert_eq!(containing(run.start()), Some(run), "{asset}: {run:?}");
            let last = at(run.end().as_micros() - 1).unwrap();
            assert_eq!(containing(last), Some(run), "{asset}: {run:?}");
            assert_eq!(containing(run.end()), None, "{asset}: after {run:?}");
            if let Some(before) = at(run.start().as_micros() - 1) {
                assert_eq!(containing(before), None, "{asset}: before {run:?}");
            }
        }
    }
}

/// Every event of `asset` of `kind`, following the cursor.
fn events_of_kind(store: &dyn Store, asset: &str, kind: EventKind) -> Vec<StoredEvent> {
    pages(store, asset, Some(kind), None, 100)
}

// ----- helpers -----

/// 2025-06-01T00:00:00Z.
const BASE_US: i64 = 1_748_736_000_000_000;
const MINUTE_US: i64 = 60_000_000;

/// `m` minutes after 2025-06-01T00:00:00Z.
pub fn t(m: i64) -> Instant {
    Instant::from_micros(BASE_US + m * MINUTE_US).unwrap()
}

/// `[a, b)` in minutes after the base.
pub fn iv(a: i64, b: i64) -> Interval {
    Interval::new(t(a), t(b)).unwrap()
}

/// A landed event without id.
pub fn landed(asset: &str, a: i64, b: i64) -> NewEvent {
    NewEvent {
        asset: asset.to_string(),
        id: None,
        interval: iv(a, b),
        kind: EventKind::Landed,
        extra: None,
        produced_at: None,
    }
}

/// A retracted event without id.
pub fn retracted(asset: &str, a: i64, b: i64) -> NewEvent {
    NewEvent {
        kind: EventKind::Retracted,
        ..landed(asset, a, b)
    }
}

/// `ev` with an id.
pub fn with_id(ev: NewEvent, id: &str) -> NewEvent {
    NewEvent {
        id: Some(id.to_string()),
        ..ev
    }
}

/// The whole time line.
pub fn all_time() -> Interval {
    Interval::new(Instant::MIN, Instant::MAX).unwrap()
}

/// Every event of `asset`, following the cursor with pages of `limit`.
/// Every page of `asset`'s events of `kind` overlapping `range`, `limit`
/// at a time, following the cursors: the events, each page within the
/// limit (a pagination that does not end fails the test).
pub fn pages(
    store: &dyn Store,
    asset: &str,
    kind: Option<EventKind>,
    range: Option<Interval>,
    limit: usize,
) -> Vec<StoredEvent> {
    let mut out = Vec::new();
    let mut after = None;
    for _ in 0..1_000_000 {
        let page = store
            .events(
                asset,
                &EventQuery {
                    range,
                    kind,
                    limit,
                    after,
                },
            )
            .unwrap();
        assert!(page.events.len() <= limit, "page longer than the limit");
        out.extend(page.events);
        match page.next {
            Some(n) => after = Some(n),
            None => return out,
        }
    }
    panic!("pagination does not end");
}

/// The events of `log` of `kind` overlapping `range` (either: any), in
/// its order: what a filtered listing of it answers.
pub fn matching(
    log: &[StoredEvent],
    kind: Option<EventKind>,
    range: Option<Interval>,
) -> Vec<StoredEvent> {
    log.iter()
        .filter(|e| kind.is_none_or(|k| e.kind == k))
        .filter(|e| range.is_none_or(|r| e.interval.overlaps(r)))
        .cloned()
        .collect()
}

pub fn all_events(store: &dyn Store, asset: &str, limit: usize) -> Vec<StoredEvent> {
    pages(store, asset, None, None, limit)
}

/// The coverage a replay of the stored event log gives.
pub fn replay(events: &[StoredEvent]) -> IntervalSet {
    let mut cov = Coverage::new();
    for e in events {
        cov.apply(e.kind, e.interval);
    }
    cov.set().clone()
}

fn runs(set: &IntervalSet) -> Vec<Interval> {
    set.runs().collect()
}

fn cover(store: &dyn Store, asset: &str) -> Vec<Interval> {
    runs(&store.coverage(asset, all_time()).unwrap())
}

fn received() -> Instant {
    Instant::from_micros(BASE_US + 365 * 24 * 60 * MINUTE_US).unwrap()
}

/// A small deterministic generator (xorshift64*), so failures replay.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn assert_strictly_increasing(events: &[StoredEvent]) {
    for w in events.windows(2) {
        assert!(
            w[0].seq < w[1].seq,
            "sequence not increasing: {} then {}",
            w[0].seq,
            w[1].seq
        );
    }
}

// ----- scenarios -----

/// Appended events come back with every field.
pub fn append_and_read_back(store: &dyn Store) {
    let produced = t(-5);
    let a = NewEvent {
        asset: "s3://lake/orders".into(),
        id: Some("batch-1".into()),
        interval: iv(0, 5),
        kind: EventKind::Landed,
        extra: Some(r#"{"rows": 12}"#.into()),
        produced_at: Some(produced),
    };
    let b = landed("s3://lake/orders", 5, 10);
    let c = with_id(retracted("s3://lake/orders", 2, 3), "fix-1");
    let got = store
        .append(&[a.clone(), b.clone(), c.clone()], received())
        .unwrap();
    assert_eq!((got.accepted, got.duplicates), (3, 0));

    let events = all_events(store, "s3://lake/orders", 100);
    assert_eq!(events.len(), 3);
    assert_strictly_increasing(&events);
    for (stored, sent) in events.iter().zip([&a, &b, &c]) {
        assert_eq!(stored.id, sent.id);
        assert_eq!(stored.interval, sent.interval);
        assert_eq!(stored.kind, sent.kind);
        assert_eq!(stored.extra, sent.extra);
        assert_eq!(stored.produced_at, sent.produced_at);
        assert_eq!(stored.received_at, received());
    }
    assert_eq!(cover(store, "s3://lake/orders"), vec![iv(0, 2), iv(3, 10)]);
}

/// An empty batch stores nothing and is not an error.
pub fn empty_batch(store: &dyn Store) {
    let got = store.append(&[], received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (0, 0));
    assert!(store.assets().unwrap().is_empty());
}

/// Sequence numbers follow append order, across batches and assets.
pub fn sequence_order(store: &dyn Store) {
    store
        .append(
            &[landed("A", 0, 1), landed("B", 0, 1), landed("A", 1, 2)],
            received(),
        )
        .unwrap();
    store
        .append(&[landed("B", 1, 2), landed("A", 2, 3)], received())
        .unwrap();
    let a = all_events(store, "A", 100);
    let b = all_events(store, "B", 100);
    assert_eq!(a.len(), 3);
    assert_eq!(b.len(), 2);
    assert_strictly_increasing(&a);
    assert_strictly_increasing(&b);
    // Interleaving: A0 < B0 < A1 < B1 < A2.
    assert!(a[0].seq < b[0].seq && b[0].seq < a[1].seq);
    assert!(a[1].seq < b[1].seq && b[1].seq < a[2].seq);
    assert_eq!(
        a.iter().map(|e| e.interval).collect::<Vec<_>>(),
        vec![iv(0, 1), iv(1, 2), iv(2, 3)]
    );
}

/// The same `(asset, id)` with the same content is counted, not stored.
pub fn duplicates_within_and_across_batches(store: &dyn Store) {
    let e1 = with_id(landed("A", 0, 5), "e1");
    let e2 = with_id(landed("A", 5, 10), "e2");
    // The same id on another asset is another event.
    let other = with_id(landed("B", 0, 5), "e1");
    let got = store
        .append(&[e1.clone(), e2.clone(), e1.clone(), other], received())
        .unwrap();
    assert_eq!((got.accepted, got.duplicates), (3, 1));
    let got = store
        .append(
            &[e2.clone(), e1.clone(), with_id(landed("A", 10, 15), "e3")],
            received(),
        )
        .unwrap();
    assert_eq!((got.accepted, got.duplicates), (1, 2));
    let events = all_events(store, "A", 100);
    let ids: Vec<_> = events.iter().map(|e| e.id.clone().unwrap()).collect();
    assert_eq!(ids, ["e1", "e2", "e3"]);
    assert_eq!(all_events(store, "B", 100).len(), 1);
    assert_eq!(cover(store, "A"), vec![iv(0, 15)]);
    let summary = store.assets().unwrap();
    let a = summary.iter().find(|s| s.asset == "A").unwrap();
    assert_eq!(a.events, 3);
}

/// Events without an id are never duplicates.
pub fn events_without_id_are_always_new(store: &dyn Store) {
    let e = landed("A", 0, 5);
    let got = store.append(&[e.clone(), e.clone()], received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (2, 0));
    let got = store.append(std::slice::from_ref(&e), received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (1, 0));
    assert_eq!(all_events(store, "A", 100).len(), 3);
}

/// A duplicate does not count as a new latest event: a retraction after
/// the original stays in force.
pub fn duplicate_is_not_applied_again(store: &dyn Store) {
    let l = with_id(landed("A", 0, 10), "l");
    store.append(std::slice::from_ref(&l), received()).unwrap();
    store
        .append(&[with_id(retracted("A", 2, 4), "r")], received())
        .unwrap();
    let got = store.append(std::slice::from_ref(&l), received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (0, 1));
    assert_eq!(cover(store, "A"), vec![iv(0, 2), iv(4, 10)]);
}

/// A conflict names the event's position and stores nothing of its batch.
pub fn conflict_rolls_back_the_whole_batch(store: &dyn Store) {
    store
        .append(
            &[
                with_id(landed("A", 0, 5), "x"),
                with_id(landed("A", 10, 15), "y"),
            ],
            received(),
        )
        .unwrap();
    let before_events = all_events(store, "A", 100);
    let before_cover = cover(store, "A");
    let before_assets = store.assets().unwrap();

    let bad = [
        landed("A", 5, 10),                 // would close the gap
        with_id(landed("NEW", 0, 5), "n"),  // would create an asset
        with_id(retracted("A", 0, 1), "z"), // would open a gap
        with_id(landed("A", 0, 6), "x"),    // same id, other interval
        landed("A", 20, 30),
    ];
    match store.append(&bad, received()) {
        Err(StoreError::Conflict { index, asset, id }) => {
            assert_eq!(index, 3);
            assert_eq!(asset, "A");
            assert_eq!(id, "x");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(all_events(store, "A", 100), before_events);
    assert_eq!(cover(store, "A"), before_cover);
    assert_eq!(store.assets().unwrap(), before_assets);
    assert!(all_events(store, "NEW", 100).is_empty());
    assert!(cover(store, "NEW").is_empty());

    // Each field of the content matters.
    let x = with_id(landed("A", 0, 5), "x");
    let variants = [
        NewEvent {
            kind: EventKind::Retracted,
            ..x.clone()
        },
        NewEvent {
            extra: Some("{}".into()),
            ..x.clone()
        },
        NewEvent {
            produced_at: Some(t(0)),
            ..x.clone()
        },
        NewEvent {
            interval: iv(0, 4),
            ..x.clone()
        },
    ];
    for v in variants {
        let err = store
            .append(std::slice::from_ref(&v), received())
            .unwrap_err();
        assert!(
            matches!(err, StoreError::Conflict { index: 0, .. }),
            "{v:?}: {err:?}"
        );
    }
    // The store is still usable and the batch can be retried fixed.
    let got = store.append(&[landed("A", 5, 10), x], received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (1, 1));
    assert_eq!(cover(store, "A"), vec![iv(0, 15)]);
}

/// An id repeated with other content inside one batch is a conflict too.
pub fn conflict_inside_one_batch(store: &dyn Store) {
    let err = store
        .append(
            &[
                landed("A", 0, 1),
                with_id(landed("A", 1, 2), "k"),
                with_id(landed("A", 1, 3), "k"),
            ],
            received(),
        )
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { index: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("\"k\""), "{err}");
    assert!(all_events(store, "A", 100).is_empty());
    assert!(store
        .assets()
        .unwrap()
        .iter()
        .all(|a| a.asset != "A" || a.events == 0));
}

/// Latest wins: a retraction opens a gap, a later landed event closes it.
pub fn retraction_opens_a_gap_landed_closes_it(store: &dyn Store) {
    store.append(&[landed("A", 0, 60)], received()).unwrap();
    store.append(&[retracted("A", 10, 20)], received()).unwrap();
    assert_eq!(cover(store, "A"), vec![iv(0, 10), iv(20, 60)]);
    assert_eq!(store.run_containing("A", t(15)).unwrap(), None);
    assert_eq!(store.run_containing("A", t(5)).unwrap(), Some(iv(0, 10)));
    assert_eq!(store.run_containing("A", t(10)).unwrap(), None);
    assert_eq!(store.run_containing("A", t(20)).unwrap(), Some(iv(20, 60)));
    assert_eq!(store.run_containing("A", t(60)).unwrap(), None);

    // In one batch order matters: landed then retracted leaves the gap,
    // retracted then landed closes it.
    store
        .append(&[landed("A", 10, 20), retracted("A", 12, 13)], received())
        .unwrap();
    assert_eq!(cover(store, "A"), vec![iv(0, 12), iv(13, 60)]);
    store
        .append(&[retracted("A", 12, 13), landed("A", 12, 13)], received())
        .unwrap();
    assert_eq!(cover(store, "A"), vec![iv(0, 60)]);
    assert_eq!(store.run_containing("A", t(59)).unwrap(), Some(iv(0, 60)));

    // Retracting everything leaves nothing.
    store
        .append(&[retracted("A", -10, 100)], received())
        .unwrap();
    assert!(cover(store, "A").is_empty());
    let summary = store.assets().unwrap();
    let a = summary.iter().find(|s| s.asset == "A").unwrap();
    assert_eq!(a.events, 7);
    assert_eq!((a.first_covered, a.last_covered), (None, None));
}

/// `coverage` returns whole runs overlapping the range; touching events
/// make one run, also across batches.
pub fn coverage_is_unclipped_and_touching_merges(store: &dyn Store) {
    store
        .append(&[landed("A", 0, 10), landed("A", 20, 30)], received())
        .unwrap();
    store
        .append(&[landed("A", 30, 40), landed("A", 50, 60)], received())
        .unwrap();
    store.append(&[landed("A", 10, 15)], received()).unwrap();
    assert_eq!(cover(store, "A"), vec![iv(0, 15), iv(20, 40), iv(50, 60)]);
    let got = runs(&store.coverage("A", iv(12, 21)).unwrap());
    assert_eq!(got, vec![iv(0, 15), iv(20, 40)]);
    // Half-open: a run ending at the range start does not overlap it.
    assert_eq!(runs(&store.coverage("A", iv(15, 20)).unwrap()), vec![]);
    assert_eq!(runs(&store.coverage("A", iv(40, 50)).unwrap()), vec![]);
    assert_eq!(
        runs(&store.coverage("A", iv(39, 51)).unwrap()),
        vec![iv(20, 40), iv(50, 60)]
    );
    assert_eq!(runs(&store.coverage("A", iv(70, 80)).unwrap()), vec![]);
    assert_eq!(runs(&store.coverage("A", iv(-10, 0)).unwrap()), vec![]);
    // Bridging two runs with one event merges them.
    store.append(&[landed("A", 40, 50)], received()).unwrap();
    assert_eq!(cover(store, "A"), vec![iv(0, 15), iv(20, 60)]);
}

/// After many random batches (landed and retracted, duplicates, conflicts,
/// several assets), the stored coverage equals a replay of the stored event
/// log, for the whole time line and for random ranges.
pub fn coverage_matches_replay_of_random_batches(store: &dyn Store) {
    let mut rng = Rng::new(0x0005_EED0_F6A9_1E55);
    let assets = ["A", "B", "C"];
    // Content of each id: a function of the id, so reusing one is a duplicate.
    let content = |asset: &str, k: u64| -> NewEvent {
        let a = (k * 7 % 300) as i64;
        let len = 1 + (k % 13) as i64;
        let kind = if k % 5 == 0 {
            EventKind::Retracted
        } else {
            EventKind::Landed
        };
        NewEvent {
            asset: asset.to_string(),
            id: Some(format!("id-{k}")),
            interval: iv(a, a + len),
            kind,
            extra: None,
            produced_at: None,
        }
    };
    // The (asset, id) pairs stored so far.
    let mut known: HashSet<(String, String)> = HashSet::new();
    for round in 0..150_u64 {
        let n = 1 + rng.below(40) as usize;
        let mut batch = Vec::new();
        for _ in 0..n {
            let asset = assets[rng.below(assets.len() as u64) as usize];
            let ev = match rng.below(3) {
                0 => content(asset, rng.below(200)),
                _ => {
                    let a = rng.below(320) as i64 - 10;
                    let len = 1 + rng.below(30) as i64;
                    if rng.below(4) == 0 {
                        retracted(asset, a, a + len)
                    } else {
                        landed(asset, a, a + len)
                    }
                }
            };
            batch.push(ev);
        }
        // Now and then an event whose id comes earlier in the batch with
        // other content.
        let conflict_at = if round % 10 == 9 {
            let at = rng.below(batch.len() as u64) as usize;
            let original = content(assets[(round % 3) as usize], 1_000 + round);
            let mut evil = original.clone();
            evil.interval = iv(500, 501);
            batch.insert(0, original);
            batch.insert(at + 1, evil);
            Some(at + 1)
        } else {
            None
        };
        let result = store.append(&batch, received());
        match conflict_at {
            Some(at) => match result {
                Err(StoreError::Conflict { index, .. }) => assert_eq!(index, at, "round {round}"),
                other => panic!("round {round}: expected a conflict, got {other:?}"),
            },
            None => {
                let (mut accepted, mut duplicates) = (0, 0);
                for ev in &batch {
                    match &ev.id {
                        Some(id) if !known.insert((ev.asset.clone(), id.clone())) => {
                            duplicates += 1
                        }
                        _ => accepted += 1,
                    }
                }
                let got = result.unwrap();
                assert_eq!(
                    (got.accepted, got.duplicates),
                    (accepted, duplicates),
                    "round {round}"
                );
            }
        }
        if round % 25 == 24 {
            check_replay(store, &assets, &mut rng);
        }
    }
    // Event counts in the listing match the log.
    for s in store.assets().unwrap() {
        let n = all_events(store, &s.asset, 10_000).len() as u64;
        assert_eq!(s.events, n, "asset {}", s.asset);
    }
}

/// Large batches that interleave many assets, as a shared pipeline's file
/// does (a backend may store such a batch asset by asset): sequence order
/// is still the batch's order across all its assets, duplicates inside the
/// batch are counted, coverage is the replay, and of two conflicts the
/// first in the batch is the one named, whichever asset it belongs to.
pub fn large_batches_of_interleaved_assets(store: &dyn Store) {
    let mut rng = Rng::new(0x1A7E_4EAF_0BA7_C4E5);
    let assets: Vec<String> = (0..80).map(|a| format!("pipe-{a:02}")).collect();
    let names: Vec<&str> = assets.iter().map(String::as_str).collect();
    for round in 0..4_u64 {
        let mut batch: Vec<NewEvent> = Vec::new();
        for i in 0..2_000_u64 {
            let asset = names[((i * 7 + round + rng.below(3)) % 80) as usize];
            let a = rng.below(2_000) as i64;
            let b = a + 1 + rng.below(40) as i64;
            let ev = if rng.below(9) == 0 {
                retracted(asset, a, b)
            } else {
                landed(asset, a, b)
            };
            let ev = match rng.below(10) {
                0 => ev,
                // The same id again, with the same content: a duplicate.
                1 if !batch.is_empty() => {
                    let earlier = batch[rng.below(batch.len() as u64) as usize].clone();
                    if earlier.id.is_some() {
                        earlier
                    } else {
                        with_id(ev, &format!("r{round}-{i}"))
                    }
                }
                _ => with_id(ev, &format!("r{round}-{i}")),
            };
            batch.push(ev);
        }
        let got = store.append(&batch, received()).unwrap();
        let mut seen = HashSet::new();
        let stored: Vec<&NewEvent> = batch
            .iter()
            .filter(|e| match &e.id {
                Some(id) => seen.insert((e.asset.clone(), id.clone())),
                None => true,
            })
            .collect();
        assert_eq!(got.accepted as usize, stored.len(), "round {round}");
        assert_eq!(got.duplicates as usize, batch.len() - stored.len());
        // Every event of the batch with an id, across its assets, in
        // sequence order: the batch's order.
        let prefix = format!("r{round}-");
        let mut logged: Vec<(i64, String, String, Interval)> = Vec::new();
        for &asset in &names {
            for e in all_events(store, asset, SCAN_PAGE) {
                if let Some(id) = e.id.filter(|id| id.starts_with(&prefix)) {
                    logged.push((e.seq, asset.to_string(), id, e.interval));
                }
            }
        }
        logged.sort_by_key(|l| l.0);
        let got: Vec<_> = logged
            .into_iter()
            .map(|(_, a, id, iv)| (a, id, iv))
            .collect();
        let want: Vec<_> = stored
            .iter()
            .filter_map(|e| Some((e.asset.clone(), e.id.clone()?, e.interval)))
            .collect();
        let first_off = got.iter().zip(&want).position(|(g, w)| g != w);
        assert!(
            got.len() == want.len() && first_off.is_none(),
            "round {round}: sequence order is not the batch's: {} of {} events, first \
             out of place at {first_off:?}: {:?} where the batch has {:?}",
            got.len(),
            want.len(),
            first_off.map(|i| &got[i]),
            first_off.map(|i| &want[i]),
        );
    }
    check_replay(store, &names, &mut rng);
    // Two conflicts: the later one belongs to the asset seen first.
    let mut batch: Vec<NewEvent> = (0..2_000_i64)
        .map(|i| {
            with_id(
                landed(names[(i % 80) as usize], i, i + 1),
                &format!("c-{i}"),
            )
        })
        .collect();
    let clash = |ev: &NewEvent| {
        let mut evil = ev.clone();
        evil.interval = iv(9_000, 9_001);
        evil
    };
    batch[1_500] = clash(&batch[0]);
    batch[700] = clash(&batch[79]);
    match store.append(&batch, received()) {
        Err(StoreError::Conflict { index, asset, id }) => {
            assert_eq!(
                (index, asset.as_str(), id.as_str()),
                (700, "pipe-79", "c-79")
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(all_events(store, "pipe-00", SCAN_PAGE).iter().all(|e| !e
        .id
        .as_deref()
        .unwrap_or("")
        .starts_with("c-")));
}

/// How many assets [`many_assets_interleaved_with_conflicts`] writes:
/// `GAPLESS_STORY_ASSETS`, 500 unless set (the ledger bench writes 10,000).
fn many_assets() -> usize {
    std::env::var("GAPLESS_STORY_ASSETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500)
}

/// Many assets written as a shared pipeline writes them: each batch holds
/// a few slots of every asset, slot after slot, with overlaps, retractions,
/// events without id and repeated ids (duplicates); now and then a batch
/// with conflicts in its middle, which names the first and stores nothing.
/// Afterwards every asset's coverage, count and events equal the reference
/// model: the accepted events of each asset, replayed in order.
pub fn many_assets_interleaved_with_conflicts(store: &dyn Store) {
    let mut rng = Rng::new(0x3A17_A55E_75C0_FF1C);
    let n = many_assets();
    let names: Vec<String> = (0..n).map(|a| format!("fleet-{a:05}")).collect();
    // The model: per asset, the accepted events in order, and every
    // stored (asset, id) with its event.
    let mut model: Vec<Vec<NewEvent>> = vec![Vec::new(); n];
    let mut stored_ids: std::collections::HashMap<(usize, String), NewEvent> =
        std::collections::HashMap::new();
    let slots_per_batch = 3_i64;
    for round in 0..8_i64 {
        let mut batch: Vec<NewEvent> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        for slot in round * slots_per_batch..(round + 1) * slots_per_batch {
            for (a, name) in names.iter().enumerate() {
                let (s, e) = (slot * 5, slot * 5 + 5);
                let ev = match rng.below(20) {
                    // A late re-run of a wider slice.
                    0 => with_id(landed(name, s - 12, e), &format!("w{slot}")),
                    // A withdrawn slice.
                    1 => retracted(name, s - 7, s - 3),
                    // No id: always new.
                    2 => landed(name, s, e),
                    // A repeated id with its content: a duplicate.
                    3 if slot > 0 => with_id(landed(name, s - 5, s), &format!("p{}", slot - 1)),
                    _ => with_id(landed(name, s, e), &format!("p{slot}")),
                };
                batch.push(ev);
                owner.push(a);
            }
        }
        // Every third batch: two conflicts in its middle, ids seen one slot
        // earlier in the batch (for the same asset) with other content; the
        // first is named and nothing of the batch is stored.
        let conflict = (round % 3 == 1).then(|| {
            let first = (batch.len() / 2 + rng.below(10) as usize).max(n);
            let later = (first + 1 + rng.below(100) as usize).min(batch.len() - 1);
            let mut named = None;
            for at in [first, later] {
                let (a, slot) = (owner[at], round * slots_per_batch + (at / n) as i64 - 1);
                let id = format!("p{slot}");
                batch[at - n] = with_id(landed(&names[a], slot * 5, slot * 5 + 5), &id);
                batch[at] = with_id(landed(&names[a], 9_000, 9_001), &id);
                named.get_or_insert((at, names[a].clone(), id));
            }
            named.expect("a conflict")
        });
        let got = store.append(&batch, received());
        if let Some((index, asset, id)) = conflict {
            match got {
                Err(StoreError::Conflict {
                    index: i,
                    asset: a,
                    id: d,
                }) => assert_eq!((i, a, d), (index, asset, id), "round {round}"),
                other => panic!("round {round}: expected a conflict, got {other:?}"),
            }
            continue;
        }
        let got = got.unwrap();
        let (mut accepted, mut duplicates) = (0, 0);
        for (ev, &a) in batch.iter().zip(&owner) {
            if let Some(id) = &ev.id {
                match stored_ids.get(&(a, id.clone())) {
                    Some(first) => {
                        assert!(first.same_content(ev), "round {round}: the story conflicts");
                        duplicates += 1;
                        continue;
                    }
                    None => {
                        stored_ids.insert((a, id.clone()), ev.clone());
                    }
                }
            }
            accepted += 1;
            model[a].push(ev.clone());
        }
        assert_eq!(
            (got.accepted, got.duplicates),
            (accepted, duplicates),
            "round {round}"
        );
    }
    let listing = store.assets().unwrap();
    assert_eq!(listing.len(), n, "every asset is listed once");
    for (summary, (name, events)) in listing.iter().zip(names.iter().zip(&model)) {
        assert_eq!(&summary.asset, name);
        assert_eq!(summary.events, events.len() as u64, "{name}: event count");
        let mut cov = Coverage::new();
        for e in events {
            cov.apply(e.kind, e.interval);
        }
        assert_eq!(cover(store, name), runs(cov.set()), "{name}: coverage");
        let log: Vec<_> = all_events(store, name, SCAN_PAGE)
            .into_iter()
            .map(|e| (e.id, e.kind, e.interval))
            .collect();
        let want: Vec<_> = events
            .iter()
            .map(|e| (e.id.clone(), e.kind, e.interval))
            .collect();
        assert_eq!(log, want, "{name}: events in sequence order");
    }
}

fn check_replay(store: &dyn Store, assets: &[&str], rng: &mut Rng) {
    for &asset in assets {
        let log = all_events(store, asset, 37);
        assert_strictly_increasing(&log);
        let mut ids = std::collections::HashSet::new();
        for e in &log {
            if let Some(id) = &e.id {
                assert!(ids.insert(id.clone()), "id {id} stored twice for {asset}");
            }
        }
        let want = replay(&log);
        assert_eq!(cover(store, asset), runs(&want), "coverage of {asset}");
        for _ in 0..30 {
            let a = rng.below(340) as i64 - 20;
            let b = a + 1 + rng.below(60) as i64;
            let range = iv(a, b);
            let got = runs(&store.coverage(asset, range).unwrap());
            let exp: Vec<_> = want.runs_overlapping(range).collect();
            assert_eq!(got, exp, "coverage of {asset} in {range}");
            let p = t(a);
            assert_eq!(
                store.run_containing(asset, p).unwrap(),
                want.run_containing(p),
                "run containing {p}"
            );
            // Retractions: the union of the retracted events overlapping.
            let exp = IntervalSet::from_intervals(
                log.iter()
                    .filter(|e| e.kind == EventKind::Retracted && e.interval.overlaps(range))
                    .map(|e| e.interval),
            );
            assert_eq!(
                runs(&store.retractions(asset, range).unwrap()),
                runs(&exp),
                "retractions of {asset} in {range}"
            );
            // Range filter: exactly the overlapping events, in order.
            let overlapping = store.events_overlapping(asset, range).unwrap();
            let exp: Vec<_> = log
                .iter()
                .filter(|e| e.interval.overlaps(range))
                .cloned()
                .collect();
            assert_eq!(overlapping, exp, "events of {asset} overlapping {range}");
        }
    }
}

/// Pages follow the cursor: in sequence order, `next` only while a page is full.
pub fn pagination_with_cursor(store: &dyn Store) {
    let batch: Vec<_> = (0..25).map(|i| landed("A", i, i + 1)).collect();
    store.append(&batch, received()).unwrap();
    let q = |limit, after| EventQuery {
        limit,
        after,
        ..EventQuery::default()
    };
    let p1 = store.events("A", &q(10, None)).unwrap();
    assert_eq!(p1.events.len(), 10);
    assert_eq!(p1.next, Some(p1.events[9].seq));
    let p2 = store.events("A", &q(10, p1.next)).unwrap();
    assert_eq!(p2.events.len(), 10);
    assert!(p2.events[0].seq > p1.events[9].seq);
    let p3 = store.events("A", &q(10, p2.next)).unwrap();
    assert_eq!(p3.events.len(), 5);
    assert_eq!(p3.next, None);
    let all: Vec<_> = p1
        .events
        .iter()
        .chain(&p2.events)
        .chain(&p3.events)
        .map(|e| e.interval)
        .collect();
    assert_eq!(all, (0..25).map(|i| iv(i, i + 1)).collect::<Vec<_>>());
    // Any cursor works, not only ones handed out.
    let mid = store.events("A", &q(3, Some(p1.events[4].seq))).unwrap();
    assert_eq!(
        mid.events.iter().map(|e| e.interval).collect::<Vec<_>>(),
        vec![iv(5, 6), iv(6, 7), iv(7, 8)]
    );
    // Past the end: empty.
    let end = store.events("A", &q(10, Some(p3.events[4].seq))).unwrap();
    assert!(end.events.is_empty());
    assert_eq!(end.next, None);
    // Another asset's events never show.
    store.append(&[landed("B", 0, 1)], received()).unwrap();
    assert_eq!(all_events(store, "A", 7).len(), 25);
    assert_eq!(all_events(store, "B", 7).len(), 1);
}

/// Kind and range filters, alone and together, with pagination.
pub fn kind_and_range_filters(store: &dyn Store) {
    let mut batch = Vec::new();
    for i in 0..40 {
        let ev = landed("A", i * 10, i * 10 + 10);
        batch.push(if i % 3 == 0 {
            NewEvent {
                kind: EventKind::Retracted,
                ..ev
            }
        } else {
            ev
        });
    }
    // A long event far before the range that reaches into it, one ending at
    // its start and one starting at its end.
    batch.push(landed("A", -10_000, 105));
    batch.push(landed("A", 50, 100));
    batch.push(landed("A", 200, 210));
    store.append(&batch, received()).unwrap();

    let range = iv(100, 200);
    let collect = |kind, range, limit| pages(store, "A", kind, range, limit);
    let log = collect(None, None, 1000);
    assert_eq!(log.len(), 43);
    let (landed, retracted) = (Some(EventKind::Landed), Some(EventKind::Retracted));
    for limit in [1, 4, 1000] {
        let in_range = collect(None, Some(range), limit);
        assert_eq!(in_range.len(), 11, "limit {limit}"); // 10 windows + the long one
        assert!(!collect(retracted, Some(range), limit).is_empty());
        for (kind, range) in [
            (None, Some(range)),
            (retracted, None),
            (landed, Some(range)),
            (retracted, Some(range)),
        ] {
            let got = collect(kind, range, limit);
            assert_eq!(
                got,
                matching(&log, kind, range),
                "{kind:?} {range:?} {limit}"
            );
        }
    }
    // A range no event reaches.
    assert!(collect(None, Some(iv(5_000, 6_000)), 10).is_empty());
    assert!(collect(None, Some(iv(-20_000, -10_000)), 10).is_empty());
    // A range over everything.
    assert_eq!(collect(None, Some(iv(-20_000, 20_000)), 7), log);
}

/// At most 10,000 events a page, whatever the limit asked.
pub fn page_limit_is_capped(store: &dyn Store) {
    let batch: Vec<_> = (0..10_050).map(|i| landed("A", i, i + 1)).collect();
    store.append(&batch, received()).unwrap();
    let page = store
        .events(
            "A",
            &EventQuery {
                limit: 1_000_000,
                ..EventQuery::default()
            },
        )
        .unwrap();
    assert_eq!(page.events.len(), 10_000);
    assert_eq!(page.next, Some(page.events[9_999].seq));
    let rest = store
        .events(
            "A",
            &EventQuery {
                limit: 1_000_000,
                after: page.next,
                ..EventQuery::default()
            },
        )
        .unwrap();
    assert_eq!(rest.events.len(), 50);
    assert_eq!(rest.next, None);
    assert_eq!(cover(store, "A"), vec![iv(0, 10_050)]);
}

/// `events_overlapping` returns every overlapping event in sequence order.
/// Pages whose filter keeps few of many events (a kind, a range wider than
/// a seek would read) walk the asset's events over many steps and still
/// list exactly the events that match, in sequence order, each once.
pub fn sparse_pages_walk_every_event_in_order(store: &dyn Store) {
    for round in 0..3_i64 {
        let batch: Vec<NewEvent> = (0..1_500_i64)
            .map(|i| {
                let k = round * 1_500 + i;
                let asset = if k % 3 == 2 { "B" } else { "A" };
                if k % 151 == 0 {
                    retracted(asset, k * 10, k * 10 + 5)
                } else {
                    landed(asset, k * 10, k * 10 + 10)
                }
            })
            .collect();
        store.append(&batch, received()).unwrap();
    }
    let log = all_events(store, "A", 1_000);
    assert_eq!(log.len(), 3_000);
    let pages = |kind, range, limit| pages(store, "A", kind, range, limit);
    // Most of the time line: a walk with a range that drops a few.
    let range = Some(iv(300, 44_000));
    for limit in [1, 2, 7, 1_000] {
        for (kind, range) in [(Some(EventKind::Retracted), None), (None, range)] {
            let got = pages(kind, range, limit);
            assert_eq!(
                got,
                matching(&log, kind, range),
                "{kind:?} {range:?} {limit}"
            );
        }
    }
}

pub fn events_overlapping_in_sequence_order(store: &dyn Store) {
    store
        .append(&[landed("A", 100, 200), landed("A", 0, 10)], received())
        .unwrap();
    store
        .append(
            &[
                retracted("A", 5, 150),
                landed("A", 150, 160),
                landed("A", 10, 20),
            ],
            received(),
        )
        .unwrap();
    let got: Vec<_> = store
        .events_overlapping("A", iv(10, 101))
        .unwrap()
        .iter()
        .map(|e| (e.interval, e.kind))
        .collect();
    assert_eq!(
        got,
        vec![
            (iv(100, 200), EventKind::Landed),
            (iv(5, 150), EventKind::Retracted),
            (iv(10, 20), EventKind::Landed),
        ]
    );
    assert!(store
        .events_overlapping("A", iv(200, 300))
        .unwrap()
        .is_empty());
    assert_eq!(
        store
            .events_overlapping("A", iv(-100, 1_000))
            .unwrap()
            .len(),
        5
    );
}

/// `scan_overlapping` streams every overlapping event in sequence order
/// across several store pages, and skips, once told, the events that no
/// longer overlap the part still wanted.
pub fn scan_overlapping_pages_and_narrows(store: &dyn Store) {
    let n = 3 * SCAN_PAGE as i64 + 7;
    // Slices in reverse time order, and another asset in between.
    let batch: Vec<NewEvent> = (0..n)
        .flat_map(|i| {
            [
                landed("A", (n - i) * 10, (n - i) * 10 + 10),
                landed("B", 0, 1),
            ]
        })
        .collect();
    store.append(&batch, received()).unwrap();
    let mut seen = Vec::new();
    let all = store
        .scan_overlapping("A", iv(0, (n + 2) * 10), &mut |e| {
            seen.push(e.clone());
            iv(0, (n + 2) * 10).end()
        })
        .unwrap();
    assert_eq!(all, n as u64);
    assert_eq!(seen.len(), n as usize);
    assert_strictly_increasing(&seen);
    assert_eq!(
        seen,
        store.events_overlapping("A", iv(0, (n + 2) * 10)).unwrap()
    );

    // Narrowed to [0, 500) after the first event: later events (earlier in
    // time) are seen only where they overlap it.
    let mut seen = Vec::new();
    let count = store
        .scan_overlapping("A", iv(0, (n + 2) * 10), &mut |e| {
            seen.push(e.interval);
            t(500)
        })
        .unwrap();
    assert_eq!(seen[0], iv(n * 10, n * 10 + 10));
    assert!(seen[1..].iter().all(|iv| iv.start() < t(500)), "{seen:?}");
    assert_eq!(count, 1 + 49);
    assert_eq!(
        store
            .scan_overlapping("nope", all_time(), &mut |_| unreachable!())
            .unwrap(),
        0
    );
}

/// Segments paged over the store's scan (as the ledger asks them): random
/// events with retractions, every page limit from 1 to 5; the pages joined
/// are the unpaged segments of the same events.
pub fn segments_paged_over_the_scan(store: &dyn Store) {
    let mut rng = Rng::new(8);
    for _ in 0..6 {
        let batch: Vec<NewEvent> = (0..40)
            .map(|_| {
                let a = rng.below(300) as i64;
                let b = a + 1 + rng.below(40) as i64;
                if rng.below(4) == 0 {
                    retracted("S", a, b)
                } else {
                    landed("S", a, b)
                }
            })
            .collect();
        store.append(&batch, received()).unwrap();
    }
    let range = iv(20, 320);
    let stored = store.events_overlapping("S", range).unwrap();
    let sources: Vec<SegmentSource> = stored
        .iter()
        .map(|e| SegmentSource {
            seq: e.seq,
            interval: e.interval,
            kind: e.kind,
        })
        .collect();
    let want = gapless_core::segments(&sources, range);
    for limit in 1..=5 {
        let mut from = range.start();
        let mut joined: Vec<gapless_core::Segment> = Vec::new();
        loop {
            let rest = Interval::new(from, range.end()).unwrap();
            let mut page = PagedSegments::new(rest, limit);
            store
                .scan_overlapping("S", rest, &mut |e| {
                    page.paint(e.seq, e.interval, e.kind, ());
                    page.cut()
                })
                .unwrap();
            let (got, next) = page.finish();
            assert!(got.len() <= limit);
            for (s, ()) in got {
                match joined.last_mut() {
                    Some(l) if l.seq == s.seq && l.interval.end() == s.interval.start() => {
                        l.interval = Interval::new(l.interval.start(), s.interval.end()).unwrap();
                    }
                    _ => joined.push(s),
                }
            }
            match next {
                Some(n) => {
                    assert!(n > from);
                    from = n;
                }
                None => break,
            }
        }
        assert_eq!(joined, want, "limit {limit}");
    }
}

/// The listing: every asset, its event count, first and last covered instant.
pub fn assets_listing(store: &dyn Store) {
    store
        .append(
            &[
                landed("orders", 0, 10),
                landed("orders", 20, 30),
                landed("s3://lake/ünïcode", 5, 6),
            ],
            received(),
        )
        .unwrap();
    store
        .append(
            &[retracted("orders", 25, 30), retracted("gone", 0, 1)],
            received(),
        )
        .unwrap();
    let mut list = store.assets().unwrap();
    list.sort_by(|a, b| a.asset.cmp(&b.asset));
    let names: Vec<_> = list.iter().map(|a| a.asset.as_str()).collect();
    assert_eq!(names, ["gone", "orders", "s3://lake/ünïcode"]);
    assert_eq!(
        (list[0].events, list[0].first_covered, list[0].last_covered),
        (1, None, None)
    );
    assert_eq!(
        (list[1].events, list[1].first_covered, list[1].last_covered),
        (3, Some(t(0)), Some(t(25)))
    );
    assert_eq!(
        (list[2].events, list[2].first_covered, list[2].last_covered),
        (1, Some(t(5)), Some(t(6)))
    );
}

/// An unknown asset has no coverage, events or declaration.
pub fn unknown_asset_is_empty(store: &dyn Store) {
    store.append(&[landed("A", 0, 10)], received()).unwrap();
    assert!(store.coverage("nope", all_time()).unwrap().is_empty());
    assert_eq!(store.run_containing("nope", t(5)).unwrap(), None);
    let page = store
        .events(
            "nope",
            &EventQuery {
                limit: 10,
                ..EventQuery::default()
            },
        )
        .unwrap();
    assert!(page.events.is_empty());
    assert_eq!(page.next, None);
    assert!(store
        .events_overlapping("nope", all_time())
        .unwrap()
        .is_empty());
    assert!(store.asset_decl("nope").unwrap().is_none());
    assert!(store.asset_decl("A").unwrap().is_none(), "never declared");
}

fn decl(span: Option<&str>, tz: &str) -> AssetDecl {
    AssetDecl {
        key_span: span.map(|s| Duration::parse(s).unwrap()),
        tz: jiff::tz::TimeZone::get(tz).unwrap(),
    }
}

fn same_decl(a: &AssetDecl, b: &AssetDecl) -> bool {
    a.tz.iana_name() == b.tz.iana_name()
        && a.key_span.map(|d| d.to_iso8601()) == b.key_span.map(|d| d.to_iso8601())
}

/// Declarations come back as declared; declaring again replaces.
pub fn declarations_round_trip(store: &dyn Store) {
    let d = decl(Some("PT5M"), "Europe/Berlin");
    store.declare_asset("metrics", &d).unwrap();
    let got = store.asset_decl("metrics").unwrap().unwrap();
    assert!(same_decl(&got, &d), "{got:?} vs {d:?}");
    assert_eq!(got.key_span.unwrap().fixed_micros(), Some(5 * MINUTE_US));
    // A declared asset is listed, with no events yet.
    let list = store.assets().unwrap();
    let m = list.iter().find(|a| a.asset == "metrics").unwrap();
    assert_eq!((m.events, m.first_covered, m.last_covered), (0, None, None));

    // Calendar spans and no span.
    for d in [
        decl(Some("P1M"), "Asia/Kolkata"),
        decl(Some("P1D"), "UTC"),
        decl(None, "America/New_York"),
    ] {
        store.declare_asset("metrics", &d).unwrap();
        let got = store.asset_decl("metrics").unwrap().unwrap();
        assert!(same_decl(&got, &d), "{got:?} vs {d:?}");
    }
    // Declaring an asset that has events keeps them.
    store.append(&[landed("events", 0, 5)], received()).unwrap();
    store
        .declare_asset("events", &decl(Some("PT1H"), "UTC"))
        .unwrap();
    assert_eq!(all_events(store, "events", 10).len(), 1);
    assert_eq!(cover(store, "events"), vec![iv(0, 5)]);
    assert!(store.asset_decl("events").unwrap().is_some());
}

/// A time zone without an IANA name cannot be declared.
pub fn declaration_with_bad_tz_is_an_error(store: &dyn Store) {
    let d = AssetDecl {
        key_span: None,
        tz: jiff::tz::TimeZone::fixed(jiff::tz::offset(5)),
    };
    let err = store.declare_asset("A", &d).unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    assert!(store.asset_decl("A").unwrap().is_none());
}

/// `extra` is returned byte for byte: key order, whitespace, escapes.
pub fn extra_byte_for_byte(store: &dyn Store) {
    let extras = [
        r#"{"z":1,"a":2}"#,
        "{ \"b\" :\t[1, 2.50, 1e3] ,\n  \"a\": {\"nested\": null} }",
        r#"{"text":"é\u00e9 \"quoted\" \\ \ud83d\ude00 😀"}"#,
        "{}",
    ];
    let batch: Vec<_> = extras
        .iter()
        .enumerate()
        .map(|(i, x)| NewEvent {
            extra: Some(x.to_string()),
            ..with_id(landed("A", i as i64, i as i64 + 1), &format!("x{i}"))
        })
        .collect();
    store.append(&batch, received()).unwrap();
    let got: Vec<_> = all_events(store, "A", 10)
        .into_iter()
        .map(|e| e.extra.unwrap())
        .collect();
    assert_eq!(got, extras);
    // Sending the same again is a duplicate.
    let got = store.append(&batch, received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (0, 4));
    // So is the same JSON object with other spacing and key order
    // (`NewEvent::same_content`); the first text stays.
    let respaced = NewEvent {
        extra: Some(r#"{ "a" : 2 , "z" : 1 }"#.into()),
        ..batch[0].clone()
    };
    let got = store.append(&[respaced], received()).unwrap();
    assert_eq!((got.accepted, got.duplicates), (0, 1));
    let other = NewEvent {
        extra: Some(r#"{"z":1,"a":3}"#.into()),
        ..batch[0].clone()
    };
    let err = store.append(&[other], received()).unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { index: 0, .. }),
        "{err:?}"
    );
    let got: Vec<_> = all_events(store, "A", 10)
        .into_iter()
        .map(|e| e.extra.unwrap())
        .collect();
    assert_eq!(got, extras);
}

/// `append_many`: each batch atomic on its own, results in order, a later
/// batch sees an earlier one's events.
pub fn append_many_batches_are_independent(store: &dyn Store) {
    let b1 = vec![with_id(landed("A", 0, 10), "a"), landed("A", 10, 20)];
    let b2 = vec![
        landed("A", 20, 30),
        with_id(landed("A", 0, 11), "a"), // conflicts with b1
    ];
    let b3 = vec![with_id(landed("A", 0, 10), "a"), retracted("A", 5, 6)];
    let b4: Vec<NewEvent> = Vec::new();
    let b5 = vec![
        with_id(landed("B", 0, 1), "x"),
        with_id(landed("B", 0, 2), "x"),
    ];
    let results = store.append_many(&[&b1, &b2, &b3, &b4, &b5], received());
    assert_eq!(results.len(), 5);
    let counts = |r: &Result<gapless_store::Appended, StoreError>| {
        r.as_ref().map(|a| (a.accepted, a.duplicates)).ok()
    };
    assert_eq!(counts(&results[0]), Some((2, 0)));
    assert!(
        matches!(results[1], Err(StoreError::Conflict { index: 1, .. })),
        "{:?}",
        results[1]
    );
    assert_eq!(counts(&results[2]), Some((1, 1)));
    assert_eq!(counts(&results[3]), Some((0, 0)));
    assert!(
        matches!(results[4], Err(StoreError::Conflict { index: 1, .. })),
        "{:?}",
        results[4]
    );
    let log = all_events(store, "A", 100);
    assert_eq!(log.len(), 3);
    assert_strictly_increasing(&log);
    assert_eq!(cover(store, "A"), vec![iv(0, 5), iv(6, 20)]);
    assert!(all_events(store, "B", 100).is_empty());
    assert_eq!(cover(store, "A"), runs(&replay(&log)));
}

/// `append_many` (the server's group commit): a conflicting batch answers
/// `Conflict` with the position in *that* batch, stores nothing (not even an
/// asset only it names), and the other batches of the group are stored with
/// their own counts.
pub fn append_many_conflict_index_is_within_its_batch(store: &dyn Store) {
    store
        .append(&[with_id(landed("A", 0, 10), "a")], received())
        .unwrap();
    let b1 = vec![landed("A", 10, 20), with_id(landed("A", 0, 10), "a")];
    let b2 = vec![
        landed("N", 0, 5),
        with_id(landed("A", 0, 11), "a"), // its second event conflicts
        landed("A", 40, 50),
    ];
    let b3 = vec![with_id(landed("B", 0, 5), "b"), landed("A", 20, 30)];
    let results = store.append_many(&[&b1, &b2, &b3], received());
    assert_eq!(results.len(), 3);
    let counts = |r: &Result<gapless_store::Appended, StoreError>| {
        r.as_ref().map(|a| (a.accepted, a.duplicates)).ok()
    };
    assert_eq!(counts(&results[0]), Some((1, 1)), "{:?}", results[0]);
    match &results[1] {
        Err(StoreError::Conflict { index, asset, id }) => {
            // 1 in its batch (3 would count from the group's start).
            assert_eq!((*index, asset.as_str(), id.as_str()), (1, "A", "a"));
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(counts(&results[2]), Some((2, 0)), "{:?}", results[2]);

    // The first and third are stored, nothing of the second.
    let log = all_events(store, "A", 100);
    assert_eq!(
        log.iter().map(|e| e.interval).collect::<Vec<_>>(),
        vec![iv(0, 10), iv(10, 20), iv(20, 30)]
    );
    assert_strictly_increasing(&log);
    assert_eq!(cover(store, "A"), vec![iv(0, 30)]);
    assert_eq!(all_events(store, "B", 100).len(), 1);
    assert!(all_events(store, "N", 100).is_empty());
    let listed: Vec<_> = store
        .assets()
        .unwrap()
        .into_iter()
        .map(|a| (a.asset, a.events))
        .collect();
    assert!(!listed.iter().any(|(n, _)| n == "N"), "{listed:?}");

    // Alone, the batch gets the same verdict.
    let err = store.append(&b2, received()).unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { index: 1, .. }),
        "{err:?}"
    );
}

/// `append_chunks`: one atomic batch in pieces, conflict indexes counted
/// over the whole batch, an `Err` chunk or a conflict stores nothing.
pub fn append_chunks_is_one_atomic_batch(store: &dyn Store) {
    let chunk1 = vec![with_id(landed("A", 0, 10), "a"), landed("B", 0, 5)];
    let chunk2 = vec![
        with_id(landed("A", 0, 10), "a"), // duplicate of chunk 1
        retracted("A", 2, 3),
    ];
    let chunk3 = vec![landed("A", 10, 20)];
    let mut chunks = vec![Ok(chunk1.clone()), Ok(Vec::new()), Ok(chunk2), Ok(chunk3)].into_iter();
    let got = store
        .append_chunks(&mut chunks, &mut drop, received())
        .unwrap();
    assert_eq!((got.accepted, got.duplicates), (4, 1));
    assert_eq!(cover(store, "A"), vec![iv(0, 2), iv(3, 20)]);
    let before = all_events(store, "A", 100);
    assert_eq!(before.len(), 3);
    assert_strictly_increasing(&before);

    // A conflict in a later chunk: its index counts from the batch's start.
    let mut chunks = vec![
        Ok(vec![landed("A", 30, 40), landed("C", 0, 1)]),
        Ok(vec![landed("A", 40, 50), with_id(landed("A", 0, 11), "a")]),
        Ok(vec![landed("A", 50, 60)]),
    ]
    .into_iter();
    let err = store
        .append_chunks(&mut chunks, &mut drop, received())
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { index: 3, .. }),
        "{err:?}"
    );

    // An error from the source of the chunks.
    let mut chunks = vec![
        Ok(vec![landed("A", 30, 40), landed("D", 0, 1)]),
        Err(StoreError::Invalid("line 3: bad".into())),
        Ok(vec![landed("A", 50, 60)]),
    ]
    .into_iter();
    let err = store
        .append_chunks(&mut chunks, &mut drop, received())
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::Invalid(m) if m == "line 3: bad"),
        "{err:?}"
    );

    assert_eq!(all_events(store, "A", 100), before);
    assert_eq!(cover(store, "A"), vec![iv(0, 2), iv(3, 20)]);
    let names: Vec<_> = store
        .assets()
        .unwrap()
        .into_iter()
        .map(|a| a.asset)
        .collect();
    assert!(!names.iter().any(|n| n == "C" || n == "D"), "{names:?}");

    // No chunks at all.
    let got = store
        .append_chunks(&mut std::iter::empty(), &mut drop, received())
        .unwrap();
    assert_eq!((got.accepted, got.duplicates), (0, 0));
}

/// Threads appending and reading at once: every event stored once, the
/// sequence strictly increasing, coverage consistent with the log.
pub fn concurrent_appends_and_reads(store: &dyn Store) {
    std::thread::scope(|s| {
        for w in 0..3_i64 {
            s.spawn(move || {
                for b in 0..20_i64 {
                    let base = (w * 20 + b) * 10;
                    let batch: Vec<_> = (0..10)
                        .map(|i| {
                            with_id(
                                landed("A", base + i, base + i + 1),
                                &format!("w{w}-{b}-{i}"),
                            )
                        })
                        .collect();
                    // Replays of the same batch are duplicates.
                    store.append(&batch, received()).unwrap();
                    let again = store.append(&batch[..3], received()).unwrap();
                    assert_eq!((again.accepted, again.duplicates), (0, 3));
                }
            });
        }
        s.spawn(|| {
            for i in 0..50 {
                let _ = store.coverage("A", all_time()).unwrap();
                let _ = store
                    .events(
                        "A",
                        &EventQuery {
                            limit: 100,
                            ..EventQuery::default()
                        },
                    )
                    .unwrap();
                let _ = store.run_containing("A", t(i)).unwrap();
            }
        });
    });
    let log = all_events(store, "A", 1000);
    assert_eq!(log.len(), 600);
    assert_strictly_increasing(&log);
    assert_eq!(cover(store, "A"), vec![iv(0, 600)]);
    assert_eq!(cover(store, "A"), runs(&replay(&log)));
}
