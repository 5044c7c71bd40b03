//! How a rule and a firing are stored, the same in both backends: grid,
//! policy, deadline and zone as their canonical text, the assets as a JSON
//! array of names (in name order), instants as microseconds, kinds and
//! delivery states as small integers. Reading back checks every value, so
//! that damage is reported, not a panic.

use gapless_core::{Duration, FiringKind, Grid, Policy, Rule, RuleDef, RuleSettings};

use super::{Delivery, DeliveryState, Firing, StoredRule};
use crate::codec::{instant, interval};
use crate::error::corrupt;
use crate::{Result, StoreError};

/// The columns of a stored rule, in the order [`RuleRow`] holds them.
macro_rules! rule_columns {
    () => {
        "name, assets, every, tz, policy, from_us, until_us, deadline, target, key_format, created_us"
    };
}
pub(crate) use rule_columns;

/// The columns of a stored firing, in the order [`FiringRow`] holds them
/// (`r` is the rules table, `f` the firings table).
macro_rules! firing_columns {
    () => {
        "f.seq, r.name, f.kind, f.start_us, f.end_us, f.key, f.generation, f.covered_ratio, \
         f.recorded_us, f.target, f.state, f.attempts, f.last_error"
    };
}
pub(crate) use firing_columns;

/// A rule's columns as written.
#[derive(Debug)]
pub(crate) struct RuleColumns {
    pub(crate) name: String,
    pub(crate) assets: String,
    pub(crate) every: String,
    pub(crate) tz: String,
    pub(crate) policy: String,
    pub(crate) from: i64,
    pub(crate) until: Option<i64>,
    pub(crate) deadline: Option<String>,
    pub(crate) target: Option<String>,
    pub(crate) key_format: String,
}

/// The columns `rule` is stored as, after checking its settings.
///
/// # Errors
///
/// [`StoreError::Invalid`] for bad settings or a bad name.
pub(crate) fn encode_rule(rule: &Rule) -> Result<RuleColumns> {
    gapless_core::validate_rule_name(&rule.name).map_err(|e| StoreError::Invalid(e.to_string()))?;
    rule.settings
        .check()
        .map_err(|e| StoreError::Invalid(format!("rule {:?}: {e}", rule.name)))?;
    let d = &rule.def;
    Ok(RuleColumns {
        name: rule.name.clone(),
        assets: serde_json::to_string(d.assets()).expect("names serialize"),
        every: d.grid().to_string(),
        tz: d.tz_name().to_string(),
        policy: d.policy().to_string(),
        from: d.from().as_micros(),
        until: d.until().map(|u| u.as_micros()),
        deadline: rule.settings.deadline.map(|d| d.to_iso8601()),
        target: rule.settings.target.clone(),
        key_format: rule.settings.key_format.clone(),
    })
}

/// A stored rule's columns as read ([`rule_columns!`] order).
#[derive(Debug)]
pub(crate) struct RuleRow {
    pub(crate) columns: RuleColumns,
    pub(crate) created: i64,
}

/// The rule of a stored row.
pub(crate) fn decode_rule(row: RuleRow) -> Result<StoredRule> {
    let c = row.columns;
    let bad = |what: &str| corrupt(format_args!("{what} of rule {:?}", c.name));
    let assets: Vec<String> = serde_json::from_str(&c.assets).map_err(|_| bad("asset list"))?;
    let grid = Grid::parse(&c.every).map_err(|_| bad("grid"))?;
    let policy = Policy::parse(&c.policy).map_err(|_| bad("policy"))?;
    let from = instant(c.from, "rule from")?;
    let until = c.until.map(|u| instant(u, "rule until")).transpose()?;
    let def = RuleDef::new(assets, grid, &c.tz, policy, from, until).map_err(|e| {
        StoreError::backend(
            format!(
                "the ledger holds rule {:?}, which this build cannot read: {e}",
                c.name
            ),
            e,
        )
    })?;
    let deadline = c
        .deadline
        .map(|d| Duration::parse(&d).map_err(|_| bad("deadline")))
        .transpose()?;
    Ok(StoredRule {
        rule: Rule {
            name: c.name,
            def,
            settings: RuleSettings {
                deadline,
                target: c.target,
                key_format: c.key_format,
            },
        },
        created_at: instant(row.created, "rule created_at")?,
    })
}

/// The stored integer of a firing kind.
pub(crate) const fn firing_kind_code(kind: FiringKind) -> i16 {
    match kind {
        FiringKind::Complete => 0,
        FiringKind::Incomplete => 1,
        FiringKind::Late => 2,
    }
}

fn firing_kind_of(code: i64) -> Result<FiringKind> {
    match code {
        0 => Ok(FiringKind::Complete),
        1 => Ok(FiringKind::Incomplete),
        2 => Ok(FiringKind::Late),
        _ => Err(corrupt(format_args!("firing kind {code}"))),
    }
}

/// The stored integer of a delivery state.
pub(crate) const fn state_code(state: DeliveryState) -> i16 {
    match state {
        DeliveryState::None => 0,
        DeliveryState::Pending => 1,
        DeliveryState::Delivered => 2,
        DeliveryState::Failed => 3,
    }
}

fn state_of(code: i64) -> Result<DeliveryState> {
    match code {
        0 => Ok(DeliveryState::None),
        1 => Ok(DeliveryState::Pending),
        2 => Ok(DeliveryState::Delivered),
        3 => Ok(DeliveryState::Failed),
        _ => Err(corrupt(format_args!("delivery state {code}"))),
    }
}

/// A stored firing's columns as read ([`firing_columns!`] order).
#[derive(Debug)]
pub(crate) struct FiringRow {
    pub(crate) seq: i64,
    pub(crate) rule: String,
    pub(crate) kind: i64,
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) key: String,
    pub(crate) generation: i64,
    pub(crate) covered_ratio: f64,
    pub(crate) recorded: i64,
    pub(crate) target: Option<String>,
    pub(crate) state: i64,
    pub(crate) attempts: i64,
    pub(crate) last_error: Option<String>,
}

/// The firing of a stored row.
pub(crate) fn decode_firing(row: FiringRow) -> Result<Firing> {
    Ok(Firing {
        seq: row.seq,
        rule: row.rule,
        kind: firing_kind_of(row.kind)?,
        window: interval(row.start, row.end, "firing window")?,
        key: row.key,
        generation: u32::try_from(row.generation).map_err(|_| corrupt("firing generation"))?,
        covered_ratio: row.covered_ratio,
        recorded_at: instant(row.recorded, "firing recorded_at")?,
        delivery: Delivery {
            target: row.target,
            state: state_of(row.state)?,
            attempts: u32::try_from(row.attempts).map_err(|_| corrupt("delivery attempts"))?,
            last_error: row.last_error,
            reclaimed: false,
        },
    })
}
