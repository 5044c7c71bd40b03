//! The listings a page at a time: every page of assets and rules, followed
//! by its cursor, against a brute-force filter and sort of the names, and
//! each asset's overview against the store's own coverage and runs.

use std::collections::HashMap;

use gapless_core::{Coverage, Grid, Instant, Interval, Policy, Rule, RuleDef, RuleSettings};
use gapless_store::{AssetOverview, AssetQuery, RuleQuery, Store, DAY_US, WEEK_US};

use super::{landed, retracted, t, Rng};

/// Names that sort differently as bytes than as text in most collations,
/// share prefixes, end in the largest code point or hold characters a
/// query string must encode.
const NAMES: &[&str] = &[
    "a",
    "ab",
    "abc",
    "ab\u{10FFFF}",
    "ac",
    "B",
    "b",
    "b.x",
    "b_x",
    "b-x",
    "Ä",
    "a\u{e9}",
    "ae",
    "s3://lake/orders",
    "s3://lake/ünïcode",
    "s3://lake/Orders",
    "with space",
    "amp&eq=",
    "pct%2F",
    "plus+",
    "\u{10FFFF}",
    "\u{D7FF}x",
    "\u{E000}",
    "日本/時間",
    "zz",
];

/// A query's names by brute force: every name, filtered, in byte order.
fn expected(names: &[String], prefix: Option<&str>, contains: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = names
        .iter()
        .filter(|n| prefix.is_none_or(|p| n.starts_with(p)))
        .filter(|n| contains.is_none_or(|c| n.contains(c)))
        .cloned()
        .collect();
    out.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    out
}

/// Every page of `query` followed by its cursor, each checked against its
/// limit; the overviews of all of them.
fn every_page(store: &dyn Store, query: &AssetQuery, now: Instant) -> Vec<AssetOverview> {
    let mut q = query.clone();
    let mut all = Vec::new();
    loop {
        let page = store.assets_page(&q, now).unwrap();
        assert!(page.assets.len() <= q.limit, "{q:?}");
        match page.next {
            Some(next) => {
                assert_eq!(page.assets.len(), q.limit, "a page before the last is full");
                assert_eq!(Some(&next), page.assets.last().map(|a| &a.summary.asset));
                all.extend(page.assets);
                q.after = Some(next);
            }
            None => {
                all.extend(page.assets);
                return all;
            }
        }
    }
}

/// Covered microseconds of `range` by the store's coverage (the reference
/// the overview's sums must equal).
fn covered_us(store: &dyn Store, asset: &str, range: Interval) -> i64 {
    store.coverage(asset, range).unwrap().covered_micros(range)
}

