//! The E8 lattice: exact points, and the nearest point to any vector.
//!
//! E8 is the set of points of R^8 whose coordinates are all integers or all
//! half-integers, with an even sum: E8 = D8 ∪ (D8 + ½·𝟙), where D8 is the
//! integer vectors with an even sum. Its shortest non-zero vectors have
//! squared norm 2; they are the 240 roots ([`E8Root`], which stores them
//! scaled to unit length).
//!
//! An [`E8Point`] stores its coordinates doubled, as `[i32; 8]`, so it is
//! exact. [`E8Point::nearest`] is the decoder of Conway and Sloane
//! ("Fast quantizing and decoding algorithms for lattice quantizers and
//! codes", 1982): the nearest point of D8 and the nearest point of
//! D8 + ½·𝟙, whichever is closer.

use core::fmt;
use core::ops::Neg;

use crate::gf8::check_finite;
use crate::{E8Root, Gf8Error};

/// Largest doubled coordinate of any [`E8Point`]: `2 · (2^22 + 1)`.
const MAX_DOUBLED: i32 = 2 * ((1 << 22) + 1);

/// A point of the E8 lattice, stored exactly as doubled coordinates.
///
/// Every coordinate is within ±[`COORDINATE_LIMIT`](E8Point::COORDINATE_LIMIT)
/// (2^22 + 1), so every coordinate and every doubled coordinate is exactly
/// an `f32`, and the integer arithmetic below cannot overflow.
///
/// ```
/// use hydron_core::E8Point;
///
/// let p = E8Point::nearest(&[0.9, 0.2, -0.1, 0.0, 0.0, 0.0, 0.0, 1.1])?;
/// assert_eq!(p.to_array(), [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
/// assert_eq!(p.doubled(), [2, 0, 0, 0, 0, 0, 0, 2]);
/// assert_eq!(p.norm_sq(), 2);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, bytemuck::Zeroable)]
// The layout of its doubled coordinates, so that a caller can hand a kernel
// an `[i32; 8]` buffer of its own (the Python module's `out=`).
#[repr(transparent)]
pub struct E8Point {
    doubled: [i32; 8],
}

impl E8Point {
    /// The origin.
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// assert_eq!(E8Point::ORIGIN.to_array(), [0.0; 8]);
    /// assert_eq!(E8Point::ORIGIN, E8Point::default());
    /// ```
    pub const ORIGIN: E8Point = E8Point { doubled: [0; 8] };

    /// The largest coordinate magnitude [`nearest`](E8Point::nearest)
    /// accepts: 2^22 = 4194304.
    ///
    /// ```
    /// use hydron_core::{E8Point, Gf8Error};
    ///
    /// assert!(E8Point::nearest(&[E8Point::INPUT_LIMIT; 8]).is_ok());
    /// let mut x = [0.0; 8];
    /// x[6] = -1e7;
    /// assert!(matches!(
    ///     E8Point::nearest(&x),
    ///     Err(Gf8Error::OutOfLatticeRange { coordinate: 6, .. })
    /// ));
    /// ```
    pub const INPUT_LIMIT: f32 = 4_194_304.0;

    /// The largest coordinate magnitude of any `E8Point`: 2^22 + 1.
    ///
    /// The nearest lattice point is within 1 of its input in every
    /// coordinate, so [`nearest`](E8Point::nearest) stays within this limit;
    /// [`from_doubled`](E8Point::from_doubled) and
    /// [`checked_add`](E8Point::checked_add) enforce it.
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// assert_eq!(E8Point::COORDINATE_LIMIT, E8Point::INPUT_LIMIT + 1.0);
    /// ```
    pub const COORDINATE_LIMIT: f32 = 4_194_305.0;

