//! The E8 shell code: 32 bits per 8-dimensional block (4 bits per
//! coordinate), a gain–shape code on one shell of the E8 lattice.
//!
//! # Why this construction
//!
//! At 4 bits per coordinate a two-stage E8P residual (16 + 16 bits) gains
//! nothing over a scalar Lloyd–Max quantizer on Gaussian data (normalized
//! MSE 0.0097 against 0.0095, issue 21). A gain–shape code spends the bits
//! where the Gaussian puts its mass: the direction of a block is uniform
//! on the sphere, so it is coded by the nearest point of a large, very
//! evenly spread set of directions, and the length (which varies little,
//! a chi distribution with 8 degrees of freedom) by a 16-level scalar
//! quantizer. The directions are the 254,864,880 points of the E8 shell of
//! squared norm 196 (`240 · σ₃(98)`, 2^27.93 points: the largest E8 shell
//! that fits in 28 bits), and the gain takes the other 4 bits. That split
//! is the one the theory of gain–shape codes gives at this rate (about as
//! many bits per dimension to the gain as to each of the 7 directions of
//! the shape), and the one issue 21's study measured. The neighbouring
//! splits are worse, in a one-off experiment (numpy, the same exact
//! encoder and a Lloyd–Max gain, 100,000 Gaussian blocks): the shell of
//! norm² 162 (2^26.98 points) with a 5-bit gain gave 0.00757, the shell of
//! norm² 258 (2^28.99) with a 3-bit gain 0.00699, against 0.00671 here.
//!
//! Measured NMSE (`Σ|x − x̂|² / Σ|x|²`, seeded, in
//! `hydron-core/tests/quant_shell.rs`): **0.00672** on 200,000 blocks of
//! i.i.d. N(0, 1) coordinates coded by [`encode`] (`gaussian_nmse`);
//! **0.00671** through [`LatticeQuantizer`](super::LatticeQuantizer) at 4
//! bits on 2,100 384-dimensional Gaussian vectors, rotated, per-vector
//! scale (100,800 blocks, `quantizer_at_4_bits_384_d_gaussian`); 0.00687
//! on 100,000 8-dimensional ones (no rotation; the per-vector scale
//! already fixes the block's length, so the gain bits help less). The
//! rate–distortion bound at 4 bits is 2^-8 = 0.0039; scalar Lloyd–Max
//! reaches 0.0095. QTIP's trellis (0.0044) is the reference for the
//! issue's stretch goal (0.0050), which one shell and a gain do not reach.
//!
//! # The shell
//!
//! A point of the shell is `p / 2` where `p` (the *doubled* point) has
//! eight integer coordinates, **all even or all odd**, `Σ p_i² = 784`, and
//! `Σ p_i ≡ 0 (mod 4)` (the coordinate sum of the point is even). For
//! all-even `p` the last condition always holds; for all-odd `p` it holds
//! for exactly half of the sign patterns.
//!
//! The points are grouped by **leader**, the non-increasing vector of
//! their absolute values: 415 leaders (`DOUBLED_LEADERS`), numbered in
//! lexicographic order of their doubled tuples ([`leader`]).
//!
//! # The shape index (28 bits)
//!
//! `index = offset(leader) + perm_rank · 2^f + sign_rank`, where
//!
//! - `offset(leader)` is the number of points of the lower-numbered leaders;
//! - `perm_rank` is the rank of the vector of absolute values `|p|` among
//!   the distinct arrangements of the leader, in lexicographic order
//!   (smaller values first): rank 0 is the leader sorted ascending;
//! - `f`, the number of free signs, is the number of nonzero coordinates
//!   for an all-even leader, and 7 for an all-odd one;
//! - bit `k` of `sign_rank` is set when the `k`-th free coordinate (in
//!   coordinate order, counting only nonzero coordinates) is negative. For
//!   an all-odd leader the free coordinates are 0–6, and coordinate 7 is
//!   negative exactly when that makes `Σ p_i ≡ 0 (mod 4)`.
//!
//! Indices run over `0..SHAPES` exactly ([`SHAPES`] = 254,864,880).
//!
//! # The code (32 bits)
//!
//! Bits 0–27 hold the shape index, bits 28–31 the gain index `g`. The
//! block decodes to `GAIN_LEVELS[g] · p / 28` (`p / 28` is the unit shape
//! vector, `|p| = 28`). Codes whose shape index is `SHAPES` or more are not
//! codes of anything; [`decode`] gives the zero block for them and
//! [`is_valid`] tells them apart.
//!
//! # The encoder
//!
//! The reconstruction is `γ · ŝ` with `ŝ` a unit shape and `γ > 0` a gain
//! level, so its squared error is `|x|² − 2γ⟨x, ŝ⟩ + γ²`: for any gain
//! level the best shape maximizes `⟨x, ŝ⟩`, and the best level is then the
//! one nearest `t = ⟨x, ŝ⟩`. [`encode`] therefore finds the shape
//! maximizing `⟨x, p⟩` over the whole shell, then the gain level nearest
//! `t` (the lower one on a tie): the result is the code nearest `x`.
//!
//! For one leader the best arrangement pairs the largest `|x_i|` with the
//! largest leader value (rearrangement inequality) and takes the signs of
//! `x`; for an all-odd leader whose sign parity is then wrong, one sign
//! must flip, and the cheapest is the one of the smallest `|x_i| · p_i`,
//! which is the smallest `|x_i|`. So the code is defined by one sort of
//! `|x|` and 415 scores, dot products of 8 terms (`⟨|x| sorted, L⟩`, less
//! `2 |x|₇ L₇` for a wrong parity). Ties (equal `|x_i|`, equal leader
//! scores) are broken by coordinate order (a stable sort: the smallest
//! `|x_i|` is the last of the equal ones), then by the lowest leader
//! number; zero coordinates take the `+` sign. The scores are sums in
//! `f64`, in coordinate order: exact (so the maximum is exact) when the
//! nonzero `|x_i|` span less than a factor of 2^21, and within `f64`
//! rounding (relative 10^-15) otherwise; the code is that of the first
//! leader of the largest of these `f64` scores.
//!
//! The encoder (`shell_encoder.rs`) finds that leader without computing
//! all 415 `f64` scores: integer scores of the magnitudes rounded to 15
//! bits (AVX2 with the `simd` feature on x86-64, chosen at run time; exact
//! `f32` arithmetic otherwise) single out the few leaders that can be the
//! first of the largest (a margin proven from the rounding error), and only
//! those get the `f64` score, with the operations of the definition in
//! their order. The codes are therefore the same on every backend, and
//! the same as those of the first encoder, which computed all 415 scores
//! (`hydron-core/tests/quant_shell_encoder.rs` keeps it as an oracle).
//!
//! The decoder ([`decode`], [`shape`]) is table-driven, allocates nothing
//! per call and has no branch that depends on the code: a table of the
//! first leader of every 2^16 indices and three comparisons find the
//! leader (at most three leaders start inside a chunk), a table of every
//! leader's arrangements in rank order (502,566 entries of 4 bytes for the
//! 109 ways the leaders repeat their values, built once on the first
//! decode) gives the arrangement, and the signs are placed on the free
//! coordinates with masks; each coordinate is the leader's value times the
//! gain factor, its sign bit set afterwards (the same bits as
//! `f32::from(p_i) · factor`). [`decode_into`] loads the arrangements of 32
//! codes before it builds their blocks, so that the table's cache misses
//! overlap. Encoding ranks the shape directly, from counts of smaller and
//! equal values (see the encoder).
//!
//! ```
//! use hydron_core::quant::shell;
//!
//! let x = [0.3, -1.2, 0.8, 0.1, -0.4, 1.9, -0.7, 0.2];
//! let code = shell::encode(&x)?;
//! let y = shell::decode(code);
//! let err: f32 = x.iter().zip(&y).map(|(a, b)| (a - b) * (a - b)).sum();
//! let energy: f32 = x.iter().map(|a| a * a).sum();
//! assert!(err / energy < 0.03);
//! # Ok::<(), hydron_core::Gf8Error>(())
//! ```

