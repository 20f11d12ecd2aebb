//! 16- and 32-bit codes of [`Gf8`] vectors, beside the 8-bit root code
//! ([`Gf8::nearest_root`]): finer directions from hydron's lattice
//! codebooks.
//!
//! | code | bits | points | how |
//! |---|---|---|---|
//! | [`E8Root`](crate::E8Root) | 8 | 240 | the nearest E8 root |
//! | [`Gf8::code16`] | 16 | 65,536 | the E8P codeword nearest to `GF8_E8P_SCALE · x` ([`e8p`]) |
//! | [`Gf8::code32`] | 32 | 254,864,880 | the point of the E8 shell of norm² 196 nearest in direction ([`shell::encode_shape`]) |
//!
//! Measured on 20,000 seeded uniform unit vectors (test
//! `round_trip_angles_are_bounded`): the 16-bit code's mean angle error is
//! **0.2520 rad (14.4°)**, its largest 0.400 rad (22.9°); the root code's
//! mean is 31.5°.
//!
//! The 32-bit code is the 28-bit shape index of [`shell`] (the shape part
//! of the 4-bit-per-coordinate gain–shape code) with its 4 gain bits 0: a
//! unit vector needs no gain, and the shell is the largest whose index
//! fits in 28 bits, so 2^4.07 of the 2^32 codes are unused (a larger
//! shell would need new ranking tables; not built). Its mean angle error
//! is **0.0775 rad (4.44°)**, its largest 0.189 rad (10.8°), measured
//! the same way (`round_trip_angles_are_bounded_at_32_bits`).
//! The shell is not equally dense in every direction: toward
//! `(1, …, 1)/√8` its nearest points (such as `(11, 11, 11, 11, 11, 11,
//! 7, 3)/28` and `(16, 12, 8, 8, 8, 8, 8, 8)/28`, coordinate sum 76: found
//! by enumerating the shell's leaders) are 0.285 rad (16.3°) away,
//! so the largest error over the whole sphere is at least that (the 16-bit
//! code's error there is 0.245 rad). The 4 unused gain bits could pick
//! one of 16 rotated copies of the shell to even this out; not built. The shape encoder maximizes `⟨x, p⟩` over the whole
//! shell, so the decoded code is the nearest shell direction exactly.
//!
//! A 16-bit code decodes to its codeword normalized to unit length
//! ([`Gf8::from_code16`]): every codeword is nonzero, so every `u16` is a
//! code. The scale [`GF8_E8P_SCALE`] is the one that minimizes the mean
//! angle between a uniform random unit vector and its decoded code.
//!
//! The zero vector has no direction: its code decodes to a unit vector,
//! as its root code does.
//!
//! ```
//! use hydron_core::Gf8;
//!
//! let x = Gf8::normalize([0.3, -1.2, 0.8, 0.1, -0.4, 1.9, -0.7, 0.2])?;
//! let y = Gf8::from_code16(x.code16());
//! assert!(x.geodesic_distance(y) < x.geodesic_distance(x.nearest_root().to_gf8()));
//! # Ok::<(), hydron_core::Gf8Error>(())
//! ```

use crate::quant::{e8p, shell};
use crate::Gf8;

/// The scale a unit vector is multiplied by before its E8P code is taken
/// ([`Gf8::code16`]).
///
/// Found by minimizing the mean angle error over 200,000 seeded uniform
/// unit vectors with a golden-section search on `[0.5, 4.0]` (the ignored
/// test `gf8_scale_search` in this module; run it with `--ignored`), which
/// gave 3.186 at a mean angle of 0.2518 rad (14.4°); a grid from 0.5 to 6
/// in steps of 0.25 shows one minimum there. The
/// always-on test `the_scale_is_a_minimum` checks that 3% either way is
/// worse.
pub const GF8_E8P_SCALE: f32 = 3.186;

impl Gf8 {
    /// The 16-bit code of this vector: the E8P code ([`e8p::encode`]) of
    /// the codeword nearest to `GF8_E8P_SCALE · self` (exact; the lowest
    /// code on a tie).
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let x = Gf8::from_scalar(1.0)?;
    /// assert!(x.geodesic_distance(Gf8::from_code16(x.code16())) < 0.25);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn code16(self) -> u16 {
        e8p::encode(&scaled(self)).expect("a Gf8 scaled by a finite constant is finite")
    }

    /// The unit vector of a 16-bit code: its E8P codeword, normalized.
    /// Every `u16` is a code.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let y = Gf8::from_code16(0x8000); // the codeword (1/4, ..., 1/4)
    /// assert!((y.as_array()[0] - 8f32.sqrt().recip()).abs() < 1e-6);
    /// ```
    #[must_use]
    #[inline]
    pub fn from_code16(code: u16) -> Gf8 {
        unit(&e8p::decode(code))
    }
}

