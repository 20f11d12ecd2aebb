//! The 240 roots of E8, normalized to unit length, and nearest-root
//! quantization to a one-byte code.
//!
//! # Code order
//!
//! Codes `0..112` are the roots `(±1, ±1, 0, …, 0)/√2`: for the coordinate
//! pair `i < j` with pair index `p` (pairs in lexicographic order, `(0,1)` is
//! 0, `(0,2)` is 1, …, `(6,7)` is 27) and signs `s` (bit 0 set: coordinate
//! `i` is negative; bit 1 set: coordinate `j` is negative), the code is
//! `4p + s`.
//!
//! Codes `112..240` are the roots `(±1/2)^8 · 2/√8 = (±1/√8)^8` with an even
//! number of minus signs: for the sign mask `m` (bit `k` set: coordinate `k`
//! is negative, with an even number of bits set) the code is `112 + m / 2`.
//! Bit 0 of an even mask is the parity of bits 1..7, so `m / 2` runs over
//! `0..128` in increasing mask order.

use crate::{Gf8, Gf8Error};

/// The number of roots of E8.
pub const E8_ROOT_COUNT: usize = 240;

/// Number of roots of the form `(±1, ±1, 0, …)/√2`; they come first.
pub(crate) const INTEGER_ROOT_COUNT: u8 = 112;

const INV_SQRT_2: f32 = core::f32::consts::FRAC_1_SQRT_2;
/// 1/√8: each coordinate of a normalized half-integer root.
pub(crate) const INV_SQRT_8: f32 = 0.353_553_38;

/// The 240 roots of E8, each of unit length, indexed by [`E8Root`] code.
///
/// ```
/// use hydron_core::{E8_ROOTS, NORM_TOLERANCE};
///
/// assert_eq!(E8_ROOTS.len(), 240);
/// assert!(E8_ROOTS.iter().all(|r| (r.norm() - 1.0).abs() < NORM_TOLERANCE));
/// ```
pub static E8_ROOTS: [Gf8; E8_ROOT_COUNT] = build_roots();

const fn build_roots() -> [Gf8; E8_ROOT_COUNT] {
    let mut roots = [Gf8::ZERO; E8_ROOT_COUNT];
    let mut code = 0;
    let mut i = 0;
    while i < 8 {
        let mut j = i + 1;
        while j < 8 {
            let mut signs = 0;
            while signs < 4 {
                let mut coords = [0.0f32; 8];
                coords[i] = if signs & 1 == 0 {
                    INV_SQRT_2
                } else {
                    -INV_SQRT_2
                };
                coords[j] = if signs & 2 == 0 {
                    INV_SQRT_2
                } else {
                    -INV_SQRT_2
                };
                roots[code] = Gf8::new_unchecked(coords);
                code += 1;
                signs += 1;
            }
            j += 1;
        }
        i += 1;
    }
    let mut half = 0u32;
    while half < 128 {
        let mask = even_mask(half as u8);
        let mut coords = [INV_SQRT_8; 8];
        let mut k = 0;
        while k < 8 {
            if mask & (1 << k) != 0 {
                coords[k] = -INV_SQRT_8;
            }
            k += 1;
        }
        roots[code] = Gf8::new_unchecked(coords);
        code += 1;
        half += 1;
    }
    roots
}

/// The even sign mask whose bits 1..7 are `half`'s bits 0..6.
#[inline]
const fn even_mask(half: u8) -> u8 {
    let upper = half << 1;
    upper | (upper.count_ones() as u8 & 1)
}

/// Index of the coordinate pair `i < j` among the 28 pairs, lexicographic.
#[inline]
pub(crate) const fn pair_index(i: usize, j: usize) -> usize {
    i * (15 - i) / 2 + (j - i - 1)
}