pub use super::gain::GAIN_LEVELS;

use super::shell_arrangements::arrangements;
use super::shell_encoder;
use super::shell_tables::{DOUBLED_LEADERS, LEADER_COUNT};
use crate::batch::Backend;
use crate::{BatchError, Gf8Error};

/// The number of points of the shell (valid shape indices are
/// `0..SHAPES`): `240 · σ₃(98)`.
pub const SHAPES: u32 = 254_864_880;

/// The number of leaders of the shell.
pub const LEADERS: usize = LEADER_COUNT;

/// Bits of the shape index in a code (bits 0–27); the gain index is in
/// the 4 bits above.
pub const SHAPE_BITS: u32 = 28;

/// `|p|` of every doubled point: `√784`.
const DOUBLED_NORM: f32 = 28.0;

/// What the decoder and ranker need to know of one leader.
#[derive(Clone, Copy)]
struct Leader {
    /// The first shape index of the leader's points.
    offset: u32,
    /// The number of distinct arrangements of the leader's values.
    perms: u32,
    /// Free sign bits: nonzero coordinates (all-even), or 7 (all-odd).
    free: u8,
    /// All-odd leaders: the parity the number of negative coordinates
    /// must have (`Σ p_i / 2 mod 2` of the leader); all-even: 2 (none).
    parity: u8,
    /// The number of distinct values.
    distinct: u8,
    /// The distinct values, ascending.
    values: [u8; 8],
    /// How many times each distinct value occurs.
    counts: [u8; 8],
}

