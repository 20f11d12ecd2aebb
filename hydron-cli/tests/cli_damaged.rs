//! End-to-end tests of the `hydron` binary on broken inputs: invalid
//! vectors named by chunk, vector, line and coordinate; truncated,
//! bit-flipped, wrong-magic, empty, malformed JSON, missing and garbage
//! files, each with its exit code and one error line.

use std::fs;

use hydron_codec::file::Format;
use hydron_codec::fory;
use hydron_core::{E8Root, Gf8};
use predicates::prelude::*;
use tempfile::TempDir;

mod common;

use common::*;

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
