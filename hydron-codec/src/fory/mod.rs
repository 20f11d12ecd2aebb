//! Apache Fory binary encoding (features `fory-messages` and `fory`):
//! validated, fast, and byte-compatible with fory 1.7.7 in Rust and pyfory
//! 1.7.7 in Python.
//!
//! The feature `fory-messages` gives the three messages below (their
//! encoders, decoders, type ids and limits) and the binary form of the
//! [`file`](crate::file) container, read and written by hand, without the
//! fory crate. The feature `fory` adds [generic
//! fory](#generic-fory-feature-fory) through the fory crate: [`register`],
//! [`xlang_fory`], the fory structs [`Gf8Batch`] and [`E8Codes`], and
//! [`deserialize_exact`].
//!
//! Three messages, each exactly what fory itself writes for a registered
//! type (tests prove it byte for byte, both directions), but read and
//! written here by hand so that a batch is one `memcpy` plus a SIMD check:
//!
//! | message | functions | fory type | bytes |
//! |---|---|---|---|
//! | one vector | [`encode_gf8`], [`decode_gf8`] | [`Gf8`] as an EXT value, id [`GF8_TYPE_ID`] | 37 |
//! | a batch | [`encode_batch`], [`decode_batch`] | [`Gf8Batch`]: one float32 array, id [`GF8_BATCH_TYPE_ID`] | 26 + 32·N at most |
//! | E8 codes | [`encode_codes`], [`decode_codes`] | [`E8Codes`]: one uint8 array, id [`E8_CODES_TYPE_ID`] | 26 + N at most |
//!
//! Decoding is strict about framing: the header, type ids and type meta
//! must match, a length must be a whole number of elements and account for
//! every remaining byte (no trailing bytes), and nothing is allocated before
//! the input is known to hold it. The numbers are then checked by a
//! [`Policy`]. Every failure is a [`CodecError`] that names the byte offset,
//! or the vector and coordinate; no input makes a decoder panic.
//!
//! Encoding writes fory's **xlang, compatible** mode (the default of both
//! `fory::Fory::default()` and `pyfory.Fory(xlang=True)`). Decoding also
//! accepts the native-mode header (`0x00`) and the schema-consistent
//! struct form (`compatible(false)` in Rust, `compatible=False` in Python).
//! There is no separate native encoding: for these messages it differs in
//! one header bit and is not faster.
//!
//! ```
//! use hydron_codec::{fory, Policy};
//! use hydron_core::Gf8;
//!
//! let batch = vec![Gf8::from_scalar(1.0)?, Gf8::ZERO];
//! let bytes = fory::encode_batch(&batch);
//! assert_eq!(fory::decode_batch(&bytes, Policy::Strict)?, batch);
//!
//! let one = fory::encode_gf8(batch[0]);
//! assert_eq!(fory::decode_gf8(&one, Policy::Strict)?, batch[0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Generic fory (feature `fory`)
//!
//! To put these types inside your own fory structs, [`register`] them (or
//! start from [`xlang_fory`]). In Python, declare and register the same
//! types with the same ids:
//!
//! ```python
//! from dataclasses import dataclass
//! import numpy as np, pyfory
//! from pyfory.serializer import Serializer
//!
//! @dataclass
//! class Gf8Batch:                       # type_id 2401
//!     values: pyfory.NDArray[pyfory.Float32] = None   # 8*N coordinates
//!
//! @dataclass
//! class E8Codes:                        # type_id 2402
//!     codes: pyfory.NDArray[pyfory.UInt8] = None      # N codes
//!
//! class Gf8:                            # type_id 2400, an EXT type
//!     def __init__(self, coords): self.coords = np.asarray(coords, dtype="<f4")
//!
//! class Gf8Serializer(Serializer):
//!     def write(self, ctx, value): ctx.write_bytes(value.coords.astype("<f4").tobytes())
//!     def read(self, ctx): return Gf8(np.frombuffer(ctx.read_bytes(32), dtype="<f4"))
//!
//! fory = pyfory.Fory(xlang=True)        # compatible mode: the default
//! fory.register_type(Gf8Batch, type_id=2401)
//! fory.register_type(E8Codes, type_id=2402)
//! fory.register_type(Gf8, type_id=2400, serializer=Gf8Serializer(fory.type_resolver, Gf8))
//! ```
//!
//! # Generic fory: what is checked, and what is not
//!
//! Read through `fory.deserialize` (after [`register`]), hydron's own
//! serializers check everything they can see, wherever fory reads them (a
//! root value, a field of your struct, an element of a list):
//!
//! - the numbers: every vector as by [`Policy::Strict`], every code below
//!   240;
//! - the framing of a [`Gf8Batch`] or [`E8Codes`] body: the array length a
//!   whole number of vectors, in shortest varint form, and no longer than
//!   the input (checked before allocating);
//! - the type: in compatible mode the type meta byte for byte against the
//!   registered one (fory itself compares only the 52-bit hash in the
//!   meta's header and skips the body unread, so a meta naming id 2403, or
//!   another field name or type, under the same header was taken for a
//!   `Gf8Batch`), and a new meta's number; for a root [`Gf8`], its type id
//!   in shortest varint form;
//! - the reference flag: a null flag (`-3`) is an error, not an empty batch
//!   or [`Gf8::ZERO`] (an optional value is an `Option<Gf8Batch>`, which
//!   reads null as `None`); so is a back-reference, or a tracked-value flag
//!   when tracking is off.
//!
//! Two checks need the whole message, and `fory.deserialize` makes neither:
//! use [`deserialize_exact`], which does both and returns a [`CodecError`]
//! with the byte offset:
//!
//! - **trailing bytes**: fory stops after the root value and ignores the
//!   rest, so a batch whose length prefix is 32 bytes short reads as its
//!   first vectors;
//! - **a null root** of your own struct: fory reads the message `01 fd` as
//!   the struct's default.
//!
//! What remains in fory 1.7.7's own `Fory::deserialize`, even through
//! [`deserialize_exact`]:
//!
//! - a **null element of a list** (`Vec<Gf8>`, `Vec<Gf8Batch>`, … sent
//!   with the list's has-null flag, e.g. from a sender's
//!   `Vec<Option<Gf8>>`) reads as the default (`Gf8::ZERO`, an empty
//!   batch): fory does not call hydron's reader for it, and the default it
//!   asks for is the one a field missing from an older sender's struct
//!   must get;
//! - a **field missing** from the sender's struct reads as that default,
//!   by design of compatible mode;
//! - a type meta in front of a **field or list element** (not a root) is
//!   found by looking back from the body, and only in the one-byte size
//!   form; a meta in fory's extended size form (size byte `0xff`), which no
//!   writer uses for hydron's 9-byte metas, is not checked there;
//! - the type id of a **`Gf8` field** (not a root) is read by fory's
//!   lenient varint reader (a padded form of 2400 still means 2400);
//! - fory's own types (strings, lists, maps, your derived structs) keep
//!   fory's checks: its varint reader accepts padded forms and drops bits
//!   above 32, and a schema-consistent `Fory` built with
//!   `check_struct_version(false)` checks no schema;
//! - a **list of `Gf8`** (or of `Gf8Batch`, `E8Codes`) sent with
//!   reference tracking (pyfory's `ref=True` sets the list header's
//!   tracking bit and puts a flag before each element): fory 1.7.7 ignores
//!   the bit for these types and reads each element one byte early. The
//!   `Gf8` check refuses almost all such data, but crafted vectors can
//!   pass and read wrong; have senders of such lists write with `ref=False`
//!   (pyfory's default).
//!
//! For a `Gf8Batch`, `E8Codes` or `Gf8` on its own, prefer the
//! hand-written decoders above: they check the whole message, are faster,
//! and take a [`Policy`]. [`deserialize_exact`] never accepts a message
//! they reject, nor decodes one differently (a property test holds it to
//! them); it refuses some they accept (the schema-consistent form, which a
//! compatible `Fory` never writes).
//!
//! The exact bytes of every message are in `docs/format.md`.

