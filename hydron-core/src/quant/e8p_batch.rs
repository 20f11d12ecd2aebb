//! The E8P encoder on [`LANES`] blocks at once, in structure-of-arrays
//! form: lane `l` of every array holds block `l`. It is `e8p`'s sorting
//! shortcut (`best_by_sorting`) without a branch that depends on the data:
//!
//! - the `t_i = |x_i − σ|` sorted by a sorting network (19 comparators,
//!   each a lane-wise max and min), so the largest `t`, the prefix sums of
//!   the sorted `t`, their sum and their minimum, and whether two are equal,
//!   come from a few lane-wise operations;
//! - the seven D8 class values and the norm-12 bound of `best_by_sorting`
//!   from those, and the best class;
//! - then the better shift of each block by its best D8 class, and on it
//!   which coordinates hold the 5/2 and the 3/2 of that class (those whose
//!   `t` lies between two of the sorted values) and which one to flip,
//!   lane-wise too: the code of every block where no norm-12 pattern can
//!   win, which is most of them; the others are finished one at a time.
//!
//! A lane is handed back to the one-block encoder (`None` for its code)
//! when anything the shortcut does not decide happens in it: tied `t_i`,
//! two classes with the best value (their patterns would have to be
//! compared), a block outside the exact range. (One zero `t_i` is decided
//! here: it has rank 7 and a ½, its sign is free, and flipping it, the
//! only free change of parity, sets its bit, or none for coordinate 7,
//! which is what `e8p::lowest_signs` does.) When the norm-12 bound is
//! above the best D8 value, the norm-12 pattern on the five largest `t` is
//! the best norm-12 codeword if it is one of the 29, and otherwise the 29
//! are tried one by one. Every value is exact (the exact range,
//! `e8p::in_exact_range`), so the order of the additions does not matter
//! and the code is the one the one-block encoder returns, ties between the
//! shifts included (shift 0 unless shift 1 is strictly better).
//!
//! The code is plain Rust over `[f64; LANES]` arrays, written so that the
//! compiler turns each lane loop into vector instructions. `e8p` runs it as
//! it is (the scalar backend) and, through `e8p_avx2`, compiled with AVX2
//! enabled; the operations are the same IEEE additions, subtractions,
//! comparisons and selections either way, so the codes are bit-identical.

use super::e8p::{finish_code, NORM12_START, PATTERN_COUNT, PATTERN_INDEX, SHIFTS, TABLES};

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
    /// The norm-12 bound of `e8p::best_by_sorting`: the value of the five
    /// largest `t` on the 3/2, whatever their arrangement.
    bound: F,
    /// The best D8 class value plus `σ Σx`.
    total: F,
    /// The best class (index into [`CLASSES`]), as `f64`.
    class: F,
    /// 1.0 where the lane must go to the one-block encoder.
    fallback: F,
    /// 1.0 where a norm-12 pattern may beat the best D8 class.
    norm12: F,
    /// Bit `i` set where `x_i − σ < 0`.
    negative: U,
    /// The `t_i = |x_i − σ|`.
    t: [F; 8],
    /// The `t` of each block in decreasing order.
    sorted: [F; 8],
    /// 1 where the signs of `x − σ` have an odd number of negatives.
    odd: U,
}

/// The comparators of an optimal sorting network of 8 inputs (Knuth,
/// TAOCP vol. 3, §5.3.4: 19 comparators in 6 rounds); each puts the larger
/// value first. [`sort`] applies them in this order; a test checks it.
#[cfg(test)]
const NETWORK: [(usize, usize); 19] = [
    (0, 2),
    (1, 3),
    (4, 6),
    (5, 7),
    (0, 4),
    (1, 5),
    (2, 6),
    (3, 7),
    (0, 1),
    (2, 3),
    (4, 5),
    (6, 7),
    (2, 4),
    (3, 5),
    (1, 4),
    (3, 6),
    (1, 2),
    (3, 4),
    (5, 6),
];

