//! The exact encoder of the [`shell`](super::shell) code: the nearest
//! (gain, shape) codeword of a finite block, the code the module docs
//! define (the shape of the first leader of the largest `f64` score, the
//! gain level nearest its length), found with integer arithmetic first and
//! `f64` only where it decides.
//!
//! # The steps
//!
//! 1. **Sort** `|x|` non-increasing, equal magnitudes in coordinate order:
//!    a sorting network on the keys `bits(|x_i|) · 8 + (7 − i)` (the bits
//!    of a non-negative `f32` order like its value).
//! 2. **Approximate scores.** The magnitudes are scaled so the largest is
//!    32767 and rounded, `q_i = round(c s_i)` with `c = 32767 / s_0`. Every
//!    leader's score `⟨s, L⟩ − [wrong parity] · 2 s_7 L_7` is a dot product
//!    with the weights `W = (L_0, …, L_6, ±L_7)` (`−L_7` where the sign
//!    parity is wrong), so `A_k = ⟨q, W_k⟩` is an exact integer (below
//!    2^22): 16-bit products summed in pairs, eight leaders per AVX2
//!    instruction (`vpmaddwd`).
//! 3. **Candidates.** `|q_i − c s_i| ≤ ½ + 2^-37`, so `A_k` is within
//!    `½ Σ L_k (1 + 2^-36)` of `c` times the exact score `T_k`; the `f64`
//!    score `O_k` the code is defined by is within `8 · 2^-53 Σ s_i L_i`
//!    of `T_k` (seven roundings of sums of exact non-negative products and
//!    one of the parity correction), a few 10^-9 after scaling. The leader
//!    of the largest `O_k` therefore has `A_k > max A − Σ_max − 1` with
//!    `Σ_max = max_k Σ L_k` (78), so, the scores being integers,
//!    `A_k ≥ max A − Σ_max`: every leader within that margin (about 10^-4
//!    of the best score) is a candidate. The scores are computed in groups
//!    of 32 leaders, and only the groups whose best is within the margin
//!    are looked into.
//! 4. **Exact scores** of the candidates (one on 96% of Gaussian blocks,
//!    more on ties), in `f64` with the operations of the definition in
//!    their order, in ascending leader order: the first of the largest
//!    wins, as it does over all 415.
//! 5. **Rank** the shape: the arrangement's rank among the leader's
//!    distinct arrangements is `Σ_i less_i · E_i · (7 − i)! / D`, where
//!    `less_i` counts the later coordinates with smaller values, `E_i` is
//!    the product of `eq_j` (the coordinates from `j` on equal to
//!    coordinate `j`) over `j < i`, and `D` is the product of the factorials
//!    of the leader's multiplicities; the sum is below 8!, and dividing by
//!    `D` is a multiplication by `⌈2^32 / D⌉`. The signs are the bits of the
//!    negative nonzero coordinates, in coordinate order.
//!
//! Each step runs over a batch of 16 blocks before the next, so that the
//! work of neighbouring blocks overlaps. The scores of step 2 are exact
//! integers on every backend (AVX2 `vpmaddwd`, or `f32` products and sums,
//! exact below 2^24, in plain Rust), so the candidates, and the codes, are
//! the same on every backend. A zero block skips steps 2 and 3 (every score
//! is 0, leader 0 wins).

use super::gain::GAIN_THRESHOLDS;
use super::shell::SHAPE_BITS;
use super::shell_tables::{DOUBLED_LEADERS, LEADER_COUNT};
use crate::batch::Backend;

/// `|p|` of every doubled point.
const DOUBLED_NORM: f64 = 28.0;

/// Leaders per chunk of the integer scores (one `__m256i` of `i32`).
const LANES: usize = 8;

/// Chunks of [`LANES`] leaders; the last is padded with zero leaders.
const CHUNKS: usize = LEADER_COUNT.div_ceil(LANES);

/// The scale of the largest magnitude: `i16::MAX`.
const TOP: f64 = 32767.0;

