//! [`load`](super::load) across all cores (feature `parallel`, Unix): a
//! large binary container in a regular file is read by position (`pread`),
//! its chunks in pieces of 1 MiB, each piece read, checksummed and decoded
//! straight into its place in the output by a thread of rayon's pool.
//!
//! Built for little-endian Linux (the coordinates are read by `pread`
//! straight into the output, where they are already `f32`s).
//!
//! This is a fast path only. It returns `None` at the first surprise (a
//! frame, checksum or vector that is not right, a file that changes while
//! it is read, a form it does not handle), and the caller then reads the
//! file on one thread from the start, which names the problem exactly as
//! it always does. So the path changes how fast a good file loads, never
//! what any file loads to or which error it reports.
//!
//! Memory follows the rule of the serial reader: nothing is reserved from
//! a claim. The frames are read first (a few bytes per chunk); the
//! coordinates of the first half of the vectors are then read and their
//! checksums verified (keeping nothing), and only then is the output
//! reserved for all of them, at most twice what the file has proven to
//! hold, as in the serial `presize`.

use std::fs::File;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

use crc32fast::Hasher;
use hydron_core::Gf8;
use rayon::prelude::*;

use super::binary::{check_chunk_frame, check_header, trailer_counts};
use super::binary::{BLOCK_LEN, FRAME_LEN, HEADER_LEN};
use crate::Policy;

/// The sizes that decide whether and how a file is read across the pool.
/// [`Sizes::DEFAULT`] is what [`load`] uses; the unit tests also run the
/// path with small ones, so that Miri (`scripts/miri.sh`) can check its
/// `unsafe` code on a file of a few vectors, every piece and block the same
/// as in a large file.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    /// Files with fewer bytes of vectors than this are read on one thread:
    /// below it, handing the work to the pool costs about what it saves.
    min_vector_bytes: u64,
    /// Vectors per piece of work.
    piece_vectors: u32,
    /// Files whose chunks hold fewer vectors than this on average are read
    /// on one thread: the frames are read one by one before the
    /// coordinates, three small reads per chunk, which would cost more than
    /// they save.
    min_mean_chunk_vectors: u64,
    /// Vectors read (and checksummed) at a time within a piece.
    block_vectors: usize,
}

impl Sizes {
    /// From 4 MiB of vectors ([`MIN_HUGE_BYTES`](hydron_core::huge::MIN_HUGE_BYTES));
    /// pieces of 1 MiB of coordinates, so that a chunk of the default size
    /// (65,536 vectors) is two pieces and 1M vectors are 32; chunks of at
    /// least 1,024 vectors on average; blocks of [`BLOCK_LEN`] bytes.
    const DEFAULT: Sizes = Sizes {
        min_vector_bytes: hydron_core::huge::MIN_HUGE_BYTES as u64,
        piece_vectors: 32 * 1024,
        min_mean_chunk_vectors: 1024,
        block_vectors: BLOCK_LEN / 32,
    };
}

/// A chunk whose frame and fory framing have been read and checked.
struct Chunk {
    /// The CRC-32 state after the frame header and the fory framing.
    head: Hasher,
    /// The checksum stored after the chunk's message.
    stored: u32,
    /// Its vectors.
    vectors: u64,
    /// Its pieces, in the list of pieces.
    pieces: Range<usize>,
}

/// Up to [`Sizes::piece_vectors`] consecutive vectors of one chunk.
struct Piece {
    /// Where its coordinates start in the file.
    at: u64,
    vectors: u32,
}

/// The vectors of the container in `file`, read across rayon's pool, or
/// `None` when the serial reader must read it (see the module docs).
///
/// It runs where hydron-core's kernels split ([`hydron_core::parallel::run`]):
/// rayon's global pool, or in a child made by `fork()` (which has none of
/// that pool's threads) a pool of the child's own.
pub(crate) fn load(file: &File, policy: Policy) -> Option<Vec<Gf8>> {
    hydron_core::parallel::run(|| load_with(file, policy, Sizes::DEFAULT))
}

