//! Small tests of every `unsafe` block in hydron-codec, sized to run under
//! Miri in seconds (`bash scripts/miri.sh`); they also run in the normal
//! suite:
//!
//! - the batch decoders (`payload.rs`: `Vec::set_len` after the
//!   uninitialized copy, and the `copy_nonoverlapping` of
//!   `Policy::Trusted`), for every policy, from input slices starting at
//!   offsets 0..4 of a buffer, for lengths around the 8-vector block size,
//!   appending into a vector with spare capacity, with bad vectors that
//!   stop `Strict` and that `Renormalize` resumes after;
//! - the codes decoder (`payload.rs`: `Vec::from_raw_parts` from
//!   `Vec<u8>` to `Vec<E8Root>`), at odd offsets, with a bad code;
//! - the single-vector decoder and (under `fory`) the generic fory path
//!   (`deserialize_exact`), which runs fory's own unsafe code too.
//!
//! The parallel `file::load` (`file/parallel.rs`) and the Parquet
//! interleave (`parquet/fast.rs`) are checked by their unit tests (see
//! `scripts/miri.sh`); `docs/fuzzing.md` lists every `unsafe` and its test.
#![cfg(feature = "fory-messages")]

use hydron_codec::fory as hfory;
#[cfg(feature = "fory")]
use hydron_codec::fory::Gf8Batch;
use hydron_codec::{CodecError, Policy};
use hydron_core::{E8Root, Gf8};

/// Lengths around the 8-vector block of the SIMD kernels.
const LENGTHS: [usize; 6] = [0, 1, 2, 7, 8, 9];

fn unit(i: usize) -> Gf8 {
    let mut v = [0.0; 8];
    v[i % 8] = 0.6;
    v[(i + 5) % 8] = if i.is_multiple_of(2) { 0.8 } else { -0.8 };
    Gf8::try_new(v).unwrap()
}

/// `message` after `offset` filler bytes, so that `&buf[offset..]` starts at
/// each alignment.
fn at_offset(offset: usize, message: &[u8]) -> Vec<u8> {
    let mut buf = vec![0x5A; offset];
    buf.extend_from_slice(message);
    buf
}

#[test]
fn batches_decode_from_any_alignment_with_every_policy() {
    for n in LENGTHS {
        let vs: Vec<Gf8> = (0..n).map(unit).collect();
        let message = hfory::encode_batch(&vs);
        for offset in 0..4 {
            let buf = at_offset(offset, &message);
            for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
                assert_eq!(hfory::decode_batch(&buf[offset..], policy).unwrap(), vs);
                // Appending after existing vectors, into spare capacity.
                let mut out = Vec::with_capacity(2 * n + 1);
                out.push(Gf8::ZERO);
                hfory::decode_batch_into(&buf[offset..], policy, &mut out).unwrap();
                assert_eq!(out.len(), n + 1);
                assert_eq!(out[1..], vs[..]);
            }
        }
    }
}

#[test]
fn bad_vectors_leave_the_output_as_it_was() {
    for n in LENGTHS.into_iter().filter(|&n| n > 0) {
        let mut arrays: Vec<[f32; 8]> = (0..n).map(|i| unit(i).to_array()).collect();
        let bad = n / 2;
        arrays[bad] = arrays[bad].map(|x| 3.0 * x); // Renormalize fixes this one
        if n > 2 {
            arrays[n - 1][0] = f32::NAN; // and stops here
        }
        let vs: Vec<Gf8> = arrays.iter().map(|a| Gf8::new_unchecked(*a)).collect();
        let message = hfory::encode_batch(&vs);
        for offset in 0..4 {
            let buf = at_offset(offset, &message);
            let input = &buf[offset..];
            let mut out = vec![Gf8::ZERO; 2];
            out.reserve(n);
            let err = hfory::decode_batch_into(input, Policy::Strict, &mut out).unwrap_err();
            assert!(
                matches!(err, CodecError::InvalidVector { index, .. } if index == bad as u64),
                "{err}"
            );
            assert_eq!(out, [Gf8::ZERO; 2]);
            let renormalized = hfory::decode_batch_into(input, Policy::Renormalize, &mut out);
            if n > 2 {
                assert!(renormalized.is_err());
                assert_eq!(out, [Gf8::ZERO; 2]);
            } else {
                renormalized.unwrap();
                assert_eq!(out.len(), 2 + n);
                out.truncate(2);
            }
            // Trusted copies the bits as they are.
            hfory::decode_batch_into(input, Policy::Trusted, &mut out).unwrap();
            assert_eq!(out.len(), 2 + n);
            assert_eq!(out[2 + bad].to_array(), arrays[bad]);
        }
    }
}

