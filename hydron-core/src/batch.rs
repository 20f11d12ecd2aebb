//! Batch kernels over slices of vectors, vectorized behind the `simd`
//! feature.
//!
//! Each kernel has an `_into` form that writes into a slice the caller
//! provides, and an allocating form (the copy of raw bytes,
//! [`copy_validated_into`], has a form that writes into uninitialized
//! memory instead, [`copy_validated_uninit`]). The `_into` forms **panic**
//! when the output slice does not have the input's length (a bug in the
//! caller, as with [`slice::copy_from_slice`]); nothing else panics,
//! whatever the input. Fallible kernels stop at the first bad vector and
//! return a [`BatchError`] with its index and exactly the error the
//! per-vector method gives; the output past the vectors already done is
//! then unspecified.
//!
//! | kernel | per-vector method | result vs. scalar |
//! |---|---|---|
//! | [`validate`] | [`Gf8::check`] | identical (accepts, first bad index, error) |
//! | [`copy_validated_into`], [`copy_validated_uninit`] | copy, then [`Gf8::check`] | identical to copying, then [`validate`] |
//! | [`normalize_into`], [`normalize`] | [`Gf8::normalize`] | bit-identical |
//! | [`dot_into`], [`dot_many`] | [`Gf8::dot`] | bit-identical |
//! | [`nearest_roots_into`], [`nearest_roots`] | [`Gf8::nearest_root`] | identical codes, ties included |
//! | [`nearest_roots_checked_into`], [`nearest_roots_checked`] | [`Gf8::check`], then [`Gf8::nearest_root`] | identical to [`validate`], then [`nearest_roots`] |
//! | [`nearest_lattice_points_into`], [`nearest_lattice_points`] | [`E8Point::nearest`] | identical points and errors |
//! | [`geodesic_distances_into`], [`geodesic_distances`], [`geodesic_distances_checked_into`] | [`Gf8::geodesic_distance`] (the last after [`Gf8::check`]) | the same cases; within 5 ulp of the exact angle (`f32` lanes, polynomial `atan`), 1 ulp within 1e-3 rad of 0 and π (`f64`) |
//! | [`slerp_into`], [`slerp`], [`slerp_checked_into`] | [`Gf8::slerp`] (the last after [`Gf8::check`]) | the same cases; each coordinate within 1 ulp but for nearly opposite inputs (polynomial `atan`, `sin`, `cos` in `f64`) |
//!
//! The last two take each operand as one value for every row or one per
//! row ([`PerRow`]): pairwise, or one vector against many. Their backends
//! give the same bits as one another (the same `f64` arithmetic, written
//! once in `simd/sphere.rs`), not as the per-vector methods, which call
//! libm.
//!
//! "Bit-identical" holds because every backend does the same IEEE
//! operations in the same order: sums of products in the pairwise order of
//! [`Gf8::dot`], separate multiplies and adds (no FMA contraction), and a
//! correctly rounded `sqrt` and division. The tests check it bit for bit on
//! every backend the machine can run, so the stated tolerance is 0 ulp.
//!
//! # Threads
//!
//! With the `parallel` feature the free functions split slices above a
//! per-kernel threshold (1,024 vectors for lattice points, 16,384 to
//! 131,072 for the others) across rayon's thread pool, with the same
//! results and the same first error as one thread; the `parallel` module
//! (built with the feature) has the thresholds and how it scales. The [`Backend`] methods always run
//! on the calling thread.
//!
//! # Backends
//!
//! Without the `simd` feature every kernel is [`scalar`]. With it, the
//! dispatcher picks, once per call, the best [`Backend`] this build and CPU
//! can run: on x86-64 with AVX2 and FMA (detected at run time, so no
//! `RUSTFLAGS` are needed) the intrinsics backend, otherwise the portable
//! `wide` one. [`backend`] tells which, and each [`Backend`] can be called
//! directly, which is how the tests and benchmarks compare them.
//!
//! ```
//! use hydron_core::{batch, Gf8};
//!
//! let raw = vec![[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]; 100];
//! let vs = batch::normalize(&raw)?;
//! batch::validate(Gf8::slice_as_arrays(&vs))?;
//! let codes = batch::nearest_roots(&vs);
//! assert_eq!(codes[99], vs[99].nearest_root());
//! println!("batch kernels run on {}", batch::backend());
//! # Ok::<(), hydron_core::BatchError>(())
//! ```

