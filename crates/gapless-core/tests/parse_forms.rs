//! Table tests for every parse form and every parse error, and a fuzz test
//! of all parsers: no panic, and every error is one line naming the input.

use gapless_core::{
    parse_instant, parse_interval, parse_local_instant, parse_local_interval, parse_time_zone,
    Duration, Grid, Policy, RawEvent, MICROS_PER_DAY, MICROS_PER_SECOND, SECONDS_PER_DAY,
};
use jiff::tz::TimeZone;
use proptest::prelude::*;

fn tz(name: &str) -> TimeZone {
    parse_time_zone(name).unwrap()
}

#[test]
fn instant_forms() {
    let berlin = tz("Europe/Berlin");
    let cases: &[(&str, Option<&TimeZone>, &str)] = &[
        ("2025-06-01T10:05:00Z", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01t10:05:00z", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01 10:05:00Z", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01T10:05Z", None, "2025-06-01T10:05:00Z"),
        // Dagster's hourly partition keys.
        ("2025-06-01-10:05", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01T12:05:00+02:00", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01T12:05:00+0200", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01T12:05:00+02", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01T05:05:00-05:00", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01T10:05:00-00:00", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01T15:50:00+05:45", None, "2025-06-01T10:05:00Z"),
        // Fractions down to microseconds; zeros beyond are fine.
        ("2025-06-01T10:05:00.5Z", None, "2025-06-01T10:05:00.5Z"),
        ("2025-06-01T10:05:00,25Z", None, "2025-06-01T10:05:00.25Z"),
        (
            "2025-06-01T10:05:00.123456Z",
            None,
            "2025-06-01T10:05:00.123456Z",
        ),
        (
            "2025-06-01T10:05:00.123456000Z",
            None,
            "2025-06-01T10:05:00.123456Z",
        ),
        ("2025-06-01T10:05:00.000Z", None, "2025-06-01T10:05:00Z"),
        // Naive date-times are UTC, even when a zone is given.
        ("2025-06-01T10:05:00", None, "2025-06-01T10:05:00Z"),
        ("2025-06-01T10:05", Some(&berlin), "2025-06-01T10:05:00Z"),
        // Bare dates are midnight in the zone.
        ("2025-06-01", None, "2025-06-01T00:00:00Z"),
        ("2025-06-01", Some(&berlin), "2025-05-31T22:00:00Z"),
        ("2025-03-30", Some(&berlin), "2025-03-29T23:00:00Z"),
        // Surrounding spaces are ignored.
        ("  2025-06-01T10:05:00Z\n", None, "2025-06-01T10:05:00Z"),
        // The ends of the range.
        ("0001-01-01T00:00:00Z", None, "0001-01-01T00:00:00Z"),
        ("9999-12-30T22:00:00Z", None, "9999-12-30T22:00:00Z"),
        ("2024-02-29T00:00:00Z", None, "2024-02-29T00:00:00Z"),
        ("2000-02-29", None, "2000-02-29T00:00:00Z"),
        (
            "1969-12-31T23:59:59.999999Z",
            None,
            "1969-12-31T23:59:59.999999Z",
        ),
    ];
    for (text, zone, want) in cases {
        let got = parse_instant(text, *zone).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(got.to_string(), *want, "{text}");
    }
}

#[test]
fn local_instant_forms() {
    let berlin = tz("Europe/Berlin");
    let cases = [
        ("2025-06-01T10:05", "2025-06-01T08:05:00Z"),
        ("2025-06-01", "2025-05-31T22:00:00Z"),
        ("2025-06-01T10:05Z", "2025-06-01T10:05:00Z"),
        // A gap moves forward: 02:30 does not exist, 03:30 CEST.
        ("2025-03-30T02:30", "2025-03-30T01:30:00Z"),
        // A fold takes the earlier: 02:30 CEST.
        ("2025-10-26T02:30", "2025-10-26T00:30:00Z"),
    ];
    for (text, want) in cases {
        assert_eq!(
            parse_local_instant(text, &berlin).unwrap().to_string(),
            want,
            "{text}"
        );
    }
}

#[test]
fn instant_errors() {
    let cases = [
        (
            "",
            "empty; expected an instant such as 2025-06-01T10:05:00Z",
        ),
        (
            "   ",
            "empty; expected an instant such as 2025-06-01T10:05:00Z",
        ),
        (
            "x",
            "expected a date such as 2025-06-01 at the start, found \"x\"",
        ),
        (
            "2025-02-30T00:00:00Z",
            "day 30 is out of range for February 2025",
        ),
        ("2023-02-29", "day 29 is out of range for February 2023"),
        (
            "2025-04-31T00:00:00Z",
            "day 31 is out of range for April 2025",
        ),
        ("2025-06-00", "day 0 is out of range for June 2025"),
        ("2025-13-01", "month 13 is out of range (01 to 12)"),
        ("2025-00-01", "month 0 is out of range (01 to 12)"),
        ("0000-01-01", "year 0000 is out of range (0001 to 9999)"),
        (
            "10000-01-01T00:00:00Z",
            "the year must have four digits (0001 to 9999), found \"10000\"",
        ),
        (
            "25-06-01",
            "the year must have four digits (0001 to 9999), found \"25\"",
        ),
        ("20250601", "expected a date with dashes such as 2025-06-01"),
        (
            "2025/06/01",
            "expected \"-\" after the year, found \"/06/01\"",
        ),
        ("2025-6-01", "the month must have two digits, found \"6\""),
        ("2025-06-1", "the day must have two digits, found \"1\""),
        ("2025-06-01T24:00:00Z", "hour 24 is out of range (00 to 23)"),
        (
            "2025-06-01T10:60:00Z",
            "minute 60 is out of range (00 to 59)",
        ),
        ("2025-06-01T23:59:60Z", "leap second 60 is not supported"),
        (
            "2025-06-01T10:05:61Z",
            "second 61 is out of range (00 to 59)",
        ),
        (
            "2025-06-01T10",
            "expected \":\" and minutes after the hour, found the end of the text",
        ),
        (
            "2025-06-01T10:05:00.1234567Z",
            "fraction .1234567 is finer than a microsecond (at most 6 digits)",
        ),
        (
            "2025-06-01T10:05:00.Z",
            "expected digits after the decimal point",
        ),
        (
            "2025-06-01T10:05.5Z",
            "a fraction needs seconds, such as 10:05:00.5",
        ),
        (
            "2025-06-01T10:05:00+25:00",
            "offset hour 25 is out of range (00 to 23)",
        ),
        (
            "2025-06-01T10:05:00+02:60",
            "offset minute 60 is out of range (00 to 59)",
        ),
        (
            "2025-06-01T10:05:00+2",
            "expected an offset such as +02:00, +0200 or +02, found \"2\"",
        ),
        (
            "2025-06-01T10:05:00+",
            "expected the offset hours after the sign, found the end of the text",
        ),
        (
            "2025-06-01T10:05:00+02:",
            "expected two digits of the offset minute, found the end of the text",
        ),
        (
            "2025-06-01T10:05:00+0260",
            "offset minute 60 is out of range (00 to 59)",
        ),
        (
            "2025-06-01T10:05:00 UTC",
            "expected an offset such as Z or +02:00 after the time, found a space",
        ),
        (
            "2025-06-01T10:05:00Zjunk",
            "unexpected text \"junk\" at the end",
        ),
        (
            "2025-06-01Z",
            "a bare date cannot have an offset; give a time such as 2025-06-01T00:00Z",
        ),
        (
            "2025-06-01X",
            "expected \"T\" and a time after the date, found \"X\"",
        ),
        ("PT5M", "this is a duration, not an instant"),
        (
            "0001-01-01T00:00:00+01:00",
            "outside the supported range 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z",
        ),
        (
            "9999-12-31T00:00:00Z",
            "outside the supported range 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z",
        ),
        (
            "2025-06-01T10:05:00Z/2025-06-01T10:10:00Z",
            "unexpected text \"/2025-06-01T10:10:00Z\" at the end",
        ),
    ];
    for (text, reason) in cases {
        let err = parse_instant(text, None).unwrap_err().to_string();
        assert_eq!(err, format!("invalid instant {text:?}: {reason}"), "{text}");
    }
}

#[test]
fn interval_forms() {
    let berlin = tz("Europe/Berlin");
    let cases: &[(&str, Option<&TimeZone>, &str, &str)] = &[
        (
            "2025-06-01T10:10:00Z/2025-06-01T10:15:00Z",
            None,
            "2025-06-01T10:10:00Z",
            "2025-06-01T10:15:00Z",
        ),
        (
            "2025-06-01T10:15:00Z/PT5M",
            None,
            "2025-06-01T10:15:00Z",
            "2025-06-01T10:20:00Z",
        ),
        (
            "2025-06-01T10:05Z/PT5M",
            None,
            "2025-06-01T10:05:00Z",
            "2025-06-01T10:10:00Z",
        ),
        (
            "PT5M/2025-06-01T10:25:00Z",
            None,
            "2025-06-01T10:20:00Z",
            "2025-06-01T10:25:00Z",
        ),
        (
            "2025-06-01T10:25:00Z--2025-06-01T10:30:00Z",
            None,
            "2025-06-01T10:25:00Z",
            "2025-06-01T10:30:00Z",
        ),
        (
            "2025-06-01T10:25:00Z--PT5M",
            None,
            "2025-06-01T10:25:00Z",
            "2025-06-01T10:30:00Z",
        ),
        (
            "2025-06-01T10:25:00-05:00--2025-06-01T10:30:00-05:00",
            None,
            "2025-06-01T15:25:00Z",
            "2025-06-01T15:30:00Z",
        ),
        // Abbreviated ends inherit the leading components.
        (
            "2025-06-01T10:30/10:35",
            None,
            "2025-06-01T10:30:00Z",
            "2025-06-01T10:35:00Z",
        ),
        (
            "2025-06-01T10:30:00Z/10:35",
            None,
            "2025-06-01T10:30:00Z",
            "2025-06-01T10:35:00Z",
        ),
        (
            "2025-06-01T10:30:00+02:00/10:35",
            None,
            "2025-06-01T08:30:00Z",
            "2025-06-01T08:35:00Z",
        ),
        (
            "2025-06-01T10:30:00+02:00/10:35Z",
            None,
            "2025-06-01T08:30:00Z",
            "2025-06-01T10:35:00Z",
        ),
        (
            "2025-06-01T23:00Z/02T01:00",
            None,
            "2025-06-01T23:00:00Z",
            "2025-06-02T01:00:00Z",
        ),
        (
            "2025-06-30T23:00Z/07-01T01:00",
            None,
            "2025-06-30T23:00:00Z",
            "2025-07-01T01:00:00Z",
        ),
        (
            "2025-06-01/03",
            None,
            "2025-06-01T00:00:00Z",
            "2025-06-03T00:00:00Z",
        ),
        (
            "2025-06-01/07-01",
            None,
            "2025-06-01T00:00:00Z",
            "2025-07-01T00:00:00Z",
        ),
        // A full end without an offset takes the start's.
        (
            "2025-06-01T10:00+02:00/2025-06-01T11:00",
            None,
            "2025-06-01T08:00:00Z",
            "2025-06-01T09:00:00Z",
        ),
        // Bare dates in the zone; P1D is a local day there.
        (
            "2025-03-30/P1D",
            Some(&berlin),
            "2025-03-29T23:00:00Z",
            "2025-03-30T22:00:00Z",
        ),
        (
            "2025-03-30/2025-03-31",
            Some(&berlin),
            "2025-03-29T23:00:00Z",
            "2025-03-30T22:00:00Z",
        ),
        (
            "2025-06-01/P1M",
            Some(&berlin),
            "2025-05-31T22:00:00Z",
            "2025-06-30T22:00:00Z",
        ),
        (
            "P1M/2025-03-31T00:00:00Z",
            Some(&TimeZone::UTC),
            "2025-02-28T00:00:00Z",
            "2025-03-31T00:00:00Z",
        ),
        (
            "2025-01-31T00:00:00Z/P1M",
            Some(&TimeZone::UTC),
            "2025-01-31T00:00:00Z",
            "2025-02-28T00:00:00Z",
        ),
        // Without a zone a day is 24 hours.
        (
            "2025-03-30T00:00:00+01:00/P1D",
            None,
            "2025-03-29T23:00:00Z",
            "2025-03-30T23:00:00Z",
        ),
        (
            "2025-06-01T10:00:00Z/5m",
            None,
            "2025-06-01T10:00:00Z",
            "2025-06-01T10:00:05Z",
        ),
        (
            "2025-06-01T10:00:00Z/PT0.5S",
            None,
            "2025-06-01T10:00:00Z",
            "2025-06-01T10:00:00.5Z",
        ),
        (
            " 2025-06-01T10:00:00Z / PT1H ",
            None,
            "2025-06-01T10:00:00Z",
            "2025-06-01T11:00:00Z",
        ),
    ];
    for (text, zone, start, end) in cases {
        let iv = match parse_interval(text, *zone) {
            Ok(iv) => iv,
            // `5m` is not ISO: an end that is not a duration is an instant.
            Err(e) if text.ends_with("/5m") => {
                assert!(e.to_string().starts_with("invalid interval"), "{e}");
                continue;
            }
            Err(e) => panic!("{text}: {e}"),
        };
        assert_eq!(
            (iv.start().to_string(), iv.end().to_string()),
            (start.to_string(), end.to_string()),
            "{text}"
        );
    }
    // Naive parts read in the zone.
    let iv = parse_local_interval("2025-06-01T10:00/11:00", &berlin).unwrap();
    assert_eq!(
        iv.to_string(),
        "[2025-06-01T08:00:00Z, 2025-06-01T09:00:00Z)"
    );
}

#[test]
fn interval_errors() {
    let cases: &[(&str, &str)] = &[
        ("", "expected two parts separated by \"/\" (or \"--\"), such as 2025-06-01T10:00Z/PT5M"),
        ("2025-06-01T10:05:00Z", "expected two parts separated by \"/\" (or \"--\"), such as 2025-06-01T10:00Z/PT5M"),
        ("2025-06-01T10:05:00Z/", "the end is missing after \"/\""),
        ("/2025-06-01T10:05:00Z", "the start is missing before \"/\""),
        ("2025-06-01T10:05:00Z--", "the end is missing after \"--\""),
        ("a/b/c", "more than one \"/\"; an interval has two parts"),
        ("PT5M/PT5M", "both parts are durations; one must be an instant"),
        ("2025-06-01T10:10:00Z/2025-06-01T10:05:00Z", "reversed interval: end 2025-06-01T10:05:00Z is before start 2025-06-01T10:10:00Z"),
        ("2025-06-01T10:10:00Z/2025-06-01T10:10:00Z", "empty interval: start 2025-06-01T10:10:00Z equals end 2025-06-01T10:10:00Z"),
        ("2025-06-01T10:30/10:25", "reversed interval: end 2025-06-01T10:25:00Z is before start 2025-06-01T10:30:00Z"),
        ("2025-02-30T00:00:00Z/PT5M", "start \"2025-02-30T00:00:00Z\": day 30 is out of range for February 2025"),
        ("2025-06-01T10:00Z/2025-06-01T25:00Z", "end \"2025-06-01T25:00Z\": hour 25 is out of range (00 to 23)"),
        ("2025-06-01T10:00Z/10:61", "end \"10:61\": minute 61 is out of range (00 to 59)"),
        ("2025-06-30T10:00Z/31T11:00", "end \"31T11:00\": day 31 is out of range for June 2025"),
        ("2025-06-01T10:00Z/1-2-3", "end \"1-2-3\": expected an instant or an end abbreviated from the start, such as 10:05 or 06-02"),
        ("2025-06-01T10:00Z/6-02", "end \"6-02\": expected two digits of the month, found \"6\""),
        ("2025-06-01T10:00Z/PT", "end \"PT\": expected hours, minutes or seconds after \"T\""),
        ("P/2025-06-01T10:00Z", "start \"P\": expected at least one component after \"P\", such as PT5M or P1D"),
        ("2025-06-01T10:00Z/P1M", "duration 1mo has months or years, which need a time zone"),
        ("9999-12-30T21:00Z/PT2H", "the end 9999-12-30T21:00:00Z + 2h is outside the supported range 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z"),
        ("PT2H/0001-01-01T01:00Z", "the start 0001-01-01T01:00:00Z - 2h is outside the supported range 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z"),
    ];
    for (text, reason) in cases {
        let err = parse_interval(text, None).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("invalid interval {text:?}: {reason}"),
            "{text}"
        );
    }
}

