//! JSON for `Gf8` data (feature `json`), through serde_json.
//!
//! A batch is an array of vectors, each an array of its 8 coordinates:
//! `[[x0, …, x7], [x0, …, x7], …]`; one vector alone is `[x0, …, x7]`.
//! [JSON Lines](JsonLinesWriter) puts one vector per line, for streams.
//!
//! Coordinates are written as the shortest decimal that reads back to the
//! same `f32`, and read with correct rounding straight to `f32`, so every
//! finite value (`-0.0` and subnormals included) round-trips bit for bit.
//! JSON has no NaN or infinity: such input is an error, and so is a number
//! too large for `f32` (`1e39` is an error, not a silent `inf`).
//!
//! Decoding applies a [`Policy`](crate::Policy) to every vector. Errors say
//! where: the line and column of bad JSON with the vector and coordinate the
//! parser was in, or the index of a vector that breaks the invariant.
//!
//! ```
//! use hydron_codec::{json, Policy};
//! use hydron_core::Gf8;
//!
//! let batch = [Gf8::try_new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?, Gf8::ZERO];
//! let text = json::to_string(&batch);
//! assert_eq!(text, "[[1.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0],[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]]");
//! assert_eq!(json::from_str(&text, Policy::Strict)?, batch);
//!
//! let err = json::from_str("[[1, 0, 0, 0, 0, 0, 0, 1e39]]", Policy::Strict).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "JSON error at line 1, column 27: vector 0, coordinate 7: number out of range"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod de;
mod lines;
mod ser;

pub use de::{from_slice, from_str, gf8_from_slice, gf8_from_str};
pub use lines::{JsonLinesReader, JsonLinesWriter, MAX_LINE_LEN};
pub use ser::{gf8_to_string, gf8_to_vec, to_string, to_vec, to_writer};

pub(crate) use de::{json_error, parse_row, Cursor};
pub(crate) use lines::LineEnd;
pub(crate) use ser::{check_finite, write_row};
