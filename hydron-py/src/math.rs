//! The geometry: hydron-core's batch kernels and sphere functions on numpy
//! arrays. Each function converts its arguments (`arrays`), releases the GIL
//! around the Rust call, and converts the result or error back.

use hydron_core::batch::{self, PerRow};
use hydron_core::{BatchError, E8Root, Gf8, Gf8Error, E8_ROOTS};
use numpy::ndarray::Array2;
use numpy::{PyArray1, PyArray2};
use numpy::{PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{self, gf8_out, result_shape, vectors, vectors_out, Vectors};
use crate::errors::{batch_error, codec_error, gf8_error};
use crate::gil;
use crate::policy;

/// Scale vectors onto the unit sphere.
///
/// Parameters
/// ----------
/// vectors : array_like, shape (N, 8) or (8,)
///     Any finite vectors (float32 read in place when C-contiguous; other
///     real numbers converted as ``np.asarray(x, dtype=np.float32)``).
/// policy : {None, "strict", "renormalize", "trusted"}, optional
///     None (the default) scales every vector (zero stays zero), as Rust's
///     ``batch::normalize``. With a policy, the vectors are treated as a
///     decoder treats them: ``"renormalize"`` scales only the vectors that
///     are not unit (unit ones are kept bit for bit), ``"strict"`` checks
///     them and returns a copy, ``"trusted"`` copies them unchecked.
/// out : ndarray, float32, optional
///     Where to write the result (C-contiguous, of the result's shape, not
///     sharing memory with ``vectors``), instead of a new array; returned.
///     Only without ``policy``.
///
/// Returns
/// -------
/// ndarray, float32, shape (N, 8) or (8,)
///     A new array (or ``out``).
///
/// Raises
/// ------
/// InvalidVectorError
///     A NaN or infinite coordinate (``.index``, ``.coordinate``), or with
///     ``policy="strict"`` a vector that is not of unit norm (``.norm``).
/// TypeError, ValueError
///     Not real numbers; not of shape (N, 8) or (8,); a bad ``out``.
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> hydron.normalize(np.array([[0, 3, 0, 4, 0, 0, 0, 0]], np.float32))[0, 1]
/// np.float32(0.6)
/// >>> hydron.normalize([3.0, 4, 0, 0, 0, 0, 0, 0])[:2].tolist()
/// [0.6000000238418579, 0.800000011920929]
#[pyfunction]
#[pyo3(signature = (vectors, *, policy = None, out = None))]
pub fn normalize<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (input, single) = arrays::input(vectors, "vectors")?;
    let arrays = input.arrays();
    match (policy.map(policy::parse).transpose()?, out) {
        (None, Some(out)) => {
            let mut guard =
                arrays::out_array::<f32>(out, &result_shape(single, arrays.len(), &[8]))?;
            let slots = arrays::gf8_slots(guard.as_slice_mut()?);
            gil::run_on_vectors(py, arrays.len(), || batch::normalize_into(arrays, slots))
                .map_err(|e| batch_error(py, e))?;
            Ok(out.clone())
        }
        (None, None) => {
            let out = gil::run_on_vectors(py, arrays.len(), || batch::normalize(arrays))
                .map_err(|e| batch_error(py, e))?;
            single_row(gf8_out(py, out).into_any(), single)
        }
        (Some(_), Some(_)) => Err(PyValueError::new_err(
            "out: not with a policy (normalize(vectors, out=...) scales every vector)",
        )),
        (Some(p), None) => {
            let owned = arrays.to_vec();
            let out = gil::run_on_vectors(py, owned.len(), || p.apply(owned))
                .map_err(|e| codec_error(py, e))?;
            single_row(gf8_out(py, out).into_any(), single)
        }
    }
}

/// `rows` (a new array of one row per vector), as the row itself when the
/// input was a single vector.
fn single_row<'py>(rows: Bound<'py, PyAny>, single: bool) -> PyResult<Bound<'py, PyAny>> {
    if single {
        rows.get_item(0)
    } else {
        Ok(rows)
    }
}

/// Check that every vector is finite and of unit norm, or exactly zero.
///
/// The check is the one every strict decoder makes:
/// ``|‖x‖² − 1| ≤ 2e-5`` with the squared norm summed in float32.
///
/// Parameters
/// ----------
/// vectors : array_like, shape (N, 8) or (8,)
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

