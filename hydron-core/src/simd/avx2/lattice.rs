//! The AVX2 lattice kernel,
//! [`batch::nearest_lattice_points_into`](crate::batch::nearest_lattice_points_into)
//! eight vectors at a time: the exact `f32` fast path of
//! [`E8Point::nearest`] lane by lane, first in a shorter form for blocks
//! without integer, half-integer or tiny coordinates, and any block with a
//! lane that path leaves handed to the scalar kernel (see the module docs
//! of [`avx2`](super)). Entered only through
//! [`Avx2Fma::nearest_lattice_points_into`](super::Avx2Fma).

use core::arch::x86_64::{
    __m256, __m256i, _mm256_add_epi32, _mm256_add_ps, _mm256_and_ps, _mm256_and_si256,
    _mm256_andnot_ps, _mm256_andnot_si256, _mm256_blendv_epi8, _mm256_blendv_ps,
    _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cmp_ps, _mm256_cmpeq_epi32,
    _mm256_cmpgt_epi32, _mm256_cvtepi32_ps, _mm256_cvtps_epi32, _mm256_cvttps_epi32,
    _mm256_fmadd_ps, _mm256_max_epi32, _mm256_max_ps, _mm256_min_epi32, _mm256_min_ps,
    _mm256_movemask_ps, _mm256_mul_ps, _mm256_or_ps, _mm256_or_si256, _mm256_round_ps,
    _mm256_set1_epi32, _mm256_set1_ps, _mm256_setzero_ps, _mm256_setzero_si256, _mm256_sign_epi32,
    _mm256_slli_epi32, _mm256_srai_epi32, _mm256_sub_epi32, _mm256_sub_ps, _mm256_xor_ps,
    _mm256_xor_si256, _CMP_EQ_OQ, _CMP_GE_OQ, _CMP_GT_OQ, _CMP_LE_OQ, _CMP_LT_OQ, _CMP_NGT_UQ,
};

use super::{scalar, transpose, transpose_from_halves, transpose_registers, Block};
use crate::lattice::{BELOW_HALF, INPUT_LIMIT_BITS, TIE_MARGIN, TINY_BITS, UP_SCALE};
use crate::{BatchError, E8Point};

/// `_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC` for `vroundps`.
const TRUNCATE: i32 = 0x0B;

/// The difference of the two cosets' squared distances, as the lattice
/// kernels compare them: `Σδ − 2 + [odd integer sum](1 − 2·max δ) −
/// [odd half sum](2·min δ)`, the bracketed terms taken as masks (all ones
/// when true) on numbers that are ≥ 0, so times 0 or 1 exactly.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn squared_distance_difference(
    sum_delta: __m256,
    max_delta: __m256,
    min_delta: __m256,
    odd_integer: __m256i,
    odd_half: __m256i,
) -> __m256 {
    let two = _mm256_set1_ps(2.0);
    _mm256_sub_ps(
        _mm256_add_ps(
            _mm256_sub_ps(sum_delta, two),
            _mm256_and_ps(
                _mm256_castsi256_ps(odd_integer),
                _mm256_sub_ps(_mm256_set1_ps(1.0), _mm256_mul_ps(two, max_delta)),
            ),
        ),
        _mm256_and_ps(_mm256_castsi256_ps(odd_half), _mm256_mul_ps(two, min_delta)),
    )
}

/// `$f` over the eight values of `$v` as a balanced tree (short
/// dependency chains): `f(f(f(v0, v1), f(v2, v3)), f(f(v4, v5), f(v6, v7)))`.
macro_rules! tree8 {
    ($f:ident, $v:expr) => {{
        let v = &$v;
        $f(
            $f($f(v[0], v[1]), $f(v[2], v[3])),
            $f($f(v[4], v[5]), $f(v[6], v[7])),
        )
    }};
}

/// `$body` once for each `$k` in `0..8`, written out.
macro_rules! unroll8 {
    ($k:ident => $body:block) => {{
        {
            let $k = 0usize;
            $body
        }
        {
            let $k = 1usize;
            $body
        }
        {
            let $k = 2usize;
            $body
        }
        {
            let $k = 3usize;
            $body
        }
        {
            let $k = 4usize;
            $body
        }
        {
            let $k = 5usize;
            $body
        }
        {
            let $k = 6usize;
            $body
        }
        {
            let $k = 7usize;
            $body
        }
    }};
}

