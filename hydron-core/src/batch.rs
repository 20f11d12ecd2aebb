//! Batch kernels over slices of vectors.

use crate::{BatchError, Gf8};

/// Checks every vector of a batch, as [`Gf8::check`].
///
/// ```
/// use hydron_core::batch;
/// assert!(batch::validate(&[[0.0; 8]]).is_ok());
/// ```
pub fn validate(arrays: &[[f32; 8]]) -> Result<(), BatchError> {
    for (index, coords) in arrays.iter().enumerate() {
        Gf8::check(coords).map_err(|error| BatchError { index, error })?;
    }
    Ok(())
}

/// Normalizes every vector (allocating).
///
/// ```
/// use hydron_core::batch;
/// assert_eq!(batch::normalize(&[[2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])?[0][0], 1.0);
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
pub fn normalize(arrays: &[[f32; 8]]) -> Result<Vec<Gf8>, BatchError> {
    arrays
        .iter()
        .enumerate()
        .map(|(index, c)| Gf8::normalize(*c).map_err(|error| BatchError { index, error }))
        .collect()
}
