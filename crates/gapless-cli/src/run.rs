//! Each command: ask the ledger (embedded or a server, chosen once), print
//! the answer.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use gapless_api::{Ask, BodyFormat, Error, IngestAnswer, RecordRequest};
use gapless_client::Client;
use gapless_ledger::Ledger;
use serde::Serialize;

use crate::cli::{AssetCommand, Cli, Command, LogFormat, Output, RuleCommand};
use crate::store::open_store;
use crate::{human, human_rules};

/// The ledger to ask: one this process opens, or a server. Only the writes
/// (`emit`, `ingest`, `asset set`, `rule set`: rules may well be defined
/// before the first producer writes) may create a ledger; a question about
/// a ledger that is not there is an error, never a new empty ledger.
fn open(cli: &Cli) -> Result<Box<dyn Ask>, Error> {
    if let Some(client) = client(cli)? {
        return Ok(Box::new(client));
    }
    let writes = matches!(
        cli.command,
        Command::Emit { .. }
            | Command::Ingest { .. }
            | Command::Asset(AssetCommand::Set { .. })
            | Command::Rule(RuleCommand::Set { .. })
    );
    Ok(Box::new(open_ledger(&cli.db, writes)?))
}

/// The server to ask, if any: `gapless --url X check` or `gapless check
/// --url X` (or GAPLESS_URL), with the token of GAPLESS_TOKEN.
fn client(cli: &Cli) -> Result<Option<Client>, Error> {
    let url = cli
        .url
        .as_ref()
        .or_else(|| cli.command.remote().and_then(|r| r.url.as_ref()));
    let Some(url) = url else {
        return Ok(None);
    };
    let token = std::env::var(gapless_client::TOKEN_ENV).ok();
    let remote = cli.command.remote().map(|r| &r.tls);
    // The flag before the command, else after it, else (for an https://
    // URL only) its environment variable.
    let https = url.starts_with("https://");
    let pick = |top: &Option<PathBuf>, after: Option<&Option<PathBuf>>, env: &str| {
        top.clone()
            .or_else(|| after.cloned().flatten())
            .or_else(|| {
                https
                    .then(|| std::env::var_os(env).filter(|v| !v.is_empty()))
                    .flatten()
                    .map(PathBuf::from)
            })
    };
    let files = gapless_client::tls::TlsFiles {
        ca_file: pick(&cli.tls.cacert, remote.map(|r| &r.cacert), "GAPLESS_CACERT"),
        cert: pick(&cli.tls.cert, remote.map(|r| &r.cert), "GAPLESS_CERT"),
        key: pick(&cli.tls.key, remote.map(|r| &r.key), "GAPLESS_KEY"),
    };
    Ok(Some(Client::with_tls_files(url, &files)?.with_token(token)))
}

fn open_ledger(db: &str, create: bool) -> Result<Ledger, Error> {
    Ok(Ledger::new(open_store(db, create)?))
}

/// Print `answer` as JSON or as `human` renders it. A closed pipe (`| head`)
/// is not an error worth a message.
fn print<T: Serialize>(
    output: Output,
    answer: &T,
    human: impl FnOnce(&T) -> String,
) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    if output.json {
        let text = serde_json::to_string(answer).map_err(|e| Error::fault(e.to_string()))?;
        let _ = writeln!(out, "{text}");
    } else {
        let _ = write!(out, "{}", human(answer));
    }
    Ok(())
}

