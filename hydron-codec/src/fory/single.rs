//! The single-vector message: one [`Gf8`] as a root fory EXT value, exactly
//! what `fory.serialize(&gf8)` writes after [`register`](super::register).

use hydron_core::Gf8;

use super::{wire, GF8_MESSAGE_LEN, GF8_TYPE_ID};
use crate::{CodecError, Policy};

/// Bitmap (xlang), not-null flag, EXT type id 31, varuint32 type id 2400.
const PREFIX: [u8; 5] = [0x01, 0xff, 0x1f, 0xe0, 0x12];

#[inline]
pub(super) fn encode_array(v: Gf8) -> [u8; GF8_MESSAGE_LEN] {
    let mut out = [0u8; GF8_MESSAGE_LEN];
    out[..PREFIX.len()].copy_from_slice(&PREFIX);
    // The coordinates' memory is already the little-endian body.
    #[cfg(target_endian = "little")]
    out[PREFIX.len()..].copy_from_slice(bytemuck::bytes_of(v.as_array()));
    #[cfg(not(target_endian = "little"))]
    for (dst, x) in out[PREFIX.len()..].chunks_exact_mut(4).zip(v.as_array()) {
        dst.copy_from_slice(&x.to_le_bytes());
    }
    out
}

#[inline]
pub(super) fn decode(input: &[u8], policy: Policy) -> Result<Gf8, CodecError> {
    let offset = wire::read_ext_prefix(input, &PREFIX, GF8_TYPE_ID, "Gf8")?;
    let body = &input[offset..];
    let Some((body, rest)) = body.split_first_chunk::<32>() else {
        return Err(wire::end(input, offset, "the 8 coordinates", 32));
    };
    if !rest.is_empty() {
        return Err(CodecError::TrailingBytes {
            offset: GF8_MESSAGE_LEN as u64,
            count: rest.len() as u64,
        });
    }
    let mut coords = [0.0f32; 8];
    for (x, b) in coords.iter_mut().zip(body.chunks_exact(4)) {
        *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    // `Gf8::try_new` inlines here; `Policy::apply_one` is an out-of-line call.
    let checked = match policy {
        Policy::Strict => Gf8::try_new(coords),
        Policy::Trusted => Ok(Gf8::new_unchecked(coords)),
        Policy::Renormalize => policy.apply_one(coords),
    };
    checked.map_err(|error| CodecError::InvalidVector { index: 0, error })
}