/// [`load`] with these sizes.
#[inline]
fn load_with(file: &File, policy: Policy, sizes: Sizes) -> Option<Vec<Gf8>> {
    let ends = scan_ends(file, sizes)?;
    // Only now, for a large file, ask for the pool (which starts it).
    if rayon::current_num_threads() < 2 {
        return None;
    }
    let (chunks, pieces, vectors) = scan_chunks(file, &ends, sizes)?;
    // Prove the chunks that hold the first half, keeping nothing.
    let half = vectors.div_ceil(2);
    let proving_chunks = chunks
        .iter()
        .scan(0u64, |before, chunk| {
            let start = *before;
            *before += chunk.vectors;
            Some(start)
        })
        .take_while(|&start| start < half)
        .count();
    let proving_pieces = chunks[proving_chunks - 1].pieces.end;
    let sums = read_pieces(file, &pieces[..proving_pieces], None, policy, sizes)?;
    if !checksums_match(&chunks[..proving_chunks], &sums) {
        return None;
    }
    // Then read everything into an output reserved once.
    let n = usize::try_from(vectors).ok()?;
    let mut out: Vec<Gf8> = Vec::new();
    out.try_reserve_exact(n).ok()?;
    hydron_core::huge::advise_spare(&mut out);
    let sums = read_pieces(
        file,
        &pieces,
        Some(&mut out.spare_capacity_mut()[..n]),
        policy,
        sizes,
    )?;
    if !checksums_match(&chunks, &sums) {
        return None;
    }
    // SAFETY: `read_pieces` returned `Some`, so every piece was read and
    // `payload::fill` accepted all of its vectors, writing each of the `n`
    // slots (the pieces cover the vectors in order, none left out) with a
    // vector valid under `policy`.
    unsafe { out.set_len(n) };
    Some(out)
}

/// What the header and the trailer of a file this path takes on say.
#[derive(Clone, Copy)]
struct Ends {
    /// Where the trailer starts.
    trailer_at: u64,
    /// The header's largest chunk.
    max_chunk_vectors: u32,
    /// The trailer's counts.
    chunk_count: u64,
    vectors: u64,
}

/// Reads and checks the header and the trailer: `None` unless the file is
/// one this path takes on (large enough, in chunks large enough).
fn scan_ends(file: &File, sizes: Sizes) -> Option<Ends> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let trailer_at = meta.len().checked_sub(FRAME_LEN as u64)?;
    let mut header = [0u8; HEADER_LEN];
    file.read_exact_at(&mut header, 0).ok()?;
    let max_chunk_vectors = check_header(&header).ok()?;
    let mut trailer = [0u8; FRAME_LEN];
    file.read_exact_at(&mut trailer, trailer_at).ok()?;
    let (chunk_count, vectors) = trailer_counts(&trailer)?;
    if vectors.saturating_mul(32) < sizes.min_vector_bytes
        || vectors > trailer_at / 32
        || chunk_count.saturating_mul(sizes.min_mean_chunk_vectors) > vectors
    {
        return None;
    }
    Some(Ends {
        trailer_at,
        max_chunk_vectors,
        chunk_count,
        vectors,
    })
}

