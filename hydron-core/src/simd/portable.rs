//! The portable SIMD backend: `wide`'s `f32x4` and `f32x8`.
//!
//! The nearest-root and lattice kernels work in structure-of-arrays form:
//! a block of eight vectors is transposed once so that register `k` holds
//! coordinate `k` of the eight vectors (lane `i` is vector `i`, as in
//! ultraviolet's `Vec3x8`), and all arithmetic is lane-parallel. The kernels that only
//! need one sum per vector (validate, copy_validated, normalize, dot) work
//! on four vectors at a time: each vector's two halves are combined in one
//! register, and a 4×4 transpose finishes the four sums in the scalar
//! order. Tails run the scalar kernels.
//!
//! `wide` picks its instructions when it is compiled: NEON on aarch64,
//! simd128 on wasm32 with that feature, AVX when the build enables it
//! (`-C target-cpu=native`), and SSE2 on the default x86-64 target. On an
//! x86-64 CPU with AVX2 and FMA the dispatcher picks the intrinsics backend
//! (`avx2.rs`) instead.
//!
//! Results are bit-identical to the scalar kernels: the same operations in
//! the same order, correctly rounded `sqrt` and division, no FMA.

use core::mem::MaybeUninit;

use wide::{f32x4, f32x8, i32x8, u32x8};

use super::scalar;
use crate::e8::{INTEGER_ROOT_COUNT, INV_SQRT_8};
use crate::gf8::NORM_SQ_TOLERANCE;
use crate::lattice::{BELOW_HALF, TIE_MARGIN, TINY_BITS, UP_SCALE};
use crate::{BatchError, E8Point, E8Root, Gf8};

mod sphere;
#[cfg(test)]
pub(crate) use sphere::lanes_for_test as sphere_lanes_for_test;
#[cfg(test)]
pub(crate) use sphere::narrow_lanes_for_test as sphere_narrow_lanes_for_test;
pub(crate) use sphere::{geodesic_distances_into, slerp_into};

/// Eight vectors: the unit of the nearest-root kernel.
type Block = [[f32; 8]; 8];

/// Four vectors: the unit of the sum kernels (validate, normalize, dot),
/// which work on native 128-bit registers (SSE2, NEON, simd128).
type Quad = [[f32; 8]; 4];

/// Coordinates 0..4 and 4..8 of a vector.
#[inline]
fn halves(v: &[f32; 8]) -> (f32x4, f32x4) {
    let [low, high]: [[f32; 4]; 2] = bytemuck::cast(*v);
    (f32x4::new(low), f32x4::new(high))
}

/// For four vectors, given `a[i]` = `(p0 + p4, p1 + p5, p2 + p6, p3 + p7)`
/// of the products of vector `i`, lane `i` of the result is
/// `((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7))`: the order of
/// `gf8::dot`, so the sums are bit-identical to the scalar ones.
#[inline]
fn pairwise_sums(a: [f32x4; 4]) -> f32x4 {
    let [c0, c1, c2, c3] = f32x4::transpose(a);
    (c0 + c2) + (c1 + c3)
}

/// Lane `i`: the squared norm of vector `i`.
#[inline]
fn norms_sq(quad: &Quad) -> f32x4 {
    pairwise_sums(quad.map(|v| {
        let (low, high) = halves(&v);
        low * low + high * high
    }))
}

/// [`batch::validate`](crate::batch::validate). A group of four whose
/// squared norms all pass the fast test is accepted; any other group is
/// checked by the scalar kernel, which accepts zero vectors and builds the
/// exact error of the first bad vector.
pub(crate) fn validate(arrays: &[[f32; 8]]) -> Result<(), BatchError> {
    let (quads, tail) = arrays.as_chunks::<4>();
    for (index, quad) in quads.iter().enumerate() {
        let deviation = (norms_sq(quad) - f32x4::splat(1.0)).abs();
        if !deviation.simd_le(f32x4::splat(NORM_SQ_TOLERANCE)).all() {
            recheck(quad, 4 * index)?;
        }
    }
    scalar::validate_from(tail, 4 * quads.len())
}

