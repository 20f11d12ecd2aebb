//! The binary form: header, chunks of fory batch messages, trailer; every
//! part checksummed. The byte layout is in `docs/format.md`.

use std::io::{self, BufRead, Write};

use hydron_core::Gf8;

use super::{FileOptions, Section, MAGIC, VERSION};
use crate::uninit::Cursor;
use crate::{CodecError, Policy};

/// Header: magic, version, flags, max chunk vectors, CRC.
pub(crate) const HEADER_LEN: usize = 20;
/// A chunk's frame header, and the trailer: both 24 bytes.
pub(crate) const FRAME_LEN: usize = 24;
pub(crate) const CHUNK_TAG: [u8; 4] = *b"CHNK";
pub(crate) const TRAILER_TAG: [u8; 4] = *b"TAIL";
/// A fory batch message is `32 * count` bytes of coordinates plus a
/// header of a few dozen bytes; a payload length outside
/// `32 * count ..= 32 * count + MAX_PAYLOAD_OVERHEAD` is corrupt. This
/// bounds every allocation by the chunk's (checked) vector count.
const MAX_PAYLOAD_OVERHEAD: u64 = 4096;
/// Coordinates are read, checksummed and decoded this many bytes at a
/// time (a multiple of 32): small enough to stay in a core's L2 cache
/// between the passes, large enough that each read is cheap.
pub(crate) const BLOCK_LEN: usize = 256 * 1024;

/// CRC-32 (IEEE 802.3, as zlib) of the concatenated `parts`; see
/// `docs/format.md`.
#[inline]
fn crc32(parts: &[&[u8]]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

/// The 20-byte header for chunks of at most `chunk_vectors` vectors.
pub(crate) fn header(chunk_vectors: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10..12].copy_from_slice(&0u16.to_le_bytes());
    h[12..16].copy_from_slice(&chunk_vectors.to_le_bytes());
    let crc = crc32(&[&h[..16]]);
    h[16..20].copy_from_slice(&crc.to_le_bytes());
    h
}

/// The 24-byte frame header of chunk `index`.
fn chunk_frame(index: u64, count: u32, payload_len: u32) -> [u8; FRAME_LEN] {
    let mut f = [0u8; FRAME_LEN];
    f[..4].copy_from_slice(&CHUNK_TAG);
    f[4..12].copy_from_slice(&index.to_le_bytes());
    f[12..16].copy_from_slice(&count.to_le_bytes());
    f[16..20].copy_from_slice(&payload_len.to_le_bytes());
    let crc = crc32(&[&f[..20]]);
    f[20..24].copy_from_slice(&crc.to_le_bytes());
    f
}

/// The 24-byte trailer.
fn trailer(chunks: u64, vectors: u64) -> [u8; FRAME_LEN] {
    let mut t = [0u8; FRAME_LEN];
    t[..4].copy_from_slice(&TRAILER_TAG);
    t[4..12].copy_from_slice(&chunks.to_le_bytes());
    t[12..20].copy_from_slice(&vectors.to_le_bytes());
    let crc = crc32(&[&t[..20]]);
    t[20..24].copy_from_slice(&crc.to_le_bytes());
    t
}

#[inline]
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Whether the 4-byte CRC at `at` is the CRC-32 of the bytes before it.
#[inline]
fn crc_ok(b: &[u8], at: usize) -> Result<(), String> {
    let stored = u32_at(b, at);
    let computed = crc32(&[&b[..at]]);
    if stored == computed {
        Ok(())
    } else {
        Err(format!(
            "checksum mismatch (stored {stored:08x}, computed {computed:08x})"
        ))
    }
}

/// Checks a header; returns the largest chunk it allows (in vectors).
pub(crate) fn check_header(h: &[u8; HEADER_LEN]) -> Result<u32, CodecError> {
    let corrupt = |detail: String| CodecError::Corrupt {
        section: Section::Header,
        offset: 0,
        detail,
    };
    if h[..8] != MAGIC {
        return Err(corrupt("bad magic bytes".into()));
    }
    crc_ok(h, 16).map_err(corrupt)?;
    let version = u16::from_le_bytes([h[8], h[9]]);
    if version != VERSION {
        return Err(CodecError::UnsupportedVersion {
            found: version.into(),
            supported: VERSION.into(),
        });
    }
    let flags = u16::from_le_bytes([h[10], h[11]]);
    if flags != 0 {
        return Err(corrupt(format!(
            "reserved flags are {flags:#06x}, must be 0"
        )));
    }
    let max_chunk_vectors = u32_at(h, 12);
    if !(1..=FileOptions::MAX_CHUNK_VECTORS).contains(&max_chunk_vectors) {
        return Err(corrupt(format!(
            "chunk size {max_chunk_vectors} is outside 1..={}",
            FileOptions::MAX_CHUNK_VECTORS
        )));
    }
    Ok(max_chunk_vectors)
}

