//! A directory given to a reading command is a Parquet data set: its
//! `.parquet` files, in nested `key=value/` directories too, in the byte
//! order of their paths, skipping `_SUCCESS`, `.crc` and other `_` and `.`
//! names. `inspect` lists the files; `--column` applies to every file; a
//! file with another column, a bad vector or a damaged file is an error
//! naming the file.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::types::Float32Type;
use arrow_array::{ArrayRef, FixedSizeListArray, RecordBatch};
use arrow_schema::{Field, Schema};
use hydron_core::Gf8;
use tempfile::TempDir;

mod common;

use common::*;

/// `hydron gen N dir/name --seed SEED --format parquet` with row groups of
/// `group` vectors (directories made as needed).
fn part(dir: &Path, name: &str, n: u64, seed: u64, group: u64, format: &str) -> PathBuf {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    hydron()
        .args(["gen", &n.to_string()])
        .arg(&path)
        .args(["--seed", &seed.to_string(), "--format", format])
        .args(["--row-group-vectors", &group.to_string()])
        .assert()
        .success()
        .stderr("");
    path
}

/// A data set written by hydron: three files in Hive partition
/// directories, in the order they are read, with the markers and hidden
/// files engines leave beside them (and a stray Parquet file in a
/// temporary directory, which is skipped).
fn dataset(dir: &Path, format: &str) -> (PathBuf, Vec<PathBuf>) {
    let root = dir.join("ds");
    let parts = vec![
        part(&root, "date=2024-01-01/part-0.parquet", 700, 1, 256, format),
        part(
            &root,
            "date=2024-01-01/part-1.parquet",
            300,
            2,
            1000,
            format,
        ),
        part(&root, "date=2024-01-02/part-0.parquet", 50, 3, 20, format),
    ];
    fs::write(root.join("_SUCCESS"), b"").unwrap();
    fs::write(root.join("date=2024-01-01/.part-0.parquet.crc"), b"crc").unwrap();
    fs::write(root.join("_common_metadata"), b"PAR1").unwrap();
    part(&root, "_temporary/0/part-9.parquet", 5, 9, 1000, format);
    (root, parts)
}

/// A Parquet file of one column `name` of fixed-size lists of 8 float32
/// (written by the parquet crate's writer, so the values are not checked).
fn foreign(path: &Path, name: &str, rows: &[[f32; 8]]) {
    let array: ArrayRef = Arc::new(
        FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
            rows.iter().map(|r| Some(r.map(Some))),
            8,
        ),
    );
    let schema = Arc::new(Schema::new(vec![Field::new(
        name,
        array.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![array]).unwrap();
    let mut w = ::parquet::arrow::ArrowWriter::try_new(Vec::new(), schema, None).unwrap();
    w.write(&batch).unwrap();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, w.into_inner().unwrap()).unwrap();
}

#[test]
fn every_reading_command_reads_a_directory_as_one_data_set() {
    let dir = TempDir::new().unwrap();
    let (root, parts) = dataset(dir.path(), "parquet");
    let expected: Vec<Gf8> = parts.iter().flat_map(|p| vectors_of(p)).collect();
    assert_eq!(expected.len(), 1050);

    let (got, stderr) = read_back(&root, &[]);
    assert_eq!(got, expected, "bit for bit, in path order");
    assert!(
        stderr.contains(&format!(
            "hydron: {}: reading column \"vector\" (",
            root.display()
        )) && stderr.contains(") as vectors from 3 files"),
        "{stderr}"
    );

    // inspect lists the files, their rows and row groups.
    let out = hydron().arg("inspect").arg(&root).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("a data set of 3 files"), "{text}");
    let listed: Vec<&str> = text.lines().filter(|l| l.starts_with("  date=")).collect();
    assert_eq!(listed.len(), 3, "{text}");
    assert!(
        listed[0].starts_with("  date=2024-01-01/part-0.parquet  700 rows in 3 row groups"),
        "{text}"
    );
    assert!(
        listed[1].starts_with("  date=2024-01-01/part-1.parquet  300 rows in 1 row group,"),
        "{text}"
    );
    assert!(
        listed[2].starts_with("  date=2024-01-02/part-0.parquet  50 rows in 3 row groups"),
        "{text}"
    );
    assert!(text.contains("vectors:    1050 in 7 row groups"), "{text}");
    let v = stdout_json(hydron().args(["inspect", "--json"]).arg(&root));
    assert_eq!(v["format"], "parquet");
    assert_eq!(
        (v["vectors"].as_u64(), v["row_groups"].as_u64()),
        (Some(1050), Some(7))
    );
    assert_eq!(v["column"]["name"], "vector");
    let files = v["files"].as_array().unwrap();
    let summary: Vec<(String, u64, u64)> = files
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["rows"].as_u64().unwrap(),
                f["row_groups"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("date=2024-01-01/part-0.parquet".to_owned(), 700, 3),
            ("date=2024-01-01/part-1.parquet".to_owned(), 300, 1),
            ("date=2024-01-02/part-0.parquet".to_owned(), 50, 3),
        ]
    );
    assert_eq!(
        files[0]["bytes"].as_u64(),
        Some(fs::metadata(&parts[0]).unwrap().len())
    );

    // validate, in text and JSON.
    hydron()
        .arg("validate")
        .arg(&root)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "valid: 1050 vectors, hydron's checksums match (7 row groups)",
        ));
    let v = stdout_json(hydron().args(["validate", "--json"]).arg(&root));
    assert_eq!(
        (v["valid"].as_bool(), v["vectors"].as_u64()),
        (Some(true), Some(1050))
    );

    // quantize reads it too.
    let codes = dir.path().join("codes.parquet");
    hydron()
        .arg("quantize")
        .arg(&root)
        .arg(&codes)
        .args(["--to", "parquet"])
        .assert()
        .success()
        .stdout(predicates::str::contains("quantized 1050 vectors"));

    // --column applies to every file.
    let (named, _) = read_back(&root, &["--column", "vector"]);
    assert_eq!(named, expected);
    let e = fails(
        hydron()
            .args(["validate", "--column", "embedding"])
            .arg(&root),
        4,
    );
    assert!(
        e.contains(&format!(
            "{}: no vector column: there is no column named \"embedding\"",
            parts[0].display()
        )),
        "{e}"
    );
}

