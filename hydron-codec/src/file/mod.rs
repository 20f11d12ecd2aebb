//! The hydron file container: batches of [`Gf8`] on disk, chunked and
//! checksummed, in a binary form (fory payloads, feature `fory-messages`,
//! which `fory` includes) or a text form (JSON Lines, feature `json`).
//! `docs/format.md` specifies every byte.
//!
//! - [`save`] and [`load`] write and read a whole batch. [`load`] finds the
//!   form from the content (binary magic bytes or the JSON header line), so
//!   the caller does not say which.
//! - [`FileWriter`] and [`FileReader`] stream in constant memory, chunk by
//!   chunk, so a file may hold more than fits in memory, more than 4 GiB,
//!   and more than one fory message may (128 MiB).
//! - [`FileReader::from_reader`] reads from any [`BufRead`](std::io::BufRead)
//!   (a pipe, stdin, a socket) without knowing its length: a stream that
//!   ends early is [`CodecError::Truncated`], bytes after the trailer are
//!   [`CodecError::Corrupt`]. [`Encoder`] writes a container to any
//!   [`Write`](std::io::Write).
//! - Nothing is allocated from a count or a length the data claims before
//!   the data has been read: outputs grow as checked chunks arrive, text
//!   lines are read only up to a cap, and an allocation that fails is an
//!   error (`ErrorKind::OutOfMemory`), not an abort.
//! - Every chunk carries a CRC-32; the file ends with a trailer holding the
//!   chunk and vector counts. A flipped bit anywhere is reported as
//!   [`CodecError::Corrupt`] naming the header, the chunk or the trailer, and
//!   a file cut short at any byte as [`CodecError::Truncated`]; a short read
//!   never looks complete.
//! - Saving a regular file is atomic: data goes to a temporary file in the
//!   same directory, which is flushed to disk and then renamed over the
//!   target. If anything fails, or a [`FileWriter`] is dropped without
//!   [`finish`](FileWriter::finish), the old file is left as it was and the
//!   temporary file is removed. A symbolic link is followed (the file it
//!   points to is replaced; the link stays); a FIFO or a character device is
//!   written to directly (see [`FileWriter`]).
//! - Errors from named files are [`CodecError::InFile`]: the path, then
//!   what went wrong.
//!
//! ```
//! use hydron_codec::file::{self, Format};
//! use hydron_codec::Policy;
//! use hydron_core::Gf8;
//!
//! # #[cfg(feature = "json")] {
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("points.hyd");
//! let batch = vec![Gf8::normalize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?, Gf8::ZERO];
//! file::save(&path, &batch, Format::JsonLines)?;
//! assert_eq!(file::load(&path, Policy::Strict)?, batch);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "fory-messages")]
mod binary;
#[cfg(all(
    feature = "parallel",
    feature = "fory-messages",
    target_os = "linux",
    target_endian = "little"
))]
mod parallel;
mod reader;
#[cfg(feature = "json")]
mod text;
mod writer;

use std::fmt;
use std::path::Path;

use hydron_core::Gf8;

use crate::{CodecError, Policy};

pub use reader::FileReader;
pub use writer::{Encoder, FileWriter};

/// The first 8 bytes of a binary hydron file: `\x89HYD\r\n\x1a\n`. Like
/// PNG's, the non-ASCII first byte and the line endings catch text-mode
/// transfers, and no JSON text can start with it.
pub const MAGIC: [u8; 8] = *b"\x89HYD\r\n\x1a\n";

/// The start of a text hydron file: the header line up to its version.
pub const TEXT_MAGIC: &[u8] = br#"{"format":"hydron-gf8-jsonl","version":"#;

/// The container version this build writes and reads.
pub const VERSION: u16 = 1;

