//! The `hydron` binary against hostile inputs: real pipes, FIFOs, sparse
//! terabyte files, `/dev/zero`, long leading whitespace, and exit codes
//! that must tell the truth; and Parquet that is cut short, changed, of the
//! wrong type or of the wrong shape. Each test here failed before the tool
//! read every input once through one buffer (see `docs/reliability.md`).
//! Hostile outputs and signals are in `hostile_output.rs`.

#![cfg(unix)]

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::process::{Command as Std, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{ArrayRef, Float64Array, ListArray, RecordBatch};
use arrow_schema::{Field, Schema};
use hydron_codec::parquet::{self as hparquet, ParquetOptions};
use hydron_codec::{file, fory, json, Policy};
use hydron_core::{E8Root, Gf8};
use tempfile::TempDir;

mod common;

use common::*;

/// Every input form, as bytes, with the vectors it holds.
fn every_form(dir: &Path) -> Vec<(&'static str, Vec<u8>, Vec<Gf8>)> {
    let fory_file = gen(dir, 3000, "a.hyd", "fory", None);
    let vs = vectors_of(&fory_file);
    let roots: Vec<E8Root> = (0..3000)
        .map(|i| E8Root::new((i % 240) as u8).unwrap())
        .collect();
    let root_vectors: Vec<Gf8> = roots.iter().map(|r| r.to_gf8()).collect();
    let lines: String = vs
        .iter()
        .map(|v| format!("{}\n", String::from_utf8(json::gf8_to_vec(*v)).unwrap()))
        .collect();
    vec![
        ("container-fory", fs::read(&fory_file).unwrap(), vs.clone()),
        (
            "container-jsonl",
            fs::read(gen(dir, 3000, "a.jsonl", "jsonl", None)).unwrap(),
            vs.clone(),
        ),
        ("json", json::to_vec(&vs), vs.clone()),
        ("jsonl", lines.into_bytes(), vs.clone()),
        ("fory-batch", fory::encode_batch(&vs), vs.clone()),
        ("fory-codes", fory::encode_codes(&roots), root_vectors),
    ]
}

#[test]
fn stdin_pipes_lose_nothing_in_any_form() {
    let dir = TempDir::new().unwrap();
    for (name, bytes, vs) in every_form(dir.path()) {
        for input in ["-", "/dev/stdin"] {
            let out = hydron()
                .args(["validate", input, "--json"])
                .write_stdin(bytes.clone())
                .output()
                .unwrap();
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(out.status.code(), Some(0), "{name} {input}: {v}");
            assert_eq!(v["format"], name, "{name} {input}");
            assert_eq!(v["vectors"], vs.len(), "{name} {input}");
            let target = dir.path().join("out.hyd");
            hydron()
                .args(["convert", input, s(&target), "--to", "fory"])
                .write_stdin(bytes.clone())
                .assert()
                .success();
            assert_eq!(
                file::load(&target, Policy::Strict).unwrap(),
                vs,
                "{name} {input}"
            );
        }
        let out = hydron()
            .args(["inspect", "-", "--json"])
            .write_stdin(bytes.clone())
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["bytes"], bytes.len(), "{name}: bytes read from a pipe");
    }
}

#[test]
fn a_short_stdin_line_is_one_vector() {
    hydron()
        .args(["validate", "/dev/stdin"])
        .write_stdin("[1,0,0,0,0,0,0,0]\n")
        .assert()
        .success()
        .stdout(predicates::str::contains("valid: 1 vectors"));
}

#[test]
fn fifos_are_read_like_files() {
    let dir = TempDir::new().unwrap();
    for (name, bytes, vs) in every_form(dir.path()) {
        let fifo = dir.path().join(format!("{name}.fifo"));
        mkfifo(&fifo);
        let writer = {
            let fifo = fifo.clone();
            thread::spawn(move || File::create(fifo).unwrap().write_all(&bytes).unwrap())
        };
        let child = spawn(&["validate", s(&fifo)]);
        let (code, stderr) = wait_within(child, Duration::from_secs(20));
        writer.join().unwrap();
        assert_eq!(code, Some(0), "{name}: {stderr} ({} vectors)", vs.len());
    }
}