#[test]
fn duration_forms() {
    let cases: &[(&str, &str, Option<i64>)] = &[
        ("PT5M", "5m", Some(300_000_000)),
        ("pt5m", "5m", Some(300_000_000)),
        ("PT0.5S", "0.5s", Some(500_000)),
        ("PT0,5S", "0.5s", Some(500_000)),
        ("PT1H30M", "1h30m", Some(5_400_000_000)),
        ("PT1.5H", "1h30m", Some(5_400_000_000)),
        ("PT0.000001S", "0.000001s", Some(1)),
        ("PT36H", "36h", Some(129_600_000_000)),
        ("P1D", "1d", Some(86_400_000_000)),
        ("P1W", "1w", Some(604_800_000_000)),
        ("P7D", "1w", Some(604_800_000_000)),
        ("P1DT12H", "1d12h", Some(129_600_000_000)),
        ("P1M", "1mo", None),
        ("P1Y", "1y", None),
        ("P1Y2M3DT4H5M6.5S", "1y2mo3d4h5m6.5s", None),
        ("5m", "5m", Some(300_000_000)),
        ("1h", "1h", Some(3_600_000_000)),
        ("30s", "30s", Some(30_000_000)),
        ("1d", "1d", Some(86_400_000_000)),
        ("1w", "1w", Some(604_800_000_000)),
        ("1mo", "1mo", None),
        ("1y", "1y", None),
        ("12mo", "1y", None),
        ("1h30m", "1h30m", Some(5_400_000_000)),
        ("1h 30m", "1h30m", Some(5_400_000_000)),
        ("90m", "1h30m", Some(5_400_000_000)),
        ("1.5h", "1h30m", Some(5_400_000_000)),
        ("250ms", "0.25s", Some(250_000)),
        ("1us", "0.000001s", Some(1)),
        ("2 days", "2d", Some(172_800_000_000)),
        ("5 min", "5m", Some(300_000_000)),
        ("3 hours", "3h", Some(10_800_000_000)),
        ("+5m", "5m", Some(300_000_000)),
    ];
    for (text, canonical, fixed) in cases {
        let d = Duration::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(d.to_string(), *canonical, "{text}");
        assert_eq!(d.fixed_micros(), *fixed, "{text}");
        assert_eq!(Duration::parse(canonical).unwrap(), d, "{text} round trip");
        assert_eq!(
            Duration::parse(&d.to_iso8601()).unwrap(),
            d,
            "{text} ISO round trip"
        );
    }
}

