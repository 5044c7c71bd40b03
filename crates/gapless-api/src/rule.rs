//! The rule questions (SPEC §7): requests and answers of `rule set`,
//! `rule show`, `rule delete`, `rules`, `firings` and `wait`.

use gapless_core::{FiringKind, Instant, Interval};
use serde::{Deserialize, Serialize};

/// `gapless rule set` · `PUT /v1/rules/{name}`: record a rule, or change
/// the settings of one (its definition cannot change).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RuleSetRequest {
    /// The rule's name: 1 to 128 of A-Z a-z 0-9 . _ -
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "NAME"))]
    pub name: String,
    /// The assets it watches (A,B,...): a window counts only where every
    /// one covers it.
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ',', required = true, num_args = 1..))]
    pub assets: Vec<String>,
    /// The grid: Nm, Nh, Nd, Nw, Nmo, Ny.
    #[cfg_attr(feature = "clap", arg(long))]
    pub every: String,
    /// IANA time zone of the calendar, of keys and of bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// When a window counts as complete: full (default), 'ratio>=R' or
    /// 'gap<D' (quote it in a shell); or use --min-ratio / --max-gap.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Complete when at least this share is covered (0 to 1).
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["policy", "max_gap"]))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub min_ratio: Option<f64>,
    /// Complete when every gap is shorter than this duration (10m, PT10M).
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["policy", "min_ratio"]))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gap: Option<String>,
    /// The first window starts at or after this instant.
    #[cfg_attr(feature = "clap", arg(long))]
    pub from: String,
    /// The last window ends at or before this instant (default: none).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// A window not complete this long after its end fires `late` (30m, PT1H).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// Where firings are delivered: a target of the targets file.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The strftime format of firing keys (default %Y-%m-%dT%H:%M:%S).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_format: Option<String>,
}

/// `gapless rule show`, `gapless rule delete` · `GET`, `DELETE
/// /v1/rules/{name}`: one rule by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct RuleRequest {
    /// The rule's name.
    #[cfg_attr(feature = "clap", arg(value_name = "NAME"))]
    pub name: String,
}

/// `gapless rule windows` · `GET /v1/rules/{name}/windows`: the rule's
/// windows that overlap a range, each judged now as the rule judges it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct RuleWindowsRequest {
    /// The rule's name.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "NAME"))]
    pub name: String,
    /// Start of the range: RFC 3339 (2025-06-01T10:05:00Z), a naive date-time (2025-06-01T10:05, UTC), or a bare date (2025-06-01, midnight in tz).
    #[cfg_attr(feature = "clap", arg(long))]
    pub start: String,
    /// End of the range, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    pub end: String,
    /// IANA time zone of bare dates (default UTC; the windows follow the
    /// rule's own zone).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `rule windows`: a rule's windows in a range, judged on the joint
/// coverage of its assets under its policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleWindowsAnswer {
    /// The rule.
    pub rule: String,
    /// Its assets, in name order.
    pub assets: Vec<String>,
    /// Its grid, canonical.
    pub every: String,
    /// Its calendar's zone.
    pub tz: String,
    /// Its policy, canonical.
    pub policy: String,
    /// The windows in time order (keys in the rule's key format); a window
    /// with nothing covered is never complete.
    pub windows: Vec<crate::WindowAnswer>,
}

/// `gapless rules` · `GET /v1/rules`: one page of the rules in name order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct RulesRequest {
    /// Only rules whose name starts with this.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Rules per page, 1 to 1000 (default 100; fewer once their asset
    /// lists reach 16 MiB). On the command line, --limit or --after asks
    /// for one page; without them every page is printed.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<u32>, minimum = 1, maximum = 1000))]
    pub limit: Option<String>,
    /// The `next` cursor of the previous page.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// `gapless firings` · `GET /v1/firings`: one page of firings in ledger
/// order, optionally waiting for the first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct FiringsRequest {
    /// Only this rule's firings.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Only firings after this cursor (a firing's `seq`, or `next`).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<i64>, minimum = 0))]
    pub after: Option<String>,
    /// Firings per page, 1 to 10000 (default 1000).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<u32>, minimum = 1, maximum = 10000))]
    pub limit: Option<String>,
    /// Wait up to this long (30s, PT1M) for a firing after the cursor when
    /// there is none yet; an empty page after that.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    /// The newest firings (after the cursor) instead of the oldest: the
    /// page's last `limit`, still in ledger order; `next` is then null
    /// (later firings follow `after` its last `seq`).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub newest: bool,
}