/// Factorials `0! … 8!`.
const FACTORIALS: [u32; 9] = [1, 1, 2, 6, 24, 120, 720, 5040, 40320];

/// `Σ_i L_i`, the largest over the leaders: the margin of the candidates.
const MARGIN: i32 = {
    let mut max = 0;
    let mut k = 0;
    while k < LEADER_COUNT {
        let mut sum = 0;
        let mut i = 0;
        while i < 8 {
            sum += DOUBLED_LEADERS[k][i] as i32;
            i += 1;
        }
        if sum > max {
            max = sum;
        }
        k += 1;
    }
    max
};

/// Whether leader `k` is all-odd and, when the block has `n` (mod 2)
/// negative coordinates, its points need the other sign parity.
const fn wrong_parity(k: usize, n: usize) -> bool {
    let l = &DOUBLED_LEADERS[k];
    if l[0].is_multiple_of(2) {
        return false;
    }
    let mut sum = 0usize;
    let mut i = 0;
    while i < 8 {
        sum += l[i] as usize;
        i += 1;
    }
    (n + sum / 2) % 2 == 1
}

/// The weights of one chunk for `vpmaddwd`: `[pair][2 · lane + h]` is
/// weight `2 · pair + h` of leader `8 · chunk + lane`.
type Chunk = [[i16; 2 * LANES]; 4];

/// The integer weights `W_k` for each parity of the number of negative
/// coordinates: `L_k` with its last coordinate negated when the parity is
/// wrong for leader `k`; zero for the padding.
static WEIGHTS: [[Chunk; CHUNKS]; 2] = {
    let mut out = [[[[0i16; 2 * LANES]; 4]; CHUNKS]; 2];
    let mut n = 0;
    while n < 2 {
        let mut k = 0;
        while k < LEADER_COUNT {
            let mut i = 0;
            while i < 8 {
                let mut w = DOUBLED_LEADERS[k][i] as i16;
                if i == 7 && wrong_parity(k, n) {
                    w = -w;
                }
                out[n][k / LANES][i / 2][2 * (k % LANES) + i % 2] = w;
                i += 1;
            }
            k += 1;
        }
        n += 1;
    }
    out
};

/// [`WEIGHTS`] as `f32`, coordinate-major in each chunk
/// (`[n][chunk][i][lane]`), for the portable scores: `f32` sums of these
/// products of integers below 2^15 and 2^5 are exact (below 2^24).
static WEIGHTS_F32: [[[[f32; LANES]; 8]; CHUNKS]; 2] = {
    let mut out = [[[[0.0; LANES]; 8]; CHUNKS]; 2];
    let mut n = 0;
    while n < 2 {
        let mut c = 0;
        while c < CHUNKS {
            let mut i = 0;
            while i < 8 {
                let mut lane = 0;
                while lane < LANES {
                    out[n][c][i][lane] = WEIGHTS[n][c][i / 2][2 * lane + i % 2] as f32;
                    lane += 1;
                }
                i += 1;
            }
            c += 1;
        }
        n += 1;
    }
    out
};

/// The leaders as `f64`, for the exact scores.
static DOUBLED_F64: [[f64; 8]; LEADER_COUNT] = {
    let mut out = [[0.0; 8]; LEADER_COUNT];
    let mut k = 0;
    while k < LEADER_COUNT {
        let mut i = 0;
        while i < 8 {
            out[k][i] = DOUBLED_LEADERS[k][i] as f64;
            i += 1;
        }
        k += 1;
    }
    out
};

/// `WRONG[n][k]`: 1.0 when [`wrong_parity`]`(k, n)`, else 0.0.
static WRONG: [[f64; LEADER_COUNT]; 2] = {
    let mut out = [[0.0; LEADER_COUNT]; 2];
    let mut n = 0;
    while n < 2 {
        let mut k = 0;
        while k < LEADER_COUNT {
            if wrong_parity(k, n) {
                out[n][k] = 1.0;
            }
            k += 1;
        }
        n += 1;
    }
    out
};