#[test]
fn sparse_terabyte_files_end_in_bounded_time_and_memory() {
    let dir = TempDir::new().unwrap();
    let text = file::to_vec(&[Gf8::ZERO; 3], file::Format::JsonLines, Default::default()).unwrap();
    let binary = file::to_vec(&[Gf8::ZERO; 3], file::Format::Fory, Default::default()).unwrap();
    // A fory message's whole framing (the 21 bytes of a Gf8Batch's), then
    // zeros: read whole, so refused by its size before a byte more is read.
    let batch = fory::encode_batch(&[Gf8::ZERO; 3]);
    for (name, start) in [
        ("fory", &batch[..21]),
        ("json", b"[["),
        ("lines", b"[1"),
        // A container's first 60 bytes, then a terabyte of zeros: the
        // text header line is capped, the binary chunk fails its checksum.
        ("text-container", &text[..60]),
        ("binary-container", &binary[..60]),
    ] {
        let path = dir.path().join(name);
        let f = File::create(&path).unwrap();
        f.set_len(1 << 40).unwrap();
        (&f).write_all(start).unwrap();
        drop(f);
        let started = Instant::now();
        let (code, stderr) = wait_within(spawn(&["validate", s(&path)]), Duration::from_secs(30));
        fs::remove_file(&path).unwrap();
        let want = if matches!(name, "fory" | "json") {
            6
        } else {
            5
        };
        assert_eq!(code, Some(want), "{name}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(10), "{name}");
    }
}

#[test]
fn dev_zero_is_refused_from_its_first_bytes_in_bounded_memory() {
    // A leading zero byte looks like a fory message, which is read whole
    // (up to --max-input-bytes, 1G by default); but a fory message's
    // framing is fixed, and /dev/zero breaks it at byte 2. Under a 64 MiB
    // address-space limit the tool must still give that answer (a build
    // that reads first fails to allocate, exit 6), with the default limit.
    for command in ["validate", "inspect"] {
        let script = format!(
            "ulimit -v 65536 && exec {} {command} /dev/zero",
            bin().display()
        );
        let out = Std::new("bash")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(4), "{command}: {stderr}");
        assert!(
            stderr.contains("not a hydron fory message") && stderr.contains("byte offset 2"),
            "{command}: {stderr}"
        );
    }
    let out = hydron()
        .args(["validate", "--json", "/dev/zero"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&v["error"]["class"], &v["error"]["offset"]),
        (&"format".into(), &2.into()),
        "{v}"
    );
}

#[test]
fn a_stream_of_zeros_is_refused_after_reading_little_of_it() {
    // Zeros through a pipe on standard input: the bytes the tool accepted
    // before it closed the pipe are counted (a build that reads the
    // message whole takes 1 GiB).
    let mut child = Std::new(bin())
        .args(["validate", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let zeros = [0u8; 1 << 16];
        let mut sent = 0u64;
        // Stops when the reader is gone (a closed pipe), or at 2 GiB.
        while sent < 2 << 30 && stdin.write_all(&zeros).is_ok() {
            sent += zeros.len() as u64;
        }
        sent
    });
    let (code, stderr) = wait_within(child, Duration::from_secs(60));
    let sent = writer.join().unwrap();
    assert_eq!(code, Some(4), "{stderr}");
    assert!(stderr.contains("byte offset 2"), "{stderr}");
    assert!(sent < 1 << 20, "{sent} bytes read before the refusal");
}

