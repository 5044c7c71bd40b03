//! The command line's grammar (SPEC §3): each question's flags are its
//! `gapless-api` request type, flattened in, so the command line, the query
//! strings and the OpenAPI document name the same parameters.

use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use gapless_api::{
    AssetRequest, AssetsRequest, BucketsRequest, CoverageRequest, DeclareRequest, EmitRequest,
    EventsRequest, FiringsRequest, FrontierRequest, PruneRequest, RuleRequest, RuleSetRequest,
    RuleWindowsRequest, RulesRequest, SegmentsRequest, WaitRequest, WindowsRequest,
};

/// What `gapless --help` says after the commands.
const AFTER_HELP: &str = "\
Instants: RFC 3339 (2025-06-14T10:05:00Z), a naive date-time (2025-06-14T10:05)
or a bare date (2025-06-14); naive ones are read in --tz (default UTC).

Exit codes: 0 success (check: complete), 1 check: not complete, 2 any error
(one line on standard error naming the input and the reason).

Environment:
  GAPLESS_DB     the ledger, as --db (default gapless.db, one SQLite file)
  GAPLESS_URL    ask a gapless server instead, as --url
  GAPLESS_TOKEN  the bearer token sent to a server that has tokens
  GAPLESS_CACERT, GAPLESS_CERT, GAPLESS_KEY  as --cacert, --cert, --key (https://)
  SSL_CERT_FILE  trust this PEM bundle instead of the system's (https://)
  GAPLESS_TARGETS_FILE  where serve and deliver deliver firings (TOML)

Example:
  gapless emit orders --start 2025-06-14T10:05Z --end 2025-06-14T10:10Z --id batch-1
  gapless check orders --start 2025-06-14 --end 2025-06-15 || echo 'not yet'";

/// gapless: exact coverage of time-partitioned data.
///
/// Producers record the interval each batch covers (`emit`, `ingest`);
/// consumers ask whether [start, end) is complete and which gaps are
/// missing (`check`, `windows`, `frontier`), on one SQLite file or against
/// a shared server (`serve`).
#[derive(Debug, Parser)]
#[command(name = "gapless", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    /// The ledger: a SQLite file path, or a postgres:// URL.
    #[arg(long, env = "GAPLESS_DB", default_value = "gapless.db", global = true)]
    pub db: String,

    /// Work against a gapless server instead of opening a ledger (every
    /// command but serve and deliver; also after the command, or
    /// GAPLESS_URL).
    #[arg(long)]
    pub url: Option<String>,

    #[command(flatten)]
    pub tls: TlsFlags,

    #[command(subcommand)]
    pub command: Command,
}

/// The flags whose value may begin with `-`: durations and numbers, which
/// a user may give negative (`--max-gap -5m`). clap would read such a value
/// as an unknown flag; taken as the value, it is refused by its own check
/// with its own reason (`invalid duration "-5m": negative durations are not
/// allowed`), as `--max-gap=-5m` is.
const NEGATIVE_LOOKING: [&str; 10] = [
    "max_gap",
    "retain",
    "min_ratio",
    "timeout",
    "wait",
    "deadline",
    "key_span",
    "limit",
    "buckets",
    "after",
];

impl Cli {
    /// The command line of this process, or clap's error (help and version
    /// are errors of their own kinds).
    pub fn try_parse_args() -> Result<Cli, clap::Error> {
        fn negative_looking(cmd: clap::Command) -> clap::Command {
            cmd.mut_args(|a| {
                let takes = NEGATIVE_LOOKING.contains(&a.get_id().as_str());
                a.allow_hyphen_values(takes)
            })
            .mut_subcommands(negative_looking)
        }
        let matches = negative_looking(Cli::command()).try_get_matches()?;
        Cli::from_arg_matches(&matches)
    }
}

/// `--url`: the flag of the commands that work against a server too (all
/// but `serve` and `deliver`), so that their help does not offer it.
#[derive(Debug, Clone, Default, Args)]
pub struct Remote {
    /// Work against a gapless server instead of opening a ledger; a server
    /// with tokens gets GAPLESS_TOKEN as the bearer token.
    #[arg(long, env = "GAPLESS_URL")]
    pub url: Option<String>,

    #[command(flatten)]
    pub tls: TlsFlags,
}

