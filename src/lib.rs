//! hydron: 8-dimensional geometry on the E8 lattice, and fast encodings for it.
//!
//! This crate re-exports [`hydron_core`] (the math) and [`hydron_codec`] (the
//! encodings), and forwards their cargo features (`simd`, `approx`,
//! `serde`, `fory-messages`, `fory`, `json`, …).
//!
//! ```
//! use hydron::{batch, Gf8};
//!
//! let vs = batch::normalize(&[[3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])?;
//! assert_eq!(vs[0], Gf8::try_new([0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
pub use hydron_codec as codec;
pub use hydron_core as core;
pub use hydron_core::*;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
