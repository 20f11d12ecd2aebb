//! End-to-end tests of the `hydron` binary with Parquet: round trips in
//! every compression, options, standard input and output, `inspect` and
//! `validate`, codes from `quantize`, failed conversions leaving nothing,
//! and the column read: `--column`, the note naming it, and the errors for
//! two candidates or none.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use hydron_codec::file::{self};
use hydron_codec::Policy;
use hydron_core::{E8Root, Gf8};
use predicates::prelude::*;
use tempfile::TempDir;

mod common;

use common::*;

/// `hydron convert IN OUT --to TO [extra…]`, which must succeed quietly
/// (but for the note on the Parquet column read).
fn convert(input: &Path, output: &Path, to: &str, extra: &[&str]) {
    let out = hydron()
        .arg("convert")
        .arg(input)
        .arg(output)
        .args(["--to", to])
        .args(extra)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(without_column_notes(&stderr), "", "{stderr}");
}

#[test]
fn parquet_round_trips_bit_for_bit_in_every_compression() {
    let dir = TempDir::new().unwrap();
    let original = gen(dir.path(), 1000, "o.hyd", "fory", Some(256));
    let vectors = file::load(&original, Policy::Strict).unwrap();
    for compression in ["none", "zstd", "zstd:19", "snappy", "lz4", "gzip:1"] {
        let pq = dir.path().join(format!("{compression}.parquet"));
        convert(
            &original,
            &pq,
            "parquet",
            &["--compression", compression, "--row-group-vectors", "300"],
        );
        assert_eq!(&fs::read(&pq).unwrap()[..4], b"PAR1");
        let read = hydron_codec::parquet::load(&pq, Policy::Strict).unwrap();
        assert_eq!(read, vectors, "{compression}");
        let back = dir.path().join(format!("{compression}.hyd"));
        convert(&pq, &back, "fory", &["--chunk-vectors", "256"]);
        assert_eq!(
            fs::read(&original).unwrap(),
            fs::read(&back).unwrap(),
            "{compression}: container → parquet → container changed a bit"
        );
        let v = stdout_json(hydron().arg("inspect").arg(&pq).arg("--json"));
        assert_eq!(v["row_groups"], 4, "{compression}");
    }
    // The default compression is the library's (snappy): the same bytes.
    let default = dir.path().join("default.parquet");
    convert(&original, &default, "parquet", &[]);
    let mut bytes = Vec::new();
    let mut e = hydron_codec::parquet::ParquetEncoder::new(
        &mut bytes,
        hydron_codec::parquet::ParquetOptions::new(),
    )
    .unwrap();
    e.write(&vectors).unwrap();
    e.finish().unwrap();
    assert_eq!(fs::read(&default).unwrap(), bytes);
    // gen writes Parquet too, the same vectors as in every other form.
    let generated = gen(dir.path(), 1000, "g.parquet", "parquet", None);
    assert_eq!(fs::read(&generated).unwrap(), bytes);
}

#[test]
fn parquet_options_are_checked_on_the_command_line() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 10, "a.hyd", "fory", None);
    for bad in [
        ["--compression", "brotli"],
        ["--compression", "zstd:99"],
        ["--row-group-vectors", "0"],
    ] {
        hydron()
            .arg("convert")
            .arg(&input)
            .arg(dir.path().join("x.parquet"))
            .args(["--to", "parquet"])
            .args(bad)
            .assert()
            .code(2);
    }
    assert_eq!(listing(dir.path()), ["a.hyd"]);
}

#[test]
fn parquet_streams_from_stdin_and_to_stdout() {
    let dir = TempDir::new().unwrap();
    let original = gen(dir.path(), 3000, "o.hyd", "fory", None);
    let vectors = file::load(&original, Policy::Strict).unwrap();
    let pq = dir.path().join("o.parquet");
    convert(&original, &pq, "parquet", &["--row-group-vectors", "1000"]);
    // From a pipe: read whole, decoded the same.
    let out = dir.path().join("from-stdin.hyd");
    hydron()
        .args(["convert", "-"])
        .arg(&out)
        .args(["--to", "fory"])
        .write_stdin(fs::read(&pq).unwrap())
        .assert()
        .success()
        .stdout(predicate::str::contains("(Parquet, vector column"));
    assert_eq!(fs::read(&original).unwrap(), fs::read(&out).unwrap());
    // To standard output: the same bytes as to a file; the report goes to
    // standard error.
    let assert = hydron()
        .arg("convert")
        .arg(&original)
        .args(["-", "--to", "parquet", "--row-group-vectors", "1000"])
        .assert()
        .success()
        .stderr(predicate::str::contains("converted 3000 vectors"));
    let streamed = assert.get_output().stdout.clone();
    assert_eq!(streamed, fs::read(&pq).unwrap());
    assert_eq!(
        hydron_codec::parquet::from_bytes(streamed.clone(), Policy::Strict).unwrap(),
        vectors
    );
    // A pipe larger than --max-input-bytes is refused (it is read whole);
    // the same bytes as a regular file are streamed.
    fails(
        hydron()
            .args(["--max-input-bytes", "1K", "validate", "-"])
            .write_stdin(streamed),
        6,
    );
    hydron()
        .args(["--max-input-bytes", "1K", "validate"])
        .arg(&pq)
        .assert()
        .success();
}

