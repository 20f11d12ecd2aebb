//! The geometry: hydron-core's batch kernels and sphere functions on numpy
//! arrays. Each function converts its arguments (`arrays`), releases the GIL
//! around the Rust call, and converts the result or error back.

use hydron_core::{batch, E8Point, Gf8, E8_ROOTS};
use numpy::ndarray::Array2;
use numpy::{PyArray1, PyArray2};
use numpy::{PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{self, codes_out, gf8_out, one_or_many, vectors, vectors_out, Vectors};
use crate::errors::{batch_error, codec_error, gf8_error};
use crate::gil;
use crate::policy;

/// Scale vectors onto the unit sphere.
///
/// Parameters
/// ----------
/// vectors : ndarray, float32, shape (N, 8)
///     Any finite vectors (read in place when C-contiguous).
/// policy : {None, "strict", "renormalize", "trusted"}, optional
///     None (the default) scales every vector (zero stays zero), as Rust's
///     ``batch::normalize``. With a policy, the vectors are treated as a
///     decoder treats them: ``"renormalize"`` scales only the vectors that
///     are not unit (unit ones are kept bit for bit), ``"strict"`` checks
///     them and returns a copy, ``"trusted"`` copies them unchecked.
///
/// Returns
/// -------
/// ndarray, float32, shape (N, 8)
///     A new array.
///
/// Raises
/// ------
/// InvalidVectorError
///     A NaN or infinite coordinate (``.index``, ``.coordinate``), or with
///     ``policy="strict"`` a vector that is not of unit norm (``.norm``).
/// TypeError, ValueError
///     Not a float32 array; not of shape (N, 8).
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> hydron.normalize(np.array([[0, 3, 0, 4, 0, 0, 0, 0]], np.float32))[0, 1]
/// np.float32(0.6)
#[pyfunction]
#[pyo3(signature = (vectors, *, policy = None))]
pub fn normalize<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let input = arrays::vectors(vectors, "vectors")?;
    let arrays = input.arrays();
    match policy.map(policy::parse).transpose()? {
        None => {
            let out = gil::run_on_vectors(py, arrays.len(), || batch::normalize(arrays))
                .map_err(|e| batch_error(py, e))?;
            Ok(gf8_out(py, out))
        }
        Some(p) => {
            let owned = arrays.to_vec();
            let out = gil::run_on_vectors(py, owned.len(), || p.apply(owned))
                .map_err(|e| codec_error(py, e))?;
            Ok(gf8_out(py, out))
        }
    }
}

/// Check that every vector is finite and of unit norm, or exactly zero.
///
/// The check is the one every strict decoder makes:
/// ``|‖x‖² − 1| ≤ 2e-5`` with the squared norm summed in float32.
///
/// Parameters
/// ----------
/// vectors : ndarray, float32, shape (N, 8)
///
/// Raises
/// ------
/// InvalidVectorError
///     For the first bad vector: ``.index``, and ``.coordinate`` (NaN,
///     infinity) or ``.norm``.
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> v = np.zeros((3, 8), np.float32); v[2, 5] = np.nan
/// >>> hydron.validate(v)
/// Traceback (most recent call last):
/// hydron.errors.InvalidVectorError: vector 2: coordinate 5 is NaN
#[pyfunction]
pub fn validate(py: Python<'_>, vectors: &Bound<'_, PyAny>) -> PyResult<()> {
    let input = arrays::vectors(vectors, "vectors")?;
    let arrays = input.arrays();
    gil::run_on_vectors(py, arrays.len(), || batch::validate(arrays))
        .map_err(|e| batch_error(py, e))
}

/// The nearest E8 root of each vector, as its code (0..240).
///
/// Closed form, O(8) per vector, in hydron-core's SIMD batch kernel (AVX2
/// when the CPU has it): the root of largest cosine, as a brute-force
/// search over ``E8_ROOTS`` finds it, except that two roots whose cosines
/// differ by less than about 2e-7 are decided by the float32 rounding of
/// their scores (the same on every CPU); on an exact tie the lower code
/// wins. A zero vector gets code 0 when its zeros are positive; a negative
/// zero counts as a minus sign, so ``[-0.0] * 8`` gets code 3.
///
/// Parameters
/// ----------
/// vectors : ndarray, float32, shape (N, 8)
///     Unit vectors (or zero).
/// trusted : bool, default False
///     Skip the check that the vectors are valid (garbage in, a meaningless
///     but harmless code out). The check runs in the same pass as the
///     quantization and costs a few percent (docs/benchmarks.md).
///
/// Returns
/// -------
/// ndarray, uint8, shape (N,)
///     ``E8_ROOTS[codes]`` are the roots.
///
/// Raises
/// ------
/// InvalidVectorError
///     A vector that is not finite and of unit norm (unless ``trusted``).
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> hydron.nearest_roots(hydron.E8_ROOTS[[5, 200]]).tolist()
/// [5, 200]
#[pyfunction]
#[pyo3(signature = (vectors, *, trusted = false))]
pub fn nearest_roots<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    trusted: bool,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let input = arrays::vectors(vectors, "vectors")?;
    let arrays = input.arrays();
    let codes = gil::run_on_vectors(py, arrays.len(), || {
        if trusted {
            Ok(batch::nearest_roots(Gf8::slice_from_arrays_unchecked(
                arrays,
            )))
        } else {
            // Checked in the same pass as the quantization.
            batch::nearest_roots_checked(arrays)
        }
    })
    .map_err(|e| batch_error(py, e))?;
    Ok(codes_out(py, codes))
}

