//! Instants as written (SPEC §2): lexing RFC 3339, naive date-times and bare
//! dates, then resolving them to an [`Instant`] with the time zone rules.

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{Offset, TimeZone};

use super::zone::{local_timestamp, start_of_day};
use super::{invalid, out_of_range, shown};
use crate::error::err;
use crate::units::{NANOS_PER_MICROSECOND, SECONDS_PER_HOUR, SECONDS_PER_MINUTE};
use crate::{Instant, Result};

/// Parse an instant: RFC 3339 with an offset, a naive date-time (taken as
/// UTC), or a bare date (midnight in `tz`, UTC when `None`).
///
/// Accepted forms, with `T`, `t` or a space between date and time (or `-`
/// before `HH:MM`, as Dagster's hourly keys `2025-06-01-10:00` have), seconds
/// optional and a fraction of up to microseconds (`.` or `,`):
///
/// | text | instant |
/// |---|---|
/// | `2025-06-01T10:05:00Z` | as given |
/// | `2025-06-01T12:05:00.25+02:00` | `2025-06-01T10:05:00.25Z` |
/// | `2025-06-01T10:05` | `2025-06-01T10:05:00Z` (naive: UTC) |
/// | `2025-06-01` | midnight UTC, or the first instant of that date in `tz` |
///
/// Years must be 0001 to 9999 (also after applying the offset), and digits
/// finer than a microsecond must be zero.
///
/// # Errors
///
/// When the text is none of these forms or names a date or time that does
/// not exist, e.g. `invalid instant "2025-02-30T00:00:00Z": day 30 is out of
/// range for February 2025`.
///
/// # Example
///
/// ```
/// use gapless_core::{parse_instant, parse_time_zone};
///
/// let t = parse_instant("2025-06-01T12:05:00+02:00", None)?;
/// assert_eq!(t.to_string(), "2025-06-01T10:05:00Z");
/// assert_eq!(parse_instant("2025-06-01T10:05", None)?, t);
///
/// let berlin = parse_time_zone("Europe/Berlin")?;
/// let midnight = parse_instant("2025-06-01", Some(&berlin))?;
/// assert_eq!(midnight.to_string(), "2025-05-31T22:00:00Z");
///
/// let err = parse_instant("2025-02-30T00:00:00Z", None).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     r#"invalid instant "2025-02-30T00:00:00Z": day 30 is out of range for February 2025"#,
/// );
/// # Ok::<(), gapless_core::Error>(())
/// ```
pub fn parse_instant(text: &str, tz: Option<&TimeZone>) -> Result<Instant> {
    lex_instant(text)
        .and_then(|l| l.resolve(None, tz))
        .map_err(|reason| invalid("instant", text, reason))
}

/// Parse an instant whose naive forms are local to `tz`: like
/// [`parse_instant`], but a naive date-time is read as a wall-clock time in
/// `tz` too (as discrete partition keys of an asset with a declared time
/// zone are).
///
/// A wall-clock time that occurs twice (a DST fold) is the earlier instant;
/// one that does not exist (a DST gap) is moved forward by the length of the
/// gap (jiff's "compatible" rule, as RFC 5545 and most schedulers do).
///
/// # Errors
///
/// As [`parse_instant`].
///
/// # Example
///
/// ```
/// use gapless_core::{parse_local_instant, parse_time_zone};
///
/// let ny = parse_time_zone("America/New_York")?;
/// let t = parse_local_instant("2025-06-01T10:00", &ny)?;
/// assert_eq!(t.to_string(), "2025-06-01T14:00:00Z");
/// // An explicit offset always wins.
/// let t = parse_local_instant("2025-06-01T10:00Z", &ny)?;
/// assert_eq!(t.to_string(), "2025-06-01T10:00:00Z");
/// # Ok::<(), gapless_core::Error>(())
/// ```
pub fn parse_local_instant(text: &str, tz: &TimeZone) -> Result<Instant> {
    lex_instant(text)
        .and_then(|l| l.resolve(Some(tz), Some(tz)))
        .map_err(|reason| invalid("instant", text, reason))
}

/// An instant as written, before the time zone rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lexed {
    pub(super) date: Date,
    /// The time of day, `None` for a bare date.
    pub(super) time: Option<Time>,
    /// The UTC offset in seconds, `None` when naive.
    pub(super) offset: Option<i32>,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// A small cursor over ASCII text.