/// What `nearest_roots` checks.
#[derive(Clone, Copy)]
enum RootsCheck {
    /// Finite vectors: unit ones as they are, others scaled first.
    Finite,
    /// Unit (or zero) vectors only.
    Strict,
    /// Nothing.
    Trusted,
}

/// Vectors per block of the scratch buffer `roots_into` scales non-unit
/// vectors in (2 MiB).
const SCALE_BLOCK: usize = 1 << 16;

/// The nearest root of each vector of `arrays` into `out`, as `check` says.
fn roots_into(
    arrays: &[[f32; 8]],
    check: RootsCheck,
    out: &mut [E8Root],
) -> Result<(), BatchError> {
    match check {
        RootsCheck::Trusted => {
            batch::nearest_roots_into(Gf8::slice_from_arrays_unchecked(arrays), out);
            Ok(())
        }
        RootsCheck::Strict => batch::nearest_roots_checked_into(arrays, out),
        // Unit vectors in one checked pass; from the first vector that is
        // not unit on (the codes before it are written), through scaling.
        RootsCheck::Finite => match batch::nearest_roots_checked_into(arrays, out) {
            Err(e) if matches!(e.error, Gf8Error::NotUnitNorm { .. }) => {
                roots_of_directions(&arrays[e.index..], e.index, &mut out[e.index..])
            }
            done => done,
        },
    }
}

/// The nearest roots of the directions of `arrays` (the vectors from
/// `offset` on): a vector that is unit (or zero) as it is, any other as
/// `batch::normalize` scales it, in blocks through one scratch buffer.
fn roots_of_directions(
    arrays: &[[f32; 8]],
    offset: usize,
    out: &mut [E8Root],
) -> Result<(), BatchError> {
    let mut scratch = vec![Gf8::ZERO; SCALE_BLOCK.min(arrays.len())];
    for (k, (block, codes)) in arrays
        .chunks(SCALE_BLOCK)
        .zip(out.chunks_mut(SCALE_BLOCK))
        .enumerate()
    {
        let scaled = &mut scratch[..block.len()];
        batch::normalize_into(block, scaled).map_err(|e| BatchError {
            index: e.index + offset + k * SCALE_BLOCK,
            ..e
        })?;
        for (s, raw) in scaled.iter_mut().zip(block) {
            if let Ok(unit) = Gf8::try_new(*raw) {
                *s = unit;
            }
        }
        batch::nearest_roots_into(scaled, codes);
    }
    Ok(())
}

/// The nearest E8 root of each vector's direction, as its code (0..240).
///
/// Closed form, O(8) per vector, in hydron-core's SIMD batch kernel (AVX2
/// when the CPU has it): the root of largest cosine, as a brute-force
/// search over ``E8_ROOTS`` finds it, except that two roots whose cosines
/// differ by less than about 2e-7 are decided by the float32 rounding of
/// their scores (the same on every CPU); on an exact tie the lower code
/// wins. A zero vector gets code 0 when its zeros are positive; a negative
/// zero counts as a minus sign, so ``[-0.0] * 8`` gets code 3.
///
/// Any finite vector has a direction: a vector of unit norm (within
/// ``NORM_TOLERANCE``) or zero is quantized as it is, any other is first
/// scaled as :func:`normalize` scales it, so for such a vector
/// ``nearest_roots(raw) == nearest_roots(normalize(raw))``.
///
/// Parameters
/// ----------
/// vectors : array_like, shape (N, 8) or (8,)
///     Finite vectors.
/// strict : bool, default False
///     Refuse a vector that is not of unit norm (or zero), instead of
///     taking its direction.
/// trusted : bool, default False
///     Skip every check, and the scaling: the vectors must be unit or zero
///     (garbage in, a meaningless but harmless code out).
/// out : ndarray, uint8, optional
///     Where to write the codes (C-contiguous, shape (N,), or () for one
///     vector), instead of a new array; returned.
///
/// Returns
/// -------
/// ndarray, uint8, shape (N,), or numpy.uint8 for one (8,) vector
///     ``E8_ROOTS[codes]`` are the roots.
///
/// Raises
/// ------
/// InvalidVectorError
///     A NaN or infinite coordinate; with ``strict``, a vector that is not
///     of unit norm (``.norm``).
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> hydron.nearest_roots(hydron.E8_ROOTS[[5, 200]]).tolist()
/// [5, 200]
/// >>> int(hydron.nearest_roots(3 * hydron.E8_ROOTS[7]))
/// 7
#[pyfunction]
#[pyo3(signature = (vectors, *, strict = false, trusted = false, out = None))]
pub fn nearest_roots<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    strict: bool,
    trusted: bool,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let check = match (strict, trusted) {
        (true, true) => {
            return Err(PyValueError::new_err(
                "strict and trusted: one or the other (strict checks every vector, \
                 trusted none)",
            ))
        }
        (true, false) => RootsCheck::Strict,
        (false, true) => RootsCheck::Trusted,
        (false, false) => RootsCheck::Finite,
    };
    let (input, single) = arrays::input(vectors, "vectors")?;
    let arrays = input.arrays();
    if let Some(out) = out {
        let mut guard = arrays::out_array::<u8>(out, &result_shape(single, arrays.len(), &[]))?;
        let slots = arrays::root_slots(guard.as_slice_mut()?);
        gil::run_on_vectors(py, arrays.len(), || roots_into(arrays, check, slots))
            .map_err(|e| batch_error(py, e))?;
        return Ok(out.clone());
    }
    let mut codes = vec![0u8; arrays.len()];
    let slots = arrays::root_slots(&mut codes);
    gil::run_on_vectors(py, arrays.len(), || roots_into(arrays, check, slots))
        .map_err(|e| batch_error(py, e))?;
    single_row(PyArray1::from_vec(py, codes).into_any(), single)
}