/// Which form [`save`] or a [`FileWriter`] writes. [`load`] and
/// [`FileReader`] detect it.
///
/// ```
/// use hydron_codec::file::Format;
/// # #[cfg(feature = "fory-messages")]
/// assert_eq!(Format::Fory.to_string(), "fory binary");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum Format {
    /// Binary: a magic header, then chunks that each hold a fory batch
    /// message, each with its CRC-32, then a trailer. Compact and fast.
    #[cfg(feature = "fory-messages")]
    Fory,
    /// Text: JSON Lines, one vector `[x0,…,x7]` per line, with a header
    /// line, a checksum line after every chunk and an end line. Readable
    /// and greppable, about three times larger than binary.
    #[cfg(feature = "json")]
    JsonLines,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match *self {
            #[cfg(feature = "fory-messages")]
            Format::Fory => "fory binary",
            #[cfg(feature = "json")]
            Format::JsonLines => "JSON Lines",
        })
    }
}

/// Options for [`FileWriter::create`].
///
/// ```
/// use hydron_codec::file::FileOptions;
///
/// let opts = FileOptions::new().with_chunk_vectors(4096).with_durable(false);
/// assert_eq!(opts.chunk_vectors(), 4096);
/// assert_eq!(FileOptions::new().with_chunk_vectors(0).chunk_vectors(), 1);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FileOptions {
    chunk_vectors: u32,
    durable: bool,
}

impl FileOptions {
    /// Vectors per chunk unless set: 65 536, 2 MiB of coordinates, so a
    /// reader holds about 2 MiB of file data at a time.
    pub const DEFAULT_CHUNK_VECTORS: u32 = 65_536;
    /// The largest chunk: 2^20 vectors, 32 MiB of coordinates, well under
    /// fory's 128 MiB message limit.
    pub const MAX_CHUNK_VECTORS: u32 = 1 << 20;

    /// The defaults: [`DEFAULT_CHUNK_VECTORS`](Self::DEFAULT_CHUNK_VECTORS)
    /// per chunk, durable.
    ///
    /// ```
    /// use hydron_codec::file::FileOptions;
    /// assert_eq!(FileOptions::new(), FileOptions::default());
    /// ```
    #[inline]
    #[must_use]
    pub const fn new() -> FileOptions {
        FileOptions {
            chunk_vectors: Self::DEFAULT_CHUNK_VECTORS,
            durable: true,
        }
    }

    /// Sets how many vectors each chunk holds (the last may hold fewer),
    /// clamped to `1..=MAX_CHUNK_VECTORS`. Smaller chunks cost a little
    /// space (28 bytes each in binary) and find damage more locally.
    ///
    /// ```
    /// use hydron_codec::file::FileOptions;
    /// let big = FileOptions::new().with_chunk_vectors(u32::MAX);
    /// assert_eq!(big.chunk_vectors(), FileOptions::MAX_CHUNK_VECTORS);
    /// ```
    #[inline]
    #[must_use]
    pub const fn with_chunk_vectors(mut self, vectors: u32) -> FileOptions {
        self.chunk_vectors = if vectors == 0 {
            1
        } else if vectors > Self::MAX_CHUNK_VECTORS {
            Self::MAX_CHUNK_VECTORS
        } else {
            vectors
        };
        self
    }

    /// Sets whether [`FileWriter::finish`] waits for the data to reach the
    /// disk (`fsync` of the file, and of its directory on unix) before and
    /// after the rename. On by default; turning it off keeps the save
    /// atomic for other processes, but a power cut may lose it.
    ///
    /// ```
    /// use hydron_codec::file::FileOptions;
    /// assert!(!FileOptions::new().with_durable(false).is_durable());
    /// ```
    #[inline]
    #[must_use]
    pub const fn with_durable(mut self, durable: bool) -> FileOptions {
        self.durable = durable;
        self
    }

    /// Vectors per chunk.
    ///
    /// ```
    /// use hydron_codec::file::FileOptions;
    /// assert_eq!(FileOptions::new().chunk_vectors(), 65_536);
    /// ```
    #[inline]
    #[must_use]
    pub const fn chunk_vectors(&self) -> u32 {
        self.chunk_vectors
    }

    /// Whether saves are flushed to disk.
    ///
    /// ```
    /// use hydron_codec::file::FileOptions;
    /// assert!(FileOptions::new().is_durable());
    /// ```
    #[inline]
    #[must_use]
    pub const fn is_durable(&self) -> bool {
        self.durable
    }
}

