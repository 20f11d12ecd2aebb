//! # hydron-core
//!
//! Geometry in eight dimensions: [`Gf8`], a unit vector on the sphere S^7
//! (or the zero vector); the E8 lattice ([`E8Root`], [`E8Point`]); sphere
//! geometry (geodesic distance, slerp, spherical mean); and batch kernels
//! over slices of vectors in [`batch`], vectorized with `wide` behind the
//! `simd` feature and split across cores behind the `parallel` feature.
//!
//! ```
//! use hydron_core::Gf8;
//!
//! let v = Gf8::normalize([3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
//! assert!((v.norm() - 1.0).abs() < 1e-6);
//! let root = v.nearest_root();
//! assert!(root.to_gf8().dot(v) > 0.9);
//! # Ok::<(), hydron_core::Gf8Error>(())
//! ```
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod e8;
mod error;
mod gf8;
mod lattice;
mod sphere;
#[cfg(target_arch = "x86_64")]
mod sse2;

pub mod batch;
pub mod gf8_codes;
pub mod huge;
#[cfg(feature = "parallel")]
pub mod parallel;
pub mod quant;
mod simd;

#[cfg(feature = "approx")]
mod impl_approx;
#[cfg(feature = "fory")]
mod impl_fory;
#[cfg(feature = "serde")]
mod impl_serde;

/// The precondition rule of hydron's tests (`HYDRON_REQUIRE_ALL`), for the
/// unit tests here as for the integration tests.
/// (Its callers are x86-64 and Linux tests: unused on wasm32.)
#[cfg(test)]
#[cfg_attr(target_family = "wasm", allow(dead_code))]
#[path = "../tests/common/precondition.rs"]
mod precondition;

pub use e8::{E8Root, E8_ROOTS, E8_ROOT_COUNT};
pub use error::{BatchError, Gf8Error};
pub use gf8::{Gf8, NORM_TOLERANCE};
pub use lattice::E8Point;
pub use quant::{LatticeQuantizer, QuantError};
