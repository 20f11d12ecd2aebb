//! [`Rotation::unrotate`] in `f32`, eight coordinates to a register: the
//! 2-bit decoder's transform ([`LatticeQuantizer`](super::LatticeQuantizer)
//! decodes with it when the scale allows, below); and [`Rotate32`],
//! [`Rotation::rotate`] in `f32` with the same rounds, the 2-bit
//! encoder's.
//!
//! The steps are the `f64` transform's ([`hadamard`](super::hadamard)): on
//! each window, last window first, the butterfly rounds `h = 1, 2, 4, …`,
//! then each coordinate times its sign and `1/√P`, here one product by
//! `±1/√P` rounded to `f32` (a sign flip is exact). The sums round to
//! `f32` at every round, so the result is the `f64` transform's to within
//! `f32` rounding: a few units of `2⁻²⁴` of the vector's norm.
//!
//! A vector is a slice of [`F8`]. The rounds `h = 1, 2, 4` stay inside
//! each register: the lanes swapped in pairs, the lanes that take a
//! difference negated (an exact sign flip), and the two added, which is
//! `x + y` and `x − y` to the bit. The rounds from `h = 8` on are between
//! registers, three at a time on eight registers `h` apart (the last pass
//! also multiplies). It is plain Rust on arrays, which the compiler turns
//! into vector instructions; the quantizer compiles it once as it is and
//! once for AVX2, with the same operations, so both give the same bits.
//!
//! Range: every value of the transform is at most `P Σ|x_i|`-sized, so
//! for inputs of magnitude at most `M` it stays below
//! `d^{3/2} M (1 + 2⁻²⁰)` over both windows (`d` the rotated dimension,
//! `P ≤ d`). Decoded blocks have coordinates of at most `2.75 · scale`,
//! so no value overflows when `scale ≤ f32::MAX / (4 d²)`
//! ([`Unrotate32::max_scale`]); the quantizer decodes larger scales in
//! `f64`.

use super::hadamard::{rounds_at, Rotation};

/// Eight consecutive coordinates: the unit the transform works in (one
/// AVX2 register).
pub(crate) type F8 = [f32; 8];

/// The inverse of a [`Rotation`] in `f32` (module docs).
#[derive(Clone, Debug)]
pub(crate) struct Unrotate32 {
    /// The rotated dimension.
    dim: usize,
    /// Registers per window, `P / 8`.
    regs: usize,
    /// Each window's first register and its products `±1/√P`, in the
    /// order they are applied (the last window first).
    steps: Vec<(usize, Vec<F8>)>,
}

impl Unrotate32 {
    /// The inverse of `r` in `f32`. `r`'s dimension is a multiple of 8,
    /// so is its window (at least 8), and so are the windows' starts.
    pub(crate) fn new(r: &Rotation) -> Unrotate32 {
        let window = r.window();
        debug_assert!(r.dim().is_multiple_of(8) && window.is_multiple_of(8));
        let norm = 1.0 / (window as f64).sqrt();
        let steps = r
            .windows()
            .rev()
            .map(|(start, signs)| {
                debug_assert!(start.is_multiple_of(8));
                let post = signs
                    .as_chunks::<8>()
                    .0
                    .iter()
                    .map(|s| s.map(|s| (s * norm) as f32))
                    .collect();
                (start / 8, post)
            })
            .collect();
        Unrotate32 {
            dim: r.dim(),
            regs: window / 8,
            steps,
        }
    }

    /// The largest scale of decoded blocks (coordinates of at most
    /// `2.75 · scale`) that the transform takes without overflow:
    /// `f32::MAX / (4 d²)` (module docs).
    #[inline]
    pub(crate) fn max_scale(&self) -> f64 {
        let d = self.dim as f64;
        f64::from(f32::MAX) / (4.0 * d * d)
    }

    /// Undoes the rotation of `v` (`d / 8` registers) in place, with
    /// `in_reg` for the rounds inside a register ([`in_register`], or its
    /// AVX2 form, the same bits).
    #[inline(always)]
    pub(crate) fn apply(&self, v: &mut [F8], in_reg: impl Fn(F8) -> F8 + Copy) {
        debug_assert_eq!(v.len() * 8, self.dim);
        for (start, post) in &self.steps {
            transform(&mut v[*start..*start + self.regs], post, in_reg);
        }
    }
}

