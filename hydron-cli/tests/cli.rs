//! End-to-end tests of the `hydron` binary: good files in every form, and
//! broken ones (truncated, bit-flipped, wrong magic, bad JSON, empty,
//! missing, unwritable output), checking exit codes, messages and that no
//! partial output is left behind.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use hydron_codec::file::{self, FileOptions, FileWriter, Format};
use hydron_codec::{fory, json, Policy};
use hydron_core::{E8Root, Gf8};
use predicates::prelude::*;
use tempfile::TempDir;

fn hydron() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hydron"))
}

/// Runs `hydron gen N name --seed 7 [--format f] [--chunk-vectors c]` (the
/// chunk size for the container forms only).
fn gen(dir: &Path, n: u64, name: &str, format: &str, chunk: Option<u32>) -> PathBuf {
    let path = dir.join(name);
    let mut cmd = hydron();
    cmd.args(["gen", &n.to_string()])
        .arg(&path)
        .args(["--seed", "7", "--format", format]);
    // (Only container forms have chunks; elsewhere the option is refused.)
    if let Some(c) = chunk.filter(|_| matches!(format, "fory" | "jsonl")) {
        cmd.args(["--chunk-vectors", &c.to_string()]);
    }
    cmd.assert().success().stderr("");
    path
}

/// The output of a failed run: checks the exit code and that stderr is
/// exactly one `hydron: error:` line (no panic, no backtrace); returns it.
fn fails(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().clone();
    let stderr = String::from_utf8(out.stderr).expect("UTF-8 stderr");
    assert_eq!(stderr.lines().count(), 1, "one line of stderr: {stderr:?}");
    assert!(stderr.starts_with("hydron: error: "), "{stderr:?}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("internal error"),
        "{stderr:?}"
    );
    stderr
}

fn stdout_json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().expect("run hydron");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The names of the files in `dir`.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn unit(coords: [f32; 8]) -> Gf8 {
    Gf8::normalize(coords).unwrap()
}

/// A binary container of `vectors` with `chunk` vectors per chunk, written
/// without checks (so it may hold invalid vectors).
fn container(dir: &Path, name: &str, vectors: &[Gf8], format: Format, chunk: u32) -> PathBuf {
    let path = dir.join(name);
    let mut w = FileWriter::create(&path, format, FileOptions::new().chunk_vectors(chunk)).unwrap();
    w.write(vectors).unwrap();
    w.finish().unwrap();
    path
}

#[test]
fn help_documents_every_exit_code() {
    let out = hydron()
        .arg("--help")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8(out).unwrap();
    for line in [
        "  0   success",
        "  1   invalid data",
        "  2   usage",
        "  3   I/O",
        "  4   wrong format",
        "  5   corrupt",
        "  70  internal error",
        "  130 interrupted",
    ] {
        assert!(help.contains(line), "{line:?} missing from --help");
    }
}

#[test]
fn usage_errors_exit_2() {
    let dir = TempDir::new().unwrap();
    hydron()
        .args(["convert", "a", "b", "--to", "xml"])
        .current_dir(dir.path())
        .assert()
        .code(2);
    hydron()
        .args(["gen", "ten", "x.hyd"])
        .current_dir(dir.path())
        .assert()
        .code(2);
    hydron().arg("frobnicate").assert().code(2);
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn gen_is_deterministic_and_the_same_in_every_form() {
    let dir = TempDir::new().unwrap();
    let a = gen(dir.path(), 1000, "a.hyd", "fory", Some(300));
    let b = gen(dir.path(), 1000, "b.hyd", "fory", Some(300));
    assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap());
    let other = dir.path().join("c.hyd");
    hydron()
        .args(["gen", "1000"])
        .arg(&other)
        .args(["--seed", "8"])
        .assert()
        .success();
    assert_ne!(
        file::load(&a, Policy::Strict).unwrap(),
        file::load(&other, Policy::Strict).unwrap()
    );

    let vectors = file::load(&a, Policy::Strict).unwrap();
    assert_eq!(vectors.len(), 1000);
    assert!(vectors.iter().all(|v| (v.norm() - 1.0).abs() < 1e-5));
    let jsonl = gen(dir.path(), 1000, "a.jsonl", "jsonl", None);
    assert_eq!(file::load(&jsonl, Policy::Strict).unwrap(), vectors);
    let plain = gen(dir.path(), 1000, "a.json", "json", None);
    assert_eq!(
        json::from_slice(&fs::read(plain).unwrap(), Policy::Strict).unwrap(),
        vectors
    );
    let codes = gen(dir.path(), 1000, "a.codes", "codes", None);
    let expected: Vec<E8Root> = vectors.iter().map(|v| v.nearest_root()).collect();
    assert_eq!(
        fory::decode_codes(&fs::read(codes).unwrap()).unwrap(),
        expected
    );
}

