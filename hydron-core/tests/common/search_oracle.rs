//! The oracle of the search tests (`quant_search.rs`,
//! `quant_direction.rs`): every vector rebuilt from the public pieces
//! (`e8p::decode` or `shell::decode`, the scale, `Rotation::unrotate`) in
//! `f64`, keeping its padding coordinates (what the search measures when
//! `dim` is not a multiple of 8), normalized in direction mode; distances
//! in `f64`; and the checks of a search result against it.

use super::SplitMix64;
use hydron_core::quant::{
    e8p, shell, LatticeQuantizer, Metric, QuantCodes, ScaleMode, SearchResult, GAUSSIAN_SCALE,
    SHELL_SCALE,
};

/// `n · dim` coordinates: Gaussian, each vector scaled by a random factor
/// in [0.1, 10) (per-vector scales differ, and `‖q‖²` matters in L2).
pub fn data(rng: &mut SplitMix64, n: usize, dim: usize) -> Vec<f32> {
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

/// Every vector of `codes`, rebuilt in `f64` with its padding coordinates;
/// in direction mode divided by its norm.
pub fn reconstruct(q: &LatticeQuantizer, codes: &QuantCodes) -> Vec<Vec<f64>> {
    let padded = q.padded_dim();
    let bytes = q.code_size() / q.blocks();
    let unit_step = if bytes == 4 {
        SHELL_SCALE
    } else {
        GAUSSIAN_SCALE
    };
    codes
        .codes
        .chunks_exact(q.code_size())
        .enumerate()
        .map(|(v, code)| {
            let scale = match q.scale_mode() {
                ScaleMode::PerVector => f64::from(codes.scales[v]),
                _ => f64::from(unit_step) / (padded as f64).sqrt(),
            };
            let mut y: Vec<f64> = code
                .chunks_exact(bytes)
                .flat_map(|b| match *b {
                    [a, b, c, d] => shell::decode(u32::from_le_bytes([a, b, c, d])),
                    [a, b] => e8p::decode(u16::from_le_bytes([a, b])),
                    _ => unreachable!("2- or 4-byte block codes"),
                })
                .map(|c| f64::from(c) * scale)
                .collect();
            if let Some(r) = q.rotation() {
                r.unrotate(&mut y);
            }
            if q.scale_mode() == ScaleMode::Direction {
                let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
                y.iter_mut().for_each(|v| *v /= norm);
            }
            y
        })
        .collect()
}

/// The oracle's distance of query `x` (`dim` numbers, zero-padded) to
/// vector `y`.
pub fn oracle(metric: Metric, x: &[f32], y: &[f64]) -> f64 {
    let pairs = y.iter().enumerate().map(|(i, &yi)| {
        let xi = x.get(i).map_or(0.0, |&v| f64::from(v));
        (xi, yi)
    });
    match metric {
        Metric::L2 => pairs.map(|(a, b)| (a - b) * (a - b)).sum(),
        _ => pairs.map(|(a, b)| a * b).sum(),
    }
}

/// The stated tolerance: `1e-5 (‖q‖² + ‖y‖²)` for L2, `1e-5 ‖q‖ ‖y‖` for
/// the inner product (`‖y‖ = 1` in direction mode).
pub fn tolerance(metric: Metric, x: &[f32], y: &[f64]) -> f64 {
    let qq: f64 = x.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
    let yy: f64 = y.iter().map(|v| v * v).sum();
    match metric {
        Metric::L2 => 1e-5 * (qq + yy),
        _ => 1e-5 * (qq * yy).sqrt(),
    }
}

/// Whether `a` ranks before `b` for `metric` (a better distance).
pub fn better(metric: Metric, a: f64, b: f64) -> bool {
    match metric {
        Metric::L2 => a < b,
        _ => a > b,
    }
}

/// Checks `found` against the oracle: every distance within the tolerance,
/// best first, and the ids the best `k` up to the tolerance (a vector left
/// out is no better than the last one kept by more than the tolerance).
pub fn check_against_oracle(
    q: &LatticeQuantizer,
    codes: &QuantCodes,
    queries: &[f32],
    k: usize,
    metric: Metric,
    found: &SearchResult,
) {
    let ys = reconstruct(q, codes);
    assert_eq!(found.k, k.min(ys.len()));
    for (qi, x) in queries.chunks_exact(q.dim()).enumerate() {
        let (dist, ids) = found.row(qi);
        let exact: Vec<f64> = ys.iter().map(|y| oracle(metric, x, y)).collect();
        for (r, (&d, &id)) in dist.iter().zip(ids).enumerate() {
            let tol = tolerance(metric, x, &ys[id]);
            assert!(
                (f64::from(d) - exact[id]).abs() <= tol,
                "dim {} query {qi} rank {r} id {id}: {d} vs {} (tolerance {tol})",
                q.dim(),
                exact[id]
            );
            if r > 0 {
                assert!(
                    !better(metric, f64::from(d), f64::from(dist[r - 1])),
                    "query {qi} rank {r}: {dist:?}"
                );
            }
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

/// Searches `queries` among `codes` in both metrics for each k of `ks`, and
/// checks every result against the oracle.
pub fn check_search(q: &LatticeQuantizer, codes: &QuantCodes, queries: &[f32], ks: &[usize]) {
    for metric in [Metric::L2, Metric::InnerProduct] {
        for &k in ks {
            let found = q.search(codes, queries, k, metric).unwrap();
            check_against_oracle(q, codes, queries, k, metric, &found);
        }
    }
}

/// Checks that every distance of `found` (a search of `queries`, `dim`
/// numbers each) is the oracle's distance to the vector `decode` gave, up
/// to the tolerance: what the search measures when `dim` is a multiple of
/// 8.
pub fn check_against_decoded(
    dim: usize,
    decoded: &[f32],
    queries: &[f32],
    metric: Metric,
    found: &SearchResult,
) {
    for (qi, x) in queries.chunks_exact(dim).enumerate() {
        let (dist, ids) = found.row(qi);
        for (&d, &id) in dist.iter().zip(ids) {
            let y: Vec<f64> = decoded[id * dim..(id + 1) * dim]
                .iter()
                .map(|&v| f64::from(v))
                .collect();
            let e = oracle(metric, x, &y);
            assert!(
                (f64::from(d) - e).abs() <= tolerance(metric, x, &y),
                "query {qi} id {id}: {d} vs {e}"
            );
        }
    }
}
