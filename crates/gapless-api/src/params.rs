//! Parsing the text of a request (flags, query strings, bodies) into typed
//! values, with the error messages the command line and the server share.
//! The embedded ledger's `Ask` implementation is its one caller for the
//! questions; `emit` uses it to read its instants in `--tz`.

use gapless_core::{
    parse_local_instant, parse_time_zone, EventKind, Grid, Instant, Interval, Policy,
};
use jiff::tz::TimeZone;

use crate::Error;

/// The page of `events` and `segments` when none is asked for.
pub const DEFAULT_PAGE: usize = 1_000;

/// The largest page of `events` and `segments`: large enough for a backfill to page
/// quickly, small enough that one answer stays a few megabytes.
pub const MAX_PAGE: usize = 10_000;

/// The page of `assets` and `rules` when none is asked for: a screen of
/// rows.
pub const DEFAULT_LIST_PAGE: usize = 100;

/// The largest page of `assets` and `rules`.
pub const MAX_LIST_PAGE: usize = 1_000;

/// The most parts one `POST /v1/buckets` answer holds, its items times
/// their parts: a screen of history bars, a few megabytes.
pub const MAX_BUCKETS_PARTS: usize = 200_000;

/// The most windows one `windows` answer holds: a year of hours, or a
/// month of five-minute windows, fits; more is refused naming the count,
/// so that no request can make an answer without bound.
pub const MAX_WINDOWS: usize = 10_000;

/// The most parts one `buckets` answer holds: more than a screen has
/// pixels across, and an answer under a megabyte.
pub const MAX_BUCKETS: usize = 10_000;

/// Parts of a `buckets` answer when not told: a small bar.
pub const DEFAULT_BUCKETS: usize = 100;

/// The most gaps one `missing` list holds; the rest are counted in
/// `missing_count`. Enough for every gap of a month of five-minute slices.
pub const MAX_GAPS: usize = 10_000;

/// The most gaps the `missing` lists of one `windows` (or `rule windows`)
/// answer hold together, in window order (each window's `missing_count`
/// stays exact): [`MAX_WINDOWS`] windows of [`MAX_GAPS`] gaps each would
/// be 10^8 gaps, gigabytes; this many are under 10 MB, ten gaps a window
/// of the largest answer.
pub const MAX_WINDOWS_GAPS: usize = 100_000;

/// The most assets one `POST /v1/coverage` asks about: each is one read of
/// its coverage, so the answer's cost grows with them.
pub const MAX_ASSETS: usize = 1_000;

/// The format of a window's partition key when none is given: Airflow's
/// temporal partition mappers' default.
pub use gapless_core::DEFAULT_KEY_FORMAT;

/// The longest a single HTTP request waits (`firings?wait=`, `wait`):
/// below the server's 30 s request time limit and the idle timeouts of
/// common proxies; a client waiting longer asks again.
pub const MAX_HTTP_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// How long `gapless wait` waits when not told.
pub const DEFAULT_WAIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

fn bad(name: &str, e: impl std::fmt::Display) -> Error {
    Error::bad_input(format!("{name}: {e}"))
}

/// The instant given as `name`: RFC 3339 with an offset as written; a
/// naive date-time or a bare date (its midnight) as wall-clock time in `tz`
/// (a time in a DST gap moves forward by the gap, one in a fold is the
/// earlier instant).
///
/// # Errors
///
/// `BadInput` naming `name` and the text.
pub fn instant(name: &str, text: &str, tz: &TimeZone) -> Result<Instant, Error> {
    parse_local_instant(text, tz).map_err(|e| bad(name, e))
}

/// The range `[start, end)`, its naive bounds read in `tz` (see
/// [`instant`]).
///
/// # Errors
///
/// `BadInput` for an unparseable bound or an empty or reversed range.
pub fn range(start: &str, end: &str, tz: &TimeZone) -> Result<Interval, Error> {
    let s = instant("start", start, tz)?;
    let e = instant("end", end, tz)?;
    Interval::new(s, e).map_err(|e| bad("range", e))
}

/// The time zone named `name`, UTC when none is given. Returns the zone and
/// the name to echo.
///
/// # Errors
///
/// `BadInput` for an unknown zone.
pub fn time_zone(name: Option<&str>) -> Result<(TimeZone, String), Error> {
    let name = name.unwrap_or("UTC");
    Ok((
        parse_time_zone(name).map_err(|e| bad("tz", e))?,
        name.to_string(),
    ))
}

/// The policy given, `full` when none is.
///
/// # Errors
///
/// `BadInput` for an unknown policy.
pub fn policy(text: Option<&str>) -> Result<Policy, Error> {
    Policy::parse(text.unwrap_or("full")).map_err(|e| bad("policy", e))
}