/// The scalar check of a group the fast test did not accept (out of line,
/// so that the hot loop stays small).
#[cold]
#[inline(never)]
fn recheck(quad: &Quad, first_index: usize) -> Result<(), BatchError> {
    scalar::validate_from(quad, first_index)
}

/// [`batch::copy_validated_uninit`](crate::batch::copy_validated_uninit)
/// on a little-endian target (the bytes are read in the CPU's order, so the
/// dispatcher calls this only there); `bytes` has 32 bytes per slot of
/// `out`. Each group of four is copied and its squared norms taken from the
/// same registers, in the scalar order; a group that fails the fast test is
/// copied and checked again by the scalar kernel, which accepts zero
/// vectors and builds the exact error. On success every slot has been
/// written; on error every slot up to the bad vector.
pub(crate) fn copy_validated(bytes: &[u8], out: &mut [MaybeUninit<Gf8>]) -> Result<(), BatchError> {
    let (quads, tail) = bytes.as_chunks::<128>();
    let (out_quads, out_tail) = out.as_chunks_mut::<4>();
    for (index, (src, dst)) in quads.iter().zip(out_quads).enumerate() {
        let vectors = src.as_chunks::<32>().0;
        let quad: Quad = core::array::from_fn(|i| bytemuck::cast(vectors[i]));
        for (slot, coords) in dst.iter_mut().zip(quad) {
            slot.write(Gf8::new_unchecked(coords));
        }
        let deviation = (norms_sq(&quad) - f32x4::splat(1.0)).abs();
        if !deviation.simd_le(f32x4::splat(NORM_SQ_TOLERANCE)).all() {
            recopy(src, dst, 4 * index)?;
        }
    }
    scalar::copy_validated_from(tail, out_tail, 4 * quads.len())
}

/// The scalar copy and check of a group the fast test did not accept (out
/// of line).
#[cold]
#[inline(never)]
fn recopy(
    src: &[u8; 128],
    dst: &mut [MaybeUninit<Gf8>; 4],
    first_index: usize,
) -> Result<(), BatchError> {
    scalar::copy_validated_from(src, dst, first_index)
}

/// [`batch::normalize_into`](crate::batch::normalize_into); `out` has the
/// length of `arrays`.
pub(crate) fn normalize_into(arrays: &[[f32; 8]], out: &mut [Gf8]) -> Result<(), BatchError> {
    let (quads, tail) = arrays.as_chunks::<4>();
    let (out_quads, out_tail) = out.as_chunks_mut::<4>();
    for (index, (quad, out_quad)) in quads.iter().zip(out_quads).enumerate() {
        let norm_sq = norms_sq(quad);
        let fast = norm_sq.simd_ge(f32x4::splat(f32::MIN_POSITIVE))
            & norm_sq.simd_lt(f32x4::splat(f32::INFINITY));
        if !fast.all() {
            renormalize(quad, out_quad, 4 * index)?;
            continue;
        }
        let inv = (f32x4::splat(1.0) / norm_sq.sqrt()).to_array();
        for ((v, slot), inv) in quad.iter().zip(out_quad.iter_mut()).zip(inv) {
            let (low, high) = halves(v);
            let scale = f32x4::splat(inv);
            let halves = [(low * scale).to_array(), (high * scale).to_array()];
            *slot = Gf8::new_unchecked(bytemuck::cast(halves));
        }
    }
    scalar::normalize_from(tail, out_tail, 4 * quads.len())
}

/// The scalar normalization of a group off the fast path (out of line).
#[cold]
#[inline(never)]
fn renormalize(quad: &Quad, out: &mut [Gf8; 4], first_index: usize) -> Result<(), BatchError> {
    scalar::normalize_from(quad, out, first_index)
}

