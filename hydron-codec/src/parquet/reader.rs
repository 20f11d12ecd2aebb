//! [`ParquetReader`]: the vectors (or codes) of a Parquet file, batch by
//! batch, row group by row group.

use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use hydron_core::{E8Root, Gf8};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::errors::ParquetError;

use super::source::Source;
use super::{fast, footer, levels, pages};
use crate::arrow as harrow;
use crate::save::in_file;
use crate::{CodecError, Policy};

/// Options for reading Parquet.
///
/// ```
/// use hydron_codec::parquet::ParquetReadOptions;
///
/// let opts = ParquetReadOptions::new().with_batch_vectors(4096).with_column("embedding");
/// assert_eq!(opts.batch_vectors(), 4096);
/// assert_eq!(opts.column(), Some("embedding"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ParquetReadOptions {
    batch_vectors: usize,
    max_page_bytes: u64,
    column: Option<String>,
}

impl ParquetReadOptions {
    /// Vectors decoded per batch unless set: 65,536 (2 MiB of coordinates).
    pub const DEFAULT_BATCH_VECTORS: usize = 1 << 16;
    /// The largest uncompressed page accepted unless set: 64 MiB (writers
    /// use 1 MiB pages by default).
    pub const DEFAULT_MAX_PAGE_BYTES: u64 = 64 << 20;

    /// The defaults.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetReadOptions;
    /// assert_eq!(ParquetReadOptions::new().max_page_bytes(), 64 << 20);
    /// ```
    #[must_use]
    pub const fn new() -> ParquetReadOptions {
        ParquetReadOptions {
            batch_vectors: Self::DEFAULT_BATCH_VECTORS,
            max_page_bytes: Self::DEFAULT_MAX_PAGE_BYTES,
            column: None,
        }
    }

    /// Sets how many vectors a batch holds at most (at least 1) when a row
    /// group is read through the parquet crate's Arrow reader. A row group
    /// in the common layout (a list of 8 float32 per row, plain pages, no
    /// nulls: what hydron, pyarrow, Polars and DuckDB write) is read whole
    /// by a faster path, one row group per batch, in the memory the writer
    /// chose for a row group.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetReadOptions;
    /// assert_eq!(ParquetReadOptions::new().with_batch_vectors(0).batch_vectors(), 1);
    /// ```
    #[must_use]
    pub const fn with_batch_vectors(mut self, vectors: usize) -> ParquetReadOptions {
        self.batch_vectors = if vectors == 0 { 1 } else { vectors };
        self
    }

    /// Sets the largest uncompressed page (and footer) accepted: a page
    /// header or a footer length that claims more is an error before any
    /// memory is taken for it.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetReadOptions;
    /// assert_eq!(ParquetReadOptions::new().with_max_page_bytes(1 << 30).max_page_bytes(), 1 << 30);
    /// ```
    #[must_use]
    pub const fn with_max_page_bytes(mut self, bytes: u64) -> ParquetReadOptions {
        self.max_page_bytes = bytes;
        self
    }

    /// Reads the column named `name` instead of finding it (see
    /// [`crate::arrow::find_vector_column`]).
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetReadOptions;
    /// assert_eq!(ParquetReadOptions::new().column(), None);
    /// ```
    #[must_use]
    pub fn with_column(mut self, name: impl Into<String>) -> ParquetReadOptions {
        self.column = Some(name.into());
        self
    }

    /// Vectors per batch.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetReadOptions;
    /// assert_eq!(ParquetReadOptions::new().batch_vectors(), 65_536);
    /// ```
    #[must_use]
    pub const fn batch_vectors(&self) -> usize {
        self.batch_vectors
    }

    /// The largest uncompressed page accepted, in bytes.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetReadOptions;
    /// assert_eq!(ParquetReadOptions::new().with_max_page_bytes(7).max_page_bytes(), 7);
    /// ```
    #[must_use]
    pub const fn max_page_bytes(&self) -> u64 {
        self.max_page_bytes
    }