/// The unit E8 roots of codes.
///
/// Parameters
/// ----------
/// codes : array_like of int, shape (N,), or one code
///     Each in 0..240 (a uint8 array, or any integers).
///
/// Returns
/// -------
/// ndarray, float32, shape (N, 8), or (8,) for one code
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
/// >>> hydron.codes_to_vectors(0).shape
/// (8,)
#[pyfunction]
pub fn codes_to_vectors<'py>(
    py: Python<'py>,
    codes: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (codes, single) = arrays::codes_or_one(codes, "codes")?;
    let out: Vec<[f32; 8]> = gil::run_on_vectors(py, codes.len(), || {
        // A zeroed output (huge pages when large), then filled.
        let mut out: Vec<[f32; 8]> = hydron_core::huge::zeroed_vec(codes.len());
        for (slot, &c) in out.iter_mut().zip(codes.iter()) {
            *slot = E8_ROOTS[usize::from(c)].to_array();
        }
        out
    });
    single_row(vectors_out(py, out).into_any(), single)
}

/// The nearest point of the E8 lattice to each point (Conway–Sloane).
///
/// Parameters
/// ----------
/// points : array_like, shape (N, 8) or (8,)
///     Any finite points with ``|x_i| ≤ 4194304``.
/// out : ndarray, int32, optional
///     Where to write the result (C-contiguous, of the result's shape),
///     instead of a new array; returned.
///
/// Returns
/// -------
/// ndarray, int32, shape (N, 8) or (8,)
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
#[pyo3(signature = (points, *, out = None))]
pub fn nearest_lattice_points<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (input, single) = arrays::input(points, "points")?;
    let arrays = input.arrays();
    if let Some(out) = out {
        let mut guard = arrays::out_array::<i32>(out, &result_shape(single, arrays.len(), &[8]))?;
        let slots = arrays::point_slots(guard.as_slice_mut()?);
        gil::run_on_vectors(py, arrays.len(), || {
            batch::nearest_lattice_points_into(arrays, slots)
        })
        .map_err(|e| batch_error(py, e))?;
        return Ok(out.clone());
    }
    let mut doubled: Vec<i32> = hydron_core::huge::zeroed_vec(8 * arrays.len());
    let slots = arrays::point_slots(&mut doubled);
    gil::run_on_vectors(py, arrays.len(), || {
        batch::nearest_lattice_points_into(arrays, slots)
    })
    .map_err(|e| batch_error(py, e))?;
    let array = Array2::from_shape_vec((arrays.len(), 8), doubled)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    single_row(PyArray2::from_owned_array(py, array).into_any(), single)
}