/// [`batch::dot_into`](crate::batch::dot_into); `out` has the length of
/// `many`.
pub(crate) fn dot_into(query: Gf8, many: &[Gf8], out: &mut [f32]) {
    let (q_low, q_high) = halves(query.as_array());
    let (quads, tail) = Gf8::slice_as_arrays(many).as_chunks::<4>();
    let (out_quads, out_tail) = out.as_chunks_mut::<4>();
    for (quad, out_quad) in quads.iter().zip(out_quads) {
        *out_quad = pairwise_sums(quad.map(|v| {
            let (low, high) = halves(&v);
            q_low * low + q_high * high
        }))
        .to_array();
    }
    scalar::dot_from(query, Gf8::slice_from_arrays_unchecked(tail), out_tail);
}

/// The structure-of-arrays form of a block: `columns[k]` lane `i` is
/// coordinate `k` of vector `i`.
#[inline]
fn transpose(block: &Block) -> [f32x8; 8] {
    // `f32x8::transpose` shuffles registers only with AVX; elsewhere it
    // gathers element by element. Four 4×4 transposes (shuffles on SSE2,
    // NEON and simd128) do the same work in registers.
    #[cfg(target_feature = "avx")]
    {
        f32x8::transpose(block.map(f32x8::new))
    }
    #[cfg(not(target_feature = "avx"))]
    {
        let halves = block.map(|v| halves(&v));
        let quarter = |first: usize, high: bool| {
            f32x4::transpose(core::array::from_fn(|i| {
                let (low, upper) = halves[first + i];
                if high {
                    upper
                } else {
                    low
                }
            }))
        };
        let (low_a, low_b) = (quarter(0, false), quarter(4, false));
        let (high_a, high_b) = (quarter(0, true), quarter(4, true));
        core::array::from_fn(|k| {
            let pair = if k < 4 {
                [low_a[k], low_b[k]]
            } else {
                [high_a[k - 4], high_b[k - 4]]
            };
            bytemuck::cast(pair)
        })
    }
}

/// A lane mask from a float comparison, for integer selects.
#[inline]
fn int_mask(mask: f32x8) -> u32x8 {
    bytemuck::cast(mask)
}

/// `e8::nearest_root_code` for eight vectors in structure-of-arrays form,
/// lane by lane, with the same comparisons in the same order.
fn nearest_root_codes(x: &[f32x8; 8]) -> ([u32; 8], u32) {
    let abs = x.map(f32x8::abs);
    let bits = x.map(bytemuck::cast::<f32x8, u32x8>);
    // Bit k of `negatives`: coordinate k has its sign bit set (−0.0 too).
    let mut negatives = u32x8::splat(0);
    let mut parity = u32x8::splat(0);
    for (k, b) in bits.iter().enumerate() {
        negatives |= (*b >> 31) << k as u32;
        parity ^= *b;
    }
    let odd = parity >> 31;

    // Two largest |x_k| (first index wins ties) and the smallest, with
    // their indices, moved through the same masks as the scalar branches.
    let swap = abs[1].simd_gt(abs[0]);
    let mut first_value = swap.select(abs[1], abs[0]);
    let mut second_value = swap.select(abs[0], abs[1]);
    let mut first = int_mask(swap).select(u32x8::splat(1), u32x8::splat(0));
    let mut second = int_mask(swap).select(u32x8::splat(0), u32x8::splat(1));
    let lower = abs[1].simd_lt(abs[0]);
    let mut smallest_value = lower.select(abs[1], abs[0]);
    let mut smallest = int_mask(lower).select(u32x8::splat(1), u32x8::splat(0));
    let mut sum = abs[0] + abs[1];
    for (k, &a) in abs.iter().enumerate().skip(2) {
        let index = u32x8::splat(k as u32);
        sum += a;
        let above_first = a.simd_gt(first_value);
        let above_second = a.simd_gt(second_value);
        second_value = above_first.select(first_value, above_second.select(a, second_value));
        second = int_mask(above_first).select(first, int_mask(above_second).select(index, second));
        first_value = above_first.select(a, first_value);
        first = int_mask(above_first).select(index, first);
        let below = a.simd_lt(smallest_value);
        smallest_value = below.select(a, smallest_value);
        smallest = int_mask(below).select(index, smallest);
    }

    let integer_score =
        (first_value + second_value) * f32x8::splat(core::f32::consts::FRAC_1_SQRT_2);
    let odd_mask: f32x8 = bytemuck::cast(u32x8::splat(0) - odd);
    let half_score =
        odd_mask.select(sum - f32x8::splat(2.0) * smallest_value, sum) * f32x8::splat(INV_SQRT_8);

    let i = first.min(second);
    let j = first.max(second);
    // pair_index(i, j) = i·(15 − i)/2 + j − i − 1
    let pair: u32x8 = ((i * (u32x8::splat(15) - i)) >> 1) + j - i - u32x8::splat(1);
    let integer_code: u32x8 = (pair << 2)
        + ((negatives >> i) & u32x8::splat(1))
        + (((negatives >> j) & u32x8::splat(1)) << 1);
    let mask: u32x8 = negatives ^ ((u32x8::splat(1) << smallest) * odd);
    let half_code: u32x8 = (mask >> 1) + u32x8::splat(u32::from(INTEGER_ROOT_COUNT));
    let codes = int_mask(integer_score.simd_ge(half_score))
        .select(integer_code, half_code)
        .to_array();
    // Lanes whose scores are finite, as `e8::nearest_root_code` checks.
    let infinity = f32x8::splat(f32::INFINITY);
    let finite = integer_score.simd_lt(infinity) & half_score.simd_lt(infinity);
    (codes, finite.to_bitmask())
}