/// What the ranker needs of one leader.
#[derive(Clone, Copy)]
struct Ranker {
    /// The first shape index of the leader's points.
    offset: u32,
    /// `⌈2^32 / D⌉`, `D` the product of the factorials of the
    /// multiplicities of the leader's values.
    reciprocal: u64,
    /// Free sign bits: the nonzero coordinates (all-even) or 7 (all-odd).
    free: u8,
    /// The number of nonzero values.
    nonzero: u8,
    /// Whether the leader is all-odd.
    odd: bool,
    /// All-odd: `Σ L_i / 2 mod 2`, the parity the number of negative
    /// coordinates must have (see `shell`).
    parity: u8,
    /// `4 ·` the group of sorted position `r` (0 for the largest value,
    /// one more for each smaller value), a nibble shift.
    shift: [u8; 8],
}

/// The rankers, from the leaders (offsets as in `shell`'s table).
static RANKERS: [Ranker; LEADER_COUNT] = {
    let mut out = [Ranker {
        offset: 0,
        reciprocal: 0,
        free: 0,
        nonzero: 0,
        odd: false,
        parity: 0,
        shift: [0; 8],
    }; LEADER_COUNT];
    let mut offset: u64 = 0;
    let mut k = 0;
    while k < LEADER_COUNT {
        let l = &DOUBLED_LEADERS[k];
        let mut shift = [0u8; 8];
        let mut denominator = 1u32;
        let mut run = 1u32;
        let mut nonzero = 0u8;
        let mut sum = 0u32;
        let mut r = 0;
        while r < 8 {
            if r > 0 {
                if l[r] == l[r - 1] {
                    shift[r] = shift[r - 1];
                    run += 1;
                } else {
                    shift[r] = shift[r - 1] + 4;
                    denominator *= FACTORIALS[run as usize];
                    run = 1;
                }
            }
            if l[r] != 0 {
                nonzero += 1;
            }
            sum += l[r] as u32;
            r += 1;
        }
        denominator *= FACTORIALS[run as usize];
        let odd = l[0] % 2 == 1;
        let free = if odd { 7 } else { nonzero };
        out[k] = Ranker {
            offset: offset as u32,
            reciprocal: (1u64 << 32).div_ceil(denominator as u64),
            free,
            nonzero,
            odd,
            parity: ((sum / 2) % 2) as u8,
            shift,
        };
        offset += ((FACTORIALS[8] / denominator) as u64) << free;
        k += 1;
    }
    out
};

/// A block's magnitudes sorted non-increasing (equal ones in coordinate
/// order), where they came from, and its signs.
#[derive(Clone, Copy)]
struct Sorted {
    /// `|x|` sorted, as `f64`.
    s: [f64; 8],
    /// `order[r]`: the coordinate of `s[r]`.
    order: [u8; 8],
    /// Bit `i` set when `x_i < 0`.
    negative: u32,
}

impl Sorted {
    /// A placeholder.
    const ZERO: Sorted = Sorted {
        s: [0.0; 8],
        order: [0; 8],
        negative: 0,
    };
}

/// Puts the larger of `k[i]`, `k[j]` first.
#[inline(always)]
fn exchange(k: &mut [u64; 8], i: usize, j: usize) {
    let (a, b) = (k[i], k[j]);
    k[i] = a.max(b);
    k[j] = a.min(b);
}

