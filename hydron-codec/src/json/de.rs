//! JSON decoding: a streaming visitor that reads rows of 8 numbers straight
//! into a `Vec<[f32; 8]>`, then applies the [`Policy`].

use std::cell::Cell;
use std::fmt;

use hydron_core::Gf8;
use serde::de::{self, DeserializeSeed, IgnoredAny, SeqAccess, Visitor};

use crate::{CodecError, Policy};

/// Decodes a JSON batch `[[x0, …, x7], …]` and applies `policy`.
///
/// Whitespace is allowed anywhere JSON allows it; anything after the batch
/// but whitespace is an error.
///
/// ```
/// use hydron_codec::{json, CodecError, Policy};
///
/// let v = json::from_slice(b"[[0, 0.6, 0, 0.8, 0, 0, 0, 0]]", Policy::Strict)?;
/// assert_eq!(v[0][3], 0.8);
///
/// let err = json::from_slice(b"[[0, 0, 0, 0, 0, 0, 0, 2]]", Policy::Strict).unwrap_err();
/// assert!(matches!(err, CodecError::InvalidVector { index: 0, .. }));
/// assert_eq!(json::from_slice(b"[[0, 0, 0, 0, 0, 0, 0, 2]]", Policy::Renormalize)?[0][7], 1.0);
/// # Ok::<(), CodecError>(())
/// ```
pub fn from_slice(bytes: &[u8], policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    let cursor = Cursor::default();
    // A vector takes at least 18 bytes and usually about 100; this guess is
    // proportional to the input actually given, never to a claimed count.
    let mut arrays = Vec::with_capacity(bytes.len() / 128);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    BatchSeed {
        out: &mut arrays,
        cursor: &cursor,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end())
    .map_err(|e| json_error(e, &cursor, bytes, None))?;
    policy.apply(arrays)
}

/// Decodes a JSON batch from a string; see [`from_slice`].
///
/// ```
/// use hydron_codec::{json, Policy};
/// let err = json::from_str("[[0, 0, 0, 0, 0, 0, 0]]", Policy::Strict).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "JSON error at line 1, column 22: vector 0: invalid length 7, expected an array of 8 numbers"
/// );
/// ```
#[inline]
pub fn from_str(text: &str, policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    from_slice(text.as_bytes(), policy)
}

/// Decodes one vector `[x0, …, x7]` and applies `policy`; a vector that
/// breaks it is `InvalidVector { index: 0, .. }`.
///
/// ```
/// use hydron_codec::{json, Policy};
/// let v = json::gf8_from_slice(b"[-0.0, 1, 0, 0, 0, 0, 0, 0]", Policy::Strict)?;
/// assert_eq!(v[0].to_bits(), (-0.0f32).to_bits());
/// assert!(json::gf8_from_slice(b"[NaN, 1, 0, 0, 0, 0, 0, 0]", Policy::Strict).is_err());
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn gf8_from_slice(bytes: &[u8], policy: Policy) -> Result<Gf8, CodecError> {
    let cursor = Cursor::default();
    let coords = parse_row(bytes, &cursor).map_err(|e| json_error(e, &cursor, bytes, None))?;
    policy
        .apply_one(coords)
        .map_err(|error| CodecError::InvalidVector { index: 0, error })
}

/// Decodes one vector from a string; see [`gf8_from_slice`].
///
/// ```
/// use hydron_codec::{json, Policy};
/// let v = json::gf8_from_str("[0, 0, 0, 0, 0, 0, 0, -1]", Policy::Strict)?;
/// assert_eq!(v[7], -1.0);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
#[inline]
pub fn gf8_from_str(text: &str, policy: Policy) -> Result<Gf8, CodecError> {
    gf8_from_slice(text.as_bytes(), policy)
}

/// Parses one row `[x0, …, x7]` (and nothing after it but whitespace).
pub(crate) fn parse_row(bytes: &[u8], cursor: &Cursor) -> Result<[f32; 8], serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let row = RowSeed { cursor }.deserialize(&mut de)?;
    de.end()?;
    Ok(row)
}

/// Where the parser is (which vector, which coordinate), so that an error
/// from serde_json can say it.
#[derive(Default)]
pub(crate) struct Cursor {
    vector: Cell<Option<u64>>,
    coordinate: Cell<Option<u8>>,
}

impl Cursor {
    fn describe(&self) -> Option<String> {
        match (self.vector.get(), self.coordinate.get()) {
            (Some(v), Some(c)) => Some(format!("vector {v}, coordinate {c}")),
            (Some(v), None) => Some(format!("vector {v}")),
            (None, Some(c)) => Some(format!("coordinate {c}")),
            (None, None) => None,
        }
    }
}

