//! Time zones: looking up an IANA name (with a suggestion for a near miss)
//! and the local-time rules instants are resolved with (folds, gaps, the
//! first instant of a local date).

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{AmbiguousOffset, TimeZone};

use super::{invalid, out_of_range};
use crate::error::err;
use crate::Result;

/// Look up an IANA time zone by name (`UTC` included; case does not matter).
///
/// # Errors
///
/// When no time zone of that name is known.
///
/// # Example
///
/// ```
/// use gapless_core::parse_time_zone;
///
/// assert_eq!(parse_time_zone("Europe/Berlin")?.iana_name(), Some("Europe/Berlin"));
/// assert!(parse_time_zone("UTC").is_ok());
/// let err = parse_time_zone("Mars/Olympus").unwrap_err();
/// assert!(err.to_string().starts_with(r#"invalid time zone "Mars/Olympus": "#));
/// # Ok::<(), gapless_core::Error>(())
/// ```
pub fn parse_time_zone(name: &str) -> Result<TimeZone> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(invalid(
            "time zone",
            name,
            "empty; give an IANA name such as \"Europe/Berlin\" or \"UTC\"",
        ));
    }
    if trimmed.eq_ignore_ascii_case("utc") || trimmed.eq_ignore_ascii_case("z") {
        return Ok(TimeZone::UTC);
    }
    let plausible = trimmed
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/_-+".contains(&b))
        && !trimmed.starts_with('/')
        && !trimmed.contains("//");
    let lookup = match plausible.then(|| TimeZone::get(trimmed)) {
        Some(Ok(tz)) => return Ok(tz),
        Some(Err(e)) => Some(e),
        None => None,
    };
    let mut reason = match suggest_time_zone(trimmed) {
        Some(near) => err!("not a known IANA time zone name; did you mean {near:?}?"),
        None => err!("not a known IANA time zone name (such as \"Europe/Berlin\" or \"UTC\")"),
    };
    if let Some(e) = lookup {
        reason = reason.with_source(e);
    }
    Err(invalid("time zone", name, reason))
}

/// The known zone name closest to `name` (edit distance at most 2, ignoring
/// case), if any.
fn suggest_time_zone(name: &str) -> Option<String> {
    if name.len() > 64 {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    jiff::tz::db()
        .available()
        .map(|n| n.as_str().to_string())
        .filter(|n| n.len().abs_diff(lower.len()) <= 2)
        .map(|n| (edit_distance(&lower, &n.to_ascii_lowercase()), n))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| n)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A wall-clock time in `tz`: the earlier of a fold, forward across a gap.
pub(super) fn local_timestamp(dt: DateTime, tz: &TimeZone) -> Result<jiff::Timestamp> {
    tz.to_ambiguous_timestamp(dt)
        .compatible()
        .map_err(out_of_range)
}

/// The first instant of the local date `date` in `tz`.
///
/// Midnight when it exists (the first one in a fold); when midnight falls in
/// a DST gap, the end of the gap (the transition itself).
pub(crate) fn start_of_day(date: Date, tz: &TimeZone) -> Result<jiff::Timestamp> {
    let midnight = date.to_datetime(Time::midnight());
    let amb = tz.to_ambiguous_timestamp(midnight);
    match amb.offset() {
        AmbiguousOffset::Gap { before, .. } => {
            // Midnight read with the offset before the gap lies after the
            // transition; the transition itself is the first instant whose
            // local time is past the gap.
            let late = before.to_timestamp(midnight).map_err(out_of_range)?;
            let transition = tz
                .preceding(
                    late.checked_add(jiff::SignedDuration::from_nanos(1))
                        .map_err(out_of_range)?,
                )
                .next()
                .map(|t| t.timestamp());
            match transition {
                Some(t) if tz.to_datetime(t).date() == date => Ok(t),
                _ => amb.compatible().map_err(out_of_range),
            }
        }
        _ => amb.compatible().map_err(out_of_range),
    }
}
