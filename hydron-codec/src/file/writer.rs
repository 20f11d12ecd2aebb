//! [`FileWriter`]: streams a container to a temporary file and renames it
//! over the target on [`finish`](FileWriter::finish) (or, for a FIFO or a
//! device, writes to it directly); [`Encoder`]: the same container to any
//! [`Write`].

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hydron_core::Gf8;

use super::{FileOptions, Format};
use crate::CodecError;

/// The write buffer: chunk payloads larger than this bypass it.
const BUFFER_LEN: usize = 64 * 1024;

/// The longest file name most file systems take (ext4, XFS, btrfs, APFS,
/// NTFS in UTF-16 units): temporary names are kept within it.
const NAME_MAX: usize = 255;

/// Symbolic links followed at most when resolving a target (as Linux's
/// `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

enum Inner<W: Write> {
    #[cfg(feature = "fory")]
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
/// # #[cfg(feature = "fory")] {
/// let mut e = Encoder::new(Vec::new(), Format::Fory, FileOptions::new().chunk_vectors(100))?;
/// e.write(&E8_ROOTS[..150])?;
/// e.write(&E8_ROOTS[150..])?;
/// assert_eq!(e.vectors(), 240);
/// let bytes: Vec<u8> = e.finish()?;
/// assert_eq!(bytes, file::to_vec(&E8_ROOTS, Format::Fory, FileOptions::new().chunk_vectors(100))?);
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
    /// # #[cfg(feature = "fory")] {
    /// let e = Encoder::new(Vec::new(), Format::Fory, FileOptions::new())?;
    /// let bytes = e.finish()?;
    /// assert!(bytes.starts_with(&MAGIC));
    /// assert_eq!(bytes.len(), 44); // header and trailer
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(writer: W, format: Format, options: FileOptions) -> Result<Encoder<W>, CodecError> {
        let inner = match format {
            #[cfg(feature = "fory")]
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
            #[cfg(feature = "fory")]
            Inner::Binary(e) => e.write(vectors).map_err(CodecError::Io),
            #[cfg(feature = "json")]
            Inner::Text(e) => e.write(vectors),
        };
        self.failed = result.is_err();
        result
    }

    /// How many vectors have been written.
    ///
    /// ```
    /// use hydron_codec::file::{Encoder, FileOptions, Format};
    /// use hydron_core::Gf8;
    /// # #[cfg(feature = "fory")] {
    /// let mut e = Encoder::new(Vec::new(), Format::Fory, FileOptions::new())?;
    /// e.write(&[Gf8::ZERO; 3])?;
    /// assert_eq!(e.vectors(), 3);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn vectors(&self) -> u64 {
        match &self.inner {
            #[cfg(feature = "fory")]
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
            #[cfg(feature = "fory")]
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
///   file is removed. The new file gets the default permissions for new
///   files, not those of the file it replaces.
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
    /// The temporary file; removed on drop unless renamed. `None` when
    /// writing to the target directly.
    temp: Option<PathBuf>,
    /// The path as given, for errors.
    target: PathBuf,
    /// The path replaced on `finish`: `target` with links resolved.
    dest: PathBuf,
    durable: bool,
}

impl std::fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWriter")
            .field("target", &self.target)
            .field("dest", &self.dest)
            .field("temp", &self.temp)
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
        let target = path.as_ref().to_path_buf();
        let io_err = |e| in_file(&target, CodecError::Io(e));
        let (dest, meta) = resolve(&target).map_err(io_err)?;
        let (file, temp) = match meta {
            None => create_temp(&dest).map(|(f, t)| (f, Some(t))),
            Some(meta) => match Destination::of(&meta) {
                Destination::Replace => create_temp(&dest).map(|(f, t)| (f, Some(t))),
                Destination::Direct => OpenOptions::new()
                    .write(true)
                    .open(&dest)
                    .map(|f| (f, None)),
                Destination::Refuse(e) => Err(e),
            },
        }
        .map_err(io_err)?;
        let mut writer = FileWriter {
            encoder: None,
            temp,
            target,
            dest,
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
    /// the temporary file over the target (for a FIFO or a device: writes
    /// and flushes only).
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
        let Some(temp) = self.temp.as_ref() else {
            // Written straight to a FIFO or a device: nothing to rename,
            // and fsync means nothing there (it fails on a FIFO).
            return Ok(());
        };
        if self.durable {
            file.sync_all().map_err(CodecError::Io)?;
        }
        drop(file);
        fs::rename(temp, &self.dest).map_err(|e| {
            CodecError::Io(io::Error::new(
                e.kind(),
                format!("cannot rename {} over it: {e}", temp.display()),
            ))
        })?;
        self.temp = None;
        if self.durable {
            sync_dir(&dir_of(&self.dest)).map_err(CodecError::Io)?;
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

/// How a save treats an existing target.
enum Destination {
    /// A regular file: write a temporary file and rename it over.
    Replace,
    /// A FIFO, a character device or a socket: write to it.
    Direct,
    /// Anything else.
    Refuse(io::Error),
}

impl Destination {
    fn of(meta: &Metadata) -> Destination {
        let kind = meta.file_type();
        if kind.is_file() {
            return Destination::Replace;
        }
        if kind.is_dir() {
            return Destination::Refuse(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory, not a file it can replace",
            ));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_fifo() || kind.is_char_device() || kind.is_socket() {
                return Destination::Direct;
            }
            if kind.is_block_device() {
                return Destination::Refuse(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "is a block device; a save does not write to one",
                ));
            }
        }
        Destination::Refuse(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is not a regular file, a FIFO or a character device",
        ))
    }
}

