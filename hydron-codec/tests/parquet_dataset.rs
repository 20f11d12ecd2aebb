//! Parquet data sets: a directory of files read as one, in the byte order
//! of their relative paths, skipping `_` and `.` names and other files;
//! every file must hold the same column; errors name the file, its row and
//! the data set's row.
#![cfg(feature = "parquet")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::parquet::arrow::ArrowWriter;
use arrow_array::types::Float32Type;
use arrow_array::{ArrayRef, FixedSizeListArray, RecordBatch};
use arrow_schema::{Field, Schema};
use hydron_codec::parquet::{self, DatasetReader, ParquetOptions, ParquetReadOptions};
use hydron_codec::{CodecError, Policy};
use hydron_core::{E8Root, Gf8, E8_ROOTS};

/// `n` distinct unit vectors starting at `from` (E8 roots, then their
/// negations scaled into other directions: any valid vectors will do).
fn vectors(from: usize, n: usize) -> Vec<Gf8> {
    (from..from + n)
        .map(|i| {
            let mut a = [0.0f32; 8];
            a[i % 8] = 1.0;
            a[(i / 8) % 8] += (i as f32) * 1e-3;
            Gf8::normalize(a).unwrap()
        })
        .collect()
}

fn save(dir: &Path, name: &str, v: &[Gf8], rows_per_group: usize) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let options = ParquetOptions::new().with_row_group_vectors(rows_per_group);
    parquet::save(&path, v, options).unwrap();
}

/// A file of one column `name` of fixed-size lists of 8 float32, written
/// by the parquet crate's writer (so its values are not checked).
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
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut w = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn relative(reader: &DatasetReader) -> Vec<PathBuf> {
    reader
        .parts()
        .iter()
        .map(|p| p.relative().to_path_buf())
        .collect()
}

#[test]
fn files_are_read_in_path_byte_order_skipping_underscore_and_dot_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Written out of order; '-' (0x2d) < '.' (0x2e) < '/' (0x2f) < '=' < 'a'.
    save(d, "k=b/part.0.parquet", &vectors(500, 30), 10);
    save(d, "k=a/x/part.parquet", &vectors(300, 200), 64);
    save(d, "k=a/part.parquet", &vectors(200, 100), 1000);
    save(d, "a-b.parquet", &vectors(0, 50), 1000);
    save(d, "a.parquet", &vectors(50, 150), 1000);
    // A directory named like a file (Spark's `out.parquet/`).
    save(
        d,
        "z.parquet/part-00000.snappy.parquet",
        &vectors(530, 7),
        1000,
    );
    // Skipped: Spark's and Hadoop's markers, checksums, temporary
    // directories, hidden files, and files of other names, even when
    // they hold Parquet (or garbage).
    std::fs::write(d.join("_SUCCESS"), b"").unwrap();
    std::fs::write(d.join(".a.parquet.crc"), b"crc").unwrap();
    std::fs::write(d.join("_metadata"), b"PAR1 garbage").unwrap();
    std::fs::write(d.join("k=a/.hidden.parquet"), b"PAR1 garbage").unwrap();
    std::fs::write(d.join("k=a/_x.parquet"), b"PAR1 garbage").unwrap();
    save(d, "_temporary/0/part-0.parquet", &vectors(900, 3), 1000);
    save(d, ".staging/part.parquet", &vectors(900, 3), 1000);
    std::fs::write(d.join("README.txt"), b"not data").unwrap();

    let mut reader = DatasetReader::open(d, Policy::Strict).unwrap();
    assert_eq!(
        relative(&reader),
        [
            "a-b.parquet",
            "a.parquet",
            "k=a/part.parquet",
            "k=a/x/part.parquet",
            "k=b/part.0.parquet",
            "z.parquet/part-00000.snappy.parquet",
        ]
        .map(PathBuf::from)
    );
    assert_eq!(reader.claimed_vectors(), 537);
    assert_eq!(reader.row_groups(), 1 + 1 + 1 + 4 + 3 + 1);
    assert!(reader.has_checksums());
    assert_eq!(reader.column_name(), "vector");
    // One row group at a time, never across files; each batch says its
    // file and where the file starts in the data set.
    let mut out = Vec::new();
    let mut lens = Vec::new();
    let mut parts = Vec::new();
    loop {
        let before = out.len();
        let n = reader.read_chunk(&mut out).unwrap();
        if n == 0 {
            break;
        }
        assert_eq!(out.len() - before, n);
        lens.push(n);
        parts.push(reader.last_part().unwrap());
    }
    assert_eq!(lens, [50, 150, 100, 64, 64, 64, 8, 10, 10, 10, 7]);
    assert_eq!(
        parts,
        [
            (0, 0),
            (1, 50),
            (2, 200),
            (3, 300),
            (3, 300),
            (3, 300),
            (3, 300)
        ]
        .into_iter()
        .chain([(4, 500), (4, 500), (4, 500), (5, 530)])
        .collect::<Vec<_>>()
    );
    assert_eq!(out, vectors(0, 537));
    assert_eq!(parquet::load_dataset(d, Policy::Strict).unwrap(), out);
}

