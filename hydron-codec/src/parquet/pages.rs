//! Checks a column chunk's page headers before the parquet crate decodes
//! it: the crate reserves each page's claimed uncompressed size (up to
//! 2 GiB) before it decompresses, so a crafted header could make it
//! allocate from a claim. This walks the chunk's Thrift page headers as
//! the crate will read them ([`thrift`]: keeping the two
//! sizes, the page type and the data pages' encoding) and refuses a
//! malformed header, a page over the limit, a size
//! below zero, a page past the chunk's end, or a dictionary-encoded data
//! page with no dictionary page before it (the crate panics on that:
//! "Decoder for dict should have been set", found by the `parquet_decode`
//! fuzz target).

use std::io::Read;

use parquet::errors::ParquetError;
use parquet::file::reader::ChunkReader;

use super::source::Source;
use super::thrift::{self, zigzag, Counting};

/// One page header's sizes, and how long the header itself is; its type
/// and, for a data page, its values' encoding, where present.
#[derive(Debug, PartialEq, Eq)]
struct PageSizes {
    header_len: u64,
    uncompressed: i64,
    compressed: i64,
    page_type: Option<i64>,
    encoding: Option<i64>,
    /// A v1 data page whose repetition or definition levels are in the
    /// deprecated `BIT_PACKED` encoding.
    bit_packed_levels: bool,
}

/// Page types (`parquet.thrift`'s `PageType`).
const DATA_PAGE: i64 = 0;
const DICTIONARY_PAGE: i64 = 2;
const DATA_PAGE_V2: i64 = 3;
/// The deprecated level encoding `BIT_PACKED`.
const BIT_PACKED: i64 = 4;
/// The encodings that read values from a dictionary page
/// (`PLAIN_DICTIONARY`, `RLE_DICTIONARY`).
const DICTIONARY_ENCODINGS: [i64; 2] = [2, 8];

/// A page whose claimed uncompressed size is over the limit: where its
/// header starts, and the claim.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct TooLarge {
    pub(super) offset: u64,
    pub(super) claimed: u64,
}

/// Walks the pages of the column chunk at `start..start + len`. `Ok(Err)`
/// is a page over `limit` bytes uncompressed; `Ok(Ok(true))` says that a
/// v1 data page has `BIT_PACKED` levels (whose length the crate does not
/// check against the page: see `levels`).
pub(super) fn check_chunk(
    source: &Source,
    start: i64,
    len: i64,
    limit: u64,
) -> Result<Result<bool, TooLarge>, ParquetError> {
    let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(len)) else {
        return Err(ParquetError::General(format!(
            "a column chunk has a negative offset or length ({start}, {len})"
        )));
    };
    let end = start
        .checked_add(len)
        .filter(|&e| e <= parquet::file::reader::Length::len(source));
    let Some(end) = end else {
        return Err(ParquetError::EOF(format!(
            "a column chunk of {len} bytes at byte offset {start} is past the end of the data"
        )));
    };
    let mut offset = start;
    let mut dictionary_seen = false;
    let mut bit_packed_levels = false;
    while offset < end {
        let mut reader = source.get_read(offset)?.take(end - offset);
        let sizes = read_page_sizes(&mut reader).map_err(|e| {
            ParquetError::General(format!("page header at byte offset {offset}: {e}"))
        })?;
        if sizes.compressed < 0 || sizes.uncompressed < 0 {
            return Err(ParquetError::General(format!(
                "page header at byte offset {offset}: negative page size"
            )));
        }
        if sizes.uncompressed as u64 > limit {
            return Ok(Err(TooLarge {
                offset,
                claimed: sizes.uncompressed as u64,
            }));
        }
        bit_packed_levels |= sizes.bit_packed_levels;
        match sizes.page_type {
            Some(DICTIONARY_PAGE) => dictionary_seen = true,
            Some(DATA_PAGE | DATA_PAGE_V2)
                if !dictionary_seen
                    && sizes
                        .encoding
                        .is_some_and(|e| DICTIONARY_ENCODINGS.contains(&e)) =>
            {
                return Err(ParquetError::General(format!(
                    "the data page at byte offset {offset} is dictionary-encoded, \
                     but no dictionary page comes before it"
                )));
            }
            _ => {}
        }
        offset = offset
            .checked_add(sizes.header_len)
            .and_then(|o| o.checked_add(sizes.compressed as u64))
            .filter(|&o| o <= end)
            .ok_or_else(|| {
                ParquetError::EOF(format!(
                    "the page at byte offset {offset} runs past the end of its column chunk"
                ))
            })?;
    }
    Ok(Ok(bit_packed_levels))
}