/// Pages of assets with a prefix, a substring, both or neither, at random
/// limits, equal a filter and sort of the names; each asset's overview
/// equals its summary, the end of the run at its first covered instant and
/// its coverage of the day and week before `now`.
pub fn asset_pages_match_a_filter_of_the_names(store: &dyn Store) {
    let mut rng = Rng::new(0x5eed_a55e7);
    let names: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
    let week_min = WEEK_US / 60_000_000;
    // Runs around the week's and the day's start and up to past now.
    let now = t(3 * week_min);
    for (i, name) in names.iter().enumerate() {
        if i % 5 == 4 {
            store
                .declare_asset(
                    name,
                    &gapless_core::AssetDecl {
                        key_span: None,
                        tz: jiff::tz::TimeZone::UTC,
                    },
                )
                .unwrap();
            continue;
        }
        let mut batch = Vec::new();
        for _ in 0..1 + rng.below(12) {
            let a = rng.below(4 * week_min as u64) as i64;
            let len = 1 + rng.below(3 * 24 * 60) as i64;
            batch.push(if rng.below(5) == 0 {
                retracted(name, a, a + len)
            } else {
                landed(name, a, a + len)
            });
        }
        store.append(&batch, t(0)).unwrap();
    }
    let week = Interval::new(
        Instant::from_micros(now.as_micros() - WEEK_US).unwrap(),
        now,
    )
    .unwrap();
    let day = Interval::new(Instant::from_micros(now.as_micros() - DAY_US).unwrap(), now).unwrap();
    let whole = every_page(
        store,
        &AssetQuery {
            limit: 1000,
            ..AssetQuery::default()
        },
        now,
    );
    assert_eq!(
        whole
            .iter()
            .map(|a| a.summary.asset.clone())
            .collect::<Vec<_>>(),
        expected(&names, None, None)
    );
    for a in &whole {
        let name = &a.summary.asset;
        assert_eq!(Some(&a.summary), store.asset(name).unwrap().as_ref());
        let frontier = a
            .summary
            .first_covered
            .map(|f| store.run_containing(name, f).unwrap().unwrap().end());
        assert_eq!(a.frontier, frontier, "{name}");
        assert_eq!(a.covered_week_us, covered_us(store, name, week), "{name}");
        assert_eq!(a.covered_day_us, covered_us(store, name, day), "{name}");
    }
    let mut fragments: Vec<String> = vec![String::new(), "\u{10FFFF}".into(), "q".into()];
    for n in &names {
        let chars: Vec<char> = n.chars().collect();
        for k in 1..=chars.len().min(3) {
            fragments.push(chars[..k].iter().collect());
            fragments.push(chars[chars.len() - k..].iter().collect());
        }
    }
    for _ in 0..120 {
        let pick = |rng: &mut Rng| {
            (rng.below(2) == 0)
                .then(|| fragments[rng.below(fragments.len() as u64) as usize].clone())
        };
        let (prefix, contains) = (pick(&mut rng), pick(&mut rng));
        let query = AssetQuery {
            prefix: prefix.clone(),
            contains: contains.clone(),
            after: None,
            limit: 1 + rng.below(6) as usize,
        };
        let got: Vec<String> = every_page(store, &query, now)
            .into_iter()
            .map(|a| a.summary.asset)
            .collect();
        assert_eq!(
            got,
            expected(&names, prefix.as_deref(), contains.as_deref()),
            "{query:?}"
        );
    }
    // A cursor that is no name of the ledger still pages from there on.
    let page = store
        .assets_page(
            &AssetQuery {
                after: Some("b-".into()),
                limit: 2,
                ..AssetQuery::default()
            },
            now,
        )
        .unwrap();
    let names_after: Vec<String> = expected(&names, None, None)
        .into_iter()
        .filter(|n| n.as_bytes() > b"b-".as_slice())
        .take(2)
        .collect();
    assert_eq!(
        page.assets
            .iter()
            .map(|a| a.summary.asset.clone())
            .collect::<Vec<_>>(),
        names_after
    );
}

fn rule(name: &str, assets: &[String]) -> Rule {
    Rule {
        name: name.to_string(),
        def: RuleDef::new(
            assets.to_vec(),
            Grid::parse("1d").unwrap(),
            "UTC",
            Policy::Full,
            t(0),
            Some(t(24 * 60)),
        )
        .unwrap(),
        settings: RuleSettings::default(),
    }
}

