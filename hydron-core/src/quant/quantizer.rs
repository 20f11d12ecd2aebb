//! [`LatticeQuantizer`]: vectors of any dimension to E8P codes (2 bits
//! per coordinate) or E8 shell codes (4 bits) and back.

use super::e8p;
use super::hadamard::Rotation;
use super::hadamard32::{Rotate32, Unrotate32, F8};
use super::shell;
use super::QuantError;

/// The step of the codebook for coordinates of unit variance: a block
/// `z` of i.i.d. N(0, 1) coordinates is quantized as
/// `GAUSSIAN_SCALE · Q(z / GAUSSIAN_SCALE)`, `Q` the nearest E8P codeword.
///
/// Found by minimizing the mean squared error over 200,000 seeded
/// Gaussian blocks with a golden-section search on `[0.5, 1.5]`, which
/// gave 0.9636 at an MSE of 0.0913 per coordinate: the ignored test
/// `gaussian_scale_search` in `hydron-core/tests/quant.rs` (run it with
/// `--ignored`). The always-on test `gaussian_scale_is_a_minimum` checks
/// that 2% either way is worse.
pub const GAUSSIAN_SCALE: f32 = 0.964;

/// The same step at 4 bits per coordinate: 1. The [`shell`] code's gain
/// levels are fitted to blocks of i.i.d. N(0, 1) coordinates, so the
/// vector is only brought to unit variance per coordinate.
pub const SHELL_SCALE: f32 = 1.0;

/// With the `parallel` feature, [`LatticeQuantizer::encode_into`] and
/// [`LatticeQuantizer::decode_into`] split batches of at least twice this
/// many blocks into pieces of about this many blocks across rayon's pool
/// (fork-safe, as the `parallel` module says); every vector is coded on its
/// own, so the output is the same as on one thread, and the input is
/// checked first, so an error names the same first bad vector.
#[cfg(feature = "parallel")]
pub const PARALLEL_MIN_BLOCKS: usize = 2048;

/// How each vector is scaled before its blocks are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ScaleMode {
    /// One `f32` (4 bytes) per vector, stored beside the codes:
    /// `‖x‖ / √d_padded · GAUSSIAN_SCALE` ([`SHELL_SCALE`] at 4 bits),
    /// where `d_padded` is the dimension padded to a multiple of 8. Vectors
    /// of any norm work; the zero vector has scale 0.
    #[default]
    PerVector,
    /// No scale is stored: every vector is taken to have norm 1 and is
    /// scaled by `GAUSSIAN_SCALE / √d_padded` ([`SHELL_SCALE`] at 4 bits). Vectors of other norms are
    /// encoded the same way (coordinates beyond the `f32` range after
    /// scaling saturate), with a larger relative error far from norm 1.
    Unit,
    /// For vectors known to have norm 1, or whose direction is all that
    /// matters: encoded exactly as [`Unit`](Self::Unit) (the same codes, no
    /// scale stored), but [`decode`](LatticeQuantizer::decode) divides each
    /// decoded vector by its norm, so its vectors have norm 1 (a decoded
    /// vector of norm 0 stays 0; no code of a whole block decodes to 0),
    /// and [`search`](LatticeQuantizer::search) measures the normalized
    /// reconstruction (the [search module](super::search) says how). On
    /// unit data the NMSE moves a little either way and the directions,
    /// hence recall, improve. Measured by the project lead with code in
    /// the style of `python/bench_quant.py` on GloVe 6B 50-d
    /// (unit-normalized, padded to 56; 100k database vectors, 1k queries),
    /// unit → direction: recall 10@10 0.572 → 0.5985 and NMSE 0.0894 →
    /// 0.0902 at 2 bits (14 bytes per vector; FAISS `PQ14x8` 0.586), recall
    /// 0.874 → 0.880 and NMSE 0.00667 → 0.00660 at 4 bits.
    Direction,
}

/// Codes of a batch: [`code_size`](LatticeQuantizer::code_size) bytes per
/// vector (each 8-dim block's 16-bit E8P code, or at 4 bits its 32-bit
/// [`shell`] code, little-endian, blocks in order), and one scale per vector ([`ScaleMode::PerVector`]) or none
/// ([`ScaleMode::Unit`], [`ScaleMode::Direction`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuantCodes {
    /// The codes, vector after vector.
    pub codes: Vec<u8>,
    /// One scale per vector, or empty in unit and direction modes.
    pub scales: Vec<f32>,
}