// Link targets, in docs compiled without `fory`, for the items it gives.
#![cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]

mod batch;
mod codes;
#[cfg(feature = "fory")]
mod exact;
mod single;
#[cfg(feature = "fory")]
mod structs;
pub(crate) mod wire;

pub(crate) use batch::array_len_after as batch_array_len_after;
#[cfg(all(feature = "parallel", target_endian = "little"))]
pub(crate) use batch::HEAD_MAX as BATCH_HEAD_MAX;
pub(crate) use batch::{
    exact_len as batch_exact_len, head as batch_head, le_bytes as batch_le_bytes,
};

#[cfg(feature = "fory")]
pub use exact::deserialize_exact;
#[cfg(feature = "fory")]
pub use structs::{E8Codes, Gf8Batch, E8_CODES_TYPE_INDEX, GF8_BATCH_TYPE_INDEX};

#[cfg(feature = "fory")]
use ::fory::Fory;
use hydron_core::{E8Root, Gf8};

use crate::{CodecError, Policy};

/// The fory user type id of [`Gf8`] (an EXT type: 32 bytes, 8 little-endian
/// `f32`).
///
/// ```
/// assert_eq!(hydron_codec::fory::GF8_TYPE_ID, 2400);
/// ```
pub const GF8_TYPE_ID: u32 = 2400;

