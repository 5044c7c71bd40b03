//! Calendar windows in an IANA time zone.
//!
//! # Semantics
//!
//! A grid is the set of boundary instants a cron schedule would fire at in
//! local time (SPEC §1, `grid`); the windows are the spans between
//! consecutive boundaries.
//!
//! - Sub-day grids (`Nm`, `Nh`) are wall-clock times: every instant whose
//!   local time is a grid time is a boundary. A grid time that falls in a DST
//!   gap does not occur and is skipped; one that falls in a fold occurs twice
//!   and is a boundary both times.
//! - Day-or-longer grids (`Nd`, `Nw`, `Nmo`, `Ny`) are local dates: the
//!   boundary of a qualifying date is the first instant of that date
//!   (midnight, or the end of the DST gap when midnight is skipped).
//!
//! # Computation
//!
//! Nothing is scanned minute by minute. Between two transitions of the time
//! zone the UTC offset is constant, so sub-day boundaries are an arithmetic
//! progression of local microseconds shifted by that offset; the iterator
//! walks them and only looks up the zone at transitions. Day-or-longer
//! boundaries step through civil dates and convert each once.

use std::fmt;
use std::str::FromStr;

use jiff::civil::{Date, ISOWeekDate, Weekday};
use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::error::err;
use crate::parse::{invalid, start_of_day};
use crate::units::{MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND};
use crate::{Error, Instant, Interval, Result};

/// The unit of a [`Grid`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GridUnit {
    /// `Nm`: local minutes that are multiples of N (`*/N * * * *`).
    Minute,
    /// `Nh`: minute 0 of local hours that are multiples of N (`0 */N * * *`).
    Hour,
    /// `Nd`: local midnight of days 1, 1+N, 1+2N… of each month
    /// (`0 0 */N * *`).
    Day,
    /// `Nw`: Monday of ISO weeks 1, 1+N, 1+2N… of each ISO year.
    Week,
    /// `Nmo`: the first of months 1, 1+N, 1+2N… (N divides 12).
    Month,
    /// `Ny`: 1 January of years divisible by N.
    Year,
}

impl GridUnit {
    /// The suffix: `m`, `h`, `d`, `w`, `mo` or `y`.
    pub fn suffix(self) -> &'static str {
        match self {
            GridUnit::Minute => "m",
            GridUnit::Hour => "h",
            GridUnit::Day => "d",
            GridUnit::Week => "w",
            GridUnit::Month => "mo",
            GridUnit::Year => "y",
        }
    }
}

/// A calendar grid such as `5m`, `1h`, `1d`, `1w`, `3mo`, `1y`, read in an
/// IANA time zone.
///
/// | grid | boundaries (local time) | N |
/// |---|---|---|
/// | `Nm` | every time whose minute is a multiple of N | 1–59 |
/// | `Nh` | minute 0 of every hour that is a multiple of N | 1–23 |
/// | `Nd` | midnight of days 1, 1+N, 1+2N… of each month | 1–31 |
/// | `Nw` | Monday of ISO weeks 1, 1+N, 1+2N… of each ISO year | 1–53 |
/// | `Nmo` | the first of months 1, 1+N, 1+2N… | 1, 2, 3, 4, 6, 12 |
/// | `Ny` | 1 January of years divisible by N | 1–9999 |
///
/// As with cron, a grid that does not divide its cycle restarts with it:
/// `5h` ends each day with a 4-hour window (20:00–24:00), `7m` each hour
/// with a 4-minute one, `2d` a 31-day month with a 1-day window, and `2w` an
/// ISO year of 53 weeks with a 1-week window. A sub-day boundary in a DST
/// gap is skipped, one in a fold is a boundary both times; day-or-longer
/// windows start at the first instant of their local date. See the module
/// documentation for details.
///
/// # Example
///
/// ```
/// use gapless_core::{parse_interval, parse_time_zone, Grid};
///
/// let berlin = parse_time_zone("Europe/Berlin")?;
/// let range = parse_interval("2025-03-30T12:00Z/PT1M", None)?;
/// let days = Grid::parse("1d")?.windows(range, &berlin);
/// // The day of the spring DST change has 23 hours.
/// assert_eq!(days.len(), 1);
/// assert_eq!(days[0].to_string(), "[2025-03-29T23:00:00Z, 2025-03-30T22:00:00Z)");
///
/// let kolkata = parse_time_zone("Asia/Kolkata")?;
/// let hours = Grid::parse("1h")?.windows(range, &kolkata);
/// assert_eq!(hours[0].to_string(), "[2025-03-30T11:30:00Z, 2025-03-30T12:30:00Z)");
/// # Ok::<(), gapless_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Grid {
    n: u32,
    unit: GridUnit,
}

