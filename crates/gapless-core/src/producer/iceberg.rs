//! Iceberg snapshots (SPEC §10): an `append` (or a one-snapshot
//! `overwrite`) with interval properties lands its interval, a `delete`
//! with them retracts it; id `iceberg:<table uuid>:<snapshot id>`. The
//! `delete` and `append` of one overwrite are in the same batch as
//! everything else of the file, so the reprocessed interval never shows a
//! gap.
//!
//! A snapshot without interval properties that the Kafka Connect sink
//! committed with a valid-through timestamp (vtts) lands `[previous vtts,
//! vtts)`: watermark mode, as Spark's. The sink sets the vtts only when
//! every partition it consumes reported a record in that commit; it is the
//! least of those partitions' last record timestamps, so successive vtts
//! tile the time before them and the first one opens the time line.

use serde_json::{json, Value};

use super::{ident, records, required_asset, text, Converted, ProducerOptions};
use crate::{parse_instant, Error, Instant, Result};

/// The snapshot properties that carry the interval (what the Python
/// adapter's `write_properties` writes).
pub(crate) const START_PROPERTY: &str = "interval_start";
pub(crate) const END_PROPERTY: &str = "interval_end";

/// The Kafka Connect sink's valid-through timestamp as Tabular's connector
/// writes it: milliseconds since the Unix epoch, as decimal text.
pub(crate) const VTTS_PROPERTY: &str = "kafka.connect.vtts";
/// The same timestamp as Apache Iceberg's connector writes it: ISO 8601
/// text (Java's `OffsetDateTime`, e.g. `2025-06-01T10:05:00.250Z`).
pub(crate) const VALID_THROUGH_PROPERTY: &str = "kafka.connect.valid-through-ts";
/// The sink's commit id (a UUID), shared by every snapshot of one commit.
pub(crate) const COMMIT_ID_PROPERTY: &str = "kafka.connect.commit-id";

/// The operations whose vtts the time line follows: what the sink commits
/// (`append`, or a row delta's `overwrite` or `delete`). Another
/// (`replace`: compaction) changes no data and is left out, vtts or not.
const DATA_OPERATIONS: [&str; 3] = ["append", "overwrite", "delete"];

