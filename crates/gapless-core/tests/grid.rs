//! Calendar windows: the DST cases of the conformance file, other zones'
//! oddities, and a property test against a brute-force minute scan.

use gapless_core::{
    parse_instant, parse_interval, parse_time_zone, Grid, GridUnit, Instant, Interval,
    MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE as MINUTE,
};
use jiff::tz::TimeZone;
use proptest::prelude::*;

fn tz(name: &str) -> TimeZone {
    parse_time_zone(name).unwrap()
}

fn at(text: &str) -> Instant {
    parse_instant(text, None).unwrap()
}

fn range(start: &str, end: &str) -> Interval {
    Interval::new(at(start), at(end)).unwrap()
}

/// The windows as `start/end` strings.
fn windows(every: &str, zone: &str, start: &str, end: &str) -> Vec<String> {
    Grid::parse(every)
        .unwrap()
        .windows(range(start, end), &tz(zone))
        .iter()
        .map(|w| format!("{}/{}", w.start(), w.end()))
        .collect()
}

#[test]
fn berlin_days_of_23_and_25_hours() {
    assert_eq!(
        windows(
            "1d",
            "Europe/Berlin",
            "2025-03-29T12:00:00Z",
            "2025-03-31T12:00:00Z"
        ),
        [
            "2025-03-28T23:00:00Z/2025-03-29T23:00:00Z",
            "2025-03-29T23:00:00Z/2025-03-30T22:00:00Z",
            "2025-03-30T22:00:00Z/2025-03-31T22:00:00Z",
        ]
    );
    assert_eq!(
        windows(
            "1d",
            "Europe/Berlin",
            "2025-10-25T12:00:00Z",
            "2025-10-27T12:00:00Z"
        ),
        [
            "2025-10-24T22:00:00Z/2025-10-25T22:00:00Z",
            "2025-10-25T22:00:00Z/2025-10-26T23:00:00Z",
            "2025-10-26T23:00:00Z/2025-10-27T23:00:00Z",
        ]
    );
}

#[test]
fn new_york_spring_day() {
    assert_eq!(
        windows(
            "1d",
            "America/New_York",
            "2025-03-09T00:00:00Z",
            "2025-03-11T00:00:00Z"
        ),
        [
            "2025-03-08T05:00:00Z/2025-03-09T05:00:00Z",
            "2025-03-09T05:00:00Z/2025-03-10T04:00:00Z",
            "2025-03-10T04:00:00Z/2025-03-11T04:00:00Z",
        ]
    );
}

#[test]
fn kolkata_hours_start_at_half_past_utc() {
    assert_eq!(
        windows(
            "1h",
            "Asia/Kolkata",
            "2025-03-30T10:00:00Z",
            "2025-03-30T14:00:00Z"
        ),
        [
            "2025-03-30T09:30:00Z/2025-03-30T10:30:00Z",
            "2025-03-30T10:30:00Z/2025-03-30T11:30:00Z",
            "2025-03-30T11:30:00Z/2025-03-30T12:30:00Z",
            "2025-03-30T12:30:00Z/2025-03-30T13:30:00Z",
            "2025-03-30T13:30:00Z/2025-03-30T14:30:00Z",
        ]
    );
}

#[test]
fn five_hours_end_the_day_with_four() {
    assert_eq!(
        windows("5h", "UTC", "2025-06-01T18:00:00Z", "2025-06-02T02:00:00Z"),
        [
            "2025-06-01T15:00:00Z/2025-06-01T20:00:00Z",
            "2025-06-01T20:00:00Z/2025-06-02T00:00:00Z",
            "2025-06-02T00:00:00Z/2025-06-02T05:00:00Z",
        ]
    );
}