impl Grid {
    /// Parse `Nm`, `Nh`, `Nd`, `Nw`, `Nmo`, `Ny`.
    ///
    /// # Errors
    ///
    /// When the text is not a number and one of those units, or N is out of
    /// the unit's range (see [`Grid`]), e.g. `invalid grid "60m": minutes
    /// must be 1 to 59 (60m is 1h)`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{Grid, GridUnit};
    ///
    /// let g = Grid::parse("15m")?;
    /// assert_eq!((g.n(), g.unit()), (15, GridUnit::Minute));
    /// assert_eq!(Grid::parse("3mo")?.to_string(), "3mo");
    /// assert!(Grid::parse("5mo").is_err());
    /// assert!(Grid::parse("0h").is_err());
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Grid> {
        Grid::lex(text).map_err(|reason| invalid("grid", text, reason))
    }

    /// N, the count of units per window.
    pub fn n(&self) -> u32 {
        self.n
    }

    /// The unit.
    pub fn unit(&self) -> GridUnit {
        self.unit
    }

    fn lex(text: &str) -> Result<Grid> {
        let t = text.trim();
        if t.is_empty() {
            return Err(err!(
                "empty; expected a grid such as 5m, 1h, 1d, 1w, 3mo or 1y"
            ));
        }
        let split = t
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(t.len());
        let (digits, suffix) = t.split_at(split);
        if digits.is_empty() {
            return Err(err!(
                "expected a number and a unit, such as 5m, 1h, 1d, 1w, 3mo or 1y"
            ));
        }
        let unit = match suffix {
            "m" => GridUnit::Minute,
            "h" => GridUnit::Hour,
            "d" => GridUnit::Day,
            "w" => GridUnit::Week,
            "mo" => GridUnit::Month,
            "y" => GridUnit::Year,
            "" => {
                return Err(err!(
                    "missing unit; use m, h, d, w, mo or y, such as 5m or 1h"
                ))
            }
            _ => {
                return Err(err!(
                    "unknown unit {:?}; use m, h, d, w, mo or y, such as 5m or 1h",
                    crate::parse::shown(suffix)
                ))
            }
        };
        let n: u32 = match digits.trim_start_matches('0') {
            "" => 0,
            d if d.len() > 6 => u32::MAX,
            d => d.parse().expect("at most 6 digits"),
        };
        Grid::check(n, unit)?;
        Ok(Grid { n, unit })
    }

    fn check(n: u32, unit: GridUnit) -> Result<()> {
        if n == 0 {
            return Err(err!("the count must be at least 1"));
        }
        let ok = match unit {
            GridUnit::Minute => n <= 59,
            GridUnit::Hour => n <= 23,
            GridUnit::Day => n <= 31,
            GridUnit::Week => n <= 53,
            GridUnit::Month => 12 % n == 0,
            GridUnit::Year => n <= 9999,
        };
        if ok {
            return Ok(());
        }
        Err(match unit {
            GridUnit::Minute if n == 60 => err!("minutes must be 1 to 59 (60m is 1h)"),
            GridUnit::Minute => err!("minutes must be 1 to 59 (multiples of N in each hour)"),
            GridUnit::Hour if n == 24 => err!("hours must be 1 to 23 (24h is 1d)"),
            GridUnit::Hour => err!("hours must be 1 to 23 (multiples of N in each day)"),
            GridUnit::Day => err!("days must be 1 to 31 (days 1, 1+N… of each month)"),
            GridUnit::Week => err!("weeks must be 1 to 53 (ISO weeks 1, 1+N… of each year)"),
            GridUnit::Month => {
                err!("{n} months does not divide a year; use 1, 2, 3, 4, 6 or 12")
            }
            GridUnit::Year => err!("years must be 1 to 9999"),
        })
    }

    /// Whether the windows are a day or longer (start at local midnight).
    pub fn is_calendar_days(&self) -> bool {
        !matches!(self.unit, GridUnit::Minute | GridUnit::Hour)
    }

