//! Lattice codes as an input (`hydron_codec::quant`, docs/format.md §7): a
//! fory `LatticeCodes` message, found from the framing detection already
//! looked at, or Parquet whose footer holds the `hydron.quant.*` keys.
//!
//! Found from the content, the same for a path, standard input, a pipe or
//! a FIFO, and read once: a message from the stream detection peeked into,
//! only as far as its lengths reach and at most `--max-input-bytes`
//! (hydron-codec's `quant::from_reader`); Parquet from a regular file by
//! path, from anything else from the bytes already read whole. The codes
//! are checked whole when opened. `inspect` and `validate` report them;
//! the commands that read vectors read [`Gf8`] codes (dimension 8, no
//! rotation, direction scale) as the unit vectors they decode to, one
//! chunk at a time, and refuse any other codes, which are not 8-dim
//! vectors.

use std::path::Path;

use hydron_codec::quant::{self, LatticeCodes};
use hydron_codec::CodecError;
use hydron_core::quant::QuantCodes;
use hydron_core::Gf8;

use super::sniff::Stream;
use super::{too_large, Kind, Source, CHUNK};
use crate::error::{Class, CliError};

/// Whether `head`, the bytes a fory message's detection peeked at, starts
/// a `LatticeCodes` message.
pub(super) fn is_message(head: &[u8]) -> bool {
    quant::looks_like_lattice_codes(head)
}

/// Reads and checks the `LatticeCodes` message in `stream` (a regular
/// file of more than `limit` bytes is refused before reading). An input
/// that cannot be read is an error now; a message that is not valid (or
/// too large) keeps its form, and its error is reported by the first read.
pub(super) fn open_message(
    path: &Path,
    stream: Stream,
    limit: u64,
    size: Option<u64>,
) -> Result<(Kind, Source), CliError> {
    if size.is_some_and(|n| n > limit) {
        let refused = Source::Failed(Some(too_large(path, limit)));
        return Ok((Kind::LatticeCodes, refused));
    }
    // A regular file's size bounds what its lengths may claim.
    let read = match size {
        Some(len) => quant::from_reader_len(stream, limit, len),
        None => quant::from_reader(stream, limit),
    };
    let source = match read {
        Ok(codes) => Source::Lattice { codes, next: 0 },
        Err(CodecError::Io(e)) if e.kind() != std::io::ErrorKind::OutOfMemory => {
            return Err(CliError::io(path, &e))
        }
        Err(e) => Source::Failed(Some(error(path, limit, &e))),
    };
    Ok((Kind::LatticeCodes, source))
}

/// The column lattice codes in Parquet are read from (docs/format.md
/// §7.2).
pub(super) const CODE_COLUMN: &str = "code";

/// The input's source if the Parquet footer holds lattice-code parameters
/// (malformed ones included: the read says what is wrong); `None` for any
/// other Parquet (and for a footer that cannot be read: the vector reader
/// explains). `params` is the footer's answer, `load` reads the codes.
///
/// A `column` named on the command line: [`CODE_COLUMN`] reads the codes
/// as without it; another name is read as vectors if `vectors` (the vector
/// reader of that column) opens, else it is an error naming the file as
/// lattice codes, its columns, and `--column code`.
pub(super) fn parquet_source(
    path: &Path,
    params: Result<Option<(quant::CodesParams, u64)>, CodecError>,
    column: Option<&str>,
    load: impl FnOnce() -> Result<LatticeCodes, CodecError>,
    vectors: impl FnOnce() -> Result<(), CodecError>,
) -> Option<(Kind, Source)> {
    let params = match params {
        Ok(Some((params, _))) => Some(params),
        Err(e) if is_bad_codes(&e) => None,
        _ => return None,
    };
    if let Some(name) = column.filter(|&name| name != CODE_COLUMN) {
        let e = vectors().err()?;
        let refused = Source::Failed(Some(not_a_vector_column(path, name, params, &e)));
        return Some((Kind::ParquetLatticeCodes, refused));
    }
    let source = match load() {
        Ok(codes) => Source::Lattice { codes, next: 0 },
        Err(e) => Source::Failed(Some(CliError::codec(path, &e))),
    };
    Some((Kind::ParquetLatticeCodes, source))
}

