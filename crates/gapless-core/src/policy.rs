//! When a window counts as complete.
// STUB: implemented by the parsing work (see issue 2).

use crate::{CoverageReport, Result};

/// `full`, `ratio>=R` or `gap<D`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    /// No gap.
    Full,
}

impl Policy {
    /// Parse a policy string.
    pub fn parse(text: &str) -> Result<Policy> {
        todo!("{text}")
    }
    /// Whether a window with this report is complete.
    pub fn is_complete(&self, report: &CoverageReport) -> bool {
        todo!("{report:?}")
    }
}
