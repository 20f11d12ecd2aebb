//! The `hydron` binary against hostile outputs and signals: FIFOs and
//! devices at the output, `-` and `/dev/stdout`, an open descriptor, a
//! closed pipe, a report that cannot be printed, signals while blocked
//! (temporary files removed), a 250-byte name, and standard output
//! appended to the input.

#![cfg(unix)]

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::process::{Command as Std, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use hydron_codec::json;
use tempfile::TempDir;

mod common;

use common::*;

#[test]
fn devices_and_fifos_at_the_output_are_written_not_replaced() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 500, "a.hyd", "fory", None);
    // A FIFO: the reader gets the data, the FIFO stays. (An older build
    // renamed a file over the FIFO and left the reader waiting: the
    // reader's answer is awaited with a time limit.)
    converts_into_a_fifo(dir.path(), &input, "json");
    // A character device: as root, one made here (a build with this bug
    // would replace the real /dev/null as root); otherwise a link to
    // /dev/null, which such a build cannot replace without root (it fails
    // to create its temporary file in /dev), so the test still catches it.
    let dev = if is_root() {
        let dev = dir.path().join("nulldev");
        let made = Std::new("mknod").arg(&dev).args(["c", "1", "3"]).status();
        assert!(made.is_ok_and(|s| s.success()), "mknod as root");
        dev
    } else {
        let link = dir.path().join("null-link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        link
    };
    hydron()
        .args(["convert", s(&input), s(&dev), "--to", "json"])
        .assert()
        .success();
    assert!(fs::metadata(&dev).unwrap().file_type().is_char_device());
    assert_no_temporary_file(dir.path());
}

#[test]
fn dash_and_dev_stdout_stream_the_data_and_report_on_stderr() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 300, "a.hyd", "fory", None);
    let vs = vectors_of(&input);
    for output in ["-", "/dev/stdout"] {
        let out = hydron()
            .args(["convert", s(&input), output, "--to", "json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{output}");
        assert_eq!(
            out.stdout,
            json::to_vec(&vs),
            "{output}: only the data on stdout"
        );
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with("converted 300 vectors"), "{stderr}");
        // `>> log`: standard output is a regular file opened to append;
        // the data follows what is there, nothing is renamed over it.
        let log = dir.path().join("log");
        fs::write(&log, b"before\n").unwrap();
        let append = File::options().append(true).open(&log).unwrap();
        let status = Std::new(bin())
            .args(["convert", s(&input), output, "--to", "json"])
            .stdout(append)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{output}");
        let mut expected = b"before\n".to_vec();
        expected.extend_from_slice(&json::to_vec(&vs));
        assert_eq!(fs::read(&log).unwrap(), expected, "{output}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_open_descriptor_as_output_holds_exactly_the_new_data() {
    // `3<>file` opens the file for writing without emptying it; the tool
    // writing `/dev/fd/3` leaves exactly its output there (no old bytes
    // past its end) in the same file, and a pipe gets the data too.
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 300, "a.hyd", "fory", None);
    let vs = vectors_of(&input);
    let held = dir.path().join("held.json");
    fs::write(&held, vec![b'x'; 1 << 20]).unwrap();
    let script = format!(
        "{} convert {} /dev/fd/3 --to json 3<>{}",
        bin().display(),
        input.display(),
        held.display()
    );
    let status = Std::new("bash").args(["-c", &script]).status().unwrap();
    assert!(status.success());
    assert_eq!(fs::read(&held).unwrap(), json::to_vec(&vs));
    let script = format!(
        "{} convert {} /dev/fd/3 --to json 3>&1 >/dev/null | cat",
        bin().display(),
        input.display()
    );
    let out = Std::new("bash").args(["-c", &script]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, json::to_vec(&vs));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 200_000, "big.hyd", "fory", None);
    let (head, code, stderr) = head_100_then_close(
        &["convert", s(&input), "-", "--to", "jsonl"],
        Duration::from_secs(20),
    );
    assert_eq!(code, Some(141));
    assert_eq!(stderr, "", "no error spam");
    assert!(head.starts_with(br#"{"format":"hydron-gf8-jsonl""#));
}

#[test]
fn a_failed_report_leaves_the_output_untouched() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 100, "a.hyd", "fory", None);
    let target = dir.path().join("k.json");
    fs::write(&target, b"old").unwrap();
    for to in ["json", "fory", "codes"] {
        let full = File::options().write(true).open("/dev/full").unwrap();
        let out = Std::new(bin())
            .args(["convert", s(&input), s(&target), "--to", to])
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{to}");
        assert_eq!(fs::read(&target).unwrap(), b"old", "{to}");
    }
    assert_eq!(listing(dir.path()), ["a.hyd", "k.json"]);
}

