//! The `LatticeCodes` fory message: a fory struct of eight fields (the
//! parameters, the count, the codes as a uint8 array and the scales as a
//! float32 array), exactly what pyfory 1.7.7 writes for the dataclass of
//! `docs/format.md` §7.1, read and written by hand.

use std::path::Path;

use hydron_core::quant::QuantCodes;

use super::{bad, check_scales, CodesParams, CodesScale, LatticeCodes};
use crate::fory::wire::{self, StructForm};
use crate::save::{in_file, SaveTarget};
use crate::CodecError;

/// The fory user type id of the `LatticeCodes` message.
///
/// ```
/// assert_eq!(hydron_codec::quant::LATTICE_CODES_TYPE_ID, 2403);
/// ```
pub const LATTICE_CODES_TYPE_ID: u32 = 2403;

/// The first 64 bytes of every message hydron writes (xlang, compatible
/// mode): the header, the type meta of the struct (its 8 fields, names and
/// types) and the type id. `docs/format.md` §7.1 lists them.
///
/// ```
/// use hydron_codec::quant;
/// assert_eq!(quant::COMPATIBLE_PREFIX.len(), 64);
/// assert_eq!(&quant::COMPATIBLE_PREFIX[13..15], &[0xe3, 0x12]); // type id 2403
/// ```
pub const COMPATIBLE_PREFIX: &[u8] = FORM.compatible;

/// The framing of a `LatticeCodes` message, in both struct modes.
const FORM: StructForm = StructForm {
    name: "LatticeCodes",
    type_id: LATTICE_CODES_TYPE_ID,
    compatible: &[
        0x01, 0xff, 0x1c, 0x00, // bitmap, not-null, COMPATIBLE_STRUCT, new meta #0
        0x34, 0xf0, 0x12, 0xaa, 0x2f, 0x3d, 0xc6, 0x2b, // meta header: size 52, hash
        0xc8, 0xe3, 0x12, // meta: struct, compatible, 8 fields; type id 2403
        0x4c, 0x0d, 0x89, 0xd4, 0x6c, // field "count": uint64 (13)
        0xc0, 0x48, 0x0d, 0x48, 0x84, 0x18, // field "seed": uint64 (13)
        0x44, 0x0b, 0x0d, 0x0c, // field "dim": uint32 (11)
        0x54, 0x01, 0xc5, 0xd3, 0x04, 0xd0, 0xe6, 0x80, // field "rotation": bool (1)
        0x48, 0x09, 0x05, 0x13, 0x90, // field "bits": uint8 (9)
        0x58, 0x09, 0xc8, 0x40, 0x59, 0x36, 0xc7, 0x0c, 0x80, // field "scale_mode": uint8
        0x4c, 0x30, 0x89, 0xc3, 0x24, 0x80, // field "codes": uint8 array (48)
        0x4c, 0x37, 0x48, 0x40, 0x59, 0x24, // field "scales": float32 array (55)
    ],
    schema: &[
        0x01, 0xff, 0x1b, // bitmap, not-null, STRUCT
        0xe3, 0x12, // type id 2403
        0x1f, 0x9b, 0x8f, 0xbd, // schema hash
    ],
    schema_text: "the fory type meta or schema hash of LatticeCodes \
                  (count, seed, dim, rotation, bits, scale_mode, codes, scales)",
};

/// Whether `head` (the first bytes of some data, at least 15) starts like
/// a `LatticeCodes` message: a fory root value whose type is the
/// `LatticeCodes` struct (type meta and id in compatible mode, or the id in
/// schema-consistent mode). [`decode`] checks the rest.
///
/// ```
/// use hydron_codec::quant::{self, CodesParams, LatticeCodes};
/// use hydron_core::quant::QuantCodes;
/// let c = LatticeCodes::new(CodesParams::gf8(2)?, QuantCodes::default())?;
/// assert!(quant::looks_like_lattice_codes(&quant::encode(&c)?));
/// assert!(!quant::looks_like_lattice_codes(&hydron_codec::fory::encode_codes(&[])));
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
#[must_use]
pub fn looks_like_lattice_codes(head: &[u8]) -> bool {
    let root = matches!(head, [b, f, ..] if *b <= wire::BITMAP_XLANG
        && (*f == wire::REF_NOT_NULL || *f == wire::REF_VALUE));
    let compatible = head.len() >= 15 && head[2..15] == FORM.compatible[2..15];
    let schema = head.len() >= 5 && head[2..5] == FORM.schema[2..5];
    root && (compatible || schema)
}