/// What the checked frame header of a chunk says.
pub(crate) struct ChunkFrame {
    /// Its vectors: `1..=` the header's chunk size.
    pub(crate) count: u32,
    /// The length of its fory message: at least `32 * count`, at most
    /// [`MAX_PAYLOAD_OVERHEAD`] more.
    pub(crate) payload_len: u64,
}

/// Checks the frame header of chunk `k`, which starts at byte `start`, in
/// a file whose chunks hold at most `max_chunk_vectors`.
pub(crate) fn check_chunk_frame(
    frame: &[u8; FRAME_LEN],
    k: u64,
    max_chunk_vectors: u32,
    start: u64,
) -> Result<ChunkFrame, CodecError> {
    let corrupt = |detail: String| CodecError::Corrupt {
        section: Section::Chunk(k),
        offset: start,
        detail,
    };
    crc_ok(frame, 20).map_err(|d| corrupt(format!("frame header {d}")))?;
    let index = u64_at(frame, 4);
    if index != k {
        return Err(corrupt(format!(
            "the frame says chunk {index}, expected chunk {k} (a chunk is missing or out of place)"
        )));
    }
    let count = u32_at(frame, 12);
    if !(1..=max_chunk_vectors).contains(&count) {
        return Err(corrupt(format!(
            "vector count {count} is outside 1..={max_chunk_vectors}"
        )));
    }
    let payload_len = u64::from(u32_at(frame, 16));
    let min = 32 * u64::from(count);
    if !(min..=min + MAX_PAYLOAD_OVERHEAD).contains(&payload_len) {
        return Err(corrupt(format!(
            "payload length {payload_len} does not fit {count} vectors"
        )));
    }
    Ok(ChunkFrame { count, payload_len })
}

/// The chunk and vector counts of a trailer whose tag and checksum are
/// right (whether they match the file is for the reader to check).
pub(crate) fn trailer_counts(t: &[u8; FRAME_LEN]) -> Option<(u64, u64)> {
    (t[..4] == TRAILER_TAG && crc_ok(t, 20).is_ok()).then(|| (u64_at(t, 4), u64_at(t, 12)))
}

/// Writes the binary form to `W`, one chunk at a time.
pub(crate) struct Encoder<W: Write> {
    writer: W,
    chunk_vectors: usize,
    /// Vectors of a partly filled chunk (fewer than `chunk_vectors`).
    pending: Vec<Gf8>,
    /// The coordinates of a block on a big-endian target (unused on a
    /// little-endian one, where they are the vectors' own memory).
    scratch: Vec<u8>,
    chunks: u64,
    vectors: u64,
}

impl<W: Write> Encoder<W> {
    pub(crate) fn new(mut writer: W, options: FileOptions) -> io::Result<Encoder<W>> {
        writer.write_all(&header(options.chunk_vectors()))?;
        Ok(Encoder {
            writer,
            chunk_vectors: options.chunk_vectors() as usize,
            pending: Vec::new(),
            scratch: Vec::new(),
            chunks: 0,
            vectors: 0,
        })
    }

    pub(crate) fn write(&mut self, mut vectors: &[Gf8]) -> io::Result<()> {
        if !self.pending.is_empty() {
            let take = vectors.len().min(self.chunk_vectors - self.pending.len());
            self.pending.extend_from_slice(&vectors[..take]);
            vectors = &vectors[take..];
            if self.pending.len() == self.chunk_vectors {
                let pending = std::mem::take(&mut self.pending);
                self.emit(&pending)?;
                self.pending = pending;
                self.pending.clear();
            }
        }
        while vectors.len() >= self.chunk_vectors {
            let (chunk, rest) = vectors.split_at(self.chunk_vectors);
            self.emit(chunk)?;
            vectors = rest;
        }
        if !vectors.is_empty() {
            self.pending.reserve_exact(self.chunk_vectors);
            self.pending.extend_from_slice(vectors);
        }
        Ok(())
    }

