//! Checks the definition levels of a flat nullable column before the
//! parquet crate's Arrow reader decodes them. For such a column (one
//! definition level, no repetition: a nullable `UInt8` code column as
//! pyarrow writes it) the crate reads the levels straight into a null
//! bitmap (`PackedDecoder`), and a bit-packed run that claims more groups
//! than its page holds makes it copy bits past the end of the data: a
//! panic ("offset + len out of bounds" in arrow-buffer), found by the
//! `parquet_decode` fuzz target. Each data page's level stream is walked
//! here as that decoder walks it, and a run it would read past the end is
//! an error. So are v1 levels in the deprecated `BIT_PACKED` encoding
//! longer than their page (for any column), which the crate slices out of
//! the page without checking the length, run headers longer than 10 bytes
//! in level streams and dictionary indices (the crate's varint reader
//! panics on them), and `BYTE_STREAM_SPLIT` values shorter than their
//! count.

use std::sync::Arc;

use parquet::basic::{Encoding, Type as PhysicalType};
use parquet::column::page::{Page, PageReader};
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::serialized_reader::SerializedPageReader;

use super::source::Source;

/// Whether the crate reads leaf `leaf`'s definition levels with its packed
/// null-mask decoder (`packed_null_mask` in the crate's record reader).
pub(super) fn packed_null_mask(metadata: &ParquetMetaData, leaf: usize) -> bool {
    let descr = metadata.file_metadata().schema_descr().column(leaf);
    descr.max_def_level() == 1 && descr.max_rep_level() == 0 && descr.self_type().is_optional()
}

/// Walks the pages of leaf `leaf` in row group `group` and checks their
/// levels: v1 `BIT_PACKED` levels must fit in the page (the crate slices
/// them out unchecked: a panic), RLE run headers must be varints of at
/// most 10 bytes, and a packed null mask's runs must fit in their levels.
/// Pages the crate refuses on its own are left to it.
pub(super) fn check_group(
    source: &Source,
    metadata: &ParquetMetaData,
    group: usize,
    leaf: usize,
) -> Result<(), ParquetError> {
    let row_group = metadata.row_group(group);
    let claimed = usize::try_from(row_group.num_rows()).unwrap_or(0);
    let mut pages = SerializedPageReader::new(
        Arc::new(source.clone()),
        row_group.column(leaf),
        claimed,
        None,
    )?;
    let descr = metadata.file_metadata().schema_descr().column(leaf);
    let (max_rep, max_def) = (descr.max_rep_level(), descr.max_def_level());
    let packed = packed_null_mask(metadata, leaf);
    // The width of a value in BYTE_STREAM_SPLIT (0: not checked).
    let split_width = match descr.physical_type() {
        PhysicalType::INT32 | PhysicalType::FLOAT => 4,
        PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => usize::try_from(descr.type_length()).unwrap_or(0),
        _ => 0,
    };
    let mut offset = 0u64;
    while let Some(page) = pages.get_next_page()? {
        let index = offset;
        offset += 1;
        let page_error =
            |e: String| ParquetError::General(format!("page {index} of the column chunk: {e}"));
        let (levels, count) = match &page {
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding,
                rep_level_encoding,
                ..
            } => {
                // As the crate's `parse_v1_level` cuts the levels out:
                // repetition levels, then definition levels.
                let mut at = 0usize;
                let mut def = None;
                let mut cut = true;
                for (max, encoding, which) in [
                    (max_rep, *rep_level_encoding, "repetition"),
                    (max_def, *def_level_encoding, "definition"),
                ] {
                    if max == 0 {
                        continue;
                    }
                    let rest = &buf[at.min(buf.len())..];
                    let len = match encoding {
                        Encoding::RLE => {
                            let Some(len) = rest.get(..4) else {
                                cut = false;
                                break; // the crate reports it
                            };
                            let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
                            if rest.len() - 4 < len {
                                cut = false;
                                break;
                            }
                            4 + len
                        }
                        #[allow(deprecated)]
                        Encoding::BIT_PACKED => {
                            let width = (16 - max.leading_zeros()) as usize;
                            let need = (*num_values as usize).saturating_mul(width).div_ceil(8);
                            if need > rest.len() {
                                return Err(page_error(format!(
                                    "{num_values} bit-packed {which} levels need {need} bytes, \
                                     {} are left in the page",
                                    rest.len()
                                )));
                            }
                            need
                        }
                        _ => {
                            cut = false;
                            break;
                        }
                    };
                    if encoding == Encoding::RLE {
                        let width = (16 - max.leading_zeros()) as usize;
                        check_hybrid(&rest[4..len], width, *num_values as usize, Some(max as u64))
                            .map_err(|e| page_error(format!("{which} levels: {e}")))?;
                        if which == "definition" {
                            def = Some(&rest[4..len]);
                        }
                    }
                    at += len;
                }
                // The values the crate decodes: all, or those whose
                // definition level is the maximum.
                let values = match (max_def, def) {
                    _ if !cut => None,
                    (0, _) => Some(*num_values as usize),
                    (max, Some(def)) => Some(count_at(def, max, *num_values as usize)),
                    _ => None,
                };
                if let Some(values) = values {
                    check_values(&buf[at.min(buf.len())..], *encoding, values, split_width)
                        .map_err(page_error)?;
                }
                match def {
                    Some(def) if packed => (def, *num_values as usize),
                    _ => continue,
                }
            }
            Page::DataPageV2 {
                buf,
                num_values,
                num_nulls,
                encoding,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let start = *rep_levels_byte_len as usize;
                let end = start.saturating_add(*def_levels_byte_len as usize);
                let (Some(rep), Some(levels)) = (buf.get(..start), buf.get(start..end)) else {
                    return Err(page_error(format!(
                        "its levels ({end} bytes) run past the page ({} bytes)",
                        buf.len()
                    )));
                };
                let count = *num_values as usize;
                for (max, stream, which) in [
                    (max_rep, rep, "repetition"),
                    (max_def, levels, "definition"),
                ] {
                    if max > 0 {
                        let width = (16 - max.leading_zeros()) as usize;
                        check_hybrid(stream, width, count, Some(max as u64))
                            .map_err(|e| page_error(format!("{which} levels: {e}")))?;
                    }
                }
                let values = num_values.saturating_sub(*num_nulls) as usize;
                check_values(&buf[end..], *encoding, values, split_width).map_err(page_error)?;
                if !packed {
                    continue;
                }
                (levels, count)
            }
            _ => continue,
        };
        check_levels(levels, count).map_err(|e| page_error(format!("definition levels: {e}")))?;
    }
    Ok(())
}

