//! Writes the seed corpora under `fuzz/seeds/<target>/`: real encodings
//! of small batches, in every form each decoder reads.
//!
//! ```sh
//! cargo run --manifest-path fuzz/Cargo.toml --example make_seeds
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::parquet::arrow::ArrowWriter;
use ::parquet::basic::{Compression as PqCompression, Encoding};
use ::parquet::file::properties::{WriterProperties, WriterVersion};
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{ArrayRef, FixedSizeListArray, Float32Array, ListArray, RecordBatch, UInt8Array};
use arrow_schema::{DataType, Field, Schema};
use hydron_codec::file::{self, FileOptions, Format};
use hydron_codec::fory::{self as hfory, Gf8Batch};
use hydron_codec::json;
use hydron_codec::parquet::{Compression, ParquetEncoder, ParquetOptions};
use hydron_core::{E8Root, Gf8, E8_ROOTS};

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    fs::write(dir.join(name), bytes).expect("write a seed");
}

/// A few fixed unit vectors with varied exponents, `-0.0` and a zero.
fn sample(n: usize) -> Vec<Gf8> {
    (0..n)
        .map(|i| {
            if i % 5 == 4 {
                return Gf8::ZERO;
            }
            let x = i as f32;
            let coords = [1.0 + x, -0.5 * x, 1e-3, -0.0, x * x, 3.0, -7.25, 1e-20 * x];
            Gf8::normalize(coords).expect("a finite non-zero vector")
        })
        .collect()
}

/// A Parquet file of one column `name` holding `array`, written by the
/// parquet crate itself (no hydron checksums), as other tools would.
fn foreign(name: &str, array: ArrayRef, props: WriterProperties) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        name,
        array.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![array]).expect("a record batch");
    let mut w = ArrowWriter::try_new(Vec::new(), schema, Some(props)).expect("a writer");
    w.write(&batch).expect("the batch is written");
    w.into_inner().expect("the writer finishes")
}

/// Rows as a plain `LIST<float>` column, nulls where `None`.
fn list_rows(rows: &[Option<Vec<Option<f32>>>]) -> ArrayRef {
    Arc::new(ListArray::from_iter_primitive::<Float32Type, _, _>(
        rows.iter().cloned(),
    ))
}

fn rows_of(vectors: &[Gf8]) -> Vec<Option<Vec<Option<f32>>>> {
    vectors
        .iter()
        .map(|g| Some(g.to_array().iter().map(|&x| Some(x)).collect()))
        .collect()
}

