//! [`FileReader`]: streams a container from a file, a pipe or any
//! [`BufRead`], chunk by chunk.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use hydron_core::Gf8;

use super::{detect, Format, Kind};
use crate::{CodecError, Policy};

/// Bytes read from the start of the data to find its form.
pub(crate) const HEAD_LEN: usize = 64;
/// Bytes read from the end of a regular file to find its trailer (for a
/// hint only; the trailer is checked again when reached).
pub(crate) const TAIL_LEN: usize = 256;
/// The read buffer: large enough that small reads are cheap, small next to
/// a chunk (chunk payloads bypass it).
const BUFFER_LEN: usize = 64 * 1024;

/// What a regular file tells before it is read: its length and its last
/// bytes. Used only for [`FileReader::expected_vectors`] and to cap how far
/// an output grows at once, never to allocate.
#[derive(Clone, Copy)]
pub(crate) struct Hint<'a> {
    pub(crate) len: u64,
    pub(crate) tail: &'a [u8],
}

/// The head bytes read to detect the form, then the rest of the data: the
/// decoders read through this, so no byte is lost or read twice.
pub(crate) type Source<R> = io::Chain<io::Cursor<Vec<u8>>, R>;

/// A decoder of either form.
pub(crate) struct Decoder<R: BufRead> {
    inner: Inner<R>,
    failed: bool,
}

enum Inner<R: BufRead> {
    #[cfg(feature = "fory-messages")]
    Binary(super::binary::Decoder<Source<R>>),
    #[cfg(feature = "json")]
    Text(super::text::Decoder<Source<R>>),
}

/// Reads up to [`HEAD_LEN`] bytes (fewer only at the end of the data).
fn read_head<R: BufRead>(reader: &mut R) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HEAD_LEN);
    while head.len() < HEAD_LEN {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        let take = available.len().min(HEAD_LEN - head.len());
        head.extend_from_slice(&available[..take]);
        reader.consume(take);
    }
    Ok(head)
}

impl<R: BufRead> Decoder<R> {
    /// Reads the first bytes, detects the form and reads the header; `hint`
    /// is what is known of a regular file.
    pub(crate) fn new(
        mut reader: R,
        policy: Policy,
        hint: Option<Hint<'_>>,
    ) -> Result<Decoder<R>, CodecError> {
        let head = read_head(&mut reader).map_err(CodecError::Io)?;
        let kind = detect(&head, head.len() < HEAD_LEN)?;
        let source = io::Cursor::new(head).chain(reader);
        let inner = match kind {
            #[cfg(feature = "fory-messages")]
            Kind::Binary => {
                let expected = hint.and_then(|h| super::binary::expected_from_tail(h.tail, h.len));
                Inner::Binary(super::binary::Decoder::new(source, policy, expected)?)
            }
            #[cfg(feature = "json")]
            Kind::Text => {
                let expected = hint.and_then(|h| super::text::expected_from_tail(h.tail, h.len));
                Inner::Text(super::text::Decoder::new(source, policy, expected)?)
            }
            #[cfg(not(feature = "fory-messages"))]
            Kind::Binary => {
                let _ = (source, policy, hint);
                return Err(CodecError::FormatDisabled {
                    format: "fory binary",
                    feature: "fory-messages",
                });
            }
            #[cfg(not(feature = "json"))]
            Kind::Text => {
                let _ = (source, policy, hint);
                return Err(CodecError::FormatDisabled {
                    format: "JSON Lines",
                    feature: "json",
                });
            }
        };
        Ok(Decoder {
            inner,
            failed: false,
        })
    }

    pub(crate) fn format(&self) -> Format {
        match self.inner {
            #[cfg(feature = "fory-messages")]
            Inner::Binary(_) => Format::Fory,
            #[cfg(feature = "json")]
            Inner::Text(_) => Format::JsonLines,
        }
    }

    pub(crate) fn expected_vectors(&self) -> Option<u64> {
        match &self.inner {
            #[cfg(feature = "fory-messages")]
            Inner::Binary(d) => d.expected_vectors(),
            #[cfg(feature = "json")]
            Inner::Text(d) => d.expected_vectors(),
        }
    }

    pub(crate) fn chunk_vectors(&self) -> u32 {
        match &self.inner {
            #[cfg(feature = "fory-messages")]
            Inner::Binary(d) => d.chunk_vectors(),
            #[cfg(feature = "json")]
            Inner::Text(d) => d.chunk_vectors(),
        }
    }

