//! Instants on the UTC time line and half-open intervals of them.

use std::fmt;

use crate::error::{Error, Result};
use crate::units::NANOS_PER_MICROSECOND;

mod text;

use text::Text;

/// A point on the UTC time line at microsecond precision, in the years 0001
/// to 9999 (the range and precision of PostgreSQL `timestamptz`).
///
/// The last instant is 9999-12-30T22:00:00Z rather than the year's last
/// microsecond: it is the last instant that every time zone can still show
/// as a date in 9999 (jiff's limit), so formatting and calendar arithmetic
/// never fail on an instant that exists.
///
/// # Properties
///
/// Instants are totally ordered and cheap to copy: internally a count of
/// microseconds since 1970-01-01T00:00:00Z. `Display` prints RFC 3339 in UTC
/// with `Z`, with a fraction only when it is not zero.
///
/// # Example
///
/// ```
/// use gapless_core::Instant;
///
/// let t = Instant::from_micros(1_748_772_000_500_000).unwrap();
/// assert_eq!(t.to_string(), "2025-06-01T10:00:00.5Z");
/// assert!(Instant::from_micros(i64::MAX).is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(i64);

impl Instant {
    /// 0001-01-01T00:00:00Z.
    pub const MIN: Instant = Instant(-62_135_596_800_000_000);
    /// 9999-12-30T22:00:00Z (see the type's documentation).
    pub const MAX: Instant = Instant(253_402_207_200_000_000);

    /// The instant `micros` microseconds after 1970-01-01T00:00:00Z.
    ///
    /// # Errors
    ///
    /// When the instant falls outside the years 0001 to 9999.
    pub fn from_micros(micros: i64) -> Result<Instant> {
        if (Self::MIN.0..=Self::MAX.0).contains(&micros) {
            Ok(Instant(micros))
        } else {
            Err(Error::new(format!(
                "instant {micros} µs from the Unix epoch is outside 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z"
            )))
        }
    }

    /// Microseconds since 1970-01-01T00:00:00Z.
    pub const fn as_micros(self) -> i64 {
        self.0
    }

    /// The instant of a jiff timestamp.
    ///
    /// # Errors
    ///
    /// When the timestamp is outside the years 0001 to 9999 or is finer than
    /// a microsecond.
    pub fn from_timestamp(ts: jiff::Timestamp) -> Result<Instant> {
        if i64::from(ts.subsec_nanosecond()) % NANOS_PER_MICROSECOND != 0 {
            return Err(Error::new(format!(
                "instant {ts} is finer than a microsecond"
            )));
        }
        Instant::from_micros(ts.as_microsecond()).map_err(|_| {
            Error::new(format!(
                "instant {ts} is outside 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z"
            ))
        })
    }

    /// This instant as a jiff timestamp.
    pub fn to_timestamp(self) -> jiff::Timestamp {
        jiff::Timestamp::from_microsecond(self.0).expect("years 0001-9999 fit a jiff timestamp")
    }

    /// This instant moved by `micros`, or `None` when that leaves 0001–9999.
    pub fn checked_add_micros(self, micros: i64) -> Option<Instant> {
        self.0
            .checked_add(micros)
            .and_then(|m| Instant::from_micros(m).ok())
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A precision asks jiff for a fixed number of fractional digits;
        // everything else is the text `Serialize` writes.
        if f.precision().is_some() {
            return fmt::Display::fmt(&self.to_timestamp(), f);
        }
        f.write_str(Text::of(*self).as_str())
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Written as one borrowed string from the stack: no `fmt` machinery, no
/// allocation.
impl serde::Serialize for Instant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(Text::of(*self).as_str())
    }
}

/// Reads the RFC 3339 form that `Display` writes (any offset is accepted),
/// from the input's own bytes when it can lend them.
impl<'de> serde::Deserialize<'de> for Instant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_str(InstantVisitor)
    }
}

/// The visitor of an instant's text: `visit_str` sees both a borrowed
/// string and a deserializer's scratch copy, so no string is ever owned.
struct InstantVisitor;

impl serde::de::Visitor<'_> for InstantVisitor {
    type Value = Instant;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> std::result::Result<Instant, E> {
        if let Some(t) = text::parse_canonical(text) {
            return Ok(t);
        }
        let ts = PARSER
            .parse_timestamp(text)
            .map_err(|e| E::custom(format!("invalid instant {text:?}: {e}")))?;
        Instant::from_timestamp(ts).map_err(E::custom)
    }
}

/// jiff's RFC 3339 / RFC 9557 parser, as `Timestamp::from_str` uses it:
/// what is not the canonical form is read, or refused, by it.
static PARSER: jiff::fmt::temporal::DateTimeParser = jiff::fmt::temporal::DateTimeParser::new();

/// A half-open interval `[start, end)` of instants, never empty or reversed.
///
/// # Example
///
/// ```
/// use gapless_core::{Instant, Interval};
///
/// let a = Instant::from_micros(0).unwrap();
/// let b = Instant::from_micros(300_000_000).unwrap();
/// let iv = Interval::new(a, b).unwrap();
/// assert_eq!(iv.len_micros(), 300_000_000);
/// assert!(iv.contains(a) && !iv.contains(b));
/// assert!(Interval::new(b, a).is_err());
/// assert!(Interval::new(a, a).is_err());
/// ```
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "IntervalFields")]
pub struct Interval {
    start: Instant,
    end: Instant,
}

impl Interval {
    /// The interval `[start, end)`.
    ///
    /// # Errors
    ///
    /// When `end` is not after `start` (empty or reversed).
    pub fn new(start: Instant, end: Instant) -> Result<Interval> {
        if start < end {
            Ok(Interval { start, end })
        } else if start == end {
            Err(Error::new(format!(
                "empty interval: start {start} equals end {end}"
            )))
        } else {
            Err(Error::new(format!(
                "reversed interval: end {end} is before start {start}"
            )))
        }
    }

    /// The interval of raw microsecond bounds.
    ///
    /// # Errors
    ///
    /// When a bound is outside 0001–9999 or the interval is empty or reversed.
    pub fn from_micros(start: i64, end: i64) -> Result<Interval> {
        Interval::new(Instant::from_micros(start)?, Instant::from_micros(end)?)
    }

    /// The first instant in the interval.
    pub const fn start(self) -> Instant {
        self.start
    }

    /// The first instant after the interval.
    pub const fn end(self) -> Instant {
        self.end
    }

    /// The length in microseconds, always positive.
    pub const fn len_micros(self) -> i64 {
        self.end.0 - self.start.0
    }

    /// Whether `t` is in `[start, end)`.
    pub fn contains(self, t: Instant) -> bool {
        self.start <= t && t < self.end
    }

    /// Whether the two intervals share at least one instant.
    pub fn overlaps(self, other: Interval) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// The instants in both, if any.
    pub fn intersect(self, other: Interval) -> Option<Interval> {
        Interval::new(self.start.max(other.start), self.end.min(other.end)).ok()
    }
}

/// The unchecked form `Interval` is read from, so that deserializing checks.
#[derive(serde::Deserialize)]
struct IntervalFields {
    start: Instant,
    end: Instant,
}

impl TryFrom<IntervalFields> for Interval {
    type Error = Error;
    fn try_from(f: IntervalFields) -> Result<Interval> {
        Interval::new(f.start, f.end)
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {})", self.start, self.end)
    }
}

impl fmt::Debug for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
