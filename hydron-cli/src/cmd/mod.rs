//! The subcommands, one file each.

mod convert;
mod gen;
mod inspect;
mod lattice;
mod quantize;
mod scan;
mod validate;

use std::io::Write;

use crate::cli::{Cli, Command};
use crate::error::{Class, CliError};
use crate::output::Done;

/// Runs the command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    let limit = cli.max_input_bytes;
    match cli.command {
        Command::Inspect(args) => inspect::run(&args, limit),
        Command::Validate(args) => validate::run(&args, limit),
        Command::Convert(args) => convert::run(&args, limit),
        Command::Quantize(args) => quantize::run(&args, limit),
        Command::Gen(args) => gen::run(&args),
    }
}

/// Prints the report of a command that wrote `sink`'s output, then moves
/// the output into place: a report that cannot be printed fails the
/// command before the output replaces anything. When the output is
/// standard output, the report goes to standard error.
pub(crate) fn report_and_commit(done: Done, report: &str) -> Result<(), CliError> {
    if done.is_stdout() {
        let _ = std::io::stderr().write_all(report.as_bytes());
    } else {
        print(report)?;
    }
    done.commit()
}

/// Writes `text` to standard output.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| {
            CliError::new(
                Class::of_io(&e),
                format!("cannot write to standard output: {e}"),
            )
        })
}

/// Prints a JSON value on one line of standard output.
pub(crate) fn print_json(value: &serde_json::Value) -> Result<(), CliError> {
    print(&format!("{value}\n"))
}

/// Says on standard error which Parquet column `input` reads (nothing
/// for other forms).
pub(crate) fn note_column(input: &crate::input::Input) {
    if let Some(note) = input.column_note() {
        let _ = writeln!(std::io::stderr(), "hydron: {note}");
    }
}

/// Prints a warning line on standard error.
pub(crate) fn warn(text: &str) {
    let _ = writeln!(std::io::stderr(), "hydron: warning: {text}");
}

/// A byte count for people: `1234567 bytes (1.18 MiB)`.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut x = n as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    format!("{n} bytes ({x:.2} {})", UNITS[unit])
}

#[cfg(test)]
mod tests {
    #[test]
    fn byte_counts() {
        assert_eq!(super::bytes(5), "5 bytes");
        assert_eq!(super::bytes(1536), "1536 bytes (1.50 KiB)");
        assert_eq!(super::bytes(3 << 30), "3221225472 bytes (3.00 GiB)");
    }
}