/// `n!` for `n ≤ 8`.
const fn factorial(n: u32) -> u32 {
    let mut f = 1;
    let mut k = 2;
    while k <= n {
        f *= k;
        k += 1;
    }
    f
}

/// The leader table, built at compile time from [`DOUBLED_LEADERS`].
static TABLE: [Leader; LEADER_COUNT] = {
    let mut out = [Leader {
        offset: 0,
        perms: 0,
        free: 0,
        parity: 0,
        distinct: 0,
        values: [0; 8],
        counts: [0; 8],
    }; LEADER_COUNT];
    let mut offset: u64 = 0;
    let mut k = 0;
    while k < LEADER_COUNT {
        let l = &DOUBLED_LEADERS[k];
        let mut values = [0u8; 8];
        let mut counts = [0u8; 8];
        let mut distinct = 0usize;
        // The leader is non-increasing: walk it backwards for ascending.
        let mut i = 8;
        while i > 0 {
            i -= 1;
            if distinct > 0 && values[distinct - 1] == l[i] {
                counts[distinct - 1] += 1;
            } else {
                values[distinct] = l[i];
                counts[distinct] = 1;
                distinct += 1;
            }
        }
        let mut perms = factorial(8);
        let mut d = 0;
        while d < distinct {
            perms /= factorial(counts[d] as u32);
            d += 1;
        }
        let odd = l[0] % 2 == 1;
        let mut nonzero = 0u8;
        let mut sum = 0u32;
        let mut j = 0;
        while j < 8 {
            if l[j] != 0 {
                nonzero += 1;
            }
            sum += l[j] as u32;
            j += 1;
        }
        let free = if odd { 7 } else { nonzero };
        out[k] = Leader {
            offset: offset as u32,
            perms,
            free,
            parity: if odd { ((sum / 2) % 2) as u8 } else { 2 },
            distinct: distinct as u8,
            values,
            counts,
        };
        offset += (perms as u64) << free;
        k += 1;
    }
    assert!(offset == SHAPES as u64, "the leaders must cover the shell");
    out
};

/// The number of 2^16-index chunks of the shape indices.
const CHUNKS: usize = (SHAPES as usize).div_ceil(1 << 16);

/// For each chunk of 2^16 shape indices, the leader of its first index.
static CHUNK_LEADER: [u16; CHUNKS] = {
    let mut out = [0u16; CHUNKS];
    let mut k = 0;
    let mut c = 0;
    while c < CHUNKS {
        let start = (c as u32) << 16;
        while k + 1 < LEADER_COUNT && TABLE[k + 1].offset <= start {
            k += 1;
        }
        out[c] = k as u16;
        c += 1;
    }
    out
};

