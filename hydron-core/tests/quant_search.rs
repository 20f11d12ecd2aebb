//! `LatticeQuantizer::search` at 2 bits per coordinate (E8P codes) and at
//! 4 (E8 shell codes): against an oracle that decodes every vector and
//! computes in `f64`; every backend against the scalar one, bit for bit;
//! all threads against one; the errors, and codes that name no point.
//!
//! The oracle (`common/search_oracle.rs`) rebuilds each vector from the
//! public pieces (`e8p::decode` or `shell::decode`, the scale,
//! `Rotation::unrotate`), in `f64`, keeping the padding coordinates (what
//! the search measures when `dim` is not a multiple of 8); for `dim` a
//! multiple of 8 it is also checked against `LatticeQuantizer::decode`.

mod common;

use common::search_checks::assert_backends_agree;
use common::search_oracle::{check_against_decoded, check_against_oracle, check_search, data};
use common::SplitMix64;
use hydron_core::batch::Backend;
use hydron_core::quant::{shell, LatticeQuantizer, Metric, QuantCodes, QuantError, ScaleMode};
use proptest::prelude::*;
use ScaleMode::{PerVector, Unit};

/// At `bits` per coordinate, for each (dimension, rotation, scale mode) of
/// `shapes`: 300 vectors and `queries` queries, the best k for each k of
/// `ks` in both metrics, against the oracle.
fn matches_the_oracle(
    bits: u32,
    seed: u64,
    shapes: &[(usize, bool, ScaleMode)],
    queries: usize,
    ks: &[usize],
) {
    let mut rng = SplitMix64(seed);
    for &(dim, rotate, mode) in shapes {
        let q = LatticeQuantizer::new(dim, bits, 9)
            .unwrap()
            .with_rotation(rotate)
            .with_scale(mode);
        let codes = q.encode(&data(&mut rng, 300, dim)).unwrap();
        let queries = data(&mut rng, queries, dim);
        check_search(&q, &codes, &queries, ks);
    }
}

#[test]
fn distances_and_ids_match_the_f64_oracle_at_2_bits() {
    let shapes = [
        (8, false, PerVector),
        (3, false, PerVector),
        (20, true, PerVector),
        (64, true, PerVector),
        (50, true, Unit),
        (384, true, PerVector),
    ];
    matches_the_oracle(2, 21, &shapes, 13, &[1, 7, 300, 305]);
}

#[test]
fn distances_and_ids_match_the_f64_oracle_at_4_bits() {
    let shapes = [
        (8, false, PerVector),
        (3, false, PerVector),
        (20, true, PerVector),
        (50, true, Unit),
        (384, true, PerVector),
    ];
    matches_the_oracle(4, 44, &shapes, 11, &[1, 7, 305]);
}

/// For `dim` a multiple of 8 the search measures `decode`'s vectors.
#[test]
fn with_whole_blocks_the_distances_are_to_the_decoded_vectors() {
    let mut rng = SplitMix64(4);
    let dim = 48;
    let q = LatticeQuantizer::new(dim, 2, 1).unwrap();
    let x = data(&mut rng, 200, dim);
    let codes = q.encode(&x).unwrap();
    let decoded = q.decode(&codes).unwrap();
    let queries = data(&mut rng, 5, dim);
    for metric in [Metric::L2, Metric::InnerProduct] {
        let found = q.search(&codes, &queries, 200, metric).unwrap();
        check_against_decoded(dim, &decoded, &queries, metric, &found);
    }
}

