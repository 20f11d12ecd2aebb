//! Stored lattice codes: the codes of a
//! [`LatticeQuantizer`] (or of
//! [`Gf8`] vectors at 16 or 32 bits) together with the
//! parameters that decode them.
//!
//! A [`LatticeCodes`] is the parameters ([`CodesParams`]: dimension, bits
//! per coordinate, seed, rotation on or off, [`CodesScale`]) and the
//! codes and scales of `count` vectors. It is stored in two forms, both
//! specified in `docs/format.md` §7:
//!
//! - a fory message (feature `fory-messages`): [`encode`], [`decode`],
//!   [`save`], [`load`], and [`from_reader`] for a stream. Stock pyfory reads and writes it with one
//!   dataclass registered under [`LATTICE_CODES_TYPE_ID`];
//! - Parquet (feature `parquet`): [`save_parquet`], [`load_parquet`], a
//!   `FixedSizeBinary(code_size)` column `code` and a `Float32` column
//!   `scale` (absent when no scale is stored), the parameters in the file's
//!   key-value metadata; pyarrow, Polars and DuckDB read it.
//!
//! Decoding is validated: parameters that are not valid or that disagree
//! with the lengths are [`CodecError::BadCodes`] naming the byte offset or
//! the row, and nothing is allocated from a claimed length before the
//! input is known to hold it.
//!
//! ```
//! # #[cfg(feature = "fory-messages")] {
//! use hydron_codec::quant::{self, LatticeCodes};
//! use hydron_core::quant::LatticeQuantizer;
//!
//! let q = LatticeQuantizer::new(12, 2, 7)?;
//! let x: Vec<f32> = (0..24).map(|i| (i as f32 * 0.3).cos()).collect();
//! let stored = LatticeCodes::from_quantizer(&q, q.encode(&x)?)?;
//! let bytes = quant::encode(&stored)?;
//! let back = quant::decode(&bytes)?;
//! assert_eq!(back, stored);
//! assert_eq!(back.params().quantizer()?.decode(back.codes())?, q.decode(stored.codes())?);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "fory-messages")]
mod message;
#[cfg(feature = "fory-messages")]
mod reader;

use hydron_core::quant::{shell, LatticeQuantizer, QuantCodes, QuantError, ScaleMode};
use hydron_core::{gf8_codes, Gf8};

use crate::CodecError;

#[cfg(feature = "parquet")]
pub use crate::parquet::lattice::{
    load_parquet, parquet_from_bytes, parquet_params, parquet_params_from_bytes, parquet_to_bytes,
    save_parquet, BITS_KEY, COUNT_KEY, DIM_KEY, ROTATION_KEY, SCALE_KEY, SEED_KEY,
};
#[cfg(feature = "fory-messages")]
pub use message::{
    decode, encode, load, looks_like_lattice_codes, save, save_with, COMPATIBLE_PREFIX,
    LATTICE_CODES_TYPE_ID,
};
#[cfg(feature = "fory-messages")]
pub use reader::{from_reader, from_reader_len, MAX_MESSAGE_BYTES};

/// How the vectors behind stored codes are scaled.
///
/// ```
/// use hydron_codec::quant::CodesScale;
/// assert_eq!(CodesScale::from_byte(1), Some(CodesScale::Unit));
/// assert_eq!(CodesScale::Direction.name(), "direction");
/// assert_eq!(CodesScale::from_byte(3), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CodesScale {
    /// One `f32` scale per vector is stored ([`ScaleMode::PerVector`]);
    /// byte 0.
    PerVector,
    /// No scale is stored; vectors are taken to have norm 1
    /// ([`ScaleMode::Unit`]); byte 1.
    Unit,
    /// No scale is stored; each decoded vector is normalized to norm 1
    /// ([`ScaleMode::Direction`]: encoded as unit mode); byte 2. Any
    /// dimension and rotation. The direction codes of dimension 8 without
    /// rotation are [`Gf8`] codes (`hydron_core::gf8_codes`;
    /// [`CodesParams::is_gf8`]): one block, whose decoded codeword
    /// normalized is the `Gf8`.
    Direction,
}

impl CodesScale {
    /// Its byte in the fory message and the Parquet metadata.
    #[must_use]
    #[inline]
    pub fn to_byte(self) -> u8 {
        match self {
            CodesScale::PerVector => 0,
            CodesScale::Unit => 1,
            CodesScale::Direction => 2,
        }
    }

