//! Arrow and Parquet (issue 9): Arrow export and import cost the same for
//! 1k and 10M vectors (no copy), against the validated import that does
//! copy; Parquet write and read of 1M vectors, uncompressed and snappy,
//! against a plain copy of the same bytes.
//!
//! ```text
//! cargo bench --features simd,parquet --bench arrow
//! ```
//! The pyarrow comparison (the same table written and read by pyarrow in
//! the same run) is in `python/bench_arrow.py`.

mod common;

use std::hint::black_box;

use common::Rng;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hydron_codec::arrow;
use hydron_codec::parquet::{self, Compression, ParquetEncoder, ParquetOptions};
use hydron_codec::Policy;

fn arrow_export_import(c: &mut Criterion) {
    let mut group = c.benchmark_group("arrow");
    group.sample_size(10);
    for n in [1_000usize, 10_000_000] {
        let vectors = Rng(7).units(n);
        group.bench_function(format!("export/{n}"), |b| {
            b.iter_batched(
                || vectors.clone(),
                |v| black_box(arrow::vectors_to_arrow(v)),
                BatchSize::LargeInput,
            );
        });
        let array = arrow::vectors_to_arrow(vectors);
        group.bench_function(format!("import_in_place/{n}"), |b| {
            b.iter(|| black_box(arrow::vector_values(black_box(&array)).unwrap().len()));
        });
        group.bench_function(format!("import_validated_copy/{n}"), |b| {
            b.iter(|| black_box(arrow::vectors_from_arrow(&array, Policy::Strict).unwrap()));
        });
    }
    group.finish();
}

fn parquet_1m(c: &mut Criterion) {
    const N: usize = 1_000_000;
    let vectors = Rng(8).units(N);
    let mut group = c.benchmark_group("parquet_1m");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(32 * N as u64));
    group.bench_function("memcpy", |b| b.iter(|| black_box(vectors.clone())));
    for (name, compression) in [
        ("uncompressed", Compression::Uncompressed),
        ("snappy", Compression::Snappy),
    ] {
        let options = ParquetOptions::new().with_compression(compression);
        // Into memory the last write used, as `memcpy`'s clone reuses the
        // last one's (a fresh buffer of the file's size would be a fresh
        // mapping, and the write would time the kernel's page faults).
        let mut out = Vec::with_capacity(34 * N);
        let encode_into = |out: &mut Vec<u8>| {
            out.clear();
            let mut e = ParquetEncoder::new(out, options).unwrap();
            e.write(&vectors).unwrap();
            e.finish().unwrap();
        };
        encode_into(&mut out);
        let bytes = bytes::Bytes::from(out.clone());
        println!("parquet {name}: {} bytes for {N} vectors", bytes.len());
        group.bench_function(format!("write/{name}"), |b| {
            b.iter(|| {
                encode_into(&mut out);
                black_box(out.len())
            })
        });
        group.bench_function(format!("read/{name}"), |b| {
            b.iter(|| black_box(parquet::from_bytes(bytes.clone(), Policy::Strict).unwrap()));
        });
    }
    group.finish();
}

criterion_group!(benches, arrow_export_import, parquet_1m);
criterion_main!(benches);