/// The policy given as text (`policy`) or by one of its parts
/// (`min_ratio`, `max_gap`, which need no quoting in a shell or a URL);
/// `full` when none is given.
///
/// # Errors
///
/// `BadInput` for more than one of them, or a bad one.
pub fn policy_of(
    policy: Option<&str>,
    min_ratio: Option<&str>,
    max_gap: Option<&str>,
) -> Result<Policy, Error> {
    match (policy, min_ratio, max_gap) {
        (p, None, None) => self::policy(p),
        (None, Some(r), None) => {
            Policy::parse(&format!("ratio>={}", r.trim())).map_err(|e| bad("min_ratio", e))
        }
        (None, None, Some(d)) => {
            Policy::parse(&format!("gap<{}", d.trim())).map_err(|e| bad("max_gap", e))
        }
        _ => Err(Error::bad_input(
            "policy: give one of policy, min_ratio and max_gap, not several",
        )),
    }
}

/// The strftime format of partition keys, checked as
/// [`gapless_core::validate_key_format`] checks it: at most
/// [`gapless_core::MAX_KEY_FORMAT_BYTES`], writing keys of at most
/// [`gapless_core::MAX_KEY_BYTES`].
///
/// # Errors
///
/// `BadInput` naming `key_format` for a format jiff cannot print, one too
/// long or writing keys too long.
pub fn key_format(text: Option<&str>) -> Result<String, Error> {
    let format = text.unwrap_or(DEFAULT_KEY_FORMAT);
    gapless_core::validate_key_format(format).map_err(|e| bad("key_format", e))?;
    Ok(format.to_string())
}

/// The grid given as `every`.
///
/// # Errors
///
/// `BadInput` for an unknown grid.
pub fn grid(text: &str) -> Result<Grid, Error> {
    Grid::parse(text).map_err(|e| bad("every", e))
}

/// The event kind filter.
///
/// # Errors
///
/// `BadInput` unless `landed` or `retracted`.
pub fn kind(text: &str) -> Result<EventKind, Error> {
    EventKind::parse(text).map_err(|e| bad("kind", e))
}

/// The page size of `events` or `segments`, if given (its range is checked by
/// the ledger).
///
/// # Errors
///
/// `BadInput` for text that is not a whole number.
pub fn limit(text: Option<&str>) -> Result<Option<usize>, Error> {
    text.map(|t| {
        t.trim().parse::<usize>().map_err(|_| {
            bad(
                "limit",
                format!("{t:?} is not a number: give 1 to {}", MAX_PAGE),
            )
        })
    })
    .transpose()
}

/// The range of `events`: both bounds or neither.
///
/// # Errors
///
/// `BadInput` for a bound given alone or a bad range.
pub fn optional_range(
    start: Option<&str>,
    end: Option<&str>,
    tz: &TimeZone,
) -> Result<Option<Interval>, Error> {
    match (start, end) {
        (Some(s), Some(e)) => range(s, e, tz).map(Some),
        (None, None) => Ok(None),
        _ => Err(Error::bad_input(
            "range: give both start and end, or neither",
        )),
    }
}

/// The cursor a previous `events` page returned as `next`.
///
/// # Errors
///
/// `BadInput` for anything no page returned.
pub fn cursor(text: &str) -> Result<i64, Error> {
    text.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
        bad(
            "after",
            format!("invalid cursor {text:?}: use the \"next\" value of the previous page"),
        )
    })
}

/// The cursor a previous `segments` page returned as `next`: the instant
/// the page ended at, inside `range`.
///
/// # Errors
///
/// `BadInput` for text that is not an instant or one outside `range`.
pub fn segment_cursor(text: &str, range: Interval) -> Result<Instant, Error> {
    let t = instant("after", text, &TimeZone::UTC)?;
    if t < range.start() || t >= range.end() {
        return Err(bad(
            "after",
            format!(
                "cursor {text:?} is outside the range [{}, {}): use the \"next\" value of the \
                 previous page of the same question",
                range.start(),
                range.end()
            ),
        ));
    }
    Ok(t)
}

/// A wait or timeout (`30s`, `PT1M`, `2h`): a fixed, non-negative length;
/// zero (`0s`, `PT0S`) is no wait at all (a `wait` of zero is a `check`).
///
/// # Errors
///
/// `BadInput` naming `name` for anything else.
pub fn wait(name: &str, text: &str) -> Result<std::time::Duration, Error> {
    let d = match gapless_core::Duration::parse(text) {
        Ok(d) => d,
        // A duration is never zero (a window, a key span); a wait may be.
        Err(e) if e.message().ends_with("a duration must be longer than zero") => {
            return Ok(std::time::Duration::ZERO)
        }
        Err(e) => return Err(bad(name, e)),
    };
    match d.fixed_micros() {
        Some(us) if us >= 0 => Ok(std::time::Duration::from_micros(us as u64)),
        Some(_) => Err(bad(name, format!("{text:?} is negative"))),
        None => Err(bad(
            name,
            format!("{text:?} has months or years, which have no fixed length"),
        )),
    }
}

/// A rule's deadline: a fixed, non-negative duration.
///
/// # Errors
///
/// `BadInput` for anything else.
pub fn deadline(text: &str) -> Result<gapless_core::Duration, Error> {
    wait("deadline", text)?;
    gapless_core::Duration::parse(text).map_err(|e| bad("deadline", e))
}