    /// The nearest E8 point to `coords` (Euclidean distance).
    ///
    /// The answer is the Conway–Sloane decoder's, as defined in `f64`:
    /// round every coordinate to an integer and, if their sum is odd, round
    /// the coordinate with the largest rounding error the other way; do the
    /// same for `coords − ½` and add ½ back; keep the closer of the two
    /// candidates. When both are equally far as computed in `f64`, the
    /// integer one wins; that includes differences below `f64`'s rounding
    /// (a coordinate of magnitude below about 1e-16 next to halves can
    /// leave the half-integer candidate nearer by some 1e-30 in squared
    /// distance, and the integer one is still returned).
    /// Within each candidate, ties are broken by rounding halves away from
    /// zero, and the lowest index among equal rounding errors is re-rounded.
    ///
    /// It is computed without `f64` and without a libm call on almost every
    /// input: every step above is exact in `f32` for coordinates of
    /// magnitude 0 or at least 2^-24, and the two candidates' squared
    /// distances differ by `Σδ_k − 2 + [odd]·(1 − 2·max δ) − [odd']·2·min δ`
    /// (`δ_k` the distance of coordinate `k` to the nearest integer), which
    /// needs one `f32` sum. Only when a coordinate is tiny (below 2^-24 but
    /// not zero) or the two distances are within 2^-14 of each other (a
    /// tie, or nearly) does it run the decoder in `f64` as described, so the
    /// result is identical on every input, ties included. The batch kernels
    /// ([`batch::nearest_lattice_points_into`](crate::batch::nearest_lattice_points_into))
    /// run the same computation eight vectors at a time.
    ///
    /// Errors: a NaN or infinite coordinate, or one whose magnitude exceeds
    /// [`INPUT_LIMIT`](E8Point::INPUT_LIMIT), naming the first such
    /// coordinate.
    ///
    /// ```
    /// use hydron_core::E8Point;
    ///
    /// // Closer to the half-integer point (½, …, ½) than to any integer one.
    /// let p = E8Point::nearest(&[0.4, 0.6, 0.5, 0.5, 0.3, 0.7, 0.5, 0.5])?;
    /// assert_eq!(p.doubled(), [1; 8]);
    /// // An odd sum of rounded coordinates: the worst-rounded one flips.
    /// let q = E8Point::nearest(&[0.6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// assert_eq!(q, E8Point::ORIGIN);
    /// assert!(E8Point::nearest(&[f32::NAN; 8]).is_err());
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    pub fn nearest(coords: &[f32; 8]) -> Result<E8Point, Gf8Error> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = crate::simd::Avx2Fma::detect() {
            return avx2.nearest_lattice_point(coords);
        }
        nearest_baseline(coords)
    }

    /// The point with these doubled coordinates, unchecked: for the batch
    /// kernels, whose results are in E8 and in range by construction.
    #[inline]
    pub(crate) const fn from_doubled_unchecked(doubled: [i32; 8]) -> E8Point {
        E8Point { doubled }
    }

    /// The point with these doubled coordinates (`2 · coordinate`), after
    /// checking that it is in E8 and in range.
    ///
    /// Errors: a coordinate beyond
    /// [`COORDINATE_LIMIT`](E8Point::COORDINATE_LIMIT)
    /// ([`OutOfLatticeRange`](Gf8Error::OutOfLatticeRange)); integers mixed
    /// with half-integers
    /// ([`MixedLatticeCoordinates`](Gf8Error::MixedLatticeCoordinates)); an
    /// odd coordinate sum ([`OddLatticeSum`](Gf8Error::OddLatticeSum)).
    ///
    /// ```
    /// use hydron_core::{E8Point, Gf8Error};
    ///
    /// let p = E8Point::from_doubled([1, 1, 1, 1, 1, 1, -1, -1])?;
    /// assert_eq!(p.to_array()[6], -0.5);
    /// assert_eq!(
    ///     E8Point::from_doubled([2, 1, 1, 1, 1, 1, 1, 1]),
    ///     Err(Gf8Error::MixedLatticeCoordinates { coordinate: 1 })
    /// );
    /// assert_eq!(
    ///     E8Point::from_doubled([2, 0, 0, 0, 0, 0, 0, 0]),
    ///     Err(Gf8Error::OddLatticeSum { sum: 1 })
    /// );
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    pub fn from_doubled(doubled: [i32; 8]) -> Result<E8Point, Gf8Error> {
        for (coordinate, &d) in doubled.iter().enumerate() {
            if d.unsigned_abs() > MAX_DOUBLED as u32 {
                return Err(Gf8Error::OutOfLatticeRange {
                    coordinate,
                    value: (f64::from(d) / 2.0) as f32,
                    limit: E8Point::COORDINATE_LIMIT,
                });
            }
        }
        let parity = doubled[0] & 1;
        if let Some(coordinate) = doubled.iter().position(|&d| d & 1 != parity) {
            return Err(Gf8Error::MixedLatticeCoordinates { coordinate });
        }
        // In range, so the sum cannot overflow; with one parity it is even.
        let doubled_sum: i64 = doubled.iter().map(|&d| i64::from(d)).sum();
        let sum = doubled_sum / 2;
        if sum & 1 != 0 {
            return Err(Gf8Error::OddLatticeSum { sum });
        }
        Ok(E8Point { doubled })
    }

    /// The exact coordinates, doubled: `2 · coordinate`, all even or all odd.
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// let p = E8Point::nearest(&[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -0.5, -0.5])?;
    /// assert_eq!(p.doubled(), [1, 1, 1, 1, 1, 1, -1, -1]);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub const fn doubled(&self) -> [i32; 8] {
        self.doubled
    }

    /// The coordinates as `f32` (exact: every coordinate of an `E8Point` is
    /// a half-integer below 2^23).
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// let p = E8Point::from_doubled([-3, 1, 1, 1, 1, 1, 1, 1])?;
    /// assert_eq!(p.to_array(), [-1.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn to_array(self) -> [f32; 8] {
        self.doubled.map(|d| d as f32 * 0.5)
    }

    /// Whether `coords` are a point of E8 (all integers or all
    /// half-integers, with an even sum). Exact for every finite `f32`, with
    /// no range limit; NaN and infinities are not in E8.
    ///
    /// ```
    /// use hydron_core::E8Point;
    ///
    /// assert!(E8Point::contains(&[0.5, -0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -0.5]));
    /// // Seven halves and one minus half sum to 3, which is odd.
    /// assert!(!E8Point::contains(&[0.5, -0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]));
    /// assert!(E8Point::contains(&[1e30, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]));
    /// assert!(!E8Point::contains(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]));
    /// assert!(!E8Point::contains(&[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0]));
    /// ```
    #[must_use]
    pub fn contains(coords: &[f32; 8]) -> bool {
        if check_finite(coords).is_err() {
            return false;
        }
        // 2x is exact in f64; its remainder mod 4 (exact for f64) decides
        // both the parity of 2x and the sum of the coordinates mod 2.
        let mut residues = [0u8; 8];
        for (r, &x) in residues.iter_mut().zip(coords) {
            let doubled = 2.0 * f64::from(x);
            if doubled.fract() != 0.0 {
                return false;
            }
            *r = doubled.rem_euclid(4.0) as u8;
        }
        let parity = residues[0] & 1;
        residues.iter().all(|&r| r & 1 == parity)
            && residues.iter().map(|&r| u32::from(r)).sum::<u32>() % 4 == 0
    }

    /// Whether the coordinates are integers (the D8 coset) rather than
    /// half-integers.
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// assert!(E8Point::ORIGIN.is_integer());
    /// assert!(!E8Point::from_doubled([1; 8])?.is_integer());
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub const fn is_integer(&self) -> bool {
        self.doubled[0] & 1 == 0
    }

    /// The squared norm, an even integer (E8 is an even lattice).
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// assert_eq!(E8Point::from_doubled([1; 8])?.norm_sq(), 2);
    /// assert_eq!(E8Point::from_doubled([4, 0, 0, 0, 0, 0, 0, 0])?.norm_sq(), 4);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn norm_sq(&self) -> i64 {
        self.dot(self)
    }

    /// The inner product, an integer (E8 is an integral lattice).
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// let a = E8Point::from_doubled([1; 8])?;
    /// let b = E8Point::from_doubled([2, 2, 0, 0, 0, 0, 0, 0])?;
    /// assert_eq!(a.dot(&b), 1);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn dot(&self, other: &E8Point) -> i64 {
        // |d| ≤ 2^23 + 2, so each product is below 2^47 and the sum of 8
        // below 2^50: no overflow. The sum is a multiple of 4.
        let doubled_dot: i64 = self
            .doubled
            .iter()
            .zip(&other.doubled)
            .map(|(&a, &b)| i64::from(a) * i64::from(b))
            .sum();
        doubled_dot / 4
    }

    /// The squared Euclidean distance from `coords`, in `f64`.
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// let x = [0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    /// assert_eq!(E8Point::ORIGIN.distance_sq(&x), 0.0625);
    /// ```
    #[inline]
    #[must_use]
    pub fn distance_sq(&self, coords: &[f32; 8]) -> f64 {
        doubled_distance_sq(&coords.map(f64::from), &self.doubled)
    }

    /// The root of E8 this point is, if its squared norm is 2 (the 240
    /// shortest non-zero points are exactly the roots, scaled by √2).
    ///
    /// ```
    /// use hydron_core::{E8Point, E8Root};
    ///
    /// let p = E8Point::from_doubled([2, 0, 0, 0, 0, 0, 0, -2])?;
    /// let root = p.to_root().unwrap();
    /// assert_eq!(E8Point::from(root), p);
    /// assert_eq!(E8Point::ORIGIN.to_root(), None);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    pub fn to_root(self) -> Option<E8Root> {
        if self.norm_sq() != 2 {
            return None;
        }
        let mut negatives = 0u8;
        for (k, &d) in self.doubled.iter().enumerate() {
            negatives |= u8::from(d < 0) << k;
        }
        if self.is_integer() {
            // Two coordinates ±1 (doubled ±2), the rest 0.
            let mut nonzero = (0..8).filter(|&k| self.doubled[k] != 0);
            let (i, j) = (nonzero.next()?, nonzero.next()?);
            let signs = ((negatives >> i) & 1) | (((negatives >> j) & 1) << 1);
            E8Root::new((4 * crate::e8::pair_index(i, j)) as u8 + signs).ok()
        } else {
            // All ±½ with an even number of minus signs.
            E8Root::new(crate::e8::INTEGER_ROOT_COUNT + (negatives >> 1)).ok()
        }
    }

    /// The sum, or `None` if a coordinate would exceed
    /// [`COORDINATE_LIMIT`](E8Point::COORDINATE_LIMIT).
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// let a = E8Point::from_doubled([1; 8])?;
    /// assert_eq!(a.checked_add(&a).unwrap().doubled(), [2; 8]);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    pub fn checked_add(&self, other: &E8Point) -> Option<E8Point> {
        // |a|, |b| ≤ 2^23 + 2, so `a + b` cannot overflow i32.
        let doubled: [i32; 8] = core::array::from_fn(|k| self.doubled[k] + other.doubled[k]);
        doubled
            .iter()
            .all(|d| d.unsigned_abs() <= MAX_DOUBLED as u32)
            .then_some(E8Point { doubled })
    }

    /// The difference, or `None` if a coordinate would exceed
    /// [`COORDINATE_LIMIT`](E8Point::COORDINATE_LIMIT).
    ///
    /// ```
    /// use hydron_core::E8Point;
    /// let a = E8Point::from_doubled([1; 8])?;
    /// assert_eq!(a.checked_sub(&a), Some(E8Point::ORIGIN));
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    pub fn checked_sub(&self, other: &E8Point) -> Option<E8Point> {
        self.checked_add(&-*other)
    }
}

