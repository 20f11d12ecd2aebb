//! The error types of hydron-core.

/// Why a value could not become a [`Gf8`](crate::Gf8) (or another core type).
///
/// Every variant names where the problem is, so that the message can be
/// acted on: `"coordinate 3 is NaN"`, not `"invalid data"`.
///
/// ```
/// use hydron_core::{Gf8, Gf8Error};
///
/// let err = Gf8::try_new([0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0]).unwrap_err();
/// assert_eq!(err, Gf8Error::NotANumber { coordinate: 3 });
/// assert_eq!(err.to_string(), "coordinate 3 is NaN");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Gf8Error {
    /// A coordinate is NaN.
    #[error("coordinate {coordinate} is NaN")]
    NotANumber {
        /// Index of the coordinate, 0..8.
        coordinate: usize,
    },
    /// A coordinate is +inf or -inf.
    #[error("coordinate {coordinate} is infinite ({value})")]
    Infinite {
        /// Index of the coordinate, 0..8.
        coordinate: usize,
        /// The infinite value.
        value: f32,
    },
    /// The vector is finite but neither of unit norm (within
    /// [`NORM_TOLERANCE`](crate::NORM_TOLERANCE)) nor exactly zero.
    #[error("norm is {norm}, expected 1 (within {tolerance}) or exactly 0")]
    NotUnitNorm {
        /// The norm that was found.
        norm: f32,
        /// The tolerance that was allowed.
        tolerance: f32,
    },
    /// A slice did not hold exactly 8 coordinates.
    #[error("expected 8 coordinates, found {found}")]
    WrongLength {
        /// The number of coordinates given.
        found: usize,
    },
    /// A root code was not in `0..240`.
    #[error("E8 root code {code} is out of range (0..240)")]
    InvalidRootCode {
        /// The code that was given.
        code: u8,
    },
    /// A coordinate is too large for the exact integer form of a lattice point.
    #[error("coordinate {coordinate} ({value}) is outside the lattice range ±{limit}")]
    OutOfLatticeRange {
        /// Index of the coordinate, 0..8.
        coordinate: usize,
        /// The value that was given.
        value: f32,
        /// The largest magnitude accepted.
        limit: f32,
    },
    /// A mean of no points was asked for.
    #[error("cannot take the mean of an empty set of points")]
    EmptyInput,
    /// The points have no unique spherical mean (for example, they are
    /// spread evenly around the sphere, so their Euclidean sum is zero).
    #[error("the points have no unique mean: their Euclidean sum is (nearly) zero")]
    NoUniqueMean,
}

/// A [`Gf8Error`] for one vector of a batch, with that vector's index.
///
/// ```
/// use hydron_core::{batch, Gf8Error};
///
/// let raw = [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, f32::INFINITY, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]];
/// let err = batch::normalize(&raw).unwrap_err();
/// assert_eq!(err.index, 1);
/// assert_eq!(err.to_string(), "vector 1: coordinate 1 is infinite (inf)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("vector {index}: {error}")]
pub struct BatchError {
    /// Index of the offending vector in the batch.
    pub index: usize,
    /// What is wrong with it.
    pub error: Gf8Error,
}
