//! The tick timeline the property tests paint on: 200 one-µs ticks from a
//! fixed instant, small enough that random intervals often touch, overlap
//! and share ends.
#![allow(dead_code)]

use gapless_core::{Instant, Interval};
use proptest::prelude::*;

/// Where tick 0 is (2025-06-01T10:00:00Z).
pub const BASE: i64 = 1_748_772_000_000_000;
/// Ticks on the timeline.
pub const TICKS: i64 = 200;

/// The instant of a tick.
pub fn t(tick: i64) -> Instant {
    Instant::from_micros(BASE + tick).unwrap()
}

/// The interval of ticks `[a, b)`.
pub fn iv(a: i64, b: i64) -> Interval {
    Interval::new(t(a), t(b)).unwrap()
}

/// The ticks `[a, b)` of an interval.
pub fn ticks(i: Interval) -> (i64, i64) {
    (i.start().as_micros() - BASE, i.end().as_micros() - BASE)
}

/// Random non-empty tick ranges: mostly short (up to `max_len` ticks), now
/// and then anywhere on the timeline.
pub fn interval(max_len: i64) -> impl Strategy<Value = (i64, i64)> {
    prop_oneof![
        4 => (0..TICKS, 1..=max_len).prop_map(|(a, len)| (a, (a + len).min(TICKS))),
        1 => (0..TICKS, 0..=TICKS)
            .prop_filter_map("empty", |(a, b)| (a != b).then(|| (a.min(b), a.max(b)))),
    ]
}