#[test]
fn the_input_limit_applies_to_whole_forms_only() {
    let dir = TempDir::new().unwrap();
    let big = gen(dir.path(), 5000, "a.hyd", "fory", None); // about 160 KB
    let array = dir.path().join("a.json");
    hydron()
        .args(["convert", s(&big), s(&array), "--to", "json"])
        .assert()
        .success();
    hydron()
        .args(["validate", s(&big), "--max-input-bytes", "1K"])
        .assert()
        .success();
    hydron()
        .args(["validate", s(&array), "--max-input-bytes", "1K"])
        .assert()
        .code(6);
    hydron()
        .args(["validate", s(&array), "--max-input-bytes", "10M"])
        .assert()
        .success();
    hydron()
        .args(["validate", s(&array), "--max-input-bytes", "lots"])
        .assert()
        .code(2);
}

#[test]
fn long_leading_whitespace_is_valid_and_lines_stay_right() {
    let dir = TempDir::new().unwrap();
    let row = "[1,0,0,0,0,0,0,0]";
    let lines = dir.path().join("blank.jsonl");
    fs::write(&lines, format!("{}{row}\n{row}\n", "\n".repeat(70))).unwrap();
    hydron()
        .args(["validate", s(&lines)])
        .assert()
        .success()
        .stdout(predicates::str::contains("valid: 2 vectors"));
    let array = dir.path().join("spaces.json");
    fs::write(&array, format!("{}[{row},{row},{row}]", " ".repeat(70))).unwrap();
    hydron()
        .args(["validate", s(&array)])
        .assert()
        .success()
        .stdout(predicates::str::contains("valid: 3 vectors"));
    // The line of a bad vector after the blank lines is its real line.
    let bad = dir.path().join("bad.jsonl");
    fs::write(
        &bad,
        format!("{}{row}\n[2,0,0,0,0,0,0,0]\n", "\r\n".repeat(70)),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(
        &hydron()
            .args(["validate", s(&bad), "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["problems"][0]["line"], 72, "{v}");
    let broken = dir.path().join("broken.jsonl");
    fs::write(&broken, format!("{}\t{row}\n[1,0,", "\n".repeat(70))).unwrap();
    let v: serde_json::Value = serde_json::from_slice(
        &hydron()
            .args(["validate", s(&broken), "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["error"]["line"], 72, "{v}");
}

#[test]
fn invalid_data_exits_1_however_many_problems_are_listed() {
    let dir = TempDir::new().unwrap();
    let bad = dir.path().join("bad.json");
    fs::write(&bad, "[[1,0,0,0,0,0,0,0],[2,0,0,0,0,0,0,0]]").unwrap();
    let out = hydron()
        .args(["validate", s(&bad), "--max-problems", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout).unwrap().contains("NOT valid"));
    let out = hydron()
        .args(["validate", s(&bad), "--max-problems", "0", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&v["valid"], &v["exit_code"]), (&false.into(), &1.into()));
    assert_eq!(v["problems"].as_array().unwrap().len(), 0);
}

#[test]
fn inspect_names_the_form_of_a_codes_message_with_a_bad_code() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("c.bin");
    let mut bytes = fory::encode_codes(&[E8Root::new(3).unwrap(); 4]);
    *bytes.last_mut().unwrap() = 240;
    fs::write(&path, bytes).unwrap();
    let out = hydron().args(["inspect", s(&path)]).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stdout.contains("format:     fory E8Codes message"),
        "{stdout}"
    );
    assert!(!stdout.contains("could not be opened"), "{stdout}");
    assert!(stderr.contains("code 240 is out of range"), "{stderr}");
    let out = hydron()
        .args(["inspect", s(&path), "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "fory-codes");
    assert_eq!(v["error"]["vector"], 3);
}

/// Peak memory of a codes input: the codes (1 byte per vector) are kept,
/// 32-byte vectors only one chunk at a time.
#[test]
fn a_codes_input_is_expanded_chunk_by_chunk() {
    if !common::have_gnu_time() {
        return;
    }
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("c.bin");
    let n = 2_000_000;
    let roots: Vec<E8Root> = (0..n)
        .map(|i| E8Root::new((i % 240) as u8).unwrap())
        .collect();
    fs::write(&path, fory::encode_codes(&roots)).unwrap();
    let kib = validate_peak_kib(&path);
    // All vectors at once would be 64 MB; bytes and codes are 4 MB.
    assert!(kib < 40_000, "peak {kib} KiB");
}

/// A Parquet file of one column `vector` holding `array`, written by the
/// parquet crate's own Arrow writer, as other tools would.
fn foreign_parquet(array: ArrayRef) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "vector",
        array.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![array]).unwrap();
    let mut w = ::parquet::arrow::ArrowWriter::try_new(Vec::new(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.into_inner().unwrap()
}

/// The `error` object of `hydron validate --json`.
fn validate_error(path: &Path) -> serde_json::Value {
    let out = hydron()
        .args(["validate", "--json", s(path)])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["exit_code"], v["error"]["exit_code"], "{v}");
    v["error"].clone()
}

#[test]
fn truncated_parquet_is_corrupt_at_every_length() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 2000, "a.hyd", "fory", None);
    let whole = dir.path().join("a.parquet");
    hydron()
        .args(["convert", s(&input), s(&whole), "--to", "parquet"])
        .args(["--row-group-vectors", "700", "--compression", "none"])
        .assert()
        .success();
    let bytes = fs::read(&whole).unwrap();
    let len = bytes.len();
    let mut cuts: Vec<usize> = (4..len).step_by(len / 37).collect();
    cuts.extend([
        5,
        12,
        len / 2,
        len - 12,
        len - 9,
        len - 8,
        len - 5,
        len - 4,
        len - 1,
    ]);
    let cut = dir.path().join("cut.parquet");
    for &n in &cuts {
        fs::write(&cut, &bytes[..n]).unwrap();
        for command in ["validate", "inspect"] {
            let e = fails(hydron().args([command, s(&cut)]), 5);
            assert!(e.contains("cut.parquet: Parquet"), "{n}: {e}");
        }
        let out = dir.path().join("out.hyd");
        fails(
            hydron().args(["convert", s(&cut), s(&out), "--to", "fory"]),
            5,
        );
        assert!(!out.exists());
    }
    // The same through a pipe (read whole, then decoded).
    for &n in &cuts[..8] {
        fails(
            hydron()
                .args(["validate", "-"])
                .write_stdin(bytes[..n].to_vec()),
            5,
        );
    }
    // Shorter than the magic: not recognized as Parquet at all.
    fs::write(&cut, &bytes[..3]).unwrap();
    fails(hydron().args(["validate", s(&cut)]), 4);
}

#[test]
fn a_changed_byte_in_a_page_is_a_checksum_mismatch() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 2000, "a.hyd", "fory", None);
    let good = dir.path().join("a.parquet");
    hydron()
        .args(["convert", s(&input), s(&good), "--to", "parquet"])
        .args(["--row-group-vectors", "1000", "--compression", "none"])
        .assert()
        .success();
    let mut bytes = fs::read(&good).unwrap();
    // Inside the plain float32 values of row group 1 (32,000 bytes each):
    // nothing else in the file notices, only hydron's CRC-32 in the footer.
    let at = bytes.len() / 2 + 8000;
    bytes[at] ^= 0x10;
    let bad = dir.path().join("bad.parquet");
    fs::write(&bad, &bytes).unwrap();
    let e = fails(hydron().args(["validate", s(&bad)]), 5);
    assert!(e.contains("checksum mismatch"), "{e}");
    let error = validate_error(&bad);
    assert_eq!(error["class"], "corrupt");
    assert_eq!(error["row_group"], 1);
    let out = hydron()
        .args(["inspect", "--json", s(&bad)])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["checksums"], "failed");
    assert_eq!(v["vectors"], 1000, "row group 0 was read before the error");
    // Through a pipe as well.
    fails(hydron().args(["validate", "-"]).write_stdin(bytes), 5);
}

#[test]
fn a_parquet_file_of_doubles_is_the_wrong_format() {
    let dir = TempDir::new().unwrap();
    // A list of 8 float64 a row, named `vector`.
    let doubles: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>(
        (0..10).map(|_| {
            Some(
                vec![Some(0.5f64); 4]
                    .into_iter()
                    .chain([Some(0.5); 4])
                    .collect::<Vec<_>>(),
            )
        }),
    ));
    // A plain float64 column.
    let plain: ArrayRef = Arc::new(Float64Array::from(vec![1.0; 10]));
    for (name, array) in [("list", doubles), ("plain", plain)] {
        let path = dir.path().join(format!("{name}.parquet"));
        fs::write(&path, foreign_parquet(array)).unwrap();
        let e = fails(hydron().args(["validate", s(&path)]), 4);
        assert!(e.contains("Float64") || e.contains("column"), "{name}: {e}");
        assert_eq!(validate_error(&path)["class"], "format");
        // `inspect` names the form it found, then the error.
        let out = hydron()
            .args(["inspect", "--json", s(&path)])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["format"], "parquet", "{name}: {v}");
        assert_eq!(v["error"]["class"], "format");
        let out = dir.path().join("out.hyd");
        fails(
            hydron().args(["convert", s(&path), s(&out), "--to", "fory"]),
            4,
        );
        fails(
            hydron()
                .args(["validate", "-"])
                .write_stdin(fs::read(&path).unwrap()),
            4,
        );
        assert!(!out.exists());
    }
}

