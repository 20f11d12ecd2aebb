//! The sphere batch kernels (`batch::geodesic_distances_into`,
//! `batch::slerp_into`) on every backend this machine offers: bit-identical
//! to the scalar backend, the cases of the per-vector methods (zero
//! vectors, equal, opposite and parallel inputs, `t` at and beyond its
//! ends), every tail length, one vector against many both ways, within
//! a few ulps of the exact angle (5 on the narrow `f32` geodesic path, 1
//! elsewhere) and of the per-vector methods, and the same across threads.

mod common;

use common::{backends, Rng};
use core::f32::consts::{FRAC_PI_2, PI};
use hydron_core::batch::{self, Backend, PerRow};
use hydron_core::Gf8;
use proptest::prelude::*;

fn bits(vs: &[Gf8]) -> Vec<[u32; 8]> {
    vs.iter().map(|v| v.as_array().map(f32::to_bits)).collect()
}

fn float_bits(xs: &[f32]) -> Vec<u32> {
    xs.iter().map(|x| x.to_bits()).collect()
}

/// The number of rows of the operands (1 if none is per row).
fn rows(operands: &[Option<usize>]) -> usize {
    operands.iter().flatten().copied().next().unwrap_or(1)
}

fn len_of<T>(p: &PerRow<'_, T>) -> Option<usize> {
    match p {
        PerRow::All(_) => None,
        PerRow::Each(values) => Some(values.len()),
    }
}

fn get<T: Copy>(p: &PerRow<'_, T>, i: usize) -> T {
    match p {
        PerRow::All(value) => *value,
        PerRow::Each(values) => values[i],
    }
}

/// The angle of `Gf8::geodesic_distance` in `f64`, before rounding: the
/// rescaled unit vectors (zero stays zero), `2·atan2(‖a − b‖, ‖a + b‖)`
/// with libm.
fn exact_angle(a: Gf8, b: Gf8) -> f64 {
    let unit = |v: Gf8| {
        let w = v.to_array().map(f64::from);
        let n = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 0.0 {
            w.map(|x| x / n)
        } else {
            w
        }
    };
    let (a, b) = (unit(a), unit(b));
    let norm = |f: &dyn Fn(usize) -> f64| (0..8).map(|k| f(k) * f(k)).sum::<f64>().sqrt();
    2.0 * norm(&|k| a[k] - b[k]).atan2(norm(&|k| a[k] + b[k]))
}

/// The bound, in ulps of `f32`, of the narrow geodesic path (`f32`
/// arithmetic, angles more than about 1e-3 rad from 0 and π) against the
/// exact angle: `accuracy_over_many_inputs` measures at most 2.7, the
/// sweep of `simd/sphere.rs` 3.4.
const NARROW_ULPS: f64 = 5.0;

/// Whether the batch kernels may take the narrow path for this angle (the
/// wide `f64` one is within [`NARROW_ULPS`] too, so the band between the
/// two counts as narrow).
fn is_narrow(exact: f64) -> bool {
    (9e-4..=f64::from(PI) - 9e-4).contains(&exact)
}

/// Ulps of `f32` between two non-negative numbers.
fn ulps(a: f32, b: f32) -> u32 {
    a.to_bits().abs_diff(b.to_bits())
}