/// A lattice quantizer: `dim`-dimensional `f32` vectors to E8P codes, at 2
/// bits per coordinate, or to E8 shell codes, at 4, with no training.
///
/// Encoding a vector: pad it with zeros to a multiple of 8 (`d_padded`),
/// rotate it ([`Rotation`], seeded; on by default when `dim > 8`), divide
/// it by its scale ([`ScaleMode`]), and give each 8-dim block the code of
/// its nearest E8P codeword ([`e8p::encode`], exact), or at 4 bits its
/// [`shell`] code ([`shell::encode`]: the nearest of its codes). Decoding
/// runs the steps backwards and drops the padding.
///
/// ```
/// use hydron_core::quant::LatticeQuantizer;
///
/// let q = LatticeQuantizer::new(20, 2, 42)?;
/// assert_eq!(q.code_size(), 6); // 3 blocks of 16 bits
/// let x: Vec<f32> = (0..40).map(|i| (i as f32 * 0.7).sin()).collect(); // 2 vectors
/// let codes = q.encode(&x)?;
/// assert_eq!((codes.codes.len(), codes.scales.len()), (12, 2));
/// let y = q.decode(&codes)?;
/// let err: f32 = x.iter().zip(&y).map(|(a, b)| (a - b) * (a - b)).sum();
/// let energy: f32 = x.iter().map(|a| a * a).sum();
/// assert!(err / energy < 0.2);
/// # Ok::<(), hydron_core::quant::QuantError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LatticeQuantizer {
    dim: usize,
    bits: u32,
    blocks: usize,
    seed: u64,
    rotation: Option<Rotation>,
    scale: ScaleMode,
}

impl LatticeQuantizer {
    /// A quantizer of `dim`-dimensional vectors at `bits_per_dim` bits per
    /// coordinate, its rotation drawn from `seed`; rotation on when
    /// `dim > 8`, per-vector scale.
    ///
    /// # Errors
    /// [`QuantError::ZeroDimension`] for `dim == 0`;
    /// [`QuantError::UnsupportedBits`] for any rate but 2 and 4.
    ///
    /// ```
    /// use hydron_core::quant::{LatticeQuantizer, QuantError};
    ///
    /// assert!(LatticeQuantizer::new(8, 2, 0)?.rotation().is_none());
    /// assert!(LatticeQuantizer::new(9, 2, 0)?.rotation().is_some());
    /// assert_eq!(LatticeQuantizer::new(9, 4, 0)?.code_size(), 8); // 2 blocks of 32 bits
    /// assert_eq!(LatticeQuantizer::new(8, 3, 0), Err(QuantError::UnsupportedBits { bits: 3 }));
    /// # Ok::<(), QuantError>(())
    /// ```
    pub fn new(dim: usize, bits_per_dim: u32, seed: u64) -> Result<LatticeQuantizer, QuantError> {
        if dim == 0 {
            return Err(QuantError::ZeroDimension);
        }
        if bits_per_dim != 2 && bits_per_dim != 4 {
            return Err(QuantError::UnsupportedBits { bits: bits_per_dim });
        }
        let blocks = dim.div_ceil(8);
        let q = LatticeQuantizer {
            dim,
            bits: bits_per_dim,
            blocks,
            seed,
            rotation: None,
            scale: ScaleMode::PerVector,
        };
        Ok(q.with_rotation(dim > 8))
    }

    /// The same quantizer with the rotation on or off.
    ///
    /// ```
    /// use hydron_core::quant::LatticeQuantizer;
    /// let q = LatticeQuantizer::new(100, 2, 0)?.with_rotation(false);
    /// assert!(q.rotation().is_none());
    /// # Ok::<(), hydron_core::quant::QuantError>(())
    /// ```
    #[must_use]
    pub fn with_rotation(mut self, rotate: bool) -> LatticeQuantizer {
        self.rotation = rotate.then(|| Rotation::new(self.padded_dim(), self.seed));
        self
    }

    /// The same quantizer with another [`ScaleMode`].
    ///
    /// ```
    /// use hydron_core::quant::{LatticeQuantizer, ScaleMode};
    /// let q = LatticeQuantizer::new(16, 2, 0)?.with_scale(ScaleMode::Unit);
    /// assert!(q.encode(&[0.25; 16])?.scales.is_empty());
    /// # Ok::<(), hydron_core::quant::QuantError>(())
    /// ```
    #[must_use]
    pub fn with_scale(mut self, scale: ScaleMode) -> LatticeQuantizer {
        self.scale = scale;
        self
    }

    /// The dimension of the vectors.
    #[must_use]
    #[inline]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Bits per coordinate (of the padded vector): 2 or 4.
    #[must_use]
    #[inline]
    pub fn bits_per_dim(&self) -> u32 {
        self.bits
    }

