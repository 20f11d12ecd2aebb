//! Parquet inputs: a regular file read by path, row group by row group;
//! anything else (a pipe, standard input) read whole and decoded from
//! memory the same way. The vector column is read if there is one, else
//! the E8 code column.

use std::path::Path;

use hydron_codec::parquet::{ParquetReadOptions, ParquetReader};
use hydron_codec::{quant, CodecError, Policy};

use super::lattice;
use super::sniff::Stream;
use super::{read_whole, Kind, Source, CHUNK};
use crate::error::{Class, CliError};

/// What [`Input::parquet_info`](super::Input::parquet_info) gives.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParquetInfo {
    /// The rows the footer claims (checked as they are read).
    pub claimed_vectors: u64,
    /// Row groups.
    pub row_groups: u64,
    /// The name of the column read.
    pub column: String,
    /// Its Arrow type, as arrow-rs names it.
    pub column_type: String,
    /// Whether the file holds hydron's row group checksums.
    pub hydron_checksums: bool,
}

/// Opens a Parquet input: a regular file by path (read row group by row
/// group; the stream that found it is dropped), anything else read whole,
/// at most `limit` bytes. A file whose footer holds lattice-code
/// parameters is lattice codes (`super::lattice`), read from its column
/// `code` whether or not `--column code` names it; another `column` of
/// such a file is read only if it is a vector column. Otherwise the column
/// named `column` is read if one is given (as vectors, or as codes if it
/// is not a vector column), else the vector column if there is one, else
/// the code column; if neither, the vector column's error is the answer.
pub(super) fn open_parquet(
    path: &Path,
    stream: Stream,
    policy: Policy,
    limit: u64,
    size: Option<u64>,
    column: Option<&str>,
) -> Result<(Kind, Source), CliError> {
    let mut options = ParquetReadOptions::new().with_batch_vectors(CHUNK);
    if let Some(name) = column {
        options = options.with_column(name);
    }
    let named = column.is_some();
    if size.is_some() && path.as_os_str() != "-" {
        drop(stream);
        let codes = lattice::parquet_source(
            path,
            quant::parquet_params(path),
            column,
            || quant::load_parquet(path),
            || ParquetReader::open_with(path, policy, options.clone()).map(drop),
        );
        if let Some(found) = codes {
            return Ok(found);
        }
        finish_parquet(
            path,
            named,
            ParquetReader::open_with(path, policy, options.clone()),
            || ParquetReader::open_codes_with(path, options.clone()),
        )
    } else {
        // Cheap clones: the readers share the one buffer.
        let data = bytes::Bytes::from(read_whole(path, stream, limit, size)?);
        let codes = lattice::parquet_source(
            path,
            quant::parquet_params_from_bytes(data.clone()),
            column,
            || quant::parquet_from_bytes(data.clone()),
            || ParquetReader::from_bytes(data.clone(), policy, options.clone()).map(drop),
        );
        if let Some(found) = codes {
            return Ok(found);
        }
        finish_parquet(
            path,
            named,
            ParquetReader::from_bytes(data.clone(), policy, options.clone()),
            || ParquetReader::codes_from_bytes_with(data.clone(), options.clone()),
        )
    }
}

/// The source of a Parquet input from its vector reader, or, when it has no
/// vector column (or the column `named` is not one), its code reader. A
/// file that is Parquet but cannot be read (malformed, another column type)
/// keeps its form, and its error is reported by the first read, so
/// `inspect` names the form; failing to read the file at all is an error
/// now.
fn finish_parquet(
    path: &Path,
    named: bool,
    vectors: Result<ParquetReader, CodecError>,
    codes: impl Fn() -> Result<ParquetReader, CodecError>,
) -> Result<(Kind, Source), CliError> {
    match open_column(path, named, vectors, codes) {
        Err(e) if !matches!(e.class, Class::Io | Class::BrokenPipe) => {
            Ok((Kind::Parquet, Source::Failed(Some(e))))
        }
        result => result,
    }
}

fn open_column(
    path: &Path,
    named: bool,
    vectors: Result<ParquetReader, CodecError>,
    codes: impl Fn() -> Result<ParquetReader, CodecError>,
) -> Result<(Kind, Source), CliError> {
    let codec = |e: CodecError| CliError::codec(path, &e);
    // Without a name, codes are read only from a file with no vector
    // column; a column named on the command line is read as codes if it
    // is not a vector column.
    let not_vectors = |e: &CodecError| is_missing_column(e) || (named && is_wrong_type(e));
    match vectors {
        Ok(reader) => Ok((
            Kind::Parquet,
            Source::Parquet {
                reader: Box::new(reader),
                codes: None,
            },
        )),
        Err(e) if not_vectors(&e) => match codes() {
            Ok(reader) => Ok((
                Kind::ParquetCodes,
                Source::Parquet {
                    reader: Box::new(reader),
                    codes: Some(Vec::new()),
                },
            )),
            // Neither column: the vector column's error says what is there.
            Err(other) if not_vectors(&other) => Err(codec(e)),
            Err(other) => Err(codec(other)),
        },
        Err(e) => Err(codec(e)),
    }
}

/// Whether `error` is "the column is of another type".
pub(super) fn is_wrong_type(error: &CodecError) -> bool {
    match error {
        CodecError::InFile { error, .. } | CodecError::InDatasetFile { error, .. } => {
            is_wrong_type(error)
        }
        CodecError::WrongColumnType { .. } => true,
        _ => false,
    }
}

/// Whether `error` is "no vector (or code) column".
pub(super) fn is_missing_column(error: &CodecError) -> bool {
    match error {
        CodecError::InFile { error, .. } | CodecError::InDatasetFile { error, .. } => {
            is_missing_column(error)
        }
        CodecError::MissingColumn { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Input;
    use super::*;
    use hydron_core::{E8Root, Gf8};

    #[test]
    fn parquet_vectors_and_codes_are_read_by_row_group() {
        use hydron_codec::parquet::{save, save_codes, ParquetOptions};
        let dir = tempfile::tempdir().unwrap();
        let n = CHUNK + 100;
        let roots: Vec<E8Root> = (0..n)
            .map(|i| E8Root::new((i % 240) as u8).unwrap())
            .collect();
        let vectors: Vec<Gf8> = roots.iter().map(|r| r.to_gf8()).collect();
        let options = ParquetOptions::new().with_row_group_vectors(CHUNK / 2);
        let path = dir.path().join("v.parquet");
        save(&path, &vectors, options).unwrap();
        let codes_path = dir.path().join("c.parquet");
        save_codes(&codes_path, &roots, options).unwrap();
        for (path, kind) in [(path, Kind::Parquet), (codes_path, Kind::ParquetCodes)] {
            let mut input = Input::open(&path, Policy::Strict, 1000, None).unwrap();
            assert_eq!(input.kind(), kind);
            let info = input.parquet_info().unwrap();
            assert_eq!((info.claimed_vectors, info.row_groups), (n as u64, 3));
            assert_eq!(input.expected_vectors(), Some(n as u64));
            let mut buf = Vec::new();
            let mut lens = Vec::new();
            while let Some(chunk) = input.read_chunk(&mut buf).unwrap() {
                assert_eq!(buf[..], vectors[chunk.first as usize..][..chunk.len]);
                lens.push(chunk.len);
            }
            // A regular file is not read whole: the limit (1000 bytes)
            // does not apply to it.
            assert_eq!(lens, [CHUNK / 2, CHUNK / 2, 100], "{kind:?}");
        }
    }
}