/// The fory user type id of [`Gf8Batch`].
///
/// ```
/// assert_eq!(hydron_codec::fory::GF8_BATCH_TYPE_ID, 2401);
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub const GF8_BATCH_TYPE_ID: u32 = 2401;

/// The fory user type id of [`E8Codes`].
///
/// ```
/// assert_eq!(hydron_codec::fory::E8_CODES_TYPE_ID, 2402);
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub const E8_CODES_TYPE_ID: u32 = 2402;

/// The name [`register_by_name`] gives [`Gf8`] (namespace `hydron`).
///
/// ```
/// assert_eq!(hydron_codec::fory::GF8_TYPE_NAME, "hydron.Gf8");
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub const GF8_TYPE_NAME: &str = "hydron.Gf8";

/// The name [`register_by_name`] gives [`Gf8Batch`].
///
/// ```
/// assert_eq!(hydron_codec::fory::GF8_BATCH_TYPE_NAME, "hydron.Gf8Batch");
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub const GF8_BATCH_TYPE_NAME: &str = "hydron.Gf8Batch";

/// The name [`register_by_name`] gives [`E8Codes`].
///
/// ```
/// assert_eq!(hydron_codec::fory::E8_CODES_TYPE_NAME, "hydron.E8Codes");
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub const E8_CODES_TYPE_NAME: &str = "hydron.E8Codes";

/// The field name of [`Gf8Batch`]'s float32 array (matters to other
/// languages: compatible mode matches fields by name).
///
/// ```
/// assert_eq!(hydron_codec::fory::GF8_BATCH_FIELD, "values");
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub const GF8_BATCH_FIELD: &str = "values";

/// The field name of [`E8Codes`]'s uint8 array.
///
/// ```
/// assert_eq!(hydron_codec::fory::E8_CODES_FIELD, "codes");
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub const E8_CODES_FIELD: &str = "codes";

/// Length of a single-vector message: 5 bytes of framing, 32 of data.
///
/// ```
/// use hydron_codec::fory;
/// assert_eq!(fory::encode_gf8(hydron_core::Gf8::ZERO).len(), fory::GF8_MESSAGE_LEN);
/// ```
pub const GF8_MESSAGE_LEN: usize = 37;

/// The most vectors one batch message holds: fory writes array lengths as
/// 32-bit byte counts, so `32 · N < 2^32`. Larger data must be split (the
/// file container does).
///
/// ```
/// assert_eq!(hydron_codec::fory::MAX_BATCH_LEN, 134_217_727);
/// ```
pub const MAX_BATCH_LEN: usize = (u32::MAX / 32) as usize;

/// The most codes one [`encode_codes`] message holds (`2^32 − 1`).
///
/// ```
/// assert_eq!(hydron_codec::fory::MAX_CODES_LEN, u32::MAX as usize);
/// ```
pub const MAX_CODES_LEN: usize = u32::MAX as usize;

