//! hydron's types as fields of a user's own derived fory structs: they
//! register beside the user's types (no type-index clash), round-trip in
//! every fory mode, and are validated when fory reads them.
#![cfg(feature = "fory")]

use fory::{Fory, ForyStruct};
use hydron_codec::fory::{self as hfory, E8Codes, Gf8Batch};
use hydron_core::{E8Root, Gf8};

// The first derived structs of this crate: fory's derive numbers them 0, 1,
// 2, the indexes a derived `Gf8Batch` would have clashed with.
#[derive(ForyStruct, Debug, PartialEq, Default)]
struct Header {
    id: u64,
}

#[derive(ForyStruct, Debug, PartialEq)]
struct Scene {
    header: Header,
    name: String,
    up: Gf8,
    maybe: Option<Gf8>,
    points: Gf8Batch,
    codes: E8Codes,
    list: Vec<Gf8>,
}

#[derive(ForyStruct, Debug, PartialEq, Default)]
struct Plain {
    #[fory(array)]
    values: Vec<f32>,
}

fn scene() -> Scene {
    let v = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]).unwrap();
    let w = Gf8::normalize([0.0, -1.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0]).unwrap();
    Scene {
        header: Header { id: 42 },
        name: "scene".into(),
        up: v,
        maybe: Some(w),
        points: Gf8Batch(vec![v, w, Gf8::ZERO]),
        codes: E8Codes(vec![v.nearest_root(), E8Root::new(239).unwrap()]),
        list: vec![w, v],
    }
}

fn fory(compatible: bool, xlang: bool) -> Fory {
    let mut fory = Fory::builder().compatible(compatible).xlang(xlang).build();
    fory.register::<Header>(1).unwrap();
    fory.register::<Scene>(2).unwrap();
    fory.register::<Plain>(3).unwrap();
    hfory::register(&mut fory).unwrap();
    fory
}

const MODES: [(bool, bool); 4] = [(true, true), (false, true), (true, false), (false, false)];

#[test]
fn user_structs_with_hydron_fields_round_trip_in_every_mode() {
    for (compatible, xlang) in MODES {
        let fory = fory(compatible, xlang);
        let bytes = fory.serialize(&scene()).unwrap();
        let back: Scene = fory.deserialize(&bytes).unwrap();
        assert_eq!(back, scene(), "compatible {compatible}, xlang {xlang}");
    }
    // Registration by name works beside the user's types too.
    let mut fory = Fory::default();
    fory.register::<Header>(1).unwrap();
    fory.register::<Scene>(2).unwrap();
    hfory::register_by_name(&mut fory).unwrap();
    let back: Scene = fory
        .deserialize(&fory.serialize(&scene()).unwrap())
        .unwrap();
    assert_eq!(back, scene());
}

/// Overwrites the first occurrence of `from` in `bytes` with `to`.
fn patch(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern present");
    bytes[at..at + to.len()].copy_from_slice(to);
}

#[test]
fn fory_reads_of_hydron_fields_are_validated() {
    for (compatible, xlang) in MODES {
        let what = format!("compatible {compatible}, xlang {xlang}");
        let fory = fory(compatible, xlang);
        let s = scene();

        // Vector 1 of the batch gets a NaN in coordinate 3.
        let mut bytes = fory.serialize(&s).unwrap();
        let w = s.points.0[1].to_array();
        let mut bad = w;
        bad[3] = f32::NAN;
        patch(
            &mut bytes,
            bytemuck::cast_slice(&[w, Gf8::ZERO.to_array()]),
            bytemuck::cast_slice(&[bad]),
        );
        let err = fory.deserialize::<Scene>(&bytes).unwrap_err().to_string();
        assert!(
            err.contains("vector 1: coordinate 3 is NaN"),
            "{what}: {err}"
        );

        // The `up` vector's norm becomes 2.
        let mut bytes = fory.serialize(&s).unwrap();
        let up = s.up.to_array();
        let doubled = up.map(|x| 2.0 * x);
        patch(
            &mut bytes,
            bytemuck::cast_slice(&up),
            bytemuck::cast_slice(&doubled),
        );
        let err = fory.deserialize::<Scene>(&bytes).unwrap_err().to_string();
        assert!(err.contains("invalid Gf8: norm is 2"), "{what}: {err}");

        // Code 239 becomes 250.
        let mut bytes = fory.serialize(&s).unwrap();
        let codes = [s.codes.0[0].code(), 239];
        patch(&mut bytes, &codes, &[codes[0], 250]);
        let err = fory.deserialize::<Scene>(&bytes).unwrap_err().to_string();
        assert!(err.contains("vector 1: E8 root code 250"), "{what}: {err}");
    }
}

#[test]
fn a_plain_float_array_struct_is_not_a_gf8_batch() {
    // Same field layout as Gf8Batch, different registered id: rejected.
    let fory = fory(true, true);
    let bytes = fory
        .serialize(&Plain {
            values: vec![0.0; 8],
        })
        .unwrap();
    assert!(hfory::decode_batch(&bytes, hydron_codec::Policy::Trusted).is_err());
    assert!(fory.deserialize::<Gf8Batch>(&bytes).is_err());
}
