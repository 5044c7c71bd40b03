//! The questions gapless answers, over any [`gapless_store::Store`].
//!
//! The command line (embedded mode) and the HTTP server both call
//! [`Ledger`]; the answers are serde types whose JSON is the shape SPEC §3
//! fixes, so the command line in client mode reads the server's JSON back
//! into the same types and prints exactly what embedded mode prints.
//!
//! # Layout
//!
//! - [`Ledger`]: the operations (`ledger.rs`).
//! - answers: `CheckAnswer`, `WindowsAnswer`, … (`answer.rs`).
//! - [`ingest`]: NDJSON lines to a validated batch, errors by position
//!   (`ingest.rs`).
//! - [`params`]: parsing user-given query text with the shared error
//!   messages (`params.rs`).
//! - [`LedgerError`]: bad input, conflict, or a storage fault (`error.rs`).
//! - [`now`]: the wall clock that stamps what is received (`clock.rs`).

mod answer;
mod clock;
mod error;
pub mod ingest;
mod ledger;
pub mod params;

pub use answer::*;
pub use clock::now;
pub use error::LedgerError;
pub use ledger::Ledger;