/// The first path of the lattice kernel, for blocks of generic vectors:
/// the doubled coordinates for eight vectors in structure-of-arrays form,
/// or `None` unless every coordinate of every lane has a rounding error `δ`
/// of at least 2^-24 and below ½, and no lane is near a tie. Such a block
/// has no integer, half-integer, tiny, zero, out-of-range or non-finite
/// coordinate, so the tie rules of the decoder never apply, and each step
/// takes one instruction or two:
///
/// - `a = cvtps2dq(v)` rounds to the nearest integer (ties to even, but
///   there are none), `r = v − a` (exact), `δ = |r|`; the nearest
///   half-integer is above `v` exactly when `r > 0` (`r` is never 0).
/// - The parity of Σa is bit 0 of the XOR of the `a`, that of the number of
///   coordinates going down the sign bit of the XOR of the `r`.
/// - The answer is `2a + w·sign(r)` (`vpsignd`): `w = 0` (integer
///   candidate) or 1 (half-integer one), and for the re-rounded coordinate
///   of a candidate with an odd sum 2 (`a` moves past `v`) or −1 (`h`
///   moves to the other side).
///
/// Why the two limits on `δ` catch every other input: a tiny coordinate is
/// its own `δ` (below 2^-24), and any other `δ` is 0 or at least 2^-24 (a
/// multiple of the coordinate's ulp when that is 2^-24 or more, the
/// coordinate itself below ½). Beyond the input limit a float is a multiple
/// of ½ (`δ` 0 or ½) up to 2^31, where `cvtps2dq` gives −2^31 and `δ` is 0
/// or at least 2^8; an infinity makes `δ` infinite, and a NaN makes the
/// sum NaN, which the near-tie test counts as a tie (`vmaxps` may drop a
/// NaN, the sum does not). A block that leaves goes to
/// [`nearest_lattice_block`], which starts over.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn nearest_lattice_block_generic(x: &[__m256; 8]) -> Option<[__m256i; 8]> {
    let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
    let one = _mm256_set1_epi32(1);
    let zero = _mm256_setzero_ps();
    let zero_i = _mm256_setzero_si256();
    let mut a = [zero_i; 8];
    let mut r = [zero; 8];
    let mut delta = [zero; 8];
    let mut parity_a = zero_i;
    let mut parity_r = zero;
    // Written out for each coordinate (a loop here stays a loop, with its
    // arrays in memory).
    unroll8!(k => {
        a[k] = _mm256_cvtps_epi32(x[k]);
        r[k] = _mm256_sub_ps(x[k], _mm256_cvtepi32_ps(a[k]));
        delta[k] = _mm256_and_ps(r[k], abs);
        parity_a = _mm256_xor_si256(parity_a, a[k]);
        parity_r = _mm256_xor_ps(parity_r, r[k]);
    });
    // Sums and extremes as trees (short dependency chains).
    let sum_delta = tree8!(_mm256_add_ps, delta);
    let max_delta = tree8!(_mm256_max_ps, delta);
    let min_delta = tree8!(_mm256_min_ps, delta);
    // As masks (all ones when true): Σa even; an odd number going down,
    // which flips the parity of Σ(h − ½) = Σa − (number down) against Σa.
    let even_integer = _mm256_cmpeq_epi32(_mm256_and_si256(parity_a, one), zero_i);
    let odd_down = _mm256_srai_epi32::<31>(_mm256_castps_si256(parity_r));
    let odd_integer = _mm256_xor_si256(even_integer, _mm256_set1_epi32(-1));
    let odd_half = _mm256_xor_si256(odd_integer, odd_down);
    // The difference of the squared distances, as in `nearest_lattice_block`.
    let difference =
        squared_distance_difference(sum_delta, max_delta, min_delta, odd_integer, odd_half);
    let leave = _mm256_or_ps(
        _mm256_or_ps(
            _mm256_cmp_ps::<_CMP_LT_OQ>(min_delta, _mm256_set1_ps(f32::from_bits(TINY_BITS))),
            _mm256_cmp_ps::<_CMP_GE_OQ>(max_delta, _mm256_set1_ps(0.5)),
        ),
        _mm256_cmp_ps::<_CMP_NGT_UQ>(_mm256_and_ps(difference, abs), _mm256_set1_ps(TIE_MARGIN)),
    );
    if _mm256_movemask_ps(leave) != 0 {
        return None;
    }

    // The winner, lane by lane: `half` (a mask) for the half-integer
    // candidate. Its odd sum re-rounds the first coordinate whose `δ` is
    // the target (the largest for the integer candidate, the smallest for
    // the other); a lane with an even sum gets a target no `δ` equals (a
    // NaN).
    let half = _mm256_cmp_ps::<_CMP_GT_OQ>(difference, zero);
    let half_i = _mm256_castps_si256(half);
    let even = _mm256_xor_si256(even_integer, _mm256_and_si256(half_i, odd_down));
    let target = _mm256_or_ps(
        _mm256_blendv_ps(max_delta, min_delta, half),
        _mm256_castsi256_ps(even),
    );
    // `w` is `w_rest` but at the first coordinate whose `δ` is the target,
    // where it is `w_rest ^ flip` (2 for the integer candidate, −1 for the
    // other); `flip` is cleared once used.
    let w_rest = _mm256_and_si256(half_i, one);
    let mut flip = _mm256_xor_si256(
        _mm256_set1_epi32(2),
        _mm256_and_si256(half_i, _mm256_set1_epi32(-4)),
    );
    let mut doubled = [zero_i; 8];
    unroll8!(k => {
        let equal = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(delta[k], target));
        let w = _mm256_xor_si256(w_rest, _mm256_and_si256(equal, flip));
        flip = _mm256_andnot_si256(equal, flip);
        doubled[k] = _mm256_add_epi32(
            _mm256_add_epi32(a[k], a[k]),
            _mm256_sign_epi32(w, _mm256_castps_si256(r[k])),
        );
    });
    let _ = flip; // (the last update is not needed)
    Some(doubled)
}

