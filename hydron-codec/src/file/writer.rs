//! [`FileWriter`]: streams a container to a temporary file and renames it
//! over the target on [`finish`](FileWriter::finish).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hydron_core::Gf8;

use super::{FileOptions, Format};
use crate::CodecError;

/// The write buffer: chunk payloads larger than this bypass it.
const BUFFER_LEN: usize = 64 * 1024;

/// An encoder of either form.
pub(crate) enum Encoder<W: Write> {
    #[cfg(feature = "fory")]
    Binary(super::binary::Encoder<W>),
    #[cfg(feature = "json")]
    Text(super::text::Encoder<W>),
}

impl<W: Write> Encoder<W> {
    /// Writes the header.
    pub(crate) fn new(
        writer: W,
        format: Format,
        options: FileOptions,
    ) -> Result<Encoder<W>, CodecError> {
        match format {
            #[cfg(feature = "fory")]
            Format::Fory => super::binary::Encoder::new(writer, options).map(Encoder::Binary),
            #[cfg(feature = "json")]
            Format::JsonLines => super::text::Encoder::new(writer, options).map(Encoder::Text),
        }
        .map_err(CodecError::Io)
    }

    pub(crate) fn write(&mut self, vectors: &[Gf8]) -> Result<(), CodecError> {
        match self {
            #[cfg(feature = "fory")]
            Encoder::Binary(e) => e.write(vectors).map_err(CodecError::Io),
            #[cfg(feature = "json")]
            Encoder::Text(e) => e.write(vectors),
        }
    }

    pub(crate) fn vectors(&self) -> u64 {
        match self {
            #[cfg(feature = "fory")]
            Encoder::Binary(e) => e.vectors(),
            #[cfg(feature = "json")]
            Encoder::Text(e) => e.vectors(),
        }
    }

    /// Writes the last chunk and the trailer, flushes, and returns the
    /// writer.
    pub(crate) fn finish(self) -> Result<W, CodecError> {
        match self {
            #[cfg(feature = "fory")]
            Encoder::Binary(e) => e.finish(),
            #[cfg(feature = "json")]
            Encoder::Text(e) => e.finish(),
        }
        .map_err(CodecError::Io)
    }
}

/// Writes a hydron file chunk by chunk, in constant memory (about one
/// chunk), and replaces the target atomically when
/// [`finish`](FileWriter::finish)ed.
///
/// The data goes to a hidden temporary file in the target's directory
/// (`.NAME.PID-N.tmp`). `finish` writes the trailer, flushes the file to
/// disk, renames it over the target and (on unix) flushes the directory,
/// so that readers see either the old file or the whole new one. If a
/// write fails, or the writer is dropped without `finish`, the target is
/// not touched and the temporary file is removed.
///
/// The new file gets the default permissions for new files, not those of
/// the file it replaces, and a symbolic link at the target is replaced by
/// the file, not followed.
///
/// ```
/// use hydron_codec::file::{self, FileOptions, FileWriter, Format};
/// use hydron_codec::Policy;
/// use hydron_core::Gf8;
///
/// # #[cfg(feature = "json")] {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("stream.jsonl");
/// let mut w = FileWriter::create(&path, Format::JsonLines, FileOptions::new().chunk_vectors(2))?;
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
    /// fails.
    encoder: Option<Encoder<BufWriter<File>>>,
    /// The temporary file; removed on drop unless renamed.
    temp: Option<PathBuf>,
    target: PathBuf,
    durable: bool,
}

impl std::fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWriter")
            .field("target", &self.target)
            .field("temp", &self.temp)
            .field("vectors", &self.vectors())
            .finish_non_exhaustive()
    }
}

