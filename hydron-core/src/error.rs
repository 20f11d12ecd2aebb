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
    #[error("norm is {}, expected 1 (within {tolerance}) or exactly 0", readable(*.norm))]
    NotUnitNorm {
        /// The norm that was found (in `f64`, so that norms beyond `f32::MAX`
        /// or below its smallest normal value are still exact).
        norm: f64,
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
    /// The points have no mean: only zero vectors (or zero weights) were
    /// given, or they cancel out (spread evenly around the sphere, so their
    /// Euclidean sum is nearly zero).
    #[error(
        "the points have no unique mean: they are all zero (or weigh nothing), or they \
         cancel out (their Euclidean sum is nearly zero)"
    )]
    NoUniqueMean,
    /// The spherical mean solver reached its safety cap of steps without
    /// converging (possible only for points spread over more than a
    /// hemisphere).
    #[error(
        "the spherical mean did not converge within {iterations} steps (the points are \
         spread over more than a hemisphere)"
    )]
    MeanDidNotConverge {
        /// The number of steps taken.
        iterations: usize,
    },
    /// A weight of a weighted mean is negative, NaN or infinite.
    #[error("weight {index} is {weight}: weights must be finite and non-negative")]
    InvalidWeight {
        /// Index of the weight (and its point).
        index: usize,
        /// The weight that was given.
        weight: f32,
    },
    /// Doubled lattice coordinates mix integers and half-integers.
    #[error(
        "coordinate {coordinate} is not of the same kind as coordinate 0: an E8 point has \
         all integer or all half-integer coordinates"
    )]
    MixedLatticeCoordinates {
        /// Index of the first coordinate whose kind differs from coordinate 0.
        coordinate: usize,
    },
    /// Lattice coordinates whose sum is odd.
    #[error("the coordinates sum to {sum}, which is odd: an E8 point has an even coordinate sum")]
    OddLatticeSum {
        /// The sum of the coordinates.
        sum: i64,
    },
}

/// Formats a number readably at any magnitude: plain decimals near 1,
/// scientific notation for very large or very small values.
fn readable(x: f64) -> String {
    if x == 0.0 || (1e-4..1e7).contains(&x.abs()) {
        format!("{}", x as f32)
    } else {
        format!("{x:.6e}")
    }
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