    /// Writes `arrays`, each checked as [`Gf8::check`] does when `check`
    /// (else taken as they are, as [`Gf8::new_unchecked`] does): exactly
    /// what [`write`](Self::write) writes of the same vectors. A bad
    /// vector is [`CodecError::InvalidVector`], its index counted from
    /// `arrays[0]`, after the chunks before it have been written.
    ///
    /// With `pipeline` and the `parallel` feature (on a little-endian
    /// target), whole chunks are written in a pipeline: while this chunk is
    /// written (on the calling thread), the next is checked and checksummed
    /// on a thread of the pool, so the write does not wait for either. Only
    /// for a writer that cannot block for ever (a regular file, not a FIFO
    /// whose reader may need the pool).
    pub(crate) fn write_arrays(
        &mut self,
        arrays: &[[f32; 8]],
        check: bool,
        pipeline: bool,
    ) -> Result<(), CodecError>
    where
        W: Send,
    {
        let checked = |from: usize, to: usize| check_arrays(&arrays[from..to], from as u64, check);
        // Top up a partly filled chunk first, then whole chunks, then keep
        // the rest for later.
        let mut start = 0;
        if !self.pending.is_empty() {
            start = arrays.len().min(self.chunk_vectors - self.pending.len());
            self.write(checked(0, start)?).map_err(CodecError::Io)?;
        }
        let whole = start + (arrays.len() - start) / self.chunk_vectors * self.chunk_vectors;
        let arrays_whole = &arrays[start..whole];
        #[cfg(all(feature = "parallel", target_endian = "little"))]
        if pipeline {
            self.write_pipelined(arrays_whole, start as u64, check)?;
        } else {
            self.write_whole(arrays_whole, start as u64, check)?;
        }
        #[cfg(not(all(feature = "parallel", target_endian = "little")))]
        {
            let _ = pipeline;
            self.write_whole(arrays_whole, start as u64, check)?;
        }
        self.write(checked(whole, arrays.len())?)
            .map_err(CodecError::Io)?;
        Ok(())
    }

    /// Writes `arrays`, a whole number of chunks (the pending chunk is
    /// empty), checked if `check`; error indexes are offset by `base`.
    fn write_whole(
        &mut self,
        arrays: &[[f32; 8]],
        base: u64,
        check: bool,
    ) -> Result<(), CodecError> {
        debug_assert!(arrays.is_empty() || self.pending.is_empty());
        let mut at = base;
        for chunk in arrays.chunks(self.chunk_vectors) {
            let vectors = check_arrays(chunk, at, check)?;
            self.emit(vectors).map_err(CodecError::Io)?;
            at += chunk.len() as u64;
        }
        Ok(())
    }

    /// [`write_whole`](Self::write_whole) through a pipeline: chunk k is
    /// written on the calling thread while chunk k + 1 is checked and
    /// checksummed on a thread of rayon's pool. The bytes, and the first
    /// error, are those of writing the chunks in order.
    #[cfg(all(feature = "parallel", target_endian = "little"))]
    fn write_pipelined(
        &mut self,
        arrays: &[[f32; 8]],
        base: u64,
        check: bool,
    ) -> Result<(), CodecError>
    where
        W: Send,
    {
        debug_assert!(arrays.is_empty() || self.pending.is_empty());
        let chunks: Vec<&[[f32; 8]]> = arrays.chunks(self.chunk_vectors).collect();
        let Some(first) = chunks.first() else {
            return Ok(());
        };
        let first_index = self.chunks;
        let size = self.chunk_vectors as u64;
        let prepare = |k: usize, chunk: &[[f32; 8]]| {
            let vectors = check_arrays(chunk, base + k as u64 * size, check)?;
            Ok::<_, CodecError>(Prepared::new(first_index + k as u64, vectors))
        };
        // In a forked child, on the child's own pool (rayon's global pool
        // has no threads there); elsewhere on this thread, spawning on the
        // pool.
        hydron_core::parallel::run(|| {
            let mut ready = prepare(0, first)?;
            for (k, chunk) in chunks.iter().enumerate() {
                // Checked and checksummed: the same vectors as `chunk`.
                let vectors = Gf8::slice_from_arrays_unchecked(chunk);
                let mut next = None;
                let writer = &mut self.writer;
                let written = rayon::in_place_scope(|scope| {
                    if let Some(following) = chunks.get(k + 1) {
                        let (next, prepare) = (&mut next, &prepare);
                        scope.spawn(move |_| *next = Some(prepare(k + 1, following)));
                    }
                    ready.write(vectors, |b| writer.write_all(b))
                });
                written.map_err(CodecError::Io)?;
                self.chunks += 1;
                self.vectors += chunk.len() as u64;
                if let Some(next) = next {
                    ready = next?;
                }
            }
            Ok(())
        })
    }

    /// Writes one chunk (see [`write_chunk`]).
    fn emit(&mut self, chunk: &[Gf8]) -> io::Result<()> {
        let writer = &mut self.writer;
        write_chunk(self.chunks, chunk, &mut self.scratch, |b| {
            writer.write_all(b)
        })?;
        self.chunks += 1;
        self.vectors += chunk.len() as u64;
        Ok(())
    }

    #[inline]
    pub(crate) fn vectors(&self) -> u64 {
        self.vectors + self.pending.len() as u64
    }

    pub(crate) fn finish(mut self) -> io::Result<W> {
        if !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            self.emit(&pending)?;
        }
        self.writer.write_all(&trailer(self.chunks, self.vectors))?;
        self.writer.flush()?;
        Ok(self.writer)
    }
}

