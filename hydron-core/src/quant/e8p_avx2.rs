//! The AVX2 kernel of the in-range E8P encoder's full search over the 256
//! patterns of a shift, four patterns per `__m256d` (blocks whose shifted
//! coordinates tie, or are zero, where the sorting shortcut of
//! `e8p::best_by_sorting` does not apply).
//!
//! Compiled with `#[target_feature(enable = "avx2")]` and entered only
//! through the [`Avx2`] token, which only run-time detection makes (the
//! pattern of `simd/avx2.rs`). It evaluates the same 512 class values as
//! the scalar kernel, `Σ a_i t_i − ½|a|² − [wrong parity] · 2 min_i a_i t_i`,
//! in `f64` with separate multiplies and adds in the scalar kernel's
//! order; in the exact range every one of those operations is exact (see
//! [`e8p::in_exact_range`](super::e8p)), so the values, and the codes, are
//! the scalar kernel's bit for bit, ties included. Lane `l` of group `g`
//! holds pattern `4g + l`; a lane keeps its first maximum (strict `>`), and
//! the lanes are then reduced to the lowest pattern among the largest
//! values, which is the scalar kernel's rule.

use core::arch::x86_64::{
    __m256d, _mm256_add_pd, _mm256_and_pd, _mm256_blendv_pd, _mm256_cmp_pd, _mm256_min_pd,
    _mm256_mul_pd, _mm256_set1_pd, _mm256_sub_pd, _mm256_xor_pd, _CMP_GT_OQ,
};

use super::e8p::{encode_in_range_by, PATTERN_COUNT, TABLES};
use super::e8p_batch::LANES;

/// Proof that this CPU has AVX2: the only way into the kernel.
///
/// The private field makes [`Avx2::detect`] the only constructor, so a
/// value is evidence that detection succeeded; [`Avx2::encode_in_range`]
/// relies on it for its one `unsafe` call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// The token, if the CPU has AVX2.
    #[inline]
    pub(crate) fn detect() -> Option<Avx2> {
        std::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }

    /// The in-range encoder ([`e8p::encode_in_range`](super::e8p)) with
    /// its full 256-pattern search on AVX2; `x` must be in the exact range.
    #[inline]
    pub(crate) fn encode_in_range(self, x: &[f32; 8]) -> u16 {
        encode_in_range_by(x, |t, parity| self.best_of_all_patterns(t, parity))
    }

    /// The batch kernel ([`e8p_batch`](super::e8p_batch)) compiled for
    /// AVX2: the same operations, so the same codes.
    #[inline]
    pub(crate) fn encode_lanes(
        self,
        blocks: &[[f32; 8]],
        in_range: &[bool; LANES],
    ) -> [Option<u16>; LANES] {
        // SAFETY: `self` exists only if `detect` found AVX2 on this CPU,
        // the feature `encode_lanes_avx2` is compiled for.
        unsafe { encode_lanes_avx2(blocks, in_range) }
    }

    /// [`e8p::best_of_all_patterns`](super::e8p) on AVX2.
    #[inline]
    fn best_of_all_patterns(self, t: &[f64; 8], parity: u8) -> (f64, usize) {
        // SAFETY: `self` exists only if `detect` found AVX2 on this CPU,
        // the feature `best_of_all_patterns_avx2` is compiled for.
        unsafe { best_of_all_patterns_avx2(t, parity) }
    }
}

/// Groups of four patterns.
const GROUPS: usize = PATTERN_COUNT / 4;

/// The pattern tables in structure-of-arrays form, four patterns a row.
struct Wide {
    /// `a[g][i]`: coordinate `i` of patterns `4g..4g + 4`.
    a: [[[f64; 4]; 8]; GROUPS],
    /// `½|a|²` of the four patterns.
    half_norm: [[f64; 4]; GROUPS],
    /// All ones where the pattern's parity is odd, else zero (as `f64` bits).
    parity: [[f64; 4]; GROUPS],
    /// The pattern indices, as `f64`.
    index: [[f64; 4]; GROUPS],
}

const fn build_wide() -> Wide {
    let mut w = Wide {
        a: [[[0.0; 4]; 8]; GROUPS],
        half_norm: [[0.0; 4]; GROUPS],
        parity: [[0.0; 4]; GROUPS],
        index: [[0.0; 4]; GROUPS],
    };
    let mut p = 0;
    while p < PATTERN_COUNT {
        let (g, l) = (p / 4, p % 4);
        let mut sq = 0u32;
        let mut i = 0;
        while i < 8 {
            let d = TABLES.doubled[p][i];
            w.a[g][i][l] = d as f64 * 0.5;
            sq += d as u32 * d as u32;
            i += 1;
        }
        w.half_norm[g][l] = sq as f64 / 8.0;
        w.parity[g][l] = if TABLES.parity[p] == 1 {
            f64::from_bits(u64::MAX)
        } else {
            0.0
        };
        w.index[g][l] = p as f64;
        p += 1;
    }
    w
}

static WIDE: Wide = build_wide();

#[inline]
#[target_feature(enable = "avx2")]
fn load(v: &[f64; 4]) -> __m256d {
    bytemuck::cast(*v)
}

#[target_feature(enable = "avx2")]
fn best_of_all_patterns_avx2(t: &[f64; 8], parity: u8) -> (f64, usize) {
    let t = t.map(|v| _mm256_set1_pd(v));
    let negative_parity = _mm256_set1_pd(if parity == 1 {
        f64::from_bits(u64::MAX)
    } else {
        0.0
    });
    let mut lane_best = _mm256_set1_pd(f64::NEG_INFINITY);
    let mut lane_index = _mm256_set1_pd(0.0);
    for g in 0..GROUPS {
        let a = &WIDE.a[g];
        let p: [__m256d; 8] = core::array::from_fn(|i| _mm256_mul_pd(load(&a[i]), t[i]));
        let sum = _mm256_add_pd(
            _mm256_add_pd(_mm256_add_pd(p[0], p[4]), _mm256_add_pd(p[2], p[6])),
            _mm256_add_pd(_mm256_add_pd(p[1], p[5]), _mm256_add_pd(p[3], p[7])),
        );
        let min = _mm256_min_pd(
            _mm256_min_pd(_mm256_min_pd(p[0], p[4]), _mm256_min_pd(p[2], p[6])),
            _mm256_min_pd(_mm256_min_pd(p[1], p[5]), _mm256_min_pd(p[3], p[7])),
        );
        let value = _mm256_sub_pd(sum, load(&WIDE.half_norm[g]));
        let wrong = _mm256_xor_pd(load(&WIDE.parity[g]), negative_parity);
        let value = _mm256_sub_pd(value, _mm256_and_pd(wrong, _mm256_add_pd(min, min)));
        let better = _mm256_cmp_pd::<_CMP_GT_OQ>(value, lane_best);
        lane_best = _mm256_blendv_pd(lane_best, value, better);
        lane_index = _mm256_blendv_pd(lane_index, load(&WIDE.index[g]), better);
    }
    let values: [f64; 4] = bytemuck::cast(lane_best);
    let indices: [f64; 4] = bytemuck::cast(lane_index);
    let mut best = (f64::NEG_INFINITY, PATTERN_COUNT);
    for l in 0..4 {
        let index = indices[l] as usize;
        if values[l] > best.0 || (values[l] == best.0 && index < best.1) {
            best = (values[l], index);
        }
    }
    best
}

#[target_feature(enable = "avx2")]
fn encode_lanes_avx2(blocks: &[[f32; 8]], in_range: &[bool; LANES]) -> [Option<u16>; LANES] {
    super::e8p_batch::encode_lanes(blocks, in_range)
}