#[test]
fn kathmandu_quarter_hours() {
    // +05:45: local quarter hours fall on UTC quarter hours.
    assert_eq!(
        windows(
            "15m",
            "Asia/Kathmandu",
            "2025-06-01T00:00:00Z",
            "2025-06-01T01:00:00Z"
        ),
        [
            "2025-06-01T00:00:00Z/2025-06-01T00:15:00Z",
            "2025-06-01T00:15:00Z/2025-06-01T00:30:00Z",
            "2025-06-01T00:30:00Z/2025-06-01T00:45:00Z",
            "2025-06-01T00:45:00Z/2025-06-01T01:00:00Z",
        ]
    );
    // Kathmandu hours start at :15 UTC.
    assert_eq!(
        windows(
            "1h",
            "Asia/Kathmandu",
            "2025-06-01T00:00:00Z",
            "2025-06-01T00:30:00Z"
        ),
        [
            "2025-05-31T23:15:00Z/2025-06-01T00:15:00Z",
            "2025-06-01T00:15:00Z/2025-06-01T01:15:00Z",
        ]
    );
}

#[test]
fn berlin_fold_hour_twice() {
    assert_eq!(
        windows(
            "1h",
            "Europe/Berlin",
            "2025-10-25T23:30:00Z",
            "2025-10-26T02:00:00Z"
        ),
        [
            "2025-10-25T23:00:00Z/2025-10-26T00:00:00Z",
            "2025-10-26T00:00:00Z/2025-10-26T01:00:00Z",
            "2025-10-26T01:00:00Z/2025-10-26T02:00:00Z",
        ]
    );
}

#[test]
fn berlin_gap_hour_is_skipped() {
    // Local 02:00 does not exist on 2025-03-30: 01:00 CET to 03:00 CEST is one hour.
    assert_eq!(
        windows(
            "1h",
            "Europe/Berlin",
            "2025-03-30T00:00:00Z",
            "2025-03-30T02:00:00Z"
        ),
        [
            "2025-03-30T00:00:00Z/2025-03-30T01:00:00Z",
            "2025-03-30T01:00:00Z/2025-03-30T02:00:00Z",
        ]
    );
    // 2h: 00:00 CET, (02:00 skipped), 04:00 CEST: a 3-hour window.
    assert_eq!(
        windows(
            "2h",
            "Europe/Berlin",
            "2025-03-29T23:30:00Z",
            "2025-03-30T00:30:00Z"
        ),
        ["2025-03-29T23:00:00Z/2025-03-30T02:00:00Z"]
    );
}

#[test]
fn weeks_quarters_and_two_days() {
    assert_eq!(
        windows("1w", "UTC", "2025-06-01T00:00:00Z", "2025-06-03T00:00:00Z"),
        [
            "2025-05-26T00:00:00Z/2025-06-02T00:00:00Z",
            "2025-06-02T00:00:00Z/2025-06-09T00:00:00Z",
        ]
    );
    assert_eq!(
        windows("3mo", "UTC", "2025-05-01T00:00:00Z", "2025-08-01T00:00:00Z"),
        [
            "2025-04-01T00:00:00Z/2025-07-01T00:00:00Z",
            "2025-07-01T00:00:00Z/2025-10-01T00:00:00Z",
        ]
    );
    assert_eq!(
        windows("2d", "UTC", "2025-05-30T00:00:00Z", "2025-06-04T00:00:00Z"),
        [
            "2025-05-29T00:00:00Z/2025-05-31T00:00:00Z",
            "2025-05-31T00:00:00Z/2025-06-01T00:00:00Z",
            "2025-06-01T00:00:00Z/2025-06-03T00:00:00Z",
            "2025-06-03T00:00:00Z/2025-06-05T00:00:00Z",
        ]
    );
}

