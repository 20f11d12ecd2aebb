//! The fast path for the layout every common writer uses for vectors: a
//! `LIST` of `FLOAT` whose rows all hold 8 values, none null, in `PLAIN`,
//! dictionary-encoded or `BYTE_STREAM_SPLIT` data pages (v1 or v2) with
//! `RLE` levels. The parquet crate's pages (decompressed, with their
//! checksums checked) are read directly: the repetition levels are checked
//! to be `0, 1, 1, 1, 1, 1, 1, 1` per row and the definition levels to be
//! all at the maximum (no nulls) without building level buffers, and the
//! floats (for a dictionary page, gathered from the dictionary by their
//! indices; for a split page, its four byte streams interleaved) are copied
//! into the output and checked by the policy in one pass, with no Arrow
//! array in between. pyarrow writes dictionary pages by default (the first
//! pages of a column chunk, until the dictionary outgrows its limit), so
//! this is what keeps its files on the fast path; split pages are what
//! pyarrow's `use_byte_stream_split` (often chosen for floats, which it
//! compresses better) writes.
//!
//! Anything else (another encoding, a null, a row of another length, a row
//! split across pages, an index past the dictionary, a malformed level or
//! index stream, a page that would expand past the page limit) is
//! [`Outcome::Unsupported`]: the caller drops what this appended and reads
//! the row group through the parquet crate's Arrow reader, which gives the
//! answer or the precise error for it.

use std::sync::Arc;

use hydron_core::Gf8;
use parquet::basic::{Encoding, Type as PhysicalType};
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::serialized_reader::SerializedPageReader;

use super::source::Source;
use crate::{CodecError, Policy};

/// What the fast path did with a row group.
#[derive(Debug)]
pub(super) enum Outcome {
    /// Read this many rows; the CRC-32 of their values. With `invalid`,
    /// the first vector the policy refused (nothing is left appended):
    /// the caller compares the checksum first, so that damage is reported
    /// as damage rather than as the bad vector it made.
    Done {
        rows: u64,
        crc: u32,
        invalid: Option<CodecError>,
    },
    /// The row group is not in the fast layout; nothing is left appended.
    Unsupported,
}

/// The leaf column `leaf` of row group `group`, if it is a list of floats
/// the fast path can check (repetition level 1, definition levels up to 3:
/// nullable or not, list and items).
pub(super) fn eligible(metadata: &ParquetMetaData, leaf: usize) -> bool {
    let descr = metadata.file_metadata().schema_descr().column(leaf);
    descr.physical_type() == PhysicalType::FLOAT
        && descr.max_rep_level() == 1
        && (1..=3).contains(&descr.max_def_level())
}

/// One column chunk to read: row group `group`'s leaf column `leaf` of the
/// file in `source`, whose first row is row `first_row` of the file (for
/// errors), with pages limited to `max_page_bytes` once expanded.
pub(super) struct ColumnChunk<'a> {
    pub(super) source: &'a Source,
    pub(super) metadata: &'a ParquetMetaData,
    pub(super) group: usize,
    pub(super) leaf: usize,
    pub(super) first_row: u64,
    pub(super) max_page_bytes: u64,
}

/// Reads the column chunk into `out`, checked by `policy`; on anything but
/// `Done`, `out` is left as it was.
pub(super) fn read_group(
    chunk: &ColumnChunk<'_>,
    policy: Policy,
    out: &mut Vec<Gf8>,
) -> Result<Outcome, CodecError> {
    let start = out.len();
    let result = read_pages(chunk, policy, out);
    if !matches!(result, Ok(Outcome::Done { invalid: None, .. })) {
        out.truncate(start);
    }
    result
}

