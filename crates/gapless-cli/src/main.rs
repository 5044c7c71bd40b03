//! `gapless`: the command line (SPEC §3).
//!
//! # Layout
//!
//! - `cli.rs`: the grammar (clap).
//! - `run.rs`: each command: parse its flags, ask the ledger, print;
//!   `serve`'s flags to `gapless-server`, which serves and delivers.
//! - `deliver.rs`: `deliver`, and the targets file of `serve` and `deliver`.
//! - `store.rs`: opening the store at `--db`, for `run.rs` and `deliver.rs`
//!   (which imports nothing of `run.rs`).
//! - `human.rs`: the readable tables; `--json` prints the answer types of
//!   `gapless-ledger` as they are.
//! - `arg_error.rs`: clap's errors as one line naming the flag.
//! - `allocator.rs`: mimalloc, purging at once in `serve`.
//!
//! Exit codes: 0 success (and complete for `check`), 1 not complete for
//! `check`, 2 any error, with one line on standard error.

mod allocator;
mod arg_error;
mod cli;
mod deliver;
mod human;
mod human_rules;
mod run;
mod store;

use std::process::ExitCode;

use clap::error::ErrorKind;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse_args() {
        Ok(cli) => cli,
        // Help and version print as clap prints them (standard output,
        // exit 0; the help of a command given without its subcommand,
        // standard error, exit 2).
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            e.exit()
        }
        Err(e) => {
            eprintln!("gapless: {}", arg_error::one_line(&e));
            return ExitCode::from(2);
        }
    };
    if matches!(cli.command, cli::Command::Serve { .. }) {
        allocator::purge_at_once();
    }
    match run::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One line, whatever the cause.
            let msg = e.to_string().replace('\n', " ");
            eprintln!("gapless: {msg}");
            ExitCode::from(2)
        }
    }
}