struct Cursor<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor {
            s: text.as_bytes(),
            text,
            pos: 0,
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }
    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }
    fn rest(&self) -> &'a str {
        // `pos` only ever advances over ASCII bytes, so it is a char boundary.
        &self.text[self.pos..]
    }
    /// A run of ASCII digits.
    fn digits(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }
    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    /// Describes what comes next, for "expected X, found Y" reasons.
    fn found(&self) -> String {
        match self.rest().chars().next() {
            None => "the end of the text".to_string(),
            Some(c) if c.is_whitespace() => "a space".to_string(),
            Some(_) => format!("{:?}", self.rest().chars().take(12).collect::<String>()),
        }
    }
}

/// Two digits as a number, for months, days, hours, minutes and seconds.
fn two_digits(c: &mut Cursor<'_>, name: &str) -> Result<i8> {
    let d = c.digits();
    if d.len() != 2 {
        if d.is_empty() {
            return Err(err!(
                "expected two digits of the {name}, found {}",
                c.found()
            ));
        }
        return Err(err!("the {name} must have two digits, found {d:?}"));
    }
    Ok(number(d) as i8)
}

/// The value of a short run of ASCII digits (at most 9): the lexer's
/// numbers, whose digits and lengths it has already checked, so without
/// `str::parse`'s checks for a sign and overflow.
fn number(digits: &str) -> i32 {
    debug_assert!(digits.len() <= 9 && digits.bytes().all(|b| b.is_ascii_digit()));
    digits.bytes().fold(0, |n, b| n * 10 + i32::from(b - b'0'))
}

pub(crate) fn lex_instant(text: &str) -> Result<Lexed> {
    let t = text.trim();
    if t.is_empty() {
        return Err(err!(
            "empty; expected an instant such as 2025-06-01T10:05:00Z"
        ));
    }
    if t.starts_with(['P', 'p']) {
        return Err(err!("this is a duration, not an instant"));
    }
    let mut c = Cursor::new(t);
    let year_digits = c.digits();
    if year_digits.is_empty() {
        return Err(err!(
            "expected a date such as 2025-06-01 at the start, found {}",
            c.found()
        ));
    }
    if year_digits.len() != 4 {
        if year_digits.len() == 8 || year_digits.len() > 4 && c.at_end() {
            return Err(err!("expected a date with dashes such as 2025-06-01"));
        }
        return Err(err!(
            "the year must have four digits (0001 to 9999), found {year_digits:?}"
        ));
    }
    let year = number(year_digits) as i16;
    if year == 0 {
        return Err(err!("year 0000 is out of range (0001 to 9999)"));
    }
    if !c.eat(b'-') {
        return Err(err!("expected \"-\" after the year, found {}", c.found()));
    }
    let month = two_digits(&mut c, "month")?;
    if !(1..=12).contains(&month) {
        return Err(err!("month {month} is out of range (01 to 12)"));
    }
    if !c.eat(b'-') {
        return Err(err!("expected \"-\" after the month, found {}", c.found()));
    }
    let day = two_digits(&mut c, "day")?;
    // The year and month are in range: only the day can make it fail.
    let Ok(date) = Date::new(year, month, day) else {
        return Err(err!(
            "day {day} is out of range for {} {year:04}",
            MONTHS[(month - 1) as usize]
        ));
    };
    if c.at_end() {
        return Ok(Lexed {
            date,
            time: None,
            offset: None,
        });
    }
    match c.peek() {
        Some(b'T' | b't' | b' ') => c.pos += 1,
        // Dagster's hourly keys: 2025-06-01-10:00.
        Some(b'-')
            if c.s.len() >= c.pos + 4
                && c.s[c.pos + 1..c.pos + 3].iter().all(u8::is_ascii_digit)
                && c.s[c.pos + 3] == b':' =>
        {
            c.pos += 1
        }
        Some(b'Z' | b'z' | b'+' | b'-') => {
            return Err(err!(
                "a bare date cannot have an offset; give a time such as 2025-06-01T00:00Z"
            ))
        }
        _ => {
            return Err(err!(
                "expected \"T\" and a time after the date, found {}",
                c.found()
            ))
        }
    }
    let time = lex_time(&mut c)?;
    let offset = lex_offset(&mut c)?;
    if !c.at_end() {
        return Err(err!("unexpected text {:?} at the end", shown(c.rest())));
    }
    Ok(Lexed {
        date,
        time: Some(time),
        offset,
    })
}