/// Bits of [`E8Point::INPUT_LIMIT`]: a coordinate whose magnitude has
/// larger bits (as an `f32` without its sign) is out of range, infinite or
/// NaN.
pub(crate) const INPUT_LIMIT_BITS: u32 = 0x4A80_0000;

/// Bits of 2^-24: a non-zero coordinate below this magnitude sends the
/// vector to the `f64` decoder (see [`nearest_fast`]).
pub(crate) const TINY_BITS: u32 = 0x3380_0000;

/// When the two candidates' squared distances (as [`nearest_fast`] computes
/// their difference in `f32`) are this close, the `f64` decoder decides.
pub(crate) const TIE_MARGIN: f32 = 1.0 / 16384.0;

// The batch kernels' form (AVX2 and `wide`, eight vectors at a time) of
// the steps of `nearest_fast`, for a coordinate `v` on the fast path:
//
// - `a = trunc(v + c)`, `c` being `BELOW_HALF` with the sign of `v`: `v`
//   rounded, halves away from zero; `r = v − a`, `δ = |r|` (all exact).
// - `down`: the nearest half-integer `h` is `a − ½` (not `r > 0`, nor
//   `r = 0` and `a > 0`), from the sign of `r + a·UP_SCALE`.
// - `q = 2a + down`. The XOR of the eight `q` has the parity of Σa in bit
//   1, and in bit 0 that of the number of coordinates going down, which
//   with bit 1 gives the parity of Σ(h − ½) ≡ Σa + (number going up).
// - Every doubled coordinate of the answer is `2a + w` when `h` is above
//   and `2a − w` when below, that is `q + w` or `q + !w` (`!w = −w − 1`):
//   `w = 0` for the integer candidate and 1 for the other, except at the
//   re-rounded coordinate of a candidate with an odd sum (the first
//   largest `δ` for the integer one, the first smallest for the other),
//   where `w = 2` (`a ± 1`, towards `v`) or `w = −1` (`h` to the other
//   side). Two cases have the direction not given by `down`: every `δ`
//   zero (the integer candidate: `r = 0` goes up, whatever the sign of
//   `a`) and every `δ` ½ (the other: the `f64` decoder's `x − ½` is then an
//   integer, which it re-rounds upwards). The re-rounded coordinate is
//   then coordinate 0, and the kernels add 4 to it when `down` said down.