/// Reads and checks every chunk's frame and fory framing after
/// [`scan_ends`]: the chunks, their pieces and the number of vectors.
fn scan_chunks(file: &File, ends: &Ends, sizes: Sizes) -> Option<(Vec<Chunk>, Vec<Piece>, u64)> {
    let Ends {
        trailer_at,
        max_chunk_vectors,
        chunk_count,
        vectors,
    } = *ends;
    let mut chunks = Vec::new();
    let mut pieces = Vec::new();
    let mut head = Vec::new();
    let mut at = HEADER_LEN as u64;
    let mut seen = 0u64;
    for k in 0..chunk_count {
        let mut frame = [0u8; FRAME_LEN];
        file.read_exact_at(&mut frame, at).ok()?;
        let frame_at = at;
        let chunk = check_chunk_frame(&frame, k, max_chunk_vectors, frame_at).ok()?;
        let coords = 32 * u64::from(chunk.count);
        // At most `MAX_PAYLOAD_OVERHEAD` bytes, as the frame was checked.
        head.resize((chunk.payload_len - coords) as usize, 0);
        at += FRAME_LEN as u64;
        file.read_exact_at(&mut head, at).ok()?;
        if crate::fory::batch_array_len_after(&head) != Some(coords) {
            return None;
        }
        at += head.len() as u64;
        let mut stored = [0u8; 4];
        file.read_exact_at(&mut stored, at + coords).ok()?;
        let mut hasher = Hasher::new();
        hasher.update(&frame);
        hasher.update(&head);
        let first_piece = pieces.len();
        let mut left = chunk.count;
        while left > 0 {
            let take = left.min(sizes.piece_vectors);
            pieces.push(Piece { at, vectors: take });
            at += 32 * u64::from(take);
            left -= take;
        }
        chunks.push(Chunk {
            head: hasher,
            stored: u32::from_le_bytes(stored),
            vectors: u64::from(chunk.count),
            pieces: first_piece..pieces.len(),
        });
        at += 4;
        seen += u64::from(chunk.count);
        if at > trailer_at {
            return None;
        }
    }
    (at == trailer_at && seen == vectors).then_some((chunks, pieces, vectors))
}

/// Reads `pieces` in the pool: the CRC-32 of each piece's coordinates, in
/// order, and with `out` (one slot per vector of the pieces, in order)
/// their vectors decoded by `policy`. `None` if a read fails or a vector
/// is refused.
fn read_pieces(
    file: &File,
    pieces: &[Piece],
    out: Option<&mut [MaybeUninit<Gf8>]>,
    policy: Policy,
    sizes: Sizes,
) -> Option<Vec<Hasher>> {
    let mut work = Vec::with_capacity(pieces.len());
    let mut rest = out;
    for piece in pieces {
        let slots = match rest.take() {
            Some(slots) => {
                let (mine, later) = slots.split_at_mut(piece.vectors as usize);
                rest = Some(later);
                Some(mine)
            }
            None => None,
        };
        work.push((piece, slots));
    }
    work.into_par_iter()
        .map_init(
            || vec![0u8; 32 * sizes.block_vectors],
            |buffer, (piece, slots)| read_piece(file, piece, slots, policy, sizes, buffer),
        )
        .collect()
}

/// Reads one piece a block at a time into `slots` (or, to prove it,
/// into `buffer`), adding each block to the piece's CRC-32 and applying
/// `policy` to its vectors in place while the block is in cache. Reading
/// straight into the output saves a copy through the buffer, which is
/// what counts here: the load is bound by memory bandwidth.
fn read_piece(
    file: &File,
    piece: &Piece,
    mut slots: Option<&mut [MaybeUninit<Gf8>]>,
    policy: Policy,
    sizes: Sizes,
    buffer: &mut [u8],
) -> Option<Hasher> {
    let mut hasher = Hasher::new();
    let vectors = piece.vectors as usize;
    let mut done = 0;
    while done < vectors {
        let take = (vectors - done).min(sizes.block_vectors);
        let at = piece.at + 32 * done as u64;
        match slots.as_deref_mut() {
            None => {
                let block = &mut buffer[..32 * take];
                file.read_exact_at(block, at).ok()?;
                hasher.update(block);
            }
            Some(slots) => {
                let block = &mut slots[done..done + take];
                let arrays = read_vectors_at(file, block, at)?;
                hasher.update(bytemuck::cast_slice(arrays));
                policy.apply_in_place(arrays).ok()?;
            }
        }
        done += take;
    }
    Some(hasher)
}

