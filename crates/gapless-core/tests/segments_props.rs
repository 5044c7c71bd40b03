//! `segments` against a brute-force model: for each one-µs tick of a 200-tick
//! timeline, the event with the highest sequence number containing it.

use gapless_core::{
    segments, Coverage, EventKind, Interval, PagedSegments, Segment, SegmentSource,
};
use proptest::prelude::*;

mod ticks;

use ticks::{iv, ticks};

/// Random tick ranges of up to 15 ticks, now and then longer.
fn interval() -> impl Strategy<Value = (i64, i64)> {
    ticks::interval(15)
}

/// Events with distinct sequence numbers (gappy, some negative), shuffled:
/// segments must not depend on the order they are given in.
fn events() -> impl Strategy<Value = Vec<SegmentSource>> {
    prop::collection::vec(
        (
            prop_oneof![3 => Just(EventKind::Landed), 1 => Just(EventKind::Retracted)],
            interval(),
            1..5i64,
        ),
        0..30,
    )
    .prop_map(|raw| {
        let mut seq = -20;
        raw.into_iter()
            .map(|(kind, (a, b), step)| {
                seq += step;
                SegmentSource {
                    seq,
                    interval: iv(a, b),
                    kind,
                }
            })
            .collect::<Vec<_>>()
    })
    .prop_shuffle()
}

/// The model: paint each tick with its latest event, then group runs of
/// ticks with the same winner.
fn model(events: &[SegmentSource], (ra, rb): (i64, i64)) -> Vec<((i64, i64), i64, EventKind)> {
    let mut out: Vec<((i64, i64), i64, EventKind)> = Vec::new();
    for x in ra..rb {
        let winner = events
            .iter()
            .filter(|e| {
                let (a, b) = ticks(e.interval);
                a <= x && x < b
            })
            .max_by_key(|e| e.seq);
        let Some(w) = winner else { continue };
        match out.last_mut() {
            Some(((_, end), seq, _)) if *end == x && *seq == w.seq => *end = x + 1,
            _ => out.push(((x, x + 1), w.seq, w.kind)),
        }
    }
    out
}

fn flat(segs: &[Segment]) -> Vec<((i64, i64), i64, EventKind)> {
    segs.iter()
        .map(|s| (ticks(s.interval), s.seq, s.kind))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn segments_match_model(events in events(), range in interval()) {
        let got = segments(&events, iv(range.0, range.1));
        prop_assert_eq!(flat(&got), model(&events, range));
    }

    /// Paging: each page painted from the events in sequence order is
    /// exactly the segments of `[from, next)`, holds at most `limit`
    /// segments and moves forward; the pages concatenated, a segment split
    /// at a page's end joined again, are the unpaged answer.
    #[test]
    fn paged_segments_are_the_unpaged_answer(
        events in events(),
        range in prop_oneof![interval(), Just((0, ticks::TICKS))],
        limit in 1..=5usize,
    ) {
        let mut in_order = events.clone();
        in_order.sort_by_key(|e| e.seq);
        let (ra, rb) = range;
        let mut from = ra;
        let mut joined: Vec<Segment> = Vec::new();
        let mut pages = 0;
        loop {
            let mut page = PagedSegments::new(iv(from, rb), limit);
            for e in &in_order {
                page.paint(e.seq, e.interval, e.kind, e.seq);
            }
            let (got, next) = page.finish();
            let to = next.map_or(rb, |n| n.as_micros() - ticks::BASE);
            prop_assert!(got.len() <= limit, "page of {} > limit {}", got.len(), limit);
            prop_assert!(to > from, "no progress from {}", from);
            let segs: Vec<Segment> = got.iter().map(|(s, _)| *s).collect();
            prop_assert!(got.iter().all(|(s, tag)| s.seq == *tag));
            prop_assert_eq!(flat(&segs), model(&events, (from, to)));
            for s in segs {
                match joined.last_mut() {
                    Some(last) if last.seq == s.seq && last.interval.end() == s.interval.start() => {
                        last.interval = Interval::new(last.interval.start(), s.interval.end()).unwrap();
                    }
                    _ => joined.push(s),
                }
            }
            pages += 1;
            prop_assert!(pages <= 2 * ticks::TICKS);
            match next {
                Some(_) => from = to,
                None => break,
            }
        }
        prop_assert_eq!(flat(&joined), model(&events, range));
        prop_assert_eq!(joined, segments(&events, iv(ra, rb)));
    }

    /// The landed segments are the coverage of the same events (applied in
    /// sequence order) within the range.
    #[test]
    fn landed_segments_are_coverage(events in events(), range in interval()) {
        let mut in_order = events.clone();
        in_order.sort_by_key(|e| e.seq);
        let mut cov = Coverage::new();
        for e in &in_order {
            cov.apply(e.kind, e.interval);
        }
        let r = iv(range.0, range.1);
        let expected: Vec<Interval> = cov.set().complement(r).complement(r).runs().collect();
        let landed: Vec<Interval> = segments(&events, r)
            .iter()
            .filter(|s| s.kind == EventKind::Landed)
            .map(|s| s.interval)
            .collect();
        // Landed segments of different events may touch: merge before comparing.
        let merged = gapless_core::IntervalSet::from_intervals(landed);
        prop_assert_eq!(merged.runs().collect::<Vec<_>>(), expected);
    }
}

