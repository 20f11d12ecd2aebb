//! E8P: 2^16 points of the shifted lattice E8 + ¼, one 16-bit code per
//! 8-dimensional block (2 bits per coordinate), after QuIP#'s codebook
//! (Tseng et al., ICML 2024, `lib/codebook/latticee8_padded12.py`).
//!
//! # The codebook
//!
//! A codeword is `s ∘ a + σ·(1, …, 1)`, where
//!
//! - `a` is one of 256 **absolute patterns** (every `a_i` a positive
//!   half-integer): the 227 distinct absolute values of the points of
//!   D8 + ½ (all coordinates half-integers, even sum) with squared norm at
//!   most 10, and 29 patterns of squared norm 12 with five 3/2 and three ½
//!   (QuIP#'s list, [`NORM12_PATTERNS`]);
//! - `s` is a sign vector with `#negative signs ≡ Σ a_i (mod 2)`, which
//!   puts `s ∘ a` in E8's half-integer coset, so 7 signs are free and the
//!   8th follows;
//! - `σ` is `+¼` or `-¼`.
//!
//! Every codeword is a distinct point of E8 + ¼, so the 65,536 codes are
//! 65,536 points.
//!
//! # The code (16 bits)
//!
//! | bits | meaning |
//! |---|---|
//! | 0–6 | sign of coordinate `i` (bit `i`), 1 = negative |
//! | 7–14 | index of the absolute pattern, 0–255 ([`pattern`]) |
//! | 15 | shift: 0 = `+¼`, 1 = `-¼` |
//!
//! Coordinate 7 is negative when the number of set sign bits plus
//! `Σ a_i` is odd. Patterns are numbered in order of squared norm, then
//! lexicographically by `(a_0, …, a_7)`: pattern 0 is all ½, patterns 1–8
//! have one 3/2 (pattern 1 at coordinate 7, pattern 8 at coordinate 0),
//! …, patterns 227–255 are the 29 patterns of squared norm 12. `docs/format.md`
//! (§6) describes the same layout for readers in other languages.
//!
//! # The encoder is exact
//!
//! [`encode`] returns the codeword nearest to the block in exact real
//! arithmetic (the block's coordinates taken as the exact values of their
//! `f32`s), and among codewords at exactly the same distance the **lowest
//! code**. There is no approximation and no tolerance: on every backend the
//! code is the same, because it is the unique answer to that question.
//!
//! How, for one shift `σ` and pattern `a`, with `y = x − σ`: the best signs
//! are those of `y`, and if they have the wrong parity, the best codeword
//! flips the coordinate with the smallest `a_i |y_i|`. So the squared
//! distance is `|y|² − 2 (Σ a_i |y_i| − ½|a|² − [parity wrong] · 2 · min_i
//! a_i |y_i|)`, and the search is over 512 `(σ, a)` classes. When the
//! `|y_i|` are nonzero and distinct (almost every block), sorting them
//! gives each class's best arrangement directly (the patterns of squared
//! norm ≤ 10 are whole permutation classes), so a shift costs a sort, seven
//! class values, and the 29 norm-12 patterns only when a bound says they
//! can win (`best_by_sorting`); otherwise all 256 patterns are scored
//! (8 multiply-adds each; four at a time on AVX2).
//!
//! The sums are taken in `f64`, where for almost every block they are
//! **exact**: when every nonzero coordinate is a normal `f32` with binary
//! exponent between −22 and 40 and no more than 21 binades below the
//! largest, every quantity is an integer multiple of `2^(e_min − 25)` below
//! `2^53` times that (`in_exact_range`). Exact sums make the comparisons
//! exact, ties included, whatever the order of the additions, so the
//! scalar and AVX2 kernels agree by construction. The other blocks (huge,
//! subnormal or widely spread coordinates: 18 in 4 million blocks of
//! N(0, 1) coordinates in a seeded run) go to a slower path shared by
//! every backend, which filters the 512 classes with a rigorous `f64` error
//! bound and compares the survivors' codewords exactly (with error-free
//! transformations).
//!
//! The batch functions ([`encode_many`], [`encode_into`],
//! [`encode_into_with`], and `LatticeQuantizer`) take four blocks at a time
//! through a kernel in structure-of-arrays form (`e8p_batch.rs`: the
//! shifted coordinates sorted by a sorting network, lane-wise, the class
//! values without a branch; scalar code the compiler vectorizes, compiled
//! once as it is and once for AVX2), which hands back to the one-block
//! encoder above only the blocks it does not decide (tied shifted
//! coordinates, two classes of equal value, blocks outside the exact
//! range); the codes are the same.
//!
//! ```
//! use hydron_core::quant::e8p;
//!
//! let x = [0.3, -1.2, 0.8, 0.1, -0.4, 1.9, -0.7, 0.2];
//! let code = e8p::encode(&x)?;
//! let c = e8p::decode(code);
//! // The codeword is a point of E8 + 1/4 ...
//! assert!(c.iter().all(|&v| ((v - 0.25) * 2.0).fract() == 0.0 || ((v + 0.25) * 2.0).fract() == 0.0));
//! // ... and no codeword is nearer.
//! let d = |c: [f32; 8]| x.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum::<f32>();
//! assert!((0..=u16::MAX).all(|k| d(e8p::decode(k)) >= d(c) - 1e-5));
//! # Ok::<(), hydron_core::Gf8Error>(())
//! ```

