//! # hydron-codec
//!
//! Validated encodings for hydron's [`Gf8`](hydron_core::Gf8) data: Apache
//! Fory binary behind the `fory` feature, serde JSON behind the `json`
//! feature, and a checksummed, chunked file container for either.
//!
//! Decoding validates by default ([`Policy::Strict`]): bad bytes or bad
//! numbers give a [`CodecError`] that says what and where, never a panic
//! and never a silently wrong vector.
#![warn(missing_docs)]

mod error;
mod policy;

#[cfg(any(feature = "fory", feature = "json"))]
pub mod file;
#[cfg(feature = "fory")]
pub mod fory;
#[cfg(feature = "json")]
pub mod json;

pub use error::CodecError;
pub use policy::Policy;
