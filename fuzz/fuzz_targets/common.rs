// Shared by the fuzz targets (included with `#[path]`).

use hydron_codec::Policy;
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

/// Decodes under Strict, Renormalize and Trusted (in that order) and checks
/// that they agree: what Strict or Renormalize returns is valid, and when
/// Strict succeeds the other two return the same bits.
pub fn decode_all_policies<E>(
    decode: impl Fn(Policy) -> Result<Vec<Gf8>, E>,
    what: &str,
) -> [Result<Vec<Gf8>, E>; 3] {
    let [strict, renormalized, trusted] =
        [Policy::Strict, Policy::Renormalize, Policy::Trusted].map(&decode);
    if let Ok(v) = &renormalized {
        assert_valid(v, &format!("{what}(Renormalize)"));
    }
    if let Ok(v) = &strict {
        assert_valid(v, &format!("{what}(Strict)"));
        // Valid vectors pass every policy unchanged.
        assert_eq!(
            bits(
                renormalized
                    .as_ref()
                    .ok()
                    .expect("Strict ok, Renormalize not")
            ),
            bits(v)
        );
        assert_eq!(
            bits(trusted.as_ref().ok().expect("Strict ok, Trusted not")),
            bits(v)
        );
    }
    [strict, renormalized, trusted]
}
