//! A seeded random rotation: random signs and a fast Walsh–Hadamard
//! transform, O(d log d), nothing stored but the seed.
//!
//! For a dimension `d`, let `P` be the largest power of two `≤ d`. The
//! rotation works on one or two **windows** of `P` coordinates: `[0, P)`
//! and, when `P < d`, `[d − P, d)` too (they overlap, since `P > d/2`, so
//! every coordinate is mixed with at least `P` others). On each window in
//! turn it multiplies coordinate `j` by its random sign and then applies
//! the orthonormal Hadamard matrix `H_P / √P`. Each step is orthogonal, so
//! the whole is; the inverse runs the steps backwards (`H_P / √P` is its
//! own inverse). Working in two overlapping windows instead of padding to
//! the next power of two keeps the codes at 2 bits per coordinate of the
//! zero-padded vector (a 384-d vector stays 48 blocks, not 64).
//!
//! The signs come from SplitMix64 seeded with `seed`: window 0 takes the
//! first `⌈P/64⌉` outputs, window 1 the next `⌈P/64⌉`; coordinate `j` of a
//! window is negated when bit `j mod 64` of output `⌊j/64⌋` is set. The
//! arithmetic is in `f64` (no overflow for any finite `f32` input), so the
//! norm is kept to within `f64` rounding.
//!
//! ```
//! use hydron_core::quant::Rotation;
//!
//! let r = Rotation::new(24, 7);
//! let x: Vec<f64> = (0..24).map(|i| i as f64 - 11.5).collect();
//! let mut y = x.clone();
//! r.rotate(&mut y);
//! let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
//! assert!((norm(&y) - norm(&x)).abs() < 1e-12 * norm(&x));
//! r.unrotate(&mut y);
//! assert!(x.iter().zip(&y).all(|(a, b)| (a - b).abs() < 1e-12));
//! ```

/// SplitMix64: the sign generator (Steele, Lea and Flood, 2014).
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A seeded orthogonal transform of `d`-dimensional vectors (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Rotation {
    dim: usize,
    seed: u64,
    /// The power-of-two window size.
    window: usize,
    /// Each window's start and its `±1` signs.
    windows: Vec<(usize, Vec<f64>)>,
}

impl Rotation {
    /// The rotation of `dim`-dimensional vectors drawn from `seed`.
    ///
    /// # Panics
    /// When `dim` is 0.
    #[must_use]
    pub fn new(dim: usize, seed: u64) -> Rotation {
        assert!(dim > 0, "Rotation::new: dimension 0");
        let window = 1usize << (usize::BITS - 1 - dim.leading_zeros());
        let starts: &[usize] = if window == dim {
            &[0]
        } else {
            &[0, dim - window]
        };
        let mut rng = SplitMix64(seed);
        let windows = starts
            .iter()
            .map(|&start| {
                let words: Vec<u64> = (0..window.div_ceil(64)).map(|_| rng.next_u64()).collect();
                let signs = (0..window)
                    .map(|j| {
                        if words[j / 64] >> (j % 64) & 1 == 1 {
                            -1.0
                        } else {
                            1.0
                        }
                    })
                    .collect();
                (start, signs)
            })
            .collect();
        Rotation {
            dim,
            seed,
            window,
            windows,
        }
    }

    /// The dimension it rotates.
    #[must_use]
    #[inline]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The seed it was drawn from.
    #[must_use]
    #[inline]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Rotates `v` in place.
    ///
    /// # Panics
    /// When `v` does not have [`dim`](Self::dim) coordinates.
    #[inline(always)]
    pub fn rotate(&self, v: &mut [f64]) {
        assert_eq!(v.len(), self.dim, "Rotation::rotate: wrong dimension");
        for (start, signs) in &self.windows {
            let w = &mut v[*start..*start + self.window];
            for (a, s) in w.iter_mut().zip(signs) {
                *a *= s;
            }
            hadamard(w);
        }
    }

    /// Undoes [`rotate`](Self::rotate) in place (its transpose).
    ///
    /// # Panics
    /// When `v` does not have [`dim`](Self::dim) coordinates.
    #[inline(always)]
    pub fn unrotate(&self, v: &mut [f64]) {
        assert_eq!(v.len(), self.dim, "Rotation::unrotate: wrong dimension");
        for (start, signs) in self.windows.iter().rev() {
            let w = &mut v[*start..*start + self.window];
            hadamard(w);
            for (a, s) in w.iter_mut().zip(signs) {
                *a *= s;
            }
        }
    }
}

/// The orthonormal Walsh–Hadamard transform `H_n / √n` of a slice whose
/// length `n` is a power of two, in place: `log2 n` rounds of butterflies.
///
/// The first two rounds (`h` = 1 and 2) are taken together on each group of
/// four, the others on whole halves of contiguous blocks; every round's
/// sums and differences are the same operations on the same values as
/// round by round, so the result is the same to the bit.
#[inline(always)]
fn hadamard(v: &mut [f64]) {
    let n = v.len();
    debug_assert!(n.is_power_of_two());
    let mut h = 1;
    if n >= 4 {
        for q in v.chunks_exact_mut(4) {
            let (s0, d0) = (q[0] + q[1], q[0] - q[1]);
            let (s1, d1) = (q[2] + q[3], q[2] - q[3]);
            q[0] = s0 + s1;
            q[1] = d0 + d1;
            q[2] = s0 - s1;
            q[3] = d0 - d1;
        }
        h = 4;
    }
    while h < n {
        for block in v.chunks_exact_mut(2 * h) {
            let (lo, hi) = block.split_at_mut(h);
            for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                let (x, y) = (*a, *b);
                *a = x + y;
                *b = x - y;
            }
        }
        h *= 2;
    }
    let norm = 1.0 / (n as f64).sqrt();
    for a in v {
        *a *= norm;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadamard_of_a_unit_vector_is_flat() {
        let mut v = [1.0, 0.0, 0.0, 0.0];
        hadamard(&mut v);
        assert_eq!(v, [0.5; 4]);
        hadamard(&mut v);
        assert_eq!(v, [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn windows_cover_every_coordinate() {
        for dim in [1, 2, 3, 8, 24, 56, 384, 1000] {
            let r = Rotation::new(dim, 1);
            assert!(r.window <= dim && 2 * r.window > dim);
            let covered_last = r.windows.last().unwrap().0 + r.window;
            assert_eq!(covered_last, dim);
        }
    }

    #[test]
    fn seeds_give_different_signs() {
        assert_ne!(Rotation::new(64, 1), Rotation::new(64, 2));
        assert_eq!(Rotation::new(64, 1), Rotation::new(64, 1));
    }
}
