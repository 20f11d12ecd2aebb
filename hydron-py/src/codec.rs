//! Messages: fory (batch, one vector, codes), JSON and JSON Lines, all
//! through hydron-codec.

use std::mem::MaybeUninit;

use hydron_codec::json::{JsonLinesReader, JsonLinesWriter};
use hydron_codec::{fory, json, CodecError, Policy};
use hydron_core::{E8Root, Gf8};
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::{PyMemoryError, PySystemError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arrays::{self, codes_out, data, gf8_out, Vectors};
use crate::errors::{batch_error, codec_error, detached_unless_tiny};
use crate::gil;
use crate::policy::parse_or_strict;

/// The vectors to encode, checked (or renormalized) by `policy`.
pub fn prepared<'a>(
    py: Python<'_>,
    input: &'a Vectors<'_>,
    policy: Policy,
) -> PyResult<std::borrow::Cow<'a, [Gf8]>> {
    let arrays = input.arrays();
    match policy {
        Policy::Strict => gil::run_on_vectors(py, arrays.len(), || Gf8::slice_from_arrays(arrays))
            .map(std::borrow::Cow::Borrowed)
            .map_err(|e| batch_error(py, e)),
        Policy::Trusted => Ok(std::borrow::Cow::Borrowed(
            Gf8::slice_from_arrays_unchecked(arrays),
        )),
        _ => {
            let owned = arrays.to_vec();
            gil::run_on_vectors(py, owned.len(), || policy.apply(owned))
                .map(std::borrow::Cow::Owned)
                .map_err(|e| codec_error(py, e))
        }
    }
}

/// The bytes `encode` makes of the vectors `vectors`, checked (or
/// renormalized) by `policy` first.
pub fn encode_vectors<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
    encode: impl Send + FnOnce(&[Gf8]) -> Result<Vec<u8>, CodecError>,
) -> PyResult<Bound<'py, PyBytes>> {
    let input = arrays::vectors(vectors, "vectors")?;
    let gf8 = prepared(py, &input, parse_or_strict(policy)?)?;
    let bytes = detached_unless_tiny(py, std::mem::size_of_val(&*gf8), || encode(&gf8))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The bytes `fill` writes of the vectors `vectors`, checked (or
/// renormalized) by `policy` first, written straight into a new `bytes`
/// object of the `len` the count of vectors gives: nothing is zeroed first
/// and nothing is copied afterwards, so the memory taken is the output
/// (with `"strict"` and `"trusted"`, which read the array in place).
pub fn encode_vectors_in_place<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
    len: impl FnOnce(usize) -> Result<usize, CodecError>,
    fill: impl Send
        + for<'a> FnOnce(&[Gf8], &'a mut [MaybeUninit<u8>]) -> Result<&'a mut [u8], CodecError>,
) -> PyResult<Bound<'py, PyBytes>> {
    let input = arrays::vectors(vectors, "vectors")?;
    let gf8 = prepared(py, &input, parse_or_strict(policy)?)?;
    let len = len(gf8.len()).map_err(|e| codec_error(py, e))?;
    let size = pyo3::ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyMemoryError::new_err(format!("{len} bytes do not fit in a bytes object")))?;
    // SAFETY: with a null pointer, `PyBytes_FromStringAndSize` returns a new
    // reference to a `bytes` object of `size` bytes whose content is not
    // initialized (or null with an exception set: a `MemoryError`), and the
    // GIL is held.
    let out = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), size),
        )?
        .cast_into_unchecked::<PyBytes>()
    };
    // SAFETY: `out` is a `bytes` object of `len` bytes (plus the NUL that
    // CPython adds), created above: `PyBytes_AsString` returns its buffer,
    // which lives as long as `out` (held until this function returns, after
    // the last use of `buf`). Nothing else has a reference to the object
    // yet, so writing its content, without the GIL, cannot race with
    // anyone, and it is written before any Python code sees it. The slice
    // is of `MaybeUninit<u8>`: its bytes are not initialized yet.
    let buf: &mut [MaybeUninit<u8>] = unsafe {
        let data = pyo3::ffi::PyBytes_AsString(out.as_ptr());
        std::slice::from_raw_parts_mut(data.cast::<MaybeUninit<u8>>(), len)
    };
    let written = detached_unless_tiny(py, len, || fill(&gf8, buf).map(|b| b.len()))?;
    if written != len {
        // Never hand out a `bytes` with bytes that were not written.
        return Err(PySystemError::new_err(format!(
            "internal error: the encoder wrote {written} bytes of {len}"
        )));
    }
    Ok(out)
}

