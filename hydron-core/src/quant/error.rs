//! The error type of [`LatticeQuantizer`](super::LatticeQuantizer).

/// Why a quantizer could not be built, or a batch encoded or decoded.
///
/// Every variant names where the problem is (the vector, the coordinate).
///
/// ```
/// use hydron_core::quant::{LatticeQuantizer, QuantError};
///
/// let q = LatticeQuantizer::new(3, 2, 0)?;
/// let err = q.encode(&[1.0, 2.0, 3.0, 4.0, f32::NAN, 6.0]).unwrap_err();
/// assert_eq!(err, QuantError::NotANumber { vector: 1, coordinate: 1 });
/// assert_eq!(err.to_string(), "vector 1, coordinate 1 is NaN");
/// # Ok::<(), QuantError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum QuantError {
    /// A rate other than 2 or 4 bits per coordinate was asked for.
    #[error("{bits} bits per coordinate is not supported: 2 and 4 are")]
    UnsupportedBits {
        /// The rate that was asked for.
        bits: u32,
    },
    /// A quantizer of dimension 0 was asked for.
    #[error("the dimension must be at least 1")]
    ZeroDimension,
    /// The input is not a whole number of vectors.
    #[error("{len} numbers are not a whole number of {dim}-dimensional vectors")]
    InputLength {
        /// The number of `f32`s given.
        len: usize,
        /// The quantizer's dimension.
        dim: usize,
    },
    /// A coordinate is NaN.
    #[error("vector {vector}, coordinate {coordinate} is NaN")]
    NotANumber {
        /// Index of the vector in the batch.
        vector: usize,
        /// Index of the coordinate, `0..dim`.
        coordinate: usize,
    },
    /// A coordinate is +inf or -inf.
    #[error("vector {vector}, coordinate {coordinate} is infinite ({value})")]
    Infinite {
        /// Index of the vector in the batch.
        vector: usize,
        /// Index of the coordinate, `0..dim`.
        coordinate: usize,
        /// The infinite value.
        value: f32,
    },
    /// The codes are not a whole number of vectors' codes.
    #[error("{len} code bytes are not a whole number of {code_size}-byte codes")]
    CodesLength {
        /// The number of bytes given.
        len: usize,
        /// Bytes per vector.
        code_size: usize,
    },
    /// There is not one scale per vector (or, in unit mode, there are scales).
    #[error("{scales} scales for {vectors} vectors: expected {expected}")]
    ScaleCount {
        /// The number of scales given.
        scales: usize,
        /// The number of vectors the codes hold.
        vectors: usize,
        /// The number expected: `vectors`, or 0 in unit mode.
        expected: usize,
    },
    /// A query coordinate given to [`search`](super::LatticeQuantizer::search)
    /// is NaN.
    #[error("query {query}, coordinate {coordinate} is NaN")]
    QueryNotANumber {
        /// Index of the query in the batch.
        query: usize,
        /// Index of the coordinate, `0..dim`.
        coordinate: usize,
    },
    /// A query coordinate given to [`search`](super::LatticeQuantizer::search)
    /// is +inf or -inf.
    #[error("query {query}, coordinate {coordinate} is infinite ({value})")]
    QueryInfinite {
        /// Index of the query in the batch.
        query: usize,
        /// Index of the coordinate, `0..dim`.
        coordinate: usize,
        /// The infinite value.
        value: f32,
    },
    /// [`search`](super::LatticeQuantizer::search) was asked for `k = 0`
    /// neighbours.
    #[error("k must be at least 1 (the number of neighbours per query)")]
    ZeroK,
    /// A 4-bit block code names no point: its shape index (bits 0–27) is
    /// not below [`shell::SHAPES`](super::shell::SHAPES).
    #[error("vector {vector}, block {block}: the code names no point of the E8 shell")]
    InvalidCode {
        /// Index of the vector.
        vector: usize,
        /// Index of the 8-dim block in the vector.
        block: usize,
    },
    /// A scale is negative, NaN or infinite.
    #[error("vector {vector}: scale {value} is not a finite non-negative number")]
    InvalidScale {
        /// Index of the vector.
        vector: usize,
        /// The scale that was given.
        value: f32,
    },
}