/// [`Rotation::rotate`] in `f32` with a factor folded in, onto whole
/// blocks: the 2-bit encoder's transform (module docs of
/// [`hadamard32`](self)). Every coordinate is first multiplied by
/// `factor` rounded to `f32` (where the encoder divides by the scale;
/// on the first window, which starts at 0, by `±factor`, the sign and
/// the factor in one product); then on each window, first window first,
/// each coordinate times its sign (done already on the first), the
/// butterfly rounds, then times `1/√P` rounded to `f32`. So the
/// result is `factor ·` the `f64` rotation, to within `f32` rounding.
///
/// Range: after the first step every value is at most
/// `A = |factor| max|x_i| (1 + 2⁻²⁴)`, and every later one at most
/// `d^{3/2} A (1 + 2⁻²⁰)` (as for [`Unrotate32`]), so nothing overflows
/// when `|factor| max|x_i| ≤ f32::MAX / (4 d²)`; [`Rotate32::rotate_scaled`]
/// checks that (and that `factor` is within `2^±100`, a normal `f32` well
/// inside the range) and otherwise leaves the vector to the `f64` path.
#[derive(Clone, Debug)]
pub(crate) struct Rotate32 {
    /// The rotated dimension.
    dim: usize,
    /// Registers per window, `P / 8`.
    regs: usize,
    /// Each window's first register and its `±1` signs, in the order
    /// they are applied (the first window first).
    steps: Vec<(usize, Vec<F8>)>,
    /// `1/√P` rounded to `f32`, `P / 8` registers of it.
    post: Vec<F8>,
}

impl Rotate32 {
    /// `r` in `f32`. `r`'s dimension is a multiple of 8, so is its window
    /// (at least 8), and so are the windows' starts.
    pub(crate) fn new(r: &Rotation) -> Rotate32 {
        let window = r.window();
        debug_assert!(r.dim().is_multiple_of(8) && window.is_multiple_of(8));
        let norm = (1.0 / (window as f64).sqrt()) as f32;
        debug_assert!(r.windows().next().is_some_and(|(start, _)| start == 0));
        let steps: Vec<(usize, Vec<F8>)> = r
            .windows()
            .map(|(start, signs)| {
                debug_assert!(start.is_multiple_of(8));
                let signs = signs
                    .as_chunks::<8>()
                    .0
                    .iter()
                    .map(|s| s.map(|s| s as f32))
                    .collect();
                (start / 8, signs)
            })
            .collect();
        Rotate32 {
            dim: r.dim(),
            regs: window / 8,
            steps,
            post: vec![[norm; 8]; window / 8],
        }
    }

    /// `factor` times the rotation of `x` (zero-padded to the rotated
    /// dimension) into `out` (`d / 8` blocks), with `in_reg` for the
    /// rounds inside a register ([`in_register`], or its AVX2 form, the
    /// same bits); `false`, with `out` unspecified, when the range check
    /// of the type's docs fails (then the caller rotates in `f64`).
    #[inline(always)]
    pub(crate) fn rotate_scaled(
        &self,
        x: &[f32],
        factor: f64,
        out: &mut [F8],
        in_reg: impl Fn(F8) -> F8 + Copy,
    ) -> bool {
        debug_assert_eq!(out.len() * 8, self.dim);
        let max_abs = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let d = self.dim as f64;
        let in_range = factor.abs() <= 2f64.powi(100)
            && factor.abs() >= 2f64.powi(-100)
            && f64::from(max_abs) * factor.abs() <= f64::from(f32::MAX) / (4.0 * d * d);
        if !in_range {
            return false;
        }
        let flat = out.as_flattened_mut();
        flat[..x.len()].copy_from_slice(x);
        flat[x.len()..].fill(0.0);
        let factor = factor as f32;
        // The coordinates past the first window (which starts at 0) take
        // the factor now, before the second window mixes them in.
        for r in &mut out[self.regs..] {
            *r = r.map(|v| v * factor);
        }
        for (w, (start, signs)) in self.steps.iter().enumerate() {
            let v = &mut out[*start..*start + self.regs];
            if w == 0 {
                for (r, s) in v.iter_mut().zip(signs) {
                    *r = mul(*r, s.map(|s| s * factor));
                }
            } else {
                for (r, s) in v.iter_mut().zip(signs) {
                    *r = mul(*r, *s);
                }
            }
            transform(v, &self.post, in_reg);
        }
        true
    }
}

