//! Parquet footers that lie: claimed lengths, counts and row counts that
//! the bytes do not back, Thrift that would keep the parquet crate busy,
//! and schemas that would make it allocate (or recurse) from a claim. The
//! guards are in `hydron-codec/src/parquet/footer.rs` and `thrift.rs`.
//!
//! The tests measure allocations with a counting allocator, so they run
//! one at a time ([`serial`]).
#![cfg(feature = "parquet")]

// The counting allocator alone: `common/mod.rs` needs the container
// (`fory-messages` or `json`), and this file runs in a Parquet-only build.
#[path = "common/alloc.rs"]
mod alloc;

use std::sync::{Mutex, MutexGuard};

use alloc::peak_of;
use hydron_codec::parquet::{self, ParquetEncoder, ParquetOptions};
use hydron_codec::{CodecError, Policy};
use hydron_core::Gf8;

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

/// `n` unit vectors (deterministic).
fn some_vectors(n: usize) -> Vec<Gf8> {
    (0..n)
        .map(|i| {
            let x = i as f32;
            Gf8::normalize([x.sin(), x.cos(), 1.0, -x, 0.5, x * x, -0.25, 3.0]).unwrap()
        })
        .collect()
}

/// Held by every test: the allocation peaks measured here are the
/// process's.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The start of an error message (some name a column of megabytes).
fn head(text: &str) -> &str {
    &text[..text.len().min(300)]
}

fn encode(v: &[Gf8], options: ParquetOptions) -> Vec<u8> {
    let mut e = ParquetEncoder::new(Vec::new(), options).unwrap();
    e.write(v).unwrap();
    e.finish().unwrap()
}

fn decode(bytes: Vec<u8>) -> Result<Vec<Gf8>, CodecError> {
    parquet::from_bytes(bytes, Policy::Strict)
}

/// Rewrites row counts in the footer. The Thrift compact `FileMetaData`
/// holds the file's count as field 3 and each `RowGroup` its own as field
/// 3, both i64 zigzag varints; the test writes a distinctive count (5), so
/// each is the bytes `0x16 0x0a` (field delta 1, type i64; varint of
/// zigzag(5) = 10). `which` picks the occurrences to replace (0: the file's,
/// 1: the row group's); the footer is rebuilt with the new varints and its
/// length fixed.
fn with_row_counts(bytes: &[u8], which: &[usize], rows: i64) -> Vec<u8> {
    let n = bytes.len();
    let footer_len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let footer_start = n - 8 - footer_len;
    let footer = &bytes[footer_start..n - 8];
    let found: Vec<usize> = (0..footer.len() - 1)
        .filter(|&i| footer[i..i + 2] == [0x16, 0x0a])
        .collect();
    assert_eq!(
        found.len(),
        2,
        "one count for the file, one for the row group"
    );
    let varint = varint(((rows << 1) ^ (rows >> 63)) as u64);
    let mut new_footer = Vec::new();
    let mut from = 0;
    for (k, &at) in found.iter().enumerate() {
        if which.contains(&k) {
            new_footer.extend(&footer[from..=at]);
            new_footer.extend(&varint);
            from = at + 2;
        }
    }
    new_footer.extend(&footer[from..]);
    with_footer(&bytes[..footer_start], &new_footer)
}

/// A Thrift compact-protocol varint.
fn varint(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out
}

/// `head` (the file up to its footer), `footer`, the footer's length and
/// the closing magic.
fn with_footer(head: &[u8], footer: &[u8]) -> Vec<u8> {
    let mut out = head.to_vec();
    out.extend(footer);
    out.extend((footer.len() as u32).to_le_bytes());
    out.extend(b"PAR1");
    out
}

#[test]
fn a_footer_claiming_2_pow_40_rows_is_an_error_without_allocating_for_it() {
    let _serial = serial();
    let bytes = encode(&some_vectors(5), ParquetOptions::new());
    assert_eq!(
        decode(with_row_counts(&bytes, &[0, 1], 5)).unwrap().len(),
        5
    );
    let err = decode(with_row_counts(&bytes, &[0], 1 << 40)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Parquet: malformed footer: the footer claims 1099511627776 rows, its row groups 5"
    );
    // File and row group agree on 2^40: the pages hold 5, and the reader
    // (which sizes nothing from the claim) finds that at the end of them.
    let err = decode(with_row_counts(&bytes, &[0, 1], 1 << 40)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Parquet (row group 0): the row group claims 1099511627776 rows, its pages hold fewer"
    );
    let err = decode(with_row_counts(&bytes, &[0, 1], -1)).unwrap_err();
    assert!(err.to_string().contains("malformed footer"), "{err}");
}

