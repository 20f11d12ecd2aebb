//! Apache Fory for [`Gf8`] (feature `fory`): a custom serializer whose body is
//! the 8 coordinates as little-endian `f32`, validated on read.
//!
//! `Gf8` is a fory *extension* type (`EXT`, type id 31): it has no derived
//! struct schema, so it must be registered with
//! [`Fory::register_serializer`](fory::Fory::register_serializer) (or
//! `register_serializer_by_name`) before use. hydron-codec's
//! `hydron_codec::fory::register` does that with the fixed, documented type
//! id `hydron_codec::fory::GF8_TYPE_ID`, together with the batch types.
//!
//! The body is always exactly 32 bytes: coordinate 0 first, each an IEEE 754
//! binary32 in little-endian byte order, no length prefix, no padding. Reading
//! checks the value as [`Gf8::try_new`] does (finite, unit norm or zero); a
//! bad value is a fory `InvalidData` error whose message names the coordinate
//! or the norm, so a `Gf8` field can never hold an invalid vector after
//! deserialization.
//!
//! Reading is stricter than fory's default for a custom serializer in two
//! more ways. A null reference flag (`-3`) is an error, not
//! [`Gf8::ZERO`]: a `Gf8` is never null (declare an optional field as
//! `Option<Gf8>`, whose serializer reads the flag itself). And the type
//! info must be exactly what fory writes for the registered type: the EXT
//! kind and the registered id in shortest varuint form (fory's own reader
//! accepts padded varints). A field missing from an older sender's struct
//! still reads as [`Gf8::ZERO`] (the [`Default`]), as fory's derive asks.
//!
//! ```
//! use fory::Fory;
//! use hydron_core::Gf8;
//!
//! let mut fory = Fory::default();
//! fory.register_serializer::<Gf8>(2400)?;
//! let v = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]).unwrap();
//! let bytes = fory.serialize(&v)?;
//! assert_eq!(bytes.len(), 37); // 5 bytes of framing + 32 bytes of coordinates
//! assert_eq!(fory.deserialize::<Gf8>(&bytes)?, v);
//! # Ok::<(), fory::Error>(())
//! ```

use fory::{Error, ReadContext, RefFlag, RefMode, Serializer, TypeId, WriteContext};

use crate::Gf8;

/// Size of the body: 8 coordinates of 4 bytes.
const BODY_LEN: usize = 32;

impl Serializer for Gf8 {
    type Target = Gf8;

    #[inline]
    fn write_data(value: &Gf8, context: &mut WriteContext) -> Result<(), Error> {
        context.writer.write_bytes(&to_le_bytes(value.as_array()));
        Ok(())
    }

