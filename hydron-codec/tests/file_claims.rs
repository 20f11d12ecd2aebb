//! Counts that data claims cost no memory before the data proves them: a
//! text file whose end line lies about its vector count, and a binary
//! stream whose frame claims a payload it does not hold.
//!
//! A counting global allocator measures the bytes live at once. This file
//! holds one test so that nothing else allocates while it measures.
#![cfg(any(feature = "fory-messages", feature = "json"))]

mod common;

use hydron_codec::file::{self, FileOptions, Format};
use hydron_codec::Policy;

use common::alloc::{peak_of, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[cfg(feature = "json")]
fn batch(n: usize) -> Vec<hydron_core::Gf8> {
    (0..n)
        .map(|i| {
            let x = i as f32 * 0.01;
            hydron_core::Gf8::normalize([x.sin(), x.cos(), 1.0, -x, 0.5, 0.25, -0.25, 3.0]).unwrap()
        })
        .collect()
}

#[test]
fn claimed_counts_cost_nothing_before_the_data_proves_them() {
    #[cfg(feature = "json")]
    text_end_line_lies();
    #[cfg(feature = "fory-messages")]
    binary_frame_lies();
}

#[cfg(feature = "json")]
fn text_end_line_lies() {
    let dir = tempfile::tempdir().unwrap();
    {
        // A real file of 20 000 vectors whose end line claims as many as
        // its size allows (one per 18 bytes): about 7 times more.
        let n = 20_000;
        let good = file::to_vec(
            &batch(n),
            Format::JsonLines,
            FileOptions::new().with_chunk_vectors(500),
        )
        .unwrap();
        let body = &good[..good.len() - 1];
        let last = body.iter().rposition(|&b| b == b'\n').unwrap() + 1;
        let claim = good.len() as u64 / 18;
        let mut lying = good[..last].to_vec();
        lying.extend_from_slice(
            format!("{{\"end\":true,\"chunks\":40,\"vectors\":{claim},\"crc32\":\"00000000\"}}\n")
                .as_bytes(),
        );
        let path = dir.path().join("lying.jsonl");
        std::fs::write(&path, &lying).unwrap();
        let reader = file::FileReader::open(&path, Policy::Strict).unwrap();
        assert_eq!(reader.expected_vectors(), Some(claim));
        drop(reader);

        let payload = n * 32;
        let (result, peak) = peak_of(|| file::load(&path, Policy::Strict));
        let err = result.unwrap_err();
        assert!(err.to_string().contains(": corrupt "), "{err}");
        drop(err);
        let claimed = claim as usize * 32;
        eprintln!(
            "JSON Lines: {n} vectors ({payload} B), end line claims {claim} ({claimed} B), load peak {peak} B"
        );
        // The output grew for the vectors read (its last growth keeps the
        // old and the new buffer), plus the 64 KiB read buffer.
        assert!(
            peak <= 3 * payload + (128 << 10),
            "peak {peak} B for {payload} B of vectors"
        );
        assert!(peak < claimed / 2, "peak {peak} B, claimed {claimed} B");

        // The same bytes in memory.
        let (result, peak) = peak_of(|| file::from_slice(&lying, Policy::Strict));
        assert!(result.is_err());
        assert!(peak <= 3 * payload + (64 << 10), "from_slice peak {peak} B");
    }
}

#[cfg(feature = "fory-messages")]
fn binary_frame_lies() {
    use hydron_codec::file::Section;
    use hydron_codec::CodecError;
    {
        // A stream whose one frame claims 2^20 vectors (32 MiB), then ends
        // after 1000 payload bytes.
        let mut bytes = file::to_vec(
            &[],
            Format::Fory,
            FileOptions::new().with_chunk_vectors(FileOptions::MAX_CHUNK_VECTORS),
        )
        .unwrap();
        bytes.truncate(20);
        let count = FileOptions::MAX_CHUNK_VECTORS;
        let mut frame = b"CHNK".to_vec();
        frame.extend_from_slice(&0u64.to_le_bytes());
        frame.extend_from_slice(&count.to_le_bytes());
        frame.extend_from_slice(&(32 * count + 40).to_le_bytes());
        let crc = crc32fast::hash(&frame);
        frame.extend_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(&frame);
        bytes.extend_from_slice(&[0u8; 1000]);
        let stream = std::io::Cursor::new(bytes.clone());
        let (result, peak) = peak_of(move || {
            let mut r = file::FileReader::from_reader(stream, Policy::Strict)?;
            let mut out = Vec::new();
            r.read_chunk(&mut out)
        });
        match result {
            Err(CodecError::Truncated {
                offset,
                section: Section::Chunk(0),
            }) => assert_eq!(offset, bytes.len() as u64),
            other => panic!("{other:?}"),
        }
        eprintln!("fory binary: a frame claiming 32 MiB, 1000 bytes given: peak {peak} B");
        assert!(peak <= 256 << 10, "peak {peak} B");
    }
}