    /// The column to read, if set.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetReadOptions;
    /// assert_eq!(ParquetReadOptions::new().with_column("v").column(), Some("v"));
    /// ```
    #[must_use]
    pub fn column(&self) -> Option<&str> {
        self.column.as_deref()
    }
}

impl Default for ParquetReadOptions {
    fn default() -> ParquetReadOptions {
        ParquetReadOptions::new()
    }
}

/// A row group being read.
#[derive(Debug)]
struct Group {
    index: usize,
    batches: ParquetRecordBatchReader,
    /// Rows it has yielded.
    yielded: u64,
    /// The CRC-32 of its values so far, when the footer has one to check.
    hasher: Option<crc32fast::Hasher>,
}

/// What is read: vectors under a policy, or codes.
#[derive(Clone, Copy, Debug)]
enum Target {
    Vectors(Policy),
    Codes,
}

/// Reads the vector (or code) column of a Parquet file, one batch at a
/// time, in memory that does not grow with the file: about one batch,
/// plus one page per column read.
///
/// The file's footer is read and checked when the reader is made: row
/// counts that disagree, byte ranges past the end of the file, and a
/// column of the wrong type are errors then. Each row group's page headers
/// are checked before it is decoded ([`ParquetReadOptions::max_page_bytes`]),
/// and the rows each row group yields must be the rows it claims. Errors
/// name the row (counted from the start of the file) or the row group,
/// and, for files opened by path, the path.
///
/// Parquet needs random access (the footer is at the end), so the reader
/// takes a regular file or bytes in memory; read a pipe into memory first
/// and use [`from_bytes`](ParquetReader::from_bytes).
///
/// ```
/// use hydron_codec::parquet::{self, ParquetOptions, ParquetReader};
/// use hydron_codec::Policy;
/// use hydron_core::E8_ROOTS;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("roots.parquet");
/// parquet::save(&path, &E8_ROOTS, ParquetOptions::new().with_row_group_vectors(100))?;
/// let mut reader = ParquetReader::open(&path, Policy::Strict)?;
/// assert_eq!((reader.claimed_vectors(), reader.row_groups()), (240, 3));
/// let mut out = Vec::new();
/// while reader.read_chunk(&mut out)? > 0 {}
/// assert_eq!(out, E8_ROOTS);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ParquetReader {
    source: Source,
    path: Option<PathBuf>,
    metadata: ArrowReaderMetadata,
    column: usize,
    column_name: String,
    target: Target,
    options: ParquetReadOptions,
    next_group: usize,
    /// The row group being read.
    current: Option<Group>,
    /// The CRC-32 of each row group's values, from the footer of a file
    /// hydron wrote; `None` for other writers' files.
    checksums: Option<Vec<u32>>,
    rows: u64,
    /// Set after an error: the reader yields nothing more.
    failed: bool,
}

impl ParquetReader {
    /// Opens the vector column of the Parquet file at `path`.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetReader;
    /// use hydron_codec::Policy;
    /// let err = ParquetReader::open("/dev/null", Policy::Strict).unwrap_err();
    /// assert!(err.to_string().contains("not a regular file"), "{err}");
    /// ```
    pub fn open(path: impl AsRef<Path>, policy: Policy) -> Result<ParquetReader, CodecError> {
        ParquetReader::open_with(path, policy, ParquetReadOptions::new())
    }

