//! A walker for the Thrift compact protocol that reads a footer
//! (`FileMetaData`) or a page header (`PageHeader`) the way the parquet
//! crate will, before the crate does, so that hostile bytes cannot keep the
//! crate busy.
//!
//! The danger: the crate skips a field it does not know element by
//! element, and a `bool` element of a list, set or map costs it no byte
//! (`skip_till_depth` in parquet 59's `parquet_thrift.rs`; the protocol
//! gives each one a byte), so a header of a few bytes claiming 2^31
//! booleans costs 2^31 steps, and a 2 KiB footer with a few hundred of
//! them keeps a reader busy for hours. This walker skips at one byte per
//! element, as the protocol has it: a container claiming more elements
//! than the bytes that follow ends at the end of the input.
//!
//! That alone is not enough, because the crate reads a field it knows by
//! the type `parquet.thrift` gives it, whatever type the field's header
//! claims: a footer whose header says "binary" where the crate reads a
//! struct makes the two walks part, and a bomb could hide in the bytes
//! this walker took for a string. So the walker knows the same fields
//! ([`FILE_META_DATA`], [`PAGE_HEADER`] and the structs inside them,
//! mirroring parquet 59's readers and `parquet.thrift`), and refuses a
//! known field whose header has another type (which no writer produces).
//! Known fields are walked as the format defines them; unknown ones are
//! skipped by their header, as the crate skips them. Every byte is then
//! read the same way by both walks.
//!
//! One more limit: the crate reserves memory for a list of structs from the
//! count its header claims, before reading an element (`count x
//! size_of::<SchemaElement>()`, 96 bytes each: a 60 MB footer of empty
//! structs made it reserve 5.8 GB, and on a machine with less memory that
//! is an abort). So a container may hold at most
//! [`MAX_CONTAINER_ELEMENTS`], the limit pyarrow (Arrow C++'s
//! `thrift_container_size_limit`) applies by default: no file pyarrow
//! reads is refused for it.

use std::io::Read;

/// The most elements a list, set or map in a footer or page header may
/// claim: Arrow C++'s default `thrift_container_size_limit` (pyarrow
/// refuses a footer with a list of 1,000,001 elements: "Exceeded size
/// limit").
pub(super) const MAX_CONTAINER_ELEMENTS: u64 = 1_000_000;

/// Nesting that a page header or a footer needs at most (statistics
/// inside column metadata inside a row group inside the file metadata,
/// ...); deeper is malformed.
const MAX_DEPTH: u32 = 16;