#[test]
fn codes_decode_from_any_alignment() {
    for n in [0, 1, 2, 9, 33] {
        let roots: Vec<E8Root> = (0..n)
            .map(|i| E8Root::new((i * 37 % 240) as u8).unwrap())
            .collect();
        let message = hfory::encode_codes(&roots);
        for offset in 0..4 {
            let buf = at_offset(offset, &message);
            let decoded = hfory::decode_codes(&buf[offset..]).unwrap();
            assert_eq!(decoded, roots);
            drop(decoded); // freed as the `Vec<u8>` it was allocated as
            if n > 0 {
                let mut bad = buf.clone();
                let last = bad.len() - 1;
                bad[last] = 240;
                let err = hfory::decode_codes(&bad[offset..]).unwrap_err();
                assert!(
                    matches!(err, CodecError::InvalidVector { index, .. } if index == n as u64 - 1),
                    "{err}"
                );
            }
        }
    }
}

#[test]
fn single_vectors_decode_from_any_alignment() {
    let v = unit(3);
    let message = hfory::encode_gf8(v);
    for offset in 0..4 {
        let buf = at_offset(offset, &message);
        assert_eq!(
            hfory::decode_gf8(&buf[offset..], Policy::Strict).unwrap(),
            v
        );
        assert!(hfory::decode_gf8(&buf[offset..buf.len() - 1], Policy::Strict).is_err());
    }
}

#[test]
#[cfg(feature = "fory")]
fn the_generic_path_from_any_alignment() {
    let fory = hfory::xlang_fory().unwrap();
    let vs: Vec<Gf8> = (0..3).map(unit).collect();
    let message = hfory::encode_batch(&vs);
    for offset in 0..4 {
        let buf = at_offset(offset, &message);
        let batch = hfory::deserialize_exact::<Gf8Batch>(&fory, &buf[offset..]).unwrap();
        assert_eq!(batch.0, vs);
        let single = hfory::encode_gf8(vs[1]);
        let buf = at_offset(offset, &single);
        assert_eq!(
            hfory::deserialize_exact::<Gf8>(&fory, &buf[offset..]).unwrap(),
            vs[1]
        );
    }
    assert!(hfory::deserialize_exact::<Gf8Batch>(&fory, &[0x01, 0xfd]).is_err());
}

/// Encoding into uninitialized memory (`uninit::Cursor`, whose `written`
/// asserts that every byte it returns was written): a fory batch and a
/// binary container of 0 to 5 vectors, in chunks of 2, into buffers of
/// exactly the length and longer; the bytes equal the ordinary encoders'.
#[test]
fn encoders_write_every_byte_of_uninitialized_buffers() {
    use core::mem::MaybeUninit;
    use hydron_codec::file::{self, FileOptions, Format};
    for n in 0..=5 {
        let vectors: Vec<Gf8> = (0..n).map(unit).collect();
        let want = hfory::encode_batch(&vectors);
        let mut out = vec![MaybeUninit::<u8>::uninit(); hfory::batch_len(n).unwrap() + 3];
        let got = hfory::encode_batch_uninit(&vectors, &mut out).unwrap();
        assert_eq!(got, &want[..]);

        let options = FileOptions::new().with_chunk_vectors(2);
        let want = file::to_vec(&vectors, Format::Fory, options).unwrap();
        let mut out = vec![MaybeUninit::<u8>::uninit(); file::binary_len(n, options).unwrap()];
        let got = file::encode_binary_uninit(&vectors, options, &mut out).unwrap();
        assert_eq!(got, &want[..]);
    }
}
