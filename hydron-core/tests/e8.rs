//! The E8 root system, and the closed-form quantizer against brute force.

mod common;

use hydron_core::{E8Point, E8Root, Gf8, E8_ROOTS, E8_ROOT_COUNT};
use proptest::prelude::*;

use common::SplitMix64;

/// Two answers of the quantizer may differ only when their cosines are
/// this close (a near-tie, decided by f32 rounding).
const TIE: f64 = 1e-6;

/// Cosine in f64 (the roots and `v` are unit within 1e-7).
fn cosine(root: E8Root, v: Gf8) -> f64 {
    let r = root.to_gf8();
    (0..8).map(|k| f64::from(r[k]) * f64::from(v[k])).sum()
}

/// Checks the closed form against brute force on `v`; returns whether they
/// picked different (tied) roots.
fn check_against_brute_force(v: Gf8) -> bool {
    let fast = v.nearest_root();
    let slow = E8Root::nearest_brute_force(v);
    if fast == slow {
        return false;
    }
    let gap = cosine(slow, v) - cosine(fast, v);
    assert!(
        gap < TIE,
        "{v:?}: closed form gives root {} (cos {}), brute force root {} (cos {})",
        fast.code(),
        cosine(fast, v),
        slow.code(),
        cosine(slow, v)
    );
    true
}

#[test]
fn roots_form_the_e8_root_system() {
    assert_eq!(E8_ROOTS.len(), E8_ROOT_COUNT);
    assert_eq!(E8Root::all().len(), 240);
    let mut integer = 0;
    let mut half = 0;
    for (code, root) in E8_ROOTS.iter().enumerate() {
        assert!((f64::from(root.norm()) - 1.0).abs() < 1e-6, "root {code}");
        assert_eq!(E8Root::new(code as u8).unwrap().to_gf8(), *root);
        let nonzero = root.as_array().iter().filter(|&&x| x != 0.0).count();
        match nonzero {
            2 => integer += 1,
            8 => half += 1,
            n => panic!("root {code} has {n} non-zero coordinates"),
        }
        // Scaled by √2, it is an E8 point of squared norm 2.
        let point = E8Point::from(E8Root::new(code as u8).unwrap());
        assert_eq!(point.norm_sq(), 2);
        assert_eq!(point.to_root().map(E8Root::code), Some(code as u8));
    }
    assert_eq!((integer, half), (112, 128));
    // The integer-type roots come first.
    assert!(E8_ROOTS[..112]
        .iter()
        .all(|r| r[0] == 0.0 || r[0].abs() > 0.5));
    assert!(E8_ROOTS[112..]
        .iter()
        .all(|r| r.as_array().iter().all(|x| x.abs() < 0.5)));
}

#[test]
fn pairwise_cosines_and_neighbours() {
    for (i, a) in E8_ROOTS.iter().enumerate() {
        let mut neighbours = 0;
        for (j, b) in E8_ROOTS.iter().enumerate() {
            let cos = f64::from(a.dot(*b));
            let nearest_allowed = [-1.0, -0.5, 0.0, 0.5, 1.0]
                .into_iter()
                .map(|c: f64| (cos - c).abs())
                .fold(f64::INFINITY, f64::min);
            assert!(nearest_allowed < 1e-6, "roots {i}, {j}: cosine {cos}");
            if i == j {
                assert!((cos - 1.0).abs() < 1e-6);
            } else {
                assert!(cos < 0.9, "roots {i} and {j} coincide");
            }
            if (cos - 0.5).abs() < 1e-6 {
                neighbours += 1;
            }
        }
        assert_eq!(neighbours, 56, "root {i}");
    }
}

#[test]
fn from_bits_even_parity_lands_on_half_roots() {
    for bits in 0..=255u8 {
        let root = E8Root::from_bits_even_parity(bits);
        let v = Gf8::from_bits_even_parity(bits);
        assert_eq!(root.to_gf8(), v);
        // The expected signs: the bits, with bit 0 flipped when odd.
        let mask = if bits.count_ones() % 2 == 1 {
            bits ^ 1
        } else {
            bits
        };
        for k in 0..8 {
            assert_eq!(
                v[k] < 0.0,
                mask & (1 << k) != 0,
                "bits {bits:#010b}, coordinate {k}"
            );
            assert!((f64::from(v[k]).abs() - 8f64.sqrt().recip()).abs() < 1e-7);
        }
        assert!(root.code() >= 112);
        // Bit patterns that differ only in bit 0 give the same root.
        assert_eq!(E8Root::from_bits_even_parity(bits ^ 1), root);
    }
}

