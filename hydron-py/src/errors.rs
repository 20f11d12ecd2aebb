//! Rust errors → the Python exception classes of `hydron.errors`.
//!
//! The classes are defined in Python (`python/hydron/errors.py`, where their
//! docstrings live); each Rust variant maps onto one of them and fills the
//! same attributes (`index`, `coordinate`, `norm`, `code`, `line`, `offset`,
//! `section`). The message is always the Rust error's `Display` text.

use hydron_codec::file::Section;
use hydron_codec::CodecError;
use hydron_core::{BatchError, Gf8Error};
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyNotADirectoryError, PyOSError,
    PyPermissionError, PyRuntimeError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

/// The `hydron.errors` module, imported once.
fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    MODULE
        .get_or_try_init(py, || Ok(py.import("hydron.errors")?.unbind()))
        .map(|m| m.bind(py))
}

/// Builds `hydron.errors.<class>(message, **kwargs)` as a `PyErr`.
fn raise(py: Python<'_>, class: &str, message: String, kwargs: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = errors_module(py)?.getattr(class)?;
        let kw = PyDict::new(py);
        for (k, v) in kwargs {
            kw.set_item(k, v)?;
        }
        let value = cls.call((message.clone(),), Some(&kw))?;
        Ok(PyErr::from_value(value))
    };
    build().unwrap_or_else(|e| e)
}

/// `hydron.errors.FeatureNotBuiltError` for `what` (a call, or the file it
/// was given), which needs `feature`, left out of this build; its message
/// (`hydron.errors.feature_not_built`) names the build that has it.
#[cfg(not(feature = "parquet"))]
pub fn feature_not_built(py: Python<'_>, what: &str, feature: &str) -> PyErr {
    errors_module(py)
        .and_then(|m| m.getattr("feature_not_built")?.call1((what, feature)))
        .map_or_else(|e| e, PyErr::from_value)
}

fn section(py: Python<'_>, s: Section) -> Py<PyAny> {
    let make = || -> PyResult<Py<PyAny>> {
        let cls = errors_module(py)?.getattr("Section")?;
        Ok(match s {
            Section::Header => cls.getattr("HEADER")?.unbind(),
            Section::Trailer => cls.getattr("TRAILER")?.unbind(),
            Section::Chunk(k) => cls.call_method1("chunk", (k,))?.unbind(),
        })
    };
    make().unwrap_or_else(|_| py.None())
}

fn int(py: Python<'_>, x: u64) -> Py<PyAny> {
    x.into_pyobject(py)
        .map_or_else(|_| py.None(), |o| o.into_any().unbind())
}

/// The attributes of an `InvalidVectorError` for what is wrong with a vector.
fn vector_fields(py: Python<'_>, error: &Gf8Error) -> Vec<(&'static str, Py<PyAny>)> {
    match *error {
        Gf8Error::NotANumber { coordinate }
        | Gf8Error::Infinite { coordinate, .. }
        | Gf8Error::OutOfLatticeRange { coordinate, .. }
        | Gf8Error::MixedLatticeCoordinates { coordinate } => {
            vec![("coordinate", int(py, coordinate as u64))]
        }
        Gf8Error::NotUnitNorm { norm, .. } => vec![(
            "norm",
            norm.into_pyobject(py)
                .map_or_else(|_| py.None(), |o| o.into_any().unbind()),
        )],
        Gf8Error::InvalidRootCode { code } => vec![("code", int(py, u64::from(code)))],
        _ => Vec::new(),
    }
}

/// An `InvalidVectorError` for vector `index`.
fn invalid_vector(
    py: Python<'_>,
    message: String,
    index: u64,
    error: &Gf8Error,
    line: Option<u64>,
) -> PyErr {
    let mut kw = vector_fields(py, error);
    kw.push(("index", int(py, index)));
    kw.push((
        "reason",
        error
            .to_string()
            .into_pyobject(py)
            .map_or_else(|_| py.None(), |o| o.into_any().unbind()),
    ));
    if let Some(line) = line {
        kw.push(("line", int(py, line)));
    }
    raise(py, "InvalidVectorError", message, &kw)
}

/// An `InvalidVectorError` for a finite input value too large for float32
/// (numpy's conversion would have made it infinite).
pub fn beyond_float32(py: Python<'_>, index: usize, coordinate: usize, value: f64) -> PyErr {
    let reason = format!(
        "coordinate {coordinate} is {value:e}, beyond float32's range (±{:e})",
        f32::MAX
    );
    let kw = [
        ("index", int(py, index as u64)),
        ("coordinate", int(py, coordinate as u64)),
        (
            "reason",
            reason
                .clone()
                .into_pyobject(py)
                .map_or_else(|_| py.None(), |o| o.into_any().unbind()),
        ),
    ];
    raise(
        py,
        "InvalidVectorError",
        format!("vector {index}: {reason}"),
        &kw,
    )
}