/// Encodes a batch as one [`Gf8Batch`] message.
///
/// # Panics
///
/// If `vectors` is longer than [`MAX_BATCH_LEN`] (4 GiB of data), which
/// fory's 32-bit lengths cannot describe. [`try_encode_batch`] returns an
/// error instead.
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
///
/// let bytes = fory::encode_batch(&[Gf8::ZERO; 3]);
/// assert_eq!(bytes.len(), 21 + 1 + 3 * 32); // header, length varint, data
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
#[must_use]
pub fn encode_batch(vectors: &[Gf8]) -> Vec<u8> {
    let mut buf = Vec::new();
    encode_batch_into(vectors, &mut buf);
    buf
}

/// Appends one [`Gf8Batch`] message to `buf`.
///
/// # Panics
///
/// As [`encode_batch`]; [`try_encode_batch_into`] returns an error instead.
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
///
/// let mut buf = Vec::new();
/// fory::encode_batch_into(&[Gf8::ZERO], &mut buf);
/// assert_eq!(buf, fory::encode_batch(&[Gf8::ZERO]));
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub fn encode_batch_into(vectors: &[Gf8], buf: &mut Vec<u8>) {
    if let Err(e) = batch::try_encode_into(vectors, buf) {
        panic!("{e}");
    }
}

/// Encodes a batch, or returns [`CodecError::TooLarge`] for more than
/// [`MAX_BATCH_LEN`] vectors.
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
/// assert_eq!(fory::try_encode_batch(&[Gf8::ZERO])?, fory::encode_batch(&[Gf8::ZERO]));
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn try_encode_batch(vectors: &[Gf8]) -> Result<Vec<u8>, CodecError> {
    let mut buf = Vec::new();
    batch::try_encode_into(vectors, &mut buf)?;
    Ok(buf)
}

/// Appends one batch message to `buf`, or returns
/// [`CodecError::TooLarge`] (leaving `buf` unchanged) for more than
/// [`MAX_BATCH_LEN`] vectors.
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
/// let mut buf = vec![];
/// fory::try_encode_batch_into(&[Gf8::ZERO], &mut buf)?;
/// assert_eq!(buf.len(), 54);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn try_encode_batch_into(vectors: &[Gf8], buf: &mut Vec<u8>) -> Result<(), CodecError> {
    batch::try_encode_into(vectors, buf)
}

/// The exact length in bytes of the batch message of `n` vectors, or
/// [`CodecError::TooLarge`] for more than [`MAX_BATCH_LEN`]. With
/// [`encode_batch_uninit`], a message is written straight into memory the
/// caller allocated (a Python `bytes` object, say).
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
/// assert_eq!(fory::batch_len(3)?, fory::encode_batch(&[Gf8::ZERO; 3]).len());
/// assert!(fory::batch_len(fory::MAX_BATCH_LEN + 1).is_err());
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn batch_len(n: usize) -> Result<usize, CodecError> {
    batch::check_len(n)?;
    Ok(batch::exact_len(n))
}

/// Writes the batch message of `vectors` at the start of `out`, memory
/// that need not be initialized (nothing is zeroed first, and every byte
/// of the message is written once), and returns those
/// [`batch_len`]`(vectors.len())` bytes. The rest of `out` is left as it
/// was. [`CodecError::TooLarge`] if the message does not fit in `out` or
/// in one message, and nothing is written.
///
/// ```
/// use std::mem::MaybeUninit;
/// use hydron_codec::fory;
/// use hydron_core::E8_ROOTS;
///
/// let mut buf = vec![MaybeUninit::<u8>::uninit(); fory::batch_len(E8_ROOTS.len())?];
/// let message = fory::encode_batch_uninit(&E8_ROOTS, &mut buf)?;
/// assert_eq!(message, &fory::encode_batch(&E8_ROOTS)[..]);
/// let mut small = [MaybeUninit::<u8>::uninit(); 8];
/// assert!(fory::encode_batch_uninit(&E8_ROOTS, &mut small).is_err());
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn encode_batch_uninit<'a>(
    vectors: &[Gf8],
    out: &'a mut [core::mem::MaybeUninit<u8>],
) -> Result<&'a mut [u8], CodecError> {
    let needed = batch_len(vectors.len())?;
    if needed > out.len() {
        return Err(CodecError::TooLarge {
            length: needed as u64,
            limit: out.len() as u64,
            what: "the output buffer",
        });
    }
    let mut cursor = crate::uninit::Cursor::new(out);
    batch::write_uninit(vectors, &mut cursor);
    Ok(cursor.written())
}