#[test]
fn multi_week_grids_restart_with_the_iso_year() {
    // 2026 has 53 ISO weeks: 2w windows start at weeks 1, 3, …, 53, and week
    // 53 (2026-12-28) is a one-week window before week 1 of 2027 (2027-01-04).
    assert_eq!(
        windows("2w", "UTC", "2026-12-20T00:00:00Z", "2027-01-05T00:00:00Z"),
        [
            "2026-12-14T00:00:00Z/2026-12-28T00:00:00Z",
            "2026-12-28T00:00:00Z/2027-01-04T00:00:00Z",
            "2027-01-04T00:00:00Z/2027-01-18T00:00:00Z",
        ]
    );
    // Weeks start on Monday at local midnight.
    assert_eq!(
        windows(
            "1w",
            "Europe/Berlin",
            "2025-10-26T12:00:00Z",
            "2025-10-26T13:00:00Z"
        ),
        ["2025-10-19T22:00:00Z/2025-10-26T23:00:00Z"]
    );
}

#[test]
fn months_and_years() {
    assert_eq!(
        windows(
            "1mo",
            "Europe/Berlin",
            "2025-03-15T00:00:00Z",
            "2025-04-02T00:00:00Z"
        ),
        [
            "2025-02-28T23:00:00Z/2025-03-31T22:00:00Z",
            "2025-03-31T22:00:00Z/2025-04-30T22:00:00Z",
        ]
    );
    assert_eq!(
        windows("1y", "UTC", "2025-06-01T00:00:00Z", "2025-06-02T00:00:00Z"),
        ["2025-01-01T00:00:00Z/2026-01-01T00:00:00Z"]
    );
    // Years divisible by N.
    assert_eq!(
        windows("10y", "UTC", "2025-06-01T00:00:00Z", "2025-06-02T00:00:00Z"),
        ["2020-01-01T00:00:00Z/2030-01-01T00:00:00Z"]
    );
    assert_eq!(
        windows("6mo", "UTC", "2025-06-01T00:00:00Z", "2025-07-02T00:00:00Z"),
        [
            "2025-01-01T00:00:00Z/2025-07-01T00:00:00Z",
            "2025-07-01T00:00:00Z/2026-01-01T00:00:00Z",
        ]
    );
}

#[test]
fn days_of_the_month_restart_each_month() {
    // 2d in a 31-day month: day 31 is a one-day window.
    assert_eq!(
        windows("2d", "UTC", "2025-01-30T12:00:00Z", "2025-02-01T12:00:00Z"),
        [
            "2025-01-29T00:00:00Z/2025-01-31T00:00:00Z",
            "2025-01-31T00:00:00Z/2025-02-01T00:00:00Z",
            "2025-02-01T00:00:00Z/2025-02-03T00:00:00Z",
        ]
    );
    // 10d: days 1, 11, 21, 31.
    assert_eq!(
        windows("10d", "UTC", "2025-03-25T00:00:00Z", "2025-04-02T00:00:00Z"),
        [
            "2025-03-21T00:00:00Z/2025-03-31T00:00:00Z",
            "2025-03-31T00:00:00Z/2025-04-01T00:00:00Z",
            "2025-04-01T00:00:00Z/2025-04-11T00:00:00Z",
        ]
    );
}

