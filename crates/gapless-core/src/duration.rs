//! Durations: ISO 8601 (`PT5M`, `PT0.5S`, `P1D`, `P1M`) and short forms
//! (`5m`, `1h`, `1d`).
// STUB: implemented by the parsing work (see issue 2).

use crate::{Instant, Result};

/// A length of time, fixed (`PT5M`) or calendar (`P1M`, needs a time zone).
#[derive(Debug, Clone, Copy)]
pub struct Duration(jiff::Span);

impl Duration {
    /// Parse ISO 8601 or short forms.
    pub fn parse(text: &str) -> Result<Duration> {
        todo!("{text}")
    }
    /// The length in microseconds when it has no calendar unit.
    pub fn fixed_micros(&self) -> Option<i64> {
        todo!()
    }
    /// `t + self`, calendar units following the local calendar of `tz`.
    pub fn add_to(&self, t: Instant, tz: &jiff::tz::TimeZone) -> Result<Instant> {
        todo!("{t} {tz:?}")
    }
}