    /// The windows that overlap `range`, in time order, each whole: the first
    /// may start before `range` and the last end after it.
    ///
    /// Windows that would reach before 0001-01-01 or after 9999-12-31 are
    /// cut at [`Instant::MIN`] and at the later of the range's end and
    /// 9999-12-30T22:00:00Z (the last instant of time zone arithmetic).
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{parse_interval, Grid};
    ///
    /// let utc = jiff::tz::TimeZone::UTC;
    /// let range = parse_interval("2025-06-01T18:00Z/2025-06-02T02:00Z", None)?;
    /// let w = Grid::parse("5h")?.windows(range, &utc);
    /// let shown: Vec<String> = w.iter().map(|w| w.to_string()).collect();
    /// assert_eq!(shown, [
    ///     "[2025-06-01T15:00:00Z, 2025-06-01T20:00:00Z)",
    ///     "[2025-06-01T20:00:00Z, 2025-06-02T00:00:00Z)",
    ///     "[2025-06-02T00:00:00Z, 2025-06-02T05:00:00Z)",
    /// ]);
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn windows(&self, range: Interval, tz: &TimeZone) -> Vec<Interval> {
        let mut out = Vec::new();
        self.for_each_window(range, tz, |w| {
            out.push(w);
            true
        });
        out
    }

    /// The windows that overlap `range`, as [`Grid::windows`], when there
    /// are at most `max` of them; otherwise `Err` with an estimate of how
    /// many there are (the range's length over the grid's nominal step),
    /// found without making them: a request for a century of minutes costs
    /// no more than one for `max` windows.
    ///
    /// # Errors
    ///
    /// The estimated count when there are more than `max` windows.
    pub fn windows_at_most(
        &self,
        range: Interval,
        tz: &TimeZone,
        max: usize,
    ) -> std::result::Result<Vec<Interval>, u64> {
        let mut out = Vec::new();
        let mut over = false;
        self.for_each_window(range, tz, |w| {
            over = out.len() == max;
            if !over {
                out.push(w);
            }
            !over
        });
        if over {
            let step = self.nominal_micros().max(1);
            let estimate = (range.len_micros() / step).unsigned_abs() + 1;
            return Err(estimate.max(max as u64 + 1));
        }
        Ok(out)
    }

    /// The grid's step as a fixed length: months as 30.436875 days and years
    /// as 365.2425 (the Gregorian means), for estimates only.
    fn nominal_micros(&self) -> i64 {
        let n = i64::from(self.n);
        match self.unit {
            GridUnit::Minute => n * MICROS_PER_MINUTE,
            GridUnit::Hour => n * MICROS_PER_HOUR,
            GridUnit::Day => n * MICROS_PER_DAY,
            GridUnit::Week => n * 7 * MICROS_PER_DAY,
            GridUnit::Month => n * 2_629_746 * MICROS_PER_SECOND,
            GridUnit::Year => n * 31_556_952 * MICROS_PER_SECOND,
        }
    }

    /// The window that contains `t`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{parse_instant, parse_time_zone, Grid};
    ///
    /// let ny = parse_time_zone("America/New_York")?;
    /// let t = parse_instant("2025-03-09T12:00:00Z", None)?;
    /// let day = Grid::parse("1d")?.window_containing(t, &ny);
    /// assert_eq!(day.to_string(), "[2025-03-09T05:00:00Z, 2025-03-10T04:00:00Z)");
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn window_containing(&self, t: Instant, tz: &TimeZone) -> Interval {
        let us = t.as_micros();
        if us < Instant::MAX.as_micros() {
            let range = Interval::from_micros(us, us + 1).expect("one microsecond");
            self.windows(range, tz)[0]
        } else {
            // The very last microsecond: the window reaching it.
            let range = Interval::from_micros(us - 1, us).expect("one microsecond");
            *self.windows(range, tz).last().expect("at least one window")
        }
    }

