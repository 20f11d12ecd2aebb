//! The file container reader (both forms, detected from the content) on
//! arbitrary bytes, through `file::from_slice`, which runs the same
//! decoder as `FileReader`: no panic, no allocation beyond what the input
//! backs, and whatever decodes is valid and survives a round trip through
//! both forms.
#![no_main]

#[path = "common.rs"]
mod common;

use common::{bits, decode_all_policies};
use hydron_codec::file::{self, FileOptions, Format};
use hydron_codec::Policy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [strict, _, _] = decode_all_policies(|p| file::from_slice(data, p), "file::from_slice");
    let Ok(v) = &strict else {
        return;
    };
    for format in [Format::Fory, Format::JsonLines] {
        let bytes = file::to_vec(v, format, FileOptions::new().with_chunk_vectors(7))
            .expect("valid vectors encode");
        let again = file::from_slice(&bytes, Policy::Strict).expect("a re-encoded file decodes");
        assert_eq!(bits(&again), bits(v), "{format}");
    }
});
