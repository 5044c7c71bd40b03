//! Time-unit constants, defined once: how many microseconds (the core's
//! resolution), seconds (UTC offsets) and nanoseconds (jiff's resolution)
//! make each fixed unit.
//!
//! A day here is 24 hours, as where no time zone applies; calendar days,
//! months and years that follow a time zone are [`Duration`]'s business.
//!
//! [`Duration`]: crate::Duration

/// Nanoseconds in a microsecond: jiff counts nanoseconds, instants stop at
/// microseconds.
pub const NANOS_PER_MICROSECOND: i64 = 1_000;

/// Seconds in a minute.
pub const SECONDS_PER_MINUTE: i64 = 60;
/// Seconds in an hour.
pub const SECONDS_PER_HOUR: i64 = 60 * SECONDS_PER_MINUTE;
/// Seconds in a day of 24 hours.
pub const SECONDS_PER_DAY: i64 = 24 * SECONDS_PER_HOUR;

/// Microseconds in a millisecond.
pub const MICROS_PER_MILLISECOND: i64 = 1_000;
/// Microseconds in a second.
pub const MICROS_PER_SECOND: i64 = 1_000 * MICROS_PER_MILLISECOND;
/// Microseconds in a minute.
pub const MICROS_PER_MINUTE: i64 = SECONDS_PER_MINUTE * MICROS_PER_SECOND;
/// Microseconds in an hour.
pub const MICROS_PER_HOUR: i64 = SECONDS_PER_HOUR * MICROS_PER_SECOND;
/// Microseconds in a day of 24 hours.
pub const MICROS_PER_DAY: i64 = SECONDS_PER_DAY * MICROS_PER_SECOND;