/// At 4 bits a vector's own code is nearly always its nearest neighbour:
/// a check that the search reads the 4-bit codes, not just consistently.
#[test]
fn each_vector_finds_itself_at_4_bits() {
    let mut rng = SplitMix64(45);
    let dim = 64;
    let q = LatticeQuantizer::new(dim, 4, 1).unwrap();
    let x = data(&mut rng, 400, dim);
    let codes = q.encode(&x).unwrap();
    let found = q.search(&codes, &x, 1, Metric::L2).unwrap();
    let hits = found
        .ids
        .iter()
        .enumerate()
        .filter(|(i, &id)| *i == id)
        .count();
    assert!(hits >= 398, "{hits} of 400");
    // The distance to itself is its quantization error: about 0.7% of its
    // squared norm.
    for (v, (&d, chunk)) in found.distances.iter().zip(x.chunks_exact(dim)).enumerate() {
        let norm2: f32 = chunk.iter().map(|a| a * a).sum();
        assert!(d < 0.03 * norm2, "vector {v}: {d} of {norm2}");
    }
}

/// Equal distances rank by id: copies of one vector come out in id order,
/// in both metrics, on every backend and split.
#[test]
fn ties_go_to_the_smaller_id() {
    let dim = 16;
    let q = LatticeQuantizer::new(dim, 2, 3).unwrap();
    let mut rng = SplitMix64(8);
    let base = data(&mut rng, 1, dim);
    let other = data(&mut rng, 1, dim);
    // Vectors 0, 2, 4, ... are copies of `other`, 1, 3, 5, ... of `base`.
    let x: Vec<f32> = (0..40)
        .flat_map(|i| {
            if i % 2 == 1 {
                base.clone()
            } else {
                other.clone()
            }
        })
        .collect();
    let codes = q.encode(&x).unwrap();
    for backend in [Backend::Scalar, Backend::Avx2Fma] {
        for metric in [Metric::L2, Metric::InnerProduct] {
            let found = q
                .search_codes_with(backend, &codes.codes, &codes.scales, &base, 5, metric)
                .unwrap();
            if metric == Metric::L2 {
                assert_eq!(found.ids, [1, 3, 5, 7, 9], "{backend}");
            }
            let (d, ids) = found.row(0);
            assert!(d.windows(2).all(|w| w[0] == w[1]), "{d:?}");
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        }
    }
}

/// A single vector's ids: the query itself first, and k > N gives N.
#[test]
fn small_cases() {
    let q = LatticeQuantizer::new(5, 2, 0).unwrap();
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, -1.0, 0.0, 0.5, 0.0, 0.0];
    let codes = q.encode(&x).unwrap();
    let found = q.search(&codes, &x[5..], 10, Metric::L2).unwrap();
    assert_eq!((found.k, found.ids.clone()), (2, vec![1, 0]));
    // No queries, no database.
    let none = q.search(&codes, &[], 3, Metric::L2).unwrap();
    assert_eq!((none.k, none.ids.len()), (2, 0));
    let empty = q.search(&QuantCodes::default(), &x, 3, Metric::L2).unwrap();
    assert_eq!((empty.k, empty.ids.len()), (0, 0));
    // The zero vector (scale 0) is at the query's squared norm.
    let zero = q.encode(&[0.0; 5]).unwrap();
    let found = q.search(&zero, &x[..5], 1, Metric::L2).unwrap();
    assert_eq!(found.distances, [55.0]);
}

/// At `bits` per coordinate: `n` vectors in dimensions 8, 13 (unit scale)
/// and 96, and each query count of `counts`, the AVX2 search gives the
/// scalar result bit for bit.
fn backends_agree(bits: u32, seed: u64, n: usize, counts: &[usize]) {
    common::with_avx2("the AVX2 search kernel", || {
        let mut rng = SplitMix64(seed);
        for (dim, mode) in [(8, PerVector), (13, Unit), (96, PerVector)] {
            let q = LatticeQuantizer::new(dim, bits, 2)
                .unwrap()
                .with_scale(mode);
            let codes = q.encode(&data(&mut rng, n, dim)).unwrap();
            for &count in counts {
                let queries = data(&mut rng, count, dim);
                assert_backends_agree(&q, &codes, &queries, n);
            }
        }
    });
}