/// The type of a value as `parquet.thrift` defines it (and the parquet
/// crate reads it). Enums are `i32`; strings are binary.
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape {
    Bool,
    Byte,
    I16,
    I32,
    I64,
    Double,
    Binary,
    List(&'static Shape),
    Struct(&'static StructShape),
}

/// A struct (or union) and its fields by id.
#[derive(Debug)]
pub(super) struct StructShape {
    pub(super) name: &'static str,
    pub(super) fields: &'static [(i16, Shape)],
}

impl Shape {
    /// Whether a value of compact type `kind` is of this shape.
    fn admits(self, kind: u8) -> bool {
        match self {
            Shape::Bool => kind == 1 || kind == 2,
            Shape::Byte => kind == 3,
            Shape::I16 => kind == 4,
            Shape::I32 => kind == 5,
            Shape::I64 => kind == 6,
            Shape::Double => kind == 7,
            Shape::Binary => kind == 8,
            // A set is encoded as a list, and the crate reads both alike.
            Shape::List(_) => kind == 9 || kind == 10,
            Shape::Struct(_) => kind == 12,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Shape::Bool => "bool",
            Shape::Byte => "byte",
            Shape::I16 => "i16",
            Shape::I32 => "i32",
            Shape::I64 => "i64",
            Shape::Double => "double",
            Shape::Binary => "binary",
            Shape::List(_) => "list",
            Shape::Struct(s) => s.name,
        }
    }
}

/// The name of a compact-protocol type code, for error messages.
fn kind_name(kind: u8) -> &'static str {
    match kind {
        1 | 2 => "bool",
        3 => "byte",
        4 => "i16",
        5 => "i32",
        6 => "i64",
        7 => "double",
        8 => "binary",
        9 => "list",
        10 => "set",
        11 => "map",
        12 => "struct",
        _ => "an unknown type",
    }
}

const fn shape(name: &'static str, fields: &'static [(i16, Shape)]) -> StructShape {
    StructShape { name, fields }
}

// The structs of parquet.thrift that parquet 59 reads in a footer or a
// page header (file/metadata/thrift/mod.rs, basic.rs, encryption.rs,
// column_crypto_metadata.rs, file/metadata/mod.rs).
use Shape::{Binary, Bool, Byte, Double, List, Struct, I16, I32, I64};

static EMPTY: StructShape = shape("an empty struct", &[]);
static KEY_VALUE: StructShape = shape("KeyValue", &[(1, Binary), (2, Binary)]);
static TIME_UNIT: StructShape = shape(
    "TimeUnit",
    &[
        (1, Struct(&EMPTY)),
        (2, Struct(&EMPTY)),
        (3, Struct(&EMPTY)),
    ],
);
static DECIMAL_TYPE: StructShape = shape("DecimalType", &[(1, I32), (2, I32)]);
static TIMESTAMP_TYPE: StructShape = shape("TimestampType", &[(1, Bool), (2, Struct(&TIME_UNIT))]);
static INT_TYPE: StructShape = shape("IntType", &[(1, Byte), (2, Bool)]);
static VARIANT_TYPE: StructShape = shape("VariantType", &[(1, Byte)]);
static GEOMETRY_TYPE: StructShape = shape("GeometryType", &[(1, Binary)]);
static GEOGRAPHY_TYPE: StructShape = shape("GeographyType", &[(1, Binary), (2, I32)]);
static LOGICAL_TYPE: StructShape = shape(
    "LogicalType",
    &[
        (1, Struct(&EMPTY)),
        (2, Struct(&EMPTY)),
        (3, Struct(&EMPTY)),
        (4, Struct(&EMPTY)),
        (5, Struct(&DECIMAL_TYPE)),
        (6, Struct(&EMPTY)),
        (7, Struct(&TIMESTAMP_TYPE)),
        (8, Struct(&TIMESTAMP_TYPE)),
        (10, Struct(&INT_TYPE)),
        (11, Struct(&EMPTY)),
        (12, Struct(&EMPTY)),
        (13, Struct(&EMPTY)),
        (14, Struct(&EMPTY)),
        (15, Struct(&EMPTY)),
        (16, Struct(&VARIANT_TYPE)),
        (17, Struct(&GEOMETRY_TYPE)),
        (18, Struct(&GEOGRAPHY_TYPE)),
    ],
);
pub(super) static SCHEMA_ELEMENT: StructShape = shape(
    "SchemaElement",
    &[
        (1, I32),
        (2, I32),
        (3, I32),
        (4, Binary),
        (5, I32),
        (6, I32),
        (7, I32),
        (8, I32),
        (9, I32),
        (10, Struct(&LOGICAL_TYPE)),
    ],
);
static STATISTICS: StructShape = shape(
    "Statistics",
    &[
        (1, Binary),
        (2, Binary),
        (3, I64),
        (4, I64),
        (5, Binary),
        (6, Binary),
        (7, Bool),
        (8, Bool),
    ],
);
static PAGE_ENCODING_STATS: StructShape =
    shape("PageEncodingStats", &[(1, I32), (2, I32), (3, I32)]);
static SIZE_STATISTICS: StructShape = shape(
    "SizeStatistics",
    &[(1, I64), (2, List(&I64)), (3, List(&I64))],
);
static BOUNDING_BOX: StructShape = shape(
    "BoundingBox",
    &[
        (1, Double),
        (2, Double),
        (3, Double),
        (4, Double),
        (5, Double),
        (6, Double),
        (7, Double),
        (8, Double),
    ],
);
static GEOSPATIAL_STATISTICS: StructShape = shape(
    "GeospatialStatistics",
    &[(1, Struct(&BOUNDING_BOX)), (2, List(&I32))],
);
static COLUMN_META_DATA: StructShape = shape(
    "ColumnMetaData",
    &[
        (1, I32),
        (2, List(&I32)),
        (3, List(&Binary)),
        (4, I32),
        (5, I64),
        (6, I64),
        (7, I64),
        (8, List(&Struct(&KEY_VALUE))),
        (9, I64),
        (10, I64),
        (11, I64),
        (12, Struct(&STATISTICS)),
        (13, List(&Struct(&PAGE_ENCODING_STATS))),
        (14, I64),
        (15, I32),
        (16, Struct(&SIZE_STATISTICS)),
        (17, Struct(&GEOSPATIAL_STATISTICS)),
    ],
);
static ENCRYPTION_WITH_COLUMN_KEY: StructShape = shape(
    "EncryptionWithColumnKey",
    &[(1, List(&Binary)), (2, Binary)],
);
static COLUMN_CRYPTO_META_DATA: StructShape = shape(
    "ColumnCryptoMetaData",
    &[
        (1, Struct(&EMPTY)),
        (2, Struct(&ENCRYPTION_WITH_COLUMN_KEY)),
    ],
);
pub(super) static COLUMN_CHUNK: StructShape = shape(
    "ColumnChunk",
    &[
        (1, Binary),
        (2, I64),
        (3, Struct(&COLUMN_META_DATA)),
        (4, I64),
        (5, I32),
        (6, I64),
        (7, I32),
        (8, Struct(&COLUMN_CRYPTO_META_DATA)),
        (9, Binary),
    ],
);
static SORTING_COLUMN: StructShape = shape("SortingColumn", &[(1, I32), (2, Bool), (3, Bool)]);
pub(super) static ROW_GROUP: StructShape = shape(
    "RowGroup",
    &[
        (1, List(&Struct(&COLUMN_CHUNK))),
        (2, I64),
        (3, I64),
        (4, List(&Struct(&SORTING_COLUMN))),
        (5, I64),
        (6, I64),
        (7, I16),
    ],
);
static COLUMN_ORDER: StructShape = shape("ColumnOrder", &[(1, Struct(&EMPTY))]);
static AES_GCM: StructShape = shape("AesGcmV1", &[(1, Binary), (2, Binary), (3, Bool)]);
static ENCRYPTION_ALGORITHM: StructShape = shape(
    "EncryptionAlgorithm",
    &[(1, Struct(&AES_GCM)), (2, Struct(&AES_GCM))],
);
/// A footer.
pub(super) static FILE_META_DATA: StructShape = shape(
    "FileMetaData",
    &[
        (1, I32),
        (2, List(&Struct(&SCHEMA_ELEMENT))),
        (3, I64),
        (4, List(&Struct(&ROW_GROUP))),
        (5, List(&Struct(&KEY_VALUE))),
        (6, Binary),
        (7, List(&Struct(&COLUMN_ORDER))),
        (8, Struct(&ENCRYPTION_ALGORITHM)),
        (9, Binary),
    ],
);
/// A v1 data page's header (field 5 of [`PAGE_HEADER`]).
pub(super) static DATA_PAGE_HEADER: StructShape = shape(
    "DataPageHeader",
    &[
        (1, I32),
        (2, I32),
        (3, I32),
        (4, I32),
        (5, Struct(&STATISTICS)),
    ],
);
static DICTIONARY_PAGE_HEADER: StructShape =
    shape("DictionaryPageHeader", &[(1, I32), (2, I32), (3, Bool)]);
/// A v2 data page's header (field 8 of [`PAGE_HEADER`]).
pub(super) static DATA_PAGE_HEADER_V2: StructShape = shape(
    "DataPageHeaderV2",
    &[
        (1, I32),
        (2, I32),
        (3, I32),
        (4, I32),
        (5, I32),
        (6, I32),
        (7, Bool),
        (8, Struct(&STATISTICS)),
    ],
);
/// A page header.
pub(super) static PAGE_HEADER: StructShape = shape(
    "PageHeader",
    &[
        (1, I32),
        (2, I32),
        (3, I32),
        (4, I32),
        (5, Struct(&DATA_PAGE_HEADER)),
        (6, Struct(&EMPTY)),
        (7, Struct(&DICTIONARY_PAGE_HEADER)),
        (8, Struct(&DATA_PAGE_HEADER_V2)),
    ],
);

/// Reads the next field header of a struct: `None` at its end (STOP),
/// else the field's id and compact type. `last_id` is the previous
/// field's id (ids are usually stored as a delta from it).
fn field_header(
    input: &mut Counting<'_, impl Read>,
    last_id: &mut i16,
) -> Result<Option<(i16, u8)>, String> {
    let header = input.byte()?;
    let kind = header & 0x0f;
    if kind == 0 {
        return Ok(None);
    }
    let id = match header >> 4 {
        // The crate reads a long-form id as a zigzag varint cast to i16.
        0 => zigzag(input.varint()?) as i16,
        delta => last_id
            .checked_add(i16::from(delta))
            .ok_or_else(|| format!("a field id overflows after field {last_id}"))?,
    };
    *last_id = id;
    Ok(Some((id, kind)))
}

/// The shape `strukt` gives field `id`, if it knows the field; an error if
/// it does and the field's header has another type.
fn known_field(strukt: &StructShape, id: i16, kind: u8) -> Result<Option<Shape>, String> {
    match strukt.fields.iter().find(|(known, _)| *known == id) {
        None => Ok(None),
        Some(&(_, shape)) if shape.admits(kind) => Ok(Some(shape)),
        Some(&(_, shape)) => Err(format!(
            "field {id} of {} is {}, not the {} the format defines",
            strukt.name,
            kind_name(kind),
            shape.name()
        )),
    }
}

/// Walks a field's value: by its shape when the struct knows the field,
/// else skipped by its header's type `kind` (as the crate skips it).
fn field_value(
    input: &mut Counting<'_, impl Read>,
    known: Option<Shape>,
    kind: u8,
    depth: u32,
) -> Result<(), String> {
    match known {
        Some(shape) => walk(input, shape, depth),
        None => skip(input, kind, depth),
    }
}

/// Walks a struct's fields, after its opening (up to and with its STOP).
pub(super) fn walk_struct(
    input: &mut Counting<'_, impl Read>,
    strukt: &StructShape,
    depth: u32,
) -> Result<(), String> {
    walk_struct_with(input, strukt, depth, |_, _| Ok(false))
}

/// [`walk_struct`], offering each field's value to `read_field` first
/// (with its id, once its header has been checked against `strukt`):
/// `Ok(true)` when it read the value, `Ok(false)` to have it walked.
pub(super) fn walk_struct_with<'a, R: Read>(
    input: &mut Counting<'a, R>,
    strukt: &StructShape,
    depth: u32,
    mut read_field: impl FnMut(i16, &mut Counting<'a, R>) -> Result<bool, String>,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("nested too deeply".to_string());
    }
    let mut last_id = 0;
    while let Some((id, kind)) = field_header(input, &mut last_id)? {
        let known = known_field(strukt, id, kind)?;
        if !read_field(id, input)? {
            field_value(input, known, kind, depth + 1)?;
        }
    }
    Ok(())
}

