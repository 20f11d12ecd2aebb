//! Transparent huge pages for large outputs.
//!
//! A fresh 32 MiB output costs 8192 page faults in 4 KiB pages, and on a
//! virtual machine each fault costs microseconds: more than computing the
//! output. Where the kernel offers transparent huge pages only on request
//! (`/sys/kernel/mm/transparent_hugepage/enabled` is `madvise`, a common
//! default), the functions here request them for the untouched part of a
//! new buffer, so it faults in 2 MiB at a time. Buffers stay ordinary
//! `Vec`s from the global allocator; only their own 2 MiB-aligned interior
//! is advised, and the advice changes no byte. Elsewhere (other systems,
//! WebAssembly, Miri) these are no-ops.
//!
//! The batch functions of [`batch`](crate::batch) that allocate their
//! output use [`zeroed_vec`]; hydron-codec uses [`advise_spare`] for the
//! outputs of its readers.
//!
//! ```
//! use hydron_core::{huge, Gf8};
//!
//! let big: Vec<Gf8> = huge::zeroed_vec(1 << 20); // 32 MiB, advised
//! assert!(big.iter().all(|v| v.is_zero()));
//! ```

/// The huge page size advised for (x86-64 and aarch64 with 4 KiB pages).
///
/// ```
/// assert_eq!(hydron_core::huge::HUGE_PAGE, 2 << 20);
/// ```
pub const HUGE_PAGE: usize = 2 << 20;

/// Outputs from this many bytes on are advised: below it, at most one huge
/// page would fit, and the faults saved do not pay for a new buffer.
///
/// ```
/// assert_eq!(hydron_core::huge::MIN_HUGE_BYTES, 4 << 20);
/// ```
pub const MIN_HUGE_BYTES: usize = 4 << 20;

/// The `[start, end)` byte offsets, within a region of `len` bytes at
/// address `addr`, of the largest part aligned to [`HUGE_PAGE`] at both
/// ends; `None` if no whole huge page fits.
#[must_use]
fn aligned_interior(addr: usize, len: usize) -> Option<(usize, usize)> {
    let start = addr.checked_next_multiple_of(HUGE_PAGE)?;
    let end = addr.checked_add(len)? / HUGE_PAGE * HUGE_PAGE;
    (end > start).then(|| (start - addr, end - addr))
}

/// Advises the 2 MiB-aligned interior of the `bytes` bytes at `base`.
///
/// # Safety
///
/// `base .. base + bytes` must be memory the caller owns (its contents are
/// not changed).
#[inline]
unsafe fn advise_region(base: *mut u8, bytes: usize) {
    let Some((start, end)) = aligned_interior(base.addr(), bytes) else {
        return;
    };
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        // SAFETY: `start..end` lies within the region (`end <= bytes`),
        // which the caller owns; both ends are 2 MiB-aligned, so page-
        // aligned as `madvise` requires. `MADV_HUGEPAGE` changes no byte of
        // it, only how pages not yet touched will be backed. The result is
        // ignored: the advice may be refused and nothing depends on it.
        unsafe {
            libc::madvise(base.add(start).cast(), end - start, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = (base, start, end);
}

/// Asks the kernel to back the 2 MiB-aligned interior of `v`'s spare
/// capacity with huge pages when it is first touched. Call it on a new
/// buffer, before writing to it. Only advice: the contents are unchanged,
/// and if the kernel refuses (huge pages disabled), nothing happens.
///
/// ```
/// let mut out: Vec<u8> = Vec::with_capacity(8 << 20);
/// hydron_core::huge::advise_spare(&mut out);
/// out.resize(8 << 20, 1); // faults in 2 MiB pages where the system offers them
/// assert_eq!(out[12345], 1);
/// ```
#[inline]
pub fn advise_spare<T>(v: &mut Vec<T>) {
    let spare = v.spare_capacity_mut();
    let bytes = core::mem::size_of_val(spare);
    // SAFETY: the spare capacity is memory `v` owns; advice changes none
    // of it.
    unsafe { advise_region(spare.as_mut_ptr().cast::<u8>(), bytes) };
}

/// `n` zero values in a new `Vec`, allocated zeroed (fresh pages the
/// kernel zeroes, not written by this process) and, from
/// [`MIN_HUGE_BYTES`] on, advised to be backed by huge pages when first
/// touched: the output buffer of a large batch call.
///
/// ```
/// let dots: Vec<f32> = hydron_core::huge::zeroed_vec(3);
/// assert_eq!(dots, [0.0; 3]);
/// ```
#[must_use]
pub fn zeroed_vec<T: bytemuck::Zeroable>(n: usize) -> Vec<T> {
    let mut v: Vec<T> = bytemuck::allocation::zeroed_vec(n);
    let bytes = core::mem::size_of_val(v.as_slice());
    if bytes >= MIN_HUGE_BYTES {
        // SAFETY: the buffer is `v`'s; advice changes none of it (its
        // zeroes stay zeroes, however the pages are backed).
        unsafe { advise_region(v.as_mut_ptr().cast::<u8>(), bytes) };
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interiors_are_whole_aligned_huge_pages_inside_the_region() {
        assert_eq!(aligned_interior(0, HUGE_PAGE), Some((0, HUGE_PAGE)));
        assert_eq!(aligned_interior(16, HUGE_PAGE), None);
        assert_eq!(
            aligned_interior(16, 3 * HUGE_PAGE),
            Some((HUGE_PAGE - 16, 3 * HUGE_PAGE - 16))
        );
        assert_eq!(aligned_interior(HUGE_PAGE + 1, 2 * HUGE_PAGE - 2), None);
        assert_eq!(
            aligned_interior(HUGE_PAGE + 1, 2 * HUGE_PAGE),
            Some((HUGE_PAGE - 1, 2 * HUGE_PAGE - 1))
        );
        assert_eq!(aligned_interior(usize::MAX - 10, 100), None);
        assert_eq!(aligned_interior(4096, 0), None);
    }

    /// On Linux with huge pages available on request, an advised buffer
    /// is backed by them once touched (`AnonHugePages` in smaps grows).
    #[test]
    #[cfg(all(target_os = "linux", not(miri)))]
    fn advised_buffers_fault_in_huge_pages() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if !crate::precondition::precondition(
            mode.is_ok_and(|m| m.contains("[madvise]") || m.contains("[always]")),
            "transparent huge pages on request (/sys/kernel/mm/transparent_hugepage/enabled \
             is `madvise` or `always`)",
        ) {
            return;
        }
        let mut v: Vec<u8> = Vec::with_capacity(8 * HUGE_PAGE);
        advise_spare(&mut v);
        v.resize(8 * HUGE_PAGE, 0x5a);
        let addr = v.as_ptr().addr();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        // The mapping that holds the buffer's middle, and its huge pages.
        let mut huge_kib = None;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((a, b)) = range.split_once('-') {
                    if let (Ok(a), Ok(b)) =
                        (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                    {
                        inside = (a..b).contains(&(addr + 4 * HUGE_PAGE));
                        continue;
                    }
                }
            }
            if inside {
                if let Some(kib) = line.strip_prefix("AnonHugePages:") {
                    huge_kib = kib
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<usize>()
                        .ok();
                }
            }
        }
        let huge_kib = huge_kib.expect("the buffer's mapping in smaps");
        // At least 5 of the 6 or 7 whole huge pages inside (the kernel may
        // find no free 2 MiB page for one under memory pressure).
        assert!(huge_kib >= 5 * 2048, "{huge_kib} kB in huge pages");
        assert!(v.iter().all(|&b| b == 0x5a));
    }
}