/// Step 1: `|x|` sorted by the network (the keys are distinct, so any
/// correct network gives the stable order).
#[inline(always)]
fn sort(x: &[f32; 8]) -> Sorted {
    let mut keys: [u64; 8] =
        core::array::from_fn(|i| u64::from(x[i].to_bits() & 0x7FFF_FFFF) << 3 | (7 - i) as u64);
    // A sorting network for 8 keys (19 comparators, depth 6), written out
    // so the keys stay in registers.
    exchange(&mut keys, 0, 2);
    exchange(&mut keys, 1, 3);
    exchange(&mut keys, 4, 6);
    exchange(&mut keys, 5, 7);
    exchange(&mut keys, 0, 4);
    exchange(&mut keys, 1, 5);
    exchange(&mut keys, 2, 6);
    exchange(&mut keys, 3, 7);
    exchange(&mut keys, 0, 1);
    exchange(&mut keys, 2, 3);
    exchange(&mut keys, 4, 5);
    exchange(&mut keys, 6, 7);
    exchange(&mut keys, 2, 4);
    exchange(&mut keys, 3, 5);
    exchange(&mut keys, 1, 4);
    exchange(&mut keys, 3, 6);
    exchange(&mut keys, 1, 2);
    exchange(&mut keys, 3, 4);
    exchange(&mut keys, 5, 6);
    let mut negative = 0;
    for (i, &v) in x.iter().enumerate() {
        negative |= u32::from(v < 0.0) << i;
    }
    Sorted {
        s: keys.map(|k| f64::from(f32::from_bits((k >> 3) as u32))),
        order: keys.map(|k| 7 - (k & 7) as u8),
        negative,
    }
}

/// Leaders per group of four chunks.
const GROUP: usize = 4 * LANES;

/// Groups of four chunks.
const GROUPS: usize = CHUNKS / 4;

const _: () = assert!(CHUNKS.is_multiple_of(4), "chunks come in groups of four");

/// The candidate leaders: bit `g` of `groups` when group `g` holds one,
/// and then bit `j` of `hits[g]` when leader `32 g + j` is one.
#[derive(Clone, Copy)]
struct Candidates {
    /// The groups that hold candidates.
    groups: u32,
    /// The candidates of each group in `groups` (0 for the others).
    hits: [u32; GROUPS],
}

impl Candidates {
    /// Leader 0 alone.
    const FIRST: Candidates = Candidates {
        groups: 1,
        hits: {
            let mut hits = [0; GROUPS];
            hits[0] = 1;
            hits
        },
    };
}

/// `2^52 + 2^51`: adding it to an `f64` of magnitude below `2^51` rounds
/// it to an integer (to nearest, ties to even), in the low bits.
const ROUND: f64 = 6_755_399_441_055_744.0;

/// Step 2: `q`, the magnitudes scaled to `0 ..= 32767` (`s[0] > 0`):
/// `c s_i` rounded to the nearest integer, within `½ + 2^-38` of it.
#[inline(always)]
fn quantize(s: &[f64; 8]) -> [i16; 8] {
    let c = TOP / s[0];
    s.map(|v| (v * c + ROUND).to_bits() as i16)
}

/// Steps 2 and 3 in plain Rust: the scores of every leader (in `f32`,
/// exact, so the integers of the AVX2 kernel), and the leaders within
/// [`MARGIN`] of the largest. `n`: the parity of the negative coordinates.
#[inline(always)]
fn candidates_portable(q: &[i16; 8], n: usize) -> Candidates {
    let q = q.map(f32::from);
    let mut scores = [[0.0f32; LANES]; CHUNKS];
    let mut chunk_max = [0.0f32; CHUNKS];
    for ((chunk, out), m) in WEIGHTS_F32[n].iter().zip(&mut scores).zip(&mut chunk_max) {
        let mut acc = [0.0f32; LANES];
        for (w, &qi) in chunk.iter().zip(&q) {
            for (a, &wl) in acc.iter_mut().zip(w) {
                *a += qi * wl;
            }
        }
        *out = acc;
        *m = acc.iter().copied().fold(f32::MIN, f32::max);
    }
    let threshold = chunk_max.iter().copied().fold(f32::MIN, f32::max) - MARGIN as f32;
    let mut found = Candidates {
        groups: 0,
        hits: [0; GROUPS],
    };
    for (c, (out, &m)) in scores.iter().zip(&chunk_max).enumerate() {
        if m >= threshold {
            let (g, row) = (c / 4, c % 4);
            found.groups |= 1 << g;
            for (lane, &a) in out.iter().enumerate() {
                found.hits[g] |= u32::from(a >= threshold) << (LANES * row + lane);
            }
        }
    }
    found
}

