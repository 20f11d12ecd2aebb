//! Python binary file objects (`open(..., "rb")`, `sys.stdin.buffer`, a
//! pipe, a socket's file, `io.BytesIO`) read as Rust streams, a piece at a
//! time: a hydron container is decoded as it arrives, so its memory grows
//! only with the vectors it has proven to hold, and data that is not a
//! container at all (`/dev/zero`, a never-ending pipe) is refused after its
//! first bytes instead of being read for ever. Parquet, which is read from
//! its end, is read whole, but only up to [`MAX_WHOLE_READ_BYTES`].

use std::io::{self, BufReader, Cursor, Read};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::arrays;
use crate::errors;

/// The most bytes a file object is read to when it must be read whole (a
/// Parquet file): 1 GiB, the `hydron` tool's default `--max-input-bytes`.
/// A larger Parquet file loads from its path, or from `bytes` the caller
/// already holds.
#[cfg(feature = "parquet")]
pub const MAX_WHOLE_READ_BYTES: u64 = 1 << 30;
/// Bytes read first, to tell the form (and to name it when it is none).
const HEAD_LEN: usize = 64;
/// Bytes asked of the file object per `read` call.
const READ_LEN: usize = 1 << 20;

/// A Python binary file object as a [`Read`]: each read calls its
/// `read1(n)` where it has one (a buffered file, `sys.stdin.buffer`,
/// `io.BytesIO`: it returns what is available instead of waiting for `n`
/// bytes, so a pipe is decoded as its data arrives), else `read(n)`,
/// taking the GIL for the call (so the decoding around it can run without
/// the GIL).
pub struct PyReader {
    file: Py<PyAny>,
    method: &'static str,
}

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        Python::attach(|py| {
            let data = self
                .file
                .bind(py)
                .call_method1(self.method, (buf.len(),))
                .map_err(|e| python_io_error(py, e))?;
            if data.is_none() {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "the file object is non-blocking and has no data ready",
                ));
            }
            if data.is_instance_of::<PyString>() {
                let e = PyTypeError::new_err(format!(
                    "the file object's {}() returned str: open the file in binary mode ('rb')",
                    self.method
                ));
                return Err(python_io_error(py, e));
            }
            let data = arrays::data(&data).map_err(|e| python_io_error(py, e))?;
            let data = data.as_slice();
            if data.len() > buf.len() {
                return Err(io::Error::other(format!(
                    "the file object's {}({}) returned {} bytes",
                    self.method,
                    buf.len(),
                    data.len()
                )));
            }
            buf[..data.len()].copy_from_slice(data);
            Ok(data.len())
        })
    }
}

/// A Python exception raised by a file object's `read`, carried through
/// Rust's I/O errors so that it is raised again as it was
/// ([`crate::errors::codec_error`] takes it back out): an interrupt stays
/// a `KeyboardInterrupt`, an `OSError` keeps its errno.
#[derive(Debug)]
pub struct PythonError(pub PyErr);

impl std::fmt::Display for PythonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for PythonError {}

/// A Python exception raised by a file object's `read`, as an I/O error
/// that carries it (of the errno's kind for an `OSError`).
fn python_io_error(py: Python<'_>, e: PyErr) -> io::Error {
    let errno = e
        .value(py)
        .getattr("errno")
        .ok()
        .and_then(|n| n.extract::<i32>().ok());
    let kind = errno.map_or(io::ErrorKind::Other, |code| {
        io::Error::from_raw_os_error(code).kind()
    });
    io::Error::new(kind, PythonError(e))
}

/// A file object's stream: the first bytes, already read to tell the form,
/// then the rest.
pub type Stream = io::Chain<Cursor<Vec<u8>>, BufReader<PyReader>>;

/// Opens `source` (anything with a `read` method) as a stream, and says
/// whether it starts like a Parquet file.
pub fn open(source: &Bound<'_, PyAny>) -> PyResult<(Stream, bool)> {
    let py = source.py();
    if source.is_instance(&py.import("io")?.getattr("TextIOBase")?)? {
        return Err(PyTypeError::new_err(format!(
            "expected a binary file object, got a text-mode one ({}): open the file in \
             binary mode ('rb'), or pass its path",
            source.get_type().name()?
        )));
    }
    let mut reader = BufReader::with_capacity(
        READ_LEN,
        PyReader {
            file: source.clone().unbind(),
            method: if source.hasattr("read1")? {
                "read1"
            } else {
                "read"
            },
        },
    );
    let mut head = Vec::with_capacity(HEAD_LEN);
    (&mut reader)
        .take(HEAD_LEN as u64)
        .read_to_end(&mut head)
        .map_err(|e| errors::io_error_here(py, e))?;
    let parquet = crate::parquet::looks_like_parquet(&head);
    Ok((Cursor::new(head).chain(reader), parquet))
}

/// Reads the rest of `stream`, refusing more than [`MAX_WHOLE_READ_BYTES`]
/// in all. The buffer grows only as bytes arrive. (Only Parquet is read
/// whole.)
#[cfg(feature = "parquet")]
pub fn read_whole(py: Python<'_>, stream: Stream) -> PyResult<Vec<u8>> {
    let mut all = Vec::new();
    stream
        .take(MAX_WHOLE_READ_BYTES + 1)
        .read_to_end(&mut all)
        .map_err(|e| errors::io_error_here(py, e))?;
    if all.len() as u64 > MAX_WHOLE_READ_BYTES {
        return Err(errors::input_too_large(py, MAX_WHOLE_READ_BYTES));
    }
    Ok(all)
}