    /// The mode a byte stands for, if any.
    #[must_use]
    #[inline]
    pub fn from_byte(byte: u8) -> Option<CodesScale> {
        match byte {
            0 => Some(CodesScale::PerVector),
            1 => Some(CodesScale::Unit),
            2 => Some(CodesScale::Direction),
            _ => None,
        }
    }

    /// Its name: `per-vector`, `unit` or `direction`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            CodesScale::PerVector => "per-vector",
            CodesScale::Unit => "unit",
            CodesScale::Direction => "direction",
        }
    }

    /// The mode a name stands for ([`name`](Self::name)), if any.
    ///
    /// ```
    /// use hydron_codec::quant::CodesScale;
    /// assert_eq!(CodesScale::from_name("per-vector"), Some(CodesScale::PerVector));
    /// ```
    #[must_use]
    pub fn from_name(name: &str) -> Option<CodesScale> {
        [
            CodesScale::PerVector,
            CodesScale::Unit,
            CodesScale::Direction,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

/// The parameters that decode stored codes.
///
/// ```
/// use hydron_codec::quant::{CodesParams, CodesScale};
/// let p = CodesParams::new(20, 2, 42, true, CodesScale::PerVector)?;
/// assert_eq!(p.code_size(), 6); // 3 blocks of 16 bits
/// assert!(CodesParams::new(20, 3, 42, true, CodesScale::PerVector).is_err());
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CodesParams {
    dim: u32,
    bits: u8,
    seed: u64,
    rotation: bool,
    scale: CodesScale,
}

impl CodesParams {
    /// Parameters, checked: `dim ≥ 1`, `bits` 2 or 4 (bits per
    /// coordinate: 16 or 32 bits per 8-dim block). Every scale mode takes
    /// any dimension and rotation.
    ///
    /// # Errors
    /// [`CodecError::BadCodes`] saying which parameter is wrong.
    pub fn new(
        dim: u32,
        bits: u8,
        seed: u64,
        rotation: bool,
        scale: CodesScale,
    ) -> Result<CodesParams, CodecError> {
        let p = CodesParams {
            dim,
            bits,
            seed,
            rotation,
            scale,
        };
        p.problem().map_or(Ok(p), |detail| {
            Err(CodecError::BadCodes {
                offset: None,
                row: None,
                detail,
            })
        })
    }

    /// What is wrong with these parameters, if anything.
    fn problem(&self) -> Option<String> {
        if self.dim == 0 {
            return Some("the dimension is 0; it must be at least 1".into());
        }
        if self.bits != 2 && self.bits != 4 {
            return Some(format!(
                "{} bits per coordinate; stored codes have 2 or 4",
                self.bits
            ));
        }
        None
    }

    /// The parameters of `quantizer`'s codes.
    ///
    /// # Errors
    /// [`CodecError::BadCodes`] for a dimension above `u32::MAX` or a
    /// scale mode this build does not know.
    ///
    /// ```
    /// use hydron_codec::quant::{CodesParams, CodesScale};
    /// use hydron_core::quant::LatticeQuantizer;
    /// let p = CodesParams::of(&LatticeQuantizer::new(100, 2, 9)?)?;
    /// assert_eq!((p.dim(), p.bits(), p.seed(), p.rotation(), p.scale()), (100, 2, 9, true, CodesScale::PerVector));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of(quantizer: &LatticeQuantizer) -> Result<CodesParams, CodecError> {
        let bad = |detail: String| CodecError::BadCodes {
            offset: None,
            row: None,
            detail,
        };
        let dim = u32::try_from(quantizer.dim())
            .map_err(|_| bad(format!("dimension {} is above 2^32 - 1", quantizer.dim())))?;
        let bits = u8::try_from(quantizer.bits_per_dim())
            .map_err(|_| bad(format!("{} bits per coordinate", quantizer.bits_per_dim())))?;
        let scale = match quantizer.scale_mode() {
            ScaleMode::PerVector => CodesScale::PerVector,
            ScaleMode::Unit => CodesScale::Unit,
            ScaleMode::Direction => CodesScale::Direction,
            other => return Err(bad(format!("scale mode {other:?} cannot be stored"))),
        };
        CodesParams::new(
            dim,
            bits,
            quantizer.seed(),
            quantizer.rotation().is_some(),
            scale,
        )
    }

    /// The parameters of [`Gf8`] codes at `bits` per
    /// coordinate (2: 16-bit codes, 4: 32-bit codes): dimension 8, seed 0,
    /// no rotation, [`CodesScale::Direction`].
    ///
    /// # Errors
    /// [`CodecError::BadCodes`] for `bits` other than 2 or 4.
    ///
    /// ```
    /// use hydron_codec::quant::CodesParams;
    /// assert_eq!(CodesParams::gf8(2)?.code_size(), 2);
    /// assert_eq!(CodesParams::gf8(4)?.code_size(), 4);
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn gf8(bits: u8) -> Result<CodesParams, CodecError> {
        CodesParams::new(8, bits, 0, false, CodesScale::Direction)
    }

    /// Whether these are [`Gf8`] codes: [`CodesScale::Direction`],
    /// dimension 8, no rotation (the seed, which only draws a rotation,
    /// does not matter). Their quantizer's decode and
    /// [`LatticeCodes::decode_gf8`] give the same unit vectors (bit for bit
    /// at 2 bits; at 4 bits `decode_gf8` normalizes the shell point, the
    /// quantizer the point times its gain, which can differ in the last
    /// bit).
    ///
    /// ```
    /// use hydron_codec::quant::{CodesParams, CodesScale};
    /// assert!(CodesParams::gf8(4)?.is_gf8());
    /// assert!(CodesParams::new(8, 2, 5, false, CodesScale::Direction)?.is_gf8());
    /// assert!(!CodesParams::new(8, 2, 5, true, CodesScale::Direction)?.is_gf8());
    /// assert!(!CodesParams::new(56, 2, 0, true, CodesScale::Direction)?.is_gf8());
    /// assert!(!CodesParams::new(8, 2, 0, false, CodesScale::Unit)?.is_gf8());
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn is_gf8(&self) -> bool {
        self.scale == CodesScale::Direction && self.dim == 8 && !self.rotation
    }

    /// The quantizer these codes came from (for [`Gf8`] codes, one in
    /// [`ScaleMode::Direction`] that decodes them to their unit vectors).
    ///
    /// # Errors
    /// [`QuantError`] when hydron-core cannot build it (a rate it lacks).
    ///
    /// ```
    /// use hydron_codec::quant::LatticeCodes;
    /// use hydron_core::{Gf8, E8_ROOTS};
    /// let c = LatticeCodes::from_gf8(&E8_ROOTS, 2)?;
    /// let y = c.params().quantizer()?.decode(c.codes())?;
    /// assert_eq!(Gf8::slice_as_arrays(&c.decode_gf8()?).as_flattened(), &y[..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn quantizer(&self) -> Result<LatticeQuantizer, QuantError> {
        let mode = match self.scale {
            CodesScale::PerVector => ScaleMode::PerVector,
            CodesScale::Unit => ScaleMode::Unit,
            CodesScale::Direction => ScaleMode::Direction,
        };
        let q = LatticeQuantizer::new(self.dim as usize, u32::from(self.bits), self.seed)?;
        Ok(q.with_rotation(self.rotation).with_scale(mode))
    }

    /// The dimension of the vectors.
    #[must_use]
    #[inline]
    pub fn dim(&self) -> u32 {
        self.dim
    }

    /// Bits per coordinate: 2 or 4.
    #[must_use]
    #[inline]
    pub fn bits(&self) -> u8 {
        self.bits
    }

    /// The seed of the rotation.
    #[must_use]
    #[inline]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Whether the vectors were rotated before they were quantized.
    #[must_use]
    #[inline]
    pub fn rotation(&self) -> bool {
        self.rotation
    }

    /// How the vectors are scaled.
    #[must_use]
    #[inline]
    pub fn scale(&self) -> CodesScale {
        self.scale
    }

    /// Whether one scale per vector is stored.
    #[must_use]
    #[inline]
    pub fn has_scales(&self) -> bool {
        self.scale == CodesScale::PerVector
    }

    /// Bytes of code per vector: `⌈dim / 8⌉ · bits` (one 16- or 32-bit
    /// code per 8-dim block).
    #[must_use]
    #[inline]
    pub fn code_size(&self) -> usize {
        (self.dim as usize).div_ceil(8) * usize::from(self.bits)
    }
}

