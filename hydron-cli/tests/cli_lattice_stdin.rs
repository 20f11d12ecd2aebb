//! Lattice codes (docs/format.md §7) found from the content on standard
//! input, pipes and FIFOs, as from a path: `inspect`, `validate` and
//! `convert` read them once, and hostile streams (a message claiming
//! gigabytes, endless zeros) end in a typed error in bounded time and
//! memory. Each test here failed when codes were found only by path.

#![cfg(unix)]

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command as Std, Stdio};
use std::thread;
use std::time::Duration;

use hydron_codec::parquet::ParquetOptions;
use hydron_codec::quant::{self, LatticeCodes};
use hydron_core::Gf8;
use predicates::prelude::*;
use tempfile::TempDir;

mod common;

use common::*;

/// The Gf8 codes of 40 vectors at 4 bits per coordinate, in both forms;
/// the vectors they decode to.
fn codes_files(dir: &Path) -> (PathBuf, PathBuf, Vec<Gf8>) {
    let vectors: Vec<Gf8> = (0..40).map(|i| hydron_core::E8_ROOTS[i * 6]).collect();
    let codes = LatticeCodes::from_gf8(&vectors, 4).unwrap();
    let fory = dir.join("c.fory");
    quant::save(&fory, &codes).unwrap();
    let parquet = dir.join("c.parquet");
    quant::save_parquet(&parquet, &codes, ParquetOptions::new()).unwrap();
    (fory, parquet, codes.decode_gf8().unwrap())
}

/// Codes of dimension 20 with per-vector scales: not vectors.
fn quantizer_codes(dir: &Path) -> PathBuf {
    let q = hydron_core::quant::LatticeQuantizer::new(20, 2, 77).unwrap();
    let x: Vec<f32> = (0..60).map(|i| (i as f32 * 0.37).sin()).collect();
    let codes = LatticeCodes::from_quantizer(&q, q.encode(&x).unwrap()).unwrap();
    let path = dir.join("q.fory");
    quant::save(&path, &codes).unwrap();
    path
}

#[test]
fn inspect_finds_codes_on_standard_input_as_from_a_path() {
    let dir = TempDir::new().unwrap();
    let (fory, parquet, _) = codes_files(dir.path());
    for (path, format) in [
        (&fory, "lattice-codes"),
        (&parquet, "parquet-lattice-codes"),
    ] {
        let from_path = stdout_json(hydron().args(["inspect", s(path), "--json"]));
        let piped = stdout_json(
            hydron()
                .args(["inspect", "-", "--json"])
                .pipe_stdin(path)
                .unwrap(),
        );
        assert_eq!(piped["format"], format, "{piped}");
        assert_eq!(piped["complete"], true, "{piped}");
        for key in [
            "format",
            "dim",
            "bits",
            "code_size",
            "seed",
            "rotation",
            "scale_mode",
            "count",
            "bytes",
        ] {
            assert_eq!(piped[key], from_path[key], "{key}");
        }
        assert_eq!(piped["count"], 40);
        hydron()
            .args(["inspect", "-"])
            .pipe_stdin(path)
            .unwrap()
            .assert()
            .success()
            .stdout(predicate::str::contains("count:      40 vectors"));
    }
}

#[test]
fn validate_checks_codes_from_a_path_and_from_standard_input() {
    let dir = TempDir::new().unwrap();
    let (fory, parquet, _) = codes_files(dir.path());
    for path in [&fory, &parquet, &quantizer_codes(dir.path())] {
        for file in [s(path), "-"] {
            hydron()
                .args(["validate", file])
                .pipe_stdin(path)
                .unwrap()
                .assert()
                .success()
                .stdout(predicate::str::contains("valid: "))
                .stdout(predicate::str::contains("lattice codes of dimension"));
        }
    }
    // A damaged message: the same error, offset included, either way.
    let mut bytes = fs::read(&fory).unwrap();
    bytes[64] = 9; // the count says 9 vectors, the codes hold 40
    let bad = dir.path().join("bad.fory");
    fs::write(&bad, &bytes).unwrap();
    for file in [s(&bad), "-"] {
        let err = fails(
            hydron().args(["validate", file]).pipe_stdin(&bad).unwrap(),
            5,
        );
        assert!(err.contains("byte offset 64"), "{err}");
        let j = stdout_json(
            hydron()
                .args(["validate", file, "--json"])
                .pipe_stdin(&bad)
                .unwrap(),
        );
        assert_eq!(
            (
                &j["valid"],
                &j["format"],
                &j["exit_code"],
                &j["error"]["offset"]
            ),
            (
                &false.into(),
                &"lattice-codes".into(),
                &5.into(),
                &64.into()
            ),
            "{j}"
        );
    }
}

#[test]
fn convert_reads_gf8_codes_as_vectors_and_refuses_other_codes() {
    let dir = TempDir::new().unwrap();
    let (fory, parquet, vectors) = codes_files(dir.path());
    for path in [&fory, &parquet] {
        for file in [s(path), "-"] {
            let out = dir.path().join("v.json");
            hydron()
                .args(["convert", file, s(&out), "--to", "json"])
                .pipe_stdin(path)
                .unwrap()
                .assert()
                .success();
            let back = hydron_codec::json::from_slice(
                &fs::read(&out).unwrap(),
                hydron_codec::Policy::Strict,
            )
            .unwrap();
            assert_eq!(back, vectors, "{}", path.display());
        }
    }
    let q = quantizer_codes(dir.path());
    let out = dir.path().join("w.json");
    for file in [s(&q), "-"] {
        let err = fails(
            hydron()
                .args(["convert", file, s(&out), "--to", "json"])
                .pipe_stdin(&q)
                .unwrap(),
            4,
        );
        assert!(
            err.contains("lattice codes of dimension 20") && err.contains("not 8-dim unit vectors"),
            "{err}"
        );
        assert!(!out.exists());
    }
}

