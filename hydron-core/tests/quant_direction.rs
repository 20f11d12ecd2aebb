//! `ScaleMode::Direction`: the codes are unit mode's, `decode` gives
//! vectors of norm 1, and `search` measures the normalized reconstruction:
//! against an oracle that rebuilds every vector from the public pieces
//! (`e8p::decode` or `shell::decode`, `Rotation::unrotate`) in `f64` with
//! its padding coordinates and normalizes it; every backend against the
//! scalar one bit for bit; all threads against one.

mod common;

use common::search_checks::assert_backends_agree;
use common::search_oracle::{check_against_decoded, check_against_oracle, check_search, data};
use common::SplitMix64;
use hydron_core::quant::{LatticeQuantizer, Metric, QuantCodes, ScaleMode};
use hydron_core::Gf8;

/// `n · dim` coordinates: Gaussian vectors normalized to norm 1.
fn unit_data(rng: &mut SplitMix64, n: usize, dim: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(n * dim);
    for _ in 0..n {
        let mut v = Vec::new();
        while v.len() < dim {
            v.extend(rng.gaussian8());
        }
        let v = &v[..dim];
        let norm = v
            .iter()
            .map(|&a| f64::from(a) * f64::from(a))
            .sum::<f64>()
            .sqrt();
        out.extend(v.iter().map(|&a| (f64::from(a) / norm) as f32));
    }
    out
}

fn quantizer(dim: usize, bits: u32, rotate: bool, seed: u64) -> LatticeQuantizer {
    LatticeQuantizer::new(dim, bits, seed)
        .unwrap()
        .with_rotation(rotate)
        .with_scale(ScaleMode::Direction)
}

/// The codes are unit mode's, byte for byte, with no scales; `decode`'s
/// vectors have norm 1 and point where unit mode's do.
#[test]
fn codes_are_unit_modes_and_decoded_vectors_have_norm_1() {
    let mut rng = SplitMix64(5);
    for (dim, bits, rotate) in [
        (8, 2, false),
        (8, 4, false),
        (3, 2, false),
        (13, 2, true),
        (50, 2, true),
        (56, 4, true),
        (384, 2, true),
        (21, 4, true),
    ] {
        let q = quantizer(dim, bits, rotate, 3);
        let unit = q.clone().with_scale(ScaleMode::Unit);
        let x = unit_data(&mut rng, 200, dim);
        let codes = q.encode(&x).unwrap();
        assert_eq!(codes, unit.encode(&x).unwrap(), "{dim} {bits}");
        assert!(codes.scales.is_empty());
        let y = q.decode(&codes).unwrap();
        let u = unit.decode(&codes).unwrap();
        for (v, (a, b)) in y.chunks_exact(dim).zip(u.chunks_exact(dim)).enumerate() {
            let norm = |w: &[f32]| {
                w.iter()
                    .map(|&c| f64::from(c) * f64::from(c))
                    .sum::<f64>()
                    .sqrt()
            };
            let na = norm(a);
            assert!(
                (na - 1.0).abs() < 1e-6,
                "dim {dim} bits {bits} vector {v}: norm {na}"
            );
            // The same direction as unit mode's vector.
            let nb = norm(b);
            for (&ca, &cb) in a.iter().zip(b) {
                assert!(
                    (f64::from(ca) - f64::from(cb) / nb).abs() < 1e-6,
                    "dim {dim} vector {v}"
                );
            }
        }
    }
}

/// Dimension 8 without rotation at 2 bits is `Gf8`'s 16-bit code's decode,
/// bit for bit (the codeword divided by its norm in `f64`, rounded once).
#[test]
fn dimension_8_decodes_as_gf8_codes() {
    let q = quantizer(8, 2, false, 0);
    let codes: Vec<u8> = (0..=u16::MAX).flat_map(u16::to_le_bytes).collect();
    let y = q
        .decode(&QuantCodes {
            codes,
            scales: Vec::new(),
        })
        .unwrap();
    for (code, v) in (0..=u16::MAX).zip(y.chunks_exact(8)) {
        let g = Gf8::from_code16(code);
        assert_eq!(
            g.as_array().map(f32::to_bits),
            <[f32; 8]>::try_from(v).unwrap().map(f32::to_bits),
            "{code:#06x}"
        );
    }
}