#[test]
fn a_file_with_another_column_is_an_error_naming_the_file() {
    let dir = TempDir::new().unwrap();
    let (root, parts) = dataset(dir.path(), "parquet");
    let rows: Vec<[f32; 8]> = vectors_of(&parts[2]).iter().map(|v| v.to_array()).collect();
    foreign(&parts[2], "embedding", &rows);
    for cmd in ["inspect", "validate", "convert", "quantize"] {
        let mut c = hydron();
        c.arg(cmd).arg(&root);
        if matches!(cmd, "convert" | "quantize") {
            c.arg(dir.path().join("out.parquet"))
                .args(["--to", "parquet"]);
        }
        let e = fails(&mut c, 4);
        assert!(
            e.starts_with(&format!(
                "hydron: error: {}: this file reads column \"embedding\"",
                parts[2].display()
            )),
            "{cmd}: {e}"
        );
        assert!(
            e.contains(&format!(
                "the data set's column is \"vector\", as read from {}",
                parts[0].display()
            )),
            "{cmd}: {e}"
        );
    }
    assert!(!dir.path().join("out.parquet").exists());

    // Named, the column must be in every file.
    let e = fails(
        hydron().args(["validate", "--column", "vector"]).arg(&root),
        4,
    );
    assert!(
        e.contains(&format!("{}: this file has no such column (no vector column: there is no column named \"vector\"; the columns are embedding (", parts[2].display())),
        "{e}"
    );
}

#[test]
fn an_invalid_vector_names_the_file_its_row_and_the_data_sets_row() {
    let dir = TempDir::new().unwrap();
    let (root, parts) = dataset(dir.path(), "parquet");
    let mut rows: Vec<[f32; 8]> = vectors_of(&parts[1]).iter().map(|v| v.to_array()).collect();
    rows[17] = [0.0, 0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0];
    foreign(&parts[1], "vector", &rows);

    // validate reads on and lists the vector: file and row.
    let out = hydron().arg("validate").arg(&root).assert().code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains(&format!(
            "vector 717 (file {}, row 17): coordinate 2 is NaN",
            parts[1].display()
        )),
        "{text}"
    );
    let v = stdout_json(hydron().args(["validate", "--json"]).arg(&root));
    let problem = &v["problems"][0];
    assert_eq!(problem["vector"].as_u64(), Some(717));
    assert_eq!(problem["row"].as_u64(), Some(17));
    assert_eq!(problem["file"].as_str(), Some(s(&parts[1])));

    // convert stops at it, naming the file, its row and the data set's.
    let out = dir.path().join("out.hyd");
    let e = fails(
        hydron()
            .arg("convert")
            .arg(&root)
            .arg(&out)
            .args(["--to", "fory"]),
        1,
    );
    assert!(
        e.starts_with(&format!(
            "hydron: error: {}: vector 17: ",
            parts[1].display()
        )) && e.trim_end().ends_with("(row 717 of the data set)"),
        "{e}"
    );
    assert!(!out.exists());
}