/// Every backend against the scalar one, bit for bit, and the scalar one
/// against the per-vector method and the exact angle.
fn check_geodesic(a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>) {
    let n = rows(&[len_of(&a), len_of(&b)]);
    let mut expected = vec![0.0f32; n];
    Backend::Scalar.geodesic_distances_into(a, b, &mut expected);
    for backend in backends() {
        let mut out = vec![f32::NAN; n];
        backend.geodesic_distances_into(a, b, &mut out);
        assert_eq!(
            float_bits(&out),
            float_bits(&expected),
            "{backend}, {n} rows"
        );
    }
    let mut dispatched = vec![f32::NAN; n];
    batch::geodesic_distances_into(a, b, &mut dispatched);
    assert_eq!(float_bits(&dispatched), float_bits(&expected));
    for (i, &d) in expected.iter().enumerate() {
        let (x, y) = (get(&a, i), get(&b, i));
        let per_vector = x.geodesic_distance(y);
        let exact = exact_angle(x, y);
        let narrow = is_narrow(exact);
        assert!(
            ulps(d, per_vector) <= if narrow { NARROW_ULPS as u32 } else { 1 },
            "row {i}: {d} vs Gf8::geodesic_distance {per_vector} ({x:?}, {y:?})"
        );
        let ulp = f64::from(f32::from_bits(d.to_bits() + 1) - d);
        // The narrow path: a few ulps of f32 arithmetic. The wide one: half
        // an ulp of rounding, and the f64 pipeline's own error: a few
        // 1e-16 rad, or the cosine's error over sin θ on the `acos` path.
        let bound = if narrow {
            NARROW_ULPS * ulp
        } else {
            0.5 * ulp + 1e-15 + 5e-16 / exact.sin()
        };
        assert!(
            (f64::from(d) - exact).abs() <= bound,
            "row {i}: {d} vs exact {exact}"
        );
        assert!((0.0..=PI).contains(&d), "row {i}: {d}");
        assert_eq!(
            d.to_bits(),
            geodesic_one(y, x).to_bits(),
            "row {i}: symmetric"
        );
    }
}

/// One pair through the batch kernel.
fn geodesic_one(a: Gf8, b: Gf8) -> f32 {
    batch::geodesic_distances(a.into(), b.into())[0]
}

/// Every backend against the scalar one, bit for bit, and the scalar one
/// against `Gf8::slerp`: the same vector, to 1 ulp of each coordinate (or
/// 1e-15 for coordinates near zero, where the `f64` rounding of either
/// is more than an ulp of `f32`), with unit norm.
fn check_slerp(a: PerRow<'_, Gf8>, b: PerRow<'_, Gf8>, t: PerRow<'_, f32>) {
    let n = rows(&[len_of(&a), len_of(&b), len_of(&t)]);
    let mut expected = vec![Gf8::ZERO; n];
    Backend::Scalar.slerp_into(a, b, t, &mut expected);
    for backend in backends() {
        let mut out = vec![Gf8::ZERO; n];
        backend.slerp_into(a, b, t, &mut out);
        assert_eq!(bits(&out), bits(&expected), "{backend}, {n} rows");
    }
    assert_eq!(bits(&batch::slerp(a, b, t)), bits(&expected));
    for (i, v) in expected.iter().enumerate() {
        let (x, y, s) = (get(&a, i), get(&b, i), get(&t, i));
        let per_vector = x.slerp(y, s);
        // Nearly opposite inputs have a short perpendicular part, whose
        // direction carries the rounding of either computation divided by
        // its length (ill-conditioned: some 1e-16 / sin θ, and more near
        // the 1e-12 cut).
        let sin = exact_angle(x, y).sin().max(1e-30);
        let conditioning = (1e-14 / sin) as f32;
        for k in 0..8 {
            let (got, want) = (v[k], per_vector[k]);
            let ulp = f32::from_bits(got.abs().to_bits() + 1) - got.abs();
            assert!(
                (got - want).abs() <= ulp.max(1e-15).max(conditioning),
                "row {i}, coordinate {k}: {v:?} vs Gf8::slerp {per_vector:?} \
                 ({x:?} to {y:?}, t = {s})"
            );
        }
        if !v.is_zero() {
            assert!(Gf8::check(v.as_array()).is_ok(), "row {i}: {v:?}");
        }
    }
}

fn e(k: usize) -> Gf8 {
    let mut x = [0.0; 8];
    x[k] = 1.0;
    Gf8::try_new(x).unwrap()
}

/// `v` with coordinate `k` moved by `steps` ulps (still within the unit
/// tolerance for a few steps).
fn nudge(v: Gf8, k: usize, steps: i32) -> Gf8 {
    let mut x = v.to_array();
    x[k] = f32::from_bits(x[k].to_bits().wrapping_add_signed(steps));
    Gf8::try_new(x).unwrap()
}