/// Bytes of the fixed fields after the framing: count (8), seed (8),
/// dim (4), rotation (1), bits (1), scale_mode (1).
const FIXED_LEN: usize = 23;

/// Encodes stored codes as one fory message (xlang, compatible mode).
///
/// # Errors
/// [`CodecError::TooLarge`] when the codes or the scales exceed the 2^32 − 1
/// bytes of a fory array.
///
/// ```
/// use hydron_codec::quant::{self, CodesParams, LatticeCodes};
/// use hydron_core::quant::QuantCodes;
/// let c = LatticeCodes::new(CodesParams::gf8(2)?, QuantCodes { codes: vec![7, 0], scales: vec![] })?;
/// let bytes = quant::encode(&c)?;
/// assert_eq!(bytes.len(), 64 + 23 + 1 + 2 + 1);
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn encode(codes: &LatticeCodes) -> Result<Vec<u8>, CodecError> {
    let QuantCodes {
        codes: bytes,
        scales,
    } = codes.codes();
    let limit = u64::from(u32::MAX);
    for (len, what) in [
        (
            bytes.len() as u64,
            "a fory uint8 array (32-bit byte length)",
        ),
        (
            4 * scales.len() as u64,
            "a fory float32 array (32-bit byte length)",
        ),
    ] {
        if len > limit {
            return Err(CodecError::TooLarge {
                length: len,
                limit,
                what,
            });
        }
    }
    let p = codes.params();
    let mut out =
        Vec::with_capacity(FORM.compatible.len() + FIXED_LEN + 10 + bytes.len() + 4 * scales.len());
    out.extend_from_slice(FORM.compatible);
    out.extend_from_slice(&codes.count().to_le_bytes());
    out.extend_from_slice(&p.seed().to_le_bytes());
    out.extend_from_slice(&p.dim().to_le_bytes());
    out.push(u8::from(p.rotation()));
    out.push(p.bits());
    out.push(p.scale().to_byte());
    // Cannot truncate: both lengths were checked above.
    wire::write_varuint32(&mut out, bytes.len() as u32);
    out.extend_from_slice(bytes);
    wire::write_varuint32(&mut out, (4 * scales.len()) as u32);
    for s in scales {
        out.extend_from_slice(&s.to_le_bytes());
    }
    Ok(out)
}

