//! The AVX2 + FMA backend: `core::arch::x86_64` intrinsics on `__m256`.
//!
//! Every kernel here is compiled with
//! `#[target_feature(enable = "avx2,fma")]`, so it may only be called once
//! [`has_avx2_fma`](super::has_avx2_fma) said yes. The [`Avx2Fma`] token
//! (in `simd/mod.rs`) enforces that: only detection makes one, and its
//! safe methods here are the only callers of the kernels (one `unsafe`
//! call each). Inside the kernels,
//! intrinsics that take no pointer are safe to call (Rust 1.87+), and loads
//! and stores go through `bytemuck` casts between `[f32; 8]` and `__m256`,
//! which compile to plain `vmovups`; so there is no other `unsafe`.
//!
//! Why intrinsics and not `wide`: `wide::f32x8` picks its representation
//! when `wide` is compiled. On the default x86-64 target (SSE2) it is two
//! `__m128`, and a `wide` body inlined into a `target_feature(enable =
//! "avx2")` function still works on those halves (checked with `objdump -d`
//! on a `wide`-based kernel: `xmm` registers only, no `ymm`). Only a build
//! with `-C target-cpu=native` would make `wide` use AVX; this backend gets
//! AVX2 in a plain `cargo build` (verified the same way: the kernels below
//! use `ymm` registers, `vpermps`, `vblendvps`, `vpsrlvd`, …).
//!
//! Results are bit-identical to the scalar kernels: the sums of products
//! are taken in [`gf8::dot`](crate::gf8)'s pairwise order with separate
//! multiplies and adds (no FMA contraction), `sqrt` and division are
//! correctly rounded, and the nearest-root selection replays the scalar
//! comparisons, strict `>`/`<` included, lane by lane. The lattice kernel
//! runs the exact `f32` fast path of `E8Point::nearest` lane by lane (first
//! in a shorter form for blocks without integer, half-integer or tiny
//! coordinates, where its tie rules never apply) and hands any block with a
//! lane that path leaves to the scalar kernel, so its points and errors are
//! identical too.

use core::arch::x86_64::{
    __m128, __m256, __m256i, _mm256_add_epi32, _mm256_add_ps, _mm256_and_ps, _mm256_and_si256,
    _mm256_blend_ps, _mm256_blendv_ps, _mm256_castps128_ps256, _mm256_castps256_ps128,
    _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cmp_ps, _mm256_div_ps, _mm256_extractf128_ps,
    _mm256_insertf128_ps, _mm256_max_epi32, _mm256_min_epi32, _mm256_movemask_ps, _mm256_mul_ps,
    _mm256_or_si256, _mm256_permute2f128_ps, _mm256_permutevar8x32_epi32, _mm256_permutevar8x32_ps,
    _mm256_set1_epi32, _mm256_set1_ps, _mm256_setr_epi32, _mm256_setzero_ps, _mm256_setzero_si256,
    _mm256_shuffle_ps, _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_sqrt_ps, _mm256_srai_epi32,
    _mm256_srli_epi32, _mm256_srlv_epi32, _mm256_sub_epi32, _mm256_sub_ps, _mm256_unpackhi_ps,
    _mm256_unpacklo_ps, _mm256_xor_si256, _CMP_GE_OQ, _CMP_GT_OQ, _CMP_LE_OQ, _CMP_LT_OQ,
};
use core::mem::MaybeUninit;

use super::scalar;
use super::Avx2Fma;
use crate::e8::{INTEGER_ROOT_COUNT, INV_SQRT_8};
use crate::gf8::NORM_SQ_TOLERANCE;
use crate::{BatchError, E8Point, E8Root, Gf8};

mod lattice;
mod sphere;

/// The batch kernels, entered only through the token.
impl Avx2Fma {
    /// [`batch::validate`](crate::batch::validate).
    #[inline]
    pub(crate) fn validate(self, arrays: &[[f32; 8]]) -> Result<(), BatchError> {
        // SAFETY: `self` exists only if `detect` found AVX2 and FMA on this
        // CPU, the features `validate_avx2` is compiled for.
        unsafe { validate_avx2(arrays) }
    }

