//! hydron files: `save`/`load`, `dumps`/`loads`, streaming `iter_chunks`
//! and `FileWriter`, all on hydron-codec's `file` module (atomic saves,
//! checksums, chunk-by-chunk reading).

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use hydron_codec::file::{self, FileOptions, FileReader};
use hydron_codec::{CodecError, Policy};
use hydron_core::{E8Root, Gf8};
use numpy::PyArray2;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyBytes;

use crate::arrays::{self, gf8_out, path_of};
use crate::codec::{encode_vectors, encode_vectors_in_place, prepared};
use crate::errors::{batch_error, codec_error, detached};
use crate::parquet as pyparquet;
use crate::policy::{self, parse_or_strict};
use crate::stream;

/// Whether `path` is a regular file that starts with Parquet's magic, or
/// a directory (a Parquet data set); special files are left to the
/// container reader, which refuses them without blocking on them.
fn is_parquet_file(path: &std::path::Path) -> bool {
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return true;
    }
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let mut head = [0u8; 4];
    regular
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok()
        && pyparquet::looks_like_parquet(&head)
}

/// Whether `save` writes Parquet: `format="parquet"`, or no format and a
/// path ending in `.parquet` or `.pq`.
fn saves_parquet(path: &std::path::Path, format: Option<&Bound<'_, PyAny>>) -> bool {
    match format {
        Some(f) => f
            .extract::<String>()
            .is_ok_and(|name| name.eq_ignore_ascii_case("parquet")),
        None => suffix_is(path, &["parquet", "pq"]),
    }
}

/// Whether `path` ends in `.` and one of `suffixes` (any case).
fn suffix_is(path: &std::path::Path, suffixes: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| suffixes.iter().any(|s| e.eq_ignore_ascii_case(s)))
}

/// The container form a path asks for when no `format` is given: JSON
/// Lines for `.jsonl`, the binary form for any other name; a `.json` name
/// is refused (hydron has no plain-JSON file, and `load` could not read
/// one back). Parquet names are decided before this.
fn container_format_of(
    path: &std::path::Path,
    format: Option<&Bound<'_, PyAny>>,
) -> PyResult<file::Format> {
    if format.is_some() {
        return policy::format(format);
    }
    if suffix_is(path, &["json"]) {
        return Err(PyValueError::new_err(format!(
            "{}: hydron files are not plain JSON; a name ending in .jsonl gets JSON \
             Lines with checksum lines, .parquet gets Parquet, any other name the \
             binary form; for a plain JSON array use encode_json (or pass format= to \
             write a hydron file under this name)",
            path.display()
        )));
    }
    Ok(if suffix_is(path, &["jsonl"]) {
        file::Format::JsonLines
    } else {
        file::Format::Fory
    })
}

// The Python signatures spell the default chunk size out (65536).
const _: () = assert!(FileOptions::DEFAULT_CHUNK_VECTORS == 65_536);

fn options(chunk_vectors: u64, durable: bool) -> PyResult<FileOptions> {
    let max = u64::from(FileOptions::MAX_CHUNK_VECTORS);
    match u32::try_from(chunk_vectors) {
        Ok(n) if (1..=max).contains(&chunk_vectors) => Ok(FileOptions::new()
            .with_chunk_vectors(n)
            .with_durable(durable)),
        _ => Err(PyValueError::new_err(format!(
            "chunk_vectors must be an integer in 1..={max}, got {chunk_vectors}"
        ))),
    }
}

/// The vectors of a hydron file (or Parquet file) read from a binary file
/// object: a container is decoded as it arrives (without the GIL, taken
/// back for each `read`), Parquet is read whole first (at most
/// [`stream::MAX_WHOLE_READ_BYTES`]).
fn load_stream(py: Python<'_>, source: &Bound<'_, PyAny>, policy: Policy) -> PyResult<Vec<Gf8>> {
    let (stream, parquet) = stream::open(source)?;
    if parquet {
        return pyparquet::vectors_from_stream(py, stream, policy);
    }
    detached(py, move || {
        let mut reader = FileReader::from_reader(stream, policy)?;
        let mut out = Vec::new();
        while reader.read_chunk(&mut out)? > 0 {}
        Ok(out)
    })
}

