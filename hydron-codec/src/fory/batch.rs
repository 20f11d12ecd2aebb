//! The batch message: many [`Gf8`] as one dense fory float32 array, the
//! fory form of [`Gf8Batch`](super::Gf8Batch), read and written by hand.

use hydron_core::Gf8;

use super::wire::{self, StructForm};
use super::{GF8_BATCH_TYPE_ID, MAX_BATCH_LEN};
use crate::payload::{decode_payload, decode_payload_into};
use crate::uninit::Cursor;
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

/// Bytes of the message for `n` vectors, at most.
#[inline]
fn message_len(n: usize) -> usize {
    FORM.compatible.len() + 5 + 32 * n
}

/// The most bytes of framing before a message's coordinates: the struct
/// prefix and a 5-byte varuint32.
pub(crate) const HEAD_MAX: usize = FORM.compatible.len() + 5;

/// The framing of the message of `n` vectors (`n` checked by
/// [`check_len`]): the struct prefix, then the array's byte length as a
/// varuint32; the first `.1` bytes of `.0`. The coordinates follow it to
/// the end of the message.
#[inline]
pub(crate) fn head(n: usize) -> ([u8; HEAD_MAX], usize) {
    debug_assert!(n <= MAX_BATCH_LEN);
    let mut h = [0u8; HEAD_MAX];
    let mut len = FORM.compatible.len();
    h[..len].copy_from_slice(FORM.compatible);
    // Cannot truncate: the caller checked the length against MAX_BATCH_LEN.
    let mut value = (32 * n) as u32;
    while value >= 0x80 {
        h[len] = (value as u8) | 0x80;
        value >>= 7;
        len += 1;
    }
    h[len] = value as u8;
    (h, len + 1)
}

/// The exact bytes of the message of `n` vectors (`n` checked by
/// [`check_len`]).
#[inline]
pub(crate) fn exact_len(n: usize) -> usize {
    head(n).1 + 32 * n
}

/// The coordinates of `vectors` as the message stores them (little-endian
/// `f32`): the vectors' own memory on a little-endian target, else a
/// copy in `scratch`.
#[inline]
pub(crate) fn le_bytes<'a>(vectors: &'a [Gf8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    let arrays = Gf8::slice_as_arrays(vectors);
    #[cfg(target_endian = "little")]
    {
        let _ = scratch;
        bytemuck::cast_slice::<[f32; 8], u8>(arrays)
    }
    #[cfg(not(target_endian = "little"))]
    {
        scratch.clear();
        for x in arrays.as_flattened() {
            scratch.extend_from_slice(&x.to_le_bytes());
        }
        scratch
    }
}

/// Writes the message of `vectors` at `out`'s position, copying the
/// coordinates a block at a time; `n` checked by [`check_len`].
pub(crate) fn write_uninit(vectors: &[Gf8], out: &mut Cursor<'_>) {
    let (head, len) = head(vectors.len());
    out.put(&head[..len]);
    let mut scratch = Vec::new();
    out.put(le_bytes(vectors, &mut scratch));
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
pub(crate) fn check_len(n: usize) -> Result<(), CodecError> {
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

/// The byte length its length field gives the float array, if `head` is
/// exactly the framing of a batch message and that field (so that the
/// coordinates follow, to the end of the message); `None` otherwise.
pub(crate) fn array_len_after(head: &[u8]) -> Option<u64> {
    let offset = FORM.read_prefix(head).ok()?;
    let (length, end) = wire::read_varuint32(head, offset, "the array length").ok()?;
    (end == head.len()).then_some(u64::from(length))
}

/// What a float count must be a multiple of, for [`CodecError::BadLength`].
pub(super) const FLOATS_WHAT: &str = "floats: 8 coordinates per vector";
