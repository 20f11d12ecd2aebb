//! The Parquet reader (`ParquetReader::from_bytes` under every policy,
//! `codes_from_bytes`) and the Arrow import (`arrow::vectors_from_arrow`,
//! `codes_from_arrow`) on arbitrary bytes: no panic (also none caught
//! inside hydron: see below), no allocation beyond `max_page_bytes` per
//! page, and whatever decodes is valid, agrees across policies and batch
//! sizes, and survives re-encoding with `ParquetEncoder`.
//!
//! The reader runs every call into the parquet crate under `catch_unwind`
//! and turns a panic into `CodecError::Parquet` ("the Parquet decoder
//! failed (...)"). For the fuzzer such a panic is a finding: libfuzzer-sys
//! installs a panic hook that aborts, and the hook runs before any
//! `catch_unwind` sees the panic, so a caught panic still ends the run as
//! a crash; the target also fails on the error text, should the hook ever
//! change.
#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::Arc;

use arrow_array::{make_array, Array, ArrayRef};
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field};
use common::{assert_valid, bits, decode_all_policies};
use hydron_codec::parquet::{
    self, Compression, ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader,
};
use hydron_codec::{arrow as harrow, CodecError, Policy};
use hydron_core::{E8Root, Gf8};
use libfuzzer_sys::fuzz_target;

/// Pages (and the footer) over this many bytes uncompressed are refused:
/// 4 MiB, so that what the parquet crate reserves for a page stays far
/// below `-rss_limit_mb=512`.
const MAX_PAGE_BYTES: u64 = 4 << 20;
/// `read_chunk` calls at most; a reader not done by then is left (its
/// batches are small, so this bounds the time, not the correctness).
const MAX_CHUNKS: usize = 4096;
/// What `panic_error` in hydron-codec/src/parquet/reader.rs writes.
const CAUGHT_PANIC: &str = "the Parquet decoder failed";

