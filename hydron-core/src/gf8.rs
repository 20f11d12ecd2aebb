//! [`Gf8`]: a unit vector in R^8, or the zero vector.

use core::fmt;
use core::ops::{Add, Index, Mul, Neg, Sub};

use crate::Gf8Error;

/// How far from 1 the norm of a non-zero [`Gf8`] may be.
///
/// A vector is accepted as unit when its squared norm, summed in `f32`, is
/// within `2 * NORM_TOLERANCE` of 1, which is a norm within
/// `NORM_TOLERANCE` of 1 (to first order). Normalizing in `f32` lands within
/// a few ulps (about `1e-7`), so the tolerance leaves room for values that
/// went through other software, but rejects anything that is not meant to
/// be unit.
///
/// ```
/// use hydron_core::{Gf8, NORM_TOLERANCE};
///
/// let almost = [1.0 + NORM_TOLERANCE / 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
/// assert!(Gf8::try_new(almost).is_ok());
/// let off = [1.0 + 4.0 * NORM_TOLERANCE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
/// assert!(Gf8::try_new(off).is_err());
/// ```
pub const NORM_TOLERANCE: f32 = 1e-5;

/// The accepted band for the squared norm: `|‖x‖² − 1| ≤ NORM_SQ_TOLERANCE`.
pub(crate) const NORM_SQ_TOLERANCE: f32 = 2.0 * NORM_TOLERANCE;

/// A point on the unit sphere S^7 in R^8, or the zero vector.
///
/// Stored as `[f32; 8]` (32 bytes, `#[repr(C)]`, alignment 4). Every value
/// built without a method whose name says `unchecked` has finite coordinates
/// and a norm of 1 within [`NORM_TOLERANCE`], or is exactly zero. The
/// coordinates can be read ([`as_array`](Gf8::as_array), indexing) but not
/// written, so the invariant cannot be broken from outside.
///
/// For bytes, `Gf8` is [`bytemuck::NoUninit`] and [`bytemuck::Zeroable`], so
/// `&[Gf8]` → `&[u8]` is a free cast, and [`bytemuck::CheckedBitPattern`], so
/// `&[u8]` → `&[Gf8]` is a cast that checks every vector
/// ([`bytemuck::checked::try_cast_slice`]). It is deliberately not `Pod`: a
/// `Pod` type could be built from any 32 bytes, NaN included.
///
/// ```
/// use hydron_core::Gf8;
///
/// let v = Gf8::normalize([1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
/// assert!((v[0] - 0.70710677).abs() < 1e-7);
/// let bytes: &[u8] = bytemuck::cast_slice(core::slice::from_ref(&v));
/// assert_eq!(bytes.len(), 32);
/// let back: &[Gf8] = bytemuck::checked::try_cast_slice(bytes).unwrap();
/// assert_eq!(back[0], v);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Default, bytemuck::NoUninit, bytemuck::Zeroable)]
#[repr(C)]
pub struct Gf8 {
    coords: [f32; 8],
}

// SAFETY: `Bits` is `[f32; 8]`, which has the same size, alignment and layout
// as `Gf8` (a `#[repr(C)]` struct with a single `[f32; 8]` field), and every
// bit pattern is a valid `[f32; 8]`. `is_valid_bit_pattern` only accepts the
// patterns that satisfy `Gf8`'s invariant.
unsafe impl bytemuck::CheckedBitPattern for Gf8 {
    type Bits = [f32; 8];

    #[inline]
    fn is_valid_bit_pattern(bits: &[f32; 8]) -> bool {
        Gf8::check(bits).is_ok()
    }
}

impl Gf8 {
    /// The zero vector: the one `Gf8` that is not on the sphere.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// assert!(Gf8::ZERO.is_zero());
    /// assert_eq!(Gf8::ZERO, Gf8::default());
    /// ```
    pub const ZERO: Gf8 = Gf8 { coords: [0.0; 8] };

