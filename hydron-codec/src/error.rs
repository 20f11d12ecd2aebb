//! [`CodecError`]: every way decoding or encoding can fail.

use hydron_core::{BatchError, Gf8Error};

/// Why data could not be encoded or decoded.
///
/// Each variant is one cause, and its message says where: which vector and
/// coordinate, which byte offset, which chunk, which line and column.
///
/// ```
/// use hydron_codec::{CodecError, Policy};
///
/// let err = Policy::Strict.apply(vec![[0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0]]).unwrap_err();
/// assert!(matches!(err, CodecError::InvalidVector { index: 0, .. }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// A decoded vector breaks the `Gf8` invariant (NaN, infinite, or not of
    /// unit norm) under the decoding [`Policy`](crate::Policy).
    #[error("vector {index}: {error}")]
    InvalidVector {
        /// Index of the vector in the batch (or stream).
        index: u64,
        /// What is wrong with it.
        error: Gf8Error,
    },
    /// Reading or writing failed (without a file name; file operations wrap
    /// this in [`CodecError::InFile`]).
    #[error("I/O error: {0}")]
    Io(std::io::Error),
    /// Malformed JSON, or JSON of the wrong shape; the message names the
    /// vector and coordinate when the parser was inside one.
    #[error("JSON error at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line of the error.
        line: u64,
        /// Column as serde_json counts it: bytes from the start of the line
        /// through the last byte read, so the problem is at or just after it.
        column: u64,
        /// What is wrong, e.g. `"vector 2, coordinate 7: number out of range"`.
        message: String,
    },
    /// A line of JSON Lines text is longer than the reader accepts.
    #[error("line {line} is longer than {limit} bytes")]
    LineTooLong {
        /// 1-based line number.
        line: u64,
        /// The longest line accepted, in bytes (newline excluded).
        limit: usize,
    },
    /// A vector read from a line of text breaks the `Gf8` invariant.
    #[error("line {line} (vector {index}): {error}")]
    InvalidVectorOnLine {
        /// 1-based line number.
        line: u64,
        /// Index of the vector in the stream.
        index: u64,
        /// What is wrong with it.
        error: Gf8Error,
    },
    /// An error about a named file: the path, then what went wrong.
    #[error("{}: {error}", path.display())]
    InFile {
        /// The file.
        path: std::path::PathBuf,
        /// What went wrong in it.
        error: Box<CodecError>,
    },
    /// The data is not a hydron file (wrong magic bytes, empty, another
    /// format).
    #[error("not a hydron file: {reason}")]
    UnknownFormat {
        /// What was found instead.
        reason: String,
    },
    /// The file is a hydron file of a format version this build cannot read.
    #[error("unsupported hydron file version {found} (this build reads version {supported})")]
    UnsupportedVersion {
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The file is in a form whose cargo feature is not enabled.
    #[error("the file is in the {format} form, which needs hydron-codec's `{feature}` feature")]
    FormatDisabled {
        /// The form found in the file.
        format: &'static str,
        /// The cargo feature that reads it.
        feature: &'static str,
    },
    /// The data ends before the container does: the file was cut short.
    #[cfg(any(feature = "fory-messages", feature = "json"))]
    #[error("truncated: the data ends at byte offset {offset}, in {section}")]
    Truncated {
        /// Where the data ends (its length).
        offset: u64,
        /// The part of the container that is missing or incomplete.
        section: crate::file::Section,
    },
    /// A checksum or framing check failed: the data was altered.
    #[cfg(any(feature = "fory-messages", feature = "json"))]
    #[error("corrupt {section} at byte offset {offset}: {detail}")]
    Corrupt {
        /// The damaged part of the container.
        section: crate::file::Section,
        /// Byte offset where that part starts (or where the check failed).
        offset: u64,
        /// Which check failed.
        detail: String,
    },
    /// A binary message ends before its data does (checked before any
    /// allocation for that data).
    #[error("input ends early: {what} at byte offset {offset} needs {needed} bytes, only {available} remain")]
    UnexpectedEnd {
        /// Where the incomplete part starts.
        offset: u64,
        /// What is incomplete, e.g. `"the float32 array"`.
        what: &'static str,
        /// Bytes that part needs.
        needed: u64,
        /// Bytes the input still has from `offset`.
        available: u64,
    },
    /// Bytes follow a complete binary message.
    #[error("{count} trailing bytes after the end of the message at byte offset {offset}")]
    TrailingBytes {
        /// Where the message ends and the extra bytes start.
        offset: u64,
        /// How many extra bytes there are.
        count: u64,
    },
    /// A framing byte is not what the format requires: the input is not a
    /// fory message, or not one of this kind.
    #[error("byte offset {offset}: found 0x{found:02x}, expected {expected}")]
    WrongHeader {
        /// Where the byte is.
        offset: u64,
        /// The byte found.
        found: u8,
        /// What the format requires there.
        expected: &'static str,
    },
    /// A fory message holds a different registered type.
    #[error("byte offset {offset}: fory user type id {found}, expected {expected} ({name})")]
    WrongTypeId {
        /// Where the type id starts.
        offset: u64,
        /// The type id found.
        found: u32,
        /// The type id required.
        expected: u32,
        /// The type that has the required id.
        name: &'static str,
    },
    /// A length prefix is not a whole number of elements.
    #[error("byte offset {offset}: length {length} is not a multiple of {unit} ({what})")]
    BadLength {
        /// Where the length prefix starts.
        offset: u64,
        /// The length found (in the unit of `what`).
        length: u64,
        /// The length must be a multiple of this.
        unit: u64,
        /// What is counted, e.g. `"bytes of a float32 array"`.
        what: &'static str,
    },
    /// A variable-length integer is malformed (too long, overflowing 32
    /// bits, or not in shortest form).
    #[error("byte offset {offset}: malformed varint: {reason}")]
    BadVarint {
        /// Where the varint starts.
        offset: u64,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The data is too large for the format (fory lengths are 32-bit).
    #[error("cannot encode {length} bytes: {what} holds at most {limit} bytes")]
    TooLarge {
        /// The size that was asked for, in bytes.
        length: u64,
        /// The largest size the format holds, in bytes.
        limit: u64,
        /// What is limited, e.g. `"a fory float32 array"`.
        what: &'static str,
    },
    /// An input read from a stream needs more bytes than the reader's
    /// limit: it is longer, or a length in it claims more (refused before
    /// those bytes are read).
    #[error("{what} needs {needed} bytes, more than the {limit} read at most")]
    ReadLimit {
        /// The bytes the input needs, as far as it has shown or claimed.
        needed: u64,
        /// The most bytes read.
        limit: u64,
        /// What is read, e.g. `"a LatticeCodes message"`.
        what: &'static str,
    },
    /// An Arrow column (or Parquet column, read through Arrow) does not
    /// hold what hydron reads there: the message says what it holds and
    /// what was expected.
    #[cfg(feature = "arrow")]
    #[error("{} has type {found}; expected {expected}{}", if column.is_empty() {
        "the array".to_string()
    } else {
        format!("column {column:?}")
    }, if columns.is_empty() {
        String::new()
    } else {
        format!(" (the columns: {columns})")
    })]
    WrongColumnType {
        /// The column's name.
        column: String,
        /// Its type, as Arrow names it.
        found: String,
        /// What hydron reads there.
        expected: &'static str,
        /// Where a file was opened: every column, with its type (empty
        /// for an array on its own).
        columns: String,
    },
    /// No column of the data holds vectors (or codes).
    #[cfg(feature = "arrow")]
    #[error("no {what} column: {reason}")]
    MissingColumn {
        /// What was looked for: `"vector"` or `"code"`.
        what: &'static str,
        /// What was found instead (the columns there are).
        reason: String,
    },
    /// Several columns could hold the vectors (or codes), and no one of
    /// them is the only one marked, or the only one named, as the one (two
    /// columns of the same name are ambiguous too): the caller must name
    /// it. Not the same as [`MissingColumn`](CodecError::MissingColumn), so
    /// that a reader that falls back from vectors to codes never takes
    /// another column for the data.
    #[cfg(feature = "arrow")]
    #[error("which {what} column? {candidates} columns could be it and none is the only one named {name:?} or marked hydron.type: {columns}")]
    AmbiguousColumn {
        /// What was looked for: `"vector"` or `"code"`.
        what: &'static str,
        /// The name that would have chosen one.
        name: &'static str,
        /// How many columns could be it.
        candidates: usize,
        /// The columns there are, with their types.
        columns: String,
    },
    /// A row of an Arrow or Parquet column is null, or holds a null
    /// coordinate: a vector has none.
    #[cfg(feature = "arrow")]
    #[error("row {row}: {}", match coordinate {
        Some(c) => format!("coordinate {c} is null"),
        None => "the row is null".to_string(),
    })]
    NullValue {
        /// The row (0-based, counted from the start of the data).
        row: u64,
        /// The null coordinate, or `None` if the whole row is null.
        coordinate: Option<u8>,
    },
    /// A row of a list column does not have 8 values.
    #[cfg(feature = "arrow")]
    #[error("row {row} has {length} values; a vector has 8")]
    WrongRowLength {
        /// The row (0-based, counted from the start of the data).
        row: u64,
        /// How many values it has.
        length: i64,
    },
    /// The offsets of a list column are not a valid layout (decreasing, or
    /// past the end of the values): the array is malformed.
    #[cfg(feature = "arrow")]
    #[error("row {row}: malformed list offsets: {detail}")]
    BadOffsets {
        /// The first row whose offsets are wrong.
        row: u64,
        /// What is wrong.
        detail: String,
    },
    /// arrow-rs refused the data (an array whose buffers do not match its
    /// declared layout, or a record batch that cannot be built).
    #[cfg(feature = "arrow")]
    #[error("Arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The Parquet data is malformed (truncated, a bad footer or page, a
    /// failed decompression), or could not be written; `row_group` names
    /// the row group when the error is inside one.
    #[cfg(feature = "parquet")]
    #[error("Parquet{}: {}", match row_group {
        Some(g) => format!(" (row group {g})"),
        None => String::new(),
    }, parquet_message(error))]
    Parquet {
        /// The row group being read, if the error is inside one.
        row_group: Option<usize>,
        /// The parquet crate's error.
        error: parquet::errors::ParquetError,
    },
    /// The values of a row group of a hydron Parquet file differ from what
    /// was written: their CRC-32 does not match the one in the footer.
    #[cfg(feature = "parquet")]
    #[error("Parquet row group {row_group}: checksum mismatch (CRC-32 {found:08x}, the footer says {expected:08x}): the data changed after it was written")]
    ChecksumMismatch {
        /// The row group.
        row_group: usize,
        /// The CRC-32 in the footer.
        expected: u32,
        /// The CRC-32 of the values read.
        found: u32,
    },
    /// A Parquet column chunk is compressed with a codec this build does
    /// not read (Brotli, LZO): the file is well formed, but not readable
    /// here. hydron reads uncompressed, Snappy, gzip, LZ4 and Zstandard
    /// data.
    #[cfg(feature = "parquet")]
    #[error("Parquet row group {row_group}: the vector column is compressed with {codec}, which hydron does not read (it reads uncompressed, Snappy, gzip, LZ4 and Zstandard data: rewrite the file with one of those, e.g. pyarrow's compression=\"zstd\")")]
    UnsupportedCompression {
        /// The row group.
        row_group: usize,
        /// The codec, as Parquet names it (`BROTLI`, `LZO`).
        codec: String,
    },
    /// A Parquet page claims to decompress to more than the reader accepts;
    /// checked before any memory is taken for it.
    #[cfg(feature = "parquet")]
    #[error("Parquet row group {row_group}, byte offset {offset}: a page claims {claimed} bytes uncompressed, over the limit of {limit} (ParquetReadOptions::with_max_page_bytes)")]
    PageTooLarge {
        /// The row group.
        row_group: usize,
        /// Where the page header starts in the file.
        offset: u64,
        /// The uncompressed size the page header claims.
        claimed: u64,
        /// The largest page accepted.
        limit: u64,
    },
    /// A directory read as a Parquet data set holds no `.parquet` file
    /// (names starting with `_` or `.` are skipped, as are other files).
    #[cfg(feature = "parquet")]
    #[error("{}: no .parquet files in this data set directory or its subdirectories ({skipped} other entries skipped: names starting with _ or . and files not named *.parquet)", dir.display())]
    EmptyDataset {
        /// The directory.
        dir: std::path::PathBuf,
        /// Entries skipped.
        skipped: u64,
    },
    /// A file of a Parquet data set does not hold the column its first
    /// file does: every file must hold the same column, chosen by the
    /// same rule (or the same name).
    #[cfg(feature = "parquet")]
    #[error("{}: this file {found}, but the data set's column is {column:?}, as read from {}: every file of a data set must hold the same column", path.display(), first.display())]
    DatasetColumnMismatch {
        /// The file.
        path: std::path::PathBuf,
        /// The data set's first file.
        first: std::path::PathBuf,
        /// The column read from the first file.
        column: String,
        /// What this file holds instead, e.g. `reads column "emb"`.
        found: String,
    },
    /// An error in one file of a Parquet data set: the file, and where its
    /// rows sit in the data set. Rows in `error` count from the start of
    /// the file.
    #[cfg(feature = "parquet")]
    #[error("{}: {error}{}", path.display(), match row {
        Some(r) => format!(" (row {r} of the data set)"),
        None => String::new(),
    })]
    InDatasetFile {
        /// The file.
        path: std::path::PathBuf,
        /// The data set's row of the file's first row.
        first_row: u64,
        /// The data set's row of the row `error` names, if it names one.
        row: Option<u64>,
        /// What went wrong in it (an I/O error when it cannot be read).
        error: Box<CodecError>,
    },
    /// fory itself reported an error: type registration, or generic
    /// (de)serialization through a [`fory::Fory`](::fory::Fory).
    #[cfg(feature = "fory")]
    #[error("fory: {0}")]
    Fory(#[from] ::fory::Error),
    /// Generic fory deserialization failed (through
    /// [`fory::deserialize_exact`](crate::fory::deserialize_exact)); the
    /// offset is where fory's reader stopped, at or just after the bad
    /// bytes.
    #[cfg(feature = "fory")]
    #[error("fory error at byte offset {offset}: {error}")]
    ForyAt {
        /// Where fory's reader stopped.
        offset: u64,
        /// fory's error.
        error: ::fory::Error,
    },
    /// Stored lattice codes ([`crate::quant`]) whose parameters are not
    /// valid or disagree with their data: the byte offset (a fory message)
    /// or the row (Parquet) where the disagreement shows, when there is
    /// one place.
    #[error("lattice codes{}: {detail}", codes_place(*offset, *row))]
    BadCodes {
        /// The byte offset of the field that disagrees (a fory message).
        offset: Option<u64>,
        /// The row (vector) that is wrong (Parquet, or a bad scale).
        row: Option<u64>,
        /// What disagrees with what.
        detail: String,
    },
}

/// `", byte offset 62"`, `", row 17"`, both, or nothing.
fn codes_place(offset: Option<u64>, row: Option<u64>) -> String {
    let mut s = String::new();
    if let Some(o) = offset {
        s.push_str(&format!(", byte offset {o}"));
    }
    if let Some(r) = row {
        s.push_str(&format!(", row {r}"));
    }
    s
}

impl From<BatchError> for CodecError {
    fn from(e: BatchError) -> CodecError {
        CodecError::InvalidVector {
            index: e.index as u64,
            error: e.error,
        }
    }
}

/// A parquet crate error's text without its own "Parquet error: " prefix.
#[cfg(feature = "parquet")]
fn parquet_message(error: &parquet::errors::ParquetError) -> String {
    let text = error.to_string();
    match text.strip_prefix("Parquet error: ") {
        Some(rest) => rest.to_string(),
        None => text,
    }
}
