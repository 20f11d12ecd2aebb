//! [`DatasetReader`]: a directory of Parquet files read as one data set,
//! file after file, one row group in memory at a time.
//!
//! The files are the `.parquet` files in the directory and its
//! subdirectories, in the byte order of their paths relative to it. Names
//! that start with `_` or `.` are skipped, files and directories alike (as
//! pyarrow and Spark skip `_SUCCESS`, `_metadata` and `.crc` files); other
//! files are skipped too. Hive partition directories (`key=value/`) are
//! plain subdirectories: the partition values are not read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use hydron_core::{E8Root, Gf8};

use super::{ParquetReadOptions, ParquetReader};
use crate::save::in_file;
use crate::{CodecError, Policy};

/// One file of a data set, as its footer describes it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DatasetPart {
    path: PathBuf,
    relative: PathBuf,
    bytes: u64,
    claimed_rows: u64,
    proven_rows: u64,
    row_groups: usize,
    column_type: String,
    has_checksums: bool,
}

impl DatasetPart {
    /// The file's path (the directory joined with [`relative`](Self::relative)).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's path relative to the data set's directory.
    #[must_use]
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// The file's size in bytes when it was listed.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The rows the file's footer claims (checked as they are read).
    #[must_use]
    pub fn claimed_rows(&self) -> u64 {
        self.claimed_rows
    }

    /// The file's row groups.
    #[must_use]
    pub fn row_groups(&self) -> usize {
        self.row_groups
    }

    /// The Arrow type of the column in this file, as arrow-rs names it.
    #[must_use]
    pub fn column_type(&self) -> &str {
        &self.column_type
    }

    /// Whether the file holds hydron's row group checksums.
    #[must_use]
    pub fn has_checksums(&self) -> bool {
        self.has_checksums
    }
}

/// Reads the vector (or code) column of every Parquet file of a directory,
/// as one stream of batches: a data set.
///
/// Opening lists the files: the regular files named `*.parquet` in `dir`
/// and its subdirectories (symbolic links followed; Hive `key=value/`
/// directories are plain subdirectories), in the byte order of their
/// paths relative to `dir`, skipping every name that starts with `_` or
/// `.` (`_SUCCESS`, `_metadata`, `.crc` files, `_temporary/`). It reads
/// each footer once: every file must hold the same column, chosen by
/// [`crate::arrow::find_vector_column`]'s rule in each file (or named by
/// [`ParquetReadOptions::column`]), else
/// [`CodecError::DatasetColumnMismatch`]; a directory without one is
/// [`CodecError::EmptyDataset`]. Reading then opens one file at a time
/// and reads it as [`ParquetReader`] does, one batch (at most a row group)
/// at a time, so memory does not grow with the data set. An error inside a
/// file is [`CodecError::InDatasetFile`]: the file, its own row, and the
/// row of the data set.
///
/// ```
/// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions};
/// use hydron_codec::Policy;
/// use hydron_core::E8_ROOTS;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::create_dir(dir.path().join("k=1"))?;
/// parquet::save(dir.path().join("k=1/b.parquet"), &E8_ROOTS[100..], ParquetOptions::new())?;
/// parquet::save(dir.path().join("a.parquet"), &E8_ROOTS[..100], ParquetOptions::new())?;
/// std::fs::write(dir.path().join("_SUCCESS"), b"")?;
/// let mut reader = DatasetReader::open(dir.path(), Policy::Strict)?;
/// assert_eq!(reader.parts().len(), 2);
/// assert_eq!(reader.claimed_vectors(), 240);
/// assert_eq!(reader.read_to_end()?, E8_ROOTS);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct DatasetReader {
    dir: PathBuf,
    parts: Vec<DatasetPart>,
    /// `Some(policy)` for vectors, `None` for codes.
    policy: Option<Policy>,
    options: ParquetReadOptions,
    column_name: String,
    column_type: arrow_schema::DataType,
    /// The file being read, and its index.
    current: Option<(usize, ParquetReader)>,
    /// The index of the next file to open.
    next_part: usize,
    /// The part the last batch came from, and the data set's row of its
    /// first row.
    last: Option<(usize, u64)>,
    /// Rows handed out so far.
    rows: u64,
    /// Rows of the data set before the current file.
    first_row: u64,
    /// Set after an error: the reader yields nothing more.
    failed: bool,
}

