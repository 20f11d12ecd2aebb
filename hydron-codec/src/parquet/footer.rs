//! The footer's guards: what is checked of a Parquet file's footer before
//! the parquet crate reads it, and of what the crate read before hydron
//! uses it.
//!
//! The crate reserves memory from counts the footer claims before it reads
//! what they count, so every count it reserves from must be backed by the
//! footer's bytes first:
//!
//! - the footer's length (the crate reads the whole footer into memory):
//!   it must fit in the file and under `max_page_bytes`;
//! - the length of every list, set and map (the crate reserves a list of
//!   structs from its claimed count): [`thrift`] walks the whole footer
//!   first, element by element, so a list cannot claim more elements than
//!   the bytes that follow hold, nor more than
//!   [`thrift::MAX_CONTAINER_ELEMENTS`];
//! - a schema element's `num_children` (the crate's
//!   `schema_from_array_helper` reserves that many children before it
//!   reads one: 2^31 - 1 made it reserve 16 GiB, an abort under a 2 GiB
//!   address-space limit): the children the schema's groups claim must be
//!   elements that follow them in the schema list ([`check_schema`]);
//! - the schema's depth (the crate builds the tree recursively: a schema
//!   nested 200,000 deep overflowed the stack; at most
//!   [`MAX_SCHEMA_LEVELS`], as pyarrow) and its column paths (the
//!   crate copies every leaf's path of names: a 1 MB name above a few
//!   thousand leaves would be copied gigabytes' worth);
//! - a row group's column list (the crate reserves one column chunk per
//!   leaf of the schema for each row group before it reads the list): it
//!   must hold exactly one column chunk per leaf.

use std::io::Read;
use std::sync::Arc;

use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::errors::ParquetError;

use super::reader::guarded;
use super::source::Source;
use super::thrift::{self, zigzag, Counting};
use super::{embedded_schema, looks_like_parquet, CHECKSUM_KEY, MAGIC};
use crate::CodecError;

/// The most levels a schema may have, counting the root (hydron's vector
/// column is 4: the root, `vector`, `list`, `item`): pyarrow's default
/// schema depth limit (Arrow C++ refuses a deeper schema, "Parquet schema
/// too deeply nested"), so no file pyarrow reads is refused for it. The
/// crate builds the schema tree, its column descriptors and the Arrow
/// schema by recursion, a few stack frames per level.
pub(super) const MAX_SCHEMA_LEVELS: usize = 100;

/// The most the crate's column paths may take: for every leaf column, the
/// name of each element on its path (its bytes and a 24-byte `String`),
/// summed over the leaves. A million flat columns with names of 40 bytes
/// take 64 MiB.
pub(super) const MAX_COLUMN_PATH_BYTES: u64 = 64 << 20;

/// The file's footer length must fit in the data and under `limit`, and
/// its bytes must pass [`check_metadata`], before the parquet crate reads
/// (and allocates from) them.
pub(super) fn check_len(source: &Source, limit: u64) -> Result<(), CodecError> {
    use ::parquet::file::reader::{ChunkReader, Length};
    let len = source.len();
    let head = guarded(None, || source.get_bytes(0, len.min(4) as usize))?;
    if !looks_like_parquet(&head) {
        return Err(CodecError::UnknownFormat {
            reason: format!(
                "it is not Parquet: it starts with {:02x?}, not PAR1",
                &head[..]
            ),
        });
    }
    if len < 12 {
        return Err(footer_error(format!(
            "{len} bytes is too short for a Parquet file (at least 12)"
        )));
    }
    let tail = guarded(None, || source.get_bytes(len - 8, 8))?;
    if tail[4..] != MAGIC {
        return Err(footer_error(format!(
            "the file does not end with PAR1 (it ends with {:02x?})",
            &tail[4..]
        )));
    }
    let footer = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if footer + 12 > len {
        return Err(footer_error(format!(
            "the footer claims {footer} bytes, more than the file's {len} bytes hold"
        )));
    }
    if footer > limit {
        return Err(footer_error(format!(
            "the footer claims {footer} bytes, over the limit of {limit} \
             (ParquetReadOptions::max_page_bytes)"
        )));
    }
    let bytes = guarded(None, || source.get_bytes(len - 8 - footer, footer as usize))?;
    check_metadata(&bytes)
        .map_err(|detail| footer_error(format!("the file metadata is malformed: {detail}")))
}

/// One schema element, as far as [`check_schema`] needs it.
#[derive(Clone, Copy, Debug, Default)]
struct Element {
    /// The footer byte where it starts.
    start: u64,
    /// Its name's length in bytes.
    name_len: u64,
    /// Its `num_children`, as the crate reads it (an `i32`), and the footer
    /// byte of the value.
    num_children: Option<(i32, u64)>,
    /// Whether it has a physical type (a leaf, when it has no children).
    has_type: bool,
}

/// A list the crate reserves from, in footer order: a schema, or row
/// groups (each with its column list's length and the footer byte of its
/// header, `None` when it has none, and the footer byte where it starts).
#[derive(Debug)]
enum Part {
    Schema(Vec<Element>),
    RowGroups(Vec<(Option<(u64, u64)>, u64)>),
}

