//! [`Policy`]: what decoding does with vectors that break the invariant.

use hydron_core::{BatchError, Gf8, Gf8Error};

use crate::CodecError;

/// What a decoder does with each decoded vector.
///
/// ```
/// use hydron_codec::Policy;
///
/// let raw = vec![[2.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]];
/// assert!(Policy::Strict.apply(raw.clone()).is_err());
/// assert_eq!(Policy::Renormalize.apply(raw.clone())?[0][0], 1.0);
/// assert_eq!(Policy::Trusted.apply(raw)?[0][0], 2.0); // unchecked!
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Policy {
    /// Every vector must be finite and of unit norm (within
    /// [`NORM_TOLERANCE`](hydron_core::NORM_TOLERANCE)) or exactly zero;
    /// anything else is an error naming the vector. The default.
    #[default]
    Strict,
    /// Finite vectors that are not unit are scaled onto the sphere (zero
    /// stays zero); valid vectors are kept bit for bit. NaN and infinities
    /// are still an error.
    Renormalize,
    /// No check at all: the data is taken as it is, like
    /// [`Gf8::new_unchecked`]. Only for bytes this process wrote or already
    /// validated.
    Trusted,
}

impl Policy {
    /// Applies the policy to a decoded batch, in place where it can.
    ///
    /// ```
    /// use hydron_codec::{CodecError, Policy};
    ///
    /// let raw = vec![[0.0f32; 8], [f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]];
    /// let err = Policy::Strict.apply(raw).unwrap_err();
    /// assert_eq!(err.to_string(), "vector 1: coordinate 0 is NaN");
    /// ```
    pub fn apply(self, mut arrays: Vec<[f32; 8]>) -> Result<Vec<Gf8>, CodecError> {
        match self {
            Policy::Strict => Ok(Gf8::vec_from_arrays(arrays)?),
            Policy::Renormalize => {
                renormalize_in_place(&mut arrays)?;
                Ok(Gf8::vec_from_arrays_unchecked(arrays))
            }
            Policy::Trusted => Ok(Gf8::vec_from_arrays_unchecked(arrays)),
        }
    }

    /// Applies the policy to one decoded vector.
    ///
    /// ```
    /// use hydron_codec::Policy;
    /// let v = Policy::Renormalize.apply_one([0.0, 3.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0])?;
    /// assert_eq!(v[1], 0.6);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    pub fn apply_one(self, coords: [f32; 8]) -> Result<Gf8, Gf8Error> {
        match self {
            Policy::Strict => Gf8::try_new(coords),
            Policy::Renormalize => Gf8::try_new(coords).or_else(|_| Gf8::normalize(coords)),
            Policy::Trusted => Ok(Gf8::new_unchecked(coords)),
        }
    }
}

impl Policy {
    /// Applies the policy to vectors in place: checks them (`Strict`),
    /// fixes the finite non-unit ones (`Renormalize`) or nothing
    /// (`Trusted`); afterwards each is a [`Gf8`] valid under the policy.
    /// The error names the first vector the policy refuses.
    #[cfg_attr(
        not(all(
            feature = "parallel",
            feature = "fory-messages",
            target_os = "linux",
            target_endian = "little"
        )),
        allow(dead_code)
    )]
    pub(crate) fn apply_in_place(self, arrays: &mut [[f32; 8]]) -> Result<(), BatchError> {
        match self {
            Policy::Strict => hydron_core::batch::validate(arrays),
            Policy::Renormalize => renormalize_in_place(arrays),
            Policy::Trusted => Ok(()),
        }
    }
}

/// Scales every finite non-unit vector onto the sphere, leaving valid ones
/// untouched; the first non-finite vector is an error.
fn renormalize_in_place(arrays: &mut [[f32; 8]]) -> Result<(), BatchError> {
    // Validate in bulk first: the common case is that nothing needs fixing.
    let mut start = 0;
    while let Err(BatchError { index, .. }) = hydron_core::batch::validate(&arrays[start..]) {
        let index = start + index;
        let fixed = Policy::Renormalize
            .apply_one(arrays[index])
            .map_err(|error| BatchError { index, error })?;
        arrays[index] = fixed.to_array();
        start = index + 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renormalize_fixes_all_bad_vectors_and_keeps_good_ones() {
        let good = [0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let raw = vec![
            good,
            [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            good,
            [0.0, 0.0, 1e-30, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.0; 8],
        ];
        let out = Policy::Renormalize.apply(raw).unwrap();
        assert_eq!(out[0].to_array(), good);
        assert_eq!(out[1][0], 1.0);
        assert_eq!(out[2].to_array(), good);
        assert_eq!(out[3][2], 1.0);
        assert!(out[4].is_zero());
    }

    #[test]
    fn renormalize_still_rejects_non_finite() {
        let raw = vec![
            [0.0; 8],
            [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, f32::INFINITY, 0.0],
        ];
        let err = Policy::Renormalize.apply(raw).unwrap_err();
        assert_eq!(err.to_string(), "vector 2: coordinate 6 is infinite (inf)");
    }
}
