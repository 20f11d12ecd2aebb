//! Helpers shared by the file-container integration tests. Each test file
//! is its own crate and uses only some of them, hence `allow(dead_code)`.
#![allow(dead_code)]

pub mod alloc;

use std::path::Path;

use hydron_codec::file::{FileOptions, Format};
use hydron_codec::CodecError;
use hydron_core::Gf8;

/// The forms this build can write.
pub fn formats() -> Vec<Format> {
    vec![
        #[cfg(feature = "fory-messages")]
        Format::Fory,
        #[cfg(feature = "json")]
        Format::JsonLines,
    ]
}

pub fn some_vectors(n: usize) -> Vec<Gf8> {
    (0..n)
        .map(|i| {
            let x = i as f32;
            Gf8::normalize([x.sin(), x.cos(), 1.0, -x, 0.5, x * x, -0.25, 3.0]).unwrap()
        })
        .collect()
}

pub fn opts(chunk: u32) -> FileOptions {
    FileOptions::new()
        .with_chunk_vectors(chunk)
        .with_durable(false)
}

/// Unwraps `InFile` to the error inside.
pub fn inner(e: &CodecError) -> &CodecError {
    match e {
        CodecError::InFile { error, .. } => inner(error),
        other => other,
    }
}

pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Whether a test's precondition holds (a file system feature, root), by
/// the project's convention: if it does not and `HYDRON_REQUIRE_ALL=1` is
/// set (scripts/test-all.sh and CI set it), the test fails naming what is
/// missing; otherwise it says so loudly on standard error and the caller
/// skips that part.
///
/// `if !precondition(sparse_files_here, "sparse files") { return; }`
pub fn precondition(holds: bool, what: &str) -> bool {
    if holds {
        return true;
    }
    if std::env::var_os("HYDRON_REQUIRE_ALL").is_some_and(|v| v == "1") {
        panic!("precondition missing (HYDRON_REQUIRE_ALL=1 makes this a failure): {what}");
    }
    // Straight to the process's stderr, not through `eprintln!`, which the
    // test harness captures (and hides) for a test that passes.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED (precondition): {what}");
    false
}
