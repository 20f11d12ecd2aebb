//! The fused decoding pass every binary form shares: little-endian float32
//! bytes (a fory batch's array, an Arrow or Parquet column's values) copied
//! into `Gf8`s and checked by a [`Policy`] in one pass.

use core::mem::MaybeUninit;

use hydron_core::{batch, BatchError, E8Root, Gf8, Gf8Error, E8_ROOT_COUNT};

use crate::{CodecError, Policy};

/// The vectors of an array's bytes (a multiple of 32), checked by `policy`.
/// One allocation, of exactly `data.len()` bytes.
#[cfg_attr(not(feature = "fory-messages"), allow(dead_code))]
pub(crate) fn decode_payload(data: &[u8], policy: Policy) -> Result<Vec<Gf8>, CodecError> {
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
pub(crate) fn decode_payload_into(
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
pub(crate) fn fill(
    data: &[u8],
    slots: &mut [MaybeUninit<Gf8>],
    policy: Policy,
) -> Result<(), CodecError> {
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

/// Checks every code, then converts (allocating exactly `codes.len()`).
pub(crate) fn to_roots(codes: &[u8]) -> Result<Vec<E8Root>, CodecError> {
    // A branch-free scan first: it vectorizes, and the error is rare.
    if codes.iter().fold(0u8, |m, &c| m.max(c)) as usize >= E8_ROOT_COUNT {
        let index = codes
            .iter()
            .position(|&c| c as usize >= E8_ROOT_COUNT)
            .unwrap_or_default();
        return Err(CodecError::InvalidVector {
            index: index as u64,
            error: Gf8Error::InvalidRootCode { code: codes[index] },
        });
    }
    let mut codes = core::mem::ManuallyDrop::new(codes.to_vec());
    let (ptr, len, cap) = (codes.as_mut_ptr(), codes.len(), codes.capacity());
    // SAFETY: `E8Root` is `#[repr(transparent)]` over `u8`, so the
    // allocation and its layout are the same for both element types, and
    // every byte was checked above to be a code below 240, the only values
    // an `E8Root` may hold. The original `Vec` is never dropped, so the
    // allocation has one owner.
    Ok(unsafe { Vec::from_raw_parts(ptr.cast::<E8Root>(), len, cap) })
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
