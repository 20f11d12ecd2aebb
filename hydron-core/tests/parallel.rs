//! The batch kernels split across threads (feature `parallel`) against the
//! scalar kernels: bit-identical results and the same first error, on
//! sizes around each threshold, odd tails, and pools of 1, 2 and 3 threads.
//!
//! Not on WebAssembly: these tests build thread pools of their own, and
//! wasm32 has no threads (the crate's unit tests check that the global pool
//! falls back to the calling thread there).
#![cfg(all(feature = "parallel", not(target_family = "wasm")))]

use hydron_core::batch::{self, scalar};
use hydron_core::parallel::{
    DOT_MIN_VECTORS, LATTICE_MIN_VECTORS, NEAREST_ROOTS_MIN_VECTORS, NORMALIZE_MIN_VECTORS,
    VALIDATE_MIN_VECTORS,
};
use hydron_core::{BatchError, E8Point, E8Root, Gf8, Gf8Error};
use proptest::prelude::*;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn coord(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn arrays(&mut self, n: usize) -> Vec<[f32; 8]> {
        (0..n)
            .map(|_| core::array::from_fn(|_| self.coord()))
            .collect()
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}

/// Sizes around a threshold, with odd tails.
fn sizes(threshold: usize) -> [usize; 6] {
    [
        threshold - 1,
        threshold,
        threshold + 1,
        threshold + 7,
        2 * threshold + 61,
        5 * threshold + 3,
    ]
}

fn bits(vs: &[Gf8]) -> Vec<[u32; 8]> {
    vs.iter().map(|v| v.as_array().map(f32::to_bits)).collect()
}

fn le_bytes(arrays: &[[f32; 8]]) -> Vec<u8> {
    arrays
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect()
}

/// Every kernel on `raw` in the current pool, compared with the scalar
/// kernels (results and errors).
fn check_all_kernels(raw: &[[f32; 8]]) {
    let n = raw.len();
    let units = scalar::normalize(raw).expect("finite input");
    let unit_arrays = Gf8::slice_as_arrays(&units);

    let mut normalized = vec![Gf8::ZERO; n];
    batch::normalize_into(raw, &mut normalized).unwrap();
    assert_eq!(bits(&normalized), bits(&units), "normalize, {n} vectors");

    let mut roots = vec![E8Root::new(0).unwrap(); n];
    batch::nearest_roots_into(&units, &mut roots);
    assert_eq!(
        roots,
        scalar::nearest_roots(&units),
        "nearest roots, {n} vectors"
    );

    let query = units[n / 2];
    let mut dots = vec![0.0f32; n];
    batch::dot_into(query, &units, &mut dots);
    let expected: Vec<u32> = scalar::dot_many(query, &units)
        .iter()
        .map(|d| d.to_bits())
        .collect();
    let got: Vec<u32> = dots.iter().map(|d| d.to_bits()).collect();
    assert_eq!(got, expected, "dot, {n} vectors");

    assert_eq!(
        batch::validate(unit_arrays),
        Ok(()),
        "validate, {n} vectors"
    );

    let bytes = le_bytes(unit_arrays);
    let mut copied = vec![[0.0f32; 8]; n];
    batch::copy_validated_into(&bytes, &mut copied).unwrap();
    assert_eq!(copied, unit_arrays, "copy_validated_into, {n} vectors");

    let mut out: Vec<Gf8> = Vec::with_capacity(n);
    let written = batch::copy_validated_uninit(&bytes, &mut out.spare_capacity_mut()[..n])
        .expect("valid vectors");
    assert_eq!(
        bits(written),
        bits(&units),
        "copy_validated_uninit, {n} vectors"
    );

    let scaled: Vec<[f32; 8]> = raw.iter().map(|a| a.map(|x| x * 5.0)).collect();
    let mut points = vec![E8Point::ORIGIN; n];
    batch::nearest_lattice_points_into(&scaled, &mut points).unwrap();
    assert_eq!(points, scalar::nearest_lattice_points(&scaled).unwrap());
}

#[test]
fn every_kernel_is_bit_identical_around_its_threshold() {
    let mut rng = Rng(11);
    for threads in [2, 3] {
        let pool = pool(threads);
        for threshold in [
            NEAREST_ROOTS_MIN_VECTORS,
            NORMALIZE_MIN_VECTORS,
            VALIDATE_MIN_VECTORS,
            DOT_MIN_VECTORS,
            LATTICE_MIN_VECTORS,
        ] {
            for n in sizes(threshold) {
                let raw = rng.arrays(n);
                pool.install(|| check_all_kernels(&raw));
            }
        }
    }
}

#[test]
fn one_thread_pools_and_tiny_slices_work() {
    let mut rng = Rng(12);
    let one = pool(1);
    for n in [1, 7, 8, 9, 100, 2 * DOT_MIN_VECTORS + 5] {
        let raw = rng.arrays(n);
        one.install(|| check_all_kernels(&raw));
    }
    let empty: [[f32; 8]; 0] = [];
    assert_eq!(batch::validate(&empty), Ok(()));
    assert_eq!(batch::normalize(&empty), Ok(vec![]));
}

/// The error of each fallible kernel, in the current pool.
fn errors(raw: &[[f32; 8]]) -> [Result<(), BatchError>; 5] {
    let n = raw.len();
    let bytes = le_bytes(raw);
    let mut normalized = vec![Gf8::ZERO; n];
    let mut copied = vec![[0.0f32; 8]; n];
    let mut uninit: Vec<Gf8> = Vec::with_capacity(n);
    let mut points = vec![E8Point::ORIGIN; n];
    [
        batch::validate(raw),
        batch::copy_validated_into(&bytes, &mut copied),
        batch::copy_validated_uninit(&bytes, &mut uninit.spare_capacity_mut()[..n]).map(|_| ()),
        batch::normalize_into(raw, &mut normalized),
        batch::nearest_lattice_points_into(raw, &mut points),
    ]
}

/// Unit vectors with bad ones at `bad` (index, coordinate, value), then the
/// errors with 2 threads, which must be the serial ones.
fn assert_same_first_error(n: usize, bad: &[(usize, usize, f32)]) {
    let mut raw = vec![[0.0, 0.6, 0.0, 0.0, 0.0, 0.0, -0.8, 0.0]; n];
    for &(index, coordinate, value) in bad {
        raw[index][coordinate] = value;
    }
    let serial = pool(1).install(|| errors(&raw));
    let split = pool(2).install(|| errors(&raw));
    assert_eq!(split, serial, "{n} vectors, bad: {bad:?}");
    if let Some(&(first, _, _)) = bad.iter().min_by_key(|b| b.0) {
        // validate, copy: any non-finite or non-unit vector; normalize and
        // lattice only refuse non-finite ones, which the bad values are.
        for result in &split {
            assert_eq!(
                result.unwrap_err().index,
                first,
                "{n} vectors, bad: {bad:?}"
            );
        }
    }
}

#[test]
fn the_first_bad_vector_is_reported_whichever_piece_finds_one_first() {
    let t = VALIDATE_MIN_VECTORS.max(NORMALIZE_MIN_VECTORS);
    let n = 4 * t + 13;
    assert_same_first_error(n, &[]);
    assert_same_first_error(n, &[(n - 1, 7, f32::NAN)]);
    assert_same_first_error(n, &[(0, 0, f32::INFINITY)]);
    // Bad vectors in several pieces, the later ones met first by a thread.
    assert_same_first_error(
        n,
        &[
            (n - 1, 1, f32::NAN),
            (3 * t, 2, f32::NEG_INFINITY),
            (2 * t + 1, 5, f32::NAN),
            (2 * t + 2, 0, f32::INFINITY),
        ],
    );
    let e = pool(2).install(|| batch::validate(&[[2.0; 8]; 3]).unwrap_err());
    assert!(matches!(e.error, Gf8Error::NotUnitNorm { .. }));
}

#[test]
fn after_an_error_every_vector_before_the_bad_one_is_written() {
    let n = 3 * VALIDATE_MIN_VECTORS + 77;
    let bad = 2 * VALIDATE_MIN_VECTORS + 5;
    let mut raw = Rng(13).arrays(n);
    let units = scalar::normalize(&raw).unwrap();
    raw[n - 3][4] = f32::NAN;
    raw[bad][1] = f32::INFINITY;
    let bytes = le_bytes(Gf8::slice_as_arrays(&units));
    let mut bytes_bad = bytes.clone();
    bytes_bad[32 * bad..][..4].copy_from_slice(&f32::NAN.to_le_bytes());
    pool(2).install(|| {
        let mut normalized = vec![Gf8::ZERO; n];
        let err = batch::normalize_into(&raw, &mut normalized).unwrap_err();
        assert_eq!(err.index, bad);
        assert_eq!(bits(&normalized[..bad]), bits(&units[..bad]));

        let mut out: Vec<Gf8> = Vec::with_capacity(n);
        let err = batch::copy_validated_uninit(&bytes_bad, &mut out.spare_capacity_mut()[..n])
            .unwrap_err();
        assert_eq!(
            (err.index, err.error),
            (bad, Gf8Error::NotANumber { coordinate: 0 })
        );
        // SAFETY: on error every slot before the bad vector has been written.
        unsafe { out.set_len(bad) };
        assert_eq!(bits(&out), bits(&units[..bad]));
    });
}

#[test]
#[should_panic(expected = "batch output has length")]
fn a_short_output_panics_before_any_thread_runs() {
    let raw = vec![[0.0f32; 8]; 3 * NORMALIZE_MIN_VECTORS];
    let mut out = vec![Gf8::ZERO; 3 * NORMALIZE_MIN_VECTORS - 1];
    let _ = pool(2).install(|| batch::normalize_into(&raw, &mut out));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random sizes and random bad vectors: the split kernels report what
    /// the serial ones report.
    #[test]
    fn split_errors_match_serial(
        extra in 0usize..4 * VALIDATE_MIN_VECTORS,
        bad in proptest::collection::vec((0usize..1 << 20, 0usize..8, prop_oneof![
            Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY)
        ]), 0..4),
    ) {
        let n = VALIDATE_MIN_VECTORS.max(NORMALIZE_MIN_VECTORS) + extra;
        let bad: Vec<(usize, usize, f32)> = bad.into_iter().map(|(i, c, v)| (i % n, c, v)).collect();
        assert_same_first_error(n, &bad);
    }
}
