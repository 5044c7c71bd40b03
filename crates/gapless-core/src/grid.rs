//! Calendar windows in an IANA time zone.
// STUB: implemented by the calendar work (see issue 2).

use crate::{Interval, Result};

/// A calendar grid such as `5m`, `1h`, `1d`, `1w`, `3mo`, `1y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    n: u32,
}

impl Grid {
    /// Parse `Nm`, `Nh`, `Nd`, `Nw`, `Nmo`, `Ny`.
    pub fn parse(text: &str) -> Result<Grid> {
        todo!("{text}")
    }
    /// The windows that overlap `range`, in time order, each whole.
    pub fn windows(&self, range: Interval, tz: &jiff::tz::TimeZone) -> Vec<Interval> {
        todo!("{range} {tz:?}")
    }
}