/// The exact length of the binary form of `n` vectors in chunks of
/// `chunk_vectors`, or `None` if it does not fit a `usize`.
pub(crate) fn encoded_len(n: usize, chunk_vectors: usize) -> Option<usize> {
    // Every chunk but the last is full; each is a frame, a message, a CRC.
    let chunk = |k: usize| FRAME_LEN + crate::fory::batch_exact_len(k) + 4;
    let (full, rest) = (n / chunk_vectors, n % chunk_vectors);
    let mut len = full.checked_mul(chunk(chunk_vectors))?;
    if rest > 0 {
        len = len.checked_add(chunk(rest))?;
    }
    len.checked_add(HEADER_LEN + FRAME_LEN)
}

/// Chunk `index` of `chunk`'s vectors, as `put` receives it piece by
/// piece: frame header, fory message, CRC. The coordinates are passed
/// straight from `chunk` (on a little-endian target; through `scratch` on
/// others), [`BLOCK_LEN`] bytes at a time, each added to the CRC just
/// before it is put (while it is in cache): they are never copied into a
/// message first.
fn write_chunk<E>(
    index: u64,
    chunk: &[Gf8],
    scratch: &mut Vec<u8>,
    mut put: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    // A chunk holds at most 2^20 vectors (32 MiB): one fory message, whose
    // length fits the frame's u32.
    let (head, head_len) = crate::fory::batch_head(chunk.len());
    let head = &head[..head_len];
    let message_len = (head_len + 32 * chunk.len()) as u32;
    let frame = chunk_frame(index, chunk.len() as u32, message_len);
    let mut crc = crc32fast::Hasher::new();
    crc.update(&frame);
    crc.update(head);
    put(&frame)?;
    put(head)?;
    for vectors in chunk.chunks(BLOCK_LEN / 32) {
        let block = crate::fory::batch_le_bytes(vectors, scratch);
        crc.update(block);
        put(block)?;
    }
    put(&crc.finalize().to_le_bytes())
}

/// `arrays` as vectors: checked as [`Gf8::check`] does if `check` (the
/// error's index offset by `base`), else taken as they are.
fn check_arrays(arrays: &[[f32; 8]], base: u64, check: bool) -> Result<&[Gf8], CodecError> {
    if !check {
        return Ok(Gf8::slice_from_arrays_unchecked(arrays));
    }
    Gf8::slice_from_arrays(arrays).map_err(|e| CodecError::InvalidVector {
        index: base + e.index as u64,
        error: e.error,
    })
}

/// A chunk whose frame and CRC have been computed, ready to be written:
/// the same bytes as [`write_chunk`] (little-endian targets, where the
/// coordinates are the vectors' own memory).
#[cfg(all(feature = "parallel", target_endian = "little"))]
struct Prepared {
    frame: [u8; FRAME_LEN],
    head: [u8; crate::fory::BATCH_HEAD_MAX],
    head_len: usize,
    crc: u32,
}

#[cfg(all(feature = "parallel", target_endian = "little"))]
impl Prepared {
    /// Chunk `index`, of `chunk`'s vectors.
    fn new(index: u64, chunk: &[Gf8]) -> Prepared {
        let (head, head_len) = crate::fory::batch_head(chunk.len());
        // At most 2^20 vectors (32 MiB): the length fits the frame's u32.
        let message_len = (head_len + 32 * chunk.len()) as u32;
        let frame = chunk_frame(index, chunk.len() as u32, message_len);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&frame);
        crc.update(&head[..head_len]);
        crc.update(bytemuck::cast_slice(Gf8::slice_as_arrays(chunk)));
        Prepared {
            frame,
            head,
            head_len,
            crc: crc.finalize(),
        }
    }

    /// Puts the chunk, whose vectors are `chunk` (those it was made from).
    fn write<E>(
        &self,
        chunk: &[Gf8],
        mut put: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        put(&self.frame)?;
        put(&self.head[..self.head_len])?;
        put(bytemuck::cast_slice(Gf8::slice_as_arrays(chunk)))?;
        put(&self.crc.to_le_bytes())
    }
}

/// Writes the binary form of `vectors` at `out`'s position, exactly the
/// bytes an [`Encoder`] writes: [`encoded_len`] of them.
pub(crate) fn encode_uninit(vectors: &[Gf8], options: FileOptions, out: &mut Cursor<'_>) {
    out.put(&header(options.chunk_vectors()));
    let mut scratch = Vec::new();
    let mut chunks = 0u64;
    for chunk in vectors.chunks(options.chunk_vectors() as usize) {
        let put = |b: &[u8]| -> Result<(), std::convert::Infallible> {
            out.put(b);
            Ok(())
        };
        let Ok(()) = write_chunk(chunks, chunk, &mut scratch, put);
        chunks += 1;
    }
    out.put(&trailer(chunks, vectors.len() as u64));
}