    /// Appends the next chunk to `out`; `Ok(0)` at the (checked) end. After
    /// an error, every call is an error: the data is not read past it.
    pub(crate) fn read_chunk(&mut self, out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        if self.failed {
            return Err(CodecError::Io(io::Error::other(
                "reading stopped at an earlier error",
            )));
        }
        let result = match &mut self.inner {
            #[cfg(feature = "fory-messages")]
            Inner::Binary(d) => d.read_chunk(out),
            #[cfg(feature = "json")]
            Inner::Text(d) => d.read_chunk(out),
        };
        self.failed = result.is_err();
        result
    }
}

/// Reads a hydron file chunk by chunk, in either form, in constant memory
/// (about one chunk), checking every checksum and count on the way.
///
/// Open a file with [`open`](FileReader::open), or read any [`BufRead`]
/// (a pipe, stdin, a socket, bytes in memory) with
/// [`from_reader`](FileReader::from_reader): the length of the data need
/// not be known. Use [`read_chunk`](FileReader::read_chunk) to get vectors a
/// chunk at a time into a buffer you reuse, or iterate for one vector at a
/// time. The end is reported (`Ok(0)`, or `None`) only after the trailer has
/// been read and checked and the data has ended right after it, so a
/// truncated file always ends in an error. Errors from a named source are
/// [`CodecError::InFile`] with its path.
///
/// ```
/// use hydron_codec::file::{FileOptions, FileReader, FileWriter, Format};
/// use hydron_codec::Policy;
/// use hydron_core::{Gf8, E8_ROOTS};
///
/// # #[cfg(feature = "fory-messages")] {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("roots.hyd");
/// let mut w = FileWriter::create(&path, Format::Fory, FileOptions::new().with_chunk_vectors(100))?;
/// w.write(&E8_ROOTS)?;
/// w.finish()?;
///
/// let mut r = FileReader::open(&path, Policy::Strict)?;
/// assert_eq!(r.expected_vectors(), Some(240));
/// assert_eq!(r.chunk_vectors(), 100);
/// let mut chunk = Vec::new();
/// let mut sizes = vec![];
/// loop {
///     chunk.clear();
///     match r.read_chunk(&mut chunk)? {
///         0 => break,
///         n => sizes.push(n),
///     }
/// }
/// assert_eq!(sizes, [100, 100, 40]);
///
/// let all: Vec<Gf8> = FileReader::open(&path, Policy::Strict)?.collect::<Result<_, _>>()?;
/// assert_eq!(all, E8_ROOTS);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FileReader {
    decoder: Decoder<Box<dyn BufRead + Send>>,
    path: Option<PathBuf>,
    /// The chunk being iterated, and the next vector in it.
    buffer: Vec<Gf8>,
    next: usize,
    iter_done: bool,
}

impl std::fmt::Debug for FileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReader")
            .field("path", &self.path)
            .field("format", &self.decoder.format())
            .field("chunk_vectors", &self.decoder.chunk_vectors())
            .finish_non_exhaustive()
    }
}

impl FileReader {
    /// Opens `path`, detects its form and checks its header. Any file
    /// works, a FIFO or `/dev/stdin` included; a regular file's size and last
    /// bytes are used for [`expected_vectors`](FileReader::expected_vectors).
    ///
    /// ```
    /// use hydron_codec::{file::FileReader, CodecError, Policy};
    ///
    /// let err = FileReader::open("/no/such/file.hyd", Policy::Strict).unwrap_err();
    /// assert!(err.to_string().starts_with("/no/such/file.hyd: I/O error: "));
    /// ```
    pub fn open(path: impl AsRef<Path>, policy: Policy) -> Result<FileReader, CodecError> {
        let path = path.as_ref();
        FileReader::from_file(open_file(path)?, path, policy)
    }