/// Walks one value of a known shape (a field's: a `bool` field's value is
/// in its header).
fn walk(input: &mut Counting<'_, impl Read>, shape: Shape, depth: u32) -> Result<(), String> {
    match shape {
        Shape::Bool => Ok(()),
        Shape::Byte => input.byte().map(drop),
        Shape::I16 | Shape::I32 | Shape::I64 => input.varint().map(drop),
        Shape::Double => input.skip_bytes(8),
        Shape::Binary => {
            let len = input.varint()?;
            input.skip_bytes(len)
        }
        Shape::List(element) => {
            let (count, kind) = list_header(input)?;
            if count > 0 && !element.admits(kind) {
                return Err(format!(
                    "a list of {} where the format has a list of {}",
                    kind_name(kind),
                    element.name()
                ));
            }
            for _ in 0..count {
                match element {
                    // A bool element takes a byte (unlike a bool field).
                    Shape::Bool => input.byte().map(drop)?,
                    _ => walk(input, *element, depth + 1)?,
                }
            }
            Ok(())
        }
        Shape::Struct(strukt) => walk_struct(input, strukt, depth + 1),
    }
}

/// A list or set header: the element count (at most
/// [`MAX_CONTAINER_ELEMENTS`]) and the elements' type.
fn list_header(input: &mut Counting<'_, impl Read>) -> Result<(u64, u8), String> {
    let header = input.byte()?;
    let count = match header >> 4 {
        15 => container_size(input.varint()?)?,
        n => u64::from(n),
    };
    Ok((count, header & 0x0f))
}