/// A file object that is not one (no `read` method).
fn not_a_file(source: &Bound<'_, PyAny>) -> PyResult<()> {
    if source.hasattr("read")? {
        return Ok(());
    }
    Err(PyTypeError::new_err(format!(
        "expected a path or a binary file object, got {} (for bytes use loads)",
        source.get_type().name()?
    )))
}

/// Decode a whole hydron file (or Parquet file) held in `data` (without
/// the GIL).
fn from_data(py: Python<'_>, data: &arrays::Data<'_>, policy: Policy) -> PyResult<Vec<Gf8>> {
    let bytes = data.as_slice();
    if pyparquet::looks_like_parquet(bytes) {
        return match data {
            arrays::Data::Bytes(b) => pyparquet::vectors_from_bytes(py, b.as_any(), policy),
            arrays::Data::Owned(v) => {
                pyparquet::vectors_from_bytes(py, PyBytes::new(py, v).as_any(), policy)
            }
        };
    }
    detached(py, || file::from_slice(bytes, policy))
}

/// Save vectors to a hydron file, atomically.
///
/// Parameters
/// ----------
/// path : str or os.PathLike
/// vectors : ndarray, float32, shape (N, 8)
/// format : {"fory", "jsonl", "parquet"}, optional
///     Binary (chunks of fory batch messages), text (JSON Lines with
///     checksum lines), or Parquet (written as :func:`save_parquet` writes
///     it, Snappy-compressed, with row groups of ``chunk_vectors``
///     vectors). By default the name decides: ``.parquet`` or ``.pq`` is
///     Parquet, ``.jsonl`` JSON Lines, any other name the binary form; a
///     ``.json`` name is refused (``ValueError``: hydron files are not a
///     plain JSON array, see :func:`encode_json`).
/// chunk_vectors : int, default 65536
///     Vectors per checksummed chunk, 1..=1048576 (the row group size
///     for Parquet: note that :func:`save_parquet`'s own default is
///     262144).
/// durable : bool, default True
///     fsync the file and its directory before returning.
/// policy : {"strict", "renormalize", "trusted"}, default "strict"
///
/// The data goes to a temporary file next to ``path`` that is renamed
/// over it only when complete: ``path`` is never left half-written.
///
/// Examples
/// --------
/// >>> import os, tempfile, hydron
/// >>> path = os.path.join(tempfile.mkdtemp(), "roots.hyd")
/// >>> hydron.save(path, hydron.E8_ROOTS)
/// >>> hydron.load(path).shape
/// (240, 8)
#[pyfunction]
#[pyo3(signature = (path, vectors, format = None, *, chunk_vectors = 65536, durable = true, policy = None))]
pub fn save(
    py: Python<'_>,
    path: PathBuf,
    vectors: &Bound<'_, PyAny>,
    format: Option<&Bound<'_, PyAny>>,
    chunk_vectors: u64,
    durable: bool,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    if saves_parquet(&path, format) {
        // The same range as a container's chunks (checked here, for the
        // same message), as the row group size.
        options(chunk_vectors, durable)?;
        let options = pyparquet::container_options(chunk_vectors, durable)?;
        let input = arrays::vectors(vectors, "vectors")?;
        let gf8 = prepared(py, &input, parse_or_strict(policy)?)?;
        return pyparquet::save(py, &path, &gf8, options);
    }
    let (format, options) = (
        container_format_of(&path, format)?,
        options(chunk_vectors, durable)?,
    );
    let input = arrays::vectors(vectors, "vectors")?;
    let policy = parse_or_strict(policy)?;
    if policy == Policy::Strict && py.detach(|| replaces_a_file(&path)) {
        let arrays = input.arrays();
        return match py.detach(|| save_checking(&path, arrays, format, options)) {
            Ok(()) => Ok(()),
            Err(SaveError::Vector(e)) => Err(batch_error(py, e)),
            Err(SaveError::Codec(e)) => Err(codec_error(py, e)),
        };
    }
    let gf8 = prepared(py, &input, policy)?;
    detached(py, || {
        let mut w = file::FileWriter::create(&path, format, options)?;
        w.write(&gf8)?;
        w.finish()
    })
}

