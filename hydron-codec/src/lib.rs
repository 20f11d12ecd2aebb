//! # hydron-codec
//!
//! Validated encodings for hydron's [`Gf8`](hydron_core::Gf8) data: Apache
//! Fory binary behind the `fory` feature, serde JSON behind the `json`
//! feature, and a checksummed, chunked file container for either.
//!
//! Decoding validates by default ([`Policy::Strict`]): bad bytes or bad
//! numbers give a [`CodecError`] that says what and where, never a panic
//! and never a silently wrong vector.
//!
//! - `fory` — single vectors, dense batches (read by Python's `pyfory` as a
//!   numpy array) and one-byte E8 codes; `register` for your own fory types.
//! - `json` — `[x0, …, x7]` per vector, batches, JSON Lines; bit-exact f32.
//! - `file` — `save`/`load` and streaming `FileWriter`/`FileReader`: chunked,
//!   a CRC-32 per chunk, atomic saves; the format is detected on load.
//! - `arrow` — vectors as Arrow `FixedSizeList<Float32, 8>` arrays and codes
//!   as `UInt8` arrays: zero-copy export, in-place validated import.
//! - `parquet` — Parquet files of vectors and codes, streamed by row group,
//!   saved atomically; reads what pyarrow, Polars and DuckDB write.
//! - `destination` — the rule every save follows for what a path names (a
//!   file replaced atomically, a pipe or device written directly).
//!
//! Every byte is specified in `docs/format.md`.
//!
//! ```
//! # #[cfg(feature = "fory")] {
//! use hydron_codec::{fory, CodecError, Policy};
//! use hydron_core::E8_ROOTS;
//!
//! let bytes = fory::encode_batch(&E8_ROOTS);
//! assert_eq!(fory::decode_batch(&bytes, Policy::Strict)?, E8_ROOTS);
//! let err = fory::decode_batch(&bytes[..bytes.len() - 1], Policy::Strict).unwrap_err();
//! assert!(matches!(err, CodecError::UnexpectedEnd { .. } | CodecError::BadLength { .. }));
//! # }
//! # Ok::<(), hydron_codec::CodecError>(())
//! ```
#![warn(missing_docs)]

mod error;
#[cfg(any(feature = "fory", feature = "arrow"))]
mod payload;
mod policy;
#[cfg(any(feature = "fory", feature = "json", feature = "parquet"))]
mod save;

#[cfg(feature = "arrow")]
pub mod arrow;
pub mod destination;
#[cfg(any(feature = "fory", feature = "json"))]
pub mod file;
#[cfg(feature = "fory")]
pub mod fory;
#[cfg(feature = "json")]
pub mod json;
#[cfg(feature = "parquet")]
pub mod parquet;

pub use error::CodecError;
pub use policy::Policy;
