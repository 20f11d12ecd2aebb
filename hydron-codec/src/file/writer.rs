//! [`FileWriter`]: streams a container to a temporary file and renames it
//! over the target on [`finish`](FileWriter::finish) (or, for a FIFO or a
//! device, writes to it directly); [`Encoder`]: the same container to any
//! [`Write`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use hydron_core::Gf8;

use super::{FileOptions, Format};
use crate::save::{spent, SaveTarget};
use crate::CodecError;

/// The write buffer: chunk payloads larger than this bypass it.
const BUFFER_LEN: usize = 64 * 1024;

enum Inner<W: Write> {
    #[cfg(feature = "fory-messages")]
    Binary(super::binary::Encoder<W>),
    #[cfg(feature = "json")]
    Text(super::text::Encoder<W>),
}

/// Writes a container to any [`Write`] (a file, a pipe, stdout, a socket,
/// a `Vec<u8>`), chunk by chunk in constant memory: the header at once,
/// each chunk when full, the last chunk and the trailer on
/// [`finish`](Encoder::finish). The bytes are exactly those [`save`]
/// writes.
///
/// It does nothing about temporary files, renames or `fsync`: that is
/// [`FileWriter`]'s job, and tools that manage their own files use this.
/// After an error the encoder is spent: later writes and `finish` fail.
///
/// [`save`]: super::save
///
/// ```
/// use hydron_codec::file::{self, Encoder, FileOptions, Format};
/// use hydron_codec::Policy;
/// use hydron_core::{Gf8, E8_ROOTS};
///
/// # #[cfg(feature = "fory-messages")] {
/// let mut e = Encoder::new(Vec::new(), Format::Fory, FileOptions::new().with_chunk_vectors(100))?;
/// e.write(&E8_ROOTS[..150])?;
/// e.write(&E8_ROOTS[150..])?;
/// assert_eq!(e.vectors(), 240);
/// let bytes: Vec<u8> = e.finish()?;
/// assert_eq!(bytes, file::to_vec(&E8_ROOTS, Format::Fory, FileOptions::new().with_chunk_vectors(100))?);
/// assert_eq!(file::from_slice(&bytes, Policy::Strict)?, E8_ROOTS);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Encoder<W: Write> {
    inner: Inner<W>,
    format: Format,
    failed: bool,
}

