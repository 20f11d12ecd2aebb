//! The binary file reader with chunks large enough to be checksummed and
//! decoded at once (feature `parallel`): the same vectors and the same
//! errors as one thread, and a checksum mismatch still wins over an invalid
//! vector that the corruption made.
#![cfg(all(feature = "fory", feature = "parallel"))]

use hydron_codec::file::{self, FileOptions, Format, Section};
use hydron_codec::{CodecError, Policy};
use hydron_core::{Gf8, Gf8Error};

/// Chunks of this many vectors take the parallel path (16,384 or more).
const CHUNK: u32 = 20_000;
const N: usize = 3 * CHUNK as usize + 777;

fn vectors() -> Vec<Gf8> {
    (0..N)
        .map(|i| {
            let x = i as f32 * 0.37;
            Gf8::normalize([x.sin(), x.cos(), 1.0, -x, 0.5, x * x, -0.25, 3.0]).unwrap()
        })
        .collect()
}

fn encoded(vs: &[Gf8]) -> Vec<u8> {
    let options = FileOptions::new().chunk_vectors(CHUNK).durable(false);
    file::to_vec(vs, Format::Fory, options).unwrap()
}

fn inner(e: CodecError) -> CodecError {
    match e {
        CodecError::InFile { error, .. } => inner(*error),
        other => other,
    }
}

/// Decodes in rayon's global pool and in a pool of one thread; both must
/// agree, and that is the result.
fn decode_both_ways(bytes: &[u8]) -> Result<Vec<Gf8>, CodecError> {
    let all = file::from_slice(bytes, Policy::Strict);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| file::from_slice(bytes, Policy::Strict));
    assert_eq!(
        format!("{all:?}"),
        format!("{one:?}"),
        "all threads vs one thread"
    );
    all
}

/// The byte offset of vector `index`'s coordinates in the file.
fn offset_of(bytes: &[u8], v: Gf8) -> usize {
    let pattern: Vec<u8> = v.to_array().iter().flat_map(|x| x.to_le_bytes()).collect();
    bytes
        .windows(32)
        .position(|w| w == pattern.as_slice())
        .expect("the vector's bytes are in the file")
}

/// CRC-32 (IEEE), bit by bit: enough to re-seal a chunk in a test.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Recomputes the CRC of every chunk (header 20 bytes; each chunk is a
/// 24-byte frame, its payload, and the CRC of both).
fn reseal(bytes: &mut [u8], chunks: usize) {
    let mut at = 20;
    for _ in 0..chunks {
        let payload_len = u32::from_le_bytes(bytes[at + 16..at + 20].try_into().unwrap()) as usize;
        let end = at + 24 + payload_len;
        let crc = crc32(&bytes[at..end]);
        bytes[end..end + 4].copy_from_slice(&crc.to_le_bytes());
        at = end + 4;
    }
}

#[test]
fn large_chunks_decode_to_the_same_vectors() {
    let vs = vectors();
    let bytes = encoded(&vs);
    let back = decode_both_ways(&bytes).unwrap();
    let bits =
        |v: &[Gf8]| -> Vec<[u32; 8]> { v.iter().map(|g| g.to_array().map(f32::to_bits)).collect() };
    assert_eq!(bits(&back), bits(&vs));
}

#[test]
fn a_checksum_mismatch_wins_over_the_invalid_vector_it_made() {
    let vs = vectors();
    let mut bytes = encoded(&vs);
    let bad = CHUNK as usize + 5; // in chunk 1
    let at = offset_of(&bytes, vs[bad]);
    bytes[at + 12..at + 16].copy_from_slice(&f32::NAN.to_le_bytes());
    match inner(decode_both_ways(&bytes).unwrap_err()) {
        CodecError::Corrupt {
            section: Section::Chunk(1),
            detail,
            ..
        } => assert!(detail.contains("checksum mismatch"), "{detail}"),
        other => panic!("expected a checksum mismatch in chunk 1, got {other:?}"),
    }

    // Sealed again, the same bytes are an invalid vector, named by its
    // index in the file.
    reseal(&mut bytes, 4);
    match inner(decode_both_ways(&bytes).unwrap_err()) {
        CodecError::InvalidVector { index, error } => {
            assert_eq!(index, bad as u64);
            assert_eq!(error, Gf8Error::NotANumber { coordinate: 3 });
        }
        other => panic!("expected an invalid vector, got {other:?}"),
    }
}