/// [`batch::nearest_roots_into`](crate::batch::nearest_roots_into); `out`
/// has the length of `vectors`.
pub(crate) fn nearest_roots_into(vectors: &[Gf8], out: &mut [E8Root]) {
    let (blocks, tail) = Gf8::slice_as_arrays(vectors).as_chunks::<8>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    for (block, out_block) in blocks.iter().zip(out_blocks) {
        let (codes, finite) = nearest_root_codes(&transpose(block));
        scalar::store_codes(out_block, codes);
        if finite != 0xFF {
            scalar::rescale_overflowed_roots(block, out_block, finite);
        }
    }
    scalar::nearest_roots_from(Gf8::slice_from_arrays_unchecked(tail), out_tail);
}

/// [`batch::nearest_roots_checked_into`](crate::batch::nearest_roots_checked_into);
/// `out` has the length of `arrays`. Each block of eight is transposed
/// once; its squared norms are summed from the columns in the pairwise
/// order of `gf8::norm_sq` (bit-identical to the scalar ones) and must pass
/// the fast test of [`Gf8::check`], and the codes come from the same
/// registers. A block that fails the test (a zero vector, or a bad one)
/// goes through the scalar kernel, which accepts zero vectors and builds
/// the exact error, with the codes before it written.
pub(crate) fn nearest_roots_checked_into(
    arrays: &[[f32; 8]],
    out: &mut [E8Root],
) -> Result<(), BatchError> {
    let (blocks, tail) = arrays.as_chunks::<8>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    for (index, (block, out_block)) in blocks.iter().zip(out_blocks).enumerate() {
        let x = transpose(block);
        let square = |k: usize| x[k] * x[k];
        let norms_sq = ((square(0) + square(4)) + (square(2) + square(6)))
            + ((square(1) + square(5)) + (square(3) + square(7)));
        let deviation = (norms_sq - f32x8::splat(1.0)).abs();
        if !deviation.simd_le(f32x8::splat(NORM_SQ_TOLERANCE)).all() {
            scalar::recheck_roots(block, out_block, 8 * index)?;
            continue;
        }
        // Unit vectors: every score is finite (no rescaling to do).
        let (codes, _) = nearest_root_codes(&x);
        scalar::store_codes(out_block, codes);
    }
    scalar::nearest_roots_checked_from(tail, out_tail, 8 * blocks.len())
}

/// Float lanes seen as integers, and back (bit casts).
#[inline]
fn ints(x: f32x8) -> i32x8 {
    bytemuck::cast(x)
}

#[inline]
fn floats(x: i32x8) -> f32x8 {
    bytemuck::cast(x)
}

