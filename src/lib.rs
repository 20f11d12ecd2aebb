//! hydron: 8-dimensional geometry on the E8 lattice, and fast encodings for it.
//!
//! This crate re-exports [`hydron_core`] (the math) and [`hydron_codec`] (the
//! encodings), and forwards their cargo features.
pub use hydron_codec as codec;
pub use hydron_core as core;
pub use hydron_core::*;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
