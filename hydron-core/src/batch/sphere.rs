//! The sphere kernels: geodesic distances and slerp over many pairs, each
//! operand one value for every row or one per row ([`PerRow`]).
//!
//! The arithmetic is in `simd/sphere.rs`, written once for every backend
//! (`f32` lanes for most geodesic distances, `f64` lanes from the `f32`
//! inputs for the rest and for slerp, a polynomial `atan`, `sin` and `cos`,
//! no FMA), so every [`Backend`] gives the same bits; see
//! [`geodesic_distances_into`] and [`slerp_into`] for how the results
//! relate to the per-vector methods.

use super::Backend;
use super::Kernels;
#[cfg(feature = "parallel")]
use crate::parallel::{GEODESIC_MIN_VECTORS, SLERP_MIN_VECTORS};
use crate::Gf8;

/// Without `parallel` no kernel splits across threads: the thresholds of
/// [`run_checked`]'s callers are never reached.
#[cfg(not(feature = "parallel"))]
const GEODESIC_MIN_VECTORS: usize = usize::MAX;
#[cfg(not(feature = "parallel"))]
const SLERP_MIN_VECTORS: usize = usize::MAX;

/// One operand of a pairwise kernel: the same value for every row (one
/// vector against many, as numpy broadcasts a `(8,)` array), or one value
/// per row.
///
/// `From` makes one from a value or a slice, so `q.into()` and
/// `many.as_slice().into()` both fit.
///
/// ```
/// use hydron_core::batch::PerRow;
/// use hydron_core::Gf8;
///
/// let q = Gf8::from_scalar(1.0)?;
/// let many = vec![q; 3];
/// assert_eq!(PerRow::from(q), PerRow::All(q));
/// assert_eq!(PerRow::from(&many[..]), PerRow::Each(&many));
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum PerRow<'a, T> {
    /// This value in every row.
    All(T),
    /// Row `i` takes element `i`; the slice has one element per row.
    Each(&'a [T]),
}

impl<T> From<T> for PerRow<'_, T> {
    #[inline]
    fn from(value: T) -> Self {
        PerRow::All(value)
    }
}

impl<'a, T> From<&'a [T]> for PerRow<'a, T> {
    #[inline]
    fn from(values: &'a [T]) -> Self {
        PerRow::Each(values)
    }
}

impl<'a, T: Copy> PerRow<'a, T> {
    /// The value of row `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> T {
        match self {
            PerRow::All(value) => *value,
            PerRow::Each(values) => values[i],
        }
    }

    /// Rows `start..start + len` (for the SIMD kernels' tails and the
    /// parallel split).
    #[inline]
    #[cfg_attr(not(any(feature = "simd", feature = "parallel")), allow(dead_code))]
    pub(crate) fn rows(self, start: usize, len: usize) -> PerRow<'a, T> {
        match self {
            PerRow::All(value) => PerRow::All(value),
            PerRow::Each(values) => PerRow::Each(&values[start..start + len]),
        }
    }

    /// The number of rows, for [`PerRow::Each`].
    #[inline]
    fn len(&self) -> Option<usize> {
        match self {
            PerRow::All(_) => None,
            PerRow::Each(values) => Some(values.len()),
        }
    }
}

/// Panics unless every per-row operand has `rows` rows.
#[inline]
#[track_caller]
fn assert_rows(rows: usize, operands: &[(&str, Option<usize>)]) {
    for &(name, len) in operands {
        if let Some(len) = len {
            assert!(
                len == rows,
                "batch output has length {rows}, but {name} has {len} rows"
            );
        }
    }
}

/// The number of rows of the operands: that of the per-row ones (which
/// must agree), or 1 when every operand is one value.
#[track_caller]
fn row_count(operands: &[(&str, Option<usize>)]) -> usize {
    let rows = operands.iter().find_map(|(_, len)| *len).unwrap_or(1);
    assert_rows(rows, operands);
    rows
}