fn read_pages(
    chunk: &ColumnChunk<'_>,
    policy: Policy,
    out: &mut Vec<Gf8>,
) -> Result<Outcome, CodecError> {
    let ColumnChunk {
        source,
        metadata,
        group,
        leaf,
        first_row,
        max_page_bytes,
    } = *chunk;
    let row_group = metadata.row_group(group);
    let descr = metadata.file_metadata().schema_descr().column(leaf);
    let def_max = descr.max_def_level() as u8;
    let def_width = bit_width(def_max);
    let parquet_err = |error| CodecError::Parquet {
        row_group: Some(group),
        error,
    };
    let claimed = usize::try_from(row_group.num_rows()).unwrap_or(0);
    let mut pages = SerializedPageReader::new(
        Arc::new(source.clone()),
        row_group.column(leaf),
        claimed,
        None,
    )
    .map_err(parquet_err)?;
    // Room for the rows the column chunk's bytes (read and checked against
    // the file's length) can hold uncompressed; more grows as pages come.
    let proven = usize::try_from(row_group.column(leaf).compressed_size()).unwrap_or(0) / 32;
    out.try_reserve(claimed.min(proven)).map_err(|e| {
        CodecError::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!(
                "cannot allocate memory for {} vectors: {e}",
                claimed.min(proven)
            ),
        ))
    })?;
    let mut hasher = crc32fast::Hasher::new();
    let mut rows = 0u64;
    let mut invalid = None;
    // The dictionary page's floats (little-endian bytes), and the floats of
    // a dictionary-encoded page gathered from it.
    let mut dictionary: Option<bytes::Bytes> = None;
    let mut gathered: Vec<u8> = Vec::new();
    while let Some(page) = pages.get_next_page().map_err(parquet_err)? {
        let (rep, def, values, num_values, encoding) = match &page {
            Page::DictionaryPage {
                buf,
                num_values,
                encoding: Encoding::PLAIN | Encoding::PLAIN_DICTIONARY,
                ..
            } => {
                if dictionary.is_some() || buf.len() != 4 * *num_values as usize {
                    return Ok(Outcome::Unsupported);
                }
                dictionary = Some(buf.clone());
                continue;
            }
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                ..
            } => {
                let Some((rep, rest)) = prefixed(buf) else {
                    return Ok(Outcome::Unsupported);
                };
                let Some((def, values)) = prefixed(rest) else {
                    return Ok(Outcome::Unsupported);
                };
                (rep, def, values, *num_values, *encoding)
            }
            Page::DataPageV2 {
                buf,
                num_values,
                encoding,
                num_nulls: 0,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let (r, d) = (*rep_levels_byte_len as usize, *def_levels_byte_len as usize);
                if r.checked_add(d).is_none_or(|end| end > buf.len()) {
                    return Ok(Outcome::Unsupported);
                }
                (
                    &buf[..r],
                    &buf[r..r + d],
                    &buf[r + d..],
                    *num_values,
                    *encoding,
                )
            }
            _ => return Ok(Outcome::Unsupported),
        };
        let count = num_values as usize;
        if !count.is_multiple_of(8)
            || rows + (count / 8) as u64 > claimed as u64
            || !levels_match(rep, 1, count, Pattern::Rows)
            || !levels_match(def, def_width, count, Pattern::All(def_max))
        {
            return Ok(Outcome::Unsupported);
        }
        let values = match encoding {
            Encoding::PLAIN if values.len() == 4 * count => values,
            Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY => {
                // The floats this page expands to must fit the page limit
                // before any memory is taken for them.
                let Some(dictionary) = dictionary.as_deref() else {
                    return Ok(Outcome::Unsupported);
                };
                if (4 * count) as u64 > max_page_bytes
                    || !gather(values, dictionary, count, &mut gathered)
                {
                    return Ok(Outcome::Unsupported);
                }
                &gathered[..]
            }
            Encoding::BYTE_STREAM_SPLIT if values.len() == 4 * count => {
                unsplit(values, &mut gathered);
                &gathered[..]
            }
            _ => return Ok(Outcome::Unsupported),
        };
        hasher.update(values);
        if invalid.is_none() {
            let here = first_row + rows;
            match crate::payload::decode_payload_into(values, policy, out) {
                Ok(()) => {}
                // Kept, and the rest only hashed: see `Outcome::Done`.
                Err(CodecError::InvalidVector { index, error }) => {
                    invalid = Some(CodecError::InvalidVector {
                        index: here + index,
                        error,
                    });
                }
                Err(e) => return Err(e),
            }
        }
        rows += (count / 8) as u64;
    }
    if rows != claimed as u64 {
        return Ok(Outcome::Unsupported);
    }
    Ok(Outcome::Done {
        rows,
        crc: hasher.finalize(),
        invalid,
    })
}