/// Walks the footer's `FileMetaData` ([`thrift::walk_file_metadata`]),
/// keeping what the crate reserves from, then checks that: each schema
/// ([`check_schema`]), and each row group's column list against the
/// schema the crate will read it with (the last one before it; a footer
/// may repeat a field, and the crate reads each). Errors name the footer
/// byte.
fn check_metadata(bytes: &[u8]) -> Result<(), String> {
    let mut parts = Vec::new();
    thrift::walk_file_metadata(bytes, |id, input| match id {
        2 => {
            parts.push(Part::Schema(read_schema(input)?));
            Ok(true)
        }
        4 => {
            parts.push(Part::RowGroups(read_row_groups(input)?));
            Ok(true)
        }
        _ => Ok(false),
    })?;
    let mut leaves = None;
    for part in &parts {
        match part {
            Part::Schema(elements) => leaves = Some(check_schema(elements)?),
            // Without a schema before them the crate refuses row groups
            // before it reserves anything for them.
            Part::RowGroups(groups) => {
                let Some(leaves) = leaves else { continue };
                for (g, &(columns, start)) in groups.iter().enumerate() {
                    match columns {
                        None => {
                            return Err(format!(
                                "row group {g} has no column list (at byte {start} of the footer)"
                            ))
                        }
                        Some((count, at)) if count != leaves => {
                            return Err(format!(
                                "row group {g} lists {count} column chunks, but the schema \
                                 has {leaves} leaf columns (at byte {at} of the footer)"
                            ))
                        }
                        Some(_) => {}
                    }
                }
            }
        }
    }
    Ok(())
}