/// Checks a data page's values section (`count` values) where the crate's
/// decoder for `encoding` would panic: see [`check_split`] and
/// [`check_dictionary_indices`].
fn check_values(
    values: &[u8],
    encoding: Encoding,
    count: usize,
    split_width: usize,
) -> Result<(), String> {
    match encoding {
        Encoding::BYTE_STREAM_SPLIT => check_split(values, count, split_width),
        #[allow(deprecated)]
        Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY => {
            check_dictionary_indices(values, count)
        }
        // (The value width in bits: 32 for INT32, 64 for INT64.)
        Encoding::DELTA_BINARY_PACKED => check_delta_binary_packed(values, count, 8 * split_width),
        _ => Ok(()),
    }
}

/// `DELTA_BINARY_PACKED` values, walked as the crate's
/// `DeltaBitPackDecoder` reads `count` of them: the header (block size,
/// miniblocks per block, value count, first value) and each block's
/// minimum delta are varints read by the same `get_vlq_int` that panics
/// past 10 bytes. Its miniblocks are read in order (each a multiple of 32
/// values, so byte-aligned), so the next block's header is where the
/// previous block's miniblocks end. Whatever the crate refuses on its own
/// (parameters out of its rules, a bit width wider than the type, missing
/// bytes) ends the walk: the crate reports it.
fn check_delta_binary_packed(data: &[u8], count: usize, type_bits: usize) -> Result<(), String> {
    let long = |what: &str, at: usize| {
        format!(
            "DELTA_BINARY_PACKED values: the {what} at byte {at} is a varint of more than 10 bytes"
        )
    };
    let mut at = 0usize;
    let mut header = [0u64; 4];
    for (field, what) in header.iter_mut().zip([
        "block size",
        "number of miniblocks",
        "value count",
        "first value",
    ]) {
        match varint(data.get(at..).unwrap_or_default(), 10) {
            Varint::Value(value, used) => (*field, at) = (value, at + used),
            Varint::Ends => return Ok(()),
            Varint::TooLong => return Err(long(what, at)),
        }
    }
    let [block, minis, total, _] = header;
    // The crate's rules (as i64 converted to usize: no value above i64::MAX).
    if [block, minis, total].iter().any(|&v| v > i64::MAX as u64)
        || minis == 0
        || block % 128 != 0
        || block % minis != 0
        || (block / minis) % 32 != 0
    {
        return Ok(());
    }
    let (Ok(minis), Ok(per_mini)) = (usize::try_from(minis), usize::try_from(block / minis)) else {
        return Ok(());
    };
    // The first value is in the header; the rest come from blocks.
    let mut left = (count as u64).min(total).saturating_sub(1);
    while left > 0 {
        match varint(data.get(at..).unwrap_or_default(), 10) {
            Varint::Value(_, used) => at += used,
            Varint::Ends => return Ok(()),
            Varint::TooLong => return Err(long("minimum delta of a block", at)),
        }
        let Some(widths) = data.get(at..at.saturating_add(minis)) else {
            return Ok(());
        };
        at += minis;
        // The crate sums the block's miniblock sizes (width times values
        // per miniblock) in a usize before it reads them: a panic on
        // overflow.
        let sized = widths.iter().try_fold(0usize, |sum, &width| {
            per_mini
                .checked_mul(usize::from(width))
                .and_then(|bits| sum.checked_add(bits / 8))
        });
        if sized.is_none() {
            return Err(format!(
                "DELTA_BINARY_PACKED values: the block at byte {at} has miniblocks of \
                 {per_mini} values, too many to size"
            ));
        }
        for &width in widths {
            if left == 0 {
                break;
            }
            let width = usize::from(width);
            if width > type_bits {
                return Ok(());
            }
            left = left.saturating_sub(per_mini as u64);
            at = at.saturating_add(per_mini.saturating_mul(width) / 8);
        }
    }
    Ok(())
}