impl DatasetReader {
    /// Opens the vector column of the data set in `dir`.
    ///
    /// ```
    /// use hydron_codec::parquet::DatasetReader;
    /// use hydron_codec::{CodecError, Policy};
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("_SUCCESS"), b"")?;
    /// let err = DatasetReader::open(dir.path(), Policy::Strict).unwrap_err();
    /// assert!(matches!(err, CodecError::EmptyDataset { skipped: 1, .. }), "{err}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(dir: impl AsRef<Path>, policy: Policy) -> Result<DatasetReader, CodecError> {
        DatasetReader::open_with(dir, policy, ParquetReadOptions::new())
    }

    /// Opens the vector column of the data set in `dir`, with options (the
    /// column's name applies to every file).
    ///
    /// ```
    /// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions, ParquetReadOptions};
    /// use hydron_codec::Policy;
    /// let dir = tempfile::tempdir()?;
    /// parquet::save(dir.path().join("0.parquet"), &hydron_core::E8_ROOTS, ParquetOptions::new())?;
    /// let opts = ParquetReadOptions::new().with_column("vector");
    /// let reader = DatasetReader::open_with(dir.path(), Policy::Strict, opts)?;
    /// assert_eq!(reader.column_name(), "vector");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_with(
        dir: impl AsRef<Path>,
        policy: Policy,
        options: ParquetReadOptions,
    ) -> Result<DatasetReader, CodecError> {
        DatasetReader::new(dir.as_ref(), Some(policy), options)
    }

    /// Opens the code column of the data set in `dir`.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions};
    /// use hydron_core::E8Root;
    /// let dir = tempfile::tempdir()?;
    /// parquet::save_codes(dir.path().join("a.parquet"), &[E8Root::new(4)?], ParquetOptions::new())?;
    /// parquet::save_codes(dir.path().join("b.parquet"), &[E8Root::new(5)?], ParquetOptions::new())?;
    /// let codes = DatasetReader::open_codes(dir.path())?.read_codes_to_end()?;
    /// assert_eq!(codes, [E8Root::new(4)?, E8Root::new(5)?]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_codes(dir: impl AsRef<Path>) -> Result<DatasetReader, CodecError> {
        DatasetReader::open_codes_with(dir, ParquetReadOptions::new())
    }

    /// Opens the code column of the data set in `dir`, with options.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions, ParquetReadOptions};
    /// use hydron_core::E8Root;
    /// let dir = tempfile::tempdir()?;
    /// parquet::save_codes(dir.path().join("a.parquet"), &[E8Root::new(4)?], ParquetOptions::new())?;
    /// let reader = DatasetReader::open_codes_with(dir.path(), ParquetReadOptions::new().with_column("code"))?;
    /// assert_eq!(reader.claimed_vectors(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_codes_with(
        dir: impl AsRef<Path>,
        options: ParquetReadOptions,
    ) -> Result<DatasetReader, CodecError> {
        DatasetReader::new(dir.as_ref(), None, options)
    }

    fn new(
        dir: &Path,
        policy: Option<Policy>,
        options: ParquetReadOptions,
    ) -> Result<DatasetReader, CodecError> {
        let (files, skipped) = list(dir)?;
        if files.is_empty() {
            return Err(CodecError::EmptyDataset {
                dir: dir.to_path_buf(),
                skipped,
            });
        }
        let mut parts = Vec::with_capacity(files.len());
        let mut column: Option<(String, arrow_schema::DataType)> = None;
        for (index, (relative, bytes)) in files.into_iter().enumerate() {
            let path = dir.join(&relative);
            let reader = open_part(&path, policy, &options)
                .map_err(|e| mismatch_or_in_part(&path, index, e, &parts, column.as_ref()))?;
            match &column {
                None => {
                    column = Some((
                        reader.column_name().to_owned(),
                        reader.column_type().clone(),
                    ));
                }
                Some((name, _)) if name != reader.column_name() => {
                    return Err(CodecError::DatasetColumnMismatch {
                        path,
                        first: parts[0].path.clone(),
                        column: name.clone(),
                        found: format!(
                            "reads column {:?} ({})",
                            reader.column_name(),
                            reader.column_type()
                        ),
                    });
                }
                Some(_) => {}
            }
            parts.push(DatasetPart {
                path,
                relative,
                bytes,
                claimed_rows: reader.claimed_vectors(),
                proven_rows: reader.proven_vectors(),
                row_groups: reader.row_groups(),
                column_type: reader.column_type().to_string(),
                has_checksums: reader.has_checksums(),
            });
        }
        let (column_name, column_type) =
            column.unwrap_or((String::new(), arrow_schema::DataType::Null));
        Ok(DatasetReader {
            dir: dir.to_path_buf(),
            parts,
            policy,
            options,
            column_name,
            column_type,
            current: None,
            next_part: 0,
            last: None,
            rows: 0,
            first_row: 0,
            failed: false,
        })
    }

    /// The data set's directory.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions};
    /// use hydron_codec::Policy;
    /// let dir = tempfile::tempdir()?;
    /// parquet::save(dir.path().join("0.parquet"), &hydron_core::E8_ROOTS, ParquetOptions::new())?;
    /// assert_eq!(DatasetReader::open(dir.path(), Policy::Strict)?.dir(), dir.path());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The files, in the order they are read.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions};
    /// use hydron_codec::Policy;
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir_all(dir.path().join("k=2"))?;
    /// std::fs::create_dir_all(dir.path().join(".hidden"))?;
    /// for name in ["k=2/x.parquet", "a.parquet", ".hidden/y.parquet"] {
    ///     parquet::save(dir.path().join(name), &hydron_core::E8_ROOTS, ParquetOptions::new())?;
    /// }
    /// std::fs::write(dir.path().join("a.parquet.crc"), b"")?;
    /// let reader = DatasetReader::open(dir.path(), Policy::Strict)?;
    /// let names: Vec<_> = reader.parts().iter().map(|p| p.relative().to_path_buf()).collect();
    /// assert_eq!(names, ["a.parquet", "k=2/x.parquet"].map(std::path::PathBuf::from));
    /// assert_eq!(reader.parts()[1].row_groups(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn parts(&self) -> &[DatasetPart] {
        &self.parts
    }

    /// The rows every file's footer claims, in all (checked as they are
    /// read; nothing is allocated from it).
    ///
    /// ```
    /// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions};
    /// use hydron_codec::Policy;
    /// let dir = tempfile::tempdir()?;
    /// parquet::save(dir.path().join("0.parquet"), &hydron_core::E8_ROOTS, ParquetOptions::new())?;
    /// parquet::save(dir.path().join("1.parquet"), &hydron_core::E8_ROOTS, ParquetOptions::new())?;
    /// assert_eq!(DatasetReader::open(dir.path(), Policy::Strict)?.claimed_vectors(), 480);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn claimed_vectors(&self) -> u64 {
        self.parts
            .iter()
            .fold(0u64, |n, p| n.saturating_add(p.claimed_rows))
    }

    /// The row groups of every file, in all.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions};
    /// use hydron_codec::Policy;
    /// let dir = tempfile::tempdir()?;
    /// let opts = ParquetOptions::new().with_row_group_vectors(100);
    /// parquet::save(dir.path().join("0.parquet"), &hydron_core::E8_ROOTS, opts)?;
    /// parquet::save(dir.path().join("1.parquet"), &hydron_core::E8_ROOTS, opts)?;
    /// assert_eq!(DatasetReader::open(dir.path(), Policy::Strict)?.row_groups(), 6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn row_groups(&self) -> usize {
        self.parts.iter().map(|p| p.row_groups).sum()
    }

    /// The name of the column read (the same in every file).
    #[must_use]
    pub fn column_name(&self) -> &str {
        &self.column_name
    }

    /// The Arrow type of the column read, as the first file gives it.
    #[must_use]
    pub fn column_type(&self) -> &arrow_schema::DataType {
        &self.column_type
    }

    /// Whether every file holds hydron's row group checksums.
    #[must_use]
    pub fn has_checksums(&self) -> bool {
        self.parts.iter().all(|p| p.has_checksums)
    }

    /// The file the last batch came from (an index into
    /// [`parts`](Self::parts)), and the data set's row of that file's
    /// first row; `None` before the first batch.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, DatasetReader, ParquetOptions};
    /// use hydron_codec::Policy;
    /// let dir = tempfile::tempdir()?;
    /// parquet::save(dir.path().join("0.parquet"), &hydron_core::E8_ROOTS, ParquetOptions::new())?;
    /// parquet::save(dir.path().join("1.parquet"), &hydron_core::E8_ROOTS, ParquetOptions::new())?;
    /// let mut reader = DatasetReader::open(dir.path(), Policy::Strict)?;
    /// let mut out = Vec::new();
    /// reader.read_chunk(&mut out)?;
    /// reader.read_chunk(&mut out)?;
    /// assert_eq!(reader.last_part(), Some((1, 240)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn last_part(&self) -> Option<(usize, u64)> {
        self.last
    }

    /// Appends the next batch of vectors (at most a row group, from one
    /// file) to `out` and returns how many; 0 at the end. On error `out`
    /// is left as it was, and the reader yields nothing more.
    pub fn read_chunk(&mut self, out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        if self.policy.is_none() {
            return Err(wrong_target(&self.dir, "vectors", "codes"));
        }
        self.next(|reader| reader.read_chunk(out))
    }

    /// Appends the next batch of codes to `out` (for a reader made by
    /// `open_codes`); 0 at the end.
    pub fn read_codes_chunk(&mut self, out: &mut Vec<E8Root>) -> Result<usize, CodecError> {
        if self.policy.is_some() {
            return Err(wrong_target(&self.dir, "codes", "vectors"));
        }
        self.next(|reader| reader.read_codes_chunk(out))
    }

    /// Reads every remaining vector into one `Vec`, reserved once for what
    /// the files' stored bytes can hold (as
    /// [`ParquetReader::read_to_end`]).
    pub fn read_to_end(&mut self) -> Result<Vec<Gf8>, CodecError> {
        let mut out = reserved(self.proven_rest())?;
        while self.read_chunk(&mut out)? > 0 {}
        Ok(out)
    }

    /// Reads every remaining code into one `Vec`.
    pub fn read_codes_to_end(&mut self) -> Result<Vec<E8Root>, CodecError> {
        let mut out = reserved(self.proven_rest())?;
        while self.read_codes_chunk(&mut out)? > 0 {}
        Ok(out)
    }

    /// The rows the files not yet opened can hold, from their bytes.
    fn proven_rest(&self) -> u64 {
        let from = self.current.as_ref().map_or(self.next_part, |(i, _)| *i);
        self.parts[from.min(self.parts.len())..]
            .iter()
            .fold(0u64, |n, p| n.saturating_add(p.proven_rows))
    }

    fn next(
        &mut self,
        mut read: impl FnMut(&mut ParquetReader) -> Result<usize, CodecError>,
    ) -> Result<usize, CodecError> {
        if self.failed {
            return Ok(0);
        }
        loop {
            let (index, reader) = match self.current.as_mut() {
                Some((index, reader)) => (*index, reader),
                None => {
                    if self.next_part == self.parts.len() {
                        return Ok(0);
                    }
                    let index = self.next_part;
                    self.next_part += 1;
                    let reader = self.reopen(index).map_err(|e| self.fail(index, e))?;
                    let (_, reader) = self.current.insert((index, reader));
                    (index, reader)
                }
            };
            match read(reader) {
                Ok(0) => {
                    self.current = None;
                    self.first_row = self.rows;
                }
                Ok(n) => {
                    self.last = Some((index, self.first_row));
                    self.rows += n as u64;
                    return Ok(n);
                }
                Err(e) => return Err(self.fail(index, e)),
            }
        }
    }

    /// Opens file `index` again to read it; its column must still be the
    /// data set's.
    fn reopen(&self, index: usize) -> Result<ParquetReader, CodecError> {
        let path = &self.parts[index].path;
        let reader = open_part(path, self.policy, &self.options)?;
        if reader.column_name() != self.column_name {
            return Err(CodecError::DatasetColumnMismatch {
                path: path.clone(),
                first: self.parts[0].path.clone(),
                column: self.column_name.clone(),
                found: format!("now reads column {:?}", reader.column_name()),
            });
        }
        Ok(reader)
    }

    fn fail(&mut self, index: usize, error: CodecError) -> CodecError {
        self.failed = true;
        self.current = None;
        if matches!(error, CodecError::DatasetColumnMismatch { .. }) {
            return error;
        }
        in_part(&self.parts[index].path, self.first_row, error)
    }
}