/// A FIFO input with no writer, or an output FIFO with no reader: the
/// process is blocked in `open`; a signal must still end it.
#[test]
fn signals_end_a_process_blocked_on_a_fifo() {
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("p");
    mkfifo(&fifo);
    let input = gen(dir.path(), 10, "a.hyd", "fory", None);
    let cases: [(&[&str], &str); 3] = [
        (&["validate", s(&fifo)], "TERM"),
        (&["inspect", s(&fifo)], "INT"),
        (&["convert", s(&input), s(&fifo), "--to", "json"], "TERM"),
    ];
    for (args, sig) in cases {
        let child = spawn(args);
        thread::sleep(Duration::from_millis(300));
        let sent = Instant::now();
        signal(&child, sig);
        let (code, _) = wait_within(child, Duration::from_secs(5));
        assert_eq!(code, Some(130), "{args:?}");
        assert!(sent.elapsed() < Duration::from_secs(2), "{args:?}");
    }
    assert_eq!(listing(dir.path()), ["a.hyd", "p"]);
}

/// A read that blocks forever after the output's temporary file exists
/// (a writer that opened the FIFO and went quiet): the signal thread must
/// remove the temporary file itself.
#[test]
fn a_signal_during_a_blocked_read_removes_the_temporary_file() {
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("in");
    mkfifo(&fifo);
    let out_dir = dir.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("o.jsonl");
    for sig in ["TERM", "INT"] {
        let child = spawn(&["convert", s(&fifo), s(&out), "--to", "jsonl"]);
        let mut writer = File::create(&fifo).unwrap();
        writer.write_all(&b"[1,0,0,0,0,0,0,0]\n".repeat(3)).unwrap();
        let started = Instant::now();
        while listing(&out_dir).is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no temporary file"
            );
            thread::sleep(Duration::from_millis(10));
        }
        signal(&child, sig);
        let (code, stderr) = wait_within(child, Duration::from_secs(5));
        assert_eq!(code, Some(130), "{stderr}");
        assert_eq!(
            stderr,
            "hydron: error: interrupted; no output was written\n"
        );
        assert!(
            listing(&out_dir).is_empty(),
            "{sig}: {:?}",
            listing(&out_dir)
        );
        drop(writer);
    }
}

#[test]
fn a_second_signal_still_removes_every_temporary_file() {
    let dir = TempDir::new().unwrap();
    for (format, first, second) in [
        ("jsonl", "INT", "TERM"),
        ("fory", "INT", "INT"),
        ("json", "TERM", "INT"),
    ] {
        let out = dir.path().join(format!("o.{format}"));
        let child = spawn(&["gen", "1000000000", s(&out), "--format", format]);
        let started = Instant::now();
        while listing(dir.path()).is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no temporary file"
            );
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(Duration::from_millis(100));
        signal(&child, first);
        signal(&child, second);
        let (code, _) = wait_within(child, Duration::from_secs(5));
        assert_eq!(code, Some(130), "{format}");
        assert!(
            listing(dir.path()).is_empty(),
            "{format}: {:?}",
            listing(dir.path())
        );
    }
}

#[test]
fn a_250_byte_output_name_is_fine() {
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 10, "a.hyd", "fory", None);
    for to in ["json", "fory", "codes"] {
        let out = dir
            .path()
            .join(format!("{}.{to}", "n".repeat(250 - to.len() - 1)));
        assert_eq!(out.file_name().unwrap().len(), 250);
        hydron()
            .args(["convert", s(&input), s(&out), "--to", to])
            .assert()
            .success();
        assert!(out.is_file());
    }
}

#[test]
fn standard_output_appending_to_the_input_is_refused_before_a_byte_is_written() {
    // `hydron convert in.jsonl - --to jsonl >> in.jsonl` would read back
    // its own output (a 1M-vector input grows without end); as `cat`, the
    // tool refuses, and the input is left as it was.
    let dir = TempDir::new().unwrap();
    let input = gen(dir.path(), 200_000, "in.jsonl", "jsonl", None);
    let before = fs::read(&input).unwrap();
    for (args, form) in [
        (vec!["convert", s(&input), "-", "--to", "jsonl"], "jsonl"),
        (
            vec!["convert", s(&input), "/dev/stdout", "--to", "json"],
            "json",
        ),
        (vec!["quantize", s(&input), "-"], "codes"),
    ] {
        let append = fs::OpenOptions::new().append(true).open(&input).unwrap();
        let out = Std::new(bin())
            .args(&args)
            .stdout(append)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{form}: {stderr}");
        assert!(stderr.contains("are the same file"), "{form}: {stderr}");
        assert!(
            fs::read(&input).unwrap() == before,
            "{form}: the input changed"
        );
    }
    // Naming the input as the output path is refused too (see
    // tests/same_file.rs), and the input is left as it was.
    hydron()
        .args(["convert", s(&input), s(&input), "--to", "fory"])
        .assert()
        .code(2);
    assert!(fs::read(&input).unwrap() == before);
}
