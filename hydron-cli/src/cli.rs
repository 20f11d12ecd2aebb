//! The command line, as clap parses it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hydron_codec::parquet::{Compression, ParquetOptions};

use crate::error::{Class, CliError};
use crate::output::{Layout, OutFormat};

/// The exit codes, shown at the end of `hydron --help`.
pub const EXIT_CODES: &str = "\
Exit status:
  0   success
  1   invalid data: a vector is NaN, infinite or not of unit norm, an E8 code
      is out of range; `validate` found an invalid vector
  2   usage: the command line is wrong, an option the output form lacks, or
      an output that is the input file (they \"are the same file\", as cp says)
  3   I/O: missing or unreadable input, unwritable output, disk full
  4   wrong format: not a hydron file, unsupported version, another fory type,
      a Parquet file without a vector or code column (or of another type),
      or with two that could be it (name one with --column); a directory
      without .parquet files, or whose files hold different columns
  5   corrupt: truncated, checksum mismatch, broken framing, malformed JSON,
      a malformed Parquet file
  6   too large: an input read whole is over --max-input-bytes, or memory for
      it could not be had
  70  internal error (a bug in hydron; please report it)
  130 interrupted (Ctrl-C or SIGTERM)
  141 the reader of the output went away (a closed pipe); nothing is printed

Errors are one line on standard error: `hydron: error: FILE: what and where`.
A regular output file is written to a temporary file and renamed into place
at the end, so a failed command leaves no partial output behind. `-`, a
device, a FIFO or a socket at the output path is written to directly. An
output that is the input file (the same path, a symbolic or hard link to it,
or standard output appended to it) is refused before anything is written.

Input forms are found from the content: the hydron container (fory binary or
JSON Lines), a plain JSON array, plain JSON Lines, one fory Gf8Batch, E8Codes
or Gf8 message, or Parquet (a vector column, or an E8 code column). `-` reads
standard input; pipes and FIFOs work like files. Containers, JSON Lines and
Parquet files are streamed; plain JSON arrays, fory messages and Parquet from
a pipe are read whole, up to --max-input-bytes (default 1G). A command that
reads Parquet names the column it reads on standard error
(`hydron: FILE: reading column \"vector\" (TYPE) as vectors`); --column NAME
chooses it.

A directory is a Parquet data set, read as one input: the .parquet files in it
and its subdirectories (Hive `key=value/` directories too), in the byte order
of their paths, skipping names that start with _ or . (_SUCCESS, .crc files).
Every file must hold the same column; `inspect DIR` lists the files.

`inspect` also reads a regular file of lattice codes (what `quantize --bits
16|32` writes: a fory LatticeCodes message, or Parquet with hydron.quant.*
keys) and shows its parameters; the other commands do not read them.";

/// Generate, inspect, validate, convert and quantize files of Gf8 vectors
/// (unit vectors in 8 dimensions) and their E8 root codes.
#[derive(Debug, Parser)]
#[command(name = "hydron", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// The largest input read whole (a plain JSON array, a fory message,
    /// Parquet from a pipe; containers, JSON Lines and Parquet files are
    /// streamed), in bytes; K, M, G and T suffixes are powers of 1024.
    #[arg(long, global = true, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    pub max_input_bytes: u64,
}