use crate::batch::Backend;
use crate::{BatchError, Gf8Error};

/// The number of codewords: every `u16` is a code.
pub const CODEWORDS: usize = 1 << 16;

/// The number of absolute patterns.
pub const PATTERN_COUNT: usize = 256;

/// The 29 absolute patterns of squared norm 12 (five 3/2 and three ½), in
/// QuIP#'s order, doubled (`3` is 3/2, `1` is ½). The codebook numbers them
/// lexicographically (patterns 227–255), not in this order.
pub const NORM12_PATTERNS: [[u8; 8]; 29] = [
    [3, 1, 1, 1, 3, 3, 3, 3],
    [1, 3, 1, 1, 3, 3, 3, 3],
    [1, 1, 3, 1, 3, 3, 3, 3],
    [1, 1, 1, 3, 3, 3, 3, 3],
    [3, 3, 3, 1, 3, 3, 1, 1],
    [3, 3, 3, 1, 3, 1, 3, 1],
    [3, 3, 3, 1, 1, 3, 3, 1],
    [3, 3, 3, 1, 3, 1, 1, 3],
    [3, 3, 3, 1, 1, 3, 1, 3],
    [3, 3, 3, 1, 1, 1, 3, 3],
    [3, 3, 1, 3, 3, 3, 1, 1],
    [3, 3, 1, 3, 3, 1, 3, 1],
    [3, 3, 1, 3, 1, 3, 3, 1],
    [3, 3, 1, 3, 3, 1, 1, 3],
    [3, 3, 1, 3, 1, 3, 1, 3],
    [3, 3, 1, 3, 1, 1, 3, 3],
    [3, 1, 3, 3, 3, 3, 1, 1],
    [3, 1, 3, 3, 3, 1, 3, 1],
    [3, 1, 3, 3, 1, 3, 3, 1],
    [3, 1, 3, 3, 3, 1, 1, 3],
    [3, 1, 3, 3, 1, 3, 1, 3],
    [1, 3, 3, 3, 1, 1, 3, 3],
    [1, 3, 3, 3, 3, 3, 1, 1],
    [1, 3, 3, 3, 3, 1, 3, 1],
    [1, 3, 3, 3, 1, 3, 3, 1],
    [1, 3, 3, 3, 3, 1, 1, 3],
    [1, 3, 3, 3, 1, 3, 1, 3],
    [1, 1, 3, 3, 1, 3, 3, 3],
    [3, 3, 1, 1, 3, 3, 3, 1],
];

/// The codebook's tables, built at compile time.
pub(crate) struct Tables {
    /// Doubled absolute patterns (`2 a_i`: 1, 3 or 5), in code order.
    pub(crate) doubled: [[u8; 8]; PATTERN_COUNT],
    /// `Σ a_i mod 2`: the parity of the number of negative signs.
    pub(crate) parity: [u8; PATTERN_COUNT],
}

/// Whether `p` (doubled) is in [`NORM12_PATTERNS`].
const fn is_listed_norm12(p: &[u8; 8]) -> bool {
    let mut k = 0;
    while k < NORM12_PATTERNS.len() {
        let q = &NORM12_PATTERNS[k];
        let mut i = 0;
        let mut same = true;
        while i < 8 {
            if p[i] != q[i] {
                same = false;
            }
            i += 1;
        }
        if same {
            return true;
        }
        k += 1;
    }
    false
}

const fn build_tables() -> Tables {
    let mut doubled = [[0u8; 8]; PATTERN_COUNT];
    let mut parity = [0u8; PATTERN_COUNT];
    let mut count = 0;
    // Squared norm times 4 (Σ (2 a_i)²): 8, 16, ..., 48.
    let mut norm4 = 8;
    while norm4 <= 48 {
        // Every pattern with 2 a_i in {1, 3, 5}, lexicographically: a
        // base-3 counter with coordinate 0 as its most significant digit.
        let mut n = 0;
        while n < 6561 {
            let mut p = [0u8; 8];
            let mut rest = n;
            let mut i = 8;
            while i > 0 {
                i -= 1;
                p[i] = (2 * (rest % 3) + 1) as u8;
                rest /= 3;
            }
            let mut sq = 0;
            let mut sum = 0;
            let mut j = 0;
            while j < 8 {
                sq += (p[j] as usize) * (p[j] as usize);
                sum += p[j] as usize;
                j += 1;
            }
            let keep = sq == norm4 && (norm4 <= 40 || is_listed_norm12(&p));
            if keep {
                doubled[count] = p;
                // Σ a_i = sum / 2 (sum of eight odd numbers is even).
                parity[count] = ((sum / 2) % 2) as u8;
                count += 1;
            }
            n += 1;
        }
        norm4 += 8;
    }
    assert!(count == PATTERN_COUNT);
    Tables { doubled, parity }
}

/// The codebook, in code order.
pub(crate) const TABLES: Tables = build_tables();

/// Absolute pattern `index` (bits 7–14 of a code): eight positive
/// half-integers (½, 3/2 or 5/2).
///
/// ```
/// use hydron_core::quant::e8p;
///
/// assert_eq!(e8p::pattern(0), [0.5; 8]);
/// assert_eq!(e8p::pattern(1), [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.5]);
/// let last = e8p::pattern(255);
/// assert_eq!(last.iter().map(|a| a * a).sum::<f32>(), 12.0);
/// ```
#[must_use]
#[inline]
pub fn pattern(index: u8) -> [f32; 8] {
    TABLES.doubled[index as usize].map(|d| f32::from(d) * 0.5)
}

