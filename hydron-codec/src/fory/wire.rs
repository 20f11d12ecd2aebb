//! The byte-level pieces every hydron fory message shares: the fixed
//! framing prefixes, the varuint32 length, and the errors that explain a
//! prefix that does not match.
//!
//! The prefixes are constants, written out byte by byte; tests in the parent
//! module prove them equal to what fory 1.7.7 itself writes for the
//! registered types (and golden files prove pyfory writes the same).

use crate::CodecError;

/// Header bitmap of an xlang message (`IS_CROSS_LANGUAGE_FLAG`); a
/// native-mode message has `0x00`, and both are accepted (`<= 0x01`).
pub(crate) const BITMAP_XLANG: u8 = 0x01;
/// Reference flag of a root value that is present (`NOT_NULL_VALUE`, -1).
pub(crate) const REF_NOT_NULL: u8 = 0xff;
/// fory's `REF_VALUE` flag (0 as `i8`): the first occurrence of a tracked
/// value, what a writer with reference tracking on (pyfory's `ref=True`)
/// puts in front of the root; the bytes after it are the same.
pub(crate) const REF_VALUE: u8 = 0x00;
/// fory type id `STRUCT` (schema-consistent mode).
pub(crate) const TYPE_STRUCT: u8 = 27;
/// fory type id `COMPATIBLE_STRUCT` (compatible mode, fory's default).
pub(crate) const TYPE_COMPATIBLE_STRUCT: u8 = 28;
/// fory type id `EXT` (a registered custom serializer).
pub(crate) const TYPE_EXT: u8 = 31;

const EXPECT_BITMAP: &str = "a fory header bitmap: 0x01 (xlang) or 0x00 (native)";
const EXPECT_REF: &str =
    "0xff, the fory not-null flag of the root value (or 0x00, a tracked value)";
const EXPECT_STRUCT: &str = "fory type id 0x1c (COMPATIBLE_STRUCT) or 0x1b (STRUCT)";
const EXPECT_EXT: &str = "fory type id 0x1f (EXT, a registered serializer)";
const EXPECT_META_INDEX: &str = "0x00, the marker of a new inline fory type meta";
const EXPECT_META_FLAGS: &str = "the fory type meta flags of this compatible struct \
     (0x80 struct | 0x40 compatible | its field count: 0xc1 for one field)";

/// The fixed framing of one registered struct type with a single dense
/// array field, in both struct modes.
pub(crate) struct StructForm {
    /// Rust name of the type, for error messages.
    pub(crate) name: &'static str,
    /// Its registered fory user type id.
    pub(crate) type_id: u32,
    /// Compatible mode: bitmap (xlang), ref flag, type id 28, meta index 0,
    /// 8-byte meta header (size and hash), meta body.
    pub(crate) compatible: &'static [u8],
    /// Schema-consistent mode: bitmap (xlang), ref flag, type id 27,
    /// varuint32 user type id, 4-byte schema hash.
    pub(crate) schema: &'static [u8],
    /// What the meta and schema hash describe, for error messages.
    pub(crate) schema_text: &'static str,
}

/// Offset of the meta body's first byte (its flags) in the compatible form.
const META_BODY_OFFSET: usize = 12;

impl StructForm {
    /// Checks the framing at the start of `input` (any of the accepted
    /// forms) and returns the offset just past it.
    #[inline]
    pub(crate) fn read_prefix(&self, input: &[u8]) -> Result<usize, CodecError> {
        for form in [self.compatible, self.schema] {
            if input.len() >= form.len() && root_ok(input) && input[2..form.len()] == form[2..] {
                return Ok(form.len());
            }
        }
        Err(self.explain(input))
    }

    /// The error for an input whose framing matches no accepted form.
    #[cold]
    fn explain(&self, input: &[u8]) -> CodecError {
        if let Some(err) = check_root(input) {
            return err;
        }
        let Some(&kind) = input.get(2) else {
            return end(input, 2, "the fory type id", 1);
        };
        let form = match kind {
            TYPE_COMPATIBLE_STRUCT => self.compatible,
            TYPE_STRUCT => self.schema,
            found => return wrong(2, found, EXPECT_STRUCT),
        };
        if kind == TYPE_COMPATIBLE_STRUCT {
            if input.get(3).is_some_and(|&b| b != 0) {
                return wrong(3, input[3], EXPECT_META_INDEX);
            }
            // The meta header's hash covers the body, so a different type id
            // shows first as a different hash: look at the body's id first.
            if input
                .get(META_BODY_OFFSET)
                .is_some_and(|&b| b != form[META_BODY_OFFSET])
            {
                return wrong(META_BODY_OFFSET, input[META_BODY_OFFSET], EXPECT_META_FLAGS);
            }
            if let Some(err) = self.check_type_id(input, META_BODY_OFFSET + 1) {
                return err;
            }
        } else if let Some(err) = self.check_type_id(input, 3) {
            return err;
        }
        for (offset, (&found, &want)) in input.iter().zip(form).enumerate().skip(3) {
            if found != want {
                return wrong(offset, found, self.schema_text);
            }
        }
        end(
            input,
            input.len(),
            "the fory message header",
            form.len() - input.len(),
        )
    }

