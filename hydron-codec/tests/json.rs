//! Integration tests for `hydron_codec::json`: bit-exact round trips, the
//! exact text form, error messages, and no panics on hostile input.
#![cfg(feature = "json")]

use hydron_codec::json::{self, JsonLinesReader, JsonLinesWriter};
use hydron_codec::{CodecError, Policy};
use hydron_core::Gf8;
use proptest::prelude::*;

fn bits(v: &[Gf8]) -> Vec<[u32; 8]> {
    v.iter().map(|g| g.to_array().map(f32::to_bits)).collect()
}

/// Any finite f32, every bit pattern equally likely (subnormals, -0.0 and
/// extremes included).
fn finite_f32() -> impl Strategy<Value = f32> {
    any::<u32>()
        .prop_map(f32::from_bits)
        .prop_filter("finite", |x| x.is_finite())
}

/// A unit vector from random finite coordinates.
fn unit_vector() -> impl Strategy<Value = Gf8> {
    prop::array::uniform8(-1.0e3f32..1.0e3).prop_filter_map("non-zero", |c| Gf8::normalize(c).ok())
}

/// Eight arbitrary finite coordinates, unchecked (only `Trusted` reads them
/// back): this tests the number text, not the invariant.
fn raw_vector() -> impl Strategy<Value = Gf8> {
    prop::array::uniform8(finite_f32()).prop_map(Gf8::new_unchecked)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn unit_vectors_round_trip_bit_for_bit(batch in prop::collection::vec(unit_vector(), 0..20)) {
        let back = json::from_slice(&json::to_vec(&batch), Policy::Strict).unwrap();
        prop_assert_eq!(bits(&back), bits(&batch));
        let back = json::from_str(&json::to_string(&batch), Policy::Strict).unwrap();
        prop_assert_eq!(bits(&back), bits(&batch));
        for v in &batch {
            let one = json::gf8_from_slice(&json::gf8_to_vec(*v), Policy::Strict).unwrap();
            prop_assert_eq!(bits(&[one]), bits(&[*v]));
        }
    }

    #[test]
    fn raw_bit_patterns_round_trip_bit_for_bit(batch in prop::collection::vec(raw_vector(), 0..20)) {
        let back = json::from_slice(&json::to_vec(&batch), Policy::Trusted).unwrap();
        prop_assert_eq!(bits(&back), bits(&batch));
        let mut w = JsonLinesWriter::new(Vec::new());
        w.write_all(&batch).unwrap();
        let text = w.finish().unwrap();
        let back: Vec<Gf8> = JsonLinesReader::new(&text[..], Policy::Trusted)
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(bits(&back), bits(&batch));
    }

    #[test]
    fn output_is_exactly_what_a_plain_serde_json_derive_writes(batch in prop::collection::vec(raw_vector(), 0..8)) {
        #[derive(serde::Serialize)]
        struct Plain([f32; 8]);
        let plain: Vec<Plain> = batch.iter().map(|v| Plain(v.to_array())).collect();
        prop_assert_eq!(json::to_vec(&batch), serde_json::to_vec(&plain).unwrap());
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = json::from_slice(&bytes, Policy::Strict);
        let _ = json::from_slice(&bytes, Policy::Renormalize);
        let _ = json::gf8_from_slice(&bytes, Policy::Strict);
        for item in JsonLinesReader::new(&bytes[..], Policy::Trusted) {
            let _ = item;
        }
    }

    #[test]
    fn mutated_json_errors_or_gives_valid_vectors(
        batch in prop::collection::vec(unit_vector(), 1..6),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
    ) {
        let mut text = json::to_vec(&batch);
        for (at, byte, kind) in edits {
            let i = at.index(text.len());
            match kind {
                0 => text[i] = byte,
                1 => { text.insert(i, byte); }
                _ => { text.remove(i); }
            }
            if text.is_empty() { break; }
        }
        if let Ok(back) = json::from_slice(&text, Policy::Strict) {
            for v in back {
                prop_assert!(Gf8::check(v.as_array()).is_ok());
            }
        }
        if let Ok(back) = json::from_slice(&text, Policy::Renormalize) {
            for v in back {
                prop_assert!(Gf8::check(v.as_array()).is_ok());
            }
        }
    }
}