/// The TLS files of an `https://` `--url`, before the command (`gapless
/// --url https://... --cacert ca.pem check ...`) or after it. Their
/// environment variables (`GAPLESS_CACERT`, `GAPLESS_CERT`, `GAPLESS_KEY`)
/// are read for an `https://` URL only, so that a profile that sets them
/// does not make a plain `--url` an error; a flag with `http://` is one.
#[derive(Debug, Clone, Default, Args)]
pub struct TlsFlags {
    /// With an https:// --url: also trust the authorities of this PEM file
    /// (besides the system's, or SSL_CERT_FILE's); or GAPLESS_CACERT.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// With an https:// --url: the client certificate (PEM, its chain may
    /// follow) shown to a server that asks for one; needs --key; or
    /// GAPLESS_CERT.
    #[arg(long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// The private key (PEM) of --cert; or GAPLESS_KEY.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
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
    #[command(
        after_help = "Example:\n  gapless emit orders --start 2025-06-14T10:05Z --end 2025-06-14T10:10Z --id batch-123\n  gapless emit orders --start 2025-06-14T17:00Z --end 2025-06-14T17:30Z --retract --id bad-slice"
    )]
    Emit {
        #[command(flatten)]
        request: EmitRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// Record events from NDJSON or a JSON array, one atomic batch per file.
    ///
    /// With --url, NDJSON larger than 32 MiB, or than the server takes in
    /// one request, is sent in parts cut at line ends, each part atomic on
    /// its own (the output says so); a failed part is named with what is
    /// stored, and sending the file again is safe when its events have ids.
    #[command(
        after_help = "Example:\n  gapless ingest batches.ndjson\n  producer | gapless ingest -\n  gapless ingest progress.ndjson --format spark-progress --asset clicks\n  gapless ingest snapshots.json --format iceberg-snapshots --asset clicks\n  gapless ingest page.json --format airflow-asset-events"
    )]
    Ingest {
        /// The file; `-` or none reads standard input.
        file: Option<PathBuf>,
        #[command(flatten)]
        producer: ProducerArgs,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// Is the range complete? Exit 0 when complete under the policy, 1 when not.
    #[command(
        after_help = "Example:\n  gapless check orders --start 2025-06-14 --end 2025-06-15\n  gapless check orders --start 2025-06-14 --end 2025-06-15 --max-gap 10m\n  gapless check orders --start 2025-06-14 --end 2025-06-15 --policy 'ratio>=0.99'"
    )]
    Check {
        #[command(flatten)]
        request: CoverageRequest,
        /// List every gap (without it: the first 20 and a summary).
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// The calendar windows that overlap the range, each with its coverage.
    #[command(
        after_help = "Example:\n  gapless windows orders --start 2025-03-29 --end 2025-04-01 --every 1d --tz Europe/Berlin\n  gapless windows orders --start 2025-06-01 --end 2025-07-01 --every 1h --incomplete --keys"
    )]
    Windows {
        #[command(flatten)]
        request: WindowsRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// Which event provides each part of the range.
    #[command(
        after_help = "Example:\n  gapless segments orders --start 2025-06-14T10:00Z --end 2025-06-14T11:00Z"
    )]
    Segments {
        #[command(flatten)]
        request: SegmentsRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// The range cut into equal parts, each with its covered, retracted and
    /// missing time: a picture of a long range in a few lines.
    #[command(
        after_help = "Example:\n  gapless buckets orders --start 2025-06-14 --end 2025-06-15 --buckets 24"
    )]
    Buckets {
        #[command(flatten)]
        request: BucketsRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// The events whose interval overlaps the range, in sequence order, a page
    /// at a time (1000 unless --limit says otherwise).
    #[command(
        after_help = "Example:\n  gapless events orders --start 2025-06-14 --end 2025-06-15 --kind retracted --limit 100"
    )]
    Events {
        #[command(flatten)]
        request: EventsRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// Complete up to when, from an origin.
    #[command(after_help = "Example:\n  gapless frontier orders --origin 2025-06-14")]
    Frontier {
        #[command(flatten)]
        request: FrontierRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// Declare or list assets.
    #[command(subcommand)]
    Asset(AssetCommand),
    /// Rules: record a firing each time a window of watched assets becomes
    /// complete (or stops being so), for downstream work to start once.
    #[command(subcommand)]
    Rule(RuleCommand),
    /// List the rules (same as `rule list`), in name order: every page, or
    /// one with --limit or --after.
    #[command(after_help = "Example:\n  gapless rules --prefix orders_ --json")]
    Rules {
        #[command(flatten)]
        request: RulesRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// The firings after a cursor, in ledger order, a page at a time.
    #[command(
        after_help = "Example:\n  gapless firings --rule orders_hourly\n  gapless firings --after 17 --wait 30s --json"
    )]
    Firings {
        #[command(flatten)]
        request: FiringsRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// Wait until the range is complete under the policy: exit 0 then, or 1
    /// with the gaps when the timeout (default 1h) passes first.
    #[command(
        after_help = "Example:\n  gapless wait orders --start 2025-06-14 --end 2025-06-15 --timeout 2h && run-report"
    )]
    Wait {
        #[command(flatten)]
        request: WaitRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
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
        /// How to write the log to standard error: text (coloured only on a
        /// terminal) or json (one object a line).
        #[arg(long, env = "GAPLESS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
        log_format: LogFormat,
        /// The most connections served at once (default: the open-file
        /// limit less 64, at most 10,000). At the limit the connection idle
        /// the longest is closed to make room for a new one.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_connections: Option<u64>,
        /// The largest request body taken, in bytes (default 67108864, 64
        /// MiB); a larger one is answered 413 saying the limit.
        #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
        body_limit: Option<u64>,
        /// Deliver firings to the targets of this file (TOML, SPEC §7) in
        /// the background; otherwise GAPLESS_TARGETS_FILE, or no delivery.
        #[arg(long)]
        targets_file: Option<PathBuf>,
        /// Keep event detail this long (90d, 12h, P30D): prune what ended
        /// before now less this when the server starts and every hour
        /// (coverage answers stay whole); by default nothing is pruned.
        #[arg(long, value_name = "DURATION")]
        retain: Option<String>,
        /// Serve HTTPS with this certificate (PEM, the server's first, its
        /// chain following); needs --tls-key. A renewed file is served
        /// within a second, without a restart.
        #[arg(long, value_name = "FILE", requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The private key (PEM) of --tls-cert.
        #[arg(long, value_name = "FILE", requires = "tls_cert")]
        tls_key: Option<PathBuf>,
    },
    /// Remove the detail of the events that ended at or before an instant
    /// (retracted ones are kept) and of the firings recorded before it
    /// (pending ones are kept): every coverage answer stays the same;
    /// segments and events before it say that it was pruned.
    #[command(
        after_help = "Example:\n  gapless prune --before 2025-03-01\n  gapless prune --before 2025-03-01 --asset orders --json"
    )]
    Prune {
        #[command(flatten)]
        request: PruneRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// Deliver firings to their rules' targets (webhooks, Airflow): what is
    /// pending, then (without --once) whatever comes, judging deadlines on
    /// each pass.
    #[command(
        after_help = "Example:\n  gapless deliver --targets-file targets.toml\n  gapless deliver --once --db postgres://db/ledger   # from cron\n  gapless deliver --once --retry-failed"
    )]
    Deliver {
        /// The targets file (TOML); otherwise GAPLESS_TARGETS_FILE.
        #[arg(long)]
        targets_file: Option<PathBuf>,
        /// Deliver what is due now, judge deadlines once, and exit.
        #[arg(long)]
        once: bool,
        /// First make every failed firing pending again.
        #[arg(long)]
        retry_failed: bool,
    },
    /// List the assets (same as `asset list`) in name order, each with its
    /// frontier and covered share of the last day and week: every page, or
    /// one with --limit or --after.
    #[command(after_help = "Example:\n  gapless assets --prefix s3://lake/ --contains orders")]
    Assets {
        #[command(flatten)]
        request: AssetsRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
}