    /// The seed of the rotation.
    #[must_use]
    #[inline]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The rotation, if on.
    #[must_use]
    #[inline]
    pub fn rotation(&self) -> Option<&Rotation> {
        self.rotation.as_ref()
    }

    /// The scale mode.
    #[must_use]
    #[inline]
    pub fn scale_mode(&self) -> ScaleMode {
        self.scale
    }

    /// The number of 8-dim blocks per vector, `⌈dim / 8⌉`.
    #[must_use]
    #[inline]
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// The dimension padded to a multiple of 8.
    #[must_use]
    #[inline]
    pub fn padded_dim(&self) -> usize {
        8 * self.blocks
    }

    /// Code bytes per vector: 2 per block at 2 bits, 4 at 4 bits (the
    /// scale is separate).
    #[must_use]
    #[inline]
    pub fn code_size(&self) -> usize {
        self.block_bytes() * self.blocks
    }

    /// Code bytes per block: 2 or 4.
    #[inline]
    fn block_bytes(&self) -> usize {
        self.bits as usize
    }

    /// `GAUSSIAN_SCALE` or [`SHELL_SCALE`], as the rate asks.
    #[inline]
    fn step(&self) -> f64 {
        f64::from(if self.bits == 4 {
            SHELL_SCALE
        } else {
            GAUSSIAN_SCALE
        })
    }

    /// The scale of every vector in [`ScaleMode::Unit`]:
    /// `step / √d_padded`.
    #[inline]
    pub(crate) fn unit_scale(&self) -> f64 {
        self.step() / (self.padded_dim() as f64).sqrt()
    }

    /// Encodes a batch of vectors given row after row (`n · dim` numbers).
    ///
    /// # Errors
    /// [`QuantError::InputLength`] when the input is not whole vectors;
    /// [`QuantError::NotANumber`] or [`QuantError::Infinite`] naming the
    /// first bad vector and coordinate.
    pub fn encode(&self, vectors: &[f32]) -> Result<QuantCodes, QuantError> {
        let n = self.count(vectors.len())?;
        let mut out = QuantCodes {
            codes: crate::huge::zeroed_vec(n * self.code_size()),
            scales: vec![
                0.0;
                if self.scale == ScaleMode::PerVector {
                    n
                } else {
                    0
                }
            ],
        };
        self.encode_into(vectors, &mut out.codes, &mut out.scales)?;
        Ok(out)
    }

    /// [`encode`](Self::encode) into buffers the caller provides: `codes`
    /// of `n · code_size` bytes and `scales` of `n` (per-vector scale) or 0
    /// (unit and direction modes) numbers.
    ///
    /// # Errors
    /// As [`encode`](Self::encode); the output past the bad vector is
    /// then unspecified.
    ///
    /// # Panics
    /// When `codes` or `scales` does not have the length above.
    pub fn encode_into(
        &self,
        vectors: &[f32],
        codes: &mut [u8],
        scales: &mut [f32],
    ) -> Result<(), QuantError> {
        let n = self.count(vectors.len())?;
        assert_eq!(
            codes.len(),
            n * self.code_size(),
            "encode_into: wrong codes length"
        );
        let expected = if self.scale == ScaleMode::PerVector {
            n
        } else {
            0
        };
        assert_eq!(scales.len(), expected, "encode_into: wrong scales length");
        // A branch-free pass first (the exponent of a NaN or infinity is
        // all ones), then the first bad coordinate, if any.
        if any_non_finite(vectors) {
            return Err(self.first_non_finite(vectors));
        }
        self.encode_checked(vectors, codes, scales);
        Ok(())
    }

    /// The error for the first NaN or infinite coordinate of `vectors`,
    /// which has one.
    fn first_non_finite(&self, vectors: &[f32]) -> QuantError {
        let at = vectors
            .iter()
            .position(|v| !v.is_finite())
            .expect("a NaN or infinity was found");
        let (vector, coordinate, value) = (at / self.dim, at % self.dim, vectors[at]);
        if value.is_nan() {
            QuantError::NotANumber { vector, coordinate }
        } else {
            QuantError::Infinite {
                vector,
                coordinate,
                value,
            }
        }
    }

