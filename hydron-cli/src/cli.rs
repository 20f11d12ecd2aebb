//! The command line, as clap parses it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::output::OutFormat;

/// The exit codes, shown at the end of `hydron --help`.
pub const EXIT_CODES: &str = "\
Exit status:
  0   success
  1   invalid data: a vector is NaN, infinite or not of unit norm, an E8 code
      is out of range; `validate` found an invalid vector
  2   usage: the command line is wrong
  3   I/O: missing or unreadable input, unwritable output, disk full
  4   wrong format: not a hydron file, unsupported version, another fory type
  5   corrupt: truncated, checksum mismatch, broken framing, malformed JSON
  70  internal error (a bug in hydron; please report it)
  130 interrupted (Ctrl-C or SIGTERM)

Errors are one line on standard error: `hydron: error: FILE: what and where`.
Outputs are written to a temporary file and renamed into place at the end, so
a failed command leaves no partial output behind.

Input forms are found from the content: the hydron container (fory binary or
JSON Lines), a plain JSON array, plain JSON Lines, or one fory Gf8Batch,
E8Codes or Gf8 message.";

/// Generate, inspect, validate, convert and quantize files of Gf8 vectors
/// (unit vectors in 8 dimensions) and their E8 root codes.
#[derive(Debug, Parser)]
#[command(name = "hydron", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Describe a file: form, version, vector and chunk counts, checksums,
    /// norm range, zero vectors and the most frequent E8 roots.
    Inspect(InspectArgs),
    /// Check every checksum and every vector; exit 0 only if all are valid.
    Validate(ValidateArgs),
    /// Convert a file to another form, streaming chunk by chunk.
    Convert(ConvertArgs),
    /// Quantize every vector to its nearest E8 root (a one-byte code) and
    /// report the quantization error.
    Quantize(QuantizeArgs),
    /// Write N random unit vectors (Gaussian, then normalized).
    Gen(GenArgs),
}

/// `hydron inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The file to describe.
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many of the most frequent E8 roots to list.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub top: usize,
}

/// `hydron validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The file to check.
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many invalid vectors to list (all are counted).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_problems: usize,
}

/// `hydron convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The file to read (any form hydron reads).
    pub input: PathBuf,
    /// The file to write (replaced atomically at the end).
    pub output: PathBuf,
    /// The form to write.
    #[arg(long, value_enum)]
    pub to: OutFormat,
    /// Scale finite vectors that are not of unit norm onto the sphere
    /// instead of failing on them (NaN and infinities still fail).
    #[arg(long)]
    pub renormalize: bool,
    /// Vectors per chunk of a container output (1..=1048576).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub chunk_vectors: Option<u32>,
}

/// `hydron quantize`.
#[derive(Debug, Args)]
pub struct QuantizeArgs {
    /// The file to read (any form hydron reads).
    pub input: PathBuf,
    /// Where to write the codes: one fory E8Codes message.
    pub output: PathBuf,
}

/// `hydron gen`.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// How many vectors.
    pub n: u64,
    /// The file to write.
    pub output: PathBuf,
    /// Seed of the random generator (ChaCha8); the same seed gives the same
    /// vectors in every form. Without it a random seed is used and shown.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// The form to write.
    #[arg(long, value_enum, default_value_t = OutFormat::Fory)]
    pub format: OutFormat,
    /// Vectors per chunk of a container output (1..=1048576).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub chunk_vectors: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn help_lists_every_exit_code() {
        let help = Cli::command().render_long_help().to_string();
        for code in ["0 ", "1 ", "2 ", "3 ", "4 ", "5 ", "70 ", "130 "] {
            assert!(help.contains(&format!("\n  {code}")), "{code}");
        }
    }
}
