//! All cores against one: each batch kernel on 1,000,000 vectors, in a
//! rayon pool of one thread and in the global pool (one thread per core),
//! in the same run; and the crossover sizes that set the thresholds in
//! `hydron_core::parallel`.
//!
//! - `parallel_1m/<kernel>`: `1-thread` runs the dispatched `batch`
//!   function inside `ThreadPoolBuilder::new().num_threads(1)` (so it stays
//!   serial); `N-threads` runs it in the global pool. Also `memcpy` (a
//!   plain copy of the same 32 MB, split the same way: the memory-bandwidth
//!   yardstick) and `file_load` (`file::load` of a warm 1M-vector binary
//!   file, strict).
//! - `crossover/<kernel>/<n>`: the backend kernel on `n` vectors, serially
//!   and split in two halves with `rayon::join`, for `n` from 8 times below
//!   to 8 times above each threshold of `hydron_core::parallel` (the
//!   lattice kernel's: from half to 32 times its threshold): where
//!   `split-2` becomes faster than `serial` is the size from which
//!   splitting pays. One kernel per threshold and each kernel that shares
//!   one: `nearest_roots` and `nearest_roots_checked`
//!   (`NEAREST_ROOTS_MIN_VECTORS`), `normalize` (`NORMALIZE_MIN_VECTORS`),
//!   `validate` and `copy_validated` (`VALIDATE_MIN_VECTORS`), `dot`
//!   (`DOT_MIN_VECTORS`), `lattice_points` (`LATTICE_MIN_VECTORS`).
//!
//! ```text
//! cargo bench --features parallel,simd --bench parallel
//! ```

mod common;

use std::hint::black_box;

use common::Rng;

use rayon::prelude::*;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::mem::MaybeUninit;
use std::time::Duration;

use hydron_core::batch;
use hydron_core::parallel::{
    DOT_MIN_VECTORS, LATTICE_MIN_VECTORS, NEAREST_ROOTS_MIN_VECTORS, NORMALIZE_MIN_VECTORS,
    VALIDATE_MIN_VECTORS,
};
use hydron_core::{E8Point, E8Root, Gf8};

const N: usize = 1_000_000;

fn pools() -> [(String, rayon::ThreadPool); 2] {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    let all = rayon::ThreadPoolBuilder::new()
        .build()
        .expect("a pool of the default size");
    let threads = all.current_num_threads();
    eprintln!(
        "hydron batch backend: {}; threads: {threads}",
        batch::backend()
    );
    [
        ("1-thread".to_owned(), one),
        (format!("{threads}-threads"), all),
    ]
}

fn parallel_1m(c: &mut Criterion) {
    let pools = pools();
    let mut rng = Rng(3);
    let raw = rng.arrays(N);
    let units = batch::scalar::normalize(&raw).expect("finite input");
    let unit_arrays = Gf8::slice_as_arrays(&units);
    let bytes: &[u8] = bytemuck::cast_slice(unit_arrays);
    let lattice_in: Vec<[f32; 8]> = raw.iter().map(|a| a.map(|x| x * 4.0)).collect();

    let mut roots = vec![E8Root::new(0).expect("code 0"); N];
    let mut normalized = vec![Gf8::ZERO; N];
    let mut dots = vec![0.0f32; N];
    let mut points = vec![E8Point::ORIGIN; N];
    let mut decoded: Vec<Gf8> = Vec::with_capacity(N);

    // One group per kernel, its two rows run back to back so that they see
    // the same machine state; the report's ratio is the speedup.
    let mut run = |kernel: &str, f: &mut (dyn FnMut() + Send)| {
        let mut group = c.benchmark_group(format!("parallel_1m/{kernel}"));
        group.throughput(Throughput::Elements(N as u64));
        group.sample_size(20);
        for (name, pool) in &pools {
            group.bench_function(name.as_str(), |b| b.iter(|| pool.install(&mut *f)));
        }
        group.finish();
    };
    run("nearest_roots", &mut || {
        batch::nearest_roots_into(black_box(&units), &mut roots);
    });
    // Raw arrays checked and quantized in one pass over memory; compare
    // with `nearest_roots` (already-checked vectors) and `validate`.
    run("nearest_roots_checked", &mut || {
        batch::nearest_roots_checked_into(black_box(unit_arrays), &mut roots)
            .expect("unit vectors");
    });
    run("normalize", &mut || {
        batch::normalize_into(black_box(&raw), &mut normalized).expect("finite input");
    });
    run("lattice_points", &mut || {
        batch::nearest_lattice_points_into(black_box(&lattice_in), &mut points).expect("in range");
    });
    run("validate", &mut || {
        batch::validate(black_box(unit_arrays)).expect("unit vectors");
    });
    run("dot", &mut || {
        batch::dot_into(units[0], black_box(&units), &mut dots)
    });
    run("copy_validated_uninit", &mut || {
        batch::copy_validated_uninit(black_box(bytes), decoded.spare_capacity_mut())
            .expect("unit vectors");
    });
    // The memory-bandwidth yardstick: a plain copy of the same 32 MB, in
    // pieces as the kernels split (serial in the one-thread pool).
    let mut copied = vec![[0.0f32; 8]; N];
    run("memcpy", &mut || {
        let piece = N.div_ceil(4 * rayon::current_num_threads());
        copied
            .par_chunks_mut(piece)
            .zip(black_box(&raw).par_chunks(piece))
            .for_each(|(to, from)| to.copy_from_slice(from));
    });
    // The container reader: a warm file of N vectors, loaded (and checked)
    // into a fresh output each time.
    #[cfg(feature = "fory")]
    {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("parallel.hyd");
        hydron_codec::file::save(&path, &units, hydron_codec::file::Format::Fory).expect("saved");
        run("file_load", &mut || {
            let loaded = hydron_codec::file::load(&path, hydron_codec::Policy::Strict);
            black_box(loaded.expect("a valid file"));
        });
    }
}

