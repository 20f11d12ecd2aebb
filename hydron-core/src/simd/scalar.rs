//! The scalar batch kernels: plain Rust, one vector at a time.
//!
//! These are the reference the SIMD backends are tested against, and the
//! backend that always runs without the `simd` feature. Each kernel is the
//! per-vector method applied in order ([`Gf8::check`], [`Gf8::normalize`],
//! [`Gf8::dot`], [`Gf8::nearest_root`], [`E8Point::nearest`]), so the
//! results are exactly those of the per-vector methods. (The per-vector
//! lattice decoder and nearest-root closed form themselves use SSE2 on
//! x86-64, where it is part of the baseline target: one vector in two
//! registers. `E8Point::nearest` takes an AVX2 path when the CPU has it;
//! the kernels here do not, so this backend is the baseline one.)
//!
//! Like the dispatched kernels in [`batch`](crate::batch), the `_into`
//! forms panic when the output slice does not have the input's length, and
//! the fallible ones stop at the first bad vector, leaving the rest of the
//! output unspecified.
//!
//! ```
//! use hydron_core::{batch, Gf8};
//!
//! let raw = [[3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]];
//! let scalar = batch::scalar::normalize(&raw)?;
//! assert_eq!(scalar, batch::normalize(&raw)?);
//! assert_eq!(scalar[0], Gf8::normalize(raw[0])?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::mem::MaybeUninit;

use crate::gf8::norm_sq;
use crate::{BatchError, E8Point, E8Root, Gf8};

/// Panics unless the output has one slot per input.
#[inline]
#[track_caller]
pub(crate) fn assert_same_len(input: usize, output: usize) {
    assert!(
        input == output,
        "batch output has length {output}, but the input has {input} vectors"
    );
}

/// Checks every vector of a batch, as [`Gf8::check`]; the error names the
/// first bad vector.
///
/// ```
/// use hydron_core::{batch, Gf8Error};
///
/// let raw = [[0.0; 8], [1.0, 0.0, 0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0]];
/// let err = batch::scalar::validate(&raw).unwrap_err();
/// assert_eq!((err.index, err.error), (1, Gf8Error::NotANumber { coordinate: 5 }));
/// ```
pub fn validate(arrays: &[[f32; 8]]) -> Result<(), BatchError> {
    validate_from(arrays, 0)
}

/// [`validate`] for a part of a batch that starts at vector `first_index`.
#[inline]
pub(crate) fn validate_from(arrays: &[[f32; 8]], first_index: usize) -> Result<(), BatchError> {
    for (offset, coords) in arrays.iter().enumerate() {
        Gf8::check(coords).map_err(|error| BatchError {
            index: first_index + offset,
            error,
        })?;
    }
    Ok(())
}

/// Panics unless `bytes` holds exactly one 32-byte vector per output slot.
#[inline]
#[track_caller]
pub(crate) fn assert_bytes_len(bytes: usize, output: usize) {
    assert!(
        bytes / 32 == output && bytes.is_multiple_of(32),
        "batch output has length {output}, but the input has {bytes} bytes \
         (32 bytes per vector)"
    );
}

/// The coordinates of one vector stored as eight little-endian `f32`
/// (a byte swap on big-endian targets, nothing on little-endian ones).
#[inline]
#[must_use]
pub(crate) fn from_le_bytes(bytes: &[u8; 32]) -> [f32; 8] {
    let words: [u32; 8] = bytemuck::cast(*bytes);
    words.map(|w| f32::from_bits(u32::from_le(w)))
}

/// Copies vectors stored as little-endian `f32` bytes (any alignment) into
/// `out` and checks each as [`Gf8::check`]: the result is exactly that of
/// copying and then [`validate`], but every vector is read once and
/// checked while it is still in registers.
///
/// # Panics
///
/// If `bytes.len() != 32 * out.len()`.
///
/// ```
/// use hydron_core::{batch, Gf8Error};
///
/// let mut bytes = Vec::new();
/// for x in [1.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0] {
///     bytes.extend_from_slice(&x.to_le_bytes());
/// }
/// let mut out = [[0.0; 8]; 2];
/// let err = batch::scalar::copy_validated_into(&bytes, &mut out).unwrap_err();
/// assert_eq!((err.index, err.error), (1, Gf8Error::NotANumber { coordinate: 3 }));
/// assert_eq!(out[0][0], 1.0);
/// ```
#[track_caller]
pub fn copy_validated_into(bytes: &[u8], out: &mut [[f32; 8]]) -> Result<(), BatchError> {
    assert_bytes_len(bytes.len(), out.len());
    // SAFETY: `copy_validated_from` only stores `Gf8` values.
    copy_validated_from(bytes, unsafe { as_slots(out) }, 0)
}

