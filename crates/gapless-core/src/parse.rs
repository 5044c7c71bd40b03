//! Parsing instants, ISO 8601 intervals and time zones (SPEC §2).
//!
//! Every error is one line of the form `invalid {what} "{text}": {reason}`,
//! with the text quoted (and cut after 64 characters) and a human reason.

use std::borrow::Cow;

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{AmbiguousOffset, Offset, TimeZone};

use crate::{Duration, Error, Instant, Interval, Result};

/// The last microsecond that parsing and time zone arithmetic produce:
/// 9999-12-30T22:00:00Z, the end of jiff's timestamps (so that every UTC
/// offset keeps the local date within the year 9999).
pub(crate) const LAST_MICROS: i64 = crate::Instant::MAX.as_micros();

/// At most this many characters of an input are quoted in an error message.
const SHOWN_CHARS: usize = 64;

/// The text as quoted in an error message: cut after [`SHOWN_CHARS`]
/// characters with `…` appended.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
    }
}

/// `invalid {what} "{text}": {reason}` with the text cut to a sane length.
pub(crate) fn invalid(what: &str, text: &str, reason: impl std::fmt::Display) -> Error {
    Error::invalid(what, &shown(text), reason)
}

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
    if plausible {
        if let Ok(tz) = TimeZone::get(trimmed) {
            return Ok(tz);
        }
    }
    let reason = match suggest_time_zone(trimmed) {
        Some(near) => format!("not a known IANA time zone name; did you mean {near:?}?"),
        None => "not a known IANA time zone name (such as \"Europe/Berlin\" or \"UTC\")".into(),
    };
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

// ---------------------------------------------------------------------------
// Lexing instants.

/// An instant as written, before the time zone rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lexed {
    date: Date,
    /// The time of day, `None` for a bare date.
    time: Option<Time>,
    /// The UTC offset in seconds, `None` when naive.
    offset: Option<i32>,
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
fn two_digits(c: &mut Cursor<'_>, name: &str) -> Result<i8, String> {
    let d = c.digits();
    if d.len() != 2 {
        if d.is_empty() {
            return Err(format!(
                "expected two digits of the {name}, found {}",
                c.found()
            ));
        }
        return Err(format!("the {name} must have two digits, found {d:?}"));
    }
    Ok(d.parse::<i8>().expect("two ASCII digits"))
}

pub(crate) fn lex_instant(text: &str) -> Result<Lexed, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty; expected an instant such as 2025-06-01T10:05:00Z".into());
    }
    if t.starts_with(['P', 'p']) {
        return Err("this is a duration, not an instant".into());
    }
    let mut c = Cursor::new(t);
    let year_digits = c.digits();
    if year_digits.is_empty() {
        return Err(format!(
            "expected a date such as 2025-06-01 at the start, found {}",
            c.found()
        ));
    }
    if year_digits.len() != 4 {
        if year_digits.len() == 8 || year_digits.len() > 4 && c.at_end() {
            return Err("expected a date with dashes such as 2025-06-01".into());
        }
        return Err(format!(
            "the year must have four digits (0001 to 9999), found {year_digits:?}"
        ));
    }
    let year: i16 = year_digits.parse().expect("four ASCII digits");
    if year == 0 {
        return Err("year 0000 is out of range (0001 to 9999)".into());
    }
    if !c.eat(b'-') {
        return Err(format!(
            "expected \"-\" after the year, found {}",
            c.found()
        ));
    }
    let month = two_digits(&mut c, "month")?;
    if !(1..=12).contains(&month) {
        return Err(format!("month {month} is out of range (01 to 12)"));
    }
    if !c.eat(b'-') {
        return Err(format!(
            "expected \"-\" after the month, found {}",
            c.found()
        ));
    }
    let day = two_digits(&mut c, "day")?;
    let first = Date::new(year, month, 1).expect("valid year and month");
    if day < 1 || day > first.days_in_month() {
        return Err(format!(
            "day {day} is out of range for {} {year:04}",
            MONTHS[(month - 1) as usize]
        ));
    }
    let date = Date::new(year, month, day).expect("checked above");
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
            return Err(
                "a bare date cannot have an offset; give a time such as 2025-06-01T00:00Z".into(),
            )
        }
        _ => {
            return Err(format!(
                "expected \"T\" and a time after the date, found {}",
                c.found()
            ))
        }
    }
    let time = lex_time(&mut c)?;
    let offset = lex_offset(&mut c)?;
    if !c.at_end() {
        return Err(format!("unexpected text {:?} at the end", shown(c.rest())));
    }
    Ok(Lexed {
        date,
        time: Some(time),
        offset,
    })
}

