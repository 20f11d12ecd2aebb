//! numpy arrays in and out, and the rules for what is accepted.
//!
//! Vectors come in as a `(N, 8)` array, or one `(8,)` vector. A float32
//! numpy array (native byte order) that is C-contiguous and aligned is read
//! in place as `&[[f32; 8]]` (no copy); a float32 array in any other layout
//! (strided, Fortran order, unaligned, or strides that are not a whole
//! number of floats, as in a field of a packed structured array) is first
//! copied by numpy itself into a new C-ordered array, which is lossless.
//! Anything else that holds real numbers (float64, float16, integers,
//! big-endian floats, lists, objects with `__array__`) is converted as
//! `np.asarray(x, dtype=np.float32)` converts it, except that a finite value
//! beyond float32's range (which numpy would make infinite) is an
//! `InvalidVectorError` naming its vector and coordinate. Masked arrays are
//! refused (`TypeError`: hydron has no missing values), and so are
//! complex numbers, strings and objects; a wrong shape is a `ValueError`.
//! Results are new, owned, writable arrays built from Rust vectors without
//! a copy, or the caller's `out=` array, written in place ([`out_array`]).

use std::path::PathBuf;

use hydron_core::{BatchError, E8Point, E8Root, Gf8};
use numpy::ndarray::Array2;
use numpy::ndarray::{Dimension, IxDyn};
use numpy::{
    dtype, Element, PyArray, PyArray1, PyArray2, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods,
    PyReadonlyArray, PyReadonlyArray2, PyReadwriteArray, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyString, PyType};

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

/// A `TypeError` for a numpy masked array: hydron has no missing values,
/// and reading the array's data would use the masked values as if they
/// were there.
pub fn refuse_masked(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    // Looked up once: every call that takes vectors asks, one-vector calls
    // included.
    static MASKED_ARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let masked = MASKED_ARRAY.import(obj.py(), "numpy.ma", "MaskedArray")?;
    if obj.is_instance(masked)? {
        return Err(PyTypeError::new_err(format!(
            "{what}: masked arrays are not accepted (hydron has no missing values, and would \
             read the masked entries as data): fill them (x.filled(value)) or drop the \
             masked rows first"
        )));
    }
    Ok(())
}

/// `obj` as a float32 numpy array of shape `(width,)` or `(N, width)`:
/// itself when it is one, else converted (see the module docs).
fn float32_array<'py>(
    obj: &Bound<'py, PyAny>,
    width: usize,
    what: &str,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    refuse_masked(obj, what)?;
    let py = obj.py();
    let f32_dtype = dtype::<f32>(py);
    let arr = match obj.cast::<PyUntypedArray>() {
        Ok(arr) => arr.clone(),
        Err(_) => {
            let np = py.import("numpy")?;
            let arr = np.getattr("asarray")?.call1((obj,))?;
            arr.cast_into::<PyUntypedArray>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{what}: expected an array of numbers, got {}",
                    type_name(obj)
                ))
            })?
        }
    };
    check_vector_shape(&arr, width, what)?;
    if arr.dtype().is_equiv_to(&f32_dtype) {
        return Ok(arr);
    }
    let source_dtype = arr.dtype();
    let kind = source_dtype.kind();
    if !matches!(kind, b'f' | b'i' | b'u' | b'b') {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected real numbers (floats or integers), got {} of dtype {}",
            type_name(obj),
            source_dtype
        )));
    }
    let np = py.import("numpy")?;
    // Quietly: an overflow is reported below, by vector and coordinate.
    let quiet = pyo3::types::PyDict::new(py);
    quiet.set_item("over", "ignore")?;
    quiet.set_item("invalid", "ignore")?;
    let errstate = np.getattr("errstate")?.call((), Some(&quiet))?;
    errstate.call_method0("__enter__")?;
    let converted = arr.call_method1("astype", (f32_dtype,));
    errstate.call_method1("__exit__", (py.None(), py.None(), py.None()))?;
    let converted = converted?.cast_into::<PyUntypedArray>()?;
    if kind == b'f' && source_dtype.itemsize() > 4 {
        let overflowed = np.getattr("logical_and")?.call1((
            np.getattr("isinf")?.call1((&converted,))?,
            np.getattr("isfinite")?.call1((&arr,))?,
        ))?;
        if overflowed.call_method0("any")?.is_truthy()? {
            let at: Vec<usize> = np
                .getattr("argwhere")?
                .call1((&overflowed,))?
                .get_item(0)?
                .extract()?;
            let value: f64 = arr
                .get_item(pyo3::types::PyTuple::new(py, &at)?)?
                .call_method0("item")?
                .extract()?;
            let (vector, coordinate) = match at[..] {
                [c] => (0, c),
                [v, c] => (v, c),
                _ => (0, 0),
            };
            return Err(crate::errors::beyond_float32(py, vector, coordinate, value));
        }
    }
    Ok(converted)
}