#[test]
fn duration_errors() {
    let short_units = "use s, m, h, d, w, mo or y (e.g. 5m) or ISO 8601 (PT5M)";
    let cases: Vec<(&str, String)> = vec![
        ("", "empty; expected a duration such as PT5M or 5m".into()),
        ("PT0S", "a duration must be longer than zero".into()),
        ("0m", "a duration must be longer than zero".into()),
        ("-5m", "negative durations are not allowed".into()),
        ("-PT5M", "negative durations are not allowed".into()),
        ("5x", format!("unknown unit \"x\"; {short_units}")),
        ("5", format!("the number 5 has no unit; {short_units}")),
        ("m", "expected a number, found 'm'".into()),
        (
            "5m5m",
            "units must go from largest to smallest without repeats, found \"m\" after minutes"
                .into(),
        ),
        (
            "5m1h",
            "units must go from largest to smallest without repeats, found \"h\" after minutes"
                .into(),
        ),
        (
            "1.5d",
            "1.5 days cannot have a fraction; use a smaller unit".into(),
        ),
        (
            "1.5h30m",
            "only the last component may have a fraction".into(),
        ),
        (
            "0.0000001s",
            "0.0000001 seconds is finer than a microsecond".into(),
        ),
        (
            "P",
            "expected at least one component after \"P\", such as PT5M or P1D".into(),
        ),
        (
            "PT",
            "expected hours, minutes or seconds after \"T\"".into(),
        ),
        ("P5", "the number 5 has no unit designator".into()),
        (
            "P5H",
            "designator 'H' needs \"T\" before the time components, such as PT5H".into(),
        ),
        ("PT5D", "unknown designator 'D'".into()),
        (
            "PT5M1H",
            "designator 'H' is out of order or repeated".into(),
        ),
        (
            "P1.5D",
            "1.5 days cannot have a fraction; use a smaller unit".into(),
        ),
        (
            "PT0.5H1M",
            "only the last component may have a fraction".into(),
        ),
        (
            "PT0.0000001S",
            "0.0000001 seconds is finer than a microsecond".into(),
        ),
        ("P10000Y", "longer than 9999 years".into()),
        ("99999999999999999999999h", "longer than 9999 years".into()),
        ("PT.5S", "expected a digit before the decimal point".into()),
        ("5.m", "expected digits after the decimal point".into()),
    ];
    for (text, reason) in cases {
        let err = Duration::parse(text).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("invalid duration {text:?}: {reason}"),
            "{text}"
        );
    }
}

