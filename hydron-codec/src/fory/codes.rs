//! The E8 code message: one byte per vector (its nearest [`E8Root`]), as
//! a dense fory uint8 array, the fory form of [`E8Codes`](super::E8Codes),
//! read and written by hand.

use hydron_core::E8Root;

use super::wire::{self, StructForm};
use super::{E8_CODES_TYPE_ID, MAX_CODES_LEN};
use crate::CodecError;

/// The framing of an `E8Codes` message, in both struct modes.
pub(crate) const FORM: StructForm = StructForm {
    name: "E8Codes",
    type_id: E8_CODES_TYPE_ID,
    compatible: &[
        0x01, 0xff, 0x1c, 0x00, // bitmap, not-null, COMPATIBLE_STRUCT, new meta #0
        0x09, 0x90, 0xe0, 0xfa, 0x6b, 0xb7, 0xa5, 0x3b, // meta header: size 9, hash
        0xc1, 0xe2, 0x12, // meta: struct, compatible, 1 field; type id 2402
        0x4c, 0x30, 0x89, 0xc3, 0x24, 0x80, // field: uint8 array, "codes"
    ],
    schema: &[
        0x01, 0xff, 0x1b, // bitmap, not-null, STRUCT
        0xe2, 0x12, // type id 2402
        0xba, 0x8e, 0x03, 0x19, // schema hash
    ],
    schema_text: "the fory type meta or schema hash of E8Codes \
                  (one field, `codes`, a uint8 array)",
};

pub(super) fn try_encode_into(roots: &[E8Root], buf: &mut Vec<u8>) -> Result<(), CodecError> {
    if roots.len() > MAX_CODES_LEN {
        return Err(CodecError::TooLarge {
            length: roots.len() as u64,
            limit: MAX_CODES_LEN as u64,
            what: "a fory uint8 array (32-bit byte length)",
        });
    }
    buf.reserve(FORM.compatible.len() + 5 + roots.len());
    buf.extend_from_slice(FORM.compatible);
    write_payload(roots, buf);
    Ok(())
}

/// Appends the array field: varuint32 length, then one byte per root. The
/// caller has checked the length against [`MAX_CODES_LEN`].
#[inline]
pub(super) fn write_payload(roots: &[E8Root], buf: &mut Vec<u8>) {
    debug_assert!(roots.len() <= MAX_CODES_LEN);
    // Cannot truncate: the caller checked the length against MAX_CODES_LEN.
    wire::write_varuint32(buf, roots.len() as u32);
    buf.extend_from_slice(bytemuck::cast_slice::<E8Root, u8>(roots));
}

pub(super) fn decode(input: &[u8]) -> Result<Vec<E8Root>, CodecError> {
    let offset = FORM.read_prefix(input)?;
    let codes = wire::read_array(input, offset, 1, 1, "codes")?;
    crate::payload::to_roots(codes)
}