    /// [`open`](FileReader::open) for a file already opened at `path`.
    pub(crate) fn from_file(
        mut file: File,
        path: &Path,
        policy: Policy,
    ) -> Result<FileReader, CodecError> {
        let in_file = |error: CodecError| in_file(path, error);
        let tail = regular_tail(&mut file).map_err(|e| in_file(CodecError::Io(e)))?;
        let hint = tail.as_ref().map(|(len, tail)| Hint { len: *len, tail });
        let reader: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(BUFFER_LEN, file));
        let decoder = Decoder::new(reader, policy, hint).map_err(in_file)?;
        Ok(FileReader::with_decoder(decoder, Some(path.to_path_buf())))
    }

    /// Reads a container from `reader`, whose length need not be known:
    /// the form is detected from its first bytes (peeked through the same
    /// buffer, so nothing is lost), and the header is checked. Errors are
    /// not wrapped in [`CodecError::InFile`]; see
    /// [`from_reader_named`](FileReader::from_reader_named) for that.
    ///
    /// [`expected_vectors`](FileReader::expected_vectors) is `None`: the
    /// end of a stream is not known before it is reached.
    ///
    /// ```
    /// use std::io::BufReader;
    /// use hydron_codec::file::{self, FileOptions, FileReader, Format};
    /// use hydron_codec::{CodecError, Policy};
    /// use hydron_core::E8_ROOTS;
    ///
    /// # #[cfg(feature = "json")] {
    /// let bytes = file::to_vec(&E8_ROOTS, Format::JsonLines, FileOptions::new())?;
    /// // Any `BufRead + Send + 'static`: here a cursor; a pipe or
    /// // `std::io::stdin().lock()` work the same.
    /// let r = FileReader::from_reader(std::io::Cursor::new(bytes.clone()), Policy::Strict)?;
    /// assert_eq!(r.format(), Format::JsonLines);
    /// assert_eq!(r.collect::<Result<Vec<_>, _>>()?, E8_ROOTS);
    ///
    /// // A stream cut short ends in an error, never in a short read.
    /// let cut = bytes[..bytes.len() - 10].to_vec();
    /// let r = FileReader::from_reader(BufReader::new(std::io::Cursor::new(cut)), Policy::Strict)?;
    /// let last = r.last().unwrap();
    /// assert!(matches!(last, Err(CodecError::Truncated { .. })));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_reader(
        reader: impl BufRead + Send + 'static,
        policy: Policy,
    ) -> Result<FileReader, CodecError> {
        let reader: Box<dyn BufRead + Send> = Box::new(reader);
        let decoder = Decoder::new(reader, policy, None)?;
        Ok(FileReader::with_decoder(decoder, None))
    }

    /// As [`from_reader`](FileReader::from_reader), naming the source:
    /// every error, the header's included, is [`CodecError::InFile`] with
    /// `path` (which is only a name here: nothing is opened), and
    /// [`path`](FileReader::path) returns it.
    ///
    /// ```
    /// use hydron_codec::file::FileReader;
    /// use hydron_codec::Policy;
    ///
    /// let err = FileReader::from_reader_named(&b"\x89HYD"[..], "<stdin>", Policy::Strict).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "<stdin>: truncated: the data ends at byte offset 4, in the header"
    /// );
    /// ```
    pub fn from_reader_named(
        reader: impl BufRead + Send + 'static,
        path: impl Into<PathBuf>,
        policy: Policy,
    ) -> Result<FileReader, CodecError> {
        let path = path.into();
        let reader: Box<dyn BufRead + Send> = Box::new(reader);
        let decoder = Decoder::new(reader, policy, None).map_err(|e| in_file(&path, e))?;
        Ok(FileReader::with_decoder(decoder, Some(path)))
    }

    fn with_decoder(
        decoder: Decoder<Box<dyn BufRead + Send>>,
        path: Option<PathBuf>,
    ) -> FileReader {
        FileReader {
            decoder,
            path,
            buffer: Vec::new(),
            next: 0,
            iter_done: false,
        }
    }

    /// The form of the file.
    ///
    /// ```
    /// use hydron_codec::file::{self, FileReader, Format};
    /// use hydron_codec::Policy;
    /// # #[cfg(feature = "json")] {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("empty.jsonl");
    /// file::save(&path, &[], Format::JsonLines)?;
    /// assert_eq!(FileReader::open(&path, Policy::Strict)?.format(), Format::JsonLines);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn format(&self) -> Format {
        self.decoder.format()
    }

    /// The container version of the file, from its header (a header of
    /// another version is refused with [`CodecError::UnsupportedVersion`],
    /// so today this is always [`VERSION`](super::VERSION)).
    ///
    /// ```
    /// use hydron_codec::file::{self, FileOptions, FileReader, Format, VERSION};
    /// use hydron_codec::Policy;
    /// # #[cfg(feature = "fory-messages")] {
    /// let bytes = file::to_vec(&[], Format::Fory, FileOptions::new())?;
    /// assert_eq!(FileReader::from_reader(std::io::Cursor::new(bytes), Policy::Strict)?.version(), VERSION);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn version(&self) -> u16 {
        super::VERSION
    }

    /// The most vectors a chunk of this file holds, from its header (the
    /// `chunk_vectors` it was written with).
    ///
    /// ```
    /// use hydron_codec::file::{self, FileOptions, FileReader, Format};
    /// use hydron_codec::Policy;
    /// # #[cfg(feature = "json")] {
    /// let bytes = file::to_vec(&[], Format::JsonLines, FileOptions::new().with_chunk_vectors(500))?;
    /// let r = FileReader::from_reader(std::io::Cursor::new(bytes), Policy::Strict)?;
    /// assert_eq!(r.chunk_vectors(), 500);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn chunk_vectors(&self) -> u32 {
        self.decoder.chunk_vectors()
    }

    /// The vector count the trailer announces, if the source is a regular
    /// file that ends in a valid trailer that fits its size; a hint for
    /// progress reports (the count is checked against the chunks when the
    /// end is reached). `None` for streams.
    ///
    /// ```
    /// use hydron_codec::file::{self, FileReader, Format};
    /// use hydron_codec::Policy;
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "json")] {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("three.jsonl");
    /// file::save(&path, &[Gf8::ZERO; 3], Format::JsonLines)?;
    /// assert_eq!(FileReader::open(&path, Policy::Strict)?.expected_vectors(), Some(3));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn expected_vectors(&self) -> Option<u64> {
        self.decoder.expected_vectors()
    }

    /// The path given to [`open`](FileReader::open) or
    /// [`from_reader_named`](FileReader::from_reader_named); `None` for
    /// [`from_reader`](FileReader::from_reader).
    ///
    /// ```
    /// use hydron_codec::file::{self, FileOptions, FileReader, Format};
    /// use hydron_codec::Policy;
    /// # #[cfg(feature = "fory-messages")] {
    /// let bytes = file::to_vec(&[], Format::Fory, FileOptions::new())?;
    /// let r = FileReader::from_reader(std::io::Cursor::new(bytes.clone()), Policy::Strict)?;
    /// assert_eq!(r.path(), None);
    /// let r = FileReader::from_reader_named(std::io::Cursor::new(bytes), "-", Policy::Strict)?;
    /// assert_eq!(r.path(), Some(std::path::Path::new("-")));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends the next chunk's vectors to `out` (which is not cleared) and
    /// returns how many; `Ok(0)` means the end was reached and checked.
    /// Vectors the iterator has buffered but not yet returned come first.
    ///
    /// `out` grows only for vectors already read: at most doubling its
    /// capacity at a time, and not past
    /// [`expected_vectors`](FileReader::expected_vectors) unless needed.
    /// On error, `out` is left as it was; the reader then only returns
    /// errors.
    ///
    /// ```
    /// use hydron_codec::file::{self, FileReader, Format};
    /// use hydron_codec::Policy;
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "fory-messages")] {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("z.hyd");
    /// file::save(&path, &[Gf8::ZERO; 5], Format::Fory)?;
    /// let mut r = FileReader::open(&path, Policy::Strict)?;
    /// let mut out = Vec::new();
    /// assert_eq!(r.read_chunk(&mut out)?, 5);
    /// assert_eq!(r.read_chunk(&mut out)?, 0);
    /// assert_eq!(out.len(), 5);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_chunk(&mut self, out: &mut Vec<Gf8>) -> Result<usize, CodecError> {
        if self.next < self.buffer.len() {
            let rest = &self.buffer[self.next..];
            super::reserve_read(out, rest.len(), None).map_err(|e| self.named(e))?;
            out.extend_from_slice(rest);
            self.next = self.buffer.len();
            return Ok(rest.len());
        }
        self.decoder.read_chunk(out).map_err(|e| self.named(e))
    }

    fn named(&self, error: CodecError) -> CodecError {
        match &self.path {
            Some(path) => in_file(path, error),
            None => error,
        }
    }
}