/// Dictionary indices: a bit-width byte, then an RLE/bit-packed hybrid
/// stream, whose run headers the crate reads with the same `get_vlq_int`
/// as levels (a panic past 10 bytes, found by the `parquet_decode` fuzz
/// target in a dictionary-encoded page of codes). A missing or invalid
/// width is left to the crate, which refuses it.
fn check_dictionary_indices(values: &[u8], count: usize) -> Result<(), String> {
    match values.split_first() {
        Some((&width, runs)) if width <= 32 => check_hybrid(runs, usize::from(width), count, None)
            .map_err(|e| format!("dictionary indices: {e}")),
        _ => Ok(()),
    }
}

/// A `BYTE_STREAM_SPLIT` values section must hold `count` values of
/// `width` bytes: the crate's decoder indexes it for as many values as it
/// is asked for, unchecked (a panic, found by the `parquet_decode` fuzz
/// target).
fn check_split(values: &[u8], count: usize, width: usize) -> Result<(), String> {
    if width > 0 && values.len() / width < count {
        return Err(format!(
            "BYTE_STREAM_SPLIT values: {count} values of {width} bytes, {} bytes there",
            values.len()
        ));
    }
    Ok(())
}

/// How many of the first `count` levels of the RLE/bit-packed hybrid
/// stream `data` equal `max` (the non-null values); a malformed stream
/// counts what it holds.
fn count_at(data: &[u8], max: i16, count: usize) -> usize {
    let width = (16 - max.leading_zeros()) as usize;
    let max = max as u64;
    let (mut levels, mut at, mut found) = (0usize, 0usize, 0usize);
    while levels < count && at < data.len() {
        let Varint::Value(header, used) = varint(&data[at..], 10) else {
            return found;
        };
        at += used;
        let run = usize::try_from(header >> 1).unwrap_or(usize::MAX);
        if header & 1 == 1 {
            let n = run.saturating_mul(8).min(count - levels);
            for k in 0..n {
                let mut value = 0u64;
                for bit in 0..width {
                    let at_bit = (at * 8).saturating_add(k * width + bit);
                    let byte = data.get(at_bit / 8).copied().unwrap_or(0);
                    value |= u64::from(byte >> (at_bit % 8) & 1) << bit;
                }
                found += usize::from(value == max);
            }
            levels += n;
            at = at.saturating_add(run.saturating_mul(width));
        } else {
            let bytes = width.div_ceil(8);
            let mut value = 0u64;
            for (i, &b) in data.iter().skip(at).take(bytes).enumerate() {
                value |= u64::from(b) << (8 * i);
            }
            let n = run.min(count - levels);
            if value == max {
                found += n;
            }
            levels += n;
            at = at.saturating_add(bytes);
        }
    }
    found
}