use core::fmt;
use core::mem::MaybeUninit;

use crate::{BatchError, E8Point, E8Root, Gf8};

pub use crate::simd::scalar;

mod sphere;
use crate::simd::scalar::{as_slots, assert_bytes_len, assert_same_len, assume_written};
pub use sphere::{
    geodesic_distances, geodesic_distances_checked_into, geodesic_distances_into, slerp,
    slerp_checked_into, slerp_into, Operand, OperandError, PerRow,
};

/// A set of kernels: scalar, portable SIMD, or AVX2 + FMA.
///
/// [`backend`] is the one the free functions of [`batch`](self) use; a
/// `Backend` can also be called directly, to compare them. Calling a backend
/// that is not [available](Backend::is_available) runs the scalar kernels.
///
/// ```
/// use hydron_core::batch::{self, Backend};
/// use hydron_core::Gf8;
///
/// let vs = vec![Gf8::from_scalar(1.0)?; 20];
/// let mut codes = vec![vs[0].nearest_root(); 20];
/// for backend in batch::backends() {
///     backend.nearest_roots_into(&vs, &mut codes);
///     assert_eq!(codes, batch::scalar::nearest_roots(&vs), "{backend}");
/// }
/// assert!(Backend::Scalar.is_available());
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum Backend {
    /// Plain Rust, one vector at a time ([`scalar`]). Always available.
    Scalar,
    /// `wide::f32x8` in structure-of-arrays form, with the instructions
    /// `wide` was compiled for (NEON on aarch64; SSE2 on the default x86-64
    /// target, AVX with `-C target-cpu=native`; WebAssembly `simd128` when
    /// built with `-C target-feature=+simd128`). Available with the `simd`
    /// feature, except on wasm32 without `simd128`, where `wide` would only
    /// emulate its lanes one by one.
    Portable,
    /// `core::arch` intrinsics for AVX2 and FMA, chosen at run time.
    /// Available with the `simd` feature on x86-64 CPUs that have both.
    Avx2Fma,
}

/// What a [`Backend`] resolves to in this build, on this CPU.
#[derive(Clone, Copy)]
enum Kernels {
    Scalar,
    #[cfg(feature = "simd")]
    Portable,
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    Avx2Fma(crate::simd::Avx2Fma),
}

impl Backend {
    /// Every backend, available or not, from the simplest.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// assert_eq!(Backend::ALL[0], Backend::Scalar);
    /// ```
    pub const ALL: [Backend; 3] = [Backend::Scalar, Backend::Portable, Backend::Avx2Fma];

