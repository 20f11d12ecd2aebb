//! `hydron quantize --bits 16|32` (Gf8 codes stored with their parameters,
//! docs/format.md §7) and `hydron inspect` of such files: the codes read
//! back equal the library's, the reports, and damaged files as errors
//! naming the byte offset or row.

use std::fs;

use hydron_codec::quant::{self, CodesScale};
use hydron_core::{gf8_codes, Gf8};
use predicates::prelude::*;
use tempfile::TempDir;

mod common;

use common::*;

#[test]
fn quantize_at_16_and_32_bits_writes_the_library_codes() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 500, "v.hyd", "fory", None);
    let vectors = vectors_of(&input);
    for (bits, to, name) in [
        ("16", "codes", "c16.fory"),
        ("32", "codes", "c32.fory"),
        ("16", "parquet", "c16.parquet"),
        ("32", "parquet", "c32.parquet"),
    ] {
        let out = dir.path().join(name);
        hydron()
            .args(["quantize", s(&input), s(&out), "--bits", bits, "--to", to])
            .assert()
            .success()
            .stdout(predicate::str::contains(format!(
                "quantized 500 vectors to {bits}-bit Gf8 codes"
            )))
            .stdout(predicate::str::contains("mean "));
        let codes = if to == "codes" {
            quant::load(&out).unwrap()
        } else {
            quant::load_parquet(&out).unwrap()
        };
        let p = codes.params();
        assert_eq!(
            (p.dim(), p.rotation(), p.scale()),
            (8, false, CodesScale::Direction)
        );
        assert_eq!(codes.count(), 500);
        let expected: Vec<u8> = if bits == "16" {
            gf8_codes::encode16(&vectors)
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect()
        } else {
            gf8_codes::encode32(&vectors)
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect()
        };
        assert_eq!(codes.codes().codes, expected, "{name}");
        let decoded: Vec<Gf8> = codes.decode_gf8().unwrap();
        assert_eq!(decoded.len(), 500);
    }
}

#[test]
fn quantize_reports_angles_that_shrink_with_bits() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 2000, "v.hyd", "fory", None);
    let mean = |bits: &str| -> f64 {
        let out = dir.path().join(format!("c{bits}"));
        let report = hydron()
            .args(["quantize", s(&input), s(&out), "--bits", bits])
            .output()
            .unwrap();
        let text = String::from_utf8(report.stdout).unwrap();
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("mean "))
            .unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let (m8, m16, m32) = (mean("8"), mean("16"), mean("32"));
    assert!((0.53..0.57).contains(&m8), "{m8}");
    assert!((0.24..0.26).contains(&m16), "{m16}");
    assert!((0.07..0.085).contains(&m32), "{m32}");
}

#[test]
fn bits_other_than_8_16_32_are_a_usage_error() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 10, "v.hyd", "fory", None);
    let out = dir.path().join("c");
    hydron()
        .args(["quantize", s(&input), s(&out), "--bits", "12"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not 8, 16 or 32"));
    assert!(!out.exists());
}

#[test]
fn quantize_16_bits_to_standard_output() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 3, "v.hyd", "fory", None);
    let out = hydron()
        .args(["quantize", s(&input), "-", "--bits", "16"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let codes = quant::decode(&out.stdout).unwrap();
    assert_eq!(codes.count(), 3);
    // The report goes to standard error when the codes go to standard output.
    assert!(String::from_utf8_lossy(&out.stderr).contains("quantized 3 vectors"));
}

#[test]
fn inspect_shows_the_parameters_of_a_codes_file() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 40, "v.hyd", "fory", None);
    for (to, name, format) in [
        ("codes", "c.fory", "lattice-codes"),
        ("parquet", "c.parquet", "parquet-lattice-codes"),
    ] {
        let out = dir.path().join(name);
        hydron()
            .args(["quantize", s(&input), s(&out), "--bits", "32", "--to", to])
            .assert()
            .success();
        hydron()
            .args(["inspect", s(&out)])
            .assert()
            .success()
            .stdout(predicate::str::contains("dim:        8"))
            .stdout(predicate::str::contains(
                "bits:       4 per coordinate (32-bit code",
            ))
            .stdout(predicate::str::contains("rotation:   off"))
            .stdout(predicate::str::contains("scale mode: direction"))
            .stdout(predicate::str::contains("count:      40 vectors"));
        let j = stdout_json(hydron().args(["inspect", s(&out), "--json"]));
        assert_eq!(j["format"], format);
        assert_eq!(j["dim"], 8);
        assert_eq!(j["bits"], 4);
        assert_eq!(j["code_size"], 4);
        assert_eq!(j["seed"], 0);
        assert_eq!(j["rotation"], false);
        assert_eq!(j["scale_mode"], "direction");
        assert_eq!(j["count"], 40);
        assert_eq!(j["complete"], true);
    }
}

#[test]
fn inspect_of_a_quantizer_codes_file_shows_seed_rotation_and_scale() {
    let dir = TempDir::new().unwrap();
    let q = hydron_core::quant::LatticeQuantizer::new(20, 2, 77).unwrap();
    let x: Vec<f32> = (0..60).map(|i| (i as f32 * 0.37).sin()).collect();
    let codes = quant::LatticeCodes::from_quantizer(&q, q.encode(&x).unwrap()).unwrap();
    let path = dir.path().join("q.fory");
    quant::save(&path, &codes).unwrap();
    hydron()
        .args(["inspect", s(&path)])
        .assert()
        .success()
        .stdout(predicate::str::contains("dim:        20"))
        .stdout(predicate::str::contains("seed:       77"))
        .stdout(predicate::str::contains("rotation:   on"))
        .stdout(predicate::str::contains("scale mode: per-vector"))
        .stdout(predicate::str::contains("count:      3 vectors"));
}

#[test]
fn a_damaged_codes_file_is_corrupt_and_names_the_offset() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 5, "v.hyd", "fory", None);
    let out = dir.path().join("c.fory");
    hydron()
        .args(["quantize", s(&input), s(&out), "--bits", "16"])
        .assert()
        .success();
    let mut bytes = fs::read(&out).unwrap();
    bytes[64] = 9; // the count: 9 vectors, the codes hold 5
    fs::write(&out, &bytes).unwrap();
    let err = fails(hydron().args(["inspect", s(&out)]), 5);
    assert!(err.contains("byte offset 64"), "{err}");
    assert!(err.contains("the count says 9 vectors"), "{err}");
    let j = stdout_json(hydron().args(["inspect", s(&out), "--json"]));
    assert_eq!(j["complete"], false);
    assert_eq!(j["error"]["offset"], 64);
    // Cut short: truncated data is an error, not a panic.
    fs::write(&out, &bytes[..70]).unwrap();
    let err = fails(hydron().args(["inspect", s(&out)]), 5);
    assert!(err.contains("ends early"), "{err}");
}