/// `--column name` on a Parquet file of lattice codes whose column `name`
/// is not one of vectors (`e`, the vector reader's error, lists the
/// columns): of the same class as `e`, saying what the file is and how its
/// codes are read.
fn not_a_vector_column(
    path: &Path,
    name: &str,
    params: Option<quant::CodesParams>,
    e: &CodecError,
) -> CliError {
    let mut error = CliError::codec(path, e);
    let inner = match e {
        CodecError::InFile { error, .. } => error.as_ref(),
        e => e,
    };
    let what = params.map_or_else(
        || "its footer holds hydron.quant.* keys".to_owned(),
        |p| {
            format!(
                "dimension {}, {} bits per coordinate, {} scale",
                p.dim(),
                p.bits(),
                p.scale().name()
            )
        },
    );
    error.message = format!(
        "{}: lattice codes in Parquet ({what}), read from the column {CODE_COLUMN:?} \
         (--column {CODE_COLUMN}, or no --column); --column {name:?} is not a column of \
         vectors: {inner}",
        path.display()
    );
    error
}

/// Whether `error` is about lattice-code parameters or data.
fn is_bad_codes(error: &CodecError) -> bool {
    match error {
        CodecError::InFile { error, .. } => is_bad_codes(error),
        CodecError::BadCodes { .. } => true,
        _ => false,
    }
}

/// A reading error; a message past the limit as any input read whole.
fn error(path: &Path, limit: u64, e: &CodecError) -> CliError {
    match e {
        CodecError::ReadLimit { needed, .. } => {
            let mut error = too_large(path, limit);
            error.message = format!(
                "{} (the LatticeCodes message needs {needed} bytes, as far as its lengths \
                 reach or it was read)",
                error.message
            );
            error
        }
        e => CliError::codec(path, e),
    }
}

/// Appends the vectors of the next chunk of codes from vector `next` on
/// (advancing it) to `out`: Gf8 codes decode to their unit vectors; other
/// codes are an error saying what they are.
pub(super) fn read_chunk(
    path: &Path,
    codes: &LatticeCodes,
    next: &mut u64,
    out: &mut Vec<Gf8>,
) -> Result<(), CliError> {
    let p = codes.params();
    if !p.is_gf8() {
        return Err(CliError::new(
            Class::Format,
            format!(
                "{}: lattice codes of dimension {}, {} bits per coordinate, rotation {}, \
                 {} scale: not 8-dim unit vectors (only Gf8 codes, of dimension 8 without \
                 rotation in direction scale, read as vectors); `hydron inspect` shows them, \
                 the Python module decodes them (LatticeQuantizer.decode)",
                path.display(),
                p.dim(),
                p.bits(),
                if p.rotation() { "on" } else { "off" },
                p.scale().name()
            ),
        ));
    }
    let size = p.code_size();
    let bytes = &codes.codes().codes;
    // In memory already: the count fits.
    let start = usize::try_from(*next)
        .unwrap_or(usize::MAX)
        .min(codes.count() as usize);
    let end = codes.count().min(*next + CHUNK as u64) as usize;
    if start == end {
        return Ok(());
    }
    let chunk = LatticeCodes::new(
        *p,
        QuantCodes {
            codes: bytes[start * size..end * size].to_vec(),
            scales: Vec::new(),
        },
    )
    .and_then(|c| c.decode_gf8())
    .map_err(|e| CliError::codec(path, &e))?;
    out.extend_from_slice(&chunk);
    *next = end as u64;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Input;
    use super::*;
    use hydron_codec::Policy;

    #[test]
    fn gf8_codes_are_read_as_vectors_one_chunk_at_a_time() {
        let n = CHUNK + 7;
        let vectors: Vec<Gf8> = (0..n).map(|i| hydron_core::E8_ROOTS[i % 240]).collect();
        let codes = LatticeCodes::from_gf8(&vectors, 4).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.fory");
        quant::save(&path, &codes).unwrap();
        let mut input = Input::open(&path, Policy::Strict, 1 << 30, None).unwrap();
        assert_eq!(input.kind(), Kind::LatticeCodes);
        let mut buf = Vec::new();
        let mut lens = Vec::new();
        while let Some(chunk) = input.read_chunk(&mut buf).unwrap() {
            assert!(buf.capacity() < 2 * CHUNK, "one chunk of vectors at a time");
            lens.push(chunk.len);
        }
        assert_eq!(lens, [CHUNK, 7]);
        assert_eq!(input.vectors_read(), n as u64);
    }
}