    /// A short name: `"scalar"`, `"wide-sse2"` / `"wide-avx"` /
    /// `"wide-neon"` / `"wide-simd128"` / `"wide"` (what `wide` was compiled
    /// for), or `"avx2+fma"`.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// assert_eq!(Backend::Avx2Fma.name(), "avx2+fma");
    /// assert_eq!(Backend::Scalar.to_string(), "scalar");
    /// ```
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Portable => {
                if cfg!(all(
                    any(target_arch = "x86", target_arch = "x86_64"),
                    target_feature = "avx"
                )) {
                    "wide-avx"
                } else if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
                    "wide-sse2"
                } else if cfg!(target_arch = "aarch64") {
                    "wide-neon"
                } else if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
                    "wide-simd128"
                } else {
                    "wide"
                }
            }
            Backend::Avx2Fma => "avx2+fma",
        }
    }

    /// Whether this build and CPU can run the backend (otherwise calling it
    /// runs the scalar kernels).
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// assert!(Backend::Scalar.is_available());
    /// if !cfg!(feature = "simd") {
    ///     assert!(!Backend::Portable.is_available());
    /// }
    /// ```
    #[must_use]
    pub fn is_available(self) -> bool {
        match self {
            Backend::Scalar => true,
            Backend::Portable => crate::simd::HAS_PORTABLE,
            Backend::Avx2Fma => crate::simd::has_avx2_fma(),
        }
    }

    #[inline]
    fn kernels(self) -> Kernels {
        match self {
            Backend::Scalar => Kernels::Scalar,
            #[cfg(feature = "simd")]
            Backend::Portable if crate::simd::HAS_PORTABLE => Kernels::Portable,
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Backend::Avx2Fma => match crate::simd::Avx2Fma::detect() {
                Some(token) => Kernels::Avx2Fma(token),
                None => Kernels::Scalar,
            },
            #[allow(unreachable_patterns)]
            _ => Kernels::Scalar,
        }
    }

    /// [`validate`] on this backend.
    ///
    /// ```
    /// use hydron_core::batch::{self, Backend};
    /// let raw = [[0.0; 8], [2.0; 8]];
    /// for backend in Backend::ALL {
    ///     assert_eq!(backend.validate(&raw).unwrap_err().index, 1);
    /// }
    /// ```
    pub fn validate(self, arrays: &[[f32; 8]]) -> Result<(), BatchError> {
        match self.kernels() {
            Kernels::Scalar => scalar::validate(arrays),
            #[cfg(feature = "simd")]
            Kernels::Portable => crate::simd::portable::validate(arrays),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.validate(arrays),
        }
    }

    /// [`copy_validated_into`] on this backend.
    ///
    /// # Panics
    ///
    /// If `bytes.len() != 32 * out.len()`.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    ///
    /// let bytes: Vec<u8> = [0.6f32, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    ///     .repeat(10)
    ///     .iter()
    ///     .flat_map(|x| x.to_le_bytes())
    ///     .collect();
    /// let mut out = [[0.0; 8]; 10];
    /// for backend in Backend::ALL {
    ///     backend.copy_validated_into(&bytes, &mut out)?;
    ///     assert_eq!(out[9], [0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    /// }
    /// # Ok::<(), hydron_core::BatchError>(())
    /// ```
    #[track_caller]
    pub fn copy_validated_into(self, bytes: &[u8], out: &mut [[f32; 8]]) -> Result<(), BatchError> {
        assert_bytes_len(bytes.len(), out.len());
        // SAFETY: the kernels only store `Gf8` values into the slots.
        self.copy_validated(bytes, unsafe { as_slots(out) })
    }

    /// [`copy_validated_uninit`] on this backend.
    ///
    /// # Panics
    ///
    /// If `bytes.len() != 32 * out.len()`.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// use hydron_core::Gf8;
    ///
    /// let bytes = [0u8; 64]; // two zero vectors
    /// let mut out: Vec<Gf8> = Vec::with_capacity(2);
    /// for backend in Backend::ALL {
    ///     let vs = backend.copy_validated_uninit(&bytes, &mut out.spare_capacity_mut()[..2])?;
    ///     assert_eq!(vs, [Gf8::ZERO; 2]);
    /// }
    /// # Ok::<(), hydron_core::BatchError>(())
    /// ```
    #[track_caller]
    pub fn copy_validated_uninit<'a>(
        self,
        bytes: &[u8],
        out: &'a mut [MaybeUninit<Gf8>],
    ) -> Result<&'a mut [Gf8], BatchError> {
        assert_bytes_len(bytes.len(), out.len());
        self.copy_validated(bytes, out)?;
        // SAFETY: every kernel writes every slot before it returns `Ok`.
        Ok(unsafe { assume_written(out) })
    }

    /// The `copy_validated` kernel of this backend; `bytes` has 32 bytes per
    /// slot of `out`. On success every slot has been written; on error every
    /// slot up to and including the bad vector's.
    #[inline]
    pub(crate) fn copy_validated(
        self,
        bytes: &[u8],
        out: &mut [MaybeUninit<Gf8>],
    ) -> Result<(), BatchError> {
        match self.kernels() {
            Kernels::Scalar => scalar::copy_validated_from(bytes, out, 0),
            // The SIMD kernels read the bytes in the CPU's order, so on a
            // big-endian target only the scalar kernel (which swaps) runs.
            #[cfg(feature = "simd")]
            Kernels::Portable if cfg!(target_endian = "little") => {
                crate::simd::portable::copy_validated(bytes, out)
            }
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.copy_validated(bytes, out),
            #[allow(unreachable_patterns)]
            _ => scalar::copy_validated_from(bytes, out, 0),
        }
    }

    /// [`normalize_into`] on this backend.
    ///
    /// # Panics
    ///
    /// If `out.len() != arrays.len()`.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// use hydron_core::Gf8;
    ///
    /// let raw = [[3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]; 9];
    /// let mut out = [Gf8::ZERO; 9];
    /// for backend in Backend::ALL {
    ///     backend.normalize_into(&raw, &mut out)?;
    ///     assert!(out.iter().all(|v| *v == Gf8::normalize(raw[0]).unwrap()));
    /// }
    /// # Ok::<(), hydron_core::BatchError>(())
    /// ```
    #[track_caller]
    pub fn normalize_into(self, arrays: &[[f32; 8]], out: &mut [Gf8]) -> Result<(), BatchError> {
        assert_same_len(arrays.len(), out.len());
        match self.kernels() {
            Kernels::Scalar => scalar::normalize_into(arrays, out),
            #[cfg(feature = "simd")]
            Kernels::Portable => crate::simd::portable::normalize_into(arrays, out),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.normalize_into(arrays, out),
        }
    }

    /// [`dot_into`] on this backend.
    ///
    /// # Panics
    ///
    /// If `out.len() != many.len()`.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// use hydron_core::Gf8;
    ///
    /// let q = Gf8::from_scalar(1.0)?;
    /// let mut out = [0.0; 8];
    /// Backend::Scalar.dot_into(q, &[-q; 8], &mut out);
    /// assert!(out.iter().all(|&d| (d + 1.0).abs() < 1e-6));
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[track_caller]
    pub fn dot_into(self, query: Gf8, many: &[Gf8], out: &mut [f32]) {
        assert_same_len(many.len(), out.len());
        match self.kernels() {
            Kernels::Scalar => scalar::dot_into(query, many, out),
            #[cfg(feature = "simd")]
            Kernels::Portable => crate::simd::portable::dot_into(query, many, out),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.dot_into(query, many, out),
        }
    }

    /// [`nearest_roots_into`] on this backend.
    ///
    /// # Panics
    ///
    /// If `out.len() != vectors.len()`.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// use hydron_core::{E8Root, Gf8};
    ///
    /// let vs: Vec<Gf8> = E8Root::all().map(E8Root::to_gf8).collect();
    /// let mut out = vec![E8Root::new(0)?; vs.len()];
    /// Backend::Portable.nearest_roots_into(&vs, &mut out);
    /// assert!(out.into_iter().eq(E8Root::all()));
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[track_caller]
    pub fn nearest_roots_into(self, vectors: &[Gf8], out: &mut [E8Root]) {
        assert_same_len(vectors.len(), out.len());
        match self.kernels() {
            Kernels::Scalar => scalar::nearest_roots_into(vectors, out),
            #[cfg(feature = "simd")]
            Kernels::Portable => crate::simd::portable::nearest_roots_into(vectors, out),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.nearest_roots_into(vectors, out),
        }
    }

    /// [`nearest_roots_checked_into`] on this backend.
    ///
    /// # Panics
    ///
    /// If `out.len() != arrays.len()`.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// use hydron_core::E8Root;
    ///
    /// let raw = [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.6, -0.8]; 11];
    /// let mut out = [E8Root::new(0)?; 11];
    /// for backend in Backend::ALL {
    ///     backend.nearest_roots_checked_into(&raw, &mut out)?;
    ///     assert_eq!(out[10], hydron_core::Gf8::try_new(raw[10])?.nearest_root());
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[track_caller]
    pub fn nearest_roots_checked_into(
        self,
        arrays: &[[f32; 8]],
        out: &mut [E8Root],
    ) -> Result<(), BatchError> {
        assert_same_len(arrays.len(), out.len());
        match self.kernels() {
            Kernels::Scalar => scalar::nearest_roots_checked_from(arrays, out, 0),
            #[cfg(feature = "simd")]
            Kernels::Portable => crate::simd::portable::nearest_roots_checked_into(arrays, out),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.nearest_roots_checked_into(arrays, out),
        }
    }

    /// [`nearest_lattice_points_into`] on this backend: the `f32` fast
    /// path of [`E8Point::nearest`] on eight vectors at a time (SIMD
    /// backends); a block with a vector the fast path leaves (an error, a
    /// tiny coordinate, a near-tie) goes through the scalar kernel, so the
    /// points and errors are identical on every backend.
    ///
    /// # Panics
    ///
    /// If `out.len() != arrays.len()`.
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// use hydron_core::E8Point;
    ///
    /// let mut out = [E8Point::ORIGIN; 1];
    /// Backend::Avx2Fma.nearest_lattice_points_into(&[[0.4; 8]], &mut out)?;
    /// assert_eq!(out[0].doubled(), [1; 8]);
    /// # Ok::<(), hydron_core::BatchError>(())
    /// ```
    #[track_caller]
    pub fn nearest_lattice_points_into(
        self,
        arrays: &[[f32; 8]],
        out: &mut [E8Point],
    ) -> Result<(), BatchError> {
        assert_same_len(arrays.len(), out.len());
        match self.kernels() {
            Kernels::Scalar => scalar::nearest_lattice_points_from(arrays, out, 0),
            #[cfg(feature = "simd")]
            Kernels::Portable => crate::simd::portable::nearest_lattice_points_into(arrays, out),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernels::Avx2Fma(token) => token.nearest_lattice_points_into(arrays, out),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The backend the free functions of [`batch`](self) run on: the best one
/// available in this build on this CPU.
///
/// ```
/// use hydron_core::batch;
///
/// let b = batch::backend();
/// assert!(b.is_available());
/// if !cfg!(feature = "simd") {
///     assert_eq!(b.name(), "scalar");
/// }
/// ```
#[must_use]
pub fn backend() -> Backend {
    if crate::simd::has_avx2_fma() {
        Backend::Avx2Fma
    } else if crate::simd::HAS_PORTABLE {
        Backend::Portable
    } else {
        Backend::Scalar
    }
}

/// Every backend available in this build on this CPU, scalar first and the
/// one [`backend`] picks last.
///
/// ```
/// use hydron_core::batch::{self, Backend};
///
/// let all: Vec<Backend> = batch::backends().collect();
/// assert_eq!(all[0], Backend::Scalar);
/// assert_eq!(*all.last().unwrap(), batch::backend());
/// ```
pub fn backends() -> impl Iterator<Item = Backend> + Clone {
    Backend::ALL.into_iter().filter(|b| b.is_available())
}

/// Checks every vector of a batch, as [`Gf8::check`]: the hot path of every
/// validated decoder.
///
/// Accepts exactly what [`Gf8::check`] accepts; on failure the error has the
/// index of the first bad vector and what [`Gf8::check`] says about it.
///
/// ```
/// use hydron_core::{batch, Gf8Error};
///
/// let mut raw = vec![[0.5, -0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0]; 1000];
/// assert!(batch::validate(&raw).is_ok());
/// raw[700][3] = f32::NAN;
/// let err = batch::validate(&raw).unwrap_err();
/// assert_eq!((err.index, err.error), (700, Gf8Error::NotANumber { coordinate: 3 }));
/// ```
pub fn validate(arrays: &[[f32; 8]]) -> Result<(), BatchError> {
    #[cfg(feature = "parallel")]
    return crate::parallel::validate(backend(), arrays);
    #[cfg(not(feature = "parallel"))]
    backend().validate(arrays)
}

/// Copies vectors stored as little-endian `f32` bytes into `out`, checking
/// each as [`Gf8::check`]: the hot path of every validated binary decoder.
///
/// `bytes` may have any alignment (it is usually a slice of a message).
/// The result is exactly that of copying and then calling [`validate`]: the
/// same accepts, the same first bad index and error. But each vector is
/// read from memory once and checked from the registers it was loaded into,
/// so validation costs little more than the copy. On error the vectors
/// before the bad one have been copied; the rest of `out` is unspecified.
///
/// # Panics
///
/// If `bytes.len() != 32 * out.len()`.
///
/// ```
/// use hydron_core::{batch, Gf8Error};
///
/// let mut bytes: Vec<u8> = [0.5f32, -0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0]
///     .repeat(100)
///     .iter()
///     .flat_map(|x| x.to_le_bytes())
///     .collect();
/// let mut out = vec![[0.0; 8]; 100];
/// batch::copy_validated_into(&bytes, &mut out)?;
/// assert_eq!(out[99], [0.5, -0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0]);
///
/// bytes[32 * 70 + 4 * 6..][..4].copy_from_slice(&f32::INFINITY.to_le_bytes());
/// let err = batch::copy_validated_into(&bytes, &mut out).unwrap_err();
/// assert_eq!(err.index, 70);
/// assert!(matches!(err.error, Gf8Error::Infinite { coordinate: 6, .. }));
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
#[track_caller]
pub fn copy_validated_into(bytes: &[u8], out: &mut [[f32; 8]]) -> Result<(), BatchError> {
    #[cfg(feature = "parallel")]
    {
        assert_bytes_len(bytes.len(), out.len());
        // SAFETY: the kernels only store `Gf8` values into the slots.
        crate::parallel::copy_validated(backend(), bytes, unsafe { as_slots(out) })
    }
    #[cfg(not(feature = "parallel"))]
    backend().copy_validated_into(bytes, out)
}

/// [`copy_validated_into`] into uninitialized memory, such as a vector's
/// spare capacity: on success every slot of `out` holds a checked vector,
/// returned as a `Gf8` slice over `out`.
///
/// On error, every slot before the bad vector (index `error.index`) has
/// been written with a valid vector, so a caller may keep those; the other
/// slots must be treated as uninitialized.
///
/// # Panics
///
/// If `bytes.len() != 32 * out.len()`.
///
/// ```
/// use hydron_core::{batch, Gf8};
///
/// let bytes: Vec<u8> = [0.0f32, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
///     .repeat(1000)
///     .iter()
///     .flat_map(|x| x.to_le_bytes())
///     .collect();
/// let n = bytes.len() / 32;
/// let mut vectors: Vec<Gf8> = Vec::with_capacity(n);
/// let written = batch::copy_validated_uninit(&bytes, &mut vectors.spare_capacity_mut()[..n])?;
/// assert_eq!(written.len(), n);
/// // SAFETY: `copy_validated_uninit` returned `Ok`, so the first `n` slots
/// // of the spare capacity hold checked vectors.
/// unsafe { vectors.set_len(n) };
/// assert_eq!(vectors[999][1], 1.0);
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
#[track_caller]
pub fn copy_validated_uninit<'a>(
    bytes: &[u8],
    out: &'a mut [MaybeUninit<Gf8>],
) -> Result<&'a mut [Gf8], BatchError> {
    #[cfg(feature = "parallel")]
    {
        assert_bytes_len(bytes.len(), out.len());
        crate::parallel::copy_validated(backend(), bytes, out)?;
        // SAFETY: the kernels write every slot before they return `Ok`.
        Ok(unsafe { assume_written(out) })
    }
    #[cfg(not(feature = "parallel"))]
    backend().copy_validated_uninit(bytes, out)
}