impl Gf8 {
    /// The 32-bit code of this vector: the shape index of the point of
    /// the E8 shell of norm² 196 nearest in direction
    /// ([`shell::encode_shape`]: it maximizes `⟨x, p⟩`), gain bits 0.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// let x = Gf8::normalize([0.3, -1.2, 0.8, 0.1, -0.4, 1.9, -0.7, 0.2])?;
    /// let y = Gf8::from_code32(x.code32()).unwrap();
    /// assert!(x.geodesic_distance(y) < 0.19);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn code32(self) -> u32 {
        shell::encode_shape(self.as_array()).expect("a Gf8 is finite")
    }

    /// The unit vector of a 32-bit code, or `None` if it is not one: its
    /// gain bits (28–31) are not 0, or its shape index is
    /// [`shell::SHAPES`] or more.
    ///
    /// ```
    /// use hydron_core::Gf8;
    /// assert!(Gf8::from_code32(0).is_some());
    /// assert!(Gf8::from_code32(0x1000_0000).is_none()); // a gain bit
    /// assert!(Gf8::from_code32(0x0fff_ffff).is_none()); // past the shell
    /// ```
    #[must_use]
    #[inline]
    pub fn from_code32(code: u32) -> Option<Gf8> {
        if code >> shell::SHAPE_BITS != 0 {
            return None;
        }
        let p = shell::shape(code)?;
        Some(unit(&p.map(f32::from)))
    }
}

/// The first code of `codes` that is not a 32-bit [`Gf8`] code
/// ([`Gf8::from_code32`]): its index and value.
///
/// ```
/// use hydron_core::gf8_codes;
/// assert_eq!(gf8_codes::first_invalid32(&[0, 5, u32::MAX]), Some((2, u32::MAX)));
/// ```
#[must_use]
pub fn first_invalid32(codes: &[u32]) -> Option<(usize, u32)> {
    codes
        .iter()
        .enumerate()
        .find(|(_, &c)| c >> shell::SHAPE_BITS != 0 || c >= shell::SHAPES)
        .map(|(i, &c)| (i, c))
}

/// The 32-bit codes of many vectors, into `out` (across threads with the
/// `parallel` feature).
///
/// # Panics
/// When `out` is not as long as `vectors`.
///
/// ```
/// use hydron_core::{gf8_codes, E8_ROOTS};
/// let mut out = vec![0u32; 240];
/// gf8_codes::encode32_into(&E8_ROOTS, &mut out);
/// assert_eq!(out[3], E8_ROOTS[3].code32());
/// ```
pub fn encode32_into(vectors: &[Gf8], out: &mut [u32]) {
    assert_eq!(
        vectors.len(),
        out.len(),
        "encode32_into: wrong output length"
    );
    by_pieces(vectors, out, |v, o| {
        for (x, c) in v.iter().zip(o) {
            *c = x.code32();
        }
    });
}

/// The 32-bit codes of many vectors (allocating).
///
/// ```
/// use hydron_core::{gf8_codes, E8_ROOTS};
/// let codes = gf8_codes::encode32(&E8_ROOTS);
/// assert_eq!(gf8_codes::decode32(&codes)?.len(), 240);
/// # Ok::<(), (usize, u32)>(())
/// ```
#[must_use]
pub fn encode32(vectors: &[Gf8]) -> Vec<u32> {
    let mut out = vec![0; vectors.len()];
    encode32_into(vectors, &mut out);
    out
}

/// The unit vectors of many 32-bit codes.
///
/// # Errors
/// The index and value of the first code that is not one
/// ([`first_invalid32`]).
pub fn decode32(codes: &[u32]) -> Result<Vec<Gf8>, (usize, u32)> {
    if let Some(bad) = first_invalid32(codes) {
        return Err(bad);
    }
    Ok(codes
        .iter()
        .map(|&c| Gf8::from_code32(c).expect("checked above"))
        .collect())
}

/// Vectors per piece of the batch encoders.
const PIECE: usize = 4096;

