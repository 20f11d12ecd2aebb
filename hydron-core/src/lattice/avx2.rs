//! [`nearest_fast`](super::nearest_fast) with AVX2 and FMA: the eight
//! coordinates in one register, in the batch kernels' form of the steps
//! (see "The batch kernels' form" in `lattice.rs`), and the reductions by
//! in-register shuffles.
//!
//! Its two functions are compiled with `#[target_feature(enable =
//! "avx2,fma")]`, and, like the batch kernels of `simd/avx2.rs`, are
//! entered only through the [`Avx2Fma`] token, which only detection makes:
//! its methods below are their only callers (one `unsafe` call each).

use core::arch::x86_64::{
    __m256, __m256i, _mm256_add_epi32, _mm256_add_ps, _mm256_and_ps, _mm256_and_si256,
    _mm256_andnot_ps, _mm256_andnot_si256, _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cmp_ps,
    _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_cvttps_epi32, _mm256_fmadd_ps, _mm256_max_ps,
    _mm256_movemask_ps, _mm256_or_ps, _mm256_or_si256, _mm256_permute2f128_ps, _mm256_permute_ps,
    _mm256_permutevar8x32_ps, _mm256_round_ps, _mm256_set1_epi32, _mm256_set1_ps,
    _mm256_setr_epi32, _mm256_setr_ps, _mm256_setzero_ps, _mm256_slli_epi32, _mm256_sub_ps,
    _mm256_xor_ps, _mm256_xor_si256, _CMP_EQ_OQ, _CMP_GT_OQ, _CMP_LE_OQ, _CMP_NGT_UQ,
};

use super::{BELOW_HALF, INPUT_LIMIT_BITS, TIE_MARGIN, TINY_BITS, UP_SCALE};
use crate::simd::Avx2Fma;
use crate::{E8Point, Gf8Error};

impl Avx2Fma {
    /// [`E8Point::nearest`] on the AVX2 path.
    #[inline]
    pub(super) fn nearest_lattice_point(self, x: &[f32; 8]) -> Result<E8Point, Gf8Error> {
        // SAFETY: `self` exists only if detection found AVX2 and FMA on
        // this CPU, the features `nearest` is compiled for.
        unsafe { nearest(x) }
    }

    /// [`nearest_fast`](super::nearest_fast) on the AVX2 path.
    #[inline]
    pub(super) fn nearest_lattice_point_fast(self, x: &[f32; 8]) -> Option<[i32; 8]> {
        // SAFETY: as in `nearest_lattice_point`: detection found AVX2 and FMA.
        unsafe { nearest_fast(x) }
    }
}

/// `_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC` for `vroundps`.
const TRUNCATE: i32 = 0x0B;

/// The masks of the coordinates of `extremes` (below) that count, by
/// `odd_integer | odd_half << 1`: all ones where that candidate's sum
/// is even (lanes 0 to 3 for the integer one, 4 to 7 for the other).
static EVEN: [[i32; 8]; 4] = [
    [-1, -1, -1, -1, -1, -1, -1, -1],
    [0, 0, 0, 0, -1, -1, -1, -1],
    [-1, -1, -1, -1, 0, 0, 0, 0],
    [0; 8],
];

/// [`E8Point::nearest`] on this path, with [`nearest_fast`] inlined:
/// the result is written once, in place (called from a function
/// without AVX2, `nearest_fast` returns an `Option` to copy).
#[target_feature(enable = "avx2,fma")]
fn nearest(x: &[f32; 8]) -> Result<E8Point, Gf8Error> {
    match nearest_fast(x) {
        Some(doubled) => Ok(E8Point { doubled }),
        None => super::nearest_exact(x),
    }
}