/// Normalizes every vector as [`Gf8::normalize`], into `out`; the results
/// are bit-identical to [`Gf8::normalize`].
///
/// # Panics
///
/// If `out.len() != arrays.len()`.
///
/// ```
/// use hydron_core::{batch, Gf8};
///
/// let raw = vec![[1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0]; 10];
/// let mut out = vec![Gf8::ZERO; 10];
/// batch::normalize_into(&raw, &mut out)?;
/// assert_eq!(out[9], Gf8::normalize(raw[9])?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[track_caller]
pub fn normalize_into(arrays: &[[f32; 8]], out: &mut [Gf8]) -> Result<(), BatchError> {
    #[cfg(feature = "parallel")]
    return crate::parallel::normalize_into(backend(), arrays, out);
    #[cfg(not(feature = "parallel"))]
    backend().normalize_into(arrays, out)
}

/// Normalizes every vector as [`Gf8::normalize`] (allocating).
///
/// ```
/// use hydron_core::batch;
/// assert_eq!(batch::normalize(&[[2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])?[0][0], 1.0);
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
pub fn normalize(arrays: &[[f32; 8]]) -> Result<Vec<Gf8>, BatchError> {
    let mut out: Vec<Gf8> = crate::huge::zeroed_vec(arrays.len());
    normalize_into(arrays, &mut out)?;
    Ok(out)
}