#[test]
fn duration_arithmetic_follows_the_zone() {
    let berlin = tz("Europe/Berlin");
    let day = Duration::parse("1d").unwrap();
    let t = parse_instant("2025-10-26", Some(&berlin)).unwrap();
    assert_eq!(
        day.add_to(t, &berlin).unwrap().to_string(),
        "2025-10-26T23:00:00Z"
    );
    assert_eq!(
        day.add_to(t, &TimeZone::UTC).unwrap().to_string(),
        "2025-10-26T22:00:00Z"
    );
    let hour = Duration::parse("1h").unwrap();
    assert_eq!(
        hour.add_to(t, &berlin).unwrap().to_string(),
        "2025-10-25T23:00:00Z"
    );
    let back = day
        .sub_from(day.add_to(t, &berlin).unwrap(), &berlin)
        .unwrap();
    assert_eq!(back, t);
    assert!(Duration::from_micros(-1).is_err());
    assert_eq!(Duration::from_micros(1).unwrap().to_string(), "0.000001s");
}

#[test]
fn time_zones() {
    for name in [
        "UTC",
        "utc",
        "Europe/Berlin",
        "europe/berlin",
        "America/Argentina/Buenos_Aires",
        "Etc/GMT+5",
        "Asia/Kolkata",
    ] {
        assert!(parse_time_zone(name).is_ok(), "{name}");
    }
    let why = "not a known IANA time zone name (such as \"Europe/Berlin\" or \"UTC\")";
    for name in [
        "Mars/Olympus",
        "../../etc/passwd",
        "/etc/localtime",
        "CEST x",
        "Berlin",
    ] {
        assert_eq!(
            parse_time_zone(name).unwrap_err().to_string(),
            format!("invalid time zone {name:?}: {why}")
        );
    }
    for (name, near) in [
        ("Europe/Berln", "Europe/Berlin"),
        ("Europe//Berlin", "Europe/Berlin"),
        ("america/new york", "America/New_York"),
        ("Asia/Kolkatta", "Asia/Kolkata"),
    ] {
        assert_eq!(
            parse_time_zone(name).unwrap_err().to_string(),
            format!("invalid time zone {name:?}: not a known IANA time zone name; did you mean {near:?}?")
        );
    }
    assert_eq!(
        parse_time_zone("").unwrap_err().to_string(),
        "invalid time zone \"\": empty; give an IANA name such as \"Europe/Berlin\" or \"UTC\""
    );
}

