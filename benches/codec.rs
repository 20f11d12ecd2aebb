//! The codecs: hydron's fory paths against stock fory, serde_json, bincode,
//! postcard, rkyv and a plain bytemuck copy, all in one run so that the
//! ratios come from the same machine state.
//!
//! - `single/{encode,decode,round_trip}`: one vector. `fory_derive` is the
//!   published comparison (a plain `#[derive(ForyStruct)] struct Gf8Plain {
//!   x: [f32; 8] }` through `Fory::default()`, `serialize` to a `Vec`);
//!   `serde_json` the same struct through serde. `hydron_fory` is
//!   `hydron_codec::fory::{encode_gf8, decode_gf8}` (validated);
//!   `hydron_fory_array` encodes to a stack array.
//! - `batch_1m/{encode,decode}`: one million vectors (32 MB of coordinates,
//!   `Throughput::Bytes` of that payload for every row, so GB/s compare
//!   directly). `bytemuck_copy` is the floor: copy the bytes into a fresh
//!   vector. `hydron_fory_{strict,renormalize,trusted}` are
//!   `hydron_codec::fory::decode_batch` under each `Policy`;
//!   `fory_derive_vec` is stock fory's `Vec<Gf8Plain>` (element by element);
//!   `fory_generic_gf8batch` is generic `Fory::serialize`/`deserialize` of
//!   hydron's registered `Gf8Batch` (same bytes, validated, but through
//!   fory's context machinery).
//! - `codes_1m`: E8 root codes, one byte per vector.
//!
//! Encoded sizes are printed first.
//!
//! ```text
//! cargo bench --features fory,json --bench codec
//! cargo bench --features fory,json,simd --bench codec   # SIMD validation
//! ```

mod common;

use std::hint::black_box;

use common::Rng;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fory::{Fory, ForyStruct};
use hydron_codec::fory::{self as hfory, Gf8Batch};
use hydron_codec::Policy;
use hydron_core::{E8Root, Gf8};

/// Vectors in the large batch: one million (32,000,000 bytes), as in the
/// published comparison. Note that 2^20 vectors (exactly 32 MiB) would cross
/// glibc's largest dynamic mmap threshold (32 MiB): every fresh output
/// buffer would then be a new mapping, and page faults, not the codecs,
/// would set every row's speed (measured here: about 1.4 GB/s for a plain
/// copy, for every codec alike).
const BATCH: usize = 1_000_000;

/// The plain struct every third-party codec sees: 8 floats, no invariant.
#[derive(
    ForyStruct,
    serde::Serialize,
    serde::Deserialize,
    bincode::Encode,
    bincode::Decode,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Default,
)]
struct Gf8Plain {
    x: [f32; 8],
}

fn plain(v: &[Gf8]) -> Vec<Gf8Plain> {
    v.iter().map(|g| Gf8Plain { x: g.to_array() }).collect()
}

/// Stock fory as the published comparison used it.
fn stock_fory(xlang: bool) -> Fory {
    let mut fory = Fory::builder().xlang(xlang).build();
    fory.register::<Gf8Plain>(10).expect("register");
    fory
}

/// A generic fory (hydron's xlang configuration) that can also hold a
/// million plain structs.
fn big_stock_fory() -> Fory {
    let mut fory = Fory::builder()
        .max_graph_memory_bytes(1 << 32)
        .max_unbacked_container_items(usize::MAX)
        .build();
    fory.register::<Gf8Plain>(10).expect("register");
    fory
}

fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

