//! The precondition rule of hydron's tests, in a file of its own so that
//! the crate's unit tests (`src/`) and hydron-codec's tests include it too
//! (`#[path]`).

/// Whether a test's precondition holds (a CPU feature, a file system
/// feature), by the project's convention: if it does not and
/// `HYDRON_REQUIRE_ALL=1` is set (scripts/test-all.sh and CI set it), the
/// test fails naming what is missing; otherwise it says so loudly on
/// standard error and the caller skips that part.
///
/// `if !precondition(cpu_has_it, "an AVX2 CPU") { return; }`
pub fn precondition(holds: bool, what: &str) -> bool {
    if holds {
        return true;
    }
    if std::env::var_os("HYDRON_REQUIRE_ALL").is_some_and(|v| v == "1") {
        panic!("precondition missing (HYDRON_REQUIRE_ALL=1 makes this a failure): {what}");
    }
    // Straight to the process's stderr, not through `eprintln!`, which the
    // test harness captures (and hides) for a test that passes.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED (precondition): {what}");
    false
}