#[test]
fn files_that_are_not_parquet_are_errors() {
    let _serial = serial();
    for bytes in [
        &b""[..],
        b"PAR1",
        b"PAR1PAR1",
        b"\x89HYD\r\n\x1a\n",
        b"PAR1\0\0\0\0PAR1",
    ] {
        assert!(decode(bytes.to_vec()).is_err(), "{bytes:?}");
    }
}

#[test]
fn a_sparse_file_with_a_lying_footer_is_refused_quickly() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse.parquet");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(1 << 40).unwrap();
    drop(f);
    let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    use std::io::{Seek, SeekFrom, Write};
    f.write_all(b"PAR1").unwrap();
    f.seek(SeekFrom::Start((1 << 40) - 8)).unwrap();
    f.write_all(&u32::MAX.to_le_bytes()).unwrap();
    f.write_all(b"PAR1").unwrap();
    drop(f);
    let start = std::time::Instant::now();
    assert!(parquet::load(&path, Policy::Strict).is_err());
    assert!(start.elapsed().as_secs() < 10);
}

/// Found by the `parquet_decode` fuzz target: a footer field holding a
/// list that claims 2^31 bools in a few bytes keeps the parquet crate's
/// Thrift skip busy for minutes (it spends no byte on a bool element).
/// hydron walks the footer first and refuses it at once.
#[test]
fn a_footer_list_claiming_billions_of_bools_is_refused_at_once() {
    let _serial = serial();
    let mut bytes = encode(&some_vectors(10), ParquetOptions::new());
    let n = bytes.len();
    let footer_len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    assert_eq!(bytes[n - 9], 0, "the footer struct ends with STOP");
    // Field 100 (long form: type list, zigzag id), a list of 2^31 bools.
    let bomb = [0x09, 0xc8, 0x01, 0xf1, 0x80, 0x80, 0x80, 0x80, 0x08];
    bytes.splice(n - 9..n - 9, bomb);
    let n = bytes.len();
    bytes[n - 8..n - 4].copy_from_slice(&((footer_len + bomb.len()) as u32).to_le_bytes());
    let start = std::time::Instant::now();
    let err = parquet::from_bytes(bytes, Policy::Strict).unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
    assert!(
        err.to_string().contains("the file metadata is malformed"),
        "{err}"
    );
}

/// The parquet crate reserves memory for a footer list from its claimed
/// count before reading an element (96 bytes per `SchemaElement`): a 60 MB
/// footer of empty structs made it reserve 5.8 GB, an abort on a machine
/// with less. hydron refuses a container of more than 10^6 elements, as
/// pyarrow does by default ("Exceeded size limit").
#[test]
fn a_footer_list_longer_than_pyarrows_limit_is_refused_before_the_crate_reserves_it() {
    let _serial = serial();
    let footer_of = |count: usize| {
        let mut footer = vec![0x15, 0x04]; // field 1, version: i32 2
        footer.extend([0x19, 0xfc]); // field 2, schema: a list of structs, long count
        footer.extend(varint(count as u64));
        footer.extend(std::iter::repeat_n(0x00, count)); // empty SchemaElements
        footer.push(0x00); // STOP
        with_footer(b"PAR1", &footer)
    };
    let err = parquet::from_bytes(footer_of(1_000_001), Policy::Strict).unwrap_err();
    assert!(
        err.to_string().contains(
            "the file metadata is malformed: a container claims 1000001 elements, \
             more than the 1000000 a footer or page header may hold"
        ),
        "{err}"
    );
    // At the limit the walk passes, and the schema check refuses the
    // elements outside the root's tree (the root claims no children).
    let err = parquet::from_bytes(footer_of(1_000_000), Policy::Strict).unwrap_err();
    assert!(
        err.to_string()
            .contains("schema element 1 is outside the root's tree"),
        "{err}"
    );
}

