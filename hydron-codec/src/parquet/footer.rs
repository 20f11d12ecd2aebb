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
//!   elements that follow them in the schema list ([`SchemaCheck`]);
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
             (ParquetReadOptions::with_max_page_bytes)"
        )));
    }
    let bytes = guarded(None, || source.get_bytes(len - 8 - footer, footer as usize))?;
    check_metadata(&bytes)
        .map_err(|detail| footer_error(format!("the file metadata is malformed: {detail}")))
}

/// One schema element, as far as [`SchemaCheck`] needs it.
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

/// What the footer walk has found so far: the leaf columns of the last
/// schema read (row groups are read with it; a footer may repeat a field,
/// and the crate reads each), and the first problem.
#[derive(Default)]
struct Found {
    leaves: Option<u64>,
    problem: Option<String>,
}

impl Found {
    /// Keeps `problem` if it is the first.
    fn note(&mut self, problem: Result<(), String>) {
        if let (None, Err(problem)) = (&self.problem, problem) {
            self.problem = Some(problem);
        }
    }
}

/// Walks the footer's `FileMetaData` ([`thrift::walk_file_metadata`]) and
/// checks, as it goes, what the crate will reserve from: each schema
/// ([`SchemaCheck`]) and each row group's column list, against the schema
/// before it. Nothing is kept per element (a footer may hold millions).
/// Errors name the footer byte; the walk's own error comes first.
fn check_metadata(bytes: &[u8]) -> Result<(), String> {
    let mut found = Found::default();
    let walked = thrift::walk_file_metadata(bytes, |id, input| match id {
        2 => {
            read_schema(input, &mut found)?;
            Ok(true)
        }
        4 => {
            read_row_groups(input, &mut found)?;
            Ok(true)
        }
        _ => Ok(false),
    });
    // A footer the walk refuses is malformed whatever else it holds.
    walked?;
    found.problem.map_or(Ok(()), Err)
}

/// Walks FileMetaData's `schema` (field 2), checking its elements with a
/// [`SchemaCheck`] as they come.
fn read_schema<R: Read>(input: &mut Counting<'_, R>, found: &mut Found) -> Result<(), String> {
    let mut check = None;
    thrift::walk_list_of(input, &thrift::SCHEMA_ELEMENT, 1, |input, depth, count| {
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
        let check = check.get_or_insert_with(|| SchemaCheck::new(count));
        if found.problem.is_none() {
            found.note(check.element(&element));
        }
        Ok(())
    })?;
    found.leaves = Some(check.map_or(0, |check| check.leaves));
    Ok(())
}

/// Walks FileMetaData's `row_groups` (field 4), checking that each lists
/// one column chunk per leaf of the schema before it (the crate reserves
/// that many for every row group before it reads the list). Without a
/// schema before them the crate refuses row groups before it reserves
/// anything for them.
fn read_row_groups<R: Read>(input: &mut Counting<'_, R>, found: &mut Found) -> Result<(), String> {
    let mut g = 0u64;
    thrift::walk_list_of(input, &thrift::ROW_GROUP, 1, |input, depth, _| {
        let start = input.read;
        let mut columns = None;
        thrift::walk_struct_with(input, &thrift::ROW_GROUP, depth, |id, input| {
            if id != 1 {
                return Ok(false);
            }
            let at = input.read;
            let mut count = 0u64;
            thrift::walk_list_of(
                input,
                &thrift::COLUMN_CHUNK,
                depth + 1,
                |input, depth, _| {
                    count += 1;
                    thrift::walk_struct(input, &thrift::COLUMN_CHUNK, depth)
                },
            )?;
            columns = Some((count, at));
            Ok(true)
        })?;
        if let Some(leaves) = found.leaves {
            found.note(match columns {
                None => Err(format!(
                    "row group {g} has no column list (at byte {start} of the footer)"
                )),
                Some((count, at)) if count != leaves => Err(format!(
                    "row group {g} lists {count} column chunks, but the schema has {leaves} \
                     leaf columns (at byte {at} of the footer)"
                )),
                Some(_) => Ok(()),
            });
        }
        g += 1;
        Ok(())
    })
}

/// An open group of the schema tree: the children it still expects, and
/// the cost of the column path down to it.
struct Open {
    left: u64,
    path_bytes: u64,
}

/// Checks a schema list element by element as the crate's
/// `parquet_schema_from_array` will build it (element 0 the root, then the
/// tree depth first, each group followed by its `num_children` children):
/// no count below zero, the children that the open groups claim at most
/// the elements that follow (the crate reserves a group's children before
/// it reads them), no element outside the root's tree, at most
/// [`MAX_SCHEMA_LEVELS`] levels, and column paths of at most
/// [`MAX_COLUMN_PATH_BYTES`]. It holds the open groups alone (at most
/// [`MAX_SCHEMA_LEVELS`]).
struct SchemaCheck {
    /// The elements the list holds.
    total: u64,
    /// The elements checked.
    seen: u64,
    open: Vec<Open>,
    /// The children the open groups claim that have not been seen yet.
    claimed: u64,
    leaves: u64,
    path_total: u64,
}

impl SchemaCheck {
    fn new(total: u64) -> SchemaCheck {
        SchemaCheck {
            total,
            seen: 0,
            open: Vec::new(),
            claimed: 0,
            leaves: 0,
            path_total: 0,
        }
    }

    /// Checks the next element.
    fn element(&mut self, element: &Element) -> Result<(), String> {
        let i = self.seen;
        self.seen += 1;
        let parent_path = match self.open.last_mut() {
            Some(parent) => {
                parent.left -= 1;
                self.claimed -= 1;
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
        if self.open.len() + 1 > MAX_SCHEMA_LEVELS {
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
                let follow = self.total - i - 1;
                if self.claimed + n > follow {
                    let free = follow - self.claimed;
                    return Err(format!(
                        "schema element {i} claims {n} children, more than the {free} schema \
                         elements left for them (at byte {at} of the footer)"
                    ));
                }
                self.claimed += n;
                self.open.push(Open {
                    left: n,
                    path_bytes,
                });
            }
            None if i > 0 && element.has_type => {
                self.leaves += 1;
                self.path_total = self.path_total.saturating_add(path_bytes);
                if self.path_total > MAX_COLUMN_PATH_BYTES {
                    return Err(format!(
                        "the schema's column paths (every leaf's path of names) take more \
                         than {MAX_COLUMN_PATH_BYTES} bytes by leaf column {} \
                         (element {i}, at byte {} of the footer)",
                        self.leaves - 1,
                        element.start
                    ));
                }
            }
            None => {}
        }
        while self.open.last().is_some_and(|group| group.left == 0) {
            self.open.pop();
        }
        Ok(())
    }
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
