//! `kind = "airflow"`: Apache Airflow 3's public REST API (`/api/v2`).
//!
//! - Authentication: a fixed bearer token, or a JWT from `POST /auth/token`
//!   with `{"username", "password"}` (answered 201 `{"access_token"}`),
//!   asked again once when Airflow answers 401.
//! - `asset_uri`: the asset's id is looked up once with `GET
//!   /api/v2/assets?uri_pattern=URI` (a substring match: the exact URI is
//!   picked here), then each firing is `POST /api/v2/assets/events` with
//!   `{"asset_id", "partition_key": key, "extra": firing}`, the firing
//!   carrying `"gapless_firing": "<ledger id>:<rule>:<seq>"`. Airflow has
//!   no idempotency key, so before sending a firing that an earlier
//!   attempt may have delivered (a timeout, a reset, a deliverer killed
//!   mid-delivery) its identity is looked for among the asset's events
//!   since the firing was recorded (`GET /api/v2/assets/events?asset_id=
//!   &order_by=-timestamp`, pages of 100); found, it counts as delivered.
//!   A 404 for the event (the asset was removed and made again) looks the
//!   id up again; an asset Airflow does not have (yet: its DAG may not be
//!   parsed) is tried again.
//! - `dag_id`: `POST /api/v2/dags/{dag_id}/dagRuns` with `{"dag_run_id":
//!   "gapless__<rule>__<key>__<generation>", "logical_date": null,
//!   "partition_key": key, "conf": firing}`; 409 (that run exists) counts
//!   as delivered, which makes this idempotent by itself.
//!
//! Statuses: 2xx delivered; 408, 429, 5xx and 404 for a DAG (not parsed
//! yet) tried again; any other status is a refusal (the firing fails).

use std::time::Duration;

use serde_json::{json, Value};

use crate::send::{transport, Answer, Job, Sent, Transport};
use crate::targets::{Airflow, AirflowAuth, AirflowTo};

/// The most pages of asset events read when looking for a firing.
const MAX_SEARCH_PAGES: u64 = 50;
/// Airflow's page size for asset events (it answers at most 100).
const PAGE: u64 = 100;
/// Events older than the firing by more than this are not looked at
/// (clocks of the two hosts may differ a little).
const CLOCK_SKEW: Duration = Duration::from_secs(600);

/// One Airflow target's connection state: its token and the asset's id.
#[derive(Debug)]
pub(crate) struct Client {
    target: Airflow,
    timeout: Duration,
    jwt: Option<String>,
    asset_id: Option<i64>,
}

/// An HTTP method.
#[derive(Debug, Clone, Copy)]
enum Method {
    Get,
    Post,
}

impl Client {
    pub(crate) fn new(target: Airflow, timeout: Duration) -> Client {
        Client {
            target,
            timeout,
            jwt: None,
            asset_id: None,
        }
    }

    /// One attempt.
    pub(crate) fn send(&mut self, agent: &ureq::Agent, job: &Job<'_>) -> Sent {
        let to = self.target.to.clone();
        let out = match to {
            AirflowTo::Asset(uri) => self.asset_event(agent, &uri, job),
            AirflowTo::Dag(dag) => self.dag_run(agent, &dag, job),
        };
        out.unwrap_or_else(Transport::sent)
    }

    fn asset_event(
        &mut self,
        agent: &ureq::Agent,
        uri: &str,
        job: &Job<'_>,
    ) -> Result<Sent, Transport> {
        let id = match self.asset_id {
            Some(id) => id,
            None => match self.lookup(agent, uri, job)? {
                Ok(id) => {
                    self.asset_id = Some(id);
                    id
                }
                Err(sent) => return Ok(sent),
            },
        };
        if job.unsure {
            match self.find(agent, id, job)? {
                Ok(true) => return Ok(Sent::Delivered),
                Ok(false) => {}
                Err(sent) => return Ok(sent),
            }
        }
        let mut extra = job.answer.clone();
        extra["gapless_firing"] = Value::String(job.identity.to_string());
        let body = json!({"asset_id": id, "partition_key": job.key, "extra": extra});
        let path = "/api/v2/assets/events";
        let a = self.call(agent, Method::Post, path, &[], Some(&body), job)?;
        Ok(if a.is_success() {
            Sent::Delivered
        } else if a.status == 404 {
            // The asset was removed (and maybe made again): its id anew.
            self.asset_id = None;
            Sent::Again(format!(
                "{path}: {} (asset id {id} of {uri:?} is gone; looking it up again)",
                a.describe()
            ))
        } else {
            self.judge(&a, path)
        })
    }

