//! ISO 8601 intervals (SPEC §2): `start/end`, `start/duration`,
//! `duration/end` (or `--` for `/`), with abbreviated ends.

use jiff::tz::TimeZone;

use super::instant::{lex_instant, Lexed};
use super::{invalid, shown, OUT_OF_RANGE};
use crate::error::err;
use crate::{Duration, Interval, Result};

/// Parse an ISO 8601 interval: `start/end`, `start/duration`,
/// `duration/end`, with `--` accepted in place of `/`.
///
/// The instants are as in [`parse_instant`] (a bare date is midnight in
/// `tz`). An end may be abbreviated: it inherits the leading components it
/// leaves out, and the offset when it has none, from the start
/// (`2025-06-01T10:00Z/10:05` ends at `2025-06-01T10:05Z`,
/// `2025-06-01/06-03` at `2025-06-03`). A duration with months or years
/// (`P1M`) follows the local calendar of `tz` and is an error without one;
/// days (`P1D`) are local calendar days in `tz`, and 24 hours without one.
///
/// [`parse_instant`]: crate::parse_instant
///
/// # Errors
///
/// When a part is not an instant or a duration, a part is missing, both are
/// durations, or the interval is empty or reversed; the message names the
/// interval and the part.
///
/// # Example
///
/// ```
/// use gapless_core::parse_interval;
///
/// let iv = parse_interval("2025-06-01T10:00:00Z/PT5M", None)?;
/// assert_eq!(iv.to_string(), "[2025-06-01T10:00:00Z, 2025-06-01T10:05:00Z)");
/// assert_eq!(parse_interval("PT5M/2025-06-01T10:05Z", None)?, iv);
/// assert_eq!(parse_interval("2025-06-01T10:00Z--2025-06-01T10:05Z", None)?, iv);
/// assert_eq!(parse_interval("2025-06-01T10:00Z/10:05", None)?, iv);
///
/// let err = parse_interval("2025-06-01T10:05:00Z/", None).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     r#"invalid interval "2025-06-01T10:05:00Z/": the end is missing after "/""#,
/// );
/// # Ok::<(), gapless_core::Error>(())
/// ```
pub fn parse_interval(text: &str, tz: Option<&TimeZone>) -> Result<Interval> {
    IsoInterval::lex(text)
        .and_then(|iv| iv.resolve(None, tz))
        .map_err(|reason| invalid("interval", text, reason))
}

/// Parse an ISO 8601 interval whose naive instants are local to `tz` (see
/// [`parse_local_instant`]); calendar durations follow `tz`.
///
/// [`parse_local_instant`]: crate::parse_local_instant
///
/// # Errors
///
/// As [`parse_interval`].
///
/// # Example
///
/// ```
/// use gapless_core::{parse_local_interval, parse_time_zone};
///
/// let berlin = parse_time_zone("Europe/Berlin")?;
/// // The local day of the spring DST change has 23 hours.
/// let iv = parse_local_interval("2025-03-30/P1D", &berlin)?;
/// assert_eq!(iv.to_string(), "[2025-03-29T23:00:00Z, 2025-03-30T22:00:00Z)");
/// # Ok::<(), gapless_core::Error>(())
/// ```
pub fn parse_local_interval(text: &str, tz: &TimeZone) -> Result<Interval> {
    IsoInterval::lex(text)
        .and_then(|iv| iv.resolve(Some(tz), Some(tz)))
        .map_err(|reason| invalid("interval", text, reason))
}

/// One side of an ISO 8601 interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    At(Lexed),
    Len(Duration),
}

/// An ISO 8601 interval as written: two parts, not both durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IsoInterval {
    start: Part,
    end: Part,
}

impl IsoInterval {
    /// Whether `text` looks like an interval rather than one instant.
    pub(crate) fn looks_like_interval(text: &str) -> bool {
        text.contains('/') || text.contains("--")
    }

    /// Lex `start/end`, `start/duration`, `duration/end` or the same with
    /// `--`; the end inherits what it leaves out from the start.
    pub(crate) fn lex(text: &str) -> Result<IsoInterval> {
        let t = text.trim();
        let (a, b, sep) = if let Some(i) = t.find('/') {
            (&t[..i], &t[i + 1..], "/")
        } else if let Some(i) = t.find("--") {
            (&t[..i], &t[i + 2..], "--")
        } else {
            return Err(err!(
                "expected two parts separated by \"/\" (or \"--\"), such as 2025-06-01T10:00Z/PT5M"
            ));
        };
        if b.contains('/') {
            return Err(err!("more than one \"/\"; an interval has two parts"));
        }
        let (a, b) = (a.trim(), b.trim());
        if a.is_empty() {
            return Err(err!("the start is missing before {sep:?}"));
        }
        if b.is_empty() {
            return Err(err!("the end is missing after {sep:?}"));
        }
        let is_dur = |s: &str| s.starts_with(['P', 'p']);
        let start = if is_dur(a) {
            Part::Len(
                Duration::lex(a).map_err(|r| r.context(format_args!("start {:?}", shown(a))))?,
            )
        } else {
            Part::At(lex_instant(a).map_err(|r| r.context(format_args!("start {:?}", shown(a))))?)
        };
        let end = if is_dur(b) {
            if matches!(start, Part::Len(_)) {
                return Err(err!("both parts are durations; one must be an instant"));
            }
            Part::Len(Duration::lex(b).map_err(|r| r.context(format_args!("end {:?}", shown(b))))?)
        } else {
            let lexed = match start {
                Part::At(s) => lex_end(b, &s),
                Part::Len(_) => lex_instant(b),
            };
            Part::At(lexed.map_err(|r| r.context(format_args!("end {:?}", shown(b))))?)
        };
        Ok(IsoInterval { start, end })
    }

