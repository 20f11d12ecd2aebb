//! Atomic saves: [`TempFile`], the hidden temporary file a save writes
//! beside the file it replaces, and `SaveTarget`, the save every file
//! writer shares (the container, Parquet).
//!
//! A regular file or a new path is written as a temporary file next to the
//! file the path resolves to (with the replaced file's permissions) and
//! renamed over it when complete; a FIFO, a device or an open file named
//! through `/dev` or `/proc` is written directly; anything else is refused
//! (the rule is [`Destination`]'s). Dropped without being renamed, a
//! temporary file is removed and the target is left as it was.
//!
//! Every temporary file of this process is listed in one registry from the
//! moment it exists until it is renamed or removed; creating, renaming and
//! removing happen with the registry locked, so a signal handler calling
//! [`remove_temp_files`] sees each file either listed or gone, never
//! half-renamed. (SIGKILL cannot be caught: it may leave a file named
//! `.NAME.PID-N-RANDOM.tmp` beside the target.)

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::destination::{dir_of, Destination, DirectFile};
use crate::CodecError;

/// The longest file name most file systems take (ext4, XFS, btrfs, APFS,
/// NTFS in UTF-16 units): temporary names are kept within it.
const NAME_MAX: usize = 255;

/// The temporary files that exist now (absolute paths).
static REGISTRY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The registry, locked; a panic elsewhere does not make it unusable.
fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A hidden temporary file beside the file it will replace: removed when
/// dropped, unless [`persist`](TempFile::persist)ed (renamed over it).
///
/// It is created empty, with a new unique name (`.NAME.UNIQUE.tmp`, `NAME`
/// cut on a character boundary so the whole fits in 255 bytes) in the
/// directory of the file it replaces, so the rename stays on one file
/// system, and with that file's permissions when it is a regular file (a
/// 0600 file stays private). It never opens an existing file.
///
/// ```
/// use hydron_codec::save::TempFile;
/// use std::io::Write;
///
/// let dir = std::env::temp_dir().join(format!("hydron-temp-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let target = dir.join("points.hyd");
/// let (temp, mut file) = TempFile::create(&target)?;
/// file.write_all(b"data")?;
/// file.sync_all()?;
/// drop(file);
/// assert!(!target.exists(), "nothing in place before the rename");
/// temp.persist()?;
/// assert_eq!(std::fs::read(&target)?, b"data");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct TempFile {
    /// `None` once renamed or removed.
    path: Option<PathBuf>,
    /// The file it is renamed over (absolute where it could be made so).
    dest: PathBuf,
}

impl TempFile {
    /// Creates a new empty temporary file to be renamed over `dest` (the
    /// file itself, not a symbolic link to it: see [`Destination`]) and
    /// returns it open for writing.
    ///
    /// Errors: `dest` names no file (`/`, `..`), the directory is missing
    /// or not writable, or the replaced file's permissions cannot be
    /// given to the new one (the new file is then removed).
    ///
    /// ```
    /// use hydron_codec::save::TempFile;
    /// use std::path::Path;
    ///
    /// assert!(TempFile::create(Path::new("/")).is_err());
    /// assert!(TempFile::create(Path::new("/no/such/dir/x.hyd")).is_err());
    /// ```
    pub fn create(dest: &Path) -> io::Result<(TempFile, File)> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        use std::hash::BuildHasher;
        // Absolute: the rename or removal must still find the file if the
        // process changes its directory meanwhile. (Where there is no
        // current directory, WASI, the path is used as given.)
        let dest = std::path::absolute(dest).unwrap_or_else(|_| dest.to_path_buf());
        let name = dest.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
        })?;
        let dir = dir_of(&dest);
        // Random per call (std seeds each RandomState from the OS), so that a
        // stale file of a crashed process with a reused pid rarely collides.
        let random = std::collections::hash_map::RandomState::new();
        let mut last = None;
        // Locked from creation to listing: a signal never misses the file.
        let mut list = registry();
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let unique = format!(
                "{}-{n}-{:08x}",
                std::process::id(),
                random.hash_one(n) as u32
            );
            let path = dir.join(temp_name(name, &unique));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    list.push(path.clone());
                    drop(list);
                    let temp = TempFile {
                        path: Some(path),
                        dest,
                    };
                    // The replacement keeps the replaced file's mode; if
                    // that cannot be set, dropping `temp` removes the file.
                    if let Ok(old) = fs::metadata(&temp.dest) {
                        if old.is_file() {
                            file.set_permissions(old.permissions())?;
                        }
                    }
                    return Ok((temp, file));
                }
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

    /// The temporary file's path (until it is renamed).
    ///
    /// ```
    /// use hydron_codec::save::TempFile;
    ///
    /// let target = std::env::temp_dir().join("hydron-temp-path-doc.hyd");
    /// let (temp, _file) = TempFile::create(&target)?;
    /// let name = temp.path().unwrap().file_name().unwrap().to_str().unwrap();
    /// assert!(name.starts_with(".hydron-temp-path-doc.hyd.") && name.ends_with(".tmp"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The file it is renamed over.
    ///
    /// ```
    /// use hydron_codec::save::TempFile;
    ///
    /// let target = std::env::temp_dir().join("hydron-temp-dest-doc.hyd");
    /// let (temp, _file) = TempFile::create(&target)?;
    /// assert_eq!(temp.dest(), target);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[must_use]
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Renames the file over its destination (the caller has written,
    /// flushed and, if it wants the data durable, synced it) and takes it
    /// off the registry, both with the registry locked. If the rename
    /// fails, the temporary file is removed and the destination is left as
    /// it was. The directory entry is not synced (see
    /// [`sync_dir`](TempFile::sync_dir)).
    pub fn persist(mut self) -> io::Result<()> {
        let Some(path) = self.path.take() else {
            return Ok(());
        };
        let mut list = registry();
        let renamed = replace(&path, &self.dest);
        if renamed.is_err() {
            let _ = fs::remove_file(&path);
        }
        list.retain(|p| p != &path);
        renamed.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot rename {} over it: {e}", path.display()),
            )
        })
    }

    /// Flushes the entries of the directory of `dest` (a rename into it)
    /// to disk. Directories cannot be opened as files off unix; there the
    /// rename is as durable as the platform makes it.
    pub fn sync_dir(dest: &Path) -> io::Result<()> {
        #[cfg(unix)]
        {
            File::open(dir_of(dest))?.sync_all()
        }
        #[cfg(not(unix))]
        {
            let _ = dest;
            Ok(())
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let mut list = registry();
            let _ = fs::remove_file(&path);
            list.retain(|p| p != &path);
        }
    }
}