/// A batch kernel's error (the vector's index and what is wrong).
pub fn batch_error(py: Python<'_>, e: BatchError) -> PyErr {
    invalid_vector(py, e.to_string(), e.index as u64, &e.error, None)
}

/// An error about the input as a whole (an empty mean, a bad weight).
pub fn gf8_error(py: Python<'_>, e: Gf8Error) -> PyErr {
    match e {
        Gf8Error::InvalidWeight { index, .. } => {
            invalid_vector(py, e.to_string(), index as u64, &e, None)
        }
        _ => raise(py, "HydronError", e.to_string(), &[]),
    }
}

/// An I/O error: the `OSError` subclass of its kind, with the path.
fn io_error(
    py: Python<'_>,
    message: String,
    e: &std::io::Error,
    path: Option<&std::path::Path>,
) -> PyErr {
    use std::io::ErrorKind as K;
    let args = || -> PyResult<Py<PyTuple>> {
        Ok(match (e.raw_os_error(), path) {
            (Some(errno), Some(p)) => {
                // As Python's own: "[Errno 2] No such file or directory: 'x.hyd'".
                let text = std::io::Error::from_raw_os_error(errno).to_string();
                let strerror = text
                    .rsplit_once(" (os error")
                    .map_or(text.as_str(), |(head, _)| head)
                    .to_string();
                PyTuple::new(
                    py,
                    [
                        errno.into_pyobject(py)?.into_any(),
                        strerror.into_pyobject(py)?.into_any(),
                        p.to_string_lossy().into_pyobject(py)?.into_any(),
                    ],
                )?
                .unbind()
            }
            _ => PyTuple::new(py, [message.clone()])?.unbind(),
        })
    };
    let args = match args() {
        Ok(a) => a,
        Err(err) => return err,
    };
    match e.kind() {
        K::NotFound => PyFileNotFoundError::new_err(args),
        K::PermissionDenied => PyPermissionError::new_err(args),
        K::AlreadyExists => PyFileExistsError::new_err(args),
        K::IsADirectory => PyIsADirectoryError::new_err(args),
        K::NotADirectory => PyNotADirectoryError::new_err(args),
        _ => PyOSError::new_err(args),
    }
}

/// Runs `f` without the GIL; its `CodecError` becomes the Python exception
/// ([`codec_error`]).
pub fn detached<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: Send + FnOnce() -> Result<T, CodecError>,
    T: Send,
{
    py.detach(f).map_err(|e| codec_error(py, e))
}