    /// A [`CodecError::WrongTypeId`] if the varuint at `offset` is a
    /// complete, different type id.
    fn check_type_id(&self, input: &[u8], offset: usize) -> Option<CodecError> {
        let (found, _) = read_varuint32(input, offset, "the fory user type id").ok()?;
        (found != self.type_id).then_some(CodecError::WrongTypeId {
            offset: offset as u64,
            found,
            expected: self.type_id,
            name: self.name,
        })
    }
}

/// Checks the framing of a registered EXT value (bitmap, ref flag, type id
/// 31, varuint32 user type id) and returns the offset just past it.
#[inline]
pub(crate) fn read_ext_prefix(
    input: &[u8],
    prefix: &[u8],
    type_id: u32,
    name: &'static str,
) -> Result<usize, CodecError> {
    if input.len() >= prefix.len() && root_ok(input) && input[2..prefix.len()] == prefix[2..] {
        return Ok(prefix.len());
    }
    Err(explain_ext(input, type_id, name))
}

#[cold]
fn explain_ext(input: &[u8], type_id: u32, name: &'static str) -> CodecError {
    if let Some(err) = check_root(input) {
        return err;
    }
    match input.get(2) {
        None => end(input, 2, "the fory type id", 1),
        Some(&TYPE_EXT) => match read_varuint32(input, 3, "the fory user type id") {
            Err(err) => err,
            Ok((found, _)) => CodecError::WrongTypeId {
                offset: 3,
                found,
                expected: type_id,
                name,
            },
        },
        Some(&found) => wrong(2, found, EXPECT_EXT),
    }
}

/// Whether the first two bytes are a header bitmap and a root reference
/// flag the decoders accept (the fast test; [`check_root`] explains).
#[inline]
fn root_ok(input: &[u8]) -> bool {
    matches!(input, [bitmap, flag, ..]
        if *bitmap <= BITMAP_XLANG && (*flag == REF_NOT_NULL || *flag == REF_VALUE))
}

/// Checks the header bitmap and the root reference flag.
fn check_root(input: &[u8]) -> Option<CodecError> {
    match input {
        [] => Some(end(input, 0, "the fory header bitmap", 1)),
        [bitmap, ..] if *bitmap > BITMAP_XLANG => Some(wrong(0, *bitmap, EXPECT_BITMAP)),
        [_] => Some(end(input, 1, "the fory reference flag", 1)),
        [_, flag, ..] if *flag != REF_NOT_NULL && *flag != REF_VALUE => {
            Some(wrong(1, *flag, EXPECT_REF))
        }
        _ => None,
    }
}

fn wrong(offset: usize, found: u8, expected: &'static str) -> CodecError {
    CodecError::WrongHeader {
        offset: offset as u64,
        found,
        expected,
    }
}

/// A [`CodecError::UnexpectedEnd`] for `what`, at `offset`, needing `needed`
/// bytes.
pub(crate) fn end(input: &[u8], offset: usize, what: &'static str, needed: usize) -> CodecError {
    CodecError::UnexpectedEnd {
        offset: offset as u64,
        what,
        needed: needed as u64,
        available: input.len().saturating_sub(offset) as u64,
    }
}

/// Appends `value` as an unsigned LEB128 varint (fory's `var_u32`), in
/// shortest form: 7 bits per byte, low bits first, high bit set on every
/// byte but the last.
#[inline]
pub(crate) fn write_varuint32(buf: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        buf.push((value as u8) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

/// Reads a varuint32 at `offset`; returns it and the offset just past it.
///
/// Stricter than fory's own reader, which silently drops bits beyond 32 and
/// accepts padded forms: this accepts only the shortest encoding of a value
/// below 2^32 (at most 5 bytes, the fifth at most `0x0f`).
#[inline]
pub(crate) fn read_varuint32(
    input: &[u8],
    offset: usize,
    what: &'static str,
) -> Result<(u32, usize), CodecError> {
    let mut value = 0u32;
    for i in 0..5 {
        let Some(&byte) = input.get(offset + i) else {
            return Err(end(input, offset, what, i + 1));
        };
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            if i == 4 && byte > 0x0f {
                return Err(bad_varint(offset, "the value does not fit in 32 bits"));
            }
            if i > 0 && byte == 0 {
                return Err(bad_varint(
                    offset,
                    "not in shortest form (a zero final byte)",
                ));
            }
            return Ok((value, offset + i + 1));
        }
    }
    Err(bad_varint(
        offset,
        "longer than 5 bytes (the value does not fit in 32 bits)",
    ))
}

#[cold]
fn bad_varint(offset: usize, reason: &'static str) -> CodecError {
    CodecError::BadVarint {
        offset: offset as u64,
        reason,
    }
}

/// Reads the varuint32 byte length of a dense array at `offset` and checks
/// it against the input: it must be a multiple of `unit` bytes and end
/// exactly at the end of `input`. Returns the array's bytes.
///
/// Nothing is allocated here, so a claimed length is checked against the
/// input before any caller allocates for it.
#[inline]
pub(crate) fn read_array<'a>(
    input: &'a [u8],
    offset: usize,
    element: u64,
    unit: u64,
    what: &'static str,
) -> Result<&'a [u8], CodecError> {
    let (data, end) = read_array_field(input, offset, element, unit, what)?;
    if end < input.len() {
        return Err(CodecError::TrailingBytes {
            offset: end as u64,
            count: (input.len() - end) as u64,
        });
    }
    Ok(data)
}