/// `out` as slots for the `copy_validated` kernels to write.
///
/// # Safety
///
/// Only initialized values may be stored through the result (the kernels
/// only call [`MaybeUninit::write`] with a `Gf8`), so that `out` stays
/// initialized.
#[inline]
pub(crate) unsafe fn as_slots(out: &mut [[f32; 8]]) -> &mut [MaybeUninit<Gf8>] {
    // SAFETY: `Gf8` is `#[repr(C)]` around `[f32; 8]` and `MaybeUninit<T>`
    // has the layout of `T`, so both slices have the same layout and
    // length; every bit pattern of `[f32; 8]` is valid, so whatever `Gf8`
    // the caller stores leaves a valid `[f32; 8]`, and the caller stores
    // nothing uninitialized.
    unsafe { &mut *(core::ptr::from_mut(out) as *mut [MaybeUninit<Gf8>]) }
}

/// The slots, once written, as vectors.
///
/// # Safety
///
/// Every slot of `slots` has been written.
#[inline]
pub(crate) unsafe fn assume_written(slots: &mut [MaybeUninit<Gf8>]) -> &mut [Gf8] {
    // SAFETY: `MaybeUninit<Gf8>` has the layout of `Gf8`, and the caller
    // guarantees that every slot is initialized.
    unsafe { &mut *(core::ptr::from_mut(slots) as *mut [Gf8]) }
}

/// [`copy_validated_into`] for a part of a batch that starts at vector
/// `first_index`; `bytes` has 32 bytes per slot of `out`. On success every
/// slot has been written; on error every slot before the bad vector has
/// been written (and holds a valid vector), as has the bad vector's slot.
#[inline]
pub(crate) fn copy_validated_from(
    bytes: &[u8],
    out: &mut [MaybeUninit<Gf8>],
    first_index: usize,
) -> Result<(), BatchError> {
    debug_assert_eq!(bytes.len(), 32 * out.len());
    for (offset, (src, slot)) in bytes.as_chunks::<32>().0.iter().zip(out).enumerate() {
        // Checked where it was stored (still in L1), not from a copy on
        // the stack.
        let written = slot.write(Gf8::new_unchecked(from_le_bytes(src)));
        Gf8::check(written.as_array()).map_err(|error| BatchError {
            index: first_index + offset,
            error,
        })?;
    }
    Ok(())
}

/// Normalizes every vector as [`Gf8::normalize`], into `out`.
///
/// # Panics
///
/// If `out.len() != arrays.len()`.
///
/// ```
/// use hydron_core::{batch, Gf8};
///
/// let mut out = [Gf8::ZERO; 2];
/// batch::scalar::normalize_into(&[[0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0; 8]], &mut out)?;
/// assert_eq!(out[0][1], 1.0);
/// assert!(out[1].is_zero());
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
#[track_caller]
pub fn normalize_into(arrays: &[[f32; 8]], out: &mut [Gf8]) -> Result<(), BatchError> {
    assert_same_len(arrays.len(), out.len());
    normalize_from(arrays, out, 0)
}

/// [`normalize_into`] for a part of a batch that starts at vector
/// `first_index`; `out` has the length of `arrays`.
#[inline]
pub(crate) fn normalize_from(
    arrays: &[[f32; 8]],
    out: &mut [Gf8],
    first_index: usize,
) -> Result<(), BatchError> {
    for (offset, (coords, slot)) in arrays.iter().zip(out).enumerate() {
        // The fast path of `Gf8::normalize`, spelled out so that the loop
        // writes straight into `out` instead of moving a `Result` through
        // the stack (which costs store-forwarding stalls); the tests check
        // that the results are bit-identical to `Gf8::normalize`.
        let norm_sq = norm_sq(coords);
        if norm_sq.is_finite() && norm_sq >= f32::MIN_POSITIVE {
            let inv = 1.0 / norm_sq.sqrt();
            *slot = Gf8::new_unchecked(coords.map(|x| x * inv));
        } else {
            *slot = Gf8::normalize(*coords).map_err(|error| BatchError {
                index: first_index + offset,
                error,
            })?;
        }
    }
    Ok(())
}

/// Normalizes every vector as [`Gf8::normalize`] (allocating).
///
/// ```
/// use hydron_core::batch;
/// let vs = batch::scalar::normalize(&[[0.0, 0.0, -5.0, 0.0, 0.0, 0.0, 0.0, 0.0]])?;
/// assert_eq!(vs[0][2], -1.0);
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
pub fn normalize(arrays: &[[f32; 8]]) -> Result<Vec<Gf8>, BatchError> {
    let mut out = vec![Gf8::ZERO; arrays.len()];
    normalize_from(arrays, &mut out, 0)?;
    Ok(out)
}