#[test]
fn a_directory_without_parquet_files_is_an_empty_data_set() {
    let dir = tempfile::tempdir().unwrap();
    let err = DatasetReader::open(dir.path(), Policy::Strict).unwrap_err();
    assert!(
        matches!(&err, CodecError::EmptyDataset { skipped: 0, dir: d } if d == dir.path()),
        "{err}"
    );
    std::fs::write(dir.path().join("_SUCCESS"), b"").unwrap();
    std::fs::write(dir.path().join("000000_0"), b"PAR1").unwrap();
    std::fs::create_dir(dir.path().join("k=1")).unwrap();
    let err = DatasetReader::open(dir.path(), Policy::Strict).unwrap_err();
    assert!(
        matches!(err, CodecError::EmptyDataset { skipped: 2, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("no .parquet files"), "{err}");
    let err = DatasetReader::open(dir.path().join("missing"), Policy::Strict).unwrap_err();
    assert!(
        matches!(&err, CodecError::InFile { error, .. } if matches!(**error, CodecError::Io(_))),
        "{err}"
    );
}

#[test]
fn every_file_must_hold_the_same_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    save(d, "a.parquet", &vectors(0, 10), 1000);
    let rows: Vec<[f32; 8]> = vectors(10, 5).iter().map(|v| v.to_array()).collect();
    foreign(&d.join("b.parquet"), "embedding", &rows);
    let err = DatasetReader::open(d, Policy::Strict).unwrap_err();
    let CodecError::DatasetColumnMismatch {
        path,
        first,
        column,
        found,
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(
        (path, first, column.as_str()),
        (&d.join("b.parquet"), &d.join("a.parquet"), "vector")
    );
    assert!(found.contains("\"embedding\""), "{found}");
    assert!(err
        .to_string()
        .starts_with(&format!("{}: ", d.join("b.parquet").display())));

    // Named: a file without the name is a mismatch; with it, it is read.
    let named = ParquetReadOptions::new().with_column("embedding");
    let err = DatasetReader::open_with(d, Policy::Strict, named.clone()).unwrap_err();
    // The first file has no "embedding": an error in that file.
    assert!(
        matches!(&err, CodecError::InDatasetFile { path, error, .. }
            if path == &d.join("a.parquet") && matches!(**error, CodecError::MissingColumn { .. })),
        "{err}"
    );
    std::fs::remove_file(d.join("a.parquet")).unwrap();
    foreign(&d.join("c.parquet"), "vector", &rows);
    let err = DatasetReader::open_with(d, Policy::Strict, named).unwrap_err();
    assert!(
        matches!(&err, CodecError::DatasetColumnMismatch { path, found, .. }
            if path == &d.join("c.parquet") && found.contains("no column named \"embedding\"")),
        "{err}"
    );

    // A codes file among vector files has no vector column.
    let dir = tempfile::tempdir().unwrap();
    save(dir.path(), "a.parquet", &vectors(0, 10), 1000);
    parquet::save_codes(
        dir.path().join("b.parquet"),
        &[E8Root::new(1).unwrap()],
        ParquetOptions::new(),
    )
    .unwrap();
    let err = DatasetReader::open(dir.path(), Policy::Strict).unwrap_err();
    assert!(
        matches!(&err, CodecError::DatasetColumnMismatch { path, .. } if path.ends_with("b.parquet")),
        "{err}"
    );
}

#[test]
fn errors_name_the_file_its_row_and_the_data_sets_row() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    save(d, "k=0/a.parquet", &vectors(0, 100), 30);
    let mut rows: Vec<[f32; 8]> = vectors(100, 20).iter().map(|v| v.to_array()).collect();
    rows[13] = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    foreign(&d.join("k=1/b.parquet"), "vector", &rows);
    let mut reader = DatasetReader::open(d, Policy::Strict).unwrap();
    let mut out = Vec::new();
    let err = loop {
        match reader.read_chunk(&mut out) {
            Ok(0) => panic!("no error"),
            Ok(_) => {}
            Err(e) => break e,
        }
    };
    let CodecError::InDatasetFile {
        path,
        first_row,
        row,
        error,
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(
        (path, *first_row, *row),
        (&d.join("k=1/b.parquet"), 100, Some(113))
    );
    assert!(
        matches!(**error, CodecError::InvalidVector { index: 13, .. }),
        "{error}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "{}: vector 13: ",
            d.join("k=1/b.parquet").display()
        )),
        "{text}"
    );
    assert!(text.ends_with("(row 113 of the data set)"), "{text}");
    assert_eq!(
        out,
        vectors(0, 100),
        "the rows before the bad file are read"
    );
    assert_eq!(reader.read_chunk(&mut out).unwrap(), 0, "then nothing more");

    // A file that is not Parquet: named, with no row.
    std::fs::write(d.join("k=1/b.parquet"), b"PAR1 and nothing more").unwrap();
    let err = DatasetReader::open(d, Policy::Strict).unwrap_err();
    assert!(
        matches!(&err, CodecError::InDatasetFile { path, row: None, error, .. }
            if path.ends_with("k=1/b.parquet") && matches!(**error, CodecError::Parquet { .. })),
        "{err}"
    );
}

