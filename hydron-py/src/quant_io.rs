//! Saving and loading `LatticeCodes` (`hydron_codec::quant`, docs/format.md
//! §7): `save_lattice_codes`, `load_lattice_codes` and
//! `is_lattice_codes`, which `hydron.save` and `hydron.load`
//! (python/hydron/__init__.py) dispatch to.
//!
//! The `LatticeCodes` object (src/quant.rs) is read through its Python
//! attributes and built through its constructor, so this file needs
//! nothing of that one's internals. Every file operation runs without the
//! GIL; saves are atomic (hydron-codec's temporary file and rename).

use std::io::Read;
use std::path::{Path, PathBuf};

use hydron_codec::quant::{self, CodesParams, CodesScale, LatticeCodes};
use hydron_codec::CodecError;
use hydron_core::quant::QuantCodes;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::codec_error;
use crate::{arrays, stream};

/// The two stored forms.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Fory,
    Parquet,
}

/// A codec error as a Python exception; [`CodecError::BadCodes`] (inside
/// a file's error or not) as `CorruptError` with `offset` and `row`.
fn error(py: Python<'_>, e: CodecError) -> PyErr {
    let (offset, row) = match &e {
        CodecError::BadCodes { offset, row, .. } => (*offset, *row),
        CodecError::InFile { error, .. } => match error.as_ref() {
            CodecError::BadCodes { offset, row, .. } => (*offset, *row),
            _ => return codec_error(py, e),
        },
        _ => return codec_error(py, e),
    };
    let message = e.to_string();
    let build = || -> PyResult<PyErr> {
        let cls = py.import("hydron.errors")?.getattr("CorruptError")?;
        let kw = pyo3::types::PyDict::new(py);
        kw.set_item("offset", offset)?;
        let value = cls.call((message.clone(),), Some(&kw))?;
        value.setattr("row", row)?;
        Ok(PyErr::from_value(value))
    };
    build().unwrap_or_else(|e| e)
}

/// The form a save to `path` writes: `format` if given (`"fory"` or
/// `"parquet"`), else Parquet for a name ending in `.parquet` or `.pq`
/// (any case), else the fory message.
fn form_of(path: &Path, format: Option<&str>) -> PyResult<Form> {
    match format {
        Some("fory") => Ok(Form::Fory),
        Some("parquet") => Ok(Form::Parquet),
        Some(other) => Err(PyValueError::new_err(format!(
            "format: expected \"fory\" or \"parquet\" for lattice codes, got {other:?}"
        ))),
        None => {
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase);
            Ok(match ext.as_deref() {
                Some("parquet" | "pq") => Form::Parquet,
                _ => Form::Fory,
            })
        }
    }
}

/// The stored form of a `hydron.LatticeCodes` object, read through its
/// attributes (`codes`, `scales`, `dim`, `bits`, `seed`, `rotate`,
/// `scale`).
fn stored(py: Python<'_>, codes: &Bound<'_, PyAny>) -> PyResult<LatticeCodes> {
    let class = py.import("hydron._hydron")?.getattr("LatticeCodes")?;
    if !codes.is_instance(&class)? {
        return Err(PyTypeError::new_err(format!(
            "codes: expected a hydron.LatticeCodes, got {}",
            codes.get_type().name()?
        )));
    }
    let array: PyReadonlyArray2<'_, u8> = codes.getattr("codes")?.extract()?;
    let bytes = match array.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => array.as_array().iter().copied().collect(),
    };
    let scales: Option<PyReadonlyArray1<'_, f32>> = codes.getattr("scales")?.extract()?;
    let name: String = codes.getattr("scale")?.extract()?;
    let scale = match name.as_str() {
        "vector" => CodesScale::PerVector,
        "unit" => CodesScale::Unit,
        "direction" => CodesScale::Direction,
        other => {
            return Err(PyValueError::new_err(format!(
                "codes.scale is {other:?}, not \"vector\", \"unit\" or \"direction\""
            )))
        }
    };
    let scales = scales.map_or_else(Vec::new, |s| s.as_array().to_vec());
    let dim: usize = codes.getattr("dim")?.extract()?;
    let bits: u32 = codes.getattr("bits")?.extract()?;
    let dim = u32::try_from(dim)
        .map_err(|_| PyValueError::new_err(format!("dim {dim} is above 2^32 - 1")))?;
    let bits = u8::try_from(bits).map_err(|_| PyValueError::new_err(format!("bits {bits}")))?;
    let params = CodesParams::new(
        dim,
        bits,
        codes.getattr("seed")?.extract()?,
        codes.getattr("rotate")?.extract()?,
        scale,
    )
    .map_err(|e| error(py, e))?;
    LatticeCodes::new(
        params,
        QuantCodes {
            codes: bytes,
            scales,
        },
    )
    .map_err(|e| error(py, e))
}

