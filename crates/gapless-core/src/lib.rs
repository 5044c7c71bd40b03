//! The pure coverage engine of gapless.
//!
//! gapless records which time interval each event of a data asset covers and
//! answers: is `[start, end)` fully covered, and if not, which gaps are
//! missing? This crate is that answer as a library: no I/O, no wall clock, no
//! async. Storage, the server and the command line are built on it.
//!
//! # Layout
//!
//! - [`Instant`], [`Interval`]: microsecond instants (years 0001–9999) and
//!   half-open intervals that cannot be empty or reversed (`instant.rs`);
//!   an instant's canonical text written and read without jiff's general
//!   printer and parser, jiff reading every other form (`instant/text.rs`).
//! - [`IntervalSet`]: sorted, disjoint, non-adjacent runs with union,
//!   difference, complement, intersection, measure and gap queries
//!   (`set/mod.rs`), stored in chunks of runs (`set/runs.rs`) with a buffer
//!   of inserts folded in by a radix sort and merge (`set/merge.rs`).
//! - [`Coverage`], [`CoverageReport`]: latest-wins ledger state: events applied
//!   in sequence order, then coverage, gaps, covered ratio and frontier
//!   (`coverage.rs`).
//! - [`buckets`]: coverage summarised to equal parts of a range (covered,
//!   retracted, missing microseconds), for pictures (`buckets.rs`).
//! - [`segments`]: which event is the latest on each maximal part of a range
//!   (`segments.rs`).
//! - [`Grid`]: calendar windows in an IANA time zone (`grid.rs`).
//! - [`Policy`]: when a window counts as complete (`policy.rs`).
//! - [`Rule`]: which windows of which assets a rule watches ([`RuleDef`]),
//!   where its firings go ([`RuleSettings`]), how a window is judged
//!   ([`Judgement`]) and how its state changes ([`WindowState`],
//!   [`FiringKind`]) (`rule.rs`).
//! - [`Duration`]: fixed and calendar lengths of time, their arithmetic and
//!   canonical text (`duration/mod.rs`); lexing its ISO 8601 and short forms
//!   (`duration/lex.rs`).
//! - parsing per SPEC §2 (`parse/`): the shared error quoting (`mod.rs`),
//!   instants (`instant.rs`), ISO 8601 intervals (`interval.rs`) and time
//!   zones (`zone.rs`).
//! - events (`event/`): [`EventKind`] and [`NewEvent`], the validated event
//!   (`mod.rs`); asset names and event ids (`names.rs`); [`AssetDecl`], what
//!   an asset declares (`decl.rs`); [`RawEvent`], the JSON object forms and
//!   their resolution against the declaration (`wire.rs`).
//! - producers' own records as events (`producer/`): [`convert`] of Spark
//!   progress (`spark.rs`), Iceberg snapshots (`iceberg.rs`), Airflow
//!   asset events (`airflow.rs`) and OpenLineage run events
//!   (`openlineage.rs`) in a [`ProducerFormat`], and [`convert_delta_log`]
//!   of a Delta table's commits (`delta.rs`).
//! - time-unit constants such as [`MICROS_PER_SECOND`] and [`MICROS_PER_DAY`]
//!   (`units.rs`).
//! - [`ConfigValue`]: configuration files (tokens, targets) as TOML or JSON
//!   values deserialized into their readers' types, each problem a
//!   [`ConfigError`] with the path to the bad value, worded in the file's
//!   syntax (`config.rs`).
//! - [`Error`]: the one error type, a one-line message naming input and reason
//!   that keeps its cause: the error a context wraps, jiff's or serde's error
//!   under a reason they found (`error.rs`).

mod buckets;
mod config;
mod coverage;
mod duration;
mod error;
mod event;
mod grid;
mod instant;
mod parse;
mod policy;
mod producer;
mod rule;
mod segments;
mod set;
mod units;

pub use buckets::{bucket_bounds, buckets, Bucket};
pub use config::{config_entry, ConfigError, ConfigProblem, ConfigStep, ConfigSyntax, ConfigValue};
pub use coverage::{Coverage, CoverageReport};
pub use duration::Duration;
pub use error::{Error, Result};
pub use event::{
    validate_asset_name, AssetDecl, EventKind, NewEvent, RawEvent, MAX_EXTRA_BYTES,
    MAX_EXTRA_DEPTH, MAX_NAME_BYTES,
};
pub use grid::{Grid, GridUnit};
pub use instant::{Instant, Interval};
pub use parse::{
    parse_instant, parse_interval, parse_local_instant, parse_local_interval, parse_time_zone,
};
pub use policy::Policy;
pub use producer::{
    convert, convert_delta_log, delta_log_version, openlineage_asset, Converted, ProducerFormat,
    ProducerOptions,
};
pub use rule::{
    format_key, validate_key_format, validate_rule_name, FiringKind, Judgement, Rule, RuleDef,
    RuleSettings, WindowState, DEFAULT_KEY_FORMAT, MAX_KEY_BYTES, MAX_KEY_FORMAT_BYTES,
    MAX_RULE_NAME_BYTES,
};
pub use segments::{segments, PagedSegments, Segment, SegmentSource};
pub use set::IntervalSet;
pub use units::{
    MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MILLISECOND, MICROS_PER_MINUTE, MICROS_PER_SECOND,
    NANOS_PER_MICROSECOND, SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MINUTE,
};
