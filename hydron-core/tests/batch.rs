//! Every batch backend available on this machine against the scalar
//! kernels and the per-vector methods: same accepts and first errors for
//! `validate`, bit-identical `normalize` and `dot`, identical root codes,
//! on adversarial inputs, every tail length, and random inputs. The lattice
//! kernels are in `batch_lattice.rs`.

mod common;

use common::{backends, Rng};
use hydron_core::batch::{self, Backend};
use hydron_core::{BatchError, E8Point, E8Root, Gf8, Gf8Error, E8_ROOTS};
use proptest::prelude::*;

fn bits(vs: &[Gf8]) -> Vec<[u32; 8]> {
    vs.iter().map(|v| v.as_array().map(f32::to_bits)).collect()
}

/// Bit patterns of dot products; every NaN counts as the same one (a NaN
/// payload may depend on the order of two NaN operands, and NaN only comes
/// from vectors built unchecked with NaN coordinates).
fn dot_bits(dots: &[f32]) -> Vec<u32> {
    dots.iter()
        .map(|d| {
            if d.is_nan() {
                f32::NAN.to_bits()
            } else {
                d.to_bits()
            }
        })
        .collect()
}

/// Checks that `root` is a nearest root of `v`: its cosine is the brute
/// force's best (within rounding; near-ties may pick another code).
fn assert_nearest(v: Gf8, root: E8Root) {
    let best = E8Root::nearest_brute_force(v).to_gf8().dot(v);
    let got = root.to_gf8().dot(v);
    assert!(
        got >= best - 1e-6,
        "{v:?}: root {} has cosine {got}, best is {best}",
        root.code()
    );
}

/// Runs every kernel of every backend on `arrays` (and on the vectors they
/// normalize to) and compares with the scalar kernels.
fn compare_all(arrays: &[[f32; 8]]) {
    let expected_validate = batch::scalar::validate(arrays);
    let expected_normalize = batch::scalar::normalize(arrays);
    let vectors: Vec<Gf8> = arrays.iter().map(|a| Gf8::new_unchecked(*a)).collect();
    let expected_roots = batch::scalar::nearest_roots(&vectors);
    let query = Gf8::normalize([0.3, -0.1, 0.7, 0.2, -0.5, 0.1, 0.0, 0.4]).unwrap();
    let expected_dots = batch::scalar::dot_many(query, &vectors);
    for backend in backends() {
        assert_eq!(
            backend.validate(arrays),
            expected_validate,
            "validate on {backend}, {} vectors",
            arrays.len()
        );

        let mut out = vec![Gf8::ZERO; arrays.len()];
        let result = backend.normalize_into(arrays, &mut out);
        match &expected_normalize {
            Ok(expected) => {
                assert_eq!(result, Ok(()), "normalize on {backend}");
                assert_eq!(bits(&out), bits(expected), "normalize on {backend}");
            }
            Err(error) => assert_eq!(result, Err(*error), "normalize on {backend}"),
        }

        let mut roots = vec![E8Root::new(0).unwrap(); vectors.len()];
        backend.nearest_roots_into(&vectors, &mut roots);
        assert_eq!(roots, expected_roots, "nearest roots on {backend}");
        assert!(roots.iter().all(|r| usize::from(r.code()) < 240));
        compare_checked_roots(backend, arrays, &expected_validate, &expected_roots);

        let mut dots = vec![0.0f32; vectors.len()];
        backend.dot_into(query, &vectors, &mut dots);
        assert_eq!(
            dot_bits(&dots),
            dot_bits(&expected_dots),
            "dot on {backend}"
        );
    }
    compare_copy_validated(arrays);
}

/// The fused validate-and-quantize kernel on `backend` against validating
/// and then quantizing: the same result, and the codes before a bad vector.
fn compare_checked_roots(
    backend: Backend,
    arrays: &[[f32; 8]],
    expected_validate: &Result<(), BatchError>,
    expected_roots: &[E8Root],
) {
    let mut codes = vec![E8Root::new(239).unwrap(); arrays.len()];
    let result = backend.nearest_roots_checked_into(arrays, &mut codes);
    assert_eq!(&result, expected_validate, "checked roots on {backend}");
    let done = result.err().map_or(arrays.len(), |err| err.index);
    assert_eq!(
        codes[..done],
        expected_roots[..done],
        "checked roots on {backend}"
    );
}