impl Backend {
    /// [`geodesic_distances_into`] on this backend (always on the calling
    /// thread).
    ///
    /// # Panics
    ///
    /// If a [`PerRow::Each`] operand does not have `out.len()` rows.
    ///
    /// ```
    /// use hydron_core::batch::{self, PerRow};
    /// use hydron_core::Gf8;
    ///
    /// let q = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
    /// let many = vec![-q; 11];
    /// let mut expected = [0.0; 11];
    /// batch::Backend::Scalar.geodesic_distances_into(PerRow::All(q), PerRow::Each(&many), &mut expected);
    /// for backend in batch::backends() {
    ///     let mut out = [0.0; 11];
    ///     backend.geodesic_distances_into(q.into(), many.as_slice().into(), &mut out);
    ///     assert_eq!(out, expected, "{backend}");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[track_caller]
    pub fn geodesic_distances_into(self, a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>, out: &mut [f32]) {
        assert_rows(out.len(), &[("a", a.len()), ("b", b.len())]);
        self.geodesic_rows(a, b, out);
    }

    /// The geodesic kernel of this backend, lengths checked. (A vector
    /// built unchecked that fails `Gf8::check` leaves its row, and those
    /// after it, unspecified.)
    #[inline]
    fn geodesic_rows(self, a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>, out: &mut [f32]) {
        let _all_valid = self.geodesic_checked_rows(as_rows(a), as_rows(b), out);
    }

    /// The geodesic kernel of this backend on rows it checks as it goes,
    /// lengths checked: `false` if a row fails `Gf8::check` (`out` is then
    /// unspecified).
    #[inline]
    fn geodesic_checked_rows(
        self,
        a: PerRow<'_, [f32; 8]>,
        b: PerRow<'_, [f32; 8]>,
        out: &mut [f32],
    ) -> bool {
        match self.kernels() {
            Kernels::Scalar => crate::simd::sphere::geodesic_distances_from(a, b, out),
            #[cfg(feature = "simd")]
            Kernels::Portable => crate::simd::portable::geodesic_distances_into(a, b, out),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.geodesic_distances_into(a, b, out),
        }
    }

    /// [`slerp_into`] on this backend (always on the calling thread).
    ///
    /// # Panics
    ///
    /// If a [`PerRow::Each`] operand does not have `out.len()` rows.
    ///
    /// ```
    /// use hydron_core::batch::{self, PerRow};
    /// use hydron_core::Gf8;
    ///
    /// let a = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
    /// let b = Gf8::normalize([8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0])?;
    /// let ts: Vec<f32> = (0..=10).map(|i| i as f32 / 10.0).collect();
    /// let mut expected = vec![Gf8::ZERO; ts.len()];
    /// batch::Backend::Scalar.slerp_into(a.into(), b.into(), PerRow::Each(&ts), &mut expected);
    /// for backend in batch::backends() {
    ///     let mut out = vec![Gf8::ZERO; ts.len()];
    ///     backend.slerp_into(a.into(), b.into(), PerRow::Each(&ts), &mut out);
    ///     assert_eq!(out, expected, "{backend}");
    /// }
    /// assert_eq!((expected[0], expected[10]), (a, b));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[track_caller]
    pub fn slerp_into(
        self,
        a: PerRow<'_, Gf8>,
        b: PerRow<'_, Gf8>,
        t: PerRow<'_, f32>,
        out: &mut [Gf8],
    ) {
        assert_rows(out.len(), &[("a", a.len()), ("b", b.len()), ("t", t.len())]);
        self.slerp_rows(a, b, t, out);
    }

    /// The slerp kernel of this backend, lengths checked.
    #[inline]
    fn slerp_rows(
        self,
        a: PerRow<'_, Gf8>,
        b: PerRow<'_, Gf8>,
        t: PerRow<'_, f32>,
        out: &mut [Gf8],
    ) {
        let _all_valid = self.slerp_checked_rows(as_rows(a), as_rows(b), t, out);
    }

