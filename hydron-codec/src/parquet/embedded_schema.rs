//! Checks a file's embedded Arrow schema (the `ARROW:schema` footer
//! metadata pyarrow and arrow-rs write) before the parquet crate decodes
//! it. arrow-ipc's schema decoder (`fb_to_schema`, which the parquet crate
//! calls on any file that has the key) panics on many well-formed
//! flatbuffers that describe no valid Arrow type: a field of type `NONE`
//! or an unknown type id, a list without exactly one child, an integer of
//! 7 bits, a missing type table, an invalid union... (found by the
//! `parquet_decode` fuzz target). hydron catches panics from the crate, but
//! a panic still prints to stderr, and a program built with
//! `panic = "abort"` cannot catch it at all; so every condition under
//! which that decoder panics is checked here first, on the same bytes, and
//! reported as an error.
//!
//! This mirrors `get_data_type`, `From<Field>` and `fb_to_schema` of
//! arrow-ipc 59 (`src/convert.rs`); the `parquet_decode` fuzz target and
//! the tests in `tests/parquet.rs` find a case that is missed.

use arrow_ipc::{DateUnit, IntervalUnit, Precision, TimeUnit, Type, UnionMode};
use base64::Engine;

/// The footer key of the embedded Arrow schema.
pub(super) const ARROW_SCHEMA_KEY: &str = "ARROW:schema";

/// `Err` with a reason if arrow-ipc would panic decoding `encoded` (a
/// footer value under [`ARROW_SCHEMA_KEY`]). Values arrow-ipc refuses with
/// an error of its own (bad base64, a flatbuffer that fails verification,
/// a message that is not a schema) are `Ok`: the parquet crate reports
/// them.
pub(super) fn check(encoded: &str) -> Result<(), String> {
    // As the parquet crate's `get_arrow_schema_from_metadata` reads it.
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded) else {
        return Ok(());
    };
    let slice = if bytes.len() > 8 && bytes[0..4] == [255u8; 4] {
        &bytes[8..]
    } else {
        bytes.as_slice()
    };
    let Ok(message) = arrow_ipc::root_as_message(slice) else {
        return Ok(());
    };
    let Some(schema) = message.header_as_schema() else {
        return Ok(());
    };
    let fields = schema
        .fields()
        .ok_or_else(|| "the schema has no field list".to_string())?;
    let big_endian = schema.endianness() == arrow_ipc::Endianness::Big;
    for (i, field) in fields.iter().enumerate() {
        if big_endian && field.type_type() == Type::Decimal {
            return Err(format!(
                "field {i} is a big-endian decimal, which Arrow does not support"
            ));
        }
        check_field(field).map_err(|e| format!("field {i} ({:?}): {e}", name(&field)))?;
    }
    Ok(())
}

fn name<'a>(field: &arrow_ipc::Field<'a>) -> &'a str {
    field.name().unwrap_or_default()
}

/// A field: its dictionary encoding, if any, then its type.
fn check_field(field: arrow_ipc::Field<'_>) -> Result<(), String> {
    if let Some(dictionary) = field.dictionary() {
        let int = dictionary
            .indexType()
            .ok_or_else(|| "a dictionary without an index type".to_string())?;
        check_int(int.bitWidth(), "dictionary index")?;
    }
    check_type(field)
}

fn check_int(bit_width: i32, what: &str) -> Result<(), String> {
    match bit_width {
        8 | 16 | 32 | 64 => Ok(()),
        w => Err(format!("{what} of {w} bits")),
    }
}

/// The children of a nested field: `Err` unless there are exactly `n`.
fn children_exactly(field: &arrow_ipc::Field<'_>, n: usize, what: &str) -> Result<(), String> {
    let children = field
        .children()
        .ok_or_else(|| format!("{what} without children"))?;
    if children.len() != n {
        return Err(format!("{what} with {} children, not {n}", children.len()));
    }
    for child in children.iter() {
        check_field(child).map_err(|e| format!("{what}'s child {:?}: {e}", name(&child)))?;
    }
    Ok(())
}

fn missing(what: &str) -> String {
    format!("a {what} field without its type table")
}