/// Follows symbolic links from `target`: the path a save replaces, and
/// what is there now (`None` if nothing, e.g. a link to a missing file).
fn resolve(target: &Path) -> io::Result<(PathBuf, Option<Metadata>)> {
    let mut path = target.to_path_buf();
    for _ in 0..=MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&path)?;
                // A relative link is relative to the link's directory.
                path = if link.is_absolute() {
                    link
                } else {
                    dir_of(&path).join(link)
                };
            }
            Ok(meta) => return Ok((path, Some(meta))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((path, None)),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow"
    )))
}

/// The directory of `target` (`.` for a bare file name).
fn dir_of(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The first at most `max` bytes of `name`, cut on a character boundary
/// (on a byte boundary for a name that is not UTF-8, on unix).
fn truncate_name(name: &OsStr, max: usize) -> OsString {
    fn cut(s: &str, max: usize) -> &str {
        let mut end = s.len().min(max);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        &s[..end]
    }
    if let Some(s) = name.to_str() {
        return cut(s, max).into();
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = name.as_bytes();
        OsStr::from_bytes(&bytes[..bytes.len().min(max)]).to_owned()
    }
    #[cfg(not(unix))]
    {
        cut(&name.to_string_lossy(), max).into()
    }
}

/// `.NAME.UNIQUE.tmp`, with `NAME` cut so the whole fits in [`NAME_MAX`]
/// bytes.
fn temp_name(name: &OsStr, unique: &str) -> OsString {
    let suffix = format!(".{unique}.tmp");
    let room = NAME_MAX.saturating_sub(1 + suffix.len());
    let mut temp = OsString::from(".");
    temp.push(truncate_name(name, room));
    temp.push(suffix);
    temp
}

/// Creates a new, empty, uniquely named file in `target`'s directory.
fn create_temp(target: &Path) -> io::Result<(File, PathBuf)> {
    use std::hash::BuildHasher;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
    })?;
    let dir = dir_of(target);
    // Random per call (std seeds each RandomState from the OS), so that a
    // stale file of a crashed process with a reused pid rarely collides.
    let random = std::collections::hash_map::RandomState::new();
    let mut last = None;
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let unique = format!(
            "{}-{n}-{:08x}",
            std::process::id(),
            random.hash_one(n) as u32
        );
        let temp = dir.join(temp_name(name, &unique));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((file, temp)),
            // Taken (a stale file): try the next.
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

    #[test]
    fn temp_names_fit_in_255_bytes_and_cut_on_character_boundaries() {
        let unique = "4294967295-18446744073709551615-ffffffff";
        for name in ["a".repeat(255), "é".repeat(127), "x".repeat(250)] {
            let temp = temp_name(OsStr::new(&name), unique);
            let temp = temp.to_str().expect("still UTF-8");
            assert!(temp.len() <= NAME_MAX, "{}", temp.len());
            assert!(temp.ends_with(&format!(".{unique}.tmp")));
            assert!(name.starts_with(&temp[1..temp.len() - unique.len() - 5]));
        }
        let short = temp_name(OsStr::new("t.hyd"), "1-2-3");
        assert_eq!(short, ".t.hyd.1-2-3.tmp");

        let dir = tempfile::tempdir().unwrap();
        let (_, temp) = create_temp(&dir.path().join("y".repeat(255))).unwrap();
        assert!(temp.file_name().unwrap().len() <= NAME_MAX);
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_names_are_cut_on_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let name = OsStr::from_bytes(&[0xff; 255]);
        let temp = temp_name(name, "1-2-3");
        assert_eq!(temp.len(), NAME_MAX);
        assert!(temp.as_bytes()[1..245].iter().all(|&b| b == 0xff));
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_to_the_end_and_loops_stop() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.hyd");
        std::os::unix::fs::symlink("real.hyd", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("b")).unwrap();
        let (path, meta) = resolve(&dir.path().join("b")).unwrap();
        assert_eq!(path, real);
        assert!(meta.is_none());
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        assert!(resolve(&dir.path().join("loop")).is_err());
    }
}
