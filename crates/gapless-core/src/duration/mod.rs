//! Durations: the type, its calendar arithmetic and its canonical text. The
//! text forms it is parsed from, ISO 8601 (`PT5M`, `PT0.5S`, `P1D`, `P1M`)
//! and short forms (`5m`, `1h`, `1d`, `1mo`), are lexed in `lex.rs`.

use std::fmt;
use std::str::FromStr;

use crate::error::err;
use crate::parse::invalid;
use crate::units::{MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND};
use crate::{Error, Instant, Result};

mod lex;

/// Longest accepted: 9999 years of months, days or microseconds.
const MAX_MONTHS: i64 = 9_999 * 12;
const MAX_DAYS: i64 = 3_652_059;
const MAX_MICROS: i64 = MAX_DAYS * MICROS_PER_DAY;

/// A positive length of time: fixed (`PT5M`, `90s`) or with calendar units
/// (`P1M`, `1d`) that follow the local calendar of a time zone.
///
/// A duration keeps three independent amounts: months (a year is 12),
/// days (a week is 7) and microseconds (hours, minutes, seconds and
/// fractions). Where a time zone applies ([`Duration::add_to`]) months are
/// calendar months (the day is clamped: January 31 + 1 month is the last of
/// February), days are local calendar days (a Berlin day is 23 or 25 hours
/// long on DST days) and the rest is elapsed time. Where none applies
/// ([`Duration::fixed_micros`]) a day is 24 hours and months have no length.
///
/// Accepted text:
///
/// - ISO 8601 `P[nY][nM][nW][nD][T[nH][nM][nS]]`, e.g. `PT5M`, `PT0.5S`,
///   `P1D`, `P1Y2M`, `PT1H30M`; a fraction (`.` or `,`) only on the last
///   component and only on hours, minutes or seconds.
/// - short forms: one or more `<number><unit>` from largest to smallest unit,
///   e.g. `5m`, `1h30m`, `1.5h`, `30s`, `250ms`, `1d`, `1w`, `1mo`, `1y`;
///   units `y`, `mo`, `w`, `d`, `h`, `m`, `s`, `ms`, `us` (and their long
///   names such as `min`, `hours`, `days`).
///
/// Zero and negative durations, lengths finer than a microsecond and lengths
/// beyond 9999 years are errors. `Display` prints the canonical short form
/// (`1h30m`, `0.5s`, `1mo`), which parses back to an equal duration.
///
/// # Example
///
/// ```
/// use gapless_core::Duration;
///
/// let d = Duration::parse("PT1H30M")?;
/// assert_eq!(d, Duration::parse("90m")?);
/// assert_eq!(d.to_string(), "1h30m");
/// assert_eq!(d.fixed_micros(), Some(5_400_000_000));
/// assert_eq!(Duration::parse("P1M")?.fixed_micros(), None);
/// assert_eq!(Duration::parse("P1D")?.fixed_micros(), Some(86_400_000_000));
/// # Ok::<(), gapless_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Duration {
    months: i64,
    days: i64,
    micros: i64,
}

impl Duration {
    /// Parse ISO 8601 (`PT5M`) or short forms (`5m`).
    ///
    /// # Errors
    ///
    /// When the text is neither form, is zero or negative, is finer than a
    /// microsecond or longer than 9999 years, e.g. `invalid duration "5x":
    /// unknown unit "x"`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::Duration;
    ///
    /// assert_eq!(Duration::parse("PT0.5S")?.fixed_micros(), Some(500_000));
    /// assert_eq!(Duration::parse("1w")?, Duration::parse("P7D")?);
    /// assert!(Duration::parse("PT0S").is_err());
    /// assert!(Duration::parse("-5m").is_err());
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Duration> {
        Duration::lex(text).map_err(|reason| invalid("duration", text, reason))
    }

    /// A fixed duration of `micros` microseconds.
    ///
    /// # Errors
    ///
    /// When `micros` is not positive or is longer than 9999 years.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::Duration;
    ///
    /// assert_eq!(Duration::from_micros(300_000_000)?.to_string(), "5m");
    /// assert!(Duration::from_micros(0).is_err());
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn from_micros(micros: i64) -> Result<Duration> {
        Duration::build(0, 0, micros)
            .map_err(|reason| reason.context(format_args!("invalid duration of {micros} µs")))
    }

    /// The length in microseconds when it has no months or years; a day
    /// counts as 24 hours.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::Duration;
    ///
    /// assert_eq!(Duration::parse("5m")?.fixed_micros(), Some(300_000_000));
    /// assert_eq!(Duration::parse("1y")?.fixed_micros(), None);
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn fixed_micros(&self) -> Option<i64> {
        (self.months == 0).then(|| self.days * MICROS_PER_DAY + self.micros)
    }

    /// Whether it has months or years, whose length depends on the calendar
    /// and which therefore need a time zone.
    pub fn has_months(&self) -> bool {
        self.months != 0
    }

    /// The months (a year counts 12).
    pub fn months(&self) -> i64 {
        self.months
    }

    /// The days (a week counts 7).
    pub fn days(&self) -> i64 {
        self.days
    }

