//! [`CliError`]: one error line and one exit code per class of failure.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use hydron_codec::file::Section;
use hydron_codec::CodecError;
use hydron_core::Gf8Error;
use parquet::errors::ParquetError;
use serde::Serialize;

/// The class of a failure; each has its own exit code (documented in
/// `hydron --help` and `hydron-cli/README.md`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Class {
    /// The data is readable but wrong: a vector breaks the `Gf8` invariant
    /// (NaN, infinite, not unit), an E8 code is out of range, or the data
    /// does not fit the output format. `validate` found a problem.
    Invalid,
    /// Bad command line. clap reports most of these itself, with this
    /// code; hydron adds options that do not apply to the output form,
    /// and an output that is the input ([`SameFile`]).
    Usage,
    /// The operating system said no: missing file, permission denied, disk
    /// full, output directory missing.
    Io,
    /// The file is not in a form hydron reads: wrong magic bytes, another
    /// file type, an unsupported version, another fory type.
    Format,
    /// The file is damaged: truncated, a checksum mismatch, broken framing,
    /// malformed JSON.
    Corrupt,
    /// An input read whole (a plain JSON array, a fory message) is larger
    /// than `--max-input-bytes`, or memory for it could not be had.
    TooLarge,
    /// The reader of the output (a pipe, `| head`) went away; nothing is
    /// printed, as for other tools stopped by SIGPIPE (128 + 13).
    BrokenPipe,
    /// Stopped by Ctrl-C (SIGINT) or SIGTERM.
    Interrupted,
    /// A bug in hydron (a panic was caught).
    Internal,
}

impl Class {
    /// The process exit code of this class.
    #[inline]
    #[must_use]
    pub const fn code(self) -> u8 {
        match self {
            Class::Invalid => 1,
            Class::Usage => 2,
            Class::Io => 3,
            Class::Format => 4,
            Class::Corrupt => 5,
            Class::TooLarge => 6,
            Class::Internal => 70,
            Class::Interrupted => 130,
            Class::BrokenPipe => 141,
        }
    }

    /// A short name, used in `--json` output.
    #[inline]
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Class::Invalid => "invalid",
            Class::Usage => "usage",
            Class::Io => "io",
            Class::Format => "format",
            Class::Corrupt => "corrupt",
            Class::TooLarge => "too-large",
            Class::BrokenPipe => "broken-pipe",
            Class::Internal => "internal",
            Class::Interrupted => "interrupted",
        }
    }

    /// The class of an I/O error: a broken pipe has its own.
    #[must_use]
    pub fn of_io(error: &io::Error) -> Class {
        if error.kind() == io::ErrorKind::BrokenPipe {
            Class::BrokenPipe
        } else {
            Class::Io
        }
    }

    /// The class of a codec error.
    #[must_use]
    pub fn of(error: &CodecError) -> Class {
        match error {
            CodecError::InFile { error, .. } | CodecError::InDatasetFile { error, .. } => {
                Class::of(error)
            }
            CodecError::InvalidVector { .. }
            | CodecError::InvalidVectorOnLine { .. }
            | CodecError::TooLarge { .. }
            | CodecError::NullValue { .. }
            | CodecError::WrongRowLength { .. } => Class::Invalid,
            CodecError::Io(e) if e.kind() == io::ErrorKind::OutOfMemory => Class::TooLarge,
            CodecError::Io(e) => Class::of_io(e),
            CodecError::ReadLimit { .. } => Class::TooLarge,
            // Reading or writing the file failed under the parquet crate.
            CodecError::Parquet { error, .. } if io_error_in(error).is_some() => {
                io_error_in(error).map_or(Class::Io, Class::of_io)
            }
            CodecError::UnknownFormat { .. }
            | CodecError::UnsupportedVersion { .. }
            | CodecError::FormatDisabled { .. }
            | CodecError::WrongHeader { .. }
            | CodecError::WrongTypeId { .. }
            | CodecError::WrongColumnType { .. }
            | CodecError::MissingColumn { .. }
            | CodecError::AmbiguousColumn { .. }
            | CodecError::EmptyDataset { .. }
            | CodecError::DatasetColumnMismatch { .. }
            | CodecError::UnsupportedCompression { .. } => Class::Format,
            // Truncated, Corrupt, UnexpectedEnd, TrailingBytes, BadLength,
            // BadVarint, Json, LineTooLong, Fory, BadOffsets, Arrow,
            // Parquet, ChecksumMismatch, PageTooLarge, and any variant
            // added later.
            _ => Class::Corrupt,
        }
    }
}