/// A `ValueError` unless `arr` has shape `(width,)` or `(N, width)`.
fn check_vector_shape(arr: &Bound<'_, PyUntypedArray>, width: usize, what: &str) -> PyResult<()> {
    match arr.shape() {
        [w] | [_, w] if *w == width => Ok(()),
        shape => Err(PyValueError::new_err(format!(
            "{what}: expected shape (N, {width}) or ({width},), got {}",
            shape_text(shape)
        ))),
    }
}

/// Reads `obj` as vectors (see the module docs): `(vectors, single)`,
/// where `single` says it was one `(8,)` vector.
pub fn input<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<(Vectors<'py>, bool)> {
    let arr = float32_array(obj, 8, what)?;
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
    let arr = arr.cast::<PyArray2<f32>>()?;
    Ok((Vectors::Array(in_c_order(arr, what)?), false))
}

/// Reads `obj` as rows of `width` numbers by the rules of the module docs
/// (a `(width,)` vector is one row): the C-ordered float32 array, and
/// whether it was one vector. For vectors of any dimension (the lattice
/// quantizer's).
pub fn rows<'py>(
    obj: &Bound<'py, PyAny>,
    width: usize,
    what: &str,
) -> PyResult<(PyReadonlyArray2<'py, f32>, bool)> {
    let arr = float32_array(obj, width, what)?;
    let single = arr.ndim() == 1;
    let arr = if single {
        arr.call_method1("reshape", ((1usize, width),))?
            .cast_into::<PyUntypedArray>()?
    } else {
        arr
    };
    Ok((in_c_order(arr.cast::<PyArray2<f32>>()?, what)?, single))
}

/// Reads `obj` as vectors, a single `(8,)` vector as one row.
pub fn vectors<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Vectors<'py>> {
    Ok(input(obj, what)?.0)
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

/// One vector of shape `(8,)`, as its coordinates.
pub fn one(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<[f32; 8]> {
    let (v, single) = input(obj, what)?;
    if !single {
        return Err(PyValueError::new_err(format!(
            "{what}: expected one vector of shape (8,), got shape ({}, 8)",
            v.arrays().len()
        )));
    }
    Ok(v.arrays()[0])
}

/// The `out=` array of a call whose result has `shape` and element type
/// `T`, borrowed for writing: a numpy array of exactly that dtype and
/// shape, C-contiguous, aligned and writeable, that shares no memory with
/// the call's input (its borrow would conflict). Anything else is a
/// `TypeError` (not an array, another dtype) or `ValueError`, before any
/// work is done.
pub fn out_array<'py, T: Element>(
    out: &Bound<'py, PyAny>,
    shape: &[usize],
) -> PyResult<PyReadwriteArray<'py, T, IxDyn>> {
    let py = out.py();
    refuse_masked(out, "out")?;
    let Ok(arr) = out.cast::<PyUntypedArray>() else {
        return Err(PyTypeError::new_err(format!(
            "out: expected a numpy array, got {}",
            type_name(out)
        )));
    };
    let want = dtype::<T>(py);
    if !arr.dtype().is_equiv_to(&want) {
        return Err(PyTypeError::new_err(format!(
            "out: expected dtype {want}, got {} (hydron writes results without casting)",
            arr.dtype()
        )));
    }
    if arr.shape() != shape {
        return Err(PyValueError::new_err(format!(
            "out: expected shape {}, got {}",
            shape_text(shape),
            shape_text(arr.shape())
        )));
    }
    let aligned: bool = arr.getattr("flags")?.getattr("aligned")?.extract()?;
    if !arr.is_c_contiguous() || !aligned {
        return Err(PyValueError::new_err(
            "out: expected a C-contiguous, aligned array (hydron writes results in place, \
             without a copy)",
        ));
    }
    arr.cast::<PyArrayDyn<T>>()?.try_readwrite().map_err(|e| {
        PyValueError::new_err(format!(
            "out: not writable ({e}): it is read-only, or shares memory with the input"
        ))
    })
}

