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

use clap::Parser;

use crate::error::Class;

fn main() {
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
    let result = panic::catch_unwind(AssertUnwindSafe(|| cmd::run(cli)));
    // From here on a signal cannot start its own exit: the temporary file
    // registry (empty by now) stays locked until the process ends.
    let _registry = hydron_codec::save::remove_temp_files();
    let code = match result {
        Ok(Ok(())) => 0,
        // The reader of the output went away: quietly, like other tools.
        Ok(Err(e)) if e.class == Class::BrokenPipe => e.code(),
        Ok(Err(e)) => {
            let _ = writeln!(std::io::stderr(), "hydron: error: {e}");
            e.code()
        }
        Err(_) => Class::Internal.code(),
    };
    let _ = std::io::stdout().flush();
    std::process::exit(i32::from(code))
}
