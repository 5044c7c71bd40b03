//! Faults of the store are 5xx with a generic message: internals (SQL,
//! paths) are logged, never sent.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use gapless_core::{AssetDecl, Instant, Interval, IntervalSet, NewEvent};
use gapless_ledger::Ledger;
use gapless_server::{app, AppState, ServerConfig};
use gapless_store::{
    Appended, AssetSummary, EventPage, EventQuery, Result, Store, StoreError, StoredEvent,
};
use tower::ServiceExt;

/// A store whose every operation fails with internals in the message.
#[derive(Debug)]
struct Broken {
    open: bool,
}

impl Broken {
    fn fail<T>(&self) -> Result<T> {
        Err(if self.open {
            StoreError::Open {
                location: "/secret/path/ledger.db".into(),
                reason: "disk on fire".into(),
                source: None,
            }
        } else {
            StoreError::Backend {
                message: "SELECT secret_column FROM events failed".into(),
                source: None,
            }
        })
    }
}

impl Store for Broken {
    fn append(&self, _: &[NewEvent], _: Instant) -> Result<Appended> {
        self.fail()
    }
    fn coverage(&self, _: &str, _: Interval) -> Result<IntervalSet> {
        self.fail()
    }
    fn retractions(&self, _: &str, _: Interval) -> Result<IntervalSet> {
        self.fail()
    }
    fn run_containing(&self, _: &str, _: Instant) -> Result<Option<Interval>> {
        self.fail()
    }
    fn events(&self, _: &str, _: &EventQuery) -> Result<EventPage> {
        self.fail()
    }
    fn events_overlapping(&self, _: &str, _: Interval) -> Result<Vec<StoredEvent>> {
        self.fail()
    }
    fn asset_decl(&self, _: &str) -> Result<Option<AssetDecl>> {
        Ok(None)
    }
    fn declare_asset(&self, _: &str, _: &AssetDecl) -> Result<()> {
        self.fail()
    }
    fn assets(&self) -> Result<Vec<AssetSummary>> {
        self.fail()
    }
    fn assets_page(
        &self,
        _: &gapless_store::AssetQuery,
        _: Instant,
    ) -> Result<gapless_store::AssetPage> {
        self.fail()
    }
    fn rules_page(&self, _: &gapless_store::RuleQuery) -> Result<gapless_store::RulePage> {
        self.fail()
    }
    fn put_rule(&self, _: &gapless_core::Rule, _: Instant) -> Result<gapless_store::RulePut> {
        self.fail()
    }
    fn rule(&self, _: &str) -> Result<Option<gapless_store::StoredRule>> {
        self.fail()
    }
    fn rules(&self) -> Result<Vec<gapless_store::StoredRule>> {
        self.fail()
    }
    fn delete_rule(&self, _: &str) -> Result<bool> {
        self.fail()
    }
    fn firings(&self, _: &gapless_store::FiringQuery) -> Result<gapless_store::FiringPage> {
        self.fail()
    }
    fn judge_deadlines(&self, _: Instant) -> Result<u64> {
        self.fail()
    }
    fn claim_deliveries(
        &self,
        _: &str,
        _: Instant,
        _: std::time::Duration,
        _: usize,
    ) -> Result<Vec<gapless_store::Firing>> {
        self.fail()
    }
    fn finish_delivery(&self, _: i64, _: &str, _: &gapless_store::DeliveryOutcome) -> Result<bool> {
        self.fail()
    }
    fn retry_failed(&self, _: Option<&str>) -> Result<u64> {
        self.fail()
    }
    fn ledger_id(&self) -> Result<String> {
        self.fail()
    }
    fn prune_events(&self, _: &str, _: Instant, _: usize) -> Result<u64> {
        self.fail()
    }
    fn prune_firings(&self, _: Instant, _: usize) -> Result<u64> {
        self.fail()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_faults_are_5xx_without_internals() {
    for (open, status, message) in [
        (false, 500, "internal server error"),
        (true, 503, "the ledger is unavailable"),
    ] {
        let state = AppState::new(
            Ledger::new(Arc::new(Broken { open })),
            ServerConfig::default(),
        );
        let router = app(state);
        let requests = [
            (
                "GET",
                "/v1/assets/a/coverage?start=2025-06-01&end=2025-06-02",
                "",
            ),
            ("GET", "/v1/assets", ""),
            ("GET", "/metrics", ""),
            (
                "POST",
                "/v1/events",
                r#"{"asset": "a", "start": "2025-06-01", "end": "2025-06-02"}"#,
            ),
            ("PUT", "/v1/assets/a", r#"{"tz": "UTC"}"#),
        ];
        for (method, path, body) in requests {
            let req = Request::builder()
                .method(method)
                .uri(path)
                .header("content-type", "application/json")
                .body(Body::from(body))
                .unwrap();
            let res = router.clone().oneshot(req).await.unwrap();
            assert_eq!(res.status().as_u16(), status, "{method} {path}");
            let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
                .await
                .unwrap();
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(
                v,
                serde_json::json!({"error": message, "detail": null}),
                "{method} {path}"
            );
        }
    }
}
