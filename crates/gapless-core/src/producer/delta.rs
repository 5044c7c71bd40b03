//! Delta Lake commits (SPEC §10): the `_delta_log/<version>.json` files of
//! a table, in version order. A commit whose `commitInfo` carries the
//! interval (what the Python adapter's `commit_properties` writes as
//! custom metadata) lands it when it writes data (`WRITE` in any mode, so
//! an append, an overwrite and a `replaceWhere` alike; `MERGE`, `UPDATE`,
//! `STREAMING UPDATE`, the `… AS SELECT` creations) and retracts it when it
//! deletes (`DELETE`, `TRUNCATE`). One commit is one event: an overwrite of
//! an hour lands the hour over what was there, so coverage never shows a
//! gap and a rule on it neither fires `incomplete` nor fires twice.
//!
//! The id is `delta:<table id>:<version>`, or, for a commit that carries a
//! streaming writer's `txn` action, `delta:<table id>:txn:<app id>:<txn
//! version>`: the writer's own idempotency key, so a batch a restarted
//! writer commits again (a `txn` version not above the one the app already
//! committed) is left out instead of landing twice.
//!
//! Versions must run without a hole from version 0 (or from the oldest
//! file left, when the caller says so): commits that log retention cleaned
//! up are an error naming the first missing version, never a silent gap.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::{json_values, Converted, ProducerOptions};
use crate::{Error, Instant, Result};

/// The `commitInfo` keys that carry the interval (what the Python
/// adapter's `commit_properties` writes).
const START_PROPERTY: &str = "interval_start";
const END_PROPERTY: &str = "interval_end";

/// What a commit's operation does to the interval it names: `Some(true)`
/// lands it, `Some(false)` retracts it, `None` says nothing about data.
fn lands(operation: &str) -> Option<bool> {
    match operation {
        "WRITE"
        | "STREAMING UPDATE"
        | "MERGE"
        | "UPDATE"
        | "CREATE TABLE AS SELECT"
        | "REPLACE TABLE AS SELECT"
        | "CREATE OR REPLACE TABLE AS SELECT" => Some(true),
        "DELETE" | "TRUNCATE" => Some(false),
        _ => None,
    }
}

/// The version of a `_delta_log` file name: `<20 digits>.json` (checkpoints,
/// `_last_checkpoint`, checksums and temporary files are not commits).
///
/// # Example
///
/// ```
/// use gapless_core::delta_log_version;
///
/// assert_eq!(delta_log_version("00000000000000000012.json"), Some(12));
/// assert_eq!(delta_log_version("00000000000000000010.checkpoint.parquet"), None);
/// assert_eq!(delta_log_version("_last_checkpoint"), None);
/// ```
pub fn delta_log_version(file_name: &str) -> Option<u64> {
    let digits = file_name.strip_suffix(".json")?;
    if digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}

/// The events of a Delta table's commits: `(version, text of the commit
/// file)` in any order, read from `source` (named in errors). With
/// `options.from_oldest` the log may start after version 0 (log retention
/// cleaned the older commits up); without it, it must start at 0.
///
/// # Errors
///
/// A one-line error naming `source` and the reason: a version missing
/// before the newest (the first one named), a commit file that is not JSON
/// lines, an interval property that is not text, no table id (neither a
/// `metaData` action among the commits nor `options.table_uuid`), no asset.
///
/// # Example
///
/// ```
/// use gapless_core::{convert_delta_log, ProducerOptions};
///
/// let v0 = r#"{"commitInfo": {"timestamp": 1748772300000, "operation": "WRITE",
///   "operationParameters": {"mode": "Append"},
///   "interval_start": "2025-06-01T10:00:00Z", "interval_end": "2025-06-01T10:05:00Z"}}
/// {"metaData": {"id": "3f1c", "format": {"provider": "parquet"}}}"#;
/// let options = ProducerOptions { asset: Some("clicks".into()), ..Default::default() };
/// let out = convert_delta_log(&[(0, v0.to_string())], "t/_delta_log", &options)?;
/// assert_eq!(out.events[0]["id"], "delta:3f1c:0");
/// assert_eq!(out.events[0]["kind"], "landed");
/// # Ok::<(), gapless_core::Error>(())
/// ```
pub fn convert_delta_log(
    commits: &[(u64, String)],
    source: &str,
    options: &ProducerOptions,
) -> Result<Converted> {
    convert(commits, options).map_err(|e| e.context(format_args!("{source}: delta-log")))
}