/// As [`read_array`], but the array may be followed by more bytes: returns
/// its bytes and the offset just past it.
#[inline]
pub(crate) fn read_array_field<'a>(
    input: &'a [u8],
    offset: usize,
    element: u64,
    unit: u64,
    what: &'static str,
) -> Result<(&'a [u8], usize), CodecError> {
    let (length, start) = read_varuint32(input, offset, "the array length")?;
    let length = u64::from(length);
    if !length.is_multiple_of(element) {
        return Err(CodecError::BadLength {
            offset: offset as u64,
            length,
            unit: element,
            what: "bytes: the array's element size",
        });
    }
    if !length.is_multiple_of(unit) {
        return Err(CodecError::BadLength {
            offset: offset as u64,
            length: length / element,
            unit: unit / element,
            what,
        });
    }
    let available = (input.len() - start) as u64;
    if available < length {
        return Err(CodecError::UnexpectedEnd {
            offset: start as u64,
            what: "the array",
            needed: length,
            available,
        });
    }
    // `length <= available <= usize::MAX`, so the cast is exact.
    let end = start + length as usize;
    Ok((&input[start..end], end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varuint32_round_trips_at_every_width_boundary() {
        for value in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            (1 << 21) - 1,
            1 << 21,
            (1 << 28) - 1,
            1 << 28,
            u32::MAX,
        ] {
            let mut buf = vec![0xaa];
            write_varuint32(&mut buf, value);
            assert_eq!(
                read_varuint32(&buf, 1, "x").unwrap(),
                (value, buf.len()),
                "{value}"
            );
        }
    }

    #[test]
    fn varuint32_rejects_what_fory_silently_misreads() {
        // 2^40: fory reads the first 5 bytes as 0 and ignores the rest.
        let err = read_varuint32(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x20], 0, "x").unwrap_err();
        assert!(
            matches!(err, CodecError::BadVarint { offset: 0, .. }),
            "{err}"
        );
        // 2^32 in 5 bytes: the fifth byte has bits beyond 32.
        let err = read_varuint32(&[0x80, 0x80, 0x80, 0x80, 0x10], 0, "x").unwrap_err();
        assert!(err.to_string().contains("32 bits"), "{err}");
        // 0 padded to 2 bytes.
        let err = read_varuint32(&[0x80, 0x00], 0, "x").unwrap_err();
        assert!(err.to_string().contains("shortest"), "{err}");
        // Cut short.
        let err = read_varuint32(&[0x7f, 0x80, 0x80], 1, "the length").unwrap_err();
        assert_eq!(
            err.to_string(),
            "input ends early: the length at byte offset 1 needs 3 bytes, only 2 remain"
        );
    }

    #[test]
    fn read_array_checks_length_against_input_and_units() {
        let ok = [0x08, 1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(read_array(&ok, 0, 4, 8, "x").unwrap(), &ok[1..]);
        let err = read_array(&ok, 0, 4, 32, "floats: 8 coordinates per vector").unwrap_err();
        assert_eq!(
            err.to_string(),
            "byte offset 0: length 2 is not a multiple of 8 (floats: 8 coordinates per vector)"
        );
        let err = read_array(&[0x06, 0, 0, 0, 0, 0, 0], 0, 4, 4, "x").unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::BadLength {
                    length: 6,
                    unit: 4,
                    ..
                }
            ),
            "{err}"
        );
        let err = read_array(&ok[..5], 0, 4, 4, "x").unwrap_err();
        assert!(matches!(
            err,
            CodecError::UnexpectedEnd {
                offset: 1,
                needed: 8,
                available: 4,
                ..
            }
        ));
        let mut long = ok.to_vec();
        long.push(0);
        let err = read_array(&long, 0, 4, 4, "x").unwrap_err();
        assert!(matches!(
            err,
            CodecError::TrailingBytes {
                offset: 9,
                count: 1
            }
        ));
        // A huge claimed length is rejected without allocating.
        let err = read_array(&[0xfc, 0xff, 0xff, 0xff, 0x0f], 0, 4, 4, "x").unwrap_err();
        assert!(matches!(
            err,
            CodecError::UnexpectedEnd {
                needed: 4_294_967_292,
                ..
            }
        ));
    }
}