#[test]
fn special_values_round_trip_bit_for_bit() {
    let specials = [
        0.0f32,
        -0.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1), // smallest subnormal
        -f32::from_bits(1),
        f32::from_bits(0x007f_ffff), // largest subnormal
        f32::MAX,
        f32::MIN,
        f32::EPSILON,
        1.0 - f32::EPSILON / 2.0,
        16_777_217.0, // 2^24 + 1 rounds to 2^24 in f32
        0.1,
        1.0 / 3.0,
    ];
    for chunk in specials.chunks(8) {
        let mut c = [0.5f32; 8];
        c[..chunk.len()].copy_from_slice(chunk);
        let v = Gf8::new_unchecked(c);
        let back = json::gf8_from_slice(&json::gf8_to_vec(v), Policy::Trusted).unwrap();
        assert_eq!(bits(&[back]), bits(&[v]), "{}", json::gf8_to_string(v));
    }
}

#[test]
fn a_million_evenly_spread_bit_patterns_round_trip() {
    // Every 4293rd bit pattern: a spread over all exponents and signs.
    let mut coords = Vec::new();
    let mut b: u32 = 0;
    while let Some(next) = b.checked_add(4293) {
        let x = f32::from_bits(b);
        if x.is_finite() {
            coords.push(x);
        }
        b = next;
    }
    let batch: Vec<Gf8> = coords
        .chunks_exact(8)
        .map(|c| Gf8::new_unchecked(c.try_into().unwrap()))
        .collect();
    assert!(batch.len() > 100_000);
    let back = json::from_slice(&json::to_vec(&batch), Policy::Trusted).unwrap();
    assert_eq!(bits(&back), bits(&batch));
}

