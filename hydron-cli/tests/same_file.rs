//! An output that is the input file is refused before anything is written,
//! as `cp` refuses "are the same file": the same path, `./a.hyd` for
//! `a.hyd`, a symbolic link either way, a hard link, standard input
//! redirected from the output, in every command that reads a file and
//! writes one (`convert`, `quantize`) and every output form. Exit 2 (a
//! usage error), one error line, nothing on standard output, the input
//! and its directory unchanged.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{bin, hydron, listing, s, without_column_notes};
use tempfile::TempDir;

/// Every form `convert --to` writes.
const FORMS: [&str; 7] = [
    "fory",
    "jsonl",
    "json",
    "codes",
    "batch",
    "parquet",
    "parquet-codes",
];

/// Runs `cmd` in `dir`, expects the refusal, and checks that nothing in
/// `dir` changed (no file replaced, no temporary file left).
fn refused(dir: &Path, cmd: &mut Command, what: &str) -> String {
    let before: Vec<(String, Vec<u8>)> = listing(dir)
        .into_iter()
        .map(|n| {
            let bytes = fs::read(dir.join(&n)).unwrap_or_default();
            (n, bytes)
        })
        .collect();
    let out = cmd.current_dir(dir).output().unwrap();
    // (A Parquet input is named on a line of its own first.)
    let stderr = without_column_notes(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
    assert!(stderr.contains("are the same file"), "{what}: {stderr}");
    assert!(stderr.starts_with("hydron: error: "), "{what}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
    assert!(out.stdout.is_empty(), "{what}: no report");
    let after: Vec<(String, Vec<u8>)> = listing(dir)
        .into_iter()
        .map(|n| {
            let bytes = fs::read(dir.join(&n)).unwrap_or_default();
            (n, bytes)
        })
        .collect();
    assert!(before == after, "{what}: the directory changed");
    stderr
}

/// `hydron ARGS…`, standard input empty unless set.
fn run(args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args).stdin(Stdio::null());
    cmd
}

fn gen(dir: &Path, name: &str, format: &str) {
    hydron()
        .current_dir(dir)
        .args(["gen", "300", name, "--seed", "3", "--format", format])
        .assert()
        .success();
}

#[test]
fn the_same_path_is_refused_for_every_output_form() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    gen(d, "a.hyd", "fory");
    for to in FORMS {
        let e = refused(d, &mut run(&["convert", "a.hyd", "a.hyd", "--to", to]), to);
        assert!(
            e.contains("'a.hyd' and 'a.hyd' are the same file"),
            "{to}: {e}"
        );
    }
    refused(d, &mut run(&["quantize", "a.hyd", "a.hyd"]), "quantize");
    refused(
        d,
        &mut run(&["quantize", "a.hyd", "a.hyd", "--to", "parquet"]),
        "quantize parquet",
    );
}

#[test]
fn another_spelling_of_the_path_is_the_same_file() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("sub")).unwrap();
    gen(d, "a.hyd", "fory");
    let absolute = d.join("a.hyd");
    for output in ["./a.hyd", "sub/../a.hyd", ".//a.hyd", s(&absolute)] {
        refused(
            d,
            &mut run(&["convert", "a.hyd", output, "--to", "json"]),
            output,
        );
        refused(
            d,
            &mut run(&["quantize", "./a.hyd", output]),
            &format!("quantize {output}"),
        );
    }
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_either_way_is_the_same_file() {
    use std::os::unix::fs::symlink;
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    gen(d, "a.hyd", "fory");
    symlink("a.hyd", d.join("link")).unwrap();
    symlink("link", d.join("link2")).unwrap();
    symlink(d.join("a.hyd"), d.join("absolute-link")).unwrap();
    for (input, output) in [
        ("a.hyd", "link"),
        ("link", "a.hyd"),
        ("link", "link2"),
        ("a.hyd", "absolute-link"),
    ] {
        for to in FORMS {
            let what = format!("{input} -> {output} --to {to}");
            refused(d, &mut run(&["convert", input, output, "--to", to]), &what);
        }
        refused(
            d,
            &mut run(&["quantize", input, output]),
            &format!("quantize {input} {output}"),
        );
    }
    // The links are still links to the untouched file.
    assert!(fs::symlink_metadata(d.join("link"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[cfg(unix)]
#[test]
fn a_hard_link_is_the_same_file() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    gen(d, "a.jsonl", "jsonl");
    fs::hard_link(d.join("a.jsonl"), d.join("hard.jsonl")).unwrap();
    for to in FORMS {
        refused(
            d,
            &mut run(&["convert", "a.jsonl", "hard.jsonl", "--to", to]),
            to,
        );
    }
    refused(
        d,
        &mut run(&["quantize", "hard.jsonl", "a.jsonl"]),
        "quantize",
    );
}

#[test]
fn every_input_form_read_by_path_is_protected() {
    // Parquet is read by path, not through the stream that found its
    // form; whole forms are read before the output is opened.
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    for (name, form) in [
        ("v.parquet", "parquet"),
        ("c.parquet", "parquet-codes"),
        ("a.json", "json"),
        ("b.fory", "batch"),
        ("c.codes", "codes"),
    ] {
        gen(d, name, form);
        refused(d, &mut run(&["convert", name, name, "--to", form]), name);
        refused(d, &mut run(&["quantize", name, name]), name);
    }
}

#[cfg(unix)]
#[test]
fn standard_input_redirected_from_the_output_is_the_same_file() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    gen(d, "a.hyd", "fory");
    for args in [
        ["convert", "-", "a.hyd", "--to", "jsonl"].as_slice(),
        ["quantize", "-", "a.hyd"].as_slice(),
    ] {
        let mut cmd = run(args);
        cmd.stdin(Stdio::from(fs::File::open(d.join("a.hyd")).unwrap()));
        let e = refused(d, &mut cmd, args[0]);
        assert!(e.contains("and standard input are the same file"), "{e}");
    }
}

#[test]
fn a_copy_of_the_input_is_another_file() {
    // The check is by identity, not by content: a copy is replaced.
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    gen(d, "a.hyd", "fory");
    fs::copy(d.join("a.hyd"), d.join("copy.hyd")).unwrap();
    hydron()
        .args(["convert", "a.hyd", "copy.hyd", "--to", "jsonl"])
        .current_dir(d)
        .assert()
        .success();
    assert_eq!(listing(d), ["a.hyd", "copy.hyd"]);
    assert!(fs::read(d.join("copy.hyd"))
        .unwrap()
        .starts_with(br#"{"format":"hydron-gf8-jsonl""#));
}
