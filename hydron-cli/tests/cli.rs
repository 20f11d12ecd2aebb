//! End-to-end tests of the `hydron` binary on good files in every form:
//! every command, its report and exit code, outputs replaced atomically
//! and only on success (unwritable outputs leave nothing behind), and
//! options the output form lacks. Broken inputs are in `cli_damaged.rs`,
//! Parquet in `cli_parquet.rs`, hostile inputs and outputs in
//! `hostile.rs` and `hostile_output.rs`.

use std::fs;
use std::path::Path;

use hydron_codec::file::{self, Format};
use hydron_codec::{fory, json, Policy};
use hydron_core::{E8Root, Gf8};
use predicates::prelude::*;
use tempfile::TempDir;

mod common;

use common::*;

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