/// The I/O error inside a parquet crate error, if it is one (a failed
/// read or write: disk full, a closed pipe), rather than malformed data.
fn io_error_in(error: &ParquetError) -> Option<&io::Error> {
    match error {
        ParquetError::External(e) => e.downcast_ref::<io::Error>(),
        _ => None,
    }
}

/// Where in the data a problem is, as far as it is known.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize)]
pub struct Place {
    /// Index of the vector in the whole file (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<u64>,
    /// Index of the container chunk (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk: Option<u64>,
    /// Index of the vector inside its chunk (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_in_chunk: Option<u64>,
    /// 1-based line of a text file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column of a text file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// Index of the coordinate (0..8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinate: Option<usize>,
    /// Byte offset in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// The header or the trailer of a container (a chunk is in `chunk`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<&'static str>,
    /// Row of a Parquet file (0-based; a row is a vector).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
    /// Row group of a Parquet file (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_group: Option<u64>,
}

impl Place {
    /// The place a codec error names.
    #[must_use]
    pub fn of(error: &CodecError) -> Place {
        let mut p = Place::default();
        match error {
            CodecError::InFile { error, .. } => return Place::of(error),
            // The vector is the data set's row; the row stays the file's.
            CodecError::InDatasetFile { error, row, .. } => {
                let mut p = Place::of(error);
                if row.is_some() {
                    p.vector = *row;
                }
                return p;
            }
            CodecError::InvalidVector { index, error } => {
                p.vector = Some(*index);
                p.coordinate = coordinate_of(error);
            }
            CodecError::InvalidVectorOnLine { line, index, error } => {
                p.vector = Some(*index);
                p.line = Some(*line);
                p.coordinate = coordinate_of(error);
            }
            CodecError::Json { line, column, .. } => {
                p.line = Some(*line);
                p.column = Some(*column);
            }
            CodecError::LineTooLong { line, .. } => p.line = Some(*line),
            CodecError::NullValue { row, coordinate } => {
                p.vector = Some(*row);
                p.row = Some(*row);
                p.coordinate = coordinate.map(usize::from);
            }
            CodecError::WrongRowLength { row, .. } | CodecError::BadOffsets { row, .. } => {
                p.vector = Some(*row);
                p.row = Some(*row);
            }
            CodecError::BadCodes { offset, row, .. } => {
                p.offset = *offset;
                p.vector = *row;
                p.row = *row;
            }
            CodecError::Parquet { row_group, .. } => p.row_group = row_group.map(|g| g as u64),
            CodecError::ChecksumMismatch { row_group, .. }
            | CodecError::UnsupportedCompression { row_group, .. } => {
                p.row_group = Some(*row_group as u64);
            }
            CodecError::PageTooLarge {
                row_group, offset, ..
            } => {
                p.row_group = Some(*row_group as u64);
                p.offset = Some(*offset);
            }
            CodecError::Truncated { offset, section } => {
                p.offset = Some(*offset);
                p.set_section(*section);
            }
            CodecError::Corrupt {
                section, offset, ..
            } => {
                p.offset = Some(*offset);
                p.set_section(*section);
            }
            CodecError::UnexpectedEnd { offset, .. }
            | CodecError::TrailingBytes { offset, .. }
            | CodecError::WrongHeader { offset, .. }
            | CodecError::WrongTypeId { offset, .. }
            | CodecError::BadLength { offset, .. }
            | CodecError::BadVarint { offset, .. } => p.offset = Some(*offset),
            _ => {}
        }
        p
    }

    fn set_section(&mut self, section: Section) {
        match section {
            Section::Header => self.section = Some("header"),
            Section::Chunk(k) => self.chunk = Some(k),
            Section::Trailer => self.section = Some("trailer"),
        }
    }
}

/// The coordinate a vector error names, if any.
#[must_use]
pub fn coordinate_of(error: &Gf8Error) -> Option<usize> {
    match *error {
        Gf8Error::NotANumber { coordinate }
        | Gf8Error::Infinite { coordinate, .. }
        | Gf8Error::OutOfLatticeRange { coordinate, .. } => Some(coordinate),
        _ => None,
    }
}

