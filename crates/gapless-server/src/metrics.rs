//! Prometheus metrics: one registry per server (no globals, so several
//! servers can run in one process), rendered in the OpenMetrics text format.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use gapless_api::AssetsAnswer;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::AppState;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AssetLabels {
    asset: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    pub(crate) accepted: Counter,
    pub(crate) duplicates: Counter,
    pub(crate) conflicts: Counter,
    pub(crate) groups: Counter,
    pub(crate) commits: Counter,
    pub(crate) abandoned: Counter,
    pub(crate) group_requests: Histogram,
    requests: HistogramFamily<RouteLabels>,
    asset_events: Family<AssetLabels, Gauge>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn latency_histogram() -> Histogram {
    // 0.5 ms .. ~16 s
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("gapless");
        let accepted = Counter::default();
        let duplicates = Counter::default();
        let conflicts = Counter::default();
        let groups = Counter::default();
        let commits = Counter::default();
        let abandoned = Counter::default();
        let group_requests = Histogram::new(exponential_buckets(1.0, 2.0, 12));
        let requests: HistogramFamily<RouteLabels> =
            Family::new_with_constructor(latency_histogram);
        let asset_events = Family::<AssetLabels, Gauge>::default();
        registry.register("events_accepted", "Events stored", accepted.clone());
        registry.register(
            "events_duplicates",
            "Events received again with the same content",
            duplicates.clone(),
        );
        registry.register(
            "conflicts",
            "Batches refused because an event id was recorded with other content",
            conflicts.clone(),
        );
        registry.register(
            "commit_groups",
            "Groups of batches the writer appended together",
            groups.clone(),
        );
        registry.register(
            "commits",
            "Store appends made by the writer (a group, or a batch retried alone)",
            commits.clone(),
        );
        registry.register(
            "abandoned_batches",
            "Batches dropped before their commit because the client went away",
            abandoned.clone(),
        );
        registry.register(
            "commit_requests",
            "Requests sharing one group commit",
            group_requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route",
            requests.clone(),
        );
        registry.register(
            "asset_events",
            "Events stored per asset",
            asset_events.clone(),
        );
        Metrics {
            registry,
            accepted,
            duplicates,
            conflicts,
            groups,
            commits,
            abandoned,
            group_requests,
            requests,
            asset_events,
        }
    }

    /// The text exposition, with the per-asset gauges set from `assets`.
    pub(crate) fn render(&self, assets: &AssetsAnswer) -> Result<String, std::fmt::Error> {
        for a in &assets.assets {
            self.asset_events
                .get_or_create(&AssetLabels {
                    asset: a.asset.clone(),
                })
                .set(i64::try_from(a.events).unwrap_or(i64::MAX));
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

/// Middleware: time every request by its route pattern (never the raw path,
/// which holds asset names).
pub(crate) async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |m| m.as_str().to_string());
    let method = request.method().as_str().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let labels = RouteLabels {
        method,
        route,
        status: response.status().as_u16(),
    };
    state
        .metrics()
        .requests
        .get_or_create(&labels)
        .observe(started.elapsed().as_secs_f64());
    response
}
