//! The E8P lattice quantizer (issue 21, step 1): one question per group.
//!
//! - `e8p_encode`: the exact block encoder on each available backend
//!   (`scalar`, `avx2+fma` with `--features simd` on a CPU with AVX2), per
//!   8-dim block of N(0, 1) data at the codebook's scale.
//! - `e8p_decode`: code → block.
//! - `quantizer_384`: `LatticeQuantizer` encode and decode of 384-dim
//!   Gaussian vectors (rotation and per-vector scale on), per vector; the
//!   `_into` entries write into buffers made once (no allocation).
//! - `search_1m_384`: `LatticeQuantizer::search` of one batch of 16
//!   queries (k = 10, L2 and inner product) over 1M codes of 384-dim
//!   vectors at 2 bits, on each available backend (`scalar`, `avx2+fma`),
//!   on all threads with `--features parallel` (the `one-thread` entries
//!   run in a pool of one thread). The codes are random (every 16-bit code
//!   is a codeword; the scales are random too): the search does the same
//!   work on any codes, and encoding 1M vectors would take seconds.
//!   Throughput is in vectors searched per query.
//!
//! ```text
//! cargo bench --bench quant                   # scalar encoder only
//! cargo bench --features simd --bench quant   # + AVX2
//! cargo bench --features simd,parallel --bench quant -- search   # + all cores
//! ```

mod common;

use std::hint::black_box;

use common::Rng;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hydron_core::batch::{self, Backend};
use hydron_core::quant::{e8p, LatticeQuantizer, Metric, QuantCodes, GAUSSIAN_SCALE};

/// Blocks per batch.
const BLOCKS: usize = 4096;

/// Approximately N(0, 1) coordinates (a sum of four uniforms, rescaled).
fn gaussian(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| (0..4).map(|_| rng.next_f32()).sum::<f32>() * (3.0f32 / 4.0).sqrt())
        .collect()
}

fn encode(c: &mut Criterion) {
    let mut rng = Rng(21);
    let flat = gaussian(&mut rng, 8 * BLOCKS);
    let blocks: Vec<[f32; 8]> = flat
        .chunks_exact(8)
        .map(|b| core::array::from_fn(|i| b[i] / GAUSSIAN_SCALE))
        .collect();
    let mut codes = vec![0u16; BLOCKS];
    let mut group = c.benchmark_group("e8p_encode");
    group.throughput(Throughput::Elements(BLOCKS as u64));
    for backend in batch::backends().filter(|b| *b != Backend::Portable) {
        group.bench_function(BenchmarkId::new(backend.name(), BLOCKS), |b| {
            b.iter(|| e8p::encode_into_with(backend, black_box(&blocks), &mut codes));
        });
    }
    group.finish();

    let mut out = vec![[0.0f32; 8]; BLOCKS];
    let mut group = c.benchmark_group("e8p_decode");
    group.throughput(Throughput::Elements(BLOCKS as u64));
    group.bench_function(BenchmarkId::from_parameter(BLOCKS), |b| {
        b.iter(|| e8p::decode_into(black_box(&codes), &mut out));
    });
    group.finish();
}

fn quantizer(c: &mut Criterion) {
    let dim = 384;
    let n = 256;
    let x = gaussian(&mut Rng(7), dim * n);
    let q = LatticeQuantizer::new(dim, 2, 1).expect("2 bits");
    let codes = q.encode(&x).expect("finite");
    let mut group = c.benchmark_group("quantizer_384");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("encode", |b| b.iter(|| q.encode(black_box(&x))));
    group.bench_function("decode", |b| b.iter(|| q.decode(black_box(&codes))));
    // Into buffers made once: the kernels without the allocation.
    let (mut bytes, mut scales) = (codes.codes.clone(), codes.scales.clone());
    group.bench_function("encode_into", |b| {
        b.iter(|| q.encode_into(black_box(&x), &mut bytes, &mut scales))
    });
    let mut out = vec![0.0f32; n * dim];
    group.bench_function("decode_into", |b| {
        b.iter(|| q.decode_into(black_box(&codes.codes), &codes.scales, &mut out))
    });
    group.finish();
}

fn search(c: &mut Criterion) {
    let dim = 384;
    let n = 1_000_000;
    let queries = 16;
    let q = LatticeQuantizer::new(dim, 2, 1).expect("2 bits");
    let mut rng = Rng(5);
    let codes = QuantCodes {
        codes: (0..n * q.code_size())
            .map(|_| ((rng.next_f32() + 1.0) * 128.0) as u8)
            .collect(),
        scales: (0..n).map(|_| 1.0 + 0.5 * rng.next_f32()).collect(),
    };
    let x = gaussian(&mut rng, dim * queries);
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread");
    let mut group = c.benchmark_group("search_1m_384");
    group.sample_size(10);
    group.throughput(Throughput::Elements((n * queries) as u64));
    for backend in batch::backends().filter(|b| *b != Backend::Portable) {
        for (metric, name) in [(Metric::L2, "l2"), (Metric::InnerProduct, "ip")] {
            let run = || {
                q.search_codes_with(
                    backend,
                    &codes.codes,
                    &codes.scales,
                    black_box(&x),
                    10,
                    metric,
                )
            };
            group.bench_function(
                BenchmarkId::new(format!("{name}/{}", backend.name()), queries),
                |b| {
                    b.iter(run);
                },
            );
            if cfg!(feature = "parallel") {
                group.bench_function(
                    BenchmarkId::new(format!("{name}/{}/one-thread", backend.name()), queries),
                    |b| b.iter(|| one_thread.install(run)),
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, encode, quantizer, search);
criterion_main!(benches);
