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

    /// The window size `P`.
    #[inline]
    pub(crate) fn window(&self) -> usize {
        self.window
    }

    /// Each window's start and its `±1` signs, in the order
    /// [`rotate`](Self::rotate) applies them.
    #[inline]
    pub(crate) fn windows(&self) -> impl DoubleEndedIterator<Item = (usize, &[f64])> {
        self.windows
            .iter()
            .map(|(start, signs)| (*start, &signs[..]))
    }

    /// Rotates `v` in place.
    ///
    /// # Panics
    /// When `v` does not have [`dim`](Self::dim) coordinates.
    #[inline(always)]
    pub fn rotate(&self, v: &mut [f64]) {
        assert_eq!(v.len(), self.dim, "Rotation::rotate: wrong dimension");
        for (start, signs) in &self.windows {
            signed_hadamard(&mut v[*start..*start + self.window], Some(signs), &[]);
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
            signed_hadamard(&mut v[*start..*start + self.window], None, signs);
        }
    }
}

/// How many butterfly rounds (3, 2 or 1) a pass from distance `h` makes
/// in a transform of `n` coordinates, and whether it is the last pass.
#[inline(always)]
pub(super) fn rounds_at(h: usize, n: usize) -> (u32, bool) {
    let rounds = if 8 * h <= n {
        3
    } else if 4 * h <= n {
        2
    } else {
        1
    };
    (rounds, h << rounds == n)
}

/// The orthonormal Walsh–Hadamard transform `H_n / √n` of a slice whose
/// length `n` is a power of two, in place: `log2 n` rounds of butterflies
/// (`(a, b) → (a + b, a − b)` on the pairs `h` apart, `h = 1, 2, 4, …`),
/// then every coordinate times `1/√n`.
///
/// Several rounds are taken in one pass over the slice: the rounds `h = 1`
/// and 2 on each group of four, then three rounds at a time on the eight
/// values `h` apart ([`rounds3`]), then two or one; the last pass also
/// scales (below eight values: round by round). Every round's sums and
/// differences are the same operations on the same values as round by
/// round, and the scaling the same product, so the result is the same to
/// the bit. [`Rotation`] runs it through [`signed_hadamard`].
#[cfg(test)]
fn hadamard(v: &mut [f64]) {
    signed_hadamard(v, None, &[]);
}

/// The rounds `h` = 1 and 2 on four values, each first multiplied by its
/// sign (`x · 1` is `x`).
#[inline(always)]
fn first_rounds(q: &mut [f64; 4], s: [f64; 4]) {
    let x = [q[0] * s[0], q[1] * s[1], q[2] * s[2], q[3] * s[3]];
    let (s0, d0) = (x[0] + x[1], x[0] - x[1]);
    let (s1, d1) = (x[2] + x[3], x[2] - x[3]);
    *q = [s0 + s1, d0 + d1, s0 - s1, d0 - d1];
}

/// [`hadamard`] of `v` with each coordinate first multiplied by its sign
/// in `signs` when they are given, and the result then multiplied by the
/// signs `post` when that is not empty: in the first and the last pass
/// for eight coordinates or more (the same products, so the same bits as
/// passes of their own).
#[inline(always)]
fn signed_hadamard(v: &mut [f64], signs: Option<&[f64]>, post: &[f64]) {
    let n = v.len();
    debug_assert!(n.is_power_of_two());
    if n < 8 {
        if let Some(signs) = signs {
            for (a, s) in v.iter_mut().zip(signs) {
                *a *= s;
            }
        }
        round_by_round(v);
        for (a, s) in v.iter_mut().zip(post) {
            *a *= s;
        }
        return;
    }
    let norm = 1.0 / (n as f64).sqrt();
    match signs {
        Some(signs) => {
            for (q, s) in v
                .as_chunks_mut::<4>()
                .0
                .iter_mut()
                .zip(signs.as_chunks::<4>().0)
            {
                first_rounds(q, *s);
            }
        }
        None => {
            for q in v.as_chunks_mut::<4>().0 {
                first_rounds(q, [1.0; 4]);
            }
        }
    }
    let mut h = 4;
    while h < n {
        let (rounds, last) = rounds_at(h, n);
        match (rounds, last) {
            (3, false) => rounds3::<false>(v, h, norm, &[]),
            (3, true) => rounds3::<true>(v, h, norm, post),
            (2, false) => rounds2::<false>(v, h, norm, &[]),
            (2, true) => rounds2::<true>(v, h, norm, post),
            (_, false) => rounds1::<false>(v, h, norm, &[]),
            (_, true) => rounds1::<true>(v, h, norm, post),
        }
        h <<= rounds;
    }
}

/// Four consecutive values, the unit the passes work in (one AVX2
/// register of `f64`).
type Quad = [f64; 4];

#[inline(always)]
fn add(a: Quad, b: Quad) -> Quad {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

#[inline(always)]
fn sub(a: Quad, b: Quad) -> Quad {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]]
}

#[inline(always)]
fn scaled<const SCALE: bool>(a: Quad, norm: f64) -> Quad {
    if SCALE {
        a.map(|e| e * norm)
    } else {
        a
    }
}

/// `a` times sign quad `k` of `signs`, or `a` when there are none.
#[inline(always)]
fn signed(a: Quad, signs: &[Quad], k: usize) -> Quad {
    match signs.get(k) {
        Some(s) => [a[0] * s[0], a[1] * s[1], a[2] * s[2], a[3] * s[3]],
        None => a,
    }
}

