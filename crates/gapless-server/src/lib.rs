//! The gapless HTTP service (SPEC §4): the ledger's questions as JSON over
//! HTTP, answered in exactly the shapes of the command line's `--json`.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = gapless_store::open("gapless.db")?;
//! let ledger = gapless_ledger::Ledger::new(Arc::from(store));
//! // Blocks until ctrl-c or SIGTERM; prints `listening on http://ADDR`.
//! gapless_server::run(ledger, gapless_server::ServerConfig::default())?;
//! # Ok(()) }
//! ```
//!
//! Embedding it instead: build an [`AppState`] inside a Tokio runtime and
//! either take the [`app`] router (e.g. for `tower::ServiceExt::oneshot`) or
//! [`serve`] it on a bound listener until a shutdown future completes.
//!
//! # Layout
//!
//! - [`run`], [`serve`], [`app`]: starting a server (`lib.rs`, `app.rs`).
//! - [`ServerConfig`], [`LogFormat`]: address, tokens, limits, log format
//!   (`config.rs`).
//! - `listen.rs`: accepting and serving connections within bounds: header
//!   and idle timeouts, a connection limit below the descriptor limit at
//!   which the longest idle connection makes room (so `/healthz` is still
//!   answered), accept errors backed off and logged once.
//! - `tls.rs`: TLS on the listener (`serve --tls-cert/--tls-key`), the
//!   certificate read again when renewed on disk, plain HTTP on the TLS
//!   port answered 400.
//! - `malformed.rs`: hyper's own answer to a request it cannot parse (an
//!   unencoded `<` in the query), rewritten as SPEC §4's JSON error.
//! - [`AppState`]: the ledger, the writer, metrics, shared by requests
//!   (`state.rs`).
//! - `writer.rs`: group commit: concurrent batches share one commit through
//!   [`Ledger::append_group`], each atomic and answered with its own counts
//!   once durable.
//! - `routes/`: the handlers, each extracting its `gapless-api` request and
//!   asking the ledger through [`gapless_api::Ask`]: `events.rs`
//!   (`POST /v1/events`), `lineage.rs` (`POST /api/v1/lineage`,
//!   OpenLineage run events through the same writer), `questions.rs` (coverage, windows, segments,
//!   events, frontier, `POST /v1/coverage`), `assets.rs` (listing,
//!   declaring), `retention.rs` (`POST /v1/prune`), `rules.rs` (rules, firings, the long polls `firings?wait=`
//!   and `wait`, woken by this server's commits), `ops.rs` (`/healthz`,
//!   `/metrics`, `/openapi.json`), `page.rs` (the web page of SPEC §11:
//!   `GET /` and its files under `/ui/`, from `web/` compiled in with
//!   `include_bytes!`, served without a token under a strict
//!   Content-Security-Policy; not in the OpenAPI document).
//! - `deadlines.rs`: the task that judges rules' deadlines every second.
//! - `retention.rs`: with `retain` configured (`serve --retain`), the task
//!   that prunes what is older at start and every hour.
//! - `delivery.rs`: the deliverer [`run`] starts beside the server when the
//!   configuration has targets (`gapless-deliver`), on a thread of its own,
//!   stopped with the server.
//! - [`Tokens`], [`Scope`]: bearer tokens with scopes (`auth.rs`).
//! - [`ApiError`]: the one error answer, `{"error", "detail"}`, from the
//!   API's [`gapless_api::Error`] by its kind; a fault's cause rides in the
//!   response to the logging layer, never in the body (`error.rs`).
//! - `extract.rs`: axum's extractors with JSON rejections.
//! - `answer.rs`: `Json`, how every route sends its answer:
//!   serialized into a plain `Vec<u8>`, sent as `application/json`.
//! - `request_log.rs`: each request's log span, the values of secret
//!   query parameters (`access_token=`) redacted.
//! - `metrics.rs`: Prometheus metrics, one registry per server.
//! - `openapi.rs`: the OpenAPI document's root; the schemas are derived
//!   from the `gapless-api` request and answer types.
//!
//! The client of this API is the `gapless-client` crate, which needs none
//! of this one.
//!
//! # Access control
//!
//! Without tokens every route is open and the server listens only on a
//! loopback address. With tokens (see [`Tokens`]) every route but
//! `/healthz` and the web page's files needs `Authorization: Bearer
//! TOKEN`: 401 without a valid one, 403 when its scopes do not allow the
//! request or a write names an asset outside its prefixes, both judged
//! before anything else of the request.

mod answer;
mod app;
pub mod auth;
mod config;
mod deadlines;
mod delivery;
mod error;
mod extract;
mod listen;
mod malformed;
mod metrics;
mod openapi;
mod request_log;
mod retention;
mod routes;
mod state;
mod tls;
mod writer;

use std::future::Future;
use std::io::{self, IsTerminal};