fn print_sizes(v: Gf8, many: &[Gf8]) {
    let p = Gf8Plain { x: v.to_array() };
    let fory = stock_fory(true);
    let plains = plain(many);
    let roots: Vec<E8Root> = many.iter().map(|g| g.nearest_root()).collect();
    let rows: Vec<(&str, usize, usize)> = vec![
        (
            "serde_json (Gf8Plain)",
            serde_json::to_vec(&p).unwrap().len(),
            serde_json::to_vec(&plains).unwrap().len(),
        ),
        (
            "hydron json",
            hydron_json_single(v).len(),
            hydron_json_batch(many).len(),
        ),
        (
            "fory derive (Gf8Plain)",
            fory.serialize(&p).unwrap().len(),
            big_stock_fory().serialize(&plains).unwrap().len(),
        ),
        (
            "hydron fory",
            hfory::encode_gf8(v).len(),
            hfory::encode_batch(many).len(),
        ),
        (
            "hydron fory codes",
            hfory::encode_codes(&[v.nearest_root()]).len(),
            hfory::encode_codes(&roots).len(),
        ),
        (
            "bincode 2 (standard)",
            bincode::encode_to_vec(p, bincode_config()).unwrap().len(),
            bincode::encode_to_vec(&plains, bincode_config())
                .unwrap()
                .len(),
        ),
        (
            "postcard",
            postcard::to_allocvec(&p).unwrap().len(),
            postcard::to_allocvec(&plains).unwrap().len(),
        ),
        (
            "rkyv",
            rkyv::to_bytes::<rkyv::rancor::Error>(&p).unwrap().len(),
            rkyv::to_bytes::<rkyv::rancor::Error>(&plains)
                .unwrap()
                .len(),
        ),
        ("bytemuck (raw)", 32, 32 * many.len()),
    ];
    eprintln!("encoded sizes: one vector, {} vectors", many.len());
    for (name, one, all) in rows {
        eprintln!("  {name:<24} {one:>5} B  {all:>10} B");
    }
}

#[cfg(feature = "json")]
fn hydron_json_single(v: Gf8) -> Vec<u8> {
    hydron_codec::json::gf8_to_vec(v)
}

#[cfg(feature = "json")]
fn hydron_json_batch(v: &[Gf8]) -> Vec<u8> {
    hydron_codec::json::to_vec(v)
}

#[cfg(not(feature = "json"))]
fn hydron_json_single(_: Gf8) -> Vec<u8> {
    Vec::new()
}

#[cfg(not(feature = "json"))]
fn hydron_json_batch(_: &[Gf8]) -> Vec<u8> {
    Vec::new()
}

