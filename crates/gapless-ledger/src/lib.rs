//! The embedded ledger: every question of [`gapless_api::Ask`] answered
//! over any [`gapless_store::Store`].
//!
//! The command line (embedded mode) and the HTTP server both ask a
//! [`Ledger`]; its answers are the `gapless-api` types whose JSON is the
//! contract, so a client of a server gets exactly what the embedded ledger
//! gives. Every write goes through it too: single batches, streamed NDJSON,
//! and a server's group commits.
//!
//! # Layout
//!
//! - [`Ledger`]: typed questions and the writes (`ledger.rs`).
//! - [`gapless_api::Ask`] for [`Ledger`]: a request's text to typed values,
//!   in one place (`ask.rs`).
//! - [`ingest`]: event objects to a validated [`ingest::Batch`], errors by
//!   position; [`ingest::each_asset`], the assets a body names, read before
//!   the rest (`ingest.rs`).
//! - retention (SPEC §3, `prune`): removing old events and firings in
//!   bounded steps, and the segments of a pruned range (`prune.rs`).
//! - rules (SPEC §7): recording and reading rules, firings, waiting for a
//!   range to complete (`rules.rs`).
//! - [`from_store`], [`from_open`]: storage errors as API errors of the right
//!   kind, the one mapping every crate uses (`error.rs`).
//! - [`now`]: the wall clock that stamps what is received (`clock.rs`).

mod ask;
mod clock;
mod error;
pub mod ingest;
mod ledger;
mod prune;
mod rules;

pub use clock::now;
pub use error::{from_open, from_store};
pub use ledger::{Ledger, WindowsQuery};
pub use prune::PRUNE_STEP;
pub use rules::{firing_answer, rule_answer, WATCH_INTERVAL};