impl Iterator for FileReader {
    type Item = Result<Gf8, CodecError>;

    /// The next vector, `None` after the checked end or after the first
    /// error (which is returned once).
    fn next(&mut self) -> Option<Result<Gf8, CodecError>> {
        if let Some(v) = self.buffer.get(self.next) {
            self.next += 1;
            return Some(Ok(*v));
        }
        if self.iter_done {
            return None;
        }
        self.buffer.clear();
        self.next = 0;
        let mut buffer = std::mem::take(&mut self.buffer);
        let result = self.read_chunk(&mut buffer);
        self.buffer = buffer;
        match result {
            Ok(0) => {
                self.iter_done = true;
                None
            }
            Ok(_) => {
                self.next = 1;
                Some(Ok(self.buffer[0]))
            }
            Err(e) => {
                self.iter_done = true;
                Some(Err(e))
            }
        }
    }
}

/// Opens `path` for reading; errors name it.
pub(crate) fn open_file(path: &Path) -> Result<File, CodecError> {
    File::open(path).map_err(|e| in_file(path, CodecError::Io(e)))
}

fn in_file(path: &Path, error: CodecError) -> CodecError {
    CodecError::InFile {
        path: path.to_path_buf(),
        error: Box::new(error),
    }
}

/// The length and last bytes of a regular file (`None` for anything else:
/// a FIFO or a device cannot seek, and its size says nothing), leaving the
/// file at its start.
fn regular_tail(file: &mut File) -> io::Result<Option<(u64, Vec<u8>)>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(None);
    }
    let len = meta.len();
    let tail_len = len.min(TAIL_LEN as u64);
    file.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = Vec::with_capacity(TAIL_LEN);
    file.take(tail_len).read_to_end(&mut tail)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(Some((len, tail)))
}
