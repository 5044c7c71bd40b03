//! Each command: parse its flags, ask the ledger, print the answer.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use gapless_core::Instant;
use gapless_ledger::ingest::Unit;
use gapless_ledger::{params, Ledger, LedgerError};
use serde::Serialize;

use crate::cli::{AssetCommand, Cli, Command};
use crate::human;

/// The time the ledger stamps on what it receives.
fn now() -> Instant {
    let ts = jiff::Timestamp::now();
    Instant::from_micros(ts.as_microsecond()).expect("the clock is within 0001-9999")
}

fn open(cli: &Cli) -> Result<Ledger, LedgerError> {
    if cli.url.is_some() {
        return Err(LedgerError::BadInput(
            "--url: client mode is not available in this build; use --db".into(),
        ));
    }
    let store = gapless_store::open(&cli.db)?;
    Ok(Ledger::new(Arc::from(store)))
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
    let ledger = open(&cli)?;
    match cli.command {
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
            let batch = ledger.parse(Unit::Single, [line.as_str()])?;
            let answer = ledger.append(&batch, now())?;
            emit(json, &answer, || human::appended(&answer))?;
        }
        Command::Ingest { file, json } => {
            let answer = ingest(&ledger, file.as_deref())?;
            emit(json, &answer, || human::appended(&answer))?;
        }
        Command::Check {
            asset,
            range,
            policy,
            tz,
            json,
        } => {
            let (zone, _) = params::time_zone(tz.as_deref())?;
            let range = params::range(&range.start, &range.end, Some(&zone))?;
            let policy = params::policy(policy.as_deref())?;
            let answer = ledger.check(&asset, range, &policy)?;
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
            let (zone, tz_name) = params::time_zone(tz.as_deref())?;
            let range = params::range(&range.start, &range.end, Some(&zone))?;
            let grid = params::grid(&every)?;
            let policy = params::policy(policy.as_deref())?;
            let answer = ledger.windows(&asset, range, &grid, (&zone, &tz_name), &policy)?;
            emit(json, &answer, || human::windows(&answer))?;
        }
        Command::Segments {
            asset,
            range,
            tz,
            json,
        } => {
            let (zone, _) = params::time_zone(tz.as_deref())?;
            let range = params::range(&range.start, &range.end, Some(&zone))?;
            let answer = ledger.segments(&asset, range)?;
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
            let (zone, _) = params::time_zone(tz.as_deref())?;
            let range = match (range.start, range.end) {
                (Some(s), Some(e)) => Some(params::range(&s, &e, Some(&zone))?),
                _ => None,
            };
            let kind = kind.as_deref().map(params::kind).transpose()?;
            let after = after.as_deref().map(params::cursor).transpose()?;
            let answer = ledger.events(&asset, range, kind, limit, after)?;
            emit(json, &answer, || human::events(&answer))?;
        }
        Command::Frontier {
            asset,
            origin,
            tz,
            json,
        } => {
            let (zone, _) = params::time_zone(tz.as_deref())?;
            let origin = params::instant("origin", &origin, Some(&zone))?;
            let answer = ledger.frontier(&asset, origin)?;
            emit(json, &answer, || human::frontier(&answer))?;
        }
        Command::Asset(AssetCommand::Set {
            asset,
            key_span,
            tz,
            json,
        }) => {
            let answer = ledger.declare(&asset, key_span.as_deref(), tz.as_deref())?;
            emit(json, &answer, || human::decl(&answer))?;
        }
        Command::Asset(AssetCommand::List { json }) | Command::Assets { json } => {
            let answer = ledger.assets()?;
            emit(json, &answer, || human::assets(&answer))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `ingest`: the whole input is one atomic batch.
fn ingest(
    ledger: &Ledger,
    file: Option<&std::path::Path>,
) -> Result<gapless_store::Appended, LedgerError> {
    let (name, text) = match file {
        Some(p) if p.as_os_str() != "-" => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| LedgerError::BadInput(format!("cannot read {}: {e}", p.display())))?;
            (p.display().to_string(), text)
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| LedgerError::BadInput(format!("cannot read standard input: {e}")))?;
            ("standard input".to_string(), text)
        }
    };
    // Hidden by indicatif when standard error is not a terminal.
    let bar = indicatif::ProgressBar::new(text.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes} {per_sec}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("reading {name}"));
    let mut batch = ledger.batch(Unit::Line);
    let mut done: u64 = 0;
    for line in text.split('\n') {
        batch.push(line.strip_suffix('\r').unwrap_or(line))?;
        done += line.len() as u64 + 1;
        if done & 0xFFFF < line.len() as u64 + 1 {
            bar.set_position(done);
        }
    }
    bar.set_message("committing");
    let batch = batch.finish();
    let answer = ledger.append(&batch, now());
    bar.finish_and_clear();
    answer
}
