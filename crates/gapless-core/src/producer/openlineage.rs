//! OpenLineage run events (SPEC §10): a `COMPLETE` run event lands the
//! run's interval on each of its output datasets, named by OpenLineage's
//! URI form of the dataset (`<namespace>/<name>`), with the id
//! `openlineage:<runId>`. The interval is the `nominalTime` run facet, else
//! the partition key Airflow's OpenLineage provider puts in its run facets.
//!
//! Emitters must never fail because gapless cannot use an event, so
//! nothing here is an error: an event (or an output) that says nothing the
//! ledger can place in time is left out and counted by reason.

use serde_json::{json, Map, Value};

use super::{text, Converted, ProducerOptions};
use crate::{parse_instant, validate_asset_name, Instant, Interval, Result};

/// The one `eventType` that records: the run finished and wrote its
/// outputs. `START` and `RUNNING` say nothing is complete yet; `FAIL` and
/// `ABORT` that it may not be.
const COMPLETE: &str = "COMPLETE";

/// The longest `eventType` quoted in a reason, so that a producer's
/// unexpected text cannot make a reason (and an answer) large.
const MAX_QUOTED: usize = 64;

pub(super) fn convert(values: &[Value], _options: &ProducerOptions) -> Result<Converted> {
    let mut out = Converted::default();
    for event in values.iter().flat_map(|v| match v {
        Value::Array(items) => items.iter().collect::<Vec<_>>(),
        other => vec![other],
    }) {
        map_event(event, &mut out);
    }
    Ok(out)
}

/// The asset OpenLineage's naming gives a dataset: the URI
/// `scheme:[//authority]path` its namespace (`scheme:[//authority]`) and
/// name (the path) form. A namespace with an authority is joined to the
/// name with one `/` (`s3://lake` + `orders` is `s3://lake/orders`,
/// `hdfs://nn:8020` + `/data/x` is `hdfs://nn:8020/data/x`); a namespace
/// that is a scheme alone takes a path after `://` (`file` + `/tmp/x` is
/// `file:///tmp/x`, the form of Airflow's file assets) and any other name
/// after `:` (`bigquery` + `p.d.t` is `bigquery:p.d.t`).
///
/// # Example
///
/// ```
/// use gapless_core::openlineage_asset;
///
/// assert_eq!(openlineage_asset("s3://lake", "orders"), "s3://lake/orders");
/// assert_eq!(openlineage_asset("postgres://db:5432", "shop.public.orders"),
///            "postgres://db:5432/shop.public.orders");
/// assert_eq!(openlineage_asset("file", "/tmp/x.csv"), "file:///tmp/x.csv");
/// ```
pub fn openlineage_asset(namespace: &str, name: &str) -> String {
    if namespace.contains("://") {
        if namespace.ends_with('/') || name.starts_with('/') {
            format!("{namespace}{name}")
        } else {
            format!("{namespace}/{name}")
        }
    } else if name.starts_with('/') {
        format!("{namespace}://{name}")
    } else {
        format!("{namespace}:{name}")
    }
}

/// Where an event's interval comes from.
enum Span {
    /// The `nominalTime` facet, as instants.
    Nominal(Interval),
    /// A partition key (SPEC §2), resolved by the ledger against the
    /// asset's declaration.
    Key(String),
}