    /// Checks that `coords` satisfy the invariant and wraps them as they are,
    /// bit for bit.
    ///
    /// Accepts finite coordinates whose norm is 1 within [`NORM_TOLERANCE`],
    /// or all zeros (either sign). Errors name the first NaN or infinite
    /// coordinate, or the norm.
    ///
    /// ```
    /// use hydron_core::{Gf8, Gf8Error};
    ///
    /// assert!(Gf8::try_new([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).is_ok());
    /// let err = Gf8::try_new([2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap_err();
    /// assert!(matches!(err, Gf8Error::NotUnitNorm { norm, .. } if norm == 2.0));
    /// assert_eq!(err.to_string(), "norm is 2, expected 1 (within 0.00001) or exactly 0");
    /// ```
    #[inline]
    pub fn try_new(coords: [f32; 8]) -> Result<Gf8, Gf8Error> {
        Gf8::check(&coords)?;
        Ok(Gf8 { coords })
    }

    /// Checks that `coords` would make a valid `Gf8`, without building one.
    ///
    /// This is the check behind [`try_new`](Gf8::try_new) and every
    /// validated decoder.
    ///
    /// ```
    /// use hydron_core::{Gf8, Gf8Error};
    ///
    /// assert!(Gf8::check(&[0.0; 8]).is_ok());
    /// assert_eq!(
    ///     Gf8::check(&[1.0, f32::NEG_INFINITY, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    ///     Err(Gf8Error::Infinite { coordinate: 1, value: f32::NEG_INFINITY })
    /// );
    /// ```
    #[inline]
    pub fn check(coords: &[f32; 8]) -> Result<(), Gf8Error> {
        let norm_sq = norm_sq(coords);
        // NaN and infinities make `norm_sq` NaN or infinite, which fails here.
        if (norm_sq - 1.0).abs() <= NORM_SQ_TOLERANCE {
            return Ok(());
        }
        Gf8::check_slow(coords)
    }

    #[cold]
    fn check_slow(coords: &[f32; 8]) -> Result<(), Gf8Error> {
        check_finite(coords)?;
        if coords.iter().all(|&x| x == 0.0) {
            return Ok(());
        }
        Err(Gf8Error::NotUnitNorm {
            norm: robust_norm(coords),
            tolerance: NORM_TOLERANCE,
        })
    }

    /// Scales finite `coords` onto the unit sphere; all zeros give
    /// [`Gf8::ZERO`].
    ///
    /// Works for any finite input, including values whose squares would
    /// overflow or underflow `f32`. NaN or infinite coordinates are an error
    /// that names the coordinate.
    ///
    /// ```
    /// use hydron_core::Gf8;
    ///
    /// let v = Gf8::normalize([0.0, 0.0, 3e38, 0.0, 0.0, 0.0, 0.0, 3e38])?;
    /// assert!((v.norm() - 1.0).abs() < 1e-6);
    /// assert_eq!(Gf8::normalize([0.0; 8])?, Gf8::ZERO);
    /// assert!(Gf8::normalize([f32::NAN; 8]).is_err());
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    pub fn normalize(coords: [f32; 8]) -> Result<Gf8, Gf8Error> {
        let norm_sq = norm_sq(&coords);
        // Fast path: the squared norm is a normal, finite number, so one
        // reciprocal square root scales the vector within a few ulps.
        if norm_sq.is_finite() && norm_sq >= f32::MIN_POSITIVE {
            let inv = 1.0 / norm_sq.sqrt();
            return Ok(Gf8 {
                coords: coords.map(|x| x * inv),
            });
        }
        Gf8::normalize_slow(coords)
    }

    #[cold]
    fn normalize_slow(coords: [f32; 8]) -> Result<Gf8, Gf8Error> {
        check_finite(&coords)?;
        let max_abs = coords.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if max_abs == 0.0 {
            return Ok(Gf8::ZERO);
        }
        // Work in f64, where neither the scaling nor the squares can
        // overflow or underflow for any finite f32 input.
        let scaled = coords.map(|x| f64::from(x) / f64::from(max_abs));
        let norm = scaled.iter().map(|x| x * x).sum::<f64>().sqrt();
        Ok(Gf8 {
            coords: scaled.map(|x| (x / norm) as f32),
        })
    }