#[test]
fn a_row_of_seven_floats_is_invalid_data_naming_the_row() {
    let dir = TempDir::new().unwrap();
    let rows: Vec<Option<Vec<Option<f32>>>> = (0..100)
        .map(|i| {
            let len = if i == 42 { 7 } else { 8 };
            let mut row = vec![Some(0.0f32); len];
            row[0] = Some(1.0);
            Some(row)
        })
        .collect();
    let array: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Float32Type, _, _>(rows));
    let path = dir.path().join("seven.parquet");
    fs::write(&path, foreign_parquet(array)).unwrap();
    let e = fails(hydron().args(["validate", s(&path)]), 1);
    assert!(e.contains("row 42 has 7 values"), "{e}");
    let error = validate_error(&path);
    assert_eq!(error["class"], "invalid");
    assert_eq!(error["row"], 42);
    let out = dir.path().join("out.json");
    let e = fails(
        hydron().args(["convert", s(&path), s(&out), "--to", "json"]),
        1,
    );
    assert!(e.contains("row 42"), "{e}");
    assert!(!out.exists());
}

#[test]
fn parquet_through_fifos_is_streamed_and_the_fifo_stays() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 3000, "a.hyd", "fory", None);
    // Out: the reader of the FIFO gets the file, written as it goes.
    let (fifo, data) = converts_into_a_fifo(dir.path(), &input, "parquet");
    // In: read whole from the FIFO, then decoded.
    let writer = {
        let fifo = fifo.clone();
        thread::spawn(move || File::create(fifo).unwrap().write_all(&data).unwrap())
    };
    let child = spawn(&["validate", s(&fifo)]);
    let (code, stderr) = wait_within(child, Duration::from_secs(20));
    writer.join().unwrap();
    assert_eq!(code, Some(0), "{stderr}");
    assert_no_temporary_file(dir.path());
}

