//! Checked entry points for generic fory: the checks that only the root of
//! a message can make, which `fory::Fory::deserialize` does not.

use ::fory::{Fory, Reader, RefFlag, Serializer};

use super::wire::BITMAP_XLANG;
use crate::CodecError;

/// What [`deserialize_exact`] requires at byte 1 of a message.
const EXPECT_NOT_NULL_ROOT: &str =
    "a root value that is present: fory's null message (01 fd) is not a value of this type";

/// Deserializes one value of `T` with `fory`, as
/// [`Fory::deserialize`](::fory::Fory::deserialize) does, but fails unless
/// the message is exactly one present value:
///
/// - **Every byte is consumed.** fory stops after the root value and
///   ignores what follows, so a `Gf8Batch` whose length prefix is 32 bytes
///   short reads there as its first vectors. Here that is
///   [`CodecError::TrailingBytes`], with the offset where the value ended.
/// - **The root is not null.** fory reads the two-byte null message
///   `01 fd` as the type's default (for a derived struct of yours: every
///   field's default). Here that is [`CodecError::WrongHeader`] at offset 1,
///   unless `T` is an `Option`, for which it is `None`. (hydron's own
///   types refuse a null flag wherever fory reads them, root or field.)
/// - fory's own errors come back as [`CodecError::ForyAt`], with the offset
///   where its reader stopped.
///
/// Everything else is as `fory.deserialize::<T>`: the header and type info,
/// and the checks of hydron's serializers for [`Gf8`](hydron_core::Gf8),
/// [`Gf8Batch`](super::Gf8Batch) and [`E8Codes`](super::E8Codes) (valid
/// vectors and codes, a whole number of vectors, the exact type meta, no
/// null flag). For a `Gf8Batch`, `E8Codes` or `Gf8` on its own, the
/// hand-written [`decode_batch`](super::decode_batch),
/// [`decode_codes`](super::decode_codes) and
/// [`decode_gf8`](super::decode_gf8) are faster and take a
/// [`Policy`](crate::Policy); this function is for your own structs that
/// hold hydron types, and accepts nothing those decoders reject.
///
/// ```
/// use hydron_codec::fory::{self as hfory, Gf8Batch};
/// use hydron_codec::CodecError;
/// use hydron_core::Gf8;
///
/// let fory = hfory::xlang_fory()?;
/// let v = Gf8::from_scalar(1.0)?;
/// let mut bytes = hfory::encode_batch(&[v, -v, v]);
/// assert_eq!(hfory::deserialize_exact::<Gf8Batch>(&fory, &bytes)?.0.len(), 3);
///
/// // The length prefix (byte 21) claims 2 vectors instead of 3: fory
/// // returns those 2; deserialize_exact refuses the 32 bytes left over.
/// bytes[21] = 64;
/// assert_eq!(fory.deserialize::<Gf8Batch>(&bytes)?.0.len(), 2);
/// let err = hfory::deserialize_exact::<Gf8Batch>(&fory, &bytes).unwrap_err();
/// assert!(matches!(err, CodecError::TrailingBytes { offset: 86, count: 32 }));
///
/// // The null message: refused, except as an Option.
/// assert!(hfory::deserialize_exact::<Gf8Batch>(&fory, &[0x01, 0xfd]).is_err());
/// assert_eq!(hfory::deserialize_exact::<Option<Gf8Batch>>(&fory, &[0x01, 0xfd])?, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn deserialize_exact<T>(fory: &Fory, bytes: &[u8]) -> Result<T, CodecError>
where
    T: Serializer<Target = T>,
{
    if let [bitmap, flag, ..] = *bytes {
        if bitmap <= BITMAP_XLANG && flag as i8 == RefFlag::Null as i8 && !T::IS_OPTIONAL {
            return Err(CodecError::WrongHeader {
                offset: 1,
                found: flag,
                expected: EXPECT_NOT_NULL_ROOT,
            });
        }
    }
    let mut reader = Reader::new(bytes);
    let result = fory.deserialize_from::<T>(&mut reader);
    // fory leaves the reader where it stopped, on success or error.
    let end = reader.get_cursor();
    let value = result.map_err(|error| CodecError::ForyAt {
        offset: end as u64,
        error,
    })?;
    if end < bytes.len() {
        return Err(CodecError::TrailingBytes {
            offset: end as u64,
            count: (bytes.len() - end) as u64,
        });
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use ::fory::ForyStruct;
    use hydron_core::Gf8;

    use super::*;
    use crate::fory::{self as hfory, Gf8Batch};

    #[derive(ForyStruct, Debug, PartialEq, Default)]
    struct Tagged {
        tag: u32,
        points: Gf8Batch,
    }

    fn fory() -> Fory {
        let mut fory = hfory::xlang_fory().unwrap();
        fory.register::<Tagged>(7).unwrap();
        fory
    }

    #[test]
    fn a_null_root_of_a_user_struct_is_refused_here_but_not_by_fory() {
        let fory = fory();
        assert_eq!(
            fory.deserialize::<Tagged>(&[0x01, 0xfd]).unwrap(),
            Tagged::default()
        );
        let err = deserialize_exact::<Tagged>(&fory, &[0x01, 0xfd]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("byte offset 1: found 0xfd, expected {EXPECT_NOT_NULL_ROOT}")
        );
        assert_eq!(
            deserialize_exact::<Option<Tagged>>(&fory, &[0x01, 0xfd]).unwrap(),
            None
        );
        // A bad header is reported as fory finds it, not as a null.
        let err = deserialize_exact::<Tagged>(&fory, &[0x07, 0xfd]).unwrap_err();
        assert!(matches!(err, CodecError::ForyAt { .. }), "{err}");
    }

    #[test]
    fn trailing_bytes_after_a_user_struct_are_refused() {
        let fory = fory();
        let value = Tagged {
            tag: 9,
            points: Gf8Batch(vec![Gf8::ZERO]),
        };
        let mut bytes = fory.serialize(&value).unwrap();
        assert_eq!(deserialize_exact::<Tagged>(&fory, &bytes).unwrap(), value);
        let len = bytes.len();
        bytes.extend_from_slice(&[0, 0, 0]);
        assert_eq!(fory.deserialize::<Tagged>(&bytes).unwrap(), value);
        let err = deserialize_exact::<Tagged>(&fory, &bytes).unwrap_err();
        assert!(
            matches!(err, CodecError::TrailingBytes { offset, count: 3 } if offset == len as u64),
            "{err}"
        );
    }

    #[test]
    fn fory_errors_carry_where_the_reader_stopped() {
        let fory = fory();
        let bytes = fory.serialize(&Tagged::default()).unwrap();
        let err = deserialize_exact::<Tagged>(&fory, &bytes[..bytes.len() - 1]).unwrap_err();
        let CodecError::ForyAt { offset, .. } = err else {
            panic!("{err}");
        };
        assert!(offset < bytes.len() as u64, "{offset}");
        assert!(err.to_string().starts_with("fory error at byte offset"));
    }
}