/// The largest `f32` below ½. `trunc(v + c)`, with `c` this number with
/// the sign of `v`, is `v` rounded to an integer, halves away from zero,
/// exactly, for every `f32` with |v| ≤ 2^22 (checked on all of them).
#[cfg_attr(not(feature = "simd"), allow(dead_code))] // the SIMD kernels
pub(crate) const BELOW_HALF: f32 = f32::from_bits(0x3EFF_FFFF);

/// 2^-60. For the residual `r = v − a` (zero or at least 2^-24 in
/// magnitude on the fast path) and `|a| ≤ 2^22`, `r + a·2^-60` has the sign
/// of `r`, or of `a` when `r = 0` (and is zero when both are), with or
/// without a fused multiply-add.
#[cfg_attr(not(feature = "simd"), allow(dead_code))] // the SIMD kernels
pub(crate) const UP_SCALE: f32 = f32::from_bits(0x2180_0000);

/// The Conway–Sloane decoder in `f32`, or `None` when it cannot vouch for
/// giving exactly [`nearest_exact`]'s answer: a coordinate is out of range,
/// not finite, or tiny (magnitude below 2^-24 but not zero), or the two
/// candidates are within [`TIE_MARGIN`] of a tie.
///
/// Why the answer is the `f64` decoder's. For every coordinate `v` of
/// magnitude 0 or at least 2^-24 (and at most 2^22):
///
/// - `a = round(v)` (halves away from zero) and `r = v − a` are exact in
///   `f32`, as in `f64`; so are the integer candidate's rounding errors
///   `δ = |r|`, its re-rounded index (the first largest `δ`) and direction
///   (`r ≥ 0` goes up).
/// - `v − ½` is exact in `f64` (at most 50 significant bits), so the `f64`
///   decoder's half-integer coordinate is the nearest half-integer `h` to
///   `v`, with integers going up from 1 and down from 0: `h = a + ½` when
///   `r > 0` or (`r = 0` and `a > 0`), else `a − ½`. Its rounding error is
///   exactly `½ − δ`, so the re-rounded index is the first smallest `δ`, and
///   the direction is up unless `h = a + ½ > v`.
/// - The squared distance of the integer candidate is `Σδ² + [Σa odd]·(1 −
///   2·max δ)`, that of the other `Σ(½ − δ)² + [Σ(h − ½) odd]·2·min δ`; their
///   difference is the linear expression below, whose terms are all in
///   `[−2, 4]`, so its `f32` rounding error is below 2^-19. The `f64`
///   decoder's own distances are within 2^-45 of the exact ones (each at
///   most 2). So when the `f32` difference is more than [`TIE_MARGIN`]
///   (2^-14) from zero, both decoders see the same sign.
///
/// On x86-64 this runs `avx2::nearest_fast` when the CPU has AVX2 and
/// FMA (detected at run time, through the [`Avx2Fma`](crate::simd::Avx2Fma)
/// token; it takes about half the instructions), else
/// [`sse2::nearest_fast`] (SSE2 is part of the baseline target, so it
/// needs no detection); elsewhere [`nearest_fast_portable`]. The three are
/// the same algorithm, and a test holds them to identical answers.
#[cfg_attr(not(feature = "simd"), allow(dead_code))] // the SIMD backends' tails
#[inline]
pub(crate) fn nearest_fast(x: &[f32; 8]) -> Option<[i32; 8]> {
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = crate::simd::Avx2Fma::detect() {
        return avx2.nearest_lattice_point_fast(x);
    }
    nearest_fast_baseline(x)
}

