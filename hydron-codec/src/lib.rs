//! # hydron-codec
//!
//! Validated encodings for hydron's [`Gf8`](hydron_core::Gf8) data: Apache
//! Fory binary behind the `fory-messages` and `fory` features, serde JSON
//! behind the `json` feature, and a checksummed, chunked file container for
//! either.
//!
//! Decoding validates by default ([`Policy::Strict`]): bad bytes or bad
//! numbers give a [`CodecError`] that says what and where, never a panic
//! and never a silently wrong vector.
//!
//! - `fory-messages` — the `fory` module's three messages, read and written
//!   by hand: single vectors, dense batches (read by Python's `pyfory` as a
//!   numpy array) and one-byte E8 codes; and the binary form of `file`. No
//!   dependency on the fory crate.
//! - `fory` — `fory-messages`, plus generic fory through the fory crate:
//!   `register` (and `xlang_fory`) for your own fory types, the `Gf8Batch`
//!   and `E8Codes` fory structs, `deserialize_exact`.
//! - `json` — `[x0, …, x7]` per vector, batches, JSON Lines; bit-exact f32.
//! - `file` — `save`/`load` and streaming `FileWriter`/`FileReader`: chunked,
//!   a CRC-32 per chunk, atomic saves; the format is detected on load.
//! - `arrow` — vectors as Arrow `FixedSizeList<Float32, 8>` arrays and codes
//!   as `UInt8` arrays: zero-copy export, in-place validated import.
//! - `parquet` — Parquet files of vectors and codes, streamed by row group,
//!   saved atomically; reads what pyarrow, Polars and DuckDB write.
//! - `destination` — the rule every save follows for what a path names (a
//!   file replaced atomically, a pipe or device written directly).
//! - `save` — the temporary file of an atomic save, and the registry a
//!   signal handler empties (with any file feature).
//! - `quant` (with `fory-messages` or `parquet`) — stored lattice codes:
//!   a `LatticeQuantizer`'s (or `Gf8`'s 16/32-bit) codes with their
//!   parameters, as a fory message and as Parquet, validated on load.
//!
//! Every byte is specified in `docs/format.md`.
//!
//! ```
//! # #[cfg(feature = "fory-messages")] {
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
#[cfg(any(feature = "fory-messages", feature = "arrow"))]
mod payload;
mod policy;
#[cfg(any(feature = "fory-messages", feature = "json", feature = "parquet"))]
pub mod save;
#[cfg(feature = "fory-messages")]
mod uninit;

#[cfg(feature = "arrow")]
pub mod arrow;
pub mod destination;
#[cfg(any(feature = "fory-messages", feature = "json"))]
pub mod file;

// Link definitions for the items of `fory` that only the `fory` feature
// compiles, added to the docs that link to them when only `fory-messages`
// is on: each points to the module's section on generic fory, which names
// the feature. Used as `doc = "", doc = fory_links!()`: the empty line
// ends the paragraph before, which a definition cannot interrupt. (Defined
// before the module, which uses it.)
#[cfg(all(feature = "fory-messages", not(feature = "fory")))]
macro_rules! fory_links {
    () => {
        "[`Gf8Batch`]: crate::fory#generic-fory-feature-fory\n\
         [`E8Codes`]: crate::fory#generic-fory-feature-fory\n\
         [`register`]: crate::fory#generic-fory-feature-fory\n\
         [`register_by_name`]: crate::fory#generic-fory-feature-fory\n\
         [`xlang_fory`]: crate::fory#generic-fory-feature-fory\n\
         [`deserialize_exact`]: crate::fory#generic-fory-feature-fory"
    };
}
#[cfg(feature = "fory-messages")]
pub mod fory;
#[cfg(feature = "json")]
pub mod json;
#[cfg(feature = "parquet")]
pub mod parquet;

pub use error::CodecError;
pub use policy::Policy;
#[cfg(any(feature = "fory-messages", feature = "parquet"))]
pub mod quant;