/// Reads the vectors of the data set in `dir` into one `Vec`.
///
/// ```
/// use hydron_codec::parquet::{self, ParquetOptions};
/// use hydron_codec::Policy;
/// let dir = tempfile::tempdir()?;
/// parquet::save(dir.path().join("0.parquet"), &hydron_core::E8_ROOTS, ParquetOptions::new())?;
/// assert_eq!(parquet::load_dataset(dir.path(), Policy::Strict)?.len(), 240);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_dataset(dir: impl AsRef<Path>, policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    DatasetReader::open(dir, policy)?.read_to_end()
}

/// Opens one file of a data set for vectors (`policy`) or codes.
fn open_part(
    path: &Path,
    policy: Option<Policy>,
    options: &ParquetReadOptions,
) -> Result<ParquetReader, CodecError> {
    match policy {
        Some(policy) => ParquetReader::open_with(path, policy, options.clone()),
        None => ParquetReader::open_codes_with(path, options.clone()),
    }
}

/// The error opening file `index` of a data set: a column that cannot be
/// chosen in a file after the first is a mismatch with the first file's
/// column; anything else is an error in that file.
fn mismatch_or_in_part(
    path: &Path,
    index: usize,
    error: CodecError,
    parts: &[DatasetPart],
    column: Option<&(String, arrow_schema::DataType)>,
) -> CodecError {
    let inner = strip_file(path, error);
    match (index, column, parts.first()) {
        (1.., Some((name, _)), Some(first)) if is_column_choice(&inner) => {
            CodecError::DatasetColumnMismatch {
                path: path.to_path_buf(),
                first: first.path.clone(),
                column: name.clone(),
                found: format!("has no such column ({inner})"),
            }
        }
        _ => in_part(path, 0, inner),
    }
}