#[test]
fn fifos_of_codes_are_read_once() {
    let dir = TempDir::new().unwrap();
    let (fory, parquet, _) = codes_files(dir.path());
    for (path, format) in [
        (&fory, "lattice-codes"),
        (&parquet, "parquet-lattice-codes"),
    ] {
        let fifo = dir.path().join("codes.fifo");
        let _ = fs::remove_file(&fifo);
        mkfifo(&fifo);
        let bytes = fs::read(path).unwrap();
        let writer = {
            let fifo = fifo.clone();
            thread::spawn(move || File::create(fifo).unwrap().write_all(&bytes).unwrap())
        };
        let child = Std::new(bin())
            .args(["inspect", s(&fifo), "--json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_output(child, Duration::from_secs(30));
        writer.join().unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (&j["format"], &j["count"]),
            (&format.into(), &40.into()),
            "{j}"
        );
    }
}

/// The output of `child`, which must end within `limit`.
fn wait_output(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// The head of a `LatticeCodes` message (dim 8, 2 bits, direction) whose
/// codes' length claims `claim` bytes and whose count agrees.
fn claiming_head(claim: u32) -> Vec<u8> {
    let c = LatticeCodes::from_gf8(&hydron_core::E8_ROOTS[..1], 2).unwrap();
    let mut head = quant::encode(&c).unwrap()[..87].to_vec();
    head[64..72].copy_from_slice(&u64::from(claim / 2).to_le_bytes());
    let mut n = claim;
    while n >= 0x80 {
        head.push((n as u8) | 0x80);
        n >>= 7;
    }
    head.push(n as u8);
    head
}

/// Runs `hydron ARGS` with `head` and then zeros without end on standard
/// input (a pipe); returns the exit code, stderr and the bytes the tool
/// took before it closed the pipe.
fn with_endless_stdin(args: &[&str], head: Vec<u8>) -> (Option<i32>, String, u64) {
    let mut child = Std::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let mut sent = 0u64;
        if stdin.write_all(&head).is_ok() {
            sent += head.len() as u64;
            let zeros = [0u8; 1 << 16];
            // Stops when the reader is gone (a closed pipe), or at 4 GiB.
            while sent < 4 << 30 && stdin.write_all(&zeros).is_ok() {
                sent += zeros.len() as u64;
            }
        }
        sent
    });
    let (code, stderr) = wait_within(child, Duration::from_secs(60));
    (code, stderr, writer.join().unwrap())
}

#[test]
fn a_message_claiming_more_than_the_limit_is_refused_from_its_head() {
    // 4 GiB - 2 bytes of codes claimed, zeros without end: refused after
    // the head, before reading (or holding) the claimed bytes.
    for command in ["inspect", "validate", "convert"] {
        let mut args = vec![command, "-"];
        if command == "convert" {
            args.extend(["/dev/null", "--to", "jsonl"]);
        }
        let (code, stderr, sent) = with_endless_stdin(&args, claiming_head(u32::MAX - 1));
        assert_eq!(code, Some(6), "{command}: {stderr}");
        assert!(stderr.contains("--max-input-bytes"), "{command}: {stderr}");
        assert!(
            sent < 8 << 20,
            "{command}: {sent} bytes taken before the refusal"
        );
    }
}

#[test]
fn a_codes_file_over_the_limit_keeps_its_form_in_the_report() {
    let dir = TempDir::new().unwrap();
    let (fory, _, _) = codes_files(dir.path());
    for file in [s(&fory), "-"] {
        let out = hydron()
            .args(["inspect", file, "--json", "--max-input-bytes", "100"])
            .pipe_stdin(&fory)
            .unwrap()
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(6));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (&j["format"], &j["complete"], &j["error"]["class"]),
            (&"lattice-codes".into(), &false.into(), &"too-large".into()),
            "{j}"
        );
    }
}

#[test]
fn a_message_read_from_an_endless_stream_stops_at_the_limit() {
    // The claim (2 MiB) is within the limit and the zeros are valid 16-bit
    // codes: the message is read, then the zeros after it stop at the
    // limit (4 MiB), never the whole stream.
    let (code, stderr, sent) = with_endless_stdin(
        &["inspect", "-", "--max-input-bytes", "4M"],
        claiming_head(2 << 20),
    );
    assert_eq!(code, Some(6), "{stderr}");
    assert!(stderr.contains("larger than 4194304 bytes"), "{stderr}");
    assert!(sent < 64 << 20, "{sent} bytes taken");
}

#[test]
fn dev_zero_and_a_cut_message_on_standard_input_are_typed_errors() {
    let script = format!(
        "ulimit -v 262144 && exec {} inspect - < /dev/zero",
        bin().display()
    );
    let out = Std::new("bash").args(["-c", &script]).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("byte offset 2"), "{stderr}");
    // A message cut short in its codes: where, and how much is missing.
    let dir = TempDir::new().unwrap();
    let (fory, _, _) = codes_files(dir.path());
    let cut = dir.path().join("cut.fory");
    fs::write(&cut, &fs::read(&fory).unwrap()[..100]).unwrap();
    for file in [s(&cut), "-"] {
        let err = fails(
            hydron().args(["inspect", file]).pipe_stdin(&cut).unwrap(),
            5,
        );
        assert!(
            err.contains("ends early")
                && err.contains("byte offset 89 needs 160 bytes, only 11 remain"),
            "{err}"
        );
    }
}