/// The unit vector at `angle` from `x`, towards `towards`.
fn at_angle(x: Gf8, towards: Gf8, angle: f64) -> Gf8 {
    let a = x.to_array().map(f64::from);
    let r = towards.to_array().map(f64::from);
    let c: f64 = a.iter().zip(&r).map(|(p, q)| p * q).sum();
    let u: Vec<f64> = r.iter().zip(&a).map(|(q, p)| q - c * p).collect();
    let n = u.iter().map(|v| v * v).sum::<f64>().sqrt();
    Gf8::normalize(core::array::from_fn(|k| {
        (angle.cos() * a[k] + angle.sin() * u[k] / n) as f32
    }))
    .unwrap()
}

/// Pairs that stress every case: equal, opposite, orthogonal, zero, nearly
/// equal and nearly opposite (a few ulps apart), rescaled copies, random.
/// An angle around 1e-3 rad or around 0.0141 rad (by `i`).
fn switch_band(rng: &mut Rng, i: usize) -> f64 {
    let centre = if i % 20 < 10 { 0.001 } else { 0.0141 };
    centre * (0.9 + 0.2 * rng.below(1000) as f64 / 1000.0)
}

fn hard_pairs(rng: &mut Rng, n: usize) -> (Vec<Gf8>, Vec<Gf8>) {
    let mut a = Vec::with_capacity(n);
    let mut b = Vec::with_capacity(n);
    for i in 0..n {
        let x = rng.unit();
        let y = match i % 10 {
            0 => x,
            1 => -x,
            2 => Gf8::ZERO,
            3 => nudge(x, rng.below(8), 1 + rng.below(3) as i32),
            4 => nudge(-x, rng.below(8), -(1 + rng.below(3) as i32)),
            5 => Gf8::try_new(x.to_array().map(|c| c * 1.000_004)).unwrap(),
            6 => e(rng.below(8)),
            // Around the angles where the kernels switch from the narrow
            // path to the wide one (about 1e-3 rad), and on the wide one
            // from `acos` of the cosine to the stable formula (cosine
            // 0.9999: 0.01414 rad), and as far from π.
            8 => at_angle(x, rng.unit(), switch_band(rng, i)),
            9 => at_angle(x, rng.unit(), core::f64::consts::PI - switch_band(rng, i)),
            _ => rng.unit(),
        };
        let x = if i % 23 == 0 { Gf8::ZERO } else { x };
        a.push(x);
        b.push(y);
    }
    (a, b)
}

#[test]
fn geodesic_cases_and_tails() {
    let mut rng = Rng(0x5EED_0001);
    for n in 0..=37 {
        let (a, b) = hard_pairs(&mut rng, n);
        check_geodesic(PerRow::Each(&a), PerRow::Each(&b));
        if let Some(&q) = a.first() {
            check_geodesic(PerRow::All(q), PerRow::Each(&b));
            check_geodesic(PerRow::Each(&b), PerRow::All(q));
        }
    }
    let q = rng.unit();
    check_geodesic(PerRow::All(q), PerRow::All(-q));
}

#[test]
fn geodesic_exact_values() {
    let a = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]).unwrap();
    let cases = [
        (a, a, 0.0),
        (a, -a, PI),
        (e(0), e(1), FRAC_PI_2),
        (a, Gf8::ZERO, FRAC_PI_2),
        (Gf8::ZERO, a, FRAC_PI_2),
        (Gf8::ZERO, Gf8::ZERO, 0.0),
    ];
    let (xs, ys): (Vec<Gf8>, Vec<Gf8>) = cases.iter().map(|&(x, y, _)| (x, y)).unzip();
    let want: Vec<f32> = cases.iter().map(|c| c.2).collect();
    for backend in backends() {
        // Eight copies, so the SIMD backends see every case in a full
        // group of four as well as in the tail.
        let xs = xs.repeat(8);
        let ys = ys.repeat(8);
        let mut out = vec![f32::NAN; xs.len()];
        backend.geodesic_distances_into(PerRow::Each(&xs), PerRow::Each(&ys), &mut out);
        assert_eq!(out, want.repeat(8), "{backend}");
    }
}