/// `H_n` (unnormalized) of `v`, `n = 8 · v.len()` a power of two, then
/// each coordinate times `post`.
#[inline(always)]
fn transform(v: &mut [F8], post: &[F8], in_reg: impl Fn(F8) -> F8) {
    let n = v.len();
    if n == 1 {
        v[0] = mul(in_reg(v[0]), post[0]);
        return;
    }
    for x in v.iter_mut() {
        *x = in_reg(*x);
    }
    let mut h = 1;
    while h < n {
        let (rounds, last) = rounds_at(h, n);
        match (rounds, last) {
            (3, false) => between::<8, false>(v, h, &[]),
            (3, true) => between::<8, true>(v, h, post),
            (2, false) => between::<4, false>(v, h, &[]),
            (2, true) => between::<4, true>(v, h, post),
            (_, false) => between::<2, false>(v, h, &[]),
            (_, true) => between::<2, true>(v, h, post),
        }
        h <<= rounds;
    }
}

#[inline(always)]
fn add(a: F8, b: F8) -> F8 {
    core::array::from_fn(|i| a[i] + b[i])
}

#[inline(always)]
fn sub(a: F8, b: F8) -> F8 {
    core::array::from_fn(|i| a[i] - b[i])
}

#[inline(always)]
fn mul(a: F8, b: F8) -> F8 {
    core::array::from_fn(|i| a[i] * b[i])
}

/// `a` with the lanes of `mask`'s set sign bits negated (exact).
#[inline(always)]
fn negate(a: F8, mask: [u32; 8]) -> F8 {
    core::array::from_fn(|i| f32::from_bits(a[i].to_bits() ^ mask[i]))
}

/// The sign bit in the lanes that take a difference in the rounds
/// `h = 1`, 2 and 4: lane `i` where bit `h` of `i` is set.
const DIFFERENCES: [[u32; 8]; 3] = {
    let mut m = [[0u32; 8]; 3];
    let mut r = 0;
    while r < 3 {
        let mut i = 0;
        while i < 8 {
            if i >> r & 1 == 1 {
                m[r][i] = 1 << 31;
            }
            i += 1;
        }
        r += 1;
    }
    m
};

/// The rounds `h = 1, 2, 4` on the eight lanes of `x`: each lane plus
/// its partner `h` away, or minus itself where it is the upper one
/// (`partner + (−x)` is `partner − x` to the bit).
#[inline(always)]
pub(crate) fn in_register(x: F8) -> F8 {
    let x = add(
        [x[1], x[0], x[3], x[2], x[5], x[4], x[7], x[6]],
        negate(x, DIFFERENCES[0]),
    );
    let x = add(
        [x[2], x[3], x[0], x[1], x[6], x[7], x[4], x[5]],
        negate(x, DIFFERENCES[1]),
    );
    add(
        [x[4], x[5], x[6], x[7], x[0], x[1], x[2], x[3]],
        negate(x, DIFFERENCES[2]),
    )
}