#[test]
fn lord_howe_half_hour_shift() {
    // DST ends 2025-04-06 02:00 local (+11:00) -> 01:30 (+10:30), at
    // 2025-04-05T15:00Z: local 01:30–02:00 happens twice.
    assert_eq!(
        windows(
            "1h",
            "Australia/Lord_Howe",
            "2025-04-05T14:30:00Z",
            "2025-04-05T15:45:00Z"
        ),
        [
            "2025-04-05T14:00:00Z/2025-04-05T15:30:00Z",
            "2025-04-05T15:30:00Z/2025-04-05T16:30:00Z",
        ]
    );
    assert_eq!(
        windows(
            "30m",
            "Australia/Lord_Howe",
            "2025-04-05T14:00:00Z",
            "2025-04-05T15:30:00Z"
        ),
        [
            "2025-04-05T14:00:00Z/2025-04-05T14:30:00Z",
            "2025-04-05T14:30:00Z/2025-04-05T15:00:00Z",
            "2025-04-05T15:00:00Z/2025-04-05T15:30:00Z",
        ]
    );
    // DST starts 2025-10-05 02:00 local (+10:30) -> 02:30 (+11:00), at
    // 2025-10-04T15:30Z: local 02:00 is skipped, 01:00 to 03:00 is 90 minutes.
    assert_eq!(
        windows(
            "1h",
            "Australia/Lord_Howe",
            "2025-10-04T15:00:00Z",
            "2025-10-04T15:45:00Z"
        ),
        ["2025-10-04T14:30:00Z/2025-10-04T16:00:00Z"]
    );
    // The day of each change is 23.5 and 24.5 hours long.
    let lens: Vec<i64> = Grid::parse("1d")
        .unwrap()
        .windows(
            range("2025-04-05T14:00:00Z", "2025-04-05T14:01:00Z"),
            &tz("Australia/Lord_Howe"),
        )
        .iter()
        .map(|w| w.len_micros() / MINUTE)
        .collect();
    assert_eq!(lens, [24 * 60 + 30]);
    let lens: Vec<i64> = Grid::parse("1d")
        .unwrap()
        .windows(
            range("2025-10-04T15:00:00Z", "2025-10-04T15:01:00Z"),
            &tz("Australia/Lord_Howe"),
        )
        .iter()
        .map(|w| w.len_micros() / MINUTE)
        .collect();
    assert_eq!(lens, [23 * 60 + 30]);
}

#[test]
fn santiago_midnight_gap_day_starts_at_one() {
    // Chile springs forward at 24:00 on 2025-09-06: 2025-09-07 starts at
    // 01:00 local (-03), 04:00Z.
    assert_eq!(
        windows(
            "1d",
            "America/Santiago",
            "2025-09-07T12:00:00Z",
            "2025-09-07T12:01:00Z"
        ),
        ["2025-09-07T04:00:00Z/2025-09-08T03:00:00Z"]
    );
}

#[test]
fn window_containing_and_boundaries() {
    let g = Grid::parse("1h").unwrap();
    let w = g.window_containing(at("2025-03-30T12:29:59.999999Z"), &tz("Asia/Kolkata"));
    assert_eq!(w, range("2025-03-30T11:30:00Z", "2025-03-30T12:30:00Z"));
    // A boundary belongs to the window it starts.
    let w = g.window_containing(at("2025-03-30T12:30:00Z"), &tz("Asia/Kolkata"));
    assert_eq!(w.start(), at("2025-03-30T12:30:00Z"));
    // The extremes of the time line do not panic.
    let w = Grid::parse("7y")
        .unwrap()
        .window_containing(Instant::MIN, &TimeZone::UTC);
    assert_eq!(w.start(), Instant::MIN);
    let w = Grid::parse("1d")
        .unwrap()
        .window_containing(Instant::MAX, &tz("Pacific/Kiritimati"));
    assert_eq!(w.end(), Instant::MAX);
    let w = Grid::parse("1h")
        .unwrap()
        .window_containing(Instant::MIN, &tz("America/New_York"));
    assert_eq!(w.start(), Instant::MIN);
}

#[test]
fn windows_are_contiguous_and_cover_the_range() {
    for every in [
        "1m", "7m", "1h", "5h", "1d", "3d", "1w", "2w", "1mo", "3mo", "1y",
    ] {
        for zone in [
            "UTC",
            "Europe/Berlin",
            "Australia/Lord_Howe",
            "America/Santiago",
        ] {
            let r = range("2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z");
            let ws = Grid::parse(every).unwrap().windows(r, &tz(zone));
            assert!(ws[0].start() <= r.start(), "{every} {zone}");
            assert!(ws.last().unwrap().end() >= r.end(), "{every} {zone}");
            for pair in ws.windows(2) {
                assert_eq!(pair[0].end(), pair[1].start(), "{every} {zone}");
            }
        }
    }
}

