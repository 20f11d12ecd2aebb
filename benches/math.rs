//! The math kernels: one question per group, every path compared in one
//! run, with element throughput.
//!
//! - `nearest_root`: the closed form against brute force over the 240
//!   roots, per vector, and the dispatched batch kernel for scale.
//! - `batch_*`: each batch kernel on every backend this build and CPU can
//!   run (`scalar`, the portable `wide-…` one with `--features simd`, and
//!   `avx2+fma` when detected), then the dispatched function.
//! - `batch_lattice`: the E8 lattice decoder (the old `f64` one as a
//!   baseline, `E8Point::nearest` per vector, each backend, dispatched)
//!   next to the nearest-root kernel (dispatched and scalar), per vector.
//! - `spherical_mean`: the weighted Karcher mean of the issue-10 rim set
//!   and of 10 000 points up to 1.5 rad from a pole.
//! - `validate_32mb`: a memcpy of 32 MB of vectors against memcpy +
//!   validation, the cost of a validated decode over a trusting one.
//! - `per_vector`: `dot`, `Gf8::normalize`, add-then-renormalize.
//! - `sphere_geodesic`, `sphere_geodesic_to`, `sphere_slerp`,
//!   `sphere_slerp_to`: the sphere kernels (pairwise, and one vector
//!   against many) on 4096 pairs: the per-vector method in a loop, every
//!   backend, the dispatched function (and, for the geodesic distance, its
//!   checked form on raw coordinates, which Python calls).
//! - `sphere_1m`: the same kernels on 2^20 pairs (64 MB of input, past the
//!   caches): the scalar backend, the dispatched backend on one thread, and
//!   the dispatched function (across threads with `--features parallel`),
//!   the sizes of python/bench.py's numpy comparison.
//!
//! ```text
//! cargo bench --bench math                      # scalar only
//! cargo bench --features simd --bench math      # + SIMD backends
//! cargo bench --features simd,parallel --bench math -- sphere   # + threads
//! ```

mod common;
// The lattice decoder before its `f32` fast path, as the baseline row.
#[path = "../hydron-core/tests/common/old_lattice.rs"]
mod old_lattice;

use std::hint::black_box;

use common::Rng;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use hydron_core::batch::{self, Backend, PerRow};
use hydron_core::{E8Point, E8Root, Gf8};

/// Vectors per batch: 128 KiB of input, which stays in L2.
const BATCH: usize = 4096;

fn announce_backend() {
    let available: Vec<&str> = batch::backends().map(Backend::name).collect();
    eprintln!(
        "hydron batch backend: {} (available: {})",
        batch::backend(),
        available.join(", ")
    );
}

fn nearest_root(c: &mut Criterion) {
    announce_backend();
    // As many vectors as the batch groups: with fewer, the branch
    // predictor learns the closed form's data-dependent branches across
    // iterations and flatters it.
    let vectors = Rng(1).units(BATCH);
    let mut group = c.benchmark_group("nearest_root");
    group.throughput(Throughput::Elements(vectors.len() as u64));
    group.bench_function("closed_form", |b| {
        b.iter(|| {
            for v in black_box(&vectors) {
                black_box(v.nearest_root());
            }
        });
    });
    let mut roots = vec![E8Root::new(0).expect("code 0"); vectors.len()];
    group.bench_function(format!("batch-{}", batch::backend()), |b| {
        b.iter(|| batch::nearest_roots_into(black_box(&vectors), &mut roots));
    });
    group.bench_function("brute_force", |b| {
        b.iter(|| {
            for v in black_box(&vectors) {
                black_box(E8Root::nearest_brute_force(*v));
            }
        });
    });
    group.finish();
}