/// A root of E8 as a one-byte code in `0..240`.
///
/// Codes `0..112` are the roots `(±1, ±1, 0, …, 0)/√2`: `4p + s` for the
/// coordinate pair `i < j` with lexicographic pair index `p` (`(0,1)` is 0,
/// `(6,7)` is 27), where bit 0 of `s` makes coordinate `i` negative and
/// bit 1 coordinate `j`. Codes `112..240` are the roots `(±1/√8)^8` with an
/// even number of minus signs: `112 + m / 2` for the sign mask `m` (bit `k`
/// set: coordinate `k` negative).
///
/// ```
/// use hydron_core::{E8Root, Gf8};
///
/// let v = Gf8::normalize([0.9, 0.8, 0.1, 0.0, 0.0, 0.0, 0.0, -0.1])?;
/// let root = v.nearest_root();
/// assert_eq!(root.code(), 0); // (1, 1, 0, …)/√2
/// assert_eq!(E8Root::new(root.code())?, root);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, bytemuck::NoUninit)]
#[repr(transparent)]
pub struct E8Root(pub(crate) u8);

impl E8Root {
    /// The root with this code; codes `240..=255` are an error.
    ///
    /// ```
    /// use hydron_core::{E8Root, Gf8Error};
    /// assert!(E8Root::new(239).is_ok());
    /// assert_eq!(E8Root::new(240), Err(Gf8Error::InvalidRootCode { code: 240 }));
    /// ```
    #[inline]
    pub const fn new(code: u8) -> Result<E8Root, Gf8Error> {
        if (code as usize) < E8_ROOT_COUNT {
            Ok(E8Root(code))
        } else {
            Err(Gf8Error::InvalidRootCode { code })
        }
    }

    /// The one-byte code, in `0..240`.
    ///
    /// ```
    /// use hydron_core::E8Root;
    /// assert_eq!(E8Root::new(7)?.code(), 7);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub const fn code(self) -> u8 {
        self.0
    }

    /// The root as a unit vector.
    ///
    /// ```
    /// use hydron_core::E8Root;
    /// assert!((E8Root::new(200)?.to_gf8().norm() - 1.0).abs() < 1e-6);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn to_gf8(self) -> Gf8 {
        E8_ROOTS[usize::from(self.0)]
    }

    /// All 240 roots, in code order.
    ///
    /// ```
    /// use hydron_core::E8Root;
    /// assert_eq!(E8Root::all().count(), 240);
    /// ```
    pub fn all() -> impl ExactSizeIterator<Item = E8Root> + Clone {
        (0..E8_ROOT_COUNT as u8).map(E8Root)
    }

    /// The half-integer root `(±1/√8)^8` whose minus signs are the set bits
    /// of `bits` (bit `k` for coordinate `k`), with even parity enforced:
    /// when an odd number of bits is set, bit 0 is flipped.
    ///
    /// ```
    /// use hydron_core::E8Root;
    /// let r = E8Root::from_bits_even_parity(0b0000_0011);
    /// assert!(r.to_gf8()[0] < 0.0 && r.to_gf8()[1] < 0.0 && r.to_gf8()[2] > 0.0);
    /// // One bit set is odd: bit 0 flips to make it even.
    /// let r = E8Root::from_bits_even_parity(0b1000_0000);
    /// assert!(r.to_gf8()[0] < 0.0 && r.to_gf8()[7] < 0.0);
    /// ```
    #[inline]
    #[must_use]
    pub const fn from_bits_even_parity(bits: u8) -> E8Root {
        E8Root(INTEGER_ROOT_COUNT + (bits >> 1))
    }

    /// The nearest root to `v` by brute force: the largest cosine over all
    /// 240 roots, first code on ties. This is the reference that
    /// [`Gf8::nearest_root`] is tested and benchmarked against; the two
    /// agree except on near-ties, where the best two cosines differ by less
    /// than the closed form's `f32` rounding (about 2e-7).
    ///
    /// ```
    /// use hydron_core::{E8Root, Gf8};
    /// let v = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
    /// assert_eq!(E8Root::nearest_brute_force(v), v.nearest_root());
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    pub fn nearest_brute_force(v: Gf8) -> E8Root {
        let mut best = 0;
        let mut best_cos = f32::NEG_INFINITY;
        for (code, root) in E8_ROOTS.iter().enumerate() {
            let cos = root.dot(v);
            if cos > best_cos {
                best_cos = cos;
                best = code;
            }
        }
        E8Root(best as u8)
    }
}

impl From<E8Root> for u8 {
    #[inline]
    fn from(root: E8Root) -> u8 {
        root.0
    }
}

impl TryFrom<u8> for E8Root {
    type Error = Gf8Error;