/// `gapless wait` · `GET /v1/assets/{asset}/wait`: block until a range is
/// complete under a policy, or a timeout passes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct WaitRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Start of the range: RFC 3339, a naive date-time (read in tz) or a
    /// bare date.
    #[cfg_attr(feature = "clap", arg(long))]
    pub start: String,
    /// End of the range, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    pub end: String,
    /// When the range counts as complete: full (default), 'ratio>=R' or
    /// 'gap<D' (quote it in a shell); or use --min-ratio / --max-gap.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Complete when at least this share is covered (0 to 1).
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["policy", "max_gap"]))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<f64>, minimum = 0, maximum = 1))]
    pub min_ratio: Option<String>,
    /// Complete when every gap is shorter than this duration (10m, PT10M).
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["policy", "min_ratio"]))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gap: Option<String>,
    /// IANA time zone of naive instants and bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// Give up after this long (default 1h on the command line; over HTTP
    /// at most 20s a request, the client asks again).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

impl WaitRequest {
    /// The check each wait asks, as often as it must: the same range,
    /// policy and zone.
    pub fn check(&self) -> crate::CoverageRequest {
        crate::CoverageRequest {
            asset: self.asset.clone(),
            start: self.start.clone(),
            end: self.end.clone(),
            policy: self.policy.clone(),
            min_ratio: self.min_ratio.clone(),
            max_gap: self.max_gap.clone(),
            tz: self.tz.clone(),
        }
    }
}

/// A rule, as `rule show --json` prints it and `GET /v1/rules/{name}`
/// answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleAnswer {
    /// The name.
    pub rule: String,
    /// The assets watched, in name order.
    pub assets: Vec<String>,
    /// The grid, canonical.
    pub every: String,
    /// The calendar's zone.
    pub tz: String,
    /// The policy, canonical.
    pub policy: String,
    /// The earliest window start.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub from: Instant,
    /// The latest window end, or null.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub until: Option<Instant>,
    /// The deadline (ISO 8601), or null.
    pub deadline: Option<String>,
    /// The target firings are delivered to, or null.
    pub target: Option<String>,
    /// The strftime format of keys.
    pub key_format: String,
}

/// What `rule set` did: `created`, `updated` (new settings) or
/// `unchanged`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum RuleOutcome {
    /// A new rule.
    Created,
    /// New settings for an existing rule.
    Updated,
    /// The same rule again.
    Unchanged,
}

/// `rule set`: the rule now in force, what was done, and how many windows
/// fired at once (a new rule's already complete windows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleSetAnswer {
    /// The rule.
    #[serde(flatten)]
    pub rule: RuleAnswer,
    /// What was done.
    pub outcome: RuleOutcome,
    /// Firings recorded by this call.
    pub firings: u64,
}

/// `rules`: one page of the rules, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RulesAnswer {
    /// The rules.
    pub rules: Vec<RuleAnswer>,
    /// The cursor of the next page (pass it as `after`), or null when this
    /// is the last.
    #[serde(default)]
    pub next: Option<String>,
}

/// `rule delete`: the rule is gone, with its firings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleDeletedAnswer {
    /// The name.
    pub rule: String,
    /// Always true: an unknown rule is an error.
    pub deleted: bool,
}

/// A firing's delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryAnswer {
    /// The target, or null.
    pub target: Option<String>,
    /// `none` (no target), `pending`, `delivered` or `failed`.
    pub state: String,
    /// Attempts made.
    pub attempts: u32,
    /// Why the last attempt failed, or null.
    pub last_error: Option<String>,
}

/// A window as `{"start", "end"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WindowRef {
    /// Start.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// End (exclusive).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
}

impl From<Interval> for WindowRef {
    fn from(w: Interval) -> WindowRef {
        WindowRef {
            start: w.start(),
            end: w.end(),
        }
    }
}

/// One firing: a window of a rule changed state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FiringAnswer {
    /// Its place in the ledger's order of firings (a cursor).
    pub seq: i64,
    /// The rule.
    pub rule: String,
    /// `complete`, `incomplete` or `late`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "complete"))]
    pub kind: FiringKind,
    /// The window.
    pub window: WindowRef,
    /// The window's key.
    pub key: String,
    /// 1 the first time complete, then 2, …
    pub generation: u32,
    /// The window's joint covered share when it fired.
    pub covered_ratio: f64,
    /// When it was recorded.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub recorded_at: Instant,
    /// Its delivery.
    pub delivery: DeliveryAnswer,
}

/// `firings`: one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FiringsAnswer {
    /// In ledger order.
    pub firings: Vec<FiringAnswer>,
    /// The cursor of the next page when more may follow, else null.
    pub next: Option<i64>,
}
