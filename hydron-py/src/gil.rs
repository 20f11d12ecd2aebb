//! When a call releases the GIL.
//!
//! Releasing and retaking the GIL costs 60 to 120 ns on the 2-core test
//! host (`python/bench.py --per-call`, docs/benchmarks.md): a sixth of a
//! one-vector `nearest_roots` call, a quarter of a `validate`, and more
//! than the work itself for a few vectors. So, as numpy does below 500
//! elements, the math and message calls keep the GIL when their input is
//! smaller than [`MIN_BYTES`] (64 vectors): at most a few microseconds of
//! work, during which other Python threads wait. Larger inputs, and every
//! call that touches a file, release it.

use pyo3::marker::Ungil;
use pyo3::Python;

/// Inputs of at least this many bytes (64 vectors of 32 bytes) are worked
/// on without the GIL.
pub const MIN_BYTES: usize = 64 * 32;

/// Runs `work`, on `input_bytes` bytes of input, without the GIL when the
/// input is large enough for the release to pay.
pub fn run<T, F>(py: Python<'_>, input_bytes: usize, work: F) -> T
where
    F: Ungil + FnOnce() -> T,
    T: Ungil,
{
    if input_bytes < MIN_BYTES {
        work()
    } else {
        py.detach(work)
    }
}

/// [`run`] for `vectors` vectors of 8 `f32`s.
pub fn run_on_vectors<T, F>(py: Python<'_>, vectors: usize, work: F) -> T
where
    F: Ungil + FnOnce() -> T,
    T: Ungil,
{
    run(py, vectors.saturating_mul(32), work)
}
