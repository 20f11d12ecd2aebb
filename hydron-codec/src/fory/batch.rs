//! The batch message: many [`Gf8`] as one dense fory float32 array, the
//! fory form of [`Gf8Batch`](super::Gf8Batch), read and written by hand.

use core::mem::MaybeUninit;

use hydron_core::{batch, BatchError, Gf8};

use super::wire::{self, StructForm};
use super::{GF8_BATCH_TYPE_ID, MAX_BATCH_LEN};
use crate::{CodecError, Policy};

/// The framing of a `Gf8Batch` message, in both struct modes.
pub(crate) const FORM: StructForm = StructForm {
    name: "Gf8Batch",
    type_id: GF8_BATCH_TYPE_ID,
    compatible: &[
        0x01, 0xff, 0x1c, 0x00, // bitmap, not-null, COMPATIBLE_STRUCT, new meta #0
        0x09, 0x10, 0x59, 0xdb, 0xcf, 0x8d, 0x66, 0x5c, // meta header: size 9, hash
        0xc1, 0xe1, 0x12, // meta: struct, compatible, 1 field; type id 2401
        0x4c, 0x37, 0x54, 0x0b, 0xa1, 0x24, // field: float32 array, "values"
    ],
    schema: &[
        0x01, 0xff, 0x1b, // bitmap, not-null, STRUCT
        0xe1, 0x12, // type id 2401
        0x18, 0x89, 0xec, 0x36, // schema hash
    ],
    schema_text: "the fory type meta or schema hash of Gf8Batch \
                  (one field, `values`, a float32 array)",
};

/// Bytes of the message for `n` vectors.
#[inline]
fn message_len(n: usize) -> usize {
    FORM.compatible.len() + 5 + 32 * n
}

pub(super) fn try_encode_into(vectors: &[Gf8], buf: &mut Vec<u8>) -> Result<(), CodecError> {
    check_len(vectors.len())?;
    buf.reserve(message_len(vectors.len()));
    buf.extend_from_slice(FORM.compatible);
    write_payload(vectors, buf);
    Ok(())
}

/// Checks that `n` vectors fit in one fory float32 array.
#[inline]
pub(super) fn check_len(n: usize) -> Result<(), CodecError> {
    if n > MAX_BATCH_LEN {
        return Err(CodecError::TooLarge {
            length: (n as u64).saturating_mul(32),
            limit: MAX_BATCH_LEN as u64 * 32,
            what: "a fory float32 array (32-bit byte length)",
        });
    }
    Ok(())
}

/// Appends the array field: varuint32 byte length, then the coordinates as
/// little-endian `f32`. The caller has checked [`check_len`].
#[inline]
pub(super) fn write_payload(vectors: &[Gf8], buf: &mut Vec<u8>) {
    debug_assert!(vectors.len() <= MAX_BATCH_LEN);
    // Cannot truncate: the caller checked the length against MAX_BATCH_LEN.
    wire::write_varuint32(buf, (32 * vectors.len()) as u32);
    let arrays = Gf8::slice_as_arrays(vectors);
    #[cfg(target_endian = "little")]
    buf.extend_from_slice(bytemuck::cast_slice::<[f32; 8], u8>(arrays));
    #[cfg(not(target_endian = "little"))]
    for x in arrays.as_flattened() {
        buf.extend_from_slice(&x.to_le_bytes());
    }
}

pub(super) fn decode(input: &[u8], policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    let offset = FORM.read_prefix(input)?;
    let data = wire::read_array(input, offset, 4, 32, FLOATS_WHAT)?;
    decode_payload(data, policy)
}

pub(super) fn decode_into(
    input: &[u8],
    policy: Policy,
    out: &mut Vec<Gf8>,
) -> Result<(), CodecError> {
    let offset = FORM.read_prefix(input)?;
    let data = wire::read_array(input, offset, 4, 32, FLOATS_WHAT)?;
    decode_payload_into(data, policy, out)
}

/// What a float count must be a multiple of, for [`CodecError::BadLength`].
pub(super) const FLOATS_WHAT: &str = "floats: 8 coordinates per vector";