/// Every leader's first shape index, then `u32::MAX` three times, for
/// [`leader_of`].
static OFFSETS: [u32; LEADER_COUNT + 3] = {
    let mut out = [u32::MAX; LEADER_COUNT + 3];
    let mut k = 0;
    while k < LEADER_COUNT {
        out[k] = TABLE[k].offset;
        k += 1;
    }
    // At most three leaders start after a chunk's first leader inside the
    // chunk (checked here), so `leader_of` looks at three offsets.
    let mut c = 0;
    while c < CHUNKS {
        let first = CHUNK_LEADER[c] as usize;
        let end = ((c as u64 + 1) << 16) - 1;
        let mut k = first;
        while k + 1 < LEADER_COUNT && (TABLE[k + 1].offset as u64) <= end {
            k += 1;
        }
        assert!(k - first <= 3, "at most three leaders start inside a chunk");
        c += 1;
    }
    out
};

/// The leader of shape index `index` (below [`SHAPES`]): the last whose
/// offset is at most `index`, from its chunk's first leader and the (at
/// most three) leaders that start after it in the chunk, without branches.
#[inline(always)]
fn leader_of(index: u32) -> usize {
    let k = usize::from(CHUNK_LEADER[(index >> 16) as usize]);
    k + usize::from(OFFSETS[k + 1] <= index)
        + usize::from(OFFSETS[k + 2] <= index)
        + usize::from(OFFSETS[k + 3] <= index)
}

/// The leaders' distinct values, ascending, as `f32` (the decoder's
/// table; unused places 0).
static VALUES: [[f32; 8]; LEADER_COUNT] = {
    let mut out = [[0.0; 8]; LEADER_COUNT];
    let mut k = 0;
    while k < LEADER_COUNT {
        let mut d = 0;
        while d < 8 {
            out[k][d] = TABLE[k].values[d] as f32;
            d += 1;
        }
        k += 1;
    }
    out
};

/// The entry of the arrangement table holding shape index `index`'s
/// arrangement (`index` below [`SHAPES`]).
#[inline(always)]
fn entry(index: u32) -> usize {
    let k = leader_of(index);
    let l = &TABLE[k];
    (arrangements().base[k] + ((index - l.offset) >> l.free)) as usize
}

/// Shape index `index` (below [`SHAPES`]) taken apart, given its
/// `arrangement` (the table's entry [`entry`]: bits `3i … 3i+2` hold the
/// index of coordinate `i`'s value among the leader's distinct values,
/// ascending): its leader and its negative coordinates (bit `i`). The free
/// signs go, in order, to the nonzero coordinates (0–6 for an all-odd
/// leader, whose coordinate 7 takes the sign that makes the parity right);
/// no branch depends on the index.
#[inline(always)]
fn signs_of(index: u32, arrangement: u32) -> (usize, u32) {
    let k = leader_of(index);
    let l = &TABLE[k];
    let signs = (index - l.offset) & ((1 << l.free) - 1);
    // A coordinate is zero when its value index is 0 and the leader's
    // smallest value is 0; all-odd leaders have no zero, and coordinate 7
    // is not free.
    let any = arrangement | arrangement >> 1 | arrangement >> 2;
    let mut valued = 0u32;
    for i in 0..8 {
        valued |= (any >> (3 * i) & 1) << i;
    }
    let odd = u32::from(l.parity != 2);
    let has_zero = u32::from(l.values[0] == 0);
    let free = (valued | (0xFF * (has_zero ^ 1))) & (0xFF >> odd);
    // The free signs, in order, onto the free coordinates, a nibble at a
    // time.
    let low = DEPOSIT[(free & 15) as usize][(signs & 15) as usize];
    let rest = signs >> (free & 15).count_ones();
    let high = DEPOSIT[(free >> 4) as usize][(rest & 15) as usize];
    let negative = u32::from(low) | u32::from(high) << 4;
    let wrong = (negative.count_ones() + u32::from(l.parity)) & odd;
    (k, negative | wrong << 7)
}