/// The shift of a code (bit 15): `0.25` or `-0.25`.
#[inline(always)]
fn shift_of(code: u16) -> f32 {
    if code & 0x8000 == 0 {
        0.25
    } else {
        -0.25
    }
}

/// The codeword of `code`: exact (every coordinate is a multiple of ¼).
///
/// ```
/// use hydron_core::quant::e8p;
///
/// assert_eq!(e8p::decode(0), [0.75; 8]);
/// // Shift bit set, pattern 0, sign bit 0 set: coordinate 0 negative, so
/// // coordinate 7 is negative too (all-½ needs an even number).
/// assert_eq!(e8p::decode(0x8001), [-0.75, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, -0.75]);
/// ```
#[must_use]
#[inline]
pub fn decode(code: u16) -> [f32; 8] {
    let index = ((code >> 7) & 0xFF) as usize;
    let a = &TABLES.doubled[index];
    let signs = u32::from(code & 0x7F);
    let last_negative = (signs.count_ones() + u32::from(TABLES.parity[index])) & 1;
    let negative = signs | (last_negative << 7);
    let shift = shift_of(code);
    let mut out = [0.0f32; 8];
    for (i, slot) in out.iter_mut().enumerate() {
        let v = f32::from(a[i]) * 0.5;
        let v = if negative >> i & 1 == 1 { -v } else { v };
        *slot = v + shift;
    }
    out
}

/// The decoder's tables in `f64`: each pattern's coordinates, with
/// coordinate 7 negated for the patterns of odd `Σ a_i`, and the sign bits
/// as `f64` sign masks, coordinate 7's for an even `Σ a_i` (so that the
/// two together give coordinate 7 its sign, `popcount(signs) + Σ a_i` odd,
/// with no look-up of the parity).
pub(crate) struct DecodeTables {
    /// `pattern[p][i]`: `a_i` of pattern `p`, `−a_7` at `i = 7` when its
    /// parity is odd.
    pattern: [[f64; 8]; PATTERN_COUNT],
    /// `signs[s][i]`: bit 63 set where coordinate `i` is negative for the
    /// sign bits `s` of a pattern of even parity.
    signs: [[u64; 8]; 128],
}

const fn build_decode_tables() -> DecodeTables {
    let mut t = DecodeTables {
        pattern: [[0.0; 8]; PATTERN_COUNT],
        signs: [[0; 8]; 128],
    };
    let mut p = 0;
    while p < PATTERN_COUNT {
        let mut i = 0;
        while i < 8 {
            t.pattern[p][i] = TABLES.doubled[p][i] as f64 * 0.5;
            i += 1;
        }
        if TABLES.parity[p] == 1 {
            t.pattern[p][7] = -t.pattern[p][7];
        }
        p += 1;
    }
    let mut k = 0;
    while k < 128 {
        let bits = k as u32;
        let negative = bits | ((bits.count_ones() & 1) << 7);
        let mut i = 0;
        while i < 8 {
            t.signs[k][i] = ((negative >> i) & 1) as u64 * (1 << 63);
            i += 1;
        }
        k += 1;
    }
    t
}

/// The decoder's tables (24 KiB).
static DECODE: DecodeTables = build_decode_tables();

/// `scale` times the codeword of `code`, in `f64`: the same numbers as
/// `f64::from(decode(code)[i]) * scale` (both codeword forms are exact),
/// by two table rows, a sign flip by `xor` and the shift.
#[inline(always)]
pub(crate) fn decode_scaled(code: u16, scale: f64, out: &mut [f64; 8]) {
    let a = &DECODE.pattern[usize::from((code >> 7) & 0xFF)];
    let signs = &DECODE.signs[usize::from(code & 0x7F)];
    let shift = f64::from(shift_of(code));
    for i in 0..8 {
        out[i] = (f64::from_bits(a[i].to_bits() ^ signs[i]) + shift) * scale;
    }
}

/// [`DecodeTables`] in `f32`: the same rows (the values are exact in
/// either type).
pub(crate) struct DecodeTables32 {
    /// `pattern[p]` of [`DecodeTables`].
    pattern: [[f32; 8]; PATTERN_COUNT],
    /// `signs[s]` of [`DecodeTables`]: bit 31 set where coordinate `i` is
    /// negative.
    signs: [[u32; 8]; 128],
}

const fn build_decode_tables32() -> DecodeTables32 {
    let wide = build_decode_tables();
    let mut t = DecodeTables32 {
        pattern: [[0.0; 8]; PATTERN_COUNT],
        signs: [[0; 8]; 128],
    };
    let mut p = 0;
    while p < PATTERN_COUNT {
        let mut i = 0;
        while i < 8 {
            t.pattern[p][i] = wide.pattern[p][i] as f32;
            i += 1;
        }
        p += 1;
    }
    let mut k = 0;
    while k < 128 {
        let mut i = 0;
        while i < 8 {
            t.signs[k][i] = (wide.signs[k][i] >> 32) as u32;
            i += 1;
        }
        k += 1;
    }
    t
}

/// The `f32` decoder's tables (12 KiB).
static DECODE32: DecodeTables32 = build_decode_tables32();