/// Walks an RLE/bit-packed hybrid stream of `width`-bit values as the
/// crate's `RleDecoder` reads `count` of them: `Err` if a run header is a
/// varint of more than 10 bytes with more data after it (the crate's
/// `get_vlq_int` panics: "attempt to shift left with overflow", or its
/// length assertion; found by the `parquet_decode` fuzz target), or, with
/// `max`, if a value read is above it. (Levels above the column's maximum
/// are not refused by the crate: its record reader then returned rows that
/// depended on its batch size, also found by the fuzz target; pyarrow
/// refuses them as "Malformed levels".)
fn check_hybrid(data: &[u8], width: usize, count: usize, max: Option<u64>) -> Result<(), String> {
    // A bit-packed value has `width` bits: when every such value is at
    // most `max`, its runs need no reading (an RLE value takes whole
    // bytes, so it can still exceed it).
    let packed_max = max.filter(|&max| width < 64 && max < (1u64 << width) - 1);
    let (mut values, mut at) = (0usize, 0usize);
    while values < count && at < data.len() {
        let (header, used) = match varint(&data[at..], 10) {
            Varint::Value(header, used) => (header, used),
            Varint::Ends => return Ok(()), // the stream ends: the crate stops there
            Varint::TooLong => {
                return Err(format!(
                    "the run header at byte {at} is a varint of more than 10 bytes"
                ))
            }
        };
        // The crate multiplies a bit-packed run's group count by 8 in an
        // i64 (its varint reader's type): a panic on overflow, found by
        // the `parquet_decode` fuzz target.
        if header & 1 == 1 && ((header as i64) >> 1).checked_mul(8).is_none() {
            return Err(format!(
                "the bit-packed run at byte {at} claims more than 2^63 values"
            ));
        }
        at += used;
        let run = usize::try_from(header >> 1).unwrap_or(usize::MAX);
        let wanted = count - values;
        if header & 1 == 1 {
            // `run` groups of 8 values, `width` bytes per group.
            if let Some(max) = packed_max {
                let packed = data.get(at..).unwrap_or_default();
                for i in 0..run.saturating_mul(8).min(wanted) {
                    // Past the data the crate stops reading.
                    let Some(value) = bit_packed_value(packed, i, width) else {
                        break;
                    };
                    if value > max {
                        return Err(above(value, values + i, max));
                    }
                }
            }
            values = values.saturating_add(run.saturating_mul(8));
            at = at.saturating_add(run.saturating_mul(width));
        } else {
            // `run` copies of one value of `width` bits in whole bytes.
            let bytes = width.div_ceil(8);
            if let (Some(max), true) = (max, run > 0) {
                if let Some(raw) = data.get(at..at.saturating_add(bytes)) {
                    let value = raw.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b));
                    if value > max {
                        return Err(above(value, values, max));
                    }
                }
            }
            values = values.saturating_add(run);
            at = at.saturating_add(bytes);
        }
    }
    Ok(())
}

fn above(value: u64, index: usize, max: u64) -> String {
    format!("level {value} (value {index} of the page) is above the column's maximum {max}")
}

/// Value `i` of a bit-packed run of `width`-bit values (least significant
/// bit first), if `packed` holds all its bits.
fn bit_packed_value(packed: &[u8], i: usize, width: usize) -> Option<u64> {
    let first_bit = i.checked_mul(width)?;
    let mut value = 0u64;
    for k in 0..width {
        let bit = first_bit + k;
        let byte = *packed.get(bit / 8)?;
        value |= u64::from((byte >> (bit % 8)) & 1) << k;
    }
    Some(value)
}

