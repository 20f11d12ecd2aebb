//! Sphere geometry: geodesic distance, slerp, log/exp maps, means.

use core::f64::consts::PI;

use hydron_core::{Gf8, Gf8Error};
use proptest::prelude::*;

fn e(k: usize) -> Gf8 {
    let mut x = [0.0; 8];
    x[k] = 1.0;
    Gf8::try_new(x).unwrap()
}

/// The unit vector at `angle` radians in the plane of e0 and e1.
fn on_circle(angle: f64) -> Gf8 {
    let mut x = [0.0f32; 8];
    x[0] = angle.cos() as f32;
    x[1] = angle.sin() as f32;
    Gf8::normalize(x).unwrap()
}

/// The angle of a vector in the e0–e1 plane, from its actual coordinates.
fn plane_angle(v: Gf8) -> f64 {
    f64::from(v[1]).atan2(f64::from(v[0]))
}

fn unit_vector() -> impl Strategy<Value = Gf8> {
    proptest::array::uniform8(-1.0f32..1.0)
        .prop_filter("not too short", |x| {
            x.iter().map(|v| v * v).sum::<f32>() > 1e-4
        })
        .prop_map(|x| Gf8::normalize(x).unwrap())
}

/// `Σ log_m(p_i)`: the gradient of half the sum of squared distances.
fn gradient(mean: Gf8, points: &[Gf8]) -> f64 {
    let mut sum = [0.0f64; 8];
    for &p in points {
        let v = mean.log_map(p);
        for k in 0..8 {
            sum[k] += f64::from(v[k]);
        }
    }
    sum.iter().map(|x| x * x).sum::<f64>().sqrt() / points.len() as f64
}