/// Save lattice codes to a file, atomically.
///
/// ``hydron.save(path, codes)`` calls this for a :class:`LatticeCodes`.
///
/// Parameters
/// ----------
/// path : str or os.PathLike
/// codes : LatticeCodes
/// format : {"fory", "parquet"}, optional
///     One fory ``LatticeCodes`` message (docs/format.md section 7.1, which
///     stock pyfory reads), or Parquet (section 7.2: a
///     ``FixedSizeBinary(code_size)`` column ``code``, a float32 column
///     ``scale`` unless ``scale="unit"``, the parameters in the footer).
///     Default: Parquet for a name ending in ``.parquet`` or ``.pq``, else
///     the fory message.
/// durable : bool
///     Flush the file and its directory to disk around the rename.
///
/// Examples
/// --------
/// >>> import os, tempfile
/// >>> import numpy as np, hydron
/// >>> q = hydron.LatticeQuantizer(12, seed=3)
/// >>> codes = q.encode(np.ones((2, 12), np.float32))
/// >>> path = os.path.join(tempfile.mkdtemp(), "codes.fory")
/// >>> hydron.save_lattice_codes(path, codes)
/// >>> back = hydron.load_lattice_codes(path)
/// >>> (back.dim, back.seed, len(back), bool((back.codes == codes.codes).all()))
/// (12, 3, 2, True)
#[pyfunction]
#[pyo3(signature = (path, codes, format = None, *, durable = true))]
pub fn save_lattice_codes(
    py: Python<'_>,
    path: PathBuf,
    codes: &Bound<'_, PyAny>,
    format: Option<&str>,
    durable: bool,
) -> PyResult<()> {
    let form = form_of(&path, format)?;
    let c = stored(py, codes)?;
    match form {
        Form::Fory => py
            .detach(|| quant::save_with(&path, &c, durable))
            .map_err(|e| error(py, e)),
        #[cfg(feature = "parquet")]
        Form::Parquet => {
            let options = hydron_codec::parquet::ParquetOptions::new().with_durable(durable);
            py.detach(|| quant::save_parquet(&path, &c, options))
                .map_err(|e| error(py, e))
        }
        #[cfg(not(feature = "parquet"))]
        Form::Parquet => Err(crate::errors::feature_not_built(
            py,
            "hydron.save_lattice_codes (a Parquet file)",
            "parquet",
        )),
    }
}

/// The form `path` holds, if it is a regular file of lattice codes.
fn sniff(path: &Path) -> Option<Form> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut head = Vec::with_capacity(16);
    std::fs::File::open(path)
        .ok()?
        .take(16)
        .read_to_end(&mut head)
        .ok()?;
    if quant::looks_like_lattice_codes(&head) {
        return Some(Form::Fory);
    }
    // Parquet with the parameters' keys, malformed ones included (the
    // load says what is wrong with them).
    #[cfg(feature = "parquet")]
    if hydron_codec::parquet::looks_like_parquet(&head) {
        let params = quant::parquet_params(path);
        let bad = |e: &CodecError| match e {
            CodecError::InFile { error, .. } => is_bad_codes(error),
            e => is_bad_codes(e),
        };
        if matches!(params, Ok(Some(_))) || params.as_ref().is_err_and(bad) {
            return Some(Form::Parquet);
        }
    }
    None
}

/// The most bytes read from a stream (a file object, a FIFO, a device):
/// 1 GiB, as `hydron.load` reads Parquet from a file object.
const MAX_STREAM_BYTES: u64 = 1 << 30;