/// The vectors of an array's bytes (a multiple of 32), checked by `policy`.
/// One allocation, of exactly `data.len()` bytes.
pub(super) fn decode_payload(data: &[u8], policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    // The caller holds `data`, so this allocation is backed by input bytes
    // one for one.
    let mut out = Vec::with_capacity(data.len() / 32);
    decode_payload_into(data, policy, &mut out)?;
    Ok(out)
}

/// Appends the vectors of an array's bytes (a multiple of 32) to `out`,
/// checked by `policy`; error indexes count from this array's first vector.
/// On error `out` is left as it was.
///
/// The vectors are written straight into `out`'s spare capacity (never
/// zeroed first), and become part of `out` only once all of them are
/// written and accepted.
pub(super) fn decode_payload_into(
    data: &[u8],
    policy: Policy,
    out: &mut Vec<Gf8>,
) -> Result<(), CodecError> {
    debug_assert!(data.len().is_multiple_of(32));
    let first = out.len();
    let count = data.len() / 32;
    out.reserve(count);
    fill(data, &mut out.spare_capacity_mut()[..count], policy)?;
    // SAFETY: `reserve` made room for `count` vectors after `first`, and
    // `fill` returned `Ok`, so it wrote all `count` slots there, each with a
    // vector valid under `policy` (`Trusted` takes them as they are, as
    // `Gf8::new_unchecked` does).
    unsafe { out.set_len(first + count) };
    Ok(())
}

/// Writes the vectors of `data` (32 bytes per slot) into `slots`, applying
/// `policy`. On `Ok` every slot has been written; on error, the caller
/// must treat the slots as uninitialized.
#[inline]
fn fill(data: &[u8], slots: &mut [MaybeUninit<Gf8>], policy: Policy) -> Result<(), CodecError> {
    let at = |e: BatchError| CodecError::InvalidVector {
        index: e.index as u64,
        error: e.error,
    };
    match policy {
        Policy::Strict => {
            batch::copy_validated_uninit(data, slots).map_err(at)?;
        }
        Policy::Trusted => copy_trusted(data, slots),
        Policy::Renormalize => {
            // Every slot before `from` has been written. A call that fails
            // has written every slot before the bad vector it names (as
            // `copy_validated_uninit` guarantees); that vector's slot is
            // written here, fixed, and the copy resumes after it. A call
            // that succeeds has written the rest.
            let mut from = 0;
            while let Err(BatchError { index, .. }) =
                batch::copy_validated_uninit(&data[32 * from..], &mut slots[from..])
            {
                let index = from + index;
                let coords = data.as_chunks::<32>().0[index];
                let fixed = Policy::Renormalize
                    .apply_one(coords_from_le(&coords))
                    .map_err(|error| at(BatchError { index, error }))?;
                slots[index].write(fixed);
                from = index + 1;
            }
        }
    }
    Ok(())
}

/// The coordinates of one vector from its little-endian bytes.
#[inline]
fn coords_from_le(bytes: &[u8; 32]) -> [f32; 8] {
    let words: [u32; 8] = bytemuck::cast(*bytes);
    words.map(|w| f32::from_bits(u32::from_le(w)))
}

