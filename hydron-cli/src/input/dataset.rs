//! Directories: a Parquet data set, its files read one after another, row
//! group by row group (hydron-codec's `DatasetReader`). The vector column
//! is read if the files hold one, else the E8 code column, as for one file.

use std::path::{Path, PathBuf};

use hydron_codec::parquet::{DatasetReader, ParquetReadOptions};
use hydron_codec::{CodecError, Policy};

use super::parquet::{is_missing_column, is_wrong_type};
use super::{file_id, FileId, Kind, Source, CHUNK};
use crate::error::CliError;

/// One file of a data set, for `inspect`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PartInfo {
    /// Its path relative to the data set's directory.
    pub relative: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The rows its footer claims (checked as they are read).
    pub rows: u64,
    /// Its row groups.
    pub row_groups: u64,
}

/// The regular files of a data set, each with which file it is.
pub(super) type Identities = Vec<(PathBuf, FileId)>;

/// Opens the data set in the directory `path`: its vector column (or the
/// column named `column`), else its code column. Returns the kind, the
/// source and the identity of each file (to refuse an output that is one
/// of them).
pub(super) fn open_dataset(
    path: &Path,
    policy: Policy,
    column: Option<&str>,
) -> Result<(Kind, Source, Identities), CliError> {
    let mut options = ParquetReadOptions::new().with_batch_vectors(CHUNK);
    if let Some(name) = column {
        options = options.with_column(name);
    }
    let codec = |e: &CodecError| CliError::codec(path, e);
    // As for one file: codes only from files with no vector column, or
    // from a named column that is not one.
    let not_vectors =
        |e: &CodecError| is_missing_column(e) || (column.is_some() && is_wrong_type(e));
    let (kind, reader, codes) = match DatasetReader::open_with(path, policy, options.clone()) {
        Ok(reader) => (Kind::Parquet, reader, None),
        Err(e) if not_vectors(&e) => match DatasetReader::open_codes_with(path, options) {
            Ok(reader) => (Kind::ParquetCodes, reader, Some(Vec::new())),
            Err(other) if not_vectors(&other) => return Err(codec(&e)),
            Err(other) => return Err(codec(&other)),
        },
        Err(e) => return Err(codec(&e)),
    };
    let ids = reader
        .parts()
        .iter()
        .filter_map(|p| {
            let meta = std::fs::metadata(p.path()).ok()?;
            Some((p.path().to_path_buf(), file_id(&meta)?))
        })
        .collect();
    let source = Source::Dataset {
        reader: Box::new(reader),
        codes,
    };
    Ok((kind, source, ids))
}

/// The files of a data set, for `inspect`.
pub(super) fn parts(reader: &DatasetReader) -> Vec<PartInfo> {
    reader
        .parts()
        .iter()
        .map(|p| PartInfo {
            relative: p.relative().to_path_buf(),
            bytes: p.bytes(),
            rows: p.claimed_rows(),
            row_groups: p.row_groups() as u64,
        })
        .collect()
}
