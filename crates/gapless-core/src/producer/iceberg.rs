//! Iceberg snapshots (SPEC §10): an `append` (or a one-snapshot
//! `overwrite`) with interval properties lands its interval, a `delete`
//! with them retracts it; id `iceberg:<table uuid>:<snapshot id>`. The
//! `delete` and `append` of one overwrite are in the same batch as
//! everything else of the file, so the reprocessed interval never shows a
//! gap.

use serde_json::{json, Value};

use super::{ident, records, required_asset, text, Converted, ProducerOptions};
use crate::{Error, Instant, Result};

/// The snapshot properties that carry the interval (what the Python
/// adapter's `write_properties` writes).
pub(crate) const START_PROPERTY: &str = "interval_start";
pub(crate) const END_PROPERTY: &str = "interval_end";

/// A summary property: table metadata has `summary` as an object;
/// pyiceberg's `inspect.snapshots()` rows may have it as `[key, value]`
/// pairs or `{"key", "value"}` items.
fn property<'v>(summary: Option<&'v Value>, key: &str) -> Option<&'v str> {
    match summary? {
        Value::Object(o) => o.get(key).and_then(Value::as_str),
        Value::Array(items) => items.iter().find_map(|item| match item {
            Value::Array(kv) if kv.len() == 2 && kv[0] == key => kv[1].as_str(),
            Value::Object(o) if o.get("key").and_then(Value::as_str) == Some(key) => {
                o.get("value").and_then(Value::as_str)
            }
            _ => None,
        }),
        _ => None,
    }
}

pub(super) fn convert(values: &[Value], options: &ProducerOptions) -> Result<Converted> {
    let asset = required_asset(options)?;
    let uuid = values
        .iter()
        .find_map(|v| text(v, "table-uuid").or_else(|| text(v, "table_uuid")))
        .or(options.table_uuid.as_deref())
        .ok_or_else(|| {
            Error::new("the file has no table-uuid: give the table's UUID (--table-uuid)")
        })?;
    let mut snapshots: Vec<(usize, &Value)> = records(values, "snapshots")
        .into_iter()
        .enumerate()
        .collect();
    // Commit order: the sequence number where there is one, else file order.
    snapshots.sort_by_key(|(i, s)| {
        (
            s.get("sequence-number")
                .or_else(|| s.get("sequence_number"))
                .and_then(Value::as_i64)
                .unwrap_or(i64::MAX),
            *i,
        )
    });
    let mut out = Converted::default();
    for (i, s) in snapshots {
        let name = || format!("snapshot {}", i + 1);
        let id = ident(s, "snapshot-id")
            .or_else(|| ident(s, "snapshot_id"))
            .ok_or_else(|| Error::new(format!("{}: no snapshot-id", name())))?;
        let summary = s.get("summary");
        let operation = property(summary, "operation")
            .or_else(|| text(s, "operation"))
            .ok_or_else(|| Error::new(format!("{}: no operation", name())))?;
        let (Some(start), Some(end)) = (
            property(summary, START_PROPERTY),
            property(summary, END_PROPERTY),
        ) else {
            out.skip("no interval properties");
            continue;
        };
        let kind = match operation {
            "append" | "overwrite" => "landed",
            "delete" => "retracted",
            other => {
                out.skip(format!("operation {other}"));
                continue;
            }
        };
        let sequence = s
            .get("sequence-number")
            .or_else(|| s.get("sequence_number"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut event = json!({
            "asset": asset,
            "id": format!("iceberg:{uuid}:{id}"),
            "start": start,
            "end": end,
            "kind": kind,
            "extra": {
                "source": "iceberg",
                "snapshot_id": id,
                "operation": operation,
                "sequence_number": sequence,
            },
        });
        let millis = s
            .get("timestamp-ms")
            .or_else(|| s.get("timestamp_ms"))
            .and_then(Value::as_i64);
        if let Some(at) = millis.and_then(|ms| Instant::from_micros(ms.checked_mul(1000)?).ok()) {
            event["produced_at"] = Value::String(at.to_string());
        }
        out.events.push(event);
    }
    Ok(out)
}