/// `DEPOSIT[m][s]`: the low bits of `s`, in order, on the set bits of the
/// nibble `m` (bit `j` of `s` to the `j`-th set bit of `m`).
static DEPOSIT: [[u8; 16]; 16] = {
    let mut out = [[0u8; 16]; 16];
    let mut m = 0;
    while m < 16 {
        let mut s = 0;
        while s < 16 {
            let (mut bit, mut v) = (0, 0u8);
            let mut i = 0;
            while i < 4 {
                if m >> i & 1 == 1 {
                    v |= ((s >> bit & 1) as u8) << i;
                    bit += 1;
                }
                i += 1;
            }
            out[m][s] = v;
            s += 1;
        }
        m += 1;
    }
    out
};

/// The block of `code` whose shape index is below [`SHAPES`], given the
/// shape's arrangement.
#[inline(always)]
fn decode_arranged(code: u32, arrangement: u32) -> [f32; 8] {
    let (k, negative) = signs_of(code & ((1 << SHAPE_BITS) - 1), arrangement);
    let f = GAIN_FACTORS[(code >> SHAPE_BITS) as usize];
    let values = &VALUES[k];
    // `f32::from(±v) · f` is `±(v · f)`: the sign bit set afterwards.
    core::array::from_fn(|i| {
        let y = values[(arrangement >> (3 * i) & 7) as usize] * f;
        f32::from_bits(y.to_bits() ^ (negative >> i & 1) << 31)
    })
}

/// `⌈2^32 / n⌉` for `n = 1 … 8` (index `n`).
const RECIPROCALS: [u64; 9] = {
    let mut out = [0u64; 9];
    let mut n = 1;
    while n < 9 {
        out[n] = (1u64 << 32).div_ceil(n as u64);
        n += 1;
    }
    out
};

/// `x / n` for `x` a multiple of `n ≤ 8` below 2^19, by a multiplication:
/// `x · ⌈2^32/n⌉ / 2^32` is `x/n` plus less than `x / 2^32 < 1`.
#[inline(always)]
fn exact_div(x: u32, n: u32) -> u32 {
    ((u64::from(x) * RECIPROCALS[n as usize]) >> 32) as u32
}

/// `GAIN_LEVELS[g] / 28`: the factor from a doubled point to its decoded
/// block.
const GAIN_FACTORS: [f32; 16] = {
    let mut out = [0.0; 16];
    let mut g = 0;
    while g < 16 {
        out[g] = GAIN_LEVELS[g] / DOUBLED_NORM;
        g += 1;
    }
    out
};

/// Leader `k`, doubled (`2|x_i|`, non-increasing).
///
/// # Panics
/// When `k >= LEADERS`.
///
/// ```
/// use hydron_core::quant::shell;
///
/// assert_eq!(shell::leader(shell::LEADERS - 1), [28, 0, 0, 0, 0, 0, 0, 0]);
/// let l = shell::leader(0);
/// assert_eq!(l.iter().map(|&v| u32::from(v).pow(2)).sum::<u32>(), 784);
/// ```
#[must_use]
#[inline]
pub fn leader(k: usize) -> [u8; 8] {
    DOUBLED_LEADERS[k]
}

/// The first shape index and the number of points of leader `k`.
///
/// # Panics
/// When `k >= LEADERS`.
///
/// ```
/// use hydron_core::quant::shell;
///
/// // (±14, 0, …, 0): 8 places, 2 signs.
/// assert_eq!(shell::leader_range(shell::LEADERS - 1), (shell::SHAPES - 16, 16));
/// ```
#[must_use]
#[inline]
pub fn leader_range(k: usize) -> (u32, u32) {
    let l = &TABLE[k];
    (l.offset, l.perms << l.free)
}

/// Whether `code` names a point: its shape index is below [`SHAPES`].
///
/// ```
/// use hydron_core::quant::shell;
/// assert!(shell::is_valid(0xF000_0000));
/// assert!(!shell::is_valid(shell::SHAPES));
/// ```
#[must_use]
#[inline]
pub fn is_valid(code: u32) -> bool {
    code & ((1 << SHAPE_BITS) - 1) < SHAPES
}

