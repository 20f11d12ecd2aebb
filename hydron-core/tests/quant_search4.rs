//! `LatticeQuantizer::search` at 4 bits per coordinate (E8 shell codes):
//! against an oracle that decodes every vector with `shell::decode` and
//! computes in `f64`, every backend against the scalar one bit for bit,
//! all threads against one, and codes that name no point.

mod common;

use common::search_oracle::{check_against_oracle, data};
use common::SplitMix64;
use hydron_core::batch::Backend;
use hydron_core::quant::{shell, LatticeQuantizer, Metric, QuantError, ScaleMode, SearchResult};

#[test]
fn distances_and_ids_match_the_f64_oracle() {
    let mut rng = SplitMix64(44);
    for (dim, rotate, mode) in [
        (8, false, ScaleMode::PerVector),
        (3, false, ScaleMode::PerVector),
        (20, true, ScaleMode::PerVector),
        (50, true, ScaleMode::Unit),
        (384, true, ScaleMode::PerVector),
    ] {
        let q = LatticeQuantizer::new(dim, 4, 9)
            .unwrap()
            .with_rotation(rotate)
            .with_scale(mode);
        let n = 300;
        let x = data(&mut rng, n, dim);
        let codes = q.encode(&x).unwrap();
        let queries = data(&mut rng, 11, dim);
        for metric in [Metric::L2, Metric::InnerProduct] {
            for k in [1, 7, n + 5] {
                let found = q.search(&codes, &queries, k, metric).unwrap();
                check_against_oracle(&q, &codes, &queries, k, metric, &found);
            }
        }
    }
}

/// At 4 bits a vector's own code is nearly always its nearest neighbour:
/// a check that the search reads the 4-bit codes, not just consistently.
#[test]
fn each_vector_finds_itself() {
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

#[test]
fn every_backend_gives_the_scalar_result_bit_for_bit() {
    common::with_avx2("the AVX2 search kernel", || {
        let mut rng = SplitMix64(46);
        for (dim, mode) in [
            (8, ScaleMode::PerVector),
            (13, ScaleMode::Unit),
            (96, ScaleMode::PerVector),
        ] {
            let q = LatticeQuantizer::new(dim, 4, 2).unwrap().with_scale(mode);
            let x = data(&mut rng, 300, dim);
            let codes = q.encode(&x).unwrap();
            for count in [1, 3, 8, 15] {
                let queries = data(&mut rng, count, dim);
                for metric in [Metric::L2, Metric::InnerProduct] {
                    let run = |b| {
                        q.search_codes_with(b, &codes.codes, &codes.scales, &queries, 300, metric)
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
/// result.
/// (wasm32 has no threads.)
#[cfg(all(feature = "parallel", not(target_family = "wasm")))]
#[test]
fn all_threads_give_the_one_thread_result() {
    use hydron_core::quant::SEARCH_PARALLEL_MIN_WORK;
    let dim = 64;
    let q = LatticeQuantizer::new(dim, 4, 6).unwrap();
    let mut rng = SplitMix64(47);
    let n = 16_000;
    let x = data(&mut rng, n, dim);
    let codes = q.encode(&x).unwrap();
    let queries = data(&mut rng, 20, dim);
    assert!(n * 20 * q.blocks() >= 2 * SEARCH_PARALLEL_MIN_WORK);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for metric in [Metric::L2, Metric::InnerProduct] {
        let serial = one.install(|| q.search(&codes, &queries, 10, metric).unwrap());
        let global = q.search(&codes, &queries, 10, metric).unwrap();
        assert_eq!(serial, global, "{metric:?}");
    }
}

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
