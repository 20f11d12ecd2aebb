//! The batch kernels across all cores (feature `parallel`).
//!
//! With this feature the free functions of [`batch`](crate::batch) split a
//! slice of at least a kernel's threshold (the constants below) into pieces
//! and run the [`batch::backend`](crate::batch::backend) kernel on each
//! piece in rayon's thread pool; a shorter slice stays on the calling thread,
//! because handing work to another thread costs a few microseconds. The
//! kernels treat every vector on its own (no sum runs across vectors), so
//! the results are bit-identical to one thread whatever the split, and a
//! fallible kernel reports the same first bad vector (the lowest index) and
//! error as the serial path.
//!
//! The pool is rayon's: the global one (one thread per core, or
//! `RAYON_NUM_THREADS`), or the pool a caller runs in with
//! [`rayon::ThreadPool::install`]. In a pool of one thread every kernel
//! stays serial. The [`Backend`] methods never split: they are the
//! single-threaded kernels.
//!
//! # Fork
//!
//! A child made by `fork()` (Python's `os.fork`, `multiprocessing`'s
//! `fork` start method, PyTorch's DataLoader workers) inherits rayon's
//! global pool but none of its threads: work sent there waits for ever
//! (rayon does not support fork, and its global pool cannot be rebuilt).
//! So split work called from outside any pool runs in the global pool
//! only in the process that first ran some ([`run`] notes that process's
//! id); in any other process, a fork's child, it runs in a pool of that
//! process's own, built on first use with the global pool's default size
//! (one thread per core, or `RAYON_NUM_THREADS`). The parent's pool is
//! left alone in the child, never used or dropped (its threads do not
//! exist there). A forked child therefore gets the same results, on all
//! cores. A fork made while another thread is inside a kernel is safe
//! too: the child never touches what that thread held. This is the
//! practice of other rayon-based Python modules (a pool per process,
//! keyed by its id), since rayon cannot be made fork-safe from inside.
//! The one case it does not cover: process ids are reused, so a
//! descendant that inherited this state from a process that has since
//! exited, and was then given that process's id, would take its dead
//! ancestor's pool for its own.
//! On targets without `fork` (not Unix) [`run`] calls its work as it is.
//!
//! ```
//! use hydron_core::{batch, parallel, Gf8};
//!
//! let raw = vec![[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]; 3 * parallel::NORMALIZE_MIN_VECTORS];
//! let vs = batch::normalize(&raw)?; // split across the global pool
//! let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
//! let serial = one_thread.install(|| batch::normalize(&raw))?;
//! assert_eq!(vs, serial);
//! # Ok::<(), hydron_core::BatchError>(())
//! ```
//!
//! # How it scales
//!
//! A kernel that spends time `t₁` on one thread takes about
//! `max(t₁ / p + o, b / B)` on `p` cores: `o` is the fixed cost of the
//! split (a few microseconds of waking threads and joining them), and
//! `b / B` is the time to move the kernel's `b` bytes at the machine's
//! memory bandwidth `B`, which the cores share. Compute-bound kernels
//! (nearest roots: ~4.6 ns per vector with AVX2; lattice points: ~3.3 ns)
//! scale with the cores, `p × t₁ / (t₁ + p·o)`. Memory-bound ones on inputs
//! larger than the caches (`validate`, `dot`, `copy_validated*` at under
//! 1 ns per vector) gain only as far as one core leaves bandwidth unused,
//! at most `t₁ / (b / B)`.
//!
//! # Thresholds
//!
//! Each threshold is the smallest slice length, in steps of two, at which
//! splitting in two broke even or won in the `crossover` group of
//! `benches/parallel.rs` (`cargo bench --features parallel,simd --bench
//! parallel -- crossover`) on a 2-core machine: about 75 to 180 µs of
//! serial work, since the split itself cost some 20 to 25 µs there. On a quiet
//! machine the hand-off is cheaper and a split would pay off earlier; the
//! thresholds err on the side of staying serial, where a split could only
//! lose. `docs/benchmarks.md` has the figures.
//!
//! [`Backend`]: crate::batch::Backend

use core::mem::MaybeUninit;
#[cfg(unix)]
use core::sync::atomic::{AtomicPtr, AtomicU32};
use core::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::batch::Backend;
use crate::simd::scalar::{assert_bytes_len, assert_same_len};
use crate::{BatchError, E8Point, E8Root, Gf8};

