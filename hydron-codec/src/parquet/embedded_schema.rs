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

/// A field whose type has no type table. Unreachable through
/// `root_as_message`, which the parquet crate (and [`check`]) call first:
/// the flatbuffer verifier refuses a union discriminant without its value
/// ("InconsistentUnion"), so a verified field of type `Int` has its `Int`
/// table. Kept so that a change there is an error here, not a panic.
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

#[cfg(test)]
mod tests {
    //! Every rejection branch above, each with a crafted schema message
    //! that the branch refuses and that arrow-ipc 59's `fb_to_schema`
    //! panics on (checked here too, so a case that stops being a panic in
    //! a later arrow-ipc shows up).

    use std::panic::{catch_unwind, AssertUnwindSafe};

    use arrow_ipc::{
        DateBuilder, DecimalBuilder, DictionaryEncodingBuilder, DurationBuilder, Endianness,
        FieldBuilder, FixedSizeBinaryBuilder, FixedSizeListBuilder, FloatingPointBuilder,
        IntBuilder, IntervalBuilder, MapBuilder, MessageBuilder, MessageHeader, MetadataVersion,
        SchemaBuilder, TimeBuilder, TimestampBuilder, UnionBuilder,
    };
    use base64::Engine;
    use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};

    use super::*;

    /// A field's type table, as the test writes it.
    #[derive(Clone, Copy, Debug)]
    enum Table {
        /// No type table (which the verifier refuses for any type but
        /// `NONE`).
        Missing,
        /// An empty table, for the types whose table has no fields.
        Empty,
        Int(i32),
        Float(Precision),
        Date(DateUnit),
        Time(i32, TimeUnit),
        Timestamp(TimeUnit),
        Duration(TimeUnit),
        Interval(IntervalUnit),
        FixedSizeBinary,
        FixedSizeList,
        Map,
        Decimal(i32, i32, i32),
        Union(UnionMode, Option<&'static [i32]>),
    }

    /// A field: its type, type table, children, and dictionary encoding
    /// (`Some(None)`: one without an index type; `Some(Some(w))`: with an
    /// index of `w` bits).
    #[derive(Clone, Debug)]
    struct Spec {
        ty: Type,
        table: Table,
        children: Option<Vec<Spec>>,
        dictionary: Option<Option<i32>>,
    }

    fn leaf(ty: Type, table: Table) -> Spec {
        Spec {
            ty,
            table,
            children: None,
            dictionary: None,
        }
    }

    fn nested(ty: Type, table: Table, children: Vec<Spec>) -> Spec {
        Spec {
            children: Some(children),
            ..leaf(ty, table)
        }
    }

    fn float32() -> Spec {
        leaf(Type::FloatingPoint, Table::Float(Precision::SINGLE))
    }

    /// An integer of 7 bits: a child arrow-ipc panics on.
    fn bad() -> Spec {
        leaf(Type::Int, Table::Int(7))
    }

    fn int<'a>(fbb: &mut FlatBufferBuilder<'a>, bits: i32) -> WIPOffset<arrow_ipc::Int<'a>> {
        let mut b = IntBuilder::new(fbb);
        b.add_bitWidth(bits);
        b.add_is_signed(true);
        b.finish()
    }

    fn table(fbb: &mut FlatBufferBuilder<'_>, table: Table) -> Option<WIPOffset<UnionWIPOffset>> {
        Some(match table {
            Table::Missing => return None,
            Table::Empty => arrow_ipc::NullBuilder::new(fbb).finish().as_union_value(),
            Table::Int(bits) => int(fbb, bits).as_union_value(),
            Table::Float(precision) => {
                let mut b = FloatingPointBuilder::new(fbb);
                b.add_precision(precision);
                b.finish().as_union_value()
            }
            Table::Date(unit) => {
                let mut b = DateBuilder::new(fbb);
                b.add_unit(unit);
                b.finish().as_union_value()
            }
            Table::Time(bits, unit) => {
                let mut b = TimeBuilder::new(fbb);
                b.add_bitWidth(bits);
                b.add_unit(unit);
                b.finish().as_union_value()
            }
            Table::Timestamp(unit) => {
                let mut b = TimestampBuilder::new(fbb);
                b.add_unit(unit);
                b.finish().as_union_value()
            }
            Table::Duration(unit) => {
                let mut b = DurationBuilder::new(fbb);
                b.add_unit(unit);
                b.finish().as_union_value()
            }
            Table::Interval(unit) => {
                let mut b = IntervalBuilder::new(fbb);
                b.add_unit(unit);
                b.finish().as_union_value()
            }
            Table::FixedSizeBinary => {
                let mut b = FixedSizeBinaryBuilder::new(fbb);
                b.add_byteWidth(4);
                b.finish().as_union_value()
            }
            Table::FixedSizeList => {
                let mut b = FixedSizeListBuilder::new(fbb);
                b.add_listSize(8);
                b.finish().as_union_value()
            }
            Table::Map => MapBuilder::new(fbb).finish().as_union_value(),
            Table::Decimal(precision, scale, bits) => {
                let mut b = DecimalBuilder::new(fbb);
                b.add_precision(precision);
                b.add_scale(scale);
                b.add_bitWidth(bits);
                b.finish().as_union_value()
            }
            Table::Union(mode, ids) => {
                let ids = ids.map(|ids| fbb.create_vector(ids));
                let mut b = UnionBuilder::new(fbb);
                b.add_mode(mode);
                if let Some(ids) = ids {
                    b.add_typeIds(ids);
                }
                b.finish().as_union_value()
            }
        })
    }

    fn field<'a>(fbb: &mut FlatBufferBuilder<'a>, spec: &Spec) -> WIPOffset<arrow_ipc::Field<'a>> {
        let children = spec.children.as_ref().map(|children| {
            let built: Vec<_> = children.iter().map(|c| field(fbb, c)).collect();
            fbb.create_vector(&built)
        });
        let name = fbb.create_string("f");
        let type_table = table(fbb, spec.table);
        let dictionary = spec.dictionary.map(|index| {
            let index = index.map(|bits| int(fbb, bits));
            let mut b = DictionaryEncodingBuilder::new(fbb);
            b.add_id(0);
            if let Some(index) = index {
                b.add_indexType(index);
            }
            b.finish()
        });
        let mut b = FieldBuilder::new(fbb);
        b.add_name(name);
        b.add_nullable(true);
        b.add_type_type(spec.ty);
        if let Some(t) = type_table {
            b.add_type_(t);
        }
        if let Some(c) = children {
            b.add_children(c);
        }
        if let Some(d) = dictionary {
            b.add_dictionary(d);
        }
        b.finish()
    }

    /// A schema message of `fields` (none: no field list), as a footer
    /// holds it: base64 of the IPC continuation marker, the length, the
    /// message.
    fn message(fields: Option<&[Spec]>, endianness: Endianness) -> Vec<u8> {
        let mut fbb = FlatBufferBuilder::new();
        let fields = fields.map(|fields| {
            let built: Vec<_> = fields.iter().map(|f| field(&mut fbb, f)).collect();
            fbb.create_vector(&built)
        });
        let mut schema = SchemaBuilder::new(&mut fbb);
        if let Some(fields) = fields {
            schema.add_fields(fields);
        }
        schema.add_endianness(endianness);
        let schema = schema.finish();
        let mut m = MessageBuilder::new(&mut fbb);
        m.add_version(MetadataVersion::V5);
        m.add_header_type(MessageHeader::Schema);
        m.add_header(schema.as_union_value());
        let m = m.finish();
        fbb.finish(m, None);
        fbb.finished_data().to_vec()
    }

    fn encoded(message: &[u8]) -> String {
        let mut bytes = vec![0xff; 4];
        bytes.extend((message.len() as u32).to_le_bytes());
        bytes.extend(message);
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Whether arrow-ipc's `fb_to_schema` (what the parquet crate calls)
    /// panics on the message.
    fn arrow_ipc_panics(message: &[u8]) -> bool {
        let message = arrow_ipc::root_as_message(message).expect("the message verifies");
        let schema = message.header_as_schema().expect("a schema message");
        catch_unwind(AssertUnwindSafe(|| {
            arrow_ipc::convert::fb_to_schema(schema)
        }))
        .is_err()
    }

    fn refused(fields: Option<&[Spec]>, endianness: Endianness, reason: &str) {
        let bytes = message(fields, endianness);
        match check(&encoded(&bytes)) {
            Err(e) => assert!(e.contains(reason), "{reason:?} not in {e:?}"),
            Ok(()) => panic!("accepted, expected {reason:?}"),
        }
        assert!(
            arrow_ipc_panics(&bytes),
            "arrow-ipc does not panic on {reason:?}"
        );
    }

    fn refused_field(spec: Spec, reason: &str) {
        refused(Some(&[spec]), Endianness::Little, reason);
    }

    #[test]
    fn well_formed_schemas_pass_and_arrow_ipc_reads_them() {
        let fields = [
            nested(Type::FixedSizeList, Table::FixedSizeList, vec![float32()]),
            nested(Type::List, Table::Empty, vec![float32()]),
            leaf(Type::Int, Table::Int(8)),
            leaf(Type::FixedSizeBinary, Table::FixedSizeBinary),
            Spec {
                dictionary: Some(Some(32)),
                ..leaf(Type::Utf8, Table::Empty)
            },
            leaf(Type::Decimal, Table::Decimal(10, 2, 128)),
            leaf(Type::Time, Table::Time(64, TimeUnit::NANOSECOND)),
            nested(
                Type::Union,
                Table::Union(UnionMode::Dense, Some(&[3, 7])),
                vec![float32(), leaf(Type::Null, Table::Empty)],
            ),
            nested(
                Type::RunEndEncoded,
                Table::Empty,
                vec![leaf(Type::Int, Table::Int(32)), float32()],
            ),
        ];
        let bytes = message(Some(&fields), Endianness::Little);
        assert_eq!(check(&encoded(&bytes)), Ok(()));
        assert!(!arrow_ipc_panics(&bytes));
    }

    #[test]
    fn the_schema_and_its_fields() {
        refused(None, Endianness::Little, "the schema has no field list");
        let decimal = leaf(Type::Decimal, Table::Decimal(10, 2, 128));
        refused(
            Some(&[decimal]),
            Endianness::Big,
            "field 0 is a big-endian decimal",
        );
        refused_field(leaf(Type::NONE, Table::Missing), "type NONE");
        refused_field(leaf(Type(99), Table::Empty), "type <UNKNOWN 99>");
        // A dictionary encoding without an index type, or of 7 bits.
        let utf8 = leaf(Type::Utf8, Table::Empty);
        let with_dictionary = |index| Spec {
            dictionary: Some(index),
            ..utf8.clone()
        };
        refused_field(with_dictionary(None), "a dictionary without an index type");
        refused_field(with_dictionary(Some(7)), "dictionary index of 7 bits");
    }

    /// The `missing` branches cannot be reached: the verifier refuses a
    /// type without its table before either walk, and the parquet crate
    /// reports its error. If a flatbuffers upgrade let such a message
    /// through, this fails and the branches become the guard.
    #[test]
    fn a_missing_type_table_is_refused_by_the_verifier_first() {
        for ty in [
            Type::Int,
            Type::FixedSizeBinary,
            Type::FloatingPoint,
            Type::Date,
            Type::Time,
            Type::Timestamp,
            Type::Duration,
            Type::Interval,
            Type::FixedSizeList,
            Type::Map,
            Type::Decimal,
            Type::Union,
        ] {
            let bytes = message(
                Some(&[nested(ty, Table::Missing, vec![float32()])]),
                Endianness::Little,
            );
            let err = arrow_ipc::root_as_message(&bytes).unwrap_err().to_string();
            assert!(
                err.contains("Exactly one of union discriminant"),
                "{ty:?}: {err}"
            );
            assert_eq!(check(&encoded(&bytes)), Ok(()), "{ty:?}");
        }
    }

    #[test]
    fn widths_precisions_and_units_arrow_does_not_define() {
        refused_field(leaf(Type::Int, Table::Int(7)), "an integer of 7 bits");
        refused_field(
            leaf(Type::FloatingPoint, Table::Float(Precision(3))),
            "a float of precision <UNKNOWN 3>",
        );
        refused_field(
            leaf(Type::Date, Table::Date(DateUnit(2))),
            "a date in unit <UNKNOWN 2>",
        );
        refused_field(
            leaf(Type::Time, Table::Time(32, TimeUnit::MICROSECOND)),
            "a time of 32 bits in unit MICROSECOND",
        );
        refused_field(
            leaf(Type::Timestamp, Table::Timestamp(TimeUnit(4))),
            "a timestamp in unit <UNKNOWN 4>",
        );
        refused_field(
            leaf(Type::Duration, Table::Duration(TimeUnit(4))),
            "a duration in unit <UNKNOWN 4>",
        );
        refused_field(
            leaf(Type::Interval, Table::Interval(IntervalUnit(3))),
            "an interval in unit <UNKNOWN 3>",
        );
        refused_field(
            leaf(Type::Decimal, Table::Decimal(300, 2, 128)),
            "a decimal of precision 300 and scale 2",
        );
        refused_field(
            leaf(Type::Decimal, Table::Decimal(10, 200, 128)),
            "a decimal of precision 10 and scale 200",
        );
        refused_field(
            leaf(Type::Decimal, Table::Decimal(10, 2, 100)),
            "a decimal of 100 bits",
        );
    }

    #[test]
    fn nested_types_with_the_wrong_children() {
        for (ty, table, what) in [
            (Type::List, Table::Empty, "a list"),
            (Type::LargeList, Table::Empty, "a large list"),
            (Type::ListView, Table::Empty, "a list view"),
            (Type::LargeListView, Table::Empty, "a large list view"),
            (
                Type::FixedSizeList,
                Table::FixedSizeList,
                "a fixed-size list",
            ),
            (Type::Map, Table::Map, "a map"),
        ] {
            refused_field(leaf(ty, table), &format!("{what} without children"));
            refused_field(
                nested(ty, table, vec![]),
                &format!("{what} with 0 children, not 1"),
            );
            refused_field(
                nested(ty, table, vec![float32(), float32()]),
                &format!("{what} with 2 children, not 1"),
            );
            refused_field(
                nested(ty, table, vec![bad()]),
                &format!("{what}'s child \"f\""),
            );
        }
        let ree = "a run-end encoded field";
        refused_field(
            leaf(Type::RunEndEncoded, Table::Empty),
            &format!("{ree} without children"),
        );
        refused_field(
            nested(Type::RunEndEncoded, Table::Empty, vec![float32()]),
            &format!("{ree} with 1 children, not 2"),
        );
        refused_field(
            nested(Type::Struct_, Table::Empty, vec![float32(), bad()]),
            "a struct's child \"f\": an integer of 7 bits",
        );
    }

    #[test]
    fn unions_arrow_cannot_build() {
        let union = |mode, ids, children| nested(Type::Union, Table::Union(mode, ids), children);
        refused_field(
            union(UnionMode(5), None, vec![float32()]),
            "a union of mode <UNKNOWN 5>",
        );
        refused_field(
            union(UnionMode::Sparse, None, vec![bad()]),
            "a union's child \"f\": an integer of 7 bits",
        );
        let null = leaf(Type::Null, Table::Empty);
        refused_field(
            union(UnionMode::Sparse, None, vec![null.clone(); 129]),
            "a union of 129 children",
        );
        refused_field(
            union(UnionMode::Dense, Some(&[0]), vec![null.clone(); 2]),
            "a union of 2 children with 1 type ids",
        );
        for (ids, id) in [(&[0, -1][..], -1), (&[4, 4][..], 4), (&[0, 256][..], 0)] {
            refused_field(
                union(UnionMode::Dense, Some(ids), vec![null.clone(); 2]),
                &format!("a union with type id {id} (negative or repeated)"),
            );
        }
    }
}
