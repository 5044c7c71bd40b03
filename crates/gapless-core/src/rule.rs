//! Rules: which windows of which assets to watch, and how a window's state
//! changes as coverage arrives and is withdrawn (SPEC §7).
//!
//! A rule's *definition* ([`RuleDef`]: assets, grid, zone, policy, `from`,
//! `until`) fixes which windows it has and how each is judged; it cannot
//! change once recorded, because the firings already recorded were judged
//! by it. Its *settings* ([`RuleSettings`]: target, deadline, key format)
//! only say where firings go and how they are named, and may change.

use std::fmt;
use std::str::FromStr;

use jiff::tz::TimeZone;

use crate::parse::invalid;
use crate::{
    parse_time_zone, CoverageReport, Duration, Error, Grid, Instant, Interval, IntervalSet, Policy,
    Result,
};

/// The most bytes of a rule name.
pub const MAX_RULE_NAME_BYTES: usize = 128;

/// The key format of Airflow's temporal partition mappers, the default of
/// a rule's and of `windows --keys`.
pub const DEFAULT_KEY_FORMAT: &str = "%Y-%m-%dT%H:%M:%S";

/// The longest key format, in bytes: room for any format of a key of
/// [`MAX_KEY_BYTES`] (each of its bytes but a directive's writes one),
/// and a bound on what a request makes the server check and echo.
pub const MAX_KEY_FORMAT_BYTES: usize = 256;

/// The longest partition key, in bytes: Airflow keeps an asset event's
/// `partition_key` in a column of 250 characters (`StringID`, its
/// `ID_LEN`), so a longer key could be written but never delivered; and
/// 10,000 windows' keys stay a few megabytes of an answer.
pub const MAX_KEY_BYTES: usize = 250;

/// Instants on which a key format is tried when it is checked, in
/// microseconds since the epoch: the epoch, and two late ones at whose
/// instants the fields of variable length are at their longest (`%s` of
/// twelve digits, a fraction of six, two-digit day and hour; the longest
/// month and weekday names, Wednesday 29 September, or a two-digit month,
/// Wednesday 29 December). A key formatted later that is longer still is
/// refused there (see [`format_key`]).
const KEY_SAMPLES_US: [i64; 3] = [
    0,
    253_394_265_599_999_999, // 9999-09-29T23:59:59.999999Z
    253_402_127_999_999_999, // 9999-12-29T23:59:59.999999Z
];

