//! The exact E8P encoder for blocks outside the exact range of
//! [`e8p`](super::e8p) (subnormal, huge, or widely spread coordinates),
//! shared by every backend.
//!
//! 1. The 512 class values (best signs of each shift and pattern) are taken
//!    in `f64` as in the in-range kernel, now with rounding. Each is within
//!    `ε = 2^-44 (Σ|x_i| + 8)` of its exact value (a generous bound: about
//!    20 roundings of relative size 2^-53 on quantities below
//!    `3 Σ|x_i| + 8`). The class holding the nearest codeword is within
//!    `2ε` of the largest approximate value; the others are dropped.
//! 2. Every codeword of the surviving classes gets `G(c) = ⟨x, c⟩ − ½|c|²`
//!    in `f64` (its products are exact; the sum is within `ε`); those
//!    within `2ε` of the largest survive again.
//! 3. The survivors are compared exactly, in code order, keeping the first
//!    of equals: the sign of `G(c) − G(c')` is the sign of a sum of nine
//!    exact `f64` products, found with an error-free expansion (Shewchuk's
//!    grow-expansion on `TwoSum`).

use core::cmp::Ordering;

use super::e8p::{class_value, decode, shifted, PATTERN_COUNT, SHIFTS};

/// The nearest code to a finite block, exactly, lowest code among equals.
pub(crate) fn encode_wide_range(x: &[f32; 8]) -> u16 {
    let xs = x.map(f64::from);
    let abs_sum: f64 = xs.iter().map(|v| v.abs()).sum();
    let eps = (abs_sum + 8.0) * 2f64.powi(-44);
    let sum_x: f64 = xs.iter().sum();

    let mut values = [[0.0f64; PATTERN_COUNT]; 2];
    let mut largest = f64::NEG_INFINITY;
    for (shift, &sigma) in SHIFTS.iter().enumerate() {
        let (y, parity) = shifted(x, sigma);
        let t = y.map(f64::abs);
        for (p, slot) in values[shift].iter_mut().enumerate() {
            *slot = class_value(&t, parity, p) + sigma * sum_x;
            largest = largest.max(*slot);
        }
    }

    // Codewords of the surviving classes, in code order, with approximate G.
    let mut candidates: Vec<(u16, f64)> = Vec::new();
    for (shift, row) in values.iter().enumerate() {
        for (p, &v) in row.iter().enumerate() {
            if v < largest - 2.0 * eps {
                continue;
            }
            for signs in 0..128u16 {
                let code = ((shift as u16) << 15) | ((p as u16) << 7) | signs;
                candidates.push((code, approximate_g(&xs, &decode(code))));
            }
        }
    }
    let best_g = candidates.iter().fold(f64::NEG_INFINITY, |m, c| m.max(c.1));
    let mut best: Option<u16> = None;
    for &(code, g) in &candidates {
        if g < best_g - 2.0 * eps {
            continue;
        }
        best = match best {
            Some(b) if compare_g(&xs, code, b) != Ordering::Greater => Some(b),
            _ => Some(code),
        };
    }
    best.expect("the largest approximate value survives its own filter")
}

/// `⟨x, c⟩ − ½|c|²` in `f64` (products exact, sum rounded).
fn approximate_g(x: &[f64; 8], c: &[f32; 8]) -> f64 {
    let mut g = 0.0;
    let mut half_sq = 0.0;
    for i in 0..8 {
        let ci = f64::from(c[i]);
        g += x[i] * ci;
        half_sq += ci * ci;
    }
    g - 0.5 * half_sq
}

/// The exact order of `G(code)` and `G(other)`:
/// `Σ x_i (c_i − c'_i) − ½(|c|² − |c'|²)`, every term an exact `f64`
/// (`c_i − c'_i` is a multiple of ¼ below 6, so the product has at most
/// 24 + 5 significant bits; the norms are multiples of 1/16).
fn compare_g(x: &[f64; 8], code: u16, other: u16) -> Ordering {
    let c = decode(code);
    let d = decode(other);
    let mut terms = [0.0f64; 9];
    let mut half_sq = 0.0;
    for i in 0..8 {
        let (ci, di) = (f64::from(c[i]), f64::from(d[i]));
        terms[i] = x[i] * (ci - di);
        half_sq += 0.5 * (ci * ci - di * di);
    }
    terms[8] = -half_sq;
    sum_sign(&terms)
}

/// `a + b` and its rounding error, exactly (Knuth's TwoSum, round to
/// nearest, no overflow).
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// The sign of the exact sum of at most 16 finite terms: they are added
/// into a nonoverlapping expansion (components in increasing magnitude,
/// zeros dropped), whose sign is that of its largest component.
pub(crate) fn sum_sign(terms: &[f64]) -> Ordering {
    let mut e = [0.0f64; 16];
    let mut len = 0;
    for &b in terms {
        let mut q = b;
        let mut k = 0;
        for i in 0..len {
            let (s, err) = two_sum(q, e[i]);
            q = s;
            if err != 0.0 {
                e[k] = err;
                k += 1;
            }
        }
        if q != 0.0 {
            e[k] = q;
            k += 1;
        }
        len = k;
    }
    if len == 0 {
        Ordering::Equal
    } else if e[len - 1] > 0.0 {
        Ordering::Greater
    } else {
        Ordering::Less
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_sign_sees_what_rounding_hides() {
        // 1e30 + 1 - 1e30 rounds to 0 in f64; exactly it is 1.
        assert_eq!(sum_sign(&[1e30, 1.0, -1e30]), Ordering::Greater);
        assert_eq!(sum_sign(&[1e30, -1.0, -1e30]), Ordering::Less);
        assert_eq!(sum_sign(&[1e30, 1e-30, -1e30, -1e-30]), Ordering::Equal);
        assert_eq!(sum_sign(&[]), Ordering::Equal);
        assert_eq!(
            sum_sign(&[0.1, 0.2, -0.3]),
            (0.1f64 + 0.2 - 0.3).partial_cmp(&0.0).unwrap()
        );
    }

    #[test]
    fn wide_range_agrees_with_the_in_range_kernel_where_both_apply() {
        let mut state = 7u64;
        for _ in 0..300 {
            let x: [f32; 8] = core::array::from_fn(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 6.0
            });
            if super::super::e8p::in_exact_range(&x) {
                assert_eq!(
                    encode_wide_range(&x),
                    super::super::e8p::encode_in_range(&x),
                    "{x:?}"
                );
            }
        }
    }
}