#[test]
fn conformance_retraction_then_partial_relanding() {
    let m = |x: i64| x * 60;
    let events = [
        SegmentSource {
            seq: 1,
            interval: iv(m(0), m(60)),
            kind: EventKind::Landed,
        },
        SegmentSource {
            seq: 2,
            interval: iv(m(10), m(40)),
            kind: EventKind::Retracted,
        },
        SegmentSource {
            seq: 3,
            interval: iv(m(15), m(30)),
            kind: EventKind::Landed,
        },
    ];
    let got = flat(&segments(&events, iv(m(0), m(60))));
    assert_eq!(
        got,
        [
            ((m(0), m(10)), 1, EventKind::Landed),
            ((m(10), m(15)), 2, EventKind::Retracted),
            ((m(15), m(30)), 3, EventKind::Landed),
            ((m(30), m(40)), 2, EventKind::Retracted),
            ((m(40), m(60)), 1, EventKind::Landed),
        ]
    );
}

#[test]
fn reprocessed_hour_supersedes_twelve_batches() {
    let m = |x: i64| 600 + x * 5;
    let mut events: Vec<SegmentSource> = (0..12)
        .map(|i| SegmentSource {
            seq: i,
            interval: iv(m(i * 5), m(i * 5 + 5)),
            kind: EventKind::Landed,
        })
        .collect();
    events.push(SegmentSource {
        seq: 12,
        interval: iv(m(0), m(60)),
        kind: EventKind::Landed,
    });
    let got = flat(&segments(&events, iv(0, 1000)));
    assert_eq!(got, [((m(0), m(60)), 12, EventKind::Landed)]);
}

#[test]
fn clipped_to_range_and_uncovered_parts_have_no_segment() {
    let events = [
        SegmentSource {
            seq: 1,
            interval: iv(0, 10),
            kind: EventKind::Landed,
        },
        SegmentSource {
            seq: 2,
            interval: iv(20, 30),
            kind: EventKind::Retracted,
        },
        SegmentSource {
            seq: 3,
            interval: iv(50, 60),
            kind: EventKind::Landed,
        }, // outside
    ];
    let got = flat(&segments(&events, iv(5, 25)));
    assert_eq!(
        got,
        [
            ((5, 10), 1, EventKind::Landed),
            ((20, 25), 2, EventKind::Retracted)
        ]
    );
    assert!(segments(&[], iv(0, 10)).is_empty());
}

#[test]
fn touching_pieces_of_one_event_merge_but_different_events_do_not() {
    // Event 1 is split by event 2, which is then covered again by event 3
    // only in the middle: event 1's pieces stay separate.
    let events = [
        SegmentSource {
            seq: 1,
            interval: iv(0, 30),
            kind: EventKind::Landed,
        },
        SegmentSource {
            seq: 2,
            interval: iv(10, 20),
            kind: EventKind::Landed,
        },
        SegmentSource {
            seq: 3,
            interval: iv(20, 30),
            kind: EventKind::Landed,
        },
    ];
    let got = flat(&segments(&events, iv(0, 30)));
    assert_eq!(
        got,
        [
            ((0, 10), 1, EventKind::Landed),
            ((10, 20), 2, EventKind::Landed),
            ((20, 30), 3, EventKind::Landed),
        ]
    );
    // An older event whose boundaries fall inside a newer one: the newer one
    // is a single segment despite the extra boundary points.
    let events = [
        SegmentSource {
            seq: 2,
            interval: iv(0, 30),
            kind: EventKind::Landed,
        },
        SegmentSource {
            seq: 1,
            interval: iv(10, 20),
            kind: EventKind::Landed,
        },
    ];
    assert_eq!(
        flat(&segments(&events, iv(0, 30))),
        [((0, 30), 2, EventKind::Landed)]
    );
}
