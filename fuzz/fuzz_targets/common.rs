// Shared by the fuzz targets (included with `#[path]`).

use hydron_core::Gf8;

/// The bit patterns of vectors, so that NaN compares equal to itself.
pub fn bits(vectors: &[Gf8]) -> Vec<[u32; 8]> {
    vectors
        .iter()
        .map(|v| v.as_array().map(f32::to_bits))
        .collect()
}

/// Panics unless every vector keeps the `Gf8` invariant.
pub fn assert_valid(vectors: &[Gf8], what: &str) {
    for (i, v) in vectors.iter().enumerate() {
        if let Err(e) = Gf8::check(v.as_array()) {
            panic!(
                "{what}: decoded vector {i} is invalid ({e}): {:?}",
                v.as_array()
            );
        }
    }
}