/// Parses `1073741824`, `512K`, `64M`, `1G` or `2T` (powers of 1024).
fn parse_bytes(text: &str) -> Result<u64, String> {
    let (digits, shift) = match text.char_indices().last() {
        Some((i, 'k' | 'K')) => (&text[..i], 10),
        Some((i, 'm' | 'M')) => (&text[..i], 20),
        Some((i, 'g' | 'G')) => (&text[..i], 30),
        Some((i, 't' | 'T')) => (&text[..i], 40),
        _ => (text, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count such as 1048576, 512K, 64M or 2G"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// Parses `--bits`: 8, 16 or 32.
fn parse_code_bits(text: &str) -> Result<u8, String> {
    match text {
        "8" => Ok(8),
        "16" => Ok(16),
        "32" => Ok(32),
        _ => Err(format!("`{text}` is not 8, 16 or 32")),
    }
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
    /// Quantize every vector to a code of 8, 16 or 32 bits (its nearest E8
    /// root, or a finer lattice code) and report the angle error.
    Quantize(QuantizeArgs),
    /// Write N random unit vectors (Gaussian, then normalized).
    Gen(GenArgs),
}

/// How an input is read, for every command that reads one.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The column of a Parquet input to read (vectors, or E8 codes if it
    /// is a code column). Without it: the column marked hydron.type, else
    /// the one named `vector` (or `code`), else the only list-of-floats
    /// (or integer) column; two or more such columns are an error listing
    /// them. In a data set, the same column is read from every file. A
    /// Parquet file of lattice codes is read from its column `code` (with
    /// or without --column code); another NAME there must be a vector
    /// column. A usage error for an input that is not Parquet.
    #[arg(long, value_name = "NAME")]
    pub column: Option<String>,
}

impl ReadArgs {
    /// The column named on the command line.
    #[must_use]
    pub fn column(&self) -> Option<&str> {
        self.column.as_deref()
    }
}

/// `hydron inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The file to describe (`-` for standard input; a directory is a
    /// Parquet data set).
    pub file: PathBuf,
    /// Input settings.
    #[command(flatten)]
    pub read: ReadArgs,
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
    /// The file to check (`-` for standard input; a directory is a
    /// Parquet data set).
    pub file: PathBuf,
    /// Input settings.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many invalid vectors to list (all are counted, and any makes
    /// the exit status 1, even with 0 listed).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_problems: usize,
}

/// `hydron convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The file to read (any form hydron reads; `-` for standard input; a
    /// directory is a Parquet data set).
    pub input: PathBuf,
    /// Input settings.
    #[command(flatten)]
    pub read: ReadArgs,
    /// The file to write: a regular file is replaced atomically at the
    /// end; `-` (standard output), a device or a FIFO is written to as the
    /// data comes.
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
    /// Parquet output settings.
    #[command(flatten)]
    pub parquet: ParquetArgs,
}

impl ConvertArgs {
    /// The output's layout; a usage error if an option is set that the
    /// output form does not have.
    pub fn layout(&self) -> Result<Layout, CliError> {
        layout(self.to, self.chunk_vectors, &self.parquet)
    }
}

/// The layout of an output in `format`. A chunk size for a form without
/// chunks, or Parquet settings for a form that is not Parquet, would be
/// ignored without a word: a usage error instead (exit 2).
fn layout(
    format: OutFormat,
    chunk_vectors: Option<u32>,
    parquet: &ParquetArgs,
) -> Result<Layout, CliError> {
    let container = matches!(format, OutFormat::Fory | OutFormat::Jsonl);
    let is_parquet = matches!(format, OutFormat::Parquet | OutFormat::ParquetCodes);
    let refuse = |option: &str, applies_to: &str| {
        let name = format
            .to_possible_value()
            .map_or_else(|| format!("{format:?}"), |v| v.get_name().to_owned());
        Err(CliError::new(
            Class::Usage,
            format!("{option} applies to {applies_to}, not to the {name} form"),
        ))
    };
    if chunk_vectors.is_some() && !container {
        return refuse("--chunk-vectors", "a container output (fory or jsonl)");
    }
    if !is_parquet {
        if parquet.compression.is_some() {
            return refuse("--compression", "a Parquet output");
        }
        if parquet.row_group_vectors.is_some() {
            return refuse("--row-group-vectors", "a Parquet output");
        }
    }
    Ok(Layout {
        chunk_vectors,
        parquet: parquet.options(),
    })
}