/// The unit E8 roots of codes.
///
/// Parameters
/// ----------
/// codes : array_like of int, shape (N,)
///     Each in 0..240 (a uint8 array, or any integers).
///
/// Returns
/// -------
/// ndarray, float32, shape (N, 8)
///
/// Raises
/// ------
/// InvalidVectorError
///     A code out of range (``.index``, ``.code``).
///
/// Examples
/// --------
/// >>> import hydron
/// >>> hydron.codes_to_vectors([0])[0, :3].tolist()
/// [0.7071067690849304, 0.7071067690849304, 0.0]
#[pyfunction]
pub fn codes_to_vectors<'py>(
    py: Python<'py>,
    codes: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let codes = arrays::codes(codes, "codes")?;
    let out: Vec<[f32; 8]> = gil::run_on_vectors(py, codes.len(), || {
        // A zeroed output (huge pages when large), then filled.
        let mut out: Vec<[f32; 8]> = hydron_core::huge::zeroed_vec(codes.len());
        for (slot, &c) in out.iter_mut().zip(codes.iter()) {
            *slot = E8_ROOTS[usize::from(c)].to_array();
        }
        out
    });
    Ok(vectors_out(py, out))
}

/// The nearest point of the E8 lattice to each point (Conway–Sloane).
///
/// Parameters
/// ----------
/// points : ndarray, float32, shape (N, 8)
///     Any finite points with ``|x_i| ≤ 4194304``.
///
/// Returns
/// -------
/// ndarray, int32, shape (N, 8)
///     The lattice points' coordinates doubled (exact integers; divide by
///     2 for the coordinates).
///
/// Raises
/// ------
/// InvalidVectorError
///     A NaN, infinite or out-of-range coordinate (``.index``,
///     ``.coordinate``).
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> hydron.nearest_lattice_points(np.full((1, 8), 0.6, np.float32)).tolist()
/// [[1, 1, 1, 1, 1, 1, 1, 1]]
#[pyfunction]
pub fn nearest_lattice_points<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<i32>>> {
    let input = arrays::vectors(points, "points")?;
    let arrays = input.arrays();
    let out = gil::run_on_vectors(
        py,
        arrays.len(),
        || -> Result<Vec<i32>, hydron_core::BatchError> {
            let mut points: Vec<E8Point> = hydron_core::huge::zeroed_vec(arrays.len());
            batch::nearest_lattice_points_into(arrays, &mut points)?;
            Ok(points.iter().flat_map(E8Point::doubled).collect())
        },
    )
    .map_err(|e| batch_error(py, e))?;
    let n = out.len() / 8;
    let array =
        Array2::from_shape_vec((n, 8), out).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(PyArray2::from_owned_array(py, array))
}

/// Two arguments that are each one vector `(8,)` or N vectors `(N, 8)`,
/// checked; a single vector pairs with every row of the other.
struct Pair<'a> {
    a: &'a [Gf8],
    b: &'a [Gf8],
    n: usize,
    a_single: bool,
    b_single: bool,
    scalar: bool,
}

impl Pair<'_> {
    fn a(&self, i: usize) -> Gf8 {
        self.a[if self.a.len() == 1 { 0 } else { i }]
    }
    fn b(&self, i: usize) -> Gf8 {
        self.b[if self.b.len() == 1 { 0 } else { i }]
    }
}

