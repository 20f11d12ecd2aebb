//! numpy arrays in and out, and the rules for what is accepted.
//!
//! Vectors come in as `(N, 8)` float32 numpy arrays (native byte order).
//! A C-contiguous, aligned one is read in place as `&[[f32; 8]]` (no
//! copy). Any other float32 layout (strided, Fortran order, unaligned, or
//! strides that are not a whole number of floats, as in a field of a packed
//! structured array) is first copied by numpy itself into a new C-ordered
//! array, which is lossless and exact for every layout numpy can describe.
//! Anything else is refused with a `TypeError` (wrong type or dtype) or
//! `ValueError` (wrong shape) that says what was expected and what came:
//! hydron never rounds float64 to float32 behind the caller's back. Results
//! are new, owned, writable arrays built from Rust vectors without a copy.

use std::path::PathBuf;

use hydron_core::{BatchError, E8Root, Gf8};
use numpy::ndarray::Array2;
use numpy::ndarray::Dimension;
use numpy::{
    dtype, Element, PyArray, PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods,
    PyReadonlyArray, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

use crate::errors::batch_error;

/// Vectors read from a numpy array: the caller's array itself when its
/// memory is already C-ordered and aligned float32, else numpy's C-ordered
/// copy of it; a single `(8,)` vector is copied out.
pub enum Vectors<'py> {
    /// A C-contiguous, aligned `(N, 8)` float32 array (`as_slice`
    /// succeeds on it).
    Array(PyReadonlyArray2<'py, f32>),
    /// One vector, copied.
    One([[f32; 8]; 1]),
}

impl<'py> Vectors<'py> {
    /// The vectors as arrays of 8 coordinates.
    pub fn arrays(&self) -> &[[f32; 8]] {
        match self {
            // `vectors` only builds an `Array` on an array with 8 columns
            // whose `as_slice` succeeds (C-contiguous, aligned).
            Vectors::Array(array) => array.as_slice().map_or(&[], |s| bytemuck::cast_slice(s)),
            Vectors::One(one) => one,
        }
    }

    /// The vectors as `Gf8`, each checked (finite, unit norm or zero).
    pub fn gf8(&self, py: Python<'_>) -> PyResult<&[Gf8]> {
        let arrays = self.arrays();
        crate::gil::run_on_vectors(py, arrays.len(), || Gf8::slice_from_arrays(arrays))
            .map_err(|e| batch_error(py, e))
    }

    /// The numpy array whose memory [`Vectors::arrays`] borrows, if any.
    #[cfg(feature = "arrow")]
    pub fn array(&self) -> Option<&Bound<'py, PyArray2<f32>>> {
        match self {
            Vectors::Array(array) => Some(array),
            Vectors::One(_) => None,
        }
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

pub fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `obj` as a numpy array of float32, or a `TypeError` naming `what`.
fn float32_array<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    what: &str,
) -> PyResult<&'a Bound<'py, PyUntypedArray>> {
    let Ok(arr) = obj.cast::<PyUntypedArray>() else {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected a numpy float32 array, got {} \
             (convert with np.asarray(x, dtype=np.float32))",
            type_name(obj)
        )));
    };
    let py = obj.py();
    if !arr.dtype().is_equiv_to(&dtype::<f32>(py)) {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected dtype float32, got {} (hydron does not round to float32 for you: \
             use .astype(np.float32) if that rounding is what you want)",
            arr.dtype()
        )));
    }
    Ok(arr)
}

/// Reads `obj` as `(N, 8)` float32 vectors (see the module docs).
pub fn vectors<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Vectors<'py>> {
    let arr = float32_array(obj, what)?;
    let shape = arr.shape();
    if shape.len() != 2 || shape[1] != 8 {
        return Err(PyValueError::new_err(format!(
            "{what}: expected shape (N, 8), got {}",
            shape_text(shape)
        )));
    }
    let arr = arr.cast::<PyArray2<f32>>()?;
    Ok(Vectors::Array(in_c_order(arr, what)?))
}

/// `arr` read-only and in C order: the array itself when its memory is
/// already C-ordered, aligned float32 (`as_slice` also accepts Fortran
/// order, so the order is checked apart), else numpy's C-ordered copy.
/// Every other layout is copied by numpy, not read through a strided view:
/// rust-numpy's views divide each stride by 4 and assume alignment, so a
/// stride of 33 bytes (a packed structured array's field) would read the
/// wrong floats.
fn in_c_order<'py, D: Dimension>(
    arr: &Bound<'py, PyArray<f32, D>>,
    what: &str,
) -> PyResult<PyReadonlyArray<'py, f32, D>> {
    if arr.is_c_contiguous() {
        let array = arr.try_readonly()?;
        if array.as_slice().is_ok() {
            return Ok(array);
        }
    }
    let copy = arr
        .call_method1("copy", ("C",))?
        .cast_into::<PyArray<f32, D>>()?;
    let array = copy.try_readonly()?;
    if array.as_slice().is_err() {
        return Err(PyValueError::new_err(format!(
            "{what}: numpy's C-ordered copy of the array is not contiguous and aligned"
        )));
    }
    Ok(array)
}