    /// [`batch::copy_validated_uninit`](crate::batch::copy_validated_uninit);
    /// `bytes` has 32 bytes per slot of `out`.
    #[inline]
    pub(crate) fn copy_validated(
        self,
        bytes: &[u8],
        out: &mut [MaybeUninit<Gf8>],
    ) -> Result<(), BatchError> {
        // SAFETY: as in `validate`: detection found AVX2 and FMA.
        unsafe { copy_validated_avx2(bytes, out) }
    }

    /// [`batch::normalize_into`](crate::batch::normalize_into); `out` has
    /// the length of `arrays`.
    #[inline]
    pub(crate) fn normalize_into(
        self,
        arrays: &[[f32; 8]],
        out: &mut [Gf8],
    ) -> Result<(), BatchError> {
        // SAFETY: as in `validate`: detection found AVX2 and FMA.
        unsafe { normalize_into_avx2(arrays, out) }
    }

    /// [`batch::dot_into`](crate::batch::dot_into); `out` has the length
    /// of `many`.
    #[inline]
    pub(crate) fn dot_into(self, query: Gf8, many: &[Gf8], out: &mut [f32]) {
        // SAFETY: as in `validate`: detection found AVX2 and FMA.
        unsafe { dot_into_avx2(query, many, out) }
    }

    /// [`batch::nearest_roots_into`](crate::batch::nearest_roots_into);
    /// `out` has the length of `vectors`.
    #[inline]
    pub(crate) fn nearest_roots_into(self, vectors: &[Gf8], out: &mut [E8Root]) {
        // SAFETY: as in `validate`: detection found AVX2 and FMA.
        unsafe { nearest_roots_into_avx2(vectors, out) }
    }

    /// [`batch::nearest_roots_checked_into`](crate::batch::nearest_roots_checked_into);
    /// `out` has the length of `arrays`.
    #[inline]
    pub(crate) fn nearest_roots_checked_into(
        self,
        arrays: &[[f32; 8]],
        out: &mut [E8Root],
    ) -> Result<(), BatchError> {
        // SAFETY: as in `validate`: detection found AVX2 and FMA.
        unsafe { nearest_roots_checked_avx2(arrays, out) }
    }

    /// [`batch::nearest_lattice_points_into`](crate::batch::nearest_lattice_points_into);
    /// `out` has the length of `arrays`.
    #[inline]
    pub(crate) fn nearest_lattice_points_into(
        self,
        arrays: &[[f32; 8]],
        out: &mut [E8Point],
    ) -> Result<(), BatchError> {
        // SAFETY: as in `validate`: detection found AVX2 and FMA.
        unsafe { lattice::nearest_lattice_points_into_avx2(arrays, out) }
    }
}

/// Eight vectors: the unit of work of every kernel.
type Block = [[f32; 8]; 8];

/// `_MM_SHUFFLE(z, y, x, w)`, which is not a stable `const fn`.
const fn shuffle_mask(z: i32, y: i32, x: i32, w: i32) -> i32 {
    (z << 6) | (y << 4) | (x << 2) | w
}
/// `shufps` picking elements 0, 1 of `a` then 0, 1 of `b` (per 128-bit half).
const LOW_PAIRS: i32 = shuffle_mask(1, 0, 1, 0);
/// `shufps` picking elements 2, 3 of `a` then 2, 3 of `b`.
const HIGH_PAIRS: i32 = shuffle_mask(3, 2, 3, 2);
/// `shufps` picking elements 0, 2 of `a` then 0, 2 of `b`.
const EVENS: i32 = shuffle_mask(2, 0, 2, 0);
/// `shufps` picking elements 1, 3 of `a` then 1, 3 of `b`.
const ODDS: i32 = shuffle_mask(3, 1, 3, 1);

/// One vector into a register (`vmovups`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn load(row: &[f32; 8]) -> __m256 {
    bytemuck::cast(*row)
}

/// A register out as eight numbers (`vmovups`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn store(v: __m256) -> [f32; 8] {
    bytemuck::cast(v)
}

