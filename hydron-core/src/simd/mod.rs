//! Backends of the batch kernels in [`batch`](crate::batch), one module
//! each, as glam does it:
//!
//! - [`scalar`]: plain Rust, one vector at a time. Always built; the
//!   reference for the others; public as `batch::scalar`.
//! - `portable` (feature `simd`): `wide::f32x8` in structure-of-arrays
//!   form. Its instructions are fixed when the crate is compiled (NEON on
//!   aarch64, AVX with `-C target-cpu=native`, SSE2 on the default x86-64
//!   target, `simd128` on wasm32 built with `-C target-feature=+simd128`).
//!   On wasm32 without `simd128` it is not used ([`HAS_PORTABLE`] is false):
//!   `wide` has no vector instructions there and would only emulate its
//!   eight lanes one by one.
//! - `avx2` (feature `simd`, x86-64 only): `core::arch` intrinsics compiled
//!   with `#[target_feature(enable = "avx2,fma")]`, entered only when
//!   [`has_avx2_fma`] detects the CPU features at run time, so it pays off
//!   in a plain `cargo build` on a default target.
//!
//! [`batch::Backend`](crate::batch::Backend) names them, and the dispatcher
//! in `batch.rs` is the only place that chooses between them.

pub mod scalar;

pub(crate) mod sphere;

#[cfg(feature = "simd")]
pub(crate) mod portable;

#[cfg(all(feature = "simd", target_arch = "x86_64"))]
pub(crate) mod avx2;

/// Whether the portable backend is compiled in and runs on vector
/// instructions: with the `simd` feature, on every target but wasm32
/// without `simd128`.
pub(crate) const HAS_PORTABLE: bool = cfg!(all(
    feature = "simd",
    any(not(target_arch = "wasm32"), target_feature = "simd128")
));

/// Whether this CPU has AVX2 and FMA, with or without the `simd` feature:
/// [`E8Point::nearest`](crate::E8Point::nearest)'s single-vector fast path
/// (`lattice.rs`) uses them whenever they are there.
///
/// `std`'s detection caches its answer, so this is a couple of loads. Under
/// Miri it answers false unless the features are enabled at compile time.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn cpu_has_avx2_fma() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
}

/// Proof that this CPU has AVX2 and FMA: the only way into code compiled
/// with `#[target_feature(enable = "avx2,fma")]`, the batch kernels of
/// `avx2` (with the `simd` feature) and
/// [`E8Point::nearest`](crate::E8Point::nearest)'s single-vector path
/// (`lattice/avx2.rs`, always).
///
/// The private field means [`Avx2Fma::detect`] is the only constructor, so
/// holding a value is evidence that detection succeeded; the safe methods
/// that take it (in `simd/avx2.rs` and `lattice/avx2.rs`) rely on that for
/// their one `unsafe` call each.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2Fma(());

#[cfg(target_arch = "x86_64")]
impl Avx2Fma {
    /// The token, if the CPU has AVX2 and FMA.
    #[inline]
    pub(crate) fn detect() -> Option<Avx2Fma> {
        cpu_has_avx2_fma().then_some(Avx2Fma(()))
    }
}

/// Whether the AVX2 + FMA backend is compiled in and this CPU can run it.
#[inline]
pub(crate) fn has_avx2_fma() -> bool {
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    {
        cpu_has_avx2_fma()
    }
    #[cfg(not(all(feature = "simd", target_arch = "x86_64")))]
    {
        false
    }
}
