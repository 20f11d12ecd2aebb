//! The hand-written messages are byte-identical to fory's own, both ways,
//! in every mode the decoders accept (the tests that need the fory crate,
//! under `fory`); and the decoders' errors are exact.

#[cfg(feature = "fory")]
use ::fory::Fory;
use hydron_core::{E8Root, Gf8, Gf8Error};

use super::*;

/// Deterministic unit vectors (a cheap LCG, no dependency).
fn vectors(n: usize, seed: u32) -> Vec<Gf8> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            let c = [(); 8].map(|()| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / (1 << 23) as f32 - 1.0
            });
            Gf8::normalize(c).unwrap()
        })
        .collect()
}

#[cfg(feature = "fory")]
fn fory_with(compatible: bool, xlang: bool) -> Fory {
    let mut fory = Fory::builder().compatible(compatible).xlang(xlang).build();
    register(&mut fory).unwrap();
    fory
}

#[cfg(feature = "fory")]
const MODES: [(bool, bool); 4] = [(true, true), (false, true), (true, false), (false, false)];

#[test]
#[cfg(feature = "fory")]
fn batch_bytes_equal_fory_serialize_and_both_read_each_other() {
    let fory = Fory::default();
    let mut fory = fory;
    register(&mut fory).unwrap();
    for n in [0, 1, 3, 4, 511, 512, 513, 5000] {
        let v = vectors(n, n as u32);
        let ours = encode_batch(&v);
        let theirs = fory.serialize(&Gf8Batch(v.clone())).unwrap();
        assert_eq!(ours, theirs, "n = {n}");
        assert_eq!(
            fory.deserialize::<Gf8Batch>(&ours).unwrap(),
            Gf8Batch(v.clone())
        );
        assert_eq!(decode_batch(&theirs, Policy::Strict).unwrap(), v);
    }
}

/// A `Fory` that knows hydron's types only as plain derived structs (the
/// twins in `structs::schema`), the way another program would declare them.
#[cfg(feature = "fory")]
fn derived_fory(compatible: bool, xlang: bool) -> Fory {
    let mut fory = Fory::builder().compatible(compatible).xlang(xlang).build();
    fory.register::<super::structs::schema::Gf8Batch>(GF8_BATCH_TYPE_ID)
        .unwrap();
    fory.register::<super::structs::schema::E8Codes>(E8_CODES_TYPE_ID)
        .unwrap();
    fory
}

#[test]
#[cfg(feature = "fory")]
fn hand_written_types_equal_fory_derive_byte_for_byte_both_ways() {
    use super::structs::schema;
    for (compatible, xlang) in MODES {
        let what = format!("compatible {compatible}, xlang {xlang}");
        let derived = derived_fory(compatible, xlang);
        let ours = fory_with(compatible, xlang);
        for n in [0, 1, 5, 600] {
            let v = vectors(n, 3);
            let floats = Gf8::slice_as_arrays(&v).as_flattened().to_vec();
            let theirs = derived
                .serialize(&schema::Gf8Batch {
                    values: floats.clone(),
                })
                .unwrap();
            assert_eq!(
                ours.serialize(&Gf8Batch(v.clone())).unwrap(),
                theirs,
                "{what}"
            );
            assert_eq!(
                ours.deserialize::<Gf8Batch>(&theirs).unwrap().0,
                v,
                "{what}"
            );
            let back: schema::Gf8Batch = derived
                .deserialize(&ours.serialize(&Gf8Batch(v.clone())).unwrap())
                .unwrap();
            assert_eq!(back.values, floats, "{what}");
            assert_eq!(decode_batch(&theirs, Policy::Strict).unwrap(), v, "{what}");
            if compatible && xlang {
                assert_eq!(encode_batch(&v), theirs);
            }

            let roots: Vec<E8Root> = (0..n)
                .map(|i| E8Root::new((i * 7 % 240) as u8).unwrap())
                .collect();
            let codes: Vec<u8> = roots.iter().map(|r| r.code()).collect();
            let theirs = derived
                .serialize(&schema::E8Codes {
                    codes: codes.clone(),
                })
                .unwrap();
            assert_eq!(
                ours.serialize(&E8Codes(roots.clone())).unwrap(),
                theirs,
                "{what}"
            );
            assert_eq!(
                ours.deserialize::<E8Codes>(&theirs).unwrap().0,
                roots,
                "{what}"
            );
            let back: schema::E8Codes = derived
                .deserialize(&ours.serialize(&E8Codes(roots.clone())).unwrap())
                .unwrap();
            assert_eq!(back.codes, codes, "{what}");
            assert_eq!(decode_codes(&theirs).unwrap(), roots, "{what}");
            if compatible && xlang {
                assert_eq!(encode_codes(&roots), theirs);
            }
        }
    }
}