/// How many parts `buckets` cuts a range into: 1 to [`MAX_BUCKETS`],
/// [`DEFAULT_BUCKETS`] when not given.
///
/// # Errors
///
/// `BadInput` for anything else.
pub fn bucket_count(text: Option<&str>) -> Result<usize, Error> {
    let Some(t) = text else {
        return Ok(DEFAULT_BUCKETS);
    };
    match t.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_BUCKETS).contains(&n) => Ok(n),
        Ok(n) => Err(bad(
            "buckets",
            format!("{n} is out of range: give 1 to {MAX_BUCKETS}"),
        )),
        Err(_) => Err(bad(
            "buckets",
            format!("{t:?} is not a number: give 1 to {MAX_BUCKETS}"),
        )),
    }
}

/// A page size (`limit`): 1 to [`MAX_PAGE`], [`DEFAULT_PAGE`] when not
/// given.
///
/// # Errors
///
/// `BadInput` for anything else.
pub fn page_limit(text: Option<&str>) -> Result<usize, Error> {
    match limit(text)? {
        None => Ok(DEFAULT_PAGE),
        Some(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
        Some(n) => Err(bad(
            "limit",
            format!("{n} is out of range: give 1 to {MAX_PAGE}"),
        )),
    }
}

/// The page size of `assets` or `rules`: 1 to [`MAX_LIST_PAGE`],
/// [`DEFAULT_LIST_PAGE`] when not given.
///
/// # Errors
///
/// `BadInput` naming `limit` and the range for anything else.
pub fn list_limit(text: Option<&str>) -> Result<usize, Error> {
    let Some(t) = text else {
        return Ok(DEFAULT_LIST_PAGE);
    };
    match t.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_LIST_PAGE).contains(&n) => Ok(n),
        Ok(n) => Err(bad(
            "limit",
            format!("{n} is out of range: give 1 to {MAX_LIST_PAGE}"),
        )),
        Err(_) => Err(bad(
            "limit",
            format!("{t:?} is not a number: give 1 to {MAX_LIST_PAGE}"),
        )),
    }
}

const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The cursor of a page of `assets` or `rules` that ended at `name`: the
/// name's bytes in unpadded base64url, so that any name travels in a query
/// string or on a command line as it is.
pub fn name_cursor(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(BASE64URL[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// The name a cursor of [`name_cursor`] ended at.
///
/// # Errors
///
/// `BadInput` naming `after` for text no page returned.
pub fn name_after(text: &str) -> Result<String, Error> {
    let invalid = || {
        bad(
            "after",
            format!("invalid cursor {text:?}: use the \"next\" value of the previous page"),
        )
    };
    let digits = text
        .bytes()
        .map(|c| BASE64URL.iter().position(|&d| d == c).map(|d| d as u32))
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(invalid)?;
    if digits.is_empty() || digits.len() % 4 == 1 {
        return Err(invalid());
    }
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | d << (18 - 6 * i));
        let whole = chunk.len() - 1;
        // Bits past the last whole byte must be zero: one encoding a name.
        if n & ((1 << (24 - 8 * whole)) - 1) != 0 {
            return Err(invalid());
        }
        for i in 0..whole {
            bytes.push((n >> (16 - 8 * i)) as u8);
        }
    }
    // No name holds a control character (SPEC §1), so no page ended at one.
    String::from_utf8(bytes)
        .ok()
        .filter(|name| !name.chars().any(char::is_control))
        .ok_or_else(invalid)
}

#[cfg(test)]
mod cursor_tests {
    use super::*;

    #[test]
    fn name_cursors_round_trip_and_refuse_what_no_page_returned() {
        for name in [
            "a",
            "ab",
            "abc",
            "abcd",
            "s3://lake/ünïcode?x=1&y=%2F",
            "with space",
            "\u{10FFFF}",
            "日本",
        ] {
            let c = name_cursor(name);
            assert!(c
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
            assert_eq!(name_after(&c).unwrap(), name, "{c}");
        }
        assert_eq!(name_cursor("abc"), "YWJj");
        assert_eq!(name_cursor("ab"), "YWI");
        // "YQA" is "a" and a NUL: a name no page holds.
        for bad in ["", "a", "YW=", "YWJ", "YW!j", "_w", "YQA"] {
            let e = name_after(bad).unwrap_err().to_string();
            assert!(e.starts_with("after: invalid cursor"), "{bad}: {e}");
        }
    }

    #[test]
    fn list_limits_are_one_to_a_thousand() {
        assert_eq!(list_limit(None).unwrap(), 100);
        assert_eq!(list_limit(Some("1000")).unwrap(), 1000);
        for t in ["0", "1001", "x", "-1"] {
            let e = list_limit(Some(t)).unwrap_err().to_string();
            assert!(
                e.starts_with("limit: ") && e.ends_with("give 1 to 1000"),
                "{e}"
            );
        }
    }
}