/// 1 to 15 queries: every group size (8, 4, 2, 1) and tail.
#[test]
fn every_backend_gives_the_scalar_result_bit_for_bit_at_2_bits() {
    backends_agree(2, 17, 500, &[1, 2, 3, 5, 8, 15]);
}

#[test]
fn every_backend_gives_the_scalar_result_bit_for_bit_at_4_bits() {
    backends_agree(4, 46, 300, &[1, 3, 8, 15]);
}

/// At `bits` per coordinate, a search of 20 queries among 16,000 vectors
/// of dimension 64 (large enough to split) gives the one-thread result for
/// each k of `ks`.
#[cfg(all(feature = "parallel", not(target_family = "wasm")))]
fn threads_agree(bits: u32, seed: u64, ks: &[usize]) {
    let dim = 64;
    let q = LatticeQuantizer::new(dim, bits, 6).unwrap();
    let mut rng = SplitMix64(seed);
    let codes = q.encode(&data(&mut rng, 16_000, dim)).unwrap();
    let queries = data(&mut rng, 20, dim);
    common::search_checks::assert_threads_agree(&q, &codes, &queries, ks);
}

/// With `parallel`, a search large enough to split gives the one-thread
/// result (in the global pool, and in a pool of 3 threads).
/// (wasm32 has no threads.)
#[cfg(all(feature = "parallel", not(target_family = "wasm")))]
#[test]
fn all_threads_give_the_one_thread_result_at_2_bits() {
    threads_agree(2, 3, &[1, 10, 3000]);
}

#[cfg(all(feature = "parallel", not(target_family = "wasm")))]
#[test]
fn all_threads_give_the_one_thread_result_at_4_bits() {
    threads_agree(4, 47, &[10]);
}

#[test]
fn errors_name_the_place() {
    let q = LatticeQuantizer::new(6, 2, 0).unwrap();
    let x: Vec<f32> = (0..18).map(|i| i as f32 - 8.0).collect();
    let codes = q.encode(&x).unwrap();
    assert_eq!(q.search(&codes, &x, 0, Metric::L2), Err(QuantError::ZeroK));
    assert_eq!(
        q.search(&codes, &x[..7], 1, Metric::L2),
        Err(QuantError::InputLength { len: 7, dim: 6 })
    );
    let mut bad = x.clone();
    bad[2 * 6 + 4] = f32::NAN;
    bad[2 * 6 + 5] = f32::INFINITY;
    let err = q.search(&codes, &bad, 1, Metric::L2).unwrap_err();
    assert_eq!(
        err,
        QuantError::QueryNotANumber {
            query: 2,
            coordinate: 4
        }
    );
    assert_eq!(err.to_string(), "query 2, coordinate 4 is NaN");
    bad[2 * 6 + 4] = 0.0;
    bad[6 + 1] = f32::NEG_INFINITY;
    assert_eq!(
        q.search(&codes, &bad, 1, Metric::InnerProduct),
        Err(QuantError::QueryInfinite {
            query: 1,
            coordinate: 1,
            value: f32::NEG_INFINITY
        })
    );
    assert_eq!(
        q.search_codes(&codes.codes[..5], &codes.scales, &x, 1, Metric::L2),
        Err(QuantError::CodesLength {
            len: 5,
            code_size: 2
        })
    );
    assert_eq!(
        q.search_codes(&codes.codes, &codes.scales[..2], &x, 1, Metric::L2),
        Err(QuantError::ScaleCount {
            scales: 2,
            vectors: 3,
            expected: 3
        })
    );
    let mut scales = codes.scales.clone();
    scales[1] = -1.0;
    assert_eq!(
        q.search_codes(&codes.codes, &scales, &x, 1, Metric::L2),
        Err(QuantError::InvalidScale {
            vector: 1,
            value: -1.0
        })
    );
    let unit = q.clone().with_scale(ScaleMode::Unit);
    assert!(matches!(
        unit.search(&codes, &x, 1, Metric::L2),
        Err(QuantError::ScaleCount { expected: 0, .. })
    ));
}