    /// Call `f` with each window in order while it returns `true`.
    fn for_each_window(&self, range: Interval, tz: &TimeZone, mut f: impl FnMut(Interval) -> bool) {
        // Windows are cut at the ends of the time line: MIN, and the later of
        // jiff's last timestamp and the end of the range.
        let hi = range.end().as_micros().max(JIFF_MAX_US);
        let window = |start: i64, end: i64| window(start, end, hi);
        match self.unit {
            GridUnit::Minute | GridUnit::Hour => {
                let (unit, cycle) = if self.unit == GridUnit::Minute {
                    (MICROS_PER_MINUTE, MICROS_PER_HOUR)
                } else {
                    (MICROS_PER_HOUR, MICROS_PER_DAY)
                };
                let wall = WallGrid {
                    step: i64::from(self.n) * unit,
                    cycle,
                };
                let mut cur = wall.prev_boundary_le(tz, range.start().as_micros());
                let mut walker = Walker::new(tz, cur, hi);
                while cur < range.end().as_micros() {
                    let next = walker.next_boundary_gt(&wall, cur);
                    if let Some(w) = window(cur, next) {
                        if !f(w) {
                            return;
                        }
                    }
                    if next <= cur {
                        break;
                    }
                    cur = next;
                }
            }
            _ => {
                let mut date = self.floor(local_date(range.start(), tz));
                let mut start = self.boundary_of(date, tz, hi);
                loop {
                    let next_date = match self.succ(date) {
                        Some(d) => d,
                        None => {
                            // Past the year 9999: one last window.
                            if let Some(w) = window(start, hi) {
                                f(w);
                            }
                            break;
                        }
                    };
                    let end = self.boundary_of(next_date, tz, hi);
                    if let Some(w) = window(start, end) {
                        if !f(w) {
                            return;
                        }
                    }
                    if end >= range.end().as_micros() || end >= hi {
                        break;
                    }
                    start = start.max(end);
                    date = next_date;
                }
            }
        }
    }

    /// The latest qualifying date on or before `d`.
    fn floor(&self, d: Date) -> Date {
        let n = self.n as i32;
        let floor_to = |v: i32| 1 + (v - 1) / n * n;
        match self.unit {
            GridUnit::Day => d.with().day(floor_to(i32::from(d.day())) as i8).build(),
            GridUnit::Week => {
                let iso = d.iso_week_date();
                ISOWeekDate::new(
                    iso.year(),
                    floor_to(i32::from(iso.week())) as i8,
                    Weekday::Monday,
                )
                .map(|w| w.date())
            }
            GridUnit::Month => Date::new(d.year(), floor_to(i32::from(d.month())) as i8, 1),
            GridUnit::Year => Date::new((i32::from(d.year()).div_euclid(n) * n) as i16, 1, 1),
            GridUnit::Minute | GridUnit::Hour => unreachable!("sub-day grids use wall times"),
        }
        .expect("the floor of a valid date is valid")
    }

    /// The next qualifying date after the qualifying date `q`, `None` past
    /// the year 9999.
    fn succ(&self, q: Date) -> Option<Date> {
        let n = self.n as i32;
        let next_year = |y: i16| (y < 9999).then(|| y + 1);
        match self.unit {
            GridUnit::Day => {
                let d = i32::from(q.day()) + n;
                if d <= i32::from(q.days_in_month()) {
                    Some(q.with().day(d as i8).build().expect("within the month"))
                } else if q.month() == 12 {
                    next_year(q.year()).map(|y| Date::new(y, 1, 1).expect("valid"))
                } else {
                    Some(Date::new(q.year(), q.month() + 1, 1).expect("valid"))
                }
            }
            GridUnit::Week => {
                let iso = q.iso_week_date();
                let w = i32::from(iso.week()) + n;
                if w <= i32::from(iso.weeks_in_year()) {
                    Some(
                        ISOWeekDate::new(iso.year(), w as i8, Weekday::Monday)
                            .ok()?
                            .date(),
                    )
                } else {
                    let y = next_year(iso.year())?;
                    Some(ISOWeekDate::new(y, 1, Weekday::Monday).ok()?.date())
                }
            }
            GridUnit::Month => {
                let m = i32::from(q.month()) + n;
                if m <= 12 {
                    Some(Date::new(q.year(), m as i8, 1).expect("valid"))
                } else {
                    next_year(q.year()).map(|y| Date::new(y, 1, 1).expect("valid"))
                }
            }
            GridUnit::Year => {
                let y = i32::from(q.year()) + n;
                (y <= 9999).then(|| Date::new(y as i16, 1, 1).expect("valid"))
            }
            GridUnit::Minute | GridUnit::Hour => unreachable!("sub-day grids use wall times"),
        }
    }

    /// The boundary of the qualifying date `d`: its first instant, in
    /// microseconds, cut to the years 0001–9999.
    fn boundary_of(&self, d: Date, tz: &TimeZone, hi: i64) -> i64 {
        match start_of_day(d, tz) {
            Ok(ts) => ts.as_microsecond().clamp(Instant::MIN.as_micros(), hi),
            Err(_) if d.year() < 5000 => Instant::MIN.as_micros(),
            Err(_) => hi,
        }
    }
}

impl fmt::Display for Grid {
    /// The canonical text, e.g. `15m`, `1h`, `3mo`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.n, self.unit.suffix())
    }
}

impl FromStr for Grid {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Grid::parse(s)
    }
}

