//! A child made by `fork()` after rayon's global pool ran split work gets
//! the parent's results instead of waiting for ever on the pool's threads,
//! which it does not have (`parallel`, "Fork").
//!
//! One test in its own binary, so that no other test's threads are running
//! when it forks. The child has a deadline (`alarm`): a hang ends it with
//! SIGALRM, which fails the test instead of hanging the suite.
#![cfg(all(feature = "parallel", target_os = "linux"))]

use hydron_core::batch;
use hydron_core::parallel::{NEAREST_ROOTS_MIN_VECTORS, NORMALIZE_MIN_VECTORS};

#[test]
fn a_forked_child_splits_work_in_a_pool_of_its_own() {
    let n = 4 * NORMALIZE_MIN_VECTORS.max(NEAREST_ROOTS_MIN_VECTORS) + 5;
    let raw: Vec<[f32; 8]> = (0..n)
        .map(|i| core::array::from_fn(|c| ((i * 8 + c) as f32 * 0.37).sin()))
        .collect();
    // Split across the global pool, which starts its threads.
    let vectors = batch::normalize(&raw).unwrap();
    let codes = batch::nearest_roots(&vectors);

    // SAFETY: the child runs only hydron's kernels (which allocate and
    // start threads: glibc's allocator is fork-safe, and no other thread
    // of this test binary holds a lock the child needs) and leaves with
    // `_exit`, never returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: `alarm` only arms a timer; its default action ends the
        // child if the work below hangs.
        unsafe { libc::alarm(60) };
        let same = std::panic::catch_unwind(|| {
            let again = batch::normalize(&raw).unwrap();
            again == vectors && batch::nearest_roots(&again) == codes
        });
        let status = match same {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(_) => 2,
        };
        // SAFETY: ends the child at once, without running the harness's
        // exit code in a copy of its process.
        unsafe { libc::_exit(status) };
    }
    let mut status = 0;
    // SAFETY: waits for the child made above; `status` is a valid out
    // pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child failed: wait status {status:#x} (exit 1: other results, 2: a panic, \
         signal 14: it hung)"
    );
}
