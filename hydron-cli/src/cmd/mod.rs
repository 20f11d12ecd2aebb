//! The subcommands, one file each.

mod convert;
mod gen;
mod inspect;
mod quantize;
mod scan;
mod validate;

use std::io::Write;

use crate::cli::{Cli, Command};
use crate::error::{Class, CliError};

/// Runs the command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Quantize(args) => quantize::run(&args),
        Command::Gen(args) => gen::run(&args),
    }
}

/// Writes `text` to standard output.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::new(Class::Io, format!("cannot write to standard output: {e}")))
}

/// Prints a JSON value on one line of standard output.
pub(crate) fn print_json(value: &serde_json::Value) -> Result<(), CliError> {
    print(&format!("{value}\n"))
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