/// Run one command; the exit code on success, or the error to report.
pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    if let Command::Serve {
        listen,
        tokens_file,
        log_format,
        max_connections,
        targets_file,
        body_limit,
        retain,
        tls_cert,
        tls_key,
    } = &cli.command
    {
        let tls = match (tls_cert, tls_key) {
            (Some(cert), Some(key)) => Some(gapless_server::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ => None,
        };
        return serve(
            &cli,
            listen.as_deref(),
            tokens_file.as_deref(),
            *log_format,
            (*max_connections, *body_limit),
            (targets_file.as_deref(), retain.as_deref(), tls),
        );
    }
    if let Command::Deliver {
        targets_file,
        once,
        retry_failed,
    } = &cli.command
    {
        return crate::deliver::deliver(&cli, targets_file.as_deref(), *once, *retry_failed);
    }
    let ledger = open(&cli)?;
    match cli.command {
        Command::Serve { .. } | Command::Deliver { .. } => unreachable!("handled above"),
        Command::Emit {
            request, output, ..
        } => {
            let event = request.to_json()?;
            let answer = ledger.record(RecordRequest {
                body: &mut event.as_bytes(),
                format: BodyFormat::Json,
                source: "the event",
                size: Some(event.len() as u64),
            })?;
            print(output, &answer, human::appended)?;
        }
        Command::Ingest {
            ref file,
            ref producer,
            output,
            ..
        } => {
            let remote = client(&cli)?;
            let answer = ingest(ledger.as_ref(), remote.as_ref(), file.as_deref(), producer)?;
            print(output, &answer, human::appended)?;
        }
        Command::Check {
            request,
            all,
            output,
            ..
        } => {
            let answer = ledger.coverage(&request)?;
            print(output, &answer, |a| human::check(a, all))?;
            return Ok(if answer.complete {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        Command::Windows {
            request, output, ..
        } => {
            let answer = ledger.windows(&request)?;
            if request.key_format.is_some() && !output.json {
                print(output, &answer, human::window_keys)?;
            } else {
                print(output, &answer, human::windows)?;
            }
        }
        Command::Segments {
            request, output, ..
        } => {
            if request.limit.is_some() || request.after.is_some() {
                print(output, &ledger.segments(&request)?, human::segments)?;
            } else {
                segments_all(ledger.as_ref(), request, output)?;
            }
        }
        Command::Buckets {
            request, output, ..
        } => {
            print(output, &ledger.buckets(&request)?, human::buckets)?;
        }
        Command::Events {
            request, output, ..
        } => {
            print(output, &ledger.events(&request)?, human::events)?;
        }
        Command::Frontier {
            request, output, ..
        } => {
            print(output, &ledger.frontier(&request)?, human::frontier)?;
        }
        Command::Asset(AssetCommand::Set {
            request, output, ..
        }) => {
            print(output, &ledger.declare(&request)?, human::decl)?;
        }
        Command::Prune {
            request, output, ..
        } => {
            print(output, &ledger.prune(&request)?, human::pruned)?;
        }
        Command::Asset(AssetCommand::Show {
            request, output, ..
        }) => {
            print(output, &ledger.asset(&request)?, human::asset)?;
        }
        Command::Asset(AssetCommand::List {
            request, output, ..
        })
        | Command::Assets {
            request, output, ..
        } => {
            let answer = if request.limit.is_some() || request.after.is_some() {
                ledger.assets(&request)?
            } else {
                assets_all(ledger.as_ref(), request)?
            };
            print(output, &answer, human::assets)?;
        }
        Command::Rule(RuleCommand::Set {
            request, output, ..
        }) => {
            print(output, &ledger.set_rule(&request)?, human_rules::rule_set)?;
        }
        Command::Rule(RuleCommand::Show {
            request, output, ..
        }) => {
            print(output, &ledger.rule(&request)?, human_rules::rule)?;
        }
        Command::Rule(RuleCommand::Windows {
            request, output, ..
        }) => {
            print(
                output,
                &ledger.rule_windows(&request)?,
                human_rules::rule_windows,
            )?;
        }
        Command::Rule(RuleCommand::Delete {
            request, output, ..
        }) => {
            print(
                output,
                &ledger.delete_rule(&request)?,
                human_rules::rule_deleted,
            )?;
        }
        Command::Rule(RuleCommand::List {
            request, output, ..
        })
        | Command::Rules {
            request, output, ..
        } => {
            let answer = if request.limit.is_some() || request.after.is_some() {
                ledger.rules(&request)?
            } else {
                rules_all(ledger.as_ref(), request)?
            };
            print(output, &answer, human_rules::rules)?;
        }
        Command::Firings {
            request, output, ..
        } => {
            print(output, &ledger.firings(&request)?, human_rules::firings)?;
        }
        Command::Wait {
            request, output, ..
        } => {
            let answer = ledger.wait(&request)?;
            print(output, &answer, |a| human::check(a, false))?;
            return Ok(if answer.complete {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `serve`: the HTTP server on this ledger until SIGTERM or ctrl-c, with a
/// deliverer beside it when there is a targets file.
fn serve(
    cli: &Cli,
    listen: Option<&str>,
    tokens_file: Option<&std::path::Path>,
    log_format: LogFormat,
    (max_connections, body_limit): (Option<u64>, Option<u64>),
    (targets_file, retain, tls): (
        Option<&std::path::Path>,
        Option<&str>,
        Option<gapless_server::TlsFiles>,
    ),
) -> Result<ExitCode, Error> {
    let config_error = |e: gapless_server::ServerError| Error::bad_input(e.to_string());
    if cli.url.is_some() {
        return Err(Error::bad_input(
            "serve: --url makes no sense here; serve a ledger with --db",
        ));
    }
    let listen = listen.unwrap_or(gapless_server::DEFAULT_LISTEN);
    let listen = listen
        .parse()
        .map_err(|e| Error::bad_input(format!("--listen: invalid address {listen:?}: {e}")))?;
    let retain = retain.map(retention).transpose()?;
    let tokens = match tokens_file {
        Some(path) => Some(gapless_server::Tokens::load(path).map_err(config_error)?),
        None => gapless_server::Tokens::from_env().map_err(config_error)?,
    };
    let defaults = gapless_server::ServerConfig::default();
    let config = gapless_server::ServerConfig {
        listen,
        tokens,
        log_format: match log_format {
            LogFormat::Text => gapless_server::LogFormat::Text,
            LogFormat::Json => gapless_server::LogFormat::Json,
        },
        max_connections: max_connections.map_or(defaults.max_connections, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
        body_limit: body_limit.map_or(defaults.body_limit, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
        targets: crate::deliver::targets(targets_file)?,
        retain,
        tls,
        ..defaults
    };
    gapless_server::check_exposure(config.listen, config.tokens.as_ref()).map_err(config_error)?;
    let store = open_store(&cli.db, true)?;
    gapless_server::run(Ledger::new(store), config).map_err(|e| match e {
        gapless_server::ServerError::Config(m) => Error::bad_input(m),
        other => Error::unavailable(other.to_string()),
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `serve --retain`: a fixed length longer than zero (pruning everything
/// up to now is `gapless prune`'s to do, asked once, not every hour).
fn retention(text: &str) -> Result<std::time::Duration, Error> {
    let d = gapless_api::params::wait("--retain", text)?;
    if d.is_zero() {
        return Err(Error::bad_input(format!(
            "--retain: {text:?} is zero: give how long to keep event detail (e.g. 90d)"
        )));
    }
    Ok(d)
}

/// A JSON array when the first byte that is not white space is `[`,
/// otherwise NDJSON. Only the first buffer is looked at and nothing is
/// consumed, so NDJSON line numbers stay right.
fn format_of(input: &mut impl std::io::BufRead) -> std::io::Result<BodyFormat> {
    let first = input
        .fill_buf()?
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .copied();
    Ok(if first == Some(b'[') {
        BodyFormat::Json
    } else {
        BodyFormat::Ndjson
    })
}

/// `ingest`: the whole input is one atomic batch, streamed to the ledger;
/// NDJSON sent to a server (`remote`) goes in parts when it is larger than
/// one request may be (SPEC §3), and standard error says so.
fn ingest(
    ledger: &dyn Ask,
    remote: Option<&Client>,
    file: Option<&std::path::Path>,
    producer: &crate::cli::ProducerArgs,
) -> Result<IngestAnswer, Error> {
    let path = file.filter(|p| p.as_os_str() != "-");
    let name = path.map_or_else(|| "standard input".to_string(), |p| p.display().to_string());
    let (mut input, mut size): (Box<dyn Read + Send>, Option<u64>) = match path {
        Some(p) => {
            let file = std::fs::File::open(p)
                .map_err(|e| Error::bad_input(format!("cannot read {name}: {e}")))?;
            let size = file.metadata().ok().map(|m| m.len());
            (Box::new(file), size)
        }
        None => (Box::new(std::io::stdin()), None),
    };
    if let Some(format) = producer.format {
        let events = producer_events(ledger, &mut input, &name, format, producer)?;
        size = Some(events.len() as u64);
        input = Box::new(std::io::Cursor::new(events));
    }
    // Hidden by indicatif when standard error is not a terminal.
    let bar = match size {
        Some(len) => indicatif::ProgressBar::new(len).with_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{wide_bar}] {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        ),
        None => indicatif::ProgressBar::new_spinner().with_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg} {bytes} {bytes_per_sec}")
                .expect("valid template"),
        ),
    };
    bar.set_message(format!("reading {name}"));
    let mut body = std::io::BufReader::new(bar.wrap_read(input));
    let format =
        format_of(&mut body).map_err(|e| Error::bad_input(format!("cannot read {name}: {e}")))?;
    let answer = match (remote, format) {
        (Some(client), BodyFormat::Ndjson) => client
            .record_in_parts(&mut body, &name, gapless_client::DEFAULT_PART)
            .map(|parts| {
                bar.finish_and_clear();
                if parts.parts > 1 {
                    eprintln!(
                        "{name} was sent in {} parts of at most {} bytes (more than the server \
                         takes in one request): each part was stored atomically on its own, \
                         not the input as a whole",
                        parts.parts, parts.largest
                    );
                }
                parts.answer
            }),
        _ => ledger.record(RecordRequest {
            body: &mut body,
            format,
            source: &name,
            size,
        }),
    };
    bar.finish_and_clear();
    answer
}

/// `ingest --format`: the producer's records read whole (they are logs and
/// metadata, not bulk data) and mapped to NDJSON events; standard error
/// says what was left out.
fn producer_events(
    ledger: &dyn Ask,
    input: &mut dyn Read,
    name: &str,
    format: gapless_core::ProducerFormat,
    producer: &crate::cli::ProducerArgs,
) -> Result<Vec<u8>, Error> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| Error::bad_input(format!("cannot read {name}: {e}")))?;
    let mut converted = gapless_core::convert(format, &text, name, &producer.options())
        .map_err(|e| Error::bad_input(e.to_string()))?;
    match format {
        gapless_core::ProducerFormat::AirflowAssetEvents
        | gapless_core::ProducerFormat::OpenLineage => {
            drop_keys_without_span(ledger, &mut converted)?;
        }
        gapless_core::ProducerFormat::SparkProgress => drop_reruns(ledger, &mut converted)?,
        gapless_core::ProducerFormat::IcebergSnapshots => {}
    }
    if !converted.skipped.is_empty() {
        let reasons: Vec<String> = converted
            .skipped
            .iter()
            .map(|(reason, n)| format!("{n} {reason}"))
            .collect();
        // An OpenLineage event gives one event per output dataset, so its
        // events do not count its records.
        let from = match format {
            gapless_core::ProducerFormat::OpenLineage => {
                "one per output of each recorded run event".to_string()
            }
            _ => format!(
                "from {} {format} records",
                converted.events.len() + converted.skipped_count()
            ),
        };
        eprintln!(
            "{name}: {} events {from}; left out {}: {}",
            converted.events.len(),
            converted.skipped_count(),
            reasons.join(", ")
        );
    }
    let mut out = Vec::new();
    for event in &converted.events {
        // Writing a JSON value into memory cannot fail.
        serde_json::to_writer(&mut out, event).expect("a JSON value serializes");
        out.push(b'\n');
    }
    Ok(out)
}

/// Leave out the Airflow (and OpenLineage) events whose only interval is a
/// discrete key of an asset that declares no key span (they say nothing
/// the ledger can place in time), as the provider's sync and the server's
/// OpenLineage route do.
fn drop_keys_without_span(
    ledger: &dyn Ask,
    converted: &mut gapless_core::Converted,
) -> Result<(), Error> {
    let mut span: std::collections::HashMap<String, bool> = std::collections::HashMap::new();
    let mut kept = Vec::with_capacity(converted.events.len());
    let mut dropped = 0;
    for event in std::mem::take(&mut converted.events) {
        let discrete = event["partition_key"]
            .as_str()
            .is_some_and(|k| !k.contains('/'))
            && event["start"].is_null()
            && event["extra"]["interval_start"].is_null()
            && event["extra"]["interval_end"].is_null();
        let asset = event["asset"].as_str().unwrap_or_default().to_string();
        let placed = !discrete
            || match span.get(&asset) {
                Some(&has) => has,
                None => {
                    let has = match ledger.asset(&gapless_api::AssetRequest {
                        asset: asset.clone(),
                    }) {
                        Ok(a) => a.key_span.is_some(),
                        Err(e) if e.kind() == gapless_api::ErrorKind::NotFound => false,
                        Err(e) => return Err(e),
                    };
                    span.insert(asset, has);
                    has
                }
            };
        if placed {
            kept.push(event);
        } else {
            dropped += 1;
        }
    }
    converted.events = kept;
    if dropped > 0 {
        converted
            .skipped
            .push(("discrete keys of assets without a key span".into(), dropped));
    }
    Ok(())
}

/// Leave out the Spark batches the ledger already holds from another run
/// of the query (a batch re-run after a restart has the same id and
/// interval but its own `run_id`, which would make it a conflict rather
/// than a duplicate).
fn drop_reruns(ledger: &dyn Ask, converted: &mut gapless_core::Converted) -> Result<(), Error> {
    let interval = |e: &serde_json::Value| {
        let at = |f: &str| {
            e[f].as_str()
                .and_then(|t| gapless_core::parse_instant(t, None).ok())
        };
        at("start").zip(at("end"))
    };
    let spans: Vec<_> = converted.events.iter().filter_map(interval).collect();
    let (Some(first), Some(last)) = (
        spans.iter().map(|s| s.0).min(),
        spans.iter().map(|s| s.1).max(),
    ) else {
        return Ok(());
    };
    let asset = converted.events[0]["asset"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The stored runs' batches in the file's span: id -> (interval, run id).
    let mut stored = std::collections::HashMap::new();
    let mut after = None;
    loop {
        let page = match ledger.events(&gapless_api::EventsRequest {
            asset: asset.clone(),
            start: Some(first.to_string()),
            end: Some(last.to_string()),
            after,
            ..gapless_api::EventsRequest::default()
        }) {
            Ok(page) => page,
            Err(e) if e.kind() == gapless_api::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for ev in page.events {
            let run = ev
                .extra
                .and_then(|x| serde_json::from_str::<serde_json::Value>(x.get()).ok())
                .map(|x| x["run_id"].clone());
            if let Some(id) = ev.id {
                stored.insert(id, ((ev.start, ev.end), run));
            }
        }
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    let before = converted.events.len();
    converted.events.retain(|e| {
        let id = e["id"].as_str().unwrap_or_default();
        match stored.get(id) {
            Some((span, run)) => {
                Some(*span) != interval(e) || run.as_ref() == Some(&e["extra"]["run_id"])
            }
            None => true,
        }
    });
    let dropped = before - converted.events.len();
    if dropped > 0 {
        converted.skipped.push((
            "batches another run of the query recorded (re-run after a restart)".into(),
            dropped,
        ));
    }
    Ok(())
}

/// `assets` without `--limit` or `--after`: every page (of the largest
/// size), as one answer with `next` null and the first page's `as_of`.
fn assets_all(
    ledger: &dyn Ask,
    mut request: gapless_api::AssetsRequest,
) -> Result<gapless_api::AssetsAnswer, Error> {
    request.limit = Some(gapless_api::params::MAX_LIST_PAGE.to_string());
    let mut all = ledger.assets(&request)?;
    while let Some(next) = all.next.take() {
        request.after = Some(next);
        let page = ledger.assets(&request)?;
        all.assets.extend(page.assets);
        all.next = page.next;
    }
    Ok(all)
}

/// `rules` without `--limit` or `--after`: every page, as one answer with
/// `next` null.
fn rules_all(
    ledger: &dyn Ask,
    mut request: gapless_api::RulesRequest,
) -> Result<gapless_api::RulesAnswer, Error> {
    request.limit = Some(gapless_api::params::MAX_LIST_PAGE.to_string());
    let mut all = ledger.rules(&request)?;
    while let Some(next) = all.next.take() {
        request.after = Some(next);
        let page = ledger.rules(&request)?;
        all.rules.extend(page.rules);
        all.next = page.next;
    }
    Ok(all)
}

/// `segments` without `--limit` or `--after`: every page, printed as it
/// comes (memory bounded by a page), as one answer: a segment split where a
/// page ended is joined again, and `next` is null.
fn segments_all(
    ledger: &dyn Ask,
    mut request: gapless_api::SegmentsRequest,
    output: Output,
) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    let mut count = 0_usize;
    let mut pending: Option<gapless_api::SegmentAnswer> = None;
    let mut first = true;
    // The first page's: the answer as a whole starts where it does.
    let mut pruned_before = None;
    loop {
        let page = ledger.segments(&request)?;
        if first {
            pruned_before = page.pruned_before;
            let _ = if output.json {
                write!(
                    out,
                    "{{\"asset\":{},\"start\":{},\"end\":{},\"segments\":[",
                    json(&page.asset)?,
                    json(&page.start)?,
                    json(&page.end)?
                )
            } else {
                write!(out, "{}", human::segments_head(&page))
            };
        }
        for s in page.segments {
            match &mut pending {
                Some(p) if p.event == s.event && p.kind == s.kind && p.end == s.start => {
                    p.end = s.end
                }
                _ => {
                    if let Some(p) = pending.replace(s) {
                        emit_segment(&mut out, output, &p, count)?;
                        count += 1;
                    }
                }
            }
        }
        first = false;
        match page.next {
            Some(next) => request.after = Some(next),
            None => break,
        }
    }
    if let Some(p) = pending {
        emit_segment(&mut out, output, &p, count)?;
        count += 1;
    }
    let _ = if output.json {
        writeln!(
            out,
            "],\"next\":null,\"pruned_before\":{}}}",
            json(&pruned_before)?
        )
    } else {
        write!(
            out,
            "{}{}",
            human::segments_tail(count, None),
            human::pruned_note(pruned_before)
        )
    };
    Ok(())
}

/// One segment of [`segments_all`], the `index`-th printed.
fn emit_segment(
    out: &mut impl Write,
    output: Output,
    s: &gapless_api::SegmentAnswer,
    index: usize,
) -> Result<(), Error> {
    let _ = if output.json {
        write!(out, "{}{}", if index == 0 { "" } else { "," }, json(s)?)
    } else {
        write!(out, "{}", human::segment_row(s))
    };
    Ok(())
}

/// `v` as JSON text.
fn json<T: Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string(v).map_err(|e| Error::fault(e.to_string()))
}
