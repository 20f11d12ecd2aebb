//! Writes a deterministic set of fory messages and hydron files into a
//! directory, each with its expected values as raw little-endian `f32`
//! (`NAME.f32`, 8 per vector) or `u8` (`NAME.u8`, one per code), for the
//! Python interop tests (`python/tests/test_interop.py`) to decode and compare
//! bit for bit. `python/run-tests.sh` runs it.
//!
//! ```sh
//! cargo run --example interop_write --features fory,json -- /tmp/rust-written
//! ```
//!
//! Files written (`MANIFEST.txt` lists them, one `KIND NAME` per line):
//!
//! - `batch_{0,1,7,1000}.bin`: `Gf8Batch` messages ([`fory::encode_batch`]);
//! - `gf8_single.bin`: one `Gf8` message ([`fory::encode_gf8`]);
//! - `codes.bin`: an `E8Codes` message of all 240 codes and the nearest
//!   roots of the 1000 vectors ([`fory::encode_codes`]), expected in `codes.u8`;
//! - `file_fory.hyd`, `file_jsonl.hyd` (1000 vectors in 16 and 10 chunks),
//!   `file_fory_single.hyd` (7 vectors, one per chunk), `empty_fory.hyd`,
//!   `empty_jsonl.hyd`: hydron files written with [`FileWriter`];
//! - `roots.f32`: hydron-core's `E8_ROOTS`;
//! - `renorm_in.f32` / `renorm_out.f32`: raw vectors and what
//!   [`Policy::Renormalize`] makes of them.

use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use hydron::codec::file::{FileOptions, FileWriter, Format};
use hydron::codec::{fory, Policy};
use hydron::{E8Root, Gf8, E8_ROOTS};

fn main() -> Result<(), Box<dyn Error>> {
    let dir = PathBuf::from(
        std::env::args_os()
            .nth(1)
            .ok_or("usage: interop_write DIR (the directory to write into)")?,
    );
    std::fs::create_dir_all(&dir)?;
    let mut manifest = String::new();
    let vectors = sample_vectors(1000, 0x4859_4452_4f4e);

    for n in [0, 1, 7, 1000] {
        let name = format!("batch_{n}");
        write(
            &dir,
            &format!("{name}.bin"),
            &fory::encode_batch(&vectors[..n]),
        )?;
        write_f32(&dir, &name, &vectors[..n])?;
        writeln!(manifest, "batch {name}")?;
    }

    write(&dir, "gf8_single.bin", &fory::encode_gf8(vectors[3]))?;
    write_f32(&dir, "gf8_single", &vectors[3..4])?;
    writeln!(manifest, "gf8 gf8_single")?;

    let codes: Vec<E8Root> = E8Root::all()
        .chain(vectors.iter().map(|v| v.nearest_root()))
        .collect();
    write(&dir, "codes.bin", &fory::encode_codes(&codes))?;
    let code_bytes: Vec<u8> = codes.iter().map(|r| r.code()).collect();
    write(&dir, "codes.u8", &code_bytes)?;
    writeln!(manifest, "codes codes")?;

    let files: [(&str, Format, u32, &[Gf8]); 5] = [
        ("file_fory", Format::Fory, 64, &vectors),
        ("file_jsonl", Format::JsonLines, 100, &vectors),
        ("file_fory_single", Format::Fory, 1, &vectors[..7]),
        ("empty_fory", Format::Fory, 1000, &[]),
        ("empty_jsonl", Format::JsonLines, 1000, &[]),
    ];
    for (name, format, chunk, data) in files {
        let options = FileOptions::new()
            .with_chunk_vectors(chunk)
            .with_durable(false);
        let mut writer = FileWriter::create(dir.join(format!("{name}.hyd")), format, options)?;
        // Pieces of odd sizes: chunks must not depend on how writes are cut.
        for piece in data.chunks(37) {
            writer.write(piece)?;
        }
        writer.finish()?;
        write_f32(&dir, name, data)?;
        writeln!(manifest, "file {name}")?;
    }

    write_f32(&dir, "roots", &E8_ROOTS)?;
    writeln!(manifest, "roots roots")?;

    let raw = raw_vectors(200, 0x5245_4e4f);
    let fixed = Policy::Renormalize.apply(raw.clone())?;
    write(&dir, "renorm_in.f32", &le_bytes(&raw))?;
    write_f32(&dir, "renorm_out", &fixed)?;
    writeln!(manifest, "renormalize renorm")?;

    write(&dir, "MANIFEST.txt", manifest.as_bytes())?;
    println!(
        "interop_write: {} entries in {}",
        manifest.lines().count(),
        dir.display()
    );
    Ok(())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Box<dyn Error>> {
    std::fs::write(dir.join(name), bytes).map_err(|e| format!("{name}: {e}").into())
}

fn write_f32(dir: &Path, name: &str, vectors: &[Gf8]) -> Result<(), Box<dyn Error>> {
    write(
        dir,
        &format!("{name}.f32"),
        &le_bytes(Gf8::slice_as_arrays(vectors)),
    )
}

/// The coordinates as little-endian `f32` bytes, vector by vector.
fn le_bytes(arrays: &[[f32; 8]]) -> Vec<u8> {
    arrays
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect()
}

/// SplitMix64: a tiny deterministic generator, so the data never changes.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// `count` valid vectors: a few edge cases (zero, signed zeros, a
/// subnormal, numbers that JSON spells in exponent form), then random unit
/// vectors with some coordinates zeroed or scaled down.
fn sample_vectors(count: usize, seed: u64) -> Vec<Gf8> {
    let mut rng = SplitMix(seed);
    let mut v = vec![
        Gf8::ZERO,
        Gf8::try_new([-0.0, 1.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0]).expect("unit"),
        Gf8::try_new([1.0, 1e-40, -1e-7, 3e-9, 0.0, 0.0, 0.0, 0.0]).expect("unit"),
        Gf8::normalize([0.0, 0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0]).expect("finite"),
        E8_ROOTS[0],
        E8_ROOTS[239],
    ];
    while v.len() < count {
        let mut c: [f32; 8] = std::array::from_fn(|_| rng.next_f32());
        let shape = rng.next_u64() % 4;
        for x in &mut c {
            match shape {
                1 if rng.next_u64().is_multiple_of(3) => *x = 0.0,
                2 => *x *= 1e-3_f32.powi((rng.next_u64() % 4) as i32),
                _ => {}
            }
        }
        v.push(Gf8::normalize(c).expect("finite"));
    }
    v
}

/// `count` raw vectors, valid and not: non-unit of every magnitude (with
/// squares that overflow or underflow `f32`), zeros, unit vectors.
fn raw_vectors(count: usize, seed: u64) -> Vec<[f32; 8]> {
    let mut rng = SplitMix(seed);
    let mut v = vec![
        [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 3.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0],
        [0.0; 8],
        [1e-30, 0.0, -1e-30, 0.0, 0.0, 0.0, 0.0, 0.0],
        [1e-40, -1e-40, 0.0, 0.0, 0.0, 0.0, 0.0, 1e-45],
        [3e38, 3e38, 0.0, 0.0, 0.0, 0.0, -3e38, 0.0],
        [0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    ];
    while v.len() < count {
        let scale = 10f32.powi((rng.next_u64() % 60) as i32 - 30);
        v.push(std::array::from_fn(|_| rng.next_f32() * scale));
    }
    v
}