/// The bomb hidden where a walk by header types cannot see it: the
/// footer's field 2 (`schema`, a list of structs) declared as a 28-byte
/// binary. Read by its header, the field is a string and the footer is
/// well formed; the parquet crate reads field 2 as the list it expects
/// whatever the header says, so the string's length byte (0x1c) becomes
/// "a list of one struct", and its 28 bytes four unknown fields, each a
/// list of 2^31 - 1 bools: minutes of the crate's skip. hydron walks the
/// footer as the crate reads it and refuses the field's type at once.
#[test]
fn a_bool_bomb_behind_a_field_of_the_wrong_type_is_refused_at_once() {
    let _serial = serial();
    let mut footer = vec![0x15, 0x04]; // field 1, version: i32 2
    footer.extend([0x18, 0x1c]); // field 2 as binary of 28 bytes
    for field_header in [0xb9, 0x19, 0x19, 0x19] {
        // fields 11, 12, 13, 14: a list of 2^31 - 1 bools
        footer.extend([field_header, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07]);
    }
    footer.push(0x00); // STOP
    let start = std::time::Instant::now();
    let err = parquet::from_bytes(with_footer(b"PAR1", &footer), Policy::Strict).unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
    assert!(
        err.to_string().contains(
            "the file metadata is malformed: field 2 of FileMetaData is binary, \
             not the list the format defines"
        ),
        "{err}"
    );
}

/// The footer of a Parquet file: the bytes before it, and its own.
fn split_footer(bytes: &[u8]) -> (&[u8], &[u8]) {
    let n = bytes.len();
    let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    (&bytes[..n - 8 - len], &bytes[n - 8 - len..n - 8])
}

/// A zigzag varint, as Thrift's compact protocol stores an `i32`.
fn zigzag(n: i32) -> Vec<u8> {
    varint(((n << 1) ^ (n >> 31)) as u32 as u64)
}

/// `bytes` (a file of one `vector` column, written by hydron or pyarrow)
/// with the `vector` group's `num_children` set to `children`, the footer
/// rebuilt and its length fixed. The schema element's name and its
/// children are fields 4 and 5 (`0x18 0x06 "vector" 0x15 <zigzag>`), as
/// both writers put them.
fn with_vector_children(bytes: &[u8], children: i32) -> Vec<u8> {
    let (head, footer) = split_footer(bytes);
    let pattern = b"\x18\x06vector\x15\x02";
    let at: Vec<usize> = (0..footer.len() - pattern.len())
        .filter(|&i| &footer[i..i + pattern.len()] == pattern)
        .collect();
    assert_eq!(at.len(), 1, "one `vector` schema element with 1 child");
    let mut new = footer[..at[0] + pattern.len() - 1].to_vec();
    new.extend(zigzag(children));
    new.extend(&footer[at[0] + pattern.len()..]);
    with_footer(head, &new)
}

/// A Thrift list header for `count` elements of compact type `kind`.
fn list_header(count: usize, kind: u8) -> Vec<u8> {
    if count < 15 {
        vec![((count as u8) << 4) | kind]
    } else {
        let mut header = vec![0xf0 | kind];
        header.extend(varint(count as u64));
        header
    }
}

/// A binary field (delta 1 from the field before it) holding `name`.
fn name_field(name: &[u8]) -> Vec<u8> {
    let mut out = vec![0x18];
    out.extend(varint(name.len() as u64));
    out.extend(name);
    out
}

/// The schema's root `SchemaElement`: a name and `children`.
fn root(children: i32) -> Vec<u8> {
    let mut out = vec![0x48, 0x06]; // field 4, name
    out.extend(b"schema");
    out.push(0x15); // field 5, num_children
    out.extend(zigzag(children));
    out.push(0x00);
    out
}

/// A required group `name` of `children` children.
fn group(name: &[u8], children: i32) -> Vec<u8> {
    let mut out = vec![0x35, 0x00]; // field 3, repetition REQUIRED
    out.extend(name_field(name));
    out.push(0x15); // field 5, num_children
    out.extend(zigzag(children));
    out.push(0x00);
    out
}

/// A required `FLOAT` leaf `name`.
fn leaf(name: &[u8]) -> Vec<u8> {
    let mut out = vec![0x15, 0x08, 0x25, 0x00]; // type FLOAT, repetition REQUIRED
    out.extend(name_field(name));
    out.push(0x00);
    out
}

