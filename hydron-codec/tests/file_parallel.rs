//! `file::load` with the `parallel` feature: a large file loads to the same
//! vectors, or fails with the same error, in rayon's global pool (where
//! its chunks are read across threads) as in a pool of one thread (where
//! they are read in order), whatever byte of it is changed.

#![cfg(all(feature = "parallel", feature = "fory-messages"))]

use std::path::Path;

use hydron_codec::file::{self, FileOptions, Format};
use hydron_codec::Policy;
use hydron_core::Gf8;
use proptest::prelude::*;

/// 150,001 vectors (4.8 MB, above the size from which loads split): unit,
/// but every 1,000th scaled by 2 when `scaled`.
fn vectors(scaled: bool) -> Vec<Gf8> {
    (0..150_001)
        .map(|i| {
            let x = i as f32 * 1e-3;
            let v = Gf8::normalize([x.sin(), x.cos(), 1.0, -x, 0.5, 0.25, -0.25, 3.0]).unwrap();
            if scaled && i % 1000 == 999 {
                Gf8::new_unchecked(v.scale(2.0))
            } else {
                v
            }
        })
        .collect()
}

fn container(vectors: &[Gf8], chunk_vectors: u32) -> Vec<u8> {
    let options = FileOptions::new().with_chunk_vectors(chunk_vectors);
    file::to_vec(vectors, Format::Fory, options).unwrap()
}

/// What `file::load` gives, in the global pool and in a pool of one thread.
fn both_ways(path: &Path, policy: Policy) -> (String, String) {
    let show = |r: Result<Vec<Gf8>, _>| match r {
        Ok(v) => format!("{} vectors, {:x?}", v.len(), crc(&v)),
        Err(e) => format!("error: {e}"),
    };
    let all = show(file::load(path, policy));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let serial = show(one.install(|| file::load(path, policy)));
    (all, serial)
}

/// A digest of every bit of the vectors (comparing 150,001 vectors in a
/// failure message would be unreadable).
fn crc(vectors: &[Gf8]) -> u64 {
    Gf8::slice_as_arrays(vectors)
        .iter()
        .flatten()
        .fold(0xcbf2_9ce4_8422_2325, |h: u64, x| {
            (h ^ u64::from(x.to_bits())).wrapping_mul(0x100_0000_01b3)
        })
}

#[test]
fn every_policy_and_chunk_size_loads_as_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.hyd");
    for scaled in [false, true] {
        let vs = vectors(scaled);
        for chunk_vectors in [65_536, 50_000, 4_096] {
            std::fs::write(&path, container(&vs, chunk_vectors)).unwrap();
            for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
                let (all, one) = both_ways(&path, policy);
                assert_eq!(all, one, "{policy:?}, chunks of {chunk_vectors}");
            }
            let loaded = file::load(&path, Policy::Trusted).unwrap();
            assert!(loaded == vs);
        }
    }
    // The scaled vectors are an error in strict mode, named as always.
    std::fs::write(&path, container(&vectors(true), 65_536)).unwrap();
    let err = file::load(&path, Policy::Strict).unwrap_err().to_string();
    assert!(err.contains("vector 999: "), "{err}");
}

#[test]
fn damaged_files_fail_as_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.hyd");
    let good = container(&vectors(false), 65_536);
    let mut nan = vectors(false);
    nan[100_000] = Gf8::new_unchecked([f32::NAN; 8]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("a flipped coordinate bit", {
            let mut b = good.clone();
            b[3_000_000] ^= 0x10;
            b
        }),
        ("a NaN vector", container(&nan, 65_536)),
        ("cut short", good[..good.len() - 100].to_vec()),
        ("a byte after the trailer", [&good[..], b"x"].concat()),
        ("a changed trailer", {
            let mut b = good.clone();
            let at = b.len() - 12;
            b[at] ^= 1;
            b
        }),
    ];
    for (what, bytes) in cases {
        std::fs::write(&path, bytes).unwrap();
        let (all, one) = both_ways(&path, Policy::Strict);
        assert!(all.starts_with("error: "), "{what}: {all}");
        assert_eq!(all, one, "{what}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any byte of the file, changed: the same vectors or the same error.
    #[test]
    fn any_changed_byte_loads_as_on_one_thread(at in 0.0..1.0f64, xor in 1u8..=255, policy in 0..3) {
        let policy = [Policy::Strict, Policy::Renormalize, Policy::Trusted][policy as usize];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.hyd");
        let mut bytes = container(&vectors(false), 65_536);
        let at = ((bytes.len() - 1) as f64 * at) as usize;
        bytes[at] ^= xor;
        std::fs::write(&path, &bytes).unwrap();
        let (all, one) = both_ways(&path, policy);
        prop_assert_eq!(all, one);
    }
}