impl<W: Write> std::fmt::Debug for Encoder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("format", &self.format)
            .field("vectors", &self.vectors())
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl<W: Write> Encoder<W> {
    /// Writes the header to `writer` and returns the encoder.
    ///
    /// ```
    /// use hydron_codec::file::{Encoder, FileOptions, Format, MAGIC};
    /// # #[cfg(feature = "fory-messages")] {
    /// let e = Encoder::new(Vec::new(), Format::Fory, FileOptions::new())?;
    /// let bytes = e.finish()?;
    /// assert!(bytes.starts_with(&MAGIC));
    /// assert_eq!(bytes.len(), 44); // header and trailer
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(writer: W, format: Format, options: FileOptions) -> Result<Encoder<W>, CodecError> {
        let inner = match format {
            #[cfg(feature = "fory-messages")]
            Format::Fory => super::binary::Encoder::new(writer, options).map(Inner::Binary),
            #[cfg(feature = "json")]
            Format::JsonLines => super::text::Encoder::new(writer, options).map(Inner::Text),
        }
        .map_err(CodecError::Io)?;
        Ok(Encoder {
            inner,
            format,
            failed: false,
        })
    }

    /// Writes vectors (any number; chunks are cut at the chunk size
    /// whatever the sizes of the calls). The text form refuses a NaN or an
    /// infinity (possible only through `Gf8::new_unchecked`).
    ///
    /// ```
    /// use hydron_codec::file::{Encoder, FileOptions, Format};
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "json")] {
    /// let mut e = Encoder::new(Vec::new(), Format::JsonLines, FileOptions::new())?;
    /// e.write(&[Gf8::ZERO; 2])?;
    /// assert!(e.write(&[Gf8::new_unchecked([f32::NAN; 8])]).is_err());
    /// assert!(e.finish().is_err()); // spent
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&mut self, vectors: &[Gf8]) -> Result<(), CodecError> {
        if self.failed {
            return Err(spent());
        }
        let result = match &mut self.inner {
            #[cfg(feature = "fory-messages")]
            Inner::Binary(e) => e.write(vectors).map_err(CodecError::Io),
            #[cfg(feature = "json")]
            Inner::Text(e) => e.write(vectors),
        };
        self.failed = result.is_err();
        result
    }

    /// [`write`](Self::write) of `arrays`, each checked as [`Gf8::check`]
    /// does when `check`; with `pipeline`, whole chunks of the binary form
    /// are written in a pipeline (see the binary encoder's `write_arrays`).
    fn write_arrays(
        &mut self,
        arrays: &[[f32; 8]],
        check: bool,
        pipeline: bool,
    ) -> Result<(), CodecError>
    where
        W: Send,
    {
        if self.failed {
            return Err(spent());
        }
        #[cfg(not(feature = "fory-messages"))]
        let _ = pipeline; // only the binary form has a pipeline
        let result = match &mut self.inner {
            #[cfg(feature = "fory-messages")]
            Inner::Binary(e) => e.write_arrays(arrays, check, pipeline),
            #[cfg(feature = "json")]
            Inner::Text(e) => {
                let vectors = if check {
                    Gf8::slice_from_arrays(arrays).map_err(|e| CodecError::InvalidVector {
                        index: e.index as u64,
                        error: e.error,
                    })
                } else {
                    Ok(Gf8::slice_from_arrays_unchecked(arrays))
                };
                // A bad vector writes nothing here; the writer is spent all
                // the same, as after a bad vector in the binary form.
                vectors.and_then(|v| e.write(v))
            }
        };
        self.failed = result.is_err();
        result
    }

    /// How many vectors have been written.
    ///
    /// ```
    /// use hydron_codec::file::{Encoder, FileOptions, Format};
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "fory-messages")] {
    /// let mut e = Encoder::new(Vec::new(), Format::Fory, FileOptions::new())?;
    /// e.write(&[Gf8::ZERO; 3])?;
    /// assert_eq!(e.vectors(), 3);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn vectors(&self) -> u64 {
        match &self.inner {
            #[cfg(feature = "fory-messages")]
            Inner::Binary(e) => e.vectors(),
            #[cfg(feature = "json")]
            Inner::Text(e) => e.vectors(),
        }
    }

    /// The form being written.
    ///
    /// ```
    /// use hydron_codec::file::{Encoder, FileOptions, Format};
    /// # #[cfg(feature = "json")] {
    /// let e = Encoder::new(Vec::new(), Format::JsonLines, FileOptions::new())?;
    /// assert_eq!(e.format(), Format::JsonLines);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    /// Writes the last chunk and the trailer, flushes, and returns the
    /// writer.
    ///
    /// ```
    /// use hydron_codec::file::{Encoder, FileOptions, Format};
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "json")] {
    /// let mut e = Encoder::new(Vec::new(), Format::JsonLines, FileOptions::new())?;
    /// e.write(&[Gf8::ZERO])?;
    /// let text = String::from_utf8(e.finish()?)?;
    /// assert!(text.ends_with("{\"end\":true,\"chunks\":1,\"vectors\":1,\"crc32\":\"574ed82e\"}\n"));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(self) -> Result<W, CodecError> {
        if self.failed {
            return Err(spent());
        }
        match self.inner {
            #[cfg(feature = "fory-messages")]
            Inner::Binary(e) => e.finish(),
            #[cfg(feature = "json")]
            Inner::Text(e) => e.finish(),
        }
        .map_err(CodecError::Io)
    }
}