/// Two arguments that are each one vector `(8,)`, one row `(1, 8)` or N
/// vectors `(N, 8)`, checked; one vector or row pairs with every row of
/// the other (numpy's broadcasting).
struct Pair<'a> {
    a: &'a [Gf8],
    b: &'a [Gf8],
    n: usize,
    /// Both were `(8,)`: the result is one value.
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

/// The number of rows `counts` broadcast to (one row pairs with any
/// number), or `None` when two of them differ and neither is 1.
fn broadcast(counts: &[usize]) -> Option<usize> {
    let n = counts.iter().copied().find(|&c| c != 1).unwrap_or(1);
    counts.iter().all(|&c| c == 1 || c == n).then_some(n)
}

fn pair<'a>(
    py: Python<'_>,
    a: &'a Vectors<'_>,
    a_single: bool,
    b: &'a Vectors<'_>,
    b_single: bool,
) -> PyResult<Pair<'a>> {
    let (a_gf8, b_gf8) = (a.gf8(py)?, b.gf8(py)?);
    let Some(n) = broadcast(&[a_gf8.len(), b_gf8.len()]) else {
        return Err(PyValueError::new_err(format!(
            "a and b: {} and {} rows do not broadcast (expected the same number of rows, \
             or one vector)",
            a_gf8.len(),
            b_gf8.len()
        )));
    };
    Ok(Pair {
        a: a_gf8,
        b: b_gf8,
        n,
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
    let ((va, sa), (vb, sb)) = (arrays::input(a, "a")?, arrays::input(b, "b")?);
    f(&pair(py, &va, sa, &vb, sb)?)
}

/// One float per row of `p` from `row`, into `out` (checked) or a new
/// array; a numpy float32 scalar when both arguments were single vectors.
fn floats_of<'py>(
    py: Python<'py>,
    p: &Pair<'_>,
    out: Option<&Bound<'py, PyAny>>,
    fill: impl Fn(&Pair<'_>, &mut [f32]) + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(out) = out {
        let mut guard = arrays::out_array::<f32>(out, &result_shape(p.scalar, p.n, &[]))?;
        let slots = guard.as_slice_mut()?;
        gil::run_on_vectors(py, p.n, || fill(p, slots));
        return Ok(out.clone());
    }
    let mut floats = vec![0f32; p.n];
    gil::run_on_vectors(py, p.n, || fill(p, &mut floats));
    single_row(PyArray1::from_vec(py, floats).into_any(), p.scalar)
}

/// Dot products of unit vectors.
///
/// Parameters
/// ----------
/// a, b : array_like, shape (N, 8), (1, 8) or (8,)
///     Row-wise when both are (N, 8); one vector (8,) or row (1, 8) against
///     every row of the other (the SIMD one-against-many kernel), as numpy
///     broadcasts.
/// out : ndarray, float32, optional
///     Where to write the result (C-contiguous, of the result's shape),
///     instead of a new array; returned.
///
/// Returns
/// -------
/// ndarray, float32, shape (N,), or numpy.float32 when both are (8,)
///
/// Raises
/// ------
/// InvalidVectorError
///     An invalid vector. ``ValueError`` for row counts that do not
///     broadcast.
///
/// Examples
/// --------
/// >>> import hydron
/// >>> hydron.dot(hydron.E8_ROOTS[0], hydron.E8_ROOTS[:2]).tolist()
/// [0.9999999403953552, 0.0]
#[pyfunction]
#[pyo3(signature = (a, b, *, out = None))]
pub fn dot<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    with_pair(py, a, b, |p| {
        floats_of(py, p, out, |p, out| {
            if p.a.len() == 1 && p.n > 1 {
                batch::dot_into(p.a[0], p.b, out);
            } else if p.b.len() == 1 && p.n > 1 {
                batch::dot_into(p.b[0], p.a, out);
            } else {
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = p.a(i).dot(p.b(i));
                }
            }
        })
    })
}

