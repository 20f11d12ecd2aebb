//! Every batch backend's lattice kernel (`nearest_lattice_points`) against
//! the scalar method and the old `f64` decoder: identical points, and the
//! same first error, on probes of every step of the decoder, the edges of
//! the batch paths, blocks that take the AVX2 kernel's first path, and
//! random batches at every scale.

mod common;
#[path = "common/lattice_probes.rs"]
mod lattice_probes;
#[path = "common/old_lattice.rs"]
mod old_lattice;

use common::{backends, Rng};
use hydron_core::batch::{self, Backend};
use hydron_core::{BatchError, E8Point, Gf8Error};
use proptest::prelude::*;

#[test]
fn lattice_points_match_the_scalar_method_on_every_backend() {
    let mut rng = Rng(9);
    let mut arrays: Vec<[f32; 8]> = (0..40).map(|_| rng.array().map(|x| x * 5.0)).collect();
    let expected: Vec<E8Point> = arrays
        .iter()
        .map(|a| E8Point::nearest(a).unwrap())
        .collect();
    assert_eq!(batch::nearest_lattice_points(&arrays), Ok(expected.clone()));
    assert_eq!(
        batch::scalar::nearest_lattice_points(&arrays),
        Ok(expected.clone())
    );
    for backend in Backend::ALL {
        let mut out = vec![E8Point::ORIGIN; arrays.len()];
        backend
            .nearest_lattice_points_into(&arrays, &mut out)
            .unwrap();
        assert_eq!(out, expected, "{backend}");
    }
    arrays[13][2] = f32::NAN;
    arrays[20][0] = 1e9;
    let err = batch::nearest_lattice_points(&arrays).unwrap_err();
    assert_eq!(
        (err.index, err.error),
        (13, Gf8Error::NotANumber { coordinate: 2 })
    );
    let mut out = vec![E8Point::ORIGIN; arrays.len()];
    let err = batch::nearest_lattice_points_into(&arrays, &mut out).unwrap_err();
    assert_eq!(err.index, 13);
}

/// Every backend's lattice kernel on `arrays` against the old decoder, one
/// vector at a time: identical points, and on error the first bad vector's
/// index and error.
fn compare_lattice(arrays: &[[f32; 8]]) {
    let expected: Result<Vec<[i32; 8]>, BatchError> = arrays
        .iter()
        .enumerate()
        .map(|(index, x)| old_lattice::old_nearest(x).map_err(|error| BatchError { index, error }))
        .collect();
    for backend in backends() {
        let mut out = vec![E8Point::ORIGIN; arrays.len()];
        let result = backend.nearest_lattice_points_into(arrays, &mut out);
        match &expected {
            Ok(points) => {
                assert_eq!(result, Ok(()), "{backend}");
                let got: Vec<[i32; 8]> = out.iter().map(|p| p.doubled()).collect();
                if &got != points {
                    let i = (0..got.len()).find(|&i| got[i] != points[i]).unwrap();
                    panic!(
                        "{backend}: vector {i} of {}: {:?} ({:x?}) gives {:?}, the old decoder {:?}",
                        arrays.len(),
                        arrays[i],
                        arrays[i].map(f32::to_bits),
                        got[i],
                        points[i]
                    );
                }
            }
            Err(error) => assert_eq!(result, Err(*error), "{backend}"),
        }
    }
}

#[test]
fn lattice_kernels_are_identical_to_the_old_decoder_on_every_backend() {
    // Half a million probes (ties, tiny values, range limits, errors) in
    // batches of varied lengths, so that every tail length is exercised; a
    // third of the batches get one bad vector at a random position (a
    // batch stops there, so the rest are kept clean).
    let (clean, bad): (Vec<[f32; 8]>, Vec<[f32; 8]>) =
        lattice_probes::probe_inputs(0xBA7C4, 500_000)
            .into_iter()
            .partition(|x| old_lattice::old_nearest(x).is_ok());
    assert!(bad.len() > 10_000 && clean.len() > 400_000);
    let mut rng = Rng(77);
    let mut start = 0;
    let mut bad = bad.iter().cycle();
    while start < clean.len() {
        let len = (1 + rng.below(200)).min(clean.len() - start);
        let mut arrays = clean[start..start + len].to_vec();
        if rng.below(3) == 0 {
            arrays[rng.below(len)] = *bad.next().unwrap();
        }
        compare_lattice(&arrays);
        start += len;
    }
}