/// Decodes one [`Gf8Batch`] message, checking every vector by `policy`.
///
/// The input must be exactly one message. Memory: one allocation of
/// exactly the decoded size, made after the length has been checked
/// against the input.
///
/// ```
/// use hydron_codec::{fory, CodecError, Policy};
/// use hydron_core::Gf8;
///
/// let mut bytes = fory::encode_batch(&[Gf8::ZERO, Gf8::ZERO]);
/// assert_eq!(fory::decode_batch(&bytes, Policy::Strict)?.len(), 2);
///
/// let n = bytes.len();
/// bytes[n - 4..].copy_from_slice(&f32::NAN.to_le_bytes()); // vector 1, coordinate 7
/// let err = fory::decode_batch(&bytes, Policy::Strict).unwrap_err();
/// assert_eq!(err.to_string(), "vector 1: coordinate 7 is NaN");
///
/// bytes.push(0);
/// let err = fory::decode_batch(&bytes, Policy::Strict).unwrap_err();
/// assert!(matches!(err, CodecError::TrailingBytes { count: 1, .. }));
/// # Ok::<(), CodecError>(())
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub fn decode_batch(input: &[u8], policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    batch::decode(input, policy)
}

/// Decodes one [`Gf8Batch`] message and appends its vectors to `out`
/// (reusing its capacity), checking every vector by `policy`. Error
/// indexes count from the message's first vector. On error, `out` is left
/// as it was.
///
/// ```
/// use hydron_codec::{fory, Policy};
/// use hydron_core::Gf8;
///
/// let mut out = vec![Gf8::ZERO];
/// fory::decode_batch_into(&fory::encode_batch(&[Gf8::ZERO; 2]), Policy::Strict, &mut out)?;
/// assert_eq!(out.len(), 3);
/// assert!(fory::decode_batch_into(b"junk", Policy::Strict, &mut out).is_err());
/// assert_eq!(out.len(), 3);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub fn decode_batch_into(
    input: &[u8],
    policy: Policy,
    out: &mut Vec<Gf8>,
) -> Result<(), CodecError> {
    batch::decode_into(input, policy, out)
}

/// Encodes one vector as a single-vector message: exactly what
/// `fory.serialize(&v)` writes after [`register`].
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
/// assert_eq!(fory::encode_gf8(Gf8::ZERO).len(), 37);
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
#[inline]
#[must_use]
pub fn encode_gf8(v: Gf8) -> Vec<u8> {
    single::encode_array(v).to_vec()
}

/// Appends one single-vector message to `buf`.
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
/// let mut buf = vec![];
/// fory::encode_gf8_into(Gf8::ZERO, &mut buf);
/// assert_eq!(buf, fory::encode_gf8(Gf8::ZERO));
/// ```
#[inline]
pub fn encode_gf8_into(v: Gf8, buf: &mut Vec<u8>) {
    buf.extend_from_slice(&single::encode_array(v));
}

/// The single-vector message as a fixed-size array, without allocating.
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
/// let bytes: [u8; fory::GF8_MESSAGE_LEN] = fory::encode_gf8_array(Gf8::ZERO);
/// assert_eq!(bytes[..], fory::encode_gf8(Gf8::ZERO)[..]);
/// ```
#[inline]
#[must_use]
pub fn encode_gf8_array(v: Gf8) -> [u8; GF8_MESSAGE_LEN] {
    single::encode_array(v)
}

