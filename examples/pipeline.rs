//! The main job, end to end: generate a realistic batch of unit vectors,
//! quantize it to one-byte E8 root codes, save it as a fory binary file and
//! as a JSON Lines file, load both back with validation, check that nothing
//! changed, and report sizes, throughput and quantization error.
//!
//! ```sh
//! cargo run --release --example pipeline --features simd,fory,json
//! cargo run --release --example pipeline --features simd,fory,json -- 250000 /tmp/out
//! ```
//!
//! Arguments (both optional): the number of vectors (default 1,000,000) and
//! a directory for the files (default: a fresh directory under the system
//! temp dir, removed at the end).

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hydron::codec::file::{self, Format};
use hydron::codec::{fory, Policy};
use hydron::{batch, E8Root, Gf8};

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let count: usize = match args.next() {
        Some(n) => n.replace('_', "").parse()?,
        None => 1_000_000,
    };
    let (dir, keep) = match args.next() {
        Some(dir) => (PathBuf::from(dir), true),
        None => (
            std::env::temp_dir().join(format!("hydron-pipeline-{}", std::process::id())),
            false,
        ),
    };
    std::fs::create_dir_all(&dir)?;
    let result = run(count, &dir);
    if !keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn run(count: usize, dir: &Path) -> Result<(), Box<dyn Error>> {
    println!(
        "hydron pipeline: {count} vectors, batch backend: {}",
        batch::backend()
    );
    let payload_mb = (count * 32) as f64 / 1e6;

    // 1. Generate: clustered directions, like embeddings of a few topics.
    let (raw, took) = timed(|| clustered_vectors(count, 64, 0.35, 0x5EED));
    let (vectors, normalize_took) = timed(|| batch::normalize(&raw));
    let vectors = vectors?;
    drop(raw);
    println!(
        "generate   {count} raw vectors in {}, normalize in {} ({})",
        ms(took),
        ms(normalize_took),
        per_vector(normalize_took, count)
    );

    // 2. Quantize to E8 root codes and measure the angle each code loses.
    let (codes, quantize_took) = timed(|| batch::nearest_roots(&vectors));
    let (mean_angle, max_angle) = quantization_error(&vectors, &codes);
    println!(
        "quantize   to E8 codes in {} ({}); error: mean {:.2}°, max {:.2}°",
        ms(quantize_took),
        per_vector(quantize_took, count),
        mean_angle.to_degrees(),
        max_angle.to_degrees()
    );
    let code_bytes = fory::encode_codes(&codes);
    assert_eq!(fory::decode_codes(&code_bytes)?, codes);
    println!(
        "codes      {} as a fory message ({:.1}x smaller than the vectors)",
        size(code_bytes.len() as u64),
        (count * 32) as f64 / code_bytes.len() as f64
    );

    // 3. Save and load in both formats, validated, and check bit equality.
    for (format, name) in [
        (Format::Fory, "vectors.hyd"),
        (Format::JsonLines, "vectors.jsonl"),
    ] {
        let path = dir.join(name);
        let ((), save_took) = timed_result(|| file::save(&path, &vectors, format))?;
        let bytes = std::fs::metadata(&path)?.len();
        let (loaded, load_took) = timed_result(|| file::load(&path, Policy::Strict))?;
        let identical =
            bytemuck::cast_slice::<Gf8, u8>(&loaded) == bytemuck::cast_slice::<Gf8, u8>(&vectors);
        if !identical {
            return Err(format!("{format}: the loaded vectors differ from the saved ones").into());
        }
        println!(
            "{:<10} {} on disk; save {} ({:.0} MB/s of payload), validated load {} ({:.0} MB/s); bit-identical: yes",
            format.to_string(),
            size(bytes),
            ms(save_took),
            payload_mb / save_took.as_secs_f64(),
            ms(load_took),
            payload_mb / load_took.as_secs_f64(),
        );
    }
    Ok(())
}

/// `count` directions scattered around `clusters` random centres with
/// Gaussian noise of standard deviation `spread` per coordinate.
fn clustered_vectors(count: usize, clusters: usize, spread: f32, seed: u64) -> Vec<[f32; 8]> {
    let mut rng = SplitMix64(seed);
    let centres: Vec<[f32; 8]> = (0..clusters)
        .map(|_| {
            let c: [f32; 8] = std::array::from_fn(|_| rng.gaussian());
            let norm = c.iter().map(|x| x * x).sum::<f32>().sqrt();
            c.map(|x| x / norm)
        })
        .collect();
    (0..count)
        .map(|_| {
            let centre = centres[(rng.next_u64() % clusters as u64) as usize];
            std::array::from_fn(|k| centre[k] + spread * rng.gaussian())
        })
        .collect()
}

/// Mean and maximum angle (radians) between each vector and its root.
fn quantization_error(vectors: &[Gf8], codes: &[E8Root]) -> (f64, f64) {
    let (sum, max) = vectors
        .iter()
        .zip(codes)
        .fold((0.0f64, 0.0f64), |(sum, max), (v, code)| {
            let angle = f64::from(v.geodesic_distance(code.to_gf8()));
            (sum + angle, max.max(angle))
        });
    (sum / vectors.len().max(1) as f64, max)
}

/// A small deterministic generator (SplitMix64) with Box–Muller normals.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn gaussian(&mut self) -> f32 {
        let (u, v) = (self.uniform(), self.uniform());
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

fn timed_result<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<(T, Duration), E> {
    let (out, took) = timed(f);
    Ok((out?, took))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn per_vector(d: Duration, count: usize) -> String {
    format!(
        "{:.2} ns/vector",
        d.as_secs_f64() * 1e9 / count.max(1) as f64
    )
}

fn size(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