/// `scale` times the codeword of `code`, in `f32`: the codeword is exact,
/// so each coordinate is `decode(code)[i] * scale` rounded once, as
/// [`decode_scaled`] computes it in `f64`, then rounded to `f32`, up to
/// that double rounding.
#[inline(always)]
pub(crate) fn decode_scaled32(code: u16, scale: f32) -> [f32; 8] {
    let a = &DECODE32.pattern[usize::from((code >> 7) & 0xFF)];
    let signs = &DECODE32.signs[usize::from(code & 0x7F)];
    let shift = shift_of(code);
    core::array::from_fn(|i| (f32::from_bits(a[i].to_bits() ^ signs[i]) + shift) * scale)
}

/// Decodes every code of `codes` into `out`.
///
/// # Panics
/// When `out` does not have the length of `codes`.
///
/// ```
/// use hydron_core::quant::e8p;
///
/// let mut out = [[0.0; 8]; 2];
/// e8p::decode_into(&[0, 0x8000], &mut out);
/// assert_eq!(out, [[0.75; 8], [0.25; 8]]);
/// ```
pub fn decode_into(codes: &[u16], out: &mut [[f32; 8]]) {
    assert_eq!(
        codes.len(),
        out.len(),
        "decode_into: output length differs from input"
    );
    for (code, slot) in codes.iter().zip(out) {
        *slot = decode(*code);
    }
}

/// Every code of `codes`, decoded.
///
/// ```
/// use hydron_core::quant::e8p;
/// assert_eq!(e8p::decode_many(&[0]), vec![[0.75; 8]]);
/// ```
#[must_use]
pub fn decode_many(codes: &[u16]) -> Vec<[f32; 8]> {
    codes.iter().map(|&c| decode(c)).collect()
}

/// The nearest codeword's code (the lowest among codewords equally near),
/// on the best backend; see the [module docs](self) for what "nearest"
/// means exactly.
///
/// # Errors
/// [`Gf8Error::NotANumber`] or [`Gf8Error::Infinite`] naming the first bad
/// coordinate.
///
/// ```
/// use hydron_core::quant::e8p;
/// use hydron_core::Gf8Error;
///
/// assert_eq!(e8p::decode(e8p::encode(&[0.75; 8])?), [0.75; 8]);
/// // The origin is equally near -1/4 (code 0x007F) and +1/4 (code 0x8000):
/// // the lower code wins.
/// let origin = e8p::encode(&[0.0; 8])?;
/// assert_eq!(e8p::decode(origin), [-0.25; 8]);
/// assert_eq!(
///     e8p::encode(&[0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
///     Err(Gf8Error::NotANumber { coordinate: 1 })
/// );
/// # Ok::<(), Gf8Error>(())
/// ```
pub fn encode(x: &[f32; 8]) -> Result<u16, Gf8Error> {
    crate::gf8::check_finite(x)?;
    Ok(Kernel::of(best_backend()).encode(x))
}

/// The codes of many blocks, on the best backend.
///
/// # Errors
/// The index of the first block with a NaN or infinite coordinate, and
/// which coordinate.
///
/// ```
/// use hydron_core::quant::e8p;
///
/// let blocks = [[0.1; 8], [2.0, -1.0, 0.0, 0.5, 0.3, 0.0, -0.2, 1.1]];
/// let codes = e8p::encode_many(&blocks)?;
/// assert_eq!(codes, vec![e8p::encode(&blocks[0])?, e8p::encode(&blocks[1])?]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_many(blocks: &[[f32; 8]]) -> Result<Vec<u16>, BatchError> {
    let mut out = vec![0u16; blocks.len()];
    encode_into(blocks, &mut out)?;
    Ok(out)
}

/// [`encode_many`] into a slice the caller provides.
///
/// # Errors
/// As [`encode_many`]; the codes past the bad block are then unspecified.
///
/// # Panics
/// When `out` does not have the length of `blocks`.
pub fn encode_into(blocks: &[[f32; 8]], out: &mut [u16]) -> Result<(), BatchError> {
    encode_into_with(best_backend(), blocks, out)
}

/// [`encode_into`] on a given backend: [`Backend::Avx2Fma`] runs the AVX2
/// kernel when this build (feature `simd`, x86-64) and CPU have it; every
/// other backend, or an unavailable one, runs the scalar kernel. Every
/// backend returns the same codes (the encoder is exact).
///
/// # Errors
/// As [`encode_many`].
///
/// # Panics
/// When `out` does not have the length of `blocks`.
///
/// ```
/// use hydron_core::batch::{self, Backend};
/// use hydron_core::quant::e8p;
///
/// let blocks = vec![[0.3, -0.9, 1.4, 0.0, 0.2, -2.2, 0.7, 0.05]; 10];
/// let mut a = vec![0u16; 10];
/// let mut b = vec![0u16; 10];
/// e8p::encode_into_with(Backend::Scalar, &blocks, &mut a)?;
/// for backend in batch::backends() {
///     e8p::encode_into_with(backend, &blocks, &mut b)?;
///     assert_eq!(a, b, "{backend}");
/// }
/// # Ok::<(), hydron_core::BatchError>(())
/// ```
pub fn encode_into_with(
    backend: Backend,
    blocks: &[[f32; 8]],
    out: &mut [u16],
) -> Result<(), BatchError> {
    assert_eq!(
        blocks.len(),
        out.len(),
        "encode_into: output length differs from input"
    );
    for (index, block) in blocks.iter().enumerate() {
        crate::gf8::check_finite(block).map_err(|error| BatchError { index, error })?;
    }
    encode_finite_into(Kernel::of(backend), blocks, out);
    Ok(())
}