/// One commit's actions.
struct Commit {
    version: u64,
    actions: Vec<Value>,
}

impl Commit {
    fn action(&self, name: &str) -> Option<&Map<String, Value>> {
        self.actions
            .iter()
            .find_map(|a| a.get(name).and_then(Value::as_object))
    }
}

fn convert(commits: &[(u64, String)], options: &ProducerOptions) -> Result<Converted> {
    let asset = super::required_asset(options)?;
    let mut parsed = Vec::with_capacity(commits.len());
    for (version, text) in commits {
        let actions =
            json_values(text).map_err(|e| e.context(format_args!("version {version}")))?;
        parsed.push(Commit {
            version: *version,
            actions,
        });
    }
    parsed.sort_by_key(|c| c.version);
    if parsed.is_empty() {
        return Ok(Converted::default());
    }
    check_versions(&parsed, options.from_oldest)?;
    let table_id = parsed
        .iter()
        .rev()
        .find_map(|c| c.action("metaData")?.get("id")?.as_str())
        .or(options.table_uuid.as_deref())
        .ok_or_else(|| {
            Error::new(
                "no metaData action with the table id among the commits (the log was cleaned up \
                 into a checkpoint): give the table's id (--table-uuid)",
            )
        })?;
    let mut out = Converted::default();
    // The highest txn version each app has landed an event with.
    let mut txn_seen: HashMap<String, i64> = HashMap::new();
    for commit in &parsed {
        if let Some(event) = commit_event(commit, asset, table_id, &mut txn_seen, &mut out)? {
            out.events.push(event);
        }
    }
    Ok(out)
}

/// Versions without a hole, from 0 unless `from_oldest`.
fn check_versions(commits: &[Commit], from_oldest: bool) -> Result<()> {
    let Some(first) = commits.first() else {
        return Ok(());
    };
    let start = if from_oldest { first.version } else { 0 };
    for (expected, c) in (start..).zip(commits) {
        if c.version != expected {
            let hint = if expected == 0 && !from_oldest {
                format!(
                    " (log retention cleaned it up; the oldest commit left is version {}: \
                     --from-oldest starts there)",
                    first.version
                )
            } else {
                String::new()
            };
            return Err(Error::new(format!(
                "version {expected} is not in the log{hint}"
            )));
        }
    }
    Ok(())
}