    /// Same as [`E8Root::new`].
    #[inline]
    fn try_from(code: u8) -> Result<E8Root, Gf8Error> {
        E8Root::new(code)
    }
}

impl Gf8 {
    /// The code of the E8 root with the largest cosine to `self`, in closed
    /// form (O(8) work, no loop over the roots).
    ///
    /// The best root `(±1, ±1, 0, …)/√2` takes the two largest `|x_i|` with
    /// their signs; the best root `(±1/√8)^8` takes the signs of `x`,
    /// flipping the smallest `|x_i|` when the count of negatives is odd.
    /// The better of the two wins, their scores compared in `f32`: when the
    /// two best roots' cosines differ by less than about 2e-7, the scores'
    /// rounding decides (the same way on every backend, and not always as
    /// [`E8Root::nearest_brute_force`]'s `f64` cosines would); on an exact
    /// tie the integer-type root (the lower code) wins. The zero vector gives code 0 when its zeros
    /// are positive; a negative zero counts as a minus sign (as in the batch
    /// kernels), so `[-0.0; 8]` gives code 3, `(−1, −1, 0, …)/√2` (every
    /// root is equally far from zero). Any finite coordinates work, however
    /// large (a [`Gf8::new_unchecked`] vector near `f32::MAX` is rescaled
    /// where its scores would overflow).
    ///
    /// ```
    /// use hydron_core::{E8Root, Gf8};
    /// let v = Gf8::from_scalar(1.0)?; // (1, …, 1)/√8 is itself a root
    /// assert_eq!(v.nearest_root().to_gf8(), v);
    /// assert_eq!(Gf8::new_unchecked([3e38; 8]).nearest_root(), v.nearest_root());
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn nearest_root(self) -> E8Root {
        E8Root(nearest_root_code(self.as_array()))
    }

    /// The half-integer E8 root for 8 sign bits (bit `k` set: coordinate `k`
    /// negative), with even parity enforced by flipping bit 0; see
    /// [`E8Root::from_bits_even_parity`].
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let v = Gf8::from_bits_even_parity(0b0101_0000);
    /// assert!(v[4] < 0.0 && v[6] < 0.0 && v[0] > 0.0);
    /// assert!((v.norm() - 1.0).abs() < 1e-6);
    /// ```
    #[inline]
    #[must_use]
    pub fn from_bits_even_parity(bits: u8) -> Gf8 {
        E8Root::from_bits_even_parity(bits).to_gf8()
    }
}

/// The closed-form nearest-root code for any finite coordinates (the
/// direction is all that matters, so they need not be normalized).
///
/// The scores are sums of up to eight magnitudes, which overflow `f32` for
/// coordinates near `f32::MAX`; then (and only then: one predictable
/// branch) the input is scaled by 1/16, exactly for every coordinate above
/// 2^-122, and decoded again.
#[inline]
pub(crate) fn nearest_root_code(x: &[f32; 8]) -> u8 {
    match nearest_root_code_unscaled(x) {
        (code, true) => code,
        (code, false) => nearest_root_code_scaled(x).unwrap_or(code),
    }
}

/// [`nearest_root_code`] of `x / 16`, if its scores are finite (they are
/// unless `x` has a NaN). Out of line: only for inputs whose scores
/// overflow.
#[cold]
#[inline(never)]
pub(crate) fn nearest_root_code_scaled(x: &[f32; 8]) -> Option<u8> {
    // |x / 16| ≤ f32::MAX / 16, so no sum of eight of them overflows.
    match nearest_root_code_unscaled(&x.map(|v| v * 0.0625)) {
        (code, true) => Some(code),
        (_, false) => None,
    }
}

/// The closed form, and whether both scores are finite (they overflow
/// for coordinates near `f32::MAX`, and are NaN for NaN input or `∞ − ∞`).
///
/// On x86-64, [`sse2::nearest_root_code`] first (SSE2 is the baseline:
/// no detection); where its scores are not finite, the plain form below
/// decides, with its own rules for NaN.
#[inline]
fn nearest_root_code_unscaled(x: &[f32; 8]) -> (u8, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of every x86-64 target (the baseline).
        if let Some(code) = unsafe { sse2::nearest_root_code(x) } {
            return (code, true);
        }
    }
    nearest_root_code_plain(x)
}

