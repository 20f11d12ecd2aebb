//! The fory decoders (`decode_batch` under every policy, `decode_gf8`,
//! `decode_codes`) on arbitrary bytes: no panic, no huge allocation, and
//! whatever decodes keeps its invariants and survives re-encoding.
#![no_main]

#[path = "common.rs"]
mod common;

use common::{assert_valid, bits, decode_all_policies};
use hydron_codec::{fory, Policy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [strict, renormalized, trusted] =
        decode_all_policies(|p| fory::decode_batch(data, p), "decode_batch");
    if let Ok(v) = &trusted {
        let again = fory::decode_batch(&fory::encode_batch(v), Policy::Trusted)
            .expect("a re-encoded batch decodes");
        assert_eq!(bits(&again), bits(v));
    } else {
        // Trusted checks the least: if it fails, the framing is bad, and
        // every policy must fail too.
        assert!(strict.is_err() && renormalized.is_err());
    }

    for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
        if let Ok(v) = fory::decode_gf8(data, policy) {
            if policy != Policy::Trusted {
                assert_valid(&[v], "decode_gf8");
            }
            let again = fory::decode_gf8(&fory::encode_gf8(v), Policy::Trusted)
                .expect("a re-encoded vector decodes");
            assert_eq!(bits(&[again]), bits(&[v]));
        }
    }

    if let Ok(codes) = fory::decode_codes(data) {
        let again =
            fory::decode_codes(&fory::encode_codes(&codes)).expect("re-encoded codes decode");
        assert_eq!(again, codes);
    }
});