/// From this many vectors [`batch::nearest_roots_into`] (and
/// [`batch::nearest_roots_checked_into`]) splits across threads.
///
/// [`batch::nearest_roots_into`]: crate::batch::nearest_roots_into
/// [`batch::nearest_roots_checked_into`]: crate::batch::nearest_roots_checked_into
///
/// ```
/// assert!(hydron_core::parallel::NEAREST_ROOTS_MIN_VECTORS >= 1024);
/// ```
pub const NEAREST_ROOTS_MIN_VECTORS: usize = 16 * 1024;

/// From this many vectors [`batch::normalize_into`] (and
/// [`batch::normalize`]) splits across threads.
///
/// [`batch::normalize_into`]: crate::batch::normalize_into
/// [`batch::normalize`]: crate::batch::normalize
///
/// ```
/// assert!(hydron_core::parallel::NORMALIZE_MIN_VECTORS >= 1024);
/// ```
pub const NORMALIZE_MIN_VECTORS: usize = 64 * 1024;

/// From this many vectors [`batch::validate`] and the `copy_validated`
/// kernels split across threads.
///
/// [`batch::validate`]: crate::batch::validate
///
/// ```
/// assert!(hydron_core::parallel::VALIDATE_MIN_VECTORS >= 1024);
/// ```
pub const VALIDATE_MIN_VECTORS: usize = 128 * 1024;

/// From this many vectors [`batch::dot_into`] (and [`batch::dot_many`])
/// splits across threads.
///
/// [`batch::dot_into`]: crate::batch::dot_into
/// [`batch::dot_many`]: crate::batch::dot_many
///
/// ```
/// assert!(hydron_core::parallel::DOT_MIN_VECTORS >= 1024);
/// ```
pub const DOT_MIN_VECTORS: usize = 128 * 1024;

/// From this many vectors [`batch::nearest_lattice_points_into`] splits
/// across threads.
///
/// [`batch::nearest_lattice_points_into`]: crate::batch::nearest_lattice_points_into
///
/// ```
/// assert!(hydron_core::parallel::LATTICE_MIN_VECTORS >= 1024);
/// ```
pub const LATTICE_MIN_VECTORS: usize = 32 * 1024;

/// From this many rows [`batch::geodesic_distances_into`] (and
/// [`batch::geodesic_distances`]) splits across threads. Provisional:
/// chosen from the kernel's cost per row (as nearest roots', about
/// 75 µs of serial work at the threshold), not yet measured with the
/// `crossover` group.
///
/// [`batch::geodesic_distances_into`]: crate::batch::geodesic_distances_into
/// [`batch::geodesic_distances`]: crate::batch::geodesic_distances
///
/// ```
/// assert!(hydron_core::parallel::GEODESIC_MIN_VECTORS >= 1024);
/// ```
pub const GEODESIC_MIN_VECTORS: usize = 16 * 1024;

/// From this many rows [`batch::slerp_into`] (and [`batch::slerp`]) splits
/// across threads. Provisional, as [`GEODESIC_MIN_VECTORS`]: slerp costs
/// about three times more per row.
///
/// [`batch::slerp_into`]: crate::batch::slerp_into
/// [`batch::slerp`]: crate::batch::slerp
///
/// ```
/// assert!(hydron_core::parallel::SLERP_MIN_VECTORS >= 1024);
/// ```
pub const SLERP_MIN_VECTORS: usize = 8 * 1024;

/// The number of vectors per piece for a slice of `len` vectors, or `None`
/// when the slice should stay on the calling thread: at least half the
/// threshold per piece (so that each thread gets enough work to pay for
/// the hand-off) and about four pieces per thread (so that a thread slowed
/// by another process does not hold up the rest), rounded up to a multiple
/// of 64 so that no SIMD kernel sees a tail except in the last piece.
///
/// The length is checked first: asking rayon for its thread count starts
/// the global pool (threads and allocations), which a short slice must
/// never cause.
fn piece_len(len: usize, min_vectors: usize) -> Option<usize> {
    if len < min_vectors {
        return None;
    }
    let threads = rayon::current_num_threads();
    if threads < 2 {
        return None;
    }
    let per_piece = len.div_ceil(4 * threads).max(min_vectors / 2).max(1);
    Some(per_piece.div_ceil(64) * 64)
}