/// Turns a serde_json error into a [`CodecError`]: I/O errors stay I/O
/// errors; others get the cursor's place and a hint for `NaN`/`Infinity`.
/// `line` replaces serde_json's line (for text parsed one line at a time).
pub(crate) fn json_error(
    err: serde_json::Error,
    cursor: &Cursor,
    input: &[u8],
    line: Option<u64>,
) -> CodecError {
    if err.is_io() {
        return CodecError::Io(err.into());
    }
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let mut message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    if err.is_syntax() && looks_like_non_finite(input, err.line(), err.column()) {
        message.push_str(" (JSON has no NaN or infinity; coordinates must be finite numbers)");
    }
    if let Some(place) = cursor.describe() {
        message = format!("{place}: {message}");
    }
    CodecError::Json {
        line: line.unwrap_or(err.line() as u64),
        column: err.column() as u64,
        message,
    }
}

/// Whether the text at serde_json's error position spells a non-finite
/// number (`NaN`, `Infinity`, `-inf`, …), which JSON does not have.
fn looks_like_non_finite(input: &[u8], line: usize, column: usize) -> bool {
    let mut start = 0;
    for _ in 1..line {
        match input[start..].iter().position(|&b| b == b'\n') {
            Some(i) => start += i + 1,
            None => return false,
        }
    }
    // serde_json's column is 1-based and points at the offending byte; look
    // one byte either side of it.
    let at = (start + column).saturating_sub(2).min(input.len());
    let near = &input[at..input.len().min(at + 12)];
    let text = String::from_utf8_lossy(near).to_ascii_lowercase();
    ["nan", "inf", "-nan", "-inf", "+inf", "+nan"]
        .iter()
        .any(|word| text.contains(word))
}

/// Reads `[[x0, …, x7], …]`, pushing each row into `out`.
struct BatchSeed<'a> {
    out: &'a mut Vec<[f32; 8]>,
    cursor: &'a Cursor,
}

impl<'de> DeserializeSeed<'de> for BatchSeed<'_> {
    type Value = ();

    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for BatchSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of vectors, each an array of 8 numbers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0u64;
        loop {
            self.cursor.vector.set(Some(index));
            match seq.next_element_seed(RowSeed {
                cursor: self.cursor,
            })? {
                Some(row) => self.out.push(row),
                None => break,
            }
            index += 1;
        }
        self.cursor.vector.set(None);
        Ok(())
    }
}

/// Reads one `[x0, …, x7]`: exactly 8 numbers.
struct RowSeed<'a> {
    cursor: &'a Cursor,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = [f32; 8];

    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<[f32; 8], D::Error> {
        deserializer.deserialize_tuple(8, self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = [f32; 8];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of 8 numbers")
    }

    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[f32; 8], A::Error> {
        let mut row = [0.0f32; 8];
        for (j, slot) in row.iter_mut().enumerate() {
            self.cursor.coordinate.set(Some(j as u8));
            match seq.next_element_seed(Coordinate)? {
                Some(x) => *slot = x,
                None => {
                    self.cursor.coordinate.set(None);
                    return Err(de::Error::invalid_length(j, &self));
                }
            }
        }
        self.cursor.coordinate.set(None);
        if seq.next_element::<IgnoredAny>()?.is_some() {
            let mut found = 9;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                found += 1;
            }
            return Err(de::Error::invalid_length(found, &self));
        }
        Ok(row)
    }
}

/// Reads one coordinate as an `f32`.
///
/// It asks for an `f32` (`deserialize_f32`): with serde_json's
/// `float_roundtrip` feature (on in this workspace) the decimal is rounded
/// once, correctly, to `f32`, and a number beyond `f32`'s range is an
/// error ("number out of range"), never an infinity.
struct Coordinate;

impl<'de> DeserializeSeed<'de> for Coordinate {
    type Value = f32;

    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<f32, D::Error> {
        deserializer.deserialize_f32(self)
    }
}

impl Visitor<'_> for Coordinate {
    type Value = f32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a finite number")
    }

    #[inline]
    fn visit_f32<E: de::Error>(self, v: f32) -> Result<f32, E> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v.into()), &self))
        }
    }

    #[inline]
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f32, E> {
        // serde_json already rounded a decimal to an f32 (held in the f64),
        // so this cast is exact; the check guards other inputs.
        let rounded = v as f32;
        if f64::from(rounded) != v && is_f32_midpoint(v, rounded) {
            // The one number serde_json hands over unrounded to f32: an
            // integer in (−2^64, −2^63], rounded to f64 first. Rounding
            // that again is right unless the f64 is exactly halfway between
            // two f32s, where the digits it lost decide: refuse rather than
            // guess.
            return Err(E::custom(
                "an integer below -2^63 this close to halfway between two f32 values \
                 cannot be rounded exactly (the JSON parser rounds it to f64 first); \
                 write it with an exponent (as -9.3e18, not -9300000000000000000)",
            ));
        }
        self.visit_f32(rounded)
    }

    #[inline]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f32, E> {
        Ok(v as f32)
    }

    #[inline]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f32, E> {
        Ok(v as f32)
    }
}