/// Writes a hydron file chunk by chunk, in constant memory (about one
/// chunk), and replaces the target atomically when
/// [`finish`](FileWriter::finish)ed.
///
/// What happens depends on what the target path is:
///
/// - Nothing yet, or a regular file: the data goes to a hidden temporary
///   file in the target's directory (`.NAME.PID-N-RANDOM.tmp`, with `NAME`
///   shortened if needed so the whole name fits in 255 bytes). `finish`
///   writes the trailer, flushes the file to disk, renames it over the
///   target and (on unix) flushes the directory, so that readers see either
///   the old file or the whole new one. If a write fails, or the writer is
///   dropped without `finish`, the target is not touched and the temporary
///   file is removed. The new file keeps the permissions of the file it
///   replaces (a new path gets the default ones).
/// - A symbolic link: it is followed (through every link in a chain, up to
///   40), and the file it points to is replaced as above; the link stays a
///   link. A link to nothing creates the file it names.
/// - A FIFO, a character device (`/dev/null`, a terminal) or a socket
///   (unix): there is nothing to replace, so the data is written to it
///   directly, as it comes, and never renamed over it. Opening a FIFO waits
///   for a reader. Nothing can be taken back there: a writer dropped
///   without `finish` leaves a partial stream. No `fsync` is done.
/// - A directory, a block device or anything else: an error
///   (`ErrorKind::IsADirectory` or `InvalidInput`), and nothing is written.
///
/// ```
/// use hydron_codec::file::{self, FileOptions, FileWriter, Format};
/// use hydron_codec::Policy;
/// use hydron_core::Gf8;
///
/// # #[cfg(feature = "json")] {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("stream.jsonl");
/// let mut w = FileWriter::create(&path, Format::JsonLines, FileOptions::new().with_chunk_vectors(2))?;
/// for _ in 0..5 {
///     w.write(&[Gf8::ZERO])?;
/// }
/// assert!(!path.exists()); // nothing is visible before finish
/// w.finish()?;
/// assert_eq!(file::load(&path, Policy::Strict)?.len(), 5);
///
/// let mut w = FileWriter::create(&path, Format::JsonLines, FileOptions::new())?;
/// w.write(&[Gf8::ZERO; 100])?;
/// drop(w); // abandoned: the old file stays, the temporary file goes
/// assert_eq!(file::load(&path, Policy::Strict)?.len(), 5);
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 1);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FileWriter {
    /// `None` once a write failed: nothing more is written, and `finish`
    /// fails. Declared before `target`, so the file is closed before the
    /// temporary file is removed on drop (Windows cannot remove an open
    /// file).
    encoder: Option<Encoder<BufWriter<File>>>,
    /// Where the data goes, and the temporary file to rename or remove.
    target: SaveTarget,
}

impl std::fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWriter")
            .field("target", &self.target)
            .field("vectors", &self.vectors())
            .finish_non_exhaustive()
    }
}