/// Check a rule name (or a target name): 1 to 128 bytes of
/// `A-Z a-z 0-9 . _ -`, so that it can stand in a URL path, a file name and
/// an Airflow run id as it is.
///
/// # Errors
///
/// When the name is empty, too long or has another character.
///
/// # Example
///
/// ```
/// use gapless_core::validate_rule_name;
///
/// assert!(validate_rule_name("orders_hourly").is_ok());
/// assert!(validate_rule_name("orders hourly").is_err());
/// assert!(validate_rule_name("").is_err());
/// ```
pub fn validate_rule_name(name: &str) -> Result<()> {
    let reason = if name.is_empty() {
        Some("empty; a rule name is 1 to 128 of A-Z a-z 0-9 . _ -".to_string())
    } else if name.len() > MAX_RULE_NAME_BYTES {
        Some(format!(
            "{} bytes is longer than the {MAX_RULE_NAME_BYTES} allowed",
            name.len()
        ))
    } else {
        name.chars()
            .find(|&c| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
            .map(|c| format!("{c:?} is not allowed; use A-Z a-z 0-9 . _ -"))
    };
    match reason {
        Some(reason) => Err(invalid("rule name", name, reason)),
        None => Ok(()),
    }
}

/// Check a key format: a strftime format of at most
/// [`MAX_KEY_FORMAT_BYTES`] that jiff can write, writing a key of 1 to
/// [`MAX_KEY_BYTES`] on instants where keys are at their longest, in UTC
/// (a rule's key is checked again in its zone: [`RuleDef::check_key_format`]).
///
/// # Errors
///
/// When the format is too long, has an unknown or incomplete directive,
/// writes an empty key or one too long, or holds a control character (a
/// key is sent to Airflow and stored as text; PostgreSQL text cannot hold
/// a NUL).
pub fn validate_key_format(format: &str) -> Result<()> {
    check_key_format(format, &TimeZone::UTC)
}

/// [`validate_key_format`] in zone `tz`.
fn check_key_format(format: &str, tz: &TimeZone) -> Result<()> {
    if format.len() > MAX_KEY_FORMAT_BYTES {
        return Err(invalid(
            "key format",
            format,
            format!(
                "{} bytes is longer than the {MAX_KEY_FORMAT_BYTES} allowed",
                format.len()
            ),
        ));
    }
    if let Some(c) = format.chars().find(|c| c.is_control()) {
        return Err(invalid(
            "key format",
            format,
            format!("control character {c:?} is not allowed"),
        ));
    }
    for us in KEY_SAMPLES_US {
        let at = Instant::from_micros(us).expect("the samples are instants");
        if format_key(format, at, tz)?.is_empty() {
            return Err(invalid("key format", format, "it writes an empty key"));
        }
    }
    Ok(())
}

/// The partition key of the window starting at `start`: its local time in
/// `tz`, written with `format` (strftime).
///
/// # Errors
///
/// When jiff cannot write `format`, or the key is longer than
/// [`MAX_KEY_BYTES`].
pub fn format_key(format: &str, start: Instant, tz: &TimeZone) -> Result<String> {
    let local = start.to_timestamp().to_zoned_datetime(tz.clone());
    let key =
        jiff::fmt::strtime::format(format, &local).map_err(|e| invalid("key format", format, e))?;
    if key.len() > MAX_KEY_BYTES {
        return Err(invalid(
            "key format",
            format,
            format!(
                "the key of {start} is {} bytes, longer than the {MAX_KEY_BYTES} a key \
                 may have",
                key.len()
            ),
        ));
    }
    Ok(key)
}

/// What a rule watches and how it judges: everything that decides its
/// firings, so that it cannot change once recorded.
///
/// Its windows are the windows of `grid` in `tz` (as `windows` computes
/// them) that start at or after `from` and, with `until`, end at or before
/// `until`. A window's coverage is the *joint* coverage of the assets: an
/// instant counts only where every asset covers it.
#[derive(Debug, Clone)]
pub struct RuleDef {
    assets: Vec<String>,
    grid: Grid,
    tz: TimeZone,
    tz_name: String,
    policy: Policy,
    from: Instant,
    until: Option<Instant>,
}

impl PartialEq for RuleDef {
    /// The same definition: what `rule set` may repeat.
    fn eq(&self, other: &RuleDef) -> bool {
        self.assets == other.assets
            && self.grid == other.grid
            && self.tz_name == other.tz_name
            && self.policy == other.policy
            && self.from == other.from
            && self.until == other.until
    }
}

impl RuleDef {
    /// A definition, checked: at least one asset (valid names, given once
    /// each; kept in name order), a known zone, `until` after `from`.
    ///
    /// # Errors
    ///
    /// A one-line error naming the field and why.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{parse_instant, Grid, Policy, RuleDef};
    ///
    /// let from = parse_instant("2025-06-01", None)?;
    /// let def = RuleDef::new(
    ///     vec!["orders".into(), "clicks".into()],
    ///     Grid::parse("1h")?,
    ///     "UTC",
    ///     Policy::Full,
    ///     from,
    ///     None,
    /// )?;
    /// assert_eq!(def.assets(), ["clicks", "orders"]);
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn new(
        mut assets: Vec<String>,
        grid: Grid,
        tz: &str,
        policy: Policy,
        from: Instant,
        until: Option<Instant>,
    ) -> Result<RuleDef> {
        if assets.is_empty() {
            return Err(Error::new(
                "a rule watches at least one asset (--assets A[,B...])",
            ));
        }
        for a in &assets {
            crate::validate_asset_name(a)?;
        }
        assets.sort_unstable();
        if let Some(w) = assets.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::new(format!(
                "asset {:?} is named twice in the rule's assets",
                w[0]
            )));
        }
        let zone = parse_time_zone(tz)?;
        let tz_name = zone.iana_name().unwrap_or("UTC").to_string();
        if let Some(until) = until {
            if until <= from {
                return Err(Error::new(format!(
                    "until {until} is not after from {from}; a rule's windows lie between them"
                )));
            }
        }
        Ok(RuleDef {
            assets,
            grid,
            tz: zone,
            tz_name,
            policy,
            from,
            until,
        })
    }

    /// The assets, in name order.
    pub fn assets(&self) -> &[String] {
        &self.assets
    }

    /// The grid.
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// The time zone of the grid.
    pub fn tz(&self) -> &TimeZone {
        &self.tz
    }

    /// The zone's IANA name (`UTC` for UTC).
    pub fn tz_name(&self) -> &str {
        &self.tz_name
    }

    /// The policy a window is judged by.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The earliest window start.
    pub fn from(&self) -> Instant {
        self.from
    }

    /// The latest window end, if any.
    pub fn until(&self) -> Option<Instant> {
        self.until
    }

    /// Whether `w` (a window of the grid) is one of the rule's windows.
    fn holds(&self, w: Interval) -> bool {
        w.start() >= self.from && self.until.is_none_or(|u| w.end() <= u)
    }

    /// The rule's windows that overlap `range`, in order.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{parse_instant, parse_interval, Grid, Policy, RuleDef};
    ///
    /// let from = parse_instant("2025-06-01T01:00Z", None)?;
    /// let def = RuleDef::new(vec!["a".into()], Grid::parse("1h")?, "UTC", Policy::Full, from, None)?;
    /// let range = parse_interval("2025-06-01T00:30Z/2025-06-01T02:30Z", None)?;
    /// let shown: Vec<String> = def.windows(range).iter().map(|w| w.to_string()).collect();
    /// assert_eq!(shown, [
    ///     "[2025-06-01T01:00:00Z, 2025-06-01T02:00:00Z)",
    ///     "[2025-06-01T02:00:00Z, 2025-06-01T03:00:00Z)",
    /// ]);
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn windows(&self, range: Interval) -> Vec<Interval> {
        self.windows_at_most(range, usize::MAX)
            .unwrap_or_else(|_| unreachable!("no grid has usize::MAX windows"))
    }

    /// The rule's windows that overlap `range`, in order, unless there are
    /// more than `max` of them.
    ///
    /// # Errors
    ///
    /// About how many windows there are (more than `max`), with none of
    /// them made: a question on a long range is refused, not allocated.
    pub fn windows_at_most(
        &self,
        range: Interval,
        max: usize,
    ) -> std::result::Result<Vec<Interval>, u64> {
        let lo = range.start().max(self.from);
        let hi = match self.until {
            Some(u) => range.end().min(u),
            None => range.end(),
        };
        let Ok(range) = Interval::new(lo, hi) else {
            return Ok(Vec::new());
        };
        let mut out = self.grid.windows_at_most(range, &self.tz, max)?;
        out.retain(|&w| self.holds(w));
        Ok(out)
    }

    /// The rule's windows that overlap any run of `touched` (the intervals
    /// of a batch on the rule's assets), in order, each once.
    pub fn windows_touched(&self, touched: &IntervalSet) -> Vec<Interval> {
        let mut out: Vec<Interval> = Vec::new();
        for run in touched.runs() {
            for w in self.windows(run) {
                // Runs are in order, so a window two runs share is the last one.
                if out.last() != Some(&w) {
                    out.push(w);
                }
            }
        }
        out
    }

    /// The rule's windows whose end lies in `(after, up_to]`, in order (for
    /// deadlines: the windows whose deadline passed in a span of time).
    pub fn windows_ending_in(&self, after: Instant, up_to: Instant) -> Vec<Interval> {
        let Ok(range) = Interval::new(after, up_to) else {
            return Vec::new();
        };
        let mut out = self.windows(range);
        out.retain(|w| w.end() > after && w.end() <= up_to);
        out
    }

    /// The end of the rule's first window that ends after `after`, if any:
    /// for deadlines, when the next one passes, so that a rule whose next
    /// deadline is still ahead is not looked at
    /// (`windows_ending_in(after, t)` is empty for every `t` before it).
    pub fn first_end_after(&self, after: Instant) -> Option<Instant> {
        let mut t = after.max(self.from);
        loop {
            if self.until.is_some_and(|u| t >= u) {
                return None;
            }
            // It contains t, so it ends after `after`.
            let w = self.grid.window_containing(t, &self.tz);
            if self.holds(w) {
                return Some(w.end());
            }
            // Only the window that `from` cuts is skipped; one past `until`
            // has no rule window after it.
            if self.until.is_some_and(|u| w.end() > u) || w.end() <= t {
                return None;
            }
            t = w.end();
        }
    }

    /// Judge window `w` against `joint`, the joint coverage of the rule's
    /// assets (at least over `w`).
    ///
    /// A window with nothing covered is never complete, whatever the policy:
    /// a rule fires for data that arrived, not for the lack of it.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{parse_instant, parse_interval, Grid, IntervalSet, Policy, RuleDef};
    ///
    /// let from = parse_instant("2025-06-01", None)?;
    /// let def = RuleDef::new(vec!["a".into()], Grid::parse("1h")?, "UTC",
    ///     Policy::parse("ratio>=0.5")?, from, None)?;
    /// let w = parse_interval("2025-06-01T00:00Z/PT1H", None)?;
    /// let half = IntervalSet::from_intervals([parse_interval("2025-06-01T00:00Z/PT30M", None)?]);
    /// assert!(def.judge(w, &half).complete);
    /// assert!(!def.judge(w, &IntervalSet::new()).complete);
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn judge(&self, w: Interval, joint: &IntervalSet) -> Judgement {
        // One walk over the gaps, none collected: rules judge windows after
        // every batch, and most windows have few gaps or none.
        let (mut missing, mut longest, mut whole) = (0, None::<i64>, false);
        for (i, g) in joint.gaps_iter(w).enumerate() {
            whole = i == 0 && g == w;
            missing += g.len_micros();
            longest = Some(longest.map_or(g.len_micros(), |l| l.max(g.len_micros())));
        }
        let total = w.len_micros();
        let covered_ratio = CoverageReport::ratio(total - missing, total);
        Judgement {
            complete: !whole
                && self
                    .policy
                    .is_met(longest.is_none(), covered_ratio, longest),
            covered_ratio,
        }
    }

    /// Judge window `w` from `report`, its joint coverage already worked
    /// out (for a caller that also shows the report's gaps), as
    /// [`RuleDef::judge`] does.
    pub fn judge_report(&self, w: Interval, report: &CoverageReport) -> Judgement {
        let anything = report.missing.first() != Some(&w);
        Judgement {
            complete: anything && self.policy.is_complete(report),
            covered_ratio: report.covered_ratio,
        }
    }

    /// The firing key of the window starting at `start`: the start in the
    /// rule's zone, written with `format` (strftime, checked by
    /// [`RuleDef::check_key_format`]).
    pub fn key(&self, start: Instant, format: &str) -> String {
        // A format that was checked writes every instant, and its longest
        // keys were tried; the fallback keeps a key of bounded length that
        // names the window should one still be too long.
        format_key(format, start, &self.tz).unwrap_or_else(|_| start.to_string())
    }

    /// Check `format` as a key format of this rule: [`validate_key_format`]
    /// in the rule's zone, whose names (`%Z`, `%Q`) may be longer than
    /// UTC's.
    ///
    /// # Errors
    ///
    /// As [`validate_key_format`].
    pub fn check_key_format(&self, format: &str) -> Result<()> {
        check_key_format(format, &self.tz)
    }
}