/// A failure of a command: its class (the exit code), a one-line message,
/// and where in the data it is.
#[derive(Debug)]
pub struct CliError {
    /// Decides the exit code.
    pub class: Class,
    /// One line, without the `hydron: error: ` prefix.
    pub message: String,
    /// Where, for `--json` output (boxed: errors travel up by value).
    pub place: Box<Place>,
}

impl CliError {
    /// An error of `class` with `message`.
    #[must_use]
    pub fn new(class: Class, message: impl Into<String>) -> CliError {
        CliError {
            class,
            message: message.into(),
            place: Box::default(),
        }
    }

    /// An I/O error about `path`.
    #[must_use]
    pub fn io(path: &Path, error: &io::Error) -> CliError {
        CliError::new(Class::of_io(error), format!("{}: {error}", path.display()))
    }

    /// A codec error about `path` (codec errors from `FileReader` and
    /// `FileWriter` already name the file).
    #[must_use]
    pub fn codec(path: &Path, error: &CodecError) -> CliError {
        let message = match error {
            CodecError::InFile { .. }
            | CodecError::InDatasetFile { .. }
            | CodecError::DatasetColumnMismatch { .. }
            | CodecError::EmptyDataset { .. } => error.to_string(),
            _ => format!("{}: {error}", path.display()),
        };
        CliError {
            class: Class::of(error),
            message,
            place: Box::new(Place::of(error)),
        }
    }

    /// The exit code.
    #[inline]
    #[must_use]
    pub fn code(&self) -> u8 {
        self.class.code()
    }

    /// The error as a JSON object (`class`, `exit_code`, `message`, and the
    /// place fields that are known).
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "class": self.class.name(),
            "exit_code": self.code(),
            "message": self.message,
        });
        if let (Some(obj), Ok(serde_json::Value::Object(place))) =
            (v.as_object_mut(), serde_json::to_value(*self.place))
        {
            obj.extend(place);
        }
        v
    }
}

/// An output that is one of the command's inputs (the same device and
/// inode, whatever path or link names it): refused before anything is
/// written, as `cp` refuses "are the same file". A usage error (exit 2).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SameFile {
    /// The output as given (`-` for standard output).
    pub output: PathBuf,
    /// The input as given (`-` for standard input).
    pub input: PathBuf,
    /// How the output would have reached the input.
    pub how: SameFileHow,
}

/// How an output that is the input would have been written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SameFileHow {
    /// Replaced: the output path names the input file (itself, through
    /// symbolic links, or as another hard link), which the finished output
    /// would be renamed over.
    Replaced,
    /// Written directly (standard output, `/dev/stdout`, `/dev/fd/N`
    /// opened on the input): the command would read back what it writes.
    Direct,
}

impl fmt::Display for SameFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let output = if self.output.as_os_str() == "-" {
            "standard output".to_owned()
        } else {
            format!("'{}'", self.output.display())
        };
        let input = if self.input.as_os_str() == "-" {
            "standard input".to_owned()
        } else {
            format!("'{}'", self.input.display())
        };
        write!(f, "{output} and {input} are the same file: ")?;
        match self.how {
            SameFileHow::Replaced => f.write_str(
                "the output would replace the input it is read from; write to another path",
            ),
            SameFileHow::Direct => f.write_str(
                "writing to the input while reading it would read back what is written; \
                 write to another file",
            ),
        }
    }
}