/// The closed form in plain Rust: see [`nearest_root_code_unscaled`].
#[inline]
fn nearest_root_code_plain(x: &[f32; 8]) -> (u8, bool) {
    // Written without data-dependent branches (selects only), so that
    // random inputs do not pay for branch mispredictions.
    let mut negatives = 0u32;
    let mut abs = [0.0f32; 8];
    for k in 0..8 {
        let bits = x[k].to_bits();
        negatives |= (bits >> 31) << k;
        abs[k] = f32::from_bits(bits & 0x7FFF_FFFF);
    }

    // Two largest |x_i| (first index wins ties) and the smallest, with
    // their indices.
    let swap = abs[1] > abs[0];
    let (mut first_value, mut first) = select(swap, (abs[1], 1), (abs[0], 0));
    let (mut second_value, mut second) = select(swap, (abs[0], 0), (abs[1], 1));
    let lower = abs[1] < abs[0];
    let (mut smallest_value, mut smallest) = select(lower, (abs[1], 1), (abs[0], 0));
    let mut sum = abs[0] + abs[1];
    for (k, &a) in abs.iter().enumerate().skip(2) {
        let k = k as u32;
        sum += a;
        let above_first = a > first_value;
        let above_second = a > second_value;
        // if a > first { second = first; first = k } else if a > second { second = k }
        (second_value, second) = select(
            above_first,
            (first_value, first),
            select(above_second, (a, k), (second_value, second)),
        );
        (first_value, first) = select(above_first, (a, k), (first_value, first));
        (smallest_value, smallest) = select(a < smallest_value, (a, k), (smallest_value, smallest));
    }

    let integer_score = (first_value + second_value) * INV_SQRT_2;
    let odd = negatives.count_ones() & 1;
    let half_score = select(odd == 1, sum - 2.0 * smallest_value, sum) * INV_SQRT_8;

    let (i, j) = (first.min(second), first.max(second));
    let signs = ((negatives >> i) & 1) | (((negatives >> j) & 1) << 1);
    let integer_code = 4 * pair_index(i as usize, j as usize) as u32 + signs;
    let mask = negatives ^ (odd << smallest);
    let half_code = u32::from(INTEGER_ROOT_COUNT) + (mask >> 1);
    let code = select(integer_score >= half_score, integer_code, half_code) as u8;
    (
        code,
        integer_score < f32::INFINITY && half_score < f32::INFINITY,
    )
}

