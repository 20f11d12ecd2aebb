//! [`Source`]: the bytes a Parquet reader reads, a regular file or memory,
//! with every range checked against the real length before anything is
//! allocated for it.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::sync::Arc;

use bytes::Bytes;
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

/// A Parquet file's bytes: a regular file (its length taken once, when
/// opened) or a buffer.
#[derive(Clone, Debug)]
pub(super) enum Source {
    File { file: Arc<File>, len: u64 },
    Bytes(Bytes),
}

impl Source {
    /// Checks that `length` bytes from `start` are inside the data.
    fn check(&self, start: u64, length: u64) -> Result<(), ParquetError> {
        let len = self.len();
        match start.checked_add(length) {
            Some(end) if end <= len => Ok(()),
            _ => Err(ParquetError::EOF(format!(
                "{length} bytes at byte offset {start} are past the end of the data ({len} bytes)"
            ))),
        }
    }
}

impl Length for Source {
    fn len(&self) -> u64 {
        match self {
            Source::File { len, .. } => *len,
            Source::Bytes(b) => b.len() as u64,
        }
    }
}

impl ChunkReader for Source {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> Result<Self::T, ParquetError> {
        self.check(start, 0)?;
        match self {
            Source::File { file, len } => {
                let mut file = file.try_clone()?;
                file.seek(SeekFrom::Start(start))?;
                // Never read past the length the file had when opened (it
                // may grow while it is read).
                Ok(Box::new(BufReader::new(file.take(len - start))))
            }
            Source::Bytes(b) => Ok(Box::new(bytes::Buf::reader(b.slice(start as usize..)))),
        }
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, ParquetError> {
        self.check(start, length as u64)?;
        match self {
            Source::File { file, .. } => {
                let mut buffer = vec![0; length];
                let mut file = file.try_clone()?;
                file.seek(SeekFrom::Start(start))?;
                file.read_exact(&mut buffer).map_err(|e| {
                    ParquetError::EOF(format!(
                        "reading {length} bytes at byte offset {start}: {e} (did the file shrink?)"
                    ))
                })?;
                Ok(buffer.into())
            }
            Source::Bytes(b) => Ok(b.slice(start as usize..start as usize + length)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_past_the_end_are_errors_before_any_allocation() {
        let source = Source::Bytes(Bytes::from_static(b"0123456789"));
        assert_eq!(source.get_bytes(2, 3).unwrap().as_ref(), b"234");
        assert!(source.get_bytes(8, 3).is_err());
        assert!(source.get_bytes(u64::MAX, 2).is_err());
        assert!(source.get_bytes(0, usize::MAX).is_err());
        assert!(source.get_read(11).is_err());
        let mut rest = String::new();
        source
            .get_read(7)
            .unwrap()
            .read_to_string(&mut rest)
            .unwrap();
        assert_eq!(rest, "789");

        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, b"abcdef").unwrap();
        let source = Source::File {
            file: Arc::new(file),
            len: 6,
        };
        assert_eq!(source.get_bytes(1, 2).unwrap().as_ref(), b"bc");
        // 1 TiB claimed from a 6-byte file: refused, nothing allocated.
        assert!(source.get_bytes(0, 1 << 40).is_err());
    }
}