    /// The id of the asset whose URI is exactly `uri`; `Err(outcome)` when
    /// the answer says to stop here.
    fn lookup(
        &mut self,
        agent: &ureq::Agent,
        uri: &str,
        job: &Job<'_>,
    ) -> Result<Result<i64, Sent>, Transport> {
        let path = "/api/v2/assets";
        let mut offset = 0;
        loop {
            let query = [
                ("uri_pattern", uri.to_string()),
                ("limit", PAGE.to_string()),
                ("offset", offset.to_string()),
            ];
            let a = self.call(agent, Method::Get, path, &query, None, job)?;
            if !a.is_success() {
                return Ok(Err(self.judge(&a, path)));
            }
            let v: Value = serde_json::from_str(&a.body).unwrap_or(Value::Null);
            let assets = v["assets"].as_array().cloned().unwrap_or_default();
            if let Some(id) = assets
                .iter()
                .find(|x| x["uri"].as_str() == Some(uri))
                .and_then(|x| x["id"].as_i64())
            {
                return Ok(Ok(id));
            }
            offset += PAGE;
            let total = v["total_entries"].as_u64().unwrap_or(0);
            if assets.is_empty() || offset >= total {
                return Ok(Err(Sent::Again(format!(
                    "{path}: Airflow has no asset with uri {uri:?} (is the DAG that declares \
                     it parsed?)"
                ))));
            }
        }
    }

    /// Whether an event of asset `id` carries the job's identity.
    fn find(
        &mut self,
        agent: &ureq::Agent,
        id: i64,
        job: &Job<'_>,
    ) -> Result<Result<bool, Sent>, Transport> {
        let path = "/api/v2/assets/events";
        let skew = i64::try_from(CLOCK_SKEW.as_micros()).expect("small");
        let since_us = job.recorded_at.as_micros().saturating_sub(skew);
        let since = jiff::Timestamp::from_microsecond(since_us).unwrap_or(jiff::Timestamp::MIN);
        for page in 0..MAX_SEARCH_PAGES {
            let query = [
                ("asset_id", id.to_string()),
                ("order_by", "-timestamp".to_string()),
                ("timestamp_gte", since.to_string()),
                ("limit", PAGE.to_string()),
                ("offset", (page * PAGE).to_string()),
            ];
            let a = self.call(agent, Method::Get, path, &query, None, job)?;
            if !a.is_success() {
                return Ok(Err(self.judge(&a, path)));
            }
            let v: Value = serde_json::from_str(&a.body).unwrap_or(Value::Null);
            let events = v["asset_events"].as_array().cloned().unwrap_or_default();
            if events
                .iter()
                .any(|e| e["extra"]["gapless_firing"].as_str() == Some(job.identity))
            {
                return Ok(Ok(true));
            }
            // Newest first: past the firing's time, nothing older can be it.
            let older = events
                .last()
                .and_then(|e| e["timestamp"].as_str())
                .is_some_and(|t| {
                    t.parse::<jiff::Timestamp>()
                        .is_ok_and(|t| t.as_microsecond() < since_us)
                });
            let total = v["total_entries"].as_u64().unwrap_or(0);
            if events.is_empty() || older || (page + 1) * PAGE >= total {
                return Ok(Ok(false));
            }
        }
        Ok(Ok(false))
    }

    fn dag_run(
        &mut self,
        agent: &ureq::Agent,
        dag: &str,
        job: &Job<'_>,
    ) -> Result<Sent, Transport> {
        let path = format!("/api/v2/dags/{}/dagRuns", escape_path(dag));
        let body = json!({
            "dag_run_id": run_id(job.rule, job.key, job.generation),
            "logical_date": null,
            "partition_key": job.key,
            "conf": job.answer,
        });
        let a = self.call(agent, Method::Post, &path, &[], Some(&body), job)?;
        Ok(if a.is_success() || a.status == 409 {
            Sent::Delivered
        } else if a.status == 404 {
            Sent::Again(format!("{path}: {} (is DAG {dag:?} parsed?)", a.describe()))
        } else {
            self.judge(&a, &path)
        })
    }

    /// The outcome of an answer that is not a success.
    fn judge(&self, a: &Answer, path: &str) -> Sent {
        let what = format!("{path}: {}", a.describe());
        if a.is_transient() {
            Sent::Again(what)
        } else {
            Sent::Refused(what)
        }
    }