fn err(text: &str) -> String {
    json::from_str(text, Policy::Strict)
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_input_gives_clear_errors_not_silent_infinities() {
    let cases = [
        ("", "EOF while parsing a value"),
        (
            "[[NaN,0,0,0,0,0,0,1]]",
            "vector 0, coordinate 0: expected value (JSON has no NaN",
        ),
        (
            "[[0,0,0,0,0,0,0,Infinity]]",
            "vector 0, coordinate 7: expected value (JSON has no NaN",
        ),
        (
            "[[0,0,0,0,0,0,0,1],[0,0,0,0,0,0,0,1e39]]",
            "vector 1, coordinate 7: number out of range",
        ),
        (
            "[[0,0,0,0,0,0,0,-1e39]]",
            "vector 0, coordinate 7: number out of range",
        ),
        (
            "[[0,0,0,0,0,0,0,\"1\"]]",
            "vector 0, coordinate 7: invalid type: string \"1\", expected a finite number",
        ),
        (
            "[[0,0,0,0,0,0,1]]",
            "vector 0: invalid length 7, expected an array of 8 numbers",
        ),
        (
            "[[0,0,0,0,0,0,0,1,0]]",
            "vector 0: invalid length 9, expected an array of 8 numbers",
        ),
        (
            "[[0,0,0,0,0,0,0,[1]]]",
            "vector 0, coordinate 7: invalid type: sequence, expected a finite number",
        ),
        (
            "[[0,0,0,0,0,0,0,null]]",
            "vector 0, coordinate 7: invalid type: null, expected a finite number",
        ),
        ("[[0,0,0,0,0,0,0,1],]", "vector 1: trailing comma"),
        ("[[0,0,0,0,0,0,0,1]", "EOF while parsing a list"),
        (
            "[0,0,0,0,0,0,0,1]",
            "vector 0: invalid type: integer `0`, expected an array of 8 numbers",
        ),
        (
            "{\"coords\":[0,0,0,0,0,0,0,1]}",
            "invalid type: map, expected an array of vectors",
        ),
    ];
    for (text, want) in cases {
        let got = err(text);
        assert!(
            got.starts_with("JSON error at line 1, column "),
            "{text}: {got}"
        );
        assert!(got.contains(want), "{text}: got {got:?}, want {want:?}");
    }
    let deep = "[".repeat(10_000);
    assert!(err(&deep).contains("vector 0, coordinate 0: invalid type: sequence"));
    let deep_extra = "[[0,0,0,0,0,0,0,1,".to_string() + &"[".repeat(10_000);
    // serde_json skips the extra element without recursing: no stack overflow.
    assert!(err(&deep_extra).contains("vector 0: EOF while parsing a list"));
}

#[test]
fn validation_errors_name_vector_and_coordinate() {
    let e = json::from_str(
        "[[0,0,0,0,0,0,0,1],[0,0,0,0,0,0,0,1],[0,0,0,1e-3,0,0,0,0]]",
        Policy::Strict,
    )
    .unwrap_err();
    assert!(
        matches!(e, CodecError::InvalidVector { index: 2, .. }),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "vector 2: norm is 0.001, expected 1 (within 0.00001) or exactly 0"
    );
    // Renormalize fixes it; Trusted keeps it as it is.
    assert_eq!(
        json::from_str("[[0,0,0,1e-3,0,0,0,0]]", Policy::Renormalize).unwrap()[0][3],
        1.0
    );
    assert_eq!(
        json::from_str("[[0,0,0,1e-3,0,0,0,0]]", Policy::Trusted).unwrap()[0][3],
        1e-3
    );
    let e = json::gf8_from_str("[0,0,0,0,0,0,0,2]", Policy::Strict).unwrap_err();
    assert!(matches!(e, CodecError::InvalidVector { index: 0, .. }));
}

#[test]
fn errors_carry_line_and_column() {
    let text = "[\n  [0,0,0,0,0,0,0,1],\n  [0,0,0,0,0,0,0,x]\n]";
    match json::from_str(text, Policy::Strict).unwrap_err() {
        CodecError::Json {
            line,
            column,
            message,
        } => {
            assert_eq!((line, column), (3, 18));
            assert_eq!(message, "vector 1, coordinate 7: expected value");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn whitespace_and_integers_are_accepted() {
    let v = json::from_str(" [ [ 0 , -0 , 0 , 0 , 0 , 0 , 0 , 1 ] ] \n", Policy::Strict).unwrap();
    assert_eq!(v[0][7], 1.0);
    assert!(json::from_str("[]", Policy::Strict).unwrap().is_empty());
}

#[test]
fn to_writer_reports_io_errors() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "no space",
            ))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let e = json::to_writer(Full, &[Gf8::ZERO]).unwrap_err();
    assert!(
        matches!(&e, CodecError::Io(io) if io.kind() == std::io::ErrorKind::StorageFull),
        "{e}"
    );
    let mut w = JsonLinesWriter::new(Full);
    assert!(matches!(w.write(&Gf8::ZERO), Err(CodecError::Io(_))));
}

#[test]
fn json_lines_reader_names_lines() {
    let text =
        b"[0,0,0,0,0,0,0,1]\n[0,0,0,0,0,0,0,1e39]\n\n[0,0,0,0,NaN,0,0,1]\n[0,0,0,0,0,0,3,0]\n";
    let got: Vec<String> = JsonLinesReader::new(&text[..], Policy::Strict)
        .map(|r| match r {
            Ok(v) => format!("ok {}", v[7]),
            Err(e) => e.to_string(),
        })
        .collect();
    assert_eq!(
        got,
        [
            "ok 1",
            "JSON error at line 2, column 19: coordinate 7: number out of range",
            "JSON error at line 4, column 10: coordinate 4: expected value (JSON has no NaN or infinity; coordinates must be finite numbers)",
            "line 5 (vector 3): norm is 3, expected 1 (within 0.00001) or exactly 0",
        ]
    );
}