#[test]
fn gen_reports_the_seed_it_used() {
    let dir = TempDir::new().unwrap();
    let out = hydron()
        .args(["gen", "3", "r.hyd"])
        .current_dir(dir.path())
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let seed: u64 = text
        .split("(seed ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no seed in {text:?}"));
    hydron()
        .args(["gen", "3", "s.hyd", "--seed", &seed.to_string()])
        .current_dir(dir.path())
        .assert()
        .success();
    let read = |name: &str| fs::read(dir.path().join(name)).unwrap();
    assert_eq!(read("r.hyd"), read("s.hyd"));
}

#[test]
fn inspect_reports_format_counts_checksums_and_summary() {
    let dir = TempDir::new().unwrap();
    let path = gen(dir.path(), 250, "g.hyd", "fory", Some(100));
    let v = stdout_json(hydron().arg("inspect").arg(&path).arg("--json"));
    assert_eq!(v["format"], "container-fory");
    assert_eq!(v["version"], 1);
    assert_eq!(v["chunk_vectors"], 100);
    assert_eq!(v["vectors"], 250);
    assert_eq!(v["chunks"], 3);
    assert_eq!(v["checksums"], "ok");
    assert_eq!(v["complete"], true);
    assert_eq!(v["bytes"], fs::metadata(&path).unwrap().len());
    assert_eq!(v["summary"]["valid"], 250);
    assert_eq!(v["summary"]["zero"], 0);
    let (lo, hi) = (
        v["summary"]["norm_min"].as_f64().unwrap(),
        v["summary"]["norm_max"].as_f64().unwrap(),
    );
    assert!(lo <= hi && (lo - 1.0).abs() < 1e-5 && (hi - 1.0).abs() < 1e-5);
    let top = v["summary"]["top_roots"].as_array().unwrap();
    assert_eq!(top.len(), 5);
    let counts: Vec<u64> = top.iter().map(|r| r["count"].as_u64().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");

    hydron()
        .arg("inspect")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "hydron container, fory binary, version 1, up to 100 vectors per chunk",
        ))
        .stdout(predicate::str::contains("250 in 3 chunks"))
        .stdout(predicate::str::contains("checksums:  ok"));
}

#[test]
fn inspect_counts_zero_vectors_and_the_most_frequent_roots() {
    let dir = TempDir::new().unwrap();
    let r5 = E8Root::new(5).unwrap().to_gf8();
    let r200 = E8Root::new(200).unwrap().to_gf8();
    // Vectors near a root count for it.
    let near5 = unit({
        let mut c = *r5.as_array();
        c[7] = 0.05;
        c
    });
    let data = [r5, near5, r5, r200, Gf8::ZERO, Gf8::ZERO];
    let path = container(dir.path(), "z.jsonl", &data, Format::JsonLines, 4);
    let v = stdout_json(
        hydron()
            .arg("inspect")
            .arg(&path)
            .arg("--json")
            .args(["--top", "3"]),
    );
    assert_eq!(v["format"], "container-jsonl");
    assert_eq!(v["chunks"], 2);
    assert_eq!(v["summary"]["zero"], 2);
    let top = v["summary"]["top_roots"].as_array().unwrap();
    assert_eq!(top.len(), 2);
    assert_eq!(
        (top[0]["code"].as_u64(), top[0]["count"].as_u64()),
        (Some(5), Some(3))
    );
    assert_eq!(
        (top[1]["code"].as_u64(), top[1]["count"].as_u64()),
        (Some(200), Some(1))
    );
    assert_eq!(top[0]["percent"], 75.0);
}

#[test]
fn validate_accepts_good_files_in_every_form() {
    let dir = TempDir::new().unwrap();
    for (name, format) in [
        ("v.hyd", "fory"),
        ("v.jsonl", "jsonl"),
        ("v.json", "json"),
        ("v.codes", "codes"),
    ] {
        let path = gen(dir.path(), 300, name, format, Some(128));
        hydron()
            .arg("validate")
            .arg(&path)
            .assert()
            .success()
            .stderr("")
            .stdout(predicate::str::contains("valid: 300 vectors"));
        let v = stdout_json(hydron().arg("validate").arg(&path).arg("--json"));
        assert_eq!(v["valid"], true, "{name}");
        assert_eq!(v["exit_code"], 0);
        assert_eq!(v["invalid_vectors"], 0);
    }
}