/// The vectors `decode` reads from `bytes` (without the GIL), as a new
/// (N, 8) float32 array.
fn decode_vectors<'py>(
    py: Python<'py>,
    bytes: &[u8],
    decode: impl Send + FnOnce(&[u8]) -> Result<Vec<Gf8>, CodecError>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    Ok(gf8_out(
        py,
        detached_unless_tiny(py, bytes.len(), || decode(bytes))?,
    ))
}

/// The fory ``Gf8Batch`` message of vectors (what Rust's
/// ``fory::encode_batch`` writes; stock pyfory reads it).
///
/// Parameters
/// ----------
/// vectors : ndarray, float32, shape (N, 8)
/// policy : {"strict", "renormalize", "trusted"}, default "strict"
///     How the vectors are checked before writing.
///
/// Returns
/// -------
/// bytes
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> len(hydron.encode_batch(np.zeros((1, 8), np.float32)))
/// 54
#[pyfunction]
#[pyo3(signature = (vectors, *, policy = None))]
pub fn encode_batch<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    encode_vectors_in_place(
        py,
        vectors,
        policy,
        fory::batch_len,
        fory::encode_batch_uninit,
    )
}

/// Decode a fory ``Gf8Batch`` message into a new (N, 8) float32 array.
///
/// Every framing byte and length is checked before anything is allocated;
/// the vectors are checked by ``policy`` (default ``"strict"``).
///
/// Raises
/// ------
/// FormatError, TruncatedError
///     Malformed or cut-off bytes (``.offset``).
/// InvalidVectorError
///     A vector the policy rejects (``.index``, ``.coordinate``, and
///     ``.offset``: the byte offset of the vector in ``data``).
///
/// Examples
/// --------
/// >>> import hydron
/// >>> hydron.decode_batch(hydron.encode_batch(hydron.E8_ROOTS)).shape
/// (240, 8)
#[pyfunction]
#[pyo3(signature = (data, *, policy = None))]
pub fn decode_batch<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let policy = parse_or_strict(policy)?;
    let input = arrays::data(data)?;
    let bytes = input.as_slice();
    let out = gil::run(py, bytes.len(), || fory::decode_batch(bytes, policy)).map_err(|e| {
        let at = match &e {
            CodecError::InvalidVector { index, .. } => vector_offset(bytes, *index),
            _ => None,
        };
        let err = codec_error(py, e);
        if let Some(at) = at {
            // Best effort: the error is raised either way.
            let _ = err.value(py).setattr("offset", at);
        }
        err
    })?;
    Ok(gf8_out(py, out))
}

/// The byte offset of vector `index` in a batch message whose framing
/// decoded: the payload is the message's last 32·N bytes, after a varuint32
/// length that ends with the first byte below 0x80 after the fixed prefix
/// (21 bytes in compatible mode, 9 in schema-consistent mode).
fn vector_offset(message: &[u8], index: u64) -> Option<u64> {
    let prefix = if message.get(2) == Some(&0x1c) { 21 } else { 9 };
    let varint = message.get(prefix..)?.iter().position(|b| b & 0x80 == 0)? + 1;
    Some((prefix + varint) as u64 + 32 * index)
}