/// One comparator: the larger value of each lane to `a`, the smaller to `b`.
#[inline(always)]
fn compare_exchange(a: &mut F, b: &mut F) {
    for l in 0..LANES {
        let (x, y) = (a[l], b[l]);
        a[l] = if x > y { x } else { y };
        b[l] = if x > y { y } else { x };
    }
}

/// `v` sorted in decreasing order, lane by lane: [`NETWORK`], written out
/// so that every index is a constant (the values stay in registers).
#[inline(always)]
fn sort(v: [F; 8]) -> [F; 8] {
    let [mut v0, mut v1, mut v2, mut v3, mut v4, mut v5, mut v6, mut v7] = v;
    compare_exchange(&mut v0, &mut v2);
    compare_exchange(&mut v1, &mut v3);
    compare_exchange(&mut v4, &mut v6);
    compare_exchange(&mut v5, &mut v7);
    compare_exchange(&mut v0, &mut v4);
    compare_exchange(&mut v1, &mut v5);
    compare_exchange(&mut v2, &mut v6);
    compare_exchange(&mut v3, &mut v7);
    compare_exchange(&mut v0, &mut v1);
    compare_exchange(&mut v2, &mut v3);
    compare_exchange(&mut v4, &mut v5);
    compare_exchange(&mut v6, &mut v7);
    compare_exchange(&mut v2, &mut v4);
    compare_exchange(&mut v3, &mut v5);
    compare_exchange(&mut v1, &mut v4);
    compare_exchange(&mut v3, &mut v6);
    compare_exchange(&mut v1, &mut v2);
    compare_exchange(&mut v3, &mut v4);
    compare_exchange(&mut v5, &mut v6);
    [v0, v1, v2, v3, v4, v5, v6, v7]
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
    let sorted = sort(t);
    // prefix[k] = Σ of the k largest t (k = 0..=8); any tie among them.
    let mut prefix = [splat(0.0); 9];
    let mut tied = [0u64; LANES];
    for k in 0..8 {
        for l in 0..LANES {
            prefix[k + 1][l] = prefix[k][l] + sorted[k][l];
        }
    }
    for k in 0..7 {
        for l in 0..LANES {
            tied[l] |= u64::from(sorted[k][l] == sorted[k + 1][l]);
        }
    }
    let min = sorted[7];
    // `[wrong parity] · t_(8)` for patterns of even and odd Σ a_i.
    let mut loss = [splat(0.0); 2];
    let mut half = splat(0.0);
    for l in 0..LANES {
        loss[0][l] = select(mask(odd[l] == 1), min[l]);
        loss[1][l] = select(mask(odd[l] == 0), min[l]);
        half[l] = 0.5 * prefix[8][l];
    }
    let mut values = [splat(0.0); 7];
    let mut best = splat(f64::NEG_INFINITY);
    let mut class = splat(0.0);
    for (c, &(k3, k5)) in CLASSES.iter().enumerate() {
        for l in 0..LANES {
            let v =
                half[l] + 2.0 * (k5 as f64) * prefix[1][l] + (prefix[k5 + k3][l] - prefix[k5][l])
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
        bound: splat(0.0),
        total: splat(0.0),
        class,
        fallback: splat(0.0),
        norm12: splat(0.0),
        negative,
        t,
        sorted,
        odd,
    };
    for l in 0..LANES {
        let bound = half[l] + prefix[5][l] - 6.0 - loss[1][l];
        let undecided = (tied[l] != 0) | (ties[l] != 1);
        out.bound[l] = bound;
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
    let shifts = [shift(&x, SHIFTS[0], &sum_x), shift(&x, SHIFTS[1], &sum_x)];
    // The better shift of each lane by its D8 classes (shift 0 among
    // equals), and the code of its best D8 codeword; a lane where a
    // norm-12 pattern may win is decided apart.
    let one: U = core::array::from_fn(|l| mask(shifts[1].total[l] > shifts[0].total[l]));
    let d8 = d8_codes(&shifts, &one);
    let mut out = [None; LANES];
    for l in 0..LANES {
        if !in_range[l] || shifts[0].fallback[l] != 0.0 || shifts[1].fallback[l] != 0.0 {
            continue;
        }
        out[l] = Some(
            if shifts[0].norm12[l] != 0.0 || shifts[1].norm12[l] != 0.0 {
                with_norm12(&blocks[l], &shifts, l, &sum_x)
            } else {
                d8[l]
            },
        );
    }
    out
}

/// The code of each lane's best D8 codeword on the shift `one` picks
/// (all ones: shift 1), lane-wise: the coordinates by rank (the `t` are
/// distinct wherever the lane is not handed back) give the 5/2 (the
/// largest `t`, when the class has one), the 3/2 (the `k3` after the
/// first `k5`, between the thresholds `sorted[k5 − 1]`, excluded, none
/// when `k5 = 0`, and `sorted[k5 + k3 − 1]`, included, none when
/// `k3 = 0`), and the coordinate of rank 7, the unique cheapest to flip
/// when the signs of `x − σ` have the wrong parity (its t is the smallest
/// and its a_i ½; a 3/2 or 5/2 on a larger t costs more).
#[inline(always)]
fn d8_codes(shifts: &[Shift; 2], one: &U) -> [u16; LANES] {
    let pick =
        |a: f64, b: f64, l: usize| f64::from_bits((a.to_bits() & !one[l]) | (b.to_bits() & one[l]));
    let mut t = [splat(0.0); 8];
    let mut sorted = [splat(0.0); 8];
    for i in 0..8 {
        for l in 0..LANES {
            t[i][l] = pick(shifts[0].t[i][l], shifts[1].t[i][l], l);
            sorted[i][l] = pick(shifts[0].sorted[i][l], shifts[1].sorted[i][l], l);
        }
    }
    let mut upper = splat(f64::INFINITY);
    let mut lower = splat(f64::INFINITY);
    let mut has_five = [0u64; LANES];
    let mut odd_class = [0u64; LANES];
    let mut negative = [0u64; LANES];
    let mut odd = [0u64; LANES];
    for l in 0..LANES {
        let c = pick(shifts[0].class[l], shifts[1].class[l], l);
        negative[l] = (shifts[0].negative[l] & !one[l]) | (shifts[1].negative[l] & one[l]);
        odd[l] = (shifts[0].odd[l] & !one[l]) | (shifts[1].odd[l] & one[l]);
        has_five[l] = mask(c >= 5.0);
        upper[l] = if c >= 5.0 { sorted[0][l] } else { upper[l] };
        // k5 + k3 = c for classes 0..=4, c − 4 for 5 and 6; k3 is odd
        // for classes 1, 3 and 6.
        let n = if c >= 5.0 { c - 4.0 } else { c };
        odd_class[l] = u64::from((c == 1.0) | (c == 3.0) | (c == 6.0));
        for (r, s) in sorted.iter().take(4).enumerate() {
            lower[l] = if n == (r + 1) as f64 { s[l] } else { lower[l] };
        }
    }
    let mut first = [0u64; LANES];
    let mut last = [0u64; LANES];
    let mut threes = [0u64; LANES];
    for (i, ti) in t.iter().enumerate() {
        for l in 0..LANES {
            let v = ti[l];
            first[l] |= mask(v >= sorted[0][l]) & i as u64;
            last[l] |= mask(v <= sorted[7][l]) & (1 << i);
            threes[l] |= mask((v >= lower[l]) & (v < upper[l])) & (1 << i);
        }
    }
    let mut codes = [0u16; LANES];
    for l in 0..LANES {
        let five = (has_five[l] & first[l]) | (!has_five[l] & 8);
        let pattern = PATTERN_INDEX[five as usize][threes[l] as usize];
        let wrong = odd[l] ^ odd_class[l];
        let signs = negative[l] ^ (mask(wrong == 1) & last[l]);
        codes[l] = ((one[l] & 1) << 15) as u16 | (u16::from(pattern) << 7) | (signs & 0x7F) as u16;
    }
    codes
}

/// The code of lane `l`, where a norm-12 pattern may beat the best D8
/// class of a shift: `e8p::best_by_sorting`'s last step on the lane.
#[inline(never)]
fn with_norm12(block: &[f32; 8], shifts: &[Shift; 2], l: usize, sum_x: &F) -> u16 {
    let mut totals = [shifts[0].total[l], shifts[1].total[l]];
    // The norm-12 pattern of each shift that beats its best D8 class:
    // found from the ranks, or by trying all 29.
    let mut ranked12 = [None; 2];
    let mut searched12 = [None; 2];
    for (k, s) in shifts.iter().enumerate() {
        if s.norm12[l] == 0.0 {
            continue;
        }
        // The five largest t on the 3/2, when that arrangement is one
        // of the 29, beat every other norm-12 pattern strictly
        // (distinct t; a wrong parity costs each at least t_(8)), and
        // reach the bound.
        let t = lane_t(block, k);
        let top = PATTERN_INDEX[8][at_least(&t, s.sorted[4][l])];
        if top != 0xFF {
            totals[k] = s.bound[l] + SHIFTS[k] * sum_x[l];
            ranked12[k] = Some(top);
        } else if let (v, Some(p)) = best_norm12(&t, s.negative[l].count_ones() & 1 == 0, s.best[l])
        {
            totals[k] = v + SHIFTS[k] * sum_x[l];
            searched12[k] = Some(p);
        }
    }
    let one = totals[1] > totals[0];
    let k = usize::from(one);
    if let Some(p) = searched12[k] {
        return finish_code(block, k, p);
    }
    let s = &shifts[k];
    let t = lane_t(block, k);
    let sorted = |r: usize| s.sorted[r][l];
    let (pattern, odd) = match ranked12[k] {
        Some(p) => (p, true),
        None => {
            let (k3, k5) = CLASSES[s.class[l] as usize];
            // rank_below(r): the coordinates of the r largest t.
            let rank_below = |r: usize| {
                if r == 0 {
                    0
                } else {
                    at_least(&t, sorted(r - 1))
                }
            };
            let five = if k5 == 1 {
                rank_below(1).trailing_zeros() as usize
            } else {
                8
            };
            let threes = rank_below(k5 + k3) & !rank_below(k5);
            (PATTERN_INDEX[five][threes], k3 & 1 == 1)
        }
    };
    // The coordinate of rank 7, the unique cheapest to flip when the
    // signs of `x − σ` have the wrong parity: its t is the smallest and
    // its a_i ½; a 3/2 or 5/2 on a larger t costs more.
    let last = !at_least(&t, sorted(6)) & 0xFF;
    let negative = s.negative[l] as usize;
    let wrong = (negative.count_ones() & 1 == 1) != odd;
    let signs = if wrong { negative ^ last } else { negative };
    (u16::from(one) << 15) | (u16::from(pattern) << 7) | (signs & 0x7F) as u16
}

/// `t_i = |x_i − σ|` of one block for shift `shift`, as the lanes hold it.
#[inline(always)]
fn lane_t(block: &[f32; 8], shift: usize) -> [f64; 8] {
    block.map(|v| (f64::from(v) - SHIFTS[shift]).abs())
}

/// Bit `i` set where `t_i ≥ lower`.
#[inline(always)]
fn at_least(t: &[f64; 8], lower: f64) -> usize {
    let mut m = 0;
    for (i, &v) in t.iter().enumerate() {
        m |= usize::from(v >= lower) << i;
    }
    m
}

/// The norm-12 patterns in code order: the coordinates of their five 3/2
/// and of their three ½.
const NORM12: [([usize; 5], [usize; 3]); PATTERN_COUNT - NORM12_START] = {
    let mut out = [([0; 5], [0; 3]); PATTERN_COUNT - NORM12_START];
    let mut p = NORM12_START;
    while p < PATTERN_COUNT {
        let (mut threes, mut halves) = ([0; 5], [0; 3]);
        let (mut n3, mut n1) = (0, 0);
        let mut i = 0;
        while i < 8 {
            if TABLES.doubled[p][i] == 3 {
                threes[n3] = i;
                n3 += 1;
            } else {
                halves[n1] = i;
                n1 += 1;
            }
            i += 1;
        }
        out[p - NORM12_START] = (threes, halves);
        p += 1;
    }
    out
};

/// The best norm-12 pattern of a shift, given its `t` and whether the
/// signs of `x − σ` have an even number of negatives (the wrong parity for
/// these patterns), if one beats `d8` (the best D8 value) strictly, with
/// its value: `e8p::best_by_sorting`'s last step. Each value is
/// `e8p::class_value`'s, `½ Σt + Σ_3/2 t − 6 − [wrong] · 2 min_i a_i t_i`,
/// taken in another order, which the exact range makes exact either way.
#[inline(always)]
fn best_norm12(t: &[f64; 8], even: bool, d8: f64) -> (f64, Option<usize>) {
    let half = 0.5 * t.iter().sum::<f64>() - 6.0;
    let mut best = (d8, None);
    for (k, (threes, halves)) in NORM12.iter().enumerate() {
        let mut v = half + threes.iter().map(|&i| t[i]).sum::<f64>();
        if even {
            let low3 = threes.iter().fold(f64::INFINITY, |m, &i| m.min(t[i]));
            let low1 = halves.iter().fold(f64::INFINITY, |m, &i| m.min(t[i]));
            v -= 2.0 * (1.5 * low3).min(0.5 * low1);
        }
        if v > best.0 {
            best = (v, Some(NORM12_START + k));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`sort`] is [`NETWORK`], comparator by comparator.
    #[test]
    fn sort_applies_the_network() {
        let mut state = 3u64;
        for _ in 0..1000 {
            let v: [F; 8] = core::array::from_fn(|_| {
                core::array::from_fn(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (state >> 60) as f64
                })
            });
            let mut w = v;
            for (a, b) in NETWORK {
                let (mut x, mut y) = (w[a], w[b]);
                compare_exchange(&mut x, &mut y);
                (w[a], w[b]) = (x, y);
            }
            assert_eq!(sort(v), w);
        }
    }

    /// The norm-12 search gives `e8p::class_value`'s best, on values exact
    /// in `f64` (multiples of 2^-20 below 4).
    #[test]
    fn norm12_search_is_the_class_value_search() {
        use super::super::e8p::class_value;
        let mut state = 17u64;
        for _ in 0..20_000 {
            let t: [f64; 8] = core::array::from_fn(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 40) % (4 << 20)) as f64 / f64::from(1u32 << 20)
            });
            for parity in 0..2u8 {
                let mut expected = (f64::NEG_INFINITY, None);
                for p in NORM12_START..PATTERN_COUNT {
                    let v = class_value(&t, parity, p);
                    if v > expected.0 {
                        expected = (v, Some(p));
                    }
                }
                assert_eq!(
                    best_norm12(&t, parity == 0, f64::NEG_INFINITY),
                    expected,
                    "{t:?}"
                );
            }
        }
    }

    /// The zero-one principle: a comparator network sorts every input if
    /// it sorts the 256 inputs of zeros and ones.
    #[test]
    fn the_network_sorts() {
        for bits in 0..256u32 {
            let v: [F; 8] = core::array::from_fn(|i| splat(f64::from(bits >> i & 1)));
            let mut sorted = v;
            for (a, b) in NETWORK {
                let (mut x, mut y) = (sorted[a], sorted[b]);
                compare_exchange(&mut x, &mut y);
                (sorted[a], sorted[b]) = (x, y);
            }
            let ones = bits.count_ones() as usize;
            for (k, s) in sorted.iter().enumerate() {
                assert_eq!(s[0], if k < ones { 1.0 } else { 0.0 }, "{bits:08b}");
            }
        }
    }
}
