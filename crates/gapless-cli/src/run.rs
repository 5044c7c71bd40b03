//! Each command: parse its flags, ask the ledger, print the answer.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use gapless_ledger::ingest::Unit;
use gapless_ledger::{now, params, Ledger, LedgerError};
use gapless_server::client::Client;
use serde::Serialize;

use crate::cli::{AssetCommand, Cli, Command};
use crate::human;

/// Where the questions go: a ledger this process opens, or a server.
enum Target {
    Embedded(Ledger),
    Remote(Client),
}

fn open(cli: &Cli) -> Result<Target, LedgerError> {
    if let Some(url) = &cli.url {
        let token = std::env::var(gapless_server::client::TOKEN_ENV).ok();
        return Ok(Target::Remote(Client::new(url)?.with_token(token)));
    }
    let store = gapless_store::open(&cli.db)?;
    Ok(Target::Embedded(Ledger::new(Arc::from(store))))
}

fn print_json(answer: &impl Serialize) -> Result<(), LedgerError> {
    let text = serde_json::to_string(answer).map_err(|e| LedgerError::Fault(e.to_string()))?;
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = writeln!(out, "{text}");
    Ok(())
}

fn emit(
    json: bool,
    answer: &impl Serialize,
    human: impl FnOnce() -> String,
) -> Result<(), LedgerError> {
    if json {
        print_json(answer)
    } else {
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "{}", human());
        Ok(())
    }
}