/// `count`, if a container may claim that many elements.
fn container_size(count: u64) -> Result<u64, String> {
    if count > MAX_CONTAINER_ELEMENTS {
        return Err(format!(
            "a container claims {count} elements, more than the \
             {MAX_CONTAINER_ELEMENTS} a footer or page header may hold"
        ));
    }
    Ok(count)
}

/// Skips one value of compact type `kind` that no table describes.
fn skip(input: &mut Counting<'_, impl Read>, kind: u8, depth: u32) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("nested too deeply".to_string());
    }
    match kind {
        1 | 2 => {}
        3 => {
            input.byte()?;
        }
        4..=6 => {
            input.varint()?;
        }
        7 => input.skip_bytes(8)?,
        8 => {
            let len = input.varint()?;
            input.skip_bytes(len)?;
        }
        9 | 10 => {
            let (count, element) = list_header(input)?;
            for _ in 0..count {
                skip_element(input, element, depth + 1)?;
            }
        }
        11 => {
            let count = container_size(input.varint()?)?;
            if count > 0 {
                let types = input.byte()?;
                for _ in 0..count {
                    skip_element(input, types >> 4, depth + 1)?;
                    skip_element(input, types & 0x0f, depth + 1)?;
                }
            }
        }
        // A struct no table describes: every field is unknown, so skipped.
        12 => walk_struct(input, &EMPTY, depth)?,
        other => return Err(format!("unknown Thrift type {other}")),
    }
    Ok(())
}