/// `HH:MM[:SS[.fraction]]`.
fn lex_time(c: &mut Cursor<'_>) -> Result<Time, String> {
    let hour = two_digits(c, "hour")?;
    if hour > 23 {
        return Err(format!("hour {hour} is out of range (00 to 23)"));
    }
    if !c.eat(b':') {
        return Err(format!(
            "expected \":\" and minutes after the hour, found {}",
            c.found()
        ));
    }
    let minute = two_digits(c, "minute")?;
    if minute > 59 {
        return Err(format!("minute {minute} is out of range (00 to 59)"));
    }
    let mut second = 0;
    let mut nanos = 0i32;
    if c.eat(b':') {
        second = two_digits(c, "second")?;
        if second == 60 {
            return Err("leap second 60 is not supported".into());
        }
        if second > 59 {
            return Err(format!("second {second} is out of range (00 to 59)"));
        }
        if c.eat(b'.') || c.eat(b',') {
            let frac = c.digits();
            if frac.is_empty() {
                return Err("expected digits after the decimal point".into());
            }
            let (micro_part, finer) = frac.split_at(frac.len().min(6));
            if finer.bytes().any(|b| b != b'0') {
                return Err(format!(
                    "fraction .{frac} is finer than a microsecond (at most 6 digits)"
                ));
            }
            let micros: i32 = format!("{micro_part:0<6}").parse().expect("six digits");
            nanos = micros * 1_000;
        }
    } else if c.peek() == Some(b'.') || c.peek() == Some(b',') {
        return Err("a fraction needs seconds, such as 10:05:00.5".into());
    }
    Ok(Time::new(hour, minute, second, nanos).expect("checked ranges"))
}