    /// The slerp kernel of this backend on rows it checks as it goes,
    /// lengths checked: `false` if a row fails `Gf8::check` (`out` is then
    /// unspecified).
    #[inline]
    fn slerp_checked_rows(
        self,
        a: PerRow<'_, [f32; 8]>,
        b: PerRow<'_, [f32; 8]>,
        t: PerRow<'_, f32>,
        out: &mut [Gf8],
    ) -> bool {
        match self.kernels() {
            Kernels::Scalar => crate::simd::sphere::slerp_from(a, b, t, out),
            #[cfg(feature = "simd")]
            Kernels::Portable => crate::simd::portable::slerp_into(a, b, t, out),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.slerp_into(a, b, t, out),
        }
    }
}

/// The geodesic distance (angle, in radians, in `[0, π]`) of each pair of
/// rows of `a` and `b`, into `out`: pairwise when both are
/// [`PerRow::Each`], one vector against many when one is [`PerRow::All`].
///
/// The semantics are those of [`Gf8::geodesic_distance`]: the stable
/// `2·atan2(‖â − b̂‖, ‖â + b̂‖)` of the rescaled unit vectors; π/2 between
/// [`Gf8::ZERO`] and a unit vector, 0 between two zeros, exactly 0 for
/// equal vectors. Pairs more than about 1e-3 rad from 0 and π are computed
/// in `f32` (eight pairs to an AVX2 register, the lengths matched to first
/// order, a polynomial `atan`): within 5 ulp of `f32` of the exact angle
/// (3.5 at worst, 0.5 on average, over sweeps of millions of pairs). The others
/// are computed in `f64` and rounded once: within 1 ulp of `f32` of
/// [`Gf8::geodesic_distance`] (equal to it but for values within about
/// 1e-13, relative, of an `f32` rounding boundary). Every backend gives
/// the same bits.
///
/// With the `parallel` feature, from
/// `parallel::GEODESIC_MIN_VECTORS` rows on, the rows
/// are split across threads (same results).
///
/// # Panics
///
/// If a [`PerRow::Each`] operand does not have `out.len()` rows.
///
/// ```
/// use hydron_core::batch::{self, PerRow};
/// use hydron_core::Gf8;
///
/// let q = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
/// let many = [q, -q, Gf8::try_new([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?, Gf8::ZERO];
/// let mut out = [0.0; 4];
/// batch::geodesic_distances_into(PerRow::All(q), PerRow::Each(&many), &mut out);
/// let pi = core::f32::consts::PI;
/// assert_eq!(out, [0.0, pi, pi / 2.0, pi / 2.0]);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[track_caller]
pub fn geodesic_distances_into(a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>, out: &mut [f32]) {
    assert_rows(out.len(), &[("a", a.len()), ("b", b.len())]);
    let backend = super::backend();
    #[cfg(feature = "parallel")]
    crate::parallel::split_rows(out, crate::parallel::GEODESIC_MIN_VECTORS, |start, out| {
        backend.geodesic_rows(a.rows(start, out.len()), b.rows(start, out.len()), out)
    });
    #[cfg(not(feature = "parallel"))]
    backend.geodesic_rows(a, b, out);
}

/// The geodesic distances of [`geodesic_distances_into`] (allocating): one
/// per row of the [`PerRow::Each`] operands, or one if both are
/// [`PerRow::All`].
///
/// # Panics
///
/// If `a` and `b` are both [`PerRow::Each`], of different lengths.
///
/// ```
/// use hydron_core::batch;
/// use hydron_core::Gf8;
///
/// let a = vec![Gf8::normalize([1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?; 3];
/// let b = vec![Gf8::normalize([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?; 3];
/// let d = batch::geodesic_distances(a.as_slice().into(), b.as_slice().into());
/// assert!((d[2] - core::f32::consts::FRAC_PI_4).abs() < 1e-7);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
#[track_caller]
pub fn geodesic_distances(a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>) -> Vec<f32> {
    let rows = row_count(&[("a", a.len()), ("b", b.len())]);
    let mut out: Vec<f32> = crate::huge::zeroed_vec(rows);
    geodesic_distances_into(a, b, &mut out);
    out
}