#[test]
fn distance_is_accurate_for_nearly_equal_vectors() {
    for angle in [1e-4, 3e-4, 1e-3, 1e-2] {
        let a = e(0);
        let b = on_circle(angle);
        let truth = plane_angle(b);
        let d = f64::from(a.geodesic_distance(b));
        assert!(
            ((d - truth) / truth).abs() < 1e-3,
            "angle {angle}: {d} vs {truth}"
        );
    }
    // acos of the f32 dot product cannot do this: cos(1e-4) rounds to 1.
    assert_eq!(e(0).dot(on_circle(1e-4)).acos(), 0.0);
    // Nor can acos in f64 for the tiny angles f32 vectors can still make.
    for tiny in [1e-8f32, 1e-12, 1e-30] {
        let b = Gf8::normalize([1.0, tiny, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
        assert_eq!(b[0], 1.0);
        let truth = plane_angle(b);
        let d = f64::from(e(0).geodesic_distance(b));
        assert!(((d - truth) / truth).abs() < 1e-6, "{tiny}: {d} vs {truth}");
    }
}

#[test]
fn distance_is_accurate_for_nearly_opposite_vectors() {
    for deficit in [1e-4, 1e-3, 1e-2] {
        let a = e(0);
        let b = on_circle(PI - deficit);
        let truth = plane_angle(b);
        let d = f64::from(a.geodesic_distance(b));
        // The result is an f32 near π (ulp 2.4e-7).
        assert!(
            (d - truth).abs() < 5e-7,
            "deficit {deficit}: {d} vs {truth}"
        );
        assert!(d <= f64::from(core::f32::consts::PI));
    }
    let a = Gf8::normalize([1.0, -2.0, 3.0, -4.0, 5.0, -6.0, 7.0, -8.0]).unwrap();
    assert_eq!(a.geodesic_distance(-a), core::f32::consts::PI);
    assert_eq!(a.geodesic_distance(a), 0.0);
}

#[test]
fn distance_agrees_with_acos_away_from_the_ends() {
    let a = Gf8::normalize([0.3, -0.1, 0.5, 0.2, -0.7, 0.1, 0.05, 0.4]).unwrap();
    for k in 0..8 {
        let b = e(k);
        let dot: f64 = (0..8).map(|i| f64::from(a[i]) * f64::from(b[i])).sum();
        let norm_a: f64 = (0..8).map(|i| f64::from(a[i]).powi(2)).sum::<f64>().sqrt();
        let truth = (dot / norm_a).acos();
        assert!((f64::from(a.geodesic_distance(b)) - truth).abs() < 1e-6);
    }
}

#[test]
fn slerp_moves_at_constant_speed_along_the_arc() {
    let a = on_circle(0.2);
    let b = on_circle(1.7);
    for i in 0..=16 {
        let t = i as f32 / 16.0;
        let p = a.slerp(b, t);
        let expected = 0.2 + 1.5 * f64::from(t);
        assert!((plane_angle(p) - expected).abs() < 1e-6, "t = {t}");
        assert!((p.norm() - 1.0).abs() < 1e-6);
        assert!(p.as_array()[2..].iter().all(|&x| x == 0.0));
    }
}

#[test]
fn slerp_of_nearly_parallel_and_nearly_opposite_vectors() {
    // Neighbouring f32 vectors: the arc is ~1e-7 long.
    let a = e(0);
    let b = Gf8::normalize([1.0, 1e-7, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let mid = a.slerp(b, 0.5);
    assert!((mid.norm() - 1.0).abs() < 1e-6);
    assert!(mid[0] == 1.0 && (0.0..=1e-7).contains(&mid[1]), "{mid:?}");
    // Nearly opposite (not exactly): follows the actual shorter arc, in the
    // e0–e1 plane, not J·a.
    let c = on_circle(PI - 1e-3);
    let mid = a.slerp(c, 0.5);
    assert!(
        (plane_angle(mid) - (PI - 1e-3) / 2.0).abs() < 1e-5,
        "{mid:?}"
    );
}

#[test]
fn log_and_exp_are_inverse() {
    let a = Gf8::normalize([0.1, 0.9, -0.3, 0.2, 0.0, 0.4, -0.5, 0.3]).unwrap();
    for k in 0..8 {
        for b in [e(k), -e(k), on_circle(0.1 * k as f64)] {
            let v = a.log_map(b);
            let length = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
            assert!((length - f64::from(a.geodesic_distance(b))).abs() < 1e-6);
            // Tangent: perpendicular to a.
            let along: f64 = (0..8).map(|i| f64::from(v[i]) * f64::from(a[i])).sum();
            assert!(along.abs() < 1e-6);
            let back = a.exp_map(v).unwrap();
            assert!(back.geodesic_distance(b) < 1e-5, "{b:?} -> {back:?}");
        }
    }
    // The exp map wraps around: a full turn (along a tangent of length 2π)
    // returns to the start, half a turn reaches the antipode.
    let direction = Gf8::normalize(a.log_map(e(2))).unwrap();
    let turn = a
        .exp_map(direction.scale(2.0 * core::f32::consts::PI))
        .unwrap();
    assert!(turn.geodesic_distance(a) < 1e-5);
    let half = a.exp_map(direction.scale(core::f32::consts::PI)).unwrap();
    assert!(half.geodesic_distance(-a) < 1e-5);
    // The part of a tangent along `a` is ignored (`0.7·a` rounded to f32 is
    // parallel to `a` within ~1e-7).
    let along = a.exp_map(a.scale(0.7)).unwrap();
    assert!(along.geodesic_distance(a) < 1e-6);
    assert_eq!(a.exp_map(e(0).scale(0.0)), Ok(a));
    assert_eq!(
        a.exp_map([0.0, 0.0, f32::INFINITY, 0.0, 0.0, 0.0, 0.0, 0.0]),
        Err(Gf8Error::Infinite {
            coordinate: 2,
            value: f32::INFINITY
        })
    );
}

#[test]
fn mean_of_two_points_is_the_slerp_midpoint() {
    let a = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]).unwrap();
    for b in [
        e(0),
        -e(7),
        on_circle(2.5),
        Gf8::from_scalar(-1.0).unwrap().slerp(a, 0.1),
    ] {
        let mid = a.slerp(b, 0.5);
        let mean = Gf8::spherical_mean(&[a, b]).unwrap();
        assert!(mean.geodesic_distance(mid) < 1e-6, "{b:?}");
        let euclid = Gf8::normalized_euclidean_mean(&[a, b]).unwrap();
        assert!(euclid.geodesic_distance(mid) < 1e-6, "{b:?}");
    }
}

#[test]
fn mean_at_0_0_90_degrees() {
    let points = [e(0), e(0), e(1)];
    let karcher = Gf8::spherical_mean(&points).unwrap();
    let euclid = Gf8::normalized_euclidean_mean(&points).unwrap();
    assert!(
        (plane_angle(karcher) - PI / 6.0).abs() < 1e-6,
        "{karcher:?}"
    );
    assert!(
        (plane_angle(euclid) - 0.5f64.atan()).abs() < 1e-6,
        "{euclid:?}"
    );
    assert!((plane_angle(euclid).to_degrees() - 26.565).abs() < 1e-3);
    assert!(gradient(karcher, &points) < 1e-6);
    // The Euclidean mean is not a critical point of the Fréchet function.
    assert!(gradient(euclid, &points) > 1e-2);
}

#[test]
fn mean_of_symmetric_configurations_is_the_centre() {
    // A centre, and pairs placed symmetrically around it in orthogonal
    // directions at several distances.
    let centre = Gf8::normalize([1.0, 1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0]).unwrap();
    let mut points = Vec::new();
    for (k, angle) in [(0usize, 0.3f32), (3, 0.8), (5, 1.2)] {
        let mut direction = [0.0f32; 8];
        direction[k] = angle;
        let tangent = centre.log_map(centre.exp_map(direction).unwrap());
        let minus = tangent.map(|x| -x);
        points.push(centre.exp_map(tangent).unwrap());
        points.push(centre.exp_map(minus).unwrap());
    }
    let mean = Gf8::spherical_mean(&points).unwrap();
    assert!(mean.geodesic_distance(centre) < 1e-6, "{mean:?}");
    let euclid = Gf8::normalized_euclidean_mean(&points).unwrap();
    assert!(euclid.geodesic_distance(centre) < 1e-6, "{euclid:?}");

    // The 16 vectors ±e_k around ... have no mean; neither do 3 points
    // spread evenly on a great circle.
    let all: Vec<Gf8> = (0..8).flat_map(|k| [e(k), -e(k)]).collect();
    assert_eq!(Gf8::spherical_mean(&all), Err(Gf8Error::NoUniqueMean));
    assert_eq!(
        Gf8::normalized_euclidean_mean(&all),
        Err(Gf8Error::NoUniqueMean)
    );
    let spread = [
        on_circle(0.0),
        on_circle(2.0 * PI / 3.0),
        on_circle(4.0 * PI / 3.0),
    ];
    assert_eq!(Gf8::spherical_mean(&spread), Err(Gf8Error::NoUniqueMean));
    assert_eq!(Gf8::spherical_mean(&[]), Err(Gf8Error::EmptyInput));
    assert_eq!(
        Gf8::normalized_euclidean_mean(&[]),
        Err(Gf8Error::EmptyInput)
    );
}

#[test]
fn mean_of_a_wide_cluster_is_a_critical_point() {
    // Deterministic points spread up to ~70° around a pole.
    let pole = Gf8::normalize([0.2, -0.4, 0.1, 0.7, 0.3, -0.2, 0.5, 0.1]).unwrap();
    let mut state = 0x1234_5678_9ABC_DEF0u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    let points: Vec<Gf8> = (0..50)
        .map(|_| {
            let tangent: [f32; 8] = core::array::from_fn(|_| next() * 0.45);
            pole.exp_map(tangent).unwrap()
        })
        .collect();
    let mean = Gf8::spherical_mean(&points).unwrap();
    assert!(gradient(mean, &points) < 1e-6);
    // It minimizes the sum of squared distances among nearby points.
    let cost = |m: Gf8| -> f64 {
        points
            .iter()
            .map(|&p| f64::from(m.geodesic_distance(p)).powi(2))
            .sum()
    };
    for k in 0..8 {
        let mut nudge = [0.0f32; 8];
        nudge[k] = 1e-3;
        let moved = mean.exp_map(nudge).unwrap();
        assert!(cost(moved) >= cost(mean) - 1e-9, "direction {k}");
    }
}

#[test]
fn weighted_mean_matches_repeated_points() {
    let a = e(0);
    let b = e(1);
    let c = Gf8::normalize([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]).unwrap();
    let weighted = Gf8::weighted_spherical_mean(&[(a, 2.0), (b, 1.0), (c, 3.0)]).unwrap();
    let repeated = Gf8::spherical_mean(&[a, a, b, c, c, c]).unwrap();
    assert!(weighted.geodesic_distance(repeated) < 1e-6);
    // Only the ratios matter.
    let scaled = Gf8::weighted_spherical_mean(&[(a, 2e-3), (b, 1e-3), (c, 3e-3)]).unwrap();
    assert!(weighted.geodesic_distance(scaled) < 1e-6);
    // A weight of zero drops the point.
    let dropped = Gf8::weighted_spherical_mean(&[(a, 1.0), (b, 1.0), (c, 0.0)]).unwrap();
    assert!(dropped.geodesic_distance(a.slerp(b, 0.5)) < 1e-6);
}

/// The weighted Fréchet function `Σ w_i d(m, p_i)²` in `f64`, on exact
/// unit `f64` vectors (independent of the crate's geometry).
fn frechet64(m: &[f64; 8], points: &[([f64; 8], f64)]) -> f64 {
    points
        .iter()
        .map(|(p, w)| {
            let diff: f64 = (0..8).map(|k| (m[k] - p[k]).powi(2)).sum::<f64>().sqrt();
            let sum: f64 = (0..8).map(|k| (m[k] + p[k]).powi(2)).sum::<f64>().sqrt();
            let theta = 2.0 * diff.atan2(sum);
            w * theta * theta
        })
        .sum()
}

fn unit64(v: Gf8) -> [f64; 8] {
    let x = v.to_array().map(f64::from);
    let n = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    x.map(|v| v / n)
}

/// A brute-force minimizer of the Fréchet function over the unit sphere of
/// the span of e0, e1, e2 (where every test set below lies, so the mean
/// does too): a grid over the sphere, then grids shrinking around the best
/// point until the step is below 1e-10 radians.
fn oracle_mean_3d(points: &[(Gf8, f32)]) -> [f64; 8] {
    let points: Vec<([f64; 8], f64)> = points
        .iter()
        .map(|&(p, w)| (unit64(p), f64::from(w)))
        .collect();
    let at = |polar: f64, azimuth: f64| -> [f64; 8] {
        let mut m = [0.0; 8];
        m[0] = polar.sin() * azimuth.cos();
        m[1] = polar.sin() * azimuth.sin();
        m[2] = polar.cos();
        m
    };
    let (mut best_polar, mut best_azimuth, mut best) = (0.0, 0.0, f64::INFINITY);
    for i in 0..=180 {
        for j in 0..360 {
            let (polar, azimuth) = (PI * f64::from(i) / 180.0, 2.0 * PI * f64::from(j) / 360.0);
            let f = frechet64(&at(polar, azimuth), &points);
            if f < best {
                (best_polar, best_azimuth, best) = (polar, azimuth, f);
            }
        }
    }
    let mut step = PI / 180.0;
    while step > 1e-10 {
        let (centre_polar, centre_azimuth) = (best_polar, best_azimuth);
        for i in -10..=10 {
            for j in -10..=10 {
                let polar = centre_polar + step * f64::from(i) / 5.0;
                let azimuth = centre_azimuth + step * f64::from(j) / 5.0;
                let f = frechet64(&at(polar, azimuth), &points);
                if f < best {
                    (best_polar, best_azimuth, best) = (polar, azimuth, f);
                }
            }
        }
        step /= 4.0;
    }
    at(best_polar, best_azimuth)
}

fn angle_to(m: Gf8, oracle: &[f64; 8]) -> f64 {
    let m = unit64(m);
    let dot: f64 = (0..8).map(|k| m[k] * oracle[k]).sum();
    let cross: f64 = (0..8)
        .map(|k| (m[k] - dot * oracle[k]).powi(2))
        .sum::<f64>()
        .sqrt();
    cross.atan2(dot)
}

/// The unit vector `cos θ · pole + sin θ · direction` (for a unit
/// `direction` perpendicular to `pole`), rounded to `Gf8`.
fn at_angle(pole: &[f64; 8], direction: &[f64; 8], theta: f64) -> Gf8 {
    let x: [f32; 8] =
        core::array::from_fn(|k| (theta.cos() * pole[k] + theta.sin() * direction[k]) as f32);
    Gf8::normalize(x).unwrap()
}

#[test]
fn mean_of_a_set_near_the_rim_converges() {
    // The set of issue 10: every point within 1.55 rad of e0, so the mean
    // is unique; the fixed-step iteration needed 244 steps and gave up.
    let (c, s) = (1.55f32.cos(), 1.55f32.sin());
    let p1 = Gf8::normalize([c, s, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let p2 = Gf8::normalize([c, -s, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let p3 = Gf8::normalize([c, 0.0, s, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let set = [(p1, 1.0), (p2, 1.0), (p3, 0.1)];
    let mean = Gf8::weighted_spherical_mean(&set).unwrap();
    let oracle = oracle_mean_3d(&set);
    assert!(angle_to(mean, &oracle) < 1e-6, "{mean:?} vs {oracle:?}");
    assert!((f64::from(mean[0]) - 0.5377).abs() < 1e-4, "{mean:?}");
    assert!(f64::from(mean[1]).abs() < 1e-6, "{mean:?}");
    assert!((f64::from(mean[2]) - 0.8431).abs() < 1e-4, "{mean:?}");
}

#[test]
fn means_at_the_rim_of_the_hemisphere_match_the_oracle() {
    // Points at up to π/2 − 1e-3 from a pole, in the e0–e1–e2 sphere, with
    // weights from 1e-3 to 1e3.
    let mut state = 0x00DD_BA11_u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for trial in 0..12 {
        let pole = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let count = 2 + trial % 5;
        let set: Vec<(Gf8, f32)> = (0..count)
            .map(|_| {
                let azimuth = 2.0 * PI * next();
                let mut direction = [0.0; 8];
                direction[1] = azimuth.cos();
                direction[2] = azimuth.sin();
                let theta = PI / 2.0 - 1e-3 - 0.2 * next() * f64::from(u8::from(trial % 2 == 0));
                let weight = 10f64.powf(6.0 * next() - 3.0) as f32;
                (at_angle(&pole, &direction, theta), weight)
            })
            .collect();
        let mean = Gf8::weighted_spherical_mean(&set).unwrap_or_else(|e| panic!("{trial}: {e}"));
        let oracle = oracle_mean_3d(&set);
        assert!(
            angle_to(mean, &oracle) < 1e-5,
            "trial {trial}: {mean:?} vs {oracle:?}"
        );
    }
}

#[test]
fn heavily_weighted_means_converge() {
    let (c, s) = (1.5f32.cos(), 1.5f32.sin());
    let p = Gf8::normalize([c, s, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let q = Gf8::normalize([c, -s, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let r = Gf8::normalize([c, 0.0, s, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    for weights in [
        [1e6, 1.0, 1.0],
        [1.0, 1e-6, 1e6],
        [f32::MAX, f32::MAX, 1.0],
        [1e-30, 1e-30, 1e-31],
        [1.0, 1.0, 1e-6],
    ] {
        let set = [(p, weights[0]), (q, weights[1]), (r, weights[2])];
        let mean = Gf8::weighted_spherical_mean(&set).unwrap();
        let oracle = oracle_mean_3d(&set);
        assert!(
            angle_to(mean, &oracle) < 1e-5,
            "{weights:?}: {mean:?} vs {oracle:?}"
        );
    }
}

/// `Σ w_i log_m(p_i) / Σ w_i` in `f64`, from the crate's log map.
fn weighted_gradient(mean: Gf8, set: &[(Gf8, f32)]) -> f64 {
    let mut sum = [0.0f64; 8];
    let mut total = 0.0;
    for &(p, w) in set {
        let v = mean.log_map(p);
        for k in 0..8 {
            sum[k] += f64::from(w) * f64::from(v[k]);
        }
        total += f64::from(w);
    }
    sum.iter().map(|x| x * x).sum::<f64>().sqrt() / total
}

#[test]
fn mean_of_ten_thousand_points_near_the_rim() {
    // 10 000 points in all eight dimensions, up to 1.5 rad from a pole,
    // most of them far out; random weights.
    let pole = unit64(Gf8::normalize([0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.6, -0.1]).unwrap());
    let mut state = 0xFEED_5EEDu64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let set: Vec<(Gf8, f32)> = (0..10_000)
        .map(|_| {
            let mut direction: [f64; 8] = core::array::from_fn(|_| next() - 0.5);
            let along: f64 = (0..8).map(|k| direction[k] * pole[k]).sum();
            for k in 0..8 {
                direction[k] -= along * pole[k];
            }
            let n = direction.iter().map(|v| v * v).sum::<f64>().sqrt();
            let direction = direction.map(|v| v / n);
            let theta = 1.5 * next().sqrt();
            (at_angle(&pole, &direction, theta), (0.1 + next()) as f32)
        })
        .collect();
    let mean = Gf8::weighted_spherical_mean(&set).unwrap();
    assert!(weighted_gradient(mean, &set) < 1e-6);
    // A local minimum: every nudge costs.
    let points: Vec<([f64; 8], f64)> = set
        .iter()
        .map(|&(p, w)| (unit64(p), f64::from(w)))
        .collect();
    let m = unit64(mean);
    let base = frechet64(&m, &points);
    for k in 0..8 {
        for sign in [1e-3, -1e-3] {
            let mut moved = m;
            moved[k] += sign;
            let n = moved.iter().map(|v| v * v).sum::<f64>().sqrt();
            let moved = moved.map(|v| v / n);
            assert!(frechet64(&moved, &points) >= base, "direction {k}");
        }
    }
    // And the unweighted mean of the same points.
    let plain: Vec<Gf8> = set.iter().map(|&(p, _)| p).collect();
    let mean = Gf8::spherical_mean(&plain).unwrap();
    assert!(gradient(mean, &plain) < 1e-6);
}

#[test]
fn undefined_and_unconverged_means_are_different_errors() {
    let z = Gf8::ZERO;
    assert_eq!(Gf8::spherical_mean(&[z, z]), Err(Gf8Error::NoUniqueMean));
    assert_eq!(
        Gf8::weighted_spherical_mean(&[(e(0), 0.0), (e(1), 0.0)]),
        Err(Gf8Error::NoUniqueMean)
    );
    assert_eq!(
        Gf8::spherical_mean(&[e(3), -e(3)]),
        Err(Gf8Error::NoUniqueMean)
    );
    let undefined = Gf8Error::NoUniqueMean.to_string();
    let unconverged = Gf8Error::MeanDidNotConverge { iterations: 100 }.to_string();
    assert!(undefined.contains("cancel out"), "{undefined}");
    assert!(
        unconverged.contains("did not converge within 100 steps"),
        "{unconverged}"
    );
    assert_ne!(undefined, unconverged);
}

proptest! {
    #[test]
    fn means_inside_a_hemisphere_are_critical_points(
        pole in unit_vector(),
        tangents in proptest::collection::vec(proptest::array::uniform8(-1.0f32..1.0), 1..20),
        reach in 0.5f64..1.5,
        weights in proptest::collection::vec(0.01f32..100.0, 20),
    ) {
        // Points at up to `reach` (< π/2) from the pole, weighted.
        let set: Vec<(Gf8, f32)> = tangents
            .iter()
            .zip(&weights)
            .map(|(t, &w)| {
                let length = t.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>().sqrt().max(1e-3);
                let scale = (reach * length.min(1.0) / length) as f32;
                (pole.exp_map(t.map(|v| v * scale)).unwrap(), w)
            })
            .collect();
        let mean = Gf8::weighted_spherical_mean(&set).unwrap();
        prop_assert!(weighted_gradient(mean, &set) < 1e-6, "{:?}", mean);
        prop_assert!((mean.norm() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn distance_is_symmetric_and_in_range(a in unit_vector(), b in unit_vector()) {
        let d = a.geodesic_distance(b);
        prop_assert_eq!(d, b.geodesic_distance(a));
        prop_assert!((0.0..=core::f32::consts::PI).contains(&d));
        prop_assert_eq!(a.geodesic_distance(a), 0.0);
        // d(a, b) + d(b, −a) = π.
        let rest = b.geodesic_distance(a.antipode());
        prop_assert!((f64::from(d) + f64::from(rest) - PI).abs() < 1e-6);
    }

    #[test]
    fn slerp_stays_unit_and_hits_endpoints(a in unit_vector(), b in unit_vector(), t in 0.0f32..=1.0) {
        prop_assert_eq!(a.slerp(b, 0.0), a);
        prop_assert_eq!(a.slerp(b, 1.0), b);
        let p = a.slerp(b, t);
        prop_assert!((p.norm() - 1.0).abs() < 1e-6);
        prop_assert!(Gf8::try_new(p.to_array()).is_ok());
        // On the arc: d(a, p) + d(p, b) = d(a, b), and d(a, p) = t·d(a, b).
        let (dab, dap, dpb) = (
            f64::from(a.geodesic_distance(b)),
            f64::from(a.geodesic_distance(p)),
            f64::from(p.geodesic_distance(b)),
        );
        prop_assert!((dap + dpb - dab).abs() < 1e-5, "{} + {} vs {}", dap, dpb, dab);
        prop_assert!((dap - f64::from(t) * dab).abs() < 1e-5);
    }

    #[test]
    fn slerp_to_the_antipode_stays_unit(a in unit_vector(), t in 0.0f32..=1.0) {
        let p = a.slerp(-a, t);
        prop_assert!((p.norm() - 1.0).abs() < 1e-6);
        prop_assert!((f64::from(a.geodesic_distance(p)) - f64::from(t) * PI).abs() < 1e-5);
    }

    #[test]
    fn exp_of_log_returns_the_target(a in unit_vector(), b in unit_vector()) {
        let back = a.exp_map(a.log_map(b)).unwrap();
        prop_assert!(back.geodesic_distance(b) < 1e-5);
        prop_assert!((back.norm() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn mean_commutes_with_coordinate_permutations(
        centre in unit_vector(),
        tangents in proptest::collection::vec(proptest::array::uniform8(-0.4f32..0.4), 1..12),
        shift in 0usize..8,
    ) {
        let points: Vec<Gf8> = tangents.iter().map(|&v| centre.exp_map(v).unwrap()).collect();
        let rotate = |v: Gf8| Gf8::try_new(core::array::from_fn(|k| v[(k + shift) % 8])).unwrap();
        let mean = Gf8::spherical_mean(&points).unwrap();
        let rotated: Vec<Gf8> = points.iter().map(|&p| rotate(p)).collect();
        let mean_of_rotated = Gf8::spherical_mean(&rotated).unwrap();
        prop_assert!(rotate(mean).geodesic_distance(mean_of_rotated) < 1e-6);
        prop_assert!(gradient(mean, &points) < 1e-6);
        prop_assert!((mean.norm() - 1.0).abs() < 1e-6);
    }
}