/// Why a read gave nothing: the reader's error, or the chunk bound.
#[derive(Debug)]
enum Stop {
    // Read only by `Debug`, in the messages of failed checks.
    Error(#[allow(dead_code)] CodecError),
    Bound,
}

fn check_error(e: CodecError) -> Stop {
    let text = e.to_string();
    assert!(
        !text.contains(CAUGHT_PANIC),
        "the parquet crate panicked (caught by hydron): {text}"
    );
    Stop::Error(e)
}

fn read_vectors(data: &[u8], policy: Policy, batch: usize) -> Result<Vec<Gf8>, Stop> {
    let options = ParquetReadOptions::new()
        .with_max_page_bytes(MAX_PAGE_BYTES)
        .with_batch_vectors(batch);
    let mut reader =
        ParquetReader::from_bytes(data.to_vec(), policy, options).map_err(check_error)?;
    let mut out = Vec::new();
    for _ in 0..MAX_CHUNKS {
        let before = out.len();
        let n = reader.read_chunk(&mut out).map_err(check_error)?;
        assert_eq!(out.len(), before + n, "read_chunk appends what it counts");
        if n == 0 {
            // Spent: it stays at the end.
            assert_eq!(reader.read_chunk(&mut out).map_err(check_error)?, 0);
            return Ok(out);
        }
    }
    Err(Stop::Bound)
}

fn read_codes(data: &[u8]) -> Result<Vec<E8Root>, Stop> {
    let options = ParquetReadOptions::new().with_max_page_bytes(MAX_PAGE_BYTES);
    let mut reader =
        ParquetReader::codes_from_bytes_with(data.to_vec(), options).map_err(check_error)?;
    let mut out = Vec::new();
    for _ in 0..MAX_CHUNKS {
        let before = out.len();
        let n = reader.read_codes_chunk(&mut out).map_err(check_error)?;
        assert_eq!(
            out.len(),
            before + n,
            "read_codes_chunk appends what it counts"
        );
        if n == 0 {
            return Ok(out);
        }
    }
    Err(Stop::Bound)
}

/// A compression for re-encoding, picked by the input.
fn compression(data: &[u8]) -> Compression {
    match data.len() % 3 {
        0 => Compression::Uncompressed,
        1 => Compression::Snappy,
        _ => Compression::Zstd(1),
    }
}

fn parquet_part(data: &[u8]) {
    let [strict, renormalized, trusted] =
        decode_all_policies(|p| read_vectors(data, p, 1000), "ParquetReader");
    // Trusted checks the least: if it fails, so does every policy; and
    // Renormalize accepts all that Strict does.
    if trusted.is_err() {
        assert!(
            strict.is_err() && renormalized.is_err(),
            "only Trusted failed"
        );
    }
    if renormalized.is_err() {
        assert!(strict.is_err(), "Strict accepted what Renormalize refused");
    }
    if let Ok(v) = &strict {
        // The batch size does not change what is read.
        let small = read_vectors(data, Policy::Strict, 3).expect("Strict read with batches of 3");
        assert_eq!(bits(&small), bits(v), "batches of 3");
        // ParquetEncoder writes it back; reading that gives the same bits.
        let options = ParquetOptions::new()
            .with_compression(compression(data))
            .with_row_group_vectors(7);
        let mut encoder = ParquetEncoder::new(Vec::new(), options).expect("an encoder");
        encoder.write(v).expect("valid vectors encode");
        let bytes = encoder.finish().expect("the encoder finishes");
        let again = parquet::from_bytes(bytes, Policy::Strict).expect("a re-encoded file decodes");
        assert_eq!(bits(&again), bits(v), "re-encoded");
    }

    if let Ok(codes) = read_codes(data) {
        let options = ParquetOptions::new()
            .with_compression(compression(data))
            .with_row_group_vectors(7);
        let mut encoder = ParquetEncoder::new_codes(Vec::new(), options).expect("an encoder");
        encoder.write_codes(&codes).expect("codes encode");
        let bytes = encoder.finish().expect("the encoder finishes");
        let again = read_codes(&bytes).expect("re-encoded codes decode");
        assert_eq!(again, codes, "re-encoded codes");
    }
}

/// Reads the input as a recipe for an Arrow array.
struct Recipe<'a> {
    data: &'a [u8],
}

impl Recipe<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head.to_vec()
    }

    /// A validity bitmap for `len` slots, from the input when `present`.
    fn nulls(&mut self, present: bool, len: usize) -> Option<Buffer> {
        present.then(|| {
            let mut bitmap = self.bytes(len.div_ceil(8));
            bitmap.resize(len.div_ceil(8), 0xff);
            Buffer::from_vec(bitmap)
        })
    }

    /// `n` float32 values (or float64 when `wide`) from the input, padded
    /// with zeros.
    fn floats(&mut self, n: usize, wide: bool, nulls: bool) -> ArrayData {
        let width = if wide { 8 } else { 4 };
        let mut bytes = self.bytes(n * width);
        bytes.resize(n * width, 0);
        let null_buffer = self.nulls(nulls, n);
        let kind = if wide {
            DataType::Float64
        } else {
            DataType::Float32
        };
        // Copied into arrow's aligned memory (a `Vec<u8>` is not aligned
        // for floats).
        ArrayData::builder(kind)
            .len(n)
            .add_buffer(Buffer::from_slice_ref(&bytes))
            .null_bit_buffer(null_buffer)
            .build()
            .expect("a primitive array of the right length is valid")
    }
}

