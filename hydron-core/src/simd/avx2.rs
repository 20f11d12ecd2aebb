//! The AVX2 + FMA backend: `core::arch::x86_64` intrinsics on `__m256`.
//!
//! Every kernel here is compiled with
//! `#[target_feature(enable = "avx2,fma")]`, so it may only be called once
//! [`has_avx2_fma`](super::has_avx2_fma) said yes. The [`Avx2Fma`] token
//! enforces that: only detection makes one, and its safe methods are the
//! only callers of the kernels (one `unsafe` call each). Inside the kernels,
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
    _mm256_andnot_ps, _mm256_andnot_si256, _mm256_blend_ps, _mm256_blendv_epi8, _mm256_blendv_ps,
    _mm256_castps128_ps256, _mm256_castps256_ps128, _mm256_castps_si256, _mm256_castsi256_ps,
    _mm256_cmp_ps, _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_cvtepi32_ps, _mm256_cvtps_epi32,
    _mm256_cvttps_epi32, _mm256_div_ps, _mm256_extractf128_ps, _mm256_fmadd_ps,
    _mm256_insertf128_ps, _mm256_max_epi32, _mm256_max_ps, _mm256_min_epi32, _mm256_min_ps,
    _mm256_movemask_ps, _mm256_mul_ps, _mm256_or_ps, _mm256_or_si256, _mm256_permute2f128_ps,
    _mm256_permutevar8x32_epi32, _mm256_permutevar8x32_ps, _mm256_round_ps, _mm256_set1_epi32,
    _mm256_set1_ps, _mm256_setr_epi32, _mm256_setzero_ps, _mm256_setzero_si256, _mm256_shuffle_ps,
    _mm256_sign_epi32, _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_sqrt_ps, _mm256_srai_epi32,
    _mm256_srli_epi32, _mm256_srlv_epi32, _mm256_sub_epi32, _mm256_sub_ps, _mm256_unpackhi_ps,
    _mm256_unpacklo_ps, _mm256_xor_ps, _mm256_xor_si256, _CMP_EQ_OQ, _CMP_GE_OQ, _CMP_GT_OQ,
    _CMP_LE_OQ, _CMP_LT_OQ, _CMP_NGT_UQ,
};
use core::mem::MaybeUninit;

use super::scalar;
use crate::e8::{INTEGER_ROOT_COUNT, INV_SQRT_8};
use crate::gf8::NORM_SQ_TOLERANCE;
use crate::lattice::{BELOW_HALF, INPUT_LIMIT_BITS, TIE_MARGIN, TINY_BITS, UP_SCALE};
use crate::{BatchError, E8Point, E8Root, Gf8};

/// Proof that this CPU has AVX2 and FMA: the only way into the kernels.
///
/// The private field means [`Avx2Fma::detect`] is the only constructor, so
/// holding a value is evidence that detection succeeded; the safe methods
/// below rely on that for their one `unsafe` call each.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2Fma(());

impl Avx2Fma {
    /// The token, if the CPU has AVX2 and FMA.
    #[inline]
    pub(crate) fn detect() -> Option<Avx2Fma> {
        super::has_avx2_fma().then_some(Avx2Fma(()))
    }

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
        unsafe { nearest_lattice_points_into_avx2(arrays, out) }
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
fn nearest_lattice_points_into_avx2(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf8::norm_sq;

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
        if Avx2Fma::detect().is_none() {
            eprintln!("this CPU lacks AVX2 or FMA: nothing to test");
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
