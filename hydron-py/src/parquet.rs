//! Parquet files of vectors and codes, on hydron-codec's `parquet` module:
//! atomic saves, streaming reads by row group, the row-group checksum, and
//! the layouts pyarrow, Polars and DuckDB write (the `parquet` feature).
//!
//! The end of the file is what `file` (`save`, `load`, `iter_chunks`, ...)
//! uses for a Parquet file; `parquet_not_built.rs` has the same items for a
//! build without the feature.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use hydron_codec::parquet::{
    self as hparquet, Compression, DatasetReader, ParquetOptions, ParquetReadOptions,
    ParquetReader, ParquetWriter,
};
use hydron_codec::{CodecError, Policy};
use hydron_core::{E8Root, Gf8};
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::sync::MutexExt;
use pyo3::types::PyBytes;

use crate::arrays::{self, codes_out, gf8_out, path_of};
use crate::codec::prepared;
use crate::errors::{codec_error, detached};
use crate::policy::parse_or_strict;
use crate::stream;

pub use hydron_codec::parquet::{looks_like_parquet, ParquetOptions as Options};

/// A reader of a Parquet file, or of a directory of them read as one data
/// set (hydron-codec's `DatasetReader`: its `.parquet` files in path
/// order, `_` and `.` names skipped).
pub enum Reader {
    /// One file, or one file's bytes.
    File(ParquetReader),
    /// A directory.
    Dataset(DatasetReader),
}

impl Reader {
    /// Appends the next batch of vectors to `out`; 0 at the end.
    pub fn read_chunk(&mut self, out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        match self {
            Reader::File(r) => r.read_chunk(out),
            Reader::Dataset(r) => r.read_chunk(out),
        }
    }

    fn read_to_end(&mut self) -> Result<Vec<Gf8>, CodecError> {
        match self {
            Reader::File(r) => r.read_to_end(),
            Reader::Dataset(r) => r.read_to_end(),
        }
    }

    fn read_codes_to_end(&mut self) -> Result<Vec<E8Root>, CodecError> {
        match self {
            Reader::File(r) => r.read_codes_to_end(),
            Reader::Dataset(r) => r.read_codes_to_end(),
        }
    }

    fn claimed_vectors(&self) -> u64 {
        match self {
            Reader::File(r) => r.claimed_vectors(),
            Reader::Dataset(r) => r.claimed_vectors(),
        }
    }
}

/// Whether `path` is a directory: a Parquet data set.
fn is_dataset(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_dir())
}

/// Rows per row group when none is given (`hydron.DEFAULT_ROW_GROUP_VECTORS`).
pub const DEFAULT_ROW_GROUP_VECTORS: usize = ParquetOptions::DEFAULT_ROW_GROUP_VECTORS;

// The Python signatures spell the default row group size out.
const _: () = assert!(DEFAULT_ROW_GROUP_VECTORS == 262_144);

/// The write options from the keyword arguments.
pub fn options(
    compression: &str,
    row_group_vectors: u64,
    durable: bool,
) -> PyResult<ParquetOptions> {
    let compression: Compression = compression
        .parse()
        .map_err(|e: String| PyValueError::new_err(format!("compression: {e}")))?;
    let rows = usize::try_from(row_group_vectors)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "row_group_vectors must be a positive integer, got {row_group_vectors}"
            ))
        })?;
    Ok(ParquetOptions::new()
        .with_compression(compression)
        .with_row_group_vectors(rows)
        .with_durable(durable))
}

fn read_options(column: Option<&str>) -> ParquetReadOptions {
    match column {
        Some(name) => ParquetReadOptions::new().with_column(name),
        None => ParquetReadOptions::new(),
    }
}