/// Codes of `count` vectors with the parameters that decode them.
///
/// ```
/// use hydron_codec::quant::{CodesParams, LatticeCodes};
/// use hydron_core::quant::QuantCodes;
///
/// let p = CodesParams::gf8(2)?;
/// let ok = LatticeCodes::new(p, QuantCodes { codes: vec![1, 2, 3, 4], scales: vec![] })?;
/// assert_eq!(ok.count(), 2);
/// // 3 bytes are not whole 2-byte codes.
/// assert!(LatticeCodes::new(p, QuantCodes { codes: vec![1, 2, 3], scales: vec![] }).is_err());
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LatticeCodes {
    params: CodesParams,
    codes: QuantCodes,
}

impl LatticeCodes {
    /// Codes and scales with their parameters, checked: the code bytes a
    /// whole number of codes, one scale per vector (or none), every scale
    /// finite and non-negative.
    ///
    /// # Errors
    /// [`CodecError::BadCodes`] naming the problem (and the row of a bad
    /// scale).
    pub fn new(params: CodesParams, codes: QuantCodes) -> Result<LatticeCodes, CodecError> {
        let size = params.code_size();
        if !codes.codes.len().is_multiple_of(size) {
            return Err(bad(
                None,
                None,
                format!(
                    "{} code bytes are not a whole number of {size}-byte codes",
                    codes.codes.len()
                ),
            ));
        }
        if let Some(bad_code) = first_bad_code(&params, &codes.codes) {
            return Err(bad(None, Some(bad_code.row), bad_code.detail()));
        }
        check_scales(
            &params,
            (codes.codes.len() / size) as u64,
            &codes.scales,
            None,
        )?;
        Ok(LatticeCodes { params, codes })
    }