impl Default for FileOptions {
    #[inline]
    fn default() -> FileOptions {
        FileOptions::new()
    }
}

/// A part of a container, as named by [`CodecError::Truncated`] and
/// [`CodecError::Corrupt`].
///
/// ```
/// use hydron_codec::file::Section;
/// assert_eq!(Section::Chunk(3).to_string(), "chunk 3");
/// assert_eq!(Section::Trailer.to_string(), "the trailer");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Section {
    /// The header (binary: the first 20 bytes; text: the first line).
    Header,
    /// The chunk with this index (0-based), framing and checksum included.
    Chunk(u64),
    /// The trailer (text: the end line), or the place it should be.
    Trailer,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Section::Header => f.write_str("the header"),
            Section::Chunk(k) => write!(f, "chunk {k}"),
            Section::Trailer => f.write_str("the trailer"),
        }
    }
}

/// Saves `vectors` to `path` in `format`, atomically, with the default
/// [`FileOptions`].
///
/// ```
/// use hydron_codec::file::{self, Format};
/// use hydron_codec::Policy;
/// use hydron_core::Gf8;
///
/// # #[cfg(feature = "fory-messages")] {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("roots.hyd");
/// let roots: Vec<Gf8> = hydron_core::E8_ROOTS.to_vec();
/// file::save(&path, &roots, Format::Fory)?;
/// assert_eq!(file::load(&path, Policy::Strict)?, roots);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save(path: impl AsRef<Path>, vectors: &[Gf8], format: Format) -> Result<(), CodecError> {
    let mut writer = FileWriter::create(path, format, FileOptions::new())?;
    writer.write(vectors)?;
    writer.finish()
}

/// Loads a whole file written by [`save`] or [`FileWriter`], in either
/// form, applying `policy` to every vector.
///
/// Memory: the file is read one chunk at a time into a reused buffer, and
/// the output grows as checked chunks arrive (at most doubling, and never
/// past the trailer's vector count when the file ends in a valid trailer),
/// so a file that claims more than it holds allocates only for what it
/// holds. The peak is the output plus about two chunks, plus the old
/// capacity while the output grows for the last time. A regular file of
/// 4 MiB of vectors or more whose trailer announces N is read twice as far
/// as its first half: once to check it (keeping nothing), after which the
/// output is reserved for N at once, in huge pages where the system offers
/// them (faulting in a fresh output costs more than the second read).
///
/// With the `parallel` feature (on Linux), such a file in the binary form is
/// read across rayon's pool: its chunks' frames first, then the first half
/// of the coordinates to prove them, then all of them in pieces of 1 MiB,
/// each read by position, checksummed and decoded into its place in the
/// output by one thread. The result is the same as on one thread; at the
/// first surprise (a bad checksum or vector, a file that changes while it
/// is read) the file is read again on one thread from the start, which
/// reports the error as it always does.
///
/// ```
/// use hydron_codec::{file, CodecError, Policy};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("image.png");
/// std::fs::write(&path, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")?;
/// let err = file::load(&path, Policy::Strict).unwrap_err();
/// assert!(err.to_string().ends_with("not a hydron file: it starts with 89 50 4e 47 0d 0a 1a 0a (a PNG image)"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load(path: impl AsRef<Path>, policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    let path = path.as_ref();
    let file = reader::open_file(path)?;
    #[cfg(all(
        feature = "parallel",
        feature = "fory-messages",
        target_os = "linux",
        target_endian = "little"
    ))]
    if let Some(vectors) = parallel::load(&file, policy) {
        return Ok(vectors);
    }
    let mut reader = FileReader::from_file(file, path, policy)?;
    let mut out = Vec::new();
    if let Some(n) = reader.expected_vectors() {
        presize(path, n, &mut out)?;
    }
    while reader.read_chunk(&mut out)? > 0 {}
    Ok(out)
}