/// Puts the file `temp` in the place of `dest`, atomically: `dest` names
/// the old file or the new one at every moment.
///
/// On Linux, when `dest` exists, the two names are exchanged
/// (`renameat2(RENAME_EXCHANGE)`) and the old file, now under `temp`'s
/// name, is removed. A plain rename over an existing file makes ext4
/// (`auto_da_alloc`, on by default) write the new file's data back before
/// the call returns, most of a save that is not durable; an exchange does
/// not wait for it (`python/bench.py`'s save row). When what
/// the exchange brought back is not a regular file (`dest` was replaced
/// by a directory or a link since [`Destination`] checked it), the names
/// are exchanged back and the error is the one a rename gives. Elsewhere,
/// and where the exchange is refused (no `dest`, a file system without
/// it), it is a plain rename.
fn replace(temp: &Path, dest: &Path) -> io::Result<()> {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        if renameat_with(CWD, temp, CWD, dest, RenameFlags::EXCHANGE).is_ok() {
            let old = fs::symlink_metadata(temp);
            if old.is_ok_and(|m| m.file_type().is_file()) {
                // The new data is in place; an old file that cannot be
                // removed stays under the hidden temporary name.
                let _ = fs::remove_file(temp);
                return Ok(());
            }
            renameat_with(CWD, temp, CWD, dest, RenameFlags::EXCHANGE)?;
        }
    }
    fs::rename(temp, dest)
}

/// The registry of temporary files, kept locked: while it lives, no
/// [`TempFile`] is created, renamed or removed (those calls wait).
#[must_use = "the registry is unlocked when this is dropped"]
pub struct TempFilesLock(#[allow(dead_code)] MutexGuard<'static, Vec<PathBuf>>);

impl std::fmt::Debug for TempFilesLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TempFilesLock")
    }
}

/// Removes every temporary file this process has created and not yet
/// renamed or removed (what a signal handler calls before the process
/// exits), and returns the registry still locked, so that no other thread
/// creates or renames one before the exit.
///
/// ```
/// use hydron_codec::save::{remove_temp_files, TempFile};
///
/// let target = std::env::temp_dir().join("hydron-remove-doc.hyd");
/// let (temp, _file) = TempFile::create(&target)?;
/// let path = temp.path().unwrap().to_path_buf();
/// drop(remove_temp_files());
/// assert!(!path.exists());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn remove_temp_files() -> TempFilesLock {
    let mut list = registry();
    for path in list.drain(..) {
        let _ = fs::remove_file(path);
    }
    TempFilesLock(list)
}

/// Where a save writes, and how it puts the data in place.
#[derive(Debug)]
pub(crate) struct SaveTarget {
    /// For a replaced file, the temporary file (which knows the file it
    /// replaces); `None` when writing to the target directly, or once
    /// renamed.
    temp: Option<TempFile>,
    /// The path as given, for errors.
    target: PathBuf,
    durable: bool,
}

