//! [`approx`] comparisons for [`Gf8`] (feature `approx`): coordinate by
//! coordinate, as `approx` compares `[f32]`.
//!
//! [`E8Point`](crate::E8Point) has none: its coordinates are exact, and
//! `==` is the comparison to use.

use approx::{AbsDiffEq, RelativeEq, UlpsEq};

use crate::Gf8;

/// Every coordinate within `epsilon` (absolute). The default epsilon is
/// `f32::EPSILON`.
///
/// ```
/// use approx::assert_abs_diff_eq;
/// use hydron_core::Gf8;
///
/// let a = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
/// let b = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0001])?;
/// assert_abs_diff_eq!(a, b, epsilon = 1e-5);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
impl AbsDiffEq for Gf8 {
    type Epsilon = f32;

    #[inline]
    fn default_epsilon() -> f32 {
        f32::default_epsilon()
    }

    #[inline]
    fn abs_diff_eq(&self, other: &Gf8, epsilon: f32) -> bool {
        self.as_array()[..].abs_diff_eq(&other.as_array()[..], epsilon)
    }
}

/// Every coordinate within `epsilon` (absolute) or `max_relative` (relative
/// to the larger magnitude).
///
/// ```
/// use approx::{assert_relative_eq, assert_relative_ne};
/// use hydron_core::Gf8;
///
/// let a = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
/// let b = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.00001])?;
/// assert_relative_eq!(a, b, max_relative = 1e-5);
/// assert_relative_ne!(a, -a);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
impl RelativeEq for Gf8 {
    #[inline]
    fn default_max_relative() -> f32 {
        f32::default_max_relative()
    }

    #[inline]
    fn relative_eq(&self, other: &Gf8, epsilon: f32, max_relative: f32) -> bool {
        self.as_array()[..].relative_eq(&other.as_array()[..], epsilon, max_relative)
    }
}

/// Every coordinate within `epsilon` (absolute) or `max_ulps` units in the
/// last place.
///
/// ```
/// use approx::{assert_ulps_eq, assert_ulps_ne};
/// use hydron_core::Gf8;
///
/// let mut x = Gf8::from_scalar(1.0)?.to_array();
/// let a = Gf8::try_new(x)?;
/// x[3] = f32::from_bits(x[3].to_bits() + 2);
/// let b = Gf8::try_new(x)?;
/// assert_ulps_eq!(a, b, epsilon = 0.0, max_ulps = 2);
/// assert_ulps_ne!(a, b, epsilon = 0.0, max_ulps = 1);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
impl UlpsEq for Gf8 {
    #[inline]
    fn default_max_ulps() -> u32 {
        f32::default_max_ulps()
    }

    #[inline]
    fn ulps_eq(&self, other: &Gf8, epsilon: f32, max_ulps: u32) -> bool {
        self.as_array()[..].ulps_eq(&other.as_array()[..], epsilon, max_ulps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(k: usize) -> Gf8 {
        let mut x = [0.0; 8];
        x[k] = 1.0;
        Gf8::try_new(x).unwrap()
    }

    /// `e0` with coordinate 0 moved by `ulps` units in the last place.
    fn nudged(ulps: i32) -> Gf8 {
        let mut x = e(0).to_array();
        x[0] = f32::from_bits(x[0].to_bits().wrapping_add_signed(ulps));
        Gf8::try_new(x).unwrap()
    }

    #[test]
    fn abs_diff_eq_checks_every_coordinate() {
        let a = e(0);
        let b = Gf8::normalize([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1e-3]).unwrap();
        assert!(a.abs_diff_eq(&b, 2e-3));
        assert!(!a.abs_diff_eq(&b, 5e-4));
        assert!(a.abs_diff_eq(&a, 0.0));
        assert!(!e(0).abs_diff_eq(&e(7), 0.5));
        assert!(e(0).abs_diff_eq(&e(7), 1.0));
        assert_eq!(Gf8::default_epsilon(), f32::EPSILON);
        assert!(Gf8::ZERO.abs_diff_eq(&Gf8::try_new([-0.0; 8]).unwrap(), 0.0));
    }

    #[test]
    fn relative_eq_scales_with_magnitude() {
        let a = e(0);
        let b = nudged(-8);
        // 8 ulps of 1.0 (below it) is about 4.8e-7 relative.
        assert!(a.relative_eq(&b, 0.0, 1e-6));
        assert!(!a.relative_eq(&b, 0.0, 1e-7));
        assert!(!a.relative_eq(&-a, 1.0, 0.5));
    }

    #[test]
    fn ulps_eq_counts_units_in_the_last_place() {
        let a = e(0);
        assert!(a.ulps_eq(&nudged(-4), 0.0, 4));
        assert!(!a.ulps_eq(&nudged(-5), 0.0, 4));
        assert!(a.ulps_eq(&nudged(-5), 1e-6, 4));
        assert_eq!(Gf8::default_max_ulps(), 4);
        approx::assert_ulps_eq!(a, nudged(-1));
        approx::assert_ulps_ne!(a, nudged(-100));
    }
}