#[test]
fn checked_roots_stop_at_the_first_bad_vector_in_any_block() {
    let n = 3 * 1024 + 17;
    let mut rng = Rng(23);
    let vectors: Vec<Gf8> = (0..n).map(|_| rng.unit()).collect();
    let expected_roots = batch::scalar::nearest_roots(&vectors);
    let clean = Gf8::slice_as_arrays(&vectors);
    assert_eq!(
        batch::nearest_roots_checked(clean),
        Ok(expected_roots.clone())
    );
    // Positions in a block of eight, at its edges, and in the tail.
    for bad in [0, 1, 7, 8, 9, 1023, 1024, 2053, n - 2, n - 1] {
        for value in [f32::NAN, f32::INFINITY, 1.5, 1e-3] {
            let mut arrays = clean.to_vec();
            arrays[bad][bad % 8] = value;
            if bad + 1 < n {
                // A second bad vector later must not be the one reported.
                arrays[n - 1][0] = f32::NAN;
            }
            let expected = batch::scalar::validate(&arrays);
            assert!(expected.is_err());
            for backend in backends() {
                compare_checked_roots(backend, &arrays, &expected, &expected_roots);
            }
            assert_eq!(
                batch::nearest_roots_checked(&arrays),
                Err(expected.unwrap_err())
            );
        }
    }
}

#[test]
fn scalar_kernels_match_the_per_vector_methods() {
    let mut rng = Rng(1);
    let mut arrays: Vec<[f32; 8]> = (0..50).map(|_| rng.array()).collect();
    let normalized = batch::scalar::normalize(&arrays).unwrap();
    for (a, v) in arrays.iter().zip(&normalized) {
        assert_eq!(*v, Gf8::normalize(*a).unwrap());
    }
    let roots = batch::scalar::nearest_roots(&normalized);
    for (v, r) in normalized.iter().zip(&roots) {
        assert_eq!(*r, v.nearest_root());
        assert_eq!(*r, E8Root::nearest_brute_force(*v));
    }
    let dots = batch::scalar::dot_many(normalized[0], &normalized);
    for (v, d) in normalized.iter().zip(&dots) {
        assert_eq!(*d, normalized[0].dot(*v));
    }
    assert_eq!(
        batch::scalar::validate(Gf8::slice_as_arrays(&normalized)),
        Ok(())
    );
    arrays[17] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 4.0];
    let err = batch::scalar::validate(&arrays[10..]).unwrap_err();
    assert_eq!(err.index, 0);
    assert_eq!(Err(err.error), Gf8::check(&arrays[10]));
}

#[test]
fn unit_vectors_every_length() {
    let mut rng = Rng(2);
    for len in 0..=17 {
        let arrays: Vec<[f32; 8]> = (0..len).map(|_| rng.unit().to_array()).collect();
        assert_eq!(batch::validate(&arrays), Ok(()), "length {len}");
        compare_all(&arrays);
    }
    let arrays: Vec<[f32; 8]> = (0..1000).map(|_| rng.unit().to_array()).collect();
    compare_all(&arrays);
}

#[test]
fn raw_vectors_every_length() {
    let mut rng = Rng(3);
    for len in 0..=17 {
        let arrays: Vec<[f32; 8]> = (0..len).map(|_| rng.array()).collect();
        compare_all(&arrays);
    }
}

/// The special values: each put at every coordinate of every position of
/// batches of every length up to 17, among unit vectors.
#[test]
fn special_values_at_every_coordinate_and_position() {
    let specials = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        -3e38,
        1e20,
        1e-30,
        f32::MIN_POSITIVE,
        1e-45,
        -0.0,
        2.0,
    ];
    let mut rng = Rng(4);
    for len in 1..=17 {
        let base: Vec<[f32; 8]> = (0..len).map(|_| rng.unit().to_array()).collect();
        for position in 0..len {
            for coordinate in 0..8 {
                for &special in &specials {
                    let mut arrays = base.clone();
                    arrays[position][coordinate] = special;
                    compare_all(&arrays);
                }
            }
        }
    }
}