fn map_event(event: &Value, out: &mut Converted) {
    let Value::Object(e) = event else {
        out.skip("not an OpenLineage event (not a JSON object)");
        return;
    };
    let Some(run) = e.get("run").and_then(Value::as_object) else {
        out.skip("not a run event (no run: a dataset or job event)");
        return;
    };
    match e.get("eventType").and_then(Value::as_str) {
        Some(COMPLETE) => {}
        Some(other) => {
            let shown: String = other.chars().take(MAX_QUOTED).collect();
            out.skip(format!("eventType {shown} (only COMPLETE records)"));
            return;
        }
        None => {
            out.skip("no eventType");
            return;
        }
    }
    let Some(run_id) = run
        .get("runId")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    else {
        out.skip("no run.runId");
        return;
    };
    let outputs = match e.get("outputs") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => {
            out.skip("no outputs");
            return;
        }
    };
    let span = match span_of(run.get("facets")) {
        Ok(span) => span,
        Err(reason) => {
            out.skip(reason);
            return;
        }
    };
    let id = format!("openlineage:{run_id}");
    if crate::event::validate_event_id(&id).is_err() {
        out.skip("run.runId too long for an event id");
        return;
    }
    let produced_at = text(event, "eventTime")
        .and_then(|t| parse_instant(t, None).ok())
        .map(|t: Instant| t.to_string());
    let job = e.get("job");
    for output in outputs {
        let (Some(namespace), Some(name)) = (text(output, "namespace"), text(output, "name"))
        else {
            out.skip("an output without namespace and name");
            continue;
        };
        let asset = openlineage_asset(namespace, name);
        if validate_asset_name(&asset).is_err() {
            out.skip("an output whose URI is not an asset name (empty, over 512 bytes or with control characters)");
            continue;
        }
        let mut extra = Map::new();
        extra.insert("source".into(), json!("openlineage"));
        extra.insert("event_type".into(), json!(COMPLETE));
        extra.insert("run_id".into(), json!(run_id));
        for (key, value) in [
            ("job_namespace", job.and_then(|j| text(j, "namespace"))),
            ("job_name", job.and_then(|j| text(j, "name"))),
            ("producer", text(event, "producer")),
        ] {
            if let Some(v) = value {
                extra.insert(key.into(), json!(v));
            }
        }
        extra.insert("dataset_namespace".into(), json!(namespace));
        extra.insert("dataset_name".into(), json!(name));
        let mut mapped = json!({"asset": asset, "id": id, "extra": extra});
        match &span {
            Span::Nominal(interval) => {
                mapped["start"] = json!(interval.start().to_string());
                mapped["end"] = json!(interval.end().to_string());
            }
            Span::Key(key) => mapped["partition_key"] = json!(key),
        }
        if let Some(t) = &produced_at {
            mapped["produced_at"] = json!(t);
        }
        out.events.push(mapped);
    }
}