/// For eight rows `p[i]` of eight products, lane `i` of the result is
/// `((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7))` of row `i`: the
/// order of [`gf8::dot`](crate::gf8), so the sums are bit-identical to the
/// scalar ones. 4 lane-crossing permutes, 4 blends and 6 in-lane shuffles
/// for eight sums.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn sums_of_rows(p: &[__m256; 8]) -> __m256 {
    // Step 1, for rows i and i + 4: [lo_i + hi_i | hi_{i+4} + lo_{i+4}],
    // that is a_k = p_k + p_{k+4} for k = 0..4 of both rows.
    let mut a = [p[0]; 4];
    for i in 0..4 {
        let low_high = _mm256_blend_ps::<0xF0>(p[i], p[i + 4]);
        let high_low = _mm256_permute2f128_ps::<0x21>(p[i], p[i + 4]);
        a[i] = _mm256_add_ps(low_high, high_low);
    }
    // Step 2: b0 = a0 + a2 and b1 = a1 + a3, for rows (0, 1) and (2, 3)
    // (and (4, 5), (6, 7) in the upper half).
    let b01 = _mm256_add_ps(
        _mm256_shuffle_ps::<LOW_PAIRS>(a[0], a[1]),
        _mm256_shuffle_ps::<HIGH_PAIRS>(a[0], a[1]),
    );
    let b23 = _mm256_add_ps(
        _mm256_shuffle_ps::<LOW_PAIRS>(a[2], a[3]),
        _mm256_shuffle_ps::<HIGH_PAIRS>(a[2], a[3]),
    );
    // Step 3: b0 + b1, lanes in row order 0, 1, 2, 3 | 4, 5, 6, 7.
    _mm256_add_ps(
        _mm256_shuffle_ps::<EVENS>(b01, b23),
        _mm256_shuffle_ps::<ODDS>(b01, b23),
    )
}

/// Lane `i`: the squared norm of vector `i`, bit-identical to
/// `gf8::norm_sq`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn norms_sq(rows: &[__m256; 8]) -> __m256 {
    let mut squares = *rows;
    for square in &mut squares {
        *square = _mm256_mul_ps(*square, *square);
    }
    sums_of_rows(&squares)
}

/// A register out as eight numbers, through its two 128-bit halves.
///
/// Codegen merges the halves back into one `vmovups` of the register. The
/// detour matters when the register was just loaded from memory: stored
/// directly, LLVM turns the load-store pair into a copy of its own from the
/// source, which loads every vector a second time (misaligned, from a
/// message); through the halves, the register already loaded is stored
/// (checked with `objdump -d`; about 12% faster in L2).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn store_halves(v: __m256) -> [f32; 8] {
    let halves: [__m128; 2] = [_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v)];
    bytemuck::cast(halves)
}

/// Loads a block of eight vectors, one per register.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn load_block(block: &Block) -> [__m256; 8] {
    let mut rows = [_mm256_set1_ps(0.0); 8];
    for (row, coords) in rows.iter_mut().zip(block) {
        *row = load(coords);
    }
    rows
}

/// Bit mask of the lanes whose squared norm passes `Gf8::check`'s fast
/// test `|‖x‖² − 1| ≤ 2e-5` (NaN fails).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn unit_lanes(norm_sq: __m256) -> i32 {
    let abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
    let deviation = _mm256_and_ps(_mm256_sub_ps(norm_sq, _mm256_set1_ps(1.0)), abs_mask);
    _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(
        deviation,
        _mm256_set1_ps(NORM_SQ_TOLERANCE),
    ))
}

/// [`batch::validate`](crate::batch::validate). A block whose eight
/// squared norms all pass the fast test is accepted; any other block is
/// checked again by the scalar kernel, which accepts zero vectors and builds
/// the exact error of the first bad vector.
#[target_feature(enable = "avx2,fma")]
fn validate_avx2(arrays: &[[f32; 8]]) -> Result<(), BatchError> {
    let (blocks, tail) = arrays.as_chunks::<8>();
    for (index, block) in blocks.iter().enumerate() {
        if unit_lanes(norms_sq(&load_block(block))) != 0xFF {
            recheck(block, 8 * index)?;
        }
    }
    scalar::validate_from(tail, 8 * blocks.len())
}

/// The scalar check of a block the fast test did not accept (out of line,
/// so that the hot loop keeps its registers and does not spill the rows).
#[cold]
#[inline(never)]
fn recheck(block: &Block, first_index: usize) -> Result<(), BatchError> {
    scalar::validate_from(block, first_index)
}