/// Angles (great-circle distances on S⁷) between unit vectors, in radians.
///
/// The stable ``2·atan2(‖a − b‖, ‖a + b‖)``, by the SIMD batch kernels
/// (across threads for large inputs), which check the vectors in the same
/// pass: in float32 arithmetic, within 5 ulp of the exact angle (0.5 on
/// average), and in float64 within 1e-3 rad of 0 and π, within 1 ulp;
/// unlike ``arccos`` of the dot product, accurate near 0 and π. A zero
/// vector is π/2 from any unit vector.
///
/// Parameters
/// ----------
/// a, b : array_like, shape (N, 8), (1, 8) or (8,)
///     Row-wise, or one vector against many, as :func:`dot`.
/// out : ndarray, float32, optional
///     Where to write the result, as for :func:`dot`.
///
/// Returns
/// -------
/// ndarray, float32, shape (N,), or numpy.float32 when both are (8,)
///
/// Examples
/// --------
/// >>> import hydron
/// >>> round(float(hydron.geodesic_distance(hydron.E8_ROOTS[0], hydron.E8_ROOTS[1])), 4)
/// 1.5708
#[pyfunction]
#[pyo3(signature = (a, b, *, out = None))]
pub fn geodesic_distance<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let ((va, sa), (vb, sb)) = (arrays::input(a, "a")?, arrays::input(b, "b")?);
    let (ra, rb) = (va.arrays(), vb.arrays());
    // Invalid vectors are reported before a shape that does not broadcast
    // or a bad `out` (as every pairwise function does): on those errors,
    // `pair` checks the vectors first.
    let Some(n) = broadcast(&[ra.len(), rb.len()]) else {
        return Err(pair(py, &va, sa, &vb, sb)
            .err()
            .unwrap_or_else(|| PyValueError::new_err("a and b: row counts do not broadcast")));
    };
    let scalar = sa && sb;
    // The vectors are checked in the kernel's pass (one read of memory):
    // the errors are those of checking `a`, then `b`.
    let run = |out: &mut [f32]| {
        batch::geodesic_distances_checked_into(per_row(ra), per_row(rb), out).map_err(|e| e.error)
    };
    if let Some(out) = out {
        let mut guard = match arrays::out_array::<f32>(out, &result_shape(scalar, n, &[])) {
            Ok(guard) => guard,
            Err(e) => return Err(pair(py, &va, sa, &vb, sb).err().unwrap_or(e)),
        };
        let slots = guard.as_slice_mut()?;
        gil::run_on_vectors(py, n, || run(slots)).map_err(|e| batch_error(py, e))?;
        return Ok(out.clone());
    }
    // Huge pages (where advised), as the batch kernels' own outputs.
    let mut floats: Vec<f32> = hydron_core::huge::zeroed_vec(n);
    gil::run_on_vectors(py, n, || run(&mut floats)).map_err(|e| batch_error(py, e))?;
    single_row(PyArray1::from_vec(py, floats).into_any(), scalar)
}

/// An operand of `n` rows as the batch kernels take it: one row stands
/// for every row (numpy's broadcasting).
fn per_row<T: Copy>(values: &[T]) -> PerRow<'_, T> {
    match values {
        [one] => PerRow::All(*one),
        many => PerRow::Each(many),
    }
}

/// The interpolation parameter of `slerp`: one number, or one per row
/// (converted, or a float32 array's own memory).
enum Ts<'py> {
    One(f32),
    Many(Vec<f32>),
    Borrowed(numpy::PyReadonlyArray1<'py, f32>),
}

impl Ts<'_> {
    /// The values, one per row (or one for all).
    fn as_slice(&self) -> PyResult<&[f32]> {
        match self {
            Ts::One(t) => Ok(std::slice::from_ref(t)),
            Ts::Many(ts) => Ok(ts),
            Ts::Borrowed(ts) => Ok(ts.as_slice()?),
        }
    }
}

/// The error for a `t` that is not finite in float32 (`wide` its value as
/// given; `at` its index, for an array).
fn infinite_t(wide: f64, at: Option<usize>) -> PyErr {
    PyValueError::new_err(format!(
        "t: expected finite numbers (within float32's range), got {wide}{}",
        at.map_or_else(String::new, |i| format!(" at t[{i}]"))
    ))
}

