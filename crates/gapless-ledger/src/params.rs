//! Parsing the text a user gives a query (flags, query strings), with the
//! error messages the command line and the server share.

use gapless_api::Error;
use gapless_core::{parse_instant, parse_time_zone, EventKind, Grid, Instant, Interval, Policy};
use jiff::tz::TimeZone;

fn bad(name: &str, e: impl std::fmt::Display) -> Error {
    Error::bad_input(format!("{name}: {e}"))
}

/// The instant given as `name` (bare dates are midnight in `tz`).
///
/// # Errors
///
/// `BadInput` naming `name` and the text.
pub fn instant(name: &str, text: &str, tz: Option<&TimeZone>) -> Result<Instant, Error> {
    parse_instant(text, tz).map_err(|e| bad(name, e))
}

/// The range `[start, end)` (bare dates are midnight in `tz`).
///
/// # Errors
///
/// `BadInput` for an unparseable bound or an empty or reversed range.
pub fn range(start: &str, end: &str, tz: Option<&TimeZone>) -> Result<Interval, Error> {
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

/// The page size of `events`, if given (its range is checked by
/// [`crate::Ledger::events`]).
///
/// # Errors
///
/// `BadInput` for text that is not a whole number.
pub fn limit(text: Option<&str>) -> Result<Option<usize>, Error> {
    text.map(|t| {
        t.trim().parse::<usize>().map_err(|_| {
            bad(
                "limit",
                format!("{t:?} is not a number: give 1 to {}", crate::MAX_PAGE),
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
    tz: Option<&TimeZone>,
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
