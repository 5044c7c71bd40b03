//! The command line's grammar (SPEC §3).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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

/// A `[start, end)` given as `--start T --end T`.
#[derive(Debug, Args)]
pub struct RangeArgs {
    /// Start of the range (RFC 3339, naive date-time as UTC, or a bare date).
    #[arg(long)]
    pub start: String,
    /// End of the range, exclusive.
    #[arg(long)]
    pub end: String,
}

/// An optional `[start, end)`.
#[derive(Debug, Args)]
pub struct OptionalRangeArgs {
    /// Start of the range.
    #[arg(long, requires = "end")]
    pub start: Option<String>,
    /// End of the range, exclusive.
    #[arg(long, requires = "start")]
    pub end: Option<String>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record one event.
    Emit {
        /// The asset.
        asset: String,
        /// Start of the interval the event covers.
        #[arg(long)]
        start: String,
        /// End of the interval, exclusive.
        #[arg(long)]
        end: String,
        /// The producer's idempotency key.
        #[arg(long)]
        id: Option<String>,
        /// Record a retraction: the interval's data is no longer valid.
        #[arg(long)]
        retract: bool,
        /// A JSON object kept with the event.
        #[arg(long)]
        extra: Option<String>,
        /// When the producer made the data.
        #[arg(long)]
        produced_at: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Record events from NDJSON, one atomic batch per file.
    Ingest {
        /// The file; `-` or none reads standard input.
        file: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Is the range complete? Exit 0 when complete under the policy, 1 when not.
    Check {
        /// The asset.
        asset: String,
        #[command(flatten)]
        range: RangeArgs,
        /// When the range counts as complete: full, ratio>=R, gap<D.
        #[arg(long)]
        policy: Option<String>,
        /// Time zone for bare dates.
        #[arg(long)]
        tz: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The calendar windows that overlap the range, each with its coverage.
    Windows {
        /// The asset.
        asset: String,
        #[command(flatten)]
        range: RangeArgs,
        /// The grid: Nm, Nh, Nd, Nw, Nmo, Ny.
        #[arg(long)]
        every: String,
        /// IANA time zone of the calendar (default UTC).
        #[arg(long)]
        tz: Option<String>,
        /// When a window counts as complete: full, ratio>=R, gap<D.
        #[arg(long)]
        policy: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Which event provides each part of the range.
    Segments {
        /// The asset.
        asset: String,
        #[command(flatten)]
        range: RangeArgs,
        /// Time zone for bare dates.
        #[arg(long)]
        tz: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The events whose interval overlaps the range, in sequence order.
    Events {
        /// The asset.
        asset: String,
        #[command(flatten)]
        range: OptionalRangeArgs,
        /// Only `landed` or `retracted` events.
        #[arg(long)]
        kind: Option<String>,
        /// At most this many (default 1000, at most 10000).
        #[arg(long)]
        limit: Option<usize>,
        /// The `next` cursor of the previous page.
        #[arg(long)]
        after: Option<String>,
        /// Time zone for bare dates.
        #[arg(long)]
        tz: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Complete up to when, from an origin.
    Frontier {
        /// The asset.
        asset: String,
        /// Where the covered run starts.
        #[arg(long)]
        origin: String,
        /// Time zone for a bare date.
        #[arg(long)]
        tz: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
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
    },
    /// List the assets (same as `asset list`).
    Assets {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `asset ...`.
#[derive(Debug, Subcommand)]
pub enum AssetCommand {
    /// Declare an asset's discrete key span and time zone.
    Set {
        /// The asset.
        asset: String,
        /// Span of a discrete partition key, e.g. 5m, 1h, P1D.
        #[arg(long)]
        key_span: Option<String>,
        /// Time zone the keys are read in (default UTC).
        #[arg(long)]
        tz: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the assets with their event counts and covered extent.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}