#[test]
fn lattice_kernels_are_identical_on_the_batch_paths_edges() {
    // Inputs at the edges of the batch kernels' steps, in whole blocks
    // that stay on their fast path (so that the SIMD code, not the scalar
    // fallback, answers) and mixed with inputs that leave it:
    // - integer vectors with an odd sum (every `δ` is 0: the integer
    //   candidate re-rounds coordinate 0 upwards, whatever its sign, ±0
    //   included);
    // - half-integer vectors with an odd half-sum (every `δ` is ½: the
    //   other candidate re-rounds coordinate 0 upwards, whichever side it
    //   rounded to);
    // - the rounding's edges: the largest float below ½, ½ and the floats
    //   around it, halves and their neighbours at every scale up to the
    //   input limit (where an `f32` has no fraction below ½), the limit
    //   and the float above it (an error), 2^23, ±0, 2^-24 and the floats
    //   below it (tiny), subnormals.
    let mut rng = Rng(0xED6E);
    let below_half = f32::from_bits(0x3EFF_FFFF);
    let mut specials = vec![0.0, -0.0, below_half, 0.5, f32::from_bits(0x3F00_0001)];
    for exponent in 0..=22 {
        let half = 2f32.powi(exponent) + 0.5;
        for v in [
            half,
            f32::from_bits(half.to_bits() - 1),
            f32::from_bits(half.to_bits() + 1),
        ] {
            if v <= E8Point::INPUT_LIMIT {
                specials.push(v);
            }
        }
    }
    specials.extend([
        E8Point::INPUT_LIMIT,
        E8Point::INPUT_LIMIT - 0.5,
        f32::from_bits(E8Point::INPUT_LIMIT.to_bits() + 1),
        8_388_608.0,
        f32::from_bits(0x3380_0000),
        f32::from_bits(0x337F_FFFF),
        f32::from_bits(1),
        f32::MIN_POSITIVE,
    ]);
    let integer = |rng: &mut Rng| -> [f32; 8] {
        let mut x: [f32; 8] = core::array::from_fn(|_| rng.below(9) as f32 - 4.0);
        if rng.below(4) == 0 {
            x[0] = if rng.below(2) == 0 { 0.0 } else { -0.0 };
        }
        x
    };
    let half_integer =
        |rng: &mut Rng| -> [f32; 8] { core::array::from_fn(|_| rng.below(8) as f32 - 3.5) };
    let mut fast = Vec::new();
    let mut mixed = Vec::new();
    for _ in 0..20_000 {
        fast.push(integer(&mut rng));
        fast.push(half_integer(&mut rng));
        let mut x: [f32; 8] = core::array::from_fn(|_| (rng.below(1000) as f32 - 500.0) / 64.0);
        for _ in 0..1 + rng.below(3) {
            let v = specials[rng.below(specials.len())];
            x[rng.below(8)] = if rng.below(2) == 0 { v } else { -v };
        }
        mixed.push(x);
    }
    // Both kinds of fast-path vectors have odd sums about half the time.
    let odd = fast
        .iter()
        .filter(|x| x.iter().map(|&v| (2.0 * v) as i64).sum::<i64>() % 4 != 0)
        .count();
    assert!(odd > 15_000, "{odd}");
    for chunk in fast.chunks(8 * 64) {
        compare_lattice(chunk);
    }
    for chunk in mixed.chunks(8 * 64) {
        let clean: Vec<[f32; 8]> = chunk
            .iter()
            .copied()
            .filter(|x| old_lattice::old_nearest(x).is_ok())
            .collect();
        compare_lattice(&clean);
        compare_lattice(chunk);
    }
}

#[test]
fn lattice_kernels_agree_on_random_batches_at_every_scale() {
    let mut rng = common::SplitMix64(0x1A77);
    for exponent in -30..=22 {
        let scale = 2f64.powi(exponent);
        let arrays: Vec<[f32; 8]> = (0..1000 + exponent.unsigned_abs() as usize)
            .map(|_| core::array::from_fn(|_| (rng.symmetric() * scale) as f32))
            .collect();
        compare_lattice(&arrays);
    }
}

/// A coordinate that is neither an integer, nor a half-integer, nor tiny
/// (its rounding error is at least 2^-24 and below ½), as the AVX2
/// lattice kernel's first path takes them: fractions from a short list (so
/// that rounding errors repeat, and the first largest or smallest one must
/// be re-rounded), quarters a little off (near-ties, on both sides of the
/// tie margin), errors at the path's limits, and uniform values at a few
/// scales.
fn generic_lattice_coordinate(rng: &mut Rng) -> f32 {
    let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
    let x = match rng.below(5) {
        0 => {
            let fractions = [0.1f32, 0.125, 0.25, 0.3, 0.375, 0.4, 0.45, 0.75, 0.875];
            rng.below(17) as f32 + fractions[rng.below(fractions.len())]
        }
        1 => {
            let offset = 2f32.powi(-12 - rng.below(10) as i32);
            let quarter = rng.below(9) as f32 + [0.25, 0.75][rng.below(2)];
            quarter + if rng.below(2) == 0 { offset } else { -offset }
        }
        2 => {
            let edges = [
                f32::from_bits(0x3EFF_FFFF), // the largest float below ½
                f32::from_bits(0x3F00_0001), // the smallest above
                1.5 - f32::EPSILON,
                1.5 + f32::EPSILON,
                2f32.powi(-24),
                2f32.powi(-24) * 1.5,
                1.0 + 2f32.powi(-23),
                1.0 - 2f32.powi(-24),
                E8Point::INPUT_LIMIT - 0.25,
                E8Point::INPUT_LIMIT - 0.75,
                2f32.powi(21) + 0.25,
                1e5 + 0.125,
            ];
            edges[rng.below(edges.len())]
        }
        3 => rng.coord() * 8.0,
        _ => rng.coord() * [0.5f32, 100.0, 1e6][rng.below(3)],
    };
    let x = sign * x;
    let r = x - x.round();
    if r.abs() >= 2f32.powi(-24) && r.abs() < 0.5 {
        x
    } else {
        sign * 0.3
    }
}