/// At 4 bits, a block code past the shell is refused, in both metrics.
#[test]
fn codes_that_name_no_point_are_refused() {
    let q = LatticeQuantizer::new(16, 4, 0).unwrap();
    let x: Vec<f32> = (0..48).map(|i| i as f32 - 20.0).collect();
    let mut codes = q.encode(&x).unwrap();
    assert!(q.search(&codes, &x[..16], 2, Metric::L2).is_ok());
    // Vector 1, block 1: shape index past the shell.
    codes.codes[8 + 4..8 + 8].copy_from_slice(&(0xF000_0000 | shell::SHAPES).to_le_bytes());
    assert_eq!(
        q.search(&codes, &x[..16], 2, Metric::L2),
        Err(QuantError::InvalidCode {
            vector: 1,
            block: 1
        })
    );
    assert_eq!(
        q.search(&codes, &x[..16], 2, Metric::InnerProduct),
        Err(QuantError::InvalidCode {
            vector: 1,
            block: 1
        })
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any dimension, rotation, scale mode, metric and k: the oracle's
    /// answer.
    #[test]
    fn search_equals_the_oracle(
        dim in 1usize..70,
        rotate in any::<bool>(),
        unit in any::<bool>(),
        ip in any::<bool>(),
        k in 1usize..40,
        salt in any::<u64>(),
    ) {
        let mode = if unit { ScaleMode::Unit } else { ScaleMode::PerVector };
        let q = LatticeQuantizer::new(dim, 2, salt).unwrap().with_rotation(rotate).with_scale(mode);
        let mut rng = SplitMix64(salt);
        let x = data(&mut rng, 60, dim);
        let codes = q.encode(&x).unwrap();
        let queries = data(&mut rng, 3, dim);
        let metric = if ip { Metric::InnerProduct } else { Metric::L2 };
        let found = q.search(&codes, &queries, k, metric).unwrap();
        check_against_oracle(&q, &codes, &queries, k, metric, &found);
    }
}

/// This process's CPU time (user + system), from `/proc/self/stat`, in
/// seconds (0 where there is no such file): on a busy machine it counts
/// only the time the search ran, not the time it waited for a core.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks: f64 =
        fields[11].parse::<f64>().unwrap_or(0.0) + fields[12].parse::<f64>().unwrap_or(0.0);
    ticks / 100.0
}

/// Rough timings of the search on one thread, wall clock and CPU time
/// (not a benchmark: `benches/quant.rs` is):
/// `cargo test --release -p hydron-core --features simd,parallel --test
/// quant_search -- --ignored --nocapture timing`.
#[test]
#[ignore = "timing, run by hand"]
fn timing() {
    use std::time::Instant;
    let dim = 384;
    let n = 100_000;
    let q = LatticeQuantizer::new(dim, 2, 1).unwrap();
    let mut rng = SplitMix64(1);
    let x = data(&mut rng, n, dim);
    let codes = q.encode(&x).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for count in [1, 2, 4, 8, 32] {
        let queries = data(&mut rng, count, dim);
        for backend in [Backend::Scalar, Backend::Avx2Fma] {
            let run = || {
                q.search_codes_with(
                    backend,
                    &codes.codes,
                    &codes.scales,
                    &queries,
                    10,
                    Metric::L2,
                )
                .unwrap()
            };
            let reps = (32 / count).max(2);
            let (t, c) = (Instant::now(), cpu_seconds());
            for _ in 0..reps {
                std::hint::black_box(one.install(run));
            }
            let per = |s: f64| s / reps as f64 / (n * count) as f64 * 1e9;
            eprintln!(
                "{count:>3} queries {backend:>9}: {:6.1} ns wall, {:6.1} ns CPU per vector-query",
                per(t.elapsed().as_secs_f64()),
                per(cpu_seconds() - c)
            );
        }
    }
}