#[test]
fn slerp_cases_and_tails() {
    let mut rng = Rng(0x5EED_0002);
    for n in 0..=37 {
        let (a, b) = hard_pairs(&mut rng, n);
        let ts: Vec<f32> = (0..n)
            .map(|i| match i % 9 {
                0 => 0.0,
                1 => 1.0,
                2 => -0.5,
                3 => 1.5,
                4 => f32::NAN,
                5 => 0.5,
                6 => f32::MIN_POSITIVE,
                _ => (rng.below(1 << 20) as f32) / (1 << 20) as f32,
            })
            .collect();
        check_slerp(PerRow::Each(&a), PerRow::Each(&b), PerRow::Each(&ts));
        check_slerp(PerRow::Each(&a), PerRow::Each(&b), PerRow::All(0.3));
        if let Some(&q) = a.first() {
            check_slerp(PerRow::All(q), PerRow::Each(&b), PerRow::Each(&ts));
            check_slerp(PerRow::Each(&b), PerRow::All(q), PerRow::All(0.7));
            check_slerp(PerRow::All(q), PerRow::All(-q), PerRow::Each(&ts));
        }
    }
}

#[test]
fn slerp_exact_ends_and_special_inputs() {
    let a = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]).unwrap();
    let b = Gf8::normalize([-3.0, 1.0, 4.0, -1.0, 5.0, -9.0, 2.0, 6.0]).unwrap();
    let j = Gf8::normalize([-2.0, 1.0, -4.0, 3.0, -6.0, 5.0, -8.0, 7.0]).unwrap();
    for backend in backends() {
        let run = |x: Gf8, y: Gf8, t: f32| {
            let xs = vec![x; 9];
            let ys = vec![y; 9];
            let mut out = vec![Gf8::ZERO; 9];
            backend.slerp_into(
                PerRow::Each(&xs),
                PerRow::Each(&ys),
                PerRow::All(t),
                &mut out,
            );
            assert!(out.iter().all(|v| *v == out[0]), "{backend}: {out:?}");
            out[0]
        };
        for t in [0.0, -0.0, -1.0, f32::NEG_INFINITY, f32::NAN] {
            assert_eq!(bits(&[run(a, b, t)]), bits(&[a]), "{backend}, t = {t}");
        }
        for t in [1.0, 2.0, f32::INFINITY] {
            assert_eq!(bits(&[run(a, b, t)]), bits(&[b]), "{backend}, t = {t}");
        }
        assert_eq!(run(a, a, 0.4), a, "{backend}: equal inputs");
        assert_eq!(run(Gf8::ZERO, Gf8::ZERO, 0.4), Gf8::ZERO, "{backend}");
        // A zero input: the direction of the other one.
        assert!(
            (run(a, Gf8::ZERO, 0.4).dot(a) - 1.0).abs() < 1e-6,
            "{backend}"
        );
        assert!(
            (run(Gf8::ZERO, b, 0.1).dot(b) - 1.0).abs() < 1e-6,
            "{backend}"
        );
        // Opposite inputs: halfway is J·a.
        assert!((run(a, -a, 0.5).dot(j) - 1.0).abs() < 1e-6, "{backend}");
        // Halfway between orthogonal unit vectors.
        let mid = run(e(0), e(1), 0.5);
        assert_eq!(mid[0], mid[1], "{backend}");
        assert!((mid[0] - core::f32::consts::FRAC_1_SQRT_2).abs() <= 6e-8);
    }
}