/// Reads the codes at `path`, opened once: a regular file by path (Parquet
/// from its footer on), anything else (a FIFO, a device) as a stream.
fn read_path(path: &Path) -> Result<LatticeCodes, CodecError> {
    let in_file = |e: CodecError| CodecError::InFile {
        path: path.to_path_buf(),
        error: Box::new(e),
    };
    let mut file = std::fs::File::open(path).map_err(|e| in_file(CodecError::Io(e)))?;
    let meta = file.metadata().map_err(|e| in_file(CodecError::Io(e)))?;
    let regular = meta.is_file();
    let mut head = Vec::with_capacity(16);
    (&mut file)
        .take(16)
        .read_to_end(&mut head)
        .map_err(|e| in_file(CodecError::Io(e)))?;
    #[cfg(feature = "parquet")]
    if hydron_codec::parquet::looks_like_parquet(&head) {
        return if regular {
            quant::load_parquet(path)
        } else {
            let mut data = head;
            file.take(MAX_STREAM_BYTES + 1 - data.len() as u64)
                .read_to_end(&mut data)
                .map_err(|e| in_file(CodecError::Io(e)))?;
            if data.len() as u64 > MAX_STREAM_BYTES {
                return Err(in_file(stream_too_large()));
            }
            quant::parquet_from_bytes(data).map_err(in_file)
        };
    }
    let stream = std::io::Cursor::new(head).chain(file);
    if regular {
        // Any length its lengths may claim, bounded by the file's size.
        return quant::from_reader_len(stream, quant::MAX_MESSAGE_BYTES, meta.len())
            .map_err(in_file);
    }
    quant::from_reader(stream, MAX_STREAM_BYTES).map_err(in_file)
}

/// A stream longer than [`MAX_STREAM_BYTES`].
#[cfg(feature = "parquet")]
fn stream_too_large() -> CodecError {
    CodecError::ReadLimit {
        needed: MAX_STREAM_BYTES + 1,
        limit: MAX_STREAM_BYTES,
        what: "a Parquet file read from a stream",
    }
}

/// `source` (anything with `read`, else a `TypeError`) as a stream, and
/// whether it starts like Parquet.
fn open_stream(source: &Bound<'_, PyAny>) -> PyResult<(stream::Stream, bool)> {
    if !source.hasattr("read")? {
        return Err(PyTypeError::new_err(format!(
            "expected a path or a binary file object, got {}",
            source.get_type().name()?
        )));
    }
    stream::open(source)
}

/// The codes of a Parquet file read whole from a stream (at most
/// [`MAX_STREAM_BYTES`]).
#[cfg(feature = "parquet")]
fn read_parquet_stream(
    py: Python<'_>,
    stream: stream::Stream,
) -> PyResult<Result<LatticeCodes, CodecError>> {
    let data = stream::read_whole(py, stream)?;
    Ok(py.detach(|| quant::parquet_from_bytes(data)))
}

#[cfg(not(feature = "parquet"))]
fn read_parquet_stream(
    py: Python<'_>,
    _stream: stream::Stream,
) -> PyResult<Result<LatticeCodes, CodecError>> {
    Err(crate::errors::feature_not_built(
        py,
        "hydron.load_lattice_codes (a Parquet file)",
        "parquet",
    ))
}

/// What ``hydron.load`` reads from a binary file object, or from the path
/// of a FIFO or a device (opened once; errors name it), read once: lattice
/// codes (a fory ``LatticeCodes`` message, or Parquet with the
/// ``hydron.quant.*`` footer keys) as :func:`load_lattice_codes` gives
/// them, anything else as vectors (a new (N, 8) float32 array).
///
/// A message is read as far as its lengths reach, a container as it
/// arrives, Parquet whole (at most 1 GiB). ``policy`` applies to vectors:
/// given for lattice codes, it is a ``TypeError``.
#[pyfunction]
#[pyo3(signature = (source, *, policy = None))]
pub fn _load_file_object(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let parsed = crate::policy::parse_or_strict(policy)?;
    let codes_policy = || -> PyResult<()> {
        if policy.is_some_and(|p| !p.is_none()) {
            return Err(PyTypeError::new_err(
                "load: policy= applies to vectors, not to lattice codes",
            ));
        }
        Ok(())
    };
    if let Some(path) = arrays::path_of(source)? {
        return load_special_path(py, &path, parsed, codes_policy);
    }
    let (stream, parquet) = open_stream(source)?;
    let head = stream.get_ref().0.get_ref();
    if !parquet && quant::looks_like_lattice_codes(head) {
        codes_policy()?;
        let c = py
            .detach(|| quant::from_reader(stream, MAX_STREAM_BYTES))
            .map_err(|e| error(py, e))?;
        return to_python(py, c);
    }
    let policy = parsed;
    let vectors = if parquet {
        #[cfg(feature = "parquet")]
        {
            let data = bytes::Bytes::from(stream::read_whole(py, stream)?);
            let params = py.detach(|| quant::parquet_params_from_bytes(data.clone()));
            if matches!(params, Ok(Some(_))) || params.as_ref().is_err_and(is_bad_codes) {
                codes_policy()?;
                let c = py
                    .detach(|| quant::parquet_from_bytes(data))
                    .map_err(|e| error(py, e))?;
                return to_python(py, c);
            }
            crate::errors::detached(py, || {
                hydron_codec::parquet::ParquetReader::from_bytes(
                    data,
                    policy,
                    hydron_codec::parquet::ParquetReadOptions::new(),
                )?
                .read_to_end()
            })?
        }
        #[cfg(not(feature = "parquet"))]
        crate::parquet::vectors_from_stream(py, stream, policy)?
    } else {
        crate::errors::detached(py, move || {
            let mut reader = hydron_codec::file::FileReader::from_reader(stream, policy)?;
            let mut out = Vec::new();
            while reader.read_chunk(&mut out)? > 0 {}
            Ok(out)
        })?
    };
    Ok(arrays::gf8_out(py, vectors).into_any().unbind())
}