/// [`batch::copy_validated_uninit`](crate::batch::copy_validated_uninit);
/// `bytes` has 32 bytes per slot of `out`. Each block of eight vectors is
/// loaded once (unaligned), stored, and its squared norms are taken from
/// the same registers, in the scalar order, so the fast test is exactly the
/// one of [`Gf8::check`]; a block that fails it is copied and checked again
/// by the scalar kernel, which accepts zero vectors and builds the exact
/// error. On success every slot has been written; on error every slot up to
/// the bad vector.
#[target_feature(enable = "avx2,fma")]
fn copy_validated_avx2(bytes: &[u8], out: &mut [MaybeUninit<Gf8>]) -> Result<(), BatchError> {
    let (blocks, tail) = bytes.as_chunks::<256>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    for (index, (src, dst)) in blocks.iter().zip(out_blocks).enumerate() {
        let mut rows = [_mm256_set1_ps(0.0); 8];
        for ((row, coords), slot) in rows.iter_mut().zip(src.as_chunks::<32>().0).zip(&mut *dst) {
            *row = bytemuck::cast(*coords);
            slot.write(Gf8::new_unchecked(store_halves(*row)));
        }
        if unit_lanes(norms_sq(&rows)) != 0xFF {
            recopy(src, dst, 8 * index)?;
        }
    }
    scalar::copy_validated_from(tail, out_tail, 8 * blocks.len())
}

/// The scalar copy and check of a block the fast test did not accept (out
/// of line).
#[cold]
#[inline(never)]
fn recopy(
    src: &[u8; 256],
    dst: &mut [MaybeUninit<Gf8>; 8],
    first_index: usize,
) -> Result<(), BatchError> {
    scalar::copy_validated_from(src, dst, first_index)
}

/// The scalar normalization of a block off the fast path (out of line).
#[cold]
#[inline(never)]
fn renormalize(block: &Block, out: &mut [Gf8; 8], first_index: usize) -> Result<(), BatchError> {
    scalar::normalize_from(block, out, first_index)
}

/// [`batch::normalize_into`](crate::batch::normalize_into); `out` has the
/// length of `arrays`. A block whose squared norms are all normal and
/// finite (the fast path of `Gf8::normalize`) is scaled by `1 / sqrt` of
/// each, broadcast back to its row; any other block goes through the scalar
/// kernel.
#[target_feature(enable = "avx2,fma")]
fn normalize_into_avx2(arrays: &[[f32; 8]], out: &mut [Gf8]) -> Result<(), BatchError> {
    let (blocks, tail) = arrays.as_chunks::<8>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    for (index, (block, out_block)) in blocks.iter().zip(out_blocks).enumerate() {
        let rows = load_block(block);
        let norm_sq = norms_sq(&rows);
        let fast = _mm256_movemask_ps(_mm256_and_ps(
            _mm256_cmp_ps::<_CMP_GE_OQ>(norm_sq, _mm256_set1_ps(f32::MIN_POSITIVE)),
            _mm256_cmp_ps::<_CMP_LT_OQ>(norm_sq, _mm256_set1_ps(f32::INFINITY)),
        ));
        if fast != 0xFF {
            renormalize(block, out_block, 8 * index)?;
            continue;
        }
        let inv = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(norm_sq));
        for (lane, (row, slot)) in rows.iter().zip(out_block.iter_mut()).enumerate() {
            let scale = _mm256_permutevar8x32_ps(inv, _mm256_set1_epi32(lane as i32));
            *slot = Gf8::new_unchecked(store(_mm256_mul_ps(*row, scale)));
        }
    }
    scalar::normalize_from(tail, out_tail, 8 * blocks.len())
}

/// [`batch::dot_into`](crate::batch::dot_into); `out` has the length of
/// `many`.
#[target_feature(enable = "avx2,fma")]
fn dot_into_avx2(query: Gf8, many: &[Gf8], out: &mut [f32]) {
    let q = load(query.as_array());
    let (blocks, tail) = Gf8::slice_as_arrays(many).as_chunks::<8>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    for (block, out_block) in blocks.iter().zip(out_blocks) {
        let mut products = load_block(block);
        for product in &mut products {
            *product = _mm256_mul_ps(q, *product);
        }
        *out_block = store(sums_of_rows(&products));
    }
    let tail = Gf8::slice_from_arrays_unchecked(tail);
    scalar::dot_from(query, tail, out_tail);
}

/// The 8×8 transpose of a block: register `k` holds coordinate `k` of the
/// eight vectors (structure of arrays).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn transpose(block: &Block) -> [__m256; 8] {
    transpose_registers(load_block(block))
}