/// See [`super::nearest_fast`]; the same answers as
/// [`super::sse2::nearest_fast`] (the same difference of squared
/// distances, bit for bit), in about 100 instructions against its 190.
/// At about four a cycle, the count is the cost.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn nearest_fast(x: &[f32; 8]) -> Option<[i32; 8]> {
    let v: __m256 = bytemuck::cast(*x);
    let zero = _mm256_setzero_ps();
    let abs_bits = _mm256_set1_epi32(0x7FFF_FFFF);
    let abs = _mm256_castsi256_ps(abs_bits);
    let bits = _mm256_and_si256(_mm256_castps_si256(v), abs_bits);
    // Lanes the fast path leaves, as in the batch kernel: out of range
    // or not finite (bits above the limit's), or tiny (`bits + (2^31 −
    // 1)`, where zero becomes the largest, below that of 2^-24 as
    // signed numbers). One branch tests them with the near-tie below;
    // until then their lanes carry meaningless numbers, harmlessly
    // (these instructions do not trap).
    let bad = _mm256_or_si256(
        _mm256_cmpgt_epi32(bits, _mm256_set1_epi32(INPUT_LIMIT_BITS as i32)),
        _mm256_cmpgt_epi32(
            _mm256_set1_epi32(TINY_BITS.wrapping_add(i32::MAX as u32) as i32),
            _mm256_add_epi32(bits, abs_bits),
        ),
    );

    // Round halves away from zero: truncate `v` plus the largest float
    // below ½ with the sign of `v` (the sign bit is `v` without `bits`).
    let sign = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(v), bits));
    let shifted = _mm256_add_ps(v, _mm256_or_ps(_mm256_set1_ps(BELOW_HALF), sign));
    let a = _mm256_cvttps_epi32(shifted);
    let t = _mm256_round_ps::<TRUNCATE>(shifted);
    let r = _mm256_sub_ps(v, t);
    let delta = _mm256_and_ps(r, abs);
    // A mask, all ones where the nearest half-integer is below `v`: not
    // `r > 0`, nor `r = 0` and `a > 0` (the sign of `r + a·2^-60`).
    let down = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LE_OQ>(
        _mm256_fmadd_ps(t, _mm256_set1_ps(UP_SCALE), r),
        zero,
    ));

    // Σδ in every lane, in `nearest_fast_portable`'s order (`δk + δk+4`,
    // then lanes 2 apart, then 1), and, sharing the swap of the two
    // halves, max δ in lanes 0 to 3 and −min δ in lanes 4 to 7 (the
    // largest δ there, the largest −δ here).
    let swapped = _mm256_permute2f128_ps::<1>(delta, delta);
    let sum = _mm256_add_ps(delta, swapped);
    let sum = _mm256_add_ps(sum, _mm256_permute_ps::<0b01_00_11_10>(sum));
    let sum = _mm256_add_ps(sum, _mm256_permute_ps::<0b10_11_00_01>(sum));
    let negate_high = _mm256_castsi256_ps(_mm256_setr_epi32(
        0,
        0,
        0,
        0,
        i32::MIN,
        i32::MIN,
        i32::MIN,
        i32::MIN,
    ));
    let extremes = _mm256_max_ps(
        _mm256_xor_ps(delta, negate_high),
        _mm256_xor_ps(swapped, negate_high),
    );
    let extremes = _mm256_max_ps(extremes, _mm256_permute_ps::<0b01_00_11_10>(extremes));
    let extremes = _mm256_max_ps(extremes, _mm256_permute_ps::<0b10_11_00_01>(extremes));

    // Parities, from the lanes' sign bits: of Σa, and of Σ(h − ½) ≡ Σa +
    // (number up) ≡ Σa + (number down), there being 8 coordinates. On
    // eight bits, `count_ones() & 1` is one `test` and the parity flag.
    let a_odd = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(a))) as u8;
    let downs = _mm256_movemask_ps(_mm256_castsi256_ps(down)) as u8;
    let odd_integer = (a_odd.count_ones() & 1) as usize;
    let odd_half = ((a_odd ^ downs).count_ones() & 1) as usize;
    let even: __m256 = bytemuck::cast(EVEN[odd_integer | odd_half << 1]);

    // The difference of the squared distances, `Σδ − 2 + [odd integer
    // sum](1 − 2·max δ) − [odd half sum](2·min δ)`: the bracketed terms
    // in the two halves (`1 − 2·max δ` rounded once, as a multiply and
    // a subtraction round it; the rest exact), added in lanes 0 to 3 in
    // the order `nearest_fast_portable` adds them, so the difference is
    // the same number (and the two paths leave on the same inputs),
    // then copied to every lane.
    let terms = _mm256_andnot_ps(
        even,
        _mm256_fmadd_ps(
            extremes,
            _mm256_setr_ps(-2.0, -2.0, -2.0, -2.0, 2.0, 2.0, 2.0, 2.0),
            _mm256_setr_ps(1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0),
        ),
    );
    let difference = _mm256_add_ps(
        _mm256_add_ps(_mm256_sub_ps(sum, _mm256_set1_ps(2.0)), terms),
        _mm256_permute2f128_ps::<1>(terms, terms),
    );
    let difference = _mm256_permute2f128_ps::<0>(difference, difference);
    let near_tie =
        _mm256_cmp_ps::<_CMP_NGT_UQ>(_mm256_and_ps(difference, abs), _mm256_set1_ps(TIE_MARGIN));
    if _mm256_movemask_ps(_mm256_or_ps(_mm256_castsi256_ps(bad), near_tie)) != 0 {
        return None;
    }

    // The winner: `half` (a mask, the same in every lane) for the
    // half-integer candidate. `vpermps` reads the low three bits of
    // each index: lane 0 (max δ) for the integer candidate, lane 7
    // (−min δ) for the other; the re-rounded coordinate is the first
    // whose δ is that target, and a candidate with an even sum gets a
    // NaN target, which no δ equals (`flip_k` is then 8: no lane).
    let half = _mm256_cmp_ps::<_CMP_GT_OQ>(difference, zero);
    let half_bits = _mm256_castps_si256(half);
    let target = _mm256_and_ps(
        _mm256_permutevar8x32_ps(_mm256_or_ps(extremes, even), half_bits),
        abs,
    );
    let equal = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(delta, target));
    let flip_k = (equal | 0x100).trailing_zeros() as i32;
    let flip = _mm256_cmpeq_epi32(
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        _mm256_set1_epi32(flip_k),
    );
    // Every doubled coordinate is `2a`, plus `down | 1` (−1 or 1) for
    // the half-integer candidate, and the re-rounded one moves by 2
    // more: the integer candidate's towards `v`, the way `down` says,
    // and the other's to the other side of `v`, the opposite way. Where
    // every δ is the target (0, all integers, or ½, all half-integers:
    // the target is then `half & ½`) `down` does not say (see "The
    // batch kernels' form"), and it moves up, as in the `f64` decoder.
    let all_up = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(
        target,
        _mm256_and_ps(half, _mm256_set1_ps(0.5)),
    ));
    let moves_down = _mm256_andnot_si256(all_up, _mm256_xor_si256(down, half_bits));
    let step = _mm256_xor_si256(
        _mm256_and_si256(moves_down, _mm256_set1_epi32(-4)),
        _mm256_set1_epi32(2),
    );
    let doubled = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_add_epi32(a, a), _mm256_and_si256(flip, step)),
        _mm256_and_si256(half_bits, _mm256_or_si256(down, _mm256_set1_epi32(1))),
    );
    Some(bytemuck::cast::<__m256i, [i32; 8]>(doubled))
}