/// `Z`, `±HH:MM`, `±HHMM`, `±HH` or nothing.
fn lex_offset(c: &mut Cursor<'_>) -> Result<Option<i32>, String> {
    let sign = match c.peek() {
        None => return Ok(None),
        Some(b'Z' | b'z') => {
            c.pos += 1;
            return Ok(Some(0));
        }
        Some(b'+') => 1,
        Some(b'-') => -1,
        Some(_) => {
            return Err(format!(
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
            let h: i8 = digits.parse().expect("two digits");
            let m = if c.eat(b':') {
                two_digits(c, "offset minute")?
            } else {
                0
            };
            (h, m)
        }
        // ±HHMM
        4 => (
            digits[..2].parse().expect("two digits"),
            digits[2..].parse().expect("two digits"),
        ),
        0 => {
            return Err(format!(
                "expected the offset hours after the sign, found {}",
                c.found()
            ))
        }
        _ => {
            return Err(format!(
                "expected an offset such as +02:00, +0200 or +02, found {:?}",
                shown(digits)
            ))
        }
    };
    if hours > 23 {
        return Err(format!("offset hour {hours} is out of range (00 to 23)"));
    }
    if minutes > 59 {
        return Err(format!(
            "offset minute {minutes} is out of range (00 to 59)"
        ));
    }
    Ok(Some(
        sign * (i32::from(hours) * 3600 + i32::from(minutes) * 60),
    ))
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
    ) -> Result<Instant, String> {
        let dt = self.datetime();
        let ts = match (self.offset, self.time) {
            (Some(secs), _) => Offset::from_seconds(secs)
                .expect("offset within ±23:59")
                .to_timestamp(dt)
                .map_err(|_| out_of_range())?,
            (None, Some(_)) => match naive_tz {
                None => Offset::UTC.to_timestamp(dt).map_err(|_| out_of_range())?,
                Some(tz) => local_timestamp(dt, tz)?,
            },
            (None, None) => match date_tz {
                Some(tz) => start_of_day(self.date, tz)?,
                None => start_of_day(self.date, &TimeZone::UTC)?,
            },
        };
        Instant::from_timestamp(ts).map_err(|_| out_of_range())
    }
}

fn out_of_range() -> String {
    "outside the supported range 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z".to_string()
}

/// A wall-clock time in `tz`: the earlier of a fold, forward across a gap.
fn local_timestamp(dt: DateTime, tz: &TimeZone) -> Result<jiff::Timestamp, String> {
    tz.to_ambiguous_timestamp(dt)
        .compatible()
        .map_err(|_| out_of_range())
}

/// The first instant of the local date `date` in `tz`.
///
/// Midnight when it exists (the first one in a fold); when midnight falls in
/// a DST gap, the end of the gap (the transition itself).
pub(crate) fn start_of_day(date: Date, tz: &TimeZone) -> Result<jiff::Timestamp, String> {
    let midnight = date.to_datetime(Time::midnight());
    let amb = tz.to_ambiguous_timestamp(midnight);
    match amb.offset() {
        AmbiguousOffset::Gap { before, .. } => {
            // Midnight read with the offset before the gap lies after the
            // transition; the transition itself is the first instant whose
            // local time is past the gap.
            let late = before.to_timestamp(midnight).map_err(|_| out_of_range())?;
            let transition = tz
                .preceding(
                    late.checked_add(jiff::SignedDuration::from_nanos(1))
                        .map_err(|_| out_of_range())?,
                )
                .next()
                .map(|t| t.timestamp());
            match transition {
                Some(t) if tz.to_datetime(t).date() == date => Ok(t),
                _ => amb.compatible().map_err(|_| out_of_range()),
            }
        }
        _ => amb.compatible().map_err(|_| out_of_range()),
    }
}

// ---------------------------------------------------------------------------
// ISO 8601 intervals.

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
    pub(crate) fn lex(text: &str) -> Result<IsoInterval, String> {
        let t = text.trim();
        let (a, b, sep) = if let Some(i) = t.find('/') {
            (&t[..i], &t[i + 1..], "/")
        } else if let Some(i) = t.find("--") {
            (&t[..i], &t[i + 2..], "--")
        } else {
            return Err(
                "expected two parts separated by \"/\" (or \"--\"), such as 2025-06-01T10:00Z/PT5M"
                    .into(),
            );
        };
        if b.contains('/') {
            return Err("more than one \"/\"; an interval has two parts".into());
        }
        let (a, b) = (a.trim(), b.trim());
        if a.is_empty() {
            return Err(format!("the start is missing before {sep:?}"));
        }
        if b.is_empty() {
            return Err(format!("the end is missing after {sep:?}"));
        }
        let is_dur = |s: &str| s.starts_with(['P', 'p']);
        let start = if is_dur(a) {
            Part::Len(Duration::lex(a).map_err(|r| format!("start {:?}: {r}", shown(a)))?)
        } else {
            Part::At(lex_instant(a).map_err(|r| format!("start {:?}: {r}", shown(a)))?)
        };
        let end = if is_dur(b) {
            if matches!(start, Part::Len(_)) {
                return Err("both parts are durations; one must be an instant".into());
            }
            Part::Len(Duration::lex(b).map_err(|r| format!("end {:?}: {r}", shown(b)))?)
        } else {
            let lexed = match start {
                Part::At(s) => lex_end(b, &s),
                Part::Len(_) => lex_instant(b),
            };
            Part::At(lexed.map_err(|r| format!("end {:?}: {r}", shown(b)))?)
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
    ) -> Result<Interval, String> {
        let utc = TimeZone::UTC;
        let cal_tz = date_tz.unwrap_or(&utc);
        let check_months = |d: &Duration| {
            if d.months() != 0 && date_tz.is_none() {
                Err(format!(
                    "duration {d} has months or years, which need a time zone"
                ))
            } else {
                Ok(())
            }
        };
        let at = |l: &Lexed, which: &str| {
            l.resolve(naive_tz, date_tz)
                .map_err(|r| format!("{which}: {r}"))
        };
        let (start, end) = match (&self.start, &self.end) {
            (Part::At(s), Part::At(e)) => (at(s, "start")?, at(e, "end")?),
            (Part::At(s), Part::Len(d)) => {
                check_months(d)?;
                let s = at(s, "start")?;
                let e = d
                    .add_to(s, cal_tz)
                    .map_err(|_| format!("the end {s} + {d} is {}", out_of_range()))?;
                (s, e)
            }
            (Part::Len(d), Part::At(e)) => {
                check_months(d)?;
                let e = at(e, "end")?;
                let s = d
                    .sub_from(e, cal_tz)
                    .map_err(|_| format!("the start {e} - {d} is {}", out_of_range()))?;
                (s, e)
            }
            (Part::Len(_), Part::Len(_)) => unreachable!("rejected by lex"),
        };
        Interval::new(start, end).map_err(|e| e.to_string())
    }
}

/// Lex the end of `start/end`: a complete instant, or an abbreviated one
/// that inherits the leading components it leaves out from the start (ISO
/// 8601 §5.5.4.2); an end without an offset takes the start's offset.
fn lex_end(text: &str, start: &Lexed) -> Result<Lexed, String> {
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
            _ => return Err(
                "expected an instant or an end abbreviated from the start, such as 10:05 or 06-02"
                    .into(),
            ),
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
fn parse_field(s: &str, name: &str) -> Result<i8, String> {
    if s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()) {
        Ok(s.parse().expect("two digits"))
    } else {
        Err(format!(
            "expected two digits of the {name}, found {:?}",
            shown(s)
        ))
    }
}