fn single(c: &mut Criterion) {
    let v = Rng(7).units(1)[0];
    let p = Gf8Plain { x: v.to_array() };
    let fory = stock_fory(true);
    let fory_native = stock_fory(false);
    let hydron_generic = hfory::xlang_fory().expect("register");

    let json = serde_json::to_vec(&p).unwrap();
    let fory_bytes = fory.serialize(&p).unwrap();
    let fory_native_bytes = fory_native.serialize(&p).unwrap();
    let hydron_bytes = hfory::encode_gf8(v);
    let bincode_bytes = bincode::encode_to_vec(p, bincode_config()).unwrap();
    let postcard_bytes = postcard::to_allocvec(&p).unwrap();
    let rkyv_bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&p).unwrap();
    let raw: Vec<u8> = bytemuck::bytes_of(&v).to_vec();

    let mut g = c.benchmark_group("single/encode");
    g.bench_function("serde_json", |b| {
        b.iter(|| serde_json::to_vec(black_box(&p)).unwrap())
    });
    g.bench_function("fory_derive", |b| {
        b.iter(|| fory.serialize(black_box(&p)).unwrap())
    });
    g.bench_function("fory_derive_native", |b| {
        b.iter(|| fory_native.serialize(black_box(&p)).unwrap())
    });
    g.bench_function("fory_generic_gf8", |b| {
        b.iter(|| hydron_generic.serialize(black_box(&v)).unwrap())
    });
    g.bench_function("hydron_fory", |b| {
        b.iter(|| hfory::encode_gf8(black_box(v)))
    });
    g.bench_function("hydron_fory_array", |b| {
        b.iter(|| hfory::encode_gf8_array(black_box(v)))
    });
    #[cfg(feature = "json")]
    g.bench_function("hydron_json", |b| {
        b.iter(|| hydron_codec::json::gf8_to_vec(black_box(v)))
    });
    g.bench_function("bincode", |b| {
        b.iter(|| bincode::encode_to_vec(black_box(p), bincode_config()).unwrap())
    });
    g.bench_function("postcard", |b| {
        b.iter(|| postcard::to_allocvec(black_box(&p)).unwrap())
    });
    g.bench_function("rkyv", |b| {
        b.iter(|| rkyv::to_bytes::<rkyv::rancor::Error>(black_box(&p)).unwrap())
    });
    g.bench_function("bytemuck", |b| {
        b.iter(|| bytemuck::bytes_of(black_box(&v)).to_vec())
    });
    g.finish();

    let mut g = c.benchmark_group("single/decode");
    g.bench_function("serde_json", |b| {
        b.iter(|| serde_json::from_slice::<Gf8Plain>(black_box(&json)).unwrap())
    });
    g.bench_function("fory_derive", |b| {
        b.iter(|| {
            fory.deserialize::<Gf8Plain>(black_box(&fory_bytes))
                .unwrap()
        })
    });
    g.bench_function("fory_derive_native", |b| {
        b.iter(|| {
            fory_native
                .deserialize::<Gf8Plain>(black_box(&fory_native_bytes))
                .unwrap()
        })
    });
    g.bench_function("fory_generic_gf8", |b| {
        b.iter(|| {
            hydron_generic
                .deserialize::<Gf8>(black_box(&hydron_bytes))
                .unwrap()
        })
    });
    g.bench_function("hydron_fory", |b| {
        b.iter(|| hfory::decode_gf8(black_box(&hydron_bytes), Policy::Strict).unwrap())
    });
    #[cfg(feature = "json")]
    {
        let hydron_json = hydron_codec::json::gf8_to_vec(v);
        g.bench_function("hydron_json", |b| {
            b.iter(|| {
                hydron_codec::json::gf8_from_slice(black_box(&hydron_json), Policy::Strict).unwrap()
            })
        });
    }
    g.bench_function("bincode", |b| {
        b.iter(|| {
            bincode::decode_from_slice::<Gf8Plain, _>(black_box(&bincode_bytes), bincode_config())
                .unwrap()
        })
    });
    g.bench_function("postcard", |b| {
        b.iter(|| postcard::from_bytes::<Gf8Plain>(black_box(&postcard_bytes)).unwrap())
    });
    g.bench_function("rkyv", |b| {
        b.iter(|| {
            rkyv::from_bytes::<Gf8Plain, rkyv::rancor::Error>(black_box(&rkyv_bytes)).unwrap()
        })
    });
    g.bench_function("bytemuck", |b| {
        b.iter(|| bytemuck::pod_read_unaligned::<[f32; 8]>(black_box(&raw)))
    });
    g.finish();

    let mut g = c.benchmark_group("single/round_trip");
    g.bench_function("serde_json", |b| {
        b.iter(|| {
            let bytes = serde_json::to_vec(black_box(&p)).unwrap();
            serde_json::from_slice::<Gf8Plain>(&bytes).unwrap()
        })
    });
    g.bench_function("fory_derive", |b| {
        b.iter(|| {
            let bytes = fory.serialize(black_box(&p)).unwrap();
            fory.deserialize::<Gf8Plain>(&bytes).unwrap()
        })
    });
    g.bench_function("hydron_fory", |b| {
        b.iter(|| {
            let bytes = hfory::encode_gf8(black_box(v));
            hfory::decode_gf8(&bytes, Policy::Strict).unwrap()
        })
    });
    g.bench_function("hydron_fory_array", |b| {
        b.iter(|| {
            let bytes = hfory::encode_gf8_array(black_box(v));
            hfory::decode_gf8(&bytes, Policy::Strict).unwrap()
        })
    });
    #[cfg(feature = "json")]
    g.bench_function("hydron_json", |b| {
        b.iter(|| {
            let bytes = hydron_codec::json::gf8_to_vec(black_box(v));
            hydron_codec::json::gf8_from_slice(&bytes, Policy::Strict).unwrap()
        })
    });
    g.finish();
}