fn batch_kernels(c: &mut Criterion) {
    let mut rng = Rng(2);
    let raw = rng.arrays(BATCH);
    let units = rng.units(BATCH);
    let unit_arrays = Gf8::slice_as_arrays(&units);
    let query = units[0];
    let backends: Vec<Backend> = batch::backends().collect();
    let dispatched = format!("dispatched-{}", batch::backend());

    let mut group = c.benchmark_group("batch_nearest_roots");
    group.throughput(Throughput::Elements(BATCH as u64));
    let mut roots = vec![E8Root::new(0).expect("code 0"); BATCH];
    for &backend in &backends {
        group.bench_function(BenchmarkId::new(backend.name(), BATCH), |b| {
            b.iter(|| backend.nearest_roots_into(black_box(&units), &mut roots));
        });
    }
    group.bench_function(BenchmarkId::new(&dispatched, BATCH), |b| {
        b.iter(|| batch::nearest_roots_into(black_box(&units), &mut roots));
    });
    // Raw arrays, validated in the same pass (what Python calls by default).
    group.bench_function(
        BenchmarkId::new(format!("{dispatched}-checked"), BATCH),
        |b| {
            b.iter(|| batch::nearest_roots_checked_into(black_box(unit_arrays), &mut roots));
        },
    );
    group.finish();

    let mut group = c.benchmark_group("batch_normalize");
    group.throughput(Throughput::Elements(BATCH as u64));
    let mut normalized = vec![Gf8::ZERO; BATCH];
    for &backend in &backends {
        group.bench_function(BenchmarkId::new(backend.name(), BATCH), |b| {
            b.iter(|| backend.normalize_into(black_box(&raw), &mut normalized));
        });
    }
    group.bench_function(BenchmarkId::new(&dispatched, BATCH), |b| {
        b.iter(|| batch::normalize_into(black_box(&raw), &mut normalized));
    });
    group.finish();

    let mut group = c.benchmark_group("batch_validate");
    group.throughput(Throughput::Elements(BATCH as u64));
    for &backend in &backends {
        group.bench_function(BenchmarkId::new(backend.name(), BATCH), |b| {
            b.iter(|| backend.validate(black_box(unit_arrays)));
        });
    }
    group.bench_function(BenchmarkId::new(&dispatched, BATCH), |b| {
        b.iter(|| batch::validate(black_box(unit_arrays)));
    });
    group.finish();

    let mut group = c.benchmark_group("batch_dot");
    group.throughput(Throughput::Elements(BATCH as u64));
    let mut dots = vec![0.0f32; BATCH];
    for &backend in &backends {
        group.bench_function(BenchmarkId::new(backend.name(), BATCH), |b| {
            b.iter(|| backend.dot_into(black_box(query), black_box(&units), &mut dots));
        });
    }
    group.bench_function(BenchmarkId::new(&dispatched, BATCH), |b| {
        b.iter(|| batch::dot_into(black_box(query), black_box(&units), &mut dots));
    });
    group.finish();

    // The lattice decoder next to the nearest-root kernel, in one group so
    // that one run gives the ratio the lattice kernel is held to (at most
    // 1.5x the dispatched nearest-root kernel per vector): the old `f64`
    // decoder as the baseline, `E8Point::nearest` per vector, every
    // backend, the dispatched function, then the nearest-root rows.
    let mut group = c.benchmark_group("batch_lattice");
    let lattice_input: Vec<[f32; 8]> = raw.iter().map(|a| a.map(|x| x * 4.0)).collect();
    let mut points = vec![E8Point::ORIGIN; BATCH];
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function(BenchmarkId::new("old-f64-per-vector", BATCH), |b| {
        b.iter(|| {
            for x in black_box(&lattice_input) {
                let _ = black_box(old_lattice::old_nearest(x));
            }
        });
    });
    group.bench_function(BenchmarkId::new("nearest-per-vector", BATCH), |b| {
        b.iter(|| {
            for x in black_box(&lattice_input) {
                let _ = black_box(E8Point::nearest(x));
            }
        });
    });
    for &backend in &backends {
        group.bench_function(BenchmarkId::new(backend.name(), BATCH), |b| {
            b.iter(|| backend.nearest_lattice_points_into(black_box(&lattice_input), &mut points));
        });
    }
    group.bench_function(BenchmarkId::new(&dispatched, BATCH), |b| {
        b.iter(|| batch::nearest_lattice_points_into(black_box(&lattice_input), &mut points));
    });
    group.bench_function(
        BenchmarkId::new(format!("nearest_roots-{dispatched}"), BATCH),
        |b| b.iter(|| batch::nearest_roots_into(black_box(&units), &mut roots)),
    );
    group.bench_function(BenchmarkId::new("nearest_roots-scalar", BATCH), |b| {
        b.iter(|| Backend::Scalar.nearest_roots_into(black_box(&units), &mut roots));
    });
    group.finish();
}