#[test]
#[cfg(feature = "fory")]
fn decoders_accept_every_fory_mode() {
    let v = vectors(9, 1);
    let roots: Vec<E8Root> = v.iter().map(|g| g.nearest_root()).collect();
    for (compatible, xlang) in MODES {
        let fory = fory_with(compatible, xlang);
        let what = format!("compatible {compatible}, xlang {xlang}");
        let bytes = fory.serialize(&Gf8Batch(v.clone())).unwrap();
        assert_eq!(decode_batch(&bytes, Policy::Strict).unwrap(), v, "{what}");
        let bytes = fory.serialize(&v[3]).unwrap();
        assert_eq!(decode_gf8(&bytes, Policy::Strict).unwrap(), v[3], "{what}");
        let bytes = fory.serialize(&E8Codes(roots.clone())).unwrap();
        assert_eq!(decode_codes(&bytes).unwrap(), roots, "{what}");
    }
}

#[test]
#[cfg(feature = "fory")]
fn single_and_codes_bytes_equal_fory_serialize() {
    let fory = xlang_fory().unwrap();
    for v in vectors(20, 7).into_iter().chain([Gf8::ZERO]) {
        let ours = encode_gf8(v);
        assert_eq!(ours, fory.serialize(&v).unwrap());
        assert_eq!(fory.deserialize::<Gf8>(&ours).unwrap(), v);
    }
    for n in [0, 1, 127, 128, 240, 20_000] {
        let roots: Vec<E8Root> = (0..n)
            .map(|i| E8Root::new((i % 240) as u8).unwrap())
            .collect();
        let ours = encode_codes(&roots);
        assert_eq!(
            ours,
            fory.serialize(&E8Codes(roots.clone())).unwrap(),
            "n = {n}"
        );
        assert_eq!(fory.deserialize::<E8Codes>(&ours).unwrap().0, roots);
    }
}

#[test]
fn a_tracked_root_flag_reads_as_a_present_root() {
    // pyfory with ref=True writes 0x00 (REF_VALUE) where hydron writes
    // 0xff, the rest byte for byte the same; a tracking fory reads it too.
    let v = vectors(5, 3);
    let roots: Vec<E8Root> = (0..7).map(|i| E8Root::new(i * 30).unwrap()).collect();
    let mut batch = encode_batch(&v);
    let mut single = encode_gf8(v[1]);
    let mut codes = encode_codes(&roots);
    for bytes in [&mut batch, &mut single, &mut codes] {
        bytes[1] = 0x00;
    }
    assert_eq!(decode_batch(&batch, Policy::Strict).unwrap(), v);
    assert_eq!(decode_gf8(&single, Policy::Strict).unwrap(), v[1]);
    assert_eq!(decode_codes(&codes).unwrap(), roots);
    #[cfg(feature = "fory")]
    {
        let mut tracking = Fory::builder().xlang(true).track_ref(true).build();
        register(&mut tracking).unwrap();
        assert_eq!(tracking.deserialize::<Gf8Batch>(&batch).unwrap().0, v);
    }
    // A back-reference (0xfe) or null (0xfd) root is still refused.
    for flag in [0xfe, 0xfd, 0x01] {
        batch[1] = flag;
        assert!(
            matches!(
                decode_batch(&batch, Policy::Strict),
                Err(CodecError::WrongHeader { offset: 1, found, .. }) if found == flag
            ),
            "{flag:#x}"
        );
    }
}

/// A batch message whose vector `index` has coordinates `coords`.
fn with_vector(v: &[Gf8], index: usize, coords: [f32; 8]) -> Vec<u8> {
    let mut bytes = encode_batch(v);
    let start = bytes.len() - 32 * (v.len() - index);
    for (k, x) in coords.iter().enumerate() {
        bytes[start + 4 * k..start + 4 * k + 4].copy_from_slice(&x.to_le_bytes());
    }
    bytes
}