/// `HH:MM[:SS[.fraction]]`.
fn lex_time(c: &mut Cursor<'_>) -> Result<Time> {
    let hour = two_digits(c, "hour")?;
    if hour > 23 {
        return Err(err!("hour {hour} is out of range (00 to 23)"));
    }
    if !c.eat(b':') {
        return Err(err!(
            "expected \":\" and minutes after the hour, found {}",
            c.found()
        ));
    }
    let minute = two_digits(c, "minute")?;
    if minute > 59 {
        return Err(err!("minute {minute} is out of range (00 to 59)"));
    }
    let mut second = 0;
    let mut nanos = 0i32;
    if c.eat(b':') {
        second = two_digits(c, "second")?;
        if second == 60 {
            return Err(err!("leap second 60 is not supported"));
        }
        if second > 59 {
            return Err(err!("second {second} is out of range (00 to 59)"));
        }
        if c.eat(b'.') || c.eat(b',') {
            let frac = c.digits();
            if frac.is_empty() {
                return Err(err!("expected digits after the decimal point"));
            }
            let (micro_part, finer) = frac.split_at(frac.len().min(6));
            if finer.bytes().any(|b| b != b'0') {
                return Err(err!(
                    "fraction .{frac} is finer than a microsecond (at most 6 digits)"
                ));
            }
            // `.25` is 250,000 µs: the digits given, then zeros to six.
            let micros = (micro_part.len()..6).fold(number(micro_part), |n, _| n * 10);
            nanos = micros * NANOS_PER_MICROSECOND as i32;
        }
    } else if c.peek() == Some(b'.') || c.peek() == Some(b',') {
        return Err(err!("a fraction needs seconds, such as 10:05:00.5"));
    }
    Ok(Time::new(hour, minute, second, nanos).expect("checked ranges"))
}

/// `Z`, `±HH:MM`, `±HHMM`, `±HH` or nothing.
fn lex_offset(c: &mut Cursor<'_>) -> Result<Option<i32>> {
    let sign = match c.peek() {
        None => return Ok(None),
        Some(b'Z' | b'z') => {
            c.pos += 1;
            return Ok(Some(0));
        }
        Some(b'+') => 1,
        Some(b'-') => -1,
        Some(_) => {
            return Err(err!(
                "expected an offset such as Z or +02:00 after the time, found {}",
                c.found()
            ))
        }
    };
    c.pos += 1;
    let digits = c.digits();
    let (hours, minutes) = match digits.len() {
        // ±HH, ±HH:MM
        2 => {
            let h = number(digits) as i8;
            let m = if c.eat(b':') {
                two_digits(c, "offset minute")?
            } else {
                0
            };
            (h, m)
        }
        // ±HHMM
        4 => (number(&digits[..2]) as i8, number(&digits[2..]) as i8),
        0 => {
            return Err(err!(
                "expected the offset hours after the sign, found {}",
                c.found()
            ))
        }
        _ => {
            return Err(err!(
                "expected an offset such as +02:00, +0200 or +02, found {:?}",
                shown(digits)
            ))
        }
    };
    if hours > 23 {
        return Err(err!("offset hour {hours} is out of range (00 to 23)"));
    }
    if minutes > 59 {
        return Err(err!("offset minute {minutes} is out of range (00 to 59)"));
    }
    let seconds = i64::from(hours) * SECONDS_PER_HOUR + i64::from(minutes) * SECONDS_PER_MINUTE;
    Ok(Some(sign * i32::try_from(seconds).expect("at most 23:59")))
}

impl Lexed {
    /// The civil date-time (midnight for a bare date).
    fn datetime(&self) -> DateTime {
        self.date.to_datetime(self.time.unwrap_or(Time::midnight()))
    }

    /// Whether this instant depends on a time zone.
    pub(crate) fn is_exact(&self) -> bool {
        self.offset.is_some()
    }

    /// The instant: an offset wins; a naive date-time is in `naive_tz` (UTC
    /// when `None`); a bare date is the first instant of the date in
    /// `date_tz` (UTC when `None`).
    pub(crate) fn resolve(
        &self,
        naive_tz: Option<&TimeZone>,
        date_tz: Option<&TimeZone>,
    ) -> Result<Instant> {
        let dt = self.datetime();
        let ts = match (self.offset, self.time) {
            (Some(secs), _) => Offset::from_seconds(secs)
                .expect("offset within ±23:59")
                .to_timestamp(dt)
                .map_err(out_of_range)?,
            (None, Some(_)) => match naive_tz {
                None => Offset::UTC.to_timestamp(dt).map_err(out_of_range)?,
                Some(tz) => local_timestamp(dt, tz)?,
            },
            (None, None) => match date_tz {
                Some(tz) => start_of_day(self.date, tz)?,
                None => start_of_day(self.date, &TimeZone::UTC)?,
            },
        };
        Instant::from_timestamp(ts).map_err(out_of_range)
    }
}