/// The codes of finite blocks: [`LANES`](super::e8p_batch::LANES) at a
/// time through the batch kernel, and one at a time for the lanes it
/// leaves undecided and for the tail.
#[inline(always)]
pub(crate) fn encode_finite_into(kernel: Kernel, blocks: &[[f32; 8]], out: &mut [u16]) {
    use super::e8p_batch::LANES;
    let whole = blocks.len() / LANES * LANES;
    for (group, slots) in blocks[..whole]
        .chunks_exact(LANES)
        .zip(out[..whole].chunks_exact_mut(LANES))
    {
        let mut in_range = [false; LANES];
        for l in 0..LANES {
            in_range[l] = in_exact_range(&group[l]);
        }
        let codes = kernel.encode_lanes(group, &in_range);
        for (l, slot) in slots.iter_mut().enumerate() {
            *slot = match codes[l] {
                Some(code) => code,
                None => kernel.encode(&group[l]),
            };
        }
    }
    for (block, slot) in blocks[whole..].iter().zip(&mut out[whole..]) {
        *slot = kernel.encode(block);
    }
}

/// The kernel of the best backend, for callers that encode many batches.
#[inline]
pub(crate) fn best_kernel() -> Kernel {
    Kernel::of(best_backend())
}

/// The backend [`encode_into`] uses: AVX2 when built and detected.
#[inline]
fn best_backend() -> Backend {
    Backend::Avx2Fma
}

/// What a [`Backend`] resolves to for this encoder, in this build, on this
/// CPU (detected once per call of the batch functions).
#[derive(Clone, Copy)]
pub(crate) enum Kernel {
    Scalar,
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    Avx2(super::e8p_avx2::Avx2),
}

impl Kernel {
    #[inline]
    fn of(backend: Backend) -> Kernel {
        match backend {
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Backend::Avx2Fma => {
                super::e8p_avx2::Avx2::detect().map_or(Kernel::Scalar, Kernel::Avx2)
            }
            _ => Kernel::Scalar,
        }
    }

    /// The batch kernel ([`e8p_batch`](super::e8p_batch)) on this backend.
    #[inline]
    fn encode_lanes(
        self,
        blocks: &[[f32; 8]],
        in_range: &[bool; super::e8p_batch::LANES],
    ) -> [Option<u16>; super::e8p_batch::LANES] {
        match self {
            Kernel::Scalar => super::e8p_batch::encode_lanes(blocks, in_range),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernel::Avx2(token) => token.encode_lanes(blocks, in_range),
        }
    }

    /// The nearest code of a finite block.
    #[inline]
    fn encode(self, x: &[f32; 8]) -> u16 {
        if !in_exact_range(x) {
            return super::e8p_exact::encode_wide_range(x);
        }
        match self {
            Kernel::Scalar => encode_in_range(x),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernel::Avx2(token) => token.encode_in_range(x),
        }
    }
}

/// Whether every sum the in-range kernels take is exact in `f64` (module
/// docs): every nonzero coordinate normal, with binary exponents `e` (as
/// in `2^e ≤ |x| < 2^(e+1)`) such that `e_min ≥ −22`, `e_max ≤ e_min + 21`
/// and `e_max ≤ 40`.
///
/// Why that suffices: let `g = min(¼, 2^(e_min − 23))`; every coordinate is
/// a multiple of `g`, so `y = x − σ` is, `a_i |y_i|` and the sums are
/// multiples of `g/2`, `½|a|²` is a multiple of ⅛ (so of `g/2`), and
/// `σ Σx` a multiple of `g/4`. With `X = max |x_i|`, every intermediate
/// value is at most `32 X + 16`, below `2^(e_max + 7)` (or below 64 when
/// `X < 1`), and that is at most `2^51 g = 2^53 · g/4` under the three
/// conditions. A multiple of `g/4` of magnitude at most `2^53 · g/4` is an
/// `f64`, so no operation rounds.
#[must_use]
#[inline(always)]
pub(crate) fn in_exact_range(x: &[f32; 8]) -> bool {
    // Biased exponents (1..=254 for normal numbers, 0 for zeros and
    // subnormals), without a branch: a zero counts as 255 for the
    // minimum, so the minimum is 255 only when all are zero, and a
    // subnormal makes it 0, which fails `e_min ≥ −22`.
    // Lane-wise, then halved three times (so that it becomes vector code).
    let mut high = [0u32; 8];
    let mut low = [0u32; 8];
    for i in 0..8 {
        let bits = x[i].to_bits() & 0x7FFF_FFFF;
        high[i] = bits >> 23;
        low[i] = if bits == 0 { 255 } else { bits >> 23 };
    }
    let mut n = 4;
    while n > 0 {
        for i in 0..n {
            high[i] = high[i].max(high[i + n]);
            low[i] = low[i].min(low[i + n]);
        }
        n /= 2;
    }
    let (biased_max, biased_min) = (high[0], low[0]);
    biased_min == 255
        || (biased_min >= 127 - 22 && biased_max <= biased_min + 21 && biased_max <= 127 + 40)
}