/// The dot product of `query` with each of `many`, into `out`;
/// bit-identical to [`Gf8::dot`].
///
/// # Panics
///
/// If `out.len() != many.len()`.
///
/// ```
/// use hydron_core::{batch, Gf8};
///
/// let q = Gf8::normalize([1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
/// let many = vec![q; 12];
/// let mut out = vec![0.0; 12];
/// batch::dot_into(q, &many, &mut out);
/// assert!(out.iter().all(|&d| d == q.dot(q)));
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[track_caller]
pub fn dot_into(query: Gf8, many: &[Gf8], out: &mut [f32]) {
    #[cfg(feature = "parallel")]
    crate::parallel::dot_into(backend(), query, many, out);
    #[cfg(not(feature = "parallel"))]
    backend().dot_into(query, many, out);
}

/// The dot product of `query` with each of `many` (allocating).
///
/// ```
/// use hydron_core::{batch, Gf8};
/// let q = Gf8::from_scalar(1.0)?;
/// let d = batch::dot_many(q, &[q, -q, Gf8::ZERO]);
/// assert_eq!(d, vec![q.dot(q), q.dot(-q), 0.0]);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[must_use]
pub fn dot_many(query: Gf8, many: &[Gf8]) -> Vec<f32> {
    let mut out: Vec<f32> = crate::huge::zeroed_vec(many.len());
    dot_into(query, many, &mut out);
    out
}

