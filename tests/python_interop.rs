//! Rust decodes what Python wrote: fory messages and hydron files written by
//! the Python package (`python/hydron`, by `python/tests/test_interop.py`),
//! and batch messages written by stock pyfory alone
//! (`python/examples/stock_pyfory.py`, the `pyfory_batch_*` entries),
//! each with its expected values as raw little-endian `f32` (`NAME.f32`) or
//! `u8` (`NAME.u8`). Every one is decoded with `Policy::Strict` and compared
//! bit for bit, and re-encoded by Rust to the very same bytes.
//!
//! Ignored by default: it needs the directory Python wrote, given in the
//! environment variable `HYDRON_INTEROP_DIR`. `python/run-tests.sh` runs it:
//!
//! ```sh
//! HYDRON_INTEROP_DIR=DIR cargo test --features fory,json --test python_interop -- --ignored
//! ```
//!
//! When run, a missing variable, a missing or empty directory, or a missing
//! file is a failure, never a skip.

use std::path::{Path, PathBuf};

use hydron::codec::file::{self, FileOptions, Format};
use hydron::codec::{fory, CodecError, Policy};
use hydron::Gf8;

/// The directory Python wrote, from `HYDRON_INTEROP_DIR`; panics if it is
/// unset, missing or empty.
fn interop_dir() -> PathBuf {
    let dir = std::env::var_os("HYDRON_INTEROP_DIR").unwrap_or_else(|| {
        panic!(
            "HYDRON_INTEROP_DIR is not set: run `bash python/run-tests.sh`, or set it to the \
             directory the Python interop tests wrote"
        )
    });
    let dir = PathBuf::from(dir);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("HYDRON_INTEROP_DIR={}: {e}", dir.display()));
    assert!(
        entries.count() > 0,
        "HYDRON_INTEROP_DIR={} is empty: the Python tests wrote nothing",
        dir.display()
    );
    dir
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The expected vectors of `NAME.f32` as bit patterns.
fn expected_bits(dir: &Path, name: &str) -> Vec<[u32; 8]> {
    let bytes = read(dir, &format!("{name}.f32"));
    assert_eq!(bytes.len() % 32, 0, "{name}.f32: not whole vectors");
    bytes
        .chunks_exact(32)
        .map(|v| {
            std::array::from_fn(|i| u32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap()))
        })
        .collect()
}

fn bits(vectors: &[Gf8]) -> Vec<[u32; 8]> {
    Gf8::slice_as_arrays(vectors)
        .iter()
        .map(|v| v.map(f32::to_bits))
        .collect()
}

/// `KIND NAME` lines of `MANIFEST.txt`.
fn manifest(dir: &Path) -> Vec<(String, String)> {
    let text = String::from_utf8(read(dir, "MANIFEST.txt")).expect("MANIFEST.txt is UTF-8");
    let entries: Vec<(String, String)> = text
        .lines()
        .map(|line| {
            let (kind, name) = line
                .split_once(' ')
                .unwrap_or_else(|| panic!("bad MANIFEST.txt line {line:?}"));
            (kind.to_owned(), name.to_owned())
        })
        .collect();
    assert!(!entries.is_empty(), "MANIFEST.txt lists nothing");
    entries
}

/// The chunk size in a hydron file's header (either form).
fn chunk_vectors(bytes: &[u8]) -> u32 {
    if bytes.starts_with(&file::MAGIC) {
        return u32::from_le_bytes(bytes[12..16].try_into().unwrap());
    }
    let text = std::str::from_utf8(bytes).expect("a text file is UTF-8");
    let rest = text
        .split_once("\"chunk_vectors\":")
        .expect("a header line")
        .1;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().expect("a chunk size")
}

#[test]
#[ignore = "needs the files the Python tests write: run python/run-tests.sh"]
fn rust_decodes_what_python_wrote() {
    let dir = interop_dir();
    let mut checked = Vec::new();
    for (kind, name) in manifest(&dir) {
        match kind.as_str() {
            "batch" => {
                let bytes = read(&dir, &format!("{name}.bin"));
                let decoded = fory::decode_batch(&bytes, Policy::Strict)
                    .unwrap_or_else(|e| panic!("{name}.bin: {e}"));
                assert_eq!(bits(&decoded), expected_bits(&dir, &name), "{name}.bin");
                assert_eq!(fory::encode_batch(&decoded), bytes, "{name}.bin re-encoded");
            }
            "gf8" => {
                let bytes = read(&dir, &format!("{name}.bin"));
                let v = fory::decode_gf8(&bytes, Policy::Strict)
                    .unwrap_or_else(|e| panic!("{name}.bin: {e}"));
                assert_eq!(bits(&[v]), expected_bits(&dir, &name), "{name}.bin");
                assert_eq!(fory::encode_gf8(v), bytes, "{name}.bin re-encoded");
            }
            "codes" => {
                let bytes = read(&dir, &format!("{name}.bin"));
                let roots =
                    fory::decode_codes(&bytes).unwrap_or_else(|e| panic!("{name}.bin: {e}"));
                let codes: Vec<u8> = roots.iter().map(|r| r.code()).collect();
                assert_eq!(codes, read(&dir, &format!("{name}.u8")), "{name}.bin");
                assert_eq!(fory::encode_codes(&roots), bytes, "{name}.bin re-encoded");
            }
            "file" => {
                let path = dir.join(format!("{name}.hyd"));
                let decoded = file::load(&path, Policy::Strict).unwrap_or_else(|e| panic!("{}", e));
                assert_eq!(bits(&decoded), expected_bits(&dir, &name), "{name}.hyd");
                // Rust writes the same bytes for the same vectors and chunk size.
                let bytes = read(&dir, &format!("{name}.hyd"));
                let format = if bytes.starts_with(&file::MAGIC) {
                    Format::Fory
                } else {
                    Format::JsonLines
                };
                let options = FileOptions::new().with_chunk_vectors(chunk_vectors(&bytes));
                let again = file::to_vec(&decoded, format, options).unwrap();
                assert!(
                    again == bytes,
                    "{name}.hyd: Rust re-encodes it to other bytes"
                );
            }
            "corrupt" => {
                // Damaged files Python wrote: Rust must reject them too.
                let path = dir.join(format!("{name}.hyd"));
                match file::load(&path, Policy::Strict) {
                    Err(CodecError::InFile { error, .. })
                        if matches!(
                            *error,
                            CodecError::Corrupt { .. } | CodecError::Truncated { .. }
                        ) => {}
                    other => panic!("{name}.hyd: expected corruption or truncation, got {other:?}"),
                }
            }
            "invalid" => {
                let path = dir.join(format!("{name}.hyd"));
                match file::load(&path, Policy::Strict) {
                    Err(CodecError::InFile { error, .. })
                        if matches!(
                            *error,
                            CodecError::InvalidVector { .. }
                                | CodecError::InvalidVectorOnLine { .. }
                        ) => {}
                    other => panic!("{name}.hyd: expected an invalid vector, got {other:?}"),
                }
            }
            other => panic!("MANIFEST.txt: unknown kind {other:?}"),
        }
        checked.push(format!("{kind} {name}"));
    }
    for kind in ["batch", "gf8", "codes", "file"] {
        assert!(
            checked.iter().any(|c| c.starts_with(kind)),
            "MANIFEST.txt has no {kind} entry"
        );
    }
    println!(
        "checked {} Python-written entries: {checked:?}",
        checked.len()
    );
}