/// Spherical linear interpolation of each row, into `out`: row `i` is
/// `a_i.slerp(b_i, t_i)`, each operand one value for every row or one per
/// row ([`PerRow`]).
///
/// The cases are those of [`Gf8::slerp`], in every row: `t` clamped to
/// `[0, 1]` (NaN counts as 0), `t = 0` gives `a` and `t = 1` gives `b` bit
/// for bit, equal inputs give `a`; nearly parallel inputs (perpendicular
/// part below 1e-12) and a [`Gf8::ZERO`] input take the normalized linear
/// interpolation; opposite inputs follow the great circle through `J·a`.
/// Computed in `f64` and rounded once, with polynomial `atan`, `asin`,
/// `sin` and `cos` (within 2 ulp of `f64` of libm's); pairs more than
/// 0.0141 rad from 0 and π take the textbook form
/// `(sin((1 − t)θ)·â + sin(tθ)·b̂)`, rescaled to unit length, which is
/// well conditioned there, and the others `Gf8::slerp`'s. Each coordinate is
/// within 1 ulp of `f32` of [`Gf8::slerp`]'s, and the result has unit
/// norm. (Nearly opposite inputs are the exception: the direction of their
/// short perpendicular part is the rounding of either computation divided
/// by its length, so the two may differ by about 1e-14 / sin θ.) Every
/// backend gives the same bits.
///
/// With the `parallel` feature, from
/// `parallel::SLERP_MIN_VECTORS` rows on, the rows are
/// split across threads (same results).
///
/// # Panics
///
/// If a [`PerRow::Each`] operand does not have `out.len()` rows.
///
/// ```
/// use hydron_core::batch::{self, PerRow};
/// use hydron_core::Gf8;
///
/// let a = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
/// let b = Gf8::try_new([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
/// let mut path = vec![Gf8::ZERO; 5];
/// batch::slerp_into(a.into(), b.into(), PerRow::Each(&[0.0, 0.25, 0.5, 0.75, 1.0]), &mut path);
/// assert_eq!((path[0], path[4]), (a, b));
/// assert!((path[2].dot(a.slerp(b, 0.5)) - 1.0).abs() < 1e-7);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[track_caller]
pub fn slerp_into(a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>, t: PerRow<'_, f32>, out: &mut [Gf8]) {
    assert_rows(out.len(), &[("a", a.len()), ("b", b.len()), ("t", t.len())]);
    let backend = super::backend();
    #[cfg(feature = "parallel")]
    crate::parallel::split_rows(out, crate::parallel::SLERP_MIN_VECTORS, |start, out| {
        let len = out.len();
        backend.slerp_rows(
            a.rows(start, len),
            b.rows(start, len),
            t.rows(start, len),
            out,
        );
    });
    #[cfg(not(feature = "parallel"))]
    backend.slerp_rows(a, b, t, out);
}

/// The interpolated vectors of [`slerp_into`] (allocating): one per row of
/// the [`PerRow::Each`] operands, or one if all are [`PerRow::All`].
///
/// # Panics
///
/// If two [`PerRow::Each`] operands have different lengths.
///
/// ```
/// use hydron_core::batch::{self, PerRow};
/// use hydron_core::Gf8;
///
/// let a = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
/// let many = vec![a; 4];
/// let out = batch::slerp(a.into(), PerRow::Each(&many), PerRow::All(0.3));
/// assert_eq!(out, many);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
#[track_caller]
pub fn slerp(a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>, t: PerRow<'_, f32>) -> Vec<Gf8> {
    let rows = row_count(&[("a", a.len()), ("b", b.len()), ("t", t.len())]);
    let mut out: Vec<Gf8> = crate::huge::zeroed_vec(rows);
    slerp_into(a, b, t, &mut out);
    out
}

/// The operand of a pairwise kernel that holds a bad vector.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Operand {
    /// The first, `a`.
    A,
    /// The second, `b`.
    B,
}

impl core::fmt::Display for Operand {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Operand::A => "a",
            Operand::B => "b",
        })
    }
}