/// For a large regular file whose trailer announces `n` vectors: reads and
/// checks the first half of the vectors in a first pass that keeps nothing
/// (about two chunks of memory), then reserves `out` for all `n` at once,
/// backed by huge pages where the system offers them. That is at most twice
/// what the file has proven to hold, as when the output doubles, but the
/// output is allocated once instead of growing five or more times, each
/// growth faulting in fresh pages. Any surprise in the first pass (an error,
/// fewer vectors than announced) reserves nothing: the second pass, which
/// checks everything again, then reports it or grows the output as usual.
fn presize(path: &Path, n: u64, out: &mut Vec<Gf8>) -> Result<(), CodecError> {
    let Ok(n) = usize::try_from(n) else {
        return Ok(());
    };
    if n.saturating_mul(size_of::<Gf8>()) < hydron_core::huge::MIN_HUGE_BYTES {
        return Ok(());
    }
    let half = n.div_ceil(2) as u64;
    let Ok(mut first) = FileReader::open(path, Policy::Trusted) else {
        return Ok(());
    };
    let mut chunk = Vec::new();
    let mut proven = 0u64;
    while proven < half {
        chunk.clear();
        match first.read_chunk(&mut chunk) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(k) => proven += k as u64,
        }
    }
    drop(chunk);
    out.try_reserve_exact(n).map_err(|e| {
        CodecError::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("cannot allocate memory for {n} vectors: {e}"),
        ))
    })?;
    hydron_core::huge::advise_spare(out);
    Ok(())
}

/// Encodes `vectors` as a whole container in memory: the exact bytes
/// [`save`] would write with these options.
///
/// The only error is for the text form, which cannot hold a NaN or an
/// infinity (possible only through `Gf8::new_unchecked`).
///
/// ```
/// use hydron_codec::file::{self, FileOptions, Format};
/// use hydron_codec::Policy;
/// use hydron_core::Gf8;
///
/// # #[cfg(feature = "json")] {
/// let bytes = file::to_vec(&[Gf8::ZERO], Format::JsonLines, FileOptions::new())?;
/// assert_eq!(
///     String::from_utf8(bytes.clone())?,
///     "{\"format\":\"hydron-gf8-jsonl\",\"version\":1,\"chunk_vectors\":65536,\"crc32\":\"3f31e721\"}\n\
///      [0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]\n\
///      {\"chunk\":0,\"vectors\":1,\"crc32\":\"b4cf9f4b\"}\n\
///      {\"end\":true,\"chunks\":1,\"vectors\":1,\"crc32\":\"574ed82e\"}\n"
/// );
/// assert_eq!(file::from_slice(&bytes, Policy::Strict)?, [Gf8::ZERO]);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_vec(
    vectors: &[Gf8],
    format: Format,
    options: FileOptions,
) -> Result<Vec<u8>, CodecError> {
    let mut encoder = Encoder::new(Vec::new(), format, options)?;
    encoder.write(vectors)?;
    encoder.finish()
}

/// The exact length in bytes of the binary form of `n` vectors with
/// these options: what [`to_vec`] returns and [`save`] writes. With
/// [`encode_binary_uninit`], a container is written straight into memory
/// the caller allocated. [`CodecError::TooLarge`] if it does not fit in
/// memory (a `usize`).
///
/// ```
/// use hydron_codec::file::{self, FileOptions, Format};
/// use hydron_core::Gf8;
///
/// # #[cfg(feature = "fory-messages")] {
/// let options = FileOptions::new().with_chunk_vectors(3);
/// let bytes = file::to_vec(&[Gf8::ZERO; 7], Format::Fory, options)?;
/// assert_eq!(file::binary_len(7, options)?, bytes.len());
/// assert_eq!(file::binary_len(0, options)?, 44); // header and trailer
/// # }
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
#[cfg(feature = "fory-messages")]
pub fn binary_len(n: usize, options: FileOptions) -> Result<usize, CodecError> {
    binary::encoded_len(n, options.chunk_vectors() as usize).ok_or(CodecError::TooLarge {
        length: (n as u64).saturating_mul(32),
        limit: usize::MAX as u64,
        what: "memory (a usize)",
    })
}