#[test]
fn a_year_of_hours_is_fast() {
    let g = Grid::parse("1h").unwrap();
    let r = range("2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z");
    let berlin = tz("Europe/Berlin");
    let t0 = std::time::Instant::now();
    let ws = g.windows(r, &berlin);
    let took = t0.elapsed();
    assert_eq!(ws.len(), 8760);
    eprintln!("a year of 1h windows in Europe/Berlin: {took:?}");
    // Generous for unoptimized builds on a shared machine; release is far below 10 ms.
    assert!(took.as_millis() < 200, "a year of hours took {took:?}");
    let t0 = std::time::Instant::now();
    let ws = Grid::parse("1m").unwrap().windows(r, &berlin);
    assert_eq!(ws.len(), 525_600);
    assert!(t0.elapsed().as_secs() < 5);
}

#[test]
fn grid_text_round_trips_and_errors_are_clear() {
    for text in [
        "1m", "59m", "1h", "23h", "1d", "31d", "1w", "53w", "1mo", "2mo", "3mo", "4mo", "6mo",
        "12mo", "1y", "100y",
    ] {
        let g = Grid::parse(text).unwrap();
        assert_eq!(g.to_string(), text);
        assert_eq!(text.parse::<Grid>().unwrap(), g);
    }
    assert_eq!(Grid::parse("15m").unwrap().unit(), GridUnit::Minute);
    assert_eq!(Grid::parse("015m").unwrap().to_string(), "15m");
    let cases = [
        (
            "",
            "invalid grid \"\": empty; expected a grid such as 5m, 1h, 1d, 1w, 3mo or 1y",
        ),
        (
            "60m",
            "invalid grid \"60m\": minutes must be 1 to 59 (60m is 1h)",
        ),
        (
            "24h",
            "invalid grid \"24h\": hours must be 1 to 23 (24h is 1d)",
        ),
        ("0h", "invalid grid \"0h\": the count must be at least 1"),
        (
            "32d",
            "invalid grid \"32d\": days must be 1 to 31 (days 1, 1+N… of each month)",
        ),
        (
            "54w",
            "invalid grid \"54w\": weeks must be 1 to 53 (ISO weeks 1, 1+N… of each year)",
        ),
        (
            "5mo",
            "invalid grid \"5mo\": 5 months does not divide a year; use 1, 2, 3, 4, 6 or 12",
        ),
        (
            "5x",
            "invalid grid \"5x\": unknown unit \"x\"; use m, h, d, w, mo or y, such as 5m or 1h",
        ),
        (
            "h",
            "invalid grid \"h\": expected a number and a unit, such as 5m, 1h, 1d, 1w, 3mo or 1y",
        ),
        (
            "5",
            "invalid grid \"5\": missing unit; use m, h, d, w, mo or y, such as 5m or 1h",
        ),
        (
            "99999999999m",
            "invalid grid \"99999999999m\": minutes must be 1 to 59 (multiples of N in each hour)",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(Grid::parse(text).unwrap_err().to_string(), want);
    }
}

// ---------------------------------------------------------------------------
// The brute-force reference.

/// Whether the wall clock at `t` is a boundary of `g`: for sub-day grids the
/// local time is on the grid; for day grids the local date changed (from
/// the minute before) to a qualifying date.
fn reference_is_boundary(g: Grid, tz: &TimeZone, t: i64) -> bool {
    let dt = tz.to_datetime(jiff::Timestamp::from_microsecond(t).unwrap());
    let n = g.n() as i64;
    match g.unit() {
        GridUnit::Minute => dt.second() == 0 && i64::from(dt.minute()) % n == 0,
        GridUnit::Hour => dt.second() == 0 && dt.minute() == 0 && i64::from(dt.hour()) % n == 0,
        _ => {
            let before = tz
                .to_datetime(jiff::Timestamp::from_microsecond(t - MINUTE).unwrap())
                .date();
            let d = dt.date();
            if before == d {
                return false;
            }
            match g.unit() {
                GridUnit::Day => (i64::from(d.day()) - 1) % n == 0,
                GridUnit::Week => {
                    let iso = d.iso_week_date();
                    d.weekday() == jiff::civil::Weekday::Monday
                        && (i64::from(iso.week()) - 1) % n == 0
                }
                GridUnit::Month => d.day() == 1 && (i64::from(d.month()) - 1) % n == 0,
                _ => d.day() == 1 && d.month() == 1 && i64::from(d.year()) % n == 0,
            }
        }
    }
}

fn reference_windows(g: Grid, tz: &TimeZone, r: Interval, margin: i64) -> Vec<(i64, i64)> {
    let lo = r.start().as_micros().div_euclid(MINUTE) * MINUTE - margin;
    let hi = r.end().as_micros() + margin;
    let mut bounds = Vec::new();
    let mut t = lo;
    while t <= hi {
        if reference_is_boundary(g, tz, t) {
            bounds.push(t);
        }
        t += MINUTE;
    }
    bounds
        .windows(2)
        .map(|p| (p[0], p[1]))
        .filter(|&(s, e)| s < r.end().as_micros() && e > r.start().as_micros())
        .collect()
}

const ZONES: [&str; 6] = [
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "America/Santiago",
    "Asia/Kathmandu",
];

const GRIDS: [&str; 14] = [
    "1m", "5m", "7m", "15m", "30m", "45m", "1h", "2h", "3h", "5h", "7h", "1d", "2d", "3d",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn windows_match_a_minute_scan(
        zone in 0..ZONES.len(),
        grid in 0..GRIDS.len(),
        year in 1990i16..2040,
        day_of_year in 0i64..365,
        before_min in 0i64..(3 * 24 * 60),
        len_min in 1i64..(3 * 24 * 60),
        odd_micros in 0i64..MINUTE,
    ) {
        let tz = tz(ZONES[zone]);
        let g = Grid::parse(GRIDS[grid]).unwrap();
        // Aim at the next transition after a random day (if the zone has one).
        let from = jiff::civil::Date::new(year, 1, 1).unwrap().to_datetime(jiff::civil::Time::midnight())
            .to_zoned_datetime(TimeZone::UTC).unwrap().timestamp().as_microsecond()
            + day_of_year * MICROS_PER_DAY;
        let pivot = tz
            .following(jiff::Timestamp::from_microsecond(from).unwrap())
            .next()
            .map(|tr| tr.timestamp().as_microsecond())
            .filter(|t| *t < from + 400 * MICROS_PER_DAY)
            .unwrap_or(from);
        let start = pivot - before_min * MINUTE + odd_micros;
        let r = Interval::from_micros(start, start + len_min * MINUTE).unwrap();
        let margin = if g.is_calendar_days() { 5 * MICROS_PER_DAY } else { 26 * MICROS_PER_HOUR };
        let want = reference_windows(g, &tz, r, margin);
        let got: Vec<(i64, i64)> = g
            .windows(r, &tz)
            .iter()
            .map(|w| (w.start().as_micros(), w.end().as_micros()))
            .collect();
        prop_assert_eq!(got, want, "grid {} in {} over {}", GRIDS[grid], ZONES[zone], r);
    }

    #[test]
    fn window_containing_contains(
        zone in 0..ZONES.len(),
        grid in prop::sample::select(vec!["1m", "13m", "1h", "5h", "1d", "4d", "1w", "3w", "1mo", "4mo", "1y", "3y"]),
        micros in 0i64..4_102_444_800_000_000, // 1970 to 2100
    ) {
        let tz = tz(ZONES[zone]);
        let g = Grid::parse(grid).unwrap();
        let t = Instant::from_micros(micros).unwrap();
        let w = g.window_containing(t, &tz);
        prop_assert!(w.contains(t), "{} {} {} {}", grid, ZONES[zone], t, w);
    }

    /// A rule's next deadline: the first window ending after an instant is
    /// the first of `windows_ending_in` from it (the rule's `from` and
    /// `until` cut the grid).
    #[test]
    fn first_end_after_is_the_first_window_ending_after(
        zone in 0..ZONES.len(),
        grid in prop::sample::select(vec!["1m", "13m", "1h", "5h", "1d", "4d", "1w", "1mo", "1y"]),
        from_s in 1_700_000_000i64..1_800_000_000,
        until_s in prop::option::of(0i64..200_000_000),
        after_s in -100_000_000i64..300_000_000,
    ) {
        let s = |secs: i64| Instant::from_micros(secs * 1_000_000).unwrap();
        let (from, until) = (s(from_s), until_s.map(|u| s(from_s + u)));
        let def = gapless_core::RuleDef::new(
            vec!["a".into()],
            Grid::parse(grid).unwrap(),
            ZONES[zone],
            gapless_core::Policy::Full,
            from,
            until,
        )
        .unwrap();
        let after = s(from_s + after_s);
        // Far enough for two of the longest windows past `from` or `after`.
        let horizon = s(from_s.max(from_s + after_s) + 3 * 366 * 86_400);
        let want = def.windows_ending_in(after, horizon).first().map(|w| w.end());
        prop_assert_eq!(def.first_end_after(after), want, "{} {} after {}", grid, ZONES[zone], after);
    }
}

#[test]
fn conformance_windows() {
    // The worked examples beside the spec.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/conformance/cases.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    for case in cases["cases"].as_array().unwrap() {
        for q in case["queries"].as_array().into_iter().flatten() {
            if q["command"] != "windows" {
                continue;
            }
            let zone = tz(q["tz"].as_str().unwrap_or("UTC"));
            let g = Grid::parse(q["every"].as_str().unwrap()).unwrap();
            let r = parse_interval(
                &format!(
                    "{}/{}",
                    q["start"].as_str().unwrap(),
                    q["end"].as_str().unwrap()
                ),
                Some(&zone),
            )
            .unwrap();
            let got: Vec<(String, String)> = g
                .windows(r, &zone)
                .iter()
                .map(|w| (w.start().to_string(), w.end().to_string()))
                .collect();
            let want: Vec<(String, String)> = q["expect"]["windows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| {
                    (
                        w["start"].as_str().unwrap().to_string(),
                        w["end"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            assert_eq!(got, want, "{}: {} {}", case["name"], q["every"], q["tz"]);
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} windows queries found");
}

#[test]
fn the_ends_of_the_time_line_do_not_panic() {
    let last = parse_instant("9999-12-30T22:00:00Z", None).unwrap();
    let points = [
        Instant::MIN,
        Instant::from_micros(Instant::MIN.as_micros() + MICROS_PER_HOUR).unwrap(),
        Instant::from_micros(last.as_micros() - MICROS_PER_HOUR).unwrap(),
        last,
        Instant::MAX,
    ];
    for every in [
        "1m", "7m", "1h", "5h", "1d", "3d", "1w", "3w", "1mo", "6mo", "1y", "7y", "9999y",
    ] {
        let g = Grid::parse(every).unwrap();
        for zone in [
            "UTC",
            "America/New_York",
            "Pacific/Kiritimati",
            "Pacific/Pago_Pago",
            "Europe/Berlin",
        ] {
            for t in points {
                let w = g.window_containing(t, &tz(zone));
                assert!(
                    w.contains(t) || t == Instant::MAX && w.end() == t,
                    "{every} {zone} {}",
                    t.as_micros()
                );
            }
            let all = Interval::new(
                Instant::MIN,
                Instant::from_micros(Instant::MIN.as_micros() + MICROS_PER_DAY).unwrap(),
            )
            .unwrap();
            assert!(!g.windows(all, &tz(zone)).is_empty());
        }
    }
}