fn pair<'a>(
    py: Python<'_>,
    a: &'a Vectors<'_>,
    a_single: bool,
    b: &'a Vectors<'_>,
    b_single: bool,
) -> PyResult<Pair<'a>> {
    let (a_gf8, b_gf8) = (a.gf8(py)?, b.gf8(py)?);
    let n = match (a_single, b_single) {
        (true, true) => 1,
        (true, false) => b_gf8.len(),
        (false, true) => a_gf8.len(),
        (false, false) if a_gf8.len() == b_gf8.len() => a_gf8.len(),
        (false, false) => {
            return Err(PyValueError::new_err(format!(
                "a and b: expected the same number of rows (or one vector of shape (8,)), \
                 got {} and {}",
                a_gf8.len(),
                b_gf8.len()
            )))
        }
    };
    Ok(Pair {
        a: a_gf8,
        b: b_gf8,
        n,
        a_single,
        b_single,
        scalar: a_single && b_single,
    })
}

/// `f` of the arguments `a` and `b` read as a [`Pair`].
fn with_pair<'py, R>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    f: impl FnOnce(&Pair<'_>) -> PyResult<R>,
) -> PyResult<R> {
    let ((va, sa), (vb, sb)) = (one_or_many(a, "a")?, one_or_many(b, "b")?);
    f(&pair(py, &va, sa, &vb, sb)?)
}

fn floats_out<'py>(py: Python<'py>, scalar: bool, out: Vec<f32>) -> PyResult<Bound<'py, PyAny>> {
    if scalar {
        Ok(out[0].into_pyobject(py)?.into_any())
    } else {
        Ok(PyArray1::from_vec(py, out).into_any())
    }
}

/// Dot products of unit vectors.
///
/// Parameters
/// ----------
/// a, b : ndarray, float32, shape (8,) or (N, 8)
///     Row-wise when both are (N, 8); a single (8,) vector against every
///     row of the other (the SIMD one-against-many kernel).
///
/// Returns
/// -------
/// ndarray, float32, shape (N,), or float when both are (8,)
///
/// Raises
/// ------
/// InvalidVectorError
///     An invalid vector. ``ValueError`` for row counts that differ.
///
/// Examples
/// --------
/// >>> import hydron
/// >>> hydron.dot(hydron.E8_ROOTS[0], hydron.E8_ROOTS[:2]).tolist()
/// [0.9999999403953552, 0.0]
#[pyfunction]
pub fn dot<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    with_pair(py, a, b, |p| {
        let out = gil::run_on_vectors(py, p.n, || {
            if p.a.len() == 1 && !p.scalar && p.a_single {
                batch::dot_many(p.a[0], p.b)
            } else if p.b.len() == 1 && !p.scalar && p.b_single {
                batch::dot_many(p.b[0], p.a)
            } else {
                (0..p.n).map(|i| p.a(i).dot(p.b(i))).collect()
            }
        });
        floats_out(py, p.scalar, out)
    })
}

/// Angles (great-circle distances on S⁷) between unit vectors, in radians.
///
/// Parameters
/// ----------
/// a, b : ndarray, float32, shape (8,) or (N, 8)
///     Row-wise, or one vector against many, as :func:`dot`.
///
/// Returns
/// -------
/// ndarray, float32, shape (N,), or float when both are (8,)
///
/// Examples
/// --------
/// >>> import hydron
/// >>> round(hydron.geodesic_distance(hydron.E8_ROOTS[0], hydron.E8_ROOTS[1]), 4)
/// 1.5708
#[pyfunction]
pub fn geodesic_distance<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    with_pair(py, a, b, |p| {
        let out = gil::run_on_vectors(py, p.n, || {
            (0..p.n).map(|i| p.a(i).geodesic_distance(p.b(i))).collect()
        });
        floats_out(py, p.scalar, out)
    })
}

/// Spherical linear interpolation from ``a`` (t = 0) to ``b`` (t = 1).
///
/// Parameters
/// ----------
/// a, b : ndarray, float32, shape (8,) or (N, 8)
///     Row-wise, or one vector against many, as :func:`dot`.
/// t : float
///     Finite; outside [0, 1] extrapolates along the great circle.
///
/// Returns
/// -------
/// ndarray, float32, shape (8,) or (N, 8)
///
/// Examples
/// --------
/// >>> import hydron
/// >>> mid = hydron.slerp(hydron.E8_ROOTS[0], hydron.E8_ROOTS[1], 0.5)
/// >>> mid.shape
/// (8,)
#[pyfunction]
pub fn slerp<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    t: f32,
) -> PyResult<Bound<'py, PyAny>> {
    if !t.is_finite() {
        return Err(PyValueError::new_err(format!(
            "t: expected a finite number, got {t}"
        )));
    }
    with_pair(py, a, b, |p| {
        let out: Vec<Gf8> = gil::run_on_vectors(py, p.n, || {
            (0..p.n).map(|i| p.a(i).slerp(p.b(i), t)).collect()
        });
        let arr = gf8_out(py, out);
        if p.scalar {
            Ok(arr.call_method1("reshape", (8,))?)
        } else {
            Ok(arr.into_any())
        }
    })
}