/// The doubled point `p` of shape index `index` (the shell point is
/// `p / 2`), or `None` when `index >= SHAPES`.
///
/// ```
/// use hydron_core::quant::shell;
///
/// let p = shell::shape(0).unwrap();
/// assert_eq!(p.iter().map(|&v| i32::from(v).pow(2)).sum::<i32>(), 784);
/// assert_eq!(shell::shape_index(&p), Some(0));
/// assert_eq!(shell::shape(shell::SHAPES), None);
/// ```
#[must_use]
#[inline]
pub fn shape(index: u32) -> Option<[i8; 8]> {
    if index >= SHAPES {
        return None;
    }
    let arrangement = arrangements().packed[entry(index)];
    let (k, negative) = signs_of(index, arrangement);
    let values = &TABLE[k].values;
    let p = core::array::from_fn(|i| {
        let v = values[(arrangement >> (3 * i) & 7) as usize] as i8;
        if negative >> i & 1 == 1 {
            -v
        } else {
            v
        }
    });
    Some(p)
}

/// The shape index of the doubled point `p`, or `None` when `p / 2` is not
/// a point of the shell.
///
/// ```
/// use hydron_core::quant::shell;
///
/// assert_eq!(shell::shape_index(&[28, 0, 0, 0, 0, 0, 0, 0]), Some(shell::SHAPES - 2));
/// assert_eq!(shell::shape_index(&[-27, 7, 1, 1, 1, 1, 1, 1]), None); // odd coordinate sum
/// ```
#[must_use]
pub fn shape_index(p: &[i8; 8]) -> Option<u32> {
    let mut abs = [0u8; 8];
    for (a, &v) in abs.iter_mut().zip(p) {
        *a = v.unsigned_abs();
    }
    let mut sorted = abs;
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let k = DOUBLED_LEADERS.binary_search(&sorted).ok()?;
    let l = &TABLE[k];
    if l.parity != 2 {
        let negatives = p.iter().filter(|&&v| v < 0).count() as u32;
        if (negatives + u32::from(l.parity)) & 1 == 1 {
            return None;
        }
    }
    Some(rank_in(k, p))
}

/// The shape index of `p`, a point of the shell with leader `k`.
#[inline]
fn rank_in(k: usize, p: &[i8; 8]) -> u32 {
    let l = &TABLE[k];
    let mut counts = l.counts;
    let mut arrangements = l.perms;
    let mut rank = 0u32;
    for (i, a) in p.iter().map(|v| v.unsigned_abs()).enumerate() {
        let remaining = 8 - i as u32;
        let distinct = usize::from(l.distinct);
        for (count, &value) in counts[..distinct].iter_mut().zip(&l.values) {
            let c = u32::from(*count);
            if c == 0 {
                continue;
            }
            let below = exact_div(arrangements * c, remaining);
            if value == a {
                *count -= 1;
                arrangements = below;
                break;
            }
            rank += below;
        }
    }
    let mut signs = 0u32;
    let mut bit = 0;
    let free_coordinates = if l.parity == 2 { 8 } else { 7 };
    for &v in p.iter().take(free_coordinates) {
        if v != 0 {
            signs |= u32::from(v < 0) << bit;
            bit += 1;
        }
    }
    l.offset + (rank << l.free) + signs
}

/// The block of `code`: `GAIN_LEVELS[g] · p / 28` (see the
/// [module docs](self)); the zero block when the shape index is not below
/// [`SHAPES`].
///
/// ```
/// use hydron_core::quant::shell;
///
/// let y = shell::decode(0x3000_0000 | (shell::SHAPES - 2)); // gain 3, (14, 0, …, 0)
/// assert_eq!(y[1..], [0.0; 7]);
/// assert_eq!(y[0], shell::GAIN_LEVELS[3]);
/// assert_eq!(shell::decode(u32::MAX), [0.0; 8]);
/// ```
#[must_use]
#[inline]
pub fn decode(code: u32) -> [f32; 8] {
    let index = code & ((1 << SHAPE_BITS) - 1);
    if index >= SHAPES {
        return [0.0; 8];
    }
    decode_arranged(code, arrangements().packed[entry(index)])
}

/// Codes per batch of [`decode_into`].
const DECODE_BATCH: usize = 32;

