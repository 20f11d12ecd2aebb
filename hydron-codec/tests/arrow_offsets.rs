//! Arrow vector columns whose layout lies, as the C data interface can
//! hand them over (`from_ffi` builds the array unchecked; the Python
//! module checks the offsets with `arrow::check_offsets` before arrow-rs's
//! `validate_full`, whose error names no row): every kind of bad offset,
//! in a `List` and a `LargeList`, is an error naming the row, through
//! every import function. (A `FixedSizeList` has no offsets, and arrow-rs
//! will not make one whose values are short.)
#![cfg(feature = "arrow")]

use std::sync::Arc;

use arrow_array::{make_array, Array, ArrayRef};
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field};
use hydron_codec::{arrow, CodecError, Policy};

/// A `List` (or, when `large`, `LargeList`) of `Float32` with these
/// offsets over `values` zeros, built without validation.
fn list(offsets: &[i64], values: usize, large: bool) -> ArrayRef {
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let (kind, buffer) = if large {
        (
            DataType::LargeList(item),
            Buffer::from_vec(offsets.to_vec()),
        )
    } else {
        let narrow: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
        (DataType::List(item), Buffer::from_vec(narrow))
    };
    let floats = ArrayData::builder(DataType::Float32)
        .len(values)
        .add_buffer(Buffer::from_vec(vec![0f32; values]))
        .build()
        .unwrap();
    let builder = ArrayData::builder(kind)
        .len(offsets.len() - 1)
        .add_buffer(buffer)
        .add_child_data(floats);
    // SAFETY: every buffer holds what the declared lengths need (the
    // offsets buffer one more entry than rows, the values `values` floats);
    // only the offsets' values lie, which hydron's checks read and arrow's
    // unchecked accessors never do here.
    make_array(unsafe { builder.build_unchecked() })
}

/// How a bad layout must be reported.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    BadOffsets(u64),
    WrongRowLength(u64, i64),
}

fn check(name: &str, array: &dyn Array, expect: Expect) {
    let first_row = 100;
    let matches = |err: &CodecError, shift: u64| match (err, expect) {
        (CodecError::BadOffsets { row, .. }, Expect::BadOffsets(r)) => *row == r + shift,
        (CodecError::WrongRowLength { row, length }, Expect::WrongRowLength(r, l)) => {
            *row == r + shift && *length == l
        }
        _ => false,
    };
    let err = arrow::vector_values(array).unwrap_err();
    assert!(matches(&err, 0), "{name}, vector_values: {err}");
    let err = arrow::vectors_from_arrow(array, Policy::Trusted).unwrap_err();
    assert!(matches(&err, 0), "{name}, vectors_from_arrow: {err}");
    let mut out = Vec::new();
    let err = arrow::append_vectors(array, Policy::Strict, &mut out, "v", first_row).unwrap_err();
    assert!(matches(&err, first_row), "{name}, append_vectors: {err}");
    assert!(out.is_empty());
    let err = arrow::check_offsets(array, first_row).unwrap_err();
    assert!(matches(&err, first_row), "{name}, check_offsets: {err}");
}

#[test]
fn every_kind_of_bad_list_offset_names_the_row() {
    let cases: [(&str, &[i64], usize, Expect); 7] = [
        (
            "the first offset below zero",
            &[-8, 0, 8, 16],
            32,
            Expect::BadOffsets(0),
        ),
        (
            "an offset before the one before it",
            &[0, 8, 16, 8, 16],
            32,
            Expect::BadOffsets(2),
        ),
        (
            "a middle row past the values",
            &[0, 8, 24, 32],
            16,
            Expect::BadOffsets(1),
        ),
        (
            "the last row past the values",
            &[0, 8, 16, 24],
            16,
            Expect::BadOffsets(2),
        ),
        (
            "offsets past the values from the first row",
            &[64, 72],
            16,
            Expect::BadOffsets(0),
        ),
        (
            "a row of 7",
            &[0, 8, 15, 23],
            32,
            Expect::WrongRowLength(1, 7),
        ),
        ("a row of 9", &[0, 9, 17], 32, Expect::WrongRowLength(0, 9)),
    ];
    for large in [false, true] {
        for (name, offsets, values, expect) in cases {
            let array = list(offsets, values, large);
            check(&format!("{name} (large: {large})"), &array, expect);
        }
    }
    // Valid offsets that start past zero (a slice) pass.
    for large in [false, true] {
        let array = list(&[8, 16, 24], 24, large);
        assert_eq!(arrow::vector_values(&array).unwrap().len(), 2);
        arrow::check_offsets(&array, 0).unwrap();
    }
}
