//! Parquet files: round trips, what other writers' layouts hydron reads,
//! hostile files (wrong types, nulls, wrong row lengths, truncation,
//! corruption, lying page headers, the decoder traps the fuzz target
//! found), and atomic saves. Lying footers are in `parquet_footer.rs`.
#![cfg(feature = "parquet")]

use std::sync::Arc;

use ::parquet::arrow::ArrowWriter;
use ::parquet::file::properties::WriterProperties;
use arrow_array::types::{Float32Type, Float64Type, Int32Type};
use arrow_array::{ArrayRef, FixedSizeListArray, Float32Array, ListArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use hydron_codec::parquet::{
    self, Compression, ParquetEncoder, ParquetOptions, ParquetReadOptions, ParquetReader,
    ParquetWriter,
};
use hydron_codec::{CodecError, Policy};
use hydron_core::{batch, Gf8};
use proptest::prelude::*;

/// `n` pseudo-random unit vectors (deterministic).
fn vectors(n: usize, seed: u64) -> Vec<Gf8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    (0..n)
        .map(|_| {
            Gf8::normalize([
                next(),
                next(),
                next(),
                next(),
                next(),
                next(),
                next(),
                next(),
            ])
            .unwrap()
        })
        .collect()
}

fn bits(v: &[Gf8]) -> Vec<[u32; 8]> {
    v.iter().map(|g| g.to_array().map(f32::to_bits)).collect()
}

fn encode(v: &[Gf8], options: ParquetOptions) -> Vec<u8> {
    let mut e = ParquetEncoder::new(Vec::new(), options).unwrap();
    e.write(v).unwrap();
    e.finish().unwrap()
}

fn decode(bytes: Vec<u8>) -> Result<Vec<Gf8>, CodecError> {
    parquet::from_bytes(bytes, Policy::Strict)
}

/// A Parquet file of one column `vector` holding `array`, written by the
/// parquet crate's own writer (no hydron checksums), as other tools would.
fn foreign(array: ArrayRef, props: Option<WriterProperties>) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "vector",
        array.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![array]).unwrap();
    let mut w = ArrowWriter::try_new(Vec::new(), schema, props).unwrap();
    w.write(&batch).unwrap();
    w.into_inner().unwrap()
}

/// Writer settings of other tools: the crate's defaults (dictionary
/// pages), plain pages in data page v1 and v2, and byte-stream-split pages
/// in v1 and v2, each with small row groups and pages.
fn writer_variants() -> Vec<WriterProperties> {
    use ::parquet::file::properties::WriterVersion;
    let small = || {
        WriterProperties::builder()
            .set_max_row_group_row_count(Some(1000))
            .set_data_page_row_count_limit(100)
            .set_write_batch_size(64)
    };
    vec![
        small().build(),
        small().set_dictionary_enabled(false).build(),
        small()
            .set_dictionary_enabled(false)
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(::parquet::basic::Compression::SNAPPY)
            .build(),
        small()
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .build(),
        small()
            .set_dictionary_enabled(false)
            .set_encoding(::parquet::basic::Encoding::BYTE_STREAM_SPLIT)
            .build(),
        small()
            .set_dictionary_enabled(false)
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(::parquet::basic::Compression::SNAPPY)
            .set_encoding(::parquet::basic::Encoding::BYTE_STREAM_SPLIT)
            .build(),
    ]
}

fn list_rows(rows: &[Vec<f32>]) -> ArrayRef {
    Arc::new(ListArray::from_iter_primitive::<Float32Type, _, _>(
        rows.iter()
            .map(|r| Some(r.iter().map(|&x| Some(x)).collect::<Vec<_>>())),
    ))
}

#[test]
fn round_trips_bit_exactly_in_every_compression_and_row_group_size() {
    let v = vectors(10_000, 1);
    for compression in [
        Compression::Uncompressed,
        Compression::Snappy,
        Compression::Zstd(3),
        Compression::Lz4,
        Compression::Gzip(6),
    ] {
        for rows in [1000, 4096, 1 << 18] {
            let options = ParquetOptions::new()
                .with_compression(compression)
                .with_row_group_vectors(rows);
            let bytes = encode(&v, options);
            assert_eq!(
                bits(&decode(bytes.clone()).unwrap()),
                bits(&v),
                "{compression}, {rows}"
            );
            let reader =
                ParquetReader::from_bytes(bytes, Policy::Strict, ParquetReadOptions::new())
                    .unwrap();
            assert_eq!(reader.row_groups(), 10_000usize.div_ceil(rows));
        }
    }
}