/// Decodes one single-vector message, checking it by `policy` (errors say
/// `vector 0`).
///
/// ```
/// use hydron_codec::{fory, Policy};
/// use hydron_core::Gf8;
///
/// let v = Gf8::from_scalar(-1.0)?;
/// assert_eq!(fory::decode_gf8(&fory::encode_gf8(v), Policy::Strict)?, v);
/// let err = fory::decode_gf8(b"{\"x\": 1}", Policy::Strict).unwrap_err();
/// assert_eq!(err.to_string(), "byte offset 0: found 0x7b, expected a fory header bitmap: 0x01 (xlang) or 0x00 (native)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[inline]
pub fn decode_gf8(input: &[u8], policy: Policy) -> Result<Gf8, CodecError> {
    single::decode(input, policy)
}

/// Encodes E8 root codes as one [`E8Codes`] message (one byte per vector).
///
/// # Panics
///
/// For more than [`MAX_CODES_LEN`] codes; [`try_encode_codes`] returns an
/// error instead.
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::Gf8;
///
/// let v = Gf8::normalize([1.0, 0.9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1])?;
/// let bytes = fory::encode_codes(&[v.nearest_root()]);
/// assert_eq!(bytes.len(), 21 + 1 + 1);
/// assert_eq!(fory::decode_codes(&bytes)?, [v.nearest_root()]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
#[must_use]
pub fn encode_codes(roots: &[E8Root]) -> Vec<u8> {
    match try_encode_codes(roots) {
        Ok(buf) => buf,
        Err(e) => panic!("{e}"),
    }
}

/// Encodes E8 root codes, or returns [`CodecError::TooLarge`] for more than
/// [`MAX_CODES_LEN`].
///
/// ```
/// use hydron_codec::fory;
/// assert_eq!(fory::try_encode_codes(&[])?.len(), 22);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn try_encode_codes(roots: &[E8Root]) -> Result<Vec<u8>, CodecError> {
    let mut buf = Vec::new();
    codes::try_encode_into(roots, &mut buf)?;
    Ok(buf)
}

/// Decodes one [`E8Codes`] message; a code of 240 or more is an error
/// naming its index.
///
/// ```
/// use hydron_codec::fory;
/// use hydron_core::E8Root;
///
/// let mut bytes = fory::encode_codes(&[E8Root::new(1)?, E8Root::new(2)?]);
/// *bytes.last_mut().unwrap() = 250;
/// let err = fory::decode_codes(&bytes).unwrap_err();
/// assert_eq!(err.to_string(), "vector 1: E8 root code 250 is out of range (0..240)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg_attr(not(feature = "fory"), doc = "", doc = fory_links!())]
pub fn decode_codes(input: &[u8]) -> Result<Vec<E8Root>, CodecError> {
    codes::decode(input)
}

/// Registers [`Gf8`], [`Gf8Batch`] and [`E8Codes`] with their fixed type
/// ids, so that they can be fields of your own fory structs and be
/// (de)serialized by `fory` directly. Works in any fory mode; in xlang
/// compatible mode the root messages are byte-identical to this module's
/// functions.
///
/// Everything fory reads is checked: a `Gf8` or the vectors of a
/// `Gf8Batch` as by [`Policy::Strict`], the codes of an `E8Codes` against
/// 240. Your own derived structs keep their derive-assigned type indexes
/// (0, 1, 2, …); hydron's structs use [`GF8_BATCH_TYPE_INDEX`] and
/// [`E8_CODES_TYPE_INDEX`], so they do not clash.
///
/// ```
/// use fory::{Fory, ForyStruct};
/// use hydron_codec::fory::{self as hfory, Gf8Batch};
/// use hydron_core::Gf8;
///
/// #[derive(ForyStruct, Debug, PartialEq)]
/// struct Scene { id: u32, up: Gf8, points: Gf8Batch }
///
/// let mut fory = Fory::default();
/// hfory::register(&mut fory)?;
/// fory.register::<Scene>(1)?;
///
/// let up = Gf8::from_scalar(1.0)?;
/// let scene = Scene { id: 7, up, points: Gf8Batch(vec![up, -up]) };
/// let back: Scene = fory.deserialize(&fory.serialize(&scene)?)?;
/// assert_eq!(back, scene);
/// assert_eq!(fory.serialize(&up)?, hfory::encode_gf8(up));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "fory")]
pub fn register(fory: &mut Fory) -> Result<(), CodecError> {
    fory.register_serializer::<Gf8>(GF8_TYPE_ID)?;
    fory.register::<Gf8Batch>(GF8_BATCH_TYPE_ID)?;
    fory.register::<E8Codes>(E8_CODES_TYPE_ID)?;
    Ok(())
}