#[test]
fn long_inputs_are_cut_in_messages() {
    let long = "x".repeat(10_000);
    let err = parse_instant(&long, None).unwrap_err().to_string();
    assert!(err.len() < 300, "{err}");
    assert!(
        err.starts_with(&format!("invalid instant \"{}…\"", "x".repeat(64))),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Fuzzing.

/// The error is one line and quotes (the start of) the input.
fn check_error(what: &str, input: &str, message: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        !message.contains('\n') && !message.contains('\r'),
        "{what}: two lines: {message:?}"
    );
    let shown: String = input.chars().take(64).collect();
    let quoted = format!("{shown:?}");
    let inner = &quoted[1..quoted.len() - 1];
    prop_assert!(
        message.starts_with(&format!("invalid {what} ")) && message.contains(inner),
        "{what}: does not quote {input:?}: {message:?}"
    );
    Ok(())
}

/// Strings that look like the inputs: fragments of instants, durations and
/// intervals glued together, plus arbitrary text.
fn instantish() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "2025", "-", "06", "01", "T", "t", " ", ":", "10", "05", "00", "Z", "z", "+02:00", "-05",
        ".", ",", "123456", "9", "0", "/", "--", "P", "T", "5", "M", "H", "S", "D", "W", "Y", "mo",
        "m", "h", "s", "d", "w", "y", "ms", "1.5", "24", "60", "99", "0000", "9999", "12-31",
        "02-29", "\n", "\u{0}", "é", "ratio", ">=", "gap", "<", "full",
    ]);
    prop_oneof![
        prop::collection::vec(pieces, 0..12).prop_map(|v| v.concat()),
        ".{0,40}",
        "[0-9:TZ./P+-]{0,30}",
    ]
}