/// Skips one element of a list, set or map of compact type `kind`. Every
/// element takes at least one byte (a bool element is a byte, unlike a
/// bool field), so a container cannot claim more elements than the bytes
/// that follow: a claim of billions ends at the end of the input, not
/// after billions of steps.
fn skip_element(input: &mut Counting<'_, impl Read>, kind: u8, depth: u32) -> Result<(), String> {
    if kind == 1 || kind == 2 {
        input.byte().map(drop)
    } else {
        skip(input, kind, depth)
    }
}

/// Walks a footer's `FileMetaData` as the crate will read it: an error for
/// anything malformed, a known field of another type than the format's, a
/// nesting deeper than [`MAX_DEPTH`], or a container claiming more
/// elements than the bytes left can hold or than
/// [`MAX_CONTAINER_ELEMENTS`]; the error names the footer byte where the
/// walk found it (the last byte it read). Each field of `FileMetaData` is
/// offered to `read_field` first, as in [`walk_struct_with`].
pub(super) fn walk_file_metadata<'a>(
    bytes: &'a [u8],
    read_field: impl FnMut(i16, &mut Counting<'_, std::io::Cursor<&'a [u8]>>) -> Result<bool, String>,
) -> Result<(), String> {
    let mut cursor = std::io::Cursor::new(bytes);
    let mut input = Counting::new(&mut cursor);
    walk_struct_with(&mut input, &FILE_META_DATA, 0, read_field).map_err(|e| {
        format!(
            "{e} (at byte {} of the footer)",
            input.read.saturating_sub(1)
        )
    })
}