    /// Opens the vector column of the Parquet file at `path`, with options.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("v.parquet");
    /// parquet::save(&path, &hydron_core::E8_ROOTS, ParquetOptions::new().with_row_group_vectors(100))?;
    /// let opts = ParquetReadOptions::new().with_batch_vectors(100);
    /// let mut reader = ParquetReader::open_with(&path, Policy::Strict, opts)?;
    /// let mut out = Vec::new();
    /// assert_eq!(reader.read_chunk(&mut out)?, 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_with(
        path: impl AsRef<Path>,
        policy: Policy,
        options: ParquetReadOptions,
    ) -> Result<ParquetReader, CodecError> {
        let path = path.as_ref();
        let source = open_file(path).map_err(|e| in_file(path, CodecError::Io(e)))?;
        ParquetReader::new(source, Some(path), Target::Vectors(policy), options)
            .map_err(|e| in_file(path, e))
    }

    /// Opens the code column of the Parquet file at `path`.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, ParquetOptions, ParquetReader};
    /// use hydron_core::E8Root;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("c.parquet");
    /// parquet::save_codes(&path, &[E8Root::new(2)?; 3], ParquetOptions::new())?;
    /// let mut reader = ParquetReader::open_codes(&path)?;
    /// let mut out = Vec::new();
    /// assert_eq!(reader.read_codes_chunk(&mut out)?, 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_codes(path: impl AsRef<Path>) -> Result<ParquetReader, CodecError> {
        ParquetReader::open_codes_with(path, ParquetReadOptions::new())
    }

    /// Opens the code column of the Parquet file at `path`, with options
    /// (a column name, the page limit).
    ///
    /// ```
    /// use hydron_codec::parquet::{self, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_core::E8Root;
    ///
    /// let path = std::env::temp_dir().join(format!("hydron-codes-with-{}.parquet", std::process::id()));
    /// parquet::save_codes(&path, &[E8Root::new(9)?], ParquetOptions::new())?;
    /// let mut reader = ParquetReader::open_codes_with(&path, ParquetReadOptions::new().with_column("code"))?;
    /// let mut codes = Vec::new();
    /// reader.read_codes_chunk(&mut codes)?;
    /// assert_eq!(codes[0].code(), 9);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_codes_with(
        path: impl AsRef<Path>,
        options: ParquetReadOptions,
    ) -> Result<ParquetReader, CodecError> {
        let path = path.as_ref();
        let source = open_file(path).map_err(|e| in_file(path, CodecError::Io(e)))?;
        ParquetReader::new(source, Some(path), Target::Codes, options).map_err(|e| in_file(path, e))
    }

    /// Reads the vector column of a Parquet file held in memory.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetReadOptions, ParquetReader};
    /// use hydron_codec::{CodecError, Policy};
    /// let err = ParquetReader::from_bytes(&b"PAR1"[..], Policy::Strict, ParquetReadOptions::new()).unwrap_err();
    /// assert!(matches!(err, CodecError::Parquet { .. }));
    /// ```
    pub fn from_bytes(
        bytes: impl Into<bytes::Bytes>,
        policy: Policy,
        options: ParquetReadOptions,
    ) -> Result<ParquetReader, CodecError> {
        let source = Source::Bytes(bytes.into());
        ParquetReader::new(source, None, Target::Vectors(policy), options)
    }

    /// Reads the code column of a Parquet file held in memory.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReader};
    /// use hydron_core::E8Root;
    /// let mut e = ParquetEncoder::new_codes(Vec::new(), ParquetOptions::new())?;
    /// e.write_codes(&[E8Root::new(200)?])?;
    /// let mut reader = ParquetReader::codes_from_bytes(e.finish()?)?;
    /// let mut out = Vec::new();
    /// reader.read_codes_chunk(&mut out)?;
    /// assert_eq!(out[0].code(), 200);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn codes_from_bytes(bytes: impl Into<bytes::Bytes>) -> Result<ParquetReader, CodecError> {
        ParquetReader::codes_from_bytes_with(bytes, ParquetReadOptions::new())
    }

    /// Reads the code column of a Parquet file held in memory, with
    /// options (a smaller [`ParquetReadOptions::max_page_bytes`] for
    /// untrusted input, a column name).
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_core::E8Root;
    /// let mut e = ParquetEncoder::new_codes(Vec::new(), ParquetOptions::new())?;
    /// e.write_codes(&[E8Root::new(7)?])?;
    /// let opts = ParquetReadOptions::new().with_max_page_bytes(1 << 20).with_column("code");
    /// let mut reader = ParquetReader::codes_from_bytes_with(e.finish()?, opts)?;
    /// let mut out = Vec::new();
    /// reader.read_codes_chunk(&mut out)?;
    /// assert_eq!(out[0].code(), 7);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn codes_from_bytes_with(
        bytes: impl Into<bytes::Bytes>,
        options: ParquetReadOptions,
    ) -> Result<ParquetReader, CodecError> {
        let source = Source::Bytes(bytes.into());
        ParquetReader::new(source, None, Target::Codes, options)
    }

    fn new(
        source: Source,
        path: Option<&Path>,
        target: Target,
        options: ParquetReadOptions,
    ) -> Result<ParquetReader, CodecError> {
        footer::check_len(&source, options.max_page_bytes())?;
        let metadata = footer::load(&source)?;
        footer::check_row_counts(&metadata)?;
        let checksums = footer::read_checksums(&metadata)?;
        let schema = metadata.schema();
        let column = match (options.column(), target) {
            (Some(name), _) => harrow::find_named_column(
                schema,
                name,
                match target {
                    Target::Vectors(_) => "vector",
                    Target::Codes => "code",
                },
            )?,
            (None, Target::Vectors(_)) => harrow::find_vector_column(schema)?,
            (None, Target::Codes) => harrow::find_code_column(schema)?,
        };
        let column_name = schema.field(column).name().clone();
        let reader = ParquetReader {
            source,
            path: path.map(Path::to_path_buf),
            metadata,
            column,
            column_name,
            target,
            options,
            next_group: 0,
            current: None,
            checksums,
            rows: 0,
            failed: false,
        };
        // The column's type is checked now, on an empty batch, so a file of
        // doubles fails when opened rather than at its first row, with
        // every column of the file listed (the file has no usable one).
        let field = reader.metadata.schema().field(column).clone();
        let empty = arrow_array::new_empty_array(field.data_type());
        let batch = RecordBatch::try_new(
            Arc::new(arrow_schema::Schema::new(vec![field])),
            vec![empty],
        )?;
        reader
            .append(&batch, None, &mut Vec::new(), &mut Vec::new())
            .map_err(|e| match e {
                CodecError::WrongColumnType {
                    column,
                    found,
                    expected,
                    ..
                } => CodecError::WrongColumnType {
                    column,
                    found,
                    expected,
                    columns: harrow::list_columns(reader.metadata.schema()),
                },
                e => e,
            })?;
        Ok(reader)
    }

    /// Whether the file holds hydron's CRC-32 of each row group (the
    /// footer key `hydron.crc32`, which hydron writes and other tools drop
    /// when they rewrite a file). Without it only the page checksums that
    /// the writer stored, if any, are checked.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let mut e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// e.write(&hydron_core::E8_ROOTS)?;
    /// let reader = ParquetReader::from_bytes(e.finish()?, Policy::Strict, ParquetReadOptions::new())?;
    /// assert!(reader.has_checksums());
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    #[must_use]
    pub fn has_checksums(&self) -> bool {
        self.checksums.is_some()
    }

    /// The number of vectors the footer claims (a claim: the rows read are
    /// checked against it, and nothing is allocated from it).
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let mut e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// e.write(&hydron_core::E8_ROOTS)?;
    /// let reader = ParquetReader::from_bytes(e.finish()?, Policy::Strict, ParquetReadOptions::new())?;
    /// assert_eq!(reader.claimed_vectors(), 240);
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    #[must_use]
    pub fn claimed_vectors(&self) -> u64 {
        self.metadata.metadata().file_metadata().num_rows().max(0) as u64
    }

    /// The vectors (or codes) the rest of the file's column chunks can
    /// hold: for each row group not yet read, its claimed rows capped at
    /// the column chunk's stored bytes over the least an uncompressed
    /// value takes (32 bytes a vector, 1 a code), and in all at the data's
    /// length over the same. A bound backed by bytes that exist, for
    /// reserving an output once: compressed data can hold more (the output
    /// then grows as it is read), a claim cannot make it larger.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let mut e = ParquetEncoder::new(Vec::new(), ParquetOptions::new().with_compression("none".parse()?))?;
    /// e.write(&hydron_core::E8_ROOTS)?;
    /// let reader = ParquetReader::from_bytes(e.finish()?, Policy::Strict, ParquetReadOptions::new())?;
    /// assert_eq!(reader.proven_vectors(), 240);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn proven_vectors(&self) -> u64 {
        use ::parquet::file::reader::Length;
        let per = match self.target {
            Target::Vectors(_) => 32,
            Target::Codes => 1,
        };
        let meta = self.metadata.metadata();
        let descr = meta.file_metadata().schema_descr();
        let leaves: Vec<usize> = (0..descr.num_columns())
            .filter(|&leaf| descr.get_column_root_idx(leaf) == self.column)
            .collect();
        let groups = meta.row_groups().iter().skip(self.next_group);
        let sum: u64 = groups
            .map(|group| {
                let bytes: u64 = leaves
                    .iter()
                    .map(|&leaf| group.column(leaf).compressed_size().max(0) as u64)
                    .sum();
                (group.num_rows().max(0) as u64).min(bytes / per)
            })
            .sum();
        sum.min(self.source.len() / per)
    }

    /// Reads every remaining vector into one `Vec`, reserved once for
    /// [`proven_vectors`](Self::proven_vectors) (large outputs backed by
    /// huge pages where the system offers them), so that it is not grown
    /// and copied row group after row group.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let mut e = ParquetEncoder::new(Vec::new(), ParquetOptions::new().with_row_group_vectors(100))?;
    /// e.write(&hydron_core::E8_ROOTS)?;
    /// let mut reader = ParquetReader::from_bytes(e.finish()?, Policy::Strict, ParquetReadOptions::new())?;
    /// assert_eq!(reader.read_to_end()?, hydron_core::E8_ROOTS);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_to_end(&mut self) -> Result<Vec<Gf8>, CodecError> {
        let mut out = reserved(self.proven_vectors())?;
        while self.read_chunk(&mut out)? > 0 {}
        Ok(out)
    }

    /// Reads every remaining code into one `Vec`, reserved once, as
    /// [`read_to_end`](Self::read_to_end) does for vectors.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReader};
    /// use hydron_core::E8Root;
    /// let mut e = ParquetEncoder::new_codes(Vec::new(), ParquetOptions::new())?;
    /// e.write_codes(&[E8Root::new(3)?, E8Root::new(5)?])?;
    /// let mut reader = ParquetReader::codes_from_bytes(e.finish()?)?;
    /// assert_eq!(reader.read_codes_to_end()?.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_codes_to_end(&mut self) -> Result<Vec<E8Root>, CodecError> {
        let mut out = reserved(self.proven_vectors())?;
        while self.read_codes_chunk(&mut out)? > 0 {}
        Ok(out)
    }

    /// The number of row groups.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// let reader = ParquetReader::from_bytes(e.finish()?, Policy::Strict, ParquetReadOptions::new())?;
    /// assert_eq!(reader.row_groups(), 0);
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    #[must_use]
    pub fn row_groups(&self) -> usize {
        self.metadata.metadata().num_row_groups()
    }

    /// The name of the column read.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// let reader = ParquetReader::from_bytes(e.finish()?, Policy::Strict, ParquetReadOptions::new())?;
    /// assert_eq!(reader.column_name(), "vector");
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    #[must_use]
    pub fn column_name(&self) -> &str {
        &self.column_name
    }

    /// The Arrow type of the column read, as the file's schema gives it
    /// (e.g. `FixedSizeList(8 x Float32)`, or `List(Float32)` from a
    /// writer that stores no Arrow schema).
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let e = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
    /// let reader = ParquetReader::from_bytes(e.finish()?, Policy::Strict, ParquetReadOptions::new())?;
    /// assert_eq!(reader.column_type(), &hydron_codec::arrow::vector_data_type());
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    #[must_use]
    pub fn column_type(&self) -> &arrow_schema::DataType {
        self.metadata.schema().field(self.column).data_type()
    }

    /// Appends the next batch of vectors (at most
    /// [`ParquetReadOptions::batch_vectors`], or one row group read by the
    /// fast path) to `out`, and returns how
    /// many; 0 at the end. On error `out` is left as it was, and the reader
    /// yields nothing more.
    ///
    /// ```
    /// use hydron_codec::parquet::{ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let mut e = ParquetEncoder::new_codes(Vec::new(), ParquetOptions::new())?;
    /// e.write_codes(&[hydron_core::E8Root::new(0)?])?;
    /// // A codes file has no vector column.
    /// let err = ParquetReader::from_bytes(e.finish()?, Policy::Strict, ParquetReadOptions::new()).unwrap_err();
    /// assert!(err.to_string().starts_with("no vector column"), "{err}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_chunk(&mut self, out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        if !matches!(self.target, Target::Vectors(_)) {
            return Err(self.located(wrong_target("vectors", "codes")));
        }
        self.next(out, &mut Vec::new())
    }

    /// Appends the next batch of codes to `out` (for a reader made by
    /// `open_codes` or `codes_from_bytes`); 0 at the end.
    ///
    /// ```
    /// use hydron_codec::parquet::{self, ParquetOptions, ParquetReader};
    /// use hydron_codec::Policy;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("v.parquet");
    /// parquet::save(&path, &hydron_core::E8_ROOTS, ParquetOptions::new())?;
    /// let mut reader = ParquetReader::open(&path, Policy::Strict)?;
    /// assert!(reader.read_codes_chunk(&mut Vec::new()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_codes_chunk(&mut self, out: &mut Vec<E8Root>) -> Result<usize, CodecError> {
        if !matches!(self.target, Target::Codes) {
            return Err(self.located(wrong_target("codes", "vectors")));
        }
        self.next(&mut Vec::new(), out)
    }

    fn next(
        &mut self,
        vectors: &mut Vec<Gf8>,
        codes: &mut Vec<E8Root>,
    ) -> Result<usize, CodecError> {
        if self.failed {
            return Ok(0);
        }
        let result = self.next_batch(vectors, codes);
        if result.is_err() {
            self.failed = true;
            self.current = None;
        }
        result.map_err(|e| self.located(e))
    }

    fn next_batch(
        &mut self,
        vectors: &mut Vec<Gf8>,
        codes: &mut Vec<E8Root>,
    ) -> Result<usize, CodecError> {
        loop {
            let Some(current) = self.current.as_mut() else {
                if self.next_group == self.row_groups() {
                    return Ok(0);
                }
                let index = self.next_group;
                self.next_group += 1;
                let leaves = self.check_pages(index)?;
                if let Some(rows) = self.read_fast(index, &leaves, vectors)? {
                    if rows > 0 {
                        return Ok(rows);
                    }
                    continue;
                }
                // The level streams, before the crate's decoders (which
                // panic on some malformed ones) read them: one more pass
                // over the pages of a row group the fast path did not
                // take.
                for &leaf in &leaves {
                    let meta = self.metadata.metadata();
                    guarded(Some(index), || {
                        levels::check_group(&self.source, meta, index, leaf)
                    })?;
                }
                let batches = self.batch_reader(index)?;
                self.current = Some(Group {
                    index,
                    batches,
                    yielded: 0,
                    hasher: self.checksums.as_ref().map(|_| crc32fast::Hasher::new()),
                });
                continue;
            };
            let group = current.index;
            let next = guarded(Some(group), || {
                current
                    .batches
                    .next()
                    .transpose()
                    .map_err(ParquetError::from)
            })?;
            current.yielded += next.as_ref().map_or(0, |b| b.num_rows() as u64);
            let yielded = current.yielded;
            let mut hasher = current.hasher.take();
            let claimed = self.group_rows(group);
            match next {
                Some(batch) => {
                    if yielded > claimed {
                        return Err(group_rows_error(group, claimed, "more"));
                    }
                    let n = batch.num_rows();
                    self.append(&batch, hasher.as_mut(), vectors, codes)?;
                    self.rows += n as u64;
                    if let Some(current) = self.current.as_mut() {
                        current.hasher = hasher;
                    }
                    if n > 0 {
                        return Ok(n);
                    }
                }
                None => {
                    if yielded != claimed {
                        return Err(group_rows_error(group, claimed, "fewer"));
                    }
                    if let (Some(hasher), Some(sums)) = (hasher, self.checksums.as_ref()) {
                        let (expected, found) = (sums[group], hasher.finalize());
                        if expected != found {
                            return Err(CodecError::ChecksumMismatch {
                                row_group: group,
                                expected,
                                found,
                            });
                        }
                    }
                    self.current = None;
                }
            }
        }
    }

    fn group_rows(&self, group: usize) -> u64 {
        self.metadata.metadata().row_group(group).num_rows().max(0) as u64
    }

    /// Checks the page headers of the row group's leaf columns under the
    /// column read, and returns those leaves.
    fn check_pages(&self, group: usize) -> Result<Vec<usize>, CodecError> {
        let parquet_meta = self.metadata.metadata();
        let descr = parquet_meta.file_metadata().schema_descr();
        let row_group = parquet_meta.row_group(group);
        let leaves: Vec<usize> = (0..descr.num_columns())
            .filter(|&leaf| descr.get_column_root_idx(leaf) == self.column)
            .collect();
        for &leaf in &leaves {
            let chunk = row_group.column(leaf);
            if let Some(codec) = unreadable_codec(chunk.compression()) {
                return Err(CodecError::UnsupportedCompression {
                    row_group: group,
                    codec: codec.into(),
                });
            }
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or_else(|| chunk.data_page_offset());
            let checked = pages::check_chunk(
                &self.source,
                start,
                chunk.compressed_size(),
                self.options.max_page_bytes(),
            )
            .map_err(|error| CodecError::Parquet {
                row_group: Some(group),
                error,
            })?;
            match checked {
                Ok(_) => {}
                Err(too_large) => {
                    return Err(CodecError::PageTooLarge {
                        row_group: group,
                        offset: too_large.offset,
                        claimed: too_large.claimed,
                        limit: self.options.max_page_bytes(),
                    });
                }
            }
        }
        Ok(leaves)
    }

    /// Reads the row group through the fast path when the column is a list
    /// of float32 in a single leaf: `Some(rows)` if it did (the rows are
    /// appended and checked), `None` if the row group is not in the fast
    /// layout (nothing appended).
    fn read_fast(
        &mut self,
        group: usize,
        leaves: &[usize],
        vectors: &mut Vec<Gf8>,
    ) -> Result<Option<usize>, CodecError> {
        let (Target::Vectors(policy), [leaf]) = (self.target, leaves) else {
            return Ok(None);
        };
        let item_is_f32 = match self.column_type() {
            arrow_schema::DataType::FixedSizeList(item, 8)
            | arrow_schema::DataType::List(item)
            | arrow_schema::DataType::LargeList(item) => {
                item.data_type() == &arrow_schema::DataType::Float32
            }
            _ => false,
        };
        let meta = self.metadata.metadata();
        if !item_is_f32 || !fast::eligible(meta, *leaf) {
            return Ok(None);
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let chunk = fast::ColumnChunk {
                source: &self.source,
                metadata: meta,
                group,
                leaf: *leaf,
                first_row: self.rows,
                max_page_bytes: self.options.max_page_bytes(),
            };
            fast::read_group(&chunk, policy, vectors)
        }))
        .unwrap_or_else(|panic| Err(panic_error(Some(group), &panic)))?;
        let fast::Outcome::Done { rows, crc, invalid } = outcome else {
            return Ok(None);
        };
        if let Some(expected) = self.checksums.as_ref().map(|sums| sums[group]) {
            if expected != crc {
                return Err(CodecError::ChecksumMismatch {
                    row_group: group,
                    expected,
                    found: crc,
                });
            }
        }
        if let Some(invalid) = invalid {
            return Err(invalid);
        }
        self.rows += rows;
        Ok(Some(rows as usize))
    }

    /// The Arrow batch reader of one row group.
    fn batch_reader(&self, group: usize) -> Result<ParquetRecordBatchReader, CodecError> {
        let descr = self.metadata.metadata().file_metadata().schema_descr();
        let mask = ProjectionMask::roots(descr, [self.column]);
        guarded(Some(group), || {
            ParquetRecordBatchReaderBuilder::new_with_metadata(
                self.source.clone(),
                self.metadata.clone(),
            )
            .with_projection(mask)
            .with_row_groups(vec![group])
            .with_batch_size(self.options.batch_vectors())
            .build()
        })
    }

    /// Appends the column of `batch` to `vectors` or `codes`, hashing its
    /// values into `hasher`.
    fn append(
        &self,
        batch: &RecordBatch,
        hasher: Option<&mut crc32fast::Hasher>,
        vectors: &mut Vec<Gf8>,
        codes: &mut Vec<E8Root>,
    ) -> Result<(), CodecError> {
        let array = batch.column(0);
        match self.target {
            Target::Vectors(policy) => {
                let arrays = harrow::vector_values_at(array, &self.column_name, self.rows)?;
                if let Some(hasher) = hasher {
                    hasher.update(bytemuck::cast_slice(arrays));
                }
                harrow::append_arrays(arrays, policy, vectors, self.rows)
            }
            Target::Codes => {
                let more = harrow::codes_from_arrow_at(array, &self.column_name, self.rows)?;
                if let Some(hasher) = hasher {
                    hasher.update(bytemuck::cast_slice(&more));
                }
                codes.extend_from_slice(&more);
                Ok(())
            }
        }
    }

    fn located(&self, error: CodecError) -> CodecError {
        match &self.path {
            Some(path) => in_file(path, error),
            None => error,
        }
    }
}