/// A vector or vectors: a `(8,)` array is one vector (`single` is true),
/// an `(N, 8)` array is N vectors.
pub fn one_or_many<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<(Vectors<'py>, bool)> {
    let arr = float32_array(obj, what)?;
    if arr.shape() == [8] {
        let arr = in_c_order(arr.cast::<PyArray1<f32>>()?, what)?;
        // `in_c_order` gave a contiguous (8,) array: 8 floats.
        let Some(one) = arr.as_slice().ok().and_then(|s| s.try_into().ok()) else {
            return Err(PyValueError::new_err(format!(
                "{what}: expected 8 contiguous floats"
            )));
        };
        return Ok((Vectors::One([one]), true));
    }
    if arr.shape().len() != 2 {
        return Err(PyValueError::new_err(format!(
            "{what}: expected shape (8,) or (N, 8), got {}",
            shape_text(arr.shape())
        )));
    }
    Ok((vectors(obj, what)?, false))
}

/// One vector of shape `(8,)`, as its coordinates.
pub fn one(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<[f32; 8]> {
    let (v, single) = one_or_many(obj, what)?;
    if !single {
        return Err(PyValueError::new_err(format!(
            "{what}: expected one vector of shape (8,), got shape ({}, 8)",
            v.arrays().len()
        )));
    }
    Ok(v.arrays()[0])
}

/// A new `(N, 8)` float32 array that owns `arrays` (no copy).
pub fn vectors_out(py: Python<'_>, arrays: Vec<[f32; 8]>) -> Bound<'_, PyArray2<f32>> {
    let n = arrays.len();
    let flat: Vec<f32> = bytemuck::allocation::try_cast_vec(arrays)
        .unwrap_or_else(|(_, arrays)| arrays.into_iter().flatten().collect());
    let array = Array2::from_shape_vec((n, 8), flat).unwrap_or_else(|_| Array2::zeros((n, 8)));
    PyArray2::from_owned_array(py, array)
}

/// A new `(N, 8)` float32 array of `Gf8` vectors (no copy).
pub fn gf8_out(py: Python<'_>, vectors: Vec<Gf8>) -> Bound<'_, PyArray2<f32>> {
    vectors_out(py, Gf8::vec_into_arrays(vectors))
}

/// A new uint8 array of the codes of `roots` (no copy).
pub fn codes_out(py: Python<'_>, roots: Vec<E8Root>) -> Bound<'_, PyArray1<u8>> {
    let codes: Vec<u8> = bytemuck::allocation::try_cast_vec(roots)
        .unwrap_or_else(|(_, r)| r.into_iter().map(E8Root::code).collect());
    PyArray1::from_vec(py, codes)
}

/// Bytes from a `bytes`, `bytearray` or any contiguous buffer.
pub enum Data<'py> {
    /// A `bytes` object, read in place (it is immutable).
    Bytes(Bound<'py, PyBytes>),
    /// A copy of a mutable buffer.
    Owned(Vec<u8>),
}

impl Data<'_> {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Data::Bytes(b) => b.as_bytes(),
            Data::Owned(v) => v,
        }
    }
}

/// Reads `obj` as bytes (see [`Data`]).
pub fn data<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Data<'py>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Data::Bytes(b.clone()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Data::Owned(b.to_vec()));
    }
    if let Ok(b) = obj.call_method0("tobytes").or_else(|_| {
        obj.py()
            .import("builtins")?
            .getattr("memoryview")?
            .call1((obj,))?
            .call_method0("tobytes")
    }) {
        if let Ok(b) = b.cast::<PyBytes>() {
            return Ok(Data::Bytes(b.clone()));
        }
    }
    Err(PyTypeError::new_err(format!(
        "expected bytes-like data, got {}",
        type_name(obj)
    )))
}

/// E8 root codes: a uint8 array is read as it is; any other integer
/// array or sequence is converted; each code must be in 0..240.
pub fn codes(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let arr = np.getattr("asarray")?.call1((obj,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    if arr.ndim() != 1 {
        return Err(PyValueError::new_err(format!(
            "{what}: expected a one-dimensional array of codes, got shape {}",
            shape_text(arr.shape())
        )));
    }
    let kind = arr.dtype().kind();
    if arr.len() > 0 && kind != b'i' && kind != b'u' {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected integer codes (uint8), got dtype {}",
            arr.dtype()
        )));
    }
    // Unsigned codes as uint64 and signed ones as int64, so that no value
    // wraps around before it is checked (2**64 - 1 is not -1).
    fn widened<T: Element + Into<i128>>(
        arr: &Bound<'_, PyAny>,
        dtype: &str,
    ) -> PyResult<Vec<i128>> {
        let wide = arr.call_method1("astype", (dtype,))?;
        let wide = wide.cast::<PyArray1<T>>()?.to_vec()?;
        Ok(wide.into_iter().map(Into::into).collect())
    }
    let wide = if kind == b'u' {
        widened::<u64>(arr, "uint64")?
    } else {
        widened::<i64>(arr, "int64")?
    };
    let mut out = Vec::with_capacity(wide.len());
    for (i, &c) in wide.iter().enumerate() {
        match u8::try_from(c) {
            Ok(code) if code < 240 => out.push(code),
            _ => {
                let error = hydron_core::Gf8Error::InvalidRootCode {
                    code: u8::try_from(c).unwrap_or(u8::MAX),
                };
                let err = batch_error(py, BatchError { index: i, error });
                err.value(py).setattr("code", c)?;
                err.value(py).setattr(
                    "args",
                    (format!(
                        "vector {i}: E8 root code {c} is out of range (0..240)"
                    ),),
                )?;
                return Err(err);
            }
        }
    }
    Ok(out)
}

/// A path (`str` or `os.PathLike`), or `None` for anything else. An
/// exception raised by `__fspath__` is raised as it was.
pub fn path_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<PathBuf>> {
    if obj.cast::<PyString>().is_ok() || obj.hasattr("__fspath__")? {
        obj.extract().map(Some)
    } else {
        Ok(None)
    }
}
