//! The JSON decoders (`json::from_slice`, `json::gf8_from_slice`, and
//! `JsonLinesReader` line by line) on arbitrary bytes: no panic, only
//! finite numbers come out, the policies hold, and whatever decodes
//! survives re-encoding.
#![no_main]

#[path = "common.rs"]
mod common;

use common::{assert_valid, bits, decode_all_policies};
use hydron_codec::json::{self, JsonLinesReader};
use hydron_codec::Policy;
use hydron_core::Gf8;
use libfuzzer_sys::fuzz_target;

fn assert_finite(vectors: &[Gf8], what: &str) {
    for v in vectors {
        assert!(
            v.as_array().iter().all(|x| x.is_finite()),
            "{what}: JSON gave {:?}",
            v.as_array()
        );
    }
}

fuzz_target!(|data: &[u8]| {
    for v in decode_all_policies(|p| json::from_slice(data, p), "from_slice")
        .iter()
        .flatten()
    {
        assert_finite(v, "from_slice");
        let again =
            json::from_slice(&json::to_vec(v), Policy::Trusted).expect("re-encoded JSON decodes");
        assert_eq!(bits(&again), bits(v));
    }
    for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
        if let Ok(v) = json::gf8_from_slice(data, policy) {
            assert_finite(&[v], "gf8_from_slice");
            if policy != Policy::Trusted {
                assert_valid(&[v], "gf8_from_slice");
            }
            let again = json::gf8_from_slice(&json::gf8_to_vec(v), Policy::Trusted)
                .expect("a re-encoded vector decodes");
            assert_eq!(bits(&[again]), bits(&[v]));
        }
        // At most one item per line (and one I/O error): the reader ends.
        let mut items = 0usize;
        let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
        for item in JsonLinesReader::new(data, policy) {
            items += 1;
            assert!(items <= lines, "{items} items from {lines} lines");
            if let Ok(v) = item {
                assert_finite(&[v], "JsonLinesReader");
                if policy != Policy::Trusted {
                    assert_valid(&[v], "JsonLinesReader");
                }
            }
        }
    }
});