    /// The codes of [`Gf8`] vectors at `bits` per coordinate (2: 16-bit
    /// codes, [`Gf8::code16`]; 4: 32-bit codes, [`Gf8::code32`]), with
    /// [`CodesParams::gf8`].
    ///
    /// # Errors
    /// [`CodecError::BadCodes`] for `bits` other than 2 or 4.
    ///
    /// ```
    /// use hydron_codec::quant::LatticeCodes;
    /// use hydron_core::E8_ROOTS;
    /// let c = LatticeCodes::from_gf8(&E8_ROOTS, 4)?;
    /// assert_eq!(c.codes().codes.len(), 4 * 240);
    /// let back = c.decode_gf8()?;
    /// assert!(back.iter().zip(&E8_ROOTS).all(|(a, b)| a.geodesic_distance(*b) < 0.29));
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn from_gf8(vectors: &[Gf8], bits: u8) -> Result<LatticeCodes, CodecError> {
        let params = CodesParams::gf8(bits)?;
        let codes = if bits == 2 {
            gf8_codes::encode16(vectors)
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect()
        } else {
            gf8_codes::encode32(vectors)
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect()
        };
        Ok(LatticeCodes {
            params,
            codes: QuantCodes {
                codes,
                scales: Vec::new(),
            },
        })
    }

    /// The unit vectors of [`Gf8`] codes ([`CodesParams::is_gf8`]). A
    /// 32-bit code's gain bits (28–31) are ignored: [`Gf8::code32`] writes
    /// them 0, a dimension-8 [`ScaleMode::Direction`] quantizer writes the
    /// gain it found, and normalizing the one block removes any gain.
    ///
    /// # Errors
    /// [`CodecError::BadCodes`] for codes that are not `Gf8` codes.
    ///
    /// ```
    /// use hydron_codec::quant::{CodesParams, CodesScale, LatticeCodes};
    /// use hydron_core::quant::QuantCodes;
    /// let p = CodesParams::new(16, 2, 0, false, CodesScale::Direction)?;
    /// let c = LatticeCodes::new(p, QuantCodes { codes: vec![0; 4], scales: vec![] })?;
    /// assert!(c.decode_gf8().is_err()); // 2 blocks: decode with the quantizer
    /// # Ok::<(), hydron_codec::CodecError>(())
    /// ```
    pub fn decode_gf8(&self) -> Result<Vec<Gf8>, CodecError> {
        if !self.params.is_gf8() {
            return Err(bad(
                None,
                None,
                format!(
                    "{} codes of dimension {}{} are not Gf8 codes (direction scale mode, dimension \
                     8, no rotation); decode them with their quantizer",
                    self.params.scale.name(),
                    self.params.dim,
                    if self.params.rotation {
                        " with rotation"
                    } else {
                        ""
                    }
                ),
            ));
        }
        let bytes = &self.codes.codes;
        Ok(if self.params.bits == 2 {
            bytes
                .chunks_exact(2)
                .map(|b| Gf8::from_code16(u16::from_le_bytes([b[0], b[1]])))
                .collect()
        } else {
            bytes
                .chunks_exact(4)
                .map(|b| {
                    let code = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    Gf8::from_code32(code & ((1 << shell::SHAPE_BITS) - 1))
                        .expect("checked when the codes were made")
                })
                .collect()
        })
    }