impl serde::Serialize for Grid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Reads the text that `Display` writes (any form [`Grid::parse`] accepts).
impl<'de> serde::Deserialize<'de> for Grid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        crate::parse::deserialize_text(d, Grid::parse)
    }
}

/// Grid computation stops at the last instant jiff's timestamps reach.
const JIFF_MAX_US: i64 = crate::parse::LAST_MICROS;

/// The window `[start, end)` cut to `[MIN, hi]`, if not empty.
fn window(start: i64, end: i64, hi: i64) -> Option<Interval> {
    let lo = start.max(Instant::MIN.as_micros());
    let end = end.min(hi);
    (lo < end).then(|| Interval::from_micros(lo, end).expect("a valid window"))
}

fn local_date(t: Instant, tz: &TimeZone) -> Date {
    tz.to_datetime(ts(t.as_micros())).date()
}

/// The jiff timestamp, cut to jiff's range.
fn ts(micros: i64) -> Timestamp {
    Timestamp::from_microsecond(micros.clamp(Instant::MIN.as_micros(), JIFF_MAX_US))
        .expect("within jiff's range")
}

/// Wall-clock grid times: local microseconds (since 1970-01-01T00:00 local)
/// that are multiples of `step` within each `cycle` (hour or day).
struct WallGrid {
    step: i64,
    cycle: i64,
}

impl WallGrid {
    /// The least grid time at or after the local time `l`.
    fn ceil(&self, l: i64) -> i64 {
        let c = l.div_euclid(self.cycle) * self.cycle;
        let r = l - c;
        let k = (r + self.step - 1) / self.step * self.step;
        if k < self.cycle {
            c + k
        } else {
            c + self.cycle
        }
    }

    /// The greatest grid time at or before the local time `l`.
    fn floor(&self, l: i64) -> i64 {
        let c = l.div_euclid(self.cycle) * self.cycle;
        c + (l - c) / self.step * self.step
    }

    /// The latest boundary at or before `t` (µs), searching back through
    /// the zone's offset periods.
    fn prev_boundary_le(&self, tz: &TimeZone, mut t: i64) -> i64 {
        loop {
            if t < Instant::MIN.as_micros() {
                return Instant::MIN.as_micros();
            }
            t = t.min(JIFF_MAX_US);
            let p = Period::at(tz, t);
            let b = self.floor(t + p.offset) - p.offset;
            match p.start {
                Some(s) if b < s => t = s - 1,
                _ => return b,
            }
        }
    }
}

/// A stretch of time with one UTC offset, between two transitions.
#[derive(Debug, Clone, Copy)]
struct Period {
    /// First instant (µs), `None` before the zone's first transition.
    start: Option<i64>,
    /// First instant after (µs), `None` after the last transition.
    end: Option<i64>,
    /// Offset in µs.
    offset: i64,
}

impl Period {
    fn at(tz: &TimeZone, t: i64) -> Period {
        let at = ts(t);
        let offset = i64::from(tz.to_offset(at).seconds()) * MICROS_PER_SECOND;
        let start = tz
            .preceding(
                at.checked_add(jiff::SignedDuration::from_nanos(1))
                    .unwrap_or(at),
            )
            .next()
            .map(|tr| tr.timestamp().as_microsecond());
        let end = tz
            .following(at)
            .next()
            .map(|tr| tr.timestamp().as_microsecond());
        Period { start, end, offset }
    }
}

/// Walks forward through sub-day boundaries, keeping the current offset
/// period so the zone is only consulted at transitions.
struct Walker<'a> {
    tz: &'a TimeZone,
    period: Period,
    /// The end of the time line.
    hi: i64,
}

impl<'a> Walker<'a> {
    fn new(tz: &'a TimeZone, t: i64, hi: i64) -> Self {
        Walker {
            tz,
            period: Period::at(tz, t),
            hi,
        }
    }

    /// The first boundary after `t`, or the end of the time line.
    fn next_boundary_gt(&mut self, wall: &WallGrid, t: i64) -> i64 {
        let mut from = t + 1; // candidates at or after `from`
        loop {
            if from >= JIFF_MAX_US {
                return self.hi;
            }
            let in_period = self.period.start.is_none_or(|s| s <= from)
                && self.period.end.is_none_or(|e| from < e);
            if !in_period {
                self.period = Period::at(self.tz, from);
            }
            let p = self.period;
            let b = wall.ceil(from + p.offset) - p.offset;
            match p.end {
                Some(e) if b >= e => from = e,
                _ => return b,
            }
        }
    }
}