/// What `hydron.load` reads from `path`, a FIFO or a device (anything but
/// a regular file or a directory), opened and read once as
/// [`_load_file_object`] reads a file object: lattice codes told from the
/// content, anything else as vectors. Every error names `path`, as a load
/// of vectors from it did before codes were looked for.
fn load_special_path(
    py: Python<'_>,
    path: &Path,
    policy: hydron_codec::Policy,
    codes_policy: impl FnOnce() -> PyResult<()>,
) -> PyResult<Py<PyAny>> {
    let in_file = |e: CodecError| CodecError::InFile {
        path: path.to_path_buf(),
        error: Box::new(e),
    };
    let stream = py
        .detach(|| -> Result<_, CodecError> {
            let file = std::fs::File::open(path).map_err(|e| in_file(CodecError::Io(e)))?;
            let mut reader = std::io::BufReader::with_capacity(64 * 1024, file);
            let mut head = Vec::with_capacity(16);
            (&mut reader)
                .take(16)
                .read_to_end(&mut head)
                .map_err(|e| in_file(CodecError::Io(e)))?;
            Ok(std::io::Cursor::new(head).chain(reader))
        })
        .map_err(|e| error(py, e))?;
    let head = stream.get_ref().0.get_ref();
    #[cfg(feature = "parquet")]
    if hydron_codec::parquet::looks_like_parquet(head) {
        let data = py
            .detach(|| -> Result<_, CodecError> {
                let mut data = Vec::new();
                stream
                    .take(MAX_STREAM_BYTES + 1)
                    .read_to_end(&mut data)
                    .map_err(|e| in_file(CodecError::Io(e)))?;
                if data.len() as u64 > MAX_STREAM_BYTES {
                    return Err(in_file(stream_too_large()));
                }
                Ok(bytes::Bytes::from(data))
            })
            .map_err(|e| error(py, e))?;
        let params = py.detach(|| quant::parquet_params_from_bytes(data.clone()));
        if matches!(params, Ok(Some(_))) || params.as_ref().is_err_and(is_bad_codes) {
            codes_policy()?;
            let c = py
                .detach(|| quant::parquet_from_bytes(data).map_err(in_file))
                .map_err(|e| error(py, e))?;
            return to_python(py, c);
        }
        let vectors = crate::errors::detached(py, || {
            hydron_codec::parquet::ParquetReader::from_bytes(
                data,
                policy,
                hydron_codec::parquet::ParquetReadOptions::new(),
            )
            .and_then(|mut r| r.read_to_end())
            .map_err(in_file)
        })?;
        return Ok(arrays::gf8_out(py, vectors).into_any().unbind());
    }
    if quant::looks_like_lattice_codes(head) {
        codes_policy()?;
        let c = py
            .detach(|| quant::from_reader(stream, MAX_STREAM_BYTES).map_err(in_file))
            .map_err(|e| error(py, e))?;
        return to_python(py, c);
    }
    let vectors = crate::errors::detached(py, move || {
        let mut reader = hydron_codec::file::FileReader::from_reader_named(stream, path, policy)?;
        let mut out = Vec::new();
        while reader.read_chunk(&mut out)? > 0 {}
        Ok(out)
    })?;
    Ok(arrays::gf8_out(py, vectors).into_any().unbind())
}

/// Whether `error` is about lattice-code parameters (the footer has them,
/// malformed).
#[cfg(feature = "parquet")]
fn is_bad_codes(error: &CodecError) -> bool {
    matches!(error, CodecError::BadCodes { .. })
}

/// Whether ``path`` is a regular file of lattice codes (a fory
/// ``LatticeCodes`` message, or Parquet with the ``hydron.quant.*`` footer
/// keys): what :func:`hydron.load` checks first. Reads its first 16 bytes
/// (and a Parquet file's footer).
#[pyfunction]
pub fn is_lattice_codes(py: Python<'_>, path: PathBuf) -> bool {
    py.detach(|| sniff(&path).is_some())
}