#[test]
fn policies_apply_to_the_right_vector_across_chunks() {
    let v = vectors(1500, 5);
    for index in [0, 511, 512, 1499] {
        let bytes = with_vector(&v, index, [0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let err = decode_batch(&bytes, Policy::Strict).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("vector {index}: norm is 3, expected 1 (within 0.00001) or exactly 0")
        );
        let fixed = decode_batch(&bytes, Policy::Renormalize).unwrap();
        assert_eq!(fixed[index][2], 1.0);
        assert_eq!(fixed[..index], v[..index]);
        assert_eq!(fixed[index + 1..], v[index + 1..]);
        let trusted = decode_batch(&bytes, Policy::Trusted).unwrap();
        assert_eq!(trusted[index][2], 3.0);

        let bytes = with_vector(
            &v,
            index,
            [0.0, 0.0, 0.0, 0.0, 0.0, f32::NEG_INFINITY, 0.0, 0.0],
        );
        for policy in [Policy::Strict, Policy::Renormalize] {
            let err = decode_batch(&bytes, policy).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("vector {index}: coordinate 5 is infinite (-inf)")
            );
        }
    }
}

#[test]
fn single_message_errors() {
    let v = vectors(1, 9)[0];
    let good = encode_gf8_array(v);
    let mut bad = good;
    bad[5 + 4 * 6..5 + 4 * 7].copy_from_slice(&f32::NAN.to_le_bytes());
    let err = decode_gf8(&bad, Policy::Renormalize).unwrap_err();
    assert_eq!(err.to_string(), "vector 0: coordinate 6 is NaN");
    let mut long = good.to_vec();
    long.extend_from_slice(&[0, 0]);
    let err = decode_gf8(&long, Policy::Strict).unwrap_err();
    assert!(matches!(
        err,
        CodecError::TrailingBytes {
            offset: 37,
            count: 2
        }
    ));
    let err = decode_gf8(&good[..20], Policy::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input ends early: the 8 coordinates at byte offset 5 needs 32 bytes, only 15 remain"
    );
    // A batch message is not a single-vector message.
    let err = decode_gf8(&encode_batch(&[v]), Policy::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        "byte offset 2: found 0x1c, expected fory type id 0x1f (EXT, a registered serializer)"
    );
    // Another registered EXT type.
    let mut other = good;
    other[3..5].copy_from_slice(&[0xe5, 0x12]);
    let err = decode_gf8(&other, Policy::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        "byte offset 3: fory user type id 2405, expected 2400 (Gf8)"
    );
    let mut flag = good;
    flag[1] = 0xfd;
    let err = decode_gf8(&flag, Policy::Strict).unwrap_err();
    assert!(matches!(
        err,
        CodecError::WrongHeader {
            offset: 1,
            found: 0xfd,
            ..
        }
    ));
}

#[test]
fn batch_framing_errors_name_the_byte() {
    let v = vectors(2, 2);
    let good = encode_batch(&v);
    // The codes message has another type id (byte 13 of the meta body).
    let err = decode_batch(&encode_codes(&[]), Policy::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        "byte offset 13: fory user type id 2402, expected 2401 (Gf8Batch)"
    );
    #[cfg(feature = "fory")]
    {
        let mut schema = fory_with(false, true)
            .serialize(&E8Codes::default())
            .unwrap();
        let err = decode_batch(&schema, Policy::Strict).unwrap_err();
        assert!(matches!(
            err,
            CodecError::WrongTypeId {
                offset: 3,
                found: 2402,
                expected: 2401,
                ..
            }
        ));
        schema[3..5].copy_from_slice(&[0xe1, 0x12]); // right id, wrong schema hash
        let err = decode_batch(&schema, Policy::Strict).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::WrongHeader {
                    offset: 5,
                    found: 0xba,
                    ..
                }
            ),
            "{err}"
        );
    }
    // A changed byte of the field name.
    let mut renamed = good.clone();
    renamed[18] ^= 1;
    let err = decode_batch(&renamed, Policy::Strict).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::WrongHeader {
                offset: 18,
                found: 0x0a,
                ..
            }
        ),
        "{err}"
    );
    // Every prefix of the message is an error, none panics.
    for len in 0..good.len() {
        assert!(
            decode_batch(&good[..len], Policy::Strict).is_err(),
            "len {len}"
        );
    }
    let err = decode_batch(&good[..30], Policy::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input ends early: the array at byte offset 22 needs 64 bytes, only 8 remain"
    );
    let err = decode_batch(&good[..10], Policy::Strict).unwrap_err();
    assert!(
        matches!(err, CodecError::UnexpectedEnd { offset: 10, .. }),
        "{err}"
    );
    // Lengths that are not whole vectors.
    let mut odd = good.clone();
    odd[21] = 60;
    let err = decode_batch(&odd, Policy::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        "byte offset 21: length 15 is not a multiple of 8 (floats: 8 coordinates per vector)"
    );
    odd[21] = 63;
    let err = decode_batch(&odd, Policy::Strict).unwrap_err();
    assert!(matches!(
        err,
        CodecError::BadLength {
            offset: 21,
            length: 63,
            unit: 4,
            ..
        }
    ));
}