/// Decodes every code of `codes` into `out`.
///
/// # Panics
/// When `out` does not have the length of `codes`.
///
/// ```
/// use hydron_core::quant::shell;
///
/// let mut out = [[1.0; 8]; 2];
/// shell::decode_into(&[0, u32::MAX], &mut out);
/// assert_eq!(out, [shell::decode(0), [0.0; 8]]);
/// ```
pub fn decode_into(codes: &[u32], out: &mut [[f32; 8]]) {
    assert_eq!(
        codes.len(),
        out.len(),
        "decode_into: output length differs from input"
    );
    decode_batches(codes.iter().copied(), out.iter_mut(), |slot, block| {
        *slot = block;
    });
}

/// Decodes the codes of `bytes` (little-endian, four bytes a code) into
/// `out`, eight coordinates a code, each `f64::from(y_i) · scale` for the
/// block `y` of [`decode`]: the quantizer's 4-bit decoder.
///
/// # Panics
/// When `out` does not hold eight numbers for every four bytes.
pub(crate) fn decode_scaled_into(bytes: &[u8], scale: f64, out: &mut [f64]) {
    assert_eq!(bytes.len() * 2, out.len(), "decode: output length differs");
    let codes = bytes
        .as_chunks::<4>()
        .0
        .iter()
        .map(|b| u32::from_le_bytes(*b));
    decode_batches(codes, out.as_chunks_mut::<8>().0.iter_mut(), |w, block| {
        for (a, &v) in w.iter_mut().zip(&block) {
            *a = f64::from(v) * scale;
        }
    });
}

/// [`decode`] of every code of `codes`, given to `emit` with its slot of
/// `slots`: first the arrangements of a batch of codes (the table is 2 MB,
/// so these are loads that miss the cache, issued together), then the
/// blocks.
#[inline(always)]
fn decode_batches<'a, T: 'a>(
    codes: impl Iterator<Item = u32>,
    slots: impl Iterator<Item = &'a mut T>,
    mut emit: impl FnMut(&'a mut T, [f32; 8]),
) {
    let packed = &arrangements().packed;
    let mut batch = [(0u32, 0u32); DECODE_BATCH];
    let mut codes = codes.peekable();
    let mut slots = slots;
    while codes.peek().is_some() {
        let mut n = 0;
        // The batch first: `zip` takes from its first iterator first.
        for ((c, a), code) in batch.iter_mut().zip(codes.by_ref()) {
            let index = code & ((1 << SHAPE_BITS) - 1);
            *c = code;
            *a = if index < SHAPES {
                packed[entry(index)]
            } else {
                0
            };
            n += 1;
        }
        for (&(code, a), slot) in batch[..n].iter().zip(slots.by_ref()) {
            let block = if is_valid(code) {
                decode_arranged(code, a)
            } else {
                [0.0; 8]
            };
            emit(slot, block);
        }
    }
}

/// The code of a finite block, on the best backend.
#[must_use]
pub(crate) fn encode_finite(x: &[f32; 8]) -> u32 {
    shell_encoder::encode_finite_with(x, Backend::Avx2Fma)
}

/// The codes of finite blocks into `out` (of the same length), on the
/// best backend.
pub(crate) fn encode_finite_into(blocks: &[[f32; 8]], out: &mut [u32]) {
    shell_encoder::encode_all_with(blocks, out, Backend::Avx2Fma);
}

/// The nearest code to `x` (see the [module docs](self): the best shape,
/// then the gain level nearest the length of `x` along it). The gain
/// levels suit blocks of i.i.d. N(0, 1) coordinates, norms around √8.
///
/// # Errors
/// [`Gf8Error::NotANumber`] or [`Gf8Error::Infinite`] naming the first bad
/// coordinate.
///
/// ```
/// use hydron_core::quant::shell;
///
/// let p = shell::shape(12_345).unwrap();
/// let x = p.map(|v| f32::from(v) / 28.0 * shell::GAIN_LEVELS[9]);
/// assert_eq!(shell::encode(&x)?, 0x9000_0000 | 12_345);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
pub fn encode(x: &[f32; 8]) -> Result<u32, Gf8Error> {
    crate::gf8::check_finite(x)?;
    Ok(encode_finite(x))
}

/// The codes of many blocks, into a slice the caller provides.
///
/// # Errors
/// The index of the first block with a NaN or infinite coordinate, and
/// which coordinate; the codes past it are then unspecified.
///
/// # Panics
/// When `out` does not have the length of `blocks`.
///
/// ```
/// use hydron_core::quant::shell;
///
/// let blocks = [[0.1; 8], [2.0, -1.0, 0.0, 0.5, 0.3, 0.0, -0.2, 1.1]];
/// let mut codes = [0u32; 2];
/// shell::encode_into(&blocks, &mut codes)?;
/// assert_eq!(codes, [shell::encode(&blocks[0])?, shell::encode(&blocks[1])?]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_into(blocks: &[[f32; 8]], out: &mut [u32]) -> Result<(), BatchError> {
    encode_into_with(Backend::Avx2Fma, blocks, out)
}