/// A window judged: complete or not, and its covered share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// Complete under the rule's policy (and something is covered).
    pub complete: bool,
    /// The joint covered share of the window, 0.0 to 1.0.
    pub covered_ratio: f64,
}

/// What a rule may change without a new definition.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSettings {
    /// A window not complete this long after its end fires `late`.
    pub deadline: Option<Duration>,
    /// Where firings are delivered (a target of the targets file).
    pub target: Option<String>,
    /// The strftime format of firing keys.
    pub key_format: String,
}

impl Default for RuleSettings {
    fn default() -> RuleSettings {
        RuleSettings {
            deadline: None,
            target: None,
            key_format: DEFAULT_KEY_FORMAT.to_string(),
        }
    }
}

impl RuleSettings {
    /// Check the settings: a fixed, positive deadline, a target name as a
    /// rule name, a key format that writes keys.
    ///
    /// # Errors
    ///
    /// A one-line error naming the field and why.
    pub fn check(&self) -> Result<()> {
        if let Some(d) = self.deadline {
            match d.fixed_micros() {
                Some(us) if us >= 0 => {}
                Some(_) => return Err(invalid("deadline", &d.to_string(), "it is negative")),
                None => {
                    return Err(invalid(
                        "deadline",
                        &d.to_string(),
                        "months and years have no fixed length; give hours or days",
                    ))
                }
            }
        }
        if let Some(t) = &self.target {
            validate_rule_name(t).map_err(|e| Error::new(format!("target: {e}")))?;
        }
        validate_key_format(&self.key_format)
    }
}

