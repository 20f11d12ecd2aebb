//! Transparent huge pages for large outputs.
//!
//! A fresh 32 MiB output costs 8192 page faults in 4 KiB pages, and on a
//! virtual machine each fault costs microseconds: more than reading, checking
//! and copying the data. Where the kernel offers transparent huge pages only
//! on request (`/sys/kernel/mm/transparent_hugepage/enabled` is `madvise`, a
//! common default), [`advise_spare`] requests them for the untouched part of
//! a new buffer, so it faults in 2 MiB at a time. The buffer stays an
//! ordinary `Vec` from the global allocator; only its own, not yet touched,
//! 2 MiB-aligned interior is advised. Elsewhere (other systems, Miri) this is
//! a no-op.

/// The huge page size advised for (x86-64 and aarch64 with 4 KiB pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Buffers from this size on get a fresh allocation with huge pages when
/// they grow (see [`crate::file::reserve_read`]): below it, the faults saved
/// do not pay for copying into a new buffer.
pub(crate) const MIN_HUGE_BYTES: usize = 4 << 20;

/// The `[start, end)` byte offsets, within a region of `len` bytes at
/// address `addr`, of the largest part aligned to [`HUGE_PAGE`] at both
/// ends; `None` if no whole huge page fits.
#[must_use]
pub(crate) fn aligned_interior(addr: usize, len: usize) -> Option<(usize, usize)> {
    let start = addr.checked_next_multiple_of(HUGE_PAGE)?;
    let end = addr.checked_add(len)? / HUGE_PAGE * HUGE_PAGE;
    (end > start).then(|| (start - addr, end - addr))
}

/// Asks the kernel to back the 2 MiB-aligned interior of `v`'s spare
/// capacity with huge pages when it is first touched. Call it on a new
/// buffer, before writing to it. Only advice: the contents are unchanged,
/// and if the kernel refuses (huge pages disabled), nothing happens.
#[inline]
pub(crate) fn advise_spare<T>(v: &mut Vec<T>) {
    let spare = v.spare_capacity_mut();
    let bytes = core::mem::size_of_val(spare);
    let base = spare.as_mut_ptr().cast::<u8>();
    let Some((start, end)) = aligned_interior(base.addr(), bytes) else {
        return;
    };
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        // SAFETY: `start..end` lies within the spare capacity (`end <=
        // bytes`), memory `v` owns; both ends are 2 MiB-aligned, so page-
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
        if !mode.is_ok_and(|m| m.contains("[madvise]") || m.contains("[always]")) {
            eprintln!("transparent huge pages are off here: nothing to check");
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
