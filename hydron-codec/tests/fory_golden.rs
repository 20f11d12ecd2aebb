//! The golden messages in `tests/golden/` were written by pyfory 1.7.7:
//! hydron must write the same bytes for the same inputs, and read them
//! (and so must generic fory, under `fory`).
#![cfg(feature = "fory-messages")]

use hydron_codec::fory as hfory;
#[cfg(feature = "fory")]
use hydron_codec::fory::{E8Codes, Gf8Batch};
use hydron_codec::Policy;
use hydron_core::{E8Root, Gf8};

fn golden(name: &str) -> Vec<u8> {
    let path = format!("{}/../tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn batch() -> Vec<Gf8> {
    [
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.5, -0.5, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0],
        [0.0; 8],
    ]
    .into_iter()
    .map(|c| Gf8::try_new(c).unwrap())
    .collect()
}

fn codes() -> Vec<E8Root> {
    [0, 1, 111, 112, 239]
        .map(|c| E8Root::new(c).unwrap())
        .to_vec()
}

#[test]
fn hydron_writes_what_pyfory_writes() {
    assert_eq!(hfory::encode_batch(&batch()), golden("gf8_batch.bin"));
    assert_eq!(hfory::encode_batch(&[]), golden("gf8_batch_empty.bin"));
    assert_eq!(hfory::encode_gf8(batch()[1]), golden("gf8_single.bin"));
    assert_eq!(hfory::encode_codes(&codes()), golden("e8_codes.bin"));
    // And so does generic fory with hydron's registration.
    #[cfg(feature = "fory")]
    {
        let fory = hfory::xlang_fory().unwrap();
        assert_eq!(
            fory.serialize(&Gf8Batch(batch())).unwrap(),
            golden("gf8_batch.bin")
        );
        assert_eq!(
            fory.serialize(&batch()[1]).unwrap(),
            golden("gf8_single.bin")
        );
        assert_eq!(
            fory.serialize(&E8Codes(codes())).unwrap(),
            golden("e8_codes.bin")
        );
    }
}

#[test]
fn hydron_reads_what_pyfory_writes_in_both_struct_modes() {
    for suffix in ["", "_schema"] {
        let bytes = golden(&format!("gf8_batch{suffix}.bin"));
        for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
            assert_eq!(
                hfory::decode_batch(&bytes, policy).unwrap(),
                batch(),
                "{suffix} {policy:?}"
            );
        }
        let empty = golden(&format!("gf8_batch_empty{suffix}.bin"));
        assert!(hfory::decode_batch(&empty, Policy::Strict)
            .unwrap()
            .is_empty());
        let bytes = golden(&format!("e8_codes{suffix}.bin"));
        assert_eq!(hfory::decode_codes(&bytes).unwrap(), codes(), "{suffix}");
    }
    let single = golden("gf8_single.bin");
    assert_eq!(
        hfory::decode_gf8(&single, Policy::Strict).unwrap(),
        batch()[1]
    );
}

#[test]
#[cfg(feature = "fory")]
fn generic_fory_reads_what_pyfory_writes() {
    for (compatible, suffix) in [(true, ""), (false, "_schema")] {
        let mut fory = fory::Fory::builder().compatible(compatible).build();
        hfory::register(&mut fory).unwrap();
        let bytes = golden(&format!("gf8_batch{suffix}.bin"));
        assert_eq!(fory.deserialize::<Gf8Batch>(&bytes).unwrap().0, batch());
        let bytes = golden(&format!("e8_codes{suffix}.bin"));
        assert_eq!(fory.deserialize::<E8Codes>(&bytes).unwrap().0, codes());
        assert_eq!(
            fory.serialize(&Gf8Batch(batch())).unwrap(),
            golden(&format!("gf8_batch{suffix}.bin"))
        );
        let single = golden("gf8_single.bin");
        assert_eq!(fory.deserialize::<Gf8>(&single).unwrap(), batch()[1]);
    }
}

#[test]
fn golden_messages_are_not_each_other() {
    // Each decoder rejects the other messages, so a mix-up cannot pass.
    let single = golden("gf8_single.bin");
    let batch = golden("gf8_batch.bin");
    let codes = golden("e8_codes.bin");
    assert!(hfory::decode_batch(&single, Policy::Trusted).is_err());
    assert!(hfory::decode_batch(&codes, Policy::Trusted).is_err());
    assert!(hfory::decode_codes(&batch).is_err());
    assert!(hfory::decode_codes(&single).is_err());
    assert!(hfory::decode_gf8(&batch, Policy::Trusted).is_err());
    assert!(hfory::decode_gf8(&codes, Policy::Trusted).is_err());
}