/// The field's type, as `get_data_type` reads it.
fn check_type(field: arrow_ipc::Field<'_>) -> Result<(), String> {
    match field.type_type() {
        Type::Null
        | Type::Bool
        | Type::Binary
        | Type::BinaryView
        | Type::LargeBinary
        | Type::Utf8
        | Type::Utf8View
        | Type::LargeUtf8 => Ok(()),
        Type::Int => {
            let int = field.type_as_int().ok_or_else(|| missing("Int"))?;
            check_int(int.bitWidth(), "an integer")
        }
        Type::FixedSizeBinary => field
            .type_as_fixed_size_binary()
            .map(|_| ())
            .ok_or_else(|| missing("FixedSizeBinary")),
        Type::FloatingPoint => {
            let float = field
                .type_as_floating_point()
                .ok_or_else(|| missing("FloatingPoint"))?;
            match float.precision() {
                Precision::HALF | Precision::SINGLE | Precision::DOUBLE => Ok(()),
                p => Err(format!("a float of precision {p:?}")),
            }
        }
        Type::Date => {
            let date = field.type_as_date().ok_or_else(|| missing("Date"))?;
            match date.unit() {
                DateUnit::DAY | DateUnit::MILLISECOND => Ok(()),
                u => Err(format!("a date in unit {u:?}")),
            }
        }
        Type::Time => {
            let time = field.type_as_time().ok_or_else(|| missing("Time"))?;
            match (time.bitWidth(), time.unit()) {
                (32, TimeUnit::SECOND | TimeUnit::MILLISECOND)
                | (64, TimeUnit::MICROSECOND | TimeUnit::NANOSECOND) => Ok(()),
                (w, u) => Err(format!("a time of {w} bits in unit {u:?}")),
            }
        }
        Type::Timestamp => {
            let t = field
                .type_as_timestamp()
                .ok_or_else(|| missing("Timestamp"))?;
            check_time_unit(t.unit(), "a timestamp")
        }
        Type::Duration => {
            let d = field
                .type_as_duration()
                .ok_or_else(|| missing("Duration"))?;
            check_time_unit(d.unit(), "a duration")
        }
        Type::Interval => {
            let i = field
                .type_as_interval()
                .ok_or_else(|| missing("Interval"))?;
            match i.unit() {
                IntervalUnit::YEAR_MONTH
                | IntervalUnit::DAY_TIME
                | IntervalUnit::MONTH_DAY_NANO => Ok(()),
                u => Err(format!("an interval in unit {u:?}")),
            }
        }
        Type::List => children_exactly(&field, 1, "a list"),
        Type::LargeList => children_exactly(&field, 1, "a large list"),
        Type::ListView => children_exactly(&field, 1, "a list view"),
        Type::LargeListView => children_exactly(&field, 1, "a large list view"),
        Type::FixedSizeList => {
            children_exactly(&field, 1, "a fixed-size list")?;
            field
                .type_as_fixed_size_list()
                .map(|_| ())
                .ok_or_else(|| missing("FixedSizeList"))
        }
        Type::Struct_ => {
            for child in field.children().into_iter().flatten() {
                check_field(child)
                    .map_err(|e| format!("a struct's child {:?}: {e}", name(&child)))?;
            }
            Ok(())
        }
        Type::RunEndEncoded => children_exactly(&field, 2, "a run-end encoded field"),
        Type::Map => {
            field.type_as_map().ok_or_else(|| missing("Map"))?;
            children_exactly(&field, 1, "a map")
        }
        Type::Decimal => {
            let d = field.type_as_decimal().ok_or_else(|| missing("Decimal"))?;
            if u8::try_from(d.precision()).is_err() || i8::try_from(d.scale()).is_err() {
                return Err(format!(
                    "a decimal of precision {} and scale {}",
                    d.precision(),
                    d.scale()
                ));
            }
            match d.bitWidth() {
                32 | 64 | 128 | 256 => Ok(()),
                w => Err(format!("a decimal of {w} bits")),
            }
        }
        Type::Union => {
            let union = field.type_as_union().ok_or_else(|| missing("Union"))?;
            if !matches!(union.mode(), UnionMode::Sparse | UnionMode::Dense) {
                return Err(format!("a union of mode {:?}", union.mode()));
            }
            let children: Vec<_> = field.children().into_iter().flatten().collect();
            for child in &children {
                check_field(*child)
                    .map_err(|e| format!("a union's child {:?}: {e}", name(child)))?;
            }
            match union.typeIds() {
                // Ids 0, 1, 2, ... assigned: at most 128 children.
                None if children.len() > 128 => {
                    Err(format!("a union of {} children", children.len()))
                }
                None => Ok(()),
                // As `UnionFields::try_new` checks them (each id cast to i8).
                Some(ids) => {
                    if ids.len() != children.len() {
                        return Err(format!(
                            "a union of {} children with {} type ids",
                            children.len(),
                            ids.len()
                        ));
                    }
                    let mut seen = 0u128;
                    for id in ids.iter() {
                        let id = id as i8;
                        if id < 0 || seen & (1 << id) != 0 {
                            return Err(format!(
                                "a union with type id {id} (negative or repeated)"
                            ));
                        }
                        seen |= 1 << id;
                    }
                    Ok(())
                }
            }
        }
        t => Err(format!("type {t:?}, which Arrow does not define")),
    }
}

fn check_time_unit(unit: TimeUnit, what: &str) -> Result<(), String> {
    match unit {
        TimeUnit::SECOND | TimeUnit::MILLISECOND | TimeUnit::MICROSECOND | TimeUnit::NANOSECOND => {
            Ok(())
        }
        u => Err(format!("{what} in unit {u:?}")),
    }
}
