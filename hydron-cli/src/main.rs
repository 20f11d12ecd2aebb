//! `hydron`: the command-line tool for Gf8 files.
//!
//! Every failure is one line on standard error and an exit code per class
//! of failure (see [`error::Class`] and `hydron --help`); nothing panics
//! on bad input, and a panic (a bug) is caught and reported the same way.

mod cli;
mod cmd;
mod error;
mod input;
mod interrupt;
mod output;
mod progress;
mod stats;

use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;

use clap::Parser;

use crate::error::Class;

fn main() -> ExitCode {
    panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_owned());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let _ = writeln!(
            std::io::stderr(),
            "hydron: error: internal error (a bug in hydron; please report it): {what}{at}"
        );
    }));
    let cli = cli::Cli::parse();
    interrupt::install();
    // Unwinding runs destructors, so temporary output files are removed.
    match panic::catch_unwind(AssertUnwindSafe(|| cmd::run(cli))) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            let _ = writeln!(std::io::stderr(), "hydron: error: {e}");
            ExitCode::from(e.code())
        }
        Err(_) => ExitCode::from(Class::Internal.code()),
    }
}