/// hydron writes the vector column's pages itself (`vector_pages.rs`):
/// the parquet crate's own Arrow reader (not hydron's fast path) reads
/// them back bit for bit, as the `FixedSizeList` of the embedded schema,
/// in every codec, across row groups written whole from the slice, from
/// gathered pieces, and pages of at most 20,000 rows; the offset index
/// lists every page; the file's layout matches `docs/format.md` §5.1.
#[test]
fn the_vector_pages_hydron_writes_read_back_in_the_parquet_crates_own_reader() {
    use ::parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
    use ::parquet::file::reader::{FileReader, SerializedFileReader};
    let v = vectors(45_001, 21);
    for compression in [
        Compression::Uncompressed,
        Compression::Snappy,
        Compression::Zstd(3),
        Compression::Lz4,
        Compression::Gzip(6),
    ] {
        let options = ParquetOptions::new()
            .with_compression(compression)
            .with_row_group_vectors(41_000);
        let mut e = ParquetEncoder::new(Vec::new(), options).unwrap();
        // Pieces smaller and larger than a row group.
        e.write(&v[..7]).unwrap();
        e.write(&v[7..41_003]).unwrap();
        e.write_vec(v[41_003..].to_vec()).unwrap();
        let bytes = bytes::Bytes::from(e.finish().unwrap());
        let options = ArrowReaderOptions::new()
            .with_offset_index_policy(::parquet::file::metadata::PageIndexPolicy::Required);
        let builder =
            ParquetRecordBatchReaderBuilder::try_new_with_options(bytes.clone(), options).unwrap();
        let groups: Vec<i64> = builder
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .collect();
        assert_eq!(groups, [41_000, 4_001], "{compression}");
        // Pages of 20,000, 20,000 and 1,000 rows, then one of 4,001.
        let offsets = builder.metadata().offset_index().unwrap();
        let pages: Vec<usize> = offsets
            .iter()
            .map(|g| g[0].page_locations().len())
            .collect();
        assert_eq!(pages, [3, 1], "{compression}");
        assert_eq!(
            builder.schema().field(0).data_type(),
            &hydron_codec::arrow::vector_data_type()
        );
        let mut read = Vec::new();
        for batch in builder.build().unwrap() {
            let batch = batch.unwrap();
            read.extend(
                hydron_codec::arrow::vectors_from_arrow(batch.column(0), Policy::Trusted).unwrap(),
            );
        }
        assert_eq!(bits(&read), bits(&v), "{compression}");

        // The first page: repetition levels as one bit-packed run of a
        // byte 0xfe per row, definition levels as one RLE run of ones.
        let reader = SerializedFileReader::new(bytes).unwrap();
        let mut pages = reader
            .get_row_group(1)
            .unwrap()
            .get_column_page_reader(0)
            .unwrap();
        let page = pages.get_next_page().unwrap().unwrap();
        let buf = page.buffer();
        let rep_len = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
        assert_eq!(
            &buf[4..7],
            &[0xc3, 0x3e, 0xfe],
            "{compression}: (4001 << 1) | 1, then 0xfe"
        );
        assert!(buf[7..4 + rep_len].iter().all(|&b| b == 0xfe));
        let def = &buf[4 + rep_len..];
        assert_eq!(
            &def[..8],
            &[4, 0, 0, 0, 0x90, 0xf4, 0x03, 1],
            "{compression}: 32008 << 1, then 1"
        );
        assert_eq!(def.len() - 8, 4_001 * 32);
    }
}

#[test]
fn codes_round_trip() {
    let v = vectors(5000, 2);
    let codes = batch::nearest_roots(&v);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.parquet");
    parquet::save_codes(
        &path,
        &codes,
        ParquetOptions::new().with_row_group_vectors(700),
    )
    .unwrap();
    assert_eq!(parquet::load_codes(&path).unwrap(), codes);
}

