//! JSON encoding: serde_json writes `&[[f32; 8]]` straight from the
//! vectors' memory (no intermediate `Vec<Vec<f32>>`), each `f32` as its
//! shortest round-trip decimal.

use std::io;

use hydron_core::{Gf8, Gf8Error};
use serde::Serialize;

use crate::CodecError;

/// About how many bytes one vector takes in compact JSON (8 numbers of
/// about 11 characters, commas, brackets); only a capacity hint.
const BYTES_PER_VECTOR_HINT: usize = 100;

/// Writes a batch as compact JSON `[[x0, …, x7], …]` to `writer`.
///
/// serde_json makes many small writes: give it a buffered writer
/// ([`std::io::BufWriter`]) when writing to a file or socket.
///
/// Errors: I/O errors; and a vector made with [`Gf8::new_unchecked`] that
/// holds NaN or an infinity, which JSON cannot write:
/// [`CodecError::InvalidVector`] naming the first such vector and
/// coordinate, before anything is written.
///
/// ```
/// use hydron_codec::{json, CodecError};
/// use hydron_core::Gf8;
///
/// let mut out = Vec::new();
/// json::to_writer(&mut out, &[Gf8::try_new([-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?])?;
/// assert_eq!(out, b"[[-1.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]]");
///
/// let nan = Gf8::new_unchecked([0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
/// let err = json::to_writer(Vec::new(), &[Gf8::ZERO, nan]).unwrap_err();
/// assert!(matches!(err, CodecError::InvalidVector { index: 1, .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_writer<W: io::Write>(writer: W, vectors: &[Gf8]) -> Result<(), CodecError> {
    check_finite(vectors, 0)?;
    serde_json::to_writer(writer, Gf8::slice_as_arrays(vectors))
        .map_err(|e| CodecError::Io(e.into()))
}

/// Refuses the first vector holding NaN or an infinity (JSON has no such
/// numbers), numbering the vectors from `first`.
pub(crate) fn check_finite(vectors: &[Gf8], first: u64) -> Result<(), CodecError> {
    for (i, v) in vectors.iter().enumerate() {
        if let Some(error) = non_finite(v.as_array()) {
            return Err(CodecError::InvalidVector {
                index: first + i as u64,
                error,
            });
        }
    }
    Ok(())
}

/// The error for the first non-finite coordinate, if any.
fn non_finite(coords: &[f32; 8]) -> Option<Gf8Error> {
    coords.iter().enumerate().find_map(|(coordinate, &value)| {
        if value.is_nan() {
            Some(Gf8Error::NotANumber { coordinate })
        } else if value.is_infinite() {
            Some(Gf8Error::Infinite { coordinate, value })
        } else {
            None
        }
    })
}

/// Encodes a batch as compact JSON bytes `[[x0, …, x7], …]`.
///
/// Infallible: a vector made with [`Gf8::new_unchecked`] that holds NaN
/// or an infinity is written with `null` there (JSON has no such numbers),
/// which every decoder here rejects; [`to_writer`] refuses it instead.
///
/// ```
/// use hydron_codec::{json, Policy};
/// use hydron_core::Gf8;
///
/// let v = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
/// let bytes = json::to_vec(&[v]);
/// assert_eq!(json::from_slice(&bytes, Policy::Strict)?, [v]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn to_vec(vectors: &[Gf8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + vectors.len().saturating_mul(BYTES_PER_VECTOR_HINT));
    Gf8::slice_as_arrays(vectors)
        .serialize(&mut serde_json::Serializer::new(&mut out))
        .expect("serializing f32 arrays into a Vec cannot fail");
    out
}

/// Encodes a batch as a compact JSON string `[[x0, …, x7], …]`.
///
/// ```
/// use hydron_codec::json;
/// assert_eq!(json::to_string(&[]), "[]");
/// ```
#[must_use]
pub fn to_string(vectors: &[Gf8]) -> String {
    String::from_utf8(to_vec(vectors)).expect("serde_json writes UTF-8")
}

/// Encodes one vector as compact JSON bytes `[x0, …, x7]`.
///
/// Infallible: a vector made with [`Gf8::new_unchecked`] that holds NaN
/// or an infinity is written with `null` there (JSON has no such numbers),
/// which every decoder here rejects; [`to_writer`] refuses it instead.
///
/// ```
/// use hydron_codec::json;
/// use hydron_core::Gf8;
/// assert_eq!(json::gf8_to_vec(Gf8::ZERO), b"[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]");
/// ```
#[must_use]
pub fn gf8_to_vec(vector: Gf8) -> Vec<u8> {
    let mut out = Vec::with_capacity(BYTES_PER_VECTOR_HINT);
    write_row(&mut out, &vector);
    out
}

/// Encodes one vector as a compact JSON string `[x0, …, x7]`.
///
/// ```
/// use hydron_codec::json;
/// use hydron_core::Gf8;
/// let v = Gf8::normalize([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0])?;
/// assert_eq!(json::gf8_to_string(v), "[0.0,0.0,0.0,0.0,0.0,0.0,0.70710677,0.70710677]");
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[must_use]
pub fn gf8_to_string(vector: Gf8) -> String {
    String::from_utf8(gf8_to_vec(vector)).expect("serde_json writes UTF-8")
}

/// Appends `[x0,…,x7]` (compact, no newline) to `out`.
#[inline]
pub(crate) fn write_row(out: &mut Vec<u8>, vector: &Gf8) {
    vector
        .as_array()
        .serialize(&mut serde_json::Serializer::new(out))
        .expect("serializing an f32 array into a Vec cannot fail");
}
