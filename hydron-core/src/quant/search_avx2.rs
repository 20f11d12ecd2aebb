//! The AVX2 kernel of the code search ([`search`](super::search)): one
//! `__m256` per block, the block's 8 coordinates in its 8 lanes, and one
//! accumulator per query of a group of up to 8.
//!
//! It does the scalar kernel's `f32` operations in the same order (a
//! separate multiply and add per lane, no FMA; the lanes summed by
//! [`lane_sum`]), so the distances are the scalar kernel's bit for bit.
//! Compiled with `#[target_feature(enable = "avx2")]` and entered only
//! through the [`Avx2`] token, which only run-time detection makes. A
//! block's codeword comes from its [`BlockDecoder::parts`] as two whole
//! vectors (the magnitudes' bits and the sign bits), one `xor` and one
//! `add` away from it; the scalar kernel takes the same steps lane by lane.
//! In direction mode one more accumulator sums the codeword's squares
//! (`c · c`, a multiply and an add), and the distances come from the same
//! scalar function as on the scalar path ([`Job::direction_distance`]).

use core::arch::x86_64::{
    __m256i, _mm256_add_ps, _mm256_castsi256_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_set1_ps,
    _mm256_setzero_ps, _mm256_sub_ps, _mm256_xor_si256,
};

use super::e8p_avx2::Avx2;
use super::search::{lane_sum, BlockDecoder, Job, Metric, TopK, GROUP, TILE_VECTORS};

/// The AVX2 scan: as the scalar one (`search::scan_scalar`), with the
/// queries in groups of 8, then 4, 2 and 1.
#[inline]
pub(crate) fn scan<D: BlockDecoder>(
    token: Avx2,
    decoder: D,
    job: &Job<'_>,
    codes: &[u8],
    scales: &[f32],
    first: usize,
    tops: &mut [TopK],
) {
    let _ = token;
    // SAFETY: `token` exists only if `Avx2::detect` found AVX2 on this
    // CPU, the feature the `scan_avx2` functions are compiled for.
    unsafe {
        match (job.direction(), job.metric) {
            (true, _) => scan_avx2::<D, false, true>(decoder, job, codes, scales, first, tops),
            (false, Metric::L2) => {
                scan_avx2::<D, true, false>(decoder, job, codes, scales, first, tops);
            }
            (false, Metric::InnerProduct) => {
                scan_avx2::<D, false, false>(decoder, job, codes, scales, first, tops);
            }
        }
    }
}

#[target_feature(enable = "avx2")]
fn scan_avx2<D: BlockDecoder, const L2: bool, const DIR: bool>(
    decoder: D,
    job: &Job<'_>,
    codes: &[u8],
    scales: &[f32],
    first: usize,
    tops: &mut [TopK],
) {
    let n = codes.len() / job.code_size;
    for tile in (0..n).step_by(TILE_VECTORS) {
        let end = (tile + TILE_VECTORS).min(n);
        let mut q = 0;
        while q < job.count {
            let left = job.count - q;
            let g = match left {
                _ if left >= GROUP => GROUP,
                4..=7 => 4,
                2 | 3 => 2,
                _ => 1,
            };
            for v in tile..end {
                let code = &codes[v * job.code_size..(v + 1) * job.code_size];
                let scale = job.scale(scales, v);
                let tops = &mut tops[q..q + g];
                match g {
                    GROUP => offer(
                        tops,
                        job,
                        first + v,
                        group::<D, L2, DIR, GROUP>(decoder, job, code, scale, q),
                    ),
                    4 => offer(
                        tops,
                        job,
                        first + v,
                        group::<D, L2, DIR, 4>(decoder, job, code, scale, q),
                    ),
                    2 => offer(
                        tops,
                        job,
                        first + v,
                        group::<D, L2, DIR, 2>(decoder, job, code, scale, q),
                    ),
                    _ => offer(
                        tops,
                        job,
                        first + v,
                        group::<D, L2, DIR, 1>(decoder, job, code, scale, q),
                    ),
                }
            }
            q += g;
        }
    }
}

/// Offers vector `id` at `distances` to the group's lists.
#[inline(always)]
fn offer<const G: usize>(tops: &mut [TopK], job: &Job<'_>, id: usize, distances: [f32; G]) {
    for (top, d) in tops.iter_mut().zip(distances) {
        top.offer(job.metric, d, id);
    }
}

/// One vector against queries `q0..q0 + G`: `L2` squared distances, or
/// inner products; with `DIR` (direction mode, `L2` false) the distances
/// to the normalized reconstruction.
#[inline]
#[target_feature(enable = "avx2")]
fn group<D: BlockDecoder, const L2: bool, const DIR: bool, const G: usize>(
    decoder: D,
    job: &Job<'_>,
    code: &[u8],
    scale: f32,
    q0: usize,
) -> [f32; G] {
    let padded = 8 * job.blocks;
    assert!(
        (q0 + G) * padded <= job.queries.len() && code.len() == job.blocks * D::CODE_BYTES,
        "search_avx2::group: queries or code out of range"
    );
    let base = job.queries[q0 * padded..].as_ptr();
    let s = _mm256_set1_ps(scale);
    let mut acc = [_mm256_setzero_ps(); G];
    let mut norm = _mm256_setzero_ps();
    for (b, bytes) in code.chunks_exact(D::CODE_BYTES).enumerate() {
        let p = decoder.parts(bytes);
        let bits: __m256i = bytemuck::cast(p.bits);
        let signs: __m256i = bytemuck::cast(p.signs);
        let c = _mm256_add_ps(
            _mm256_castsi256_ps(_mm256_xor_si256(bits, signs)),
            _mm256_set1_ps(p.shift),
        );
        let y = _mm256_mul_ps(c, s);
        if DIR {
            norm = _mm256_add_ps(norm, _mm256_mul_ps(c, c));
        }
        for (j, acc) in acc.iter_mut().enumerate() {
            // SAFETY: `j < G` and `b < blocks`, so the 8 floats at
            // `j · padded + 8b` are inside `queries[q0 · padded..(q0 + G) ·
            // padded]`, which the assertion above checked is in bounds.
            let q = unsafe { _mm256_loadu_ps(base.add(j * padded + 8 * b)) };
            *acc = if L2 {
                let d = _mm256_sub_ps(q, y);
                _mm256_add_ps(*acc, _mm256_mul_ps(d, d))
            } else {
                _mm256_add_ps(*acc, _mm256_mul_ps(q, y))
            };
        }
    }
    if DIR {
        let norm2 = lane_sum(bytemuck::cast(norm));
        return core::array::from_fn(|j| {
            job.direction_distance(q0 + j, lane_sum(bytemuck::cast(acc[j])), norm2)
        });
    }
    core::array::from_fn(|j| lane_sum(bytemuck::cast(acc[j])))
}