#[test]
fn inspect_and_validate_describe_parquet() {
    let dir = TempDir::new().unwrap();
    let original = gen(dir.path(), 1000, "o.hyd", "fory", None);
    let pq = dir.path().join("o.parquet");
    convert(&original, &pq, "parquet", &["--row-group-vectors", "400"]);
    let v = stdout_json(hydron().arg("inspect").arg(&pq).arg("--json"));
    assert_eq!(v["format"], "parquet");
    assert_eq!(v["format_description"], "Parquet, vector column");
    assert_eq!(v["vectors"], 1000);
    assert_eq!(v["claimed_vectors"], 1000);
    assert_eq!(v["row_groups"], 3);
    assert_eq!(v["column"]["name"], "vector");
    assert!(
        v["column"]["type"].as_str().unwrap().contains("Float32"),
        "{v}"
    );
    assert_eq!(v["checksums"], "ok");
    assert_eq!(v["complete"], true);
    assert_eq!(v["summary"]["valid"], 1000);
    assert_eq!(v["bytes"], fs::metadata(&pq).unwrap().len());
    hydron()
        .arg("inspect")
        .arg(&pq)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "format:     Parquet, vector column",
        ))
        .stdout(predicate::str::contains("column:     vector ("))
        .stdout(predicate::str::contains("vectors:    1000 in 3 row groups"));
    hydron()
        .arg("validate")
        .arg(&pq)
        .assert()
        .success()
        .stdout(predicate::str::contains("valid: 1000 vectors"))
        .stdout(predicate::str::contains("(3 row groups)"));
    let v = stdout_json(hydron().arg("validate").arg(&pq).arg("--json"));
    assert_eq!(
        (v["valid"].as_bool(), v["exit_code"].as_u64()),
        (Some(true), Some(0))
    );

    // Every vector is checked: invalid ones are listed by row.
    let mut vectors = file::load(&original, Policy::Strict).unwrap();
    vectors[3] = Gf8::new_unchecked([f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    vectors[777] = Gf8::new_unchecked([2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let bad = dir.path().join("bad.parquet");
    hydron_codec::parquet::save(&bad, &vectors, hydron_codec::parquet::ParquetOptions::new())
        .unwrap();
    let out = fails(hydron().arg("validate").arg(&bad), 1);
    assert!(out.contains("2 of 1000 vectors are invalid"), "{out}");
    let v = stdout_json(hydron().arg("validate").arg(&bad).arg("--json"));
    assert_eq!(v["invalid_vectors"], 2);
    assert_eq!(v["problems"][0]["vector"], 3);
    assert_eq!(v["problems"][0]["coordinate"], 0);
    assert_eq!(v["problems"][1]["vector"], 777);
    assert_eq!(v["exit_code"], 1);
}

#[test]
fn quantize_writes_parquet_codes_that_read_back() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 2000, "q.hyd", "fory", None);
    let vectors = file::load(&input, Policy::Strict).unwrap();
    let expected: Vec<E8Root> = vectors.iter().map(|v| v.nearest_root()).collect();
    let out = dir.path().join("q.parquet");
    hydron()
        .arg("quantize")
        .arg(&input)
        .arg(&out)
        .args(["--to", "parquet", "--compression", "zstd"])
        .args(["--row-group-vectors", "512"])
        .assert()
        .success()
        .stderr("")
        .stdout(predicate::str::contains("Parquet, E8 code column"))
        .stdout(predicate::str::contains("mean "));
    assert_eq!(hydron_codec::parquet::load_codes(&out).unwrap(), expected);
    // hydron reads the codes back as the roots they name, like E8Codes.
    let v = stdout_json(hydron().arg("inspect").arg(&out).arg("--json"));
    assert_eq!(v["format"], "parquet-codes");
    assert_eq!(v["column"]["name"], "code");
    assert_eq!(v["column"]["type"], "UInt8");
    assert_eq!(v["row_groups"], 4);
    assert_eq!(v["vectors"], 2000);
    let fory_codes = dir.path().join("q.codes");
    hydron()
        .arg("quantize")
        .arg(&input)
        .arg(&fory_codes)
        .assert()
        .success();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    convert(&out, &a, "json", &[]);
    convert(&fory_codes, &b, "json", &[]);
    assert_eq!(fs::read(a).unwrap(), fs::read(b).unwrap());
    // convert --to parquet-codes writes the same file quantize does.
    let converted = dir.path().join("c.parquet");
    convert(
        &input,
        &converted,
        "parquet-codes",
        &["--compression", "zstd", "--row-group-vectors", "512"],
    );
    assert_eq!(fs::read(&converted).unwrap(), fs::read(&out).unwrap());
    // And a codes file quantizes to itself.
    let again = dir.path().join("again.parquet");
    hydron()
        .arg("quantize")
        .arg(&out)
        .arg(&again)
        .args(["--to", "parquet"])
        .assert()
        .success()
        .stdout(predicate::str::contains("max  0.000000 rad"));
    assert_eq!(hydron_codec::parquet::load_codes(&again).unwrap(), expected);
}

#[test]
fn a_failed_parquet_convert_leaves_no_output() {
    let dir = TempDir::new().unwrap();
    let good = gen(dir.path(), 500, "good.hyd", "fory", Some(100));
    let bytes = fs::read(&good).unwrap();
    let cut = dir.path().join("cut.hyd");
    fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let out = dir.path().join("out.parquet");
    let convert = || {
        fails(
            hydron()
                .arg("convert")
                .arg(&cut)
                .arg(&out)
                .args(["--to", "parquet"]),
            5,
        )
    };
    convert();
    assert!(!out.exists());
    fs::write(&out, b"old").unwrap();
    convert();
    assert_eq!(fs::read(&out).unwrap(), b"old");
    assert_eq!(listing(dir.path()), ["cut.hyd", "good.hyd", "out.parquet"]);
}

/// The one-line error of `hydron validate path args`, which must exit 4
/// (no usable column).
fn validate_fails(path: &Path, args: &[&str]) -> String {
    fails(hydron().arg("validate").arg(path).args(args), 4)
}

/// A Parquet file of `columns`, written by the parquet crate's own Arrow
/// writer as other tools would (no hydron.type marks).
fn foreign(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays).unwrap();
    let mut w = ::parquet::arrow::ArrowWriter::try_new(Vec::new(), schema, None).unwrap();
    w.write(&batch).unwrap();
    fs::write(path, w.into_inner().unwrap()).unwrap();
}