/// Walks an RLE/bit-packed hybrid stream of 1-bit levels as the crate's
/// `PackedDecoder` reads `count` of them: `Err` if it would read a
/// bit-packed run past the end of `data`.
fn check_levels(data: &[u8], count: usize) -> Result<(), String> {
    let (mut levels, mut at) = (0usize, 0usize);
    while levels < count && at < data.len() {
        // The run header: a ULEB128 varint of at most 10 bytes.
        let mut header = 0u64;
        let mut used = 0;
        loop {
            let Some(&b) = data.get(at + used) else {
                return Ok(()); // the crate reports the cut header
            };
            if used < 10 {
                header |= u64::from(b & 0x7f)
                    .checked_shl(7 * used as u32)
                    .unwrap_or(0);
            }
            used += 1;
            if b & 0x80 == 0 || used == 10 {
                break;
            }
        }
        at += used;
        let run = usize::try_from(header >> 1).unwrap_or(usize::MAX);
        if header & 1 == 1 {
            // `run` groups of 8 levels, one bit each.
            let Some(bits) = run.checked_mul(8) else {
                return Err(format!("a bit-packed run of {run} groups"));
            };
            let read = bits.min(count - levels);
            if at.saturating_mul(8).saturating_add(read) > data.len().saturating_mul(8) {
                return Err(format!(
                    "a bit-packed run of {run} groups at byte {} runs past the {} bytes of levels",
                    at - used,
                    data.len()
                ));
            }
            levels += read;
            at = at.saturating_add(run);
        } else {
            // A repeated value, in one byte.
            at += 1;
            levels = levels.saturating_add(run);
        }
    }
    Ok(())
}

/// An unsigned LEB128 varint at the start of `data` (an RLE/bit-packed run
/// header), of at most `max_bytes` bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Varint {
    /// The value, and how many bytes it took.
    Value(u64, usize),
    /// `data` ends inside it.
    Ends,
    /// It has no last byte within `max_bytes`.
    TooLong,
}

pub(super) fn varint(data: &[u8], max_bytes: usize) -> Varint {
    let mut value = 0u64;
    for used in 0.. {
        let Some(&b) = data.get(used) else {
            return Varint::Ends;
        };
        if used == max_bytes {
            return Varint::TooLong;
        }
        value |= u64::from(b & 0x7f)
            .checked_shl(7 * used as u32)
            .unwrap_or(0);
        if b & 0x80 == 0 {
            return Varint::Value(value, used + 1);
        }
    }
    unreachable!("the loop returns")
}

#[cfg(test)]
mod tests {
    use super::check_levels;