/// A bad vector in an operand of [`geodesic_distances_checked_into`] or
/// [`slerp_checked_into`]: the
/// operand, and what [`validate`](super::validate) says about it (its first
/// bad vector; index 0 for a [`PerRow::All`] operand).
///
/// ```
/// use hydron_core::batch::{self, Operand, PerRow};
/// use hydron_core::Gf8Error;
///
/// let good = [[0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]; 3];
/// let mut bad = good;
/// bad[2][4] = f32::NAN;
/// let mut out = [0.0; 3];
/// let err = batch::geodesic_distances_checked_into(PerRow::Each(&good), PerRow::Each(&bad), &mut out)
///     .unwrap_err();
/// assert_eq!(err.operand, Operand::B);
/// assert_eq!((err.error.index, err.error.error), (2, Gf8Error::NotANumber { coordinate: 4 }));
/// assert_eq!(err.to_string(), "b: vector 2: coordinate 4 is NaN");
/// ```
#[derive(Clone, Copy, PartialEq, Debug, thiserror::Error)]
#[error("{operand}: {error}")]
pub struct OperandError {
    /// The operand that holds the bad vector.
    pub operand: Operand,
    /// Its first bad vector, as [`validate`](super::validate) reports it.
    pub error: crate::BatchError,
}

/// Rows per block of [`geodesic_distances_checked_into`] and
/// [`slerp_checked_into`]: between blocks a thread looks whether another
/// has found a bad vector.
const CHECK_BLOCK: usize = 4096;

/// The geodesic distances of [`geodesic_distances_into`] for coordinates
/// that have not been checked (a numpy array, a mapped file): each operand
/// is checked as [`validate`](super::validate) checks it, in the same pass.
///
/// The kernel checks each pair of rows as it measures them (its squared
/// norms are those `Gf8::check` tests), so each vector is read from memory
/// once and checked at no extra cost. On error, the result is exactly that of
/// validating `a`, then `b`: the first bad vector of `a` if it has one,
/// else that of `b`; `out` is then unspecified. With the `parallel`
/// feature the blocks are split across threads, as in
/// [`geodesic_distances_into`].
///
/// # Panics
///
/// If a [`PerRow::Each`] operand does not have `out.len()` rows.
///
/// ```
/// use hydron_core::batch::{self, PerRow};
/// use hydron_core::Gf8;
///
/// let a = [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]; 5];
/// let b = [[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]; 5];
/// let mut out = [0.0; 5];
/// batch::geodesic_distances_checked_into(PerRow::Each(&a), PerRow::All(b[0]), &mut out)?;
/// assert_eq!(out, [core::f32::consts::FRAC_PI_2; 5]);
/// # Ok::<(), hydron_core::batch::OperandError>(())
/// ```
#[track_caller]
pub fn geodesic_distances_checked_into(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    out: &mut [f32],
) -> Result<(), OperandError> {
    assert_rows(out.len(), &[("a", a.len()), ("b", b.len())]);
    let backend = super::backend();
    run_checked(a, b, out, GEODESIC_MIN_VECTORS, |first, out| {
        let len = out.len();
        backend.geodesic_checked_rows(a.rows(first, len), b.rows(first, len), out)
    })
}

/// The driver of the checked kernels: `kernel(first, block)` fills
/// `block`, the rows `first..` of `out` ([`CHECK_BLOCK`] at most), and says
/// whether every row it read passed `Gf8::check`. A single vector of `a`
/// or `b` is checked here first; with the `parallel` feature the blocks
/// are split across threads from `min_vectors` rows on, and a failed block
/// stops the others. On a failed check, the error of validating `a`, then
/// `b`.
fn run_checked<T: Send>(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    out: &mut [T],
    min_vectors: usize,
    kernel: impl Fn(usize, &mut [T]) -> bool + Sync,
) -> Result<(), OperandError> {
    use core::sync::atomic::{AtomicBool, Ordering};
    let whole_ok = |v: PerRow<'_, [f32; 8]>| match v {
        PerRow::All(v) => Gf8::check(&v).is_ok(),
        PerRow::Each(_) => true,
    };
    let failed = AtomicBool::new(!(whole_ok(a) && whole_ok(b)));
    let piece = |start: usize, out: &mut [T]| {
        for (n, out) in out.chunks_mut(CHECK_BLOCK).enumerate() {
            if failed.load(Ordering::Relaxed) {
                return;
            }
            if !kernel(start + n * CHECK_BLOCK, out) {
                failed.store(true, Ordering::Relaxed);
                return;
            }
        }
    };
    if !failed.load(Ordering::Relaxed) {
        #[cfg(feature = "parallel")]
        crate::parallel::split_rows(out, min_vectors, piece);
        #[cfg(not(feature = "parallel"))]
        {
            debug_assert_eq!(min_vectors, usize::MAX);
            piece(0, out);
        }
    }
    if !failed.load(Ordering::Relaxed) {
        return Ok(());
    }
    Err(operand_error(a, b))
}