/// `n` vectors: E8 roots from the `start`-th on.
fn roots_from(start: usize, n: usize) -> Vec<Gf8> {
    (0..n)
        .map(|i| E8Root::new(((start + i) % 240) as u8).unwrap().to_gf8())
        .collect()
}

fn vectors(v: Vec<Gf8>) -> ArrayRef {
    Arc::new(hydron_codec::arrow::vectors_to_arrow(v))
}

#[test]
fn column_chooses_among_vector_columns_and_every_command_says_which() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("two.parquet");
    let (a, b) = (roots_from(0, 50), roots_from(100, 50));
    foreign(
        &path,
        vec![("a", vectors(a.clone())), ("b", vectors(b.clone()))],
    );
    // Without --column: an error listing both, with their types.
    for command in ["validate", "inspect"] {
        let e = fails(hydron().arg(command).arg(&path), 4);
        assert!(
            e.contains("which vector column? 2 columns could be it"),
            "{e}"
        );
        assert!(
            e.contains(": a (FixedSizeList(") && e.contains(", b (FixedSizeList("),
            "{e}"
        );
    }
    // With it: that column, in every command, each saying so on stderr.
    let (read, note) = read_back(&path, &["--column", "b"]);
    assert_eq!(read, b);
    assert!(
        note.contains("two.parquet: reading column \"b\" (FixedSizeList("),
        "{note}"
    );
    assert!(note.trim_end().ends_with(") as vectors"), "{note}");
    assert_eq!(read_back(&path, &["--column", "a"]).0, a);
    for command in ["validate", "inspect"] {
        let out = hydron()
            .arg(command)
            .arg(&path)
            .args(["--column", "b", "--json"])
            .assert()
            .success();
        let out = out.get_output();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["column"]["name"], "b", "{command}: {v}");
        assert!(v["column"]["type"]
            .as_str()
            .unwrap()
            .starts_with("FixedSizeList("));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("reading column \"b\""),
            "{command}: {stderr}"
        );
    }
    let codes = dir.path().join("a.codes");
    hydron()
        .arg("quantize")
        .arg(&path)
        .arg(&codes)
        .args(["--column", "a"])
        .assert()
        .success()
        .stderr(predicate::str::contains("reading column \"a\""));
    let expected: Vec<E8Root> = a.iter().map(|v| v.nearest_root()).collect();
    assert_eq!(
        hydron_codec::fory::decode_codes(&fs::read(&codes).unwrap()).unwrap(),
        expected
    );
}

