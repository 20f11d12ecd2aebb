//! [`Sink`]: an output file, written chunk by chunk and made visible only
//! when complete.
//!
//! Container outputs go through [`FileWriter`], which writes a temporary
//! file and renames it over the target. Plain outputs (a JSON array, an
//! `E8Codes` message) do the same here through `tempfile`. Dropping a sink
//! without [`finish`](Sink::finish) removes the temporary file and leaves
//! the target as it was.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use hydron_codec::file::{FileOptions, FileWriter, Format};
use hydron_codec::{fory, json, CodecError};
use hydron_core::{batch, E8Root, Gf8, Gf8Error};
use tempfile::NamedTempFile;

use crate::error::{Class, CliError};

/// The forms hydron writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum OutFormat {
    /// hydron container, binary: fory batches in checksummed chunks.
    Fory,
    /// hydron container, text: JSON Lines with checksum lines.
    Jsonl,
    /// A plain JSON array `[[x0,…,x7],…]` (no checksums).
    Json,
    /// E8 root codes, one byte per vector, as one fory `E8Codes` message.
    Codes,
}

impl OutFormat {
    /// A description for people.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            OutFormat::Fory => "hydron container, fory binary",
            OutFormat::Jsonl => "hydron container, JSON Lines",
            OutFormat::Json => "plain JSON array",
            OutFormat::Codes => "fory E8Codes message (E8 root codes)",
        }
    }
}

enum Inner {
    Container(FileWriter),
    Json {
        out: BufWriter<NamedTempFile>,
        row: Vec<u8>,
    },
    Codes {
        temp: NamedTempFile,
        codes: Vec<E8Root>,
    },
}

/// An output file being written.
pub struct Sink {
    target: PathBuf,
    inner: Inner,
    vectors: u64,
}

impl Sink {
    /// Starts writing `path` in `format`; `chunk_vectors` sets the
    /// container's chunk size.
    pub fn create(
        path: &Path,
        format: OutFormat,
        chunk_vectors: Option<u32>,
    ) -> Result<Sink, CliError> {
        if path.is_dir() {
            return Err(CliError::new(
                Class::Io,
                format!("{}: is a directory", path.display()),
            ));
        }
        let mut options = FileOptions::new();
        if let Some(n) = chunk_vectors {
            options = options.chunk_vectors(n);
        }
        let container = |f: Format| {
            FileWriter::create(path, f, options)
                .map(Inner::Container)
                .map_err(|e| CliError::codec(path, &e))
        };
        let inner = match format {
            OutFormat::Fory => container(Format::Fory)?,
            OutFormat::Jsonl => container(Format::JsonLines)?,
            OutFormat::Json => {
                let mut out = BufWriter::with_capacity(1 << 16, temp_file(path)?);
                out.write_all(b"[").map_err(|e| CliError::io(path, &e))?;
                Inner::Json {
                    out,
                    row: Vec::new(),
                }
            }
            OutFormat::Codes => Inner::Codes {
                temp: temp_file(path)?,
                codes: Vec::new(),
            },
        };
        Ok(Sink {
            target: path.to_path_buf(),
            inner,
            vectors: 0,
        })
    }

    /// Appends vectors (for the codes form, their nearest E8 roots).
    pub fn write(&mut self, vectors: &[Gf8]) -> Result<(), CliError> {
        let target = &self.target;
        match &mut self.inner {
            Inner::Container(w) => w.write(vectors).map_err(|e| CliError::codec(target, &e))?,
            Inner::Json { out, row } => {
                row.clear();
                for (i, v) in vectors.iter().enumerate() {
                    // JSON has no NaN or infinity (only `Policy::Trusted`
                    // inputs can hold them).
                    if let Err(error @ (Gf8Error::NotANumber { .. } | Gf8Error::Infinite { .. })) =
                        Gf8::check(v.as_array())
                    {
                        return Err(CliError::codec(
                            target,
                            &CodecError::InvalidVector {
                                index: self.vectors + i as u64,
                                error,
                            },
                        ));
                    }
                    if self.vectors > 0 || i > 0 {
                        row.push(b',');
                    }
                    row.extend_from_slice(&json::gf8_to_vec(*v));
                }
                out.write_all(row).map_err(|e| CliError::io(target, &e))?;
            }
            Inner::Codes { .. } => {
                let roots = batch::nearest_roots(vectors);
                return self.write_roots(&roots);
            }
        }
        self.vectors += vectors.len() as u64;
        Ok(())
    }