/// Builds an Arrow array from the input and imports it. Every array is
/// validated in full by arrow-data first: hydron may assume a valid
/// layout (an invalid one is only reachable through `unsafe`).
fn arrow_part(data: &[u8]) {
    let mut r = Recipe { data };
    let kind = r.byte();
    let flags = r.byte();
    let rows = usize::from(r.byte() % 40);
    let offset = usize::from(r.byte() % 4);
    let total = rows + offset;
    let (list_nulls, item_nulls, wide) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0);
    let item = Arc::new(Field::new(
        "item",
        if wide {
            DataType::Float64
        } else {
            DataType::Float32
        },
        true,
    ));
    let built = match kind % 4 {
        0 => {
            // A fixed-size list: mostly of 8.
            let size = match flags >> 4 {
                s @ 0..=8 if flags & 8 != 0 => i32::from(s),
                _ => 8,
            };
            let nulls = r.nulls(list_nulls, total);
            let child = r.floats(total * size as usize, wide, item_nulls);
            ArrayData::builder(DataType::FixedSizeList(item, size))
                .len(rows)
                .offset(offset)
                .null_bit_buffer(nulls)
                .add_child_data(child)
                .build()
        }
        k @ (1 | 2) => {
            // A list (or large list) whose rows are mostly 8 long, with
            // offsets built from the input (so usually valid), sometimes
            // starting past zero.
            let start = usize::from(flags >> 5);
            let mut offsets = vec![start];
            for _ in 0..total {
                let len = match r.byte() {
                    b @ 0..=9 if flags & 8 != 0 => usize::from(b),
                    _ => 8,
                };
                offsets.push(offsets.last().unwrap() + len);
            }
            let values = offsets.last().unwrap() + usize::from(flags >> 7);
            let nulls = r.nulls(list_nulls, total);
            let child = r.floats(values, wide, item_nulls);
            let (kind, buffer) = if k == 1 {
                let o: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
                (DataType::List(item), Buffer::from_vec(o))
            } else {
                let o: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
                (DataType::LargeList(item), Buffer::from_vec(o))
            };
            ArrayData::builder(kind)
                .len(rows)
                .offset(offset)
                .add_buffer(buffer)
                .null_bit_buffer(nulls)
                .add_child_data(child)
                .build()
        }
        _ => {
            // Codes.
            let mut bytes = r.bytes(total);
            bytes.resize(total, 0);
            let nulls = r.nulls(list_nulls, total);
            ArrayData::builder(DataType::UInt8)
                .len(rows)
                .offset(offset)
                .add_buffer(Buffer::from_vec(bytes))
                .null_bit_buffer(nulls)
                .build()
        }
    };
    // `build` validates the layout and the values (offsets in bounds and
    // increasing); check it again in full, as the brief for callers says.
    let Ok(array_data) = built else {
        return;
    };
    array_data
        .validate_full()
        .expect("built ArrayData is valid in full");
    let array: ArrayRef = make_array(array_data);
    let [strict, renormalized, trusted] = decode_all_policies(
        |p| harrow::vectors_from_arrow(&*array, p),
        "vectors_from_arrow",
    );
    let values = harrow::vector_values(&*array);
    match (&values, &trusted) {
        (Ok(values), Ok(v)) => {
            assert_eq!(values.len(), array.len());
            let raw: Vec<[u32; 8]> = values.iter().map(|a| a.map(f32::to_bits)).collect();
            assert_eq!(raw, bits(v), "Trusted copies the values");
        }
        (Err(_), Err(_)) => {}
        (values, trusted) => panic!("vector_values {values:?} but Trusted {trusted:?}"),
    }
    if trusted.is_err() {
        assert!(strict.is_err() && renormalized.is_err());
    }
    if let Ok(v) = &renormalized {
        assert_valid(v, "vectors_from_arrow(Renormalize)");
    }
    // Slices read as slices of the whole.
    if let Ok(v) = &strict {
        if array.len() >= 2 {
            let part =
                harrow::vectors_from_arrow(&*array.slice(1, array.len() - 2), Policy::Strict)
                    .expect("a slice of a valid column decodes");
            assert_eq!(bits(&part), bits(&v[1..v.len() - 1]));
        }
    }
    if let Ok(codes) = harrow::codes_from_arrow(&*array) {
        assert_eq!(codes.len(), array.len());
        let again = harrow::codes_from_arrow(&harrow::codes_to_arrow(codes.clone()))
            .expect("exported codes import");
        assert_eq!(again, codes);
    }
}

fuzz_target!(|data: &[u8]| {
    parquet_part(data);
    arrow_part(data);
});