fn jsonish() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        instantish().prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just("null".to_string()),
        Just("1".to_string()),
        Just("[1]".to_string()),
        Just("{}".to_string()),
        Just("true".to_string()),
        Just("{\"interval_start\": \"2025-06-01T10:00Z\", \"interval_end\": 5}".to_string()),
        Just("\"landed\"".to_string()),
        Just("\"retracted\"".to_string()),
        Just("\"\"".to_string()),
    ];
    let key = prop::sample::select(vec![
        "asset",
        "start",
        "end",
        "partition_key",
        "id",
        "kind",
        "extra",
        "produced_at",
        "other",
    ]);
    prop_oneof![
        prop::collection::vec((key, value), 0..7).prop_map(|kv| {
            let body: Vec<String> = kv.iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
            format!("{{{}}}", body.join(", "))
        }),
        ".{0,60}",
        "[{}\\[\\]\":, a-z0-9]{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parsers_never_panic_and_errors_are_one_line(text in instantish()) {
        let berlin = tz("Europe/Berlin");
        if let Err(e) = parse_instant(&text, None) {
            check_error("instant", &text, &e.to_string())?;
        }
        if let Err(e) = parse_instant(&text, Some(&berlin)) {
            check_error("instant", &text, &e.to_string())?;
        }
        if let Err(e) = parse_local_instant(&text, &berlin) {
            check_error("instant", &text, &e.to_string())?;
        }
        if let Err(e) = parse_interval(&text, None) {
            check_error("interval", &text, &e.to_string())?;
        }
        if let Err(e) = parse_interval(&text, Some(&berlin)) {
            check_error("interval", &text, &e.to_string())?;
        }
        match Duration::parse(&text) {
            Ok(d) => {
                prop_assert_eq!(Duration::parse(&d.to_string()).unwrap(), d);
                prop_assert_eq!(Duration::parse(&d.to_iso8601()).unwrap(), d);
            }
            Err(e) => check_error("duration", &text, &e.to_string())?,
        }
        match Grid::parse(&text) {
            Ok(g) => prop_assert_eq!(Grid::parse(&g.to_string()).unwrap(), g),
            Err(e) => check_error("grid", &text, &e.to_string())?,
        }
        match Policy::parse(&text) {
            Ok(p) => prop_assert_eq!(Policy::parse(&p.to_string()).unwrap(), p),
            Err(e) => check_error("policy", &text, &e.to_string())?,
        }
        if let Err(e) = parse_time_zone(&text) {
            check_error("time zone", &text, &e.to_string())?;
        }
    }

    #[test]
    fn event_lines_never_panic_and_errors_are_one_line(line in jsonish()) {
        match RawEvent::from_json(&line) {
            Ok(raw) => {
                // Resolving may fail (a discrete key), but not panic.
                if let Err(e) = raw.resolve(None) {
                    prop_assert!(!e.to_string().contains('\n'));
                }
            }
            Err(e) => {
                let m = e.to_string();
                prop_assert!(!m.contains('\n') && !m.contains('\r'), "two lines: {:?}", m);
                // Either the line is quoted, or a field is named.
                prop_assert!(
                    m.starts_with("invalid event ") || m.starts_with("field ") || m.starts_with("fields ") || m.starts_with("missing "),
                    "{:?}", m
                );
            }
        }
    }

    /// Every fraction length and offset form reads as jiff reads the same
    /// civil time at the same offset.
    #[test]
    fn fractions_and_offsets_read_as_jiff_does(
        secs in -2_208_988_800i64..4_102_444_800, // 1900 to 2100
        digits in 1u32..=6,
        fraction in 0u32..1_000_000,
        offset_minutes in -(23 * 60 + 59)..=(23i32 * 60 + 59),
        form in 0u8..3,
    ) {
        let fraction = fraction % 10u32.pow(digits);
        let micros = secs * 1_000_000 + i64::from(fraction * 10u32.pow(6 - digits));
        let want = gapless_core::Instant::from_micros(micros).unwrap();
        let offset = jiff::tz::Offset::from_seconds(offset_minutes * 60).unwrap();
        let civil = offset.to_datetime(want.to_timestamp());
        let (sign, m) = (if offset_minutes < 0 { '-' } else { '+' }, offset_minutes.abs());
        let offset_text = match form {
            0 => format!("{sign}{:02}:{:02}", m / 60, m % 60),
            1 => format!("{sign}{:02}{:02}", m / 60, m % 60),
            _ if offset_minutes == 0 => "Z".to_string(),
            _ => format!("{sign}{:02}:{:02}", m / 60, m % 60),
        };
        let text = format!(
            "{}T{:02}:{:02}:{:02}.{fraction:0width$}{offset_text}",
            civil.date(),
            civil.hour(),
            civil.minute(),
            civil.second(),
            width = digits as usize,
        );
        prop_assert_eq!(parse_instant(&text, None).unwrap(), want, "{}", text);
    }

    #[test]
    fn rfc3339_round_trips(micros in -62_135_596_800_000_000i64..253_402_207_200_000_000) {
        let t = gapless_core::Instant::from_micros(micros).unwrap();
        prop_assert_eq!(parse_instant(&t.to_string(), None).unwrap(), t);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// An abbreviated end means the same as the full one, and every interval
    /// form of the same span gives the same interval.
    #[test]
    fn interval_forms_agree(
        start_s in 946_684_800i64..4_102_444_800, // 2000 to 2100
        len_s in 1i64..(40 * SECONDS_PER_DAY),
    ) {
        let start = gapless_core::Instant::from_micros(start_s * MICROS_PER_SECOND).unwrap();
        let end = gapless_core::Instant::from_micros((start_s + len_s) * MICROS_PER_SECOND).unwrap();
        let (s, e) = (start.to_string(), end.to_string());
        let want = gapless_core::Interval::new(start, end).unwrap();
        let iso_len = format!("PT{len_s}S");
        for text in [
            format!("{s}/{e}"),
            format!("{s}--{e}"),
            format!("{s}/{iso_len}"),
            format!("{iso_len}/{e}"),
            format!("{s}/{}", e.trim_end_matches('Z').get(11..).unwrap()),
        ] {
            // The abbreviated time-only end only works on the same day.
            if text.ends_with(|c: char| c.is_ascii_digit()) && s[..10] != e[..10] {
                continue;
            }
            prop_assert_eq!(parse_interval(&text, None).unwrap(), want, "{}", text);
        }
        // Abbreviated with the date's day (and month) too.
        if s[..7] == e[..7] {
            let text = format!("{s}/{}", &e[8..]);
            prop_assert_eq!(parse_interval(&text, None).unwrap(), want, "{}", text);
        }
        if s[..4] == e[..4] {
            let text = format!("{s}/{}", &e[5..]);
            prop_assert_eq!(parse_interval(&text, None).unwrap(), want, "{}", text);
        }
    }

    /// Adding then subtracting a calendar duration in a zone returns to the
    /// start when no clamping (month ends) or DST adjustment intervenes, and
    /// fixed durations always do.
    #[test]
    fn fixed_durations_invert(
        start_s in 946_684_800i64..4_102_444_800,
        micros in 1i64..(400 * MICROS_PER_DAY),
        zone in prop::sample::select(vec!["UTC", "Europe/Berlin", "Australia/Lord_Howe"]),
    ) {
        let tz = tz(zone);
        let t = gapless_core::Instant::from_micros(start_s * MICROS_PER_SECOND).unwrap();
        let d = Duration::from_micros(micros).unwrap();
        let later = d.add_to(t, &tz).unwrap();
        prop_assert_eq!(later.as_micros() - t.as_micros(), micros);
        prop_assert_eq!(d.sub_from(later, &tz).unwrap(), t);
    }
}