/// `n` vectors cycling through the E8 roots (they compress well, so large
/// seeds stay small).
fn roots_cycled(n: usize) -> Vec<Gf8> {
    (0..n).map(|i| E8_ROOTS[(i * 7) % 240]).collect()
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let dir = |name: &str| {
        let d = root.join(name);
        fs::create_dir_all(&d).expect("create the seed directory");
        d
    };
    let nan = Gf8::new_unchecked([f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let long = Gf8::new_unchecked([2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let roots: Vec<E8Root> = E8Root::all().collect();

    // fory_decode: the three message types, in every form fory writes.
    let d = dir("fory_decode");
    write(&d, "batch_empty", &hfory::encode_batch(&[]));
    write(&d, "batch_1_zero", &hfory::encode_batch(&[Gf8::ZERO]));
    write(&d, "batch_6", &hfory::encode_batch(&sample(6)));
    write(&d, "batch_roots_17", &hfory::encode_batch(&E8_ROOTS[..17]));
    write(
        &d,
        "batch_nan_and_long",
        &hfory::encode_batch(&[nan, long, Gf8::ZERO]),
    );
    write(&d, "codes_empty", &hfory::encode_codes(&[]));
    write(&d, "codes_all_240", &hfory::encode_codes(&roots));
    write(&d, "gf8_one", &hfory::encode_gf8(sample(2)[1]));
    write(&d, "gf8_nan", &hfory::encode_gf8(nan));
    let native = hfory::native_fory().expect("a native fory");
    let bytes = native
        .serialize(&Gf8Batch(sample(3)))
        .expect("fory serializes a batch");
    write(&d, "batch_native_3", &bytes);
    let bytes = native
        .serialize(&sample(2)[1])
        .expect("fory serializes a Gf8");
    write(&d, "gf8_native", &bytes);
    let mut consistent = fory::Fory::builder().xlang(true).compatible(false).build();
    hfory::register(&mut consistent).expect("register hydron's types");
    let bytes = consistent
        .serialize(&Gf8Batch(sample(3)))
        .expect("fory serializes a batch");
    write(&d, "batch_schema_consistent_3", &bytes);
    let bytes = consistent
        .serialize(&hfory::E8Codes(roots[100..110].to_vec()))
        .expect("fory serializes codes");
    write(&d, "codes_schema_consistent_10", &bytes);

    // file_decode: both container forms, several chunk sizes.
    let d = dir("file_decode");
    for (format, ext) in [(Format::Fory, "hyd"), (Format::JsonLines, "jsonl")] {
        for (n, chunk) in [(0, 65_536), (1, 65_536), (10, 3), (20, 7)] {
            let opts = FileOptions::new().with_chunk_vectors(chunk);
            let bytes = file::to_vec(&sample(n), format, opts).expect("valid vectors encode");
            write(&d, &format!("{n}_vectors_chunk_{chunk}.{ext}"), &bytes);
        }
    }
    let bytes =
        file::to_vec(&E8_ROOTS[..5], Format::Fory, FileOptions::new()).expect("roots encode");
    write(&d, "roots_5.hyd", &bytes);

    // json_decode: arrays, single vectors, JSON Lines, odd number syntax.
    let d = dir("json_decode");
    write(&d, "array_empty.json", b"[]");
    write(&d, "array_6.json", &json::to_vec(&sample(6)));
    write(&d, "gf8.json", &json::gf8_to_vec(sample(2)[1]));
    write(
        &d,
        "array_pretty.json",
        b"[\n  [ 1.0e0, 0, 0, 0, 0, 0, 0, 0 ],\n  [0.5,0.5,0.5,0.5,0.5,-0.5,-0.5,-0.5E-0],\n\t[-0.0,0,0,0,0,0,1E+0,1e-45]\n]\n",
    );
    let mut lines = Vec::new();
    for v in sample(4) {
        lines.extend_from_slice(&json::gf8_to_vec(v));
        lines.push(b'\n');
    }
    lines.extend_from_slice(b"\n  \r\n[2,0,0,0,0,0,0,0]\r\n[0,0,0,0,0,0,0,0]");
    write(&d, "lines_mixed.jsonl", &lines);
    write(
        &d,
        "numbers_edge.json",
        b"[[3.4028235e38,0,0,0,0,0,0,0],[1.17549435e-38,0,0,0,0,0,0,0.7071067811865476]]",
    );
    // parquet_decode: hydron's own files (vectors and codes) and other
    // writers' layouts.
    let d = dir("parquet_decode");
    let hydron = |v: &[Gf8], compression, rows| {
        let options = ParquetOptions::new()
            .with_compression(compression)
            .with_row_group_vectors(rows);
        let mut e = ParquetEncoder::new(Vec::new(), options).expect("an encoder");
        e.write(v).expect("valid vectors encode");
        e.finish().expect("the encoder finishes")
    };
    for (n, compression, rows, name) in [
        (0, Compression::Snappy, 1 << 18, "hydron_0_snappy"),
        (
            1,
            Compression::Uncompressed,
            1 << 18,
            "hydron_1_uncompressed",
        ),
        (7, Compression::Snappy, 3, "hydron_7_snappy_groups_of_3"),
        (7, Compression::Zstd(3), 1 << 18, "hydron_7_zstd"),
        (
            7,
            Compression::Uncompressed,
            2,
            "hydron_7_uncompressed_groups_of_2",
        ),
    ] {
        write(
            &d,
            &format!("{name}.parquet"),
            &hydron(&sample(n), compression, rows),
        );
    }
    write(
        &d,
        "hydron_1000_roots_zstd_groups_of_300.parquet",
        &hydron(&roots_cycled(1000), Compression::Zstd(3), 300),
    );
    write(
        &d,
        "hydron_1000_roots_snappy.parquet",
        &hydron(&roots_cycled(1000), Compression::Snappy, 1 << 18),
    );
    write(
        &d,
        "hydron_nan_and_long.parquet",
        &hydron(&[nan, long, Gf8::ZERO], Compression::Uncompressed, 1 << 18),
    );
    for (codes, compression, rows, name) in [
        (&roots[..0], Compression::Snappy, 1 << 18, "codes_0"),
        (
            &roots[..],
            Compression::Zstd(3),
            100,
            "codes_240_zstd_groups_of_100",
        ),
        (
            &roots[3..10],
            Compression::Uncompressed,
            1 << 18,
            "codes_7_uncompressed",
        ),
    ] {
        let options = ParquetOptions::new()
            .with_compression(compression)
            .with_row_group_vectors(rows);
        let mut e = ParquetEncoder::new_codes(Vec::new(), options).expect("an encoder");
        e.write_codes(codes).expect("codes encode");
        write(
            &d,
            &format!("{name}.parquet"),
            &e.finish().expect("the encoder finishes"),
        );
    }
    let small = || {
        WriterProperties::builder()
            .set_max_row_group_row_count(Some(5))
            .set_data_page_row_count_limit(3)
            .set_write_batch_size(2)
    };
    let plain_v1 = || small().set_dictionary_enabled(false).build();
    let plain_v2 = || {
        small()
            .set_dictionary_enabled(false)
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(PqCompression::SNAPPY)
            .build()
    };
    let dictionary = || small().build();
    let v = sample(12);
    write(
        &d,
        "list_plain_v1.parquet",
        &foreign("vector", list_rows(&rows_of(&v)), plain_v1()),
    );
    write(
        &d,
        "list_plain_v2_snappy.parquet",
        &foreign("embedding", list_rows(&rows_of(&v)), plain_v2()),
    );
    write(
        &d,
        "list_dictionary.parquet",
        &foreign("vector", list_rows(&rows_of(&v)), dictionary()),
    );
    let flat = Float32Array::from(v.iter().flat_map(|g| g.to_array()).collect::<Vec<_>>());
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let fsl: ArrayRef = Arc::new(FixedSizeListArray::new(item, 8, Arc::new(flat), None));
    write(
        &d,
        "fixed_size_list_v2.parquet",
        &foreign("vector", Arc::clone(&fsl), plain_v2()),
    );
    write(
        &d,
        "fixed_size_list_dictionary.parquet",
        &foreign("vector", fsl, dictionary()),
    );
    // Byte-stream-split pages (pyarrow's `use_byte_stream_split`), v1 and
    // v2: the fast path's third value encoding.
    let split = |version| {
        small()
            .set_dictionary_enabled(false)
            .set_writer_version(version)
            .set_encoding(Encoding::BYTE_STREAM_SPLIT)
            .build()
    };
    for (name, version) in [
        ("list_split_v1.parquet", WriterVersion::PARQUET_1_0),
        ("list_split_v2.parquet", WriterVersion::PARQUET_2_0),
    ] {
        write(
            &d,
            name,
            &foreign("vector", list_rows(&rows_of(&v)), split(version)),
        );
    }
    let mut with_nulls = rows_of(&v[..6]);
    with_nulls[2] = None;
    with_nulls[4].as_mut().expect("a row")[5] = None;
    write(
        &d,
        "list_nulls_v1.parquet",
        &foreign("vector", list_rows(&with_nulls), plain_v1()),
    );
    write(
        &d,
        "list_nulls_v2.parquet",
        &foreign("vector", list_rows(&with_nulls), plain_v2()),
    );
    let mut seven = rows_of(&v[..4]);
    seven[1].as_mut().expect("a row").pop();
    write(
        &d,
        "list_row_of_7.parquet",
        &foreign("vector", list_rows(&seven), plain_v1()),
    );
    let doubles = ListArray::from_iter_primitive::<Float64Type, _, _>(
        v[..3]
            .iter()
            .map(|g| Some(g.to_array().map(|x| Some(f64::from(x))))),
    );
    write(
        &d,
        "list_float64.parquet",
        &foreign("vector", Arc::new(doubles), plain_v1()),
    );
    let codes = UInt8Array::from((0..20u8).map(|i| i * 13 % 240).collect::<Vec<_>>());
    write(
        &d,
        "codes_foreign_dictionary.parquet",
        &foreign("code", Arc::new(codes), dictionary()),
    );
    lattice_seeds(&dir("lattice_decode"));
    println!("seeds written under {}", root.display());
}

/// lattice_decode: stored lattice codes, as fory messages (both struct
/// forms) and Parquet, in every scale mode and at 2 and 4 bits.
fn lattice_seeds(d: &Path) {
    use hydron_codec::quant::{self, CodesParams, CodesScale, LatticeCodes};
    use hydron_core::quant::{LatticeQuantizer, QuantCodes};

    let x: Vec<f32> = (0..60).map(|i| (i as f32 * 0.37).sin()).collect();
    let q = LatticeQuantizer::new(20, 2, 77).expect("a quantizer");
    let per_vector = LatticeCodes::from_quantizer(&q, q.encode(&x).expect("finite"))
        .expect("codes of a quantizer");
    let unit_q = q.clone().with_scale(hydron_core::quant::ScaleMode::Unit);
    let unit = LatticeCodes::from_quantizer(&unit_q, unit_q.encode(&x).expect("finite"))
        .expect("codes of a quantizer");
    let gf8_16 = LatticeCodes::from_gf8(&sample(9), 2).expect("16-bit codes");
    let gf8_32 = LatticeCodes::from_gf8(&sample(9), 4).expect("32-bit codes");
    let shell = LatticeCodes::new(
        CodesParams::new(9, 4, 3, true, CodesScale::PerVector).expect("parameters"),
        QuantCodes {
            codes: [0u32, 5, 1 << 28, 0xf000_0001]
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect(),
            scales: vec![1.0, 0.25],
        },
    )
    .expect("32-bit codes of dimension 9");
    let empty = LatticeCodes::from_gf8(&[], 2).expect("no codes");
    for (name, c) in [
        ("per_vector_20", &per_vector),
        ("unit_20", &unit),
        ("gf8_16", &gf8_16),
        ("gf8_32", &gf8_32),
        ("shell_9", &shell),
        ("empty", &empty),
    ] {
        let message = quant::encode(c).expect("a message");
        write(d, &format!("{name}.fory"), &message);
        let parquet = quant::parquet_to_bytes(
            c,
            ParquetOptions::new()
                .with_row_group_vectors(2)
                .with_compression(Compression::Uncompressed),
        )
        .expect("Parquet");
        write(d, &format!("{name}.parquet"), &parquet);
    }
    // The schema-consistent form: the 9-byte framing, then the same fields.
    let message = quant::encode(&gf8_16).expect("a message");
    let mut schema = vec![0x01, 0xff, 0x1b, 0xe3, 0x12, 0x1f, 0x9b, 0x8f, 0xbd];
    schema.extend_from_slice(&message[quant::COMPATIBLE_PREFIX.len()..]);
    write(d, "gf8_16_schema.fory", &schema);
}