/// Whether a save to `path` goes to a temporary file renamed over it
/// (nothing there yet, or a regular file, through any symbolic links), so
/// that a save that fails half-way leaves nothing behind. A FIFO or a
/// device is written to directly: there, the vectors are all checked
/// before the first byte is written.
fn replaces_a_file(path: &std::path::Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) => m.is_file(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Why [`save_checking`] failed.
enum SaveError {
    /// A vector that is not a unit (or zero) vector, by its index.
    Vector(hydron_core::BatchError),
    /// Anything else.
    Codec(CodecError),
}

impl From<CodecError> for SaveError {
    fn from(e: CodecError) -> SaveError {
        SaveError::Codec(e)
    }
}

/// Saves `arrays` under the strict policy, each chunk checked just before
/// it is checksummed and written (see `FileWriter::write_checked`), so that
/// the vectors are read from memory once. The first chunk is checked before
/// the file is created, so a bad vector there creates nothing; one further
/// on removes the temporary file. The target is left as it was either way.
fn save_checking(
    path: &std::path::Path,
    arrays: &[[f32; 8]],
    format: file::Format,
    options: FileOptions,
) -> Result<(), SaveError> {
    let (first, rest) = arrays.split_at(arrays.len().min(options.chunk_vectors() as usize));
    let first = Gf8::slice_from_arrays(first).map_err(SaveError::Vector)?;
    let mut w = file::FileWriter::create(path, format, options)?;
    w.write(first)?;
    w.write_checked(rest).map_err(|e| match e {
        CodecError::InFile { error, .. } if matches!(*error, CodecError::InvalidVector { .. }) => {
            let CodecError::InvalidVector { index, error } = *error else {
                unreachable!("matched above")
            };
            SaveError::Vector(hydron_core::BatchError {
                index: first.len() + index as usize,
                error,
            })
        }
        other => SaveError::Codec(other),
    })?;
    Ok(w.finish()?)
}

/// The bytes of a whole hydron file holding ``vectors`` (what
/// :func:`save` writes; ``format="parquet"`` gives a Parquet file).
#[pyfunction]
#[pyo3(signature = (vectors, format = None, *, chunk_vectors = 65536, policy = None))]
pub fn dumps<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    format: Option<&Bound<'py, PyAny>>,
    chunk_vectors: u64,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    if format.is_some_and(|f| saves_parquet(std::path::Path::new(""), Some(f))) {
        options(chunk_vectors, true)?; // the documented range, as for save
        let options = pyparquet::container_options(chunk_vectors, true)?;
        return encode_vectors(py, vectors, policy, |gf8| pyparquet::to_vec(gf8, options));
    }
    let (format, options) = (policy::format(format)?, options(chunk_vectors, true)?);
    if format == file::Format::Fory {
        return encode_vectors_in_place(
            py,
            vectors,
            policy,
            |n| file::binary_len(n, options),
            |gf8, out| file::encode_binary_uninit(gf8, options, out),
        );
    }
    encode_vectors(py, vectors, policy, |gf8| {
        file::to_vec(gf8, format, options)
    })
}

/// Read a whole hydron file (either form, or Parquet: detected from the
/// content) into a new (N, 8) float32 array.
///
/// ``source`` is a path (read chunk by chunk into one preallocated array;
/// a large binary file across every core; a directory is a Parquet data
/// set, read as :func:`load_parquet` reads it) or a binary file object such as
/// ``sys.stdin.buffer`` or a pipe (decoded as it is read, so memory grows
/// only with what the data has proven to hold, and data that is not a
/// hydron file is refused after its first bytes; a Parquet file object is
/// read whole, at most 1 GiB, else :class:`HydronError`). Every checksum
/// is checked: :class:`CorruptError`, :class:`TruncatedError`,
/// :class:`FormatError` name the section and byte offset; I/O failures are
/// ``OSError``.
#[pyfunction]
#[pyo3(signature = (source, *, policy = None))]
pub fn load<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let policy = parse_or_strict(policy)?;
    let out = if let Some(path) = path_of(source)? {
        if py.detach(|| is_parquet_file(&path)) {
            pyparquet::load_path(py, &path, policy)?
        } else {
            detached(py, || file::load(&path, policy))?
        }
    } else {
        not_a_file(source)?;
        load_stream(py, source, policy)?
    };
    Ok(gf8_out(py, out))
}