    /// One request with the bearer token, logging in again once on a 401.
    fn call(
        &mut self,
        agent: &ureq::Agent,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
        job: &Job<'_>,
    ) -> Result<Answer, Transport> {
        let fresh = self.jwt.is_none();
        let token = self.token(agent, job)?;
        let a = self.request(agent, method, path, query, body, Some(&token), job)?;
        let renewable = matches!(self.target.auth, AirflowAuth::Password { .. });
        if a.status == 401 && renewable && !fresh {
            self.jwt = None;
            let token = self.token(agent, job)?;
            return self.request(agent, method, path, query, body, Some(&token), job);
        }
        Ok(a)
    }

    /// The bearer token: the fixed one, or a JWT (logging in if none).
    fn token(&mut self, agent: &ureq::Agent, job: &Job<'_>) -> Result<String, Transport> {
        let (username, password) = match &self.target.auth {
            AirflowAuth::Token(t) => return Ok(t.clone()),
            AirflowAuth::Password { username, password } => (username.clone(), password.clone()),
        };
        if let Some(t) = &self.jwt {
            return Ok(t.clone());
        }
        let path = "/auth/token";
        let body = json!({"username": username, "password": password});
        let a = self.request(agent, Method::Post, path, &[], Some(&body), None, job)?;
        let v: Value = serde_json::from_str(&a.body).unwrap_or(Value::Null);
        match v["access_token"].as_str() {
            Some(t) if a.is_success() => {
                self.jwt = Some(t.to_string());
                Ok(t.to_string())
            }
            _ => Err(Transport {
                // Nothing of the firing was sent.
                maybe_sent: false,
                // Credentials Airflow refuses stay refused; a 5xx or an
                // answer without a token may pass.
                refused: !a.is_success() && !a.is_transient(),
                message: format!("cannot log in to Airflow as {username:?}: {}", {
                    if a.is_success() {
                        format!("{path}: no access_token in the answer")
                    } else {
                        format!("{path}: {}", a.describe())
                    }
                }),
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn request(
        &self,
        agent: &ureq::Agent,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
        token: Option<&str>,
        job: &Job<'_>,
    ) -> Result<Answer, Transport> {
        let url = format!("{}{path}", self.target.url);
        let limit = job.limit(self.timeout).ok_or_else(|| {
            let mut t = Transport::out_of_time();
            t.message = format!("{path}: {}", t.message);
            t
        })?;
        let agent = self.target.https.as_ref().map_or(agent, |h| &h.0);
        let sent = match method {
            Method::Get => {
                let mut req = agent
                    .get(&url)
                    .config()
                    .timeout_global(Some(limit))
                    .build()
                    .header("Accept", "application/json");
                for (k, v) in query {
                    req = req.query(*k, v);
                }
                if let Some(t) = token {
                    req = req.header("Authorization", format!("Bearer {t}"));
                }
                req.call()
            }
            Method::Post => {
                let mut req = agent
                    .post(&url)
                    .config()
                    .timeout_global(Some(limit))
                    .build()
                    .header("Accept", "application/json")
                    .header("Content-Type", "application/json");
                if let Some(t) = token {
                    req = req.header("Authorization", format!("Bearer {t}"));
                }
                let bytes = serde_json::to_vec(body.unwrap_or(&Value::Null)).expect("JSON");
                req.send(&bytes[..])
            }
        };
        let maybe_post = matches!(method, Method::Post);
        match sent {
            Ok(resp) => Ok(Answer::read(resp)),
            Err(e) => {
                let mut t = transport(limit, e);
                // A lost GET changed nothing in Airflow.
                t.maybe_sent &= maybe_post;
                t.message = format!("{path}: {}", t.message);
                Err(t)
            }
        }
    }
}

/// `gapless__<rule>__<key>__<generation>`, the key escaped to what Airflow
/// takes in a run id (`A-Z a-z 0-9 _ . - + :`): any other byte, and `~`
/// itself, as `~XX` (hex), so that different keys never share a run id.
pub fn run_id(rule: &str, key: &str, generation: u32) -> String {
    let mut out = format!("gapless__{rule}__");
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b"_.-+:".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("~{b:02X}"));
        }
    }
    out.push_str(&format!("__{generation}"));
    out
}

/// A path segment, percent-encoded where it must be.
fn escape_path(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_keep_plain_keys_and_escape_the_rest() {
        assert_eq!(
            run_id("orders_hourly", "2025-06-14T03:00:00", 1),
            "gapless__orders_hourly__2025-06-14T03:00:00__1"
        );
        assert_eq!(
            run_id("r", "2025/06 14~", 2),
            "gapless__r__2025~2F06~2014~7E__2"
        );
        assert_ne!(run_id("r", "a/b", 1), run_id("r", "a~2Fb", 1));
    }
}