#[test]
fn reads_batch_by_batch_across_row_groups() {
    let v = vectors(1000, 3);
    let bytes = encode(&v, ParquetOptions::new().with_row_group_vectors(300));
    let opts = ParquetReadOptions::new().with_batch_vectors(128);
    let mut reader = ParquetReader::from_bytes(bytes, Policy::Strict, opts).unwrap();
    let mut out = Vec::new();
    let mut sizes = Vec::new();
    loop {
        let n = reader.read_chunk(&mut out).unwrap();
        if n == 0 {
            break;
        }
        sizes.push(n);
    }
    // The fast path reads a row group per batch (the Arrow path, for
    // layouts it refuses, would honour the batch size).
    assert_eq!(sizes, [300, 300, 300, 100]);
    assert_eq!(out, v);
    let rows: Vec<Vec<f32>> = v.iter().map(|g| g.to_array().to_vec()).collect();
    // Every other writer's layout is on the fast path too: dictionary
    // pages (the parquet crate's and pyarrow's default), plain pages in v1
    // and v2, and byte-stream-split pages (pyarrow's
    // `use_byte_stream_split`), split into pages of a few rows.
    for props in writer_variants() {
        let opts = ParquetReadOptions::new().with_batch_vectors(128);
        let bytes = foreign(list_rows(&rows), Some(props.clone()));
        let mut reader = ParquetReader::from_bytes(bytes, Policy::Strict, opts).unwrap();
        let mut out = Vec::new();
        let mut sizes = Vec::new();
        while let n @ 1.. = reader.read_chunk(&mut out).unwrap() {
            sizes.push(n);
        }
        assert_eq!(out, v, "{props:?}");
        assert_eq!(sizes, [1000], "{props:?}");
    }
}

#[test]
fn reads_plain_lists_and_fixed_size_lists_from_other_writers() {
    let v = vectors(100, 4);
    let rows: Vec<Vec<f32>> = v.iter().map(|g| g.to_array().to_vec()).collect();
    for props in writer_variants() {
        // A plain list, without hydron's checksums or field metadata.
        assert_eq!(
            decode(foreign(list_rows(&rows), Some(props.clone()))).unwrap(),
            v
        );
        // A nullable fixed-size list with nullable items (pyarrow's default).
        let item = Arc::new(Field::new("item", DataType::Float32, true));
        let flat = Float32Array::from(v.iter().flat_map(|g| g.to_array()).collect::<Vec<_>>());
        let fsl = FixedSizeListArray::new(item, 8, Arc::new(flat), None);
        assert_eq!(decode(foreign(Arc::new(fsl), Some(props))).unwrap(), v);
    }
}

#[test]
fn rows_of_seven_or_nine_values_are_errors_naming_the_row() {
    let v = vectors(50, 5);
    for len in [7, 9] {
        let mut rows: Vec<Vec<f32>> = v.iter().map(|g| g.to_array().to_vec()).collect();
        rows[37] = vec![0.0; len];
        let err = decode(foreign(list_rows(&rows), None)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("row 37 has {len} values; a vector has 8")
        );
    }
}