/// The nearest E8 root of each vector, into `out`: exactly the codes of
/// [`Gf8::nearest_root`], ties included.
///
/// # Panics
///
/// If `out.len() != vectors.len()`.
///
/// ```
/// use hydron_core::{batch, E8Root, Gf8};
///
/// let vs: Vec<Gf8> = E8Root::all().map(E8Root::to_gf8).collect();
/// let mut out = vec![E8Root::new(0)?; vs.len()];
/// batch::nearest_roots_into(&vs, &mut out);
/// assert!(out.into_iter().eq(E8Root::all()));
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[track_caller]
pub fn nearest_roots_into(vectors: &[Gf8], out: &mut [E8Root]) {
    #[cfg(feature = "parallel")]
    crate::parallel::nearest_roots_into(backend(), vectors, out);
    #[cfg(not(feature = "parallel"))]
    backend().nearest_roots_into(vectors, out);
}

/// The nearest E8 root of each vector (allocating).
///
/// ```
/// use hydron_core::{batch, Gf8};
/// let v = Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
/// assert_eq!(batch::nearest_roots(&[v; 9])[8], v.nearest_root());
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[must_use]
pub fn nearest_roots(vectors: &[Gf8]) -> Vec<E8Root> {
    let mut out = vec![E8Root(0); vectors.len()];
    nearest_roots_into(vectors, &mut out);
    out
}