/// Reads the binary form from `R`, one chunk at a time, checking
/// everything. The length of the data is not needed: a read that meets the
/// end early is truncation, and the data must end right after the trailer.
pub(crate) struct Decoder<R: BufRead> {
    reader: R,
    offset: u64,
    policy: Policy,
    max_chunk_vectors: u32,
    chunks: u64,
    vectors: u64,
    payload: Vec<u8>,
    done: bool,
    expected: Option<u64>,
}

impl<R: BufRead> Decoder<R> {
    /// Reads and checks the header; `expected` is the vector count the
    /// trailer of a regular file announces, a hint only.
    pub(crate) fn new(
        reader: R,
        policy: Policy,
        expected: Option<u64>,
    ) -> Result<Decoder<R>, CodecError> {
        let mut d = Decoder {
            reader,
            offset: 0,
            policy,
            max_chunk_vectors: 0,
            chunks: 0,
            vectors: 0,
            payload: Vec::new(),
            done: false,
            expected,
        };
        let mut h = [0u8; HEADER_LEN];
        d.read_exact(&mut h, Section::Header)?;
        d.max_chunk_vectors = check_header(&h)?;
        Ok(d)
    }

    #[inline]
    pub(crate) fn expected_vectors(&self) -> Option<u64> {
        self.expected
    }

    #[inline]
    pub(crate) fn chunk_vectors(&self) -> u32 {
        self.max_chunk_vectors
    }