#[test]
fn row_numbers_count_across_batches_and_row_groups() {
    let v = vectors(3000, 6);
    let mut rows: Vec<Vec<f32>> = v.iter().map(|g| g.to_array().to_vec()).collect();
    rows[2345][3] = f32::NAN;
    // The crate's defaults, and every other writer layout (small pages).
    let variants = std::iter::once(WriterProperties::builder()).chain(
        writer_variants()
            .into_iter()
            .map(|props| props.into_builder()),
    );
    for props in variants {
        let props = props.set_max_row_group_row_count(Some(1000)).build();
        let bytes = foreign(list_rows(&rows), Some(props.clone()));
        let opts = ParquetReadOptions::new().with_batch_vectors(256);
        let mut reader = ParquetReader::from_bytes(bytes, Policy::Strict, opts).unwrap();
        let mut out = Vec::new();
        let err = loop {
            match reader.read_chunk(&mut out) {
                Ok(0) => panic!("no error"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(
            err.to_string(),
            "vector 2345: coordinate 3 is NaN",
            "{props:?}"
        );
        assert_eq!(
            reader.read_chunk(&mut out).unwrap(),
            0,
            "spent after an error"
        );
    }
}

#[test]
fn wrong_value_types_are_type_errors_when_opened() {
    let doubles = ListArray::from_iter_primitive::<Float64Type, _, _>([Some(vec![Some(1.0); 8])]);
    let err = decode(foreign(Arc::new(doubles), None)).unwrap_err();
    assert!(matches!(err, CodecError::WrongColumnType { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("column \"vector\" has type List("),
        "{err}"
    );
    let ints = ListArray::from_iter_primitive::<Int32Type, _, _>([Some(vec![Some(1); 8])]);
    let err = decode(foreign(Arc::new(ints), None)).unwrap_err();
    assert!(matches!(err, CodecError::WrongColumnType { .. }), "{err}");
    let scalar = Arc::new(Float32Array::from(vec![1.0f32]));
    let err = decode(foreign(scalar, None)).unwrap_err();
    assert!(matches!(err, CodecError::WrongColumnType { .. }), "{err}");
}

#[test]
fn a_file_without_a_usable_column_lists_every_column_with_its_type() {
    // `vector` is the column by name, but of doubles: no column is usable,
    // and the error names each one there.
    let doubles: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>([Some(
        vec![Some(1.0); 8],
    )]));
    let ids: ArrayRef = Arc::new(arrow_array::Int64Array::from(vec![7i64]));
    let batch = RecordBatch::try_from_iter([("id", ids), ("vector", doubles)]).unwrap();
    let mut w = ArrowWriter::try_new(Vec::new(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    let err = decode(w.into_inner().unwrap()).unwrap_err();
    assert!(matches!(err, CodecError::WrongColumnType { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("column \"vector\" has type List("),
        "{text}"
    );
    assert!(
        text.contains("(the columns: id (Int64), vector (List("),
        "{text}"
    );
}

#[test]
fn nulls_are_errors_naming_the_row_and_coordinate() {
    let rows: Vec<Option<Vec<Option<f32>>>> = vectors(10, 7)
        .iter()
        .map(|g| Some(g.to_array().iter().map(|&x| Some(x)).collect()))
        .collect();
    for props in writer_variants() {
        let mut rows = rows.clone();
        rows[4] = None;
        let list = ListArray::from_iter_primitive::<Float32Type, _, _>(rows.clone());
        let err = decode(foreign(Arc::new(list), Some(props.clone()))).unwrap_err();
        assert_eq!(err.to_string(), "row 4: the row is null");
        rows[4] = Some(vec![Some(0.0); 8]);
        rows[8].as_mut().unwrap()[6] = None;
        let list = ListArray::from_iter_primitive::<Float32Type, _, _>(rows);
        let err = decode(foreign(Arc::new(list), Some(props))).unwrap_err();
        assert_eq!(err.to_string(), "row 8: coordinate 6 is null");
    }
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = encode(
        &vectors(200, 8),
        ParquetOptions::new().with_row_group_vectors(64),
    );
    for cut in 0..bytes.len() {
        let result = decode(bytes[..cut].to_vec());
        assert!(result.is_err(), "cut at {cut} of {}", bytes.len());
    }
}

#[test]
fn changed_values_are_found_by_the_checksum_even_uncompressed() {
    let v = vectors(500, 9);
    let bytes = encode(
        &v,
        ParquetOptions::new().with_compression(Compression::Uncompressed),
    );
    // The float data starts after the header and levels; flip the lowest
    // bit of one float somewhere in the middle: still a unit vector, so
    // only the checksum can see it.
    let target = v[250].to_array()[3].to_le_bytes();
    let at = bytes
        .windows(4)
        .position(|w| w == target)
        .expect("the float is stored plainly");
    let mut bad = bytes.clone();
    bad[at] ^= 1;
    let err = decode(bad).unwrap_err();
    assert!(
        matches!(err, CodecError::ChecksumMismatch { row_group: 0, .. }),
        "{err}"
    );
    // A flip that also breaks the vector (its exponent) is still reported
    // as damage, not as the bad vector the damage made; the same file
    // without its checksums reports the vector.
    let mut broken = bytes.clone();
    broken[at + 3] ^= 0x01;
    let err = decode(broken).unwrap_err();
    assert!(
        matches!(err, CodecError::ChecksumMismatch { row_group: 0, .. }),
        "{err}"
    );
    let unsummed = foreign(
        Arc::new(hydron_codec::arrow::vectors_to_arrow(v.clone())),
        Some(WriterProperties::builder().build()),
    );
    let mut broken = unsummed.clone();
    let at = unsummed.windows(4).position(|w| w == target).unwrap();
    broken[at + 3] ^= 0x01;
    let err = decode(broken).unwrap_err();
    assert!(
        matches!(err, CodecError::InvalidVector { index: 250, .. }),
        "{err}"
    );
}

#[test]
fn corrupted_pages_are_errors_not_panics() {
    let v = vectors(2000, 10);
    for compression in [
        Compression::Snappy,
        Compression::Zstd(1),
        Compression::Uncompressed,
    ] {
        let bytes = encode(
            &v,
            ParquetOptions::new()
                .with_compression(compression)
                .with_row_group_vectors(500),
        );
        // Flip bytes through the data (the footer is the last part).
        let data_end = bytes.len() - 600;
        for at in (4..data_end).step_by(97) {
            let mut bad = bytes.clone();
            bad[at] ^= 0x5a;
            let _ = decode(bad); // any error, or an unchanged decode; never a panic
        }
    }
}

#[test]
fn a_page_claiming_two_gib_is_refused_before_any_allocation() {
    let v = vectors(10, 12);
    let bytes = encode(
        &v,
        ParquetOptions::new().with_compression(Compression::Snappy),
    );
    // The first data page header follows the magic: field 1 (type), then
    // field 2 uncompressed_page_size as an i32 zigzag varint. Replace it by
    // 2^31 - 1.
    assert_eq!(bytes[4], 0x15); // field 1, i32
    let mut i = 5;
    while bytes[i] & 0x80 != 0 {
        i += 1;
    }
    i += 1;
    assert_eq!(bytes[i], 0x15); // field 2, i32
    let mut end = i + 1;
    while bytes[end] & 0x80 != 0 {
        end += 1;
    }
    end += 1;
    let big = [0xfe, 0xff, 0xff, 0xff, 0x0f]; // zigzag(2^31 - 1)
    let mut bad = bytes[..=i].to_vec();
    bad.extend(big);
    bad.extend(&bytes[end..]);
    // The page moved: the footer's offsets now point a few bytes early, so
    // give the column chunk's real layout back by keeping the header length:
    // only test when the old varint had the same length.
    if end - i - 1 == big.len() {
        let err = decode(bad).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::PageTooLarge {
                    claimed: 2147483647,
                    ..
                }
            ),
            "{err}"
        );
    } else {
        let err = decode(bad).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::Parquet { .. } | CodecError::PageTooLarge { .. }
            ),
            "{err}"
        );
    }
}

#[cfg(unix)]
#[test]
fn saves_are_atomic_and_refuse_directories_and_special_files_are_not_opened_for_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.parquet");
    let v = vectors(100, 13);
    parquet::save(&path, &v, ParquetOptions::new()).unwrap();
    // A failed save (a NaN in a codes-file write, here: writing vectors to a
    // codes writer) leaves the old file.
    let mut w = ParquetWriter::create_codes(&path, ParquetOptions::new()).unwrap();
    assert!(w.write(&v).is_err());
    assert!(w.finish().is_err());
    assert_eq!(parquet::load(&path, Policy::Strict).unwrap(), v);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    assert!(ParquetWriter::create(dir.path(), ParquetOptions::new()).is_err());
    // A FIFO is refused by the reader before it is opened (no hang).
    let fifo = dir.path().join("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let err = ParquetReader::open(&fifo, Policy::Strict).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    let err = ParquetReader::open("/dev/zero", Policy::Strict).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn any_batch_round_trips(n in 0usize..3000, seed in any::<u64>(), rows in 1usize..2000, zero in any::<bool>()) {
        let mut v = vectors(n, seed);
        if zero && n > 0 {
            v[n / 2] = Gf8::ZERO;
        }
        let bytes = encode(&v, ParquetOptions::new().with_row_group_vectors(rows));
        prop_assert_eq!(bits(&decode(bytes).unwrap()), bits(&v));
    }
}

#[test]
fn dictionary_pages_with_runs_read_bit_exactly() {
    // Few distinct coordinates: a tiny dictionary, long RLE runs of the
    // zero index, and bit-packed groups between them.
    let v: Vec<Gf8> = (0..50).flat_map(|_| hydron_core::E8_ROOTS).collect();
    let rows: Vec<Vec<f32>> = v.iter().map(|g| g.to_array().to_vec()).collect();
    for props in [
        None,
        Some(
            WriterProperties::builder()
                .set_writer_version(::parquet::file::properties::WriterVersion::PARQUET_2_0)
                .set_data_page_row_count_limit(333)
                .build(),
        ),
    ] {
        let bytes = foreign(list_rows(&rows), props);
        let opts = ParquetReadOptions::new().with_batch_vectors(1000);
        let mut reader = ParquetReader::from_bytes(bytes, Policy::Strict, opts).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            reader.read_chunk(&mut out).unwrap(),
            v.len(),
            "one row group, fast"
        );
        assert_eq!(reader.read_chunk(&mut out).unwrap(), 0);
        assert_eq!(
            bytemuck::cast_slice::<Gf8, u32>(&out),
            bytemuck::cast_slice::<Gf8, u32>(&v)
        );
    }
}

/// Runs `f` and returns how many panics happened on this thread meanwhile,
/// caught or not: hydron catches panics inside the parquet crate and turns
/// them into errors, but each is a bug to guard against (a program built
/// with `panic = "abort"` cannot catch it).
fn panics_during(f: impl FnOnce()) -> usize {
    use std::cell::Cell;
    use std::sync::Once;
    thread_local! {
        static PANICS: Cell<usize> = const { Cell::new(0) };
    }
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            previous(info);
        }));
    });
    let before = PANICS.with(Cell::get);
    f();
    PANICS.with(Cell::get) - before
}

