//! [`SaveTarget`]: the atomic save every file writer shares (the container,
//! Parquet). A regular file or a new path is written as a hidden temporary
//! file next to it (with the replaced file's permissions) and renamed over
//! it on [`commit`](SaveTarget::commit); a FIFO, a device or an open file
//! named through `/dev` or `/proc` is written directly; anything else is
//! refused (the rule is [`Destination`]'s). Dropped without `commit`, the
//! temporary file is removed and the target is left as it was.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::destination::{dir_of, Destination, DirectFile};
use crate::CodecError;

/// The longest file name most file systems take (ext4, XFS, btrfs, APFS,
/// NTFS in UTF-16 units): temporary names are kept within it.
const NAME_MAX: usize = 255;

/// Where a save writes, and how it puts the data in place.
#[derive(Debug)]
pub(crate) struct SaveTarget {
    /// For a replaced file, the temporary file and the file it replaces;
    /// `None` when writing to the target directly, or once renamed.
    rename: Option<Rename>,
    /// The path as given, for errors.
    target: PathBuf,
    durable: bool,
}

/// A temporary file (removed on drop unless renamed) and the path it is
/// renamed over on `commit`: the target made absolute, links resolved.
#[derive(Debug)]
struct Rename {
    temp: PathBuf,
    dest: PathBuf,
}

impl SaveTarget {
    /// Opens where the data for `path` goes: a new temporary file next to
    /// the file `path` resolves to, or the FIFO, device or open file
    /// itself. Errors name `path`.
    pub(crate) fn create(path: &Path, durable: bool) -> Result<(SaveTarget, File), CodecError> {
        let target = path.to_path_buf();
        let io_err = |e| in_file(&target, CodecError::Io(e));
        // Absolute from the start: a writer lives on while the process may
        // change its directory, and the rename (or the removal of the
        // temporary file) must still find the file it created. Where there
        // is no current directory to resolve against (WASI), the path is
        // used as given.
        let absolute = std::path::absolute(&target).unwrap_or_else(|_| target.clone());
        let (file, rename) = match Destination::of(&absolute).map_err(io_err)? {
            Destination::Replace { path, existing } => {
                let (file, temp) = create_temp(&path).map_err(io_err)?;
                // The replacement keeps the replaced file's mode (a 0600
                // file stays private); if that cannot be set, the
                // temporary file is removed and the save fails.
                if let Some(meta) = existing {
                    if let Err(e) = file.set_permissions(meta.permissions()) {
                        let _ = fs::remove_file(&temp);
                        return Err(io_err(e));
                    }
                }
                (file, Some(Rename { temp, dest: path }))
            }
            Destination::Direct => {
                let file = DirectFile::open(&absolute)
                    .and_then(DirectFile::into_file)
                    .map_err(io_err)?;
                (file, None)
            }
        };
        let save = SaveTarget {
            rename,
            target,
            durable,
        };
        Ok((save, file))
    }

    /// `error`, as an error about this target's path.
    pub(crate) fn in_file(&self, error: CodecError) -> CodecError {
        in_file(&self.target, error)
    }

    /// Puts the data written to `file` in place: flushes it to disk (if
    /// durable), renames the temporary file over the target and flushes the
    /// directory. For a FIFO or a device there is nothing to do.
    pub(crate) fn commit(&mut self, file: File) -> Result<(), CodecError> {
        let Some(Rename { temp, dest }) = self.rename.as_ref() else {
            // Written straight to a FIFO or a device: nothing to rename,
            // and fsync means nothing there (it fails on a FIFO).
            return Ok(());
        };
        if self.durable {
            file.sync_all().map_err(CodecError::Io)?;
        }
        drop(file);
        fs::rename(temp, dest).map_err(|e| {
            CodecError::Io(io::Error::new(
                e.kind(),
                format!("cannot rename {} over it: {e}", temp.display()),
            ))
        })?;
        let dir = dir_of(dest);
        self.rename = None;
        if self.durable {
            sync_dir(&dir).map_err(CodecError::Io)?;
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

impl Drop for SaveTarget {
    fn drop(&mut self) {
        if let Some(rename) = self.rename.take() {
            let _ = fs::remove_file(rename.temp);
        }
    }
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
}