/// Fills `out` with the `count` floats (little-endian bytes) that the
/// dictionary-encoded values `data` (a bit width byte, then an
/// RLE/bit-packed hybrid stream of indices) pick from `dictionary` (4 bytes
/// per entry). `false` for a malformed stream or an index past the
/// dictionary; `out` is then unspecified.
fn gather(data: &[u8], dictionary: &[u8], count: usize, out: &mut Vec<u8>) -> bool {
    let entries = dictionary.as_chunks::<4>().0;
    let Some((&width, data)) = data.split_first() else {
        return count == 0;
    };
    if width > 32 || (width == 0 && entries.is_empty() && count > 0) {
        return false;
    }
    let w = usize::from(width);
    let mask = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
    out.clear();
    out.reserve(4 * count);
    let (mut i, mut left) = (0usize, count);
    while left > 0 {
        let Some((header, used)) = uleb128(&data[i.min(data.len())..]) else {
            return false;
        };
        i += used;
        let Ok(n) = usize::try_from(header >> 1) else {
            return false;
        };
        if header & 1 == 0 {
            // An RLE run: one index, repeated.
            let value_bytes = w.div_ceil(8);
            let Some(bytes) = data.get(i..i + value_bytes) else {
                return false;
            };
            i += value_bytes;
            let mut index = [0u8; 4];
            index[..value_bytes].copy_from_slice(bytes);
            let Some(entry) = entries.get(u32::from_le_bytes(index) as usize) else {
                return false;
            };
            if n == 0 || n > left {
                return false;
            }
            for _ in 0..n {
                out.extend_from_slice(entry);
            }
            left -= n;
        } else {
            // Bit-packed groups of 8 indices (the last may be padding).
            let Some(len) = n.checked_mul(w) else {
                return false;
            };
            let Some(bytes) = data.get(i..i.saturating_add(len)) else {
                return false;
            };
            i += len;
            let take = left.min(8 * n);
            for k in 0..take {
                let at = k * w;
                let mut word = [0u8; 8];
                let end = (at / 8 + 5).min(bytes.len());
                word[..end - at / 8].copy_from_slice(&bytes[at / 8..end]);
                let index = (u64::from_le_bytes(word) >> (at % 8)) as u32 & mask;
                let Some(entry) = entries.get(index as usize) else {
                    return false;
                };
                out.extend_from_slice(entry);
            }
            left -= take;
        }
    }
    true
}

/// Fills `out` with the floats (little-endian bytes) of the
/// `BYTE_STREAM_SPLIT` values `split`: four streams of `split.len() / 4`
/// bytes, the first holding every value's lowest byte, and so on. `split`
/// is the page's own (decompressed, within the page limit) values section,
/// so `out` takes no more memory than the page proved.
fn unsplit(split: &[u8], out: &mut Vec<u8>) {
    let count = split.len() / 4;
    let (b0, rest) = split.split_at(count);
    let (b1, rest) = rest.split_at(count);
    let (b2, b3) = rest.split_at(count);
    // Every byte is written below: only a longer buffer is zeroed (its
    // new part), not one reused from the previous page.
    out.resize(4 * count, 0);
    // Blocks of 16 values (on x86-64 by SSE2 unpacks, the baseline), then
    // the tail one value at a time.
    const BLOCK: usize = 16;
    let blocks = count / BLOCK;
    let (whole, tail) = out.split_at_mut(4 * BLOCK * blocks);
    let [c0, c1, c2, c3] = [b0, b1, b2, b3].map(|b| b.as_chunks::<BLOCK>().0);
    for (j, chunk) in whole
        .as_chunks_mut::<{ 4 * BLOCK }>()
        .0
        .iter_mut()
        .enumerate()
    {
        interleave_block([&c0[j], &c1[j], &c2[j], &c3[j]], chunk);
    }
    let done = BLOCK * blocks;
    interleave([&b0[done..], &b1[done..], &b2[done..], &b3[done..]], tail);
}

/// `out.len() / 4` values from the first bytes of their four streams,
/// one value at a time.
fn interleave(streams: [&[u8]; 4], out: &mut [u8]) {
    let [s0, s1, s2, s3] = streams;
    for (k, value) in out.as_chunks_mut::<4>().0.iter_mut().enumerate() {
        *value = [s0[k], s1[k], s2[k], s3[k]];
    }
}

