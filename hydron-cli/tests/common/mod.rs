//! Helpers shared by the `hydron` binary's test files (each test file
//! uses some of them).

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

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

/// Whether a test's precondition holds (a tool, root, a file system
/// feature), by the project's convention: if it does not and
/// `HYDRON_REQUIRE_ALL=1` is set, the test fails naming what is missing;
/// otherwise it says so loudly on standard error and the caller returns.
///
/// `if !precondition(Path::new("/usr/bin/time").exists(), "/usr/bin/time") { return; }`
pub fn precondition(holds: bool, what: &str) -> bool {
    if holds {
        return true;
    }
    if std::env::var_os("HYDRON_REQUIRE_ALL").is_some_and(|v| v == "1") {
        panic!("precondition missing (HYDRON_REQUIRE_ALL=1 makes this a failure): {what}");
    }
    eprintln!("SKIPPED (precondition): {what}");
    false
}

/// GNU time at `/usr/bin/time`, which reports a command's peak memory
/// (`-f %M`, in KiB); `false` (see [`precondition`]) if it is missing.
pub fn have_gnu_time() -> bool {
    precondition(
        Path::new("/usr/bin/time").exists(),
        "/usr/bin/time (GNU time, to measure peak memory; apt-get install time)",
    )
}