/// Fills `slots` with the coordinates stored at byte `at` of `file` (32
/// little-endian bytes per slot; this module is built for little-endian
/// targets only) and returns them as arrays, or `None` if the file ends
/// first or a read fails.
fn read_vectors_at<'a>(
    file: &File,
    slots: &'a mut [MaybeUninit<Gf8>],
    at: u64,
) -> Option<&'a mut [[f32; 8]]> {
    // The length is taken before the pointer: `slots` is not used again,
    // since reading it (even its length) after `as_mut_ptr` would make the
    // pointer read-only under Tree Borrows (Miri found this).
    let count = slots.len();
    let len = 32 * count;
    let ptr = slots.as_mut_ptr().cast::<u8>();
    let mut filled = 0;
    while filled < len {
        let offset = libc::off_t::try_from(at + filled as u64).ok()?;
        // SAFETY: `ptr + filled .. ptr + len` lies inside `slots`, which
        // this function borrows mutably, so the kernel may write there; no
        // Rust reference to those (uninitialized) bytes exists meanwhile.
        let read = unsafe {
            libc::pread(
                file.as_raw_fd(),
                ptr.add(filled).cast::<libc::c_void>(),
                len - filled,
                offset,
            )
        };
        match read {
            0 => return None,
            n if n > 0 => filled += n as usize,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return None,
        }
    }
    // SAFETY: all `len` bytes of `slots` were written by the reads above,
    // `[f32; 8]` has the size and alignment of `Gf8` (a `repr(C)` wrapper of
    // it) and every bit pattern is a valid `[f32; 8]`; the borrow of
    // `slots` is handed on, so nothing else aliases it.
    Some(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<[f32; 8]>(), count) })
}