/// The two shifts, in code order (bit 15 = 0, then 1).
pub(crate) const SHIFTS: [f64; 2] = [0.25, -0.25];

/// `½ |a|²` of pattern `p`, exact (a multiple of ⅛).
#[inline]
pub(crate) fn half_norm(p: usize) -> f64 {
    let sq: u32 = TABLES.doubled[p]
        .iter()
        .map(|&d| u32::from(d) * u32::from(d))
        .sum();
    f64::from(sq) / 8.0
}

/// `y = x − σ` and the parity (0 or 1) of its negative coordinates.
#[inline]
pub(crate) fn shifted(x: &[f32; 8], sigma: f64) -> ([f64; 8], u8) {
    let y = x.map(|v| f64::from(v) - sigma);
    let negatives = y.iter().filter(|v| **v < 0.0).count();
    (y, (negatives & 1) as u8)
}

/// The best value of `⟨s ∘ a, y⟩ − ½|a|²` over the parity-valid signs `s`
/// of pattern `p`: `Σ a_i t_i − ½|a|² − [wrong parity] · 2 min_i a_i t_i`
/// with `t = |y|`. Exact in the exact range; otherwise within the error
/// bound of `e8p_exact`.
#[inline]
pub(crate) fn class_value(t: &[f64; 8], negative_parity: u8, p: usize) -> f64 {
    let a = &TABLES.doubled[p];
    let mut prod = [0.0f64; 8];
    for i in 0..8 {
        prod[i] = f64::from(a[i]) * 0.5 * t[i];
    }
    let sum =
        ((prod[0] + prod[4]) + (prod[2] + prod[6])) + ((prod[1] + prod[5]) + (prod[3] + prod[7]));
    let min = prod.iter().fold(f64::INFINITY, |m, &v| m.min(v));
    let value = sum - half_norm(p);
    if negative_parity != TABLES.parity[p] {
        value - 2.0 * min
    } else {
        value
    }
}

/// The scalar in-range kernel.
pub(crate) fn encode_in_range(x: &[f32; 8]) -> u16 {
    encode_in_range_by(x, best_of_all_patterns)
}

/// The in-range encoder, given a way to search all 256 patterns of one
/// shift: each shift's best pattern ([`best_by_sorting`], or the full
/// search when that declines), then the better shift (shift 0 among
/// equals), then the lowest sign bits. Every comparison is exact.
#[inline]
pub(crate) fn encode_in_range_by(
    x: &[f32; 8],
    all_patterns: impl Fn(&[f64; 8], u8) -> (f64, usize),
) -> u16 {
    let sum_x: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let mut best = (f64::NEG_INFINITY, 0usize, 0usize);
    for (shift, &sigma) in SHIFTS.iter().enumerate() {
        let (y, parity) = shifted(x, sigma);
        let t = y.map(f64::abs);
        let (value, pattern) =
            best_by_sorting(&t, parity).unwrap_or_else(|| all_patterns(&t, parity));
        let total = value + sigma * sum_x;
        if total > best.0 {
            best = (total, shift, pattern);
        }
    }
    finish_code(x, best.1, best.2)
}

/// The largest class value over all 256 patterns of one shift and the
/// lowest pattern that reaches it (strict `>` in pattern order).
pub(crate) fn best_of_all_patterns(t: &[f64; 8], parity: u8) -> (f64, usize) {
    let mut best = (f64::NEG_INFINITY, 0);
    for p in 0..PATTERN_COUNT {
        let v = class_value(t, parity, p);
        if v > best.0 {
            best = (v, p);
        }
    }
    best
}

/// The D8 classes `(k3, k5)`: how many 3/2 and 5/2 a pattern has (the
/// rest are ½). Every arrangement of each is a pattern.
const D8_CLASSES: [(usize, usize); 7] = [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (0, 1), (1, 1)];

/// `PATTERN_INDEX[q][m]`: the pattern with its 5/2 at coordinate `q` (8:
/// none) and its 3/2 at the set bits of `m` (0xFF where there is none).
pub(crate) const PATTERN_INDEX: [[u8; 256]; 9] = {
    let mut index = [[0xFFu8; 256]; 9];
    let mut p = 0;
    while p < PATTERN_COUNT {
        let mut five = 8;
        let mut threes = 0;
        let mut i = 0;
        while i < 8 {
            match TABLES.doubled[p][i] {
                5 => five = i,
                3 => threes |= 1 << i,
                _ => {}
            }
            i += 1;
        }
        index[five][threes] = p as u8;
        p += 1;
    }
    index
};

/// The first norm-12 pattern.
pub(crate) const NORM12_START: usize = PATTERN_COUNT - NORM12_PATTERNS.len();