/// The bytes of a Parquet file held in Python: a `bytes` object shared
/// without a copy, a buffer copied once, a file object read whole (at most
/// [`stream::MAX_WHOLE_READ_BYTES`]).
fn memory(source: &Bound<'_, PyAny>) -> PyResult<bytes::Bytes> {
    if source.hasattr("read")? && !source.is_instance_of::<PyBytes>() {
        return Ok(bytes::Bytes::from(read_file_object(source)?));
    }
    let data = source.clone();
    if let Ok(b) = data.extract::<PyBackedBytes>() {
        if data.is_instance_of::<PyBytes>() {
            return Ok(bytes::Bytes::from_owner(b));
        }
    }
    let data = arrays::data(&data).map_err(|_| {
        PyTypeError::new_err(format!(
            "expected a path, bytes or a binary file object, got {}",
            source
                .get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    Ok(bytes::Bytes::copy_from_slice(data.as_slice()))
}

/// Opens a reader of vectors (or codes) on a path (a file, or a
/// directory: a data set) or data in memory.
fn open(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    column: Option<&str>,
    policy: Option<Policy>,
) -> PyResult<Reader> {
    let options = read_options(column);
    if let Some(path) = path_of(source)? {
        return detached(py, || open_path_with(&path, policy, options));
    }
    let bytes = memory(source)?;
    detached(py, || match policy {
        Some(policy) => ParquetReader::from_bytes(bytes, policy, options),
        None => ParquetReader::codes_from_bytes_with(bytes, options),
    })
    .map(Reader::File)
}

/// Opens the file or data set at `path`, for vectors (`policy`) or codes.
fn open_path_with(
    path: &Path,
    policy: Option<Policy>,
    options: ParquetReadOptions,
) -> Result<Reader, CodecError> {
    Ok(match (is_dataset(path), policy) {
        (true, Some(policy)) => Reader::Dataset(DatasetReader::open_with(path, policy, options)?),
        (true, None) => Reader::Dataset(DatasetReader::open_codes_with(path, options)?),
        (false, Some(policy)) => Reader::File(ParquetReader::open_with(path, policy, options)?),
        (false, None) => Reader::File(ParquetReader::open_codes_with(path, options)?),
    })
}

/// Save vectors to a Parquet file, atomically.
///
/// One column, ``"vector"``: a list of 8 float32 per row (the Arrow type
/// ``FixedSizeList<float32, 8>``, restored by pyarrow from the file's Arrow
/// schema; DuckDB reads ``FLOAT[]``, Polars ``Array(Float32, 8)``), with a
/// CRC-32 of every row group in the footer that hydron checks on reading.
///
/// Parameters
/// ----------
/// path : str or os.PathLike
/// vectors : ndarray, float32, shape (N, 8)
/// compression : str, default "snappy"
///     ``"none"``, ``"snappy"``, ``"zstd"`` or ``"zstd:LEVEL"``, ``"lz4"``,
///     ``"gzip"`` or ``"gzip:LEVEL"``.
/// row_group_vectors : int, default 262144
///     Rows per row group (the unit of streaming and of Dask partitions).
/// durable : bool, default True
///     fsync the file and its directory before returning.
/// policy : {"strict", "renormalize", "trusted"}, default "strict"
///
/// The file is written next to ``path`` and renamed over it only when
/// complete (a replaced file keeps its permissions; a symbolic link is
/// followed and stays). A FIFO or a character device at ``path`` is
/// written to directly; a directory or any other kind of file is refused.
///
/// Examples
/// --------
/// >>> import os, tempfile, hydron
/// >>> path = os.path.join(tempfile.mkdtemp(), "roots.parquet")
/// >>> hydron.save_parquet(path, hydron.E8_ROOTS, compression="zstd")
/// >>> hydron.load_parquet(path).shape
/// (240, 8)
#[pyfunction]
#[pyo3(signature = (path, vectors, *, compression = "snappy", row_group_vectors = 262144, durable = true, policy = None))]
pub fn save_parquet(
    py: Python<'_>,
    path: PathBuf,
    vectors: &Bound<'_, PyAny>,
    compression: &str,
    row_group_vectors: u64,
    durable: bool,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let options = options(compression, row_group_vectors, durable)?;
    let input = arrays::vectors(vectors, "vectors")?;
    let gf8 = prepared(py, &input, parse_or_strict(policy)?)?;
    detached(py, || hparquet::save(&path, &gf8, options))
}

/// Save E8 root codes to a Parquet file (one ``uint8`` column,
/// ``"code"``), atomically; the options are :func:`save_parquet`'s.
///
/// Examples
/// --------
/// >>> import os, tempfile, hydron
/// >>> path = os.path.join(tempfile.mkdtemp(), "codes.parquet")
/// >>> hydron.save_codes_parquet(path, hydron.nearest_roots(hydron.E8_ROOTS))
/// >>> hydron.load_codes_parquet(path)[:4].tolist()
/// [0, 1, 2, 3]
#[pyfunction]
#[pyo3(signature = (path, codes, *, compression = "snappy", row_group_vectors = 262144, durable = true))]
pub fn save_codes_parquet(
    py: Python<'_>,
    path: PathBuf,
    codes: &Bound<'_, PyAny>,
    compression: &str,
    row_group_vectors: u64,
    durable: bool,
) -> PyResult<()> {
    let options = options(compression, row_group_vectors, durable)?;
    let codes = arrays::codes(codes, "codes")?;
    detached(py, || {
        let roots: Vec<E8Root> = codes.iter().filter_map(|&c| E8Root::new(c).ok()).collect();
        hparquet::save_codes(&path, &roots, options)
    })
}

/// Read the vectors of a Parquet file into a new (N, 8) float32 array.
///
/// ``source`` is a path (read row group by row group; a directory is a
/// data set, see below), ``bytes``, or a
/// binary file object (read whole, at most 1 GiB, else
/// :class:`HydronError`: Parquet is read from its end). The vector column is ``column``, else
/// the column marked ``hydron.type = gf8``, else ``"vector"``, else the
/// only list-of-floats column; it may be a fixed-size list or a list whose
/// rows all hold 8 float32 (what pyarrow, Polars and DuckDB write). Every
/// vector is checked by ``policy``, and a hydron file's row-group
/// checksums are verified.
///
/// A directory is read as one data set: the ``.parquet`` files in it and
/// its subdirectories (Hive ``key=value`` directories too), in the byte
/// order of their relative paths, skipping names that start with ``_`` or
/// ``.`` (``_SUCCESS``, ``.crc`` files), one row group in memory at a
/// time. Every file must hold the same column (else :class:`FormatError`);
/// an error in a file names it (``.index`` is the row in that file, and
/// the message gives the data set's row too).
///
/// Raises
/// ------
/// InvalidVectorError
///     A vector the policy rejects, a null, or a row that does not hold 8
///     values (``.index`` is the row).
/// FormatError
///     Not Parquet, no vector column, or a column of another type.
/// CorruptError
///     A damaged file: a bad footer or page, a checksum that does not match
///     (``.row_group``).
///
/// Examples
/// --------
/// >>> import hydron
/// >>> hydron.load_parquet(b"PAR1")
/// Traceback (most recent call last):
/// hydron.errors.CorruptError: Parquet: ...
#[pyfunction]
#[pyo3(signature = (source, *, column = None, policy = None))]
pub fn load_parquet<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    column: Option<&str>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let policy = parse_or_strict(policy)?;
    let mut reader = open(py, source, column, Some(policy))?;
    let out = detached(py, || reader.read_to_end())?;
    Ok(gf8_out(py, out))
}

/// Read the E8 root codes of a Parquet file (a ``uint8`` column: ``column``,
/// else the one marked ``hydron.type = e8-code``, else ``"code"``, else the
/// only integer column) into a new uint8 array; every code is checked.
#[pyfunction]
#[pyo3(signature = (source, *, column = None))]
pub fn load_codes_parquet<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    column: Option<&str>,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let mut reader = open(py, source, column, None)?;
    let out = detached(py, || reader.read_codes_to_end())?;
    Ok(codes_out(py, out))
}

/// The iterator :func:`iter_parquet` returns.
#[pyclass(module = "hydron._hydron")]
pub struct ParquetChunkIter {
    reader: Mutex<Option<Reader>>,
    claimed_vectors: u64,
}

#[pymethods]
impl ParquetChunkIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f32>>>> {
        // Waits for another thread's `__next__` without holding the GIL
        // (that thread holds the lock while it has released the GIL).
        let mut guard = self
            .reader
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the Parquet iterator was poisoned"))?;
        let Some(reader) = guard.as_mut() else {
            return Ok(None);
        };
        let mut out = Vec::new();
        match py.detach(|| reader.read_chunk(&mut out)) {
            Ok(0) => {
                *guard = None;
                Ok(None)
            }
            Ok(_) => Ok(Some(gf8_out(py, out))),
            Err(e) => {
                *guard = None;
                Err(codec_error(py, e))
            }
        }
    }

    /// The number of rows the file's footer claims (checked against each
    /// row group as it is read).
    #[getter]
    fn claimed_vectors(&self) -> u64 {
        self.claimed_vectors
    }
}

/// Read a Parquet file row group by row group: one (n, 8) float32 array at
/// a time (a whole row group in the common layout, else batches of at most
/// 65,536 rows), each checked by ``policy``. Memory stays flat whatever
/// the file's size. Arguments as :func:`load_parquet`; a directory is read
/// as one data set, file after file.
///
/// Examples
/// --------
/// >>> import os, tempfile, hydron
/// >>> path = os.path.join(tempfile.mkdtemp(), "roots.parquet")
/// >>> hydron.save_parquet(path, hydron.E8_ROOTS, row_group_vectors=100)
/// >>> [len(chunk) for chunk in hydron.iter_parquet(path)]
/// [100, 100, 40]
#[pyfunction]
#[pyo3(signature = (source, *, column = None, policy = None))]
pub fn iter_parquet(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    column: Option<&str>,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<ParquetChunkIter> {
    let policy = parse_or_strict(policy)?;
    let reader = open(py, source, column, Some(policy))?;
    Ok(ParquetChunkIter {
        claimed_vectors: reader.claimed_vectors(),
        reader: Mutex::new(Some(reader)),
    })
}

/// The content of a file object that should hold a Parquet file: all of
/// it (see [`stream::read_whole`]), or only its first bytes when they are
/// not Parquet's (enough for the reader to refuse them by name, without
/// reading on).
fn read_file_object(source: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let (stream, parquet) = stream::open(source)?;
    if !parquet {
        let (head, _) = stream.into_inner();
        return Ok(head.into_inner());
    }
    stream::read_whole(source.py(), stream)
}

// What `file` uses for a Parquet file.

/// The options of a Parquet file written by `save`/`dumps`: Snappy, row
/// groups of `chunk_vectors` vectors.
pub fn container_options(chunk_vectors: u64, durable: bool) -> PyResult<Options> {
    options("snappy", chunk_vectors, durable)
}

/// Saves `vectors` to a Parquet file at `path`, atomically (without the GIL).
pub fn save(py: Python<'_>, path: &Path, vectors: &[Gf8], options: Options) -> PyResult<()> {
    detached(py, || hparquet::save(path, vectors, options))
}

/// The bytes of a Parquet file holding `vectors`.
pub fn to_vec(vectors: &[Gf8], options: Options) -> Result<Vec<u8>, CodecError> {
    let mut encoder = hparquet::ParquetEncoder::new(Vec::new(), options)?;
    encoder.write(vectors)?;
    encoder.finish()
}

/// A reader of the Parquet file (or data set directory) at `path`, one row
/// group at a time.
pub fn open_path(py: Python<'_>, path: &Path, policy: Policy) -> PyResult<Reader> {
    detached(py, || {
        open_path_with(path, Some(policy), ParquetReadOptions::new())
    })
}

/// Vectors of a Parquet file held in memory (for `hydron.loads`).
pub fn vectors_from_bytes(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    policy: Policy,
) -> PyResult<Vec<Gf8>> {
    let mut reader = open(py, source, None, Some(policy))?;
    detached(py, || reader.read_to_end())
}

/// Vectors of a Parquet file read whole from a file object's `stream` (at
/// most [`stream::MAX_WHOLE_READ_BYTES`]), without copying it again.
pub fn vectors_from_stream(
    py: Python<'_>,
    stream: stream::Stream,
    policy: Policy,
) -> PyResult<Vec<Gf8>> {
    let data = stream::read_whole(py, stream)?;
    detached(py, || {
        ParquetReader::from_bytes(bytes::Bytes::from(data), policy, read_options(None))?
            .read_to_end()
    })
}

/// Vectors of the Parquet file (or data set directory) at `path` (for
/// `hydron.load`).
pub fn load_path(py: Python<'_>, path: &Path, policy: Policy) -> PyResult<Vec<Gf8>> {
    detached(py, || {
        open_path_with(path, Some(policy), ParquetReadOptions::new())?.read_to_end()
    })
}

/// A Parquet file written in pieces (a `FileWriter` of format
/// `"parquet"`): hydron-codec's [`ParquetWriter`], which holds about one
/// row group and renames its temporary file over the target on `finish`.
/// A file of vectors, or of E8 root codes.
pub struct Writer {
    inner: ParquetWriter,
}

/// Starts a Parquet file at `path` (of codes when `codes`), with the
/// options of the keyword arguments: `compression` (default `"snappy"`)
/// and `row_group_vectors` (default [`DEFAULT_ROW_GROUP_VECTORS`]), as
/// `save_parquet` takes them.
pub fn writer(
    py: Python<'_>,
    path: &Path,
    compression: Option<&str>,
    row_group_vectors: Option<u64>,
    durable: bool,
    codes: bool,
) -> PyResult<Writer> {
    let options = options(
        compression.unwrap_or("snappy"),
        row_group_vectors.unwrap_or(DEFAULT_ROW_GROUP_VECTORS as u64),
        durable,
    )?;
    let inner = detached(py, || {
        if codes {
            ParquetWriter::create_codes(path, options)
        } else {
            ParquetWriter::create(path, options)
        }
    })?;
    Ok(Writer { inner })
}

impl Writer {
    /// Writes vectors (to a file of vectors).
    pub fn write(&mut self, vectors: &[Gf8]) -> Result<(), CodecError> {
        self.inner.write(vectors)
    }

    /// Writes codes (to a file of codes).
    pub fn write_codes(&mut self, codes: &[E8Root]) -> Result<(), CodecError> {
        self.inner.write_codes(codes)
    }

    /// How many vectors (or codes) have been written.
    pub fn vectors(&self) -> u64 {
        self.inner.vectors()
    }

    /// Writes the last row group and the footer, and renames the file over
    /// the target.
    pub fn finish(self) -> Result<(), CodecError> {
        self.inner.finish()
    }
}
