//! fsbench: wiring only: parse -> dispatch to the subcommand -> exit status.

use std::process::ExitCode;

use clap::Parser;

use fsbench::cli::Cli;
use fsbench::cmd::{self, Exit};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let exit = match cmd::dispatch(cli) {
        Ok(e) => e,
        Err(e) => {
            fsbench::out::to_stderr(&format!("fsbench: error: {e:#}\n"));
            Exit::Usage
        }
    };
    ExitCode::from(exit.code())
}