/// The nearest E8 root of each of `arrays`, after checking it as
/// [`Gf8::check`], into `out`: the result of [`validate`] and then
/// [`nearest_roots_into`] (the same codes; on error the same first bad
/// index and error, with the codes before it written), in one pass: the
/// SIMD kernels take the squared norms from the registers the codes are
/// computed from, so the check costs a few instructions per vector instead
/// of a second pass over memory.
///
/// This is the kernel for coordinates from outside the program (a numpy
/// array, a file mapped in place): they may be anything, and a `&[Gf8]`
/// must hold unit or zero vectors.
///
/// # Panics
///
/// If `out.len() != arrays.len()`.
///
/// ```
/// use hydron_core::{batch, E8Root, Gf8Error};
///
/// let mut raw = vec![[0.5, 0.5, -0.5, 0.5, 0.0, 0.0, 0.0, 0.0]; 3000];
/// let mut out = vec![E8Root::new(0)?; raw.len()];
/// batch::nearest_roots_checked_into(&raw, &mut out)?;
/// assert!(out.iter().all(|&c| c == out[0]));
///
/// raw[2500][1] = 2.0;
/// let err = batch::nearest_roots_checked_into(&raw, &mut out).unwrap_err();
/// assert_eq!(err.index, 2500);
/// assert!(matches!(err.error, Gf8Error::NotUnitNorm { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[track_caller]
pub fn nearest_roots_checked_into(
    arrays: &[[f32; 8]],
    out: &mut [E8Root],
) -> Result<(), BatchError> {
    #[cfg(feature = "parallel")]
    return crate::parallel::nearest_roots_checked_into(backend(), arrays, out);
    #[cfg(not(feature = "parallel"))]
    backend().nearest_roots_checked_into(arrays, out)
}