pub use app::{app, openapi};
pub use auth::{Scope, Token, Tokens};
pub use config::{
    check_exposure, default_max_connections, LogFormat, ServerConfig, DEFAULT_LISTEN,
};
pub use error::{ApiError, FaultCause, ServerError};
use gapless_ledger::Ledger;
pub use metrics::{DeliveryMetrics, Metrics};
pub use state::AppState;
pub use tls::{TlsFiles, RECHECK as TLS_RECHECK};
use tokio::net::TcpListener;

/// Serve `state` on `listener` until `shutdown` completes, then let the
/// requests in flight finish and the writer commit what it holds.
/// Connections are bounded by the configuration's header and idle timeouts
/// and its connection limit (see [`ServerConfig`]).
///
/// Keep a clone of the ledger outside the runtime and drop it there after
/// the runtime: a store may own a runtime of its own (the PostgreSQL client
/// does), which must not be dropped on a runtime thread. [`run`] does so.
///
/// # Errors
///
/// [`ServerError::Config`] for an open server (no tokens) on a non-loopback
/// address, a connection limit of 0, or a TLS certificate or key that
/// cannot be used; [`ServerError::Io`] when the listener's address cannot
/// be read.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let addr = listener.local_addr().map_err(|source| ServerError::Io {
        context: "cannot read the listening address".into(),
        source,
    })?;
    check_exposure(addr, state.tokens())?;
    let limits = listen::Limits::of(state.config())?;
    if limits.max_connections == 0 {
        return Err(ServerError::Config(
            "the connection limit must be at least 1".into(),
        ));
    }
    let deadlines = tokio::spawn(deadlines::judge_forever(state.clone()));
    let retention = state
        .config()
        .retain
        .map(|retain| tokio::spawn(retention::prune_forever(state.clone(), retain)));
    listen::serve(listener, app(state.clone()), limits, async move {
        shutdown.await;
        tracing::info!("shutting down: finishing requests in flight");
    })
    .await;
    deadlines.abort();
    if let Some(r) = retention {
        r.abort();
    }
    state.flush().await;
    tracing::info!("stopped");
    Ok(())
}

/// Run a server on `ledger` until ctrl-c or SIGTERM: builds the runtime,
/// installs a `tracing` subscriber (`RUST_LOG`, default `info`;
/// `config.log_format`) if none is, binds `config.listen` and prints
/// `listening on http://ADDR` (`https://` with [`ServerConfig::tls`]) to
/// standard error (so a caller that bound port 0 can read the port). With `config.targets`, a deliverer of the ledger's
/// firings runs on a thread beside the server, counted in `/metrics`, and
/// stops with it.
///
/// # Errors
///
/// [`ServerError::Config`] for an open server on a non-loopback address or
/// a TLS certificate or key that cannot be used,
/// [`ServerError::Io`] when the address cannot be bound,
/// [`ServerError::Delivery`] when the deliverer cannot read the ledger.
pub fn run(ledger: Ledger, mut config: ServerConfig) -> Result<(), ServerError> {
    check_exposure(config.listen, config.tokens.as_ref())?;
    // A certificate that cannot be used is refused before the address is
    // bound and announced; `serve` reads it again for itself.
    if let Some(files) = &config.tls {
        tls::Tls::load(files)?;
    }
    let log = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(io::stderr);
    // Colour codes are noise in a file or a log collector: only a terminal
    // gets them.
    let _ = match config.log_format {
        LogFormat::Text => log.with_ansi(io::stderr().is_terminal()).try_init(),
        LogFormat::Json => log.with_ansi(false).json().try_init(),
    };
    let delivering = match config.targets.take() {
        Some(targets) => {
            let counts = config.deliveries.get_or_insert_with(Default::default);
            Some(delivery::Beside::start(&ledger, targets, counts.clone())?)
        }
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("gapless-server")
        .build()
        .map_err(|source| ServerError::Io {
            context: "cannot start the runtime".into(),
            source,
        })?;
    // The ledger is dropped here, off the runtime: a store may own a runtime
    // of its own (the PostgreSQL client does), which must not be dropped
    // inside an async context.
    let keep = ledger.clone();
    let result = runtime.block_on(async move {
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| ServerError::Io {
                    context: format!("cannot listen on {}", config.listen),
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Io {
            context: "cannot read the listening address".into(),
            source,
        })?;
        let shutdown = shutdown_signal();
        let scheme = if config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        eprintln!("listening on {scheme}://{addr}");
        tracing::info!(
            %addr,
            tokens = config.tokens.is_some(),
            max_connections = config.max_connections,
            "listening"
        );
        let state = AppState::new(ledger, config);
        serve(listener, state, shutdown).await
    });
    drop(runtime);
    // The deliverer stops (between firings) once the server has.
    if let Some(d) = delivering {
        d.stop();
    }
    drop(keep);
    result
}

/// Completes on ctrl-c or, on Unix, SIGTERM.
///
/// The handlers are installed when this is called, not when the future is
/// first polled: a signal sent as soon as the server says it listens must
/// stop it gracefully, not end it by the signal's default action.
///
/// # Panics
///
/// When called outside a Tokio runtime.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, Signal, SignalKind};
        async fn received(s: Option<Signal>) {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async move {
            tokio::select! {
                () = received(interrupt) => {}
                () = received(terminate) => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