/// [`detached`] for a call on `input_bytes` bytes that touches no file:
/// it keeps the GIL when the input is tiny ([`crate::gil::run`]).
pub fn detached_unless_tiny<T, F>(py: Python<'_>, input_bytes: usize, f: F) -> PyResult<T>
where
    F: Send + FnOnce() -> Result<T, CodecError>,
    T: Send,
{
    crate::gil::run(py, input_bytes, f).map_err(|e| codec_error(py, e))
}

/// An I/O error met while reading a Python file object.
pub fn io_error_here(py: Python<'_>, e: std::io::Error) -> PyErr {
    codec_error(py, CodecError::Io(e))
}

/// A file object that holds more than `limit` bytes where it must be read
/// whole: a `HydronError` whose `offset` is where reading stopped.
#[cfg(feature = "parquet")]
pub fn input_too_large(py: Python<'_>, limit: u64) -> PyErr {
    raise(
        py,
        "HydronError",
        format!(
            "the file object holds more than {limit} bytes, the most read whole from a \
             stream (Parquet is read whole); load it from its path, or pass its bytes"
        ),
        &[("offset", int(py, limit))],
    )
}

/// A codec error as the matching `hydron.errors` exception; a file's path
/// stays in the message (and in `OSError.filename`).
pub fn codec_error(py: Python<'_>, e: CodecError) -> PyErr {
    if let Some(raised) = python_error_in(&e) {
        // A Python file object's own exception: raised as it was.
        return raised.clone_ref(py);
    }
    let message = e.to_string();
    let (inner, path) = match e {
        CodecError::InFile { path, error } => (*error, Some(path)),
        // A file of a data set: the exception of the error in it (`index`
        // is the row in that file; the message gives the data set's too).
        #[cfg(feature = "parquet")]
        CodecError::InDatasetFile { path, error, .. } => (*error, Some(path)),
        other => (other, None),
    };
    // An operating system's error inside the parquet crate (a full disk
    // while writing): an `OSError` with its errno, as every other I/O
    // error, not a damaged file. (A codec's complaint about the bytes, an
    // I/O error without an errno there, stays a `CorruptError`.)
    #[cfg(feature = "parquet")]
    if let CodecError::Parquet { error, .. } = &inner {
        let os = std::error::Error::source(error)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .filter(|io| io.raw_os_error().is_some());
        if let Some(io) = os {
            return io_error(py, message, io, path.as_deref());
        }
    }
    let off = |o: u64| vec![("offset", int(py, o))];
    match &inner {
        CodecError::InvalidVector { index, error } => {
            invalid_vector(py, message, *index, error, None)
        }
        CodecError::InvalidVectorOnLine { line, index, error } => {
            invalid_vector(py, message, *index, error, Some(*line))
        }
        CodecError::Io(io) => io_error(py, message, io, path.as_deref()),
        CodecError::Json { line, column, .. } => raise(
            py,
            "FormatError",
            message,
            &[("line", int(py, *line)), ("column", int(py, *column))],
        ),
        CodecError::LineTooLong { line, .. } => {
            raise(py, "FormatError", message, &[("line", int(py, *line))])
        }
        CodecError::UnsupportedVersion { found, supported } => raise(
            py,
            "UnsupportedVersionError",
            message,
            &[
                ("found", int(py, u64::from(*found))),
                ("supported", int(py, u64::from(*supported))),
            ],
        ),
        CodecError::Truncated { offset, section: s } => raise(
            py,
            "TruncatedError",
            message,
            &[("offset", int(py, *offset)), ("section", section(py, *s))],
        ),
        CodecError::Corrupt {
            section: s,
            offset,
            detail,
        } => raise(
            py,
            "CorruptError",
            message,
            &[
                ("offset", int(py, *offset)),
                ("section", section(py, *s)),
                (
                    "detail",
                    detail
                        .clone()
                        .into_pyobject(py)
                        .map_or_else(|_| py.None(), |o| o.into_any().unbind()),
                ),
            ],
        ),
        CodecError::UnexpectedEnd { offset, .. } => {
            raise(py, "TruncatedError", message, &off(*offset))
        }
        CodecError::TrailingBytes { offset, .. }
        | CodecError::WrongHeader { offset, .. }
        | CodecError::WrongTypeId { offset, .. }
        | CodecError::BadLength { offset, .. }
        | CodecError::BadVarint { offset, .. } => raise(py, "FormatError", message, &off(*offset)),
        CodecError::UnknownFormat { .. } | CodecError::FormatDisabled { .. } => {
            raise(py, "FormatError", message, &[])
        }
        #[cfg(feature = "arrow")]
        CodecError::WrongColumnType { .. }
        | CodecError::MissingColumn { .. }
        | CodecError::AmbiguousColumn { .. } => raise(py, "FormatError", message, &[]),
        #[cfg(feature = "parquet")]
        CodecError::EmptyDataset { .. } | CodecError::DatasetColumnMismatch { .. } => {
            raise(py, "FormatError", message, &[])
        }
        #[cfg(feature = "parquet")]
        CodecError::UnsupportedCompression { row_group, .. } => raise(
            py,
            "FormatError",
            message,
            &[("row_group", int(py, *row_group as u64))],
        ),
        #[cfg(feature = "arrow")]
        CodecError::Arrow(_) => raise(py, "FormatError", message, &[]),
        #[cfg(feature = "arrow")]
        CodecError::NullValue { row, coordinate } => {
            let mut kw = vec![
                ("index", int(py, *row)),
                ("reason", text(py, inner.to_string())),
            ];
            if let Some(c) = coordinate {
                kw.push(("coordinate", int(py, u64::from(*c))));
            }
            raise(py, "InvalidVectorError", message, &kw)
        }
        #[cfg(feature = "arrow")]
        CodecError::WrongRowLength { row, .. } => raise(
            py,
            "InvalidVectorError",
            message,
            &[
                ("index", int(py, *row)),
                ("reason", text(py, inner.to_string())),
            ],
        ),
        #[cfg(feature = "arrow")]
        CodecError::BadOffsets { row, detail } => raise(
            py,
            "InvalidVectorError",
            message,
            &[
                ("index", int(py, *row)),
                ("reason", text(py, detail.clone())),
            ],
        ),
        #[cfg(feature = "parquet")]
        CodecError::Parquet { row_group, error } => {
            corrupt(py, message, *row_group, None, &error.to_string())
        }
        #[cfg(feature = "parquet")]
        CodecError::ChecksumMismatch { row_group, .. } => {
            corrupt(py, message, Some(*row_group), None, "row group CRC-32")
        }
        #[cfg(feature = "parquet")]
        CodecError::PageTooLarge {
            row_group, offset, ..
        } => corrupt(
            py,
            message,
            Some(*row_group),
            Some(*offset),
            "page larger than the limit",
        ),
        CodecError::InFile { .. } => PyRuntimeError::new_err(message),
        _ => raise(py, "HydronError", message, &[]),
    }
}

#[cfg(feature = "arrow")]
fn text(py: Python<'_>, s: String) -> Py<PyAny> {
    s.into_pyobject(py)
        .map_or_else(|_| py.None(), |o| o.into_any().unbind())
}

/// A `CorruptError` about a Parquet file: the row group (as the section)
/// and the byte offset where known.
#[cfg(feature = "parquet")]
fn corrupt(
    py: Python<'_>,
    message: String,
    row_group: Option<usize>,
    offset: Option<u64>,
    detail: &str,
) -> PyErr {
    let section = row_group.map_or_else(
        || py.None(),
        |g| {
            errors_module(py)
                .and_then(|m| m.getattr("Section")?.call_method1("row_group", (g,)))
                .map_or_else(|_| py.None(), |s| s.unbind())
        },
    );
    let offset = offset.map_or_else(|| py.None(), |o| int(py, o));
    raise(
        py,
        "CorruptError",
        message,
        &[
            ("section", section),
            ("offset", offset),
            ("detail", text(py, detail.to_string())),
        ],
    )
}

/// The Python exception a file object raised, if that is what `e` is
/// (carried in an I/O error by [`crate::stream::PythonError`]).
fn python_error_in(e: &CodecError) -> Option<&PyErr> {
    let io = match e {
        CodecError::Io(io) => io,
        CodecError::InFile { error, .. } => match error.as_ref() {
            CodecError::Io(io) => io,
            _ => return None,
        },
        _ => return None,
    };
    io.get_ref()?
        .downcast_ref::<crate::stream::PythonError>()
        .map(|carried| &carried.0)
}

/// The error for a `FileWriter` used after `finish`, `abort` or an error.
pub fn closed(py: Python<'_>, path: &std::path::Path) -> PyErr {
    raise(
        py,
        "HydronError",
        format!(
            "{}: the writer is closed (finished, aborted, or spent by an earlier error)",
            path.display()
        ),
        &[],
    )
}

/// The error for a `FileWriter` whose earlier write or finish failed
/// (`why`): nothing was saved to `path`.
pub fn failed_writer(py: Python<'_>, path: &std::path::Path, why: &str) -> PyErr {
    raise(
        py,
        "HydronError",
        format!(
            "{}: nothing was saved: an earlier write failed ({why})",
            path.display()
        ),
        &[],
    )
}

/// A lattice quantizer's error (`hydron_core::quant::QuantError`): an
/// `InvalidVectorError` naming the vector (or query) and coordinate for a
/// NaN, an infinity, a 4-bit code that names no point or a bad scale; a
/// `HydronError` for the rest (a rate,
/// dimension or `k` that cannot be, codes or scales of the wrong length).
pub fn quant_error(py: Python<'_>, e: hydron_core::quant::QuantError) -> PyErr {
    use hydron_core::quant::QuantError as Q;
    let message = e.to_string();
    let vector = |index: usize, coordinate: Option<usize>, reason: String| {
        let mut kw = vec![
            ("index", int(py, index as u64)),
            (
                "reason",
                reason
                    .into_pyobject(py)
                    .map_or_else(|_| py.None(), |o| o.into_any().unbind()),
            ),
        ];
        if let Some(c) = coordinate {
            kw.push(("coordinate", int(py, c as u64)));
        }
        raise(py, "InvalidVectorError", message.clone(), &kw)
    };
    match e {
        Q::NotANumber {
            vector: v,
            coordinate,
        }
        | Q::QueryNotANumber {
            query: v,
            coordinate,
        } => vector(
            v,
            Some(coordinate),
            format!("coordinate {coordinate} is NaN"),
        ),
        Q::Infinite {
            vector: v,
            coordinate,
            value,
        }
        | Q::QueryInfinite {
            query: v,
            coordinate,
            value,
        } => vector(
            v,
            Some(coordinate),
            format!("coordinate {coordinate} is infinite ({value})"),
        ),
        Q::InvalidCode { vector: v, block } => vector(
            v,
            None,
            format!("block {block}: the code names no point of the E8 shell"),
        ),
        Q::InvalidScale { vector: v, value } => vector(
            v,
            None,
            format!("scale {value} is not a finite non-negative number"),
        ),
        _ => raise(py, "HydronError", message, &[]),
    }
}