/// [`E8Point::nearest`] without detection. Out of line on x86-64: inlined,
/// its stack frame (the SSE2 path spills) and the copy of `nearest_fast`'s
/// `Option` would cost the AVX2 path in `nearest` too.
#[cfg_attr(target_arch = "x86_64", inline(never))]
pub(crate) fn nearest_baseline(coords: &[f32; 8]) -> Result<E8Point, Gf8Error> {
    match nearest_fast_baseline(coords) {
        Some(doubled) => Ok(E8Point { doubled }),
        None => nearest_exact(coords),
    }
}

/// [`nearest_fast`] without detection: [`sse2::nearest_fast`] on x86-64,
/// [`nearest_fast_portable`] elsewhere.
#[inline]
pub(crate) fn nearest_fast_baseline(x: &[f32; 8]) -> Option<[i32; 8]> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of every x86-64 target (the baseline), the
        // only feature `sse2::nearest_fast` is compiled for.
        unsafe { sse2::nearest_fast(x) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        nearest_fast_portable(x)
    }
}

/// [`nearest_fast`] in plain Rust, one coordinate at a time.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn nearest_fast_portable(x: &[f32; 8]) -> Option<[i32; 8]> {
    let mut max_bits = 0u32;
    let mut min_bits_minus_one = u32::MAX;
    for &v in x {
        let bits = v.to_bits() & 0x7FFF_FFFF;
        max_bits = max_bits.max(bits);
        min_bits_minus_one = min_bits_minus_one.min(bits.wrapping_sub(1));
    }
    if max_bits > INPUT_LIMIT_BITS || min_bits_minus_one < TINY_BITS - 1 {
        return None;
    }

    // Straight-line code over the eight coordinates, with selects rather
    // than branches (the outcomes are data dependent), so that the compiler
    // keeps it in vector registers.
    //
    // `v + 1.5·2^23` rounds `v` (|v| ≤ 2^22) to an integer, ties to even,
    // exactly; its bits minus those of 1.5·2^23 are that integer. A tie
    // that went towards zero (`r = ±½` with the sign of `v`) moves away.
    let mut a = [0i32; 8];
    let mut r = [0.0f32; 8];
    for k in 0..8 {
        let v = x[k];
        let shifted = v + ROUNDING_SHIFT;
        let even = shifted - ROUNDING_SHIFT;
        let rk = v - even;
        let away = i32::from((rk == 0.5) & (v > 0.0)) - i32::from((rk == -0.5) & (v < 0.0));
        a[k] = (shifted.to_bits() as i32 - ROUNDING_SHIFT.to_bits() as i32) + away;
        r[k] = rk - away as f32;
    }
    let delta = r.map(f32::abs);
    // Whether the nearest half-integer is above: `r > 0`, or `v` an
    // integer from 1 up.
    let up: [i32; 8] =
        core::array::from_fn(|k| i32::from((r[k] > 0.0) | ((r[k] == 0.0) & (a[k] > 0))));
    let sum_delta = ((delta[0] + delta[4]) + (delta[2] + delta[6]))
        + ((delta[1] + delta[5]) + (delta[3] + delta[7]));
    let max_delta = max8(&delta);
    let min_delta = -max8(&delta.map(|d| -d));
    let max_k = first_equal(&delta, max_delta);
    let min_k = first_equal(&delta, min_delta);
    let sum_a: i32 = a.iter().sum();
    let ups: i32 = up.iter().sum();
    // Σ(h − ½) = Σa − (number of coordinates that go down) ≡ Σa + ups.
    let odd_integer = sum_a & 1;
    let odd_half = (sum_a + ups) & 1;
    // Multiplying by 0 or 1 is exact, and cheaper than a branch.
    let difference = sum_delta - 2.0 + odd_integer as f32 * (1.0 - 2.0 * max_delta)
        - odd_half as f32 * (2.0 * min_delta);
    // (Finite: every input coordinate is in range.)
    if difference.abs() <= TIE_MARGIN {
        return None;
    }
    // The winner: `half` is 1 for the half-integer candidate, 0 for the
    // integer one; each coordinate is `2a`, plus ±1 for the half-integers,
    // and the re-rounded one moves by ±2.
    let half = i32::from(difference > 0.0);
    let flip_k = select(half != 0, min_k, max_k);
    let odd = select(half != 0, odd_half, odd_integer);
    let goes_up = select(
        half != 0,
        (up[flip_k] == 0) | (r[flip_k] >= 0.5),
        r[flip_k] >= 0.0,
    );
    let flip = odd * select(goes_up, 2, -2);
    let doubled: [i32; 8] =
        core::array::from_fn(|k| 2 * a[k] + half * (2 * up[k] - 1) + select(k == flip_k, flip, 0));
    Some(doubled)
}