/// 32 MB of unit vectors (2^20 of them), well past the L2 caches: a plain
/// copy against a copy followed by validation, as a validated decoder would
/// do it, and validation alone.
fn validate_32mb(c: &mut Criterion) {
    const COUNT: usize = 1 << 20;
    let source: Vec<[f32; 8]> = Gf8::vec_into_arrays(Rng(3).units(COUNT));
    let mut destination = vec![[0.0f32; 8]; COUNT];
    let mut group = c.benchmark_group("validate_32mb");
    group.throughput(Throughput::Elements(COUNT as u64));
    group.sample_size(20);
    group.bench_function("memcpy", |b| {
        b.iter(|| destination.copy_from_slice(black_box(&source)));
    });
    group.bench_function(format!("memcpy+validate-{}", batch::backend()), |b| {
        b.iter(|| {
            destination.copy_from_slice(black_box(&source));
            batch::validate(&destination)
        });
    });
    // Validating each 16 KiB right after copying it, while it is in L1:
    // how a decoder can hide most of the cost.
    group.bench_function(
        format!("memcpy+validate-16k-chunks-{}", batch::backend()),
        |b| {
            b.iter(|| {
                for (to, from) in destination
                    .chunks_mut(512)
                    .zip(black_box(&source).chunks(512))
                {
                    to.copy_from_slice(from);
                    batch::validate(to)?;
                }
                Ok::<(), hydron_core::BatchError>(())
            });
        },
    );
    group.bench_function(format!("validate-{}", batch::backend()), |b| {
        b.iter(|| batch::validate(black_box(&source)));
    });
    group.finish();
}

fn per_vector(c: &mut Criterion) {
    let mut rng = Rng(4);
    let units = rng.units(BATCH);
    let raw = rng.arrays(BATCH);
    let mut group = c.benchmark_group("per_vector");
    group.throughput(Throughput::Elements(units.len() as u64));
    group.bench_function("dot", |b| {
        b.iter(|| {
            for pair in black_box(&units).windows(2) {
                black_box(pair[0].dot(pair[1]));
            }
        });
    });
    group.bench_function("normalize", |b| {
        b.iter(|| {
            for a in black_box(&raw) {
                let _ = black_box(Gf8::normalize(*a));
            }
        });
    });
    group.bench_function("add_renormalize", |b| {
        b.iter(|| {
            for pair in black_box(&units).windows(2) {
                black_box(pair[0] + pair[1]);
            }
        });
    });
    group.bench_function("check", |b| {
        b.iter(|| {
            for v in black_box(&units) {
                let _ = black_box(Gf8::check(v.as_array()));
            }
        });
    });
    group.finish();
}

/// The spherical mean: the three-point set of issue 10 (within 1.55 rad of
/// a pole; the old fixed-step iteration gave up on it), and 10 000 weighted
/// points up to 1.5 rad from a pole.
fn spherical_mean(c: &mut Criterion) {
    let (cos, sin) = (1.55f32.cos(), 1.55f32.sin());
    let rim = [
        (
            Gf8::normalize([cos, sin, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).expect("unit"),
            1.0,
        ),
        (
            Gf8::normalize([cos, -sin, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).expect("unit"),
            1.0,
        ),
        (
            Gf8::normalize([cos, 0.0, sin, 0.0, 0.0, 0.0, 0.0, 0.0]).expect("unit"),
            0.1,
        ),
    ];
    let mut rng = Rng(5);
    let pole = rng.units(1)[0];
    let many: Vec<(Gf8, f32)> = (0..10_000)
        .map(|_| {
            // A tangent of length up to 1.5 rad (perpendicular part only).
            let t = rng.array().map(|x| x * 0.53);
            let w = 0.1 + rng.next_f32().abs();
            (pole.exp_map(t).expect("finite"), w)
        })
        .collect();
    let mut group = c.benchmark_group("spherical_mean");
    group.bench_function("rim-3-points", |b| {
        b.iter(|| Gf8::weighted_spherical_mean(black_box(&rim)));
    });
    group.throughput(Throughput::Elements(many.len() as u64));
    group.sample_size(20);
    group.bench_function("10k-points-1.5rad", |b| {
        b.iter(|| Gf8::weighted_spherical_mean(black_box(&many)));
    });
    group.finish();
}

/// A group of the sphere kernels on `pairs` pairs, with element
/// throughput; 10 samples past the caches.
fn sphere_group<'c>(
    c: &'c mut Criterion,
    name: String,
    pairs: usize,
) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(pairs as u64));
    if pairs > BATCH {
        group.sample_size(10);
    }
    group
}

/// The rows of a sphere kernel in `group`: `kernel(Some(backend))` for
/// each of `backends` (one thread), then `kernel(None)`, the dispatched
/// function, named `dispatched-…`.
fn bench_backends(
    group: &mut BenchmarkGroup<'_, WallTime>,
    backends: &[Backend],
    pairs: usize,
    mut kernel: impl FnMut(Option<Backend>),
) {
    for &backend in backends {
        group.bench_function(BenchmarkId::new(backend.name(), pairs), |bench| {
            bench.iter(|| kernel(Some(backend)));
        });
    }
    let dispatched = format!("dispatched-{}", batch::backend());
    group.bench_function(BenchmarkId::new(dispatched, pairs), |bench| {
        bench.iter(|| kernel(None));
    });
}

