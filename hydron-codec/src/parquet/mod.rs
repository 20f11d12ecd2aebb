//! Parquet files of vectors and codes (feature `parquet`, arrow-rs's
//! `parquet` crate).
//!
//! A vector file has one column, `vector`, of Arrow type
//! `FixedSizeList<Float32, 8>` ([`crate::arrow::vector_schema`]). Parquet
//! has no fixed-size list, so it is stored as a Parquet `LIST` of
//! non-null `FLOAT`, with the Arrow schema in the file's `ARROW:schema`
//! metadata (as pyarrow writes it): pyarrow restores the
//! `fixed_size_list<float, 8>`, Polars reads a list (cast to `pl.Array`),
//! DuckDB a `FLOAT[]` (cast to `FLOAT[8]`). A codes file has one `UInt8`
//! column, `code`. `docs/format.md` §5 gives the layout.
//!
//! - [`save`], [`save_codes`] and [`ParquetWriter`] write row group by row
//!   group in flat memory (about one row group), and save atomically as
//!   the container does: a temporary file renamed over the target, never a
//!   half-written file in place of a good one, and never a replaced FIFO,
//!   device or directory.
//! - [`load`], [`load_codes`] and [`ParquetReader`] read what hydron,
//!   pyarrow, Polars and DuckDB write: a fixed-size list, or a list (or
//!   large list) whose rows all hold 8 floats, checked by a [`Policy`] in
//!   one fused pass per batch. A null, a row of 7 or 9 values, another
//!   value type (`double`, integers) or a malformed file is a
//!   [`CodecError`] naming the row or the row group, never a panic.
//! - Memory: the output grows as batches are decoded, never from the row
//!   count the footer claims; every byte range the footer names is checked
//!   against the file's real length before it is read, and a page that
//!   claims to decompress to more than
//!   [`ParquetReadOptions::max_page_bytes`] is refused before any memory is
//!   taken for it.
//!
//! ```
//! use hydron_codec::{parquet, Policy};
//! use hydron_core::E8_ROOTS;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("roots.parquet");
//! parquet::save(&path, &E8_ROOTS, parquet::ParquetOptions::new())?;
//! assert_eq!(parquet::load(&path, Policy::Strict)?, E8_ROOTS);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod dataset;
mod embedded_schema;
mod fast;
mod footer;
pub(crate) mod lattice;
mod levels;
mod pages;
mod reader;
mod source;
mod thrift;
mod vector_pages;
mod writer;

use std::path::Path;

use hydron_core::{E8Root, Gf8};

use crate::{CodecError, Policy};

pub use dataset::{load_dataset, DatasetPart, DatasetReader};
pub use reader::{ParquetReadOptions, ParquetReader};
pub use writer::{ParquetEncoder, ParquetWriter};

/// The footer metadata key under which hydron stores the CRC-32 (IEEE) of
/// each row group's values as written (little-endian float32 coordinates,
/// or code bytes), 8 hex digits each, comma-separated. hydron's reader
/// checks it when present, so a value changed after writing is an error
/// even where Parquet itself has no checksum.
pub const CHECKSUM_KEY: &str = "hydron.crc32";

/// The first (and last) 4 bytes of a Parquet file.
pub const MAGIC: [u8; 4] = *b"PAR1";