#[test]
fn search_matches_the_f64_oracle() {
    let mut rng = SplitMix64(33);
    for (dim, bits, rotate) in [
        (8, 2, false),
        (3, 2, false),
        (20, 2, true),
        (50, 2, true),
        (64, 2, true),
        (8, 4, false),
        (13, 4, true),
        (96, 4, true),
    ] {
        let q = quantizer(dim, bits, rotate, 9);
        let n = 250;
        let codes = q.encode(&unit_data(&mut rng, n, dim)).unwrap();
        let queries = data(&mut rng, 11, dim);
        check_search(&q, &codes, &queries, &[1, 10, n + 3]);
    }
}

/// With whole blocks the search measures `decode`'s (normalized) vectors;
/// unit mode's search gives other distances on the same codes.
#[test]
fn with_whole_blocks_the_distances_are_to_the_decoded_vectors() {
    let mut rng = SplitMix64(12);
    for bits in [2, 4] {
        let dim = 56;
        let q = quantizer(dim, bits, true, 1);
        let codes = q.encode(&unit_data(&mut rng, 150, dim)).unwrap();
        let decoded = q.decode(&codes).unwrap();
        let queries = unit_data(&mut rng, 4, dim);
        for metric in [Metric::L2, Metric::InnerProduct] {
            let found = q.search(&codes, &queries, 150, metric).unwrap();
            let unit = q
                .clone()
                .with_scale(ScaleMode::Unit)
                .search(&codes, &queries, 150, metric)
                .unwrap();
            assert_ne!(found.distances, unit.distances);
            check_against_decoded(dim, &decoded, &queries, metric, &found);
        }
    }
}

#[test]
fn every_backend_gives_the_scalar_result_bit_for_bit() {
    common::with_avx2("the AVX2 search kernel", || {
        let mut rng = SplitMix64(17);
        for (dim, bits) in [(8, 2), (13, 2), (96, 2), (8, 4), (40, 4)] {
            let q = quantizer(dim, bits, dim > 8, 2);
            let codes = q.encode(&unit_data(&mut rng, 300, dim)).unwrap();
            // 1 to 15 queries: every group size (8, 4, 2, 1) and tail.
            for count in [1, 2, 3, 5, 8, 15] {
                let queries = data(&mut rng, count, dim);
                assert_backends_agree(&q, &codes, &queries, 300);
            }
        }
    });
}

/// With `parallel`, a search large enough to split gives the one-thread
/// result (in the global pool, and in a pool of 3 threads; wasm32 has no
/// threads).
#[cfg(all(feature = "parallel", not(target_family = "wasm")))]
#[test]
fn all_threads_give_the_one_thread_result() {
    let dim = 56;
    let q = quantizer(dim, 2, true, 6);
    let mut rng = SplitMix64(3);
    let n = 20_000;
    let codes = q.encode(&unit_data(&mut rng, n, dim)).unwrap();
    let queries = unit_data(&mut rng, 20, dim);
    common::search_checks::assert_threads_agree(&q, &codes, &queries, &[1, 10, 3000]);
}

/// Scales are refused in direction mode, as in unit mode.
#[test]
fn scales_are_refused() {
    let q = quantizer(16, 2, true, 0);
    let codes = q.encode(&[0.25; 32]).unwrap();
    let err = q.search_codes(&codes.codes, &[1.0, 1.0], &[0.25; 16], 1, Metric::L2);
    assert!(err.is_err());
    assert!(q
        .decode_into(&codes.codes, &[1.0, 1.0], &mut [0.0; 32])
        .is_err());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]

    /// Any dimension, rotation, rate, metric and k: the oracle's answer,
    /// and decoded vectors of norm 1.
    #[test]
    fn search_and_decode_for_any_parameters(
        dim in 1usize..70,
        rotate in proptest::prelude::any::<bool>(),
        four in proptest::prelude::any::<bool>(),
        ip in proptest::prelude::any::<bool>(),
        k in 1usize..30,
        salt in proptest::prelude::any::<u64>(),
    ) {
        let q = quantizer(dim, if four { 4 } else { 2 }, rotate, salt);
        let mut rng = SplitMix64(salt);
        let codes = q.encode(&unit_data(&mut rng, 50, dim)).unwrap();
        let queries = data(&mut rng, 3, dim);
        let metric = if ip { Metric::InnerProduct } else { Metric::L2 };
        let found = q.search(&codes, &queries, k, metric).unwrap();
        check_against_oracle(&q, &codes, &queries, k, metric, &found);
        for v in q.decode(&codes).unwrap().chunks_exact(dim) {
            let norm = v.iter().map(|&c| f64::from(c) * f64::from(c)).sum::<f64>().sqrt();
            proptest::prop_assert!((norm - 1.0).abs() < 1e-6, "norm {}", norm);
        }
    }
}