#[cfg(target_arch = "x86_64")]
mod sse2;

#[cfg(target_arch = "x86_64")]
mod avx2;

/// 1.5 · 2^23: adding it to an `f32` of magnitude at most 2^22 rounds that
/// to an integer (ties to even), exactly.
pub(crate) const ROUNDING_SHIFT: f32 = 12_582_912.0;

/// The largest of eight numbers (none NaN), as a tree.
#[inline(always)]
fn max8(x: &[f32; 8]) -> f32 {
    // Selects rather than `f32::max`, whose NaN rule costs instructions.
    let max = |a: f32, b: f32| select(a > b, a, b);
    let m = [
        max(x[0], x[4]),
        max(x[1], x[5]),
        max(x[2], x[6]),
        max(x[3], x[7]),
    ];
    max(max(m[0], m[2]), max(m[1], m[3]))
}

/// The first index `k` with `x[k] == value` (which one of them is).
#[inline(always)]
fn first_equal(x: &[f32; 8], value: f32) -> usize {
    let mut mask = 0u32;
    for (k, &v) in x.iter().enumerate() {
        mask |= u32::from(v == value) << k;
    }
    // `value` is one of `x`, so `mask` is not zero; `& 7` keeps the index
    // in bounds for the compiler.
    (mask.trailing_zeros() & 7) as usize
}

/// `if condition { a } else { b }`, meant to compile to a conditional move.
#[inline(always)]
fn select<T>(condition: bool, a: T, b: T) -> T {
    if condition {
        a
    } else {
        b
    }
}

/// The Conway–Sloane decoder in `f64`, with the input checks: the
/// definition of [`E8Point::nearest`], and its path for the inputs
/// [`nearest_fast`] leaves.
#[cold]
#[inline(never)]
pub(crate) fn nearest_exact(coords: &[f32; 8]) -> Result<E8Point, Gf8Error> {
    check_finite(coords)?;
    for (coordinate, &value) in coords.iter().enumerate() {
        if value.abs() > E8Point::INPUT_LIMIT {
            return Err(Gf8Error::OutOfLatticeRange {
                coordinate,
                value,
                limit: E8Point::INPUT_LIMIT,
            });
        }
    }
    // Exact: an f32 widens to f64 exactly, and subtracting ½ from a
    // value of magnitude ≤ 2^22 needs at most 53 significant bits
    // unless the value is tiny (then the rounding decides, as defined).
    let x = coords.map(f64::from);
    let integer = round_to_d8(&x);
    let half = round_to_d8(&x.map(|v| v - 0.5));

    // Doubled coordinates: `2a` for the integer candidate, `2b + 1` for
    // the half-integer one. Every candidate coordinate is within 1 of its
    // input, so within ±(2^22 + 1): the casts are exact.
    let integer: [i32; 8] = integer.map(|a| (2 * a) as i32);
    let half: [i32; 8] = half.map(|b| (2 * b + 1) as i32);
    let integer_distance = doubled_distance_sq(&x, &integer);
    let half_distance = doubled_distance_sq(&x, &half);
    let doubled = if integer_distance <= half_distance {
        integer
    } else {
        half
    };
    Ok(E8Point { doubled })
}

/// Rounds to the nearest point of D8 (integers with an even sum).
///
/// Round every coordinate (halves away from zero); if the sum is odd,
/// round the coordinate with the largest rounding error (lowest index on
/// ties) the other way. The input is finite and within ±(2^22 + ½).
#[inline]
fn round_to_d8(x: &[f64; 8]) -> [i64; 8] {
    let mut rounded = [0i64; 8];
    let mut worst = 0;
    let mut worst_error = -1.0;
    for (k, (&v, r)) in x.iter().zip(&mut rounded).enumerate() {
        let f = v.round();
        *r = f as i64;
        let error = (v - f).abs();
        if error > worst_error {
            worst_error = error;
            worst = k;
        }
    }
    if rounded.iter().sum::<i64>() & 1 != 0 {
        rounded[worst] += if x[worst] >= rounded[worst] as f64 {
            1
        } else {
            -1
        };
    }
    rounded
}