/// Run one command; the exit code on success, or the error to report.
pub fn run(cli: Cli) -> Result<ExitCode, LedgerError> {
    if let Command::Serve {
        listen,
        tokens_file,
    } = &cli.command
    {
        return serve(&cli, listen.as_deref(), tokens_file.as_deref());
    }
    let target = open(&cli)?;
    match cli.command {
        Command::Serve { .. } => unreachable!("handled above"),
        Command::Emit {
            asset,
            start,
            end,
            id,
            retract,
            extra,
            produced_at,
            json,
        } => {
            let mut event = serde_json::Map::new();
            event.insert("asset".into(), asset.into());
            event.insert("start".into(), start.into());
            event.insert("end".into(), end.into());
            if let Some(id) = id {
                event.insert("id".into(), id.into());
            }
            if retract {
                event.insert("kind".into(), "retracted".into());
            }
            if let Some(p) = produced_at {
                event.insert("produced_at".into(), p.into());
            }
            let mut line = serde_json::Value::Object(event).to_string();
            if let Some(extra) = extra {
                // Spliced in as text so that it is kept byte for byte; the
                // event parser checks that it is a JSON object.
                line.pop();
                line.push_str(",\"extra\":");
                line.push_str(&extra);
                line.push('}');
            }
            let answer = match &target {
                Target::Embedded(ledger) => {
                    let batch = ledger.parse(Unit::Single, [line.as_str()])?;
                    ledger.append(&batch, now())?
                }
                Target::Remote(client) => client.emit_json(&line)?,
            };
            emit(json, &answer, || human::appended(&answer))?;
        }
        Command::Ingest { file, json } => {
            let answer = ingest(&target, file.as_deref())?;
            emit(json, &answer, || human::appended(&answer))?;
        }
        Command::Check {
            asset,
            range,
            policy,
            tz,
            json,
        } => {
            let answer = match &target {
                Target::Embedded(ledger) => {
                    let (zone, _) = params::time_zone(tz.as_deref())?;
                    let range = params::range(&range.start, &range.end, Some(&zone))?;
                    let policy = params::policy(policy.as_deref())?;
                    ledger.check(&asset, range, &policy)?
                }
                Target::Remote(client) => client.check(
                    &asset,
                    &range.start,
                    &range.end,
                    policy.as_deref(),
                    tz.as_deref(),
                )?,
            };
            emit(json, &answer, || human::check(&answer))?;
            return Ok(if answer.complete {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        Command::Windows {
            asset,
            range,
            every,
            tz,
            policy,
            json,
        } => {
            let answer = match &target {
                Target::Embedded(ledger) => {
                    let (zone, tz_name) = params::time_zone(tz.as_deref())?;
                    let range = params::range(&range.start, &range.end, Some(&zone))?;
                    let grid = params::grid(&every)?;
                    let policy = params::policy(policy.as_deref())?;
                    ledger.windows(&asset, range, &grid, (&zone, &tz_name), &policy)?
                }
                Target::Remote(client) => client.windows(
                    &asset,
                    &range.start,
                    &range.end,
                    &every,
                    tz.as_deref(),
                    policy.as_deref(),
                )?,
            };
            emit(json, &answer, || human::windows(&answer))?;
        }
        Command::Segments {
            asset,
            range,
            tz,
            json,
        } => {
            let answer = match &target {
                Target::Embedded(ledger) => {
                    let (zone, _) = params::time_zone(tz.as_deref())?;
                    let range = params::range(&range.start, &range.end, Some(&zone))?;
                    ledger.segments(&asset, range)?
                }
                Target::Remote(client) => {
                    client.segments(&asset, &range.start, &range.end, tz.as_deref())?
                }
            };
            emit(json, &answer, || human::segments(&answer))?;
        }
        Command::Events {
            asset,
            range,
            kind,
            limit,
            after,
            tz,
            json,
        } => {
            let answer = match &target {
                Target::Embedded(ledger) => {
                    let (zone, _) = params::time_zone(tz.as_deref())?;
                    let range = match (&range.start, &range.end) {
                        (Some(s), Some(e)) => Some(params::range(s, e, Some(&zone))?),
                        _ => None,
                    };
                    let kind = kind.as_deref().map(params::kind).transpose()?;
                    let after = after.as_deref().map(params::cursor).transpose()?;
                    ledger.events(&asset, range, kind, limit, after)?
                }
                Target::Remote(client) => {
                    let range = range.start.as_deref().zip(range.end.as_deref());
                    client.events(
                        &asset,
                        range,
                        kind.as_deref(),
                        limit,
                        after.as_deref(),
                        tz.as_deref(),
                    )?
                }
            };
            emit(json, &answer, || human::events(&answer))?;
        }
        Command::Frontier {
            asset,
            origin,
            tz,
            json,
        } => {
            let answer = match &target {
                Target::Embedded(ledger) => {
                    let (zone, _) = params::time_zone(tz.as_deref())?;
                    let origin = params::instant("origin", &origin, Some(&zone))?;
                    ledger.frontier(&asset, origin)?
                }
                Target::Remote(client) => client.frontier(&asset, &origin, tz.as_deref())?,
            };
            emit(json, &answer, || human::frontier(&answer))?;
        }
        Command::Asset(AssetCommand::Set {
            asset,
            key_span,
            tz,
            json,
        }) => {
            let answer = match &target {
                Target::Embedded(ledger) => {
                    ledger.declare(&asset, key_span.as_deref(), tz.as_deref())?
                }
                Target::Remote(client) => {
                    client.declare(&asset, key_span.as_deref(), tz.as_deref())?
                }
            };
            emit(json, &answer, || human::decl(&answer))?;
        }
        Command::Asset(AssetCommand::List { json }) | Command::Assets { json } => {
            let answer = match &target {
                Target::Embedded(ledger) => ledger.assets()?,
                Target::Remote(client) => client.assets()?,
            };
            emit(json, &answer, || human::assets(&answer))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `serve`: the HTTP server on this ledger until SIGTERM or ctrl-c.
fn serve(
    cli: &Cli,
    listen: Option<&str>,
    tokens_file: Option<&std::path::Path>,
) -> Result<ExitCode, LedgerError> {
    let config_error = |e: gapless_server::ServerError| LedgerError::BadInput(e.to_string());
    if cli.url.is_some() {
        return Err(LedgerError::BadInput(
            "serve: --url makes no sense here; serve a ledger with --db".into(),
        ));
    }
    let listen = listen.unwrap_or(gapless_server::DEFAULT_LISTEN);
    let listen = listen
        .parse()
        .map_err(|e| LedgerError::BadInput(format!("--listen: invalid address {listen:?}: {e}")))?;
    let tokens = match tokens_file {
        Some(path) => Some(gapless_server::Tokens::load(path).map_err(config_error)?),
        None => gapless_server::Tokens::from_env().map_err(config_error)?,
    };
    let config = gapless_server::ServerConfig {
        listen,
        tokens,
        ..Default::default()
    };
    let store = gapless_store::open(&cli.db)?;
    gapless_server::run(Ledger::new(Arc::from(store)), config).map_err(|e| match e {
        gapless_server::ServerError::Config(m) => LedgerError::BadInput(m),
        other => LedgerError::Unavailable(other.to_string()),
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `ingest`: the whole input is one atomic batch.
fn ingest(
    target: &Target,
    file: Option<&std::path::Path>,
) -> Result<gapless_store::Appended, LedgerError> {
    let path = file.filter(|p| p.as_os_str() != "-");
    let name = path.map_or_else(|| "standard input".to_string(), |p| p.display().to_string());
    let cannot_read = |e: std::io::Error| LedgerError::BadInput(format!("cannot read {name}: {e}"));
    let (input, size): (Box<dyn Read + Send>, Option<u64>) = match path {
        Some(p) => {
            let file = std::fs::File::open(p).map_err(cannot_read)?;
            let size = file.metadata().ok().map(|m| m.len());
            (Box::new(file), size)
        }
        None => (Box::new(std::io::stdin()), None),
    };
    let ledger = match target {
        Target::Embedded(ledger) => ledger,
        // The server parses and names bad lines itself.
        Target::Remote(client) => {
            let mut text = String::new();
            { input }.read_to_string(&mut text).map_err(cannot_read)?;
            return client.ingest_ndjson(&text);
        }
    };
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
    let answer = ledger.ingest_ndjson(input, &name, now(), &|read| bar.set_position(read));
    bar.finish_and_clear();
    answer
}