impl FileWriter {
    /// Creates the temporary file next to `path` and writes the header.
    ///
    /// ```
    /// use hydron_codec::file::{FileOptions, FileWriter, Format};
    /// # #[cfg(feature = "json")] {
    /// let err = FileWriter::create("/no/such/dir/x.hyd", Format::JsonLines, FileOptions::new()).unwrap_err();
    /// assert!(err.to_string().starts_with("/no/such/dir/x.hyd: I/O error: cannot create a temporary file in /no/such/dir"));
    /// # }
    /// ```
    pub fn create(
        path: impl AsRef<Path>,
        format: Format,
        options: FileOptions,
    ) -> Result<FileWriter, CodecError> {
        let target = path.as_ref().to_path_buf();
        let (file, temp) = create_temp(&target).map_err(|e| in_file(&target, CodecError::Io(e)))?;
        let mut writer = FileWriter {
            encoder: None,
            temp: Some(temp),
            target,
            durable: options.is_durable(),
        };
        let encoder = Encoder::new(BufWriter::with_capacity(BUFFER_LEN, file), format, options)
            .map_err(|e| in_file(&writer.target, e))?;
        writer.encoder = Some(encoder);
        Ok(writer)
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
        let Some(encoder) = self.encoder.as_mut() else {
            return Err(in_file(&self.target, spent()));
        };
        let result = encoder.write(vectors);
        if let Err(e) = result {
            self.encoder = None;
            return Err(in_file(&self.target, e));
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
    /// the temporary file over the target.
    ///
    /// ```
    /// use hydron_codec::file::{FileOptions, FileWriter, Format};
    /// # #[cfg(feature = "fory")] {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("e.hyd");
    /// FileWriter::create(&path, Format::Fory, FileOptions::new())?.finish()?;
    /// assert_eq!(std::fs::metadata(&path)?.len(), 44); // header and trailer
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(mut self) -> Result<(), CodecError> {
        let result = self.commit();
        result.map_err(|e| in_file(&self.target, e))
    }

    fn commit(&mut self) -> Result<(), CodecError> {
        let encoder = self.encoder.take().ok_or_else(spent)?;
        let file = encoder
            .finish()?
            .into_inner()
            .map_err(|e| CodecError::Io(e.into_error()))?;
        if self.durable {
            file.sync_all().map_err(CodecError::Io)?;
        }
        drop(file);
        let temp = self
            .temp
            .as_ref()
            .expect("the temporary file exists until renamed");
        fs::rename(temp, &self.target).map_err(|e| {
            CodecError::Io(io::Error::new(
                e.kind(),
                format!("cannot rename {} over it: {e}", temp.display()),
            ))
        })?;
        self.temp = None;
        if self.durable {
            sync_dir(&dir_of(&self.target)).map_err(CodecError::Io)?;
        }
        Ok(())
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        // Close the file first (Windows cannot remove an open file).
        self.encoder = None;
        if let Some(temp) = self.temp.take() {
            let _ = fs::remove_file(temp);
        }
    }
}

fn in_file(path: &Path, error: CodecError) -> CodecError {
    CodecError::InFile {
        path: path.to_path_buf(),
        error: Box::new(error),
    }
}

fn spent() -> CodecError {
    CodecError::Io(io::Error::other(
        "an earlier write failed, so the file was not saved",
    ))
}

/// The directory of `target` (`.` for a bare file name).
fn dir_of(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates a new, empty, uniquely named file in `target`'s directory.
fn create_temp(target: &Path) -> io::Result<(File, PathBuf)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
    })?;
    let dir = dir_of(target);
    let mut last = None;
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}-{n}.tmp", std::process::id()));
        let temp = dir.join(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((file, temp)),
            // A stale file from a crashed process with our pid: try the next.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create a temporary file in {}: {e}", dir.display()),
                ))
            }
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}

/// Flushes a directory's entries (the rename) to disk.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Directories cannot be opened as files here; the rename is as durable as
/// the platform makes it.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_of_bare_names_is_the_current_directory() {
        assert_eq!(dir_of(Path::new("x.hyd")), PathBuf::from("."));
        assert_eq!(dir_of(Path::new("a/x.hyd")), PathBuf::from("a"));
    }

    #[test]
    fn temp_files_are_unique_and_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.hyd");
        let (_, a) = create_temp(&target).unwrap();
        let (_, b) = create_temp(&target).unwrap();
        assert_ne!(a, b);
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(".t.hyd."));
        assert!(create_temp(Path::new("/")).is_err());
    }
}