/// Reads one Thrift compact-protocol `PageHeader`, keeping fields 1
/// (`type`), 2 (`uncompressed_page_size`) and 3 (`compressed_page_size`),
/// and the `encoding` of a `DataPageHeader` (field 5, its field 2) or a
/// `DataPageHeaderV2` (field 8, its field 4).
fn read_page_sizes(r: &mut impl Read) -> Result<PageSizes, String> {
    let mut input = Counting::new(r);
    let mut sizes = (None, None);
    let (mut page_type, mut v1_fields, mut v2_encoding) = (None, [None; 3], None);
    // The fields' types are the format's (fields 1 to 3 are i32, 5 and 8
    // structs): the walk checked each header against the table.
    thrift::walk_struct_with(&mut input, &thrift::PAGE_HEADER, 0, |id, input| {
        match id {
            1 => page_type = Some(zigzag(input.varint()?)),
            2 => sizes.0 = Some(zigzag(input.varint()?)),
            3 => sizes.1 = Some(zigzag(input.varint()?)),
            // encoding, definition_level_encoding, repetition_level_encoding
            5 => v1_fields = struct_i32s(input, &thrift::DATA_PAGE_HEADER, [2, 3, 4])?,
            8 => v2_encoding = struct_i32s(input, &thrift::DATA_PAGE_HEADER_V2, [4, 0, 0])?[0],
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    match sizes {
        (Some(uncompressed), Some(compressed)) => Ok(PageSizes {
            header_len: input.read,
            uncompressed,
            compressed,
            page_type,
            // The header the crate reads for the page's type.
            encoding: match page_type {
                Some(DATA_PAGE) => v1_fields[0],
                Some(DATA_PAGE_V2) => v2_encoding,
                _ => None,
            },
            bit_packed_levels: page_type == Some(DATA_PAGE)
                && v1_fields[1..].contains(&Some(BIT_PACKED)),
        }),
        _ => Err("the page sizes are missing".to_string()),
    }
}

/// Reads a struct `strukt` (after its field header), keeping its i32
/// fields `wanted` (the last value of each, if repeated; id 0: none) and
/// walking the rest.
fn struct_i32s(
    input: &mut Counting<'_, impl Read>,
    strukt: &thrift::StructShape,
    wanted: [i16; 3],
) -> Result<[Option<i64>; 3], String> {
    let mut value = [None; 3];
    thrift::walk_struct_with(input, strukt, 1, |id, input| {
        match wanted.iter().position(|&w| w == id && w != 0) {
            // (An i32, as the table says and the header agreed.)
            Some(k) => value[k] = Some(zigzag(input.varint()?)),
            None => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact-protocol page header: type DATA_PAGE, the two sizes, a CRC,
    /// a data page header struct with a statistics struct holding binary
    /// min/max and a list, then STOP.
    fn header(uncompressed: i32, compressed: i32) -> Vec<u8> {
        fn varint(mut n: u64, out: &mut Vec<u8>) {
            loop {
                let b = (n & 0x7f) as u8;
                n >>= 7;
                if n == 0 {
                    out.push(b);
                    return;
                }
                out.push(b | 0x80);
            }
        }
        fn zz(n: i64) -> u64 {
            ((n << 1) ^ (n >> 63)) as u64
        }
        let mut h = vec![0x15];
        varint(zz(0), &mut h); // type
        h.push(0x15);
        varint(zz(i64::from(uncompressed)), &mut h);
        h.push(0x15);
        varint(zz(i64::from(compressed)), &mut h);
        h.push(0x15);
        varint(zz(-12345), &mut h); // crc
        h.push(0x1c); // field 5, struct
        h.push(0x15);
        varint(zz(100), &mut h); // num_values
        h.push(0x5c); // field 5 (delta 4 from 1), struct: statistics
        h.extend([0x18, 3, b'a', b'b', b'c']); // max: binary
        h.extend([0x89, 0x35]); // field 9 (unknown): a list of 3 i32
        for x in [1, 2, 3] {
            varint(zz(x), &mut h);
        }
        h.extend([0x11, 0x00, 0x00]); // field 10 (unknown): bool true; STOP stats; STOP data page header
        h.push(0x00); // STOP page header
        h
    }

    #[test]
    fn reads_the_sizes_and_skips_the_rest() {
        let h = header(1 << 20, 5000);
        let sizes = read_page_sizes(&mut &h[..]).unwrap();
        assert_eq!(
            sizes,
            PageSizes {
                header_len: h.len() as u64,
                uncompressed: 1 << 20,
                compressed: 5000,
                page_type: Some(0),
                encoding: None,
                bit_packed_levels: false,
            }
        );
    }

    #[test]
    fn pages_over_the_limit_are_refused_and_bad_headers_are_errors() {
        let mut data = header(2_000_000_000, 4);
        data.extend([0; 4]);
        let source = Source::Bytes(data.clone().into());
        let got = check_chunk(&source, 0, data.len() as i64, 1 << 26).unwrap();
        assert_eq!(
            got,
            Err(TooLarge {
                offset: 0,
                claimed: 2_000_000_000
            })
        );
        let mut ok = header(100, 4);
        ok.extend([0; 4]);
        let two: Vec<u8> = [ok.clone(), ok.clone()].concat();
        let source = Source::Bytes(two.clone().into());
        assert_eq!(
            check_chunk(&source, 0, two.len() as i64, 1 << 26).unwrap(),
            Ok(false)
        );
        // A chunk cut inside its second page, a chunk past the data, a
        // negative offset, and a header cut short.
        assert!(check_chunk(&source, 0, two.len() as i64 - 1, 1 << 26).is_err());
        assert!(check_chunk(&source, 0, two.len() as i64 + 1, 1 << 26).is_err());
        assert!(check_chunk(&source, -1, 3, 1 << 26).is_err());
        for cut in 0..ok.len() - 4 {
            let source = Source::Bytes(ok[..cut].to_vec().into());
            assert!(check_chunk(&source, 0, cut as i64, 1 << 26).is_err() || cut == 0);
        }
        let negative = header(-5, 4);
        let source = Source::Bytes(negative.clone().into());
        assert!(check_chunk(&source, 0, negative.len() as i64, 1 << 26).is_err());
    }

    /// A page header of `page_type` with the given encoding in a data
    /// page header (field `outer`: 5 for v1, 8 for v2; its field `inner`),
    /// followed by `compressed` zero bytes of data.
    fn page(page_type: i64, data_header: Option<(u8, u8, i64)>, compressed: i64) -> Vec<u8> {
        fn zz(n: i64) -> u8 {
            let z = ((n << 1) ^ (n >> 63)) as u64;
            assert!(z < 0x80);
            z as u8
        }
        let mut h = vec![0x15, zz(page_type), 0x15, zz(16), 0x15, zz(compressed)];
        if let Some((outer, inner, encoding)) = data_header {
            h.extend([
                ((outer - 3) << 4) | 0x0c,
                (inner << 4) | 0x05,
                zz(encoding),
                0,
            ]);
        }
        h.push(0);
        h.extend(vec![0; compressed as usize]);
        h
    }

    fn check_pages(pages: &[Vec<u8>]) -> Result<(), String> {
        let data = pages.concat();
        let source = Source::Bytes(data.clone().into());
        match check_chunk(&source, 0, data.len() as i64, 1 << 20) {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(too_large)) => panic!("{too_large:?}"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn dictionary_encoded_pages_need_a_dictionary_page_before_them() {
        let dictionary = page(DICTIONARY_PAGE, None, 8);
        for encoding in DICTIONARY_ENCODINGS {
            let v1 = page(DATA_PAGE, Some((5, 2, encoding)), 4);
            let v2 = page(DATA_PAGE_V2, Some((8, 4, encoding)), 4);
            for data_page in [&v1, &v2] {
                let err = check_pages(std::slice::from_ref(data_page)).unwrap_err();
                assert!(
                    err.contains("at byte offset 0 is dictionary-encoded, but no dictionary page"),
                    "{err}"
                );
                let err = check_pages(&[page(DATA_PAGE, None, 2), data_page.clone()]).unwrap_err();
                assert!(err.contains("dictionary-encoded"), "{err}");
                check_pages(&[dictionary.clone(), data_page.clone(), data_page.clone()]).unwrap();
            }
            // The crate reads the header of the page's own type: a v2
            // header on a v1 page is not its encoding.
            check_pages(&[page(DATA_PAGE, Some((8, 4, encoding)), 4)]).unwrap();
            check_pages(&[page(DATA_PAGE_V2, Some((5, 2, encoding)), 4)]).unwrap();
        }
        // Plain and RLE data pages need none.
        check_pages(&[page(DATA_PAGE, Some((5, 2, 0)), 4)]).unwrap();
        check_pages(&[page(DATA_PAGE_V2, Some((8, 4, 3)), 4)]).unwrap();
    }

    #[test]
    fn known_fields_of_another_type_are_refused() {
        // Field 5 (the v1 data page header, a struct) declared as a binary
        // whose bytes the crate would read as that struct: a bool bomb in
        // its unknown field 9.
        let mut h = vec![0x15, 0x00, 0x15, 0x10, 0x15, 0x08];
        h.extend([0x28, 0x07, 0x99, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00]);
        let err = read_page_sizes(&mut &h[..]).unwrap_err();
        assert_eq!(
            err,
            "field 5 of PageHeader is binary, not the DataPageHeader the format defines"
        );
        // The statistics of a v2 data page header with `null_count` as a
        // string.
        let mut h = vec![0x15, 0x06, 0x15, 0x10, 0x15, 0x08];
        h.extend([0x5c, 0x8c, 0x38, 0x01, b'x', 0x00, 0x00, 0x00]);
        let err = read_page_sizes(&mut &h[..]).unwrap_err();
        assert_eq!(
            err,
            "field 3 of Statistics is binary, not the i64 the format defines"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut h = vec![0x1c; 10_000];
        h.push(0);
        assert!(read_page_sizes(&mut &h[..]).is_err());
    }
}
