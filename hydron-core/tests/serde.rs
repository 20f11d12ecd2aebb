//! serde_json round trips keep every bit (feature `serde`).
#![cfg(feature = "serde")]

use hydron_core::{E8Root, Gf8};
use proptest::prelude::*;

fn round_trip(v: Gf8) -> Gf8 {
    let json = serde_json::to_string(&v).unwrap();
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn same_bits(a: Gf8, b: Gf8) -> bool {
    a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits)
}

/// A tiny f32 of any bit pattern below 2^-20 in magnitude (subnormals,
/// negative zero and zero included).
fn tiny() -> impl Strategy<Value = f32> {
    (any::<bool>(), 0u32..0x3580_0000).prop_map(|(negative, bits)| {
        let x = f32::from_bits(bits);
        if negative {
            -x
        } else {
            x
        }
    })
}

proptest! {
    #[test]
    fn unit_vectors_keep_their_bits(x in proptest::array::uniform8(-1.0f32..1.0)) {
        let v = Gf8::normalize(x).unwrap();
        let back = round_trip(v);
        prop_assert!(same_bits(v, back), "{:?} vs {:?}", v, back);
    }

    #[test]
    fn tiny_and_subnormal_coordinates_keep_their_bits(
        big in 0usize..8,
        sign in any::<bool>(),
        rest in proptest::array::uniform8(tiny()),
    ) {
        let mut coords = rest;
        coords[big] = if sign { -1.0 } else { 1.0 };
        let v = Gf8::try_new(coords).unwrap();
        let back = round_trip(v);
        prop_assert!(same_bits(v, back), "{:?} vs {:?}", v, back);
    }
}

#[test]
fn zero_and_negative_zero_keep_their_bits() {
    for coords in [
        [0.0f32; 8],
        [-0.0; 8],
        [0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0],
    ] {
        let v = Gf8::try_new(coords).unwrap();
        assert!(same_bits(v, round_trip(v)), "{coords:?}");
    }
    assert_eq!(
        serde_json::to_string(&Gf8::ZERO).unwrap(),
        "[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]"
    );
}

#[test]
fn every_root_round_trips() {
    for root in E8Root::all() {
        let v = root.to_gf8();
        assert!(same_bits(v, round_trip(v)), "root {}", root.code());
        let json = serde_json::to_string(&root).unwrap();
        assert_eq!(serde_json::from_str::<E8Root>(&json).unwrap(), root);
    }
    // A vector of roots, as a JSON array of codes.
    let roots: Vec<E8Root> = E8Root::all().step_by(37).collect();
    let json = serde_json::to_string(&roots).unwrap();
    assert_eq!(json, "[0,37,74,111,148,185,222]");
    assert_eq!(serde_json::from_str::<Vec<E8Root>>(&json).unwrap(), roots);
}

#[test]
fn errors_point_into_the_document() {
    let json = "[[1,0,0,0,0,0,0,0],\n [0,0,0,0,0,0,0,2]]";
    let err = serde_json::from_str::<Vec<Gf8>>(json).unwrap_err();
    assert_eq!(err.line(), 2);
    assert!(err.to_string().starts_with("norm is 2,"), "{err}");
}
