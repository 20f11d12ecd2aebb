//! One vector's eight coordinates in two SSE2 registers (`low`: 0 to 3,
//! `high`: 4 to 7): the reductions the single-vector fast paths share,
//! [`E8Point::nearest`](crate::E8Point::nearest)'s (`lattice.rs`) and the
//! nearest-root closed form's (`e8.rs`). SSE2 is part of the x86-64
//! baseline, so nothing here needs detection.

use core::arch::x86_64::{
    __m128, _mm_cmpeq_ps, _mm_max_ps, _mm_min_ps, _mm_movemask_ps, _mm_shuffle_ps,
};

/// The parity of the set bits of an 8-bit mask (without `popcnt`, which
/// the x86-64 baseline lacks): a 16-entry table in a constant.
#[inline]
pub(crate) fn parity8(mask: u32) -> i32 {
    ((0x6996u32 >> ((mask ^ (mask >> 4)) & 0xF)) & 1) as i32
}

/// The two halves' lanes as an 8-bit mask (bit `k`: coordinate `k`).
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn mask8(low: __m128, high: __m128) -> u32 {
    (_mm_movemask_ps(low) | (_mm_movemask_ps(high) << 4)) as u32
}

/// The largest (or smallest) lane of `low` and `high`, in every lane.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn extreme(low: __m128, high: __m128, largest: bool) -> __m128 {
    let pick = |p: __m128, q: __m128| {
        if largest {
            _mm_max_ps(p, q)
        } else {
            _mm_min_ps(p, q)
        }
    };
    let m = pick(low, high);
    let m = pick(m, _mm_shuffle_ps::<0b01_00_11_10>(m, m));
    pick(m, _mm_shuffle_ps::<0b10_11_00_01>(m, m))
}

/// The first coordinate (lowest index) of `low` and `high` equal to
/// `value` (the same in every lane, as [`extreme`] gives it); `& 7` keeps
/// the index in bounds for the compiler.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn first_equal(low: __m128, high: __m128, value: __m128) -> usize {
    mask8(_mm_cmpeq_ps(low, value), _mm_cmpeq_ps(high, value)).trailing_zeros() as usize & 7
}