    /// The work of [`encode_into`](Self::encode_into) on finite input of
    /// the right lengths, across threads when it is large.
    fn encode_checked(&self, vectors: &[f32], codes: &mut [u8], scales: &mut [f32]) {
        #[cfg(feature = "parallel")]
        if vectors.len() / self.dim * self.blocks >= 2 * PARALLEL_MIN_BLOCKS {
            use rayon::prelude::*;
            let per = PARALLEL_MIN_BLOCKS.div_ceil(self.blocks);
            crate::parallel::run(|| {
                let pieces = vectors
                    .par_chunks(per * self.dim)
                    .zip(codes.par_chunks_mut(per * self.code_size()));
                match self.scale {
                    ScaleMode::PerVector => pieces
                        .zip(scales.par_chunks_mut(per))
                        .for_each(|((v, c), s)| self.encode_finite(v, c, s)),
                    ScaleMode::Unit | ScaleMode::Direction => {
                        pieces.for_each(|(v, c)| self.encode_finite(v, c, &mut []));
                    }
                }
            });
            return;
        }
        self.encode_finite(vectors, codes, scales);
    }

    /// The work of [`encode_into`](Self::encode_into) on checked input:
    /// [`encode_vectors`](Self::encode_vectors) compiled for AVX2 when the
    /// build (feature `simd`, x86-64) and the CPU have it. The operations
    /// are the same (Rust fuses no multiply-add), so the output is too.
    fn encode_finite(&self, vectors: &[f32], codes: &mut [u8], scales: &mut [f32]) {
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        if super::e8p_avx2::Avx2::detect().is_some() {
            // SAFETY: detection found AVX2 on this CPU, the feature
            // `encode_vectors_avx2` is compiled for.
            unsafe { encode_vectors_avx2(self, vectors, codes, scales) };
            return;
        }
        self.encode_vectors(vectors, codes, scales, super::hadamard32::in_register);
    }

    /// The work of [`encode_finite`](Self::encode_finite), inlined into
    /// each build; `in_reg`: [`hadamard32::in_register`](super::hadamard32)
    /// or its AVX2 form (the same bits).
    #[inline(always)]
    fn encode_vectors(
        &self,
        vectors: &[f32],
        codes: &mut [u8],
        scales: &mut [f32],
        in_reg: impl Fn(F8) -> F8 + Copy,
    ) {
        let padded = self.padded_dim();
        let mut work = vec![0.0f64; padded];
        let mut blocks = vec![[0.0f32; 8]; self.blocks];
        let mut block_codes = vec![0u16; if self.bits == 2 { self.blocks } else { 0 }];
        let mut shell_codes = vec![0u32; if self.bits == 4 { self.blocks } else { 0 }];
        let kernel = e8p::best_kernel();
        // The 2-bit codes rotate in `f32` where the range allows.
        let fast = match (&self.rotation, self.bits) {
            (Some(r), 2) => Some(Rotate32::new(r)),
            _ => None,
        };
        let mut squares = [0.0f64; NORM_GROUP];
        for (vector, (x, out)) in vectors
            .chunks_exact(self.dim)
            .zip(codes.chunks_exact_mut(self.code_size()))
            .enumerate()
        {
            if self.scale == ScaleMode::PerVector && vector.is_multiple_of(NORM_GROUP) {
                squares = sums_of_squares(&vectors[vector * self.dim..], self.dim);
            }
            let divisor = match self.scale {
                ScaleMode::PerVector => {
                    let norm = squares[vector % NORM_GROUP].sqrt();
                    let scale = saturate(norm / (padded as f64).sqrt() * self.step());
                    scales[vector] = scale;
                    f64::from(scale)
                }
                ScaleMode::Unit | ScaleMode::Direction => self.unit_scale(),
            };
            if divisor == 0.0 {
                blocks.as_flattened_mut().fill(0.0);
            } else if fast
                .as_ref()
                .is_some_and(|f| f.rotate_scaled(x, 1.0 / divisor, &mut blocks, in_reg))
            {
                // Rotated and scaled in `f32`.
            } else {
                for (w, &v) in work.iter_mut().zip(x) {
                    *w = f64::from(v);
                }
                work[self.dim..].fill(0.0);
                if let Some(r) = &self.rotation {
                    r.rotate(&mut work);
                }
                let flat = blocks.as_flattened_mut();
                // A multiply by the reciprocal instead of a divide: the
                // `f64` quotient may differ in its last bit, which moves a
                // block's `f32` only when it lies that close to a rounding
                // boundary; the code is still the nearest to the block.
                let inverse = 1.0 / divisor;
                for (b, &v) in flat.iter_mut().zip(&work) {
                    *b = saturate(v * inverse);
                }
            }
            if self.bits == 4 {
                shell::encode_finite_into(&blocks, &mut shell_codes);
                for (bytes, code) in out.chunks_exact_mut(4).zip(&shell_codes) {
                    bytes.copy_from_slice(&code.to_le_bytes());
                }
                continue;
            }
            // The blocks are finite: saturated or zero.
            e8p::encode_finite_into(kernel, &blocks, &mut block_codes);
            for (bytes, code) in out.chunks_exact_mut(2).zip(&block_codes) {
                bytes.copy_from_slice(&code.to_le_bytes());
            }
        }
    }