    /// Reads into `buf` until it is full or the data ends; returns how
    /// many bytes were read.
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, CodecError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.reader.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.offset += filled as u64;
                    return Err(CodecError::Io(e));
                }
            }
        }
        self.offset += filled as u64;
        Ok(filled)
    }

    /// Reads exactly `buf.len()` bytes, or reports truncation in `section`.
    fn read_exact(&mut self, buf: &mut [u8], section: Section) -> Result<(), CodecError> {
        if self.read_some(buf)? < buf.len() {
            return Err(CodecError::Truncated {
                offset: self.offset,
                section,
            });
        }
        Ok(())
    }

    /// Reads bytes into `self.payload` until it holds `n`, keeping its
    /// first `keep` bytes (the rest of its content is replaced), growing it
    /// only as the bytes arrive, so a frame that claims a large payload the
    /// data does not hold costs no memory.
    fn read_payload(&mut self, keep: usize, n: usize, section: Section) -> Result<(), CodecError> {
        let mut payload = std::mem::take(&mut self.payload);
        debug_assert!(keep <= n && keep <= payload.len());
        // Old bytes are overwritten, not zeroed again.
        payload.truncate(n);
        let mut filled = keep;
        let result = loop {
            if filled == n {
                break Ok(());
            }
            if filled == payload.len() {
                // Room for the next piece: what the buffer already holds
                // (reused across chunks), else twice what has arrived.
                let target = n.min(payload.capacity().max(2 * filled).max(64 * 1024));
                if let Err(e) = payload.try_reserve_exact(target - filled) {
                    break Err(CodecError::Io(io::Error::new(
                        io::ErrorKind::OutOfMemory,
                        format!("cannot allocate {target} bytes for a chunk: {e}"),
                    )));
                }
                payload.resize(target, 0);
            }
            match self.read_some(&mut payload[filled..]) {
                Ok(0) => {
                    break Err(CodecError::Truncated {
                        offset: self.offset,
                        section,
                    })
                }
                Ok(k) => filled += k,
                Err(e) => break Err(e),
            }
        };
        payload.truncate(filled);
        self.payload = payload;
        result
    }

    /// Whether the data has ended (nothing more to read).
    fn at_end(&mut self) -> Result<bool, CodecError> {
        loop {
            match self.reader.fill_buf() {
                Ok(b) => return Ok(b.is_empty()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CodecError::Io(e)),
            }
        }
    }

    /// Appends the next chunk's vectors to `out` and returns how many;
    /// `Ok(0)` once the trailer has been read and checked.
    pub(crate) fn read_chunk(&mut self, out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        if self.done {
            return Ok(0);
        }
        let start = self.offset;
        let k = self.chunks;
        let mut frame = [0u8; FRAME_LEN];
        let got = self.read_some(&mut frame)?;
        if got < FRAME_LEN {
            // Name the trailer if what is left could be its start.
            let left = &frame[..got];
            let section = if TRAILER_TAG.starts_with(&left[..left.len().min(4)]) {
                Section::Trailer
            } else {
                Section::Chunk(k)
            };
            return Err(CodecError::Truncated {
                offset: self.offset,
                section,
            });
        }
        match <[u8; 4]>::try_from(&frame[..4]).expect("4 bytes") {
            CHUNK_TAG => self.read_chunk_body(&frame, start, out),
            TRAILER_TAG => self.read_trailer(&frame, start).map(|()| 0),
            tag => Err(CodecError::Corrupt {
                section: if self.at_end()? {
                    Section::Trailer
                } else {
                    Section::Chunk(k)
                },
                offset: start,
                detail: format!(
                    "unknown frame tag {:02x} {:02x} {:02x} {:02x} (expected \"CHNK\" or \"TAIL\")",
                    tag[0], tag[1], tag[2], tag[3]
                ),
            }),
        }
    }

    fn read_chunk_body(
        &mut self,
        frame: &[u8; FRAME_LEN],
        start: u64,
        out: &mut Vec<Gf8>,
    ) -> Result<usize, CodecError> {
        let k = self.chunks;
        let corrupt = |offset: u64, detail: String| CodecError::Corrupt {
            section: Section::Chunk(k),
            offset,
            detail,
        };
        let ChunkFrame { count, payload_len } =
            check_chunk_frame(frame, k, self.max_chunk_vectors, start)?;
        let min = 32 * u64::from(count);
        // The framing of the fory message, then (in every message this
        // crate writes) the coordinates to its end: those are read a block
        // at a time, checked and appended to `out` while they are in cache.
        let head = (payload_len - min) as usize;
        self.read_payload(0, head, Section::Chunk(k))?;
        if crate::fory::batch_array_len_after(&self.payload) == Some(min) {
            return self.read_blocks(frame, start, count, out);
        }
        // Anything else: the whole message, decoded (and its errors named)
        // as one. At most 2^20 vectors: 32 MiB and a little, and the buffer
        // grows only as the bytes arrive.
        self.read_payload(head, payload_len as usize, Section::Chunk(k))?;
        let mut crc = [0u8; 4];
        self.read_exact(&mut crc, Section::Chunk(k))?;
        let stored = u32::from_le_bytes(crc);
        let computed = crc32(&[frame, &self.payload]);
        if stored != computed {
            return Err(corrupt(
                start,
                format!("checksum mismatch (stored {stored:08x}, computed {computed:08x})"),
            ));
        }
        // The payload was read and checked: it holds `count` vectors.
        super::reserve_read(out, count as usize, self.expected)?;
        let base = self.vectors;
        let before = out.len();
        // Decode straight into `out` (no intermediate chunk vector); on
        // error `out` is left as it was.
        crate::fory::decode_batch_into(&self.payload, self.policy, out).map_err(|e| match e {
            CodecError::InvalidVector { index, error } => CodecError::InvalidVector {
                index: base + index,
                error,
            },
            other => corrupt(
                start + FRAME_LEN as u64,
                format!("the payload is not a valid fory batch: {other}"),
            ),
        })?;
        let decoded = out.len() - before;
        if decoded != count as usize {
            out.truncate(before);
            return Err(corrupt(
                start + FRAME_LEN as u64,
                format!("the payload holds {decoded} vectors, the frame says {count}"),
            ));
        }
        self.chunks += 1;
        self.vectors += u64::from(count);
        Ok(count as usize)
    }

    /// The coordinates of chunk `self.chunks` (`count` vectors, after the
    /// message framing in `self.payload`), read [`BLOCK_LEN`] bytes at a
    /// time: each block is added to the CRC and decoded into `out` (which
    /// grows only for blocks read) while it is in cache. The errors are
    /// those of decoding the whole message after its CRC: a checksum
    /// mismatch first, then the first bad vector. On error `out` is left as
    /// it was.
    fn read_blocks(
        &mut self,
        frame: &[u8; FRAME_LEN],
        start: u64,
        count: u32,
        out: &mut Vec<Gf8>,
    ) -> Result<usize, CodecError> {
        let k = self.chunks;
        let section = Section::Chunk(k);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(frame);
        hasher.update(&self.payload);
        let before = out.len();
        let mut first_error = None;
        let mut left = 32 * count as usize;
        let mut done = 0u64;
        while left > 0 {
            let take = left.min(BLOCK_LEN);
            if let Err(e) = self.read_payload(0, take, section) {
                out.truncate(before);
                return Err(e);
            }
            let block = &self.payload[..take];
            hasher.update(block);
            if first_error.is_none() {
                let decoded = super::reserve_read(out, take / 32, self.expected)
                    .and_then(|()| crate::payload::decode_payload_into(block, self.policy, out));
                first_error = decoded.err().map(|e| match e {
                    CodecError::InvalidVector { index, error } => CodecError::InvalidVector {
                        index: self.vectors + done + index,
                        error,
                    },
                    other => other,
                });
            }
            done += (take / 32) as u64;
            left -= take;
        }
        let mut crc = [0u8; 4];
        if let Err(e) = self.read_exact(&mut crc, section) {
            out.truncate(before);
            return Err(e);
        }
        let stored = u32::from_le_bytes(crc);
        let computed = hasher.finalize();
        if stored != computed {
            out.truncate(before);
            return Err(CodecError::Corrupt {
                section,
                offset: start,
                detail: format!("checksum mismatch (stored {stored:08x}, computed {computed:08x})"),
            });
        }
        if let Some(e) = first_error {
            out.truncate(before);
            return Err(e);
        }
        self.chunks += 1;
        self.vectors += u64::from(count);
        Ok(count as usize)
    }

    fn read_trailer(&mut self, t: &[u8; FRAME_LEN], start: u64) -> Result<(), CodecError> {
        let corrupt = |offset: u64, detail: String| CodecError::Corrupt {
            section: Section::Trailer,
            offset,
            detail,
        };
        crc_ok(t, 20).map_err(|d| corrupt(start, d))?;
        let (chunks, vectors) = (u64_at(t, 4), u64_at(t, 12));
        if chunks != self.chunks || vectors != self.vectors {
            return Err(corrupt(
                start,
                format!(
                    "the trailer counts {chunks} chunks and {vectors} vectors, the file holds {} and {}",
                    self.chunks, self.vectors
                ),
            ));
        }
        let at = self.offset;
        let extra = super::count_rest(&mut self.reader).map_err(CodecError::Io)?;
        if let Some(extra) = extra {
            return Err(corrupt(
                at,
                format!("{extra} unexpected bytes after the trailer"),
            ));
        }
        self.done = true;
        Ok(())
    }
}