/// Runs `kernel` on matching pieces of `input` and `out` (the same length,
/// checked by the caller) in the thread pool, or on the whole when the
/// slice is short.
fn split<I: Sync, O: Send>(
    input: &[I],
    out: &mut [O],
    min_vectors: usize,
    kernel: impl Fn(&[I], &mut [O]) + Sync,
) {
    if input.len() < min_vectors {
        return kernel(input, out);
    }
    run(|| match piece_len(input.len(), min_vectors) {
        None => kernel(input, out),
        Some(piece) => input
            .par_chunks(piece)
            .zip(out.par_chunks_mut(piece))
            .for_each(|(input, out)| kernel(input, out)),
    });
}

/// [`split`] for kernels that find their input by row: `kernel(start,
/// piece)` fills `piece`, rows `start..start + piece.len()` of `out`.
pub(crate) fn split_rows<O: Send>(
    out: &mut [O],
    min_vectors: usize,
    kernel: impl Fn(usize, &mut [O]) + Sync,
) {
    if out.len() < min_vectors {
        return kernel(0, out);
    }
    run(|| match piece_len(out.len(), min_vectors) {
        None => kernel(0, out),
        Some(piece) => out
            .par_chunks_mut(piece)
            .enumerate()
            .for_each(|(n, out)| kernel(n * piece, out)),
    });
}

/// [`split`] for a fallible kernel whose errors count vectors from the
/// start of its piece: the result is the error with the lowest index in the
/// whole slice, as the serial kernel would report it.
///
/// Pieces that start after an error already found are skipped. The piece
/// that holds the first bad vector is never skipped (it starts before any
/// error index that can be found), and every piece before it runs to the
/// end, so on error every vector before the bad one has been processed,
/// as in the serial kernels.
fn try_split<I: Sync, O: Send>(
    input: &[I],
    out: &mut [O],
    min_vectors: usize,
    kernel: impl Fn(&[I], &mut [O]) -> Result<(), BatchError> + Sync,
) -> Result<(), BatchError> {
    if input.len() < min_vectors {
        return kernel(input, out);
    }
    run(|| try_split_here(input, out, min_vectors, &kernel))
}

/// [`try_split`] in the pool it runs in.
fn try_split_here<I: Sync, O: Send>(
    input: &[I],
    out: &mut [O],
    min_vectors: usize,
    kernel: &(impl Fn(&[I], &mut [O]) -> Result<(), BatchError> + Sync),
) -> Result<(), BatchError> {
    let Some(piece) = piece_len(input.len(), min_vectors) else {
        return kernel(input, out);
    };
    let first_bad = AtomicUsize::new(usize::MAX);
    input
        .par_chunks(piece)
        .zip(out.par_chunks_mut(piece))
        .enumerate()
        .filter_map(|(n, (input, out))| {
            let start = n * piece;
            if start > first_bad.load(Ordering::Relaxed) {
                return None;
            }
            let mut err = kernel(input, out).err()?;
            err.index += start;
            first_bad.fetch_min(err.index, Ordering::Relaxed);
            Some(err)
        })
        .min_by_key(|err| err.index)
        .map_or(Ok(()), Err)
}

/// Runs `op` where this process runs split work: in the current pool when
/// called from one of its threads ([`rayon::ThreadPool::install`]); else
/// in rayon's global pool in the process that first called this, and in
/// a pool of its own in any other process (a child made by `fork()`; see
/// "Fork" in the module docs). The batch kernels call it for every slice
/// they split; other code that uses rayon's pool for hydron's work, and
/// must survive a fork, calls it around that work (as hydron-codec's
/// parallel file reader does).
///
/// Outside a pool `op` runs on the calling thread in the first process,
/// and on a thread of the child's pool in a forked child. The cost is a
/// `getpid` call, so call it around large work only.
///
/// ```
/// use rayon::prelude::*;
///
/// let squares: Vec<u64> = hydron_core::parallel::run(|| {
///     (0..1000u64).into_par_iter().map(|i| i * i).collect()
/// });
/// assert_eq!(squares[999], 998_001);
/// ```
///
/// # Panics
///
/// In a forked child whose pool cannot be built (its threads cannot be
/// started), as rayon's global pool panics when it cannot start.
pub fn run<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    #[cfg(unix)]
    if let Some(pool) = fork::pool_of(std::process::id(), &fork::GLOBAL_POOL_PID) {
        return pool.install(op);
    }
    op()
}

/// The pools of forked children (see "Fork" in the module docs).
#[cfg(unix)]
mod fork {
    use super::{AtomicPtr, AtomicU32, Ordering};

    /// The id of the process whose split work runs in rayon's global pool:
    /// the first to call [`super::run`] (0 before).
    pub(super) static GLOBAL_POOL_PID: AtomicU32 = AtomicU32::new(0);