/// Walks a list of `strukt` (a field's value, at `depth`), handing each
/// element to `element` to walk (with the depth of its fields' struct and
/// the list's element count).
pub(super) fn walk_list_of<'a, R: Read>(
    input: &mut Counting<'a, R>,
    strukt: &'static StructShape,
    depth: u32,
    mut element: impl FnMut(&mut Counting<'a, R>, u32, u64) -> Result<(), String>,
) -> Result<(), String> {
    let (count, kind) = list_header(input)?;
    let shape = Shape::Struct(strukt);
    if count > 0 && !shape.admits(kind) {
        return Err(format!(
            "a list of {} where the format has a list of {}",
            kind_name(kind),
            shape.name()
        ));
    }
    for _ in 0..count {
        element(input, depth + 2, count)?;
    }
    Ok(())
}

pub(super) fn zigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// A reader that counts the bytes it has read.
pub(super) struct Counting<'a, R: Read> {
    inner: &'a mut R,
    pub(super) read: u64,
}

impl<'a, R: Read> Counting<'a, R> {
    pub(super) fn new(inner: &'a mut R) -> Self {
        Counting { inner, read: 0 }
    }

    pub(super) fn byte(&mut self) -> Result<u8, String> {
        let mut b = [0];
        self.inner
            .read_exact(&mut b)
            .map_err(|_| "the header ends early".to_string())?;
        self.read += 1;
        Ok(b[0])
    }