#[test]
fn the_same_name_twice_is_an_error_listing_both() {
    // Read from the first before, with exit 0 and no warning.
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("twice.parquet");
    foreign(
        &path,
        vec![
            ("vector", vectors(roots_from(0, 10))),
            ("vector", vectors(roots_from(5, 10))),
        ],
    );
    let e = validate_fails(&path, &[]);
    assert!(
        e.contains("which vector column? 2 columns could be it"),
        "{e}"
    );
    assert_eq!(e.matches("vector (FixedSizeList(").count(), 2, "{e}");
    let e = validate_fails(&path, &["--column", "vector"]);
    assert!(e.contains("2 columns are named \"vector\""), "{e}");
}

#[test]
fn a_file_without_a_usable_column_lists_every_column_with_its_type() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("none.parquet");
    foreign(
        &path,
        vec![
            (
                "name",
                Arc::new(StringArray::from(vec!["x"; 3])) as ArrayRef,
            ),
            ("score", Arc::new(Float64Array::from(vec![1.0; 3]))),
        ],
    );
    for extra in [&[][..], &["--column", "nope"]] {
        let e = validate_fails(&path, extra);
        assert!(
            e.contains("the columns are name (Utf8), score (Float64)"),
            "{extra:?}: {e}"
        );
    }
    let e = validate_fails(&path, &["--column", "nope"]);
    assert!(e.contains("there is no column named \"nope\""), "{e}");
}

#[test]
fn column_reads_a_code_column_and_is_a_usage_error_off_parquet() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("both.parquet");
    let roots: Vec<E8Root> = (0..20).map(|i| E8Root::new(i * 7).unwrap()).collect();
    foreign(
        &path,
        vec![
            ("vector", vectors(roots_from(3, 20))),
            (
                "code",
                Arc::new(hydron_codec::arrow::codes_to_arrow(roots.clone())),
            ),
        ],
    );
    assert_eq!(read_back(&path, &[]).0, roots_from(3, 20));
    let (read, note) = read_back(&path, &["--column", "code"]);
    let expected: Vec<Gf8> = roots.iter().map(|r| r.to_gf8()).collect();
    assert_eq!(read, expected);
    assert!(
        note.contains("reading column \"code\" (UInt8) as E8 root codes"),
        "{note}"
    );
    let hyd = gen(dir.path(), 10, "a.hyd", "fory", None);
    for command in ["validate", "inspect"] {
        let e = fails(hydron().arg(command).arg(&hyd).args(["--column", "v"]), 2);
        assert!(
            e.contains("--column chooses a column of a Parquet input"),
            "{e}"
        );
    }
    let e = fails(
        hydron()
            .arg("convert")
            .arg(&hyd)
            .arg(dir.path().join("o.json"))
            .args(["--to", "json", "--column", "v"]),
        2,
    );
    assert!(e.contains("this input is not Parquet"), "{e}");
    assert!(!dir.path().join("o.json").exists());
}