#[test]
fn validate_error_is_exactly_gf8_check_for_the_first_bad_vector() {
    let mut rng = Rng(5);
    let base: Vec<[f32; 8]> = (0..40).map(|_| rng.unit().to_array()).collect();
    let bad: [[f32; 8]; 5] = [
        [0.0, 0.0, f32::NAN, 0.0, 0.0, f32::INFINITY, 0.0, 0.0],
        [0.0, 0.0, 0.0, f32::NEG_INFINITY, f32::NAN, 0.0, 0.0, 0.0],
        [0.5; 8],
        [1e-30, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [3e38, 3e38, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    ];
    for (k, b) in bad.iter().enumerate() {
        for first in [0, 7, 8, 9, 23, 39] {
            let mut arrays = base.clone();
            arrays[first] = *b;
            // A later bad vector must not be the one reported.
            if first + 3 < arrays.len() {
                arrays[first + 3] = bad[(k + 1) % bad.len()];
            }
            let expected = Gf8::check(b).unwrap_err();
            for backend in backends() {
                let err = backend.validate(&arrays).unwrap_err();
                assert_eq!((err.index, err.error), (first, expected), "{backend}");
            }
        }
    }
    // NaN is reported before an infinity at a later coordinate, and the
    // reverse.
    assert_eq!(
        Gf8::check(&bad[0]),
        Err(Gf8Error::NotANumber { coordinate: 2 })
    );
    assert!(matches!(
        Gf8::check(&bad[1]),
        Err(Gf8Error::Infinite { coordinate: 3, .. })
    ));
}

#[test]
fn zero_vectors_are_valid_and_normalize_to_zero() {
    for len in 0..=17 {
        for zero in [[0.0f32; 8], [-0.0f32; 8]] {
            let arrays = vec![zero; len];
            for backend in backends() {
                assert_eq!(backend.validate(&arrays), Ok(()), "{backend}");
                let mut out = vec![Gf8::from_scalar(1.0).unwrap(); len];
                backend.normalize_into(&arrays, &mut out).unwrap();
                assert!(out.iter().all(|v| *v == Gf8::ZERO), "{backend}");
            }
            compare_all(&arrays);
        }
    }
}

/// Squared norms right at the edges of the accepted band `|‖x‖² − 1| ≤ 2e-5`.
#[test]
fn validate_band_edges_agree() {
    let mut arrays = Vec::new();
    for sign in [1.0f32, -1.0] {
        let edge = (1.0 + sign * 2e-5f32).sqrt();
        let mut x = edge;
        for _ in 0..6 {
            x = x.next_down();
        }
        for _ in 0..12 {
            arrays.push([x, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
            let half = x / 2.0;
            arrays.push([half, half, half, half, 0.0, 0.0, 0.0, 0.0]);
            x = x.next_up();
        }
    }
    // Both outcomes occur, so the band edge is really exercised.
    let accepted = arrays.iter().filter(|a| Gf8::check(a).is_ok()).count();
    assert!(accepted > 0 && accepted < arrays.len());
    for start in 0..arrays.len() {
        for len in [1, 8, 9, 16] {
            let end = (start + len).min(arrays.len());
            compare_all(&arrays[start..end]);
        }
    }
    // Each one alone, padded to a full block of good vectors.
    let good = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    for a in &arrays {
        let mut block = vec![good; 8];
        block[5] = *a;
        let expected = Gf8::check(a).map_err(|error| hydron_core::BatchError { index: 5, error });
        for backend in backends() {
            assert_eq!(backend.validate(&block), expected, "{backend}, {a:?}");
        }
    }
}

#[test]
fn roots_and_their_negations_map_to_themselves() {
    let vectors: Vec<Gf8> = E8_ROOTS.iter().chain(E8_ROOTS.iter()).copied().collect();
    let expected: Vec<E8Root> = E8Root::all().chain(E8Root::all()).collect();
    for backend in backends() {
        let mut out = vec![E8Root::new(0).unwrap(); vectors.len()];
        backend.nearest_roots_into(&vectors, &mut out);
        assert_eq!(out, expected, "{backend}");
    }
}

/// Exact ties: equal |x_k| (the first index must win), and vectors equally
/// close to an integer-type and a half-integer root (the integer one, the
/// lower code, must win).
#[test]
fn ties_break_like_the_scalar_code() {
    let mut arrays: Vec<[f32; 8]> = Vec::new();
    let mut rng = Rng(6);
    // All |x_k| equal, every sign pattern (odd counts make the smallest,
    // index 0, flip).
    for signs in 0..=255u32 {
        arrays.push(core::array::from_fn(|k| {
            if signs & (1 << k) != 0 {
                -0.25
            } else {
                0.25
            }
        }));
    }
    // Two, three and four equal largest coordinates at random places.
    for _ in 0..300 {
        let mut a = rng.array().map(|x| x * 0.1);
        let count = 2 + rng.below(3);
        for _ in 0..count {
            let k = rng.below(8);
            a[k] = if rng.below(2) == 0 { 0.6 } else { -0.6 };
        }
        arrays.push(a);
    }
    // Integer score (|a| + |b|)/√2 equal to the half score (Σ|x|)/√8:
    // (1, 1, 0, …) against (½)^8 … scaled so both sides round the same.
    for k in 0..8 {
        let mut a = [0.0f32; 8];
        a[k] = 1.0;
        a[(k + 3) % 8] = -1.0;
        arrays.push(a);
        arrays.push(a.map(|x| if x == 0.0 { -0.0 } else { x }));
    }
    arrays.push([1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0].map(|x| x * 3.0));
    arrays.push([2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    arrays.push([-0.0; 8]);
    arrays.push([0.0, -0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0]);
    let vectors: Vec<Gf8> = arrays.iter().map(|a| Gf8::normalize(*a).unwrap()).collect();
    let expected: Vec<E8Root> = vectors.iter().map(|v| v.nearest_root()).collect();
    // The sign patterns with an odd count are real ties: eight half roots
    // (one sign flipped) share the best cosine 3/4, and the closed form
    // picks one of them (flipping coordinate 0, the first smallest).
    for (signs, v) in vectors[..256].iter().enumerate() {
        let best = E8Root::nearest_brute_force(*v).to_gf8().dot(*v);
        let tied = E8_ROOTS
            .iter()
            .filter(|r| (r.dot(*v) - best).abs() < 1e-6)
            .count();
        assert_eq!(tied, if signs.count_ones() % 2 == 1 { 8 } else { 1 });
        assert!((v.nearest_root().to_gf8().dot(*v) - best).abs() < 1e-6);
    }
    for backend in backends() {
        for offset in 0..8 {
            let mut out = vec![E8Root::new(0).unwrap(); vectors.len() - offset];
            backend.nearest_roots_into(&vectors[offset..], &mut out);
            assert_eq!(out, expected[offset..], "{backend}, offset {offset}");
        }
    }
    compare_all(&arrays);
}

#[test]
fn nearest_roots_of_random_vectors_match_brute_force() {
    let mut rng = Rng(7);
    let vectors: Vec<Gf8> = (0..2000).map(|_| rng.unit()).collect();
    let expected = batch::scalar::nearest_roots(&vectors);
    let mut same_as_brute_force = 0;
    for (v, r) in vectors.iter().zip(&expected) {
        assert_nearest(*v, *r);
        same_as_brute_force += usize::from(*r == E8Root::nearest_brute_force(*v));
    }
    assert!(same_as_brute_force > 1990, "{same_as_brute_force}");
    for backend in backends() {
        let mut out = vec![E8Root::new(0).unwrap(); vectors.len()];
        backend.nearest_roots_into(&vectors, &mut out);
        let first_difference = out.iter().zip(&expected).position(|(a, b)| a != b);
        assert_eq!(first_difference, None, "{backend}");
    }
}

#[test]
fn dispatched_functions_match_scalar() {
    let mut rng = Rng(8);
    let arrays: Vec<[f32; 8]> = (0..101).map(|_| rng.array()).collect();
    let normalized = batch::normalize(&arrays).unwrap();
    assert_eq!(
        bits(&normalized),
        bits(&batch::scalar::normalize(&arrays).unwrap())
    );
    let mut out = vec![Gf8::ZERO; arrays.len()];
    batch::normalize_into(&arrays, &mut out).unwrap();
    assert_eq!(out, normalized);
    assert_eq!(batch::validate(Gf8::slice_as_arrays(&normalized)), Ok(()));
    assert!(batch::validate(&arrays).is_err());
    assert_eq!(batch::validate(&arrays), batch::scalar::validate(&arrays));
    let q = normalized[3];
    let dots = batch::dot_many(q, &normalized);
    assert_eq!(dots, batch::scalar::dot_many(q, &normalized));
    let mut dots_into = vec![0.0; normalized.len()];
    batch::dot_into(q, &normalized, &mut dots_into);
    assert_eq!(dots_into, dots);
    assert!((dots[3] - 1.0).abs() < 1e-6);
    let roots = batch::nearest_roots(&normalized);
    assert_eq!(roots, batch::scalar::nearest_roots(&normalized));
    let mut roots_into = vec![E8Root::new(0).unwrap(); normalized.len()];
    batch::nearest_roots_into(&normalized, &mut roots_into);
    assert_eq!(roots_into, roots);
}

#[test]
fn nearest_roots_of_huge_vectors_agree_on_every_backend() {
    // Coordinates near f32::MAX overflow the scores; every backend hands
    // those lanes to the rescaling scalar code, at every position.
    let mut rng = Rng(0x0B16);
    let mut arrays: Vec<[f32; 8]> = (0..64).map(|_| rng.array().map(|c| c * f32::MAX)).collect();
    arrays.extend((0..64).map(|_| rng.array()));
    arrays.push([3e38; 8]);
    arrays.push([f32::MAX, -f32::MAX, f32::MAX, 0.0, 1.0, -1.0, f32::NAN, 0.0]);
    for i in 0..8 {
        let mut x = [0.5f32; 8];
        x[i] = f32::INFINITY;
        arrays.push(x);
    }
    compare_all(&arrays);
    let vectors: Vec<Gf8> = arrays.iter().map(|a| Gf8::new_unchecked(*a)).collect();
    for (v, root) in vectors.iter().zip(batch::nearest_roots(&vectors)).take(64) {
        let scaled = Gf8::new_unchecked(v.to_array().map(|c| c * 2f32.powi(-100)));
        assert_eq!(root, scaled.nearest_root(), "{v:?}");
    }
}

#[test]
fn unavailable_backends_fall_back_to_scalar() {
    let mut rng = Rng(10);
    let vectors: Vec<Gf8> = (0..19).map(|_| rng.unit()).collect();
    for backend in Backend::ALL {
        assert_eq!(
            batch::backends().any(|b| b == backend),
            backend.is_available()
        );
        let mut out = vec![E8Root::new(0).unwrap(); vectors.len()];
        backend.nearest_roots_into(&vectors, &mut out);
        assert_eq!(out, batch::scalar::nearest_roots(&vectors), "{backend}");
    }
}

#[test]
fn backend_names() {
    let names: Vec<&str> = Backend::ALL.iter().map(|b| b.name()).collect();
    assert_eq!(names[0], "scalar");
    assert!(names[1].starts_with("wide"));
    assert_eq!(names[2], "avx2+fma");
    assert_eq!(batch::backend().to_string(), batch::backend().name());
    if cfg!(not(feature = "simd")) {
        assert_eq!(batch::backend(), Backend::Scalar);
        assert_eq!(batch::backends().count(), 1);
    } else if cfg!(all(target_arch = "wasm32", not(target_feature = "simd128"))) {
        // `wide` has no vector instructions there: the scalar kernels run.
        assert_eq!(batch::backend(), Backend::Scalar);
        assert!(!Backend::Portable.is_available());
    } else {
        assert_ne!(batch::backend(), Backend::Scalar);
    }
}

#[test]
#[should_panic(expected = "batch output has length 3, but the input has 4 vectors")]
fn normalize_into_panics_on_wrong_output_length() {
    let _ = batch::normalize_into(&[[0.0; 8]; 4], &mut [Gf8::ZERO; 3]);
}

#[test]
#[should_panic(expected = "batch output has length 9, but the input has 8 vectors")]
fn dot_into_panics_on_wrong_output_length() {
    batch::dot_into(Gf8::ZERO, &[Gf8::ZERO; 8], &mut [0.0; 9]);
}

#[test]
#[should_panic(expected = "batch output has length 0, but the input has 1 vectors")]
fn nearest_roots_into_panics_on_wrong_output_length() {
    batch::nearest_roots_into(&[Gf8::ZERO], &mut []);
}

#[test]
#[should_panic(expected = "batch output has length 2, but the input has 1 vectors")]
fn lattice_into_panics_on_wrong_output_length() {
    let _ = batch::nearest_lattice_points_into(&[[0.0; 8]], &mut [E8Point::ORIGIN; 2]);
}

#[test]
#[cfg_attr(
    panic = "abort",
    ignore = "catch_unwind needs unwinding (wasm32 aborts)"
)]
fn every_backend_panics_on_wrong_output_length() {
    for backend in Backend::ALL {
        let result = std::panic::catch_unwind(|| {
            let mut out = [Gf8::ZERO; 16];
            let _ = backend.normalize_into(&[[0.0; 8]; 17], &mut out);
        });
        assert!(result.is_err(), "{backend}");
        let result = std::panic::catch_unwind(|| {
            let mut out = [E8Root::new(0).unwrap(); 7];
            backend.nearest_roots_into(&[Gf8::ZERO; 8], &mut out);
        });
        assert!(result.is_err(), "{backend}");
        let result = std::panic::catch_unwind(|| {
            backend.dot_into(Gf8::ZERO, &[Gf8::ZERO; 8], &mut [0.0; 16]);
        });
        assert!(result.is_err(), "{backend}");
    }
}

/// Any 32-bit pattern per coordinate: NaN payloads, infinities,
/// subnormals, both zeros.
fn any_array() -> impl Strategy<Value = [f32; 8]> {
    prop::array::uniform8(any::<u32>().prop_map(f32::from_bits))
}

/// Mostly unit vectors with the occasional special value, so that both the
/// fast path and the fallback run.
fn mostly_unit_array() -> impl Strategy<Value = [f32; 8]> {
    (
        prop::array::uniform8(-1.0f32..1.0),
        prop::option::weighted(0.1, (0usize..8, any::<u32>().prop_map(f32::from_bits))),
    )
        .prop_map(|(a, special)| {
            let mut a = Gf8::normalize(a).unwrap().to_array();
            if let Some((k, x)) = special {
                a[k] = x;
            }
            a
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_bits_agree(arrays in prop::collection::vec(any_array(), 0..40)) {
        compare_all(&arrays);
    }

    #[test]
    fn mostly_unit_agree(arrays in prop::collection::vec(mostly_unit_array(), 0..70)) {
        compare_all(&arrays);
        let expected = arrays
            .iter()
            .enumerate()
            .find_map(|(index, a)| Gf8::check(a).err().map(|e| (index, e)));
        let got = batch::validate(&arrays).err().map(|e| (e.index, e.error));
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn scaled_vectors_agree(
        arrays in prop::collection::vec(prop::array::uniform8(-1.0f32..1.0), 0..40),
        exponent in -140i32..127,
    ) {
        let scale = 2.0f32.powi(exponent);
        let scaled: Vec<[f32; 8]> = arrays.iter().map(|a| a.map(|x| x * scale)).collect();
        compare_all(&scaled);
    }

    #[test]
    fn roots_are_nearest(arrays in prop::collection::vec(prop::array::uniform8(-1.0f32..1.0), 1..40)) {
        let vectors = batch::normalize(&arrays).unwrap();
        let roots = batch::nearest_roots(&vectors);
        for (v, r) in vectors.iter().zip(&roots) {
            assert_nearest(*v, *r);
        }
    }
}

// ---------------------------------------------------------------------------
// copy_validated_into / copy_validated_uninit: the fused copy-and-check
// kernel of the binary decoders, against copying and then validating.

/// `arrays` as little-endian `f32` bytes, after `offset` filler bytes (so
/// that the kernels read from every alignment).
fn le_bytes_after(offset: usize, arrays: &[[f32; 8]]) -> Vec<u8> {
    let mut buf = vec![0xA5; offset];
    for x in arrays.as_flattened() {
        buf.extend_from_slice(&x.to_le_bytes());
    }
    buf
}

fn array_bits(arrays: &[[f32; 8]]) -> Vec<[u32; 8]> {
    arrays.iter().map(|a| a.map(f32::to_bits)).collect()
}

/// Both forms of the fused kernel on every backend, and the dispatched
/// functions, at source offsets 0..4, against copying and then
/// `batch::scalar::validate`: the same result (index and error), and the
/// vectors before the first bad one copied bit for bit (all of them on
/// success).
fn compare_copy_validated(arrays: &[[f32; 8]]) {
    let n = arrays.len();
    let expected = batch::scalar::validate(arrays);
    let copied = expected.map_or_else(|e| e.index, |()| n);
    let expected_bits = array_bits(&arrays[..copied]);
    let sentinel = [7.0f32; 8];
    for offset in 0..4 {
        let buf = le_bytes_after(offset, arrays);
        let bytes = &buf[offset..];
        for backend in backends() {
            let mut out = vec![sentinel; n];
            let result = backend.copy_validated_into(bytes, &mut out);
            assert_eq!(result, expected, "{backend}, offset {offset}, {n} vectors");
            assert_eq!(array_bits(&out[..copied]), expected_bits, "{backend}");

            // Spare capacity that holds a sentinel, so that a slot the
            // kernel failed to write would show.
            let mut vectors = vec![Gf8::new_unchecked(sentinel); n];
            vectors.clear();
            let result = backend
                .copy_validated_uninit(bytes, &mut vectors.spare_capacity_mut()[..n])
                .map(|written| bits(written));
            match (&result, expected) {
                (Ok(written), Ok(())) => assert_eq!(*written, expected_bits, "{backend}"),
                (Err(e), Err(x)) => assert_eq!(*e, x, "{backend}, offset {offset}"),
                _ => panic!("{backend}, offset {offset}: {result:?}, expected {expected:?}"),
            }
            // SAFETY: `copy_validated_uninit` wrote (at least) the `copied`
            // slots before the first bad vector, on success and on error.
            unsafe { vectors.set_len(copied) };
            assert_eq!(bits(&vectors), expected_bits, "{backend}, offset {offset}");
        }
        let mut out = vec![sentinel; n];
        assert_eq!(batch::copy_validated_into(bytes, &mut out), expected);
        assert_eq!(
            batch::scalar::copy_validated_into(bytes, &mut out),
            expected
        );
        assert_eq!(array_bits(&out[..copied]), expected_bits);
    }
}

#[test]
fn copy_validated_reports_exactly_the_first_bad_vector() {
    let mut rng = Rng(41);
    let base: Vec<[f32; 8]> = (0..40).map(|_| rng.unit().to_array()).collect();
    let bad: [[f32; 8]; 6] = [
        [0.0, 0.0, f32::NAN, 0.0, 0.0, f32::INFINITY, 0.0, 0.0],
        [0.0, 0.0, 0.0, f32::NEG_INFINITY, f32::NAN, 0.0, 0.0, 0.0],
        [0.5; 8],
        [1e-30, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [3e38, 3e38, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [-0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, 1e-45],
    ];
    for (k, b) in bad.iter().enumerate() {
        for first in [0, 3, 4, 7, 8, 9, 15, 16, 23, 31, 32, 39] {
            let mut arrays = base.clone();
            arrays[first] = *b;
            // A later bad vector, in the same block or the next, must not be
            // the one reported.
            for later in [first + 1, first + 3, first + 9] {
                if later < arrays.len() {
                    arrays[later] = bad[(k + 1) % bad.len()];
                }
            }
            let expected = Gf8::check(b).unwrap_err();
            let bytes = le_bytes_after(0, &arrays);
            for backend in backends() {
                let mut out = vec![[0.0; 8]; arrays.len()];
                let err = backend.copy_validated_into(&bytes, &mut out).unwrap_err();
                assert_eq!((err.index, err.error), (first, expected), "{backend}");
                assert_eq!(out[..first], arrays[..first], "{backend}");
            }
            compare_copy_validated(&arrays);
        }
    }
}

/// Zero vectors (both signs, and mixed) are accepted, also in full blocks,
/// where the SIMD fast test fails and the scalar check has to accept them.
#[test]
fn copy_validated_accepts_zero_vectors_in_every_position() {
    let unit = [0.0, 0.0, 0.0, 0.6, 0.0, -0.8, 0.0, 0.0];
    let mixed_zero = [0.0, -0.0, 0.0, -0.0, -0.0, 0.0, 0.0, -0.0];
    for len in 0..=17 {
        for zero in [[0.0f32; 8], [-0.0f32; 8], mixed_zero] {
            compare_copy_validated(&vec![zero; len]);
            for position in 0..len {
                let mut arrays = vec![unit; len];
                arrays[position] = zero;
                let bytes = le_bytes_after(1, &arrays);
                for backend in backends() {
                    let mut out = vec![[1.0; 8]; len];
                    assert_eq!(backend.copy_validated_into(&bytes[1..], &mut out), Ok(()));
                    assert_eq!(array_bits(&out), array_bits(&arrays), "{backend}");
                }
            }
        }
    }
}

/// Squared norms one ulp either side of the band edges, each alone in a
/// block of good vectors, at every position of the block.
#[test]
fn copy_validated_band_edges_every_position() {
    let mut edges = Vec::new();
    for sign in [1.0f32, -1.0] {
        let edge = (1.0 + sign * 2e-5f32).sqrt();
        let mut x = edge.next_down().next_down();
        for _ in 0..5 {
            edges.push([x, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
            let half = x / 2.0;
            edges.push([half, -half, half, -half, 0.0, 0.0, 0.0, 0.0]);
            x = x.next_up();
        }
    }
    let accepted = edges.iter().filter(|a| Gf8::check(a).is_ok()).count();
    assert!(
        accepted > 0 && accepted < edges.len(),
        "the edge is crossed"
    );
    let good = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    for edge in &edges {
        for position in 0..9 {
            let mut arrays = vec![good; 9];
            arrays[position] = *edge;
            compare_copy_validated(&arrays);
        }
    }
}

/// A large batch: many full blocks, a bad vector deep inside, and the
/// copied prefix intact.
#[test]
fn copy_validated_large_batch() {
    let mut rng = Rng(42);
    let mut arrays: Vec<[f32; 8]> = (0..10_000).map(|_| rng.unit().to_array()).collect();
    arrays[777] = [0.0; 8];
    compare_copy_validated(&arrays);
    arrays[8_191][6] = f32::NAN;
    arrays[9_000][0] = 2.0;
    compare_copy_validated(&arrays);
    let bytes = le_bytes_after(3, &arrays);
    let mut out = vec![[0.0; 8]; arrays.len()];
    let err = batch::copy_validated_into(&bytes[3..], &mut out).unwrap_err();
    assert_eq!(
        (err.index, err.error),
        (8_191, Gf8Error::NotANumber { coordinate: 6 })
    );
}

#[test]
#[should_panic(expected = "batch output has length 2, but the input has 96 bytes")]
fn copy_validated_into_panics_on_wrong_output_length() {
    let _ = batch::copy_validated_into(&[0; 96], &mut [[0.0; 8]; 2]);
}

#[test]
#[cfg_attr(
    panic = "abort",
    ignore = "catch_unwind needs unwinding (wasm32 aborts)"
)]
fn copy_validated_panics_on_every_backend_unless_the_lengths_match() {
    for backend in Backend::ALL {
        // 31, 33 and 64 bytes for one vector: never 32 per slot.
        for len in [31, 33, 64] {
            let bytes = vec![0u8; len];
            let result = std::panic::catch_unwind(|| {
                let _ = backend.copy_validated_into(&bytes, &mut [[0.0; 8]; 1]);
            });
            assert!(result.is_err(), "{backend}, {len} bytes");
            let result = std::panic::catch_unwind(|| {
                let mut v: Vec<Gf8> = Vec::with_capacity(1);
                let _ = backend.copy_validated_uninit(&bytes, &mut v.spare_capacity_mut()[..1]);
            });
            assert!(result.is_err(), "{backend}, {len} bytes");
        }
        assert_eq!(backend.copy_validated_into(&[], &mut []), Ok(()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary bytes (the untrusted input of a decoder) at any alignment:
    /// every backend agrees with copying and then validating, and the copy
    /// is bit for bit, NaN payloads included.
    #[test]
    fn copy_validated_any_bytes_agree(
        words in prop::collection::vec(any::<u32>(), 0..(8 * 40)),
        offset in 0usize..32,
    ) {
        let n = words.len() / 8;
        let arrays: Vec<[f32; 8]> = words[..8 * n]
            .as_chunks::<8>()
            .0
            .iter()
            .map(|w| w.map(f32::from_bits))
            .collect();
        let expected = batch::scalar::validate(&arrays);
        let buf = le_bytes_after(offset, &arrays);
        for backend in backends() {
            let mut out = vec![[0.0; 8]; n];
            prop_assert_eq!(backend.copy_validated_into(&buf[offset..], &mut out), expected);
            if expected.is_ok() {
                prop_assert_eq!(array_bits(&out), array_bits(&arrays));
            }
        }
    }

    #[test]
    fn copy_validated_mostly_unit_agree(
        arrays in prop::collection::vec(mostly_unit_array(), 0..70),
    ) {
        compare_copy_validated(&arrays);
    }
}