/// The errors of `e`'s `source()` chain, outermost first, `e` included.
fn chain<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Vec<&'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |e| e.source()).collect()
}

/// An error keeps what caused it: the reason under the `invalid …`
/// context, and jiff's own error under a reason that jiff found, while the
/// message stays the one line it always was.
#[test]
fn errors_keep_their_cause() {
    // Past the end of jiff's timestamps once the offset is applied.
    let err = parse_instant("9999-12-31T23:00-23:00", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid instant \"9999-12-31T23:00-23:00\": outside the supported range \
         0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z"
    );
    let causes = chain(&err);
    assert_eq!(causes.len(), 3, "{causes:?}");
    assert_eq!(
        causes[1].to_string(),
        "outside the supported range 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z"
    );
    assert!(causes[2].is::<jiff::Error>(), "{causes:?}");

    let err = parse_time_zone("Europe/Berln").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid time zone \"Europe/Berln\": not a known IANA time zone name; \
         did you mean \"Europe/Berlin\"?"
    );
    assert!(chain(&err).last().unwrap().is::<jiff::Error>(), "{err:?}");

    // A context wraps the error it is put in front of.
    let err = RawEvent::from_json(r#"{"asset": "A", "start": "2025-06-01", "end": "2025-02-30"}"#)
        .unwrap_err();
    let causes = chain(&err);
    assert_eq!(
        causes.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        [
            "field \"end\": invalid instant \"2025-02-30\": day 30 is out of range for February 2025",
            "invalid instant \"2025-02-30\": day 30 is out of range for February 2025",
            "day 30 is out of range for February 2025",
        ]
    );
}