/// The 8×8 transpose of eight registers (its own inverse: columns back to
/// rows as well as rows to columns).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn transpose_registers(rows: [__m256; 8]) -> [__m256; 8] {
    // [low half of row i | low half of row i + 4] and the same for the high
    // halves (LLVM folds these into `vinsertf128` from memory).
    let mut low = [rows[0]; 4];
    let mut high = [rows[0]; 4];
    for i in 0..4 {
        low[i] = _mm256_permute2f128_ps::<0x20>(rows[i], rows[i + 4]);
        high[i] = _mm256_permute2f128_ps::<0x31>(rows[i], rows[i + 4]);
    }
    let (c0, c1, c2, c3) = transpose_4x4(&low);
    let (c4, c5, c6, c7) = transpose_4x4(&high);
    [c0, c1, c2, c3, c4, c5, c6, c7]
}

/// [`transpose`] with the lane-crossing step done by the loads: each
/// register starts as a 128-bit load (half a vector) and gets the same half
/// of the vector four rows down by `vinsertf128` from memory, so the only
/// shuffles are the sixteen in-lane ones of the 4×4 transposes (the
/// lane-crossing `vperm2f128` of [`transpose`] competes with them for the
/// one shuffle port of many x86 cores; an insert from memory does not).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn transpose_from_halves(block: &Block) -> [__m256; 8] {
    let half = |row: &[f32; 8], h: usize| -> __m128 {
        let halves: &[[f32; 4]; 2] = bytemuck::cast_ref(row);
        bytemuck::cast(halves[h])
    };
    let mut low = [_mm256_setzero_ps(); 4];
    let mut high = [_mm256_setzero_ps(); 4];
    for i in 0..4 {
        low[i] = _mm256_insertf128_ps::<1>(
            _mm256_castps128_ps256(half(&block[i], 0)),
            half(&block[i + 4], 0),
        );
        high[i] = _mm256_insertf128_ps::<1>(
            _mm256_castps128_ps256(half(&block[i], 1)),
            half(&block[i + 4], 1),
        );
    }
    let (c0, c1, c2, c3) = transpose_4x4(&low);
    let (c4, c5, c6, c7) = transpose_4x4(&high);
    [c0, c1, c2, c3, c4, c5, c6, c7]
}

/// 4×4 transposes within each 128-bit half.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn transpose_4x4(r: &[__m256; 4]) -> (__m256, __m256, __m256, __m256) {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    (
        _mm256_shuffle_ps::<LOW_PAIRS>(t0, t2),
        _mm256_shuffle_ps::<HIGH_PAIRS>(t0, t2),
        _mm256_shuffle_ps::<LOW_PAIRS>(t1, t3),
        _mm256_shuffle_ps::<HIGH_PAIRS>(t1, t3),
    )
}

/// An `i32` in every lane, seen as `__m256` (for `vblendvps`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn splat_index(k: i32) -> __m256 {
    _mm256_castsi256_ps(_mm256_set1_epi32(k))
}

