//! When a window counts as complete.

use std::fmt;
use std::str::FromStr;

use crate::error::err;
use crate::parse::invalid;
use crate::{CoverageReport, Duration, Error, Result};

/// When a window (or range) counts as complete: `full`, `ratio>=R` or
/// `gap<D`.
///
/// | text | complete when |
/// |---|---|
/// | `full` | there is no gap |
/// | `ratio>=R` | the covered share is at least R (0 ≤ R ≤ 1; `ratio>=1` is `full`) |
/// | `gap<D` | every gap is shorter than D, a fixed duration such as `5m` or `PT5M` (a day counts 24 hours) |
///
/// Spaces around the operator are allowed (`ratio >= 0.95`). `Display`
/// prints the canonical text (`ratio>=0.95`, `gap<5m`), which parses back to
/// an equal policy.
///
/// # Example
///
/// ```
/// use gapless_core::{CoverageReport, Interval, Policy};
///
/// let report = CoverageReport {
///     covered: false,
///     covered_ratio: 0.99,
///     missing: vec![Interval::from_micros(0, 60_000_000)?],
/// };
/// assert!(!Policy::parse("full")?.is_complete(&report));
/// assert!(Policy::parse("ratio>=0.95")?.is_complete(&report));
/// assert!(Policy::parse("gap<5m")?.is_complete(&report));
/// assert!(!Policy::parse("gap<PT1M")?.is_complete(&report));
/// # Ok::<(), gapless_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Policy {
    /// No gap (the default).
    #[default]
    Full,
    /// The covered share is at least this ratio, 0.0 to 1.0.
    RatioAtLeast(f64),
    /// Every gap is shorter than this fixed duration.
    GapBelow(Duration),
}

impl Policy {
    /// Parse `full`, `ratio>=R` or `gap<D`.
    ///
    /// # Errors
    ///
    /// When the text is none of these, R is not a number from 0 to 1, or D is
    /// not a fixed duration, e.g. `invalid policy "ratio>=1.5": the ratio
    /// must be from 0 to 1`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::Policy;
    ///
    /// assert_eq!(Policy::parse("full")?, Policy::Full);
    /// assert_eq!(Policy::parse("ratio >= 0.9")?, Policy::RatioAtLeast(0.9));
    /// assert_eq!(Policy::parse("gap<PT5M")?.to_string(), "gap<5m");
    /// assert!(Policy::parse("gap<1mo").is_err());
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Policy> {
        Policy::lex(text).map_err(|reason| invalid("policy", text, reason))
    }

    fn lex(text: &str) -> Result<Policy> {
        let t = text.trim();
        if t == "full" {
            return Ok(Policy::Full);
        }
        if let Some(rest) = t.strip_prefix("ratio") {
            let rest = rest.trim_start();
            let Some(value) = rest.strip_prefix(">=") else {
                return Err(err!("expected \">=\" after \"ratio\", as in ratio>=0.95"));
            };
            let value = value.trim();
            let valid_text = !value.is_empty()
                && value.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && value.bytes().filter(|&b| b == b'.').count() <= 1
                && value != ".";
            let r: f64 = match value.parse() {
                Ok(r) if valid_text => r,
                _ => {
                    return Err(err!(
                        "expected a ratio from 0 to 1 after \">=\", found {:?}",
                        crate::parse::shown(value)
                    ))
                }
            };
            if !(0.0..=1.0).contains(&r) {
                return Err(err!("the ratio {value} must be from 0 to 1"));
            }
            return Ok(Policy::RatioAtLeast(r));
        }
        if let Some(rest) = t.strip_prefix("gap") {
            let rest = rest.trim_start();
            let Some(value) = rest.strip_prefix('<') else {
                return Err(err!("expected \"<\" after \"gap\", as in gap<5m"));
            };
            if value.starts_with('=') {
                return Err(err!("use \"gap<D\" (every gap shorter than D), not \"<=\""));
            }
            let d = Duration::lex(value).map_err(|r| {
                r.context(format_args!(
                    "duration {:?}",
                    crate::parse::shown(value.trim())
                ))
            })?;
            if d.has_months() {
                return Err(err!(
                    "duration {d} has months or years, which have no fixed length"
                ));
            }
            return Ok(Policy::GapBelow(d));
        }
        Err(err!(
            "expected full, ratio>=R (such as ratio>=0.95) or gap<D (such as gap<5m)"
        ))
    }

    /// Whether a window with this report is complete.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{CoverageReport, Policy};
    ///
    /// let whole = CoverageReport { covered: true, covered_ratio: 1.0, missing: vec![] };
    /// assert!(Policy::Full.is_complete(&whole));
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn is_complete(&self, report: &CoverageReport) -> bool {
        let longest = report.missing.iter().map(|g| g.len_micros()).max();
        self.is_met(
            report.covered && report.missing.is_empty(),
            report.covered_ratio,
            longest,
        )
    }

    /// Whether a window is complete from what its gaps come to: none at
    /// all (`gapless`), its covered share, and its longest gap (in
    /// microseconds, `None` without gaps), so that a judge that walks the
    /// gaps once need not collect them.
    pub(crate) fn is_met(&self, gapless: bool, covered_ratio: f64, longest: Option<i64>) -> bool {
        match *self {
            Policy::Full => gapless,
            Policy::RatioAtLeast(r) if r >= 1.0 => gapless,
            Policy::RatioAtLeast(r) => covered_ratio >= r,
            Policy::GapBelow(d) => {
                let limit = d.fixed_micros().unwrap_or(i64::MAX);
                longest.is_none_or(|g| g < limit)
            }
        }
    }
}

impl fmt::Display for Policy {
    /// The canonical text: `full`, `ratio>=0.95`, `gap<5m`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Full => f.write_str("full"),
            Policy::RatioAtLeast(r) => write!(f, "ratio>={r}"),
            Policy::GapBelow(d) => write!(f, "gap<{d}"),
        }
    }
}

impl FromStr for Policy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Policy::parse(s)
    }
}

impl serde::Serialize for Policy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Reads the text that `Display` writes (any form [`Policy::parse`] accepts).
impl<'de> serde::Deserialize<'de> for Policy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        crate::parse::deserialize_text(d, Policy::parse)
    }
}
