//! The questions gapless answers, as types shared by every way in.
//!
//! A question is asked the same way whoever answers it: the command line
//! builds a request from its flags, the HTTP server from a query string or
//! a body, and both hand it to something that implements [`Ask`], the
//! embedded ledger (`gapless-ledger`) or the HTTP client
//! (`gapless-client`). The answers are the JSON shapes of SPEC §3 and §4,
//! and the OpenAPI document is derived from these very types.
//!
//! # Layout
//!
//! - [`Ask`]: the one interface of a ledger to ask (`ask.rs`).
//! - requests: [`CoverageRequest`], [`WindowsRequest`], … one per question,
//!   text as the user gives it; clap flags, serde query strings and bodies,
//!   OpenAPI parameters in one struct (`request.rs`).
//! - features, both off by default so that a client compiles neither:
//!   `clap` derives the requests' flags (the command line's grammar),
//!   `openapi` their OpenAPI parameters and every type's schema (the
//!   server's document).
//! - answers: [`CheckAnswer`], [`WindowsAnswer`], … (`answer.rs`).
//! - rules (SPEC §7): [`RuleSetRequest`], [`FiringsRequest`],
//!   [`WaitRequest`] and their answers (`rule.rs`).
//! - [`params`]: a request's text to typed values, with the shared
//!   messages (`params.rs`).
//! - [`Error`]: kind, one-line message, position in a batch (`error.rs`).
//! - `schema.rs`: OpenAPI descriptions of what has no Rust type of its own
//!   on the wire ([`ErrorBody`], intervals, event objects).
//!
//! # Adding a question or a parameter
//!
//! A parameter is a field of its request type (flag, query parameter and
//! OpenAPI entry at once) and its parsing (with [`params`]) in the ledger's
//! `Ask` implementation. A question is a request and an answer type here, a
//! method of [`Ask`], its implementation in the ledger and the client, a
//! route in the server and a command in the CLI.

mod answer;
mod ask;
mod error;
pub mod params;
mod request;
mod rule;
mod schema;

pub use answer::*;
pub use ask::Ask;
pub use error::{Error, ErrorKind, Position, Result, Unit};
pub use request::{
    AssetRequest, AssetsRequest, BodyFormat, BucketsItem, BucketsRequest, CoverageRequest,
    DeclareRequest, EmitRequest, EventsRequest, FrontierRequest, MultiBucketsRequest,
    MultiCoverageRequest, PruneRequest, RecordRequest, SegmentsRequest, UnsupportedContentType,
    WindowsRequest,
};
pub use rule::{
    DeliveryAnswer, FiringAnswer, FiringsAnswer, FiringsRequest, RuleAnswer, RuleDeletedAnswer,
    RuleOutcome, RuleRequest, RuleSetAnswer, RuleSetRequest, RuleWindowsAnswer, RuleWindowsRequest,
    RulesAnswer, RulesRequest, WaitRequest, WindowRef,
};
pub use schema::ErrorBody;
#[cfg(feature = "openapi")]
pub use schema::{EventInputSchema, EventsBodySchema, IntervalSchema};