/// The event of one commit, or `None` (counted in `out.skipped`) when it
/// says nothing about time.
fn commit_event(
    commit: &Commit,
    asset: &str,
    table_id: &str,
    txn_seen: &mut HashMap<String, i64>,
    out: &mut Converted,
) -> Result<Option<Value>> {
    let version = commit.version;
    let Some(info) = commit.action("commitInfo") else {
        out.skip("no commitInfo");
        return Ok(None);
    };
    let property = |key: &str| -> Result<Option<&str>> {
        match info.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(Error::new(format!(
                "version {version}: commitInfo {key} is {other}, not RFC 3339 text"
            ))),
        }
    };
    let (Some(start), Some(end)) = (property(START_PROPERTY)?, property(END_PROPERTY)?) else {
        out.skip("no interval properties");
        return Ok(None);
    };
    let operation = info.get("operation").and_then(Value::as_str).unwrap_or("");
    let Some(landed) = lands(operation) else {
        out.skip(format!("operation {operation}"));
        return Ok(None);
    };
    let txn = commit.action("txn").and_then(|t| {
        Some((
            t.get("appId")?.as_str()?.to_string(),
            t.get("version")?.as_i64()?,
        ))
    });
    let mut extra = json!({
        "source": "delta",
        "table_id": table_id,
        "version": version,
        "operation": operation,
    });
    let parameters = info.get("operationParameters");
    for key in ["mode", "predicate"] {
        if let Some(v) = parameters.and_then(|p| p.get(key)).filter(|v| !v.is_null()) {
            extra[key] = v.clone();
        }
    }
    let id = match &txn {
        Some((app, txn_version)) => {
            if txn_seen.get(app).is_some_and(|seen| *txn_version <= *seen) {
                out.skip("txn version already committed");
                return Ok(None);
            }
            txn_seen.insert(app.clone(), *txn_version);
            extra["app_id"] = Value::String(app.clone());
            extra["txn_version"] = Value::from(*txn_version);
            format!("delta:{table_id}:txn:{app}:{txn_version}")
        }
        None => format!("delta:{table_id}:{version}"),
    };
    let mut event = json!({
        "asset": asset,
        "id": id,
        "start": start,
        "end": end,
        "kind": if landed { "landed" } else { "retracted" },
        "extra": extra,
    });
    let millis = info.get("timestamp").and_then(Value::as_i64);
    if let Some(at) = millis.and_then(|ms| Instant::from_micros(ms.checked_mul(1000)?).ok()) {
        event["produced_at"] = Value::String(at.to_string());
    }
    Ok(Some(event))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(op: &str, params: Value, interval: Option<(&str, &str)>, more: &[Value]) -> String {
        let mut info = json!({"timestamp": 1_748_772_300_000_i64, "operation": op,
                              "operationParameters": params});
        if let Some((s, e)) = interval {
            info[START_PROPERTY] = json!(s);
            info[END_PROPERTY] = json!(e);
        }
        let mut lines = vec![json!({ "commitInfo": info }).to_string()];
        lines.extend(more.iter().map(Value::to_string));
        lines.join("\n")
    }

    fn meta() -> Value {
        json!({"metaData": {"id": "t-1", "format": {"provider": "parquet"}}})
    }

    fn options() -> ProducerOptions {
        ProducerOptions {
            asset: Some("clicks".into()),
            ..Default::default()
        }
    }

    const H: (&str, &str) = ("2025-06-01T10:00:00Z", "2025-06-01T11:00:00Z");
    const M: (&str, &str) = ("2025-06-01T10:00:00Z", "2025-06-01T10:05:00Z");

    #[test]
    fn append_overwrite_replace_where_delete() {
        let log = vec![
            (
                0,
                commit("WRITE", json!({"mode": "Append"}), Some(M), &[meta()]),
            ),
            (
                1,
                commit("WRITE", json!({"mode": "Overwrite"}), Some(H), &[]),
            ),
            (
                2,
                commit(
                    "WRITE",
                    json!({"mode": "Overwrite", "predicate": "ts >= 1"}),
                    Some(H),
                    &[],
                ),
            ),
            (
                3,
                commit("DELETE", json!({"predicate": "ts = 2"}), Some(M), &[]),
            ),
        ];
        let out = convert_delta_log(&log, "t", &options()).unwrap();
        let kinds: Vec<&str> = out
            .events
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["landed", "landed", "landed", "retracted"]);
        assert_eq!(out.events[0]["id"], "delta:t-1:0");
        assert_eq!(out.events[0]["produced_at"], "2025-06-01T10:05:00Z");
        assert_eq!(
            out.events[2]["extra"],
            json!({"source": "delta", "table_id": "t-1", "version": 2, "operation": "WRITE",
                   "mode": "Overwrite", "predicate": "ts >= 1"})
        );
        assert_eq!(out.events[3]["start"], M.0);
        assert!(out.skipped.is_empty());
    }

    #[test]
    fn commits_without_an_interval_or_data_are_counted() {
        let log = vec![
            (
                0,
                commit("WRITE", json!({"mode": "Append"}), None, &[meta()]),
            ),
            (1, commit("OPTIMIZE", json!({}), Some(H), &[])),
            (2, r#"{"add": {"path": "x.parquet"}}"#.to_string()),
        ];
        let out = convert_delta_log(&log, "t", &options()).unwrap();
        assert!(out.events.is_empty());
        assert_eq!(
            out.skipped,
            [
                ("no interval properties".to_string(), 1),
                ("operation OPTIMIZE".to_string(), 1),
                ("no commitInfo".to_string(), 1)
            ]
        );
    }

    #[test]
    fn txn_ids_and_recommits() {
        let txn = |v: i64| json!({"txn": {"appId": "q1", "version": v}});
        let log = vec![
            (
                0,
                commit(
                    "WRITE",
                    json!({"mode": "Append"}),
                    Some(M),
                    &[meta(), txn(7)],
                ),
            ),
            (
                1,
                commit("WRITE", json!({"mode": "Append"}), Some(M), &[txn(7)]),
            ),
            (
                2,
                commit("WRITE", json!({"mode": "Append"}), Some(H), &[txn(8)]),
            ),
        ];
        let out = convert_delta_log(&log, "t", &options()).unwrap();
        let ids: Vec<&str> = out
            .events
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["delta:t-1:txn:q1:7", "delta:t-1:txn:q1:8"]);
        assert_eq!(out.events[1]["extra"]["txn_version"], 8);
        assert_eq!(out.events[1]["extra"]["app_id"], "q1");
        assert_eq!(
            out.skipped,
            [("txn version already committed".to_string(), 1)]
        );
    }

    #[test]
    fn cleaned_up_versions_are_named() {
        let log = vec![
            (3, commit("WRITE", json!({"mode": "Append"}), Some(M), &[])),
            (4, commit("WRITE", json!({"mode": "Append"}), Some(H), &[])),
        ];
        let with_id = ProducerOptions {
            table_uuid: Some("t-1".into()),
            ..options()
        };
        let err = convert_delta_log(&log, "t/_delta_log", &with_id).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("t/_delta_log: delta-log: version 0 is not in the log"),
            "{err}"
        );
        assert!(err.to_string().contains("version 3"), "{err}");
        let from_oldest = ProducerOptions {
            from_oldest: true,
            ..with_id.clone()
        };
        let out = convert_delta_log(&log, "t", &from_oldest).unwrap();
        assert_eq!(out.events[0]["id"], "delta:t-1:3");
        // A hole after the oldest is never a cleanup.
        let holed = vec![log[0].clone(), (5, log[1].1.clone())];
        let err = convert_delta_log(&holed, "t", &from_oldest).unwrap_err();
        assert!(
            err.to_string().contains("version 4 is not in the log"),
            "{err}"
        );
        // Without the metaData action the id must be given.
        let err = convert_delta_log(
            &log,
            "t",
            &ProducerOptions {
                from_oldest: true,
                ..options()
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("--table-uuid"), "{err}");
    }

    #[test]
    fn bad_input_is_named() {
        let log = vec![(0, "{not json".to_string())];
        let err = convert_delta_log(&log, "t", &options()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("t: delta-log: version 0: JSON value 1"),
            "{err}"
        );
        let mut info = json!({"operation": "WRITE", "interval_start": 5, "interval_end": "x"});
        info["timestamp"] = json!(0);
        let log = vec![(0, format!("{}\n{}", json!({ "commitInfo": info }), meta()))];
        let err = convert_delta_log(&log, "t", &options()).unwrap_err();
        assert!(
            err.to_string()
                .contains("version 0: commitInfo interval_start is 5"),
            "{err}"
        );
        let err = convert_delta_log(&[], "t", &ProducerOptions::default()).unwrap_err();
        assert!(err.to_string().contains("--asset"), "{err}");
    }
}