/// Decode a whole hydron file (or Parquet file) held in memory.
///
/// Examples
/// --------
/// >>> import hydron
/// >>> hydron.loads(b"")
/// Traceback (most recent call last):
/// hydron.errors.FormatError: not a hydron file: it is empty
#[pyfunction]
#[pyo3(signature = (data, *, policy = None))]
pub fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let policy = parse_or_strict(policy)?;
    let out = from_data(py, &arrays::data(data)?, policy)?;
    Ok(gf8_out(py, out))
}

/// ``"fory"``, ``"jsonl"`` or ``"parquet"``: the form of a file, from its first
/// bytes (use ``hydron.detect_format``, which returns a ``Format``).
#[pyfunction]
pub fn detect_format(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    const HEAD: usize = 64;
    let head: Vec<u8> = if let Some(path) = path_of(source)? {
        py.detach(|| -> std::io::Result<Vec<u8>> {
            let mut head = Vec::with_capacity(HEAD);
            std::fs::File::open(&path)?
                .take(HEAD as u64)
                .read_to_end(&mut head)?;
            Ok(head)
        })
        .map_err(|e| {
            codec_error(
                py,
                hydron_codec::CodecError::InFile {
                    path: path.clone(),
                    error: Box::new(hydron_codec::CodecError::Io(e)),
                },
            )
        })?
    } else {
        let data = arrays::data(source)?;
        data.as_slice()[..data.as_slice().len().min(HEAD)].to_vec()
    };
    if head.starts_with(&file::MAGIC) {
        return Ok("fory");
    }
    if head.starts_with(file::TEXT_MAGIC) {
        return Ok("jsonl");
    }
    if pyparquet::looks_like_parquet(&head) {
        return Ok("parquet");
    }
    // Not a complete magic: the container reader says what it is instead
    // (empty, another format, a damaged or cut-off magic).
    match file::from_slice(&head, Policy::Trusted) {
        Err(e) => Err(codec_error(py, e)),
        Ok(_) => Ok("fory"),
    }
}

/// What `iter_chunks` reads from.
enum Source {
    File(Box<FileReader>),
    /// A Parquet file at a path: one chunk per row group.
    Parquet(Box<pyparquet::Reader>),
    /// A whole file read from a file object: one chunk, yielded once.
    Memory(Option<Vec<Gf8>>),
}

/// The next chunk `read_chunk` reads, or `None` at the end.
fn next_chunk(
    read_chunk: impl FnOnce(&mut Vec<Gf8>) -> Result<usize, CodecError>,
) -> Result<Option<Vec<Gf8>>, CodecError> {
    let mut out = Vec::new();
    read_chunk(&mut out).map(|n| (n > 0).then_some(out))
}

/// The iterator :func:`iter_chunks` returns.
#[pyclass(module = "hydron._hydron")]
pub struct ChunkIter {
    source: Mutex<Option<Source>>,
}

#[pymethods]
impl ChunkIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f32>>>> {
        // Waits for another thread's `__next__` without holding the GIL
        // (that thread holds the lock while it has released the GIL).
        let mut guard = self
            .source
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the chunk iterator was poisoned"))?;
        let read = match guard.as_mut() {
            None => return Ok(None),
            Some(Source::Memory(v)) => Ok(v.take()),
            Some(Source::File(reader)) => py.detach(|| next_chunk(|out| reader.read_chunk(out))),
            Some(Source::Parquet(reader)) => py.detach(|| next_chunk(|out| reader.read_chunk(out))),
        };
        let out = match read {
            Ok(out) => out,
            Err(e) => {
                *guard = None;
                return Err(codec_error(py, e));
            }
        };
        if out.is_none() {
            *guard = None;
        }
        Ok(out.map(|v| gf8_out(py, v)))
    }
}

