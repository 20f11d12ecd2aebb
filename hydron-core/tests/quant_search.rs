//! `LatticeQuantizer::search` against an oracle that decodes every vector
//! and computes in `f64`; every backend against the scalar one, bit for
//! bit; all threads against one; the errors.
//!
//! The oracle rebuilds each vector from the public pieces (`e8p::decode`,
//! the scale, `Rotation::unrotate`), in `f64`, keeping the padding
//! coordinates (what the search measures when `dim` is not a multiple of
//! 8); for `dim` a multiple of 8 it is also checked against
//! `LatticeQuantizer::decode`.

mod common;

use common::search_oracle::{check_against_oracle, data, oracle, tolerance};
use common::SplitMix64;
use hydron_core::batch::Backend;
use hydron_core::quant::{
    LatticeQuantizer, Metric, QuantCodes, QuantError, ScaleMode, SearchResult,
};
use proptest::prelude::*;

#[test]
fn distances_and_ids_match_the_f64_oracle() {
    let mut rng = SplitMix64(21);
    for (dim, rotate, mode) in [
        (8, false, ScaleMode::PerVector),
        (3, false, ScaleMode::PerVector),
        (20, true, ScaleMode::PerVector),
        (64, true, ScaleMode::PerVector),
        (50, true, ScaleMode::Unit),
        (384, true, ScaleMode::PerVector),
    ] {
        let q = LatticeQuantizer::new(dim, 2, 9)
            .unwrap()
            .with_rotation(rotate)
            .with_scale(mode);
        let n = 300;
        let x = data(&mut rng, n, dim);
        let codes = q.encode(&x).unwrap();
        let queries = data(&mut rng, 13, dim);
        for metric in [Metric::L2, Metric::InnerProduct] {
            for k in [1, 7, n, n + 5] {
                let found = q.search(&codes, &queries, k, metric).unwrap();
                check_against_oracle(&q, &codes, &queries, k, metric, &found);
            }
        }
    }
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
        for (qi, query) in queries.chunks_exact(dim).enumerate() {
            let (dist, ids) = found.row(qi);
            for (&d, &id) in dist.iter().zip(ids) {
                let y: Vec<f64> = decoded[id * dim..(id + 1) * dim]
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect();
                let e = oracle(metric, query, &y);
                let tol = tolerance(metric, query, &y);
                assert!((f64::from(d) - e).abs() <= tol, "{d} vs {e}");
            }
        }
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

#[test]
fn every_backend_gives_the_scalar_result_bit_for_bit() {
    common::with_avx2("the AVX2 search kernel", || {
        let mut rng = SplitMix64(17);
        for (dim, mode) in [
            (8, ScaleMode::PerVector),
            (13, ScaleMode::Unit),
            (96, ScaleMode::PerVector),
        ] {
            let q = LatticeQuantizer::new(dim, 2, 2).unwrap().with_scale(mode);
            let x = data(&mut rng, 500, dim);
            let codes = q.encode(&x).unwrap();
            // 1 to 15 queries: every group size (8, 4, 2, 1) and tail.
            for count in [1, 2, 3, 5, 8, 15] {
                let queries = data(&mut rng, count, dim);
                for metric in [Metric::L2, Metric::InnerProduct] {
                    let run = |b| {
                        q.search_codes_with(b, &codes.codes, &codes.scales, &queries, 500, metric)
                            .unwrap()
                    };
                    let (s, a) = (run(Backend::Scalar), run(Backend::Avx2Fma));
                    assert_eq!(s.ids, a.ids, "{dim} {count} {metric:?}");
                    let bits = |r: &SearchResult| {
                        r.distances.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
                    };
                    assert_eq!(bits(&s), bits(&a), "{dim} {count} {metric:?}");
                }
            }
        }
    });
}

/// With `parallel`, a search large enough to split gives the one-thread
/// result (in the global pool, and in a pool of 3 threads).
/// (wasm32 has no threads.)
#[cfg(all(feature = "parallel", not(target_family = "wasm")))]
#[test]
fn all_threads_give_the_one_thread_result() {
    use hydron_core::quant::SEARCH_PARALLEL_MIN_WORK;
    let dim = 64;
    let q = LatticeQuantizer::new(dim, 2, 6).unwrap();
    let mut rng = SplitMix64(3);
    let n = 16_000;
    let x = data(&mut rng, n, dim);
    let codes = q.encode(&x).unwrap();
    let queries = data(&mut rng, 20, dim);
    assert!(n * 20 * q.blocks() >= 2 * SEARCH_PARALLEL_MIN_WORK);
    let pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    for metric in [Metric::L2, Metric::InnerProduct] {
        for k in [1, 10, 3000] {
            let serial = pool(1).install(|| q.search(&codes, &queries, k, metric).unwrap());
            let global = q.search(&codes, &queries, k, metric).unwrap();
            let three = pool(3).install(|| q.search(&codes, &queries, k, metric).unwrap());
            assert_eq!(serial, global, "{metric:?} {k}");
            assert_eq!(serial, three, "{metric:?} {k}");
        }
    }
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