#[test]
fn validate_names_the_chunk_vector_and_coordinate_of_every_invalid_vector() {
    let dir = TempDir::new().unwrap();
    let good = unit([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let mut data = vec![good; 20];
    data[7] = Gf8::new_unchecked([0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0]);
    data[12] = Gf8::new_unchecked([2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    data[19] = Gf8::new_unchecked([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, f32::NEG_INFINITY, 0.0]);
    let path = container(dir.path(), "bad.hyd", &data, Format::Fory, 5);

    let err = fails(hydron().arg("validate").arg(&path), 1);
    assert!(err.contains("3 of 20 vectors are invalid"), "{err}");
    assert!(
        err.contains("vector 7 (chunk 1, index 2 in chunk): coordinate 3 is NaN"),
        "{err}"
    );
    hydron()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "vector 12 (chunk 2, index 2 in chunk): norm is 2",
        ))
        .stdout(predicate::str::contains(
            "vector 19 (chunk 3, index 4 in chunk): coordinate 6 is infinite",
        ));

    let v = stdout_json(hydron().arg("validate").arg(&path).arg("--json"));
    assert_eq!(v["valid"], false);
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["checksums"], "ok");
    assert_eq!(v["invalid_vectors"], 3);
    let p = &v["problems"][0];
    assert_eq!(
        (p["vector"].as_u64(), p["chunk"].as_u64()),
        (Some(7), Some(1))
    );
    assert_eq!(
        (p["index_in_chunk"].as_u64(), p["coordinate"].as_u64()),
        (Some(2), Some(3))
    );
    assert!(
        v["problems"][1].get("coordinate").is_none(),
        "a norm error has no coordinate"
    );

    // --max-problems limits the list, not the count.
    let v =
        stdout_json(
            hydron()
                .arg("validate")
                .arg(&path)
                .args(["--json", "--max-problems", "1"]),
        );
    assert_eq!(v["problems"].as_array().unwrap().len(), 1);
    assert_eq!(v["problems_truncated"], true);
    assert_eq!(v["invalid_vectors"], 3);
    // inspect describes such a file without failing.
    let v = stdout_json(hydron().arg("inspect").arg(&path).arg("--json"));
    assert_eq!(v["summary"]["invalid"], 3);
    assert_eq!(v["summary"]["norm_max"], 2.0);
}

#[test]
fn validate_names_lines_of_json_lines_files() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("plain.jsonl");
    fs::write(
        &path,
        "[1,0,0,0,0,0,0,0]\n\n[0,0,0.5,0,0,0,0,0]\n[0,0,0,0,0,0,0,0]\n",
    )
    .unwrap();
    let err = fails(hydron().arg("validate").arg(&path), 1);
    assert!(err.contains("vector 1 (line 3): norm is 0.5"), "{err}");
    // The text container: header on line 1, a checksum line after chunk 0.
    let data = [
        unit([1.0; 8]),
        unit([2.0; 8]),
        Gf8::new_unchecked([0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    ];
    let path = container(dir.path(), "c.jsonl", &data, Format::JsonLines, 2);
    let err = fails(hydron().arg("validate").arg(&path), 1);
    assert!(
        err.contains("vector 2 (chunk 1, index 0 in chunk, line 5)"),
        "{err}"
    );
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.lines().nth(4).unwrap().starts_with("[0.0,3.0,"),
        "{text}"
    );
}

#[test]
fn truncated_files_are_corrupt_at_every_length() {
    let dir = TempDir::new().unwrap();
    for (name, format) in [("t.hyd", "fory"), ("t.jsonl", "jsonl")] {
        let path = gen(dir.path(), 12, name, format, Some(5));
        let bytes = fs::read(&path).unwrap();
        let cut = dir.path().join(format!("cut-{name}"));
        for len in (1..bytes.len()).step_by(7).chain([bytes.len() - 1]) {
            fs::write(&cut, &bytes[..len]).unwrap();
            let code = hydron()
                .arg("validate")
                .arg(&cut)
                .output()
                .unwrap()
                .status
                .code();
            // Cut inside the magic, a prefix is still recognizably damaged.
            assert!(
                matches!(code, Some(4 | 5)),
                "{name} cut at {len}: exit {code:?}"
            );
        }
        fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let err = fails(hydron().arg("validate").arg(&cut), 5);
        assert!(err.contains("truncated"), "{err}");
        let v = stdout_json(hydron().arg("validate").arg(&cut).arg("--json"));
        assert_eq!(v["complete"], false);
        assert_eq!(v["error"]["class"], "corrupt");
        assert_eq!(v["exit_code"], 5);
    }
}

#[test]
fn every_flipped_bit_is_caught() {
    let dir = TempDir::new().unwrap();
    for (name, format, stride) in [("f.hyd", "fory", 1), ("f.jsonl", "jsonl", 5)] {
        let path = gen(dir.path(), 3, name, format, Some(2));
        let bytes = fs::read(&path).unwrap();
        let bad = dir.path().join(format!("flip-{name}"));
        for i in (0..bytes.len()).step_by(stride) {
            let mut b = bytes.clone();
            b[i] ^= 1 << (i % 8);
            fs::write(&bad, &b).unwrap();
            let out = hydron().arg("validate").arg(&bad).output().unwrap();
            let code = out.status.code();
            assert!(
                matches!(code, Some(4 | 5)),
                "{name}: bit flip at byte {i}: exit {code:?}"
            );
            assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
        }
    }
    // The report names the damaged chunk.
    let path = gen(dir.path(), 10, "g.hyd", "fory", Some(4));
    let mut b = fs::read(&path).unwrap();
    let at = b.len() - 24 - 4 - 10; // inside chunk 2's payload
    b[at] ^= 0x10;
    fs::write(&path, &b).unwrap();
    let err = fails(hydron().arg("validate").arg(&path), 5);
    assert!(
        err.contains("corrupt chunk 2") && err.contains("checksum mismatch"),
        "{err}"
    );
    let v = stdout_json(hydron().arg("inspect").arg(&path).arg("--json"));
    assert_eq!(v["checksums"], "failed");
    assert_eq!(v["error"]["chunk"], 2);
    assert_eq!(v["vectors"], 8, "the chunks before the damage were read");
}

#[test]
fn wrong_magic_and_other_files_are_wrong_format() {
    let dir = TempDir::new().unwrap();
    let png = dir.path().join("image.png");
    fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let err = fails(hydron().arg("inspect").arg(&png), 4);
    assert!(
        err.contains("not a hydron file") && err.contains("PNG"),
        "{err}"
    );
    let text = dir.path().join("notes.txt");
    fs::write(&text, "hello, world\n").unwrap();
    fails(hydron().arg("validate").arg(&text), 4);
    // A fory message of another type.
    let mut other = fory::encode_batch(&[Gf8::ZERO]);
    other[1] ^= 0x40;
    let f = dir.path().join("other.bin");
    fs::write(&f, &other).unwrap();
    let err = fails(hydron().arg("validate").arg(&f), 4);
    assert!(err.contains("not a hydron fory message"), "{err}");
    // A newer container version.
    let path = gen(dir.path(), 2, "v.hyd", "fory", None);
    let mut b = fs::read(&path).unwrap();
    b[8] = 9;
    fs::write(&path, &b).unwrap();
    let err = fails(hydron().arg("validate").arg(&path), 5);
    assert!(err.contains("the header"), "{err}");
}

#[test]
fn empty_files_are_wrong_format() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("empty.hyd");
    fs::write(&path, b"").unwrap();
    for cmd in ["inspect", "validate"] {
        let err = fails(hydron().arg(cmd).arg(&path), 4);
        assert!(err.contains("it is empty"), "{err}");
    }
    let v = stdout_json(hydron().arg("validate").arg(&path).arg("--json"));
    assert_eq!(v["error"]["class"], "format");
    fails(
        hydron()
            .arg("convert")
            .arg(&path)
            .arg(dir.path().join("o.hyd"))
            .args(["--to", "fory"]),
        4,
    );
    assert_eq!(listing(dir.path()), ["empty.hyd"]);
}