/// A rule: its name, definition and settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The name (see [`validate_rule_name`]).
    pub name: String,
    /// What it watches and how it judges.
    pub def: RuleDef,
    /// Where its firings go and how they are named.
    pub settings: RuleSettings,
}

/// What a firing says about its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FiringKind {
    /// The window became complete.
    Complete,
    /// A window that had fired `complete` is no longer complete.
    Incomplete,
    /// The window was not complete at its deadline.
    Late,
}

impl FiringKind {
    /// Every kind, in the order of their codes.
    pub const ALL: [FiringKind; 3] = [
        FiringKind::Complete,
        FiringKind::Incomplete,
        FiringKind::Late,
    ];

    /// The text form: `complete`, `incomplete`, `late`.
    pub fn as_str(self) -> &'static str {
        match self {
            FiringKind::Complete => "complete",
            FiringKind::Incomplete => "incomplete",
            FiringKind::Late => "late",
        }
    }
}

impl fmt::Display for FiringKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FiringKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<FiringKind> {
        FiringKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| invalid("firing kind", s, "expected complete, incomplete or late"))
    }
}

impl serde::Serialize for FiringKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for FiringKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        crate::parse::deserialize_text(d, |t| t.parse())
    }
}

/// The recorded state of one window of a rule. A window never judged is
/// [`WindowState::default`]: not complete, generation 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowState {
    /// Whether its last firing was `complete`.
    pub complete: bool,
    /// The generation of its last `complete` firing (0: never complete).
    pub generation: u32,
}