/// [`encode_into`] on a given backend: [`Backend::Avx2Fma`] scores the
/// leaders with AVX2 when this build (feature `simd`, x86-64) and CPU have
/// it; every other backend, or an unavailable one, runs the scalar code.
/// Every backend returns the same codes.
///
/// # Errors
/// As [`encode_into`].
///
/// # Panics
/// When `out` does not have the length of `blocks`.
///
/// ```
/// use hydron_core::batch::{self, Backend};
/// use hydron_core::quant::shell;
///
/// let blocks = vec![[0.3, -0.9, 1.4, 0.0, 0.2, -2.2, 0.7, 0.05]; 4];
/// let mut a = vec![0u32; 4];
/// let mut b = vec![0u32; 4];
/// shell::encode_into_with(Backend::Scalar, &blocks, &mut a)?;
/// for backend in batch::backends() {
///     shell::encode_into_with(backend, &blocks, &mut b)?;
///     assert_eq!(a, b, "{backend}");
/// }
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
pub fn encode_into_with(
    backend: Backend,
    blocks: &[[f32; 8]],
    out: &mut [u32],
) -> Result<(), BatchError> {
    assert_eq!(
        blocks.len(),
        out.len(),
        "encode_into: output length differs from input"
    );
    let bad = blocks.iter().enumerate().find_map(|(index, block)| {
        crate::gf8::check_finite(block)
            .err()
            .map(|error| BatchError { index, error })
    });
    let good = bad.as_ref().map_or(blocks.len(), |e| e.index);
    shell_encoder::encode_all_with(&blocks[..good], &mut out[..good], backend);
    bad.map_or(Ok(()), Err)
}

/// The shape index of the shell point nearest in direction to `x`
/// (maximizing `⟨x, p⟩`; 28 bits, no gain): for unit vectors, whose
/// length needs no code. [`shape`] gives the point back; divided by 28 it
/// is a unit vector.
///
/// # Errors
/// As [`encode`].
///
/// ```
/// use hydron_core::quant::shell;
///
/// let x = [0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0];
/// let p = shell::shape(shell::encode_shape(&x)?).unwrap();
/// let cos: f32 = x.iter().zip(&p).map(|(a, &b)| a * f32::from(b) / 28.0).sum();
/// assert!(cos > 0.99);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
pub fn encode_shape(x: &[f32; 8]) -> Result<u32, Gf8Error> {
    crate::gf8::check_finite(x)?;
    Ok(shell_encoder::shape_finite(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decode_scaled_into` is `f64::from(decode(code)_i) · scale`, bit for
    /// bit, for counts around the batch size and codes that name no point.
    #[test]
    fn scaled_decode_is_decode_times_the_scale() {
        let mut state = 0x5EED_0D0Du32;
        for n in [0, 1, DECODE_BATCH - 1, DECODE_BATCH, DECODE_BATCH + 1, 100] {
            let codes: Vec<u32> = (0..n)
                .map(|i| {
                    state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    if i % 7 == 3 {
                        state | 0x0FFF_FFFF
                    } else {
                        state
                    }
                })
                .collect();
            let bytes: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
            let mut out = vec![f64::NAN; 8 * n];
            decode_scaled_into(&bytes, 0.37, &mut out);
            for (code, w) in codes.iter().zip(out.chunks_exact(8)) {
                let want = decode(*code).map(|v| (f64::from(v) * 0.37).to_bits());
                assert_eq!(
                    w.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want,
                    "{code:#x}"
                );
            }
        }
    }
}