#[test]
fn bad_json_is_rejected_with_line_and_column() {
    let dir = TempDir::new().unwrap();
    let cases: [(&str, &str, i32, &str); 6] = [
        ("nan.json", "[[0,0,NaN,0,0,0,0,0]]", 5, "coordinate 2"),
        (
            "string.json",
            "[[0,0,0,0,\"1\",0,0,0]]",
            5,
            "invalid type: string",
        ),
        ("seven.json", "[[1,0,0,0,0,0,0]]", 5, "invalid length 7"),
        (
            "nine.jsonl",
            "[1,0,0,0,0,0,0,0]\n[1,0,0,0,0,0,0,0,0]\n",
            5,
            "line 2",
        ),
        ("inf.json", "[[1e39,0,0,0,0,0,0,0]]", 5, "out of range"),
        ("norm.json", "[[1,1,0,0,0,0,0,0]]", 1, "vector 0"),
    ];
    for (name, text, code, needle) in cases {
        let path = dir.path().join(name);
        fs::write(&path, text).unwrap();
        let err = fails(hydron().arg("validate").arg(&path), code);
        assert!(err.contains(needle), "{name}: {err}");
        assert!(
            err.contains(name),
            "{name}: the message names the file: {err}"
        );
        let out = dir.path().join(format!("{name}.out"));
        fails(
            hydron()
                .arg("convert")
                .arg(&path)
                .arg(&out)
                .args(["--to", "fory"]),
            code,
        );
        assert!(!out.exists());
    }
    let v = stdout_json(
        hydron()
            .arg("validate")
            .arg(dir.path().join("nan.json"))
            .arg("--json"),
    );
    assert_eq!(v["error"]["line"], 1);
    assert!(v["error"]["column"].as_u64().unwrap() > 0);
}