/// The best pattern of one shift without trying all 256, when the block
/// allows it: `None` unless the `t_i` are nonzero and pairwise distinct.
///
/// Then each D8 class `(k3, k5)` has exactly one best codeword: the 5/2
/// on the largest `t`, the 3/2 on the next `k3` (rearrangement
/// inequality), and, when the signs of `y` have the wrong parity, the
/// smallest `t` (which carries a ½) flipped: flipping a larger `t` or one
/// with a larger `a_i` loses strictly more. Its value is
/// `½ Σt + 2 k5 t_(1) + (t_(k5+1) + … + t_(k5+k3)) − (1 + k3 + 3 k5) −
/// [wrong parity] t_(8)`, with `t_(1) > … > t_(8)` and `½|a|² = 1 + k3 + 3 k5`.
/// The same bound over all arrangements of five 3/2 and three ½ limits
/// the 29 norm-12 patterns; only when it beats the best D8 value (their
/// indices are higher, so they must beat it strictly) are they tried one
/// by one. Every quantity is exact in the exact range, so the value is
/// the one [`best_of_all_patterns`] finds, and so is the pattern (the
/// lowest among equal values).
pub(crate) fn best_by_sorting(t: &[f64; 8], parity: u8) -> Option<(f64, usize)> {
    // Coordinates by decreasing t (insertion sort).
    let mut order = [0usize, 1, 2, 3, 4, 5, 6, 7];
    for k in 1..8 {
        let mut j = k;
        while j > 0 && t[order[j - 1]] < t[order[j]] {
            order.swap(j - 1, j);
            j -= 1;
        }
    }
    let sorted = order.map(|i| t[i]);
    if sorted[7] == 0.0 || sorted.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    let mut prefix = [0.0f64; 9];
    for k in 0..8 {
        prefix[k + 1] = prefix[k] + sorted[k];
    }
    let half_total = 0.5 * prefix[8];
    let mut best = (f64::NEG_INFINITY, PATTERN_COUNT);
    for (k3, k5) in D8_CLASSES {
        let mut v = half_total + 2.0 * (k5 as f64) * sorted[0] + (prefix[k5 + k3] - prefix[k5]);
        v -= (1 + k3 + 3 * k5) as f64;
        if parity != (k3 & 1) as u8 {
            v -= sorted[7];
        }
        let five = if k5 == 1 { order[0] } else { 8 };
        let threes = order[k5..k5 + k3].iter().fold(0usize, |m, &i| m | (1 << i));
        let p = usize::from(PATTERN_INDEX[five][threes]);
        if v > best.0 || (v == best.0 && p < best.1) {
            best = (v, p);
        }
    }
    let mut bound = half_total + prefix[5] - 6.0;
    if parity != 1 {
        bound -= sorted[7];
    }
    if bound > best.0 {
        for p in NORM12_START..PATTERN_COUNT {
            let v = class_value(t, parity, p);
            if v > best.0 {
                best = (v, p);
            }
        }
    }
    Some(best)
}

/// The code of the best codeword of shift `shift` and pattern `p`: the
/// lowest sign bits among the optimal sign vectors. Exact in the exact
/// range, where `x − σ` and the products `a_i |y_i|` are.
pub(crate) fn finish_code(x: &[f32; 8], shift: usize, p: usize) -> u16 {
    let (y, _) = shifted(x, SHIFTS[shift]);
    let signs = lowest_signs(&y, p);
    ((shift as u16) << 15) | ((p as u16) << 7) | signs
}