    /// `t + self`: months and days follow the local calendar of `tz`, the
    /// rest is elapsed time.
    ///
    /// A local time that the calendar step lands on in a DST gap moves
    /// forward by the gap; in a fold it is the earlier instant.
    ///
    /// # Errors
    ///
    /// When the result is after 9999-12-30T22:00:00Z, the last instant
    /// that time zone arithmetic supports.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{parse_instant, parse_time_zone, Duration};
    ///
    /// let berlin = parse_time_zone("Europe/Berlin")?;
    /// let t = parse_instant("2025-03-30", Some(&berlin))?;
    /// let day = Duration::parse("P1D")?;
    /// assert_eq!(day.add_to(t, &berlin)?.to_string(), "2025-03-30T22:00:00Z");
    /// let hours = Duration::parse("PT24H")?;
    /// assert_eq!(hours.add_to(t, &berlin)?.to_string(), "2025-03-30T23:00:00Z");
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn add_to(&self, t: Instant, tz: &jiff::tz::TimeZone) -> Result<Instant> {
        self.shift(t, tz, 1).ok_or_else(|| {
            Error::new(format!(
                "{t} + {self} is after 9999-12-30T22:00:00Z, the end of the supported range"
            ))
        })
    }

    /// `t - self`, the inverse step of [`Duration::add_to`].
    ///
    /// # Errors
    ///
    /// When the result is before 0001-01-01T00:00:00Z.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{parse_instant, Duration};
    ///
    /// let t = parse_instant("2025-03-31T00:00:00Z", None)?;
    /// let month = Duration::parse("1mo")?;
    /// let utc = jiff::tz::TimeZone::UTC;
    /// assert_eq!(month.sub_from(t, &utc)?.to_string(), "2025-02-28T00:00:00Z");
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn sub_from(&self, t: Instant, tz: &jiff::tz::TimeZone) -> Result<Instant> {
        self.shift(t, tz, -1).ok_or_else(|| {
            Error::new(format!(
                "{t} - {self} is before 0001-01-01T00:00:00Z, the start of the supported range"
            ))
        })
    }

    fn shift(&self, t: Instant, tz: &jiff::tz::TimeZone, sign: i64) -> Option<Instant> {
        if self.months == 0 && self.days == 0 {
            return t
                .checked_add_micros(sign * self.micros)
                .filter(|r| r.as_micros() <= crate::parse::LAST_MICROS);
        }
        let span = jiff::Span::new()
            .try_months(sign * self.months)
            .ok()?
            .try_days(sign * self.days)
            .ok()?
            .try_microseconds(sign * self.micros)
            .ok()?;
        let zdt = jiff::Timestamp::from_microsecond(t.as_micros())
            .ok()?
            .to_zoned_datetime(tz.clone());
        let ts = zdt.checked_add(span).ok()?.timestamp();
        Instant::from_timestamp(ts).ok()
    }

    /// The ISO 8601 text, e.g. `PT1H30M`, `P1Y2M`, `P7D`, `PT0.5S`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::Duration;
    ///
    /// assert_eq!(Duration::parse("1h30m")?.to_iso8601(), "PT1H30M");
    /// assert_eq!(Duration::parse("1w")?.to_iso8601(), "P7D");
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn to_iso8601(&self) -> String {
        let mut s = String::from("P");
        let (y, mo) = (self.months / 12, self.months % 12);
        if y != 0 {
            s.push_str(&format!("{y}Y"));
        }
        if mo != 0 {
            s.push_str(&format!("{mo}M"));
        }
        if self.days != 0 {
            s.push_str(&format!("{}D", self.days));
        }
        if self.micros != 0 {
            s.push('T');
            let (h, m, secs) = split_time(self.micros);
            if h != 0 {
                s.push_str(&format!("{h}H"));
            }
            if m != 0 {
                s.push_str(&format!("{m}M"));
            }
            if secs != 0 {
                s.push_str(&format!("{}S", fmt_seconds(secs)));
            }
        }
        s
    }

    fn build(months: i64, days: i64, micros: i64) -> Result<Duration> {
        if months < 0 || days < 0 || micros < 0 {
            return Err(err!("negative durations are not allowed"));
        }
        if months == 0 && days == 0 && micros == 0 {
            return Err(err!("a duration must be longer than zero"));
        }
        if months > MAX_MONTHS || days > MAX_DAYS || micros > MAX_MICROS {
            return Err(err!("longer than 9999 years"));
        }
        Ok(Duration {
            months,
            days,
            micros,
        })
    }
}

impl fmt::Display for Duration {
    /// The canonical short form: `5m`, `1h30m`, `0.5s`, `1w2d`, `1y1mo`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, mo) = (self.months / 12, self.months % 12);
        let (w, d) = (self.days / 7, self.days % 7);
        let (h, m, s) = split_time(self.micros);
        for (n, unit) in [(y, "y"), (mo, "mo"), (w, "w"), (d, "d"), (h, "h"), (m, "m")] {
            if n != 0 {
                write!(f, "{n}{unit}")?;
            }
        }
        if s != 0 {
            write!(f, "{}s", fmt_seconds(s))?;
        }
        Ok(())
    }
}

impl FromStr for Duration {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Duration::parse(s)
    }
}

impl serde::Serialize for Duration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Reads the text that `Display` writes (any form [`Duration::parse`] accepts).
impl<'de> serde::Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        crate::parse::deserialize_text(d, Duration::parse)
    }
}

/// Hours, minutes and the remaining microseconds of seconds.
fn split_time(micros: i64) -> (i64, i64, i64) {
    (
        micros / MICROS_PER_HOUR,
        micros % MICROS_PER_HOUR / MICROS_PER_MINUTE,
        micros % MICROS_PER_MINUTE,
    )
}

/// Seconds from microseconds, with a fraction only when needed: `30`, `0.5`.
fn fmt_seconds(micros: i64) -> String {
    let (whole, frac) = (micros / MICROS_PER_SECOND, micros % MICROS_PER_SECOND);
    if frac == 0 {
        whole.to_string()
    } else {
        let digits = format!("{frac:06}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
}