/// Whether `error` is about which column to read.
fn is_column_choice(error: &CodecError) -> bool {
    matches!(
        error,
        CodecError::MissingColumn { .. }
            | CodecError::AmbiguousColumn { .. }
            | CodecError::WrongColumnType { .. }
    )
}

/// `error` without the file name the single-file reader put on it.
fn strip_file(path: &Path, error: CodecError) -> CodecError {
    match error {
        CodecError::InFile { path: p, error } if p == path => *error,
        other => other,
    }
}

/// `error`, in the file at `path` whose first row is the data set's row
/// `first_row`.
fn in_part(path: &Path, first_row: u64, error: CodecError) -> CodecError {
    let error = strip_file(path, error);
    let row = row_of(&error).map(|r| first_row.saturating_add(r));
    CodecError::InDatasetFile {
        path: path.to_path_buf(),
        first_row,
        row,
        error: Box::new(error),
    }
}

/// The row (of its file) an error names, if it names one.
fn row_of(error: &CodecError) -> Option<u64> {
    match error {
        CodecError::InvalidVector { index, .. } => Some(*index),
        CodecError::NullValue { row, .. }
        | CodecError::WrongRowLength { row, .. }
        | CodecError::BadOffsets { row, .. } => Some(*row),
        _ => None,
    }
}