/// Runs a call into the parquet crate, turning its error, or a panic (the
/// crate has panicked on crafted files before), into a [`CodecError`].
pub(super) fn guarded<T>(
    row_group: Option<usize>,
    call: impl FnOnce() -> Result<T, ParquetError>,
) -> Result<T, CodecError> {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(CodecError::Parquet { row_group, error }),
        Err(panic) => Err(panic_error(row_group, &panic)),
    }
}

/// A panic caught in the parquet crate, as an error.
fn panic_error(row_group: Option<usize>, panic: &Box<dyn std::any::Any + Send>) -> CodecError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    CodecError::Parquet {
        row_group,
        error: ParquetError::General(format!(
            "malformed file: the Parquet decoder failed ({message})"
        )),
    }
}

fn group_rows_error(group: usize, claimed: u64, which: &str) -> CodecError {
    CodecError::Parquet {
        row_group: Some(group),
        error: ParquetError::General(format!(
            "the row group claims {claimed} rows, its pages hold {which}"
        )),
    }
}

fn wrong_target(asked: &str, opened: &str) -> CodecError {
    CodecError::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("cannot read {asked} from a reader opened for {opened}"),
    ))
}

/// The name of `codec` if this build cannot decompress it (the parquet
/// crate's `brotli` feature is off, and no build reads LZO).
fn unreadable_codec(codec: ::parquet::basic::Compression) -> Option<&'static str> {
    use ::parquet::basic::Compression as C;
    match codec {
        C::BROTLI(_) => Some("BROTLI"),
        C::LZO => Some("LZO"),
        C::UNCOMPRESSED | C::SNAPPY | C::GZIP(_) | C::LZ4 | C::ZSTD(_) | C::LZ4_RAW => None,
    }
}

/// Opens a regular file (Parquet needs its length and random access).
/// A FIFO or a device is refused before it is opened (opening a FIFO
/// waits for a writer).
pub(super) fn open_file(path: &Path) -> std::io::Result<Source> {
    let not_regular = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file: Parquet is read from its end, so it needs a file \
             (read a pipe into memory first)",
        )
    };
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory, not a Parquet file (read a directory of Parquet files as one \
             data set with parquet::DatasetReader)",
        ));
    }
    if !meta.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok(Source::File {
        file: Arc::new(file),
        len: meta.len(),
    })
}

/// An empty `Vec` with room for `n` items (`n` proven by the data), backed
/// by huge pages when large; an allocation that fails is an error.
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