    /// Decodes a batch: `n · dim` numbers, row after row (saturated to the
    /// finite `f32` range, which only vectors near `f32::MAX` reach).
    ///
    /// # Errors
    /// [`QuantError::CodesLength`], [`QuantError::ScaleCount`] when the
    /// codes and scales disagree with this quantizer or each other,
    /// [`QuantError::InvalidScale`] for a negative, NaN or infinite scale,
    /// [`QuantError::InvalidCode`] for a 4-bit block code that names no
    /// point ([`shell::is_valid`]).
    pub fn decode(&self, codes: &QuantCodes) -> Result<Vec<f32>, QuantError> {
        let n = self.code_count(codes.codes.len())?;
        let mut out = crate::huge::zeroed_vec(n * self.dim);
        self.decode_into(&codes.codes, &codes.scales, &mut out)?;
        Ok(out)
    }

    /// [`decode`](Self::decode) into a buffer the caller provides, of
    /// `n · dim` numbers.
    ///
    /// # Errors
    /// As [`decode`](Self::decode).
    ///
    /// # Panics
    /// When `out` does not have `n · dim` numbers.
    pub fn decode_into(
        &self,
        codes: &[u8],
        scales: &[f32],
        out: &mut [f32],
    ) -> Result<(), QuantError> {
        let n = self.code_count(codes.len())?;
        let expected = if self.scale == ScaleMode::PerVector {
            n
        } else {
            0
        };
        if scales.len() != expected {
            return Err(QuantError::ScaleCount {
                scales: scales.len(),
                vectors: n,
                expected,
            });
        }
        if let Some((vector, &value)) = scales
            .iter()
            .enumerate()
            .find(|(_, s)| !(s.is_finite() && **s >= 0.0))
        {
            return Err(QuantError::InvalidScale { vector, value });
        }
        if self.bits == 4 {
            self.check_shell_codes(codes)?;
        }
        assert_eq!(out.len(), n * self.dim, "decode_into: wrong output length");
        #[cfg(feature = "parallel")]
        if n * self.blocks >= 2 * PARALLEL_MIN_BLOCKS {
            use rayon::prelude::*;
            let per = PARALLEL_MIN_BLOCKS.div_ceil(self.blocks);
            crate::parallel::run(|| {
                let pieces = codes
                    .par_chunks(per * self.code_size())
                    .zip(out.par_chunks_mut(per * self.dim));
                match self.scale {
                    ScaleMode::PerVector => pieces
                        .zip(scales.par_chunks(per))
                        .for_each(|((c, o), s)| self.decode_checked(c, s, o)),
                    ScaleMode::Unit | ScaleMode::Direction => {
                        pieces.for_each(|(c, o)| self.decode_checked(c, &[], o));
                    }
                }
            });
            return Ok(());
        }
        self.decode_checked(codes, scales, out);
        Ok(())
    }

    /// The work of [`decode_into`](Self::decode_into) on checked input:
    /// [`decode_vectors`](Self::decode_vectors) compiled for AVX2 when the
    /// build and the CPU have it (the same operations, so the same output).
    fn decode_checked(&self, codes: &[u8], scales: &[f32], out: &mut [f32]) {
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        if super::e8p_avx2::Avx2::detect().is_some() {
            // SAFETY: detection found AVX2 on this CPU, the feature
            // `decode_vectors_avx2` is compiled for.
            unsafe { decode_vectors_avx2(self, codes, scales, out) };
            return;
        }
        self.decode_vectors(codes, scales, out, super::hadamard32::in_register);
    }

    /// The work of [`decode_checked`](Self::decode_checked), inlined into
    /// each build: at 2 bits with a rotation, per-vector or unit scale,
    /// in `f32` ([`hadamard32`](super::hadamard32)) for each vector whose
    /// scale it takes without overflow, else in `f64`.
    /// `in_reg`: [`hadamard32::in_register`](super::hadamard32) or its AVX2
    /// form (the same bits).
    #[inline(always)]
    fn decode_vectors(
        &self,
        codes: &[u8],
        scales: &[f32],
        out: &mut [f32],
        in_reg: impl Fn(F8) -> F8 + Copy,
    ) {
        let padded = self.padded_dim();
        let mut work = vec![0.0f64; padded];
        let fast = match (&self.rotation, self.bits, self.scale) {
            (Some(r), 2, ScaleMode::PerVector | ScaleMode::Unit) => Some(Unrotate32::new(r)),
            _ => None,
        };
        let mut work32 = vec![[0.0f32; 8]; if fast.is_some() { self.blocks } else { 0 }];
        for (vector, (code, y)) in codes
            .chunks_exact(self.code_size())
            .zip(out.chunks_exact_mut(self.dim))
            .enumerate()
        {
            let scale = match self.scale {
                ScaleMode::PerVector => f64::from(scales[vector]),
                ScaleMode::Unit => self.unit_scale(),
                // Normalized below: the codewords as they are.
                ScaleMode::Direction => 1.0,
            };
            match &fast {
                Some(u) if scale <= u.max_scale() => {
                    decode_f32(u, code, scale as f32, &mut work32, y, in_reg);
                }
                _ => self.decode_f64(code, scale, &mut work, y),
            }
        }
    }