/// The sphere kernels on `pairs` pairs: the per-vector methods (for
/// small inputs), every backend on one thread, and the dispatched
/// function; pairwise (`geodesic`, `slerp`, with a `t` per row) and one
/// vector against many (`geodesic_to`, `slerp_to`, with one `t`).
fn sphere_groups(c: &mut Criterion, prefix: &str, pairs: usize, backends: &[Backend]) {
    let mut rng = Rng(5);
    let a = rng.units(pairs);
    let b = rng.units(pairs);
    let ts: Vec<f32> = (0..pairs).map(|i| (i % 1000) as f32 / 999.0).collect();
    let q = a[0];
    let per_vector = pairs <= BATCH;
    let mut distances = vec![0.0f32; pairs];
    let mut points = vec![Gf8::ZERO; pairs];

    let mut group = sphere_group(c, format!("{prefix}_geodesic"), pairs);
    if per_vector {
        group.bench_function(BenchmarkId::new("Gf8::geodesic_distance", pairs), |bench| {
            bench.iter(|| {
                for ((x, y), d) in black_box(&a).iter().zip(&b).zip(&mut distances) {
                    *d = x.geodesic_distance(*y);
                }
            });
        });
    }
    bench_backends(&mut group, backends, pairs, |backend| {
        let (x, y) = (PerRow::Each(black_box(&a[..])), PerRow::Each(&b[..]));
        match backend {
            Some(backend) => backend.geodesic_distances_into(x, y, &mut distances),
            None => batch::geodesic_distances_into(x, y, &mut distances),
        }
    });
    // Unchecked coordinates, checked in the same pass (what Python calls).
    let (raw_a, raw_b) = (Gf8::slice_as_arrays(&a), Gf8::slice_as_arrays(&b));
    let checked = format!("checked-dispatched-{}", batch::backend());
    group.bench_function(BenchmarkId::new(checked, pairs), |bench| {
        bench.iter(|| {
            batch::geodesic_distances_checked_into(
                PerRow::Each(black_box(raw_a)),
                PerRow::Each(raw_b),
                &mut distances,
            )
        });
    });
    group.finish();

    let mut group = sphere_group(c, format!("{prefix}_geodesic_to"), pairs);
    bench_backends(&mut group, backends, pairs, |backend| {
        let (x, y) = (PerRow::All(black_box(q)), PerRow::Each(&b[..]));
        match backend {
            Some(backend) => backend.geodesic_distances_into(x, y, &mut distances),
            None => batch::geodesic_distances_into(x, y, &mut distances),
        }
    });
    group.finish();

    let mut group = sphere_group(c, format!("{prefix}_slerp"), pairs);
    if per_vector {
        group.bench_function(BenchmarkId::new("Gf8::slerp", pairs), |bench| {
            bench.iter(|| {
                for (i, p) in points.iter_mut().enumerate() {
                    *p = black_box(&a)[i].slerp(b[i], ts[i]);
                }
            });
        });
    }
    bench_backends(&mut group, backends, pairs, |backend| {
        let (x, y, t) = (
            PerRow::Each(black_box(&a[..])),
            PerRow::Each(&b[..]),
            PerRow::Each(&ts[..]),
        );
        match backend {
            Some(backend) => backend.slerp_into(x, y, t, &mut points),
            None => batch::slerp_into(x, y, t, &mut points),
        }
    });
    group.finish();

    let mut group = sphere_group(c, format!("{prefix}_slerp_to"), pairs);
    bench_backends(&mut group, backends, pairs, |backend| {
        let (x, y, t) = (
            PerRow::All(black_box(q)),
            PerRow::Each(&b[..]),
            PerRow::All(0.3),
        );
        match backend {
            Some(backend) => backend.slerp_into(x, y, t, &mut points),
            None => batch::slerp_into(x, y, t, &mut points),
        }
    });
    group.finish();
}

/// The sphere kernels in the caches (4096 pairs), every backend.
fn sphere(c: &mut Criterion) {
    let backends: Vec<Backend> = batch::backends().collect();
    sphere_groups(c, "sphere", BATCH, &backends);
}

/// The sphere kernels on 2^20 pairs: scalar, the dispatched backend on one
/// thread, and the dispatched function (threads with `parallel`).
fn sphere_1m(c: &mut Criterion) {
    let mut backends = vec![Backend::Scalar];
    if batch::backend() != Backend::Scalar {
        backends.push(batch::backend());
    }
    sphere_groups(c, "sphere_1m", 1 << 20, &backends);
}

criterion_group!(
    benches,
    nearest_root,
    batch_kernels,
    validate_32mb,
    per_vector,
    spherical_mean,
    sphere,
    sphere_1m
);
criterion_main!(benches);