/// `e8::nearest_root_code` for eight vectors in structure-of-arrays form,
/// lane by lane, with the same comparisons in the same order.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn nearest_root_codes(x: &[__m256; 8]) -> (__m256i, i32) {
    let abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
    let mut abs = *x;
    // Bit k of `negatives`: coordinate k has its sign bit set (−0.0 too).
    let mut negatives = _mm256_setzero_si256();
    // Sign bit of the XOR of all coordinates: an odd count of negatives.
    let mut parity = _mm256_setzero_si256();
    for k in 0..8 {
        abs[k] = _mm256_and_ps(x[k], abs_mask);
        let bits = _mm256_castps_si256(x[k]);
        negatives = _mm256_or_si256(
            negatives,
            _mm256_and_si256(_mm256_srai_epi32::<31>(bits), _mm256_set1_epi32(1 << k)),
        );
        parity = _mm256_xor_si256(parity, bits);
    }

    // Two largest |x_k| (first index wins ties) and the smallest, with
    // their indices; values and indices move together through the same
    // masks, so `first_value` is always `abs[first]` as in the scalar code.
    let swap = _mm256_cmp_ps::<_CMP_GT_OQ>(abs[1], abs[0]);
    let mut first_value = _mm256_blendv_ps(abs[0], abs[1], swap);
    let mut first = _mm256_blendv_ps(splat_index(0), splat_index(1), swap);
    let mut second_value = _mm256_blendv_ps(abs[1], abs[0], swap);
    let mut second = _mm256_blendv_ps(splat_index(1), splat_index(0), swap);
    let lower = _mm256_cmp_ps::<_CMP_LT_OQ>(abs[1], abs[0]);
    let mut smallest_value = _mm256_blendv_ps(abs[0], abs[1], lower);
    let mut smallest = _mm256_blendv_ps(splat_index(0), splat_index(1), lower);
    let mut sum = _mm256_add_ps(abs[0], abs[1]);
    for (k, &a) in abs.iter().enumerate().skip(2) {
        let index = splat_index(k as i32);
        sum = _mm256_add_ps(sum, a);
        let above_first = _mm256_cmp_ps::<_CMP_GT_OQ>(a, first_value);
        let above_second = _mm256_cmp_ps::<_CMP_GT_OQ>(a, second_value);
        // if a > first { second = first; first = k } else if a > second { second = k }
        second_value = _mm256_blendv_ps(
            _mm256_blendv_ps(second_value, a, above_second),
            first_value,
            above_first,
        );
        second = _mm256_blendv_ps(
            _mm256_blendv_ps(second, index, above_second),
            first,
            above_first,
        );
        first_value = _mm256_blendv_ps(first_value, a, above_first);
        first = _mm256_blendv_ps(first, index, above_first);
        let below = _mm256_cmp_ps::<_CMP_LT_OQ>(a, smallest_value);
        smallest_value = _mm256_blendv_ps(smallest_value, a, below);
        smallest = _mm256_blendv_ps(smallest, index, below);
    }

    let integer_score = _mm256_mul_ps(
        _mm256_add_ps(first_value, second_value),
        _mm256_set1_ps(core::f32::consts::FRAC_1_SQRT_2),
    );
    let odd = _mm256_srai_epi32::<31>(parity);
    let reduced = _mm256_sub_ps(sum, _mm256_mul_ps(_mm256_set1_ps(2.0), smallest_value));
    let half_score = _mm256_mul_ps(
        _mm256_blendv_ps(sum, reduced, _mm256_castsi256_ps(odd)),
        _mm256_set1_ps(INV_SQRT_8),
    );

    // Integer-type code: 4 · pair_index(i, j) + sign bits of x_i and x_j.
    let first = _mm256_castps_si256(first);
    let second = _mm256_castps_si256(second);
    let i = _mm256_min_epi32(first, second);
    let j = _mm256_max_epi32(first, second);
    // pair_index(i, j) = i·(15 − i)/2 + j − i − 1; the first term by table.
    let row_start = _mm256_setr_epi32(0, 7, 13, 18, 22, 25, 27, 28);
    let pair = _mm256_sub_epi32(
        _mm256_add_epi32(_mm256_permutevar8x32_epi32(row_start, i), j),
        _mm256_add_epi32(i, _mm256_set1_epi32(1)),
    );
    let one = _mm256_set1_epi32(1);
    let sign_i = _mm256_and_si256(_mm256_srlv_epi32(negatives, i), one);
    let sign_j = _mm256_and_si256(_mm256_srlv_epi32(negatives, j), one);
    let integer_code = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_slli_epi32::<2>(pair), sign_i),
        _mm256_slli_epi32::<1>(sign_j),
    );

    // Half-integer code: the signs, with the smallest |x_k| flipped when
    // the count of negatives is odd.
    let flip = _mm256_and_si256(_mm256_sllv_epi32(one, _mm256_castps_si256(smallest)), odd);
    let mask = _mm256_xor_si256(negatives, flip);
    let half_code = _mm256_add_epi32(
        _mm256_srli_epi32::<1>(mask),
        _mm256_set1_epi32(i32::from(INTEGER_ROOT_COUNT)),
    );

    let integer_wins = _mm256_cmp_ps::<_CMP_GE_OQ>(integer_score, half_score);
    let codes = _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(half_code),
        _mm256_castsi256_ps(integer_code),
        integer_wins,
    ));
    // Lanes whose scores are finite, as `e8::nearest_root_code` checks.
    let infinity = _mm256_set1_ps(f32::INFINITY);
    let finite = _mm256_movemask_ps(_mm256_and_ps(
        _mm256_cmp_ps::<_CMP_LT_OQ>(integer_score, infinity),
        _mm256_cmp_ps::<_CMP_LT_OQ>(half_score, infinity),
    ));
    (codes, finite)
}

