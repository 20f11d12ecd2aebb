//! `LatticeQuantizer::search` at 4 bits per coordinate (E8 shell codes):
//! against an oracle that decodes every vector with `shell::decode` and
//! computes in `f64`, every backend against the scalar one bit for bit,
//! all threads against one, and codes that name no point.

mod common;

use common::SplitMix64;
use hydron_core::batch::Backend;
use hydron_core::quant::{
    shell, LatticeQuantizer, Metric, QuantCodes, QuantError, ScaleMode, SearchResult, SHELL_SCALE,
};

/// `n · dim` coordinates: Gaussian, each vector scaled by a random factor
/// in [0.1, 10).
fn data(rng: &mut SplitMix64, n: usize, dim: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(n * dim);
    for _ in 0..n {
        let scale = 0.1 * 100f64.powf(rng.unit_interval()) as f32;
        let mut v = Vec::new();
        while v.len() < dim {
            v.extend(rng.gaussian8());
        }
        out.extend(v[..dim].iter().map(|x| x * scale));
    }
    out
}

/// Every vector of `codes`, rebuilt in `f64` with its padding coordinates.
fn reconstruct(q: &LatticeQuantizer, codes: &QuantCodes) -> Vec<Vec<f64>> {
    let padded = q.padded_dim();
    codes
        .codes
        .chunks_exact(q.code_size())
        .enumerate()
        .map(|(v, code)| {
            let scale = match q.scale_mode() {
                ScaleMode::Unit => f64::from(SHELL_SCALE) / (padded as f64).sqrt(),
                _ => f64::from(codes.scales[v]),
            };
            let mut y: Vec<f64> = code
                .chunks_exact(4)
                .flat_map(|b| shell::decode(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                .map(|c| f64::from(c) * scale)
                .collect();
            if let Some(r) = q.rotation() {
                r.unrotate(&mut y);
            }
            y
        })
        .collect()
}

/// The oracle's distance of query `x` (`dim` numbers) to vector `y`.
fn oracle(metric: Metric, x: &[f32], y: &[f64]) -> f64 {
    let pairs = y.iter().enumerate().map(|(i, &yi)| {
        let xi = x.get(i).map_or(0.0, |&v| f64::from(v));
        (xi, yi)
    });
    match metric {
        Metric::L2 => pairs.map(|(a, b)| (a - b) * (a - b)).sum(),
        _ => pairs.map(|(a, b)| a * b).sum(),
    }
}

/// `1e-5 (‖q‖² + ‖y‖²)` for L2, `1e-5 ‖q‖ ‖y‖` for the inner product.
fn tolerance(metric: Metric, x: &[f32], y: &[f64]) -> f64 {
    let qq: f64 = x.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
    let yy: f64 = y.iter().map(|v| v * v).sum();
    match metric {
        Metric::L2 => 1e-5 * (qq + yy),
        _ => 1e-5 * (qq * yy).sqrt(),
    }
}

/// Every distance within the tolerance of the oracle's, in order, and no
/// vector left out that beats the last one kept by more than the
/// tolerance.
fn check_against_oracle(
    q: &LatticeQuantizer,
    codes: &QuantCodes,
    queries: &[f32],
    k: usize,
    metric: Metric,
    found: &SearchResult,
) {
    let ys = reconstruct(q, codes);
    let dim = q.dim();
    assert_eq!(found.k, k.min(ys.len()));
    for (qi, x) in queries.chunks_exact(dim).enumerate() {
        let (dist, ids) = found.row(qi);
        let exact: Vec<f64> = ys.iter().map(|y| oracle(metric, x, y)).collect();
        for (r, (&d, &id)) in dist.iter().zip(ids).enumerate() {
            let tol = tolerance(metric, x, &ys[id]);
            assert!(
                (f64::from(d) - exact[id]).abs() <= tol,
                "query {qi} rank {r} id {id}: {d} vs {}",
                exact[id]
            );
        }
        let Some(&last) = ids.last() else { continue };
        let bar = exact[last];
        for (id, &e) in exact.iter().enumerate() {
            if !ids.contains(&id) {
                let tol = tolerance(metric, x, &ys[id]) + tolerance(metric, x, &ys[last]);
                let beats = match metric {
                    Metric::L2 => e < bar - tol,
                    _ => e > bar + tol,
                };
                assert!(
                    !beats,
                    "query {qi}: vector {id} ({e}) left out, last kept {last} ({bar})"
                );
            }
        }
    }
}

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
#[cfg(feature = "parallel")]
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