/// Reads `bytes` every way the `parquet_decode` fuzz target does; the
/// vector reader's result under Strict.
fn read_every_way(bytes: &[u8]) -> Result<Vec<Gf8>, CodecError> {
    let mut strict = None;
    for policy in [Policy::Strict, Policy::Renormalize, Policy::Trusted] {
        let opts = ParquetReadOptions::new().with_max_page_bytes(4 << 20);
        let result = ParquetReader::from_bytes(bytes.to_vec(), policy, opts).and_then(|mut r| {
            let mut out = Vec::new();
            while r.read_chunk(&mut out)? > 0 {}
            Ok(out)
        });
        if let Err(e) = &result {
            assert!(!e.to_string().contains("decoder failed"), "{e}");
        }
        strict.get_or_insert(result);
    }
    if let Err(e) = ParquetReader::codes_from_bytes(bytes.to_vec()).and_then(|mut r| {
        let mut out = Vec::new();
        while r.read_codes_chunk(&mut out)? > 0 {}
        Ok(out)
    }) {
        assert!(!e.to_string().contains("decoder failed"), "{e}");
    }
    strict.unwrap()
}

/// [`read_every_way`] of `bytes`, with no panic on the way.
fn read_without_a_panic(bytes: &[u8]) -> Result<Vec<Gf8>, CodecError> {
    let mut result = None;
    assert_eq!(panics_during(|| result = Some(read_every_way(bytes))), 0);
    result.unwrap()
}