/// Runs `piece` on each piece of [`PIECE`] vectors of `vectors` and the
/// same piece of `out`: across threads with the `parallel` feature (from
/// two pieces on), else one after another.
fn by_pieces<T: Send>(vectors: &[Gf8], out: &mut [T], piece: impl Fn(&[Gf8], &mut [T]) + Sync) {
    #[cfg(feature = "parallel")]
    if vectors.len() >= 2 * PIECE {
        use rayon::prelude::*;
        crate::parallel::run(|| {
            vectors
                .par_chunks(PIECE)
                .zip(out.par_chunks_mut(PIECE))
                .for_each(|(v, o)| piece(v, o));
        });
        return;
    }
    for (v, o) in vectors.chunks(PIECE).zip(out.chunks_mut(PIECE)) {
        piece(v, o);
    }
}

/// The 16-bit codes of many vectors, into `out` (AVX2 where available, as
/// [`e8p::encode_into`]; across threads with the `parallel` feature).
///
/// # Panics
/// When `out` is not as long as `vectors`.
///
/// ```
/// use hydron_core::{gf8_codes, Gf8, E8_ROOTS};
/// let mut out = vec![0u16; E8_ROOTS.len()];
/// gf8_codes::encode16_into(&E8_ROOTS, &mut out);
/// assert_eq!(out[17], E8_ROOTS[17].code16());
/// ```
pub fn encode16_into(vectors: &[Gf8], out: &mut [u16]) {
    assert_eq!(
        vectors.len(),
        out.len(),
        "encode16_into: wrong output length"
    );
    by_pieces(vectors, out, |v, o| {
        let blocks: Vec<[f32; 8]> = v.iter().map(|&x| scaled(x)).collect();
        e8p::encode_into(&blocks, o).expect("a Gf8 scaled by a finite constant is finite");
    });
}

/// The 16-bit codes of many vectors (allocating).
///
/// ```
/// use hydron_core::{gf8_codes, E8_ROOTS};
/// let codes = gf8_codes::encode16(&E8_ROOTS);
/// assert_eq!(gf8_codes::decode16(&codes).len(), 240);
/// ```
#[must_use]
pub fn encode16(vectors: &[Gf8]) -> Vec<u16> {
    let mut out = vec![0; vectors.len()];
    encode16_into(vectors, &mut out);
    out
}

/// The unit vectors of many 16-bit codes.
///
/// ```
/// use hydron_core::{gf8_codes, Gf8};
/// assert_eq!(gf8_codes::decode16(&[0x8000])[0], Gf8::from_code16(0x8000));
/// ```
#[must_use]
pub fn decode16(codes: &[u16]) -> Vec<Gf8> {
    codes.iter().map(|&c| Gf8::from_code16(c)).collect()
}

/// `GF8_E8P_SCALE · x`.
#[inline]
fn scaled(x: Gf8) -> [f32; 8] {
    x.to_array().map(|v| v * GF8_E8P_SCALE)
}