    /// Wraps `coords` without any check.
    ///
    /// The caller promises that `coords` are finite and of unit norm (or
    /// zero); methods on a `Gf8` that breaks this give meaningless (but
    /// memory-safe) answers. Use it for data that was validated before, such
    /// as a trusted decoding path.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let e0 = Gf8::new_unchecked([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    /// assert_eq!(e0.norm(), 1.0);
    /// ```
    #[inline]
    #[must_use]
    pub const fn new_unchecked(coords: [f32; 8]) -> Gf8 {
        Gf8 { coords }
    }

    /// Checks a slice of exactly 8 coordinates, as [`try_new`](Gf8::try_new).
    ///
    /// ```
    /// use hydron_core::{Gf8, Gf8Error};
    ///
    /// let xs = [0.0f32, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    /// assert!(Gf8::from_slice(&xs).is_ok());
    /// assert_eq!(Gf8::from_slice(&xs[..7]), Err(Gf8Error::WrongLength { found: 7 }));
    /// ```
    #[inline]
    pub fn from_slice(coords: &[f32]) -> Result<Gf8, Gf8Error> {
        let coords: [f32; 8] = coords.try_into().map_err(|_| Gf8Error::WrongLength {
            found: coords.len(),
        })?;
        Gf8::try_new(coords)
    }