#[test]
fn missing_input_is_an_io_error() {
    let dir = TempDir::new().unwrap();
    for cmd in ["inspect", "validate"] {
        let err = fails(hydron().arg(cmd).arg(dir.path().join("nope.hyd")), 3);
        assert!(err.contains("nope.hyd"), "{err}");
    }
    let v = stdout_json(
        hydron()
            .arg("inspect")
            .arg(dir.path().join("nope.hyd"))
            .arg("--json"),
    );
    assert_eq!(v["error"]["class"], "io");
    assert_eq!(v["error"]["exit_code"], 3);
    fails(
        hydron()
            .arg("convert")
            .arg(dir.path().join("nope.hyd"))
            .arg(dir.path().join("o"))
            .args(["--to", "json"]),
        3,
    );
    fails(
        hydron()
            .arg("quantize")
            .arg(dir.path().join("nope.hyd"))
            .arg(dir.path().join("o")),
        3,
    );
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn unwritable_outputs_are_io_errors_and_leave_nothing() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 10, "in.hyd", "fory", None);
    let blocker = dir.path().join("plain-file");
    fs::write(&blocker, b"x").unwrap();
    let targets = [
        dir.path().join("no-such-dir").join("out"),
        blocker.join("out"),      // a file as a directory
        dir.path().to_path_buf(), // a directory
    ];
    for to in ["fory", "jsonl", "json", "codes"] {
        for out in &targets {
            let err = fails(
                hydron()
                    .arg("convert")
                    .arg(&input)
                    .arg(out)
                    .args(["--to", to]),
                3,
            );
            assert!(err.contains(&*out.to_string_lossy()), "{err}");
            fails(
                hydron().args(["gen", "5"]).arg(out).args(["--format", to]),
                3,
            );
        }
    }
    fails(hydron().arg("quantize").arg(&input).arg(&targets[0]), 3);
    assert_eq!(listing(dir.path()), ["in.hyd", "plain-file"]);
}

#[test]
fn convert_round_trips_through_every_form() {
    let dir = TempDir::new().unwrap();
    let original = gen(dir.path(), 700, "o.hyd", "fory", Some(256));
    let step = |from: &Path, name: &str, to: &str| {
        let out = dir.path().join(name);
        hydron()
            .arg("convert")
            .arg(from)
            .arg(&out)
            .args(["--to", to])
            .args(if matches!(to, "fory" | "jsonl") {
                &["--chunk-vectors", "256"][..]
            } else {
                &[]
            })
            .assert()
            .success()
            .stderr("")
            .stdout(predicate::str::contains("converted 700 vectors"));
        out
    };
    let jsonl = step(&original, "1.jsonl", "jsonl");
    let plain = step(&jsonl, "2.json", "json");
    let back = step(&plain, "3.hyd", "fory");
    assert_eq!(fs::read(&original).unwrap(), fs::read(&back).unwrap());
    let vectors = file::load(&original, Policy::Strict).unwrap();
    assert_eq!(fs::read(&plain).unwrap(), json::to_vec(&vectors));
    // Codes: the same bytes quantize writes.
    let codes = step(&back, "4.codes", "codes");
    let q = dir.path().join("5.codes");
    hydron()
        .arg("quantize")
        .arg(&original)
        .arg(&q)
        .assert()
        .success();
    assert_eq!(fs::read(&codes).unwrap(), fs::read(&q).unwrap());
    // Plain fory messages and plain JSON Lines are inputs too.
    let batch = dir.path().join("m.bin");
    fs::write(&batch, fory::encode_batch(&vectors)).unwrap();
    let from_batch = step(&batch, "6.hyd", "fory");
    assert_eq!(fs::read(&original).unwrap(), fs::read(&from_batch).unwrap());
    let lines: String = vectors
        .iter()
        .map(|v| json::gf8_to_string(*v) + "\n")
        .collect();
    let lines_path = dir.path().join("plain.jsonl");
    fs::write(&lines_path, lines).unwrap();
    let from_lines = step(&lines_path, "7.hyd", "fory");
    assert_eq!(fs::read(&original).unwrap(), fs::read(&from_lines).unwrap());
}