#[test]
fn codes_data_sets_are_read_as_codes() {
    let dir = tempfile::tempdir().unwrap();
    let roots: Vec<E8Root> = (0..=239).map(|c| E8Root::new(c).unwrap()).collect();
    let options = ParquetOptions::new().with_row_group_vectors(50);
    parquet::save_codes(dir.path().join("1.parquet"), &roots[100..], options).unwrap();
    parquet::save_codes(dir.path().join("0.parquet"), &roots[..100], options).unwrap();
    let mut reader = DatasetReader::open_codes(dir.path()).unwrap();
    assert_eq!(reader.column_name(), "code");
    assert!(reader.read_chunk(&mut Vec::new()).is_err());
    let mut reader = DatasetReader::open_codes(dir.path()).unwrap();
    assert_eq!(reader.read_codes_to_end().unwrap(), roots);
    // A vector reader of a codes data set: no vector column, in the first
    // file.
    let err = DatasetReader::open(dir.path(), Policy::Strict).unwrap_err();
    assert!(
        matches!(&err, CodecError::InDatasetFile { error, .. }
            if matches!(**error, CodecError::MissingColumn { .. })),
        "{err}"
    );
    let _ = E8_ROOTS;
}

#[cfg(unix)]
#[test]
fn special_files_are_skipped_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    save(dir.path(), "a.parquet", &vectors(0, 5), 1000);
    let fifo = dir.path().join("b.parquet");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Opening the FIFO would wait for a writer.
    let mut reader = DatasetReader::open(dir.path(), Policy::Strict).unwrap();
    assert_eq!(relative(&reader), [PathBuf::from("a.parquet")]);
    assert_eq!(reader.read_to_end().unwrap(), vectors(0, 5));
}

#[cfg(unix)]
#[test]
fn a_link_loop_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    save(dir.path(), "sub/a.parquet", &vectors(0, 5), 1000);
    std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/loop")).unwrap();
    let reader = DatasetReader::open(dir.path(), Policy::Strict).unwrap();
    assert_eq!(relative(&reader), [PathBuf::from("sub/a.parquet")]);
}

#[test]
fn a_file_that_cannot_be_read_is_named_with_its_io_error() {
    let dir = tempfile::tempdir().unwrap();
    save(dir.path(), "a.parquet", &vectors(0, 5), 1000);
    save(dir.path(), "b.parquet", &vectors(5, 5), 1000);
    let mut reader = DatasetReader::open(dir.path(), Policy::Strict).unwrap();
    // Gone between the listing and its turn.
    std::fs::remove_file(dir.path().join("b.parquet")).unwrap();
    let mut out = Vec::new();
    assert_eq!(reader.read_chunk(&mut out).unwrap(), 5);
    let err = reader.read_chunk(&mut out).unwrap_err();
    let CodecError::InDatasetFile {
        path,
        first_row,
        row,
        error,
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(
        (path, *first_row, *row),
        (&dir.path().join("b.parquet"), 5, None)
    );
    assert!(
        matches!(&**error, CodecError::Io(e) if e.kind() == std::io::ErrorKind::NotFound),
        "{error}"
    );
    assert!(
        err.to_string().starts_with(&format!(
            "{}: I/O error: ",
            dir.path().join("b.parquet").display()
        )),
        "{err}"
    );
}