/// `lattice::nearest_fast` for a block of eight vectors, transposed to
/// structure-of-arrays form, lane by lane: the doubled coordinates
/// (`columns[k]` lane `i` is coordinate `k` of answer `i`), or `None` if
/// any lane is one the fast path leaves to the `f64` decoder (out of range,
/// not finite, tiny, or a near-tie). The same steps as the AVX2 kernel,
/// with operations that every `wide` target has as instructions (SSE2 has
/// no 32-bit integer min, max or blend, which `wide` would emulate lane by
/// lane).
///
/// On SSE2 (each `f32x8` two of its sixteen registers) this kernel is
/// bound by the vector ports, not by memory: it keeps values in memory
/// rather than recompute them (`down`), and checks for tiny coordinates
/// only when the smallest `δ` says there may be one.
#[inline]
fn nearest_lattice_block(block: &Block) -> Option<[i32x8; 8]> {
    let x = transpose(block);
    let abs_mask = i32x8::splat(0x7FFF_FFFF);
    let sign_mask = i32x8::splat(i32::MIN);
    let zero = f32x8::splat(0.0);
    let below_half = ints(f32x8::splat(BELOW_HALF));
    let up_scale = f32x8::splat(UP_SCALE);
    let mut max_abs = zero;
    let mut delta = [zero; 8];
    let mut q = [i32x8::splat(0); 8];
    let mut down = [i32x8::splat(0); 8];
    let mut parities = i32x8::splat(0);
    for k in 0..8 {
        let v = x[k];
        let bits = ints(v) & abs_mask;
        // Out of range: the largest |v| (a NaN may drop out of it, but
        // then `difference` below is a NaN).
        max_abs = max_abs.fast_max(floats(bits));
        // Round halves away from zero: truncate `v` plus the largest float
        // below ½ with the sign of `v`.
        let shifted = v + floats((ints(v) & sign_mask) | below_half);
        let a = shifted.fast_trunc_int();
        let r = v - a.round_float();
        // Down (a mask) unless `r > 0`, or `r = 0` and `a > 0`.
        down[k] = ints((a.round_float() * up_scale + r).simd_le(zero));
        q[k] = (a + a) - down[k];
        parities ^= q[k];
        delta[k] = floats(ints(r) & abs_mask);
    }
    let sum_delta = ((delta[0] + delta[1]) + (delta[2] + delta[3]))
        + ((delta[4] + delta[5]) + (delta[6] + delta[7]));
    // No NaN here in the lanes that count, so the fast min and max do.
    let tree = |f: fn(f32x8, f32x8) -> f32x8| {
        f(
            f(f(delta[0], delta[1]), f(delta[2], delta[3])),
            f(f(delta[4], delta[5]), f(delta[6], delta[7])),
        )
    };
    let max_delta = tree(f32x8::fast_max);
    let min_delta = tree(f32x8::fast_min);
    // Masks (all ones when odd): bit 1 of `parities` for Σa, bit 0 XOR
    // bit 1 for Σ(h − ½).
    let odd_integer: i32x8 = (parities << 30) >> 31;
    let odd_half: i32x8 = ((parities ^ (parities << 1)) << 30) >> 31;
    let two = f32x8::splat(2.0);
    let difference = ((sum_delta - two)
        + floats(odd_integer & ints(f32x8::splat(1.0) - two * max_delta)))
        - floats(odd_half & ints(two * min_delta));

    // Lanes the fast path leaves: out of range, tiny, or a near-tie (NaN
    // included).
    let out_of_range = ints(max_abs.simd_gt(f32x8::splat(E8Point::INPUT_LIMIT)));
    let near_tie = !ints(difference.abs().simd_gt(f32x8::splat(TIE_MARGIN)));
    if (out_of_range | near_tie).any() {
        return None;
    }
    // Tiny coordinates (magnitude below 2^-24, not zero). In range, a
    // coordinate that is not tiny has `δ` zero or at least 2^-24 (below ½,
    // `δ = |v|`; from ½ up, `v` and `a` are multiples of 2^-24), and a tiny
    // one has `δ = |v|`; so there is none when the smallest `δ` is at least
    // 2^-24, and only a block with a zero `δ` (an integer coordinate) or a
    // tiny one needs the check, out of the main path.
    if min_delta
        .simd_lt(f32x8::splat(f32::from_bits(TINY_BITS)))
        .any()
        && has_tiny(block)
    {
        return None;
    }

    // As in the AVX2 kernel.
    let half = ints(difference.simd_gt(zero));
    let odd = (odd_integer & !half) | (odd_half & half);
    let target = floats((ints(max_delta) & !half) | (ints(min_delta) & half) | !odd);
    let always_up = ((ints(max_delta.simd_eq(zero)) & !half)
        | (ints(min_delta.simd_eq(f32x8::splat(0.5))) & half))
        & odd;
    let half_bit = half & i32x8::splat(1);
    let fix = (((q[0] ^ half_bit) << 2) & always_up) & i32x8::splat(4);
    let w_rest = half_bit;
    // 2 for the integer candidate, −1 for the other, as `w_rest ^ w_swap`.
    let w_swap = i32x8::splat(2) ^ (half & i32x8::splat(2 ^ -2));
    // `w_swap` until the first coordinate whose `δ` is the target, then 0.
    let mut swap = w_swap;
    let mut doubled = [i32x8::splat(0); 8];
    for k in 0..8 {
        let equal = ints(delta[k].simd_eq(target));
        let w = w_rest ^ (equal & swap);
        swap = !equal & swap;
        // (`down[k]` is kept rather than taken from bit 0 of `q[k]`: on
        // SSE2, whose vector ports bound this kernel, a reload is cheaper
        // than the two operations.)
        doubled[k] = q[k] + (w ^ down[k]);
    }
    doubled[0] += fix;
    Some(doubled)
}