impl FileWriter {
    /// Creates the temporary file next to `path` (or opens `path` itself if
    /// it is a FIFO or a device; see [`FileWriter`]) and writes the header.
    ///
    /// ```
    /// use hydron_codec::file::{FileOptions, FileWriter, Format};
    /// # #[cfg(feature = "json")] {
    /// let err = FileWriter::create("/no/such/dir/x.hyd", Format::JsonLines, FileOptions::new()).unwrap_err();
    /// assert!(err.to_string().starts_with("/no/such/dir/x.hyd: I/O error: cannot create a temporary file in /no/such/dir"));
    /// let dir = tempfile::tempdir()?;
    /// let err = FileWriter::create(dir.path(), Format::JsonLines, FileOptions::new()).unwrap_err();
    /// assert!(err.to_string().ends_with("is a directory, not a file it can replace"));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create(
        path: impl AsRef<Path>,
        format: Format,
        options: FileOptions,
    ) -> Result<FileWriter, CodecError> {
        let (target, file) = SaveTarget::create(path.as_ref(), options.is_durable())?;
        let encoder = Encoder::new(BufWriter::with_capacity(BUFFER_LEN, file), format, options)
            .map_err(|e| target.in_file(e))?;
        Ok(FileWriter {
            encoder: Some(encoder),
            target,
        })
    }

    /// Writes vectors (any number; chunks are cut at the chunk size
    /// whatever the sizes of the calls).
    ///
    /// After an error, the writer is spent: later writes and `finish`
    /// fail, and the target is left as it was.
    ///
    /// ```
    /// use hydron_codec::file::{FileOptions, FileWriter, Format};
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "json")] {
    /// let dir = tempfile::tempdir()?;
    /// let mut w = FileWriter::create(dir.path().join("a.jsonl"), Format::JsonLines, FileOptions::new())?;
    /// let nan = Gf8::new_unchecked([f32::NAN; 8]);
    /// assert!(w.write(&[nan]).is_err()); // JSON cannot hold NaN
    /// assert!(w.finish().is_err());
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&mut self, vectors: &[Gf8]) -> Result<(), CodecError> {
        self.write_arrays(Gf8::slice_as_arrays(vectors), false)
    }

    /// Writes coordinate arrays, each checked as [`Gf8::check`] does (the
    /// [`Strict`](crate::Policy::Strict) policy) just before its chunk is
    /// checksummed and written, so that a large batch is read from memory
    /// once, not once to check it and again to write it. With the
    /// `parallel` feature, whole chunks for a regular file go through a
    /// pipeline: one is written (on this thread) while the next is checked
    /// and checksummed on a thread of the pool.
    ///
    /// A bad vector is [`CodecError::InvalidVector`], its index counted
    /// from `arrays[0]`, and the writer is spent: nothing is saved and the
    /// target is left as it was (a FIFO or a device, written directly, may
    /// have received the chunks before it; check first to avoid that).
    ///
    /// ```
    /// use hydron_codec::file::{self, FileOptions, FileWriter, Format};
    /// use hydron_codec::{CodecError, Policy};
    ///
    /// # #[cfg(feature = "fory-messages")] {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("checked.hyd");
    /// let mut rows = vec![[0.0f32; 8]; 10];
    /// rows[3][0] = 1.0;
    /// let mut w = FileWriter::create(&path, Format::Fory, FileOptions::new().with_chunk_vectors(4))?;
    /// w.write_checked(&rows)?;
    /// w.finish()?;
    /// assert_eq!(file::load(&path, Policy::Strict)?.len(), 10);
    ///
    /// rows[7][2] = 2.0; // not a unit vector
    /// let mut w = FileWriter::create(&path, Format::Fory, FileOptions::new().with_chunk_vectors(4))?;
    /// let err = w.write_checked(&rows).unwrap_err();
    /// assert!(matches!(&err, CodecError::InFile { error, .. }
    ///     if matches!(**error, CodecError::InvalidVector { index: 7, .. })));
    /// assert!(err.to_string().contains(": vector 7: norm is 2, expected 1"), "{err}");
    /// assert!(w.finish().is_err()); // spent: the old file stays
    /// assert_eq!(file::load(&path, Policy::Strict)?.len(), 10);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_checked(&mut self, arrays: &[[f32; 8]]) -> Result<(), CodecError> {
        self.write_arrays(arrays, true)
    }

    fn write_arrays(&mut self, arrays: &[[f32; 8]], check: bool) -> Result<(), CodecError> {
        let Some(encoder) = self.encoder.as_mut() else {
            return Err(self.target.in_file(spent()));
        };
        // A FIFO or a device may block until its reader reads, and that
        // reader may need the pool: no pipeline there.
        let pipeline = self.target.is_temporary();
        let result = encoder.write_arrays(arrays, check, pipeline);
        if let Err(e) = result {
            self.encoder = None;
            return Err(self.target.in_file(e));
        }
        Ok(())
    }

    /// How many vectors have been written.
    ///
    /// ```
    /// use hydron_codec::file::{FileOptions, FileWriter, Format};
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "json")] {
    /// let dir = tempfile::tempdir()?;
    /// let mut w = FileWriter::create(dir.path().join("n.jsonl"), Format::JsonLines, FileOptions::new())?;
    /// w.write(&[Gf8::ZERO; 3])?;
    /// assert_eq!(w.vectors(), 3);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn vectors(&self) -> u64 {
        self.encoder.as_ref().map_or(0, Encoder::vectors)
    }

    /// Writes the last chunk and the trailer, flushes to disk and renames
    /// the temporary file over the target (for a FIFO or a device: writes
    /// and flushes only).
    ///
    /// ```
    /// use hydron_codec::file::{FileOptions, FileWriter, Format};
    /// # #[cfg(feature = "fory-messages")] {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("e.hyd");
    /// FileWriter::create(&path, Format::Fory, FileOptions::new())?.finish()?;
    /// assert_eq!(std::fs::metadata(&path)?.len(), 44); // header and trailer
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(mut self) -> Result<(), CodecError> {
        let result = self.commit();
        result.map_err(|e| self.target.in_file(e))
    }

    fn commit(&mut self) -> Result<(), CodecError> {
        let encoder = self.encoder.take().ok_or_else(spent)?;
        let file = encoder
            .finish()?
            .into_inner()
            .map_err(|e| CodecError::Io(e.into_error()))?;
        self.target.commit(file)
    }
}