/// Reads `t`: a number, or a one-dimensional array of numbers (converted
/// to float32, except a C-contiguous float32 array, which is read in
/// place), each finite.
fn interpolation_parameter<'py>(t: &Bound<'py, PyAny>) -> PyResult<Ts<'py>> {
    let py = t.py();
    arrays::refuse_masked(t, "t")?;
    if let Ok(array) = t.cast::<PyArray1<f32>>() {
        if array.is_c_contiguous() {
            let ts = array.readonly();
            if let Some(i) = ts.as_slice()?.iter().position(|x| !x.is_finite()) {
                return Err(infinite_t(f64::from(ts.as_slice()?[i]), Some(i)));
            }
            return Ok(Ts::Borrowed(ts));
        }
    }
    let np = py.import("numpy")?;
    let arr = np.getattr("asarray")?.call1((t,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    if !matches!(arr.dtype().kind(), b'f' | b'i' | b'u' | b'b') {
        return Err(PyTypeError::new_err(format!(
            "t: expected a real number or an array of them, got dtype {}",
            arr.dtype()
        )));
    }
    let wide: Vec<f64> = arr
        .call_method1("astype", ("float64",))?
        .call_method1("reshape", (-1,))?
        .cast::<PyArray1<f64>>()?
        .to_vec()?;
    let narrow: Vec<f32> = wide.iter().map(|&x| x as f32).collect();
    if let Some(i) = narrow.iter().position(|x| !x.is_finite()) {
        return Err(infinite_t(wide[i], (arr.ndim() != 0).then_some(i)));
    }
    match arr.ndim() {
        0 => Ok(Ts::One(narrow[0])),
        1 => Ok(Ts::Many(narrow)),
        _ => Err(PyValueError::new_err(format!(
            "t: expected a number or a one-dimensional array, got shape {}",
            arrays::shape_text(arr.shape())
        ))),
    }
}

/// Spherical linear interpolation from ``a`` (t = 0) to ``b`` (t = 1).
///
/// Computed in float64 by the SIMD batch kernels (across threads for large
/// inputs, the vectors checked in the same pass) and rounded once; the cases of Rust's ``Gf8::slerp`` (opposite
/// vectors follow a fixed half circle, a zero vector gives the other's
/// direction).
///
/// Parameters
/// ----------
/// a, b : array_like, shape (N, 8), (1, 8) or (8,)
///     Row-wise, or one vector against many, as :func:`dot`.
/// t : float or array_like of float, shape (N,)
///     Finite, and clamped to [0, 1] as Rust's ``Gf8::slerp`` clamps it:
///     t ≤ 0 gives ``a`` and t ≥ 1 gives ``b``, bit for bit. An array
///     gives one parameter per row, broadcast with ``a`` and ``b``.
///
/// Returns
/// -------
/// ndarray, float32, shape (N, 8), or (8,) when ``a`` and ``b`` are (8,)
/// and ``t`` is a number
///
/// Examples
/// --------
/// >>> import hydron
/// >>> mid = hydron.slerp(hydron.E8_ROOTS[0], hydron.E8_ROOTS[1], 0.5)
/// >>> mid.shape
/// (8,)
/// >>> hydron.slerp(hydron.E8_ROOTS[0], hydron.E8_ROOTS[1], [0, 0.5, 1]).shape
/// (3, 8)
#[pyfunction]
pub fn slerp<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    t: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let ts = interpolation_parameter(t)?;
    let one_t = matches!(ts, Ts::One(_));
    let ((va, sa), (vb, sb)) = (arrays::input(a, "a")?, arrays::input(b, "b")?);
    let (ra, rb, ts) = (va.arrays(), vb.arrays(), ts.as_slice()?);
    // Invalid vectors are reported before row counts that do not
    // broadcast (as every pairwise function does): on that error, `pair`
    // checks the vectors first.
    let Some(n) = broadcast(&[ra.len(), rb.len(), ts.len()]) else {
        pair(py, &va, sa, &vb, sb)?;
        return Err(PyValueError::new_err(format!(
            "a, b and t: {}, {} and {} rows do not broadcast",
            ra.len(),
            rb.len(),
            ts.len()
        )));
    };
    // The vectors are checked a block at a time just before the kernel
    // reads them (one read of memory): the errors are those of checking
    // `a`, then `b`.
    let mut out: Vec<Gf8> = hydron_core::huge::zeroed_vec(n);
    gil::run_on_vectors(py, n, || {
        batch::slerp_checked_into(per_row(ra), per_row(rb), per_row(ts), &mut out)
    })
    .map_err(|e| batch_error(py, e.error))?;
    single_row(gf8_out(py, out).into_any(), sa && sb && one_t)
}

/// The spherical (Karcher) mean of unit vectors, optionally weighted.
///
/// Parameters
/// ----------
/// points : array_like, shape (N, 8) or (8,)
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
    arrays::refuse_masked(w, "weights")?;
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