impl From<SameFile> for CliError {
    fn from(error: SameFile) -> CliError {
        CliError::new(Class::Usage, error.to_string())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_have_distinct_codes() {
        let all = [
            Class::Invalid,
            Class::Usage,
            Class::Io,
            Class::Format,
            Class::Corrupt,
            Class::TooLarge,
            Class::BrokenPipe,
            Class::Internal,
            Class::Interrupted,
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a.code(), b.code(), "{a:?} and {b:?}");
                assert_ne!(a.name(), b.name());
            }
        }
        assert_eq!(Class::Usage.code(), 2, "clap exits with 2 on usage errors");
    }

    #[test]
    fn codec_errors_are_classified_through_in_file() {
        let inner = CodecError::Corrupt {
            section: Section::Chunk(4),
            offset: 99,
            detail: "checksum mismatch".into(),
        };
        let e = CodecError::InFile {
            path: "x.hyd".into(),
            error: Box::new(inner),
        };
        assert_eq!(Class::of(&e), Class::Corrupt);
        let place = Place::of(&e);
        assert_eq!(place.chunk, Some(4));
        assert_eq!(place.offset, Some(99));
        let cli = CliError::codec(Path::new("x.hyd"), &e);
        assert!(cli.message.starts_with("x.hyd: corrupt chunk 4"));
        assert_eq!(cli.to_json()["chunk"], 4);
        assert_eq!(cli.to_json()["exit_code"], 5);
    }

    #[test]
    fn vector_errors_name_the_coordinate() {
        let e = CodecError::InvalidVector {
            index: 7,
            error: Gf8Error::NotANumber { coordinate: 3 },
        };
        assert_eq!(Class::of(&e), Class::Invalid);
        let place = Place::of(&e);
        assert_eq!((place.vector, place.coordinate), (Some(7), Some(3)));
        let unknown = CodecError::UnknownFormat {
            reason: "it is empty".into(),
        };
        assert_eq!(Class::of(&unknown), Class::Format);
        assert_eq!(Class::of(&CodecError::Io(io::Error::other("x"))), Class::Io);
        let pipe = io::Error::from(io::ErrorKind::BrokenPipe);
        assert_eq!(Class::of(&CodecError::Io(pipe)), Class::BrokenPipe);
    }

    #[test]
    fn parquet_errors_are_classified_and_located() {
        let in_file = |error| CodecError::InFile {
            path: "x.parquet".into(),
            error: Box::new(error),
        };
        let wrong = CodecError::WrongColumnType {
            column: "vector".into(),
            found: "List(Float64)".into(),
            expected: "8 float32",
            columns: String::new(),
        };
        let missing = CodecError::MissingColumn {
            what: "vector",
            reason: "there are no columns".into(),
        };
        for e in [wrong, missing] {
            assert_eq!(Class::of(&in_file(e)), Class::Format);
        }
        let null = CodecError::NullValue {
            row: 12,
            coordinate: Some(3),
        };
        assert_eq!(Class::of(&null), Class::Invalid);
        let p = Place::of(&in_file(null));
        assert_eq!(
            (p.row, p.vector, p.coordinate),
            (Some(12), Some(12), Some(3))
        );
        let short = CodecError::WrongRowLength { row: 9, length: 7 };
        assert_eq!(Class::of(&short), Class::Invalid);
        let json = CliError::codec(Path::new("x.parquet"), &short).to_json();
        assert_eq!(
            (json["row"].as_u64(), json["exit_code"].as_u64()),
            (Some(9), Some(1))
        );
        let offsets = CodecError::BadOffsets {
            row: 4,
            detail: "decreasing".into(),
        };
        assert_eq!(Class::of(&offsets), Class::Corrupt);
        assert_eq!(Place::of(&offsets).row, Some(4));
        let sum = CodecError::ChecksumMismatch {
            row_group: 2,
            expected: 1,
            found: 2,
        };
        assert_eq!(Class::of(&sum), Class::Corrupt);
        assert_eq!(Place::of(&in_file(sum)).row_group, Some(2));
        let page = CodecError::PageTooLarge {
            row_group: 1,
            offset: 77,
            claimed: 1 << 40,
            limit: 1 << 26,
        };
        assert_eq!(Class::of(&page), Class::Corrupt);
        assert_eq!(
            (Place::of(&page).row_group, Place::of(&page).offset),
            (Some(1), Some(77))
        );
        let malformed = CodecError::Parquet {
            row_group: Some(3),
            error: ParquetError::EOF("cut short".into()),
        };
        assert_eq!(Class::of(&malformed), Class::Corrupt);
        let json = CliError::codec(Path::new("x.parquet"), &malformed).to_json();
        assert_eq!(
            (json["row_group"].as_u64(), json["class"].as_str()),
            (Some(3), Some("corrupt"))
        );
        let arrow = CodecError::Arrow(arrow_schema::ArrowError::InvalidArgumentError("x".into()));
        assert_eq!(Class::of(&arrow), Class::Corrupt);
    }

    #[test]
    fn io_errors_inside_the_parquet_crate_stay_io_errors() {
        let wrapped = |kind| CodecError::Parquet {
            row_group: None,
            error: ParquetError::External(Box::new(io::Error::from(kind))),
        };
        assert_eq!(
            Class::of(&wrapped(io::ErrorKind::BrokenPipe)),
            Class::BrokenPipe
        );
        assert_eq!(Class::of(&wrapped(io::ErrorKind::StorageFull)), Class::Io);
        let other = CodecError::Parquet {
            row_group: None,
            error: ParquetError::External("not I/O".into()),
        };
        assert_eq!(Class::of(&other), Class::Corrupt);
    }
}
