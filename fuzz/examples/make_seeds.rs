//! Writes the seed corpora under `fuzz/seeds/<target>/`: real encodings
//! of small batches, in every form each decoder reads.
//!
//! ```sh
//! cargo run --manifest-path fuzz/Cargo.toml --example make_seeds
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use hydron_codec::file::{self, FileOptions, Format};
use hydron_codec::fory::{self as hfory, Gf8Batch};
use hydron_codec::json;
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
            let opts = FileOptions::new().chunk_vectors(chunk);
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
    println!("seeds written under {}", root.display());
}