/// `serve --log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Readable lines.
    Text,
    /// One JSON object a line.
    Json,
}

/// `asset ...`.
#[derive(Debug, Subcommand)]
pub enum AssetCommand {
    /// Declare an asset's discrete key span and time zone.
    #[command(after_help = "Example:\n  gapless asset set clicks --key-span 5m --tz UTC")]
    Set {
        #[command(flatten)]
        request: DeclareRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// One asset: its declaration, event count and covered extent.
    #[command(after_help = "Example:\n  gapless asset show orders")]
    Show {
        #[command(flatten)]
        request: AssetRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// List the assets with their declarations, event counts, covered
    /// extent, frontier and covered share of the last day and week.
    List {
        #[command(flatten)]
        request: AssetsRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
}

/// `rule ...`.
#[derive(Debug, Subcommand)]
// Parsed once per process: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum RuleCommand {
    /// Record a rule, or change its target, deadline or key format (its
    /// assets, grid, zone, policy, from and until cannot change: delete it
    /// first). The same rule again changes nothing.
    #[command(
        after_help = "Example:\n  gapless rule set orders_hourly --assets orders --every 1h --from 2025-06-01 --target airflow --deadline 30m\n  gapless rule set daily_berlin --assets orders,clicks --every 1d --tz Europe/Berlin --from 2025-06-01 --max-gap 5m"
    )]
    Set {
        #[command(flatten)]
        request: RuleSetRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// One rule.
    #[command(after_help = "Example:\n  gapless rule show orders_hourly --json")]
    Show {
        #[command(flatten)]
        request: RuleRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// The rule's windows that overlap the range, each judged now on the
    /// joint coverage of its assets.
    #[command(
        after_help = "Example:\n  gapless rule windows orders_hourly --start 2025-06-14 --end 2025-06-15"
    )]
    Windows {
        #[command(flatten)]
        request: RuleWindowsRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// Remove a rule and its firings.
    #[command(after_help = "Example:\n  gapless rule delete orders_hourly")]
    Delete {
        #[command(flatten)]
        request: RuleRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
    /// List the rules, in name order.
    List {
        #[command(flatten)]
        request: RulesRequest,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        remote: Remote,
    },
}

impl Command {
    /// The `--url` flag of a command that has one (all but `serve` and
    /// `deliver`).
    pub fn remote(&self) -> Option<&Remote> {
        match self {
            Command::Emit { remote, .. }
            | Command::Ingest { remote, .. }
            | Command::Check { remote, .. }
            | Command::Windows { remote, .. }
            | Command::Segments { remote, .. }
            | Command::Buckets { remote, .. }
            | Command::Events { remote, .. }
            | Command::Frontier { remote, .. }
            | Command::Assets { remote, .. }
            | Command::Rules { remote, .. }
            | Command::Firings { remote, .. }
            | Command::Wait { remote, .. }
            | Command::Prune { remote, .. }
            | Command::Rule(
                RuleCommand::Set { remote, .. }
                | RuleCommand::Show { remote, .. }
                | RuleCommand::Windows { remote, .. }
                | RuleCommand::Delete { remote, .. }
                | RuleCommand::List { remote, .. },
            )
            | Command::Asset(
                AssetCommand::Set { remote, .. }
                | AssetCommand::Show { remote, .. }
                | AssetCommand::List { remote, .. },
            ) => Some(remote),
            Command::Serve { .. } | Command::Deliver { .. } => None,
        }
    }
}

/// `ingest --format`: the producer's own records instead of event objects
/// (SPEC §10).
#[derive(Debug, Clone, Args)]
pub struct ProducerArgs {
    /// Read the producer's records: spark-progress (StreamingQueryProgress
    /// JSON, watermark mode), iceberg-snapshots (table metadata or
    /// inspect.snapshots() rows), airflow-asset-events (a page of
    /// GET /api/v2/assets/events), openlineage (run events, NDJSON as the
    /// file transport writes them).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<gapless_core::ProducerFormat>,
    /// The asset to record into (spark-progress and iceberg-snapshots need
    /// it; for airflow-asset-events it replaces each event's asset).
    #[arg(long, requires = "format")]
    pub asset: Option<String>,
    /// airflow-asset-events: name assets by the Airflow asset's uri
    /// (default) or name.
    #[arg(long, value_enum, requires = "format")]
    pub asset_from: Option<AssetFrom>,
    /// iceberg-snapshots: the table's UUID, when the file has no table-uuid.
    #[arg(long, requires = "format")]
    pub table_uuid: Option<String>,
}

impl ProducerArgs {
    /// The mapping's options.
    pub fn options(&self) -> gapless_core::ProducerOptions {
        gapless_core::ProducerOptions {
            asset: self.asset.clone(),
            asset_from_name: self.asset_from == Some(AssetFrom::Name),
            table_uuid: self.table_uuid.clone(),
        }
    }
}

/// Which Airflow asset field names the gapless asset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AssetFrom {
    /// The asset's URI.
    Uri,
    /// The asset's name.
    Name,
}