/// The nearest E8 root of each of `arrays`, checked first (allocating; see
/// [`nearest_roots_checked_into`]).
///
/// ```
/// use hydron_core::{batch, Gf8};
///
/// let raw = [[0.0, 0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0; 8]];
/// let codes = batch::nearest_roots_checked(&raw)?;
/// assert_eq!(codes, batch::nearest_roots(Gf8::slice_from_arrays(&raw)?));
/// assert_eq!(batch::nearest_roots_checked(&[[f32::NAN; 8]]).unwrap_err().index, 0);
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
pub fn nearest_roots_checked(arrays: &[[f32; 8]]) -> Result<Vec<E8Root>, BatchError> {
    let mut out = vec![E8Root(0); arrays.len()];
    nearest_roots_checked_into(arrays, &mut out)?;
    Ok(out)
}

/// The nearest E8 lattice point to each vector, as [`E8Point::nearest`],
/// into `out`: identical points, and on error the first bad vector's index
/// and error (see [`Backend::nearest_lattice_points_into`]).
///
/// # Panics
///
/// If `out.len() != arrays.len()`.
///
/// ```
/// use hydron_core::{batch, E8Point};
///
/// let mut out = [E8Point::ORIGIN; 2];
/// batch::nearest_lattice_points_into(&[[1.2; 8], [-0.6; 8]], &mut out)?;
/// assert_eq!(out[0].to_array(), [1.0; 8]);
/// assert_eq!(out[1].to_array(), [-0.5; 8]);
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
#[track_caller]
pub fn nearest_lattice_points_into(
    arrays: &[[f32; 8]],
    out: &mut [E8Point],
) -> Result<(), BatchError> {
    #[cfg(feature = "parallel")]
    return crate::parallel::nearest_lattice_points_into(backend(), arrays, out);
    #[cfg(not(feature = "parallel"))]
    backend().nearest_lattice_points_into(arrays, out)
}

/// The nearest E8 lattice point to each vector (allocating).
///
/// ```
/// use hydron_core::{batch, E8Point, Gf8Error};
///
/// let points = batch::nearest_lattice_points(&[[0.1; 8]])?;
/// assert_eq!(points, vec![E8Point::ORIGIN]);
/// let err = batch::nearest_lattice_points(&[[0.0; 8], [1e9; 8]]).unwrap_err();
/// assert!(matches!(err.error, Gf8Error::OutOfLatticeRange { coordinate: 0, .. }));
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
pub fn nearest_lattice_points(arrays: &[[f32; 8]]) -> Result<Vec<E8Point>, BatchError> {
    // All zeroes: the origin.
    let mut out: Vec<E8Point> = crate::huge::zeroed_vec(arrays.len());
    nearest_lattice_points_into(arrays, &mut out)?;
    Ok(out)
}
