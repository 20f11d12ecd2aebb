//! Every input in `tests/regressions/` (inputs the fuzz targets found; see
//! `docs/fuzzing.md`) and every fuzz seed under `fuzz/seeds/`, fed to every
//! decoder of untrusted bytes: each must return `Ok` or a `CodecError`
//! with a message, never panic, and whatever a checking policy accepts
//! must be valid.
#![cfg(any(feature = "fory-messages", feature = "json", feature = "parquet"))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use hydron_codec::{CodecError, Policy};
use hydron_core::Gf8;

const POLICIES: [Policy; 3] = [Policy::Strict, Policy::Renormalize, Policy::Trusted];

/// The input files: regressions, then seeds (README files skipped).
fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("tests/regressions")];
    if let Ok(seeds) = std::fs::read_dir(root.join("../fuzz/seeds")) {
        dirs.extend(seeds.map(|e| e.unwrap().path()));
    }
    let mut files = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_file() && path.extension().is_none_or(|x| x != "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Checks one decoder's result on one input.
fn check<T>(
    path: &Path,
    decoder: &str,
    policy: Policy,
    run: impl FnOnce() -> Result<T, CodecError>,
    vectors: impl Fn(&T) -> Vec<Gf8>,
) {
    let result = catch_unwind(AssertUnwindSafe(run))
        .unwrap_or_else(|_| panic!("{decoder} ({policy:?}) panicked on {}", path.display()));
    match result {
        Ok(value) if policy != Policy::Trusted => {
            for (i, v) in vectors(&value).iter().enumerate() {
                assert!(
                    Gf8::check(v.as_array()).is_ok(),
                    "{decoder} ({policy:?}) accepted invalid vector {i} from {}",
                    path.display()
                );
            }
        }
        Ok(_) => {}
        Err(e) => assert!(
            !e.to_string().is_empty(),
            "{decoder}: an error without a message"
        ),
    }
}

#[test]
fn every_regression_input_decodes_or_fails_cleanly() {
    let files = inputs();
    assert!(
        !files.is_empty(),
        "no inputs found: the fuzz seeds are missing"
    );
    for path in &files {
        let data = std::fs::read(path).unwrap();
        for policy in POLICIES {
            #[cfg(feature = "fory-messages")]
            {
                use hydron_codec::fory;
                check(
                    path,
                    "fory::decode_batch",
                    policy,
                    || fory::decode_batch(&data, policy),
                    Vec::clone,
                );
                check(
                    path,
                    "fory::decode_gf8",
                    policy,
                    || fory::decode_gf8(&data, policy),
                    |v| vec![*v],
                );
            }
            #[cfg(feature = "json")]
            {
                use hydron_codec::json::{self, JsonLinesReader};
                check(
                    path,
                    "json::from_slice",
                    policy,
                    || json::from_slice(&data, policy),
                    Vec::clone,
                );
                check(
                    path,
                    "json::gf8_from_slice",
                    policy,
                    || json::gf8_from_slice(&data, policy),
                    |v| vec![*v],
                );
                check(
                    path,
                    "JsonLinesReader",
                    policy,
                    || Ok(JsonLinesReader::new(&data[..], policy).collect::<Vec<_>>()),
                    |items| {
                        items
                            .iter()
                            .filter_map(|r| r.as_ref().ok().copied())
                            .collect()
                    },
                );
            }
            #[cfg(any(feature = "fory-messages", feature = "json"))]
            {
                check(
                    path,
                    "file::from_slice",
                    policy,
                    || hydron_codec::file::from_slice(&data, policy),
                    Vec::clone,
                );
                check(
                    path,
                    "file::load",
                    policy,
                    || hydron_codec::file::load(path, policy),
                    Vec::clone,
                );
            }
            // The Parquet reader catches panics in the parquet crate and
            // reports them as errors; such an error is a failure here too.
            #[cfg(feature = "parquet")]
            {
                use hydron_codec::parquet::{self, ParquetReadOptions, ParquetReader};
                let no_caught_panic = |r: Result<Vec<Gf8>, CodecError>| {
                    if let Err(e) = &r {
                        assert!(
                            !e.to_string().contains("the Parquet decoder failed"),
                            "the parquet crate panicked on {}: {e}",
                            path.display()
                        );
                    }
                    r
                };
                check(
                    path,
                    "parquet::from_bytes",
                    policy,
                    || no_caught_panic(parquet::from_bytes(data.clone(), policy)),
                    Vec::clone,
                );
                check(
                    path,
                    "ParquetReader (batches of 3)",
                    policy,
                    || {
                        let opts = ParquetReadOptions::new().with_batch_vectors(3);
                        no_caught_panic(
                            ParquetReader::from_bytes(data.clone(), policy, opts).and_then(
                                |mut r| {
                                    let mut out = Vec::new();
                                    while r.read_chunk(&mut out)? > 0 {}
                                    Ok(out)
                                },
                            ),
                        )
                    },
                    Vec::clone,
                );
                check(
                    path,
                    "parquet::load",
                    policy,
                    || no_caught_panic(parquet::load(path, policy)),
                    Vec::clone,
                );
            }
        }
        #[cfg(feature = "parquet")]
        check(
            path,
            "ParquetReader::codes_from_bytes",
            Policy::Trusted,
            || {
                let codes = hydron_codec::parquet::ParquetReader::codes_from_bytes(data.clone())
                    .and_then(|mut r| {
                        let mut out = Vec::new();
                        while r.read_codes_chunk(&mut out)? > 0 {}
                        Ok(out)
                    });
                if let Err(e) = &codes {
                    assert!(
                        !e.to_string().contains("the Parquet decoder failed"),
                        "the parquet crate panicked on {}: {e}",
                        path.display()
                    );
                }
                codes
            },
            |_| Vec::new(),
        );
        #[cfg(feature = "fory-messages")]
        check(
            path,
            "fory::decode_codes",
            Policy::Trusted,
            || hydron_codec::fory::decode_codes(&data),
            |_| Vec::new(),
        );
        // Stored lattice codes: what decodes keeps the count, lengths and
        // scales its parameters promise.
        #[cfg(feature = "fory-messages")]
        check(
            path,
            "quant::decode",
            Policy::Trusted,
            || hydron_codec::quant::decode(&data).map(lattice_invariants),
            |_| Vec::new(),
        );
        #[cfg(feature = "parquet")]
        check(
            path,
            "quant::parquet_from_bytes",
            Policy::Trusted,
            || {
                let codes = hydron_codec::quant::parquet_from_bytes(data.clone());
                if let Err(e) = &codes {
                    assert!(
                        !e.to_string().contains("the Parquet decoder failed"),
                        "the parquet crate panicked on {}: {e}",
                        path.display()
                    );
                }
                codes.map(lattice_invariants)
            },
            |_| Vec::new(),
        );
    }
}

/// Panics unless decoded lattice codes keep their invariants.
#[cfg(any(feature = "fory-messages", feature = "parquet"))]
fn lattice_invariants(c: hydron_codec::quant::LatticeCodes) {
    let p = c.params();
    let codes = c.codes();
    assert_eq!(codes.codes.len() as u64, c.count() * p.code_size() as u64);
    let scales = if p.has_scales() { c.count() } else { 0 };
    assert_eq!(codes.scales.len() as u64, scales);
    assert!(codes.scales.iter().all(|s| s.is_finite() && *s >= 0.0));
}