/// Sixteen values from their four byte streams.
#[inline]
fn interleave_block(streams: [&[u8; 16]; 4], out: &mut [u8; 64]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            __m128i, _mm_loadu_si128, _mm_storeu_si128, _mm_unpackhi_epi16, _mm_unpackhi_epi8,
            _mm_unpacklo_epi16, _mm_unpacklo_epi8,
        };
        // SAFETY: SSE2 is part of every x86-64 target; the loads read 16
        // bytes from 16-byte arrays and the stores write 16-byte pieces of
        // a 64-byte array, all unaligned.
        unsafe {
            let [s0, s1, s2, s3] = streams.map(|s| _mm_loadu_si128(s.as_ptr().cast::<__m128i>()));
            // Byte pairs (byte 0, byte 1) and (byte 2, byte 3) of values 0-7
            // and 8-15, then the pairs joined into values.
            let (low01, high01) = (_mm_unpacklo_epi8(s0, s1), _mm_unpackhi_epi8(s0, s1));
            let (low23, high23) = (_mm_unpacklo_epi8(s2, s3), _mm_unpackhi_epi8(s2, s3));
            let values = [
                _mm_unpacklo_epi16(low01, low23),
                _mm_unpackhi_epi16(low01, low23),
                _mm_unpacklo_epi16(high01, high23),
                _mm_unpackhi_epi16(high01, high23),
            ];
            for (piece, v) in out.as_chunks_mut::<16>().0.iter_mut().zip(values) {
                _mm_storeu_si128(piece.as_mut_ptr().cast::<__m128i>(), v);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    interleave(streams.map(|s| &s[..]), out);
}

/// A v1 level section: a 4-byte little-endian length, then the levels.
fn prefixed(buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = u32::from_le_bytes(buf.get(..4)?.try_into().ok()?) as usize;
    let end = 4usize.checked_add(len).filter(|&e| e <= buf.len())?;
    Some((&buf[4..end], &buf[end..]))
}

/// Bits per level for levels up to `max`.
fn bit_width(max: u8) -> u8 {
    (8 - max.leading_zeros()) as u8
}

/// The levels a stream must hold.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// Repetition levels of rows of 8: `0, 1, 1, 1, 1, 1, 1, 1`, repeated.
    Rows,
    /// Every level equal to this.
    All(u8),
}

impl Pattern {
    fn expected(self, position: usize) -> u8 {
        match self {
            Pattern::Rows => u8::from(!position.is_multiple_of(8)),
            Pattern::All(v) => v,
        }
    }

    /// The bytes of a bit-packed group of 8 levels starting at a multiple
    /// of 8, for `width` bits per level.
    fn packed_group(self, width: u8) -> [u8; 8] {
        let mut bytes = [0u8; 8];
        for k in 0..8 {
            let value = u64::from(self.expected(k));
            for bit in 0..usize::from(width) {
                if value >> bit & 1 == 1 {
                    let at = k * usize::from(width) + bit;
                    bytes[at / 8] |= 1 << (at % 8);
                }
            }
        }
        bytes
    }
}

