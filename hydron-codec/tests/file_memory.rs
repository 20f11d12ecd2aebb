//! Peak memory of `file::load`.
//!
//! A counting global allocator measures the bytes live at once. `load`
//! grows its output as checked chunks arrive (it never allocates from the
//! count a file claims), so the output's capacity at most doubles at a
//! time; the allocator sees the last growth as the old and the new buffer
//! live together, 1.5 to 2 times the batch. On Linux the resident memory is
//! measured too: glibc grows large blocks with `mremap`, without copying,
//! so the pages actually used stay close to the batch.
//!
//! This file holds one test so that nothing else allocates while it
//! measures.
#![cfg(any(feature = "fory-messages", feature = "json"))]

mod common;

use hydron_codec::file::{self, FileOptions, Format};
use hydron_codec::Policy;
use hydron_core::Gf8;

use common::alloc::{peak_of, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes resident at the peak of `f`, above what was resident before it
/// (Linux: the peak is reset through `/proc/self/clear_refs`); `None` where
/// that cannot be measured.
fn resident_peak_of<T>(f: impl FnOnce() -> T) -> (T, Option<usize>) {
    fn status_kib(key: &str) -> Option<usize> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = status_kib("VmRSS:");
    let out = f();
    let peak = status_kib("VmHWM:");
    match (reset, before, peak) {
        (true, Some(b), Some(p)) => (out, Some(p.saturating_sub(b) * 1024)),
        _ => (out, None),
    }
}

fn batch(n: usize) -> Vec<Gf8> {
    (0..n)
        .map(|i| {
            let x = i as f32 * 0.001;
            Gf8::normalize([x.sin(), x.cos(), 1.0, -x, 0.5, 0.25, -0.25, 3.0]).unwrap()
        })
        .collect()
}

#[test]
fn load_peaks_at_most_2_1_times_the_batch_and_resides_in_1_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        // 1 Mi vectors (32 MiB) with the default 2 MiB chunks.
        #[cfg(feature = "fory-messages")]
        (Format::Fory, 1 << 20),
        // Text is ~3x larger on disk, and slow to parse unoptimized: a
        // smaller batch, and smaller chunks to match.
        #[cfg(feature = "json")]
        (Format::JsonLines, 1 << 17),
    ];
    for (format, n) in cases {
        let v = batch(n);
        let path = dir.path().join(format!("{format}"));
        let chunk = if n >= 1 << 20 {
            FileOptions::DEFAULT_CHUNK_VECTORS
        } else {
            8192
        };
        let mut w = file::FileWriter::create(
            &path,
            format,
            FileOptions::new()
                .with_chunk_vectors(chunk)
                .with_durable(false),
        )
        .unwrap();
        w.write(&v).unwrap();
        w.finish().unwrap();
        let payload = n * 32;
        let (back, peak) = peak_of(|| file::load(&path, Policy::Strict).unwrap());
        assert!(back == v, "{format}: round trip");
        drop(back);
        let ratio = peak as f64 / payload as f64;
        eprintln!("{format}: {n} vectors, payload {payload} B, load peak {peak} B ({ratio:.3}x)");
        // The output's last growth (old and new buffers), plus two chunks.
        assert!(
            ratio <= 2.1,
            "{format}: load peaked at {ratio:.3}x the payload"
        );
        assert!(
            ratio >= 1.0,
            "{format}: the counter is broken ({ratio:.3}x)"
        );
        let (back, resident) = resident_peak_of(|| file::load(&path, Policy::Strict).unwrap());
        assert!(back == v, "{format}: round trip");
        drop(back);
        // Measured through /proc on Linux: a precondition there.
        if cfg!(target_os = "linux")
            && !common::precondition(
                resident.is_some(),
                "/proc/self/clear_refs and /proc/self/status (a mounted procfs, \
                 writable), to measure resident memory",
            )
        {
            continue;
        }
        if let Some(resident) = resident {
            let ratio = resident as f64 / payload as f64;
            eprintln!("{format}: load resident peak {resident} B ({ratio:.3}x)");
            assert!(
                ratio <= 1.2,
                "{format}: load's resident memory peaked at {ratio:.3}x the payload"
            );
        }
    }
}