    #[inline]
    fn read_data(context: &mut ReadContext) -> Result<Gf8, Error> {
        let bytes = context.reader.read_bytes(BODY_LEN)?;
        let mut coords = [0.0f32; 8];
        for (x, b) in coords.iter_mut().zip(bytes.chunks_exact(4)) {
            *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Gf8::try_new(coords).map_err(invalid_gf8)
    }

    #[inline]
    fn default_value(_context: &mut ReadContext) -> Result<Gf8, Error> {
        Ok(Gf8::ZERO)
    }

    #[inline]
    fn reserved_space() -> usize {
        BODY_LEN
    }

    /// fory's default, except that only a present value's reference flag
    /// is accepted (not null, not a back-reference), and the type info is
    /// checked byte for byte.
    #[inline]
    fn read(
        context: &mut ReadContext,
        ref_mode: RefMode,
        read_type_info: bool,
    ) -> Result<Gf8, Error> {
        if ref_mode != RefMode::None {
            let offset = context.reader.get_cursor();
            let flag = context.reader.read_i8()?;
            // fory's default reads a `REF_VALUE` (0) like a plain value,
            // without reserving a reference id; so does this.
            let tracked = flag == RefFlag::RefValue as i8 && ref_mode == RefMode::Tracking;
            if flag != RefFlag::NotNullValue as i8 && !tracked {
                return Err(bad_ref_flag(offset, flag));
            }
        }
        if read_type_info {
            let start = context.reader.get_cursor();
            <Gf8 as Serializer>::read_type_info(context)?;
            let raw = context
                .reader
                .sub_slice(start, context.reader.get_cursor())?;
            if !is_ext_type_info(raw) {
                return Err(Error::invalid_data(format!(
                    "Gf8 at byte {start}: the type info {raw:02x?} is not what fory writes for \
                     a registered Gf8: the EXT kind (31) and the user type id in shortest \
                     varuint form, or the NAMED_EXT kind (32)"
                )));
            }
        }
        <Gf8 as Serializer>::read_data(context)
    }
}

/// The 32-byte little-endian body of `coords`.
#[inline]
fn to_le_bytes(coords: &[f32; 8]) -> [u8; BODY_LEN] {
    let mut out = [0u8; BODY_LEN];
    for (chunk, x) in out.chunks_exact_mut(4).zip(coords) {
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    out
}

/// Whether `raw`, type info that fory has already resolved to `Gf8`'s
/// registration, is in the form fory writes: the EXT kind and a
/// shortest-form varuint32 (fory's reader also resolves the STRUCT or ENUM
/// kind with the same id, and padded or over-long varints), or the
/// NAMED_EXT kind (registration by name, which fory checks by name).
fn is_ext_type_info(raw: &[u8]) -> bool {
    match raw {
        [kind, ..] if *kind == TypeId::NAMED_EXT as u8 => true,
        [kind, id @ ..] if *kind == TypeId::EXT as u8 => match id {
            [] => false,
            [last] => *last < 0x80,
            [init @ .., last] => {
                id.len() <= 5
                    && init.iter().all(|b| b & 0x80 != 0)
                    && *last != 0
                    && *last < 0x80
                    && (id.len() < 5 || *last <= 0x0f)
            }
        },
        _ => false,
    }
}

#[cold]
fn bad_ref_flag(offset: usize, flag: i8) -> Error {
    let what = match flag {
        f if f == RefFlag::Null as i8 => {
            "is null (-3), but a Gf8 is never null: read an optional one as Option<Gf8>".into()
        }
        f if f == RefFlag::Ref as i8 => "is a back-reference (-2), which a Gf8 never is".into(),
        f if f == RefFlag::RefValue as i8 => {
            "is a tracked value (0), but reference tracking is off".into()
        }
        _ => format!("{flag} is not a fory reference flag"),
    };
    Error::invalid_data(format!("Gf8 at byte {offset}: the reference flag {what}"))
}

#[cold]
fn invalid_gf8(error: crate::Gf8Error) -> Error {
    Error::invalid_data(format!("invalid Gf8: {error}"))
}

#[cfg(test)]
mod tests {
    use fory::{Fory, ForyStruct};

    use crate::Gf8;

    #[derive(ForyStruct, Debug, PartialEq)]
    struct Holder {
        id: i32,
        v: Gf8,
        many: Vec<Gf8>,
    }

    fn fory() -> Fory {
        let mut fory = Fory::default();
        fory.register_serializer::<Gf8>(2400).unwrap();
        fory.register::<Holder>(7).unwrap();
        fory
    }

    fn unit(i: usize) -> Gf8 {
        let mut c = [0.0; 8];
        c[i] = -1.0;
        Gf8::try_new(c).unwrap()
    }

    #[test]
    fn root_value_is_framing_plus_little_endian_coordinates() {
        let v = Gf8::normalize([1.0, -2.0, 3.0, 0.5, 0.0, 7.0, -0.25, 1e-3]).unwrap();
        let bytes = fory().serialize(&v).unwrap();
        // xlang bitmap, not-null flag, EXT type id 31, varuint32 2400.
        assert_eq!(bytes[..5], [0x01, 0xff, 0x1f, 0xe0, 0x12]);
        for (i, x) in v.as_array().iter().enumerate() {
            assert_eq!(bytes[5 + 4 * i..9 + 4 * i], x.to_le_bytes());
        }
        assert_eq!(bytes.len(), 37);
        assert_eq!(fory().deserialize::<Gf8>(&bytes).unwrap(), v);
    }

    #[test]
    fn embedded_in_a_derived_struct() {
        let fory = fory();
        let h = Holder {
            id: 3,
            v: unit(2),
            many: (0..8).map(unit).collect(),
        };
        let bytes = fory.serialize(&h).unwrap();
        assert_eq!(fory.deserialize::<Holder>(&bytes).unwrap(), h);
    }

    #[test]
    fn reading_validates() {
        let fory = fory();
        let mut bytes = fory.serialize(&unit(0)).unwrap();
        // Coordinate 3 becomes NaN.
        bytes[5 + 12..5 + 16].copy_from_slice(&f32::NAN.to_le_bytes());
        let err = fory.deserialize::<Gf8>(&bytes).unwrap_err().to_string();
        assert!(err.contains("coordinate 3 is NaN"), "{err}");
        // Coordinate 0 becomes 2: the norm is wrong.
        let mut bytes = fory.serialize(&unit(0)).unwrap();
        bytes[5..9].copy_from_slice(&2.0f32.to_le_bytes());
        let err = fory.deserialize::<Gf8>(&bytes).unwrap_err().to_string();
        assert!(err.contains("norm is 2"), "{err}");
    }

    #[test]
    fn type_info_must_be_the_form_fory_writes() {
        use super::is_ext_type_info;
        assert!(is_ext_type_info(&[31, 0xe0, 0x12]));
        assert!(is_ext_type_info(&[31, 0x05]));
        assert!(is_ext_type_info(&[31, 0xff, 0xff, 0xff, 0xff, 0x0f]));
        assert!(is_ext_type_info(&[32, 0x00, 0x11]));
        assert!(!is_ext_type_info(&[31]));
        assert!(!is_ext_type_info(&[31, 0xe0, 0x92, 0x00]), "padded");
        assert!(
            !is_ext_type_info(&[31, 0xff, 0xff, 0xff, 0xff, 0x1f]),
            "beyond 32 bits"
        );
        assert!(
            !is_ext_type_info(&[31, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
            "6 bytes"
        );
        assert!(!is_ext_type_info(&[27, 0xe0, 0x12]), "STRUCT kind");

        // Through fory: the same value with the STRUCT kind, or a padded id.
        let fory = fory();
        let good = fory.serialize(&unit(5)).unwrap();
        assert_eq!(fory.deserialize::<Gf8>(&good).unwrap(), unit(5));
        let mut bytes = good.clone();
        bytes[2] = 27;
        let err = fory.deserialize::<Gf8>(&bytes).unwrap_err().to_string();
        assert!(err.contains("Gf8 at byte 2: the type info"), "{err}");
        let mut bytes = good[..4].to_vec();
        bytes.extend_from_slice(&[0x92, 0x00]);
        bytes.extend_from_slice(&good[5..]);
        assert!(fory.deserialize::<Gf8>(&bytes).is_err());
    }

    #[test]
    fn a_null_flag_is_an_error_not_zero() {
        let fory = fory();
        let err = fory
            .deserialize::<Gf8>(&[0x01, 0xfd])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Gf8 at byte 1: the reference flag is null (-3)"),
            "{err}"
        );
        assert_eq!(
            fory.deserialize::<Option<Gf8>>(&[0x01, 0xfd]).unwrap(),
            None
        );
    }

    #[test]
    fn truncated_body_is_an_error() {
        let fory = fory();
        let bytes = fory.serialize(&unit(1)).unwrap();
        for len in 0..bytes.len() {
            assert!(fory.deserialize::<Gf8>(&bytes[..len]).is_err(), "len {len}");
        }
    }
}
