//! `E8Point::nearest` against an exhaustive search over nearby lattice points.

mod common;
#[path = "common/lattice_probes.rs"]
mod lattice_probes;
#[path = "common/old_lattice.rs"]
mod old_lattice;

use hydron_core::{E8Point, Gf8Error};
use proptest::prelude::*;

use common::SplitMix64;

/// Ties are allowed only between distances this close.
const TIE: f64 = 1e-9;

/// `‖x − d/2‖²`, computed independently of the crate.
fn distance_sq(x: &[f32; 8], doubled: &[i32; 8]) -> f64 {
    x.iter()
        .zip(doubled)
        .map(|(&v, &d)| {
            let diff = 2.0 * f64::from(v) - f64::from(d);
            diff * diff / 4.0
        })
        .sum()
}

/// The smallest `‖x − p‖²` over every E8 point `p` with `‖x − p‖² ≤ radius_sq`
/// (or `None` if there is none), by exhaustive enumeration.
///
/// Why this is exhaustive: a point `p` with `‖x − p‖² ≤ r²` has
/// `(x_k − p_k)² ≤ r² − Σ_{j<k} (x_j − p_j)²` for every `k`, so enumerating,
/// coordinate by coordinate, every doubled value `d_k` (of the coset's
/// parity) with `(2x_k − d_k)² / 4` within the remaining budget visits every
/// such point of each coset; the leaf keeps those with a doubled sum ≡ 0
/// mod 4 (an even coordinate sum), which is exactly E8.
///
/// The caller passes `r² = ‖x − nearest(x)‖² + TIE`: any point strictly
/// closer than the decoder's answer lies inside, so if the search finds
/// nothing better by more than `TIE`, the decoder is optimal. The decoder's
/// distance is also checked against the covering radius of E8 (1, Conway &
/// Sloane, SPLAG ch. 4 §8.1), which keeps the search small.
fn brute_force_min(x: &[f32; 8], radius_sq: f64) -> Option<f64> {
    fn search(
        x: &[f32; 8],
        k: usize,
        parity: i64,
        doubled_sum: i64,
        partial: f64,
        radius_sq: f64,
        best: &mut Option<f64>,
    ) {
        if k == 8 {
            if doubled_sum.rem_euclid(4) == 0 && best.is_none_or(|b| partial < b) {
                *best = Some(partial);
            }
            return;
        }
        let budget = radius_sq - partial;
        if budget < 0.0 {
            return;
        }
        let two_x = 2.0 * f64::from(x[k]);
        let reach = 2.0 * budget.sqrt();
        let mut d = (two_x - reach).ceil() as i64;
        if d.rem_euclid(2) != parity {
            d += 1;
        }
        while (d as f64) <= two_x + reach {
            let diff = two_x - d as f64;
            let here = partial + diff * diff / 4.0;
            if here <= radius_sq {
                search(x, k + 1, parity, doubled_sum + d, here, radius_sq, best);
            }
            d += 2;
        }
    }
    let mut best = None;
    for parity in [0, 1] {
        search(x, 0, parity, 0, 0.0, radius_sq, &mut best);
    }
    best
}

/// Checks one input: the answer is in E8, within 1 of the input in every
/// coordinate, within the covering radius, and no lattice point is closer.
fn check_nearest(x: &[f32; 8]) {
    let p = E8Point::nearest(x).unwrap_or_else(|e| panic!("{x:?}: {e}"));
    let doubled = p.doubled();
    assert_eq!(E8Point::from_doubled(doubled), Ok(p), "{x:?} -> {p}");
    assert!(E8Point::contains(&p.to_array()), "{x:?} -> {p}");
    let parity = doubled[0].rem_euclid(2);
    assert!(
        doubled.iter().all(|d| d.rem_euclid(2) == parity),
        "{x:?} -> {p}"
    );
    assert_eq!(doubled.iter().map(|&d| i64::from(d)).sum::<i64>() % 4, 0);
    for k in 0..8 {
        let gap = (f64::from(x[k]) - f64::from(doubled[k]) / 2.0).abs();
        assert!(gap <= 1.0, "{x:?} -> {p}: coordinate {k} is {gap} away");
    }

    let found = distance_sq(x, &doubled);
    assert!(
        (found - p.distance_sq(x)).abs() <= TIE,
        "{x:?}: distance_sq disagrees"
    );
    assert!(
        found <= 1.0 + TIE,
        "{x:?} -> {p}: distance² {found} beyond the covering radius"
    );
    let best = brute_force_min(x, found + TIE).expect("the decoder's own point is within range");
    assert!(
        found <= best + TIE,
        "{x:?} -> {p}: distance² {found}, but a lattice point at {best} exists"
    );
}