/// Compares the closed form with brute force on `count` random unit
/// vectors (uniform on the sphere); returns the number of near-ties that
/// were resolved differently.
fn compare_on_random_vectors(seed: u64, count: usize) -> usize {
    let mut rng = SplitMix64(seed);
    let mut ties = 0;
    for _ in 0..count {
        let v = Gf8::normalize(rng.gaussian8()).unwrap();
        if check_against_brute_force(v) {
            ties += 1;
        }
    }
    ties
}

#[test]
fn nearest_root_matches_brute_force_on_random_vectors() {
    // Random vectors almost never sit on a tie.
    let ties = compare_on_random_vectors(0x05EE_D0E8, 50_000);
    assert!(ties < 5, "{ties} near-ties out of 50000");
}

/// One million brute-force searches (240 dot products each). hydron-core
/// is built with `opt-level = 2` even in dev/test profiles (see the root
/// `Cargo.toml`), which keeps this to about a second.
#[test]
fn nearest_root_matches_brute_force_on_a_million_random_vectors() {
    let ties = compare_on_random_vectors(0x00E8_0001, 1_000_000);
    assert!(ties < 20, "{ties} near-ties out of 1000000");
}

#[test]
fn nearest_root_on_adversarial_inputs() {
    let mut inputs: Vec<Gf8> = Vec::new();
    let mut rng = SplitMix64(99);
    // The roots themselves, and with small noise: the answer is the root.
    for root in E8Root::all() {
        let r = root.to_gf8();
        assert_eq!(r.nearest_root(), root);
        assert_eq!(E8Root::nearest_brute_force(r), root);
        assert_eq!((-r).nearest_root().to_gf8(), -r);
        for _ in 0..20 {
            let noise = rng.gaussian8();
            let noisy = Gf8::normalize(core::array::from_fn(|k| r[k] + 1e-3 * noise[k])).unwrap();
            assert_eq!(noisy.nearest_root(), root);
            inputs.push(noisy);
        }
    }
    // Exact ties: midpoints of neighbouring roots, and centres of root
    // triangles, which are equally close to two or three roots.
    for a in E8Root::all() {
        for b in E8Root::all() {
            let (ra, rb) = (a.to_gf8(), b.to_gf8());
            if (ra.dot(rb) - 0.5).abs() < 1e-6 {
                inputs.push(ra + rb);
            }
        }
    }
    // Zeros and negative zeros, sparse vectors, one-hot vectors, diagonals.
    for mask in 0..=255u32 {
        let signs: [f32; 8] =
            core::array::from_fn(|k| if mask & (1 << k) != 0 { -1.0 } else { 1.0 });
        let zeros: [f32; 8] =
            core::array::from_fn(|k| if mask & (1 << k) != 0 { -0.0 } else { 0.0 });
        inputs.push(Gf8::try_new(zeros).unwrap());
        inputs.push(Gf8::normalize(signs).unwrap());
        for k in 0..8 {
            let mut one_hot = zeros;
            one_hot[k] = signs[k];
            inputs.push(Gf8::try_new(one_hot).unwrap());
            // Seven equal coordinates and a zero (or negative zero).
            let mut seven = signs;
            seven[k] = zeros[k];
            inputs.push(Gf8::normalize(seven).unwrap());
            // Two equal largest coordinates and equal smaller ones.
            let mut two = signs.map(|s| 0.25 * s);
            two[k] = signs[k];
            two[(k + 3) % 8] = signs[(k + 3) % 8];
            inputs.push(Gf8::normalize(two).unwrap());
        }
        // A tie between the two kinds: (3, 3, 1, 1, 1, 1, 1, 1) has cosine
        // 6/√2 with (1, 1, 0, …)/√2 and (6 + 6)/√8 = 6/√2 with (1, …, 1)/√8
        // (up to its norm), with these signs (when their count is even).
        let mut tie = signs.map(|s| s / 3.0);
        tie[0] = signs[0];
        tie[1] = signs[1];
        inputs.push(Gf8::normalize(tie).unwrap());
    }
    let mut ties = 0;
    for &v in &inputs {
        if check_against_brute_force(v) {
            ties += 1;
        }
    }
    assert!(inputs.len() > 10_000);
    // Many of these are exact ties; the two methods may break them
    // differently, but never pick a worse root.
    println!(
        "{} adversarial inputs, {ties} resolved differently",
        inputs.len()
    );
}