#[test]
fn convert_replaces_outputs_atomically_and_only_on_success() {
    let dir = TempDir::new().unwrap();
    let good = gen(dir.path(), 50, "good.hyd", "fory", Some(10));
    let bytes = fs::read(&good).unwrap();
    let cut = dir.path().join("cut.hyd");
    fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    for to in ["fory", "jsonl", "json", "codes"] {
        let out = dir.path().join(format!("out.{to}"));
        fails(
            hydron()
                .arg("convert")
                .arg(&cut)
                .arg(&out)
                .args(["--to", to]),
            5,
        );
        assert!(
            !out.exists(),
            "{to}: a failed convert left {}",
            out.display()
        );
        // An existing output is left as it was.
        fs::write(&out, b"old").unwrap();
        fails(
            hydron()
                .arg("convert")
                .arg(&cut)
                .arg(&out)
                .args(["--to", to]),
            5,
        );
        assert_eq!(fs::read(&out).unwrap(), b"old");
        fs::remove_file(&out).unwrap();
    }
    assert_eq!(listing(dir.path()), ["cut.hyd", "good.hyd"]);
    // Converting a file onto itself is refused, as `cp` refuses it (see
    // tests/same_file.rs), and the file is left as it was.
    fails(
        hydron()
            .arg("convert")
            .arg(&good)
            .arg(&good)
            .args(["--to", "jsonl"]),
        2,
    );
    assert_eq!(fs::read(&good).unwrap(), bytes);
}

#[test]
fn convert_fails_on_invalid_vectors_unless_renormalizing() {
    let dir = TempDir::new().unwrap();
    let data = [
        unit([1.0; 8]),
        Gf8::new_unchecked([0.0, 0.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0]),
    ];
    let path = container(dir.path(), "n.hyd", &data, Format::Fory, 10);
    let out = dir.path().join("fixed.hyd");
    let err = fails(
        hydron()
            .arg("convert")
            .arg(&path)
            .arg(&out)
            .args(["--to", "fory"]),
        1,
    );
    assert!(err.contains("vector 1: norm is 5"), "{err}");
    assert!(!out.exists());
    hydron()
        .arg("convert")
        .arg(&path)
        .arg(&out)
        .args(["--to", "fory", "--renormalize"])
        .assert()
        .success();
    let fixed = file::load(&out, Policy::Strict).unwrap();
    assert_eq!(
        fixed[1].to_array(),
        [0.0, 0.0, 0.6, 0.8, 0.0, 0.0, 0.0, 0.0]
    );
    // NaN cannot be renormalized.
    let nan = [Gf8::new_unchecked([f32::NAN; 8])];
    let path = container(dir.path(), "nan.hyd", &nan, Format::Fory, 10);
    fails(
        hydron()
            .arg("convert")
            .arg(&path)
            .arg(dir.path().join("x"))
            .args(["--to", "json", "--renormalize"]),
        1,
    );
}

#[test]
fn quantize_writes_codes_and_reports_the_angles() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 2000, "q.hyd", "fory", None);
    let out = dir.path().join("q.codes");
    let stdout = hydron()
        .arg("quantize")
        .arg(&input)
        .arg(&out)
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(stdout).unwrap();
    let vectors = file::load(&input, Policy::Strict).unwrap();
    let codes = fory::decode_codes(&fs::read(&out).unwrap()).unwrap();
    assert_eq!(codes.len(), 2000);
    let angles: Vec<f64> = vectors
        .iter()
        .zip(&codes)
        .map(|(v, c)| {
            assert_eq!(v.nearest_root(), *c);
            f64::from(v.geodesic_distance(c.to_gf8()))
        })
        .collect();
    let mean = angles.iter().sum::<f64>() / 2000.0;
    let max = angles.iter().copied().fold(0.0, f64::max);
    let number_after = |label: &str| -> f64 {
        let rest = text
            .split(label)
            .nth(1)
            .unwrap_or_else(|| panic!("{label:?} not in {text}"));
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    assert!((number_after("mean ") - mean).abs() < 1e-6, "{text}");
    assert!((number_after("max  ") - max).abs() < 1e-6, "{text}");
    let degrees = text
        .split("rad (")
        .nth(1)
        .unwrap()
        .split('°')
        .next()
        .unwrap();
    assert!(
        (degrees.parse::<f64>().unwrap() - mean.to_degrees()).abs() < 1e-3,
        "{text}"
    );
    assert!(text.contains("zero vectors: 0"));
}

#[test]
fn quantizing_roots_is_exact_and_zero_vectors_are_warned_about() {
    let dir = TempDir::new().unwrap();
    let mut data: Vec<Gf8> = E8Root::all().map(E8Root::to_gf8).collect();
    data.push(Gf8::ZERO);
    let input = container(dir.path(), "roots.hyd", &data, Format::Fory, 100);
    let out = dir.path().join("roots.codes");
    hydron()
        .arg("quantize")
        .arg(&input)
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("mean 0.000000 rad (0.0000°)"))
        .stdout(predicate::str::contains("(240 non-zero vectors)"))
        .stdout(predicate::str::contains("zero vectors: 1"))
        .stderr(predicate::str::starts_with(
            "hydron: warning: 1 zero vectors",
        ));
    let codes = fory::decode_codes(&fs::read(&out).unwrap()).unwrap();
    assert!(codes[..240].iter().copied().eq(E8Root::all()));
    // Codes files are inputs too: they read as their roots.
    let v = stdout_json(hydron().arg("inspect").arg(&out).arg("--json"));
    assert_eq!(v["format"], "fory-codes");
    assert_eq!(v["vectors"], 241);
    assert_eq!(v["checksums"], "none");
}

