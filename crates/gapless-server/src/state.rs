//! What every request shares: the ledger, the writer, tokens, metrics.

use std::sync::Arc;

use gapless_api::Error;
use gapless_ledger::Ledger;

use crate::writer::Writer;
use crate::{ApiError, Metrics, ServerConfig, Tokens};

/// The shared state of a server. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    ledger: Ledger,
    config: ServerConfig,
    metrics: Arc<Metrics>,
    writer: Writer,
    /// Bumped after each write this server makes: long polls wait on it.
    changes: tokio::sync::watch::Sender<u64>,
}

impl AppState {
    /// The state of a server over `ledger` with `config`; starts the writer
    /// task, so it must be called inside a Tokio runtime.
    pub fn new(ledger: Ledger, config: ServerConfig) -> AppState {
        let metrics = Arc::new(Metrics::with_deliveries(config.deliveries.as_ref()));
        let writer = Writer::spawn(ledger.clone(), metrics.clone(), config.max_group_events);
        AppState {
            inner: Arc::new(Inner {
                ledger,
                config,
                metrics,
                writer,
                changes: tokio::sync::watch::Sender::new(0),
            }),
        }
    }

    /// The ledger served.
    pub fn ledger(&self) -> &Ledger {
        &self.inner.ledger
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The tokens, if access is controlled.
    pub fn tokens(&self) -> Option<&Tokens> {
        self.inner.config.tokens.as_ref()
    }

    /// Wait until every batch handed to the writer is committed or failed.
    pub async fn flush(&self) {
        self.inner.writer.flush().await;
    }

    /// Wake the long polls: this server wrote something.
    pub(crate) fn changed(&self) {
        self.inner.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver that sees each [`AppState::changed`].
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    pub(crate) fn writer(&self) -> &Writer {
        &self.inner.writer
    }

    /// Ask a short question (one index seek: coverage, frontier) on this
    /// thread when the ledger allows it ([`Ledger::reads_inline`]),
    /// otherwise as [`AppState::ask`] does.
    pub(crate) async fn ask_short<T, F>(&self, question: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Ledger) -> Result<T, Error> + Send + 'static,
    {
        if self.inner.ledger.reads_inline() {
            question(&self.inner.ledger).map_err(ApiError::from)
        } else {
            self.ask(question).await
        }
    }

    /// Ask the ledger on a blocking thread (the stores are synchronous, and
    /// the PostgreSQL client must never run on a runtime thread).
    pub(crate) async fn ask<T, F>(&self, question: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Ledger) -> Result<T, Error> + Send + 'static,
    {
        let ledger = self.inner.ledger.clone();
        tokio::task::spawn_blocking(move || question(&ledger))
            .await
            .map_err(ApiError::internal)?
            .map_err(ApiError::from)
    }
}