/// The interval the run facets give: `nominalTime`
/// (`nominalStartTime`, `nominalEndTime`) when it is a non-empty interval,
/// else the Airflow run's `partition_key` (the task's `airflow` facet, or
/// the DAG run's `airflowDagRun` facet); else why there is none.
fn span_of(facets: Option<&Value>) -> std::result::Result<Span, String> {
    let nominal = facets.and_then(|f| f.get("nominalTime"));
    let from_nominal = nominal.map(|n| {
        let start = text(n, "nominalStartTime").ok_or("nominalTime without nominalStartTime")?;
        let end = text(n, "nominalEndTime").ok_or("nominalTime without nominalEndTime")?;
        let start = parse_instant(start, None).map_err(|_| "nominalStartTime is not an instant")?;
        let end = parse_instant(end, None).map_err(|_| "nominalEndTime is not an instant")?;
        Interval::new(start, end).map_err(|_| "nominalTime is empty or reversed")
    });
    if let Some(Ok(interval)) = from_nominal {
        return Ok(Span::Nominal(interval));
    }
    let key = facets.and_then(|f| {
        ["airflow", "airflowDagRun"].iter().find_map(|facet| {
            f.get(facet)?
                .get("dagRun")?
                .get("partition_key")?
                .as_str()
                .filter(|k| !k.is_empty())
        })
    });
    match (key, from_nominal) {
        (Some(key), _) => Ok(Span::Key(key.to_string())),
        (None, Some(Err(reason))) => Err(format!("{reason} (and no partition key)")),
        _ => Err("no nominalTime and no partition key".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{convert, ProducerFormat};

    fn run(text: &str) -> Converted {
        convert(
            ProducerFormat::OpenLineage,
            text,
            "events.ndjson",
            &ProducerOptions::default(),
        )
        .unwrap()
    }

    fn event(event_type: &str, facets: Value) -> String {
        json!({
            "eventType": event_type,
            "eventTime": "2025-06-01T11:02:03.5+02:00",
            "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "facets": facets},
            "job": {"namespace": "airflow-prod", "name": "orders_dag.load"},
            "inputs": [{"namespace": "s3://raw", "name": "orders"}],
            "outputs": [
                {"namespace": "s3://lake", "name": "orders"},
                {"namespace": "postgres://db:5432", "name": "shop.public.orders"}
            ]
        })
        .to_string()
    }

    fn nominal(start: &str, end: &str) -> Value {
        json!({"nominalTime": {"nominalStartTime": start, "nominalEndTime": end}})
    }

    #[test]
    fn a_complete_event_lands_its_nominal_time_on_each_output() {
        let out = run(&event(
            "COMPLETE",
            nominal("2025-06-01T00:00:00+00:00", "2025-06-01T01:00:00+00:00"),
        ));
        assert_eq!(out.skipped, vec![]);
        assert_eq!(out.events.len(), 2);
        let e = &out.events[0];
        assert_eq!(e["asset"], "s3://lake/orders");
        assert_eq!(e["id"], "openlineage:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
        assert_eq!(e["start"], "2025-06-01T00:00:00Z");
        assert_eq!(e["end"], "2025-06-01T01:00:00Z");
        assert_eq!(e["produced_at"], "2025-06-01T09:02:03.5Z");
        assert_eq!(e["extra"]["job_name"], "orders_dag.load");
        assert_eq!(e["extra"]["job_namespace"], "airflow-prod");
        assert_eq!(e["extra"]["event_type"], "COMPLETE");
        assert_eq!(e["extra"]["source"], "openlineage");
        assert!(e["extra"]["producer"]
            .as_str()
            .unwrap()
            .contains("OpenLineage"));
        assert_eq!(
            out.events[1]["asset"],
            "postgres://db:5432/shop.public.orders"
        );
        assert!(e.get("kind").is_none(), "landed is the default");
    }

    #[test]
    fn other_event_types_record_nothing() {
        let facets = nominal("2025-06-01T00:00:00Z", "2025-06-01T01:00:00Z");
        let text: String = ["START", "RUNNING", "FAIL", "ABORT", "OTHER"]
            .iter()
            .map(|t| event(t, facets.clone()) + "\n")
            .collect();
        let out = run(&text);
        assert!(out.events.is_empty());
        assert_eq!(out.skipped_count(), 5);
        assert_eq!(out.skipped[0].0, "eventType START (only COMPLETE records)");
    }

    #[test]
    fn an_airflow_partition_key_is_the_interval_without_nominal_time() {
        let facets = json!({"airflow": {"dagRun": {"partition_key": "2025-06-01T00:00:00"}}});
        let out = run(&event("COMPLETE", facets));
        assert_eq!(out.events[0]["partition_key"], "2025-06-01T00:00:00");
        assert!(out.events[0].get("start").is_none());
        // An empty nominal time (a manual Airflow run) gives way to the key.
        let mut facets = nominal("2025-06-01T00:00:00Z", "2025-06-01T00:00:00Z");
        facets["airflowDagRun"] = json!({"dagRun": {"partition_key": "2025-06-01/P1D"}});
        let out = run(&event("COMPLETE", facets));
        assert_eq!(out.events[0]["partition_key"], "2025-06-01/P1D");
    }

    #[test]
    fn events_without_an_interval_are_counted_by_reason() {
        let text = [
            event("COMPLETE", json!({})),
            event("COMPLETE", json!({"nominalTime": {"nominalStartTime": "2025-06-01T00:00:00Z"}})),
            event(
                "COMPLETE",
                nominal("2025-06-01T01:00:00Z", "2025-06-01T00:00:00Z"),
            ),
            event("COMPLETE", nominal("yesterday", "2025-06-01T00:00:00Z")),
            json!({"eventTime": "2025-06-01T00:00:00Z", "dataset": {"namespace": "s3://a", "name": "b"}}).to_string(),
            "42".to_string(),
        ]
        .join("\n");
        let out = run(&text);
        assert!(out.events.is_empty());
        let reasons: Vec<&str> = out.skipped.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "no nominalTime and no partition key",
                "nominalTime without nominalEndTime (and no partition key)",
                "nominalTime is empty or reversed (and no partition key)",
                "nominalStartTime is not an instant (and no partition key)",
                "not a run event (no run: a dataset or job event)",
                "not an OpenLineage event (not a JSON object)",
            ]
        );
    }

    #[test]
    fn an_array_is_a_batch_and_bad_outputs_are_counted_alone() {
        let mut one: Value = serde_json::from_str(&event(
            "COMPLETE",
            nominal("2025-06-01T00:00:00Z", "2025-06-01T01:00:00Z"),
        ))
        .unwrap();
        one["outputs"]
            .as_array_mut()
            .unwrap()
            .push(json!({"namespace": "s3://lake"}));
        let out = run(&Value::Array(vec![one.clone(), one]).to_string());
        assert_eq!(out.events.len(), 4);
        assert_eq!(
            out.skipped,
            vec![("an output without namespace and name".to_string(), 2)]
        );
    }

    #[test]
    fn text_that_is_not_json_is_an_error() {
        let err = convert(
            ProducerFormat::OpenLineage,
            "{\"eventType\": ",
            "events.ndjson",
            &ProducerOptions::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("events.ndjson: JSON value 1"),
            "{err}"
        );
    }

    #[test]
    fn the_dataset_uri_joins_namespace_and_name() {
        assert_eq!(
            openlineage_asset("s3://lake/", "orders"),
            "s3://lake/orders"
        );
        assert_eq!(
            openlineage_asset("hdfs://nn:8020", "/data/x"),
            "hdfs://nn:8020/data/x"
        );
        assert_eq!(openlineage_asset("file://", "/tmp/x"), "file:///tmp/x");
        assert_eq!(openlineage_asset("bigquery", "p.d.t"), "bigquery:p.d.t");
    }
}