/// A snapshot's valid-through timestamp and its text as written: `None`
/// without either property, an error naming the property when its text is
/// not a timestamp. `kafka.connect.vtts` wins when both are there.
fn valid_through(
    summary: Option<&Value>,
) -> Option<std::result::Result<(Instant, &str), &'static str>> {
    if let Some(text) = property(summary, VTTS_PROPERTY) {
        // Exactly what Java's Long.toString writes: no sign but `-`, no
        // spaces, so that the Python mapping reads the same texts.
        let digits = text.strip_prefix('-').unwrap_or(text);
        let millis = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<i64>().ok())
            .flatten();
        let at = millis
            .and_then(|ms| ms.checked_mul(1000))
            .and_then(|us| Instant::from_micros(us).ok());
        return Some(
            at.map(|at| (at, text))
                .ok_or("kafka.connect.vtts is not a timestamp"),
        );
    }
    let text = property(summary, VALID_THROUGH_PROPERTY)?;
    Some(
        parse_instant(text, None)
            .map(|at| (at, text))
            .map_err(|_| "kafka.connect.valid-through-ts is not a timestamp"),
    )
}

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
    // The newest vtts of the snapshots read so far (of a data operation).
    let mut previous: Option<Instant> = None;
    for (i, s) in snapshots {
        let name = || format!("snapshot {}", i + 1);
        let id = ident(s, "snapshot-id")
            .or_else(|| ident(s, "snapshot_id"))
            .ok_or_else(|| Error::new(format!("{}: no snapshot-id", name())))?;
        let summary = s.get("summary");
        let operation = property(summary, "operation")
            .or_else(|| text(s, "operation"))
            .ok_or_else(|| Error::new(format!("{}: no operation", name())))?;
        let vtts = valid_through(summary);
        let data = DATA_OPERATIONS.contains(&operation);
        let last = previous;
        if let (true, Some(Ok((at, _)))) = (data, &vtts) {
            previous = Some(previous.map_or(*at, |p| p.max(*at)));
        }
        let sequence = s
            .get("sequence-number")
            .or_else(|| s.get("sequence_number"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut event = json!({
            "asset": asset,
            "id": format!("iceberg:{uuid}:{id}"),
            "extra": {
                "source": "iceberg",
                "snapshot_id": id,
                "operation": operation,
                "sequence_number": sequence,
            },
        });
        if let (Some(start), Some(end)) = (
            property(summary, START_PROPERTY),
            property(summary, END_PROPERTY),
        ) {
            // gapless's own properties win over a vtts: the writer said
            // which interval this commit covers.
            let kind = match operation {
                "append" | "overwrite" => "landed",
                "delete" => "retracted",
                other => {
                    out.skip(format!("operation {other}"));
                    continue;
                }
            };
            event["start"] = start.into();
            event["end"] = end.into();
            event["kind"] = kind.into();
        } else {
            match (vtts, last) {
                (None, _) => {
                    out.skip("no interval properties");
                    continue;
                }
                (Some(Err(reason)), _) => {
                    out.skip(reason);
                    continue;
                }
                (Some(Ok(_)), _) if !data => {
                    out.skip(format!("operation {operation}"));
                    continue;
                }
                (Some(Ok(_)), None) => {
                    out.skip("the first vtts (it starts the time line)");
                    continue;
                }
                (Some(Ok((at, _))), Some(p)) if at <= p => {
                    out.skip("the vtts did not advance");
                    continue;
                }
                (Some(Ok((at, text))), Some(p)) => {
                    event["start"] = p.to_string().into();
                    event["end"] = at.to_string().into();
                    event["kind"] = "landed".into();
                    event["extra"]["vtts"] = text.into();
                    event["extra"]["commit_id"] =
                        property(summary, COMMIT_ID_PROPERTY).map_or(Value::Null, Value::from);
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11";
    /// 2025-06-01T10:00:00Z in milliseconds.
    const T0: i64 = 1_748_772_000_000;

    fn snapshot(seq: i64, operation: &str, props: &[(&str, String)]) -> Value {
        let mut summary = json!({"operation": operation, "added-records": "5"});
        for (k, v) in props {
            summary[*k] = Value::from(v.as_str());
        }
        json!({
            "snapshot-id": 1000 + seq,
            "sequence-number": seq,
            "timestamp-ms": T0 + seq * 60_000,
            "summary": summary,
        })
    }

    /// A commit of the sink: its commit id, its offsets and, when given,
    /// its vtts `minutes` after T0.
    fn commit(seq: i64, operation: &str, minutes: Option<i64>) -> Value {
        let mut props = vec![
            (
                COMMIT_ID_PROPERTY,
                format!("8f1c2a3e-0000-4000-8000-{seq:012}"),
            ),
            (
                "kafka.connect.offsets.control-iceberg.cg-control-sink",
                format!("{{\"0\":{seq}}}"),
            ),
        ];
        if let Some(m) = minutes {
            props.push((VTTS_PROPERTY, (T0 + m * 60_000).to_string()));
        }
        snapshot(seq, operation, &props)
    }

    fn convert_all(snapshots: Vec<Value>) -> Converted {
        let options = ProducerOptions {
            asset: Some("clicks".into()),
            ..ProducerOptions::default()
        };
        convert(
            &[json!({"table-uuid": UUID, "snapshots": snapshots})],
            &options,
        )
        .unwrap()
    }

    fn intervals(out: &Converted) -> Vec<(String, String, String)> {
        out.events
            .iter()
            .map(|e| {
                (
                    e["id"].as_str().unwrap().to_string(),
                    e["start"].as_str().unwrap().to_string(),
                    e["end"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn triples<const N: usize>(t: [(&str, &str, &str); N]) -> Vec<(String, String, String)> {
        t.iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect()
    }

    #[test]
    fn successive_vtts_tile_time_from_the_first() {
        let out = convert_all(vec![
            commit(1, "append", Some(0)),
            commit(2, "append", Some(5)),
            // A timed-out commit (or an idle partition): no vtts.
            commit(3, "append", None),
            // A row delta of an upsert.
            commit(4, "overwrite", Some(15)),
            // The vtts did not advance.
            commit(5, "append", Some(15)),
            commit(6, "delete", Some(20)),
        ]);
        assert_eq!(
            intervals(&out),
            triples([
                (
                    "iceberg:0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11:1002",
                    "2025-06-01T10:00:00Z",
                    "2025-06-01T10:05:00Z"
                ),
                (
                    "iceberg:0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11:1004",
                    "2025-06-01T10:05:00Z",
                    "2025-06-01T10:15:00Z"
                ),
                (
                    "iceberg:0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11:1006",
                    "2025-06-01T10:15:00Z",
                    "2025-06-01T10:20:00Z"
                ),
            ])
        );
        assert!(out.events.iter().all(|e| e["kind"] == "landed"));
        assert_eq!(
            out.skipped,
            [
                ("the first vtts (it starts the time line)".to_string(), 1),
                ("no interval properties".to_string(), 1),
                ("the vtts did not advance".to_string(), 1),
            ]
        );
        let first = &out.events[0];
        assert_eq!(
            first["extra"],
            json!({
                "source": "iceberg",
                "snapshot_id": "1002",
                "operation": "append",
                "sequence_number": 2,
                "vtts": (T0 + 300_000).to_string(),
                "commit_id": "8f1c2a3e-0000-4000-8000-000000000002",
            })
        );
        assert_eq!(first["produced_at"], "2025-06-01T10:02:00Z");
    }

    #[test]
    fn a_vtts_that_went_back_never_reopens_time_already_covered() {
        let out = convert_all(vec![
            commit(1, "append", Some(10)),
            commit(2, "append", Some(5)),
            commit(3, "append", Some(12)),
        ]);
        assert_eq!(
            intervals(&out),
            triples([(
                "iceberg:0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11:1003",
                "2025-06-01T10:10:00Z",
                "2025-06-01T10:12:00Z"
            )])
        );
    }

    #[test]
    fn apache_icebergs_valid_through_ts_reads_as_the_vtts() {
        let ts = |text: &str| vec![(VALID_THROUGH_PROPERTY, text.to_string())];
        let out = convert_all(vec![
            // Java's OffsetDateTime leaves out zero seconds.
            snapshot(1, "append", &ts("2025-06-01T10:00Z")),
            snapshot(2, "append", &ts("2025-06-01T10:05:00.250Z")),
        ]);
        assert_eq!(
            intervals(&out),
            triples([(
                "iceberg:0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11:1002",
                "2025-06-01T10:00:00Z",
                "2025-06-01T10:05:00.25Z"
            )])
        );
        assert_eq!(out.events[0]["extra"]["vtts"], "2025-06-01T10:05:00.250Z");
        assert_eq!(out.events[0]["extra"]["commit_id"], Value::Null);
    }

    #[test]
    fn interval_properties_win_and_a_bad_or_compacted_vtts_is_counted() {
        let mut with_interval = commit(3, "append", Some(30));
        with_interval["summary"][START_PROPERTY] = "2025-06-01T09:00:00Z".into();
        with_interval["summary"][END_PROPERTY] = "2025-06-01T09:30:00Z".into();
        let out = convert_all(vec![
            commit(1, "append", Some(0)),
            snapshot(2, "append", &[(VTTS_PROPERTY, "+300000".to_string())]),
            with_interval,
            snapshot(
                4,
                "replace",
                &[(VTTS_PROPERTY, (T0 + 3_600_000).to_string())],
            ),
            commit(5, "append", Some(40)),
        ]);
        assert_eq!(
            intervals(&out),
            triples([
                (
                    "iceberg:0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11:1003",
                    "2025-06-01T09:00:00Z",
                    "2025-06-01T09:30:00Z"
                ),
                // The interval snapshot's vtts still moved the time line.
                (
                    "iceberg:0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11:1005",
                    "2025-06-01T10:30:00Z",
                    "2025-06-01T10:40:00Z"
                ),
            ])
        );
        assert_eq!(out.events[0]["extra"].get("vtts"), None);
        assert_eq!(
            out.skipped,
            [
                ("the first vtts (it starts the time line)".to_string(), 1),
                ("kafka.connect.vtts is not a timestamp".to_string(), 1),
                ("operation replace".to_string(), 1),
            ]
        );
    }
}