/// The 37-byte fory ``Gf8`` message of one vector (shape (8,)).
#[pyfunction]
#[pyo3(signature = (vector, *, policy = None))]
pub fn encode_gf8<'py>(
    py: Python<'py>,
    vector: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let coords = arrays::one(vector, "vector")?;
    let v = parse_or_strict(policy)?
        .apply_one(coords)
        .map_err(|error| batch_error(py, hydron_core::BatchError { index: 0, error }))?;
    Ok(PyBytes::new(py, &fory::encode_gf8_array(v)))
}

/// Decode a 37-byte ``Gf8`` message into a float32 array of shape (8,).
#[pyfunction]
#[pyo3(signature = (data, *, policy = None))]
pub fn decode_gf8<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let policy = parse_or_strict(policy)?;
    let input = arrays::data(data)?;
    let v = fory::decode_gf8(input.as_slice(), policy).map_err(|e| codec_error(py, e))?;
    Ok(PyArray1::from_vec(py, v.to_array().to_vec()))
}

/// The fory ``E8Codes`` message of E8 root codes (integers in 0..240).
#[pyfunction]
pub fn encode_codes<'py>(
    py: Python<'py>,
    codes: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let codes = arrays::codes(codes, "codes")?;
    let bytes = detached_unless_tiny(py, codes.len(), || {
        let roots: Vec<E8Root> = codes.iter().filter_map(|&c| E8Root::new(c).ok()).collect();
        fory::try_encode_codes(&roots)
    })?;
    Ok(PyBytes::new(py, &bytes))
}

/// Decode an ``E8Codes`` message into a new uint8 array; a code ≥ 240
/// raises :class:`InvalidVectorError` naming its index.
#[pyfunction]
pub fn decode_codes<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let input = arrays::data(data)?;
    let bytes = input.as_slice();
    let roots = detached_unless_tiny(py, bytes.len(), || fory::decode_codes(bytes))?;
    Ok(codes_out(py, roots))
}

/// A JSON array ``[[x0, …, x7], …]`` (UTF-8), each float32 written as
/// the shortest decimal that reads back to the same bits. JSON has no NaN
/// or infinity: a vector holding one raises InvalidVectorError, whatever
/// the policy.
#[pyfunction]
#[pyo3(signature = (vectors, *, policy = None))]
pub fn encode_json<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    encode_vectors(py, vectors, policy, |gf8| {
        let mut out = Vec::with_capacity(gf8.len() * 100 + 2);
        json::to_writer(&mut out, gf8).map(|()| out)
    })
}

/// Decode a JSON array of vectors; errors name the line, column, vector
/// and coordinate.
#[pyfunction]
#[pyo3(signature = (data, *, policy = None))]
pub fn decode_json<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let policy = parse_or_strict(policy)?;
    let input = text_data(data)?;
    decode_vectors(py, input.as_slice(), |bytes| {
        json::from_slice(bytes, policy)
    })
}

/// JSON Lines: one ``[x0, …, x7]`` per line (no container framing).
/// JSON has no NaN or infinity: a vector holding one raises
/// InvalidVectorError, whatever the policy.
#[pyfunction]
#[pyo3(signature = (vectors, *, policy = None))]
pub fn encode_jsonl<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    encode_vectors(py, vectors, policy, |gf8| {
        let mut w = JsonLinesWriter::new(Vec::with_capacity(gf8.len() * 100));
        w.write_all(gf8)?;
        w.finish()
    })
}

/// Decode JSON Lines of vectors; errors name the line and vector.
#[pyfunction]
#[pyo3(signature = (data, *, policy = None))]
pub fn decode_jsonl<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let policy = parse_or_strict(policy)?;
    let input = text_data(data)?;
    decode_vectors(py, input.as_slice(), |bytes| {
        JsonLinesReader::new(bytes, policy).collect()
    })
}

/// JSON input: `str` (as UTF-8) or bytes-like.
fn text_data<'py>(obj: &Bound<'py, PyAny>) -> PyResult<arrays::Data<'py>> {
    if let Ok(s) = obj.cast::<pyo3::types::PyString>() {
        return Ok(arrays::Data::Owned(s.to_str()?.as_bytes().to_vec()));
    }
    data(obj)
}