/// Whether the RLE/bit-packed hybrid stream `data` holds `count` levels of
/// `width` bits, each as `pattern` requires. Malformed streams are `false`.
fn levels_match(data: &[u8], width: u8, count: usize, pattern: Pattern) -> bool {
    if width == 0 || width > 8 {
        return false;
    }
    let w = usize::from(width);
    let group = pattern.packed_group(width);
    let group = &group[..w];
    let (mut pos, mut i) = (0usize, 0usize);
    while pos < count {
        let Some((header, used)) = uleb128(&data[i.min(data.len())..]) else {
            return false;
        };
        i += used;
        if header & 1 == 0 {
            // An RLE run: one value, repeated.
            let Ok(run) = usize::try_from(header >> 1) else {
                return false;
            };
            let value_bytes = w.div_ceil(8);
            let Some(bytes) = data.get(i..i + value_bytes) else {
                return false;
            };
            i += value_bytes;
            let value = bytes[0];
            if run == 0 || run > count - pos {
                return false;
            }
            let ok = match pattern {
                Pattern::All(v) => value == v,
                Pattern::Rows if value == 0 => run == 1 && pos.is_multiple_of(8),
                Pattern::Rows => value == 1 && pos % 8 != 0 && pos % 8 + run <= 8,
            };
            if !ok {
                return false;
            }
            pos += run;
        } else {
            // Bit-packed groups of 8 levels.
            let Ok(groups) = usize::try_from(header >> 1) else {
                return false;
            };
            let Some(len) = groups.checked_mul(w) else {
                return false;
            };
            let Some(bytes) = data.get(i..i.saturating_add(len)) else {
                return false;
            };
            i += len;
            let whole_groups = if pos.is_multiple_of(8) {
                (count - pos) / 8
            } else {
                0
            };
            if whole_groups >= groups && all_equal(bytes, group) {
                pos += 8 * groups;
                continue;
            }
            for (g, packed) in bytes.chunks_exact(w).enumerate() {
                let base = pos + 8 * g;
                if base >= count {
                    break;
                }
                let whole = base + 8 <= count && base.is_multiple_of(8);
                if whole && packed == group {
                    continue;
                }
                for k in 0..8.min(count - base) {
                    let at = k * w;
                    let word = u16::from(packed[at / 8])
                        | u16::from(packed.get(at / 8 + 1).copied().unwrap_or(0)) << 8;
                    let level = (word >> (at % 8)) as u8 & ((1u16 << w) - 1) as u8;
                    if level != pattern.expected(base + k) {
                        return false;
                    }
                }
            }
            pos += 8 * groups;
        }
    }
    true
}

/// Whether `bytes` is `group` repeated (a whole number of times).
fn all_equal(bytes: &[u8], group: &[u8]) -> bool {
    match *group {
        [g] => bytes.iter().all(|&b| b == g),
        [g0, g1] => bytes.chunks_exact(2).all(|c| c[0] == g0 && c[1] == g1),
        _ => bytes.chunks_exact(group.len()).all(|c| c == group),
    }
}

