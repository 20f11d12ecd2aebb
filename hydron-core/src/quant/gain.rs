//! The 16 gain levels of the [`shell`](super::shell) code.
//!
//! A block `x` of i.i.d. N(0, 1) coordinates is coded as `γ · ŝ`, `ŝ` the
//! unit shape maximizing `t = ⟨x, ŝ⟩` and `γ` the level nearest `t`. The
//! levels are a Lloyd–Max quantizer of `t` (close to a chi distribution with 8
//! degrees of freedom: the norm, shrunk a little by the angle to the shape): Lloyd's
//! algorithm (nearest-level cells, then each level the mean of its cell;
//! started from the sample quantiles at (k + ½)/16, run until no level moves
//! by 1e-7) on the `t` of 1,000,000 seeded Gaussian blocks
//! (`SplitMix64(0x5EED_6A17)`, Box–Muller), rounded to `f32`. The ignored
//! test `gain_levels_lloyd` in `hydron-core/tests/quant_shell.rs`
//! recomputes them (`--ignored --nocapture`); the always-on test
//! `gain_levels_are_a_fixed_point` checks that one Lloyd step on 200,000
//! fresh blocks moves none of them by more than 0.01.

/// The gain levels, ascending.
pub const GAIN_LEVELS: [f32; 16] = [
    1.186_996_8,
    1.538_076_3,
    1.795_942,
    2.013_175,
    2.208_242,
    2.391_724_8,
    2.568_767_5,
    2.743_878,
    2.920_796_2,
    3.102_631,
    3.295_138,
    3.504_356_1,
    3.739_261_9,
    4.015_138_6,
    4.362_150_7,
    4.887_162,
];

/// The midpoints between consecutive levels: `t` above the `k`-th
/// midpoint (and not above the next) is coded as level `k + 1`.
pub(crate) const GAIN_THRESHOLDS: [f64; 15] = {
    let mut out = [0.0; 15];
    let mut k = 0;
    while k < 15 {
        out[k] = 0.5 * (GAIN_LEVELS[k] as f64 + GAIN_LEVELS[k + 1] as f64);
        k += 1;
    }
    out
};
