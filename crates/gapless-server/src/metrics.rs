//! Prometheus metrics: one registry per server (no globals, so several
//! servers can run in one process), rendered in the OpenMetrics text format.
//!
//! Per asset, two kinds of series: those read from the ledger when
//! `/metrics` is asked (`asset_events`, `asset_last_covered_seconds`), which
//! every server over one database reports alike, and those this server
//! counts as its writer commits (`asset_last_received_seconds`,
//! `asset_retractions`), which start from nothing when it starts.

use std::sync::atomic::AtomicU64;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::response::Response;
use gapless_api::{AssetAnswer, IngestAnswer};
use gapless_core::EventKind;
use gapless_ledger::ingest::Batch;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

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
    asset: LabelText,
}

impl AssetLabels {
    fn of(asset: &str) -> AssetLabels {
        AssetLabels {
            asset: LabelText(asset.to_string()),
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

/// A label value that is anyone's text (an asset name may hold `"` and
/// `\`), written escaped as the text formats require (`\\`, `\"`, `\n`):
/// prometheus-client writes label values as they are, so a name with a
/// quote would end its value early, forge labels of its own or make the
/// whole scrape unparseable. This server renders only the text format.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct LabelText(String);

impl EncodeLabelValue for LabelText {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        use std::fmt::Write;
        let text = self.0.as_str();
        let mut from = 0;
        for (i, c) in text.char_indices() {
            let escaped = match c {
                '\\' => "\\\\",
                '"' => "\\\"",
                '\n' => "\\n",
                _ => continue,
            };
            encoder.write_str(&text[from..i])?;
            encoder.write_str(escaped)?;
            from = i + 1;
        }
        encoder.write_str(&text[from..])
    }
}

/// The counts of a deliverer running beside the server (`gapless serve
/// --targets-file`), shown as `gapless_deliveries_total{outcome}`. Cheap to
/// clone: clones count into the same series.
#[derive(Clone, Debug, Default)]
pub struct DeliveryMetrics {
    family: Family<OutcomeLabels, Counter>,
}

impl DeliveryMetrics {
    /// Count one firing's outcome (`delivered`, `skipped`, `retried`,
    /// `failed`, `postponed`, `lost`).
    pub fn count(&self, outcome: &str) {
        self.family
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc();
    }
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;
type Seconds = Gauge<f64, AtomicU64>;

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
    asset_last_covered: Family<AssetLabels, Seconds>,
    asset_last_received: Family<AssetLabels, Seconds>,
    asset_retractions: Family<AssetLabels, Counter>,
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
    #[cfg(test)]
    pub(crate) fn new() -> Metrics {
        Metrics::with_deliveries(None)
    }

    /// The metrics, with a deliverer's counts when one runs beside.
    pub(crate) fn with_deliveries(deliveries: Option<&DeliveryMetrics>) -> Metrics {
        let mut registry = Registry::with_prefix("gapless");
        if let Some(d) = deliveries {
            registry.register(
                "deliveries",
                "Firings handled by this server's deliverer, by outcome (delivered, skipped: a \
                 kind the target does not take, retried, failed, postponed: target not in the \
                 file, lost: the lease went to another deliverer)",
                d.family.clone(),
            );
        }
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
        let asset_last_covered = Family::<AssetLabels, Seconds>::default();
        let asset_last_received = Family::<AssetLabels, Seconds>::default();
        let asset_retractions = Family::<AssetLabels, Counter>::default();
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
            "Events stored per asset (from the ledger)",
            asset_events.clone(),
        );
        registry.register(
            "asset_last_covered_seconds",
            "End of the asset's last covered run, Unix seconds (from the ledger)",
            asset_last_covered.clone(),
        );
        registry.register(
            "asset_last_received_seconds",
            "When this server last stored an event of the asset, Unix seconds; since the server \
             started, and of a batch with duplicates only the events without an id count",
            asset_last_received.clone(),
        );
        registry.register(
            "asset_retractions",
            "Retracted events of the asset this server stored since it started; of a batch with \
             duplicates only the events without an id count",
            asset_retractions.clone(),
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
            asset_last_covered,
            asset_last_received,
            asset_retractions,
        }
    }

    /// Note the events `batch` stored, answered `answer`, at `received_at`.
    ///
    /// The answer counts duplicates but does not say which events they
    /// were, and only an event with an id can be one. So every event is
    /// counted when the batch had no duplicates; otherwise only the events
    /// without an id, which were stored for certain. A batch that repeats
    /// some events and adds others thus may not move these series for the
    /// new events that have ids.
    pub(crate) fn stored(
        &self,
        batch: &Batch,
        answer: &IngestAnswer,
        received_at: gapless_core::Instant,
    ) {
        let at = unix_seconds(received_at);
        let mut retractions: Vec<(&str, u64)> = Vec::new();
        for e in batch.events() {
            if answer.duplicates > 0 && e.id.is_some() {
                continue;
            }
            let n = u64::from(e.kind == EventKind::Retracted);
            match retractions.iter_mut().find(|(a, _)| *a == e.asset) {
                Some((_, count)) => *count += n,
                None => retractions.push((&e.asset, n)),
            }
        }
        for (asset, n) in retractions {
            let labels = AssetLabels::of(asset);
            self.asset_last_received.get_or_create(&labels).set(at);
            // Created even at zero, so every asset written has the series.
            self.asset_retractions.get_or_create(&labels).inc_by(n);
        }
    }

    /// The text exposition, with the ledger's per-asset gauges set from
    /// `assets`.
    pub(crate) fn render(&self, assets: &[AssetAnswer]) -> Result<String, std::fmt::Error> {
        for a in assets {
            let labels = AssetLabels::of(&a.asset);
            self.asset_events
                .get_or_create(&labels)
                .set(i64::try_from(a.events).unwrap_or(i64::MAX));
            if let Some(end) = a.last_covered {
                self.asset_last_covered
                    .get_or_create(&labels)
                    .set(unix_seconds(end));
            }
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

fn unix_seconds(t: gapless_core::Instant) -> f64 {
    // Microseconds since 1970 stay below 2^53 until the year 2255: an f64
    // holds them exactly, and the seconds to well under a microsecond.
    t.to_timestamp().as_microsecond() as f64 / 1e6
}

/// A request being timed for the `requests` histogram, by its route
/// pattern (never the raw path, which holds asset names).
pub(crate) struct RouteTimer {
    method: String,
    route: String,
    started: Instant,
}

impl RouteTimer {
    /// Start timing `request`.
    pub(crate) fn start(request: &Request) -> RouteTimer {
        let route = request
            .extensions()
            .get::<MatchedPath>()
            .map_or_else(|| "unmatched".to_string(), |m| m.as_str().to_string());
        RouteTimer {
            method: request.method().as_str().to_string(),
            route,
            started: Instant::now(),
        }
    }

    /// Count the request, answered with `response`, into `metrics`.
    pub(crate) fn observe(self, metrics: &Metrics, response: &Response) {
        let labels = RouteLabels {
            method: self.method,
            route: self.route,
            status: response.status().as_u16(),
        };
        metrics
            .requests
            .get_or_create(&labels)
            .observe(self.started.elapsed().as_secs_f64());
    }
}