/// Whether `head` (the first bytes of some data) starts like a Parquet
/// file.
///
/// ```
/// assert!(hydron_codec::parquet::looks_like_parquet(b"PAR1\x15\x04"));
/// assert!(!hydron_codec::parquet::looks_like_parquet(b"\x89HYD"));
/// ```
#[must_use]
pub fn looks_like_parquet(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// How a Parquet file's pages are compressed.
///
/// ```
/// use hydron_codec::parquet::Compression;
/// assert_eq!(Compression::default(), Compression::Snappy);
/// assert_eq!(Compression::Zstd(3).to_string(), "zstd (level 3)");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
#[non_exhaustive]
pub enum Compression {
    /// No compression: the fastest to write and read.
    Uncompressed,
    /// Snappy: the default of pyarrow, DuckDB and Spark, and hydron's.
    #[default]
    Snappy,
    /// Zstandard at a level in `1..=22` (Polars' default codec).
    Zstd(i32),
    /// LZ4 (the raw `LZ4_RAW` codec).
    Lz4,
    /// Gzip at a level in `0..=9`.
    Gzip(u32),
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Compression::Uncompressed => f.write_str("uncompressed"),
            Compression::Snappy => f.write_str("snappy"),
            Compression::Zstd(level) => write!(f, "zstd (level {level})"),
            Compression::Lz4 => f.write_str("lz4"),
            Compression::Gzip(level) => write!(f, "gzip (level {level})"),
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = String;

    /// `none`/`uncompressed`, `snappy`, `zstd` (level 3) or `zstd:N`,
    /// `lz4`, `gzip` (level 6) or `gzip:N`.
    ///
    /// ```
    /// use hydron_codec::parquet::Compression;
    /// assert_eq!("zstd:9".parse(), Ok(Compression::Zstd(9)));
    /// assert!("brotli".parse::<Compression>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Compression, String> {
        let (name, level) = match s.split_once(':') {
            Some((name, level)) => (name, Some(level)),
            None => (s, None),
        };
        let bad_level = || format!("bad compression level in {s:?}");
        match (name.to_ascii_lowercase().as_str(), level) {
            ("none" | "uncompressed", None) => Ok(Compression::Uncompressed),
            ("snappy", None) => Ok(Compression::Snappy),
            ("lz4", None) => Ok(Compression::Lz4),
            ("zstd", None) => Ok(Compression::Zstd(3)),
            ("zstd", Some(l)) => l
                .parse()
                .ok()
                .filter(|l| (1..=22).contains(l))
                .map(Compression::Zstd)
                .ok_or_else(bad_level),
            ("gzip", None) => Ok(Compression::Gzip(6)),
            ("gzip", Some(l)) => l
                .parse()
                .ok()
                .filter(|l| *l <= 9)
                .map(Compression::Gzip)
                .ok_or_else(bad_level),
            _ => Err(format!(
                "unknown compression {s:?}: use none, snappy, zstd[:LEVEL], lz4 or gzip[:LEVEL]"
            )),
        }
    }
}

/// Options for writing Parquet: compression, row group size, durability.
///
/// ```
/// use hydron_codec::parquet::{Compression, ParquetOptions};
///
/// let opts = ParquetOptions::new().with_compression(Compression::Uncompressed).with_row_group_vectors(1000);
/// assert_eq!(opts.row_group_vectors(), 1000);
/// assert_eq!(ParquetOptions::new().compression(), Compression::Snappy);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ParquetOptions {
    compression: Compression,
    row_group_vectors: usize,
    durable: bool,
}

impl ParquetOptions {
    /// Vectors per row group unless set: 262,144 (8 MiB of coordinates),
    /// the memory a writer holds at most.
    pub const DEFAULT_ROW_GROUP_VECTORS: usize = 1 << 18;

    /// The defaults: snappy, [`DEFAULT_ROW_GROUP_VECTORS`](Self::DEFAULT_ROW_GROUP_VECTORS)
    /// per row group, durable.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetOptions;
    /// assert_eq!(ParquetOptions::new(), ParquetOptions::default());
    /// ```
    #[must_use]
    pub const fn new() -> ParquetOptions {
        ParquetOptions {
            compression: Compression::Snappy,
            row_group_vectors: Self::DEFAULT_ROW_GROUP_VECTORS,
            durable: true,
        }
    }

    /// Sets the compression.
    ///
    /// ```
    /// use hydron_codec::parquet::{Compression, ParquetOptions};
    /// let opts = ParquetOptions::new().with_compression(Compression::Zstd(1));
    /// assert_eq!(opts.compression(), Compression::Zstd(1));
    /// ```
    #[must_use]
    pub const fn with_compression(mut self, compression: Compression) -> ParquetOptions {
        self.compression = compression;
        self
    }

    /// Sets how many vectors each row group holds (the last may hold
    /// fewer); at least 1.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetOptions;
    /// assert_eq!(ParquetOptions::new().with_row_group_vectors(0).row_group_vectors(), 1);
    /// ```
    #[must_use]
    pub const fn with_row_group_vectors(mut self, vectors: usize) -> ParquetOptions {
        self.row_group_vectors = if vectors == 0 { 1 } else { vectors };
        self
    }

    /// Sets whether [`ParquetWriter::finish`] flushes the file and its
    /// directory to disk (as [`crate::file::FileOptions::with_durable`]).
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetOptions;
    /// assert!(!ParquetOptions::new().with_durable(false).is_durable());
    /// ```
    #[must_use]
    pub const fn with_durable(mut self, durable: bool) -> ParquetOptions {
        self.durable = durable;
        self
    }

