//! Batch kernels on short slices allocate nothing and start no threads.
//!
//! A slice below a kernel's threshold stays on the calling thread; with the
//! `parallel` feature it must not even start rayon's global pool (threads,
//! and allocations on the calling thread), which a decoder of a small
//! message would otherwise pay, and which an allocation budget on
//! untrusted input would see. One test in its own binary, so that nothing
//! else has started the pool first.

use std::alloc::{GlobalAlloc, Layout, System};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

use hydron_core::{batch, E8Point, E8Root, Gf8};

mod common;

/// The system allocator, counting every allocation of every thread.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the bookkeeping is
// one atomic add.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The threads of this process, where the OS says.
fn threads() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Threads:"))?;
    line["Threads:".len()..].trim().parse().ok()
}

#[test]
fn short_slices_allocate_nothing_and_start_no_threads() {
    const N: usize = 1000; // below every kernel's threshold
    let arrays: Vec<[f32; 8]> = (0..N)
        .map(|i| {
            let t = i as f32 * 0.01;
            [t.sin(), t.cos(), 0.5, -0.25, 0.0, 0.0, 0.0, 0.0]
        })
        .collect();
    let mut vectors = vec![Gf8::ZERO; N];
    let mut raw = vec![[0.0f32; 8]; N];
    let mut slots = vec![MaybeUninit::<Gf8>::uninit(); N];
    let mut dots = vec![0.0f32; N];
    let mut codes = vec![E8Root::new(0).unwrap(); N];
    let mut points = vec![E8Point::ORIGIN; N];
    let _ = batch::backend(); // detecting the CPU is allowed to cost once
    let threads_before = threads();

    let before = ALLOCATIONS.load(Ordering::Relaxed);
    batch::normalize_into(&arrays, &mut vectors).unwrap();
    let bytes: &[u8] = bytemuck::cast_slice(Gf8::slice_as_arrays(&vectors));
    batch::validate(Gf8::slice_as_arrays(&vectors)).unwrap();
    batch::copy_validated_into(bytes, &mut raw).unwrap();
    batch::copy_validated_uninit(bytes, &mut slots).unwrap();
    batch::dot_into(vectors[1], &vectors, &mut dots);
    batch::nearest_roots_into(&vectors, &mut codes);
    batch::nearest_lattice_points_into(&arrays, &mut points).unwrap();
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;

    assert_eq!(allocations, 0, "the batch kernels allocated on {N} vectors");
    // The thread count is read from /proc on Linux: a precondition there.
    if !cfg!(target_os = "linux")
        || common::precondition(
            threads_before.is_some(),
            "/proc/self/status (a mounted procfs), to count this process's threads",
        )
    {
        assert_eq!(threads(), threads_before, "a thread pool started");
    }
    assert_eq!(raw, Gf8::slice_as_arrays(&vectors));
}