/// The vector count of a valid trailer at the end of `tail`, if it is
/// possible for a file of `len` bytes (32 bytes per vector at least). A
/// hint for progress and for how far outputs grow at once, never for an
/// allocation.
pub(crate) fn expected_from_tail(tail: &[u8], len: u64) -> Option<u64> {
    let t = tail.get(tail.len().checked_sub(FRAME_LEN)?..)?;
    let (_, vectors) = trailer_counts(t.try_into().ok()?)?;
    (vectors <= len / 32).then_some(vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bytes_are_as_specified() {
        let h = header(65_536);
        assert_eq!(&h[..8], b"\x89HYD\r\n\x1a\n");
        assert_eq!(&h[8..16], &[1, 0, 0, 0, 0, 0, 1, 0]);
        assert_eq!(u32_at(&h, 16), crc32(&[&h[..16]]));
    }

    #[test]
    fn exact_length_and_in_place_encoding_match_the_encoder() {
        // Across the varint's widths (32·n ≥ 128 at n = 4, ≥ 16384 at 512,
        // ≥ 2^21 at 65 536) and partial last chunks.
        let all: Vec<Gf8> = (0..70_000)
            .map(|i| hydron_core::E8_ROOTS[i % 240])
            .collect();
        for chunk in [1, 3, 4, 5, 511, 512, 513, 65_536, 1 << 20] {
            for n in [0, 1, 3, 4, 5, 511, 512, 513, 1000, 65_536, 70_000] {
                if chunk < 16 && n > 1000 {
                    continue;
                }
                let options = FileOptions::new().with_chunk_vectors(chunk);
                let mut e = Encoder::new(Vec::new(), options).unwrap();
                e.write(&all[..n]).unwrap();
                let expected = e.finish().unwrap();
                assert_eq!(
                    encoded_len(n, chunk as usize),
                    Some(expected.len()),
                    "{n} in {chunk}"
                );
                let mut buf = vec![std::mem::MaybeUninit::uninit(); expected.len()];
                let mut cursor = Cursor::new(&mut buf);
                encode_uninit(&all[..n], options, &mut cursor);
                assert!(cursor.written() == expected, "{n} in {chunk}");
            }
        }
        assert_eq!(encoded_len(usize::MAX / 2, 1), None);
    }

    #[test]
    fn checked_arrays_write_the_same_bytes_and_name_the_first_bad_vector() {
        let v: Vec<Gf8> = (0..1000).map(|i| hydron_core::E8_ROOTS[i % 240]).collect();
        let arrays = Gf8::slice_as_arrays(&v);
        let options = FileOptions::new().with_chunk_vectors(64);
        let mut e = Encoder::new(Vec::new(), options).unwrap();
        e.write(&v).unwrap();
        let expected = e.finish().unwrap();
        for cuts in [&[][..], &[10], &[64], &[100, 101, 500], &[1, 2, 3, 999]] {
            for (check, pipeline) in [(true, true), (true, false), (false, true), (false, false)] {
                let mut e = Encoder::new(Vec::new(), options).unwrap();
                let mut from = 0;
                for &to in cuts.iter().chain([&1000]) {
                    e.write_arrays(&arrays[from..to], check, pipeline).unwrap();
                    from = to;
                }
                assert!(
                    e.finish().unwrap() == expected,
                    "{cuts:?}, {check}, {pipeline}"
                );
            }
        }
        // A bad vector anywhere: its index from the start of the call, the
        // chunks before it written, none after it.
        let cases = [0, 5, 63, 64, 300, 999].map(|b| [(b, true), (b, false)]);
        for (bad, pipeline) in cases.into_iter().flatten() {
            let mut raw = arrays.to_vec();
            raw[bad][2] = f32::NAN;
            let mut e = Encoder::new(Vec::new(), options).unwrap();
            let (err, index) = match e.write_arrays(&raw[..37], true, pipeline) {
                Err(err) => (err, bad),
                Ok(()) => (
                    e.write_arrays(&raw[37..], true, pipeline).unwrap_err(),
                    bad - 37,
                ),
            };
            assert_eq!(
                err.to_string(),
                format!("vector {index}: coordinate 2 is NaN"),
                "{bad}"
            );
            let chunk_len = FRAME_LEN + crate::fory::batch_exact_len(64) + 4;
            assert_eq!(e.writer.len(), HEADER_LEN + bad / 64 * chunk_len, "{bad}");
            assert!(raw[bad][2].is_nan());
            // Not checked: written as it is, NaN and all.
            let mut e = Encoder::new(Vec::new(), options).unwrap();
            e.write_arrays(&raw, false, pipeline).unwrap();
            let bytes = e.finish().unwrap();
            let mut d = Decoder::new(&bytes[..], Policy::Trusted, None).unwrap();
            let mut out = Vec::new();
            while d.read_chunk(&mut out).unwrap() > 0 {}
            assert!(out[bad][2].is_nan());
        }
    }

    #[test]
    fn empty_file_is_header_then_trailer() {
        let mut e = Encoder::new(Vec::new(), FileOptions::new()).unwrap();
        e.write(&[]).unwrap();
        let bytes = e.finish().unwrap();
        assert_eq!(bytes.len(), HEADER_LEN + FRAME_LEN);
        assert_eq!(&bytes[20..24], b"TAIL");
        assert_eq!(&bytes[24..40], &[0; 16]);
    }

    #[test]
    fn chunking_is_exact_for_odd_write_sizes() {
        let v: Vec<Gf8> = hydron_core::E8_ROOTS[..23].to_vec();
        let mut e = Encoder::new(Vec::new(), FileOptions::new().with_chunk_vectors(7)).unwrap();
        for piece in [&v[..3], &v[3..4], &v[4..19], &v[19..23]] {
            e.write(piece).unwrap();
        }
        let bytes = e.finish().unwrap();
        let expected = expected_from_tail(&bytes, bytes.len() as u64);
        assert_eq!(expected, Some(23));
        let mut d = Decoder::new(&bytes[..], Policy::Strict, expected).unwrap();
        assert_eq!(d.chunk_vectors(), 7);
        let mut sizes = Vec::new();
        let mut out = Vec::new();
        loop {
            let n = d.read_chunk(&mut out).unwrap();
            if n == 0 {
                break;
            }
            sizes.push(n);
        }
        assert_eq!(sizes, [7, 7, 7, 2]);
        assert_eq!(out, v);
    }

    #[test]
    fn blocks_name_the_first_bad_vector_and_a_bad_checksum_comes_first() {
        // Three blocks and a bit per chunk; a NaN in the second block of
        // the second chunk.
        let per_chunk = 2 * BLOCK_LEN / 32 + 100;
        let mut v: Vec<Gf8> = (0..2 * per_chunk)
            .map(|i| hydron_core::E8_ROOTS[i % 240])
            .collect();
        let bad = per_chunk + BLOCK_LEN / 32 + 7;
        v[bad] = Gf8::new_unchecked([f32::NAN; 8]);
        let options = FileOptions::new().with_chunk_vectors(per_chunk as u32);
        let mut e = Encoder::new(Vec::new(), options).unwrap();
        e.write(&v).unwrap();
        let bytes = e.finish().unwrap();
        let decode = |bytes: &[u8]| {
            let mut d = Decoder::new(bytes, Policy::Strict, None).unwrap();
            let mut out = vec![Gf8::ZERO];
            let first = d.read_chunk(&mut out).unwrap();
            assert_eq!(first, per_chunk);
            let err = d.read_chunk(&mut out).unwrap_err();
            assert_eq!(out.len(), 1 + per_chunk, "out is left as it was");
            err.to_string()
        };
        assert_eq!(decode(&bytes), format!("vector {bad}: coordinate 0 is NaN"));
        // A flipped bit in the last block of that chunk: the checksum.
        let mut flipped = bytes.clone();
        let at = bytes.len() - FRAME_LEN - 4 - 10;
        flipped[at] ^= 0x40;
        let err = decode(&flipped);
        assert!(err.contains("checksum mismatch"), "{err}");
        // Trusted keeps the NaN, bit for bit.
        let mut d = Decoder::new(&bytes[..], Policy::Trusted, None).unwrap();
        let mut out = Vec::new();
        while d.read_chunk(&mut out).unwrap() > 0 {}
        assert_eq!(out.len(), v.len());
        assert!(out[bad][0].is_nan());
        assert_eq!(out[..bad], v[..bad]);
    }
}
