//! `deliver`: firings to their targets (SPEC §7), once or until killed;
//! and the targets file of `serve` and `deliver`.

use std::path::Path;
use std::process::ExitCode;

use gapless_api::Error;
use gapless_deliver::{Deliverer, Targets, TARGETS_ENV};

use crate::cli::Cli;

/// The targets file named by `flag`, else by `GAPLESS_TARGETS_FILE`, if
/// any.
pub(crate) fn targets(flag: Option<&Path>) -> Result<Option<Targets>, Error> {
    let from_env = std::env::var_os(TARGETS_ENV).filter(|v| !v.is_empty());
    let path = match (flag, &from_env) {
        (Some(p), _) => p,
        (None, Some(p)) => Path::new(p),
        (None, None) => return Ok(None),
    };
    Targets::load(path)
        .map(Some)
        .map_err(|e| Error::bad_input(e.to_string()))
}

/// `gapless deliver [--targets-file FILE] [--once] [--retry-failed]`.
pub(crate) fn deliver(
    cli: &Cli,
    targets_file: Option<&Path>,
    once: bool,
    retry_failed: bool,
) -> Result<ExitCode, Error> {
    if cli.url.is_some() {
        return Err(Error::bad_input(
            "deliver: --url makes no sense here: deliver works on a ledger (--db); \
             give the server --targets-file instead",
        ));
    }
    let targets = targets(targets_file)?.ok_or_else(|| {
        Error::bad_input(format!(
            "deliver: no targets file: give --targets-file FILE or set {TARGETS_ENV}"
        ))
    })?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let store = crate::store::open_store(&cli.db, false)?;
    if retry_failed {
        let n = store
            .retry_failed(None)
            .map_err(gapless_ledger::from_store)?;
        tracing::info!(firings = n, "failed firings made pending again");
    }
    let mut deliverer = Deliverer::new(store, targets)
        .map_err(gapless_ledger::from_store)?
        .judging_deadlines(true);
    if once {
        deliverer.pass().map_err(gapless_ledger::from_store)?;
        let s = deliverer.stats();
        tracing::info!(
            delivered = s.delivered,
            skipped = s.skipped,
            retried = s.retried,
            failed = s.failed,
            postponed = s.postponed,
            "delivered what was due"
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Until the process is stopped: a delivery cut short by a signal comes
    // back to whoever claims it after its lease.
    let (_keep, stop) = std::sync::mpsc::channel::<()>();
    deliverer.run(&stop);
    Ok(ExitCode::SUCCESS)
}