    /// The codes `quantizer` gave (its [`encode`](LatticeQuantizer::encode)),
    /// with its parameters.
    ///
    /// # Errors
    /// As [`CodesParams::of`] and [`new`](Self::new).
    pub fn from_quantizer(
        quantizer: &LatticeQuantizer,
        codes: QuantCodes,
    ) -> Result<LatticeCodes, CodecError> {
        LatticeCodes::new(CodesParams::of(quantizer)?, codes)
    }

    /// The parameters.
    #[must_use]
    #[inline]
    pub fn params(&self) -> &CodesParams {
        &self.params
    }

    /// The codes and scales.
    #[must_use]
    #[inline]
    pub fn codes(&self) -> &QuantCodes {
        &self.codes
    }

    /// The codes and scales, taken out.
    #[must_use]
    #[inline]
    pub fn into_codes(self) -> QuantCodes {
        self.codes
    }

    /// The number of vectors.
    #[must_use]
    #[inline]
    pub fn count(&self) -> u64 {
        (self.codes.codes.len() / self.params.code_size()) as u64
    }
}

/// A block code that is not a code: where, and what.
pub(crate) struct BadCode {
    pub(crate) row: u64,
    pub(crate) block: usize,
    pub(crate) code: u32,
}

impl BadCode {
    pub(crate) fn detail(&self) -> String {
        format!(
            "block {}: 0x{:08x} is not an E8 shell code (its shape index, bits 0-27, must be \
             below {})",
            self.block,
            self.code,
            shell::SHAPES
        )
    }
}

/// The first block code that is not a code: 32-bit codes must name a
/// shell point, in every scale mode (the gain bits of a [`Gf8`] code are
/// read as any other's: [`LatticeCodes::decode_gf8`]); every 16-bit value
/// is an E8P code.
pub(crate) fn first_bad_code(params: &CodesParams, bytes: &[u8]) -> Option<BadCode> {
    if params.bits != 4 {
        return None;
    }
    let blocks = params.code_size() / 4;
    bytes.chunks_exact(4).enumerate().find_map(|(i, b)| {
        let code = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        (!shell::is_valid(code)).then_some(BadCode {
            row: (i / blocks) as u64,
            block: i % blocks,
            code,
        })
    })
}

/// A [`CodecError::BadCodes`].
pub(crate) fn bad(offset: Option<u64>, row: Option<u64>, detail: String) -> CodecError {
    CodecError::BadCodes {
        offset,
        row,
        detail,
    }
}

/// The scales must be one per vector (or none without per-vector scales),
/// each finite and non-negative; `offset` is where they start in a
/// message, if they are in one.
pub(crate) fn check_scales(
    params: &CodesParams,
    count: u64,
    scales: &[f32],
    offset: Option<u64>,
) -> Result<(), CodecError> {
    let expected = if params.has_scales() { count } else { 0 };
    if scales.len() as u64 != expected {
        return Err(bad(
            offset,
            None,
            format!(
                "{} scales for {count} vectors in {} scale mode: expected {expected}",
                scales.len(),
                params.scale.name()
            ),
        ));
    }
    if let Some((row, value)) = scales
        .iter()
        .enumerate()
        .find(|(_, s)| !(s.is_finite() && **s >= 0.0))
    {
        return Err(bad(
            offset.map(|o| o + 4 * row as u64),
            Some(row as u64),
            format!("scale {value} is not a finite non-negative number"),
        ));
    }
    Ok(())
}