#[test]
fn a_directory_at_a_parquet_output_is_not_replaced() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 100, "a.hyd", "fory", None);
    let target = dir.path().join("out.parquet");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("keep"), b"x").unwrap();
    for args in [
        vec!["convert", s(&input), s(&target), "--to", "parquet"],
        vec!["quantize", s(&input), s(&target), "--to", "parquet"],
    ] {
        let e = fails(hydron().args(&args), 3);
        assert!(e.contains("is a directory"), "{e}");
        assert!(target.is_dir());
        assert_eq!(listing(&target), ["keep"]);
    }
    assert_eq!(listing(dir.path()), ["a.hyd", "out.parquet"]);
}

#[test]
fn a_closed_pipe_ends_a_parquet_output_quietly() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 200_000, "big.hyd", "fory", None);
    let (head, code, stderr) = head_100_then_close(
        &[
            "convert",
            s(&input),
            "-",
            "--to",
            "parquet",
            "--row-group-vectors",
            "10000",
            "--compression",
            "none",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(141), "{stderr}");
    assert_eq!(stderr, "", "no error spam");
    assert!(head.starts_with(b"PAR1"));
}

/// Peak memory of a Parquet file read by path: about one row group, not
/// the file.
#[test]
fn a_parquet_file_is_read_row_group_by_row_group() {
    if !common::have_gnu_time() {
        return;
    }
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("big.parquet");
    let n = 1_500_000;
    let roots: Vec<Gf8> = (0..n)
        .map(|i| E8Root::new((i % 240) as u8).unwrap().to_gf8())
        .collect();
    let options = ParquetOptions::new()
        .with_row_group_vectors(100_000)
        .with_compression(hparquet::Compression::Uncompressed);
    hparquet::save(&path, &roots, options).unwrap();
    drop(roots);
    let kib = validate_peak_kib(&path);
    // The file is 48 MB; a row group is 3.2 MB.
    assert!(kib < 30_000, "peak {kib} KiB");
}