/// The dot product of `query` with each of `many`, as [`Gf8::dot`], into
/// `out`.
///
/// # Panics
///
/// If `out.len() != many.len()`.
///
/// ```
/// use hydron_core::{batch, Gf8};
///
/// let q = Gf8::from_scalar(1.0)?;
/// let mut out = [0.0; 2];
/// batch::scalar::dot_into(q, &[q, -q], &mut out);
/// assert_eq!(out, [q.dot(q), -q.dot(q)]);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[track_caller]
pub fn dot_into(query: Gf8, many: &[Gf8], out: &mut [f32]) {
    assert_same_len(many.len(), out.len());
    dot_from(query, many, out);
}

/// [`dot_into`] without the length check (`out` is zipped with `many`).
#[inline]
pub(crate) fn dot_from(query: Gf8, many: &[Gf8], out: &mut [f32]) {
    for (v, slot) in many.iter().zip(out) {
        *slot = query.dot(*v);
    }
}

/// The dot product of `query` with each of `many`, as [`Gf8::dot`]
/// (allocating).
///
/// ```
/// use hydron_core::{batch, Gf8};
/// let q = Gf8::from_scalar(1.0)?;
/// assert_eq!(batch::scalar::dot_many(q, &[Gf8::ZERO]), vec![0.0]);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[must_use]
pub fn dot_many(query: Gf8, many: &[Gf8]) -> Vec<f32> {
    many.iter().map(|v| query.dot(*v)).collect()
}

/// The nearest E8 root of each vector, as [`Gf8::nearest_root`], into
/// `out`.
///
/// # Panics
///
/// If `out.len() != vectors.len()`.
///
/// ```
/// use hydron_core::{batch, E8Root, Gf8};
///
/// let vs = [E8Root::new(5)?.to_gf8(), E8Root::new(200)?.to_gf8()];
/// let mut out = [E8Root::new(0)?; 2];
/// batch::scalar::nearest_roots_into(&vs, &mut out);
/// assert_eq!([out[0].code(), out[1].code()], [5, 200]);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[track_caller]
pub fn nearest_roots_into(vectors: &[Gf8], out: &mut [E8Root]) {
    assert_same_len(vectors.len(), out.len());
    nearest_roots_from(vectors, out);
}

/// [`nearest_roots_into`] without the length check.
#[inline]
pub(crate) fn nearest_roots_from(vectors: &[Gf8], out: &mut [E8Root]) {
    for (v, slot) in vectors.iter().zip(out) {
        *slot = v.nearest_root();
    }
}

/// Stores the eight codes a SIMD nearest-root kernel computed for a block.
/// Codes are in 0..240 by construction: 4 · 27 + 3 at most for the integer
/// type (i < j ≤ 7), 112 + 127 for the other.
#[cfg(feature = "simd")]
#[inline]
pub(crate) fn store_codes(out: &mut [E8Root; 8], codes: [u32; 8]) {
    for (slot, code) in out.iter_mut().zip(codes) {
        *slot = E8Root(code as u8);
    }
}

/// [`batch::nearest_roots_checked_into`](crate::batch::nearest_roots_checked_into)
/// for a part of a batch that starts at vector `first_index`: each vector
/// checked as [`Gf8::check`], then its nearest root; on error the codes
/// before the bad vector have been written.
pub(crate) fn nearest_roots_checked_from(
    arrays: &[[f32; 8]],
    out: &mut [E8Root],
    first_index: usize,
) -> Result<(), BatchError> {
    for (offset, (coords, slot)) in arrays.iter().zip(out).enumerate() {
        Gf8::check(coords).map_err(|error| BatchError {
            index: first_index + offset,
            error,
        })?;
        *slot = Gf8::new_unchecked(*coords).nearest_root();
    }
    Ok(())
}

/// The scalar check and quantization of a block the SIMD kernels' fast
/// test did not accept (a zero vector, or a bad one): out of line, so that
/// their hot loops keep their registers.
#[cfg(feature = "simd")]
#[cold]
#[inline(never)]
pub(crate) fn recheck_roots(
    block: &[[f32; 8]; 8],
    out: &mut [E8Root; 8],
    first_index: usize,
) -> Result<(), BatchError> {
    nearest_roots_checked_from(block, out, first_index)
}

/// For the SIMD nearest-root kernels: the lanes of a block whose scores
/// overflowed (bit `i` of `finite` clear) get the code of
/// [`Gf8::nearest_root`], which rescales them; the kernels already hold the
/// unscaled code there, which is the answer when rescaling does not help
/// (NaN or infinite input). Out of line: only for coordinates near
/// `f32::MAX`.
#[cfg(feature = "simd")]
#[cold]
#[inline(never)]
pub(crate) fn rescale_overflowed_roots(block: &[[f32; 8]; 8], out: &mut [E8Root; 8], finite: u32) {
    for (i, (coords, slot)) in block.iter().zip(out).enumerate() {
        if finite & (1 << i) == 0 {
            if let Some(code) = crate::e8::nearest_root_code_scaled(coords) {
                *slot = E8Root(code);
            }
        }
    }
}

