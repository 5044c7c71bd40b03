//! Parsing the text a user gives a query (flags, query strings), with the
//! error messages the command line and the server share.

use gapless_core::{parse_instant, parse_time_zone, EventKind, Grid, Instant, Interval, Policy};
use jiff::tz::TimeZone;

use crate::LedgerError;

fn bad(name: &str, e: impl std::fmt::Display) -> LedgerError {
    LedgerError::BadInput(format!("{name}: {e}"))
}

/// The instant given as `name` (bare dates are midnight in `tz`).
///
/// # Errors
///
/// `BadInput` naming `name` and the text.
pub fn instant(name: &str, text: &str, tz: Option<&TimeZone>) -> Result<Instant, LedgerError> {
    parse_instant(text, tz).map_err(|e| bad(name, e))
}

/// The range `[start, end)` (bare dates are midnight in `tz`).
///
/// # Errors
///
/// `BadInput` for an unparseable bound or an empty or reversed range.
pub fn range(start: &str, end: &str, tz: Option<&TimeZone>) -> Result<Interval, LedgerError> {
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
pub fn time_zone(name: Option<&str>) -> Result<(TimeZone, String), LedgerError> {
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
pub fn policy(text: Option<&str>) -> Result<Policy, LedgerError> {
    Policy::parse(text.unwrap_or("full")).map_err(|e| bad("policy", e))
}

/// The grid given as `every`.
///
/// # Errors
///
/// `BadInput` for an unknown grid.
pub fn grid(text: &str) -> Result<Grid, LedgerError> {
    Grid::parse(text).map_err(|e| bad("every", e))
}

/// The event kind filter.
///
/// # Errors
///
/// `BadInput` unless `landed` or `retracted`.
pub fn kind(text: &str) -> Result<EventKind, LedgerError> {
    EventKind::parse(text).map_err(|e| bad("kind", e))
}

/// The cursor a previous `events` page returned as `next`.
///
/// # Errors
///
/// `BadInput` for anything no page returned.
pub fn cursor(text: &str) -> Result<i64, LedgerError> {
    text.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
        bad(
            "after",
            format!("invalid cursor {text:?}: use the \"next\" value of the previous page"),
        )
    })
}
