//! serde support (feature `serde`).
//!
//! * [`Gf8`] is a tuple of its 8 coordinates: JSON `[0.5, -0.5, …]`.
//!   Deserializing checks the length (too few and too many elements are
//!   both an error that gives the count) and the invariant, as
//!   [`Gf8::try_new`], so the error names the bad coordinate or the norm.
//!   `f32` values keep their bits through formats that round-trip `f32`
//!   (serde_json writes the shortest decimal that reads back to the same
//!   `f32`).
//! * [`E8Root`] is its one-byte code, checked to be in `0..240` on the way
//!   in.

use core::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeTupleStruct, Serializer};

use crate::{E8Root, Gf8};

/// Serializes as a tuple struct `Gf8` of 8 `f32` (a JSON array).
///
/// ```
/// use hydron_core::Gf8;
///
/// let v = Gf8::try_new([0.5, -0.5, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0])?;
/// assert_eq!(
///     serde_json::to_string(&v).unwrap(),
///     "[0.5,-0.5,0.5,-0.5,0.0,0.0,0.0,0.0]"
/// );
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
impl Serialize for Gf8 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut state = serializer.serialize_tuple_struct("Gf8", 8)?;
        for x in self.as_array() {
            state.serialize_field(x)?;
        }
        state.end()
    }
}

/// Deserializes 8 `f32` and checks them as [`Gf8::try_new`].
///
/// ```
/// use hydron_core::Gf8;
///
/// let v: Gf8 = serde_json::from_str("[0, 0, 0, 1, 0, 0, 0, 0]").unwrap();
/// assert_eq!(v[3], 1.0);
///
/// let err = serde_json::from_str::<Gf8>("[1, 1, 0, 0, 0, 0, 0, 0]").unwrap_err();
/// assert!(err.to_string().starts_with("norm is 1.4142135, expected 1"));
/// let err = serde_json::from_str::<Gf8>("[1, 0, 0]").unwrap_err();
/// assert!(err.to_string().starts_with("invalid length 3, expected an array of 8"));
/// ```
impl<'de> Deserialize<'de> for Gf8 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Gf8, D::Error> {
        deserializer.deserialize_tuple_struct("Gf8", 8, Gf8Visitor)
    }
}

struct Gf8Visitor;

impl<'de> Visitor<'de> for Gf8Visitor {
    type Value = Gf8;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of 8 f32 coordinates of a unit (or zero) vector")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Gf8, A::Error> {
        let mut coords = [0.0f32; 8];
        for (index, x) in coords.iter_mut().enumerate() {
            *x = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(index, &self))?;
        }
        // Count any extra elements (skipping them, without allocating) so
        // the error says how many there were.
        let mut len = coords.len();
        while seq.next_element::<IgnoredAny>()?.is_some() {
            len += 1;
        }
        if len != coords.len() {
            return Err(de::Error::invalid_length(len, &self));
        }
        Gf8::try_new(coords).map_err(de::Error::custom)
    }
}

/// Serializes as the one-byte code (`u8`).
///
/// ```
/// use hydron_core::E8Root;
/// assert_eq!(serde_json::to_string(&E8Root::new(200)?).unwrap(), "200");
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
impl Serialize for E8Root {
    #[inline]
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.code())
    }
}

/// Deserializes a `u8` code and checks it is in `0..240`.
///
/// ```
/// use hydron_core::E8Root;
///
/// let root: E8Root = serde_json::from_str("17").unwrap();
/// assert_eq!(root.code(), 17);
/// let err = serde_json::from_str::<E8Root>("240").unwrap_err();
/// assert!(err.to_string().starts_with("E8 root code 240 is out of range (0..240)"));
/// assert!(serde_json::from_str::<E8Root>("256").is_err());
/// ```
impl<'de> Deserialize<'de> for E8Root {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<E8Root, D::Error> {
        let code = u8::deserialize(deserializer)?;
        E8Root::new(code).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_elements_are_counted() {
        let err = serde_json::from_str::<Gf8>("[1, 0, 0, 0, 0, 0, 0, 0, 0, 0]").unwrap_err();
        assert!(
            err.to_string().starts_with("invalid length 10, expected"),
            "{err}"
        );
    }

    #[test]
    fn missing_elements_name_the_index() {
        for len in 0..8 {
            let json = format!("[{}]", vec!["0"; len].join(","));
            let err = serde_json::from_str::<Gf8>(&json).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("invalid length {len}, expected an array of 8")),
                "{err}"
            );
        }
    }

    #[test]
    fn invalid_coordinates_are_named() {
        // JSON has no NaN or infinity; serde_json refuses numbers beyond f32.
        let err = serde_json::from_str::<Gf8>("[0, 0, 0, 0, 0, 1e39, 0, 0]").unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
        let err = serde_json::from_str::<Gf8>("[0, 0, 0, 0, 0, 3, 0, 4]").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("norm is 5, expected 1 (within 0.00001) or exactly 0 at line 1"),
            "{err}"
        );
        let err = serde_json::from_str::<Gf8>("[0, 0, 0, 0, 0, 0, 0, -0.5]").unwrap_err();
        assert!(err.to_string().starts_with("norm is 0.5,"), "{err}");
        // Through a format that can carry NaN, the coordinate is named.
        let err = Gf8::deserialize(de::value::SeqDeserializer::<_, de::value::Error>::new(
            [0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0].into_iter(),
        ))
        .unwrap_err();
        assert_eq!(err.to_string(), "coordinate 3 is NaN");
        let err = serde_json::from_str::<Gf8>("[0, 0, \"x\", 0, 0, 0, 0, 0]").unwrap_err();
        assert!(err.to_string().contains("invalid type: string"), "{err}");
        let err = serde_json::from_str::<Gf8>("{\"x\": 1}").unwrap_err();
        assert!(err.to_string().contains("expected an array of 8"), "{err}");
    }

    #[test]
    fn root_round_trip() {
        for root in E8Root::all() {
            let json = serde_json::to_string(&root).unwrap();
            assert_eq!(json, root.code().to_string());
            assert_eq!(serde_json::from_str::<E8Root>(&json).unwrap(), root);
        }
        for code in 240..=255u8 {
            assert!(serde_json::from_str::<E8Root>(&code.to_string()).is_err());
        }
        assert!(serde_json::from_str::<E8Root>("-1").is_err());
    }
}
