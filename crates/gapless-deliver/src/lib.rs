//! Delivering gapless firings to their targets (SPEC §7, "Targets"):
//! webhooks and Apache Airflow, at least once with exponential backoff and
//! exactly once in effect, by any number of deliverers sharing a ledger.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store: Arc<dyn gapless_store::Store> = Arc::from(gapless_store::open("gapless.db")?);
//! let targets = gapless_deliver::Targets::load("targets.toml".as_ref())?;
//! let mut deliverer = gapless_deliver::Deliverer::new(store, targets)?;
//! deliverer.pass()?; // what is due now
//! # Ok(()) }
//! ```
//!
//! # Layout
//!
//! - [`Targets`], [`Target`], [`Retry`]: the targets file, read through
//!   serde into its entries' types, then checked together; its problems
//!   ([`TargetsError`]) one line naming the file, the entry and the field
//!   (`targets.rs`).
//! - [`Deliverer`]: the firings no target takes delivered unsent in one
//!   write; then claim, send, finish; the poll loop (`deliverer.rs`).
//! - `send.rs`: what an attempt comes to (delivered, refused, again, maybe
//!   sent) and the HTTP plumbing the targets share.
//! - `webhook.rs`: POST the firing, signed ([`signature`]).
//! - `airflow.rs`: asset events and DAG runs through Airflow's REST API
//!   ([`run_id`]).
//!
//! # Exactly once in effect
//!
//! The store leases each claimed firing to one deliverer (on PostgreSQL
//! with `FOR UPDATE SKIP LOCKED`), and a finish counts only while the lease
//! is held. A deliverer that dies mid-delivery leaves its firing to whoever
//! claims it after the lease. A webhook receiver deduplicates by
//! `Idempotency-Key`; an Airflow DAG run by its run id (409); an Airflow
//! asset event, which has no key, is looked for by its identity in `extra`
//! before it is sent again.

mod airflow;
mod deliverer;
mod send;
mod targets;
mod webhook;

pub use airflow::run_id;
pub use deliverer::{owner_id, Deliverer, Stats};
pub use send::HttpsAgent;
pub use targets::{
    Airflow, AirflowAuth, AirflowTo, Retry, Target, TargetKind, Targets, TargetsError,
    TargetsProblem, Webhook, TARGETS_ENV,
};
pub use webhook::signature;
