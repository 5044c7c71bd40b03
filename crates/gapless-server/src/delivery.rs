//! A deliverer beside the server (`gapless serve --targets-file`, SPEC §7):
//! the firings of the ledger served, delivered to the targets by this
//! process, counted in its `/metrics`.
//!
//! It runs on a thread of its own, not on the runtime: delivering is
//! blocking work (HTTP requests to the targets, the store's claims), and a
//! slow target must not hold a worker that answers requests. The server
//! judges rules' deadlines itself (`deadlines.rs`), so the deliverer does
//! not.

use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

use gapless_deliver::{Deliverer, Targets};
use gapless_ledger::Ledger;

use crate::{DeliveryMetrics, ServerError};

/// A running deliverer, stopped by [`Beside::stop`].
#[derive(Debug)]
pub(crate) struct Beside {
    /// Dropped to stop it: the deliverer stops between firings when this
    /// channel is closed.
    stop: Sender<()>,
    thread: JoinHandle<()>,
}

impl Beside {
    /// Start delivering the firings of `ledger` to `targets`, counting each
    /// outcome in `counts`.
    ///
    /// # Errors
    ///
    /// [`ServerError::Delivery`] when the ledger's id cannot be read,
    /// [`ServerError::Io`] when the thread cannot be started.
    pub(crate) fn start(
        ledger: &Ledger,
        targets: Targets,
        counts: DeliveryMetrics,
    ) -> Result<Beside, ServerError> {
        let mut deliverer = Deliverer::new(ledger.store().clone(), targets)
            .map_err(|e| ServerError::Delivery(Box::new(e)))?
            .observed(move |outcome| counts.count(outcome));
        let (stop, stopped) = channel::<()>();
        let thread = std::thread::Builder::new()
            .name("gapless-deliver".into())
            .spawn(move || deliverer.run(&stopped))
            .map_err(|source| ServerError::Io {
                context: "cannot start the deliverer".into(),
                source,
            })?;
        Ok(Beside { stop, thread })
    }

    /// Stop it and wait until it has: a firing being delivered is finished
    /// first.
    pub(crate) fn stop(self) {
        drop(self.stop);
        // A deliverer that panicked has nothing left to stop.
        let _ = self.thread.join();
    }
}