/// Writes the binary form of `vectors` at the start of `out`, memory that
/// need not be initialized (nothing is zeroed first, and every byte is
/// written once), and returns those [`binary_len`] bytes: exactly what
/// [`to_vec`] returns, with no intermediate buffer, so the peak memory is
/// the output. The rest of `out` is left as it was.
/// [`CodecError::TooLarge`] if the container does not fit in `out`, and
/// nothing is written.
///
/// ```
/// use std::mem::MaybeUninit;
/// use hydron_codec::file::{self, FileOptions, Format};
/// use hydron_core::E8_ROOTS;
///
/// # #[cfg(feature = "fory-messages")] {
/// let options = FileOptions::new().with_chunk_vectors(100);
/// let mut buf = vec![MaybeUninit::<u8>::uninit(); file::binary_len(240, options)?];
/// let bytes = file::encode_binary_uninit(&E8_ROOTS, options, &mut buf)?;
/// assert_eq!(bytes, &file::to_vec(&E8_ROOTS, Format::Fory, options)?[..]);
/// let mut small = [MaybeUninit::<u8>::uninit(); 43];
/// assert!(file::encode_binary_uninit(&[], options, &mut small).is_err());
/// # }
/// # Ok::<(), hydron_codec::CodecError>(())
/// ```
#[cfg(feature = "fory-messages")]
pub fn encode_binary_uninit<'a>(
    vectors: &[Gf8],
    options: FileOptions,
    out: &'a mut [std::mem::MaybeUninit<u8>],
) -> Result<&'a mut [u8], CodecError> {
    let needed = binary_len(vectors.len(), options)?;
    if needed > out.len() {
        return Err(CodecError::TooLarge {
            length: needed as u64,
            limit: out.len() as u64,
            what: "the output buffer",
        });
    }
    let mut cursor = crate::uninit::Cursor::new(out);
    binary::encode_uninit(vectors, options, &mut cursor);
    Ok(cursor.written())
}

/// Decodes a whole container held in memory (either form), applying
/// `policy`; the checks are those of [`load`].
///
/// ```
/// use hydron_codec::{file, CodecError, Policy};
///
/// let err = file::from_slice(b"", Policy::Strict).unwrap_err();
/// assert_eq!(err.to_string(), "not a hydron file: it is empty");
/// let err = file::from_slice(b"\x89HYD\r\n", Policy::Strict).unwrap_err();
/// assert!(matches!(err, CodecError::Truncated { offset: 6, .. }));
/// ```
pub fn from_slice(bytes: &[u8], policy: Policy) -> Result<Vec<Gf8>, CodecError> {
    let tail = &bytes[bytes.len().saturating_sub(reader::TAIL_LEN)..];
    let hint = reader::Hint {
        len: bytes.len() as u64,
        tail,
    };
    let mut decoder = reader::Decoder::new(bytes, policy, Some(hint))?;
    let mut out = Vec::new();
    while decoder.read_chunk(&mut out)? > 0 {}
    Ok(out)
}

/// The two forms, as found in the data.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Binary,
    Text,
}