    /// A pool built in the process `pid`.
    struct ProcessPool {
        pid: u32,
        pool: rayon::ThreadPool,
    }

    /// The pool of the latest process that needed one: null, or a pointer
    /// from `Box::into_raw` that is never freed (a parent's pool is still
    /// in use in the parent, and in a child its threads do not exist, so
    /// dropping it there would wait for them).
    static PROCESS_POOL: AtomicPtr<ProcessPool> = AtomicPtr::new(core::ptr::null_mut());

    /// The pool process `pid` runs split work in: `None` for the current
    /// pool (a thread of a pool, or the process `global_pid` names, which
    /// it is set to when 0), else the pool of `pid`'s own.
    pub(super) fn pool_of(pid: u32, global_pid: &AtomicU32) -> Option<&'static rayon::ThreadPool> {
        if rayon::current_thread_index().is_some() {
            return None;
        }
        match global_pid.compare_exchange(0, pid, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => None,
            Err(owner) if owner == pid => None,
            Err(_) => Some(process_pool(pid)),
        }
    }

    /// The pool of process `pid`, built on first use.
    fn process_pool(pid: u32) -> &'static rayon::ThreadPool {
        loop {
            let current = PROCESS_POOL.load(Ordering::Acquire);
            // SAFETY: `PROCESS_POOL` holds null or a pointer from
            // `Box::into_raw` (below) that is never freed, so it is valid
            // for `'static`.
            if let Some(p) = unsafe { current.as_ref() } {
                if p.pid == pid {
                    return &p.pool;
                }
            }
            let pool = rayon::ThreadPoolBuilder::new()
                .thread_name(move |i| format!("hydron-{pid}-{i}"))
                .build()
                .unwrap_or_else(|e| {
                    panic!("hydron: cannot start a thread pool in process {pid}: {e}")
                });
            let fresh = Box::into_raw(Box::new(ProcessPool { pid, pool }));
            match PROCESS_POOL.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // SAFETY: `fresh` came from `Box::into_raw` and is now in
                // `PROCESS_POOL`, which never frees what it holds.
                Ok(_) => return unsafe { &(*fresh).pool },
                // Another thread of this process stored its pool first:
                // ours was never shared, so it is dropped, and the loop
                // takes theirs.
                // SAFETY: `fresh` came from `Box::into_raw` just above and
                // was not stored anywhere.
                Err(_) => drop(unsafe { Box::from_raw(fresh) }),
            }
        }
    }
}

/// [`Backend::validate`], split.
pub(crate) fn validate(backend: Backend, arrays: &[[f32; 8]]) -> Result<(), BatchError> {
    // `validate` has no output; pieces of a zero-sized slice stand in.
    let mut none = vec![(); arrays.len()];
    try_split(arrays, &mut none, VALIDATE_MIN_VECTORS, |arrays, _| {
        backend.validate(arrays)
    })
}

/// The `copy_validated` kernel of `backend`, split; `bytes` has 32 bytes
/// per slot of `out`. On success every slot has been written; on error
/// every slot before the bad vector's (and that one).
#[track_caller]
pub(crate) fn copy_validated(
    backend: Backend,
    bytes: &[u8],
    out: &mut [MaybeUninit<Gf8>],
) -> Result<(), BatchError> {
    assert_bytes_len(bytes.len(), out.len());
    let vectors: &[[u8; 32]] = bytemuck::cast_slice(bytes);
    try_split(vectors, out, VALIDATE_MIN_VECTORS, |vectors, out| {
        backend.copy_validated(vectors.as_flattened(), out)
    })
}

/// [`Backend::normalize_into`], split.
#[track_caller]
pub(crate) fn normalize_into(
    backend: Backend,
    arrays: &[[f32; 8]],
    out: &mut [Gf8],
) -> Result<(), BatchError> {
    assert_same_len(arrays.len(), out.len());
    try_split(arrays, out, NORMALIZE_MIN_VECTORS, |arrays, out| {
        backend.normalize_into(arrays, out)
    })
}

/// [`Backend::dot_into`], split.
#[track_caller]
pub(crate) fn dot_into(backend: Backend, query: Gf8, many: &[Gf8], out: &mut [f32]) {
    assert_same_len(many.len(), out.len());
    split(many, out, DOT_MIN_VECTORS, |many, out| {
        backend.dot_into(query, many, out);
    });
}

