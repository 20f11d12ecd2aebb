//! Checks of the search tests (`quant_search.rs`, `quant_direction.rs`)
//! that compare the search with itself: every backend gives the scalar
//! result bit for bit, and every thread count the one-thread result.

use hydron_core::batch::Backend;
use hydron_core::quant::{LatticeQuantizer, Metric, QuantCodes, SearchResult};

/// The scalar and the AVX2 search of `queries` among `codes` (the best
/// `k`) give the same ids and the same distances bit for bit, in both
/// metrics. Call it inside [`super::with_avx2`].
pub fn assert_backends_agree(q: &LatticeQuantizer, codes: &QuantCodes, queries: &[f32], k: usize) {
    let count = queries.len() / q.dim();
    for metric in [Metric::L2, Metric::InnerProduct] {
        let run = |b| {
            q.search_codes_with(b, &codes.codes, &codes.scales, queries, k, metric)
                .unwrap()
        };
        let (s, a) = (run(Backend::Scalar), run(Backend::Avx2Fma));
        let what = format!(
            "dim {} bits {} queries {count} {metric:?}",
            q.dim(),
            q.bits_per_dim()
        );
        assert_eq!(s.ids, a.ids, "{what}");
        let bits = |r: &SearchResult| r.distances.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&s), bits(&a), "{what}");
    }
}

/// With `parallel`, a search of `queries` among `codes` large enough to
/// split gives the one-thread result, in the global pool and in a pool of 3
/// threads, in both metrics, for each k of `ks`. (wasm32 has no threads.)
#[cfg(all(feature = "parallel", not(target_family = "wasm")))]
pub fn assert_threads_agree(
    q: &LatticeQuantizer,
    codes: &QuantCodes,
    queries: &[f32],
    ks: &[usize],
) {
    use hydron_core::quant::SEARCH_PARALLEL_MIN_WORK;
    let n = codes.codes.len() / q.code_size();
    let count = queries.len() / q.dim();
    assert!(n * count * q.blocks() >= 2 * SEARCH_PARALLEL_MIN_WORK);
    let pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    for metric in [Metric::L2, Metric::InnerProduct] {
        for &k in ks {
            let serial = pool(1).install(|| q.search(codes, queries, k, metric).unwrap());
            let global = q.search(codes, queries, k, metric).unwrap();
            let three = pool(3).install(|| q.search(codes, queries, k, metric).unwrap());
            assert_eq!(serial, global, "{metric:?} {k}");
            assert_eq!(serial, three, "{metric:?} {k}");
        }
    }
}