#[test]
fn two_vector_columns_are_an_error_never_a_fall_back_to_another_column() {
    // A label column of small integers (which could pass for E8 codes) and
    // two list-of-float columns, neither named `vector`: the tool must not
    // pick one, nor read the labels as codes.
    let dir = TempDir::new().unwrap();
    let rows = || {
        ListArray::from_iter_primitive::<Float32Type, _, _>((0..20).map(|i| {
            let mut v = vec![Some(0.0f32); 8];
            v[i % 8] = Some(1.0);
            Some(v)
        }))
    };
    let label: ArrayRef = Arc::new(arrow_array::UInt8Array::from_iter_values(
        (0..20).map(|i| (i % 5) as u8),
    ));
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("label", label),
        ("emb_a", Arc::new(rows())),
        ("emb_b", Arc::new(rows())),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut w = ::parquet::arrow::ArrowWriter::try_new(Vec::new(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    let path = dir.path().join("two.parquet");
    fs::write(&path, w.into_inner().unwrap()).unwrap();
    let out = dir.path().join("out.json");
    for args in [
        vec!["validate", s(&path)],
        vec!["convert", s(&path), s(&out), "--to", "json"],
        vec!["quantize", s(&path), s(&out)],
    ] {
        let e = fails(hydron().args(&args), 4);
        assert!(
            e.contains("which vector column? 2 columns could be it")
                && e.contains("emb_a")
                && e.contains("emb_b"),
            "{args:?}: {e}"
        );
    }
    assert!(!out.exists());
    assert_eq!(validate_error(&path)["class"], "format");
}

#[test]
fn a_parquet_file_without_hydrons_checksums_is_not_reported_as_checked() {
    let dir = TempDir::new().unwrap();
    let ours = gen(dir.path(), 100, "ours.parquet", "parquet", None);
    let theirs = dir.path().join("theirs.parquet");
    let vectors = hparquet::load(&ours, Policy::Strict).unwrap();
    fs::write(
        &theirs,
        foreign_parquet(Arc::new(hydron_codec::arrow::vectors_to_arrow(vectors))),
    )
    .unwrap();
    for (path, state, said) in [
        (&ours, "ok", "hydron's checksums match"),
        (&theirs, "none", "none of hydron's checksums"),
    ] {
        let out = hydron()
            .args(["inspect", "--json", s(path)])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["checksums"], state, "{v}");
        let out = hydron().args(["validate", s(path)]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(said), "{text}");
    }
}