/// Found by the `parquet_decode` fuzz target: a footer whose embedded Arrow
/// schema (`ARROW:schema`) has a field of type `NONE`, which arrow-ipc's
/// schema decoder meets with `unimplemented!` (a panic). hydron checks the
/// schema first and reports it.
#[test]
fn a_malformed_embedded_arrow_schema_is_an_error_without_a_panic() {
    let bytes = include_bytes!("regressions/parquet_decode-arrow-schema-type-none");
    let err = read_without_a_panic(bytes).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Parquet: malformed footer: the embedded Arrow schema (ARROW:schema) is malformed: field 0 (\"vector\")"),
        "{err}"
    );
}

/// Found by the `parquet_decode` fuzz target: a column chunk whose data
/// page is dictionary-encoded with no dictionary page before it, on which
/// the parquet crate's column reader panics ("Decoder for dict should have
/// been set"). hydron's page header check refuses it first.
#[test]
fn a_dictionary_encoded_page_without_a_dictionary_is_an_error_without_a_panic() {
    let bytes = include_bytes!("regressions/parquet_decode-dictionary-page-missing");
    let err = read_without_a_panic(bytes).unwrap_err();
    assert!(
        err.to_string()
            .contains("is dictionary-encoded, but no dictionary page comes before it"),
        "{err}"
    );
}