/// An unsigned LEB128 varint (at most 5 bytes for the 32-bit headers the
/// format uses), and how many bytes it took.
fn uleb128(data: &[u8]) -> Option<(u64, usize)> {
    match super::levels::varint(data, 5) {
        super::levels::Varint::Value(value, used) => Some((value, used)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Levels as one bit-packed run (padded to whole groups of 8), the
    /// form writers use for short runs.
    fn encoded(levels: &[i16], max: i16) -> Vec<u8> {
        let width = usize::from(bit_width(max as u8));
        let groups = levels.len().div_ceil(8);
        let mut out = Vec::new();
        let mut header = ((groups as u64) << 1) | 1;
        loop {
            let b = (header & 0x7f) as u8;
            header >>= 7;
            if header == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        let mut packed = vec![0u8; groups * width];
        for (k, &level) in levels.iter().enumerate() {
            for bit in 0..width {
                if level >> bit & 1 == 1 {
                    let at = k * width + bit;
                    packed[at / 8] |= 1 << (at % 8);
                }
            }
        }
        out.extend(packed);
        out
    }

    fn rows(n: usize) -> Vec<i16> {
        (0..8 * n).map(|i| i16::from(i % 8 != 0)).collect()
    }

    #[test]
    fn row_patterns_match_however_they_are_encoded() {
        for n in [1, 2, 7, 8, 9, 100, 1000] {
            let levels = rows(n);
            assert!(
                levels_match(&encoded(&levels, 1), 1, levels.len(), Pattern::Rows),
                "{n}"
            );
            // RLE runs by hand: 0 once, 1 seven times, per row.
            let mut rle = Vec::new();
            for _ in 0..n {
                rle.extend([2, 0, 14, 1]);
            }
            assert!(levels_match(&rle, 1, levels.len(), Pattern::Rows), "{n}");
        }
    }

    #[test]
    fn other_patterns_do_not_match() {
        for n in [1, 3, 50] {
            for bad in [0, 3, 8 * n - 2] {
                for value in [0i16, 1] {
                    let mut levels = rows(n);
                    if levels[bad] == value {
                        continue;
                    }
                    levels[bad] = value;
                    assert!(
                        !levels_match(&encoded(&levels, 1), 1, levels.len(), Pattern::Rows),
                        "{n} {bad} {value}"
                    );
                }
            }
        }
        // A row of 7 and a row of 9, and too few levels.
        let mut levels = rows(4);
        levels.remove(10);
        assert!(!levels_match(&encoded(&levels, 1), 1, 32, Pattern::Rows));
        let levels = rows(4);
        let bytes = encoded(&levels, 1);
        assert!(!levels_match(&bytes, 1, 40, Pattern::Rows));
        assert!(!levels_match(
            &bytes[..bytes.len() - 1],
            1,
            32,
            Pattern::Rows
        ));
        assert!(!levels_match(&[], 1, 8, Pattern::Rows));
        assert!(!levels_match(&[0xff; 6], 1, 8, Pattern::Rows));
    }

    #[test]
    fn definition_levels_must_all_be_the_maximum() {
        for max in [1i16, 2, 3] {
            let width = bit_width(max as u8);
            for n in [1, 8, 13, 1000] {
                let mut levels = vec![max; n];
                let all = Pattern::All(max as u8);
                assert!(levels_match(&encoded(&levels, max), width, n, all));
                levels[n / 2] = max - 1;
                assert!(!levels_match(&encoded(&levels, max), width, n, all));
            }
        }
    }

    #[test]
    fn gather_reads_rle_and_bit_packed_indices() {
        let dictionary: Vec<u8> = [1.5f32, -2.0, 0.25]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let floats = |out: &[u8]| -> Vec<f32> {
            out.as_chunks::<4>()
                .0
                .iter()
                .map(|b| f32::from_le_bytes(*b))
                .collect()
        };
        let mut out = Vec::new();
        // Width 2: an RLE run of 3 × index 2, then one bit-packed group of
        // indices 0, 1, 2, 1, 0, 0, 0, 0 (of which 5 are used).
        let mut data = vec![2, 3 << 1, 2, (1 << 1) | 1];
        data.extend_from_slice(&[0b0110_0100, 0b0000_0000]);
        assert!(gather(&data, &dictionary, 8, &mut out));
        assert_eq!(floats(&out), [0.25, 0.25, 0.25, 1.5, -2.0, 0.25, -2.0, 1.5]);
        // An index past the dictionary, a run longer than the page, a cut
        // stream, and a zero-length run are refused.
        assert!(!gather(&[2, 2 << 1, 3], &dictionary, 2, &mut out));
        assert!(!gather(&[2, 9 << 1, 0], &dictionary, 8, &mut out));
        assert!(!gather(&[2, (1 << 1) | 1, 0], &dictionary, 8, &mut out));
        assert!(!gather(&[2, 0, 0], &dictionary, 8, &mut out));
        assert!(!gather(&[33], &dictionary, 8, &mut out));
        assert!(gather(&[], &dictionary, 0, &mut out));
    }

    #[test]
    fn unsplit_interleaves_the_four_byte_streams() {
        // Counts below, at and past whole blocks of 16.
        for count in [0usize, 1, 7, 15, 16, 17, 33, 1000] {
            let floats: Vec<f32> = (0..count).map(|i| i as f32 * -1.25e-3 + 0.5).collect();
            let plain: Vec<u8> = floats.iter().flat_map(|x| x.to_le_bytes()).collect();
            let mut split = vec![0u8; 4 * count];
            for (i, bytes) in plain.as_chunks::<4>().0.iter().enumerate() {
                for (b, &byte) in bytes.iter().enumerate() {
                    split[b * count + i] = byte;
                }
            }
            let mut out = vec![9u8; 3];
            unsplit(&split, &mut out);
            assert_eq!(out, plain, "{count}");
        }
    }

    #[test]
    fn widths_and_headers() {
        assert_eq!(
            [bit_width(1), bit_width(2), bit_width(3), bit_width(4)],
            [1, 2, 2, 3]
        );
        assert_eq!(uleb128(&[0x96, 0x01]), Some((150, 2)));
        assert_eq!(uleb128(&[0x80; 6]), None);
        assert_eq!(Pattern::Rows.packed_group(1)[0], 0xfe);
        assert_eq!(Pattern::All(3).packed_group(2)[..2], [0xff, 0xff]);
    }
}