/// `lattice::nearest_fast` for eight vectors in structure-of-arrays form,
/// lane by lane: the doubled coordinates (register `k` holds coordinate `k`
/// of the eight answers), or `None` if any lane is one the fast path leaves
/// to the `f64` decoder (out of range, not finite, tiny, or a near-tie);
/// and whether [`nearest_lattice_block_generic`] would have taken the block
/// (`true` when it goes to the `f64` decoder, which is rare). The steps are
/// those of `lattice::nearest_fast` in the batch kernels' form (see "The
/// batch kernels' form" in `lattice.rs`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn nearest_lattice_block(x: &[__m256; 8]) -> (Option<[__m256i; 8]>, bool) {
    let abs_mask = _mm256_set1_epi32(0x7FFF_FFFF);
    let one = _mm256_set1_epi32(1);
    let zero = _mm256_setzero_ps();
    let zero_i = _mm256_setzero_si256();
    let below_half = _mm256_set1_ps(BELOW_HALF);
    let minus_below_half = _mm256_set1_ps(-BELOW_HALF);
    let up_scale = _mm256_set1_ps(UP_SCALE);
    let mut max_bits = zero_i;
    let mut tiny_min = _mm256_set1_epi32(i32::MAX);
    // Per coordinate, only `δ = |v − a|` and `q = 2a + down` (down: 1 when
    // the nearest half-integer is below `v`) stay live.
    let mut delta = [zero; 8];
    let mut q = [zero_i; 8];
    // The XOR of every `q`: bit 0 is the parity of the number of
    // coordinates that go down (and of those that go up: there are 8), bit
    // 1 that of Σa.
    let mut parities = zero_i;
    // Written out for each coordinate (a loop here stays a loop, with its
    // arrays in memory).
    unroll8!(k => {
        let v = x[k];
        let bits = _mm256_and_si256(_mm256_castps_si256(v), abs_mask);
        max_bits = _mm256_max_epi32(max_bits, bits);
        // Tiny: `bits + (2^31 − 1)` (zero becomes the largest) below that of
        // 2^-24, as signed numbers.
        tiny_min = _mm256_min_epi32(tiny_min, _mm256_add_epi32(bits, abs_mask));
        // Round halves away from zero: truncate `v` plus the largest float
        // below ½ with the sign of `v` (exact for |v| ≤ 2^22; other lanes
        // are discarded).
        let shifted = _mm256_add_ps(v, _mm256_blendv_ps(below_half, minus_below_half, v));
        let t = _mm256_round_ps::<TRUNCATE>(shifted);
        let a = _mm256_cvttps_epi32(shifted);
        let r = _mm256_sub_ps(v, t);
        // Up when `r > 0`, or `r = 0` and `a > 0`: the sign of `r + a·2^-60`.
        // A mask: −1 for down.
        let down = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LE_OQ>(
            _mm256_fmadd_ps(t, up_scale, r),
            zero,
        ));
        q[k] = _mm256_sub_epi32(_mm256_add_epi32(a, a), down);
        parities = _mm256_xor_si256(parities, q[k]);
        delta[k] = _mm256_and_ps(r, _mm256_castsi256_ps(abs_mask));
    });
    // Sums and extremes as trees (short dependency chains).
    let sum_delta = tree8!(_mm256_add_ps, delta);
    let max_delta = tree8!(_mm256_max_ps, delta);
    let min_delta = tree8!(_mm256_min_ps, delta);
    // Σ(h − ½) = Σa − (number down) ≡ Σa + (number up). As masks (all
    // ones when odd), from bit 1 of `parities` and bit 0 XOR bit 1.
    let odd_integer = _mm256_srai_epi32::<31>(_mm256_slli_epi32::<30>(parities));
    let odd_half = _mm256_srai_epi32::<31>(_mm256_slli_epi32::<30>(_mm256_xor_si256(
        parities,
        _mm256_slli_epi32::<1>(parities),
    )));
    let difference =
        squared_distance_difference(sum_delta, max_delta, min_delta, odd_integer, odd_half);

    // Lanes the fast path leaves: out of range or not finite (bits above
    // the limit's), tiny, or a near-tie (NaN included).
    let out_of_range = _mm256_cmpgt_epi32(max_bits, _mm256_set1_epi32(INPUT_LIMIT_BITS as i32));
    let tiny = _mm256_cmpgt_epi32(
        _mm256_set1_epi32(TINY_BITS.wrapping_add(i32::MAX as u32) as i32),
        tiny_min,
    );
    let near_tie = _mm256_cmp_ps::<_CMP_NGT_UQ>(
        _mm256_and_ps(difference, _mm256_castsi256_ps(abs_mask)),
        _mm256_set1_ps(TIE_MARGIN),
    );
    let leave = _mm256_or_si256(
        _mm256_or_si256(out_of_range, tiny),
        _mm256_castps_si256(near_tie),
    );
    if _mm256_movemask_ps(_mm256_castsi256_ps(leave)) != 0 {
        return (None, true);
    }
    // Whether [`nearest_lattice_block_generic`] would have taken this block
    // (no `δ` of 0 or ½).
    let generic = _mm256_movemask_ps(_mm256_or_ps(
        _mm256_cmp_ps::<_CMP_EQ_OQ>(min_delta, zero),
        _mm256_cmp_ps::<_CMP_EQ_OQ>(max_delta, _mm256_set1_ps(0.5)),
    )) == 0;

    // The winner, lane by lane: `half` (a mask) for the half-integer
    // candidate. Its odd sum re-rounds the first coordinate whose `δ` is
    // the target (the largest for the integer candidate, the smallest for
    // the other); a lane with an even sum gets a target no `δ` equals (a
    // NaN).
    let half = _mm256_cmp_ps::<_CMP_GT_OQ>(difference, zero);
    let odd = _mm256_blendv_ps(
        _mm256_castsi256_ps(odd_integer),
        _mm256_castsi256_ps(odd_half),
        half,
    );
    let target = _mm256_or_ps(
        _mm256_blendv_ps(max_delta, min_delta, half),
        _mm256_xor_ps(odd, _mm256_castsi256_ps(_mm256_set1_epi32(-1))),
    );
    let always_up = _mm256_blendv_ps(
        _mm256_cmp_ps::<_CMP_EQ_OQ>(max_delta, zero),
        _mm256_cmp_ps::<_CMP_EQ_OQ>(min_delta, _mm256_set1_ps(0.5)),
        half,
    );
    let half_bit = _mm256_and_si256(_mm256_castps_si256(half), one);
    // The re-rounded coordinate goes up, whatever its `down`, where every
    // `δ` is 0 (integer candidate) or ½ (half-integer one); it is then
    // coordinate 0.
    let always_up = _mm256_and_ps(always_up, odd);
    let fix = _mm256_and_si256(
        _mm256_and_si256(
            _mm256_slli_epi32::<2>(_mm256_xor_si256(q[0], half_bit)),
            _mm256_castps_si256(always_up),
        ),
        _mm256_set1_epi32(4),
    );
    // Each answer is `q + w` (up) or `q + !w` (down): w = 0 (integer) or
    // 1 (half-integer) for most coordinates, 2 (integer) or −1
    // (half-integer) for the re-rounded one.
    let w_rest = half_bit;
    let w_flip = _mm256_blendv_epi8(
        _mm256_set1_epi32(2),
        _mm256_set1_epi32(-1),
        _mm256_castps_si256(half),
    );
    let mut seen = zero;
    let mut doubled = [zero_i; 8];
    unroll8!(k => {
        // The first coordinate whose `δ` is the target.
        let equal = _mm256_cmp_ps::<_CMP_EQ_OQ>(delta[k], target);
        let here = _mm256_andnot_ps(seen, equal);
        seen = _mm256_or_ps(seen, equal);
        let w = _mm256_blendv_epi8(w_rest, w_flip, _mm256_castps_si256(here));
        let down = _mm256_srai_epi32::<31>(_mm256_slli_epi32::<31>(q[k]));
        doubled[k] = _mm256_add_epi32(q[k], _mm256_xor_si256(w, down));
    });
    let _ = seen; // (the last update is not needed)
    doubled[0] = _mm256_add_epi32(doubled[0], fix);
    (Some(doubled), generic)
}