/// `‖x − d/2‖²` in `f64`, computed as `‖2x − d‖² / 4`.
#[inline]
fn doubled_distance_sq(x: &[f64; 8], doubled: &[i32; 8]) -> f64 {
    let sum: f64 = x
        .iter()
        .zip(doubled)
        .map(|(&v, &d)| {
            let diff = 2.0 * v - f64::from(d);
            diff * diff
        })
        .sum();
    sum * 0.25
}

impl From<E8Root> for E8Point {
    /// The root as a lattice point of squared norm 2 (the unit root scaled
    /// by √2).
    #[inline]
    fn from(root: E8Root) -> E8Point {
        let doubled = root.to_gf8().as_array().map(|x| {
            // Unit roots have coordinates 0, ±1/√2 or ±1/√8; scaled by √2
            // they are 0, ±1 or ±½, so doubled 0, ±2 or ±1.
            if x == 0.0 {
                0
            } else if x.abs() > 0.5 {
                2 * if x < 0.0 { -1 } else { 1 }
            } else if x < 0.0 {
                -1
            } else {
                1
            }
        });
        E8Point { doubled }
    }
}

impl Neg for E8Point {
    type Output = E8Point;

    /// The negation (always in range: the range is symmetric).
    #[inline]
    fn neg(self) -> E8Point {
        E8Point {
            doubled: self.doubled.map(|d| -d),
        }
    }
}

