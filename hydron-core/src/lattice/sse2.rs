//! [`nearest_fast`](super::nearest_fast) with SSE2 (the x86-64 baseline):
//! the eight coordinates in two registers, the reductions by shuffles and
//! `movmskps`. SSE2 is part of every x86-64 target, so this needs no
//! detection and no token.

use core::arch::x86_64::{
    __m128, __m128i, _mm_add_epi32, _mm_add_ps, _mm_and_ps, _mm_and_si128, _mm_castps_si128,
    _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_cmpgt_epi32, _mm_cmpgt_ps, _mm_cmplt_ps, _mm_cmpnle_ps,
    _mm_cvtepi32_ps, _mm_cvtss_f32, _mm_cvttps_epi32, _mm_movehl_ps, _mm_or_ps, _mm_or_si128,
    _mm_set1_epi32, _mm_set1_ps, _mm_setr_epi32, _mm_setzero_ps, _mm_setzero_si128, _mm_shuffle_ps,
    _mm_slli_epi32, _mm_srli_epi32, _mm_sub_epi32, _mm_sub_ps,
};

use super::{select, E8Point, TIE_MARGIN};
use crate::sse2::{extreme, first_equal, mask8, parity8};

/// See [`super::nearest_fast`]; the same steps, lane-parallel.
#[inline]
#[target_feature(enable = "sse2")]
pub(super) fn nearest_fast(x: &[f32; 8]) -> Option<[i32; 8]> {
    let [low, high]: [__m128; 2] = bytemuck::cast(*x);
    let abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFF_FFFF));
    let (abs_low, abs_high) = (_mm_and_ps(low, abs_mask), _mm_and_ps(high, abs_mask));
    // Out of range, infinite or NaN (`!(|v| ≤ limit)`), or tiny.
    let limit = _mm_set1_ps(E8Point::INPUT_LIMIT);
    let tiny = _mm_set1_ps(f32::from_bits(super::TINY_BITS));
    let zero = _mm_setzero_ps();
    let leave = |a: __m128| {
        _mm_or_ps(
            _mm_cmpnle_ps(a, limit),
            _mm_and_ps(_mm_cmplt_ps(a, tiny), _mm_cmpgt_ps(a, zero)),
        )
    };
    if mask8(leave(abs_low), leave(abs_high)) != 0 {
        return None;
    }

    // Round halves away from zero: truncate, then add the truncation
    // of twice the fractional part (exact for |v| ≤ 2^22).
    let round = |v: __m128| -> (__m128i, __m128) {
        let t = _mm_cvttps_epi32(v);
        let f = _mm_sub_ps(v, _mm_cvtepi32_ps(t));
        let adjust = _mm_cvttps_epi32(_mm_add_ps(f, f));
        (
            _mm_add_epi32(t, adjust),
            _mm_sub_ps(f, _mm_cvtepi32_ps(adjust)),
        )
    };
    let (a_low, r_low) = round(low);
    let (a_high, r_high) = round(high);
    let (delta_low, delta_high) = (_mm_and_ps(r_low, abs_mask), _mm_and_ps(r_high, abs_mask));
    // Up: `r > 0`, or `r = +0` and `a > 0` (see the AVX2 kernel).
    let up = |a: __m128i, r: __m128| {
        let zero = _mm_setzero_si128();
        let a_positive = _mm_srli_epi32::<31>(_mm_sub_epi32(zero, a));
        _mm_cmpgt_epi32(_mm_or_si128(_mm_castps_si128(r), a_positive), zero)
    };
    let (up_low, up_high) = (up(a_low, r_low), up(a_high, r_high));

    let sum = _mm_add_ps(delta_low, delta_high);
    let sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
    let sum_delta = _mm_cvtss_f32(sum) + _mm_cvtss_f32(_mm_shuffle_ps::<1>(sum, sum));
    let max = extreme(delta_low, delta_high, true);
    let min = extreme(delta_low, delta_high, false);
    let max_k = first_equal(delta_low, delta_high, max);
    let min_k = first_equal(delta_low, delta_high, min);
    let (max_delta, min_delta) = (_mm_cvtss_f32(max), _mm_cvtss_f32(min));
    // Parities: of Σa (the low bits' XOR), and of Σa + (number up).
    let a_odd = mask8(
        _mm_castsi128_ps(_mm_slli_epi32::<31>(a_low)),
        _mm_castsi128_ps(_mm_slli_epi32::<31>(a_high)),
    );
    let ups = mask8(_mm_castsi128_ps(up_low), _mm_castsi128_ps(up_high));
    let odd_integer = parity8(a_odd);
    let odd_half = parity8(a_odd ^ ups);
    let difference = sum_delta - 2.0 + odd_integer as f32 * (1.0 - 2.0 * max_delta)
        - odd_half as f32 * (2.0 * min_delta);
    // (Finite: every input coordinate is in range.)
    if difference.abs() <= TIE_MARGIN {
        return None;
    }

    // The winner, without a branch (which candidate wins is as good as
    // random): `half` is all ones for the half-integer candidate.
    // Every coordinate is `2a`, minus `up | 1` (−1 up, 1 down) for the
    // half-integers.
    let half = -i32::from(difference > 0.0);
    let half_lanes = _mm_set1_epi32(half);
    let one = _mm_set1_epi32(1);
    let pick = |a: __m128i, up: __m128i| {
        _mm_sub_epi32(
            _mm_add_epi32(a, a),
            _mm_and_si128(_mm_or_si128(up, one), half_lanes),
        )
    };
    let is_half = half != 0;
    let flip_k = select(is_half, min_k, max_k);
    let odd = select(is_half, odd_half, odd_integer);
    let r: [f32; 8] = bytemuck::cast([r_low, r_high]);
    let r_flip = r[flip_k];
    // `&` and `|` on `bool`: both sides are evaluated, no branch.
    let goes_up =
        (is_half & ((ups & (1 << flip_k) == 0) | (r_flip >= 0.5))) | (!is_half & (r_flip >= 0.0));
    // The re-rounded coordinate moves by ±2 when the sum is odd: added
    // in the registers (a store of one lane then a load of the whole
    // would stall store forwarding).
    let flip = _mm_set1_epi32(odd * (4 * i32::from(goes_up) - 2));
    let at_flip =
        |lanes: __m128i| _mm_and_si128(_mm_cmpeq_epi32(lanes, _mm_set1_epi32(flip_k as i32)), flip);
    let low = _mm_add_epi32(pick(a_low, up_low), at_flip(_mm_setr_epi32(0, 1, 2, 3)));
    let high = _mm_add_epi32(pick(a_high, up_high), at_flip(_mm_setr_epi32(4, 5, 6, 7)));
    let doubled: [i32; 8] = bytemuck::cast([low, high]);
    Some(doubled)
}
