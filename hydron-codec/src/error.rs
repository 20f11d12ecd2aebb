//! [`CodecError`]: every way decoding or encoding can fail.

use hydron_core::{BatchError, Gf8Error};

/// Why data could not be encoded or decoded.
///
/// Each variant is one cause, and its message says where: which vector and
/// coordinate, which byte offset, which chunk, which line and column.
///
/// ```
/// use hydron_codec::{CodecError, Policy};
///
/// let err = Policy::Strict.apply(vec![[0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0]]).unwrap_err();
/// assert!(matches!(err, CodecError::InvalidVector { index: 0, .. }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// A decoded vector breaks the `Gf8` invariant (NaN, infinite, or not of
    /// unit norm) under the decoding [`Policy`](crate::Policy).
    #[error("vector {index}: {error}")]
    InvalidVector {
        /// Index of the vector in the batch (or stream).
        index: u64,
        /// What is wrong with it.
        error: Gf8Error,
    },
}

impl From<BatchError> for CodecError {
    fn from(e: BatchError) -> CodecError {
        CodecError::InvalidVector {
            index: e.index as u64,
            error: e.error,
        }
    }
}