/// Step 4: the first leader of the largest `f64` score among `found`, and
/// that score.
#[inline(always)]
fn exact_best(sorted: &Sorted, found: &Candidates) -> (usize, f64) {
    let s = &sorted.s;
    let wrong = &WRONG[(sorted.negative.count_ones() & 1) as usize];
    let fix = 2.0 * s[7];
    let (mut best, mut best_score) = (0, f64::NEG_INFINITY);
    let mut groups = found.groups;
    while groups != 0 {
        let g = groups.trailing_zeros() as usize;
        groups &= groups - 1;
        let mut bits = found.hits[g];
        while bits != 0 {
            // Never a padding leader: its score, 0, is below the threshold
            // (every leader scores at least 32767 (L_0 − L_7) ≥ 32767).
            let k = GROUP * g + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let l = &DOUBLED_F64[k];
            let mut v = s[0] * l[0];
            v += s[1] * l[1];
            v += s[2] * l[2];
            v += s[3] * l[3];
            v += s[4] * l[4];
            v += s[5] * l[5];
            v += s[6] * l[6];
            v += s[7] * l[7];
            let v = v - fix * l[7] * wrong[k];
            if v > best_score {
                (best, best_score) = (k, v);
            }
        }
    }
    (best, best_score)
}

/// Step 5: the shape index of leader `k` placed on the block's order and
/// signs.
#[inline(always)]
fn rank(k: usize, sorted: &Sorted) -> u32 {
    let r = &RANKERS[k];
    // The nibble shift of each coordinate's value group, and which
    // coordinates are nonzero.
    let mut shift = [0u8; 8];
    let mut nonzero = 0u32;
    for (position, &i) in sorted.order.iter().enumerate() {
        shift[usize::from(i)] = r.shift[position];
        nonzero |= u32::from(position < usize::from(r.nonzero)) << i;
    }
    // From the last coordinate: nibble g of `counts` counts the coordinates
    // so far in group g; a larger group holds smaller values.
    let mut counts = 0u64;
    let mut less = [0u32; 8];
    let mut equal = [0u32; 8];
    for i in (0..8).rev() {
        let sh = u32::from(shift[i]);
        counts += 1 << sh;
        equal[i] = (counts >> sh & 15) as u32;
        let larger = counts >> sh >> 4;
        less[i] = ((larger * 0x1111_1111) >> 28 & 15) as u32;
    }
    let mut sum = 0u32;
    let mut product = 1u32;
    for i in 0..8 {
        sum += less[i] * product * FACTORIALS[7 - i];
        product *= equal[i];
    }
    let arrangement = ((u64::from(sum) * r.reciprocal) >> 32) as u32;

    // All-even leaders: the signs of the nonzero coordinates, compressed.
    // All-odd ones (every coordinate nonzero): coordinates 0–6, after the
    // smallest magnitude's flip when the parity is wrong. Both are
    // computed (the winner is all-odd about half the time: a branch would
    // be a coin toss).
    let negative = sorted.negative & nonzero;
    let mut even = 0u32;
    let mut bit = 0;
    for i in 0..8 {
        let free = nonzero >> i & 1;
        even |= (negative >> i & free) << bit;
        bit += free;
    }
    let wrong = (negative.count_ones() + u32::from(r.parity)) & 1;
    let odd = (negative ^ wrong << sorted.order[7]) & 0x7F;
    let signs = if r.odd { odd } else { even };
    r.offset + (arrangement << r.free) + signs
}

/// Blocks per batch: each step runs over a batch before the next, so the
/// work of neighbouring blocks overlaps.
const BATCH: usize = 16;