    /// Broadcasts `value` to all 8 coordinates and normalizes: the point
    /// `sign(value) · (1, …, 1)/√8` on the main diagonal, or zero for 0.
    ///
    /// ```
    /// use hydron_core::Gf8;
    ///
    /// let d = Gf8::from_scalar(-5.0)?;
    /// assert!(d.as_array().iter().all(|&x| (x + 0.35355338).abs() < 1e-7));
    /// assert_eq!(Gf8::from_scalar(0.0)?, Gf8::ZERO);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    pub fn from_scalar(value: f32) -> Result<Gf8, Gf8Error> {
        Gf8::normalize([value; 8])
    }

    /// Wraps a slice of coordinate arrays as a slice of `Gf8` without
    /// copying, after checking every one.
    ///
    /// ```
    /// use hydron_core::Gf8;
    ///
    /// let raw = [[0.0f32; 8], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]];
    /// let vs = Gf8::slice_from_arrays(&raw)?;
    /// assert_eq!(vs.len(), 2);
    /// # Ok::<(), hydron_core::BatchError>(())
    /// ```
    pub fn slice_from_arrays(arrays: &[[f32; 8]]) -> Result<&[Gf8], crate::BatchError> {
        crate::batch::validate(arrays)?;
        Ok(Gf8::slice_from_arrays_unchecked(arrays))
    }

    /// Wraps a slice of coordinate arrays as a slice of `Gf8` without
    /// copying and without any check (see [`new_unchecked`](Gf8::new_unchecked)).
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let raw = [[1.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]];
    /// assert_eq!(Gf8::slice_from_arrays_unchecked(&raw)[0][0], 1.0);
    /// ```
    #[inline]
    #[must_use]
    pub fn slice_from_arrays_unchecked(arrays: &[[f32; 8]]) -> &[Gf8] {
        // SAFETY: `Gf8` is `#[repr(C)]` with a single `[f32; 8]` field, so it
        // has the size, alignment and layout of `[f32; 8]`; the new slice
        // covers exactly the same memory with the same lifetime. Breaking the
        // unit-norm invariant is not memory-unsafe, and the name says the
        // check is skipped.
        unsafe { core::slice::from_raw_parts(arrays.as_ptr().cast::<Gf8>(), arrays.len()) }
    }

    /// Turns a vector of coordinate arrays into a vector of `Gf8` without
    /// copying, after checking every one. On error the arrays are dropped.
    ///
    /// ```
    /// use hydron_core::Gf8;
    ///
    /// let vs = Gf8::vec_from_arrays(vec![[0.0f32; 8]; 4])?;
    /// assert_eq!(vs.len(), 4);
    /// assert!(Gf8::vec_from_arrays(vec![[1.0f32; 8]]).is_err());
    /// # Ok::<(), hydron_core::BatchError>(())
    /// ```
    pub fn vec_from_arrays(arrays: Vec<[f32; 8]>) -> Result<Vec<Gf8>, crate::BatchError> {
        crate::batch::validate(&arrays)?;
        Ok(Gf8::vec_from_arrays_unchecked(arrays))
    }

    /// Turns a vector of coordinate arrays into a vector of `Gf8` without
    /// copying and without any check (see [`new_unchecked`](Gf8::new_unchecked)).
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let vs = Gf8::vec_from_arrays_unchecked(vec![[0.5f32; 8]]);
    /// assert_eq!(vs[0][7], 0.5);
    /// ```
    #[must_use]
    pub fn vec_from_arrays_unchecked(arrays: Vec<[f32; 8]>) -> Vec<Gf8> {
        let mut arrays = core::mem::ManuallyDrop::new(arrays);
        let (ptr, len, capacity) = (arrays.as_mut_ptr(), arrays.len(), arrays.capacity());
        // SAFETY: `Gf8` has the size and alignment of `[f32; 8]` (a
        // `#[repr(C)]` struct with one `[f32; 8]` field), so the allocation
        // made for `capacity` arrays is exactly one for `capacity` `Gf8`s,
        // and the first `len` elements are initialized. The original `Vec`
        // is never dropped, so the allocation has one owner.
        unsafe { Vec::from_raw_parts(ptr.cast::<Gf8>(), len, capacity) }
    }

    /// Turns a vector of `Gf8` into a vector of coordinate arrays, without
    /// copying.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// assert_eq!(Gf8::vec_into_arrays(vec![Gf8::ZERO]), vec![[0.0f32; 8]]);
    /// ```
    #[must_use]
    pub fn vec_into_arrays(vectors: Vec<Gf8>) -> Vec<[f32; 8]> {
        let mut vectors = core::mem::ManuallyDrop::new(vectors);
        let (ptr, len, capacity) = (vectors.as_mut_ptr(), vectors.len(), vectors.capacity());
        // SAFETY: as in `vec_from_arrays_unchecked`, the layouts are equal,
        // and every `Gf8` is a valid `[f32; 8]`.
        unsafe { Vec::from_raw_parts(ptr.cast::<[f32; 8]>(), len, capacity) }
    }

    /// Views a slice of `Gf8` as coordinate arrays, without copying.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let vs = [Gf8::ZERO; 3];
    /// assert_eq!(Gf8::slice_as_arrays(&vs).len(), 3);
    /// ```
    #[inline]
    #[must_use]
    pub fn slice_as_arrays(vectors: &[Gf8]) -> &[[f32; 8]] {
        bytemuck::cast_slice(vectors)
    }

    /// The coordinates.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// assert_eq!(Gf8::ZERO.as_array(), &[0.0; 8]);
    /// ```
    #[inline]
    #[must_use]
    pub const fn as_array(&self) -> &[f32; 8] {
        &self.coords
    }

    /// The coordinates, by value.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// assert_eq!(Gf8::ZERO.to_array(), [0.0; 8]);
    /// ```
    #[inline]
    #[must_use]
    pub const fn to_array(self) -> [f32; 8] {
        self.coords
    }

    /// Whether this is the zero vector.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// assert!(Gf8::ZERO.is_zero());
    /// assert!(!Gf8::from_scalar(1.0)?.is_zero());
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn is_zero(self) -> bool {
        self.coords.iter().all(|&x| x == 0.0)
    }

    /// The dot product; for two unit vectors, the cosine of the angle
    /// between them.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let v = Gf8::from_scalar(1.0)?;
    /// assert!((v.dot(v) - 1.0).abs() < 1e-6);
    /// assert!((v.dot(-v) + 1.0).abs() < 1e-6);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn dot(self, other: Gf8) -> f32 {
        dot(&self.coords, &other.coords)
    }

    /// The Euclidean norm: 1 within [`NORM_TOLERANCE`], or 0.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// assert_eq!(Gf8::ZERO.norm(), 0.0);
    /// ```
    #[inline]
    #[must_use]
    pub fn norm(self) -> f32 {
        norm_sq(&self.coords).sqrt()
    }

    /// Scales by `factor`, giving a plain vector: a scaled unit vector is
    /// not on the sphere any more. `v * factor` does the same.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let e = Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// assert_eq!(e.scale(2.5)[0], 2.5);
    /// assert_eq!(e * 2.5, e.scale(2.5));
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn scale(self, factor: f32) -> [f32; 8] {
        self.coords.map(|x| x * factor)
    }

    /// Projects a finite sum or difference back onto the sphere.
    #[inline]
    fn reproject(coords: [f32; 8]) -> Gf8 {
        // The inputs are finite with norm ≤ 1, so the sum has norm ≤ 2:
        // normalizing it cannot fail.
        Gf8::normalize(coords).unwrap_or(Gf8::ZERO)
    }
}

