//! The E8P encoder on [`LANES`] blocks at once, in structure-of-arrays
//! form: lane `l` of every array holds block `l`. It is `e8p`'s sorting
//! shortcut (`best_by_sorting`) without the sort, and without a branch
//! that depends on the data:
//!
//! - each coordinate's **rank** (how many coordinates have a larger
//!   `t_i = |x_i − σ|`) from its 28 pairwise comparisons; the ranks are a
//!   permutation exactly when the `t_i` are distinct (the ranks sum to 28);
//! - the prefix sums of the sorted `t` as masked sums (`P_k = Σ t_i` over
//!   the ranks below `k`), the sum and the minimum of `t`;
//! - the seven D8 class values and the norm-12 bound of `best_by_sorting`
//!   from those, and the best class.
//!
//! A lane is handed back to the one-block encoder (`None` for its code)
//! when anything the shortcut does not decide happens in it: tied or zero
//! `t_i`, two classes with the best value (their patterns would have to be
//! compared), the norm-12 bound above the best D8 value (the 29 norm-12
//! patterns must be tried), a block outside the exact range. Otherwise
//! every value is exact (the exact range, `e8p::in_exact_range`), so the
//! order of the additions does not matter and the code is the one the
//! one-block encoder returns, ties between the shifts included (shift 0
//! unless shift 1 is strictly better).
//!
//! The code is plain Rust over `[f64; LANES]` arrays, written so that the
//! compiler turns each lane loop into vector instructions. `e8p` runs it as
//! it is (the scalar backend) and, through `e8p_avx2`, compiled with AVX2
//! enabled; the operations are the same IEEE additions, subtractions,
//! comparisons and selections either way, so the codes are bit-identical.

use super::e8p::{
    class_value, finish_code, shifted, NORM12_START, PATTERN_COUNT, PATTERN_INDEX, SHIFTS,
};

/// Blocks per call.
pub(crate) const LANES: usize = 4;

/// One `f64` per lane.
type F = [f64; LANES];
/// One count or mask per lane.
type U = [u64; LANES];

/// The seven D8 classes `(k3, k5)` in the order of their class numbers.
const CLASSES: [(usize, usize); 7] = [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (0, 1), (1, 1)];

#[inline(always)]
fn splat(v: f64) -> F {
    [v; LANES]
}

/// What one shift gives each lane.
struct Shift {
    /// The best D8 class value.
    best: F,
    /// The best D8 class value plus `σ Σx`.
    total: F,
    /// The best class (index into [`CLASSES`]), as `f64`.
    class: F,
    /// 1.0 where the lane must go to the one-block encoder.
    fallback: F,
    /// 1.0 where a norm-12 pattern may beat the best D8 class.
    norm12: F,
    /// `rank[i][l]`: how many coordinates of block `l` have a larger `t`.
    rank: [U; 8],
    /// Bit `i` set where `x_i − σ < 0`.
    negative: U,
}

/// All ones when `c`, else zero.
#[inline(always)]
fn mask(c: bool) -> u64 {
    0u64.wrapping_sub(u64::from(c))
}

/// `v` where `m` is all ones, `+0.0` where it is zero (exact).
#[inline(always)]
fn select(m: u64, v: f64) -> f64 {
    f64::from_bits(v.to_bits() & m)
}

/// The class values of one shift for every lane. Every loop runs over the
/// lanes innermost, with no branch, so that it becomes vector code.
#[inline(always)]
fn shift(x: &[F; 8], sigma: f64, sum_x: &F) -> Shift {
    let mut t = [splat(0.0); 8];
    let mut negative = [0u64; LANES];
    let mut odd = [0u64; LANES];
    for i in 0..8 {
        for l in 0..LANES {
            let y = x[i][l] - sigma;
            t[i][l] = y.abs();
            let n = u64::from(y < 0.0);
            negative[l] |= n << i;
            odd[l] ^= n;
        }
    }
    let mut rank = [[0u64; LANES]; 8];
    for i in 0..8 {
        for j in i + 1..8 {
            for l in 0..LANES {
                rank[j][l] += u64::from(t[i][l] > t[j][l]);
                rank[i][l] += u64::from(t[j][l] > t[i][l]);
            }
        }
    }
    let mut sum = splat(0.0);
    let mut min = splat(f64::INFINITY);
    let mut rank_sum = [0u64; LANES];
    // prefix[k - 1] = Σ of the k largest t (k = 1..=5).
    let mut prefix = [splat(0.0); 5];
    for i in 0..8 {
        for l in 0..LANES {
            sum[l] += t[i][l];
            min[l] = if t[i][l] < min[l] { t[i][l] } else { min[l] };
            rank_sum[l] += rank[i][l];
        }
        for (k, p) in prefix.iter_mut().enumerate() {
            for l in 0..LANES {
                p[l] += select(mask(rank[i][l] <= k as u64), t[i][l]);
            }
        }
    }
    // `[wrong parity] · t_(8)` for patterns of even and odd Σ a_i.
    let mut loss = [splat(0.0); 2];
    let mut half = splat(0.0);
    for l in 0..LANES {
        loss[0][l] = select(mask(odd[l] == 1), min[l]);
        loss[1][l] = select(mask(odd[l] == 0), min[l]);
        half[l] = 0.5 * sum[l];
    }
    let mut values = [splat(0.0); 7];
    let mut best = splat(f64::NEG_INFINITY);
    let mut class = splat(0.0);
    for (c, &(k3, k5)) in CLASSES.iter().enumerate() {
        for l in 0..LANES {
            let p = |k: usize| if k == 0 { 0.0 } else { prefix[k - 1][l] };
            let v = half[l] + 2.0 * (k5 as f64) * p(1) + (p(k5 + k3) - p(k5))
                - (1 + k3 + 3 * k5) as f64
                - loss[k3 & 1][l];
            values[c][l] = v;
            let better = v > best[l];
            class[l] = if better { c as f64 } else { class[l] };
            best[l] = if better { v } else { best[l] };
        }
    }
    let mut ties = [0u64; LANES];
    for v in &values {
        for l in 0..LANES {
            ties[l] += u64::from(v[l] == best[l]);
        }
    }
    let mut out = Shift {
        best,
        total: splat(0.0),
        class,
        fallback: splat(0.0),
        norm12: splat(0.0),
        rank,
        negative,
    };
    for l in 0..LANES {
        let bound = half[l] + prefix[4][l] - 6.0 - loss[1][l];
        let undecided = (rank_sum[l] != 28) | (min[l] == 0.0) | (ties[l] != 1);
        out.total[l] = best[l] + sigma * sum_x[l];
        out.fallback[l] = select(mask(undecided), 1.0);
        out.norm12[l] = select(mask(bound > best[l]), 1.0);
    }
    out
}