    /// Appends E8 root codes (codes form only; other forms write the roots
    /// as vectors).
    pub fn write_roots(&mut self, roots: &[E8Root]) -> Result<(), CliError> {
        if let Inner::Codes { codes, .. } = &mut self.inner {
            let total = codes.len() + roots.len();
            if total > fory::MAX_CODES_LEN {
                return Err(CliError::codec(
                    &self.target,
                    &CodecError::TooLarge {
                        length: total as u64,
                        limit: fory::MAX_CODES_LEN as u64,
                        what: "an E8Codes message",
                    },
                ));
            }
            codes.extend_from_slice(roots);
            self.vectors += roots.len() as u64;
            Ok(())
        } else {
            let vectors: Vec<Gf8> = roots.iter().map(|r| r.to_gf8()).collect();
            self.write(&vectors)
        }
    }

    /// Vectors written so far.
    #[inline]
    #[must_use]
    pub fn vectors(&self) -> u64 {
        self.vectors
    }

    /// Completes the file and moves it into place; returns its size.
    pub fn finish(self) -> Result<u64, CliError> {
        let target = self.target;
        let io = |e: io::Error| CliError::io(&target, &e);
        match self.inner {
            Inner::Container(w) => w.finish().map_err(|e| CliError::codec(&target, &e))?,
            Inner::Json { mut out, .. } => {
                out.write_all(b"]").map_err(io)?;
                let temp = out.into_inner().map_err(|e| io(e.into_error()))?;
                commit(temp, &target)?;
            }
            Inner::Codes { temp, codes } => {
                let bytes =
                    fory::try_encode_codes(&codes).map_err(|e| CliError::codec(&target, &e))?;
                drop(codes);
                let mut out = BufWriter::with_capacity(1 << 16, temp);
                out.write_all(&bytes).map_err(io)?;
                let temp = out.into_inner().map_err(|e| io(e.into_error()))?;
                commit(temp, &target)?;
            }
        }
        let size = std::fs::metadata(&target).map_err(io)?.len();
        Ok(size)
    }
}

/// A new hidden temporary file next to `target`, with the permissions a
/// new file normally gets (tempfile's default is owner-only).
fn temp_file(target: &Path) -> Result<NamedTempFile, CliError> {
    let name = target.file_name().ok_or_else(|| {
        CliError::new(
            Class::Io,
            format!("{}: does not name a file", target.display()),
        )
    })?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The process umask applies, as for any new file.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(&dir).map_err(|e| {
        CliError::new(
            Class::Io,
            format!(
                "{}: cannot create a temporary file in {}: {e}",
                target.display(),
                dir.display()
            ),
        )
    })
}

/// Flushes a finished temporary file to disk and renames it over `target`.
fn commit(temp: NamedTempFile, target: &Path) -> Result<(), CliError> {
    temp.as_file()
        .sync_all()
        .map_err(|e| CliError::io(target, &e))?;
    temp.persist(target)
        .map_err(|e| CliError::io(target, &e.error))?;
    sync_dir(target);
    Ok(())
}

/// Flushes the directory entry of the rename, where the platform allows.
fn sync_dir(target: &Path) {
    #[cfg(unix)]
    if let Some(dir) = target.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        // Best effort: the data itself is already on disk.
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    #[cfg(not(unix))]
    let _ = target;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_json_is_what_the_library_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        let vs: Vec<Gf8> = hydron_core::E8_ROOTS[..5].to_vec();
        let mut sink = Sink::create(&path, OutFormat::Json, None).unwrap();
        sink.write(&vs[..2]).unwrap();
        sink.write(&[]).unwrap();
        sink.write(&vs[2..]).unwrap();
        sink.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), json::to_vec(&vs));
    }

    #[test]
    fn abandoned_sinks_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for format in [
            OutFormat::Fory,
            OutFormat::Jsonl,
            OutFormat::Json,
            OutFormat::Codes,
        ] {
            let path = dir.path().join("x.out");
            let mut sink = Sink::create(&path, format, None).unwrap();
            sink.write(&[Gf8::ZERO]).unwrap();
            drop(sink);
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                0,
                "{format:?}"
            );
        }
    }

    #[test]
    fn codes_are_the_nearest_roots() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.bin");
        let v = Gf8::normalize([1.0, 0.9, 0.1, 0.0, 0.0, 0.0, 0.0, -0.1]).unwrap();
        let mut sink = Sink::create(&path, OutFormat::Codes, None).unwrap();
        sink.write(&[v, -v]).unwrap();
        assert_eq!(sink.vectors(), 2);
        sink.finish().unwrap();
        let codes = fory::decode_codes(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(codes, [v.nearest_root(), (-v).nearest_root()]);
    }
}