/// Sum of squares in a fixed pairwise order (which also vectorizes well).
#[inline]
pub(crate) fn norm_sq(x: &[f32; 8]) -> f32 {
    dot(x, x)
}

/// Dot product in a fixed pairwise order.
#[inline]
pub(crate) fn dot(a: &[f32; 8], b: &[f32; 8]) -> f32 {
    let p: [f32; 8] = core::array::from_fn(|i| a[i] * b[i]);
    ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]))
}

/// The first NaN or infinite coordinate, as an error.
#[inline]
pub(crate) fn check_finite(coords: &[f32; 8]) -> Result<(), Gf8Error> {
    for (coordinate, &value) in coords.iter().enumerate() {
        if value.is_nan() {
            return Err(Gf8Error::NotANumber { coordinate });
        }
        if value.is_infinite() {
            return Err(Gf8Error::Infinite { coordinate, value });
        }
    }
    Ok(())
}

/// The norm of finite coordinates, without overflow or underflow.
fn robust_norm(coords: &[f32; 8]) -> f64 {
    coords
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt()
}

impl TryFrom<[f32; 8]> for Gf8 {
    type Error = Gf8Error;

    /// Same as [`Gf8::try_new`].
    #[inline]
    fn try_from(coords: [f32; 8]) -> Result<Gf8, Gf8Error> {
        Gf8::try_new(coords)
    }
}

impl TryFrom<&[f32]> for Gf8 {
    type Error = Gf8Error;

    /// Same as [`Gf8::from_slice`].
    #[inline]
    fn try_from(coords: &[f32]) -> Result<Gf8, Gf8Error> {
        Gf8::from_slice(coords)
    }
}

impl From<Gf8> for [f32; 8] {
    #[inline]
    fn from(v: Gf8) -> [f32; 8] {
        v.coords
    }
}

impl AsRef<[f32; 8]> for Gf8 {
    #[inline]
    fn as_ref(&self) -> &[f32; 8] {
        &self.coords
    }
}

impl Index<usize> for Gf8 {
    type Output = f32;

    #[inline]
    fn index(&self, coordinate: usize) -> &f32 {
        &self.coords[coordinate]
    }
}

impl Add for Gf8 {
    type Output = Gf8;

    /// The sum, projected back onto the sphere (zero if `a + b` is zero).
    #[inline]
    fn add(self, other: Gf8) -> Gf8 {
        Gf8::reproject(core::array::from_fn(|i| self.coords[i] + other.coords[i]))
    }
}

impl Sub for Gf8 {
    type Output = Gf8;