/// Runs `kernel` on the whole slice, or on its two halves with `rayon::join`.
fn halves<I: Sync, O: Send>(
    input: &[I],
    out: &mut [O],
    split: bool,
    kernel: &(impl Fn(&[I], &mut [O]) + Sync),
) {
    if split {
        let mid = input.len() / 2;
        let (in_a, in_b) = input.split_at(mid);
        let (out_a, out_b) = out.split_at_mut(mid);
        rayon::join(|| kernel(in_a, out_a), || kernel(in_b, out_b));
    } else {
        kernel(input, out);
    }
}

fn crossover(c: &mut Criterion) {
    let backend = batch::backend();
    let mut rng = Rng(4);
    // From 8 times below to 8 times above a threshold, by factors of 2.
    let around = |threshold: usize| (0..7).map(move |k| (threshold >> 3) << k);
    let max = [
        8 * NEAREST_ROOTS_MIN_VECTORS,
        8 * NORMALIZE_MIN_VECTORS,
        8 * VALIDATE_MIN_VECTORS,
        8 * DOT_MIN_VECTORS,
        32 * LATTICE_MIN_VECTORS,
    ]
    .into_iter()
    .max()
    .expect("thresholds");
    let raw = rng.arrays(max);
    let units = batch::scalar::normalize(&raw).expect("finite input");
    let unit_arrays = Gf8::slice_as_arrays(&units);
    let mut roots = vec![E8Root::new(0).expect("code 0"); max];
    let mut normalized = vec![Gf8::ZERO; max];
    let mut dots = vec![0.0f32; max];
    let mut points = vec![E8Point::ORIGIN; max];
    let mut slots = vec![MaybeUninit::<Gf8>::uninit(); max];
    let mut none = vec![(); max];

    let nearest = |v: &[Gf8], o: &mut [E8Root]| backend.nearest_roots_into(v, o);
    let nearest_checked = |a: &[[f32; 8]], o: &mut [E8Root]| {
        backend
            .nearest_roots_checked_into(a, o)
            .expect("unit vectors")
    };
    let normalize = |a: &[[f32; 8]], o: &mut [Gf8]| backend.normalize_into(a, o).unwrap();
    let validate = |a: &[[f32; 8]], _: &mut [()]| backend.validate(a).unwrap();
    let copy_validated = |a: &[[f32; 8]], o: &mut [MaybeUninit<Gf8>]| {
        backend
            .copy_validated_uninit(bytemuck::cast_slice(a), o)
            .expect("unit vectors");
    };
    let dot = |v: &[Gf8], o: &mut [f32]| backend.dot_into(units[0], v, o);
    let lattice =
        |a: &[[f32; 8]], o: &mut [E8Point]| backend.nearest_lattice_points_into(a, o).unwrap();

    let mut group = c.benchmark_group("crossover");
    // 98 rows: shorter runs than criterion's default keep the group to a
    // few minutes (each row is at most a few milliseconds of work).
    group.sample_size(30);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(2));
    for split in [false, true] {
        let name = if split { "split-2" } else { "serial" };
        for n in around(NEAREST_ROOTS_MIN_VECTORS) {
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("nearest_roots/{name}"), n), |b| {
                b.iter(|| halves(&units[..n], &mut roots[..n], split, &nearest));
            });
            group.bench_function(
                BenchmarkId::new(format!("nearest_roots_checked/{name}"), n),
                |b| b.iter(|| halves(&unit_arrays[..n], &mut roots[..n], split, &nearest_checked)),
            );
        }
        for n in around(NORMALIZE_MIN_VECTORS) {
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("normalize/{name}"), n), |b| {
                b.iter(|| halves(&raw[..n], &mut normalized[..n], split, &normalize));
            });
        }
        for n in around(VALIDATE_MIN_VECTORS) {
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("validate/{name}"), n), |b| {
                b.iter(|| halves(&unit_arrays[..n], &mut none[..n], split, &validate));
            });
            group.bench_function(BenchmarkId::new(format!("copy_validated/{name}"), n), |b| {
                b.iter(|| halves(&unit_arrays[..n], &mut slots[..n], split, &copy_validated));
            });
        }
        for n in around(DOT_MIN_VECTORS) {
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("dot/{name}"), n), |b| {
                b.iter(|| halves(&units[..n], &mut dots[..n], split, &dot));
            });
        }
        // The lattice kernel costs about 25 times less than when its
        // threshold was set, so its crossover is looked for higher: from
        // half the threshold to 32 times it.
        for n in (0..7).map(|k| (LATTICE_MIN_VECTORS / 2) << k) {
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("lattice_points/{name}"), n), |b| {
                b.iter(|| halves(&raw[..n], &mut points[..n], split, &lattice));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, parallel_1m, crossover);
criterion_main!(benches);
