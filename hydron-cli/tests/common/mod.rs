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