/// The embedded schema check passes every well-formed schema: other
/// columns of many Arrow types beside the vectors (dictionary, decimal,
/// timestamps with a time zone, structs, maps, large lists), as pyarrow
/// would write them, read as before and without a panic.
#[test]
fn files_whose_other_columns_have_many_arrow_types_still_read() {
    use arrow_array::builder::{Int32Builder, MapBuilder, StringBuilder};
    use arrow_array::types::Int32Type as I32;
    use arrow_array::{
        Decimal128Array, DictionaryArray, Int64Array, LargeListArray, StructArray,
        TimestampMillisecondArray,
    };
    let v = vectors(6, 14);
    let n = v.len();
    let flat = Float32Array::from(v.iter().flat_map(|g| g.to_array()).collect::<Vec<_>>());
    let item = Arc::new(Field::new("item", DataType::Float32, false));
    let vector: ArrayRef = Arc::new(FixedSizeListArray::new(item, 8, Arc::new(flat), None));
    let words: DictionaryArray<I32> = ["a", "b", "a", "c", "b", "a"].into_iter().collect();
    let decimal = Decimal128Array::from(vec![1i128; n])
        .with_precision_and_scale(20, 3)
        .unwrap();
    let time = TimestampMillisecondArray::from(vec![0i64; n]).with_timezone("+01:00");
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![7i64; n]));
    let pair = StructArray::from(vec![(
        Arc::new(Field::new("id", DataType::Int64, false)),
        Arc::clone(&ids),
    )]);
    let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    for i in 0..n {
        map.keys().append_value("k");
        map.values().append_value(i as i32);
        map.append(true).unwrap();
    }
    let large = LargeListArray::from_iter_primitive::<Int32Type, _, _>(
        (0..n).map(|i| Some(vec![Some(i as i32)])),
    );
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("id", ids),
        ("word", Arc::new(words)),
        ("price", Arc::new(decimal)),
        ("at", Arc::new(time)),
        ("pair", Arc::new(pair)),
        ("map", Arc::new(map.finish())),
        ("large", Arc::new(large)),
        ("vector", vector),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut w = ArrowWriter::try_new(Vec::new(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    let bytes = w.into_inner().unwrap();
    assert_eq!(read_without_a_panic(&bytes).unwrap(), v);
}

/// Found by the `parquet_decode` fuzz target: a nullable flat column (a
/// code column as pyarrow writes it) whose definition levels hold a
/// bit-packed run claiming more bytes than the page has; the parquet
/// crate's null-mask decoder copies bits past the data (a panic in
/// arrow-buffer). hydron walks the levels first.
#[test]
fn a_bit_packed_level_run_past_its_page_is_an_error_without_a_panic() {
    let bytes = include_bytes!("regressions/parquet_decode-null-mask-bit-packed-run-past-the-page");
    let mut codes = None;
    let panics = panics_during(|| {
        let _ = read_every_way(bytes);
        codes = Some(
            ParquetReader::codes_from_bytes(bytes.to_vec()).and_then(|mut r| {
                let mut out = Vec::new();
                while r.read_codes_chunk(&mut out)? > 0 {}
                Ok(out)
            }),
        );
    });
    assert_eq!(panics, 0);
    let err = codes.unwrap().unwrap_err();
    assert!(
        err.to_string()
            .contains("definition levels: a bit-packed run of"),
        "{err}"
    );
}

/// A nullable code column with nulls and without (pyarrow's layout) reads
/// through the level check, in every page layout: nulls are an error
/// naming the row, the rest reads.
#[test]
fn nullable_code_columns_from_other_writers_read() {
    use arrow_array::UInt8Array;
    let write = |codes: UInt8Array, props: Option<WriterProperties>| {
        let schema = Arc::new(Schema::new(vec![Field::new("code", DataType::UInt8, true)]));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(codes)]).unwrap();
        let mut w = ArrowWriter::try_new(Vec::new(), schema, props).unwrap();
        w.write(&batch).unwrap();
        w.into_inner().unwrap()
    };
    let read = |bytes: Vec<u8>| {
        ParquetReader::codes_from_bytes(bytes).and_then(|mut r| {
            let mut out = Vec::new();
            while r.read_codes_chunk(&mut out)? > 0 {}
            Ok(out)
        })
    };
    // And `DELTA_BINARY_PACKED` (v1 and v2 pages), whose headers the level
    // pass walks: valid ones read.
    let delta = |version| {
        WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_encoding(::parquet::basic::Encoding::DELTA_BINARY_PACKED)
            .set_data_page_row_count_limit(100)
            .set_write_batch_size(64)
            .set_writer_version(version)
            .build()
    };
    use ::parquet::file::properties::WriterVersion::{PARQUET_1_0, PARQUET_2_0};
    for props in writer_variants()
        .into_iter()
        .chain([delta(PARQUET_1_0), delta(PARQUET_2_0)])
    {
        let all: Vec<u8> = (0..300).map(|i| (i % 240) as u8).collect();
        let codes = read(write(UInt8Array::from(all.clone()), Some(props.clone()))).unwrap();
        assert_eq!(codes.iter().map(|c| c.code()).collect::<Vec<_>>(), all);
        let mut with_null: Vec<Option<u8>> = all.iter().map(|&c| Some(c)).collect();
        with_null[123] = None;
        let err = read(write(UInt8Array::from(with_null), Some(props))).unwrap_err();
        assert_eq!(err.to_string(), "row 123: the row is null");
    }
}

