//! Where the time of `file::load` goes, for a binary file of N vectors:
//! the passes it makes, each timed alone (medians), next to `file::load`.
//!
//! ```sh
//! cargo run --release -p hydron-codec --features fory-messages --example load_breakdown -- 1048576 15
//! ```
//!
//! Arguments: the number of vectors (default 2^20) and of runs per median
//! (default 15). The file is written to a temporary directory first, so it
//! is in the page cache: the figures are for a warm file.

use std::error::Error;
use std::io::Read;
use std::time::Instant;

use hydron_codec::file::{self, FileOptions, Format};
use hydron_codec::Policy;
use hydron_core::{batch, Gf8};

fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(1 << 20), |a| a.parse())?;
    let runs: usize = args.next().map_or(Ok(15), |a| a.parse())?;

    let vectors: Vec<Gf8> = (0..n)
        .map(|i| {
            let x = i as f32 * 0.001;
            Gf8::normalize([x.sin(), x.cos(), 1.0, -x, 0.5, 0.25, -0.25, 3.0]).unwrap()
        })
        .collect();
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("points.hyd");
    let mut w =
        file::FileWriter::create(&path, Format::Fory, FileOptions::new().with_durable(false))?;
    w.write(&vectors)?;
    w.finish()?;
    let len = std::fs::metadata(&path)?.len() as usize;
    let bytes = std::fs::read(&path)?;
    let payload = Gf8::slice_as_arrays(&vectors);
    let payload_bytes: &[u8] = bytemuck::cast_slice(payload);

    if std::env::var("LOAD_ONLY").is_ok() {
        let t = median(runs, || {
            std::hint::black_box(file::load(&path, Policy::Strict).unwrap());
        });
        println!("file::load (strict) {:.2} ms", t * 1e3);
        return Ok(());
    }
    let mut rows: Vec<(&str, f64)> = Vec::new();
    let mut reused = vec![0u8; len];
    rows.push((
        "read the file into a reused buffer",
        median(runs, || {
            let mut f = std::fs::File::open(&path).unwrap();
            f.read_exact(&mut reused).unwrap();
        }),
    ));
    rows.push((
        "read the file into a fresh Vec<u8>",
        median(runs, || {
            let mut v = Vec::with_capacity(len);
            std::fs::File::open(&path)
                .unwrap()
                .read_to_end(&mut v)
                .unwrap();
            std::hint::black_box(v);
        }),
    ));
    rows.push((
        "fault in a fresh buffer (memset 0xff)",
        median(runs, || {
            let mut v: Vec<u8> = Vec::with_capacity(len);
            // SAFETY: u8 has no invalid values; every byte is written next.
            unsafe {
                std::ptr::write_bytes(v.as_mut_ptr(), 0xff, len);
                v.set_len(len);
            }
            std::hint::black_box(v);
        }),
    ));
    rows.push((
        "copy the payload into a reused buffer",
        median(runs, || {
            reused[..payload_bytes.len()].copy_from_slice(payload_bytes);
            std::hint::black_box(&reused);
        }),
    ));
    for (what, huge, populate) in [
        ("fault in, MADV_HUGEPAGE interior", true, false),
        ("fault in, MADV_POPULATE_WRITE", false, true),
        ("fault in, both", true, true),
    ] {
        rows.push((
            what,
            median(runs, || {
                let extra = 2 << 20;
                let mut v: Vec<u8> = Vec::with_capacity(len + extra);
                let p = v.as_mut_ptr() as usize;
                let start = (p + extra - 1) & !(extra - 1);
                let end = (p + len + extra) & !(extra - 1);
                let pstart = (p + 4095) & !4095;
                // SAFETY: advice and prefaulting on memory `v` owns.
                unsafe {
                    if huge {
                        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                    }
                    if populate {
                        libc::madvise(
                            pstart as *mut libc::c_void,
                            (end - pstart) & !4095,
                            libc::MADV_POPULATE_WRITE,
                        );
                    }
                    std::ptr::write_bytes(v.as_mut_ptr(), 0xff, len);
                    v.set_len(len);
                }
                if huge && populate {
                    let smaps = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap();
                    let line = smaps
                        .lines()
                        .find(|l| l.starts_with("AnonHugePages"))
                        .unwrap()
                        .to_string();
                    eprintln!("{line} (ptr % 2M = {})", p % (2 << 20));
                }
                std::hint::black_box(v);
            }),
        ));
    }
    rows.push((
        "CRC-32 of the file (crc32fast)",
        median(runs, || {
            let mut h = crc32fast::Hasher::new();
            h.update(&bytes);
            std::hint::black_box(h.finalize());
        }),
    ));
    rows.push((
        "CRC-32 in 256 KiB blocks, hot",
        median(runs, || {
            let mut h = crc32fast::Hasher::new();
            for _ in 0..len / (256 << 10) {
                h.update(&bytes[..256 << 10]);
            }
            std::hint::black_box(h.finalize());
        }),
    ));
    rows.push((
        "validate the vectors in place",
        median(runs, || {
            std::hint::black_box(batch::validate(payload).ok());
        }),
    ));
    let mut out: Vec<Gf8> = Vec::with_capacity(n);
    rows.push((
        "copy+validate into a reused Vec",
        median(runs, || {
            out.clear();
            let slots = &mut out.spare_capacity_mut()[..n];
            batch::copy_validated_uninit(payload_bytes, slots).unwrap();
            std::hint::black_box(&out);
        }),
    ));
    rows.push((
        "copy+validate into a fresh Vec",
        median(runs, || {
            let mut out: Vec<Gf8> = Vec::with_capacity(n);
            let slots = &mut out.spare_capacity_mut()[..n];
            batch::copy_validated_uninit(payload_bytes, slots).unwrap();
            std::hint::black_box(&out);
        }),
    ));
    rows.push((
        "file::load (strict)",
        median(runs, || {
            std::hint::black_box(file::load(&path, Policy::Strict).unwrap());
        }),
    ));
    rows.push((
        "file::load (trusted)",
        median(runs, || {
            std::hint::black_box(file::load(&path, Policy::Trusted).unwrap());
        }),
    ));
    rows.push((
        "file::from_slice (strict)",
        median(runs, || {
            std::hint::black_box(file::from_slice(&bytes, Policy::Strict).unwrap());
        }),
    ));
    println!(
        "{n} vectors, file {len} bytes, backend {}, median of {runs}",
        batch::backend()
    );
    for (what, t) in rows {
        println!("  {what:40} {:8.2} ms", t * 1e3);
    }
    Ok(())
}