/// `c / |c|` for a nonzero `c` with coordinates that are small multiples
/// of 1/4 (computed in `f64`, rounded once).
#[inline]
pub(crate) fn unit(c: &[f32; 8]) -> Gf8 {
    let norm = c
        .iter()
        .map(|&v| f64::from(v) * f64::from(v))
        .sum::<f64>()
        .sqrt();
    debug_assert!(norm > 0.0);
    Gf8::new_unchecked(c.map(|v| (f64::from(v) / norm) as f32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded uniform unit vectors (SplitMix64, Box–Muller, normalized).
    pub(crate) fn unit_vectors(n: usize, seed: u64) -> Vec<Gf8> {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let mut g = [0.0f32; 8];
                for pair in g.chunks_exact_mut(2) {
                    let (u, v) = (next().max(1e-300), next());
                    let r = (-2.0 * u.ln()).sqrt();
                    pair[0] = (r * (std::f64::consts::TAU * v).cos()) as f32;
                    pair[1] = (r * (std::f64::consts::TAU * v).sin()) as f32;
                }
                Gf8::normalize(g).unwrap()
            })
            .collect()
    }

    /// Mean angle (radians) between `xs` and their codes at scale `s`.
    fn mean_angle(xs: &[Gf8], s: f32) -> f64 {
        xs.iter()
            .map(|x| {
                let c = e8p::encode(&x.to_array().map(|v| v * s)).unwrap();
                f64::from(x.geodesic_distance(unit(&e8p::decode(c))))
            })
            .sum::<f64>()
            / xs.len() as f64
    }

    #[test]
    #[ignore = "a search: run with --ignored --nocapture in release"]
    fn gf8_scale_search() {
        let xs = unit_vectors(200_000, 7);
        for k in 2..=24 {
            let s = k as f32 * 0.25;
            println!("grid {s:.2}: {:.6}", mean_angle(&xs[..20_000], s));
        }
        let (mut a, mut b) = (0.5f64, 4.0f64);
        let r = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..30 {
            let (c, d) = (b - r * (b - a), a + r * (b - a));
            if mean_angle(&xs, c as f32) < mean_angle(&xs, d as f32) {
                b = d;
            } else {
                a = c;
            }
        }
        let s = (a + b) / 2.0;
        println!(
            "scale {s:.4}: mean angle {:.6} rad",
            mean_angle(&xs, s as f32)
        );
    }

    #[test]
    fn the_scale_is_a_minimum() {
        let xs = unit_vectors(20_000, 11);
        let at = mean_angle(&xs, GF8_E8P_SCALE);
        for f in [0.97, 1.03] {
            assert!(mean_angle(&xs, GF8_E8P_SCALE * f) > at, "{f}");
        }
    }

    #[test]
    fn round_trip_angles_are_bounded() {
        let xs = unit_vectors(20_000, 3);
        let codes = encode16(&xs);
        let ys = decode16(&codes);
        let angles: Vec<f64> = xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| f64::from(x.geodesic_distance(*y)))
            .collect();
        let mean = angles.iter().sum::<f64>() / angles.len() as f64;
        eprintln!(
            "16-bit: mean angle {mean:.6} rad, max {:.6}",
            angles.iter().copied().fold(0.0, f64::max)
        );
        let max = angles.iter().copied().fold(0.0, f64::max);
        // Measured with seed 3: mean 0.2520 rad, max 0.4001 rad.
        assert!((0.245..0.26).contains(&mean), "mean {mean}");
        assert!(max < 0.41, "max {max}");
        for (x, &c) in xs.iter().zip(&codes) {
            assert_eq!(x.code16(), c);
        }
        for y in &ys {
            assert!((y.norm() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn round_trip_angles_are_bounded_at_32_bits() {
        let xs = unit_vectors(20_000, 3);
        let codes = encode32(&xs);
        let ys = decode32(&codes).unwrap();
        let angles: Vec<f64> = xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| f64::from(x.geodesic_distance(*y)))
            .collect();
        let mean = angles.iter().sum::<f64>() / angles.len() as f64;
        let max = angles.iter().copied().fold(0.0, f64::max);
        eprintln!("32-bit: mean angle {mean:.6} rad, max {max:.6}");
        // Measured with seed 3: mean 0.0775 rad, max 0.1890 rad.
        assert!((0.075..0.080).contains(&mean), "mean {mean}");
        assert!(max < 0.19, "max {max}");
        for (x, &c) in xs.iter().zip(&codes) {
            assert_eq!(x.code32(), c);
            assert_eq!(c >> 28, 0);
        }
        for y in &ys {
            assert!((y.norm() - 1.0).abs() < 1e-6);
        }
        // The shape maximizes the cosine over the shell: no sampled shell
        // point is nearer in direction.
        for (x, y) in xs.iter().zip(&ys).take(50) {
            for k in (0..shell::SHAPES).step_by(1_000_003) {
                let z = Gf8::from_code32(k).unwrap();
                assert!(x.dot(z) <= x.dot(*y) + 1e-6);
            }
        }
    }

    #[test]
    fn the_sparse_direction_of_the_shell() {
        let x = Gf8::normalize([1.0; 8]).unwrap();
        let y = Gf8::from_code32(x.code32()).unwrap();
        // The best coordinate sum of a doubled shell point is 76.
        let sum: f32 = y.to_array().iter().map(|v| v * 28.0).sum();
        assert!((sum - 76.0).abs() < 1e-3, "{y:?}");
        assert!((x.geodesic_distance(y) - 0.285).abs() < 1e-3);
    }

    #[test]
    fn batches_give_the_codes_of_one_vector() {
        let xs = unit_vectors(3 * PIECE + 5, 9);
        let c16 = encode16(&xs);
        let c32 = encode32(&xs);
        for (i, x) in xs.iter().enumerate().step_by(97) {
            assert_eq!(c16[i], x.code16(), "{i}");
            assert_eq!(c32[i], x.code32(), "{i}");
        }
        assert_eq!(c16[3 * PIECE + 4], xs[3 * PIECE + 4].code16());
        assert_eq!(c32[3 * PIECE + 4], xs[3 * PIECE + 4].code32());
    }

    #[test]
    fn invalid_32_bit_codes_are_refused() {
        assert_eq!(decode32(&[0, shell::SHAPES]), Err((1, shell::SHAPES)));
        assert_eq!(decode32(&[1 << 28]), Err((0, 1 << 28)));
        assert!(Gf8::from_code32(shell::SHAPES - 1).is_some());
        assert!(Gf8::from_code32(shell::SHAPES).is_none());
    }
}