    /// The difference, projected back onto the sphere (zero if `a == b`).
    #[inline]
    fn sub(self, other: Gf8) -> Gf8 {
        Gf8::reproject(core::array::from_fn(|i| self.coords[i] - other.coords[i]))
    }
}

impl Neg for Gf8 {
    type Output = Gf8;

    #[inline]
    fn neg(self) -> Gf8 {
        Gf8 {
            coords: self.coords.map(|x| -x),
        }
    }
}

impl Mul<f32> for Gf8 {
    type Output = [f32; 8];

    /// Same as [`Gf8::scale`].
    #[inline]
    fn mul(self, factor: f32) -> [f32; 8] {
        self.scale(factor)
    }
}

impl Mul<Gf8> for f32 {
    type Output = [f32; 8];

    /// Same as [`Gf8::scale`].
    #[inline]
    fn mul(self, v: Gf8) -> [f32; 8] {
        v.scale(self)
    }
}

impl fmt::Debug for Gf8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Gf8").field(&self.coords).finish()
    }
}

impl fmt::Display for Gf8 {
    /// Writes `[x0, x1, …, x7]`; a precision (`{:.3}`) applies to each.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, x) in self.coords.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            fmt::Display::fmt(x, f)?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E0: [f32; 8] = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];

    #[test]
    fn try_new_keeps_bits() {
        let x = [0.5, -0.5, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(Gf8::try_new(x).unwrap().to_array(), x);
    }

    #[test]
    fn try_new_names_the_coordinate() {
        let mut x = E0;
        x[5] = f32::NAN;
        assert_eq!(Gf8::try_new(x), Err(Gf8Error::NotANumber { coordinate: 5 }));
        x[5] = f32::INFINITY;
        assert_eq!(
            Gf8::try_new(x),
            Err(Gf8Error::Infinite {
                coordinate: 5,
                value: f32::INFINITY
            })
        );
    }

    #[test]
    fn try_new_rejects_tiny_nonzero_and_huge() {
        let tiny = [1e-30, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let err = Gf8::try_new(tiny).unwrap_err();
        assert!(
            err.to_string().starts_with("norm is 1.000000e-30,"),
            "{err}"
        );
        let huge = [3e38, 3e38, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        match Gf8::try_new(huge) {
            Err(e @ Gf8Error::NotUnitNorm { norm, .. }) => {
                assert!(norm > 4.2e38);
                assert!(e.to_string().starts_with("norm is 4.242641e38,"), "{e}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn negative_zero_is_zero() {
        assert!(Gf8::try_new([-0.0; 8]).unwrap().is_zero());
    }

    #[test]
    fn normalize_handles_subnormal_input() {
        let v = Gf8::normalize([1e-40, -1e-40, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
        assert!((v.norm() - 1.0).abs() < 1e-6);
        assert!((v[0] - core::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn add_of_opposites_is_zero() {
        let v = Gf8::from_scalar(1.0).unwrap();
        assert!((v + -v).is_zero());
        assert!((v - v).is_zero());
        assert!(((v + v).dot(v) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn display_and_debug() {
        let v = Gf8::try_new(E0).unwrap();
        assert_eq!(v.to_string(), "[1, 0, 0, 0, 0, 0, 0, 0]");
        assert_eq!(
            format!("{v:.1}"),
            "[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]"
        );
        assert_eq!(
            format!("{v:?}"),
            "Gf8([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])"
        );
    }

    #[test]
    fn checked_cast_rejects_bad_bytes() {
        let mut raw = [[0.0f32; 8]; 2];
        raw[1][3] = f32::NAN;
        let bytes: &[u8] = bytemuck::cast_slice(&raw);
        assert!(bytemuck::checked::try_cast_slice::<u8, Gf8>(bytes).is_err());
        assert!(bytemuck::checked::try_cast_slice::<u8, Gf8>(&bytes[..32]).is_ok());
    }

    #[test]
    fn layout() {
        assert_eq!(core::mem::size_of::<Gf8>(), 32);
        assert_eq!(core::mem::align_of::<Gf8>(), 4);
    }
}
