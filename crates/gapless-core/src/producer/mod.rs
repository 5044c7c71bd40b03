//! What producers write about themselves, as gapless events (SPEC §3
//! `ingest --format`, §10): Spark Structured Streaming progress, Iceberg
//! table snapshots, Airflow asset events, Delta Lake commits, OpenLineage
//! run events. The mappings are the ones the Python adapters use, so a log replayed from a file records exactly what
//! the live adapter would have.
//!
//! Each mapping turns the producer's JSON into event objects of SPEC §2
//! (asset, id, the interval in one of its forms, kind, extra, produced_at),
//! left to the ordinary ingest path to check and store as one batch; what a
//! mapping leaves out (nothing to say about time) is counted by reason.

mod airflow;
mod delta;
mod iceberg;
mod openlineage;
mod spark;

pub use openlineage::openlineage_asset;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

pub use delta::{convert_delta_log, delta_log_version};

use crate::{Error, Result};

/// A producer's record shape that [`convert`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProducerFormat {
    /// `StreamingQueryProgress` JSON (`progress.json` of each
    /// `onQueryProgress`): an array, or objects one after the other (NDJSON).
    SparkProgress,
    /// Iceberg table metadata (its `snapshots`), or the rows of pyiceberg's
    /// `table.inspect.snapshots()` as a JSON array.
    IcebergSnapshots,
    /// A page of Airflow's `GET /api/v2/assets/events` (`asset_events`), or
    /// an array of its events.
    AirflowAssetEvents,
    /// A Delta Lake table's `_delta_log/<version>.json` commits, read by
    /// [`convert_delta_log`] (a directory, not one text).
    DeltaLog,
    /// OpenLineage run events: one, an array, or NDJSON (the file
    /// transport's output); only `COMPLETE` events record.
    OpenLineage,
}

impl ProducerFormat {
    /// Every format, by name.
    pub const ALL: [ProducerFormat; 5] = [
        ProducerFormat::SparkProgress,
        ProducerFormat::IcebergSnapshots,
        ProducerFormat::AirflowAssetEvents,
        ProducerFormat::DeltaLog,
        ProducerFormat::OpenLineage,
    ];

    /// The name: `spark-progress`, `iceberg-snapshots`,
    /// `airflow-asset-events`, `delta-log`, `openlineage`.
    pub fn name(self) -> &'static str {
        match self {
            ProducerFormat::SparkProgress => "spark-progress",
            ProducerFormat::IcebergSnapshots => "iceberg-snapshots",
            ProducerFormat::AirflowAssetEvents => "airflow-asset-events",
            ProducerFormat::DeltaLog => "delta-log",
            ProducerFormat::OpenLineage => "openlineage",
        }
    }
}

impl fmt::Display for ProducerFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProducerFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<ProducerFormat> {
        ProducerFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = ProducerFormat::ALL.iter().map(|f| f.name()).collect();
                Error::invalid(
                    "format",
                    s,
                    format_args!("expected one of {}", names.join(", ")),
                )
            })
    }
}

/// Where a mapping takes what the producer's records do not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerOptions {
    /// The gapless asset (needed by Spark and Iceberg; for Airflow it
    /// replaces the name each event's asset gives).
    pub asset: Option<String>,
    /// Airflow: name assets by the Airflow asset's `name`, not its `uri`.
    pub asset_from_name: bool,
    /// Iceberg: the table's UUID when the file does not carry `table-uuid`;
    /// Delta: the table's id when no commit read has its `metaData`.
    pub table_uuid: Option<String>,
    /// Delta: the log may start after version 0 (log retention cleaned the
    /// older commits up); otherwise that is an error naming version 0.
    pub from_oldest: bool,
}

/// The events of a producer's records, and what was left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Converted {
    /// Event objects (SPEC §2), in the order they are to be stored.
    pub events: Vec<Value>,
    /// Records left out, counted by reason (in the order first seen).
    pub skipped: Vec<(String, usize)>,
}

impl Converted {
    /// Count one record left out for `reason` (reasons keep the order they
    /// were first seen in).
    pub fn skip(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        match self.skipped.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => self.skipped.push((reason, 1)),
        }
    }

    /// How many records were left out.
    pub fn skipped_count(&self) -> usize {
        self.skipped.iter().map(|(_, n)| n).sum()
    }
}

/// The events of `text`, records of `format` read from `source` (named in
/// errors).
///
/// # Errors
///
/// A one-line error naming `source`, the record and the reason: text that
/// is not JSON, a record without a field the mapping needs, an option that
/// is missing (`asset`, `table_uuid`); `delta-log`, which reads a directory
/// of commits ([`convert_delta_log`]), not one text.
///
/// # Example
///
/// ```
/// use gapless_core::{convert, ProducerFormat, ProducerOptions};
///
/// let page = r#"{"asset_events": [{"id": 7, "uri": "s3://lake/clicks", "name": "clicks",
///   "extra": {"interval_start": "2025-06-01T10:00:00Z", "interval_end": "2025-06-01T10:05:00Z"},
///   "timestamp": "2025-06-01T10:06:00Z", "partition_key": null}]}"#;
/// let out = convert(ProducerFormat::AirflowAssetEvents, page, "page.json", &ProducerOptions::default())?;
/// assert_eq!(out.events[0]["asset"], "s3://lake/clicks");
/// assert_eq!(out.events[0]["id"], "airflow:7");
/// # Ok::<(), gapless_core::Error>(())
/// ```
pub fn convert(
    format: ProducerFormat,
    text: &str,
    source: &str,
    options: &ProducerOptions,
) -> Result<Converted> {
    let values = json_values(text).map_err(|e| e.context(source))?;
    match format {
        ProducerFormat::SparkProgress => spark::convert(&values, options),
        ProducerFormat::IcebergSnapshots => iceberg::convert(&values, options),
        ProducerFormat::AirflowAssetEvents => airflow::convert(&values, options),
        ProducerFormat::DeltaLog => Err(Error::new(
            "reads a table's _delta_log directory, one file per commit: use convert_delta_log",
        )),
        ProducerFormat::OpenLineage => openlineage::convert(&values, options),
    }
    .map_err(|e| e.context(format_args!("{source}: {format}")))
}

/// The JSON values of `text`: one document, or several one after the other
/// (NDJSON).
fn json_values(text: &str) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for (i, v) in serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .enumerate()
    {
        out.push(v.map_err(|e| Error::new(format!("JSON value {}: {e}", i + 1)).with_source(e))?);
    }
    Ok(out)
}

/// The records of `values`: each array's items, each other value itself;
/// an object that holds its records under `key` gives those.
fn records<'v>(values: &'v [Value], key: &str) -> Vec<&'v Value> {
    let mut out = Vec::new();
    for v in values {
        match v {
            Value::Array(items) => out.extend(items),
            Value::Object(o) => match o.get(key) {
                Some(Value::Array(items)) => out.extend(items),
                _ => out.push(v),
            },
            other => out.push(other),
        }
    }
    out
}

/// The asset the options name, which the format needs.
fn required_asset(options: &ProducerOptions) -> Result<&str> {
    options
        .asset
        .as_deref()
        .ok_or_else(|| Error::new("needs the asset to record into (--asset)"))
}

/// A string field of `record`.
fn text<'v>(record: &'v Value, field: &str) -> Option<&'v str> {
    record.get(field).and_then(Value::as_str)
}

/// An identifier field as text: a string as it is, an integer exactly
/// (64-bit ids never pass through a float).
fn ident(record: &Value, field: &str) -> Option<String> {
    match record.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}