/// The error of validating `a`, then `b`, when one of them has a bad
/// vector.
#[cold]
fn operand_error(a: PerRow<'_, [f32; 8]>, b: PerRow<'_, [f32; 8]>) -> OperandError {
    let first_error = |v: PerRow<'_, [f32; 8]>| match v {
        PerRow::All(v) => Gf8::check(&v).map_err(|error| crate::BatchError { index: 0, error }),
        PerRow::Each(rows) => super::validate(rows),
    };
    let error = |operand| move |error| OperandError { operand, error };
    match (first_error(a), first_error(b)) {
        (Err(e), _) => error(Operand::A)(e),
        (Ok(()), Err(e)) => error(Operand::B)(e),
        (Ok(()), Ok(())) => {
            unreachable!("a block failed its check, but neither operand has a bad vector")
        }
    }
}

/// The interpolated vectors of [`slerp_into`] for coordinates that have
/// not been checked (a numpy array, a mapped file): each operand is
/// checked as [`validate`](super::validate) checks it, in the kernel's
/// pass (each vector is read from memory once).
///
/// On error the result is exactly that of validating `a`, then `b`, as for
/// [`geodesic_distances_checked_into`]; `out` is then unspecified. With the
/// `parallel` feature the blocks are split across threads, as in
/// [`slerp_into`].
///
/// # Panics
///
/// If a [`PerRow::Each`] operand does not have `out.len()` rows.
///
/// ```
/// use hydron_core::batch::{self, Operand, PerRow};
/// use hydron_core::Gf8;
///
/// let a = [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]; 3];
/// let b = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
/// let mut out = [Gf8::ZERO; 3];
/// batch::slerp_checked_into(PerRow::Each(&a), PerRow::All(b), PerRow::Each(&[0.0, 0.5, 1.0]), &mut out)?;
/// assert_eq!((out[0].to_array(), out[2].to_array()), (a[0], b));
/// let err = batch::slerp_checked_into(PerRow::Each(&a), PerRow::All([2.0; 8]), PerRow::All(0.5), &mut out)
///     .unwrap_err();
/// assert_eq!((err.operand, err.error.index), (Operand::B, 0));
/// # Ok::<(), hydron_core::batch::OperandError>(())
/// ```
#[track_caller]
pub fn slerp_checked_into(
    a: PerRow<'_, [f32; 8]>,
    b: PerRow<'_, [f32; 8]>,
    t: PerRow<'_, f32>,
    out: &mut [Gf8],
) -> Result<(), OperandError> {
    assert_rows(out.len(), &[("a", a.len()), ("b", b.len()), ("t", t.len())]);
    let backend = super::backend();
    run_checked(a, b, out, SLERP_MIN_VECTORS, |first, out| {
        let len = out.len();
        let (a, b, t) = (a.rows(first, len), b.rows(first, len), t.rows(first, len));
        backend.slerp_checked_rows(a, b, t, out)
    })
}

/// Vectors as rows (a free cast).
#[inline]
fn as_rows(v: PerRow<'_, Gf8>) -> PerRow<'_, [f32; 8]> {
    match v {
        PerRow::All(v) => PerRow::All(v.to_array()),
        PerRow::Each(vs) => PerRow::Each(Gf8::slice_as_arrays(vs)),
    }
}