/// [`nearest_root_code_plain`] with SSE2: the extremes by reductions
/// across the two registers instead of a chain of selects through the
/// eight coordinates (the chain made the plain form about 60 cycles deep).
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use core::arch::x86_64::{
        __m128, __m128i, _mm_and_ps, _mm_andnot_ps, _mm_castsi128_ps, _mm_cmpeq_epi32,
        _mm_cvtss_f32, _mm_or_ps, _mm_set1_epi32, _mm_set1_ps, _mm_setr_epi32,
    };

    use super::{pair_index, select, INTEGER_ROOT_COUNT, INV_SQRT_2, INV_SQRT_8};
    use crate::sse2::{extreme, first_equal, mask8, parity8};

    /// The code, if both scores are finite; else `None` (the plain form
    /// decides). The same comparisons on the same values as the plain
    /// form: the first largest `|x_k|` (lowest index on ties), the first
    /// largest of the others, the first smallest, and the sum in index
    /// order.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn nearest_root_code(x: &[f32; 8]) -> Option<u8> {
        let [low, high]: [__m128; 2] = bytemuck::cast(*x);
        let abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFF_FFFF));
        let (abs_low, abs_high) = (_mm_and_ps(low, abs_mask), _mm_and_ps(high, abs_mask));
        let negatives = mask8(low, high);
        let abs: [f32; 8] = bytemuck::cast([abs_low, abs_high]);
        let sum = abs[0] + abs[1] + abs[2] + abs[3] + abs[4] + abs[5] + abs[6] + abs[7];

        let largest = extreme(abs_low, abs_high, true);
        let first = first_equal(abs_low, abs_high, largest);
        // The others: the first's lane becomes −1, below every magnitude.
        let minus_one = _mm_set1_ps(-1.0);
        let without_first = |lanes: __m128i, magnitudes: __m128| {
            let at_first = _mm_castsi128_ps(_mm_cmpeq_epi32(lanes, _mm_set1_epi32(first as i32)));
            _mm_or_ps(
                _mm_andnot_ps(at_first, magnitudes),
                _mm_and_ps(at_first, minus_one),
            )
        };
        let rest_low = without_first(_mm_setr_epi32(0, 1, 2, 3), abs_low);
        let rest_high = without_first(_mm_setr_epi32(4, 5, 6, 7), abs_high);
        let second_largest = extreme(rest_low, rest_high, true);
        let second = first_equal(rest_low, rest_high, second_largest);
        let least = extreme(abs_low, abs_high, false);
        let smallest = first_equal(abs_low, abs_high, least);

        let integer_score = (_mm_cvtss_f32(largest) + _mm_cvtss_f32(second_largest)) * INV_SQRT_2;
        let odd = parity8(negatives) as u32;
        let half_score = select(odd == 1, sum - 2.0 * _mm_cvtss_f32(least), sum) * INV_SQRT_8;
        if !(integer_score < f32::INFINITY && half_score < f32::INFINITY) {
            return None;
        }
        let (i, j) = (first.min(second), first.max(second));
        let signs = ((negatives >> i) & 1) | (((negatives >> j) & 1) << 1);
        let integer_code = 4 * pair_index(i, j) as u32 + signs;
        let mask = negatives ^ (odd << smallest);
        let half_code = u32::from(INTEGER_ROOT_COUNT) + (mask >> 1);
        Some(select(integer_score >= half_score, integer_code, half_code) as u8)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_table_order() {
        for root in E8Root::all() {
            assert_eq!(root.to_gf8().nearest_root(), root, "root {}", root.code());
        }
    }

    /// The SSE2 form and the plain one give the same code wherever the
    /// SSE2 form answers (finite scores), on random directions and on the
    /// inputs whose ties the index rules decide.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_sse2_form_is_the_plain_one() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let pick = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 3e38, -3e38, 1e-40];
        let mut checked = 0;
        for round in 0..400_000 {
            let x: [f32; 8] = core::array::from_fn(|_| {
                let r = next();
                if round % 2 == 0 {
                    pick[(r % pick.len() as u64) as usize]
                } else {
                    (r >> 40) as f32 / (1u64 << 23) as f32 - 1.0
                }
            });
            // SAFETY: SSE2 is the x86-64 baseline.
            if let Some(code) = unsafe { sse2::nearest_root_code(&x) } {
                assert_eq!((code, true), nearest_root_code_plain(&x), "{x:?}");
                checked += 1;
            }
        }
        assert!(checked > 300_000, "{checked}");
    }

    #[test]
    fn pair_index_is_lexicographic() {
        let mut expected = 0;
        for i in 0..8 {
            for j in i + 1..8 {
                assert_eq!(pair_index(i, j), expected);
                expected += 1;
            }
        }
        assert_eq!(expected, 28);
    }

    #[test]
    fn even_masks_are_even_and_increasing() {
        let masks: Vec<u8> = (0..128).map(even_mask).collect();
        assert!(masks.iter().all(|m| m.count_ones() % 2 == 0));
        assert!(masks.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn from_bits_even_parity_always_lands_on_a_half_root() {
        for bits in 0..=255u8 {
            let root = E8Root::from_bits_even_parity(bits);
            assert!(root.code() >= INTEGER_ROOT_COUNT);
            let v = root.to_gf8();
            let negatives = (0..8).filter(|&k| v[k] < 0.0).count();
            assert_eq!(negatives % 2, 0);
            for k in 1..8 {
                assert_eq!(
                    v[k] < 0.0,
                    bits & (1 << k) != 0,
                    "bits {bits:#010b}, coordinate {k}"
                );
            }
            assert!(v
                .as_array()
                .iter()
                .all(|x| (x.abs() - INV_SQRT_8).abs() < 1e-7));
        }
    }

    #[test]
    fn zero_vector_gives_code_zero() {
        assert_eq!(Gf8::ZERO.nearest_root().code(), 0);
    }
}
