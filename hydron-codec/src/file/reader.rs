//! [`FileReader`]: streams a container from disk, chunk by chunk.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use hydron_core::Gf8;

use super::{detect, Format, Kind};
use crate::{CodecError, Policy};

/// Bytes read from the start of a file to find its form.
pub(crate) const HEAD_LEN: usize = 64;
/// Bytes read from the end of a file to find its trailer (for a capacity
/// hint only; the trailer is checked again when reached).
pub(crate) const TAIL_LEN: usize = 256;
/// The read buffer: large enough that small reads are cheap, small next to
/// a chunk (chunk payloads bypass it).
const BUFFER_LEN: usize = 64 * 1024;

/// A decoder of either form.
pub(crate) struct Decoder<R: BufRead> {
    inner: Inner<R>,
    failed: bool,
}

enum Inner<R: BufRead> {
    #[cfg(feature = "fory")]
    Binary(super::binary::Decoder<R>),
    #[cfg(feature = "json")]
    Text(super::text::Decoder<R>),
}

impl<R: BufRead> Decoder<R> {
    /// Detects the form from `head` (the first bytes) and reads the header;
    /// `tail` is the last bytes, `len` the length of the data.
    pub(crate) fn new(
        reader: R,
        len: u64,
        head: &[u8],
        tail: &[u8],
        policy: Policy,
    ) -> Result<Decoder<R>, CodecError> {
        let inner = match detect(head, len)? {
            #[cfg(feature = "fory")]
            Kind::Binary => Inner::Binary(super::binary::Decoder::new(reader, len, tail, policy)?),
            #[cfg(feature = "json")]
            Kind::Text => Inner::Text(super::text::Decoder::new(reader, len, tail, policy)?),
            #[cfg(not(feature = "fory"))]
            Kind::Binary => {
                return Err(CodecError::FormatDisabled {
                    format: "fory binary",
                    feature: "fory",
                })
            }
            #[cfg(not(feature = "json"))]
            Kind::Text => {
                return Err(CodecError::FormatDisabled {
                    format: "JSON Lines",
                    feature: "json",
                })
            }
        };
        Ok(Decoder {
            inner,
            failed: false,
        })
    }

    pub(crate) fn format(&self) -> Format {
        match self.inner {
            #[cfg(feature = "fory")]
            Inner::Binary(_) => Format::Fory,
            #[cfg(feature = "json")]
            Inner::Text(_) => Format::JsonLines,
        }
    }

    pub(crate) fn expected_vectors(&self) -> Option<u64> {
        match &self.inner {
            #[cfg(feature = "fory")]
            Inner::Binary(d) => d.expected_vectors(),
            #[cfg(feature = "json")]
            Inner::Text(d) => d.expected_vectors(),
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
            #[cfg(feature = "fory")]
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
/// Use [`read_chunk`](FileReader::read_chunk) to get vectors a chunk at a
/// time into a buffer you reuse, or iterate for one vector at a time. The
/// end is reported (`Ok(0)`, or `None`) only after the trailer has been
/// read and checked, so a truncated file always ends in an error. Errors
/// are [`CodecError::InFile`] with the path.
///
/// ```
/// use hydron_codec::file::{FileOptions, FileReader, FileWriter, Format};
/// use hydron_codec::Policy;
/// use hydron_core::{Gf8, E8_ROOTS};
///
/// # #[cfg(feature = "fory")] {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("roots.hyd");
/// let mut w = FileWriter::create(&path, Format::Fory, FileOptions::new().chunk_vectors(100))?;
/// w.write(&E8_ROOTS)?;
/// w.finish()?;
///
/// let mut r = FileReader::open(&path, Policy::Strict)?;
/// assert_eq!(r.expected_vectors(), Some(240));
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
    decoder: Decoder<BufReader<File>>,
    path: PathBuf,
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
            .finish_non_exhaustive()
    }
}

impl FileReader {
    /// Opens `path`, detects its form and checks its header.
    ///
    /// ```
    /// use hydron_codec::{file::FileReader, CodecError, Policy};
    ///
    /// let err = FileReader::open("/no/such/file.hyd", Policy::Strict).unwrap_err();
    /// assert!(err.to_string().starts_with("/no/such/file.hyd: I/O error: "));
    /// ```
    pub fn open(path: impl AsRef<Path>, policy: Policy) -> Result<FileReader, CodecError> {
        let path = path.as_ref();
        let in_file = |error: CodecError| CodecError::InFile {
            path: path.to_path_buf(),
            error: Box::new(error),
        };
        let (file, len, head, tail) = open_file(path).map_err(|e| in_file(CodecError::Io(e)))?;
        let reader = BufReader::with_capacity(BUFFER_LEN, file);
        let decoder = Decoder::new(reader, len, &head, &tail, policy).map_err(in_file)?;
        Ok(FileReader {
            decoder,
            path: path.to_path_buf(),
            buffer: Vec::new(),
            next: 0,
            iter_done: false,
        })
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

    /// The vector count the trailer announces, if the file ends in a valid
    /// trailer that fits its size; a hint for capacity (the count is
    /// checked against the chunks when the end is reached).
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

    /// The path given to [`open`](FileReader::open).
    ///
    /// ```
    /// use hydron_codec::{file::FileReader, Policy};
    /// assert!(FileReader::open("missing.hyd", Policy::Strict).is_err());
    /// ```
    #[inline]
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the next chunk's vectors to `out` (which is not cleared) and
    /// returns how many; `Ok(0)` means the end was reached and checked.
    /// Vectors the iterator has buffered but not yet returned come first.
    ///
    /// On error, `out` is left as it was; the reader then only returns
    /// errors.
    ///
    /// ```
    /// use hydron_codec::file::{self, FileReader, Format};
    /// use hydron_codec::Policy;
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "fory")] {
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
            out.extend_from_slice(rest);
            self.next = self.buffer.len();
            return Ok(rest.len());
        }
        self.decoder
            .read_chunk(out)
            .map_err(|error| CodecError::InFile {
                path: self.path.clone(),
                error: Box::new(error),
            })
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

/// Opens a file and reads its first and last bytes.
fn open_file(path: &Path) -> io::Result<(File, u64, Vec<u8>, Vec<u8>)> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut head = Vec::with_capacity(HEAD_LEN);
    (&mut file).take(HEAD_LEN as u64).read_to_end(&mut head)?;
    let tail_len = len.min(TAIL_LEN as u64);
    file.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = Vec::with_capacity(tail_len as usize);
    (&mut file).take(tail_len).read_to_end(&mut tail)?;
    file.seek(SeekFrom::Start(0))?;
    Ok((file, len, head, tail))
}