/// Read a hydron file chunk by chunk: one (n, 8) float32 array per chunk.
///
/// From a path, only one chunk is in memory at a time; the trailer is
/// checked when the iterator is exhausted (consume it to the end before
/// trusting that the file is complete). A Parquet file at a path yields
/// one array per row group, each checked against its checksum (as
/// :func:`iter_parquet`), and so does a directory, read as a Parquet data
/// set file after file. A binary file object is read the same way, as a
/// stream; a Parquet file object is read whole (at most 1 GiB) and yields
/// one array.
#[pyfunction]
#[pyo3(signature = (source, *, policy = None))]
pub fn iter_chunks(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<ChunkIter> {
    let policy = parse_or_strict(policy)?;
    let source = if let Some(path) = path_of(source)? {
        if py.detach(|| is_parquet_file(&path)) {
            Source::Parquet(Box::new(pyparquet::open_path(py, &path, policy)?))
        } else {
            Source::File(Box::new(detached(py, || FileReader::open(&path, policy))?))
        }
    } else {
        not_a_file(source)?;
        let (stream, parquet) = stream::open(source)?;
        if parquet {
            Source::Memory(Some(pyparquet::vectors_from_stream(py, stream, policy)?))
        } else {
            Source::File(Box::new(detached(py, move || {
                FileReader::from_reader(stream, policy)
            })?))
        }
    };
    Ok(ChunkIter {
        source: Mutex::new(Some(source)),
    })
}

/// Writes a hydron file, or a Parquet file, in pieces, atomically.
///
/// Data goes to a temporary file next to ``path``; :meth:`finish` writes
/// the last chunk and the trailer (the last row group and the footer),
/// syncs it (unless ``durable=False``) and renames it over ``path``. After
/// an error, :meth:`abort`, or without :meth:`finish`, the temporary file
/// is removed and ``path`` is left as it was. As a context manager it
/// finishes on a normal exit and aborts on an exception; a normal exit
/// after a write failed inside the block (its error caught) raises
/// ``HydronError``, since nothing was saved. Vectors are checked by
/// ``policy`` as they are written. ``path`` is made absolute when the
/// writer is created. One writer may be shared by threads: calls take
/// turns. Without ``format`` the name decides as for :func:`save`:
/// ``.parquet`` or ``.pq`` is Parquet, ``.jsonl`` JSON Lines, any other
/// name the binary form. A writer collected unfinished (neither finished,
/// aborted nor closed) emits a ``ResourceWarning``, as an unclosed Python
/// file does.
///
/// Parquet (in a build with it, see ``FEATURES``; else
/// :class:`FeatureNotBuiltError`, before anything is created) is written as
/// :func:`save_parquet` writes it, holding about one row group in memory
/// whatever the file's size: ``compression`` (default ``"snappy"``) and
/// ``row_group_vectors`` (default 262144) are its options, and are refused
/// for the other formats, as ``chunk_vectors`` (default 65536) is refused
/// for Parquet. With ``codes=True`` the file holds E8 root codes (one
/// ``uint8`` column, ``"code"``, as :func:`save_codes_parquet` writes),
/// written with :meth:`write_codes`; a ``policy`` is then refused (every
/// code is checked).
///
/// Examples
/// --------
/// >>> import os, tempfile, numpy as np, hydron
/// >>> path = os.path.join(tempfile.mkdtemp(), "points.hyd")
/// >>> with hydron.FileWriter(path, "fory", chunk_vectors=2) as w:
/// ...     w.write(np.eye(8, dtype=np.float32)[:3])
/// ...     w.write(np.zeros((1, 8), dtype=np.float32))
/// >>> hydron.load(path).shape
/// (4, 8)
#[pyclass(module = "hydron._hydron")]
pub struct FileWriter {
    state: Mutex<WriterState>,
    policy: Policy,
    /// A Parquet file of codes (written by `write_codes`, not `write`).
    codes: bool,
    path: PathBuf,
    written: AtomicU64,
}

/// Where a [`FileWriter`] is in its life.
enum WriterState {
    /// Writing to its temporary file.
    Open(Sink),
    /// `finish` renamed the file over the target.
    Finished,
    /// Aborted or closed: the temporary file is gone.
    Aborted,
    /// A write or the finish failed (the message): nothing was saved.
    Failed(String),
}

/// What an open [`FileWriter`] writes: a hydron container, or a Parquet
/// file. Dropping either removes its temporary file.
enum Sink {
    Container(file::FileWriter),
    /// Boxed: it is several times larger than a container's writer.
    Parquet(Box<pyparquet::Writer>),
}

impl Sink {
    fn write(&mut self, vectors: &[Gf8]) -> Result<(), CodecError> {
        match self {
            Sink::Container(w) => w.write(vectors),
            Sink::Parquet(w) => w.write(vectors),
        }
    }

    /// Writes codes: only a Parquet file of codes takes them (the Python
    /// methods check that first).
    fn write_codes(&mut self, codes: &[E8Root]) -> Result<(), CodecError> {
        match self {
            Sink::Container(_) => Err(CodecError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a hydron container holds vectors, not codes",
            ))),
            Sink::Parquet(w) => w.write_codes(codes),
        }
    }

    fn vectors(&self) -> u64 {
        match self {
            Sink::Container(w) => w.vectors(),
            Sink::Parquet(w) => w.vectors(),
        }
    }

    fn finish(self) -> Result<(), CodecError> {
        match self {
            Sink::Container(w) => w.finish(),
            Sink::Parquet(w) => w.finish(),
        }
    }
}