/// The spherical (Karcher) mean of unit vectors, optionally weighted.
///
/// Parameters
/// ----------
/// points : ndarray, float32, shape (N, 8)
///     N ≥ 1 unit vectors.
/// weights : array_like of float, shape (N,), optional
///     Finite and non-negative.
///
/// Returns
/// -------
/// ndarray, float32, shape (8,)
///
/// Raises
/// ------
/// HydronError
///     No points, or no unique mean (points spread over the sphere).
/// InvalidVectorError
///     An invalid point, or a bad weight (``.index``).
///
/// Examples
/// --------
/// >>> import hydron
/// >>> m = hydron.spherical_mean(hydron.E8_ROOTS[[0, 0]])
/// >>> bool((m == hydron.E8_ROOTS[0]).all())
/// True
#[pyfunction]
#[pyo3(signature = (points, weights = None))]
pub fn spherical_mean<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    weights: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let input = vectors(points, "points")?;
    let gf8 = input.gf8(py)?;
    let mean = match weights {
        None => py.detach(|| Gf8::spherical_mean(gf8)),
        Some(w) => {
            let w = float32_weights(w, gf8.len())?;
            let pairs: Vec<(Gf8, f32)> = gf8.iter().copied().zip(w).collect();
            py.detach(|| Gf8::weighted_spherical_mean(&pairs))
        }
    }
    .map_err(|e| gf8_error(py, e))?;
    vectors_out(py, vec![mean.to_array()]).call_method1("reshape", (8,))
}

/// The weights of `spherical_mean`: one real number per point, as the
/// float32 the mean is computed in. Weights that float32 cannot hold
/// (beyond its range, or so small they would round to zero or lose
/// precision as subnormals) are first all scaled by one power of two,
/// which is exact and leaves the mean unchanged; negative and non-finite
/// weights pass unscaled, for the error that names them.
fn float32_weights(w: &Bound<'_, PyAny>, points: usize) -> PyResult<Vec<f32>> {
    let py = w.py();
    let arr = py.import("numpy")?.getattr("asarray")?.call1((w,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    if arr.ndim() != 1 {
        return Err(PyValueError::new_err(format!(
            "weights: expected one weight per point, shape ({points},), got shape {}",
            arrays::shape_text(arr.shape())
        )));
    }
    if !matches!(arr.dtype().kind(), b'f' | b'i' | b'u' | b'b') {
        return Err(PyTypeError::new_err(format!(
            "weights: expected real numbers, got dtype {}",
            arr.dtype()
        )));
    }
    let wide = arr.call_method1("astype", ("float64",))?;
    let wide: Vec<f64> = wide.cast::<PyArray1<f64>>()?.to_vec()?;
    if wide.len() != points {
        return Err(PyValueError::new_err(format!(
            "weights: expected one weight per point ({points}), got {}",
            wide.len()
        )));
    }
    let usable = |w: f64| w.is_finite() && w > 0.0;
    let narrow_loses = |w: f64| !(f64::from(f32::MIN_POSITIVE)..=f64::from(f32::MAX)).contains(&w);
    // 2^k with 2^-k ≤ max < 2^(1-k): the largest weight lands in [1, 2).
    // Applied as two factors, one after the other: 2^1074 (for a subnormal
    // max) is not a float.
    let k = match wide.iter().copied().filter(|&w| usable(w)).reduce(f64::max) {
        Some(max) if wide.iter().any(|&w| usable(w) && narrow_loses(w)) => {
            -max.log2().floor() as i32
        }
        _ => 0,
    };
    let (half, rest) = (2f64.powi(k / 2), 2f64.powi(k - k / 2));
    Ok(wide
        .into_iter()
        .map(|w| if usable(w) { w * half * rest } else { w } as f32)
        .collect())
}

/// The 240 unit E8 roots in code order, as a new (240, 8) array
/// (``hydron.E8_ROOTS`` is a read-only copy).
#[pyfunction]
pub fn e8_roots(py: Python<'_>) -> Bound<'_, PyArray2<f32>> {
    vectors_out(py, E8_ROOTS.iter().map(|r| r.to_array()).collect())
}

/// Which batch-kernel backend runs: ``"avx2+fma"``, ``"portable"`` or
/// ``"scalar"``.
#[pyfunction]
pub fn backend() -> &'static str {
    batch::backend().name()
}