/// The lowest 7 sign bits among the sign vectors that maximize
/// `⟨s ∘ a, y⟩` for pattern `p` under its parity rule (`y` exact).
///
/// Optimal sign vectors: `s_i = sign(y_i)` where `y_i ≠ 0`, free where
/// `y_i = 0`, with `#negative ≡ Σ a_i`. When no coordinate is zero and the
/// signs of `y` have the wrong parity, exactly one coordinate of minimal
/// `a_i |y_i|` is flipped.
pub(crate) fn lowest_signs(y: &[f64; 8], p: usize) -> u16 {
    let a = &TABLES.doubled[p];
    let parity = u32::from(TABLES.parity[p]);
    let mut negative = 0u32;
    let mut zero = 0u32;
    for (i, &v) in y.iter().enumerate() {
        if v < 0.0 {
            negative |= 1 << i;
        } else if v == 0.0 {
            zero |= 1 << i;
        }
    }
    let bits = negative & 0x7F;
    // Coordinate 7's sign as the code implies it from `bits`.
    let implied_last = (bits.count_ones() + parity) & 1;
    let last_zero = zero & 0x80 != 0;
    if last_zero || implied_last == (negative >> 7) & 1 {
        return bits as u16;
    }
    // Wrong parity. A zero coordinate among 0..7 flips for free: the
    // lowest one adds the least.
    if zero & 0x7F != 0 {
        return (bits | (1 << (zero & 0x7F).trailing_zeros())) as u16;
    }
    // Flip one coordinate of minimal cost a_i |y_i| (no zeros here).
    let cost = core::array::from_fn::<f64, 8, _>(|i| f64::from(a[i]) * 0.5 * y[i].abs());
    let min = cost.iter().fold(f64::INFINITY, |m, &c| m.min(c));
    let minimal = (0..8)
        .filter(|&i| cost[i] == min)
        .fold(0u32, |m, i| m | (1 << i));
    // Clearing a set bit lowers the code (the highest one the most);
    // flipping coordinate 7 changes no bit; setting a bit raises it (the
    // lowest one the least).
    let clearable = minimal & bits;
    if clearable != 0 {
        return (bits & !(1 << (31 - clearable.leading_zeros()))) as u16;
    }
    if minimal & 0x80 != 0 {
        return bits as u16;
    }
    (bits | (1 << minimal.trailing_zeros())) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_counts_by_norm() {
        let mut counts = [0usize; 7];
        for p in 0..PATTERN_COUNT {
            let sq: u32 = TABLES.doubled[p]
                .iter()
                .map(|&d| u32::from(d) * u32::from(d))
                .sum();
            assert_eq!(sq % 8, 0);
            counts[(sq / 8) as usize] += 1;
        }
        // Squared norms 2, 4, 6, 8, 10, 12.
        assert_eq!(counts, [0, 1, 8, 28, 64, 126, 29]);
    }

    #[test]
    fn patterns_are_distinct_and_sorted() {
        for w in TABLES.doubled.windows(2) {
            let n = |p: &[u8; 8]| p.iter().map(|&d| u32::from(d) * u32::from(d)).sum::<u32>();
            assert!((n(&w[0]), w[0]) < (n(&w[1]), w[1]), "{w:?}");
        }
    }

    #[test]
    fn every_listed_norm12_pattern_is_in_the_table() {
        for q in NORM12_PATTERNS {
            assert!(TABLES.doubled[227..].contains(&q), "{q:?}");
        }
    }

    #[test]
    fn every_pattern_has_its_index() {
        for p in 0..PATTERN_COUNT {
            let five = TABLES.doubled[p].iter().position(|&d| d == 5).unwrap_or(8);
            let threes = (0..8)
                .filter(|&i| TABLES.doubled[p][i] == 3)
                .fold(0, |m, i| m | (1 << i));
            assert_eq!(usize::from(PATTERN_INDEX[five][threes]), p);
        }
    }

    #[test]
    fn sorting_finds_what_the_full_search_finds() {
        let mut state = 99u64;
        let mut sorted = 0;
        for round in 0..20_000 {
            let t: [f64; 8] = core::array::from_fn(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Quarter grids early (ties), then 20-bit fractions (exact in f64).
                let bits = if round < 2000 { 3 } else { 20 };
                ((state >> 44) % (4 << bits)) as f64 / f64::from(1u32 << bits)
            });
            for parity in 0..2 {
                if let Some(found) = best_by_sorting(&t, parity) {
                    sorted += 1;
                    assert_eq!(found, best_of_all_patterns(&t, parity), "{t:?} {parity}");
                }
            }
        }
        assert!(sorted > 30_000, "{sorted}");
    }

    #[test]
    fn decode_scaled_is_decode_times_the_scale() {
        for code in 0..=u16::MAX {
            for scale in [1.0, 0.37, 1e-30] {
                let mut out = [0.0; 8];
                decode_scaled(code, scale, &mut out);
                let expected = decode(code).map(|v| (f64::from(v) * scale).to_bits());
                assert_eq!(out.map(f64::to_bits), expected, "{code:#06x}");
            }
        }
    }

    /// The `f32` decoder gives the codeword times the scale, rounded once.
    #[test]
    fn decode_scaled32_is_decode_times_the_scale() {
        for code in 0..=u16::MAX {
            for scale in [1.0f32, 0.3, 7.5e-3] {
                let expected = decode(code).map(|v| v * scale);
                assert_eq!(decode_scaled32(code, scale), expected, "code {code:#06x}");
            }
        }
    }

    /// [`in_exact_range`] as its docs state it, one coordinate at a time.
    fn in_exact_range_by_exponents(x: &[f32; 8]) -> bool {
        let mut e_max = i32::MIN;
        let mut e_min = i32::MAX;
        for v in x {
            let bits = v.to_bits() & 0x7FFF_FFFF;
            if bits == 0 {
                continue;
            }
            let biased = (bits >> 23) as i32;
            if biased == 0 {
                return false; // subnormal
            }
            e_max = e_max.max(biased - 127);
            e_min = e_min.min(biased - 127);
        }
        e_max == i32::MIN || (e_min >= -22 && e_max <= e_min + 21 && e_max <= 40)
    }

    /// The branch-free test is the rule of its docs, on blocks mixing
    /// zeros, subnormals and every exponent of a finite `f32`.
    #[test]
    fn exact_range_is_the_exponent_rule() {
        let mut state = 5u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        for _ in 0..200_000 {
            let x: [f32; 8] = core::array::from_fn(|_| {
                let r = next();
                let sign = r & 0x8000_0000;
                let mantissa = next() & 0x007F_FFFF;
                let biased = match r % 8 {
                    0 => 0,
                    1 => 1 + r / 8 % 254,
                    _ => 100 + r / 8 % 70,
                };
                let bits = sign | biased << 23 | if r % 16 == 8 { 0 } else { mantissa };
                f32::from_bits(bits)
            });
            assert_eq!(in_exact_range(&x), in_exact_range_by_exponents(&x), "{x:?}");
        }
    }

    #[test]
    fn exact_range_bounds() {
        let two = |e: i32, f: i32| {
            let mut x = [0.0f32; 8];
            x[0] = 2.0f32.powi(e);
            x[5] = -2.0f32.powi(f);
            in_exact_range(&x)
        };
        assert!(in_exact_range(&[0.0; 8]));
        assert!(two(0, -21) && two(1, -20) && two(40, 19));
        assert!(!two(1, -21) && !two(2, -20) && !two(41, 20));
        assert!(two(-22, -22) && !two(-23, -23));
        assert!(in_exact_range(&[2.0f32.powi(40); 8]));
        assert!(!in_exact_range(&[2.0f32.powi(41); 8]));
        assert!(!in_exact_range(&[1e-40, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]));
    }
}
