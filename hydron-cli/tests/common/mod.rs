//! Helpers shared by the `hydron` binary's test files (each test file
//! uses some of them).

#![allow(dead_code)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Std, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use hydron_codec::file::{FileOptions, FileWriter, Format};
use hydron_codec::{json, Policy};
use hydron_core::Gf8;
use tempfile::TempDir;

/// The binary under test: this build's, or `HYDRON_TEST_BIN` (to show
/// that an older build fails these tests).
pub fn bin() -> PathBuf {
    std::env::var_os("HYDRON_TEST_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_hydron").into(), PathBuf::from)
}

/// A command running the binary under test.
pub fn hydron() -> Command {
    Command::new(bin())
}

/// `p` as a string (every test path is UTF-8).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The names of the files in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Asserts that no temporary output file (`*.tmp`) is left in `dir`.
pub fn assert_no_temporary_file(dir: &Path) {
    let names = listing(dir);
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
}

/// The precondition rule, hydron-core's (one file for the workspace's
/// tests): `if !precondition(holds, "what is missing") { return; }`.
#[path = "../../../hydron-core/tests/common/precondition.rs"]
mod precondition;

pub use precondition::precondition;

/// GNU time at `/usr/bin/time`, which reports a command's peak memory
/// (`-f %M`, in KiB); `false` (see [`precondition`]) if it is missing.
pub fn have_gnu_time() -> bool {
    precondition(
        Path::new("/usr/bin/time").exists(),
        "/usr/bin/time (GNU time, to measure peak memory; apt-get install time)",
    )
}

/// The peak memory, in KiB, of `hydron validate PATH` (which must succeed),
/// as GNU time reports it (check [`have_gnu_time`] first).
pub fn validate_peak_kib(path: &Path) -> u64 {
    let out = Std::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(bin())
        .arg("validate")
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    stderr.trim().lines().last().unwrap().parse().unwrap()
}

/// Runs `hydron gen N name --seed 7 [--format f] [--chunk-vectors c]` (the
/// chunk size for the container forms only).
pub fn gen(dir: &Path, n: u64, name: &str, format: &str, chunk: Option<u32>) -> PathBuf {
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

/// Whether `line` is the note a command prints on standard error about
/// the Parquet column it reads (`hydron: FILE: reading column "NAME"
/// (TYPE) as vectors`).
pub fn is_column_note(line: &str) -> bool {
    line.starts_with("hydron: ") && line.contains(": reading column \"")
}

/// `stderr` without the notes about the Parquet column read.
pub fn without_column_notes(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !is_column_note(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The output of a failed run: checks the exit code and that stderr is
/// exactly one `hydron: error:` line (no panic, no backtrace; besides the
/// note on the Parquet column read, if any); returns it.
pub fn fails(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().clone();
    let stderr = without_column_notes(&String::from_utf8(out.stderr).expect("UTF-8 stderr"));
    assert_eq!(stderr.lines().count(), 1, "one line of stderr: {stderr:?}");
    assert!(stderr.starts_with("hydron: error: "), "{stderr:?}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("internal error"),
        "{stderr:?}"
    );
    stderr
}

pub fn stdout_json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().expect("run hydron");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

pub fn unit(coords: [f32; 8]) -> Gf8 {
    Gf8::normalize(coords).unwrap()
}

/// A binary container of `vectors` with `chunk` vectors per chunk, written
/// without checks (so it may hold invalid vectors).
pub fn container(dir: &Path, name: &str, vectors: &[Gf8], format: Format, chunk: u32) -> PathBuf {
    let path = dir.join(name);
    let mut w =
        FileWriter::create(&path, format, FileOptions::new().with_chunk_vectors(chunk)).unwrap();
    w.write(vectors).unwrap();
    w.finish().unwrap();
    path
}

/// Runs `hydron ARGS` (which write to standard output), reads the first
/// 100 bytes of its output and closes the pipe, as `| head -c 100` does;
/// returns those bytes, and the exit code and standard error of a command
/// that must end within `limit`.
pub fn head_100_then_close(args: &[&str], limit: Duration) -> ([u8; 100], Option<i32>, String) {
    let mut child = Std::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let (code, stderr) = wait_within(child, limit);
    (head, code, stderr)
}

pub fn spawn(args: &[&str]) -> Child {
    Std::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The vectors of the file at `path` (any form), read by `hydron convert`.
pub fn vectors_of(path: &Path) -> Vec<Gf8> {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("v.json");
    hydron()
        .args(["convert", s(path), s(&out), "--to", "json"])
        .assert()
        .success();
    json::from_slice(&fs::read(out).unwrap(), Policy::Strict).unwrap()
}

pub fn mkfifo(path: &Path) {
    assert!(Std::new("mkfifo").arg(path).status().unwrap().success());
}

pub fn is_root() -> bool {
    Std::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

pub fn signal(child: &Child, name: &str) {
    let sent = Std::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Waits for `child` at most `limit`; kills it (and fails) if it is still
/// running then. Returns its exit code and stderr.
pub fn wait_within(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            return (status.code(), stderr);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// `hydron convert INPUT out.fifo --to FORM` into a FIFO in `dir` read by
/// another thread: the reader gets exactly what a conversion into a file
/// holds, and the FIFO stays a FIFO. Returns the FIFO and those bytes.
#[cfg(unix)]
pub fn converts_into_a_fifo(dir: &Path, input: &Path, form: &str) -> (PathBuf, Vec<u8>) {
    use std::fs::File;
    use std::os::unix::fs::FileTypeExt;
    let expected = {
        let out = dir.join(format!("expected.{form}"));
        hydron()
            .args(["convert", s(input), s(&out), "--to", form])
            .assert()
            .success();
        fs::read(out).unwrap()
    };
    let fifo = dir.join("out.fifo");
    mkfifo(&fifo);
    let (sender, receiver) = std::sync::mpsc::channel();
    {
        let fifo = fifo.clone();
        thread::spawn(move || {
            let mut data = Vec::new();
            File::open(fifo).unwrap().read_to_end(&mut data).unwrap();
            let _ = sender.send(data);
        });
    }
    hydron()
        .args(["convert", s(input), s(&fifo), "--to", form])
        .timeout(Duration::from_secs(20))
        .assert()
        .success();
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    let data = receiver.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(data, expected);
    (fifo, expected)
}

/// The vectors `hydron convert IN OUT.json [extra…]` reads, and its
/// standard error (the note naming a Parquet column, for one).
pub fn read_back(input: &Path, extra: &[&str]) -> (Vec<Gf8>, String) {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("v.json");
    let run = hydron()
        .arg("convert")
        .arg(input)
        .arg(&out)
        .args(["--to", "json"])
        .args(extra)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    let v = json::from_slice(&fs::read(out).unwrap(), Policy::Strict).unwrap();
    (v, stderr)
}