/// The butterfly rounds `h`, `2h` and `4h` on each block of `8h` values:
/// for each `j < h`, the eight values `j + k h` (`k < 8`) in registers,
/// four `j` at a time (`h` is a multiple of 4). `SCALE`: times `norm` at
/// the end (the last pass), then times the signs `post` if it has any.
#[inline(always)]
fn rounds3<const SCALE: bool>(v: &mut [f64], h: usize, norm: f64, post: &[f64]) {
    debug_assert!(h.is_multiple_of(4));
    for (b, block) in v.chunks_exact_mut(8 * h).enumerate() {
        let (quads, _) = block.as_chunks_mut::<4>();
        let q = h / 4;
        let signs = post
            .get(b * 8 * h..)
            .map_or(&[][..], |s| s.as_chunks::<4>().0);
        for j in 0..q {
            let x: [Quad; 8] = core::array::from_fn(|k| quads[j + k * q]);
            let a = [
                add(x[0], x[1]),
                sub(x[0], x[1]),
                add(x[2], x[3]),
                sub(x[2], x[3]),
                add(x[4], x[5]),
                sub(x[4], x[5]),
                add(x[6], x[7]),
                sub(x[6], x[7]),
            ];
            let b = [
                add(a[0], a[2]),
                add(a[1], a[3]),
                sub(a[0], a[2]),
                sub(a[1], a[3]),
                add(a[4], a[6]),
                add(a[5], a[7]),
                sub(a[4], a[6]),
                sub(a[5], a[7]),
            ];
            let c = [
                add(b[0], b[4]),
                add(b[1], b[5]),
                add(b[2], b[6]),
                add(b[3], b[7]),
                sub(b[0], b[4]),
                sub(b[1], b[5]),
                sub(b[2], b[6]),
                sub(b[3], b[7]),
            ];
            for (k, ck) in c.into_iter().enumerate() {
                quads[j + k * q] = signed(scaled::<SCALE>(ck, norm), signs, j + k * q);
            }
        }
    }
}

/// The rounds `h` and `2h` on each block of `4h` values, as [`rounds3`].
#[inline(always)]
fn rounds2<const SCALE: bool>(v: &mut [f64], h: usize, norm: f64, post: &[f64]) {
    debug_assert!(h.is_multiple_of(4));
    for (b, block) in v.chunks_exact_mut(4 * h).enumerate() {
        let (quads, _) = block.as_chunks_mut::<4>();
        let q = h / 4;
        let signs = post
            .get(b * 4 * h..)
            .map_or(&[][..], |s| s.as_chunks::<4>().0);
        for j in 0..q {
            let x: [Quad; 4] = core::array::from_fn(|k| quads[j + k * q]);
            let a = [
                add(x[0], x[1]),
                sub(x[0], x[1]),
                add(x[2], x[3]),
                sub(x[2], x[3]),
            ];
            let b = [
                add(a[0], a[2]),
                add(a[1], a[3]),
                sub(a[0], a[2]),
                sub(a[1], a[3]),
            ];
            for (k, bk) in b.into_iter().enumerate() {
                quads[j + k * q] = signed(scaled::<SCALE>(bk, norm), signs, j + k * q);
            }
        }
    }
}

/// The round `h` on each block of `2h` values, as [`rounds3`].
#[inline(always)]
fn rounds1<const SCALE: bool>(v: &mut [f64], h: usize, norm: f64, post: &[f64]) {
    debug_assert!(h.is_multiple_of(4));
    for (b, block) in v.chunks_exact_mut(2 * h).enumerate() {
        let (quads, _) = block.as_chunks_mut::<4>();
        let q = h / 4;
        let signs = post
            .get(b * 2 * h..)
            .map_or(&[][..], |s| s.as_chunks::<4>().0);
        for j in 0..q {
            let (x, y) = (quads[j], quads[j + q]);
            quads[j] = signed(scaled::<SCALE>(add(x, y), norm), signs, j);
            quads[j + q] = signed(scaled::<SCALE>(sub(x, y), norm), signs, j + q);
        }
    }
}

/// [`hadamard`] round by round, as the definition reads: the small sizes,
/// and the reference the tests hold the fused passes to.
fn round_by_round(v: &mut [f64]) {
    let n = v.len();
    let mut h = 1;
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

    /// The fused passes give the round-by-round transform's bits, at
    /// every size a rotation uses.
    #[test]
    fn fused_passes_equal_the_reference() {
        let mut state = 11u64;
        for log in 0..=10 {
            let n = 1usize << log;
            for _ in 0..20 {
                let x: Vec<f64> = (0..n)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
                    })
                    .collect();
                let (mut a, mut b) = (x.clone(), x.clone());
                hadamard(&mut a);
                round_by_round(&mut b);
                let bits = |v: &[f64]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a), bits(&b), "n = {n}");
                // With signs: the same as a pass of products first.
                let signs: Vec<f64> = (0..n)
                    .map(|i| if i % 3 == 1 { -1.0 } else { 1.0 })
                    .collect();
                let (mut a, mut b) = (x.clone(), x);
                signed_hadamard(&mut a, Some(&signs), &[]);
                for (e, s) in b.iter_mut().zip(&signs) {
                    *e *= s;
                }
                round_by_round(&mut b);
                assert_eq!(bits(&a), bits(&b), "n = {n}, signed");
                // Signs after: the same as a pass of products last.
                let (mut a, mut b) = (b.clone(), b);
                signed_hadamard(&mut a, None, &signs);
                round_by_round(&mut b);
                for (e, s) in b.iter_mut().zip(&signs) {
                    *e *= s;
                }
                assert_eq!(bits(&a), bits(&b), "n = {n}, signed after");
            }
        }
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