fn wrong_target(dir: &Path, asked: &str, opened: &str) -> CodecError {
    in_file(
        dir,
        CodecError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("cannot read {asked} from a data set opened for {opened}"),
        )),
    )
}

/// Whether a file or directory name is skipped: it starts with `_` or `.`.
fn skipped_name(name: &std::ffi::OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    bytes.first().is_some_and(|b| *b == b'_' || *b == b'.')
}

/// Whether a file name is a Parquet file's: it ends in `.parquet` (any
/// case).
fn parquet_name(name: &std::ffi::OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    bytes.len() > ".parquet".len()
        && bytes[bytes.len() - ".parquet".len()..].eq_ignore_ascii_case(b".parquet")
}

/// The regular `.parquet` files under `dir` (relative paths, sorted by
/// their bytes, with their sizes) and how many entries were skipped (a
/// FIFO or a device is never opened). Symbolic links are followed; a
/// directory reached twice (a link loop) is read once. Listing errors
/// name the directory.
fn list(dir: &Path) -> Result<(Vec<(PathBuf, u64)>, u64), CodecError> {
    let mut files = Vec::new();
    let mut skipped = 0u64;
    let mut seen = HashSet::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let here = dir.join(&relative);
        let io = |e: std::io::Error| in_file(&here, CodecError::Io(e));
        if let Ok(canonical) = std::fs::canonicalize(&here) {
            if !seen.insert(canonical) {
                continue;
            }
        }
        for entry in std::fs::read_dir(&here).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name();
            if skipped_name(&name) {
                skipped += 1;
                continue;
            }
            let path = entry.path();
            // Follows a symbolic link; a dangling one is skipped.
            let Ok(meta) = std::fs::metadata(&path) else {
                skipped += 1;
                continue;
            };
            if meta.is_dir() {
                pending.push(relative.join(&name));
            } else if meta.is_file() && parquet_name(&name) {
                files.push((relative.join(&name), meta.len()));
            } else {
                skipped += 1;
            }
        }
    }
    files.sort_by(|a, b| {
        a.0.as_os_str()
            .as_encoded_bytes()
            .cmp(b.0.as_os_str().as_encoded_bytes())
    });
    Ok((files, skipped))
}

/// An empty `Vec` with room for `n` items (`n` proven by the data's
/// bytes); an allocation that fails is an error.
fn reserved<T>(n: u64) -> Result<Vec<T>, CodecError> {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|e| {
        CodecError::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("cannot allocate memory for {n} values: {e}"),
        ))
    })?;
    if n.saturating_mul(size_of::<T>()) >= hydron_core::huge::MIN_HUGE_BYTES {
        hydron_core::huge::advise_spare(&mut out);
    }
    Ok(out)
}