impl SaveTarget {
    /// Opens where the data for `path` goes: a new temporary file next to
    /// the file `path` resolves to, or the FIFO, device or open file
    /// itself. Errors name `path`.
    pub(crate) fn create(path: &Path, durable: bool) -> Result<(SaveTarget, File), CodecError> {
        let target = path.to_path_buf();
        let io_err = |e| in_file(&target, CodecError::Io(e));
        // Absolute from the start: a writer lives on while the process may
        // change its directory. Where there is no current directory to
        // resolve against (WASI), the path is used as given.
        let absolute = std::path::absolute(&target).unwrap_or_else(|_| target.clone());
        let (file, temp) = match Destination::of(&absolute).map_err(io_err)? {
            Destination::Replace { path, .. } => {
                let (temp, file) = TempFile::create(&path).map_err(io_err)?;
                (file, Some(temp))
            }
            Destination::Direct => {
                let file = DirectFile::open(&absolute)
                    .and_then(DirectFile::into_file)
                    .map_err(io_err)?;
                (file, None)
            }
        };
        let save = SaveTarget {
            temp,
            target,
            durable,
        };
        Ok((save, file))
    }

    /// Whether the data goes to a temporary file (a regular file, renamed
    /// over the target when committed), not to a FIFO or a device.
    #[cfg_attr(not(feature = "fory-messages"), allow(dead_code))]
    pub(crate) fn is_temporary(&self) -> bool {
        self.temp.is_some()
    }

    /// `error`, as an error about this target's path.
    pub(crate) fn in_file(&self, error: CodecError) -> CodecError {
        in_file(&self.target, error)
    }

    /// Puts the data written to `file` in place: flushes it to disk (if
    /// durable), renames the temporary file over the target and flushes the
    /// directory. For a FIFO or a device there is nothing to do.
    pub(crate) fn commit(&mut self, file: File) -> Result<(), CodecError> {
        let Some(temp) = self.temp.take() else {
            // Written straight to a FIFO or a device: nothing to rename,
            // and fsync means nothing there (it fails on a FIFO).
            return Ok(());
        };
        if self.durable {
            if let Err(e) = file.sync_all() {
                // Not renamed: put back, so that dropping the target
                // removes the temporary file.
                self.temp = Some(temp);
                return Err(CodecError::Io(e));
            }
        }
        drop(file);
        let dest = temp.dest().to_path_buf();
        temp.persist().map_err(CodecError::Io)?;
        if self.durable {
            TempFile::sync_dir(&dest).map_err(CodecError::Io)?;
        }
        Ok(())
    }
}

/// The error of a writer whose earlier write failed.
pub(crate) fn spent() -> CodecError {
    CodecError::Io(io::Error::other(
        "an earlier write failed, so the file was not saved",
    ))
}

/// `error`, as an error about the file at `path`.
pub(crate) fn in_file(path: &Path, error: CodecError) -> CodecError {
    CodecError::InFile {
        path: path.to_path_buf(),
        error: Box::new(error),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The path of a temporary file that is still there.
    fn path_of(temp: &TempFile) -> PathBuf {
        temp.path().unwrap().to_path_buf()
    }

    #[test]
    fn temp_files_are_unique_and_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.hyd");
        let (a, _) = TempFile::create(&target).unwrap();
        let (b, _) = TempFile::create(&target).unwrap();
        assert_ne!(path_of(&a), path_of(&b));
        assert_eq!(path_of(&a).parent(), Some(dir.path()));
        assert!(path_of(&a)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(".t.hyd."));
        assert!(TempFile::create(Path::new("/")).is_err());
    }

    #[test]
    fn temp_files_are_registered_until_persisted_or_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("y".repeat(250));
        let (kept, _) = TempFile::create(&target).unwrap();
        let (dropped, _) = TempFile::create(&target).unwrap();
        let (kept_path, dropped_path) = (path_of(&kept), path_of(&dropped));
        assert!(registry().contains(&kept_path) && registry().contains(&dropped_path));
        drop(dropped);
        assert!(!dropped_path.exists() && !registry().contains(&dropped_path));
        kept.persist().unwrap();
        assert!(target.exists() && !kept_path.exists());
        assert!(!registry().contains(&kept_path));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // (`remove_temp_files` is not called here: it would remove the
        // files of tests running beside this one. Its doctest runs alone,
        // and the tool's signal tests use it.)
    }

    #[cfg(unix)]
    #[test]
    fn a_temp_file_takes_the_replaced_files_mode_and_a_failed_rename_removes_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("private.hyd");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let (temp, file) = TempFile::create(&target).unwrap();
        assert_eq!(file.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        // A directory where the file was: the rename fails, the temporary
        // file goes, the directory stays.
        std::fs::remove_file(&target).unwrap();
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), b"x").unwrap();
        let path = path_of(&temp);
        assert!(temp.persist().is_err());
        assert!(!path.exists() && !registry().contains(&path));
        assert!(target.join("inside").exists());
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
        let (temp, _) = TempFile::create(&dir.path().join("y".repeat(255))).unwrap();
        assert!(path_of(&temp).file_name().unwrap().len() <= NAME_MAX);
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
}
