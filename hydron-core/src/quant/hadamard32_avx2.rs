//! The rounds `h = 1, 2, 4` of [`hadamard32`](super::hadamard32) inside
//! one AVX2 register: a lane permutation, a sign flip by `xor` and an
//! addition per round, the portable [`in_register`](super::hadamard32)'s
//! operations on every lane (the same sums, so the same bits; a test
//! checks), which the compiler does not find on its own.

use core::arch::x86_64::{
    __m256, _mm256_add_ps, _mm256_castsi256_ps, _mm256_permute2f128_ps, _mm256_permute_ps,
    _mm256_set_epi32, _mm256_xor_ps,
};

use super::hadamard32::F8;

/// The portable `in_register` on AVX2: each round adds the lanes swapped
/// across `h` to the lanes with the upper ones negated.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn in_register_avx2(x: F8) -> F8 {
    let m = i32::MIN;
    let x: __m256 = bytemuck::cast(x);
    // h = 1: lanes (1, 0, 3, 2) of each half; odd lanes negated.
    let neg1 = _mm256_castsi256_ps(_mm256_set_epi32(m, 0, m, 0, m, 0, m, 0));
    let x = _mm256_add_ps(
        _mm256_permute_ps::<0b10_11_00_01>(x),
        _mm256_xor_ps(x, neg1),
    );
    // h = 2: lanes (2, 3, 0, 1) of each half; lanes 2, 3 of each negated.
    let neg2 = _mm256_castsi256_ps(_mm256_set_epi32(m, m, 0, 0, m, m, 0, 0));
    let x = _mm256_add_ps(
        _mm256_permute_ps::<0b01_00_11_10>(x),
        _mm256_xor_ps(x, neg2),
    );
    // h = 4: the halves swapped; the upper half negated.
    let neg4 = _mm256_castsi256_ps(_mm256_set_epi32(m, m, m, m, 0, 0, 0, 0));
    let x = _mm256_add_ps(_mm256_permute2f128_ps::<1>(x, x), _mm256_xor_ps(x, neg4));
    bytemuck::cast(x)
}