/// Finds the form from the first bytes of the data; `whole` says whether
/// `head` is all of it (the data ended before the head was full).
pub(crate) fn detect(head: &[u8], whole: bool) -> Result<Kind, CodecError> {
    if whole && head.is_empty() {
        return Err(CodecError::UnknownFormat {
            reason: "it is empty".into(),
        });
    }
    if head.starts_with(&MAGIC) {
        return Ok(Kind::Binary);
    }
    // A file cut inside the text magic is a truncated text file.
    if head.starts_with(TEXT_MAGIC) || (whole && TEXT_MAGIC.starts_with(head)) {
        return Ok(Kind::Text);
    }
    if whole && MAGIC.starts_with(head) {
        return Err(CodecError::Truncated {
            offset: head.len() as u64,
            section: Section::Header,
        });
    }
    // A few flipped bits in a magic are damage, not another format.
    if near(head, &MAGIC) {
        return Err(corrupt_magic("binary"));
    }
    if near(head, TEXT_MAGIC) {
        return Err(corrupt_magic("text"));
    }
    let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
    if head.first() == Some(&b'{') {
        return Err(CodecError::UnknownFormat {
            reason: "it starts with '{' but its first line is not a hydron header".into(),
        });
    }
    let hint = if head.starts_with(b"\x89PNG") {
        " (a PNG image)"
    } else if head.starts_with(b"\xef\xbb\xbf") {
        " (a UTF-8 byte order mark: hydron's text forms are UTF-8 without one; remove it)"
    } else if head.first() == Some(&b'[') {
        let rest = head[1..].iter().find(|b| !b.is_ascii_whitespace());
        if rest == Some(&b'[') {
            " (a plain JSON array of vectors? read it with a JSON decoder: \
             hydron_codec::json::from_slice, or hydron.decode_json in Python)"
        } else {
            " (plain JSON Lines, one vector a line? read them with a JSON Lines decoder: \
             hydron_codec::json::JsonLinesReader, or hydron.decode_jsonl in Python)"
        }
    } else {
        ""
    };
    Err(CodecError::UnknownFormat {
        reason: format!("it starts with {}{hint}", shown.join(" ")),
    })
}

/// Whether `head` (the first bytes of some data) starts with the magic of
/// either container form, allowing up to 2 flipped bits: damage that the
/// readers report as corruption rather than as another format. For tools
/// that route input between the container readers and other decoders.
///
/// ```
/// use hydron_codec::file;
///
/// assert!(file::looks_like_container(&file::MAGIC));
/// assert!(file::looks_like_container(file::TEXT_MAGIC));
/// let mut damaged = file::MAGIC;
/// damaged[2] ^= 0x01;
/// assert!(file::looks_like_container(&damaged));
/// assert!(!file::looks_like_container(b"[[0.0, 1.0]]"));
/// ```
#[must_use]
pub fn looks_like_container(head: &[u8]) -> bool {
    near(head, &MAGIC) || near(head, TEXT_MAGIC)
}

/// Whether `head` holds all of `magic` with at most 2 bits different.
pub(crate) fn near(head: &[u8], magic: &[u8]) -> bool {
    head.len() >= magic.len() && bit_distance(head, magic) <= 2
}

/// How many bits differ between `a` and `b`, over the shorter length.
pub(crate) fn bit_distance(a: &[u8], b: &[u8]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Vectors reserved at least when an output grows (8 KiB): small next to
/// any chunk read, so it proves nothing and costs nothing.
const MIN_GROW: usize = 256;

/// Makes room in `out` for `extra` more vectors whose bytes have been read
/// (and checked). The capacity at most doubles (or grows to what is needed,
/// if more), and does not pass `expected` (a hint from the trailer) unless
/// needed; an allocation that fails is an error, not an abort.
pub(crate) fn reserve_read(
    out: &mut Vec<Gf8>,
    extra: usize,
    expected: Option<u64>,
) -> Result<(), CodecError> {
    let len = out.len();
    if out.capacity() - len >= extra {
        return Ok(());
    }
    let needed = len.saturating_add(extra);
    let mut target = out.capacity().saturating_mul(2).max(MIN_GROW);
    if let Some(expected) = expected {
        target = target.min(usize::try_from(expected).unwrap_or(usize::MAX));
    }
    let target = target.max(needed);
    let oom = |e| {
        CodecError::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("cannot allocate memory for {target} vectors: {e}"),
        ))
    };
    if target.saturating_mul(size_of::<Gf8>()) < hydron_core::huge::MIN_HUGE_BYTES {
        return out.try_reserve_exact(target - len).map_err(oom);
    }
    // A large output: a new buffer backed by huge pages (where the system
    // offers them), with the vectors so far copied in. Growing in place
    // would fault the new part in 4 KiB pages, which costs more than the
    // copy; and a buffer advised in part cannot be grown in place anyway
    // (its mapping is split, so `realloc` copies it into small pages).
    let mut fresh = Vec::new();
    fresh.try_reserve_exact(target).map_err(oom)?;
    hydron_core::huge::advise_spare(&mut fresh);
    fresh.extend_from_slice(out);
    *out = fresh;
    Ok(())
}