/// Registers the same types by name ([`GF8_TYPE_NAME`],
/// [`GF8_BATCH_TYPE_NAME`], [`E8_CODES_TYPE_NAME`]) instead of by id, for
/// peers that match types by name. Larger messages, which this module's
/// fast functions do not read or write: only generic fory does.
///
/// ```
/// use fory::Fory;
/// use hydron_codec::fory as hfory;
/// use hydron_core::Gf8;
///
/// let mut fory = Fory::default();
/// hfory::register_by_name(&mut fory)?;
/// let v = Gf8::from_scalar(1.0)?;
/// assert_eq!(fory.deserialize::<Gf8>(&fory.serialize(&v)?)?, v);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "fory")]
pub fn register_by_name(fory: &mut Fory) -> Result<(), CodecError> {
    fory.register_serializer_by_name::<Gf8>(GF8_TYPE_NAME)?;
    fory.register_by_name::<Gf8Batch>(GF8_BATCH_TYPE_NAME)?;
    fory.register_by_name::<E8Codes>(E8_CODES_TYPE_NAME)?;
    Ok(())
}

/// The largest fory message hydron reads through generic fory: the largest
/// array fory can describe (4 GiB) plus room for the framing and the rest
/// of a user's struct.
#[cfg(feature = "fory")]
const GRAPH_MEMORY_LIMIT: u64 = (1 << 32) + (1 << 20);

/// A `Fory` in xlang, compatible mode (what pyfory and other languages
/// read), with hydron's types [registered](register) and the graph-memory
/// gate raised from fory's default 128 MiB to 4 GiB + 1 MiB, so that a
/// valid batch of any size fory can describe decodes. Use it to (de)serialize
/// your own structs that contain hydron types.
///
/// Dense arrays are still checked against the input length before fory
/// allocates them, so the raised gate does not let a short input claim a
/// large allocation.
///
/// ```
/// use hydron_codec::fory as hfory;
/// use hydron_core::Gf8;
///
/// let fory = hfory::xlang_fory()?;
/// assert!(fory.is_xlang() && fory.is_compatible());
/// let v = Gf8::from_scalar(1.0)?;
/// assert_eq!(fory.serialize(&v)?, hfory::encode_gf8(v));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "fory")]
pub fn xlang_fory() -> Result<Fory, CodecError> {
    build(true)
}

/// A `Fory` in native (Rust-only) compatible mode, otherwise as
/// [`xlang_fory`]. Its messages differ in the header bitmap (`0x00`), which
/// this module's decoders accept; other languages do not read them.
/// Measured no faster for hydron's types (see `benches/codec.rs`): prefer
/// [`xlang_fory`] unless every peer is Rust and the rest of your types need
/// native-only features (shared references, trait objects).
///
/// ```
/// use hydron_codec::{fory as hfory, Policy};
/// use hydron_core::Gf8;
///
/// let fory = hfory::native_fory()?;
/// let v = Gf8::from_scalar(1.0)?;
/// let bytes = fory.serialize(&v)?;
/// assert_eq!(bytes[0], 0x00);
/// assert_eq!(hfory::decode_gf8(&bytes, Policy::Strict)?, v);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "fory")]
pub fn native_fory() -> Result<Fory, CodecError> {
    build(false)
}

#[cfg(feature = "fory")]
fn build(xlang: bool) -> Result<Fory, CodecError> {
    let limit = usize::try_from(GRAPH_MEMORY_LIMIT).unwrap_or(usize::MAX);
    let mut fory = Fory::builder()
        .xlang(xlang)
        .compatible(true)
        .max_graph_memory_bytes(limit)
        .build();
    register(&mut fory)?;
    Ok(fory)
}

#[cfg(test)]
mod tests;
