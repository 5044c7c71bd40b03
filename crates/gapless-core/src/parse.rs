//! Parsing instants, ISO 8601 intervals and time zones (SPEC §2).
// STUB: implemented by the parsing work (see issue 2).

use crate::{Instant, Interval, Result};

/// Parse an instant: RFC 3339 with offset, naive date-time (UTC), or a bare
/// date (midnight in `tz`, UTC when `None`).
pub fn parse_instant(text: &str, tz: Option<&jiff::tz::TimeZone>) -> Result<Instant> {
    todo!("{text} {tz:?}")
}

/// Parse an ISO 8601 interval: `start/end`, `start/duration`,
/// `duration/end`, `--` as separator, abbreviated end.
pub fn parse_interval(text: &str, tz: Option<&jiff::tz::TimeZone>) -> Result<Interval> {
    todo!("{text} {tz:?}")
}

/// Look up an IANA time zone by name (`UTC` included).
pub fn parse_time_zone(name: &str) -> Result<jiff::tz::TimeZone> {
    todo!("{name}")
}