#[test]
fn damaged_and_empty_data_sets_are_errors_naming_what() {
    let dir = TempDir::new().unwrap();
    let (root, parts) = dataset(dir.path(), "parquet");
    let mut bytes = fs::read(&parts[1]).unwrap();
    bytes.truncate(bytes.len() - 9);
    fs::write(&parts[1], &bytes).unwrap();
    let e = fails(hydron().arg("validate").arg(&root), 5);
    assert!(
        e.starts_with(&format!("hydron: error: {}: Parquet", parts[1].display())),
        "{e}"
    );

    let empty = dir.path().join("empty");
    fs::create_dir_all(empty.join("k=1")).unwrap();
    fs::write(empty.join("_SUCCESS"), b"").unwrap();
    for cmd in ["inspect", "validate"] {
        let e = fails(hydron().arg(cmd).arg(&empty), 4);
        assert!(
            e.contains(&format!(
                "{}: no .parquet files in this data set directory",
                empty.display()
            )),
            "{e}"
        );
    }
    // --column is for Parquet, and a directory is read as Parquet.
    let e = fails(hydron().args(["validate", "--column", "v"]).arg(&empty), 4);
    assert!(e.contains("no .parquet files"), "{e}");
}

#[test]
fn a_codes_data_set_is_read_as_the_roots_it_names() {
    let dir = TempDir::new().unwrap();
    let (root, parts) = dataset(dir.path(), "parquet-codes");
    let expected: Vec<Gf8> = parts.iter().flat_map(|p| vectors_of(p)).collect();
    let (got, stderr) = read_back(&root, &[]);
    assert_eq!(got, expected);
    assert!(stderr.contains("as E8 root codes from 3 files"), "{stderr}");
    let v = stdout_json(hydron().args(["inspect", "--json"]).arg(&root));
    assert_eq!(v["format"], "parquet-codes");
    assert_eq!(v["files"].as_array().map(Vec::len), Some(3));
}

#[test]
fn an_output_that_is_a_file_of_the_data_set_is_refused() {
    let dir = TempDir::new().unwrap();
    let (root, parts) = dataset(dir.path(), "parquet");
    let before = fs::read(&parts[2]).unwrap();
    for cmd in ["convert", "quantize"] {
        let e = fails(
            hydron()
                .arg(cmd)
                .arg(&root)
                .arg(&parts[2])
                .args(["--to", "parquet"]),
            2,
        );
        assert!(e.contains("are the same file"), "{e}");
    }
    assert_eq!(fs::read(&parts[2]).unwrap(), before);
    // Beside the files, in the directory, is fine (and not read back: the
    // files are listed before the output is written).
    let out = root.join("all.parquet");
    hydron()
        .arg("convert")
        .arg(&root)
        .arg(&out)
        .args(["--to", "parquet"])
        .assert()
        .success();
    let (got, _) = read_back(&root, &[]);
    assert_eq!(got.len(), 2 * 1050);
}

/// Peak memory of a data set read by `validate`: about one row group of
/// one file, not the data set.
#[test]
fn a_data_set_is_read_one_row_group_at_a_time() {
    use hydron_codec::parquet::{self as hparquet, Compression, ParquetOptions};
    use hydron_core::E8Root;
    if !have_gnu_time() {
        return;
    }
    let dir = TempDir::new().unwrap();
    let root = dir.path().join("ds");
    let roots: Vec<Gf8> = (0..100_000)
        .map(|i| E8Root::new((i % 240) as u8).unwrap().to_gf8())
        .collect();
    let options = ParquetOptions::new()
        .with_row_group_vectors(50_000)
        .with_compression(Compression::Uncompressed)
        .with_durable(false);
    for k in 0..15 {
        let path = root.join(format!("k={}/part-{k}.parquet", k % 3));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        hparquet::save(&path, &roots, options).unwrap();
    }
    drop(roots);
    let kib = validate_peak_kib(&root);
    // The data set is 48 MB in 15 files; a row group is 1.6 MB.
    assert!(kib < 30_000, "peak {kib} KiB");
}