impl WindowState {
    /// The state after judging the window `complete_now`, and the firing
    /// (kind and generation) when the state changed.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{FiringKind, WindowState};
    ///
    /// let (s, f) = WindowState::default().judged(true);
    /// assert_eq!(f, Some((FiringKind::Complete, 1)));
    /// let (s, f) = s.judged(true);
    /// assert_eq!(f, None);
    /// let (s, f) = s.judged(false);
    /// assert_eq!(f, Some((FiringKind::Incomplete, 1)));
    /// assert_eq!(s.judged(true).1, Some((FiringKind::Complete, 2)));
    /// ```
    pub fn judged(self, complete_now: bool) -> (WindowState, Option<(FiringKind, u32)>) {
        match (self.complete, complete_now) {
            (false, true) => {
                let generation = self.generation + 1;
                let next = WindowState {
                    complete: true,
                    generation,
                };
                (next, Some((FiringKind::Complete, generation)))
            }
            (true, false) => {
                let next = WindowState {
                    complete: false,
                    generation: self.generation,
                };
                (next, Some((FiringKind::Incomplete, self.generation)))
            }
            _ => (self, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Instant {
        crate::parse_instant(text, None).unwrap()
    }

    #[test]
    fn key_formats_and_keys_have_a_length_limit() {
        let literal = |n: usize| "k".repeat(n);
        assert!(validate_key_format(&literal(250)).is_ok());
        let e = validate_key_format(&literal(251)).unwrap_err().to_string();
        assert!(
            e.ends_with("is 251 bytes, longer than the 250 a key may have"),
            "{e}"
        );
        let e = validate_key_format(&"%%".repeat(129))
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with(": 258 bytes is longer than the 256 allowed"),
            "{e}"
        );
        // The late samples: a Wednesday in September writes the longest
        // names, though the epoch (a Thursday in January) writes shorter.
        assert!(validate_key_format(&"%A".repeat(27)).is_ok());
        assert!(validate_key_format(&"%A".repeat(28)).is_err());
        assert!(validate_key_format(&format!("{}%B", literal(241))).is_ok());
        assert!(validate_key_format(&format!("{}%B", literal(242))).is_err());
        assert!(validate_key_format(&format!("{}%s", literal(238))).is_ok());
        assert!(validate_key_format(&format!("{}%s", literal(239))).is_err());
    }

    #[test]
    fn a_rule_checks_keys_in_its_zone_and_never_fires_a_key_too_long() {
        let zone = "America/Argentina/ComodRivadavia";
        let def = RuleDef::new(
            vec!["a".into()],
            Grid::parse("1h").unwrap(),
            zone,
            Policy::Full,
            at("2025-06-01"),
            None,
        )
        .unwrap();
        let names = "%Q".repeat(8);
        assert!(validate_key_format(&names).is_ok(), "24 bytes in UTC");
        let e = def.check_key_format(&names).unwrap_err().to_string();
        assert!(e.contains("is 256 bytes"), "{e}");
        // Should such a format reach a firing, its key is the window's
        // start, not 256 bytes.
        let start = at("2025-06-14T03:00:00Z");
        assert_eq!(def.key(start, &names), "2025-06-14T03:00:00Z");
        assert_eq!(def.key(start, "%Y%m%d%H"), "2025061400");
    }
}