/// [`batch::nearest_roots_into`](crate::batch::nearest_roots_into); `out`
/// has the length of `vectors`.
#[target_feature(enable = "avx2,fma")]
fn nearest_roots_into_avx2(vectors: &[Gf8], out: &mut [E8Root]) {
    let (blocks, tail) = Gf8::slice_as_arrays(vectors).as_chunks::<8>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    for (block, out_block) in blocks.iter().zip(out_blocks) {
        let (codes, finite) = nearest_root_codes(&transpose(block));
        scalar::store_codes(out_block, bytemuck::cast(codes));
        if finite != 0xFF {
            scalar::rescale_overflowed_roots(block, out_block, finite as u32);
        }
    }
    scalar::nearest_roots_from(Gf8::slice_from_arrays_unchecked(tail), out_tail);
}

/// Lane `i`: the squared norm of vector `i`, from the block in
/// structure-of-arrays form (register `k` holds coordinate `k`): the
/// pairwise order of `gf8::norm_sq`, so bit-identical to [`norms_sq`] of
/// the rows, with no shuffle.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn norms_sq_of_columns(x: &[__m256; 8]) -> __m256 {
    let square = |k: usize| _mm256_mul_ps(x[k], x[k]);
    _mm256_add_ps(
        _mm256_add_ps(
            _mm256_add_ps(square(0), square(4)),
            _mm256_add_ps(square(2), square(6)),
        ),
        _mm256_add_ps(
            _mm256_add_ps(square(1), square(5)),
            _mm256_add_ps(square(3), square(7)),
        ),
    )
}

/// [`batch::nearest_roots_checked_into`](crate::batch::nearest_roots_checked_into);
/// `out` has the length of `arrays`. Each block of eight is loaded and
/// transposed once; its squared norms are summed from the columns and must
/// pass the fast test of [`Gf8::check`], and the codes come from the same
/// registers. A block that fails the test (a zero vector, or a bad one)
/// goes through the scalar kernel, which accepts zero vectors and builds
/// the exact error, with the codes before it written.
#[target_feature(enable = "avx2,fma")]
fn nearest_roots_checked_avx2(arrays: &[[f32; 8]], out: &mut [E8Root]) -> Result<(), BatchError> {
    let (blocks, tail) = arrays.as_chunks::<8>();
    let (out_blocks, out_tail) = out.as_chunks_mut::<8>();
    for (index, (block, out_block)) in blocks.iter().zip(out_blocks).enumerate() {
        let x = transpose(block);
        if unit_lanes(norms_sq_of_columns(&x)) != 0xFF {
            scalar::recheck_roots(block, out_block, 8 * index)?;
            continue;
        }
        // Unit vectors: every score is finite (no rescaling to do).
        let (codes, _) = nearest_root_codes(&x);
        scalar::store_codes(out_block, bytemuck::cast(codes));
    }
    scalar::nearest_roots_checked_from(tail, out_tail, 8 * blocks.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf8::norm_sq;
    use crate::precondition::precondition;

    /// The building blocks on one block: the transpose and the squared
    /// norms, as plain arrays.
    #[target_feature(enable = "avx2,fma")]
    fn transpose_and_norms(block: &Block) -> ([[f32; 8]; 8], [f32; 8]) {
        let mut columns = [[0.0; 8]; 8];
        for (column, register) in columns.iter_mut().zip(transpose(block)) {
            *column = store(register);
        }
        (columns, store(norms_sq(&load_block(block))))
    }

    #[test]
    fn transpose_and_norms_match_scalar() {
        if !precondition(
            Avx2Fma::detect().is_some(),
            "an x86-64 CPU with AVX2 and FMA (the AVX2 transpose is not tested here)",
        ) {
            return;
        }
        let block: Block =
            core::array::from_fn(|i| core::array::from_fn(|k| (i * 8 + k) as f32 * 0.37 - 9.1));
        // SAFETY: detection above found AVX2 and FMA.
        let (columns, norms) = unsafe { transpose_and_norms(&block) };
        for (i, row) in block.iter().enumerate() {
            for (k, &x) in row.iter().enumerate() {
                assert_eq!(columns[k][i], x, "vector {i}, coordinate {k}");
            }
            assert_eq!(norms[i].to_bits(), norm_sq(row).to_bits(), "vector {i}");
        }
    }
}