/// How a Parquet output is written.
#[derive(Debug, Args)]
pub struct ParquetArgs {
    /// Compression of a Parquet output: none, snappy (the default), lz4,
    /// zstd or zstd:LEVEL (1..=22), gzip or gzip:LEVEL (0..=9).
    #[arg(long, value_name = "CODEC")]
    pub compression: Option<Compression>,
    /// Vectors per row group of a Parquet output (1..=16777216; default
    /// 262144). A writer holds about one row group in memory.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=16_777_216))]
    pub row_group_vectors: Option<u64>,
}

impl ParquetArgs {
    /// The options these arguments give (hydron-codec's defaults for the
    /// rest).
    #[must_use]
    pub fn options(&self) -> ParquetOptions {
        let mut options = ParquetOptions::new();
        if let Some(c) = self.compression {
            options = options.with_compression(c);
        }
        if let Some(n) = self.row_group_vectors {
            options = options.with_row_group_vectors(usize::try_from(n).unwrap_or(usize::MAX));
        }
        options
    }
}

/// The forms `quantize` writes the codes in.
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum CodesFormat {
    /// One fory `E8Codes` message, held in memory until the end.
    Codes,
    /// Parquet, one `UInt8` column `code`, row group by row group.
    Parquet,
}

impl CodesFormat {
    /// The output form.
    #[must_use]
    pub fn out(self) -> OutFormat {
        match self {
            CodesFormat::Codes => OutFormat::Codes,
            CodesFormat::Parquet => OutFormat::ParquetCodes,
        }
    }
}

/// `hydron quantize`.
#[derive(Debug, Args)]
pub struct QuantizeArgs {
    /// The file to read (any form hydron reads; `-` for standard input; a
    /// directory is a Parquet data set).
    pub input: PathBuf,
    /// Input settings.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Where to write the codes (`-` for standard output).
    pub output: PathBuf,
    /// The form of the codes: one fory message (held in memory until the
    /// end: the message starts with their count), or Parquet. 8-bit codes
    /// are an E8Codes message or a Parquet UInt8 column `code` (written row
    /// group by row group); 16- and 32-bit codes a LatticeCodes message or
    /// a Parquet FixedSizeBinary column `code`, with their parameters (see
    /// docs/format.md §7).
    #[arg(long, value_enum, default_value_t = CodesFormat::Codes)]
    pub to: CodesFormat,
    /// Bits per vector: 8 (the nearest E8 root: 240 directions, mean error
    /// 31.5° on random vectors), 16 (an E8P codeword: 65,536 directions,
    /// 14.4°) or 32 (a point of the E8 shell of norm² 196: 254,864,880
    /// directions, 4.4°).
    #[arg(long, default_value_t = 8, value_name = "8|16|32", value_parser = parse_code_bits)]
    pub bits: u8,
    /// Parquet output settings.
    #[command(flatten)]
    pub parquet: ParquetArgs,
}

/// `hydron gen`.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// How many vectors.
    pub n: u64,
    /// The file to write (`-` for standard output).
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
    /// Parquet output settings.
    #[command(flatten)]
    pub parquet: ParquetArgs,
}

impl GenArgs {
    /// The output's layout; a usage error if an option is set that the
    /// output form does not have.
    pub fn layout(&self) -> Result<Layout, CliError> {
        layout(self.format, self.chunk_vectors, &self.parquet)
    }
}

impl QuantizeArgs {
    /// The output's layout; a usage error if Parquet settings are given
    /// for the fory codes message.
    pub fn layout(&self) -> Result<Layout, CliError> {
        layout(self.to.out(), None, &self.parquet)
    }
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
        for code in [
            "0 ", "1 ", "2 ", "3 ", "4 ", "5 ", "6 ", "70 ", "130 ", "141 ",
        ] {
            assert!(help.contains(&format!("\n  {code}")), "{code}");
        }
    }

    #[test]
    fn byte_counts_parse() {
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert_eq!(parse_bytes("512K"), Ok(512 << 10));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(parse_bytes("2t"), Ok(2 << 40));
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("G").is_err());
        assert!(parse_bytes("-1").is_err());
        assert!(parse_bytes("99999999999T").is_err());
    }
}