#[test]
fn damaged_codes_and_messages_fail_cleanly() {
    let dir = TempDir::new().unwrap();
    let mut codes = fory::encode_codes(&[E8Root::new(3).unwrap(); 4]);
    *codes.last_mut().unwrap() = 250;
    let path = dir.path().join("c.bin");
    fs::write(&path, &codes).unwrap();
    let err = fails(hydron().arg("validate").arg(&path), 1);
    assert!(
        err.contains("vector 3: E8 root code 250 is out of range"),
        "{err}"
    );
    let batch = fory::encode_batch(&[Gf8::ZERO; 3]);
    fs::write(&path, &batch[..batch.len() - 5]).unwrap();
    let err = fails(hydron().arg("inspect").arg(&path), 5);
    assert!(err.contains("input ends early"), "{err}");
}

#[test]
fn garbage_never_panics() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("g");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let starts: [&[u8]; 6] = [
        b"\x01",
        b"\x00",
        b"[",
        b"[[",
        b"{",
        b"\x89HYD\r\n\x1a\n\x01\x00",
    ];
    for i in 0..60 {
        let mut bytes = starts[i % starts.len()].to_vec();
        let len = (next() % 200) as usize;
        bytes.extend((0..len).map(|_| next() as u8));
        fs::write(&path, &bytes).unwrap();
        for cmd in ["inspect", "validate"] {
            let code = hydron().arg(cmd).arg(&path).output().unwrap().status.code();
            assert!(
                matches!(code, Some(0 | 1 | 4 | 5)),
                "{cmd} on {bytes:?}: exit {code:?}"
            );
        }
    }
}

#[test]
fn an_interrupted_command_exits_130_and_leaves_nothing() {
    let dir = TempDir::new().unwrap();
    for (format, signal) in [("fory", "-INT"), ("json", "-TERM")] {
        let out = dir.path().join(format!("big.{format}"));
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_hydron"))
            .args(["gen", "1000000000"])
            .arg(&out)
            .args(["--format", format])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the temporary file exists, then signal.
        let started = std::time::Instant::now();
        while listing(dir.path()).is_empty() {
            assert!(
                started.elapsed().as_secs() < 30,
                "no temporary file appeared"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let killed = std::process::Command::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(130), "{format}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(
            stderr,
            "hydron: error: interrupted; no output was written\n"
        );
        assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
    }
}

/// `hydron convert IN OUT --to TO [extra…]`, which must succeed quietly.
fn convert(input: &Path, output: &Path, to: &str, extra: &[&str]) {
    hydron()
        .arg("convert")
        .arg(input)
        .arg(output)
        .args(["--to", to])
        .args(extra)
        .assert()
        .success()
        .stderr("");
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
    fails(
        hydron()
            .arg("convert")
            .arg(&cut)
            .arg(&out)
            .args(["--to", "parquet"]),
        5,
    );
    assert!(!out.exists());
    fs::write(&out, b"old").unwrap();
    fails(
        hydron()
            .arg("convert")
            .arg(&cut)
            .arg(&out)
            .args(["--to", "parquet"]),
        5,
    );
    assert_eq!(fs::read(&out).unwrap(), b"old");
    assert_eq!(listing(dir.path()), ["cut.hyd", "good.hyd", "out.parquet"]);
}

#[cfg(unix)]
#[test]
fn an_output_through_a_symlink_replaces_the_file_it_names_and_keeps_the_link() {
    use std::os::unix::fs::symlink;
    let dir = TempDir::new().unwrap();
    let real = gen(dir.path(), 10, "real.hyd", "fory", None);
    symlink("real.hyd", dir.path().join("link.hyd")).unwrap();
    symlink("missing.hyd", dir.path().join("dangling.hyd")).unwrap();
    hydron()
        .args(["gen", "5", "--seed", "2"])
        .arg(dir.path().join("link.hyd"))
        .assert()
        .success();
    hydron()
        .args(["convert"])
        .arg(&real)
        .arg(dir.path().join("dangling.hyd"))
        .args(["--to", "jsonl"])
        .assert()
        .success();
    for link in ["link.hyd", "dangling.hyd"] {
        let meta = fs::symlink_metadata(dir.path().join(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link} is still a link");
    }
    assert_eq!(file::load(&real, Policy::Strict).unwrap().len(), 5);
    let missing = dir.path().join("missing.hyd");
    assert_eq!(file::load(&missing, Policy::Strict).unwrap().len(), 5);
    assert_eq!(
        listing(dir.path()),
        ["dangling.hyd", "link.hyd", "missing.hyd", "real.hyd"]
    );
}

#[cfg(unix)]
#[test]
fn a_replaced_output_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    let path = gen(dir.path(), 10, "private.hyd", "fory", None);
    let other = gen(dir.path(), 10, "other.hyd", "fory", None);
    for (mode, convert) in [(0o600, false), (0o640, true), (0o444, false)] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let mut cmd = hydron();
        if convert {
            cmd.arg("convert")
                .arg(&other)
                .arg(&path)
                .args(["--to", "jsonl"]);
        } else {
            cmd.args(["gen", "3"]).arg(&path);
        }
        cmd.assert().success();
        let now = fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(now, mode, "convert: {convert}");
    }
    assert_eq!(listing(dir.path()), ["other.hyd", "private.hyd"]);
}