    pub(super) fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a varint is longer than 10 bytes".to_string())
    }

    pub(super) fn skip_bytes(&mut self, n: u64) -> Result<(), String> {
        let copied = std::io::copy(&mut self.inner.take(n), &mut std::io::sink())
            .map_err(|e| e.to_string())?;
        self.read += copied;
        if copied < n {
            return Err("the header ends early".to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk alone, every field walked by its shape.
    fn check_file_metadata(bytes: &[u8]) -> Result<(), String> {
        walk_file_metadata(bytes, |_, _| Ok(false))
    }

    #[test]
    fn containers_cannot_claim_more_elements_than_bytes() {
        // FileMetaData with an unknown field 15: a list of 10^6 bools (the
        // most a container may claim), in 6 bytes.
        let list = [0xf9, 0xf1, 0xc0, 0x84, 0x3d, 0x00];
        let start = std::time::Instant::now();
        assert!(check_file_metadata(&list).is_err());
        // A map of 10^6 bool → bool pairs.
        let map = [0xfb, 0xc0, 0x84, 0x3d, 0x11, 0x00];
        assert!(check_file_metadata(&map).is_err());
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        // The same containers, holding what they claim, pass.
        assert_eq!(check_file_metadata(&[0xf9, 0x21, 0x01, 0x02, 0x00]), Ok(()));
        assert_eq!(
            check_file_metadata(&[0xfb, 0x01, 0x11, 0x01, 0x02, 0x00]),
            Ok(())
        );
    }

    /// The hole a walk by header types alone leaves: field 6 of
    /// FileMetaData (`created_by`, a string) declared as a struct whose
    /// unknown field holds a bool bomb. The crate reads the field as a
    /// string (its bytes are the "struct"), so the two walks agree only if
    /// this one knows field 6 is a string: a walk by header types would
    /// descend into the struct; the crate, finding the field is not what
    /// it reads, would read something else entirely. Either way a known
    /// field of the wrong type is refused.
    #[test]
    fn a_known_field_of_another_type_is_refused() {
        // Field 6, type struct (0x6c); inside, field 1 a list of 2^31 bools
        // (a bomb for a walk that trusts headers), then STOP, STOP.
        let bytes = [0x6c, 0x19, 0xf1, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x00];
        let err = check_file_metadata(&bytes).unwrap_err();
        assert_eq!(
            err,
            "field 6 of FileMetaData is struct, not the binary the format defines \
             (at byte 0 of the footer)"
        );
        // Field 2 (schema) as a list of bools instead of SchemaElements.
        let err = check_file_metadata(&[0x29, 0x21, 0x01, 0x01, 0x00]).unwrap_err();
        assert_eq!(
            err,
            "a list of bool where the format has a list of SchemaElement (at byte 1 of the footer)"
        );
        // Deep inside: a row group's column chunk whose metadata's
        // statistics has `min` (field 2) as a list.
        let bytes = [
            0x49, 0x1c, // row_groups: a list of 1 struct
            0x19, 0x1c, // columns: a list of 1 struct
            0x3c, // meta_data
            0xcc, // statistics (field 12)
            0x29, 0x00, // min as an empty list
            0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        let err = check_file_metadata(&bytes).unwrap_err();
        assert_eq!(
            err,
            "field 2 of Statistics is list, not the binary the format defines \
             (at byte 6 of the footer)"
        );
    }

    /// A list header followed by `count` empty structs, as FileMetaData's
    /// schema (field 2), then STOP.
    fn schema_of_empty_structs(claimed: u64, present: usize) -> Vec<u8> {
        let mut bytes = vec![0x29, 0xfc];
        let mut n = claimed;
        while n >= 0x80 {
            bytes.push((n as u8) | 0x80);
            n >>= 7;
        }
        bytes.push(n as u8);
        bytes.extend(std::iter::repeat_n(0x00, present));
        bytes.push(0x00);
        bytes
    }

    #[test]
    fn containers_hold_at_most_the_limit_pyarrow_applies() {
        let limit = MAX_CONTAINER_ELEMENTS as usize;
        assert_eq!(
            check_file_metadata(&schema_of_empty_structs(limit as u64, limit)),
            Ok(())
        );
        let err =
            check_file_metadata(&schema_of_empty_structs(limit as u64 + 1, limit + 1)).unwrap_err();
        assert_eq!(
            err,
            "a container claims 1000001 elements, more than the 1000000 a footer or \
             page header may hold (at byte 4 of the footer)"
        );
        // Unknown containers too: field 15 as a list, a set and a map.
        for header in [0xf9, 0xfa] {
            let bytes = [header, 0xf1, 0xc1, 0x84, 0x3d, 0x00];
            assert!(check_file_metadata(&bytes).unwrap_err().contains("1000001"));
        }
        let map = [0xfb, 0xc1, 0x84, 0x3d, 0x11, 0x00];
        assert!(check_file_metadata(&map).unwrap_err().contains("1000001"));
    }

    #[test]
    fn known_fields_of_their_own_type_and_unknown_fields_pass() {
        let bytes = [
            0x15, 0x04, // version: i32 2
            0x19, 0x1c, // schema: a list of 1 SchemaElement
            0x48, 0x01, b'v', // name (field 4): "v"
            0x6c, 0x5c, 0x15, 0x02, 0x15, 0x04, 0x00, 0x00, // logical_type: Decimal(1, 2)
            0x00, // end of the SchemaElement
            0x16, 0x0a, // num_rows: i64 5
            0x19, 0x00, // row_groups: an empty list (element type 0, as some writers write)
            0x0b, 0x28, 0x00, // field 20 (long form): an empty map
            0x00,
        ];
        assert_eq!(check_file_metadata(&bytes), Ok(()));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut bytes = vec![0x1c; 10_000];
        bytes.push(0);
        assert!(check_file_metadata(&bytes).is_err());
        let mut unknown = vec![0xfc; 1];
        unknown.extend(vec![0x1c; 10_000]);
        assert!(check_file_metadata(&unknown).is_err());
    }
}