/// Whether any coordinate of the block is tiny: magnitude below 2^-24 but
/// not zero (out of line: most blocks do not need it; it reads the block
/// as it is in memory, so that the columns need not be kept).
#[inline(never)]
fn has_tiny(block: &Block) -> bool {
    // `bits + (2^31 − 1)` (zero becomes the largest) below that of 2^-24,
    // as signed numbers.
    let abs_mask = i32x8::splat(0x7FFF_FFFF);
    let tiny_bound = i32x8::splat(TINY_BITS.wrapping_add(i32::MAX as u32) as i32);
    let mut tiny = i32x8::splat(0);
    for v in block {
        let bits: i32x8 = bytemuck::cast(*v);
        tiny |= tiny_bound.simd_gt((bits & abs_mask) + abs_mask);
    }
    tiny.any()
}

/// [`batch::nearest_lattice_points_into`](crate::batch::nearest_lattice_points_into);
/// `out` has the length of `arrays`. A block with any lane the fast path
/// leaves goes through the scalar kernel, which also builds the errors.
pub(crate) fn nearest_lattice_points_into(
    arrays: &[[f32; 8]],
    out: &mut [E8Point],
) -> Result<(), BatchError> {
    let (blocks, tail) = arrays.as_chunks::<8>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    for (index, (block, out_block)) in blocks.iter().zip(out_blocks).enumerate() {
        let Some(columns) = nearest_lattice_block(block) else {
            relattice(block, out_block, 8 * index)?;
            continue;
        };
        // The transpose moves bits only, so it works on integers too.
        let rows = transpose(&bytemuck::cast(columns));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf8::norm_sq;

    #[test]
    fn transpose_and_norms_match_scalar() {
        let block: Block =
            core::array::from_fn(|i| core::array::from_fn(|k| (i * 8 + k) as f32 * 0.37 - 9.1));
        let columns = transpose(&block).map(f32x8::to_array);
        for (i, row) in block.iter().enumerate() {
            for (k, &x) in row.iter().enumerate() {
                assert_eq!(columns[k][i], x, "vector {i}, coordinate {k}");
            }
        }
        for (q, quad) in block.as_chunks::<4>().0.iter().enumerate() {
            let norms = norms_sq(quad).to_array();
            for (i, row) in quad.iter().enumerate() {
                assert_eq!(
                    norms[i].to_bits(),
                    norm_sq(row).to_bits(),
                    "vector {}",
                    4 * q + i
                );
            }
        }
    }
}