    /// One vector decoded in `f64` with `scale`.
    #[inline(always)]
    fn decode_f64(&self, code: &[u8], scale: f64, work: &mut [f64], y: &mut [f32]) {
        if self.bits == 4 {
            shell::decode_scaled_into(code, scale, work);
        } else {
            for (w, bytes) in work
                .as_chunks_mut::<8>()
                .0
                .iter_mut()
                .zip(code.as_chunks::<2>().0)
            {
                e8p::decode_scaled(u16::from_le_bytes(*bytes), scale, w);
            }
        }
        if let Some(r) = &self.rotation {
            r.unrotate(work);
        }
        if self.scale == ScaleMode::Direction {
            super::direction::normalize(&mut work[..self.dim]);
        }
        for (a, &w) in y.iter_mut().zip(work.iter()) {
            *a = saturate(w);
        }
    }

    /// [`QuantError::InvalidCode`] for the first 4-bit block code of
    /// `codes` that names no point.
    pub(crate) fn check_shell_codes(&self, codes: &[u8]) -> Result<(), QuantError> {
        let bad = codes
            .chunks_exact(4)
            .position(|b| !shell::is_valid(u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
        match bad {
            Some(i) => Err(QuantError::InvalidCode {
                vector: i / self.blocks,
                block: i % self.blocks,
            }),
            None => Ok(()),
        }
    }

    /// The number of vectors in `len` input numbers.
    fn count(&self, len: usize) -> Result<usize, QuantError> {
        if !len.is_multiple_of(self.dim) {
            return Err(QuantError::InputLength { len, dim: self.dim });
        }
        Ok(len / self.dim)
    }

    /// The number of vectors in `len` code bytes.
    fn code_count(&self, len: usize) -> Result<usize, QuantError> {
        if !len.is_multiple_of(self.code_size()) {
            return Err(QuantError::CodesLength {
                len,
                code_size: self.code_size(),
            });
        }
        Ok(len / self.code_size())
    }
}

/// Whether any of `values` is a NaN or an infinity, without a branch per
/// value (so that it becomes vector code): adding `2^23` to the exponent
/// bits carries into bit 31 exactly when they are all ones.
#[inline]
fn any_non_finite(values: &[f32]) -> bool {
    let carries = values.iter().fold(0u32, |bad, v| {
        bad | ((v.to_bits() & 0x7F80_0000) + 0x0080_0000)
    });
    carries & 0x8000_0000 != 0
}

/// Vectors whose squared norms are summed together.
const NORM_GROUP: usize = 8;

/// `Σ x_i²` in `f64` of each of the first (up to) [`NORM_GROUP`] vectors
/// of `vectors`, each summed in coordinate order, as
/// `x.iter().map(|v| v * v).sum()` does (the squares of `f32`s are exact;
/// the padding's zeros add nothing), so the bits are the same; the sums
/// of several vectors are interleaved, so that they do not wait on each
/// other's additions.
#[inline(always)]
fn sums_of_squares(vectors: &[f32], dim: usize) -> [f64; NORM_GROUP] {
    let mut acc = [0.0f64; NORM_GROUP];
    if vectors.len() >= NORM_GROUP * dim {
        let rows: [&[f32]; NORM_GROUP] = core::array::from_fn(|l| &vectors[l * dim..(l + 1) * dim]);
        // Eight coordinates of each row at a time (contiguous loads), then
        // coordinate by coordinate across the rows.
        let whole = dim / 8 * 8;
        for start in (0..whole).step_by(8) {
            let chunk: [[f32; 8]; NORM_GROUP] =
                core::array::from_fn(|l| rows[l][start..start + 8].try_into().unwrap());
            for k in 0..8 {
                for (a, c) in acc.iter_mut().zip(&chunk) {
                    let v = f64::from(c[k]);
                    *a += v * v;
                }
            }
        }
        for i in whole..dim {
            for (a, row) in acc.iter_mut().zip(&rows) {
                let v = f64::from(row[i]);
                *a += v * v;
            }
        }
    } else {
        for (a, row) in acc.iter_mut().zip(vectors.chunks_exact(dim)) {
            for &v in row {
                let v = f64::from(v);
                *a += v * v;
            }
        }
    }
    acc
}

/// One vector of 2-bit codes decoded in `f32` with `scale`, which `u`
/// takes ([`Unrotate32::max_scale`]): each block scaled from the table,
/// the inverse rotation, the padding dropped (every value is finite). In
/// `y` itself when the dimension is whole blocks, else in `work`.
#[inline(always)]
fn decode_f32(
    u: &Unrotate32,
    code: &[u8],
    scale: f32,
    work: &mut [F8],
    y: &mut [f32],
    in_reg: impl Fn(F8) -> F8 + Copy,
) {
    let whole = y.len().is_multiple_of(8);
    let v = if whole {
        y.as_chunks_mut::<8>().0
    } else {
        &mut *work
    };
    for (w, bytes) in v.iter_mut().zip(code.as_chunks::<2>().0) {
        *w = e8p::decode_scaled32(u16::from_le_bytes(*bytes), scale);
    }
    u.apply(v, in_reg);
    if !whole {
        y.copy_from_slice(&work.as_flattened()[..y.len()]);
    }
}

/// [`LatticeQuantizer::encode_vectors`] compiled for AVX2.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
fn encode_vectors_avx2(
    q: &LatticeQuantizer,
    vectors: &[f32],
    codes: &mut [u8],
    scales: &mut [f32],
) {
    q.encode_vectors(vectors, codes, scales, |x| {
        super::hadamard32_avx2::in_register_avx2(x)
    });
}

/// [`LatticeQuantizer::decode_vectors`] compiled for AVX2.
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
fn decode_vectors_avx2(q: &LatticeQuantizer, codes: &[u8], scales: &[f32], out: &mut [f32]) {
    q.decode_vectors(codes, scales, out, |x| {
        super::hadamard32_avx2::in_register_avx2(x)
    });
}

/// `v` rounded to `f32`, clamped to the finite range.
#[inline(always)]
fn saturate(v: f64) -> f32 {
    v.clamp(-f64::from(f32::MAX), f64::from(f32::MAX)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded vectors with coordinates of very different sizes.
    fn vectors(dim: usize, n: usize, seed: u64) -> Vec<f32> {
        let mut state = seed;
        (0..dim * n)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                u * [1.0, 3.0, 1e-3, 40.0][(i / dim) % 4]
            })
            .collect()
    }

    /// The interleaved sums of squares are the plain sequential sums, bit
    /// for bit, for whole groups and the tail.
    #[test]
    fn sums_of_squares_are_the_sequential_sums() {
        for (dim, n) in [(384, 8), (384, 5), (7, 8), (1, 3)] {
            let x = vectors(dim, n, 5 + dim as u64);
            let sums = sums_of_squares(&x, dim);
            for (k, row) in x.chunks_exact(dim).enumerate() {
                let plain: f64 = row.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
                assert_eq!(sums[k].to_bits(), plain.to_bits(), "dim {dim}, vector {k}");
            }
        }
    }

    /// The `f32` decoder gives the `f64` decoder's vectors to within
    /// `f32` rounding, and takes a scale too large for it in `f64`.
    #[test]
    fn f32_decode_is_the_f64_decode_rounded() {
        for (dim, mode) in [
            (384, ScaleMode::PerVector),
            (50, ScaleMode::PerVector),
            (16, ScaleMode::Unit),
            (1000, ScaleMode::PerVector),
        ] {
            let q = LatticeQuantizer::new(dim, 2, 3).unwrap().with_scale(mode);
            let n = 12;
            let x = vectors(dim, n, 17);
            let mut codes = q.encode(&x).unwrap();
            let u = Unrotate32::new(q.rotation().unwrap());
            if mode == ScaleMode::PerVector {
                // The largest scale the f32 path takes, and one it does not.
                codes.scales[0] = u.max_scale() as f32;
                codes.scales[1] = 1e30;
            }
            let y = q.decode(&codes).unwrap();
            let mut work = vec![0.0f64; q.padded_dim()];
            let mut wide = vec![0.0f32; dim];
            for (v, (code, row)) in codes
                .codes
                .chunks_exact(q.code_size())
                .zip(y.chunks_exact(dim))
                .enumerate()
            {
                let scale = codes
                    .scales
                    .get(v)
                    .map_or(q.unit_scale(), |&s| f64::from(s));
                q.decode_f64(code, scale, &mut work, &mut wide);
                let norm = wide
                    .iter()
                    .map(|&a| f64::from(a).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(row.iter().all(|a| a.is_finite()));
                for (a, b) in row.iter().zip(&wide) {
                    let err = (f64::from(*a) - f64::from(*b)).abs();
                    assert!(err <= 1e-6 * norm, "dim {dim}, vector {v}: {a} vs {b}");
                }
            }
        }
    }

    /// A scale beyond [`Unrotate32::max_scale`] is decoded in `f64`: the
    /// `f32` transform would overflow (to infinities, then NaN).
    #[test]
    fn huge_scales_decode_finite() {
        let q = LatticeQuantizer::new(384, 2, 1).unwrap();
        let codes = QuantCodes {
            codes: vec![0; 2 * q.code_size()],
            scales: vec![1.0, 1e38],
        };
        let y = q.decode(&codes).unwrap();
        let (one, huge) = y.split_at(384);
        for (a, b) in one.iter().zip(huge) {
            let expected = f64::from(*a) * 1e38;
            if expected.abs() < f64::from(f32::MAX) {
                assert!(
                    (f64::from(*b) - expected).abs() <= 1e-5 * expected.abs(),
                    "{b} vs {expected}"
                );
            } else {
                assert_eq!(b.abs(), f32::MAX);
            }
        }
    }

    /// Vectors the `f32` rotation cannot take without overflow (huge
    /// coordinates in unit mode) are rotated in `f64`: their codes are
    /// those of the `f64` blocks, saturated.
    #[test]
    fn huge_unit_vectors_rotate_in_f64() {
        let dim = 384;
        let q = LatticeQuantizer::new(dim, 2, 4)
            .unwrap()
            .with_scale(ScaleMode::Unit);
        let mut x = vectors(dim, 1, 3);
        let max = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        x.iter_mut().for_each(|v| *v *= 1e36 / max);
        let codes = q.encode(&x).unwrap();
        let mut work: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        q.rotation().unwrap().rotate(&mut work);
        let inverse = 1.0 / q.unit_scale();
        let blocks: Vec<[f32; 8]> = work
            .as_chunks::<8>()
            .0
            .iter()
            .map(|b| b.map(|v| saturate(v * inverse)))
            .collect();
        let expected = e8p::encode_many(&blocks).unwrap();
        let got: Vec<u16> = codes
            .codes
            .as_chunks::<2>()
            .0
            .iter()
            .map(|b| u16::from_le_bytes(*b))
            .collect();
        assert_eq!(got, expected);
    }

    /// The AVX2 build of the pipeline writes the baseline build's bytes,
    /// and decodes to the same bits.
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    #[test]
    fn avx2_pipeline_equals_the_baseline() {
        if !crate::precondition::precondition(
            super::super::e8p_avx2::Avx2::detect().is_some(),
            "an x86-64 CPU with AVX2 (the AVX2 quantizer pipeline is not tested here)",
        ) {
            return;
        }
        for (dim, bits, mode) in [
            (384, 2, ScaleMode::PerVector),
            (50, 2, ScaleMode::Unit),
            (24, 2, ScaleMode::Direction),
            (8, 2, ScaleMode::PerVector),
            (100, 4, ScaleMode::PerVector),
        ] {
            let q = LatticeQuantizer::new(dim, bits, 9)
                .unwrap()
                .with_scale(mode);
            let n = 64;
            let x = vectors(dim, n, dim as u64);
            let scales_len = if mode == ScaleMode::PerVector { n } else { 0 };
            let (mut c1, mut s1) = (vec![0u8; n * q.code_size()], vec![0f32; scales_len]);
            let (mut c2, mut s2) = (c1.clone(), s1.clone());
            q.encode_vectors(&x, &mut c1, &mut s1, super::super::hadamard32::in_register);
            // SAFETY: detection found AVX2 above.
            unsafe { encode_vectors_avx2(&q, &x, &mut c2, &mut s2) };
            assert_eq!((&c1, &s1), (&c2, &s2), "dim {dim}, {bits} bits");
            if let Some(s) = s1.get_mut(3) {
                *s = 1e37; // decoded in f64 (beyond the f32 decoder's range)
            }
            let mut y1 = vec![0f32; n * dim];
            let mut y2 = y1.clone();
            q.decode_vectors(&c1, &s1, &mut y1, super::super::hadamard32::in_register);
            // SAFETY: as above.
            unsafe { decode_vectors_avx2(&q, &c1, &s1, &mut y2) };
            let bits_of = |y: &[f32]| y.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits_of(&y1), bits_of(&y2), "dim {dim}, {bits} bits");
        }
    }
}
