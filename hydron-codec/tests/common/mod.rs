//! Helpers shared by the file-container integration tests. Each test file
//! is its own crate and uses only some of them, hence `allow(dead_code)`.
#![allow(dead_code)]

pub mod alloc;
/// The precondition rule, hydron-core's (one file for the workspace's
/// tests).
#[path = "../../../hydron-core/tests/common/precondition.rs"]
mod precondition;

// Not every test crate that includes this module checks a precondition.
#[allow(unused_imports)]
pub use precondition::precondition;

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