impl FileWriter {
    /// The state, locked without holding the GIL while waiting for it (a
    /// thread inside `write` holds the lock while it has released the
    /// GIL, so waiting with the GIL held would deadlock).
    fn state(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, WriterState>> {
        self.state
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the writer was poisoned"))
    }

    /// The error for a call on a writer that is not open.
    fn not_open(&self, py: Python<'_>, state: &WriterState) -> PyErr {
        match state {
            WriterState::Failed(why) => crate::errors::failed_writer(py, &self.path, why),
            _ => crate::errors::closed(py, &self.path),
        }
    }

    /// Runs `write` on the open sink without the GIL; an error spends the
    /// writer (dropping the sink removes its temporary file).
    fn write_with(
        &self,
        py: Python<'_>,
        write: impl Send + FnOnce(&mut Sink) -> Result<(), CodecError>,
    ) -> PyResult<()> {
        let mut guard = self.state(py)?;
        let WriterState::Open(sink) = &mut *guard else {
            return Err(self.not_open(py, &guard));
        };
        match detached(py, || write(&mut *sink)) {
            Ok(()) => {
                self.written.store(sink.vectors(), Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                *guard = WriterState::Failed(e.to_string());
                Err(e)
            }
        }
    }

    /// The error for an argument only a Parquet file takes (`what`),
    /// given for a container at `path`.
    fn parquet_only(path: &std::path::Path, what: &str) -> PyErr {
        PyValueError::new_err(format!(
            "{}: {what} is for a Parquet file (format=\"parquet\", or a name ending in \
             .parquet or .pq); this FileWriter writes a hydron container",
            path.display()
        ))
    }
}

/// A writer collected while still open loses what was written (its
/// temporary file is removed): as Python's own files do when collected
/// unclosed, it says so with a `ResourceWarning` (shown with `-X dev` or
/// `-W default`; an error under `-W error`, reported as unraisable).
impl Drop for FileWriter {
    fn drop(&mut self) {
        if !matches!(self.state.get_mut(), Ok(WriterState::Open(_))) {
            return;
        }
        let message = format!(
            "hydron.FileWriter({:?}) was never finished: {} {} written and discarded, \
             nothing saved (call finish(), or use the writer in a with block)",
            self.path.display().to_string(),
            self.written.load(Ordering::Relaxed),
            if self.codes { "codes" } else { "vectors" }
        );
        Python::attach(|py| {
            let warned = std::ffi::CString::new(message)
                .map_err(|e| PyValueError::new_err(e.to_string()))
                .and_then(|message| {
                    let category = py.get_type::<pyo3::exceptions::PyResourceWarning>();
                    PyErr::warn(py, category.as_any(), &message, 1)
                });
            if let Err(e) = warned {
                e.write_unraisable(py, None);
            }
        });
    }
}

#[pymethods]
impl FileWriter {
    #[new]
    #[pyo3(signature = (path, format = None, *, chunk_vectors = None, durable = true, policy = None, compression = None, row_group_vectors = None, codes = false))]
    #[allow(clippy::too_many_arguments)] // the Python keyword arguments
    fn new(
        py: Python<'_>,
        path: PathBuf,
        format: Option<&Bound<'_, PyAny>>,
        chunk_vectors: Option<u64>,
        durable: bool,
        policy: Option<&Bound<'_, PyAny>>,
        compression: Option<&str>,
        row_group_vectors: Option<u64>,
        codes: bool,
    ) -> PyResult<FileWriter> {
        let policy_given = policy.is_some();
        let policy = parse_or_strict(policy)?;
        let sink = if saves_parquet(&path, format) {
            if chunk_vectors.is_some() {
                return Err(PyValueError::new_err(format!(
                    "{}: chunk_vectors is the chunk size of a hydron container; a Parquet \
                     FileWriter takes row_group_vectors",
                    path.display()
                )));
            }
            if codes && policy_given {
                return Err(PyValueError::new_err(format!(
                    "{}: policy checks vectors; a FileWriter of codes (codes=True) checks \
                     every code (0..240) and takes no policy",
                    path.display()
                )));
            }
            Sink::Parquet(Box::new(pyparquet::writer(
                py,
                &path,
                compression,
                row_group_vectors,
                durable,
                codes,
            )?))
        } else {
            let format = container_format_of(&path, format)?;
            if compression.is_some() {
                return Err(FileWriter::parquet_only(&path, "compression"));
            }
            if row_group_vectors.is_some() {
                return Err(FileWriter::parquet_only(&path, "row_group_vectors"));
            }
            if codes {
                return Err(FileWriter::parquet_only(&path, "codes=True"));
            }
            let chunk = chunk_vectors.unwrap_or(u64::from(FileOptions::DEFAULT_CHUNK_VECTORS));
            let options = options(chunk, durable)?;
            Sink::Container(detached(py, || {
                file::FileWriter::create(&path, format, options)
            })?)
        };
        Ok(FileWriter {
            state: Mutex::new(WriterState::Open(sink)),
            policy,
            codes,
            path,
            written: AtomicU64::new(0),
        })
    }

    /// How many vectors (or codes) have been written.
    #[getter]
    fn vectors(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// The target path.
    #[getter]
    fn path(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }

    /// Write (N, 8) vectors; chunks (row groups) are cut at the chunk size
    /// whatever the sizes of the calls. Input refused by its checks (dtype,
    /// shape, policy) writes nothing and leaves the writer open; an error
    /// while writing spends it.
    fn write(&self, py: Python<'_>, vectors: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.codes {
            return Err(PyTypeError::new_err(format!(
                "{}: this FileWriter writes codes (codes=True): use write_codes",
                self.path.display()
            )));
        }
        let input = arrays::vectors(vectors, "vectors")?;
        let gf8 = prepared(py, &input, self.policy)?;
        self.write_with(py, |sink| sink.write(&gf8))
    }

    /// Write E8 root codes (a one-dimensional array of integers in 0..240)
    /// to a Parquet file of codes (``codes=True``); row groups are cut at
    /// ``row_group_vectors`` whatever the sizes of the calls. Codes refused
    /// by their checks write nothing and leave the writer open.
    fn write_codes(&self, py: Python<'_>, codes: &Bound<'_, PyAny>) -> PyResult<()> {
        if !self.codes {
            return Err(PyTypeError::new_err(format!(
                "{}: this FileWriter writes vectors; write_codes needs a Parquet file of \
                 codes: FileWriter(path, \"parquet\", codes=True)",
                self.path.display()
            )));
        }
        let codes = arrays::codes(codes, "codes")?;
        // Every code is in 0..240 (checked by `arrays::codes`).
        let roots: Vec<E8Root> = codes.iter().filter_map(|&c| E8Root::new(c).ok()).collect();
        self.write_with(py, |sink| sink.write_codes(&roots))
    }

    /// Complete the file and rename it over the target.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = self.state(py)?;
        let sink = match std::mem::replace(&mut *guard, WriterState::Finished) {
            WriterState::Open(sink) => sink,
            other => {
                let err = self.not_open(py, &other);
                *guard = other;
                return Err(err);
            }
        };
        detached(py, || sink.finish()).inspect_err(|e| *guard = WriterState::Failed(e.to_string()))
    }

    /// Remove the temporary file; the target is left as it was.
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = self.state(py)?;
        if !matches!(*guard, WriterState::Finished) {
            // Dropping an open writer removes its temporary file.
            *guard = WriterState::Aborted;
        }
        Ok(())
    }

    /// Abort unless finished: the same as :meth:`abort` (for code that
    /// closes writers in a ``finally``).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.abort(py)
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (exc_type, _exc = None, _tb = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if exc_type.is_some_and(|t| !t.is_none()) {
            return self.abort(py);
        }
        if matches!(
            *self.state(py)?,
            WriterState::Finished | WriterState::Aborted
        ) {
            return Ok(());
        }
        // Open: finish. Failed (a write failed inside the block and its
        // error was caught): `finish` raises, since leaving quietly would
        // lose the vectors without a word.
        self.finish(py)
    }
}
