//! Reading a whole file for `inspect` and `validate`: every chunk, every
//! checksum, every vector (invalid ones are found, not fatal).

use std::path::Path;

use hydron_codec::Policy;
use serde::Serialize;

use crate::error::{coordinate_of, Class, CliError, Place};
use crate::input::{Input, Kind, ParquetInfo, PartInfo};
use crate::interrupt;
use crate::progress;
use crate::stats::{invalid_vectors, Summary};

/// An invalid vector.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    /// Where it is.
    #[serde(flatten)]
    pub place: Place,
    /// What is wrong, e.g. `coordinate 2 is NaN`.
    pub message: String,
    /// The file of a data set it is in (its row there is `place.row`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Problem {
    /// `vector 17 (chunk 0, index 17 in chunk, line 19): coordinate 2 is NaN`;
    /// in a data set, `vector 1017 (file ds/b.parquet, row 17): …`.
    #[must_use]
    pub fn describe(&self) -> String {
        match &self.file {
            Some(file) => format!(
                "vector {} (file {file}, row {}): {}",
                self.place.vector.unwrap_or_default(),
                self.place.row.unwrap_or_default(),
                self.message
            ),
            None => format!("{}: {}", describe_place(&self.place), self.message),
        }
    }
}

/// What reading a file found.
pub struct Scan {
    /// The form, once known.
    pub kind: Option<Kind>,
    /// The file size, once known (for a pipe, the bytes read).
    pub bytes: Option<u64>,
    /// A container's version and chunk size, from its header.
    pub header: Option<(u16, u32)>,
    /// What a Parquet file's footer says (of a data set: its files' in
    /// all).
    pub parquet: Option<ParquetInfo>,
    /// The files of a data set.
    pub parts: Option<Vec<PartInfo>>,
    /// Vectors and chunks read (up to an error).
    pub vectors: u64,
    pub chunks: u64,
    /// Statistics of the vectors read.
    pub summary: Summary,
    /// The first invalid vectors, at most the number asked for.
    pub problems: Vec<Problem>,
    /// Why reading stopped before the end, if it did.
    pub error: Option<CliError>,
}

impl Scan {
    /// Whether the file was read to its (checked) end.
    #[inline]
    #[must_use]
    pub fn complete(&self) -> bool {
        self.error.is_none()
    }

    /// The state of the checksums: `ok`, `failed`, `unchecked` (reading
    /// stopped for another reason) or `none` (the form has none, or a
    /// Parquet file without hydron's row group checksums: its page
    /// checksums, where written, were still checked).
    #[must_use]
    pub fn checksums(&self) -> &'static str {
        let parquet_without_ours = self.parquet.as_ref().is_some_and(|p| !p.hydron_checksums);
        match (self.kind, &self.error) {
            (Some(k), _) if !k.has_checksums() => "none",
            (_, Some(e)) if e.class == Class::Corrupt => "failed",
            (Some(_), _) if parquet_without_ours => "none",
            (Some(_), None) => "ok",
            _ => "unchecked",
        }
    }
}

/// Opens `path` (its Parquet column `column`, if given) for [`scan`]:
/// invalid vectors are read as they are, to be reported.
pub fn open(path: &Path, column: Option<&str>, limit: u64) -> Result<Input, CliError> {
    // Trusted: invalid vectors are read as they are and reported by the
    // scan, all of them, instead of stopping the reader at the first.
    Input::open(path, Policy::Trusted, limit, column)
}

/// Reads the input [`open`] opened to the end or the first structural
/// error, keeping at most `max_problems` invalid vectors.
pub fn scan(opened: Result<Input, CliError>, max_problems: usize, what: &'static str) -> Scan {
    let mut scan = Scan {
        kind: None,
        bytes: None,
        header: None,
        parquet: None,
        parts: None,
        vectors: 0,
        chunks: 0,
        summary: Summary::default(),
        problems: Vec::new(),
        error: None,
    };
    let mut input = match opened {
        Ok(input) => input,
        Err(e) => {
            scan.error = Some(e);
            return scan;
        }
    };
    scan.kind = Some(input.kind());
    scan.header = input.container_header();
    scan.parquet = input.parquet_info();
    scan.parts = input.dataset_parts();
    super::note_column(&input);
    let bar = progress::vectors(input.expected_vectors(), what);
    let mut buf = Vec::new();
    loop {
        if let Err(e) = interrupt::check() {
            scan.error = Some(e);
            break;
        }
        match input.read_chunk(&mut buf) {
            Ok(None) => break,
            Ok(Some(chunk)) => {
                let bad = invalid_vectors(&buf);
                for &(i, error) in &bad {
                    if scan.problems.len() < max_problems {
                        let mut place = input.place(&chunk, i);
                        place.coordinate = coordinate_of(&error);
                        let file = input.file_of(&chunk, i);
                        scan.problems.push(Problem {
                            place,
                            message: error.to_string(),
                            file: file.map(|(path, _)| path.display().to_string()),
                        });
                    }
                }
                let indices: Vec<usize> = bad.iter().map(|b| b.0).collect();
                scan.summary.add(&buf, &indices);
                bar.inc(chunk.len as u64);
            }
            Err(e) => {
                scan.error = Some(e);
                break;
            }
        }
    }
    bar.finish_and_clear();
    // Known at the end for a pipe (the bytes read).
    scan.bytes = Some(input.bytes());
    scan.vectors = input.vectors_read();
    scan.chunks = input.chunks_read();
    scan
}

/// `vector 17 (chunk 0, index 17 in chunk, line 19)`.
#[must_use]
pub fn describe_place(p: &Place) -> String {
    let mut s = match p.vector {
        Some(v) => format!("vector {v}"),
        None => "?".to_owned(),
    };
    let mut extra = Vec::new();
    if let Some(c) = p.chunk {
        extra.push(format!("chunk {c}"));
    }
    if let Some(i) = p.index_in_chunk {
        extra.push(format!("index {i} in chunk"));
    }
    if let Some(l) = p.line {
        extra.push(format!("line {l}"));
    }
    if !extra.is_empty() {
        s.push_str(&format!(" ({})", extra.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_read_well() {
        let p = Place {
            vector: Some(70000),
            chunk: Some(1),
            index_in_chunk: Some(4464),
            ..Place::default()
        };
        assert_eq!(
            describe_place(&p),
            "vector 70000 (chunk 1, index 4464 in chunk)"
        );
        let p = Place {
            vector: Some(2),
            line: Some(4),
            ..Place::default()
        };
        assert_eq!(describe_place(&p), "vector 2 (line 4)");
    }
}