#[test]
fn zero_vector_has_code_zero() {
    assert_eq!(Gf8::ZERO.nearest_root().code(), 0);
    assert_eq!(E8Root::nearest_brute_force(Gf8::ZERO).code(), 0);
    // With negative zeros every root is equally (un)related; the sign bits
    // pick the signs of the first pair, as in the SIMD kernels.
    let negative_zero = Gf8::try_new([-0.0; 8]).unwrap();
    assert_eq!(negative_zero, Gf8::ZERO);
    assert_eq!(negative_zero.nearest_root().code(), 3);
}

#[test]
fn nearest_root_of_huge_coordinates_does_not_overflow() {
    // The scores sum up to eight magnitudes; near f32::MAX they used to
    // overflow to ∞ = ∞, and the integer-type root 0 won every time.
    let v = Gf8::new_unchecked([3e38; 8]);
    assert_eq!(v.nearest_root().code(), 112, "all positive: (½)^8");
    assert_eq!(
        v.nearest_root(),
        Gf8::from_scalar(1.0).unwrap().nearest_root()
    );
    let w = Gf8::new_unchecked([f32::MAX, -f32::MAX, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(
        w.nearest_root(),
        Gf8::normalize([1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
            .unwrap()
            .nearest_root()
    );
    // Non-finite input keeps its old (unscaled) answer.
    let nan = Gf8::new_unchecked([f32::NAN, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let _ = nan.nearest_root();
}

proptest! {
    #[test]
    fn nearest_root_of_huge_vectors_is_that_of_the_scaled_down_vector(
        x in proptest::array::uniform8(-1.0f32..1.0),
        exponent in 100i32..128,
    ) {
        // Scaling by a power of two is exact (nothing underflows here), so
        // the direction and the answer must not change.
        let huge = x.map(|c| c * 2f32.powi(exponent));
        prop_assume!(huge.iter().all(|c| c.is_finite()));
        let scaled = huge.map(|c| c * 2f32.powi(-100));
        prop_assert_eq!(
            Gf8::new_unchecked(huge).nearest_root(),
            Gf8::new_unchecked(scaled).nearest_root()
        );
    }

    #[test]
    fn nearest_root_is_optimal(x in proptest::array::uniform8(-1.0f32..1.0)) {
        let v = Gf8::normalize(x).unwrap();
        check_against_brute_force(v);
        // Optimal among all roots, directly.
        let best = E8Root::all().map(|r| cosine(r, v)).fold(f64::NEG_INFINITY, f64::max);
        prop_assert!(cosine(v.nearest_root(), v) > best - TIE);
    }

    #[test]
    fn nearest_root_ignores_scale(x in proptest::array::uniform8(-1.0f32..1.0), scale in 1e-30f32..1e30) {
        let v = Gf8::normalize(x).unwrap();
        let w = Gf8::normalize(x.map(|c| c * scale)).unwrap();
        let (rv, rw) = (v.nearest_root(), w.nearest_root());
        if rv != rw {
            prop_assert!((cosine(rv, v) - cosine(rw, v)).abs() < TIE);
        }
    }
}

#[test]
fn a_near_tie_within_f32_rounding_goes_as_the_closed_form_rounds_on_every_backend() {
    // Root 127's cosine is larger by 5.4e-8, below the f32 rounding of the
    // closed form's two scores: the closed form (and every batch kernel)
    // returns root 2, as its documentation says it may.
    let v = Gf8::try_new([
        0.578_983_7,
        -0.578_983_66,
        -0.097_856_63,
        -0.038_491_856,
        -0.373_297_04,
        0.356_711_45,
        0.077_299_33,
        0.214_311_24,
    ])
    .unwrap();
    assert_eq!(v.nearest_root().code(), 2);
    assert_eq!(E8Root::nearest_brute_force(v).code(), 127);
    let gap = cosine(E8Root::nearest_brute_force(v), v) - cosine(v.nearest_root(), v);
    assert!(gap > 0.0 && gap < 2e-7, "{gap}");
    assert!(check_against_brute_force(v), "within the test's tie band");
    for backend in hydron_core::batch::backends() {
        let mut out = [E8Root::new(0).unwrap(); 33];
        backend.nearest_roots_into(&[v; 33], &mut out);
        assert!(out.iter().all(|r| r.code() == 2), "{backend:?}");
    }
}
