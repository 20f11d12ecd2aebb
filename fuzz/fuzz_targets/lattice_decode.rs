//! The decoders of stored lattice codes (`quant::decode`, the fory
//! `LatticeCodes` message, and `quant::parquet_from_bytes`) on arbitrary
//! bytes: no panic, no huge allocation (nothing sized from a claimed
//! count), and whatever decodes keeps its invariants (the count times the
//! code size is the code bytes, one finite non-negative scale per vector
//! or none, every 32-bit code a shell point) and survives re-encoding.
#![no_main]

use hydron_codec::parquet::{Compression, ParquetOptions};
use hydron_codec::quant::{self, LatticeCodes};
use libfuzzer_sys::fuzz_target;

/// Panics unless `c` keeps the invariants its constructor promises.
fn check(c: &LatticeCodes, what: &str) {
    let p = c.params();
    assert!(
        p.dim() >= 1 && (p.bits() == 2 || p.bits() == 4),
        "{what}: {p:?}"
    );
    let codes = c.codes();
    assert_eq!(
        codes.codes.len() as u64,
        c.count() * p.code_size() as u64,
        "{what}"
    );
    let scales = if p.has_scales() { c.count() } else { 0 };
    assert_eq!(codes.scales.len() as u64, scales, "{what}");
    assert!(
        codes.scales.iter().all(|s| s.is_finite() && *s >= 0.0),
        "{what}"
    );
    if p.bits() == 4 {
        for b in codes.codes.chunks_exact(4) {
            let code = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            assert!(
                hydron_core::quant::shell::is_valid(code),
                "{what}: {code:#x}"
            );
        }
    }
    if p.is_gf8() {
        let v = c.decode_gf8().expect("Gf8 codes decode");
        assert_eq!(v.len() as u64, c.count());
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = quant::decode(data) {
        check(&c, "decode");
        let again = quant::decode(&quant::encode(&c).expect("a decoded message re-encodes"))
            .expect("a re-encoded message decodes");
        assert_eq!(again, c);
        // Parquet holds every code up to Arrow's i32::MAX bytes per row.
        let options = ParquetOptions::new()
            .with_row_group_vectors(7)
            .with_compression(Compression::Uncompressed);
        match quant::parquet_to_bytes(&c, options) {
            Ok(parquet) => assert_eq!(
                quant::parquet_from_bytes(parquet).expect("and read back"),
                c
            ),
            Err(e) => assert!(
                c.params().code_size() > i32::MAX as usize,
                "decoded codes do not write as Parquet: {e}"
            ),
        }
    }
    match quant::parquet_from_bytes(data.to_vec()) {
        Ok(c) => {
            check(&c, "parquet_from_bytes");
            let again = quant::decode(&quant::encode(&c).expect("Parquet codes encode"))
                .expect("and decode");
            assert_eq!(again, c);
        }
        // hydron catches a panic inside the parquet crate as this error;
        // libfuzzer-sys's hook aborts first, and this fails it too.
        Err(e) => assert!(
            !e.to_string().contains("the Parquet decoder failed"),
            "the parquet crate panicked: {e}"
        ),
    }
});