    /// Whether the interval is the same in every time zone.
    pub(crate) fn is_exact(&self) -> bool {
        let exact = |p: &Part| match p {
            Part::At(l) => l.is_exact(),
            Part::Len(d) => d.months() == 0 && d.days() == 0,
        };
        exact(&self.start) && exact(&self.end)
    }

    /// The interval, with naive date-times in `naive_tz` and bare dates and
    /// calendar durations in `date_tz` (UTC when `None`; months and years
    /// need `Some`).
    pub(crate) fn resolve(
        &self,
        naive_tz: Option<&TimeZone>,
        date_tz: Option<&TimeZone>,
    ) -> Result<Interval> {
        let utc = TimeZone::UTC;
        let cal_tz = date_tz.unwrap_or(&utc);
        let check_months = |d: &Duration| {
            if d.months() != 0 && date_tz.is_none() {
                Err(err!(
                    "duration {d} has months or years, which need a time zone"
                ))
            } else {
                Ok(())
            }
        };
        let at =
            |l: &Lexed, which: &str| l.resolve(naive_tz, date_tz).map_err(|r| r.context(which));
        let (start, end) = match (&self.start, &self.end) {
            (Part::At(s), Part::At(e)) => (at(s, "start")?, at(e, "end")?),
            (Part::At(s), Part::Len(d)) => {
                check_months(d)?;
                let s = at(s, "start")?;
                let e = d.add_to(s, cal_tz).map_err(|cause| {
                    err!("the end {s} + {d} is {OUT_OF_RANGE}").with_source(cause)
                })?;
                (s, e)
            }
            (Part::Len(d), Part::At(e)) => {
                check_months(d)?;
                let e = at(e, "end")?;
                let s = d.sub_from(e, cal_tz).map_err(|cause| {
                    err!("the start {e} - {d} is {OUT_OF_RANGE}").with_source(cause)
                })?;
                (s, e)
            }
            (Part::Len(_), Part::Len(_)) => unreachable!("rejected by lex"),
        };
        Interval::new(start, end)
    }
}

/// Lex the end of `start/end`: a complete instant, or an abbreviated one
/// that inherits the leading components it leaves out from the start (ISO
/// 8601 §5.5.4.2); an end without an offset takes the start's offset.
fn lex_end(text: &str, start: &Lexed) -> Result<Lexed> {
    let full = text.len() >= 5
        && text.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && text.as_bytes()[4] == b'-';
    let mut end = if full {
        lex_instant(text)?
    } else {
        let (date_part, time_part) = match text.find(['T', 't']) {
            Some(i) => (&text[..i], Some(&text[i + 1..])),
            None if text.contains(':') => ("", Some(text)),
            None => (text, None),
        };
        let fields: Vec<&str> = if date_part.is_empty() {
            Vec::new()
        } else {
            date_part.split('-').collect()
        };
        let (month, day) = match fields.as_slice() {
            [] => (start.date.month(), start.date.day()),
            [d] => (start.date.month(), parse_field(d, "day")?),
            [m, d] => (parse_field(m, "month")?, parse_field(d, "day")?),
            _ => {
                return Err(err!(
                "expected an instant or an end abbreviated from the start, such as 10:05 or 06-02"
            ))
            }
        };
        let mut rebuilt = format!("{:04}-{:02}-{:02}", start.date.year(), month, day);
        if let Some(tp) = time_part {
            rebuilt.push('T');
            rebuilt.push_str(tp);
        }
        lex_instant(&rebuilt)?
    };
    if end.offset.is_none() && end.time.is_some() {
        end.offset = start.offset;
    }
    Ok(end)
}

/// A two-digit month or day of an abbreviated end.
fn parse_field(s: &str, name: &str) -> Result<i8> {
    if s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()) {
        Ok(s.parse().expect("two digits"))
    } else {
        Err(err!(
            "expected two digits of the {name}, found {:?}",
            shown(s)
        ))
    }
}