/// [`Backend::nearest_roots_into`], split.
#[track_caller]
pub(crate) fn nearest_roots_into(backend: Backend, vectors: &[Gf8], out: &mut [E8Root]) {
    assert_same_len(vectors.len(), out.len());
    split(vectors, out, NEAREST_ROOTS_MIN_VECTORS, |vectors, out| {
        backend.nearest_roots_into(vectors, out);
    });
}

/// [`Backend::nearest_roots_checked_into`], split (pieces are whole
/// blocks: a multiple of 64 vectors, and at least half the threshold).
#[track_caller]
pub(crate) fn nearest_roots_checked_into(
    backend: Backend,
    arrays: &[[f32; 8]],
    out: &mut [E8Root],
) -> Result<(), BatchError> {
    assert_same_len(arrays.len(), out.len());
    try_split(arrays, out, NEAREST_ROOTS_MIN_VECTORS, |arrays, out| {
        backend.nearest_roots_checked_into(arrays, out)
    })
}

/// [`Backend::nearest_lattice_points_into`], split.
#[track_caller]
pub(crate) fn nearest_lattice_points_into(
    backend: Backend,
    arrays: &[[f32; 8]],
    out: &mut [E8Point],
) -> Result<(), BatchError> {
    assert_same_len(arrays.len(), out.len());
    try_split(arrays, out, LATTICE_MIN_VECTORS, |arrays, out| {
        backend.nearest_lattice_points_into(arrays, out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::scalar;

    #[cfg(not(target_family = "wasm"))]
    fn two_threads() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool of two threads")
    }

    #[test]
    fn short_slices_stay_serial() {
        assert_eq!(piece_len(0, 16), None);
        assert_eq!(piece_len(15, 16), None);
    }

    /// On a target without threads (wasm32) rayon's global pool runs the
    /// work on the calling thread; elsewhere it splits.
    #[test]
    fn the_global_pool_runs_split_kernels() {
        let n = 2 * NORMALIZE_MIN_VECTORS + 3;
        let raw: Vec<[f32; 8]> = (0..n)
            .map(|i| core::array::from_fn(|c| ((i * 8 + c) as f32 * 0.61).cos()))
            .collect();
        let mut out = vec![Gf8::ZERO; n];
        normalize_into(crate::batch::backend(), &raw, &mut out).unwrap();
        assert_eq!(out, scalar::normalize(&raw).unwrap());
    }

    // Pools of their own need threads, which wasm32 does not have.
    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn single_threads_and_short_slices_in_a_pool_stay_serial() {
        let pool = two_threads();
        assert_eq!(pool.install(|| piece_len(1000, 2000)), None);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(one.install(|| piece_len(1 << 20, 16)), None);
    }

    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn pieces_are_whole_blocks_of_at_least_half_the_threshold() {
        let pool = two_threads();
        pool.install(|| {
            // 2 threads, 4 pieces each: 1 << 20 / 8.
            assert_eq!(piece_len(1 << 20, 1024), Some(1 << 17));
            // At least half the threshold, rounded up to 64.
            assert_eq!(piece_len(200, 100), Some(64));
            assert_eq!(piece_len(1000, 100), Some(128));
            assert_eq!(piece_len(5000, 1000), Some(640));
        });
    }

    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn validate_and_zero_sized_pieces() {
        let pool = two_threads();
        let mut raw = vec![[0.0f32; 8]; 3 * VALIDATE_MIN_VECTORS + 5];
        pool.install(|| {
            assert_eq!(validate(Backend::Scalar, &raw), Ok(()));
            raw[2 * VALIDATE_MIN_VECTORS + 1][7] = f32::NAN;
            let err = validate(Backend::Scalar, &raw).unwrap_err();
            assert_eq!(err.index, 2 * VALIDATE_MIN_VECTORS + 1);
            assert_eq!(err.error, crate::Gf8Error::NotANumber { coordinate: 7 });
        });
    }

    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn lattice_points_match_the_scalar_kernel_and_its_first_error() {
        let pool = two_threads();
        let n = 5 * LATTICE_MIN_VECTORS + 3;
        let mut raw: Vec<[f32; 8]> = (0..n)
            .map(|i| core::array::from_fn(|c| ((i * 8 + c) as f32 * 0.37).sin() * 3.0))
            .collect();
        let mut out = vec![E8Point::ORIGIN; n];
        let expected = scalar::nearest_lattice_points(&raw).unwrap();
        pool.install(|| nearest_lattice_points_into(Backend::Scalar, &raw, &mut out))
            .unwrap();
        assert_eq!(out, expected);

        raw[n - 2][1] = 1e30;
        raw[3 * LATTICE_MIN_VECTORS][4] = f32::INFINITY;
        raw[n - 1][0] = f32::NAN;
        let serial = scalar::nearest_lattice_points(&raw).unwrap_err();
        let split = pool
            .install(|| nearest_lattice_points_into(Backend::Scalar, &raw, &mut out))
            .unwrap_err();
        assert_eq!(split, serial);
        assert_eq!(split.index, 3 * LATTICE_MIN_VECTORS);
        assert_eq!(out[..split.index], expected[..split.index]);
    }

    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn checked_roots_match_one_thread_and_its_first_error() {
        let pool = two_threads();
        let n = 3 * NEAREST_ROOTS_MIN_VECTORS + 5;
        let mut raw: Vec<[f32; 8]> = (0..n)
            .map(|i| core::array::from_fn(|c| ((i * 8 + c) as f32 * 0.43).sin()))
            .collect();
        let raw_vectors = scalar::normalize(&raw).unwrap();
        raw.copy_from_slice(Gf8::slice_as_arrays(&raw_vectors));
        let expected = scalar::nearest_roots(&raw_vectors);
        let mut out = vec![E8Root::new(0).unwrap(); n];
        let backend = crate::batch::backend();
        pool.install(|| nearest_roots_checked_into(backend, &raw, &mut out))
            .unwrap();
        assert_eq!(out, expected);

        raw[n - 1][2] = f32::INFINITY;
        raw[2 * NEAREST_ROOTS_MIN_VECTORS + 7][5] = 3.0;
        let serial = scalar::validate(&raw).unwrap_err();
        let mut out = vec![E8Root::new(0).unwrap(); n];
        let split = pool
            .install(|| nearest_roots_checked_into(backend, &raw, &mut out))
            .unwrap_err();
        assert_eq!(split, serial);
        assert_eq!(out[..split.index], expected[..split.index]);
    }

    /// As a forked child sees it: the global pool belongs to another
    /// process, so split work runs in a pool of this one's own (a real
    /// fork: tests/fork.rs).
    #[test]
    #[cfg(unix)]
    fn another_process_splits_in_a_pool_of_its_own() {
        let me = std::process::id();
        let owner = AtomicU32::new(0);
        assert!(fork::pool_of(me, &owner).is_none());
        assert_eq!(
            owner.load(Ordering::Relaxed),
            me,
            "the first caller owns the global pool"
        );
        assert!(fork::pool_of(me, &owner).is_none());

        let child = me.wrapping_add(1);
        let pool = fork::pool_of(child, &owner).expect("a pool of its own");
        assert!(
            core::ptr::eq(pool, fork::pool_of(child, &owner).unwrap()),
            "built once"
        );
        let name = pool.install(|| std::thread::current().name().map(String::from));
        assert!(name.unwrap().starts_with(&format!("hydron-{child}-")));
        // On a thread of a pool: that pool.
        assert!(pool.install(|| fork::pool_of(child, &owner)).is_none());
        // A grandchild gets another.
        let grandchild = fork::pool_of(child.wrapping_add(1), &owner).unwrap();
        assert!(!core::ptr::eq(pool, grandchild));
        // Under Miri (scripts/miri.sh runs this test for `process_pool`'s
        // `unsafe` code), the pools alone: the split below is 131,075
        // vectors.
        if cfg!(miri) {
            assert_eq!(grandchild.install(|| 6 * 7), 42);
            return;
        }

        let n = 2 * NORMALIZE_MIN_VECTORS + 3;
        let raw: Vec<[f32; 8]> = (0..n)
            .map(|i| core::array::from_fn(|c| ((i * 8 + c) as f32 * 0.29).sin()))
            .collect();
        let mut out = vec![Gf8::ZERO; n];
        grandchild
            .install(|| normalize_into(crate::batch::backend(), &raw, &mut out))
            .unwrap();
        assert_eq!(out, scalar::normalize(&raw).unwrap());
    }

    #[test]
    #[cfg(not(target_family = "wasm"))]
    #[should_panic(expected = "batch output has length 3")]
    fn length_mismatch_panics_before_splitting() {
        let vs = vec![Gf8::ZERO; 4 * NEAREST_ROOTS_MIN_VECTORS];
        let mut out = [E8Root::new(0).unwrap(); 3];
        two_threads().install(|| nearest_roots_into(Backend::Scalar, &vs, &mut out));
    }
}