/// The butterfly rounds on registers `h`, `2h`, … `(N/2) h` apart, on
/// each block of `N h` registers: for each `j < h`, the `N` registers
/// `j + k h` in registers. `LAST`: then times `post`.
#[inline(always)]
fn between<const N: usize, const LAST: bool>(v: &mut [F8], h: usize, post: &[F8]) {
    for (b, block) in v.chunks_exact_mut(N * h).enumerate() {
        let post = if LAST { &post[b * N * h..] } else { &[][..] };
        for j in 0..h {
            let mut x: [F8; N] = core::array::from_fn(|k| block[j + k * h]);
            let mut s = 1;
            while s < N {
                for k in 0..N {
                    if k & s == 0 {
                        let (a, c) = (x[k], x[k + s]);
                        x[k] = add(a, c);
                        x[k + s] = sub(a, c);
                    }
                }
                s <<= 1;
            }
            for k in 0..N {
                block[j + k * h] = if LAST {
                    mul(x[k], post[j + k * h])
                } else {
                    x[k]
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, state: &mut u64) -> Vec<f32> {
        (0..n)
            .map(|_| {
                *state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((*state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 3.0
            })
            .collect()
    }

    /// The rounds in registers and between them are the round-by-round
    /// butterflies in `f32` to the bit, then the products, at every
    /// window size up to 1024.
    #[test]
    fn rounds_equal_round_by_round() {
        let mut state = 3u64;
        for log in 3..=10 {
            let n = 1usize << log;
            for _ in 0..10 {
                let x = noise(n, &mut state);
                let post = noise(n, &mut state);
                let mut reference = x.clone();
                let mut h = 1;
                while h < n {
                    for block in reference.chunks_exact_mut(2 * h) {
                        let (lo, hi) = block.split_at_mut(h);
                        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                            (*a, *b) = (*a + *b, *a - *b);
                        }
                    }
                    h *= 2;
                }
                for (r, p) in reference.iter_mut().zip(&post) {
                    *r *= p;
                }
                let mut v: Vec<F8> = x.as_chunks::<8>().0.to_vec();
                transform(&mut v, post.as_chunks::<8>().0, in_register);
                let bits = |v: &[f32]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(v.as_flattened()), bits(&reference), "n = {n}");
            }
        }
    }

    /// The `f32` inverse is the `f64` one to within `f32` rounding.
    #[test]
    fn unrotate32_is_unrotate_rounded() {
        let mut state = 5u64;
        for dim in [8, 16, 24, 56, 384, 1000] {
            let r = Rotation::new(dim, dim as u64);
            let u = Unrotate32::new(&r);
            let x = noise(dim, &mut state);
            let mut wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
            r.unrotate(&mut wide);
            let mut v: Vec<F8> = x.as_chunks::<8>().0.to_vec();
            u.apply(&mut v, in_register);
            let norm = wide.iter().map(|a| a * a).sum::<f64>().sqrt();
            for (a, b) in v.as_flattened().iter().zip(&wide) {
                assert!((f64::from(*a) - b).abs() <= 1e-6 * norm, "dim {dim}");
            }
        }
    }

    /// The `f32` rotation is `factor ·` the `f64` one to within `f32`
    /// rounding, and declines what could overflow.
    #[test]
    fn rotate32_is_rotate_rounded() {
        let mut state = 6u64;
        for dim in [8, 16, 24, 56, 384, 1000] {
            let r = Rotation::new(dim, dim as u64 + 1);
            let f = Rotate32::new(&r);
            let x = noise(dim - 3, &mut state);
            for factor in [1.0, -0.37, 19.5] {
                let mut wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
                wide.resize(dim, 0.0);
                r.rotate(&mut wide);
                let mut v = vec![[f32::NAN; 8]; dim / 8];
                assert!(f.rotate_scaled(&x, factor, &mut v, in_register));
                let norm = wide.iter().map(|a| a * a).sum::<f64>().sqrt() * factor.abs();
                for (a, b) in v.as_flattened().iter().zip(&wide) {
                    assert!(
                        (f64::from(*a) - b * factor).abs() <= 1e-6 * norm,
                        "dim {dim}"
                    );
                }
            }
            let mut v = vec![[0.0f32; 8]; dim / 8];
            let limit = f64::from(f32::MAX) / (4.0 * (dim * dim) as f64);
            // The largest `f32` within the limit, at coordinate 1.
            let m = limit as f32;
            let m = if f64::from(m) > limit {
                f32::from_bits(m.to_bits() - 1)
            } else {
                m
            };
            let mut big = vec![1.0f32; dim];
            big[1] = -m;
            assert!(f.rotate_scaled(&big, 1.0, &mut v, in_register));
            assert!(v.as_flattened().iter().all(|a| a.is_finite()));
            assert!(!f.rotate_scaled(&big, 1.01, &mut v, in_register));
            assert!(!f.rotate_scaled(&big, 2f64.powi(-101), &mut v, in_register));
            assert!(!f.rotate_scaled(&x, 2f64.powi(101), &mut v, in_register));
        }
    }

    /// The AVX2 rounds in a register are the portable ones, to the bit.
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    #[test]
    fn avx2_in_register_equals_the_portable_rounds() {
        if !crate::precondition::precondition(
            std::is_x86_feature_detected!("avx2"),
            "an x86-64 CPU with AVX2 (the AVX2 Hadamard rounds are not tested here)",
        ) {
            return;
        }
        let mut state = 9u64;
        let mut x = noise(8 * 1000, &mut state);
        // Equal values, so zero differences and their signs.
        x[..8].copy_from_slice(&[1.5, 1.5, -0.0, 0.0, 2.0, 2.0, 0.0, -0.0]);
        for r in x.as_chunks::<8>().0 {
            // SAFETY: detection found AVX2 above.
            let wide = unsafe { super::super::hadamard32_avx2::in_register_avx2(*r) };
            let bits = |v: F8| v.map(f32::to_bits);
            assert_eq!(bits(wide), bits(in_register(*r)), "{r:?}");
        }
    }
}