/// Pages of rules with and without a prefix, at random limits, equal a
/// sort of the names, each rule as `rule` answers it.
pub fn rule_pages_match_a_sort_of_the_names(store: &dyn Store) {
    let mut rng = Rng::new(0x5eed_7e1e5);
    let assets: Vec<String> = (0..3).map(|i| format!("asset{i}")).collect();
    for a in &assets {
        store.append(&[landed(a, 0, 60)], t(0)).unwrap();
    }
    let names: Vec<String> = [
        "a",
        "ab",
        "abc",
        "ac",
        "B",
        "b",
        "b.x",
        "b_x",
        "b-x",
        "orders_hourly",
        "orders-daily",
        "z9",
        "Z",
        "0",
        "9.9",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (i, n) in names.iter().enumerate() {
        store
            .put_rule(&rule(n, &assets[..1 + i % assets.len()]), t(0))
            .unwrap();
    }
    let mut prefixes: Vec<String> = vec!["x".into(), "orders".into(), "b-".into()];
    for n in &names {
        prefixes.push(n[..1].to_string());
        prefixes.push(n.clone());
    }
    for round in 0..60 {
        let prefix =
            (round % 4 != 0).then(|| prefixes[rng.below(prefixes.len() as u64) as usize].clone());
        let mut q = RuleQuery {
            prefix: prefix.clone(),
            after: None,
            limit: 1 + rng.below(5) as usize,
            bytes: 0,
        };
        let mut got = Vec::new();
        loop {
            let page = store.rules_page(&q).unwrap();
            assert!(page.rules.len() <= q.limit);
            for r in &page.rules {
                assert_eq!(Some(r), store.rule(&r.rule.name).unwrap().as_ref());
            }
            got.extend(page.rules.iter().map(|r| r.rule.name.clone()));
            match page.next {
                Some(next) => {
                    assert_eq!(page.rules.len(), q.limit);
                    q.after = Some(next);
                }
                None => break,
            }
        }
        assert_eq!(got, expected(&names, prefix.as_deref(), None), "{prefix:?}");
    }
}

/// A page of rules ends once its rules' asset lists reach the byte budget,
/// with the rule that passes it; the budget is never above
/// [`RULES_PAGE_BYTES`].
pub fn rule_pages_end_at_their_byte_budget(store: &dyn Store) {
    let assets: Vec<String> = (0..4).map(|i| format!("{i}{}", "x".repeat(99))).collect();
    store
        .append(
            &assets.iter().map(|a| landed(a, 0, 60)).collect::<Vec<_>>(),
            t(0),
        )
        .unwrap();
    // Rule i watches i % 4 + 1 assets: lists of 103, 205, 307 and 409 bytes.
    let list = |i: usize| serde_json::to_string(&assets[..i % 4 + 1]).unwrap().len();
    for i in 0..10 {
        store
            .put_rule(&rule(&format!("r{i}"), &assets[..i % 4 + 1]), t(0))
            .unwrap();
    }
    for budget in [1, 103, 104, 400, 700, 2_000, 5_000] {
        let mut pages = Vec::new();
        let mut after = None;
        loop {
            let page = store
                .rules_page(&RuleQuery {
                    limit: 3,
                    after: after.take(),
                    bytes: budget,
                    ..RuleQuery::default()
                })
                .unwrap();
            let names: Vec<usize> = page
                .rules
                .iter()
                .map(|r| r.rule.name[1..].parse().unwrap())
                .collect();
            pages.push(names);
            match page.next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        // The reference: rules in order, a page closed at 3 rules or once
        // the lists in it reach the budget.
        let mut want: Vec<Vec<usize>> = vec![Vec::new()];
        let mut bytes = 0;
        for i in 0..10 {
            let page = want.last_mut().unwrap();
            if page.len() == 3 || bytes >= budget {
                want.push(Vec::new());
                bytes = 0;
            }
            want.last_mut().unwrap().push(i);
            bytes += list(i);
        }
        assert_eq!(pages, want, "budget {budget}");
    }
    // A budget above the largest is the largest.
    let page = store
        .rules_page(&RuleQuery {
            bytes: usize::MAX,
            ..RuleQuery::default()
        })
        .unwrap();
    assert_eq!((page.rules.len(), page.next), (10, None));
}

/// The reference overview of `asset` as of `now`: its first run's start
/// and end, its last run's end, and its covered microseconds of the week
/// and the day before `now`, all from `model` (every event replayed).
fn model_overview(
    model: &Coverage,
    now: Instant,
) -> (Option<(Instant, Instant, Instant)>, i64, i64) {
    let set = model.set();
    let runs = set.runs().next().zip(set.runs().last());
    let before = |us: i64| {
        Interval::new(
            Instant::from_micros((now.as_micros() - us).max(Instant::MIN.as_micros())).unwrap(),
            now,
        )
        .unwrap()
    };
    (
        runs.map(|(first, last)| (first.start(), first.end(), last.end())),
        set.covered_micros(before(WEEK_US)),
        set.covered_micros(before(DAY_US)),
    )
}

/// Every asset's overview on the pages of the whole listing as of `now`
/// equals the reference of `models` (assets not in it cover nothing), and
/// its summary equals `asset show`'s.
fn assert_overviews(
    store: &dyn Store,
    models: &HashMap<String, Coverage>,
    now: Instant,
    step: &str,
) {
    let query = AssetQuery {
        limit: 3,
        ..AssetQuery::default()
    };
    for a in every_page(store, &query, now) {
        let name = &a.summary.asset;
        let empty = Coverage::new();
        let (runs, week, day) = model_overview(models.get(name).unwrap_or(&empty), now);
        let got = (
            a.summary
                .first_covered
                .zip(a.frontier)
                .zip(a.summary.last_covered)
                .map(|((f, e), l)| (f, e, l)),
            a.covered_week_us,
            a.covered_day_us,
        );
        assert_eq!(got, (runs, week, day), "{name} as of {now} after {step}");
        assert_eq!(
            Some(&a.summary),
            store.asset(name).unwrap().as_ref(),
            "{name}"
        );
    }
}

/// The instants an overview is read as of: each asset's last covered
/// instant and a microsecond either side of it (its kept recent runs answer
/// from there on, its coverage runs before), and instants across and past
/// the events' time.
fn overview_nows(models: &HashMap<String, Coverage>, horizon: i64) -> Vec<Instant> {
    let mut nows: Vec<Instant> = (0..=6).map(|k| t(k * horizon / 4)).collect();
    for m in models.values() {
        if let Some(last) = m.set().runs().last() {
            let end = last.end().as_micros();
            nows.extend([end - 1, end, end + 1].map(|us| Instant::from_micros(us).unwrap()));
        }
    }
    nows
}

/// A few steps of random appends (landings, retractions, re-landings) to
/// assets of few runs and to one of many short runs (more in its last week
/// than an asset keeps), with prunes of one asset or every one between
/// them: after every step each asset's overview (first and last covered
/// instants, frontier, covered microseconds of the day and week), as of
/// instants before, at and after the end of its coverage, equals a replay
/// of every event appended.
pub fn overviews_follow_appends_retractions_and_prunes(store: &dyn Store) {
    let mut rng = Rng::new(0x000e_7e7f_1e35);
    let week_min = WEEK_US / 60_000_000;
    let horizon = 3 * week_min;
    let assets = ["dense", "sparse", "many-runs", "declared"];
    store
        .declare_asset(
            "declared",
            &gapless_core::AssetDecl {
                key_span: None,
                tz: jiff::tz::TimeZone::UTC,
            },
        )
        .unwrap();
    let mut models: HashMap<String, Coverage> = HashMap::new();
    // An asset covered before 1970 (negative microseconds), never pruned.
    let old = before_1970();
    store.append(&old, t(0)).unwrap();
    for e in &old {
        models
            .entry(e.asset.clone())
            .or_default()
            .apply(e.kind, e.interval);
    }
    for step in 0..24 {
        let mut batch = Vec::new();
        for _ in 0..1 + rng.below(6) {
            let asset = assets[rng.below(3) as usize];
            let (a, len) = if asset == "many-runs" {
                // Slots of five minutes every ten in the last of the three
                // weeks: each landing its own run.
                let slot = rng.below(week_min as u64 / 10) as i64;
                (
                    horizon - week_min + 10 * slot,
                    5 * (1 + rng.below(2) as i64),
                )
            } else if asset == "sparse" {
                (
                    rng.below(horizon as u64 + week_min as u64) as i64,
                    1 + rng.below(600) as i64,
                )
            } else {
                (
                    rng.below(horizon as u64) as i64,
                    1 + rng.below(3 * 24 * 60) as i64,
                )
            };
            let n = if asset == "many-runs" { 30 } else { 1 };
            for k in 0..n {
                let a = if k == 0 {
                    a
                } else {
                    a + 10 * k * (1 + rng.below(3) as i64)
                };
                batch.push(if rng.below(5) == 0 {
                    retracted(asset, a, a + len)
                } else {
                    landed(asset, a, a + len)
                });
            }
        }
        store.append(&batch, t(horizon + step)).unwrap();
        for e in &batch {
            models
                .entry(e.asset.clone())
                .or_default()
                .apply(e.kind, e.interval);
        }
        if step % 5 == 2 {
            let before = t(rng.below(horizon as u64) as i64);
            let one = assets[rng.below(assets.len() as u64) as usize];
            if rng.below(2) == 0 {
                store.prune_events(one, before, usize::MAX).unwrap();
            } else {
                for a in assets {
                    store.prune_events(a, before, usize::MAX).unwrap();
                }
            }
        }
        for now in overview_nows(&models, horizon) {
            assert_overviews(store, &models, now, &format!("step {step}"));
        }
    }
    // The asset of many short runs has more in its last week than an
    // asset keeps: its overview was summed from its coverage runs.
    let many = models["many-runs"].set();
    let last = many.runs().last().unwrap().end();
    let week = Interval::new(
        Instant::from_micros(last.as_micros() - WEEK_US).unwrap(),
        last,
    )
    .unwrap();
    assert!(
        many.runs_overlapping(week).count() > 7 * 24,
        "too few runs to test"
    );
}

/// The end of [`before_1970`]'s events, in minutes after the base: in
/// 1968, negative microseconds since the epoch.
const BEFORE_1970_END: i64 = -30_000_000;

/// The events of an asset covered in 1968, runs in its last day and week
/// and before: its kept recent runs hold negative microseconds.
fn before_1970() -> Vec<gapless_core::NewEvent> {
    let (end, day) = (BEFORE_1970_END, 24 * 60);
    vec![
        landed("before-1970", end - 3 * day, end - 2 * day),
        landed("before-1970", end - day - 60, end - day),
        landed("before-1970", end - 30, end),
        retracted("before-1970", end - 20, end - 10),
    ]
}

/// Assets whose overviews take each way of reading them: one of few runs,
/// one of more runs in its last week than an asset keeps, one covered far
/// past the instants it is read as of, one covered before 1970, one only
/// declared (for the migration tests: their pages before and after).
pub fn overview_fixture(store: &dyn Store) {
    let week_min = WEEK_US / 60_000_000;
    store.append(&before_1970(), t(0)).unwrap();
    store
        .append(
            &[
                landed("few", 0, 3 * week_min),
                retracted("few", week_min, week_min + 60),
                landed("few", 2 * week_min, 2 * week_min + 30),
                retracted("few", 3 * week_min - 100, 3 * week_min - 50),
                landed("future", 0, 2 * week_min),
                landed("future", 10 * week_min, 11 * week_min),
            ],
            t(0),
        )
        .unwrap();
    let many: Vec<_> = (0..200)
        .map(|i| landed("many", week_min + 10 * i, week_min + 10 * i + 5))
        .collect();
    store.append(&many, t(0)).unwrap();
    store
        .declare_asset(
            "declared",
            &gapless_core::AssetDecl {
                key_span: None,
                tz: jiff::tz::TimeZone::UTC,
            },
        )
        .unwrap();
}

/// An asset's recent runs as kept (`(start, end)` pairs of big-endian
/// 8-byte integers) as the schemas before them kept them, as JSON text
/// `[[start, end], ...]` (for the migration tests).
pub fn kept_runs_as_json(bytes: &[u8]) -> String {
    assert_eq!(bytes.len() % 16, 0, "{bytes:?}");
    let runs: Vec<[i64; 2]> = bytes
        .chunks_exact(16)
        .map(|p| {
            let (start, end) = p.split_at(8);
            [start, end].map(|x| i64::from_be_bytes(x.try_into().unwrap()))
        })
        .collect();
    serde_json::to_string(&runs).unwrap()
}

/// Each asset's kept recent runs (`(id, bytes)` rows, as [`kept_runs_as_json`]
/// takes them) as JSON text; the fixture's rows hold every case a
/// migration must carry over: no runs, too many (NULL), and runs before
/// 1970.
pub fn kept_rows_as_json(rows: Vec<(i64, Option<Vec<u8>>)>) -> Vec<(i64, Option<String>)> {
    let kept: Vec<(i64, Option<String>)> = rows
        .into_iter()
        .map(|(id, bytes)| (id, bytes.as_deref().map(kept_runs_as_json)))
        .collect();
    assert!(kept.iter().any(|(_, j)| j.as_deref() == Some("[]")));
    assert!(kept.iter().any(|(_, j)| j.is_none()));
    assert!(kept
        .iter()
        .any(|(_, j)| j.as_deref().is_some_and(|j| j.contains("[-"))));
    kept
}

/// The whole listing as of instants across and past [`overview_fixture`]'s
/// events, and across the end of those before 1970.
pub fn overview_pages(store: &dyn Store) -> Vec<Vec<AssetOverview>> {
    let week_min = WEEK_US / 60_000_000;
    let end = BEFORE_1970_END;
    (0..12)
        .map(|k| k * week_min / 3)
        .chain([end - 25, end, end + 60, end + 2 * 24 * 60, end + week_min])
        .map(|m| {
            every_page(
                store,
                &AssetQuery {
                    limit: 2,
                    ..AssetQuery::default()
                },
                t(m),
            )
        })
        .collect()
}