#[test]
fn fory_length_traps_are_errors_here() {
    // fory reads this 6-byte varint (2^40) as 0 and would return an empty
    // batch, ignoring the rest.
    let mut bytes = encode_batch(&[]);
    bytes.pop();
    bytes.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    let err = decode_batch(&bytes, Policy::Strict).unwrap_err();
    assert!(
        matches!(err, CodecError::BadVarint { offset: 21, .. }),
        "{err}"
    );
    // A claimed 4 GiB array in a short input: rejected, nothing allocated.
    let mut bytes = encode_batch(&[]);
    bytes.pop();
    bytes.extend_from_slice(&[0xe0, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]);
    let err = decode_batch(&bytes, Policy::Strict).unwrap_err();
    assert!(matches!(
        err,
        CodecError::UnexpectedEnd {
            needed: 4_294_967_264,
            available: 3,
            ..
        }
    ));
    // fory ignores bytes after a message; hydron does not.
    let mut bytes = encode_codes(&[]);
    bytes.push(0);
    let err = decode_codes(&bytes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "1 trailing bytes after the end of the message at byte offset 22"
    );
}

#[test]
fn codes_errors() {
    let roots: Vec<E8Root> = (0..=239).map(|c| E8Root::new(c).unwrap()).collect();
    let mut bytes = encode_codes(&roots);
    assert_eq!(decode_codes(&bytes).unwrap(), roots);
    let n = bytes.len();
    bytes[n - 240 + 77] = 240;
    bytes[n - 1] = 255;
    let err = decode_codes(&bytes).unwrap_err();
    assert!(matches!(
        err,
        CodecError::InvalidVector {
            index: 77,
            error: Gf8Error::InvalidRootCode { code: 240 }
        }
    ));
    let err = decode_codes(&encode_batch(&[])).unwrap_err();
    assert!(matches!(
        err,
        CodecError::WrongTypeId {
            found: 2401,
            expected: 2402,
            ..
        }
    ));
}

#[test]
fn decode_batch_into_appends_or_leaves_out_unchanged() {
    let v = vectors(1300, 21);
    let before = vectors(3, 22);
    let mut out = before.clone();
    decode_batch_into(&encode_batch(&v), Policy::Strict, &mut out).unwrap();
    assert_eq!(out[..3], before[..]);
    assert_eq!(out[3..], v[..]);

    // An error deep in the batch: indexes count from the message, and
    // `out` is back to what it was (the vectors already accepted are gone).
    let bytes = with_vector(&v, 1100, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, f32::NAN]);
    let mut out = before.clone();
    let err = decode_batch_into(&bytes, Policy::Strict, &mut out).unwrap_err();
    assert_eq!(err.to_string(), "vector 1100: coordinate 7 is NaN");
    assert_eq!(out, before);
    let err = decode_batch_into(&bytes[..100], Policy::Strict, &mut out).unwrap_err();
    assert!(matches!(err, CodecError::UnexpectedEnd { .. }));
    assert_eq!(out, before);

    let bytes = with_vector(&v, 700, [0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    decode_batch_into(&bytes, Policy::Renormalize, &mut out).unwrap();
    assert_eq!(out.len(), 3 + 1300);
    assert_eq!(out[3 + 700][1], 1.0);
}