#[test]
fn nearest_matches_exhaustive_search_at_many_scales() {
    let mut rng = SplitMix64(0x00E8_1A77_1CE5);
    let scales = [0.25, 0.5, 1.0, 2.0, 3.0, 10.0, 1e3, 1e5, 4e6];
    let mut checked = 0;
    for &scale in &scales {
        for _ in 0..2_000 {
            let x: [f32; 8] = core::array::from_fn(|_| (rng.symmetric() * scale) as f32);
            check_nearest(&x);
            checked += 1;
        }
    }
    assert_eq!(checked, 18_000);
}

#[test]
fn nearest_on_grids_full_of_ties() {
    // Coordinates on the quarter-integer grid make many lattice points
    // equidistant (deep holes, halfway points, the cosets' midpoints).
    let mut rng = SplitMix64(7);
    for _ in 0..5_000 {
        let x: [f32; 8] = core::array::from_fn(|_| ((rng.next_u64() % 17) as f32 - 8.0) / 4.0);
        check_nearest(&x);
    }
    // Deep holes and half-way points.
    let mut specials = vec![
        [0.0f32; 8],
        [-0.0; 8],
        [0.5; 8],
        [-0.5; 8],
        [0.25; 8],
        [0.75; 8],
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -0.5],
        [0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0],
        [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        [-0.0, 0.5, -0.0, 0.5, -0.0, 0.5, -0.0, 0.5],
        [f32::MIN_POSITIVE, -1e-45, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        [E8Point::INPUT_LIMIT; 8],
        [-E8Point::INPUT_LIMIT; 8],
    ];
    for k in 0..8 {
        let mut x = [0.0f32; 8];
        x[k] = 1.0;
        specials.push(x);
        x[k] = -0.5;
        specials.push(x);
    }
    for x in &specials {
        check_nearest(x);
    }
}

#[test]
fn lattice_points_decode_to_themselves() {
    let mut rng = SplitMix64(0xC0FFEE);
    for _ in 0..5_000 {
        let parity = (rng.next_u64() & 1) as i32;
        let mut doubled: [i32; 8] =
            core::array::from_fn(|_| 2 * ((rng.next_u64() % 2001) as i32 - 1000) + parity);
        // Fix the sum to 0 mod 4 by moving coordinate 0 by one lattice step.
        let sum: i32 = doubled.iter().sum();
        doubled[0] -= sum.rem_euclid(4);
        let p = E8Point::from_doubled(doubled).unwrap();
        assert_eq!(E8Point::nearest(&p.to_array()), Ok(p));
    }
}

#[test]
fn out_of_range_and_non_finite_inputs_are_errors() {
    let mut x = [0.0f32; 8];
    x[5] = f32::MAX;
    assert!(matches!(
        E8Point::nearest(&x),
        Err(Gf8Error::OutOfLatticeRange { coordinate: 5, .. })
    ));
    x[5] = f32::from_bits(E8Point::INPUT_LIMIT.to_bits() + 1);
    assert!(E8Point::nearest(&x).is_err());
    x[5] = E8Point::INPUT_LIMIT;
    assert!(E8Point::nearest(&x).is_ok());
    x[1] = f32::NAN;
    assert_eq!(
        E8Point::nearest(&x),
        Err(Gf8Error::NotANumber { coordinate: 1 })
    );
}

/// Compares the decoder with the old one on `inputs`, doubled coordinates
/// and errors both.
fn assert_same_as_old(inputs: &[[f32; 8]]) {
    for x in inputs {
        let new = E8Point::nearest(x).map(|p| p.doubled());
        assert_eq!(
            new,
            old_lattice::old_nearest(x),
            "{x:?} ({:x?})",
            x.map(f32::to_bits)
        );
    }
}

#[test]
fn nearest_is_identical_to_the_old_decoder_on_two_million_probes() {
    // Debug builds run the tests: two million inputs take a few seconds.
    let inputs = lattice_probes::probe_inputs(0xD1FF, 2_000_000);
    assert_same_as_old(&inputs);
}

#[test]
fn nearest_is_identical_to_the_old_decoder_at_many_scales() {
    let mut rng = SplitMix64(0x5CA1E);
    let mut inputs = Vec::new();
    for exponent in -40..=22 {
        let scale = 2f64.powi(exponent);
        for _ in 0..4_000 {
            inputs.push(core::array::from_fn(|_| (rng.symmetric() * scale) as f32));
        }
    }
    assert_same_as_old(&inputs);
}

#[test]
fn nearest_is_identical_to_the_old_decoder_on_ties() {
    let mut inputs = Vec::new();
    // Every vector of halves and quarters in a small box: exact ties
    // between the cosets, within a coset, and half-integer coordinates.
    for code in 0..5u32.pow(8) {
        let mut c = code;
        inputs.push(core::array::from_fn(|_| {
            let digit = c % 5;
            c /= 5;
            digit as f32 * 0.25 - 0.5
        }));
    }
    // The same grid shifted far out, where the fast path meets large
    // magnitudes, and next to the range limit.
    let far: Vec<[f32; 8]> = inputs
        .iter()
        .step_by(7)
        .flat_map(|x| {
            [
                x.map(|v| v + 1000.0),
                x.map(|v| v - 2f32.powi(21)),
                x.map(|v| (E8Point::INPUT_LIMIT - 0.5 + v).min(E8Point::INPUT_LIMIT)),
                x.map(|v| -(E8Point::INPUT_LIMIT - 0.5 + v).min(E8Point::INPUT_LIMIT)),
            ]
        })
        .collect();
    inputs.extend(far);
    // Zeros of both signs and tiny values next to halves.
    for bits in 0..256u32 {
        inputs.push(core::array::from_fn(|k| match (bits >> k) & 1 {
            0 => -0.0,
            _ => 0.5,
        }));
        inputs.push(core::array::from_fn(|k| match (bits >> k) & 1 {
            0 => 1e-30,
            _ => -0.5,
        }));
        inputs.push(core::array::from_fn(|k| match (bits >> k) & 1 {
            0 => -2f32.powi(-24),
            _ => 0.5 + f32::EPSILON,
        }));
    }
    assert_same_as_old(&inputs);
}

#[test]
fn nearest_reports_the_old_errors() {
    let mut x = [0.25f32; 8];
    for (k, bad) in [
        f32::NAN,
        f32::INFINITY,
        -f32::MAX,
        4_194_304.5,
        -4_194_304.5,
        f32::from_bits(E8Point::INPUT_LIMIT.to_bits() + 1),
    ]
    .into_iter()
    .enumerate()
    {
        x[k] = bad;
        // A later NaN still wins over an earlier range error, as before.
        let mut y = x;
        y[7] = f32::NAN;
        assert_same_as_old(&[x, y]);
        x[k] = 0.25;
    }
}

proptest! {
    #[test]
    fn nearest_is_identical_to_the_old_decoder_for_any_bits(bits in proptest::array::uniform8(any::<u32>())) {
        let x = bits.map(f32::from_bits);
        prop_assert_eq!(E8Point::nearest(&x).map(|p| p.doubled()), old_lattice::old_nearest(&x));
    }

    #[test]
    fn nearest_is_optimal_for_any_input(x in proptest::array::uniform8(-20.0f32..20.0)) {
        check_nearest(&x);
    }

    #[test]
    fn nearest_commutes_with_lattice_shifts(
        x in proptest::array::uniform8(-4.0f32..4.0),
        shift in proptest::array::uniform8(-50i32..50),
        half in any::<bool>(),
    ) {
        // Quantize the input to 1/1024 so that adding a half-integer shift
        // is exact in f32.
        let x = x.map(|v| (v * 1024.0).round() / 1024.0);
        let mut doubled = shift.map(|s| 2 * s + i32::from(half));
        let sum: i32 = doubled.iter().sum();
        doubled[7] -= sum.rem_euclid(4);
        let shift = E8Point::from_doubled(doubled).unwrap();
        let moved: [f32; 8] = core::array::from_fn(|k| x[k] + shift.to_array()[k]);
        let d0 = E8Point::nearest(&x).unwrap().distance_sq(&x);
        let d1 = E8Point::nearest(&moved).unwrap().distance_sq(&moved);
        prop_assert!((d0 - d1).abs() <= TIE, "{} vs {}", d0, d1);
    }

    #[test]
    fn contains_agrees_with_from_doubled(doubled in proptest::array::uniform8(-1000i32..1000)) {
        let coords = doubled.map(|d| d as f32 / 2.0);
        prop_assert_eq!(E8Point::contains(&coords), E8Point::from_doubled(doubled).is_ok());
    }

    #[test]
    fn inner_products_are_integers(a in proptest::array::uniform8(-30.0f32..30.0),
                                   b in proptest::array::uniform8(-30.0f32..30.0)) {
        let p = E8Point::nearest(&a).unwrap();
        let q = E8Point::nearest(&b).unwrap();
        let exact: f64 = p.to_array().iter().zip(q.to_array()).map(|(&u, v)| f64::from(u) * f64::from(v)).sum();
        prop_assert_eq!(exact, p.dot(&q) as f64);
        prop_assert_eq!(p.norm_sq() % 2, 0);
    }
}

#[test]
fn a_difference_below_f64_rounding_is_a_tie_and_the_integer_point_wins() {
    // The half-integer point h is nearer by about 1e-30 in squared
    // distance, below f64's rounding of the two distances (both 1.0): as
    // documented, the decoder sees a tie and returns the integer point, on
    // every backend.
    let x = [0.5f32, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 1e-30];
    let p = E8Point::nearest(&x).unwrap();
    assert_eq!(p.doubled(), [2, 2, 2, 2, 0, 0, 0, 0]);
    let h = E8Point::from_doubled([1, 1, 1, 1, 1, -1, -1, 1]).unwrap();
    assert_eq!(p.distance_sq(&x), h.distance_sq(&x));
    for backend in hydron_core::batch::backends() {
        let mut out = [p; 9];
        backend
            .nearest_lattice_points_into(&[x; 9], &mut out)
            .unwrap();
        assert!(out.iter().all(|q| *q == p), "{backend:?}");
    }
}
