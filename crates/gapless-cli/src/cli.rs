//! The command line's grammar (SPEC §3): each question's flags are its
//! `gapless-api` request type, flattened in, so the command line, the query
//! strings and the OpenAPI document name the same parameters.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use gapless_api::{
    CoverageRequest, DeclareRequest, EmitRequest, EventsRequest, FrontierRequest, SegmentsRequest,
    WindowsRequest,
};

/// gapless: exact coverage of time-partitioned data.
///
/// Record the interval each batch covers; ask whether [start, end) is
/// complete and which gaps are missing.
#[derive(Debug, Parser)]
#[command(name = "gapless", version, about, long_about = None)]
pub struct Cli {
    /// The ledger: a SQLite file path, or a postgres:// URL.
    #[arg(long, env = "GAPLESS_DB", default_value = "gapless.db", global = true)]
    pub db: String,

    /// Work against a gapless server instead of opening a ledger.
    #[arg(long, env = "GAPLESS_URL", global = true)]
    pub url: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

/// `--json`: print exactly the object of SPEC §3.
#[derive(Debug, Clone, Copy, Args)]
pub struct Output {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record one event.
    Emit {
        #[command(flatten)]
        request: EmitRequest,
        #[command(flatten)]
        output: Output,
    },
    /// Record events from NDJSON, one atomic batch per file.
    Ingest {
        /// The file; `-` or none reads standard input.
        file: Option<PathBuf>,
        #[command(flatten)]
        output: Output,
    },
    /// Is the range complete? Exit 0 when complete under the policy, 1 when not.
    Check {
        #[command(flatten)]
        request: CoverageRequest,
        #[command(flatten)]
        output: Output,
    },
    /// The calendar windows that overlap the range, each with its coverage.
    Windows {
        #[command(flatten)]
        request: WindowsRequest,
        #[command(flatten)]
        output: Output,
    },
    /// Which event provides each part of the range.
    Segments {
        #[command(flatten)]
        request: SegmentsRequest,
        #[command(flatten)]
        output: Output,
    },
    /// The events whose interval overlaps the range, in sequence order.
    Events {
        #[command(flatten)]
        request: EventsRequest,
        #[command(flatten)]
        output: Output,
    },
    /// Complete up to when, from an origin.
    Frontier {
        #[command(flatten)]
        request: FrontierRequest,
        #[command(flatten)]
        output: Output,
    },
    /// Declare or list assets.
    #[command(subcommand)]
    Asset(AssetCommand),
    /// Run the HTTP server on this ledger (SPEC §4).
    Serve {
        /// Address to listen on (default 127.0.0.1:8080). A non-loopback
        /// address needs access tokens.
        #[arg(long)]
        listen: Option<String>,
        /// A tokens file (TOML); otherwise GAPLESS_TOKENS or
        /// GAPLESS_TOKENS_FILE, or none (open, loopback only).
        #[arg(long)]
        tokens_file: Option<PathBuf>,
        /// The most connections served at once (default: the open-file
        /// limit less 64, at most 10,000). At the limit the connection idle
        /// the longest is closed to make room for a new one.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_connections: Option<u64>,
    },
    /// List the assets (same as `asset list`).
    Assets {
        #[command(flatten)]
        output: Output,
    },
}

/// `asset ...`.
#[derive(Debug, Subcommand)]
pub enum AssetCommand {
    /// Declare an asset's discrete key span and time zone.
    Set {
        #[command(flatten)]
        request: DeclareRequest,
        #[command(flatten)]
        output: Output,
    },
    /// List the assets with their event counts and covered extent.
    List {
        #[command(flatten)]
        output: Output,
    },
}