impl fmt::Display for E8Point {
    /// Writes the exact coordinates, `[1, 0, -0.5, …]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (k, &d) in self.doubled.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            fmt::Display::fmt(&(f64::from(d) / 2.0), f)?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_paths_agree() {
        // A deterministic spread of inputs: scales from 2^-30 to 2^22,
        // quarter-integer grids (halves and integers: ties), tiny values,
        // bad ones, lattice points, deep holes (integers or half-integers
        // with an odd sum, where the re-rounded coordinate goes up whatever
        // its side), and big values at the input limit.
        let mut state = 0x5EED_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 11
        };
        #[cfg(target_arch = "x86_64")]
        let avx2 = crate::simd::Avx2Fma::detect();
        // (Miri's detection never finds AVX2: scripts/miri.sh compiles it in.)
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        crate::precondition::precondition(
            avx2.is_some(),
            "an x86-64 CPU with AVX2 and FMA (E8Point::nearest's AVX2 path is not compared)",
        );
        let mut fast = 0;
        // (Fewer under Miri, which runs the SIMD paths' intrinsics too.)
        let count = if cfg!(miri) { 800 } else { 600_000 };
        for n in 0..count {
            let coset = (next() & 1) as i32;
            let scale = 1i32 << (next() % 20);
            let mut x: [f32; 8] = core::array::from_fn(|_| {
                let u = next();
                let unit = (u >> 11) as f32 / (1u64 << 42) as f32 - 1.0;
                let doubled = 2 * ((u % 9) as i32 - 4) * scale + coset;
                match n % 8 {
                    0 => unit * 2f32.powi((u % 53) as i32 - 30),
                    1 => ((u % 33) as f32 - 16.0) * 0.25,
                    2 => [
                        0.0,
                        -0.0,
                        1e-30,
                        0.5,
                        -0.5,
                        f32::from_bits(TINY_BITS),
                        -f32::from_bits(TINY_BITS - 1),
                        1.0,
                    ][(u % 8) as usize],
                    3 => f32::from_bits(u as u32),
                    4 | 5 => doubled as f32 * 0.5,
                    6 => {
                        let top = E8Point::INPUT_LIMIT;
                        let above = f32::from_bits(INPUT_LIMIT_BITS + 1);
                        [
                            top,
                            -top,
                            top - 0.5,
                            0.5 - top,
                            top - 0.75,
                            top - 1.0,
                            above,
                            -above,
                        ][(u % 8) as usize]
                    }
                    _ => unit * 4.0,
                }
            });
            if n % 8 == 4 {
                // A lattice point (an even sum of coordinates, halved), or
                // one nudged by a small amount.
                let sum: f32 = x.iter().sum();
                if sum.rem_euclid(2.0) != 0.0 {
                    x[(next() % 8) as usize] += 1.0;
                }
                if next() % 2 == 0 {
                    x[(next() % 8) as usize] += (next() % 64) as f32 / 256.0 - 0.125;
                }
            }
            let portable = nearest_fast_portable(&x);
            #[cfg(target_arch = "x86_64")]
            {
                // SAFETY: SSE2 is in the x86-64 baseline.
                assert_eq!(unsafe { sse2::nearest_fast(&x) }, portable, "{x:?}");
                if let Some(avx2) = avx2 {
                    assert_eq!(avx2.nearest_lattice_point_fast(&x), portable, "{x:?}");
                }
            }
            assert_eq!(nearest_fast(&x), portable, "{x:?}");
            if let Some(doubled) = portable {
                assert_eq!(Ok(E8Point { doubled }), nearest_exact(&x), "{x:?}");
                fast += 1;
            }
        }
        assert!(fast > count / 2, "{fast}");
    }

    #[test]
    fn roots_are_the_norm_two_points() {
        for root in E8Root::all() {
            let p = E8Point::from(root);
            assert_eq!(p.norm_sq(), 2, "root {}", root.code());
            assert_eq!(p.to_root(), Some(root));
            assert_eq!(E8Point::from_doubled(p.doubled()), Ok(p));
            assert!(E8Point::contains(&p.to_array()));
            // The unit root, scaled by √2, decodes to the same point.
            let scaled = root.to_gf8().scale(core::f32::consts::SQRT_2);
            assert_eq!(E8Point::nearest(&scaled), Ok(p));
        }
    }

    #[test]
    fn deep_hole_ties_pick_the_integer_coset() {
        // (1, 0, …, 0) is a deep hole: at distance 1 from the 16 integer
        // points 0, (2, 0, …, 0) and (1, ±e_k); the decoder picks one of them.
        let p = E8Point::nearest(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
        assert!(p.is_integer());
        assert_eq!(
            p.distance_sq(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            1.0
        );
    }

    #[test]
    fn errors_name_the_coordinate() {
        let mut x = [0.0f32; 8];
        x[2] = f32::NAN;
        assert_eq!(
            E8Point::nearest(&x),
            Err(Gf8Error::NotANumber { coordinate: 2 })
        );
        x[2] = 0.0;
        x[7] = f32::NEG_INFINITY;
        assert_eq!(
            E8Point::nearest(&x),
            Err(Gf8Error::Infinite {
                coordinate: 7,
                value: f32::NEG_INFINITY
            })
        );
        x[7] = 0.0;
        x[4] = 4_194_304.5;
        assert_eq!(
            E8Point::nearest(&x),
            Err(Gf8Error::OutOfLatticeRange {
                coordinate: 4,
                value: 4_194_304.5,
                limit: E8Point::INPUT_LIMIT
            })
        );
        let err = E8Point::from_doubled([0, 0, 0, i32::MIN, 0, 0, 0, 0]).unwrap_err();
        assert!(matches!(
            err,
            Gf8Error::OutOfLatticeRange { coordinate: 3, .. }
        ));
    }

    #[test]
    fn extreme_inputs_stay_in_range() {
        for sign in [1.0f32, -1.0] {
            for x in [
                [E8Point::INPUT_LIMIT * sign; 8],
                [(E8Point::INPUT_LIMIT - 0.5) * sign; 8],
                [(E8Point::INPUT_LIMIT - 0.75) * sign; 8],
            ] {
                let p = E8Point::nearest(&x).unwrap();
                assert_eq!(E8Point::from_doubled(p.doubled()), Ok(p));
                for (y, x) in p.to_array().iter().zip(x) {
                    assert!((y - x).abs() <= 1.0);
                }
            }
        }
        let top = E8Point::from_doubled([MAX_DOUBLED; 8]).unwrap();
        assert_eq!(top.to_array(), [E8Point::COORDINATE_LIMIT; 8]);
        assert_eq!(
            top.checked_add(&E8Point::from_doubled([2; 8]).unwrap()),
            None
        );
        assert_eq!((-top).checked_add(&top), Some(E8Point::ORIGIN));
        assert_eq!(top.checked_sub(&top), Some(E8Point::ORIGIN));
        assert_eq!(top.norm_sq(), 8 * (i64::from(MAX_DOUBLED) / 2).pow(2));
    }

    #[test]
    fn contains_matches_from_doubled() {
        // Every doubled vector in a small box: `contains` on the halved
        // coordinates agrees with `from_doubled`.
        let mut checked = 0;
        for code in 0..4u32.pow(8) {
            let doubled: [i32; 8] = core::array::from_fn(|k| ((code >> (2 * k)) & 3) as i32 - 1);
            let coords = doubled.map(|d| d as f32 / 2.0);
            assert_eq!(
                E8Point::contains(&coords),
                E8Point::from_doubled(doubled).is_ok(),
                "{doubled:?}"
            );
            checked += 1;
        }
        assert_eq!(checked, 65536);
        assert!(!E8Point::contains(&[
            0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.25
        ]));
        assert!(!E8Point::contains(&[f32::NAN; 8]));
    }

    #[test]
    fn display_is_exact() {
        let p = E8Point::from_doubled([-3, 1, 1, 1, 1, 1, 1, 1]).unwrap();
        assert_eq!(p.to_string(), "[-1.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]");
        assert_eq!(E8Point::ORIGIN.to_string(), "[0, 0, 0, 0, 0, 0, 0, 0]");
    }
}