/// A file of a footer alone: version 2, `elements` as its schema, 0 rows,
/// `row_groups` (each a `RowGroup` struct's bytes).
fn schema_file(elements: &[Vec<u8>], row_groups: &[Vec<u8>]) -> Vec<u8> {
    let mut footer = vec![0x15, 0x04, 0x19]; // version, then field 2: a list
    footer.extend(list_header(elements.len(), 0x0c));
    footer.extend(elements.concat());
    footer.extend([0x16, 0x00, 0x19]); // num_rows 0, then field 4: a list
    footer.extend(list_header(row_groups.len(), 0x0c));
    footer.extend(row_groups.concat());
    footer.push(0x00);
    with_footer(b"PAR1", &footer)
}

/// The regression file: a 4-vector `FixedSizeList<float32, 8>` file
/// written by pyarrow 26.0.1, whose `vector` group (schema element 1)
/// claims 2^31 - 1 children, the footer's length fixed. The parquet crate
/// reserved 2^31 - 1 child pointers (16 GiB) before reading one: `hydron
/// validate` died with SIGABRT under a 2 GiB address-space limit
/// (`hydron-cli/tests/hostile_parquet.rs` runs that), and so did Python.
const NUM_CHILDREN_BOMB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/regressions/parquet_decode-num-children-2-pow-31-minus-1"
);

#[test]
fn a_schema_element_claiming_2_pow_31_children_is_refused_before_the_crate_reserves_them() {
    let _serial = serial();
    let bomb = std::fs::read(NUM_CHILDREN_BOMB).unwrap();
    let (result, peak) = peak_of(|| decode(bomb));
    assert_eq!(
        result.unwrap_err().to_string(),
        "Parquet: malformed footer: the file metadata is malformed: schema element 1 claims \
         2147483647 children, more than the 2 schema elements left for them (at byte 28 of \
         the footer)"
    );
    assert!(peak < 1 << 20, "{peak} bytes allocated at the peak");

    // The same in a file hydron wrote, and the claims that do not fit.
    let v = some_vectors(3);
    let bytes = encode(&v, ParquetOptions::new());
    assert_eq!(decode(with_vector_children(&bytes, 1)).unwrap(), v);
    let (result, peak) = peak_of(|| decode(with_vector_children(&bytes, i32::MAX)));
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("schema element 1 claims 2147483647 children, more than the 2 schema"),
        "{err}"
    );
    assert!(peak < 1 << 20, "{peak} bytes allocated at the peak");
    // Two children fit in the 2 elements after `vector`, but then `list`
    // (element 2) claims one more than is left: the sum counts.
    let err = decode(with_vector_children(&bytes, 2))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("schema element 2 claims 1 children, more than the 0 schema elements left"),
        "{err}"
    );
    let err = decode(with_vector_children(&bytes, -1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("schema element 1 claims -1 children"), "{err}");
}

/// The crate builds the schema tree recursively (and its column
/// descriptors, and the Arrow schema): a schema nested 100,000 deep (3
/// bytes a level) overflowed the stack, which aborts the process. hydron
/// allows 100 levels counting the root, as pyarrow does.
#[test]
fn a_schema_nested_deeper_than_100_levels_is_refused_before_the_crate_recurses() {
    let _serial = serial();
    let chain = |depth: usize| {
        // The root, depth - 1 groups, and a leaf at `depth` below the root.
        let mut elements = vec![root(1)];
        elements.extend((1..depth).map(|_| group(b"g", 1)));
        elements.push(leaf(b"x"));
        schema_file(&elements, &[])
    };
    // 100 levels: the crate builds it all (then hydron finds no vectors).
    let err = decode(chain(99)).unwrap_err().to_string();
    assert!(err.starts_with("no vector column"), "{}", head(&err));
    for depth in [100, 100_000] {
        let err = decode(chain(depth)).unwrap_err().to_string();
        assert!(
            err.contains(
                "the schema is nested more than 100 levels deep, counting the root \
                 (element 100, at byte "
            ),
            "{depth}: {}",
            head(&err)
        );
    }
}

