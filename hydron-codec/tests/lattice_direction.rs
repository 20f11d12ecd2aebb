//! Stored codes of a quantizer in direction mode (`ScaleMode::Direction`,
//! byte 2, `direction` in Parquet) at any dimension and rotation: fory
//! message and Parquet round trips back to the same quantizer, and the
//! codes of dimension 8 without rotation, which are `Gf8` codes.
#![cfg(feature = "fory-messages")]

use hydron_codec::quant::{self, CodesParams, CodesScale, LatticeCodes};
use hydron_core::quant::{LatticeQuantizer, QuantCodes, ScaleMode};
use hydron_core::Gf8;

/// `n · dim` unit vectors (a fixed, deterministic pattern).
fn unit_rows(n: usize, dim: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(n * dim);
    for v in 0..n {
        let row: Vec<f32> = (0..dim)
            .map(|i| ((v * 31 + i * 17) as f32 * 0.37).sin())
            .collect();
        let norm = row.iter().map(|a| a * a).sum::<f32>().sqrt();
        out.extend(row.iter().map(|a| a / norm));
    }
    out
}

fn direction(dim: usize, bits: u32, seed: u64, rotate: bool) -> LatticeQuantizer {
    LatticeQuantizer::new(dim, bits, seed)
        .unwrap()
        .with_rotation(rotate)
        .with_scale(ScaleMode::Direction)
}

#[test]
fn any_dimension_and_rotation_round_trips_as_a_fory_message() {
    for (dim, bits, rotate) in [(50, 2, true), (56, 4, true), (13, 2, false), (8, 4, true)] {
        let q = direction(dim, bits, 11, rotate);
        let x = unit_rows(40, dim);
        let stored = LatticeCodes::from_quantizer(&q, q.encode(&x).unwrap()).unwrap();
        let p = stored.params();
        assert_eq!(p.scale(), CodesScale::Direction);
        assert_eq!((p.dim() as usize, p.rotation()), (dim, rotate));
        assert!(!p.is_gf8());
        let bytes = quant::encode(&stored).unwrap();
        // Byte 22 of the fixed fields (after the 64-byte prefix) is 2.
        assert_eq!(bytes[64 + 22], 2);
        let back = quant::decode(&bytes).unwrap();
        assert_eq!(back, stored);
        let again = back.params().quantizer().unwrap();
        assert_eq!(again, q);
        assert_eq!(
            again.decode(back.codes()).unwrap(),
            q.decode(stored.codes()).unwrap()
        );
        assert!(back.decode_gf8().is_err());
    }
}

#[cfg(feature = "parquet")]
#[test]
fn any_dimension_and_rotation_round_trips_as_parquet() {
    use hydron_codec::parquet::ParquetOptions;
    for (dim, bits, rotate) in [(50, 2, true), (20, 4, true), (8, 2, true)] {
        let q = direction(dim, bits, 3, rotate);
        let stored =
            LatticeCodes::from_quantizer(&q, q.encode(&unit_rows(25, dim)).unwrap()).unwrap();
        let options = ParquetOptions::new().with_row_group_vectors(7);
        let bytes = quant::parquet_to_bytes(&stored, options).unwrap();
        let back = quant::parquet_from_bytes(bytes).unwrap();
        assert_eq!(back, stored);
        assert_eq!(back.params().quantizer().unwrap(), q);
    }
}

/// A dimension-8 quantizer without rotation in direction mode writes
/// `Gf8` codes: `decode_gf8` reads them, as the quantizer decodes them
/// (bit for bit at 2 bits; at 4 bits the quantizer's codes carry gain
/// bits, which `decode_gf8` ignores, and the values agree to 1e-6).
#[test]
fn dimension_8_without_rotation_is_gf8_codes() {
    for bits in [2u32, 4] {
        let q = direction(8, bits, 0, false);
        let x = unit_rows(300, 8);
        let codes = q.encode(&x).unwrap();
        let stored = LatticeCodes::from_quantizer(&q, codes.clone()).unwrap();
        assert_eq!(stored.params(), &CodesParams::gf8(bits as u8).unwrap());
        let back = quant::decode(&quant::encode(&stored).unwrap()).unwrap();
        let vectors = back.decode_gf8().unwrap();
        let decoded = q.decode(&codes).unwrap();
        let flat = Gf8::slice_as_arrays(&vectors).as_flattened();
        if bits == 2 {
            assert_eq!(flat, &decoded[..]);
        } else {
            for (a, b) in flat.iter().zip(&decoded) {
                assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
            }
            // The quantizer wrote gain bits (some block has a nonzero gain).
            assert!(codes.codes.chunks_exact(4).any(|b| b[3] >> 4 != 0));
        }
    }
    // And Gf8 codes decode with their quantizer.
    let gf8 = LatticeCodes::from_gf8(&hydron_core::E8_ROOTS, 4).unwrap();
    let y = gf8
        .params()
        .quantizer()
        .unwrap()
        .decode(gf8.codes())
        .unwrap();
    let v = gf8.decode_gf8().unwrap();
    for (a, b) in Gf8::slice_as_arrays(&v).as_flattened().iter().zip(&y) {
        assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
    }
}

/// Direction codes store no scales: a message or a `LatticeCodes` with
/// some is refused.
#[test]
fn direction_codes_have_no_scales() {
    let p = CodesParams::new(50, 2, 0, true, CodesScale::Direction).unwrap();
    let codes = QuantCodes {
        codes: vec![0; 2 * p.code_size()],
        scales: vec![1.0, 1.0],
    };
    let err = LatticeCodes::new(p, codes).unwrap_err().to_string();
    assert!(err.contains("in direction scale mode: expected 0"), "{err}");
}