    /// The compression.
    ///
    /// ```
    /// use hydron_codec::parquet::{Compression, ParquetOptions};
    /// assert_eq!(ParquetOptions::new().compression(), Compression::Snappy);
    /// ```
    #[must_use]
    pub const fn compression(&self) -> Compression {
        self.compression
    }

    /// Vectors per row group.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetOptions;
    /// assert_eq!(ParquetOptions::new().row_group_vectors(), 262_144);
    /// ```
    #[must_use]
    pub const fn row_group_vectors(&self) -> usize {
        self.row_group_vectors
    }

    /// Whether saves are flushed to disk.
    ///
    /// ```
    /// use hydron_codec::parquet::ParquetOptions;
    /// assert!(ParquetOptions::new().is_durable());
    /// ```
    #[must_use]
    pub const fn is_durable(&self) -> bool {
        self.durable
    }
}

impl Default for ParquetOptions {
    fn default() -> ParquetOptions {
        ParquetOptions::new()
    }
}

/// Saves `vectors` to a Parquet file at `path`, atomically.
///
/// ```
/// use hydron_codec::parquet::{self, ParquetOptions};
/// use hydron_core::Gf8;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("zero.parquet");
/// parquet::save(&path, &[Gf8::ZERO], ParquetOptions::new())?;
/// assert_eq!(&std::fs::read(&path)?[..4], b"PAR1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save(
    path: impl AsRef<Path>,
    vectors: &[Gf8],
    options: ParquetOptions,
) -> Result<(), CodecError> {
    let mut writer = ParquetWriter::create(path, options)?;
    writer.write(vectors)?;
    writer.finish()
}

/// Saves E8 root codes to a Parquet file at `path` (one `UInt8` column,
/// `code`), atomically.
///
/// ```
/// use hydron_codec::parquet::{self, ParquetOptions};
/// use hydron_core::{batch, E8_ROOTS};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("codes.parquet");
/// let codes = batch::nearest_roots(&E8_ROOTS);
/// parquet::save_codes(&path, &codes, ParquetOptions::new())?;
/// assert_eq!(parquet::load_codes(&path)?, codes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_codes(
    path: impl AsRef<Path>,
    codes: &[E8Root],
    options: ParquetOptions,
) -> Result<(), CodecError> {
    let mut writer = ParquetWriter::create_codes(path, options)?;
    writer.write_codes(codes)?;
    writer.finish()
}

/// Loads the vector column of a Parquet file, checked by `policy`.
///
/// ```
/// use hydron_codec::{parquet, Policy};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("not.parquet");
/// std::fs::write(&path, b"PAR1 but nothing more")?;
/// let err = parquet::load(&path, Policy::Strict).unwrap_err();
/// assert!(err.to_string().contains("not.parquet: Parquet"), "{err}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load(path: impl AsRef<Path>, policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    ParquetReader::open(path, policy)?.read_to_end()
}

/// Loads the code column of a Parquet file (every code checked).
///
/// ```
/// use hydron_codec::parquet::{self, ParquetOptions};
/// use hydron_core::E8Root;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("c.parquet");
/// parquet::save_codes(&path, &[E8Root::new(9)?], ParquetOptions::new())?;
/// assert_eq!(parquet::load_codes(&path)?[0].code(), 9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_codes(path: impl AsRef<Path>) -> Result<Vec<E8Root>, CodecError> {
    ParquetReader::open_codes(path)?.read_codes_to_end()
}

/// Decodes the vector column of a whole Parquet file held in memory.
///
/// ```
/// use hydron_codec::parquet::{self, ParquetEncoder, ParquetOptions};
/// use hydron_codec::Policy;
/// use hydron_core::E8_ROOTS;
///
/// let mut encoder = ParquetEncoder::new(Vec::new(), ParquetOptions::new())?;
/// encoder.write(&E8_ROOTS)?;
/// let bytes = encoder.finish()?;
/// assert_eq!(parquet::from_bytes(bytes, Policy::Strict)?, E8_ROOTS);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn from_bytes(bytes: impl Into<bytes::Bytes>, policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    ParquetReader::from_bytes(bytes, policy, ParquetReadOptions::new())?.read_to_end()
}

/// `error` from the parquet crate, outside any row group.
fn parquet_error(error: ::parquet::errors::ParquetError) -> CodecError {
    CodecError::Parquet {
        row_group: None,
        error,
    }
}