/// A Parquet file of lattice codes that hydron wrote (`codes` at `path`),
/// with `vector` added beside its columns (the `hydron.quant.*` footer
/// keys kept), as another tool that adds a column would write it.
fn codes_with_a_vector_column(codes: &Path, path: &Path, vector: Vec<Gf8>) {
    use ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let reader = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(codes).unwrap()).unwrap();
    // The parameters only: hydron's checksums cover the columns it wrote.
    let kv: Vec<_> = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .filter(|e| e.key.starts_with("hydron.quant."))
        .cloned()
        .collect();
    let batch = reader.build().unwrap().next().unwrap().unwrap();
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new(
        "vector",
        vectors(vector.clone()).data_type().clone(),
        true,
    ));
    let schema = Arc::new(Schema::new(fields));
    let mut arrays = batch.columns().to_vec();
    arrays.push(vectors(vector));
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays).unwrap();
    let props = ::parquet::file::properties::WriterProperties::builder()
        .set_key_value_metadata(Some(kv))
        .build();
    let mut w = ::parquet::arrow::ArrowWriter::try_new(Vec::new(), schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    fs::write(path, w.into_inner().unwrap()).unwrap();
}

#[test]
fn column_on_a_lattice_codes_file_reads_the_codes_or_names_their_columns() {
    use hydron_codec::parquet::ParquetOptions;
    use hydron_codec::quant::{self, LatticeCodes};
    let dir = TempDir::new().unwrap();
    let roots = roots_from(5, 30);
    let gf8 = dir.path().join("gf8.parquet");
    let codes = LatticeCodes::from_gf8(&roots, 4).unwrap();
    quant::save_parquet(&gf8, &codes, ParquetOptions::new()).unwrap();
    let decoded = codes.decode_gf8().unwrap();
    // --column code: the codes, as without --column, by path and on stdin.
    assert_eq!(read_back(&gf8, &[]).0, decoded);
    assert_eq!(read_back(&gf8, &["--column", "code"]).0, decoded);
    let report = |extra: &[&str]| {
        let run = hydron()
            .arg("inspect")
            .arg(&gf8)
            .args(extra)
            .assert()
            .success();
        String::from_utf8(run.get_output().stdout.clone()).unwrap()
    };
    assert_eq!(report(&["--column", "code"]), report(&[]));
    hydron()
        .args(["validate", "-", "--column", "code"])
        .pipe_stdin(&gf8)
        .unwrap()
        .assert()
        .success()
        .stdout(predicate::str::contains("valid: 30 lattice codes"));
    // Another name: an error naming the codes file, its columns and
    // --column code (by path and on stdin; inspect keeps the form).
    let q = hydron_core::quant::LatticeQuantizer::new(20, 2, 77).unwrap();
    let x: Vec<f32> = (0..60).map(|i| (i as f32 * 0.37).sin()).collect();
    let scaled = LatticeCodes::from_quantizer(&q, q.encode(&x).unwrap()).unwrap();
    let path = dir.path().join("q.parquet");
    quant::save_parquet(&path, &scaled, ParquetOptions::new()).unwrap();
    let out = dir.path().join("o.hyd");
    for (command, source) in [
        ("validate", s(&path)),
        ("inspect", "-"),
        ("convert", s(&path)),
    ] {
        let mut cmd = hydron();
        cmd.args([command, source, "--column", "scale"]);
        if command == "convert" {
            cmd.arg(&out).args(["--to", "fory"]);
        }
        let e = fails(cmd.pipe_stdin(&path).unwrap(), 4);
        for part in [
            "lattice codes in Parquet (dimension 20, 2 bits per coordinate, per-vector scale)",
            "read from the column \"code\" (--column code, or no --column)",
            "--column \"scale\" is not a column of vectors",
            "code (FixedSizeBinary(",
            "scale (Float32)",
        ] {
            assert!(e.contains(part), "{command}: {part:?} not in {e}");
        }
    }
    assert!(!out.exists());
    let run = hydron()
        .args(["inspect", s(&path), "--column", "scale"])
        .output()
        .unwrap();
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(
        text.contains("format:     lattice codes, Parquet"),
        "{text}"
    );
    // A codes file with a vector column beside: --column names either.
    let both = dir.path().join("both.parquet");
    let other = roots_from(100, 30);
    codes_with_a_vector_column(&gf8, &both, other.clone());
    assert_eq!(read_back(&both, &[]).0, decoded);
    assert_eq!(read_back(&both, &["--column", "code"]).0, decoded);
    assert_eq!(read_back(&both, &["--column", "vector"]).0, other);
    let e = validate_fails(&both, &["--column", "nosuch"]);
    assert!(e.contains("there is no column named \"nosuch\""), "{e}");
    assert!(e.contains("vector (FixedSizeList("), "{e}");
}