/// The codes of finite blocks into `out` (same length), with `candidates`
/// for steps 2 and 3: steps 1–3 for a batch of blocks, then steps 4–5 and
/// the gains.
#[inline(always)]
fn encode_batches(
    blocks: &[[f32; 8]],
    out: &mut [u32],
    mut candidates: impl FnMut(&[i16; 8], usize) -> Candidates,
) {
    for (xs, codes) in blocks.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        let mut staged = [(Sorted::ZERO, Candidates::FIRST); BATCH];
        for (x, (sorted, found)) in xs.iter().zip(&mut staged) {
            *sorted = sort(x);
            *found = if sorted.s[0] == 0.0 {
                // Every score is +0.0: the first leader wins.
                Candidates::FIRST
            } else {
                let n = (sorted.negative.count_ones() & 1) as usize;
                candidates(&quantize(&sorted.s), n)
            };
        }
        for ((sorted, found), code) in staged.iter().zip(codes) {
            let (k, score) = exact_best(sorted, found);
            *code = (gain_index(score / DOUBLED_NORM) << SHAPE_BITS) | rank(k, sorted);
        }
    }
}

/// Buckets of `t` of width 1/16 for [`gain_index`]; the last holds every
/// `t` above every midpoint.
const BUCKETS: usize = 80;

/// For each bucket `b` (`t` in `[b/16, (b+1)/16)`): the number of gain
/// midpoints below it, and the midpoint inside it (`+∞` for none). A
/// bucket holds at most one midpoint (checked here).
static GAIN_BUCKETS: [(u32, f64); BUCKETS] = {
    let mut out = [(0, f64::INFINITY); BUCKETS];
    let mut b = 0;
    while b < BUCKETS {
        let (low, high) = (b as f64 / 16.0, (b + 1) as f64 / 16.0);
        let mut m = 0;
        while m < GAIN_THRESHOLDS.len() {
            let t = GAIN_THRESHOLDS[m];
            if t < low {
                out[b].0 += 1;
            } else if t < high || b == BUCKETS - 1 {
                assert!(out[b].1 == f64::INFINITY, "one midpoint per bucket");
                out[b].1 = t;
            }
            m += 1;
        }
        b += 1;
    }
    assert!(
        out[BUCKETS - 1].0 == GAIN_THRESHOLDS.len() as u32,
        "the last bucket is above all"
    );
    out
};

/// The index of the gain level nearest `t ≥ 0` (the lower on a tie): the
/// number of midpoints below `t`, from its bucket (`16 t` is exact).
#[inline(always)]
fn gain_index(t: f64) -> u32 {
    let (below, inside) = GAIN_BUCKETS[((16.0 * t) as usize).min(BUCKETS - 1)];
    below + u32::from(t > inside)
}

/// The code of a finite block on `backend` ([`Backend::Avx2Fma`]: the AVX2
/// scores when this build and CPU have them, else the portable ones).
#[must_use]
pub(crate) fn encode_finite_with(x: &[f32; 8], backend: Backend) -> u32 {
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if backend == Backend::Avx2Fma && std::is_x86_feature_detected!("avx2") {
        let mut out = [0u32];
        // SAFETY: the CPU has AVX2 (detected just above), the only
        // requirement of `encode_all`.
        unsafe { avx2::encode_all(core::slice::from_ref(x), &mut out) };
        return out[0];
    }
    let _ = backend;
    let mut out = [0u32];
    encode_batches(core::slice::from_ref(x), &mut out, candidates_portable);
    out[0]
}

/// The codes of finite blocks on `backend`, as [`encode_finite_with`].
///
/// # Panics
/// When `out` does not have the length of `blocks`.
pub(crate) fn encode_all_with(blocks: &[[f32; 8]], out: &mut [u32], backend: Backend) {
    assert_eq!(
        blocks.len(),
        out.len(),
        "encode: output length differs from input"
    );
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    if backend == Backend::Avx2Fma && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (detected just above), the only
        // requirement of `encode_all`.
        unsafe { avx2::encode_all(blocks, out) };
        return;
    }
    let _ = backend;
    encode_batches(blocks, out, candidates_portable);
}

/// The shape index of a finite block's shape (no gain).
#[must_use]
pub(crate) fn shape_finite(x: &[f32; 8]) -> u32 {
    encode_finite_with(x, Backend::Avx2Fma) & ((1 << SHAPE_BITS) - 1)
}

