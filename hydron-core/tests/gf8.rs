//! Property tests of the `Gf8` invariant: construction, normalization and
//! arithmetic keep every value unit (or zero) and finite.

use hydron_core::{Gf8, Gf8Error, NORM_TOLERANCE};
use proptest::num::f32 as f32s;
use proptest::prelude::*;

/// Any finite f32: normal, subnormal or zero, of either sign.
fn finite() -> impl Strategy<Value = f32> {
    f32s::POSITIVE | f32s::NEGATIVE | f32s::NORMAL | f32s::SUBNORMAL | f32s::ZERO
}

/// Any f32 at all, NaN and infinities included.
fn any_f32() -> impl Strategy<Value = f32> {
    f32s::ANY
}

fn unit_vector() -> impl Strategy<Value = Gf8> {
    proptest::array::uniform8(-1.0f32..1.0)
        .prop_filter("not too short", |x| {
            x.iter().map(|v| v * v).sum::<f32>() > 1e-4
        })
        .prop_map(|x| Gf8::normalize(x).unwrap())
}

/// The norm in f64, exactly enough to judge the invariant.
fn norm64(v: &[f32; 8]) -> f64 {
    v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt()
}

fn is_unit_or_zero(v: Gf8) -> bool {
    v.is_zero() || (norm64(v.as_array()) - 1.0).abs() < 1e-6
}

proptest! {
    #[test]
    fn normalize_gives_unit_norm_for_any_finite_input(x in proptest::array::uniform8(finite())) {
        let v = Gf8::normalize(x).unwrap();
        if x.iter().all(|&c| c == 0.0) {
            prop_assert!(v.is_zero());
        } else {
            prop_assert!((norm64(v.as_array()) - 1.0).abs() < 1e-6, "{:?} -> {:?}", x, v);
            // The direction is kept: every coordinate keeps its sign (or
            // underflows to zero).
            for k in 0..8 {
                prop_assert!(v[k] == 0.0 || (v[k] > 0.0) == (x[k] > 0.0));
            }
        }
        prop_assert!(Gf8::try_new(v.to_array()).is_ok());
    }

    #[test]
    fn normalize_handles_huge_and_tiny_scales(
        x in proptest::array::uniform8(-1.0f32..1.0),
        exponent in -149i32..128,
    ) {
        prop_assume!(x.iter().any(|&c| c != 0.0));
        let scale = 2f64.powi(exponent);
        let scaled = x.map(|c| (f64::from(c) * scale) as f32);
        prop_assume!(scaled.iter().all(|c| c.is_finite()) && scaled.iter().any(|&c| c != 0.0));
        let v = Gf8::normalize(scaled).unwrap();
        prop_assert!((norm64(v.as_array()) - 1.0).abs() < 1e-6, "{:?} -> {:?}", scaled, v);
    }

    #[test]
    fn normalize_and_try_new_reject_non_finite_input(x in proptest::array::uniform8(any_f32())) {
        let first_bad = x.iter().position(|c| !c.is_finite());
        match first_bad {
            Some(k) => {
                let expected = if x[k].is_nan() {
                    Gf8Error::NotANumber { coordinate: k }
                } else {
                    Gf8Error::Infinite { coordinate: k, value: x[k] }
                };
                prop_assert_eq!(Gf8::normalize(x), Err(expected));
                prop_assert_eq!(Gf8::try_new(x), Err(expected));
            }
            None => prop_assert!(Gf8::normalize(x).is_ok()),
        }
    }

    #[test]
    fn try_new_round_trip_keeps_bits(v in unit_vector()) {
        let bits = v.to_array().map(f32::to_bits);
        let back = Gf8::try_new(v.to_array()).unwrap();
        prop_assert_eq!(back.to_array().map(f32::to_bits), bits);
        let from_slice = Gf8::from_slice(v.as_array()).unwrap();
        prop_assert_eq!(from_slice.to_array().map(f32::to_bits), bits);
    }

    #[test]
    fn try_new_accepts_exactly_the_tolerance_band(x in proptest::array::uniform8(-1.0f32..1.0), stretch in -1e-4f64..1e-4) {
        let v = Gf8::normalize(x).unwrap();
        prop_assume!(!v.is_zero());
        let stretched = v.to_array().map(|c| (f64::from(c) * (1.0 + stretch)) as f32);
        let norm = norm64(&stretched);
        let accepted = Gf8::try_new(stretched).is_ok();
        // Clearly inside the band is accepted, clearly outside rejected
        // (the boundary itself depends on f32 summation).
        let tolerance = f64::from(NORM_TOLERANCE);
        if (norm - 1.0).abs() < 0.9 * tolerance {
            prop_assert!(accepted, "norm {}", norm);
        }
        if (norm - 1.0).abs() > 1.1 * tolerance {
            prop_assert!(!accepted, "norm {}", norm);
        }
    }

    #[test]
    fn add_and_sub_stay_unit_or_zero(a in unit_vector(), b in unit_vector()) {
        prop_assert!(is_unit_or_zero(a + b));
        prop_assert!(is_unit_or_zero(a - b));
        prop_assert!(is_unit_or_zero(a + (-a)));
        prop_assert!((a - a).is_zero());
        prop_assert!(is_unit_or_zero(a + Gf8::ZERO));
        prop_assert!(Gf8::try_new((a + b).to_array()).is_ok());
        prop_assert!(Gf8::try_new((a - b).to_array()).is_ok());
    }
}

#[test]
fn normalize_extremes() {
    for x in [
        [f32::MAX; 8],
        [f32::MIN; 8],
        [f32::from_bits(1); 8],
        [f32::MAX, f32::from_bits(1), 0.0, -0.0, 0.0, 0.0, 0.0, 0.0],
        [-f32::from_bits(1), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
        ],
    ] {
        let v = Gf8::normalize(x).unwrap();
        assert!((norm64(v.as_array()) - 1.0).abs() < 1e-6, "{x:?} -> {v:?}");
    }
}