/// The codes of `LANES` finite blocks, `None` for the lanes the one-block
/// encoder must decide (module docs); `in_range[l]` says whether block `l`
/// is in the exact range.
#[inline(always)]
pub(crate) fn encode_lanes(blocks: &[[f32; 8]], in_range: &[bool; LANES]) -> [Option<u16>; LANES] {
    debug_assert_eq!(blocks.len(), LANES);
    let mut x = [splat(0.0); 8];
    let mut sum_x = splat(0.0);
    for i in 0..8 {
        for l in 0..LANES {
            x[i][l] = f64::from(blocks[l][i]);
            sum_x[l] += x[i][l];
        }
    }
    let s0 = shift(&x, SHIFTS[0], &sum_x);
    let s1 = shift(&x, SHIFTS[1], &sum_x);
    let mut out = [None; LANES];
    for l in 0..LANES {
        if !in_range[l] || s0.fallback[l] != 0.0 || s1.fallback[l] != 0.0 {
            continue;
        }
        let mut totals = [s0.total[l], s1.total[l]];
        let mut norm12 = [None; 2];
        for (k, s) in [&s0, &s1].into_iter().enumerate() {
            if s.norm12[l] != 0.0 {
                let (value, pattern) = best_norm12(&blocks[l], k, s.best[l]);
                if let Some(p) = pattern {
                    totals[k] = value + SHIFTS[k] * sum_x[l];
                    norm12[k] = Some(p);
                }
            }
        }
        let one = totals[1] > totals[0];
        out[l] = Some(match norm12[usize::from(one)] {
            Some(p) => finish_code(&blocks[l], usize::from(one), p),
            None => code(one, if one { &s1 } else { &s0 }, l),
        });
    }
    out
}

/// The best norm-12 pattern of shift `shift` if one beats `d8` (the best
/// D8 value) strictly, with its value: `e8p::best_by_sorting`'s last step.
#[inline(never)]
fn best_norm12(block: &[f32; 8], shift: usize, d8: f64) -> (f64, Option<usize>) {
    let (y, parity) = shifted(block, SHIFTS[shift]);
    let t = y.map(f64::abs);
    let mut best = (d8, None);
    for p in NORM12_START..PATTERN_COUNT {
        let v = class_value(&t, parity, p);
        if v > best.0 {
            best = (v, Some(p));
        }
    }
    best
}

/// The code of lane `l` for its best class of shift `s`: the 5/2 on the
/// coordinate of rank 0, the 3/2 on the next `k3`, the signs of `x − σ`
/// with, when their parity is wrong, the coordinate of rank 7 (the unique
/// cheapest, its `t` the smallest and its `a_i` ½) flipped.
#[inline(always)]
fn code(one: bool, s: &Shift, l: usize) -> u16 {
    let (k3, k5) = CLASSES[s.class[l] as usize];
    // by_rank[r]: the bit of the coordinate of rank r.
    let mut by_rank = [0u32; 8];
    for (i, r) in s.rank.iter().enumerate() {
        by_rank[r[l] as usize] = 1 << i;
    }
    let five = if k5 == 1 {
        by_rank[0].trailing_zeros() as usize
    } else {
        8
    };
    let threes = by_rank[k5..k5 + k3]
        .iter()
        .fold(0usize, |m, &b| m | b as usize);
    let pattern = u16::from(PATTERN_INDEX[five][threes]);
    let negative = s.negative[l] as u32;
    let wrong = (negative.count_ones() & 1) as usize != k3 & 1;
    let signs = if wrong {
        negative ^ by_rank[7]
    } else {
        negative
    };
    (u16::from(one) << 15) | (pattern << 7) | (signs & 0x7F) as u16
}