/// Writes the vectors of `data` into `slots` unchecked (`Policy::Trusted`).
#[inline]
fn copy_trusted(data: &[u8], slots: &mut [MaybeUninit<Gf8>]) {
    assert_eq!(data.len(), 32 * slots.len());
    if cfg!(target_endian = "little") {
        // SAFETY: `slots` is `data.len()` bytes long (32 per `Gf8`, checked
        // above), and a `&mut` borrow, so it does not overlap `data`; bytes
        // are copied, so alignment is irrelevant, and every bit pattern of
        // `[f32; 8]` is a (trusted) `Gf8`, which has its layout. So every
        // slot is written.
        unsafe {
            core::ptr::copy_nonoverlapping(
                data.as_ptr(),
                slots.as_mut_ptr().cast::<u8>(),
                data.len(),
            );
        }
    } else {
        for (src, slot) in data.as_chunks::<32>().0.iter().zip(slots) {
            slot.write(Gf8::new_unchecked(coords_from_le(src)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Little-endian bytes of `arrays`, after `offset` filler bytes.
    fn payload(offset: usize, arrays: &[[f32; 8]]) -> Vec<u8> {
        let mut buf = vec![0xEE; offset];
        for x in arrays.as_flattened() {
            buf.extend_from_slice(&x.to_le_bytes());
        }
        buf
    }

    /// Unit vectors with many bad ones among them: scaled, tiny, zero, at
    /// block edges and in runs (so `Renormalize` resumes many times, in
    /// the middle of blocks).
    fn mixed(n: usize) -> Vec<[f32; 8]> {
        (0..n)
            .map(|i| {
                let t = i as f32 * 0.37;
                let v = Gf8::normalize([t.sin(), t.cos(), 0.5, -0.25, t, 1.0, -t.sin(), 0.1])
                    .unwrap()
                    .to_array();
                match i % 11 {
                    0 | 7 | 8 => v.map(|x| x * 2.0),
                    3 => v.map(|x| x * 1e-30),
                    5 => [0.0; 8],
                    _ => v,
                }
            })
            .collect()
    }

    fn bits(vs: &[Gf8]) -> Vec<[u32; 8]> {
        vs.iter().map(|v| v.to_array().map(f32::to_bits)).collect()
    }

    #[test]
    fn every_policy_matches_policy_apply_at_every_alignment() {
        for n in [0, 1, 7, 8, 9, 31, 100, 1029] {
            let mixed = mixed(n);
            let units = Policy::Renormalize.apply(mixed.clone()).unwrap();
            let units = Gf8::slice_as_arrays(&units).to_vec();
            for arrays in [mixed, units] {
                for offset in 0..4 {
                    let bytes = payload(offset, &arrays);
                    for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
                        let got = decode_payload(&bytes[offset..], policy);
                        match (&got, &policy.apply(arrays.clone())) {
                            (Ok(got), Ok(expected)) => {
                                assert_eq!(bits(got), bits(expected), "{policy:?}, {n}");
                            }
                            (Err(got), Err(expected)) => {
                                assert_eq!(got.to_string(), expected.to_string(), "{policy:?}");
                            }
                            (got, expected) => panic!("{policy:?}, {n}: {got:?}, {expected:?}"),
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn strict_names_the_first_bad_vector_and_leaves_out_as_it_was() {
        let mut arrays = mixed(100);
        for a in &mut arrays {
            *a = Gf8::normalize(*a).unwrap().to_array();
        }
        arrays[40][2] = f32::NAN;
        arrays[41] = [3.0; 8];
        let before: Vec<Gf8> = vec![Gf8::ZERO; 5];
        let mut out = before.clone();
        let err = decode_payload_into(&payload(0, &arrays), Policy::Strict, &mut out).unwrap_err();
        assert_eq!(err.to_string(), "vector 40: coordinate 2 is NaN");
        assert_eq!(out, before);
        // Renormalize stops at the NaN too, naming it; Trusted keeps it.
        let err = decode_payload_into(&payload(0, &arrays), Policy::Renormalize, &mut out);
        assert_eq!(
            err.unwrap_err().to_string(),
            "vector 40: coordinate 2 is NaN"
        );
        assert_eq!(out, before);
        decode_payload_into(&payload(0, &arrays), Policy::Trusted, &mut out).unwrap();
        assert_eq!(out.len(), 105);
        assert!(out[45][2].is_nan());
    }

    #[test]
    fn appends_into_reused_capacity() {
        let arrays = mixed(300);
        let mut out: Vec<Gf8> = Vec::with_capacity(1000);
        let expected = Policy::Renormalize.apply(arrays.clone()).unwrap();
        for round in 0..3 {
            out.clear();
            out.push(Gf8::ZERO);
            decode_payload_into(&payload(1, &arrays)[1..], Policy::Renormalize, &mut out).unwrap();
            assert_eq!(out.len(), 301, "round {round}");
            assert_eq!(bits(&out[1..]), bits(&expected), "round {round}");
        }
    }
}