#[test]
fn lattice_kernels_agree_on_blocks_without_integers_or_halves() {
    // Whole blocks of coordinates off the integers and half-integers (the
    // AVX2 kernel's first path; some are near-ties, which leave it), alone
    // and with one coordinate that makes its block leave that path (an
    // integer, a half-integer, a tiny or zero value) at a random position
    // of every 16 blocks, so that the kernel also switches between paths.
    let mut rng = Rng(0x6E4E);
    let arrays: Vec<[f32; 8]> = (0..40_000)
        .map(|_| core::array::from_fn(|_| generic_lattice_coordinate(&mut rng)))
        .collect();
    for chunk in arrays.chunks(8 * 64) {
        compare_lattice(chunk);
    }
    let specials = [0.0, -0.0, 1.0, -3.0, 0.5, -2.5, 1e-30, f32::from_bits(1)];
    for chunk in arrays.chunks(8 * 16) {
        let mut chunk = chunk.to_vec();
        let i = rng.below(chunk.len());
        chunk[i][rng.below(8)] = specials[rng.below(specials.len())];
        compare_lattice(&chunk);
    }
    // Every coordinate from two values, so that many rounding errors are
    // equal.
    for _ in 0..2_000 {
        let values = [
            generic_lattice_coordinate(&mut rng),
            generic_lattice_coordinate(&mut rng),
        ];
        let block: Vec<[f32; 8]> = (0..8)
            .map(|_| core::array::from_fn(|_| values[rng.below(2)]))
            .collect();
        compare_lattice(&block);
    }
}

/// A lattice input coordinate. Mode 0: only values off the integers and
/// half-integers (so that whole blocks take the AVX2 kernel's first path),
/// with repeated rounding errors and near-ties; mode 1: now and then an
/// integer or a half-integer (which send a block elsewhere, and must not be
/// decoded as if they had not); mode 2: now and then anything else too
/// (zeros, tiny and huge values, the input limit, NaN, any bits).
fn lattice_coordinate(mode: u32) -> BoxedStrategy<f32> {
    let generic = prop_oneof![
        // Repeated rounding errors.
        (0i32..40, 0usize..6, any::<bool>()).prop_map(|(n, f, negative)| {
            let x = n as f32 + [0.1f32, 0.25, 0.3, 0.4, 0.45, 0.75][f];
            if negative {
                -x
            } else {
                x
            }
        }),
        // Near-ties: quarters a few ulps to a few 2^-14 off.
        (-8i32..8, -(1i32 << 12)..(1 << 12)).prop_map(|(n, steps)| {
            let quarter = n as f32 + 0.25;
            f32::from_bits((quarter.to_bits() as i32 + steps * (steps.abs() >> 6).max(1)) as u32)
        }),
        -8.0f32..8.0,
        -4.2e6f32..4.2e6,
    ]
    .prop_map(|x| {
        if x.fract() == 0.0 || x.fract().abs() == 0.5 {
            0.3
        } else {
            x
        }
    });
    let halves = prop_oneof![
        (-6i32..6).prop_map(|n| n as f32),
        (-6i32..6).prop_map(|n| n as f32 + 0.5),
        Just(-0.0f32),
    ];
    match mode {
        0 => generic.boxed(),
        1 => prop_oneof![40 => generic, 1 => halves].boxed(),
        _ => prop_oneof![
            20 => generic,
            1 => halves,
            1 => prop_oneof![
                Just(0.0f32),
                (-40i32..-24).prop_map(|e| 2f32.powi(e) * 1.25),
                Just(E8Point::INPUT_LIMIT),
                Just(E8Point::INPUT_LIMIT + 0.5),
                Just(-3e9f32),
                Just(f32::INFINITY),
                Just(f32::NAN),
                any::<u32>().prop_map(f32::from_bits),
            ],
        ]
        .boxed(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every backend's lattice kernel against the old decoder, on batches
    /// whose coordinates are off the integers and half-integers (the AVX2
    /// kernel's first path, with repeated rounding errors and near-ties),
    /// and on batches that mix in halves, integers, zeros, tiny and huge
    /// values, NaN and any bits.
    #[test]
    fn lattice_kernels_agree_with_the_old_decoder(
        arrays in (0u32..3).prop_flat_map(|mode| {
            prop::collection::vec(prop::array::uniform8(lattice_coordinate(mode)), 0..48)
        }),
    ) {
        compare_lattice(&arrays);
    }
}