#[test]
fn accuracy_over_many_inputs() {
    // Against the exact angle: the worst error in ulps of f32, over
    // random, nearly equal and nearly opposite pairs.
    let mut rng = Rng(0x5EED_0003);
    let (a, b) = hard_pairs(&mut rng, 200_000);
    let out = batch::geodesic_distances(PerRow::Each(&a), PerRow::Each(&b));
    // The narrow path (from about 1e-3 rad of 0 and π): the worst error in
    // ulps of f32 arithmetic. The wide one (closer): beyond the half ulp of
    // rounding, the f64 pipeline's own error, a few 1e-16 rad on the stable
    // path (it matters, in ulps, only for tiny angles).
    let mut worst_excess = 0.0f64;
    let mut worst_ulps = 0.0f64;
    let mut worst_per_vector = 0.0f64;
    let (mut narrow, mut wide) = (0, 0);
    for ((&x, &y), &d) in a.iter().zip(&b).zip(&out) {
        let exact = exact_angle(x, y);
        let rounded = exact as f32;
        let ulp = f64::from(f32::from_bits(rounded.to_bits() + 1) - rounded);
        let error = (f64::from(d) - exact).abs();
        let per_vector = x.geodesic_distance(y);
        worst_per_vector = worst_per_vector.max((f64::from(per_vector) - exact).abs() - 0.5 * ulp);
        if is_narrow(exact) {
            worst_ulps = worst_ulps.max(error / ulp);
            narrow += 1;
        } else {
            worst_excess = worst_excess.max(error - 0.5 * ulp);
            wide += 1;
        }
    }
    eprintln!("geodesic: {narrow} pairs on the narrow path: at most {worst_ulps} ulp; {wide} near 0 or π: {worst_excess:e} rad beyond half an ulp; per vector {worst_per_vector:e}");
    assert!(
        narrow > 100_000 && wide > 20_000,
        "{narrow} narrow, {wide} wide"
    );
    assert!(
        worst_excess <= 1e-15,
        "{worst_excess:e} rad beyond half an ulp near 0 or π"
    );
    assert!(
        worst_ulps <= NARROW_ULPS,
        "worst error {worst_ulps} ulp from 1e-3 rad up"
    );
    assert!(worst_per_vector <= 1e-15, "per vector {worst_per_vector:e}");

    let ts: Vec<f32> = (0..a.len()).map(|i| (i % 1001) as f32 / 1000.0).collect();
    let v = batch::slerp(PerRow::Each(&a), PerRow::Each(&b), PerRow::Each(&ts));
    // Away from opposite inputs (where the direction of the short
    // perpendicular part is ill-conditioned, see `check_slerp`).
    let mut worst = 0.0f32;
    for (i, v) in v.iter().enumerate() {
        let want = a[i].slerp(b[i], ts[i]);
        let conditioning = (1e-14 / exact_angle(a[i], b[i]).sin().max(1e-30)) as f32;
        for k in 0..8 {
            let excess = (v[k] - want[k]).abs() - conditioning;
            worst = worst.max(excess);
        }
    }
    eprintln!("slerp: worst coordinate difference {worst:e}");
    assert!(worst <= 6e-8, "worst slerp coordinate difference {worst}");
}