    #[test]
    fn bit_packed_runs_must_fit_in_the_levels() {
        // 2 groups (16 levels) in 2 bytes; an RLE run of 5.
        assert!(check_levels(&[0x05, 0xff, 0xff], 16).is_ok());
        assert!(check_levels(&[0x0a, 0x01], 5).is_ok());
        // 3 groups claimed, 2 bytes there: an error when the levels read
        // reach the third byte, fine when fewer are read.
        assert!(check_levels(&[0x07, 0xff, 0xff], 24).is_err());
        assert!(check_levels(&[0x07, 0xff, 0xff], 16).is_ok());
        // A huge claim, and a header cut short (the crate reports that).
        assert!(check_levels(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0x00], 100).is_err());
        assert!(check_levels(&[0x80], 8).is_ok());
    }

    #[test]
    fn split_values_must_cover_the_non_null_count() {
        use super::{check_split, count_at};
        // 3 levels of max 1 as RLE: 1 (x2), then 0 (x1): 2 values.
        assert_eq!(count_at(&[0x04, 0x01, 0x02, 0x00], 1, 3), 2);
        // Bit-packed 1, 0, 1, 1, 0, 0, 0, 0: 3 values.
        assert_eq!(count_at(&[0x03, 0b0000_1101], 1, 8), 3);
        assert!(check_split(&[0; 8], 2, 4).is_ok());
        assert!(check_split(&[0; 7], 2, 4).is_err());
        assert!(check_split(&[], 0, 8).is_ok());
    }

    #[test]
    fn dictionary_index_run_headers_of_more_than_10_bytes_are_errors() {
        use super::check_dictionary_indices;
        // Width 3, then a run header of 11 bytes with data after it.
        let mut values = vec![3];
        values.extend([0xff; 10]);
        values.extend([0x01, 0x00]);
        let err = check_dictionary_indices(&values, 5).unwrap_err();
        assert_eq!(
            err,
            "dictionary indices: the run header at byte 0 is a varint of more than 10 bytes"
        );
        // An RLE run of 5 (header 10, then the value in one byte); the
        // bytes after the values the crate reads are not its concern.
        assert_eq!(check_dictionary_indices(&[3, 10, 7, 0xff, 0xff], 5), Ok(()));
        // No width, or an invalid one: the crate reports it.
        assert_eq!(check_dictionary_indices(&[], 5), Ok(()));
        assert_eq!(check_dictionary_indices(&[33, 0xff, 0xff], 5), Ok(()));
    }

    #[test]
    fn delta_binary_packed_varints_of_more_than_10_bytes_are_errors() {
        use super::check_delta_binary_packed;
        // Block of 128 values, 4 miniblocks of 32, 100 values, first 0;
        // then a block: minimum delta 0, widths 1, 1, 1, 1, and four
        // miniblocks of 4 bytes each (32 one-bit deltas).
        let mut good = vec![0x80, 0x01, 4, 100, 0, 0, 1, 1, 1, 1];
        good.extend([0; 16]);
        assert_eq!(check_delta_binary_packed(&good, 100, 32), Ok(()));
        // 200 values: a second block, whose minimum delta is 11 bytes.
        let mut second = good.clone();
        second[3] = 0xc8;
        second.insert(4, 0x01); // value count 200 (two bytes)
        second.extend([0xff; 10]);
        second.push(0);
        let err = check_delta_binary_packed(&second, 200, 32).unwrap_err();
        assert_eq!(
            err,
            "DELTA_BINARY_PACKED values: the minimum delta of a block at byte 27 \
             is a varint of more than 10 bytes"
        );
        // Only as far as the values the page holds go.
        assert_eq!(check_delta_binary_packed(&second, 129, 32), Ok(()));
        // A header field of 11 bytes.
        let mut header = vec![0xff; 10];
        header.push(0);
        assert!(check_delta_binary_packed(&header, 1, 32).is_err());
        // Miniblocks of 2^62 values: their sizes overflow.
        let mut huge = vec![
            0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 1, 3, 0, 0, 8,
        ];
        huge.extend([0; 8]);
        let err = check_delta_binary_packed(&huge, 3, 32).unwrap_err();
        assert!(err.contains("too many to size"), "{err}");
        // Parameters the crate refuses itself: left to it.
        assert_eq!(
            check_delta_binary_packed(&[100, 4, 100, 0, 0xff, 0xff], 100, 32),
            Ok(())
        );
    }

    #[test]
    fn levels_above_the_maximum_are_errors() {
        use super::check_hybrid;
        // Width 2 (maximum 3): an RLE run of 4 threes, then a bit-packed
        // group of 8 values 0..=3 twice (16 bits: 0b11100100 twice).
        let good = [8, 3, 3, 0b1110_0100, 0b1110_0100];
        assert_eq!(check_hybrid(&good, 2, 12, Some(3)), Ok(()));
        assert_eq!(
            check_hybrid(&good, 2, 12, Some(2)).unwrap_err(),
            "level 3 (value 0 of the page) is above the column's maximum 2"
        );
        // The bit-packed group: value 3 is its fourth (value 7 of the page).
        let packed = [8, 0, 3, 0b1110_0100, 0b1110_0100];
        assert_eq!(
            check_hybrid(&packed, 2, 12, Some(2)).unwrap_err(),
            "level 3 (value 7 of the page) is above the column's maximum 2"
        );
        // Values past `count` are padding, not read.
        assert_eq!(check_hybrid(&packed, 2, 7, Some(2)), Ok(()));
        // An RLE run of 81 where the maximum is 3 (the fuzz input).
        assert!(check_hybrid(&[10, 81], 2, 5, Some(3)).is_err());
        // A bit-packed run of 2^61 groups (2^64 values; header 2^62 + 1):
        // the crate's i64 product overflows.
        let run = [0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0];
        let err = check_hybrid(&run, 1, 5, None).unwrap_err();
        assert_eq!(
            err,
            "the bit-packed run at byte 0 claims more than 2^63 values"
        );
    }

    #[test]
    fn run_headers_of_more_than_10_bytes_are_errors() {
        use super::check_hybrid;
        // An RLE run of 8 ones, then a header of 11 bytes.
        let mut data = vec![0x10, 0x01];
        data.extend([0x80; 10]);
        data.push(0x01);
        assert!(check_hybrid(&data, 1, 100, None).is_err());
        // Fewer levels wanted: the crate never reads that header.
        assert!(check_hybrid(&data, 1, 8, None).is_ok());
        // A header cut short at the end of the data is the crate's to report.
        assert!(check_hybrid(&data[..12], 1, 100, None).is_ok());
        // Ten bytes are fine.
        let ten = [0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
        assert!(check_hybrid(&ten, 1, 8, None).is_ok());
    }
}