/// Load lattice codes from a file: a fory ``LatticeCodes`` message or
/// Parquet (detected from the content), every parameter, length, code and
/// scale checked (docs/format.md section 7).
///
/// ``source`` is a path or a binary file object (``open(..., "rb")``, a
/// pipe, ``sys.stdin.buffer``, ``io.BytesIO``). Each is read once: a
/// message only as far as its own lengths reach, so that a FIFO, a device
/// or a stream that is not a message ends in an error after the bytes that
/// show it; Parquet from a file object (or a FIFO) is read whole, at most
/// 1 GiB, as a message from one.
///
/// ``hydron.load(source)`` calls this for lattice codes.
///
/// Returns
/// -------
/// LatticeCodes
///     With ``scale`` ``"vector"``, ``"unit"`` or ``"direction"`` as
///     stored. For a file of ``Gf8`` codes (``hydron quantize --bits
///     16|32``: scale mode ``direction``, dimension 8, rotation off, so
///     also what ``LatticeQuantizer(8, ..., rotate=False,
///     scale="direction")`` saves): their unit vectors, a new (N, 8) float32
///     array, the same numbers as that quantizer's ``decode`` (bit for bit
///     at 2 bits, to the last bit at 4).
///
/// Raises
/// ------
/// CorruptError
///     Parameters that disagree with the data: ``offset`` is the byte offset
///     of the field in a fory message, ``row`` the vector (both ``None``
///     where there is no one place).
/// FormatError, TruncatedError, OSError
///     Not a file of lattice codes, cut short, or unreadable.
/// HydronError
///     A stream longer than 1 GiB (or a message claiming more).
/// TypeError
///     A text-mode file object, or something that is neither a path nor a
///     file object.
#[pyfunction]
pub fn load_lattice_codes(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let loaded = match arrays::path_of(source)? {
        Some(path) => py.detach(|| read_path(&path)),
        None => {
            let (stream, parquet) = open_stream(source)?;
            if parquet {
                read_parquet_stream(py, stream)?
            } else {
                py.detach(|| quant::from_reader(stream, MAX_STREAM_BYTES))
            }
        }
    };
    #[cfg(not(feature = "parquet"))]
    if let Err(CodecError::InFile { error, .. }) = &loaded {
        if matches!(
            error.as_ref(),
            CodecError::WrongHeader {
                offset: 0,
                found: b'P',
                ..
            }
        ) {
            return Err(crate::errors::feature_not_built(
                py,
                "hydron.load_lattice_codes (a Parquet file)",
                "parquet",
            ));
        }
    }
    let c = loaded.map_err(|e| error(py, e))?;
    to_python(py, c)
}

/// The Python value of loaded codes: a `hydron.LatticeCodes`, or the unit
/// vectors of Gf8 codes.
fn to_python(py: Python<'_>, c: LatticeCodes) -> PyResult<Py<PyAny>> {
    let p = *c.params();
    let n = usize::try_from(c.count()).expect("the codes are in memory");
    let QuantCodes { codes, scales } = c.into_codes();
    if p.is_gf8() {
        // Gf8 codes: their unit vectors, as hydron.load gives vectors.
        let c = LatticeCodes::new(
            p,
            QuantCodes {
                codes,
                scales: Vec::new(),
            },
        )
        .map_err(|e| error(py, e))?;
        let vectors = c.decode_gf8().map_err(|e| error(py, e))?;
        let flat: Vec<f32> = hydron_core::Gf8::slice_as_arrays(&vectors)
            .as_flattened()
            .to_vec();
        return Ok(PyArray1::from_vec(py, flat)
            .reshape([n, 8])?
            .into_any()
            .unbind());
    }
    let codes = PyArray1::from_vec(py, codes).reshape([n, p.code_size()])?;
    let codes: Bound<'_, PyArray2<u8>> = codes;
    let scales = if p.has_scales() {
        Some(PyArray1::from_vec(py, scales))
    } else {
        None
    };
    let class = py.import("hydron._hydron")?.getattr("LatticeCodes")?;
    let kw = pyo3::types::PyDict::new(py);
    kw.set_item("dim", p.dim())?;
    kw.set_item("bits", p.bits())?;
    kw.set_item("seed", p.seed())?;
    kw.set_item("rotate", p.rotation())?;
    kw.set_item(
        "scale",
        match p.scale() {
            CodesScale::PerVector => "vector",
            CodesScale::Unit => "unit",
            _ => "direction",
        },
    )?;
    Ok(class.call((codes, scales), Some(&kw))?.unbind())
}