/// The most bytes after the trailer that are counted for the message; the
/// count stops there, so data that never ends is not read for ever.
const MAX_COUNTED_EXTRA: u64 = 64 * 1024;

/// After the trailer: `None` if the data ends there, else how many bytes
/// follow (counted up to [`MAX_COUNTED_EXTRA`], shown as "more than").
pub(crate) fn count_rest<R: std::io::BufRead>(reader: &mut R) -> std::io::Result<Option<String>> {
    let mut extra = 0u64;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b.len(),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available == 0 {
            return Ok((extra > 0).then(|| extra.to_string()));
        }
        if extra + available as u64 > MAX_COUNTED_EXTRA {
            return Ok(Some(format!("more than {MAX_COUNTED_EXTRA}")));
        }
        reader.consume(available);
        extra += available as u64;
    }
}

fn corrupt_magic(form: &str) -> CodecError {
    CodecError::Corrupt {
        section: Section::Header,
        offset: 0,
        detail: format!("the {form} magic bytes are damaged (1 or 2 bits differ)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32fast_is_the_ieee_crc_with_check_value_cbf43926() {
        let mut h = crc32fast::Hasher::new();
        h.update(b"1234");
        h.update(b"56789");
        assert_eq!(h.finalize(), 0xcbf4_3926);
    }

    #[test]
    fn detection() {
        assert!(matches!(detect(&MAGIC, false), Ok(Kind::Binary)));
        assert!(matches!(detect(TEXT_MAGIC, false), Ok(Kind::Text)));
        assert!(matches!(detect(&TEXT_MAGIC[..5], true), Ok(Kind::Text)));
        assert!(matches!(
            detect(b"", true),
            Err(CodecError::UnknownFormat { .. })
        ));
        let mut flipped = MAGIC;
        flipped[3] ^= 0x10;
        assert!(matches!(
            detect(&flipped, false),
            Err(CodecError::Corrupt { .. })
        ));
        let mut text = TEXT_MAGIC.to_vec();
        text[0] ^= 0x20; // '{' -> '['
        assert!(matches!(
            detect(&text, false),
            Err(CodecError::Corrupt { .. })
        ));
        assert!(matches!(
            detect(&MAGIC[..3], true),
            Err(CodecError::Truncated { offset: 3, .. })
        ));
        assert!(matches!(
            detect(b"[[0]]", true),
            Err(CodecError::UnknownFormat { .. })
        ));
        assert!(matches!(
            detect(b"hello, world", true),
            Err(CodecError::UnknownFormat { .. })
        ));
    }

    #[test]
    fn outputs_grow_by_doubling_up_to_the_hint_and_as_needed_past_it() {
        let mut out = Vec::new();
        reserve_read(&mut out, 10, None).unwrap();
        assert_eq!(out.capacity(), MIN_GROW);
        out.resize(MIN_GROW, Gf8::ZERO);
        reserve_read(&mut out, 1, None).unwrap();
        assert_eq!(out.capacity(), 2 * MIN_GROW);
        out.resize(2 * MIN_GROW, Gf8::ZERO);
        reserve_read(&mut out, 10_000, Some(u64::MAX)).unwrap();
        assert_eq!(out.capacity(), 2 * MIN_GROW + 10_000);
        // The hint caps the doubling, never what is needed.
        let mut out = vec![Gf8::ZERO; 1000];
        out.shrink_to_fit();
        reserve_read(&mut out, 1, Some(1200)).unwrap();
        assert_eq!(out.capacity(), 1200);
        out.resize(1200, Gf8::ZERO);
        reserve_read(&mut out, 5, Some(1200)).unwrap();
        assert_eq!(out.capacity(), 1205);
        // A claim of 2^60 vectors reserves nothing by itself.
        let mut out = Vec::new();
        reserve_read(&mut out, 0, Some(1 << 60)).unwrap();
        assert_eq!(out.capacity(), 0);
    }
}