/// A v1 data page whose levels are in the deprecated `BIT_PACKED`
/// encoding and claim more bytes than the page has: the parquet crate
/// slices them out of the page without a check (a panic); hydron walks
/// the levels first. The page is made from a plain file of 10 rows by
/// rewriting its header: both level encodings RLE → BIT_PACKED, and
/// 80 values → 8 191 (the same number of bytes each).
#[test]
fn bit_packed_levels_longer_than_their_page_are_an_error_without_a_panic() {
    let v = vectors(10, 15);
    let rows: Vec<Vec<f32>> = v.iter().map(|g| g.to_array().to_vec()).collect();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .build();
    let bytes = foreign(list_rows(&rows), Some(props));
    assert_eq!(decode(bytes.clone()).unwrap(), v);
    // num_values 80 (zigzag 160), encoding PLAIN, definition and
    // repetition levels RLE (zigzag 6).
    let header = [0x15, 0xa0, 0x01, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06];
    let at = bytes[..64]
        .windows(header.len())
        .position(|w| w == header)
        .expect("the first data page header");
    let mut bad = bytes.clone();
    bad[at + 1..at + 3].copy_from_slice(&[0xfe, 0x7f]); // 8191
    bad[at + 6] = 0x08; // BIT_PACKED
    bad[at + 8] = 0x08;
    let err = read_without_a_panic(&bad).unwrap_err();
    assert!(
        err.to_string()
            .contains("8191 bit-packed repetition levels need 1024 bytes"),
        "{err}"
    );
    // Bit-packed levels that fit are read (here as what they now say).
    let mut fits = bytes.clone();
    fits[at + 6] = 0x08;
    fits[at + 8] = 0x08;
    assert_eq!(panics_during(|| drop(read_every_way(&fits))), 0);
}

/// Found by the `parquet_decode` fuzz target: a level stream whose run
/// header is a varint of more than 10 bytes; the parquet crate's
/// `get_vlq_int` panics on it ("attempt to shift left with overflow", or
/// its length assertion). hydron walks the level streams of every row
/// group the fast path does not read before the crate decodes them.
#[test]
fn a_level_run_header_over_10_bytes_is_an_error_without_a_panic() {
    let bytes = include_bytes!("regressions/parquet_decode-level-run-header-over-10-bytes");
    let err = read_without_a_panic(bytes).unwrap_err();
    assert!(
        err.to_string()
            .contains("is a varint of more than 10 bytes"),
        "{err}"
    );
}

/// Found by the `parquet_decode` fuzz target: a data page in
/// `BYTE_STREAM_SPLIT` encoding whose values section is shorter than the
/// values the page holds; the parquet crate's decoder indexes past it
/// ("index out of bounds" in `join_streams_const`). hydron's level pass
/// counts the page's values and refuses it first.
#[test]
fn byte_stream_split_values_shorter_than_their_count_are_an_error_without_a_panic() {
    let bytes = include_bytes!("regressions/parquet_decode-byte-stream-split-values-short");
    let mut result = None;
    let panics = panics_during(|| {
        result = Some(
            ParquetReader::codes_from_bytes(bytes.to_vec()).and_then(|mut r| {
                let mut out = Vec::new();
                while r.read_codes_chunk(&mut out)? > 0 {}
                Ok(out)
            }),
        );
        let _ = read_every_way(bytes);
    });
    assert_eq!(panics, 0);
    let err = result.unwrap().unwrap_err();
    assert!(
        err.to_string().contains("BYTE_STREAM_SPLIT values"),
        "{err}"
    );
}

/// A file (found by the fuzz target) whose definition levels hold 81
/// where the column's maximum is 3. The parquet crate does not refuse
/// such levels: its record reader returned rows that depended on the batch
/// size (a zero vector first with batches of 3, another vector with
/// batches of 1,000), and a vector where pyarrow finds none. hydron checks
/// the levels' range before the crate reads them.
#[test]
fn levels_above_the_maximum_are_an_error_whatever_the_batch_size() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/regressions/parquet_decode-levels-above-the-maximum"
    );
    let bytes = std::fs::read(path).unwrap();
    for batch in [1, 3, 1000] {
        let options = ParquetReadOptions::new().with_batch_vectors(batch);
        let read = ParquetReader::from_bytes(bytes.clone(), Policy::Strict, options).and_then(
            |mut reader| {
                let mut out = Vec::new();
                while reader.read_chunk(&mut out)? > 0 {}
                Ok(out)
            },
        );
        let err = read.unwrap_err().to_string();
        assert!(
            err.contains("definition levels: level 81")
                && err.contains("above the column's maximum 3"),
            "batches of {batch}: {err}"
        );
    }
}
