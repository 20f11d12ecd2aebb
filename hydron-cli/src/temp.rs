//! [`TempFile`]: the hidden temporary files outputs are written to before
//! they are renamed into place, and the registry that lets a signal remove
//! every one of them.
//!
//! Every temporary file this process creates is listed in one global
//! registry (a mutex) from the moment it exists until it is renamed or
//! removed. Creating, renaming and removing happen with the registry locked,
//! so the signal path ([`remove_all`]) sees each file either listed or gone,
//! never half-renamed. SIGKILL cannot be caught: it may leave a temporary
//! file behind (named `.NAME.PID-N.tmp`, next to the output).

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use hydron_codec::destination::dir_of;

use crate::error::{Class, CliError};

/// The longest file name most file systems allow, in bytes.
pub const NAME_MAX: usize = 255;

/// The temporary files that exist now.
static REGISTRY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The registry, locked; a panic elsewhere does not make it unusable.
fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A temporary file next to a target, removed on drop unless
/// [`commit`](TempFile::commit)ted.
#[derive(Debug)]
pub struct TempFile {
    /// `None` once renamed.
    path: Option<PathBuf>,
    /// The file it is renamed over.
    target: PathBuf,
}

impl TempFile {
    /// Creates a new empty hidden file in `target`'s directory, to be
    /// renamed over `target`; returns it open for writing. It gets the
    /// permissions of the regular file at `target` if there is one (a
    /// replaced file keeps its mode), else those a new file normally gets
    /// (the umask applies).
    pub fn create(target: &Path) -> Result<(TempFile, File), CliError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = target.file_name().ok_or_else(|| {
            CliError::new(
                Class::Io,
                format!("{}: does not name a file", target.display()),
            )
        })?;
        let dir = dir_of(target);
        let fail = |e: io::Error| {
            CliError::new(
                Class::Io,
                format!(
                    "{}: cannot create a temporary file in {}: {e}",
                    target.display(),
                    dir.display()
                ),
            )
        };
        let mut last = None;
        // Locked from creation to listing: a signal never misses the file.
        let mut list = registry();
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(temp_name(name, std::process::id(), n));
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o666);
            }
            match options.open(&path) {
                Ok(file) => {
                    list.push(path.clone());
                    let temp = TempFile {
                        path: Some(path),
                        target: target.to_path_buf(),
                    };
                    match fs::metadata(target) {
                        Ok(old) if old.is_file() => {
                            file.set_permissions(old.permissions()).map_err(fail)?;
                        }
                        _ => {}
                    }
                    return Ok((temp, file));
                }
                // A stale file from a crashed process with our pid.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(fail(e)),
            }
        }
        Err(fail(last.unwrap_or_else(|| {
            io::Error::other("no free temporary file name")
        })))
    }

    /// The file this one is renamed over.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the file over its target (the caller has flushed it) and
    /// takes it off the registry, both under the registry's lock.
    pub fn commit(mut self) -> Result<(), CliError> {
        let Some(path) = self.path.take() else {
            return Ok(());
        };
        let mut list = registry();
        if let Err(e) = fs::rename(&path, &self.target) {
            let _ = fs::remove_file(&path);
            list.retain(|p| p != &path);
            return Err(CliError::io(
                &self.target,
                &io::Error::new(
                    e.kind(),
                    format!("cannot rename {} over it: {e}", path.display()),
                ),
            ));
        }
        list.retain(|p| p != &path);
        Ok(())
    }

    /// The path of the temporary file (until committed).
    #[cfg(test)]
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
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

/// Removes every registered temporary file and returns the registry still
/// locked, so that no other thread can create or rename one before the
/// process exits.
pub fn remove_all() -> MutexGuard<'static, Vec<PathBuf>> {
    let mut list = registry();
    for path in list.drain(..) {
        let _ = fs::remove_file(path);
    }
    list
}

/// `.NAME.PID-N.tmp`, with `NAME` cut so that the whole fits in
/// [`NAME_MAX`] bytes (the file system's limit on one name).
fn temp_name(name: &std::ffi::OsStr, pid: u32, n: u64) -> OsString {
    let suffix = format!(".{pid}-{n}.tmp");
    let room = NAME_MAX - 1 - suffix.len();
    let mut out = OsString::from(".");
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = name.as_bytes();
        out.push(std::ffi::OsStr::from_bytes(&bytes[..bytes.len().min(room)]));
    }
    #[cfg(not(unix))]
    {
        let name = name.to_string_lossy();
        let mut end = name.len().min(room);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        out.push(&name[..end]);
    }
    out.push(suffix);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_fit_the_name_limit() {
        for len in [1, 100, 218, 219, 250, 255] {
            let name = OsString::from("x".repeat(len));
            let t = temp_name(&name, u32::MAX, u64::MAX);
            assert!(t.len() <= NAME_MAX, "{len}: {}", t.len());
            assert!(t.to_string_lossy().starts_with(".x"));
            assert!(t.to_string_lossy().ends_with(".tmp"));
        }
        assert_eq!(temp_name(&OsString::from("a.hyd"), 7, 3), ".a.hyd.7-3.tmp");
    }

    #[test]
    fn temp_files_are_registered_until_committed_or_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("y".repeat(250));
        let (kept, _) = TempFile::create(&target).unwrap();
        let (dropped, _) = TempFile::create(&target).unwrap();
        let kept_path = kept.path().unwrap().to_path_buf();
        let dropped_path = dropped.path().unwrap().to_path_buf();
        assert!(registry().contains(&kept_path) && registry().contains(&dropped_path));
        drop(dropped);
        assert!(!dropped_path.exists() && !registry().contains(&dropped_path));
        kept.commit().unwrap();
        assert!(target.exists() && !kept_path.exists());
        assert!(!registry().contains(&kept_path));
    }
}