/// The shape of a result with one `tail`-shaped entry per vector: `tail`
/// for a single vector, else `(n,) + tail`.
pub fn result_shape(single: bool, n: usize, tail: &[usize]) -> Vec<usize> {
    if single {
        tail.to_vec()
    } else {
        std::iter::once(n).chain(tail.iter().copied()).collect()
    }
}

/// `out`'s floats as `Gf8` slots for a kernel to write into.
pub fn gf8_slots(floats: &mut [f32]) -> &mut [Gf8] {
    let arrays: &mut [[f32; 8]] = bytemuck::cast_slice_mut(floats);
    // SAFETY: `Gf8` is `#[repr(C)]` with one field, `[f32; 8]`: the same
    // size, alignment and layout, and every bit pattern is a value of the
    // type (its unit-norm rule is an invariant of its API, not of its
    // bits). The kernels only write these slots, and numpy reads them back
    // as floats; no `Gf8` is ever read from them.
    unsafe { &mut *(std::ptr::from_mut::<[[f32; 8]]>(arrays) as *mut [Gf8]) }
}

/// `out`'s bytes as `E8Root` slots for a kernel to write into.
pub fn root_slots(bytes: &mut [u8]) -> &mut [E8Root] {
    // SAFETY: `E8Root` is `#[repr(transparent)]` over `u8`: the same
    // layout. Its rule (a code below 240) is an invariant of its API, not
    // of its bits; the kernels only write these slots (each a code below
    // 240), and numpy reads them back as bytes.
    unsafe { &mut *(std::ptr::from_mut::<[u8]>(bytes) as *mut [E8Root]) }
}

/// `out`'s integers as `E8Point` slots for a kernel to write into.
pub fn point_slots(ints: &mut [i32]) -> &mut [E8Point] {
    let arrays: &mut [[i32; 8]] = bytemuck::cast_slice_mut(ints);
    // SAFETY: `E8Point` is `#[repr(transparent)]` over its doubled
    // coordinates, `[i32; 8]`: the same layout. Its rule (a lattice point)
    // is an invariant of its API, not of its bits; the kernels only write
    // these slots, and numpy reads them back as integers.
    unsafe { &mut *(std::ptr::from_mut::<[[i32; 8]]>(arrays) as *mut [E8Point]) }
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
/// array or sequence is converted; each code must be in 0..240. A single
/// code (a 0-d array or an integer) is one code.
pub fn codes(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    Ok(codes_or_one(obj, what)?.0)
}

/// [`codes`], and whether `obj` was a single code (0-d).
pub fn codes_or_one(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(Vec<u8>, bool)> {
    let py = obj.py();
    refuse_masked(obj, what)?;
    let np = py.import("numpy")?;
    let mut arr = np.getattr("asarray")?.call1((obj,))?;
    let single = arr.cast::<PyUntypedArray>()?.ndim() == 0;
    if single {
        arr = arr.call_method1("reshape", (1,))?;
    }
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
    Ok((out, single))
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