/// [`batch::nearest_lattice_points_into`](crate::batch::nearest_lattice_points_into);
/// `out` has the length of `arrays`. A block goes through
/// [`nearest_lattice_block_generic`], or if that leaves it (or left the
/// block before) through [`nearest_lattice_block`], which handles every
/// input of the fast path of `E8Point::nearest`; a block with any lane that
/// leaves goes through the scalar kernel, which also builds the errors.
#[target_feature(enable = "avx2,fma")]
pub(super) fn nearest_lattice_points_into_avx2(
    arrays: &[[f32; 8]],
    out: &mut [E8Point],
) -> Result<(), BatchError> {
    let (blocks, tail) = arrays.as_chunks::<8>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    // Whether to try the generic-block path first. Inputs full of integers
    // or half-integers (lattice points, say) never take it; after a block
    // that did not, the next block tries it only if the general path found
    // that this one would have, so such inputs do not pay for it twice.
    let mut try_generic = true;
    for (index, (block, out_block)) in blocks.iter().zip(out_blocks).enumerate() {
        let first = if try_generic {
            nearest_lattice_block_generic(&transpose_from_halves(block))
        } else {
            None
        };
        let columns = match first {
            Some(columns) => columns,
            None => {
                let (columns, generic) = nearest_lattice_block(&transpose(block));
                try_generic = generic;
                let Some(columns) = columns else {
                    relattice(block, out_block, 8 * index)?;
                    continue;
                };
                columns
            }
        };
        let rows = transpose_registers(bytemuck::cast(columns));
        for (slot, row) in out_block.iter_mut().zip(rows) {
            *slot = E8Point::from_doubled_unchecked(bytemuck::cast(row));
        }
    }
    scalar::nearest_lattice_points_dispatched_from(tail, out_tail, 8 * blocks.len())
}

/// The scalar decoding of a block off the fast path (out of line).
#[cold]
#[inline(never)]
fn relattice(block: &Block, out: &mut [E8Point; 8], first_index: usize) -> Result<(), BatchError> {
    scalar::nearest_lattice_points_dispatched_from(block, out, first_index)
}