#[test]
fn checked_geodesic_matches_and_reports_the_first_bad_vector() {
    use hydron_core::batch::{Operand, OperandError};
    use hydron_core::{BatchError, Gf8Error};
    let mut rng = Rng(0x5EED_0005);
    // Past a check block (4096) and the thread split (16,384), with a tail.
    let n = 40_003;
    let (a, b) = hard_pairs(&mut rng, n);
    let (ra, rb) = (Gf8::slice_as_arrays(&a), Gf8::slice_as_arrays(&b));
    let mut want = vec![0.0f32; n];
    batch::geodesic_distances_into(PerRow::Each(&a), PerRow::Each(&b), &mut want);
    let mut out = vec![f32::NAN; n];
    batch::geodesic_distances_checked_into(PerRow::Each(ra), PerRow::Each(rb), &mut out).unwrap();
    assert_eq!(float_bits(&out), float_bits(&want));
    batch::geodesic_distances_into(PerRow::All(a[1]), PerRow::Each(&b), &mut want);
    batch::geodesic_distances_checked_into(PerRow::All(ra[1]), PerRow::Each(rb), &mut out).unwrap();
    assert_eq!(float_bits(&out), float_bits(&want));

    let run = |x: PerRow<'_, [f32; 8]>, y: PerRow<'_, [f32; 8]>| {
        let mut out = vec![0.0f32; n];
        batch::geodesic_distances_checked_into(x, y, &mut out).unwrap_err()
    };
    let error = |operand, index, error| OperandError {
        operand,
        error: BatchError { index, error },
    };
    let mut bad_a = ra.to_vec();
    let mut bad_b = rb.to_vec();
    bad_b[7][2] = f32::NAN;
    bad_a[30_000][5] = f32::INFINITY;
    bad_a[35_000][1] = 3.0;
    // `a` first, wherever `b`'s bad vector is.
    let err = run(PerRow::Each(&bad_a), PerRow::Each(&bad_b));
    assert_eq!(err.operand, Operand::A);
    assert_eq!(err.error.index, 30_000);
    assert!(matches!(
        err.error.error,
        Gf8Error::Infinite { coordinate: 5, .. }
    ));
    assert_eq!(
        run(PerRow::Each(ra), PerRow::Each(&bad_b)),
        error(Operand::B, 7, Gf8Error::NotANumber { coordinate: 2 })
    );
    let err = run(PerRow::Each(rb), PerRow::All([2.0; 8]));
    assert_eq!((err.operand, err.error.index), (Operand::B, 0));
    assert!(matches!(err.error.error, Gf8Error::NotUnitNorm { .. }));
    let err = run(PerRow::All([f32::NAN; 8]), PerRow::Each(&bad_b));
    assert_eq!(
        err,
        error(Operand::A, 0, Gf8Error::NotANumber { coordinate: 0 })
    );
    // The last vector of a block, and of the tail.
    for index in [4095, n - 1] {
        let mut bad = ra.to_vec();
        bad[index][0] = -f32::INFINITY;
        assert_eq!(run(PerRow::Each(&bad), PerRow::Each(rb)).error.index, index);
    }
}

#[test]
fn checked_slerp_matches_and_reports_the_first_bad_vector() {
    use hydron_core::batch::{Operand, OperandError};
    use hydron_core::{BatchError, Gf8Error};
    let mut rng = Rng(0x5EED_0006);
    // Past a block (4096) and the thread split (8,192), with a tail.
    let n = 20_003;
    let (a, b) = hard_pairs(&mut rng, n);
    let (ra, rb) = (Gf8::slice_as_arrays(&a), Gf8::slice_as_arrays(&b));
    let ts: Vec<f32> = (0..n).map(|i| (i % 101) as f32 / 100.0).collect();
    let t = PerRow::Each(&ts[..]);
    let want = batch::slerp(PerRow::Each(&a), PerRow::Each(&b), t);
    let mut out = vec![Gf8::ZERO; n];
    batch::slerp_checked_into(PerRow::Each(ra), PerRow::Each(rb), t, &mut out).unwrap();
    assert_eq!(bits(&out), bits(&want));
    let want = batch::slerp(PerRow::All(a[1]), PerRow::Each(&b), t);
    batch::slerp_checked_into(PerRow::All(ra[1]), PerRow::Each(rb), t, &mut out).unwrap();
    assert_eq!(bits(&out), bits(&want));

    let run = |x: PerRow<'_, [f32; 8]>, y: PerRow<'_, [f32; 8]>| {
        let mut out = vec![Gf8::ZERO; n];
        batch::slerp_checked_into(x, y, t, &mut out).unwrap_err()
    };
    let error = |operand, index, error| OperandError {
        operand,
        error: BatchError { index, error },
    };
    let mut bad_a = ra.to_vec();
    let mut bad_b = rb.to_vec();
    bad_b[7][2] = f32::NAN;
    bad_a[15_000][5] = f32::INFINITY;
    bad_a[17_000][1] = 3.0;
    let err = run(PerRow::Each(&bad_a), PerRow::Each(&bad_b));
    assert_eq!((err.operand, err.error.index), (Operand::A, 15_000));
    assert_eq!(
        run(PerRow::Each(ra), PerRow::Each(&bad_b)),
        error(Operand::B, 7, Gf8Error::NotANumber { coordinate: 2 })
    );
    let err = run(PerRow::Each(rb), PerRow::All([2.0; 8]));
    assert_eq!((err.operand, err.error.index), (Operand::B, 0));
    // Each position of a group of four and of the tail, a norm just
    // outside the band (the unit test of `simd/sphere.rs` runs each
    // backend's kernel on such rows).
    for index in [0, 1, 2, 3, 4095, n - 3, n - 1] {
        let mut bad = rb.to_vec();
        bad[index] = [0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0].map(|x| x * 1.001);
        let err = run(PerRow::All(ra[0]), PerRow::Each(&bad));
        assert_eq!((err.operand, err.error.index), (Operand::B, index));
        assert!(matches!(err.error.error, Gf8Error::NotUnitNorm { .. }));
    }
}