/// Whether each chunk's stored checksum is the CRC-32 of its frame header,
/// its fory framing and its pieces (`sums`, one per piece from the first).
fn checksums_match(chunks: &[Chunk], sums: &[Hasher]) -> bool {
    chunks.iter().all(|chunk| {
        let mut hasher = chunk.head.clone();
        for piece in &sums[chunk.pieces.clone()] {
            hasher.combine(piece);
        }
        hasher.finalize() == chunk.stored
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use hydron_core::Gf8;

    use super::*;
    use crate::file::{FileOptions, Format};

    /// `n` unit vectors, every 1,000th of them scaled by 2 (not unit).
    fn vectors(n: usize) -> Vec<Gf8> {
        (0..n)
            .map(|i| {
                let x = i as f32 * 1e-3;
                let v = Gf8::normalize([x.sin(), x.cos(), 1.0, -x, 0.5, 0.25, -0.25, 3.0]).unwrap();
                if i % 1000 == 999 {
                    Gf8::new_unchecked(v.scale(2.0))
                } else {
                    v
                }
            })
            .collect()
    }

    /// The container's bytes, written in one go: encoded on this thread
    /// (`FileWriter` checks and checksums the next chunk on rayon's pool,
    /// which the one-thread test under Miri's strict provenance cannot
    /// start).
    fn save(path: &Path, vectors: &[Gf8], chunk_vectors: u32) {
        let options = FileOptions::new().with_chunk_vectors(chunk_vectors);
        let bytes = crate::file::to_vec(vectors, Format::Fory, options).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    fn fast(path: &Path, policy: Policy) -> Option<Vec<Gf8>> {
        load(&File::open(path).unwrap(), policy)
    }

    /// Sizes small enough for Miri: from 40 vectors on, pieces of 16
    /// vectors read 5 at a time, chunks of at least 4 vectors on average.
    const SMALL: Sizes = Sizes {
        min_vector_bytes: 32 * 40,
        piece_vectors: 16,
        min_mean_chunk_vectors: 4,
        block_vectors: 5,
    };

    /// A pool of two threads: the path needs two, and Miri offers one CPU.
    fn two_threads() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
    }

    /// [`load_with`] the small sizes in `pool`.
    fn fast_small(pool: &rayon::ThreadPool, path: &Path, policy: Policy) -> Option<Vec<Gf8>> {
        let file = File::open(path).unwrap();
        pool.install(|| load_with(&file, policy, SMALL))
    }

    /// The Miri test of this module's `unsafe` code across the pool
    /// (`scripts/miri.sh` runs it under Tree Borrows: rayon's
    /// crossbeam-epoch breaks Stacked Borrows and strict provenance):
    /// `pread` into the output's uninitialized spare capacity, the `[f32;
    /// 8]` view of what it wrote, and `set_len` once every slot is written;
    /// with chunks smaller than a piece, of a piece, of a piece and a part,
    /// and of everything; a vector that `Strict` refuses after part of the
    /// output is written, and one `Renormalize` fixes; a damaged coordinate
    /// in the half that is not proven first (found only after the whole
    /// output is written).
    #[test]
    fn small_sizes_across_the_pool_read_every_piece_into_the_output() {
        let pool = two_threads();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.hyd");
        let mut vs = vectors(61);
        vs[45] = Gf8::new_unchecked(vs[45].scale(2.0));
        for chunk_vectors in [7, 16, 64, 21] {
            save(&path, &vs, chunk_vectors);
            let trusted = fast_small(&pool, &path, Policy::Trusted).expect("the fast path");
            assert!(trusted == vs, "chunks of {chunk_vectors}");
        }
        // (Each load takes seconds under Miri: the policies on one layout.)
        let fixed = fast_small(&pool, &path, Policy::Renormalize).expect("the fast path");
        assert_eq!(
            fixed,
            Policy::Renormalize
                .apply(Gf8::slice_as_arrays(&vs).to_vec())
                .unwrap()
        );
        assert!(fast_small(&pool, &path, Policy::Strict).is_none());
        let unit: Vec<Gf8> = vs
            .iter()
            .map(|v| Gf8::normalize(v.to_array()).unwrap())
            .collect();
        save(&path, &unit, 16);
        assert!(fast_small(&pool, &path, Policy::Strict).expect("the fast path") == unit);
        // A coordinate of vector 50 (chunk 3, read only into the output).
        let mut bad = std::fs::read(&path).unwrap();
        let at = bad.len() - FRAME_LEN - 4 - 11 * 32 + 5;
        bad[at] ^= 0x01;
        std::fs::write(&path, &bad).unwrap();
        assert!(fast_small(&pool, &path, Policy::Trusted).is_none());
        // Fewer vectors than the small sizes' minimum: the serial reader's.
        save(&path, &unit[..39], 16);
        assert!(fast_small(&pool, &path, Policy::Trusted).is_none());
        save(&path, &unit[..40], 16);
        assert!(fast_small(&pool, &path, Policy::Trusted).is_some());
    }

    /// The same reads on this thread, without the pool, so that Miri checks
    /// `read_vectors_at`'s `pread` into uninitialized slots and its `[f32;
    /// 8]` view under its default rules (Stacked Borrows) and strict
    /// provenance: every piece of a small file read block by block into
    /// one output's spare capacity, the checksums matching, and the view
    /// of each block holding the saved coordinates.
    #[test]
    fn small_pieces_on_one_thread_read_into_uninitialized_slots() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.hyd");
        let vs = vectors(45);
        save(&path, &vs, 21);
        let file = File::open(&path).unwrap();
        let ends = scan_ends(&file, SMALL).expect("a file the path takes");
        let (chunks, pieces, n) = scan_chunks(&file, &ends, SMALL).unwrap();
        assert_eq!((chunks.len(), pieces.len(), n), (3, 5, 45));
        let mut out: Vec<Gf8> = Vec::with_capacity(45);
        let mut slots = &mut out.spare_capacity_mut()[..];
        let mut sums = Vec::new();
        let mut buffer = vec![0u8; 32 * SMALL.block_vectors];
        let mut first = 0;
        for piece in &pieces {
            let (mine, later) = slots.split_at_mut(piece.vectors as usize);
            sums.push(
                read_piece(
                    &file,
                    piece,
                    Some(&mut *mine),
                    Policy::Strict,
                    SMALL,
                    &mut buffer,
                )
                .unwrap(),
            );
            // The view `read_vectors_at` gives of slots it has filled.
            let arrays = read_vectors_at(&file, &mut mine[..3], piece.at).unwrap();
            assert_eq!(arrays, Gf8::slice_as_arrays(&vs[first..first + 3]));
            first += piece.vectors as usize;
            slots = later;
        }
        assert!(checksums_match(&chunks, &sums));
        // A read past the end of the file stops at once.
        let end = std::fs::metadata(&path).unwrap().len();
        assert!(read_vectors_at(&file, &mut out.spare_capacity_mut()[..2], end - 40).is_none());
    }

    #[test]
    fn takes_large_files_whatever_their_chunks_and_gives_what_was_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.hyd");
        let vs = vectors(150_001);
        // Chunks of the default size, smaller than a piece, larger than a
        // piece but not a multiple of it, and one chunk of it all.
        for chunk_vectors in [65_536, 4_096, 50_000, 1 << 20] {
            save(&path, &vs, chunk_vectors);
            let trusted = fast(&path, Policy::Trusted).expect("the fast path");
            assert!(trusted == vs, "chunks of {chunk_vectors}");
            let fixed = fast(&path, Policy::Renormalize).expect("the fast path");
            assert_eq!(
                fixed,
                Policy::Renormalize
                    .apply(Gf8::slice_as_arrays(&vs).to_vec())
                    .unwrap()
            );
            // Strict refuses the scaled vectors: left to the serial reader.
            assert!(fast(&path, Policy::Strict).is_none());
        }
        let unit: Vec<Gf8> = vs
            .iter()
            .map(|v| Gf8::normalize(v.to_array()).unwrap())
            .collect();
        save(&path, &unit, 65_536);
        assert!(fast(&path, Policy::Strict).expect("the fast path") == unit);
    }

    #[test]
    fn leaves_small_files_finely_chunked_files_and_one_thread_to_the_serial_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.hyd");
        let vs = vectors(150_001);
        save(&path, &vs[..100_000], 65_536); // 3.2 MB of vectors
        assert!(fast(&path, Policy::Trusted).is_none());
        save(&path, &vs, 512);
        assert!(fast(&path, Policy::Trusted).is_none());
        save(&path, &vs, 65_536);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert!(one.install(|| fast(&path, Policy::Trusted)).is_none());
        assert!(fast(&path, Policy::Trusted).is_some());
    }

    #[test]
    fn gives_up_at_any_changed_byte_of_a_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.hyd");
        save(&path, &vectors(150_001), 65_536);
        let good = std::fs::read(&path).unwrap();
        let frames: Vec<usize> = good
            .windows(4)
            .enumerate()
            .filter_map(|(at, w)| (w == b"CHNK").then_some(at))
            .collect();
        assert_eq!(frames.len(), 3);
        // A coordinate in the first half (read twice) and in the second
        // (read once), chunk 0's stored checksum, chunk 1's frame header
        // and its fory framing, the trailer.
        for at in [
            1_000,
            good.len() - 1_000,
            frames[1] - 1,
            frames[1] + 4,
            frames[1] + 24 + 1,
            good.len() - 10,
        ] {
            let mut bad = good.clone();
            bad[at] ^= 0x01;
            std::fs::write(&path, &bad).unwrap();
            assert!(fast(&path, Policy::Trusted).is_none(), "byte {at}");
        }
        std::fs::write(&path, &good).unwrap();
        assert!(fast(&path, Policy::Trusted).is_some());
        let mut longer = good.clone();
        longer.push(0);
        std::fs::write(&path, &longer).unwrap();
        assert!(fast(&path, Policy::Trusted).is_none());
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(fast(&path, Policy::Trusted).is_none());
    }
}