/// Decodes one `LatticeCodes` message (compatible or schema-consistent
/// mode), checking every field: the framing, the parameters, the count
/// against the code bytes and the scales, every scale finite and
/// non-negative, and no trailing bytes. Nothing is allocated before the
/// lengths are known to fit the input.
///
/// # Errors
/// The framing errors of the other fory messages (`WrongHeader`,
/// `WrongTypeId`, `UnexpectedEnd`, `BadVarint`, `BadLength`,
/// `TrailingBytes`), and [`CodecError::BadCodes`] with the byte offset of
/// the field that is wrong or disagrees.
///
/// ```
/// use hydron_codec::{quant, CodecError};
/// use hydron_codec::quant::{CodesParams, LatticeCodes};
/// use hydron_core::quant::QuantCodes;
/// let c = LatticeCodes::new(CodesParams::gf8(2)?, QuantCodes { codes: vec![7, 0], scales: vec![] })?;
/// let mut bytes = quant::encode(&c)?;
/// assert_eq!(quant::decode(&bytes)?, c);
/// bytes[64] = 2; // the count says 2 vectors, the codes hold 1
/// let err = quant::decode(&bytes).unwrap_err();
/// assert!(matches!(err, CodecError::BadCodes { offset: Some(64), .. }), "{err}");
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
pub fn decode(input: &[u8]) -> Result<LatticeCodes, CodecError> {
    let start = FORM.read_prefix(input)?;
    let Some(fixed) = input.get(start..start + FIXED_LEN) else {
        return Err(wire::end(
            input,
            start,
            "the fixed fields of LatticeCodes",
            FIXED_LEN,
        ));
    };
    let u64_at = |i: usize| u64::from_le_bytes(fixed[i..i + 8].try_into().expect("8 bytes"));
    let count = u64_at(0);
    let seed = u64_at(8);
    let dim = u32::from_le_bytes(fixed[16..20].try_into().expect("4 bytes"));
    let at = |i: usize| Some((start + i) as u64);
    let rotation = match fixed[20] {
        0 => false,
        1 => true,
        b => {
            return Err(bad(
                at(20),
                None,
                format!("rotation is 0x{b:02x}; a fory bool is 0x00 or 0x01"),
            ))
        }
    };
    let bits = fixed[21];
    let scale = CodesScale::from_byte(fixed[22]).ok_or_else(|| {
        bad(
            at(22),
            None,
            format!(
                "scale mode {} is not 0 (per-vector), 1 (unit) or 2 (direction)",
                fixed[22]
            ),
        )
    })?;
    let params = CodesParams::new(dim, bits, seed, rotation, scale).map_err(|e| match e {
        // The field that is wrong: the dimension or the bits (every scale
        // mode takes any dimension and rotation).
        CodecError::BadCodes { detail, .. } => {
            let field = if dim == 0 { 16 } else { 21 };
            bad(at(field), None, detail)
        }
        e => e,
    })?;
    let size = params.code_size() as u64;
    let codes_at = start + FIXED_LEN;
    let (code_bytes, scales_at) =
        wire::read_array_field(input, codes_at, 1, size, "code bytes: whole codes")?;
    let held = code_bytes.len() as u64 / size;
    if held != count {
        return Err(bad(
            at(0),
            None,
            format!(
                "the count says {count} vectors; the codes (at byte offset {codes_at}) hold {held} \
                 of {size} bytes"
            ),
        ));
    }
    if let Some(b) = super::first_bad_code(&params, code_bytes) {
        // The code bytes end where the scales' length starts.
        let first = (scales_at - code_bytes.len()) as u64;
        return Err(bad(
            Some(first + b.row * size + 4 * b.block as u64),
            Some(b.row),
            b.detail(),
        ));
    }
    let scale_bytes = wire::read_array(input, scales_at, 4, 4, "bytes: 4 per float32 scale")?;
    let expected = if params.has_scales() { count } else { 0 };
    let n = scale_bytes.len() as u64 / 4;
    if n != expected {
        return Err(bad(
            Some(scales_at as u64),
            None,
            format!(
                "{n} scales for {count} vectors in {} scale mode: expected {expected}",
                scale.name()
            ),
        ));
    }
    // Every length is now proven by the input: copy out.
    let scales: Vec<f32> = scale_bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    check_scales(
        &params,
        count,
        &scales,
        Some((input.len() - scale_bytes.len()) as u64),
    )?;
    LatticeCodes::new(
        params,
        QuantCodes {
            codes: code_bytes.to_vec(),
            scales,
        },
    )
}

/// Saves stored codes as one fory message at `path`, atomically (as every
/// hydron save: a temporary file renamed over the target; a FIFO or a
/// device is written directly).
///
/// # Errors
/// As [`encode`], and I/O errors naming the path.
///
/// ```
/// use hydron_codec::quant::{self, CodesParams, LatticeCodes};
/// use hydron_core::quant::QuantCodes;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("codes.fory");
/// let c = LatticeCodes::new(CodesParams::gf8(4)?, QuantCodes { codes: vec![1, 2, 3, 4], scales: vec![] })?;
/// quant::save(&path, &c)?;
/// assert_eq!(quant::load(&path)?, c);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save(path: impl AsRef<Path>, codes: &LatticeCodes) -> Result<(), CodecError> {
    save_with(path, codes, true)
}