/// The nearest E8 root of each vector, as [`Gf8::nearest_root`]
/// (allocating).
///
/// ```
/// use hydron_core::{batch, Gf8};
/// let v = Gf8::from_scalar(-1.0)?;
/// assert_eq!(batch::scalar::nearest_roots(&[v]), vec![v.nearest_root()]);
/// # Ok::<(), hydron_core::Gf8Error>(())
/// ```
#[must_use]
pub fn nearest_roots(vectors: &[Gf8]) -> Vec<E8Root> {
    vectors.iter().map(|v| v.nearest_root()).collect()
}

/// The nearest E8 lattice point to each vector, as [`E8Point::nearest`],
/// into `out`; the error names the first bad vector.
///
/// # Panics
///
/// If `out.len() != arrays.len()`.
///
/// ```
/// use hydron_core::{batch, E8Point};
///
/// let mut out = [E8Point::ORIGIN; 1];
/// batch::scalar::nearest_lattice_points_into(&[[0.9, 1.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]], &mut out)?;
/// assert_eq!(out[0].doubled(), [2, 2, 0, 0, 0, 0, 0, 0]);
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
#[track_caller]
pub fn nearest_lattice_points_into(
    arrays: &[[f32; 8]],
    out: &mut [E8Point],
) -> Result<(), BatchError> {
    assert_same_len(arrays.len(), out.len());
    nearest_lattice_points_from(arrays, out, 0)
}

/// [`nearest_lattice_points_into`] for a part of a batch that starts at
/// vector `first_index`; `out` has the length of `arrays`. Each vector
/// takes the per-vector decoder's baseline path (SSE2 on x86-64, with no
/// AVX2 and no CPU detection per vector): the scalar backend is the one
/// that runs on the baseline target. The answers are those of
/// [`E8Point::nearest`], whichever path it takes.
#[inline]
pub(crate) fn nearest_lattice_points_from(
    arrays: &[[f32; 8]],
    out: &mut [E8Point],
    first_index: usize,
) -> Result<(), BatchError> {
    decode_lattice_points(
        arrays,
        out,
        first_index,
        crate::lattice::nearest_fast_baseline,
    )
}

/// [`nearest_lattice_points_from`] with the dispatched per-vector path
/// (AVX2 and FMA when the CPU has them): for the tails and the blocks off
/// the fast path of the SIMD backends. The AVX2 backend only runs on such
/// a CPU, where that path takes about half the instructions of the SSE2
/// one; the portable backend is dispatched to only without AVX2, where
/// this is the SSE2 path after a cached detection.
#[cfg(feature = "simd")]
#[inline]
pub(crate) fn nearest_lattice_points_dispatched_from(
    arrays: &[[f32; 8]],
    out: &mut [E8Point],
    first_index: usize,
) -> Result<(), BatchError> {
    decode_lattice_points(arrays, out, first_index, crate::lattice::nearest_fast)
}

/// `E8Point::nearest` for each vector with the fast path `fast`, spelled
/// out so that the fast path writes straight into `out` instead of moving
/// a `Result` through memory.
#[inline(always)]
fn decode_lattice_points(
    arrays: &[[f32; 8]],
    out: &mut [E8Point],
    first_index: usize,
    fast: impl Fn(&[f32; 8]) -> Option<[i32; 8]>,
) -> Result<(), BatchError> {
    for (offset, (coords, slot)) in arrays.iter().zip(out).enumerate() {
        *slot = match fast(coords) {
            Some(doubled) => E8Point::from_doubled_unchecked(doubled),
            None => crate::lattice::nearest_exact(coords).map_err(|error| BatchError {
                index: first_index + offset,
                error,
            })?,
        };
    }
    Ok(())
}

/// The nearest E8 lattice point to each vector, as [`E8Point::nearest`]
/// (allocating).
///
/// ```
/// use hydron_core::{batch, Gf8Error};
///
/// let err = batch::scalar::nearest_lattice_points(&[[0.0; 8], [f32::INFINITY; 8]]).unwrap_err();
/// assert_eq!(err.index, 1);
/// assert!(matches!(err.error, Gf8Error::Infinite { coordinate: 0, .. }));
/// ```
pub fn nearest_lattice_points(arrays: &[[f32; 8]]) -> Result<Vec<E8Point>, BatchError> {
    arrays
        .iter()
        .enumerate()
        .map(|(index, coords)| {
            crate::lattice::nearest_baseline(coords).map_err(|error| BatchError { index, error })
        })
        .collect()
}
