//! Airflow asset events (SPEC §10), as the provider's sync maps them: the
//! asset is the Airflow asset's URI (or its name), the id
//! `airflow:<event id>`, the interval what the event's `extra`
//! (`interval_start`/`interval_end`) or `partition_key` says (SPEC §2),
//! the kind `retracted` when `extra.interval_kind` says so.

use serde_json::{json, Value};

use super::{ident, records, text, Converted, ProducerOptions};
use crate::{Error, Result};

pub(super) fn convert(values: &[Value], options: &ProducerOptions) -> Result<Converted> {
    let mut out = Converted::default();
    for (i, e) in records(values, "asset_events").into_iter().enumerate() {
        let name = || format!("asset event {}", i + 1);
        let id = ident(e, "id").ok_or_else(|| Error::new(format!("{}: no id", name())))?;
        let field = if options.asset_from_name {
            "name"
        } else {
            "uri"
        };
        let asset = match options.asset.as_deref() {
            Some(a) => a,
            None => text(e, field)
                .ok_or_else(|| Error::new(format!("{} (id {id}): no {field}", name())))?,
        };
        let extra = match e.get("extra") {
            None | Some(Value::Null) => None,
            Some(Value::Object(o)) if o.is_empty() => None,
            Some(v @ Value::Object(_)) => Some(v),
            Some(_) => {
                return Err(Error::new(format!(
                    "{} (id {id}): extra is not an object",
                    name()
                )))
            }
        };
        let key = text(e, "partition_key").filter(|k| !k.is_empty());
        let has_interval = extra.is_some_and(|x| {
            x.get("interval_start").is_some_and(|v| !v.is_null())
                || x.get("interval_end").is_some_and(|v| !v.is_null())
        });
        if !has_interval && key.is_none() {
            out.skip("no interval (no interval extras, no partition key)");
            continue;
        }
        let retracted = extra
            .and_then(|x| x.get("interval_kind"))
            .and_then(Value::as_str)
            == Some("retracted");
        let mut event = json!({"asset": asset, "id": format!("airflow:{id}")});
        if let Some(x) = extra {
            event["extra"] = x.clone();
        }
        if let Some(k) = key {
            event["partition_key"] = Value::String(k.to_string());
        }
        if retracted {
            event["kind"] = Value::String("retracted".into());
        }
        if let Some(t) = text(e, "timestamp") {
            event["produced_at"] = Value::String(t.to_string());
        }
        out.events.push(event);
    }
    Ok(out)
}