/// Reads FileMetaData's `schema` (field 2): the list's elements, walked
/// as [`thrift::SCHEMA_ELEMENT`]s, keeping their names' lengths, their
/// children and whether they have a type.
fn read_schema<R: Read>(input: &mut Counting<'_, R>) -> Result<Vec<Element>, String> {
    let mut elements = Vec::new();
    thrift::walk_list_of(input, &thrift::SCHEMA_ELEMENT, 1, |input, depth| {
        let mut element = Element {
            start: input.read,
            ..Element::default()
        };
        thrift::walk_struct_with(input, &thrift::SCHEMA_ELEMENT, depth, |id, input| {
            match id {
                1 => {
                    input.varint()?;
                    element.has_type = true;
                }
                4 => {
                    element.name_len = input.varint()?;
                    input.skip_bytes(element.name_len)?;
                }
                5 => {
                    let at = input.read;
                    // The crate reads an i32 as a zigzag varint cast to i32.
                    element.num_children = Some((zigzag(input.varint()?) as i32, at));
                }
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        elements.push(element);
        Ok(())
    })?;
    Ok(elements)
}

/// Reads FileMetaData's `row_groups` (field 4): for each row group, its
/// column list's length and where it is, walking everything.
#[allow(clippy::type_complexity)]
fn read_row_groups<R: Read>(
    input: &mut Counting<'_, R>,
) -> Result<Vec<(Option<(u64, u64)>, u64)>, String> {
    let mut groups = Vec::new();
    thrift::walk_list_of(input, &thrift::ROW_GROUP, 1, |input, depth| {
        let start = input.read;
        let mut columns = None;
        thrift::walk_struct_with(input, &thrift::ROW_GROUP, depth, |id, input| {
            if id != 1 {
                return Ok(false);
            }
            let at = input.read;
            let mut count = 0;
            thrift::walk_list_of(input, &thrift::COLUMN_CHUNK, depth + 1, |input, depth| {
                count += 1;
                thrift::walk_struct(input, &thrift::COLUMN_CHUNK, depth)
            })?;
            columns = Some((count, at));
            Ok(true)
        })?;
        groups.push((columns, start));
        Ok(())
    })?;
    Ok(groups)
}

/// An open group of the schema tree: the children it still expects, and
/// the cost of the column path down to it.
struct Open {
    left: u64,
    path_bytes: u64,
}

/// Checks a schema list as the crate's `parquet_schema_from_array` will
/// build it (element 0 the root, then the tree depth first, each group
/// followed by its `num_children` children): no count below zero, the
/// children that the open groups claim at most the elements that follow
/// (the crate reserves a group's children before it reads them), no
/// element outside the root's tree, at most [`MAX_SCHEMA_LEVELS`] levels,
/// and column paths of at most [`MAX_COLUMN_PATH_BYTES`]. Returns the
/// number of leaf columns.
fn check_schema(elements: &[Element]) -> Result<u64, String> {
    let total = elements.len() as u64;
    let mut open: Vec<Open> = Vec::new();
    // The children the open groups claim that have not been seen yet.
    let mut claimed = 0u64;
    let mut leaves = 0u64;
    let mut path_total = 0u64;
    for (i, element) in elements.iter().enumerate() {
        let parent_path = match open.last_mut() {
            Some(parent) => {
                parent.left -= 1;
                claimed -= 1;
                parent.path_bytes
            }
            None if i == 0 => 0,
            None => {
                return Err(format!(
                    "schema element {i} is outside the root's tree: the root and its groups \
                     claim {} elements in all (at byte {} of the footer)",
                    i - 1,
                    element.start
                ));
            }
        };
        // The element's level: its ancestors (the open groups) and itself.
        if open.len() + 1 > MAX_SCHEMA_LEVELS {
            return Err(format!(
                "the schema is nested more than {MAX_SCHEMA_LEVELS} levels deep, counting \
                 the root (element {i}, at byte {} of the footer)",
                element.start
            ));
        }
        let path_bytes = if i == 0 {
            0
        } else {
            parent_path + element.name_len + 24
        };
        let children = match element.num_children {
            Some((n, at)) if n < 0 => {
                return Err(format!(
                    "schema element {i} claims {n} children (at byte {at} of the footer)"
                ));
            }
            Some((n, at)) if n > 0 => Some((n as u64, at)),
            _ => None,
        };
        match children {
            Some((n, at)) => {
                let follow = total - i as u64 - 1;
                if claimed + n > follow {
                    let free = follow - claimed;
                    return Err(format!(
                        "schema element {i} claims {n} children, more than the {free} schema \
                         elements left for them (at byte {at} of the footer)"
                    ));
                }
                claimed += n;
                open.push(Open {
                    left: n,
                    path_bytes,
                });
            }
            None if i > 0 && element.has_type => {
                leaves += 1;
                path_total = path_total.saturating_add(path_bytes);
                if path_total > MAX_COLUMN_PATH_BYTES {
                    return Err(format!(
                        "the schema's column paths (every leaf's path of names) take more \
                         than {MAX_COLUMN_PATH_BYTES} bytes by leaf column {} \
                         (element {i}, at byte {} of the footer)",
                        leaves - 1,
                        element.start
                    ));
                }
            }
            None => {}
        }
        while open.last().is_some_and(|group| group.left == 0) {
            open.pop();
        }
    }
    Ok(leaves)
}

/// Reads the footer, and the Arrow schema embedded in it once
/// [`embedded_schema::check`] has found that the parquet crate can decode
/// it without panicking.
pub(super) fn load(source: &Source) -> Result<ArrowReaderMetadata, CodecError> {
    let without_schema = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
    let plain = guarded(None, || ArrowReaderMetadata::load(source, without_schema))?;
    let parquet_meta = Arc::clone(plain.metadata());
    let embedded = parquet_meta
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .filter(|kv| kv.key == embedded_schema::ARROW_SCHEMA_KEY)
        .filter_map(|kv| kv.value.as_deref());
    let mut any = false;
    for value in embedded {
        any = true;
        embedded_schema::check(value).map_err(|e| {
            footer_error(format!(
                "the embedded Arrow schema ({}) is malformed: {e}",
                embedded_schema::ARROW_SCHEMA_KEY
            ))
        })?;
    }
    if !any {
        return Ok(plain);
    }
    guarded(None, || {
        ArrowReaderMetadata::try_new(parquet_meta, ArrowReaderOptions::new())
    })
}

/// The footer's row counts must agree: the file's with the sum of its row
/// groups', and none below zero.
pub(super) fn check_row_counts(metadata: &ArrowReaderMetadata) -> Result<(), CodecError> {
    let meta = metadata.metadata();
    let claimed = meta.file_metadata().num_rows();
    let mut sum = 0i64;
    for (g, group) in meta.row_groups().iter().enumerate() {
        let rows = group.num_rows();
        if rows < 0 {
            return Err(footer_error(format!("row group {g} claims {rows} rows")));
        }
        sum = sum.saturating_add(rows);
    }
    if claimed != sum {
        return Err(footer_error(format!(
            "the footer claims {claimed} rows, its row groups {sum}"
        )));
    }
    Ok(())
}

/// The row group checksums hydron stored in the footer, if any: one per
/// row group, or the footer is malformed.
pub(super) fn read_checksums(
    metadata: &ArrowReaderMetadata,
) -> Result<Option<Vec<u32>>, CodecError> {
    let meta = metadata.metadata();
    let Some(value) = meta
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|kv| kv.key == CHECKSUM_KEY))
        .and_then(|kv| kv.value.as_deref())
    else {
        return Ok(None);
    };
    let sums: Option<Vec<u32>> = if value.is_empty() {
        Some(Vec::new())
    } else {
        value
            .split(',')
            .map(|h| u32::from_str_radix(h, 16).ok())
            .collect()
    };
    match sums {
        Some(sums) if sums.len() == meta.num_row_groups() => Ok(Some(sums)),
        _ => Err(footer_error(format!(
            "{CHECKSUM_KEY} is not one CRC-32 per row group ({} row groups)",
            meta.num_row_groups()
        ))),
    }
}

fn footer_error(detail: String) -> CodecError {
    CodecError::Parquet {
        row_group: None,
        error: ParquetError::General(format!("malformed footer: {detail}")),
    }
}