fn batch(c: &mut Criterion) {
    let many = Rng(11).units(BATCH);
    let plains = plain(&many);
    let payload = (32 * BATCH) as u64;
    let stock = big_stock_fory();
    let generic = hfory::xlang_fory().expect("register");

    let raw: Vec<u8> = bytemuck::cast_slice::<Gf8, u8>(&many).to_vec();
    let hydron_bytes = hfory::encode_batch(&many);
    let stock_bytes = stock.serialize(&plains).unwrap();
    let generic_batch = Gf8Batch(many.clone());
    let bincode_bytes = bincode::encode_to_vec(&plains, bincode_config()).unwrap();
    let postcard_bytes = postcard::to_allocvec(&plains).unwrap();
    let rkyv_bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&plains).unwrap();
    let json = serde_json::to_vec(&plains).unwrap();

    let mut g = c.benchmark_group("batch_1m/encode");
    g.throughput(Throughput::Bytes(payload));
    g.sample_size(10);
    g.bench_function("bytemuck_copy", |b| {
        b.iter(|| bytemuck::cast_slice::<Gf8, u8>(black_box(&many)).to_vec())
    });
    g.bench_function("hydron_fory", |b| {
        b.iter(|| hfory::encode_batch(black_box(&many)))
    });
    g.bench_function("hydron_fory_into_reused", |b| {
        let mut buf = Vec::with_capacity(hydron_bytes.len());
        b.iter(|| {
            buf.clear();
            hfory::encode_batch_into(black_box(&many), &mut buf);
            buf.len()
        })
    });
    g.bench_function("fory_derive_vec", |b| {
        b.iter(|| stock.serialize(black_box(&plains)).unwrap())
    });
    g.bench_function("fory_generic_gf8batch", |b| {
        b.iter(|| generic.serialize(black_box(&generic_batch)).unwrap())
    });
    g.bench_function("bincode", |b| {
        b.iter(|| bincode::encode_to_vec(black_box(&plains), bincode_config()).unwrap())
    });
    g.bench_function("postcard", |b| {
        b.iter(|| postcard::to_allocvec(black_box(&plains)).unwrap())
    });
    g.bench_function("rkyv", |b| {
        b.iter(|| rkyv::to_bytes::<rkyv::rancor::Error>(black_box(&plains)).unwrap())
    });
    g.bench_function("serde_json", |b| {
        b.iter(|| serde_json::to_vec(black_box(&plains)).unwrap())
    });
    #[cfg(feature = "json")]
    g.bench_function("hydron_json", |b| {
        b.iter(|| hydron_codec::json::to_vec(black_box(&many)))
    });
    g.finish();

    let mut g = c.benchmark_group("batch_1m/decode");
    g.throughput(Throughput::Bytes(payload));
    g.sample_size(10);
    g.bench_function("bytemuck_copy", |b| {
        b.iter(|| bytemuck::cast_slice::<u8, [f32; 8]>(black_box(&raw)).to_vec())
    });
    for (name, policy) in [
        ("hydron_fory_strict", Policy::Strict),
        ("hydron_fory_renormalize", Policy::Renormalize),
        ("hydron_fory_trusted", Policy::Trusted),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| hfory::decode_batch(black_box(&hydron_bytes), policy).unwrap())
        });
    }
    g.bench_function("fory_derive_vec", |b| {
        b.iter(|| {
            stock
                .deserialize::<Vec<Gf8Plain>>(black_box(&stock_bytes))
                .unwrap()
        })
    });
    g.bench_function("fory_generic_gf8batch", |b| {
        b.iter(|| {
            generic
                .deserialize::<Gf8Batch>(black_box(&hydron_bytes))
                .unwrap()
        })
    });
    g.bench_function("bincode", |b| {
        b.iter(|| {
            bincode::decode_from_slice::<Vec<Gf8Plain>, _>(
                black_box(&bincode_bytes),
                bincode_config(),
            )
            .unwrap()
        })
    });
    g.bench_function("postcard", |b| {
        b.iter(|| postcard::from_bytes::<Vec<Gf8Plain>>(black_box(&postcard_bytes)).unwrap())
    });
    g.bench_function("rkyv", |b| {
        b.iter(|| {
            rkyv::from_bytes::<Vec<Gf8Plain>, rkyv::rancor::Error>(black_box(&rkyv_bytes)).unwrap()
        })
    });
    g.bench_function("serde_json", |b| {
        b.iter(|| serde_json::from_slice::<Vec<Gf8Plain>>(black_box(&json)).unwrap())
    });
    #[cfg(feature = "json")]
    {
        let hydron_json = hydron_codec::json::to_vec(&many);
        g.bench_function("hydron_json", |b| {
            b.iter(|| {
                hydron_codec::json::from_slice(black_box(&hydron_json), Policy::Strict).unwrap()
            })
        });
    }
    g.finish();

    let roots: Vec<E8Root> = many.iter().map(|g| g.nearest_root()).collect();
    let codes = hfory::encode_codes(&roots);
    let mut g = c.benchmark_group("codes_1m");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.bench_function("encode", |b| {
        b.iter(|| hfory::encode_codes(black_box(&roots)))
    });
    g.bench_function("decode", |b| {
        b.iter(|| hfory::decode_codes(black_box(&codes)).unwrap())
    });
    g.finish();
}

fn sizes(_: &mut Criterion) {
    print_sizes(Rng(7).units(1)[0], &Rng(11).units(BATCH));
}

criterion_group!(benches, sizes, single, batch);
criterion_main!(benches);