/// Steps 2 and 3 with AVX2 (`vpmaddwd`: eight leaders per instruction).
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
mod avx2 {
    use core::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_castsi256_ps, _mm256_cmpgt_epi32, _mm256_madd_epi16,
        _mm256_max_epi32, _mm256_movemask_ps, _mm256_permute2x128_si256, _mm256_set1_epi32,
        _mm256_shuffle_epi32, _mm256_sub_epi32,
    };

    use super::{encode_batches, Candidates, Chunk, GROUPS, LANES, MARGIN, WEIGHTS};

    /// The codes of `blocks` into `out` (same length), compiled for AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) fn encode_all(blocks: &[[f32; 8]], out: &mut [u32]) {
        encode_batches(blocks, out, |q, n| candidates(q, n));
    }

    /// The integer scores of the eight leaders of one row of weights:
    /// four `vpmaddwd` of coordinate pairs (`pairs[j]`: `q_2j`, `q_2j+1` in
    /// every lane), summed.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn row(weights: &Chunk, pairs: &[__m256i; 4]) -> __m256i {
        let w: [__m256i; 4] = bytemuck::cast(*weights);
        let a = _mm256_add_epi32(
            _mm256_madd_epi16(w[0], pairs[0]),
            _mm256_madd_epi16(w[1], pairs[1]),
        );
        let b = _mm256_add_epi32(
            _mm256_madd_epi16(w[2], pairs[2]),
            _mm256_madd_epi16(w[3], pairs[3]),
        );
        _mm256_add_epi32(a, b)
    }

    /// `candidates_portable`'s set: the largest integer score of each group
    /// of four rows, then, in the groups whose largest is within `MARGIN`
    /// of the largest of all, the rows again and the leaders within.
    #[target_feature(enable = "avx2")]
    fn candidates(q: &[i16; 8], n: usize) -> Candidates {
        let pairs: [__m256i; 4] = core::array::from_fn(|j| {
            _mm256_set1_epi32(i32::from(q[2 * j] as u16) | i32::from(q[2 * j + 1]) << 16)
        });
        let weights = &WEIGHTS[n];
        let mut max = _mm256_set1_epi32(i32::MIN);
        let mut group_max = [max; GROUPS];
        for (group, m) in weights.chunks_exact(4).zip(&mut group_max) {
            let a = _mm256_max_epi32(row(&group[0], &pairs), row(&group[1], &pairs));
            let b = _mm256_max_epi32(row(&group[2], &pairs), row(&group[3], &pairs));
            *m = _mm256_max_epi32(a, b);
            max = _mm256_max_epi32(max, *m);
        }
        let max = _mm256_max_epi32(max, _mm256_permute2x128_si256::<1>(max, max));
        let max = _mm256_max_epi32(max, _mm256_shuffle_epi32::<0b01_00_11_10>(max));
        let max = _mm256_max_epi32(max, _mm256_shuffle_epi32::<0b10_11_00_01>(max));
        // `a > max − MARGIN − 1` is `a ≥ max − MARGIN`.
        let threshold = _mm256_sub_epi32(max, _mm256_set1_epi32(MARGIN + 1));
        let mut groups = 0u32;
        for (g, &m) in group_max.iter().enumerate() {
            let hit = _mm256_cmpgt_epi32(m, threshold);
            groups |= u32::from(_mm256_movemask_ps(_mm256_castsi256_ps(hit)) != 0) << g;
        }
        let mut found = Candidates {
            groups,
            hits: [0; GROUPS],
        };
        while groups != 0 {
            let g = groups.trailing_zeros() as usize;
            groups &= groups - 1;
            let mut bits = 0u32;
            for (row, w) in weights[4 * g..4 * g + 4].iter().enumerate() {
                let hit = _mm256_cmpgt_epi32(self::row(w, &pairs), threshold);
                bits |= (_mm256_movemask_ps(_mm256_castsi256_ps(hit)) as u32) << (LANES * row);
            }
            found.hits[g] = bits;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stable order of `|x|`, non-increasing, by the library sort.
    fn stable_order(x: &[f32; 8]) -> [u8; 8] {
        let mut order = [0u8, 1, 2, 3, 4, 5, 6, 7];
        order.sort_by(|&i, &j| x[usize::from(j)].abs().total_cmp(&x[usize::from(i)].abs()));
        order
    }

    /// The network sorts every sequence of zeros and ones (so, by the 0-1
    /// principle, every sequence), stably, and every permutation of
    /// distinct values.
    #[test]
    fn the_network_sorts_stably() {
        for bits in 0u32..256 {
            let x: [f32; 8] = core::array::from_fn(|i| (bits >> i & 1) as f32);
            let sorted = sort(&x);
            assert_eq!(sorted.order, stable_order(&x), "{x:?}");
            let s: [f64; 8] = sorted.order.map(|i| f64::from(x[usize::from(i)]));
            assert_eq!(sorted.s, s);
        }
        let mut x = [1.0f32, -2.0, 3.0, -4.0, 5.0, -6.0, 7.0, -8.0];
        let mut count = 0;
        permute(&mut x, 8, &mut |x| {
            count += 1;
            let sorted = sort(x);
            assert_eq!(sorted.order, stable_order(x), "{x:?}");
            assert_eq!(
                sorted.negative,
                (0..8).map(|i| u32::from(x[i] < 0.0) << i).sum::<u32>()
            );
        });
        assert_eq!(count, 40320);
    }

    /// Heap's algorithm: `f` on every permutation of `x[..k]`.
    fn permute(x: &mut [f32; 8], k: usize, f: &mut impl FnMut(&[f32; 8])) {
        if k == 1 {
            f(x);
            return;
        }
        for i in 0..k {
            permute(x, k - 1, f);
            x.swap(if k.is_multiple_of(2) { i } else { 0 }, k - 1);
        }
    }

    /// The bucketed gain index counts the midpoints below `t`, at and
    /// around every midpoint and bucket edge, and far away.
    #[test]
    fn gain_index_counts_the_midpoints_below() {
        let count = |t: f64| GAIN_THRESHOLDS.iter().filter(|&&m| t > m).count() as u32;
        let mut ts = vec![0.0, -0.0, 1e-300, 1.0, 10.0, 1e300, f64::MAX];
        for &m in &GAIN_THRESHOLDS {
            ts.extend([m, m.next_down(), m.next_up(), m * 0.99, m * 1.01]);
        }
        for b in 0..=BUCKETS + 2 {
            let edge = b as f64 / 16.0;
            ts.extend([edge, edge.next_down(), edge.next_up()]);
        }
        for t in ts {
            assert_eq!(gain_index(t), count(t), "t = {t}");
        }
    }

    /// The ranker gives `shell::shape_index` of every point it is asked
    /// for: each leader on blocks that are its own points, in random
    /// arrangements and signs.
    #[test]
    fn rank_is_the_shape_index() {
        let mut state = 0x5EED_0A11u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for k in 0..LEADER_COUNT {
            for _ in 0..40 {
                let mut p = DOUBLED_LEADERS[k].map(|v| v as i8);
                for i in (1..8).rev() {
                    p.swap(i, (next() % (i as u64 + 1)) as usize);
                }
                let signs = next();
                for (i, v) in p.iter_mut().enumerate() {
                    if signs >> i & 1 == 1 {
                        *v = -*v;
                    }
                }
                let x = p.map(f32::from);
                let sorted = sort(&x);
                // An all-odd point needs the parity: its index names the
                // point with the smallest coordinate's sign fixed.
                let mut expected = p;
                if RANKERS[k].odd {
                    let negatives = p.iter().filter(|&&v| v < 0).count() as u32;
                    if (negatives + u32::from(RANKERS[k].parity)) % 2 == 1 {
                        let last = usize::from(sorted.order[7]);
                        expected[last] = -expected[last];
                    }
                }
                let index = super::super::shell::shape_index(&expected).unwrap();
                assert_eq!(rank(k, &sorted), index, "leader {k}: {p:?}");
            }
        }
    }
}