/// [`save`], durable or not: with `durable` false the file and its
/// directory are not flushed to disk around the rename (faster; a crash
/// may then leave the old file or an empty one, never a partial one
/// under the target's name until the rename).
///
/// # Errors
/// As [`save`].
///
/// ```
/// use hydron_codec::quant::{self, LatticeCodes};
/// let dir = tempfile::tempdir()?;
/// let c = LatticeCodes::from_gf8(&hydron_core::E8_ROOTS, 2)?;
/// quant::save_with(dir.path().join("c.fory"), &c, false)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_with(
    path: impl AsRef<Path>,
    codes: &LatticeCodes,
    durable: bool,
) -> Result<(), CodecError> {
    let path = path.as_ref();
    let bytes = encode(codes).map_err(|e| in_file(path, e))?;
    let (mut target, mut file) = SaveTarget::create(path, durable)?;
    std::io::Write::write_all(&mut file, &bytes).map_err(|e| target.in_file(CodecError::Io(e)))?;
    target.commit(file).map_err(|e| target.in_file(e))
}

/// Loads stored codes from a file holding one fory message ([`decode`]).
///
/// The file is opened once and read as [`from_reader`](super::from_reader)
/// reads a stream: only as far as the message's lengths reach, so a FIFO,
/// a device such as `/dev/zero` or a sparse file whose message claims more
/// than it holds is an error after the bytes that show it, not a read of
/// everything there is.
///
/// # Errors
/// As [`from_reader`](super::from_reader) (at most
/// [`MAX_MESSAGE_BYTES`](super::MAX_MESSAGE_BYTES) bytes), wrapped in
/// [`CodecError::InFile`] with the path.
///
/// ```
/// use hydron_codec::{quant, CodecError};
/// let err = quant::load("/dev/zero").unwrap_err();
/// assert!(err.to_string().starts_with("/dev/zero: byte offset 2"), "{err}");
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<LatticeCodes, CodecError> {
    super::reader::load(path.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What pyfory 1.7.7 wrote for `LatticeCodes(dim=8, bits=2, seed=7,
    /// rotation=True, scale_mode=0, count=2, codes=[0, 1, 2, 3],
    /// scales=[1.5, 2.5])` (compatible, then schema-consistent mode);
    /// `python/tests/test_quant_io.py` checks that pyfory still writes it.
    const PYFORY: &str = "01ff1c0034f012aa2f3dc62bc8e3124c0d89d46cc0480d48841844\
        0b0d0c5401c5d304d0e68048090513905809c8405936c70c804c3089c324804c3748405924 \
        0200000000000000 0700000000000000 08000000 01 02 00 04 00010203 08 0000c03f00002040";
    const PYFORY_SCHEMA: &str = "01ff1be3121f9b8fbd 0200000000000000 0700000000000000 \
        08000000 01 02 00 04 00010203 08 0000c03f00002040";

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(char::is_ascii_hexdigit).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn sample() -> LatticeCodes {
        let p = CodesParams::new(8, 2, 7, true, CodesScale::PerVector).unwrap();
        LatticeCodes::new(
            p,
            QuantCodes {
                codes: vec![0, 1, 2, 3],
                scales: vec![1.5, 2.5],
            },
        )
        .unwrap()
    }

    #[test]
    fn encode_writes_what_pyfory_writes() {
        assert_eq!(encode(&sample()).unwrap(), hex(PYFORY));
        assert_eq!(decode(&hex(PYFORY)).unwrap(), sample());
        assert_eq!(decode(&hex(PYFORY_SCHEMA)).unwrap(), sample());
    }

    #[test]
    fn every_cut_is_an_error_not_a_panic() {
        let bytes = hex(PYFORY);
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "{n}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(matches!(
            decode(&long),
            Err(CodecError::TrailingBytes {
                offset: 101,
                count: 1
            })
        ));
    }

    #[test]
    fn parameters_that_disagree_with_the_lengths_name_the_offset() {
        let bytes = hex(PYFORY);
        let check = |edit: &dyn Fn(&mut Vec<u8>), offset: u64, text: &str| {
            let mut b = bytes.clone();
            edit(&mut b);
            let err = decode(&b).unwrap_err();
            assert!(
                matches!(&err, CodecError::BadCodes { offset: Some(o), .. } if *o == offset),
                "{err}"
            );
            assert!(err.to_string().contains(text), "{err}");
        };
        // count 3, codes for 2
        check(&|b| b[64] = 3, 64, "count says 3 vectors");
        check(&|b| b[80] = 0, 80, "dimension is 0");
        check(&|b| b[85] = 3, 85, "3 bits per coordinate");
        check(&|b| b[84] = 2, 84, "rotation is 0x02");
        check(&|b| b[86] = 9, 86, "scale mode 9");
        // unit mode: no scales expected, two given
        check(
            &|b| b[86] = 1,
            92,
            "2 scales for 2 vectors in unit scale mode: expected 0",
        );
        // direction mode (dim 8 with rotation: no Gf8 codes, but any
        // dimension and rotation is fine): no scales expected either
        check(
            &|b| b[86] = 2,
            92,
            "2 scales for 2 vectors in direction scale mode: expected 0",
        );
        // a NaN scale: row 1, at its byte offset
        let mut b = bytes.clone();
        let n = b.len();
        b[n - 4..].copy_from_slice(&f32::NAN.to_le_bytes());
        let err = decode(&b).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::BadCodes {
                    offset: Some(97),
                    row: Some(1),
                    ..
                }
            ),
            "{err}"
        );
        // dim 16 (2 blocks, 4-byte codes): 4 bytes are one code, the count says 2.
        let mut b = bytes.clone();
        b[80] = 16;
        assert!(decode(&b).unwrap_err().to_string().contains("hold 1"));
        // dim 20: 6-byte codes; 4 bytes are not whole codes.
        let mut b = bytes.clone();
        b[80] = 20;
        assert!(matches!(
            decode(&b),
            Err(CodecError::BadLength { offset: 87, .. })
        ));
    }

    #[test]
    fn a_huge_claimed_length_is_refused_before_allocating() {
        let mut b = hex(PYFORY)[..87].to_vec();
        b[64..72].copy_from_slice(&u64::MAX.to_le_bytes());
        b.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff, 0x0f]);
        assert!(matches!(
            decode(&b),
            Err(CodecError::UnexpectedEnd {
                needed: 4_294_967_294,
                ..
            })
        ));
    }

    #[test]
    fn a_32_bit_code_past_the_shell_names_its_row_and_offset() {
        let c = LatticeCodes::from_gf8(&hydron_core::E8_ROOTS[..3], 4).unwrap();
        let mut b = encode(&c).unwrap();
        // Vector 2's code starts at 64 + 23 + 1 (the length) + 8.
        b[96..100].copy_from_slice(&hydron_core::quant::shell::SHAPES.to_le_bytes());
        let err = decode(&b).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::BadCodes {
                    offset: Some(96),
                    row: Some(2),
                    ..
                }
            ),
            "{err}"
        );
        // Gain bits are no error: a Gf8 code's direction ignores them.
        let gain = 0xB000_0000 | hydron_core::E8_ROOTS[2].code32();
        b[96..100].copy_from_slice(&gain.to_le_bytes());
        let back = decode(&b).unwrap();
        assert_eq!(back.decode_gf8().unwrap(), c.decode_gf8().unwrap());
    }

    #[test]
    fn a_message_of_another_type_is_a_wrong_type_id() {
        let mut b = hex(PYFORY_SCHEMA);
        b[3] = 0xe1;
        assert!(matches!(
            decode(&b),
            Err(CodecError::WrongTypeId {
                offset: 3,
                found: 2401,
                ..
            })
        ));
    }
}