#[test]
fn an_output_path_ending_in_a_slash_is_refused_before_anything_is_reported() {
    let dir = TempDir::new().unwrap();
    let slash = format!("{}/", dir.path().join("none").display());
    let out = hydron().args(["gen", "3", &slash]).assert().code(3);
    let out = out.get_output();
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("names a directory"), "{stderr}");
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn plain_json_lines_count_every_vector_read_before_a_bad_line() {
    // Each line of plain JSON Lines stands alone: the lines before a bad
    // one were read (and go into the statistics), whatever the chunk they
    // fall in. The count was that of the whole chunks before the error.
    let dir = TempDir::new().unwrap();
    for good in [2usize, 65_535, 65_536, 70_000] {
        let path = dir.path().join(format!("{good}.jsonl"));
        let mut text = "[1,0,0,0,0,0,0,0]\n".repeat(good);
        text.push_str("[0,0,0,0,0,0,0,oops]\n");
        fs::write(&path, text).unwrap();
        let v = stdout_json(hydron().arg("validate").arg(&path).arg("--json"));
        assert_eq!(v["vectors"], good as u64, "{good}");
        assert_eq!(v["complete"], false, "{good}");
        assert_eq!(v["error"]["line"], good as u64 + 1, "{good}");
        let v = stdout_json(hydron().arg("inspect").arg(&path).arg("--json"));
        assert_eq!(v["vectors"], good as u64, "{good}");
    }
}

#[test]
fn options_the_output_form_does_not_have_are_usage_errors() {
    // They were ignored without a word (exit 0).
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 10, "in.hyd", "fory", None);
    let out = dir.path().join("out");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    for (args, says) in [
        (
            vec!["convert", &s(&input), &s(&out), "--to", "jsonl", "--compression", "zstd"],
            "--compression applies to a Parquet output, not to the jsonl form",
        ),
        (
            vec!["convert", &s(&input), &s(&out), "--to", "json", "--chunk-vectors", "5"],
            "--chunk-vectors applies to a container output (fory or jsonl), not to the json form",
        ),
        (
            vec!["convert", &s(&input), &s(&out), "--to", "parquet", "--chunk-vectors", "5"],
            "--chunk-vectors applies to a container output (fory or jsonl), not to the parquet form",
        ),
        (
            vec!["gen", "3", &s(&out), "--format", "fory", "--row-group-vectors", "2"],
            "--row-group-vectors applies to a Parquet output, not to the fory form",
        ),
        (
            vec!["quantize", &s(&input), &s(&out), "--compression", "gzip"],
            "--compression applies to a Parquet output, not to the codes form",
        ),
    ] {
        let err = fails(hydron().args(&args), 2);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}");
    }
    // Where they apply, they are taken.
    hydron()
        .args([
            "quantize",
            &s(&input),
            &s(&out),
            "--to",
            "parquet",
            "--compression",
            "gzip",
        ])
        .assert()
        .success();
    hydron()
        .args([
            "convert",
            &s(&input),
            &s(&out),
            "--to",
            "jsonl",
            "--chunk-vectors",
            "5",
        ])
        .assert()
        .success();
}

#[test]
fn gen_refuses_a_count_its_message_form_cannot_hold_before_making_it() {
    // It built (and held) every vector first: about 4 GiB for a batch.
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("big");
    for (n, form, says) in [
        (
            "134217728",
            "batch",
            "a Gf8Batch message holds at most 4294967264 bytes",
        ),
        (
            "4294967296",
            "codes",
            "an E8Codes message holds at most 4294967295 bytes",
        ),
    ] {
        let started = std::time::Instant::now();
        let err = fails(
            hydron().args(["gen", n]).arg(&out).args(["--format", form]),
            1,
        );
        assert!(err.contains(says), "{err}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{form}"
        );
        assert!(!out.exists());
    }
}