/// The crate copies every leaf's path of names into its column
/// descriptor: a group named by 4 MiB of bytes above 20 leaves would have
/// it copy 80 MiB, from a footer of 4 MiB (and a few thousand leaves,
/// gigabytes).
#[test]
fn column_paths_that_copy_a_long_name_per_leaf_are_refused() {
    let _serial = serial();
    let name = vec![b'n'; 4 << 20];
    let wide = |leaves: usize| {
        let mut elements = vec![root(1), group(&name, leaves as i32)];
        elements.extend((0..leaves).map(|_| leaf(b"x")));
        schema_file(&elements, &[])
    };
    // 15 leaves: 60 MiB of paths, under the limit of 64 MiB.
    let err = decode(wide(15)).unwrap_err().to_string();
    assert!(err.starts_with("no vector column"), "{}", head(&err));
    let bytes = wide(20);
    let (result, peak) = peak_of(|| decode(bytes));
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains(
            "the schema's column paths (every leaf's path of names) take more than 67108864 \
             bytes by leaf column 15 (element 17, at byte "
        ),
        "{}",
        head(&err)
    );
    assert!(peak < 8 << 20, "{peak} bytes allocated at the peak");
}

/// The crate reserves one column chunk per leaf of the schema for every
/// row group before it reads the row group's column list.
#[test]
fn a_row_group_whose_column_list_does_not_match_the_schema_is_refused() {
    let _serial = serial();
    let elements = [root(2), leaf(b"a"), leaf(b"b")];
    // total_byte_size 0 and num_rows 0 (fields 2 and 3).
    let sizes = [0x16, 0x00, 0x16, 0x00, 0x00];
    let mut no_columns = vec![0x19, 0x0c]; // field 1, columns: an empty list
    no_columns.extend(sizes);
    let err = decode(schema_file(&elements, &[no_columns])).unwrap_err();
    assert!(
        err.to_string().contains(
            "row group 0 lists 0 column chunks, but the schema has 2 leaf columns \
             (at byte 36 of the footer)"
        ),
        "{err}"
    );
    // A row group of fields 2 and 3 alone.
    let alone = vec![0x26, 0x00, 0x16, 0x00, 0x00];
    let err = decode(schema_file(&elements, &[alone])).unwrap_err();
    assert!(
        err.to_string()
            .contains("row group 0 has no column list (at byte 35 of the footer)"),
        "{err}"
    );
}

/// The crate reserves the row group list from its claimed count without
/// checking it against the bytes left (about 100 bytes a row group); the
/// footer walk refuses a list whose elements are not there.
#[test]
fn a_row_group_list_claiming_a_million_groups_in_a_few_bytes_is_refused() {
    let _serial = serial();
    let mut footer = vec![0x15, 0x04, 0x19];
    footer.extend(list_header(2, 0x0c));
    footer.extend([root(1), leaf(b"x")].concat());
    footer.extend([0x16, 0x00, 0x19]);
    footer.extend(list_header(1_000_000, 0x0c));
    footer.push(0x00);
    let bytes = with_footer(b"PAR1", &footer);
    let (result, peak) = peak_of(|| decode(bytes));
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("the file metadata is malformed: the header ends early"),
        "{err}"
    );
    assert!(peak < 1 << 20, "{peak} bytes allocated at the peak");
}

/// The footer checks keep nothing per schema element or row group, so a
/// footer that repeats its schema field (the crate reads each) costs them
/// no memory: 50 schemas of 100,000 elements in 5 MB.
#[test]
fn the_footer_checks_hold_no_memory_per_element() {
    let _serial = serial();
    let elements = 100_000usize;
    let mut schema = list_header(elements, 0x0c);
    schema.extend(root(elements as i32 - 1));
    schema.extend(std::iter::repeat_n(0x00, elements - 1)); // empty elements
    let mut footer = vec![0x15, 0x04, 0x19]; // version, then field 2
    footer.extend(&schema);
    for _ in 1..50 {
        footer.extend([0x09, 0x04]); // field 2 again (long form: a list, id 2)
        footer.extend(&schema);
    }
    footer.extend([0x16, 0x00, 0x19, 0x0c, 0x00]); // no rows, no row groups
    let bytes = with_footer(b"PAR1", &footer);
    let (result, peak) = peak_of(|| decode(bytes));
    // The checks pass; the crate refuses the first schema's nameless
    // elements, after reserving that list (96 bytes an element).
    let err = result.unwrap_err().to_string();
    assert!(err.contains("Required field name is missing"), "{err}");
    assert!(peak < 16 << 20, "{peak} bytes allocated at the peak");
}
