//! Spark Structured Streaming progress, watermark mode (SPEC §10): per
//! query, batch b with watermark W_b after a batch with watermark W_p
//! (both real, W_b > W_p) covers `[W_p, W_b)`, id `<query id>:<b>`.
//!
//! A micro-batch's `eventTime.min`/`max` are closed and leave holes
//! between batches; the watermark tiles time without any, and says what is
//! complete rather than what was seen.

use serde_json::{json, Value};

use super::{ident, records, required_asset, text, Converted, ProducerOptions};
use crate::{parse_instant, Error, Instant, Result};

/// A progress as the mapping reads it.
struct Progress<'v> {
    query: String,
    batch: i64,
    /// `None`: no watermark yet (absent, or the epoch placeholder).
    watermark: Option<(Instant, &'v str)>,
    record: &'v Value,
}

fn progress(record: &Value, index: usize) -> Result<Progress<'_>> {
    let name = || format!("progress {}", index + 1);
    let query = ident(record, "id")
        .ok_or_else(|| Error::new(format!("{}: no query id (\"id\")", name())))?;
    let batch = record
        .get("batchId")
        .and_then(Value::as_i64)
        .ok_or_else(|| Error::new(format!("{}: no batchId", name())))?;
    let watermark = match record.get("eventTime").and_then(|e| text(e, "watermark")) {
        None => None,
        Some(w) => {
            let at = parse_instant(w, None)
                .map_err(|e| e.context(format_args!("{}: eventTime.watermark", name())))?;
            (at.as_micros() != 0).then_some((at, w))
        }
    };
    Ok(Progress {
        query,
        batch,
        watermark,
        record,
    })
}

pub(super) fn convert(values: &[Value], options: &ProducerOptions) -> Result<Converted> {
    let asset = required_asset(options)?;
    let all = records(values, "progress")
        .into_iter()
        .enumerate()
        .map(|(i, r)| progress(r, i))
        .collect::<Result<Vec<_>>>()?;
    // Per query, in order of first appearance; batches in order, a batch
    // repeated (a re-run after a restart) once.
    let mut queries: Vec<String> = Vec::new();
    for p in &all {
        if !queries.contains(&p.query) {
            queries.push(p.query.clone());
        }
    }
    let mut out = Converted::default();
    for q in &queries {
        let mut mine: Vec<&Progress<'_>> = all.iter().filter(|p| &p.query == q).collect();
        mine.sort_by_key(|p| p.batch);
        mine.dedup_by_key(|p| p.batch);
        let mut previous: Option<Instant> = None;
        for p in mine {
            match (previous, p.watermark) {
                (_, None) => out.skip("no watermark yet"),
                (None, Some(_)) => out.skip("the first watermark (it starts the time line)"),
                (Some(w_p), Some((w_b, _))) if w_b <= w_p => out.skip("the watermark did not move"),
                (Some(w_p), Some((_, end))) => out.events.push(event(asset, p, w_p, end)),
            }
            if let Some((w, _)) = p.watermark {
                previous = Some(previous.map_or(w, |p| p.max(w)));
            }
        }
    }
    Ok(out)
}

fn event(asset: &str, p: &Progress<'_>, start: Instant, end: &str) -> Value {
    let r = p.record;
    let offsets: Vec<Value> = r
        .get("sources")
        .and_then(Value::as_array)
        .map(|sources| {
            sources
                .iter()
                .map(|s| {
                    json!({
                        "description": s.get("description").cloned().unwrap_or(Value::Null),
                        "start": s.get("startOffset").cloned().unwrap_or(Value::Null),
                        "end": s.get("endOffset").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "asset": asset,
        "id": format!("{}:{}", p.query, p.batch),
        "start": start.to_string(),
        "end": end,
        "extra": {
            "source": "spark",
            "query_id": p.query,
            "run_id": r.get("runId").cloned().unwrap_or(Value::Null),
            "batch_id": p.batch,
            "num_input_rows": r.get("numInputRows").cloned().unwrap_or(Value::Null),
            "offsets": offsets,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(query: &str, batch: i64, watermark: Option<&str>) -> Value {
        let mut p = json!({"id": query, "runId": "r", "batchId": batch, "numInputRows": 1});
        if let Some(w) = watermark {
            p["eventTime"] = json!({"watermark": w});
        }
        p
    }

    fn intervals(values: Vec<Value>) -> Vec<(String, String, String)> {
        let options = ProducerOptions {
            asset: Some("a".into()),
            ..ProducerOptions::default()
        };
        convert(&[Value::Array(values)], &options)
            .unwrap()
            .events
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

    #[test]
    fn consecutive_watermarks_tile_time_per_query() {
        let epoch = Some("1970-01-01T00:00:00.000Z");
        let got = intervals(vec![
            progress("q", 0, None),
            progress("q", 1, epoch),
            progress("q", 2, Some("2025-06-01T10:00:00Z")),
            progress("p", 7, Some("2025-06-01T09:00:00Z")),
            // Out of order in the log, and batch 3 re-run after a restart.
            progress("q", 4, Some("2025-06-01T10:10:00Z")),
            progress("q", 3, Some("2025-06-01T10:05:00Z")),
            progress("q", 3, Some("2025-06-01T10:05:00Z")),
            // The watermark did not move.
            progress("q", 5, Some("2025-06-01T10:10:00Z")),
            progress("p", 8, Some("2025-06-01T09:30:00Z")),
        ]);
        assert_eq!(
            got,
            [
                ("q:3", "2025-06-01T10:00:00Z", "2025-06-01T10:05:00Z"),
                ("q:4", "2025-06-01T10:05:00Z", "2025-06-01T10:10:00Z"),
                ("p:8", "2025-06-01T09:00:00Z", "2025-06-01T09:30:00Z"),
            ]
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        );
    }

    #[test]
    fn a_progress_without_batch_id_is_named() {
        let options = ProducerOptions {
            asset: Some("a".into()),
            ..ProducerOptions::default()
        };
        let e = convert(&[json!([{"id": "q"}])], &options).unwrap_err();
        assert_eq!(e.message(), "progress 1: no batchId");
    }
}