/// Whether `v` (finite) lies exactly halfway between `nearest` (`v` rounded
/// to `f32`) and the `f32` on its other side.
fn is_f32_midpoint(v: f64, nearest: f32) -> bool {
    // The neighbour on `v`'s other side.
    let other = if f64::from(nearest) < v {
        nearest.next_up()
    } else {
        nearest.next_down()
    };
    v.is_finite() && (v - f64::from(nearest)).abs() == (f64::from(other) - v).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> String {
        from_str(text, Policy::Strict).unwrap_err().to_string()
    }

    #[test]
    fn negative_integers_beyond_i64_are_rounded_once_or_refused() {
        let read = |n: &str| {
            from_str(&format!("[[{n},0,0,0,0,0,0,0]]"), Policy::Trusted)
                .map(|v| v[0].as_array()[0].to_bits())
        };
        // serde_json rounds these to f64 before hydron sees them. Away from
        // an f32 midpoint that is harmless: the nearest f32, as for the
        // same number written with an exponent.
        for n in [
            "-9223372036854775808",  // -2^63: an i64
            "-9223372036854775809",  // just beyond
            "-9223373136366403584",  // -(2^63 + 2^40), an f32
            "-18446744073709551615", // -(2^64 - 1)
            "-9223372586610591000",  // 2^39 + 1303 above 2^63: past the midpoint's f64 reach
        ] {
            let digits = n.trim_end_matches('0');
            let exponent = format!("{digits}e{}", n.len() - digits.len());
            assert_eq!(
                read(n).unwrap(),
                read(&exponent).unwrap(),
                "{n} vs {exponent}"
            );
        }
        // 2^63 + 2^39 is halfway between two f32 values; 2^63 + 2^39 + 1 is
        // above it, but its f64 is the midpoint, whose f32 rounding goes
        // down: refused, not read as -2^63.
        for n in [
            "-9223372586610589697",
            "-9223372586610589696",
            "-9223372586610588800",
        ] {
            let err = read(n).unwrap_err().to_string();
            assert!(err.contains("write it with an exponent"), "{n}: {err}");
        }
        assert_eq!(read("-9.223372586610589697e18").unwrap(), 0xdf00_0001);
        assert_eq!(read("9223372586610589697").unwrap(), 0x5f00_0001);
    }

    #[test]
    fn errors_name_line_column_vector_and_coordinate() {
        assert_eq!(
            msg("[[0,0,0,0,0,0,0,1],\n [0,0,NaN,0,0,0,0,1]]"),
            "JSON error at line 2, column 7: vector 1, coordinate 2: expected value \
             (JSON has no NaN or infinity; coordinates must be finite numbers)"
        );
        assert_eq!(
            msg("[[0,0,0,0,0,0,0,-Infinity]]"),
            "JSON error at line 1, column 18: vector 0, coordinate 7: invalid number \
             (JSON has no NaN or infinity; coordinates must be finite numbers)"
        );
        assert_eq!(
            msg("[[0,0,0,0,0,0,0,1,0]]"),
            "JSON error at line 1, column 20: vector 0: invalid length 9, expected an array of 8 numbers"
        );
        assert_eq!(
            msg("[[0,0,0,0,\"1\",0,0,0]]"),
            "JSON error at line 1, column 13: vector 0, coordinate 4: invalid type: string \"1\", expected a finite number"
        );
        assert_eq!(
            msg("[[0,0,0,0,0,0,0,1]] x"),
            "JSON error at line 1, column 21: trailing characters"
        );
        assert_eq!(
            msg("  "),
            "JSON error at line 1, column 2: EOF while parsing a value"
        );
        assert_eq!(
            msg("[[0,0,0,0,0,0,0,3.5e38]]"),
            "JSON error at line 1, column 22: vector 0, coordinate 7: number out of range"
        );
        assert_eq!(
            msg("[[[0],0,0,0,0,0,0,1]]"),
            "JSON error at line 1, column 2: vector 0, coordinate 0: invalid type: sequence, expected a finite number"
        );
        assert_eq!(
            msg("{\"a\": 1}"),
            "JSON error at line 1, column 0: invalid type: map, expected an array of vectors, each an array of 8 numbers"
        );
    }

    #[test]
    fn validation_errors_name_vector_and_coordinate() {
        // 1e-50 rounds to 0 (an exact decimal, correctly rounded); the norm check
        // then names the vector.
        let err = from_str("[[0,0,0,0,0,0,0,1],[0,0,0,0,0,0,0,0.5]]", Policy::Strict).unwrap_err();
        assert!(
            matches!(err, CodecError::InvalidVector { index: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn largest_f32_parses_and_the_next_decimal_up_is_out_of_range() {
        let max = format!("[[0,0,0,0,0,0,0,{}]]", f32::MAX);
        let v = from_str(&max, Policy::Trusted).unwrap();
        assert_eq!(v[0][7], f32::MAX);
        assert!(
            msg("[[0,0,0,0,0,0,0,340282360000000000000000000000000000000]]")
                .contains("out of range")
        );
        assert!(msg("[[0,0,0,0,0,0,0,1e39]]").contains("out of range"));
    }
}