#[test]
#[should_panic(expected = "batch output has length 3, but b has 4 rows")]
fn length_mismatch_panics() {
    let vs = vec![Gf8::ZERO; 4];
    let mut out = [0.0; 3];
    batch::geodesic_distances_into(PerRow::All(Gf8::ZERO), PerRow::Each(&vs), &mut out);
}

#[test]
#[should_panic(expected = "batch output has length 4, but t has 2 rows")]
fn slerp_t_length_mismatch_panics() {
    let vs = vec![Gf8::ZERO; 4];
    let _ = batch::slerp(
        PerRow::Each(&vs),
        PerRow::Each(&vs),
        PerRow::Each(&[0.5, 0.5]),
    );
}

/// Split across two threads: the same bits as one thread.
#[cfg(all(feature = "parallel", not(target_family = "wasm")))]
#[test]
fn parallel_matches_serial() {
    use hydron_core::parallel::{GEODESIC_MIN_VECTORS, SLERP_MIN_VECTORS};
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut rng = Rng(0x5EED_0004);
    let n = 3 * GEODESIC_MIN_VECTORS.max(SLERP_MIN_VECTORS) + 5;
    let (a, b) = hard_pairs(&mut rng, n);
    let ts: Vec<f32> = (0..n).map(|i| (i % 97) as f32 / 96.0).collect();
    let q = a[1];
    let backend = batch::backend();

    let mut serial = vec![0.0f32; n];
    backend.geodesic_distances_into(PerRow::All(q), PerRow::Each(&b), &mut serial);
    let split = pool.install(|| batch::geodesic_distances(PerRow::All(q), PerRow::Each(&b)));
    assert_eq!(float_bits(&split), float_bits(&serial));

    let mut serial = vec![Gf8::ZERO; n];
    backend.slerp_into(
        PerRow::Each(&a),
        PerRow::Each(&b),
        PerRow::Each(&ts),
        &mut serial,
    );
    let split =
        pool.install(|| batch::slerp(PerRow::Each(&a), PerRow::Each(&b), PerRow::Each(&ts)));
    assert_eq!(bits(&split), bits(&serial));
}

fn unit_vector() -> impl Strategy<Value = Gf8> {
    prop::array::uniform8(-1.0f32..1.0).prop_filter_map("zero", |x| Gf8::normalize(x).ok())
}

proptest! {
    #[test]
    fn backends_agree_on_random_pairs(
        pairs in prop::collection::vec((unit_vector(), unit_vector(), -0.25f32..1.25), 0..40),
    ) {
        let a: Vec<Gf8> = pairs.iter().map(|p| p.0).collect();
        let b: Vec<Gf8> = pairs.iter().map(|p| p.1).collect();
        let t: Vec<f32> = pairs.iter().map(|p| p.2).collect();
        check_geodesic(PerRow::Each(&a), PerRow::Each(&b));
        check_slerp(PerRow::Each(&a), PerRow::Each(&b), PerRow::Each(&t));
        if let Some(&q) = b.first() {
            check_geodesic(PerRow::All(q), PerRow::Each(&a));
            check_slerp(PerRow::Each(&a), PerRow::All(q), PerRow::Each(&t));
        }
    }
}
