//! [`Gf8Batch`] and [`E8Codes`] as fory struct types, for use as fields of
//! your own `#[derive(fory::ForyStruct)]` types.
//!
//! Why not `#[derive(ForyStruct)]`: in fory 1.7.7 the derive numbers the
//! structs of each crate 0, 1, 2, … (a counter in the proc macro), and a
//! `Fory` refuses two registered structs with the same number ("type index
//! 0 is already registered"). A derived `Gf8Batch` would have number 0 and
//! clash with the first derived struct of every user crate. So the traits
//! are written out here, with the fixed numbers [`GF8_BATCH_TYPE_INDEX`]
//! and [`E8_CODES_TYPE_INDEX`], far above what a crate's counter reaches.
//! The schema (field name and type) still comes from a derived twin that is
//! never registered, and tests prove the bytes equal those of the derived
//! struct and of pyfory.
//!
//! Reading validates: a `Gf8Batch` read by fory holds only valid vectors
//! (as [`Policy::Strict`]), and an `E8Codes` only codes below 240; anything
//! else is a fory `InvalidData` error that names the vector, and the
//! coordinate or norm. Reading is also stricter than the derive about the
//! envelope: a null reference flag is an error, and in compatible mode the
//! type meta must be the registered one byte for byte (see the module docs
//! of [`fory`](super) for what fory itself skips).

use std::rc::Rc;
use std::sync::Arc;

use ::fory::__private::serializer::struct_;
use ::fory::__private::{meta::FieldInfo, TypeInfo};
use ::fory::{Error, ReadContext, RefFlag, RefMode, Serializer, StructSerializer, TypeId};
use ::fory::{TypeResolver, WriteContext};
use hydron_core::{E8Root, Gf8};

use super::{batch, wire};
use crate::{CodecError, Policy};

/// The fory type index (not the wire type id) of [`Gf8Batch`]: fory's
/// registry slot for the type. Derived structs get 0, 1, 2, … per crate;
/// a crate would need more than 1000 derived fory types to reach this.
///
/// ```
/// assert_eq!(hydron_codec::fory::GF8_BATCH_TYPE_INDEX, 1001);
/// ```
pub const GF8_BATCH_TYPE_INDEX: u32 = 1001;

/// The fory type index of [`E8Codes`] (see [`GF8_BATCH_TYPE_INDEX`]).
///
/// ```
/// assert_eq!(hydron_codec::fory::E8_CODES_TYPE_INDEX, 1002);
/// ```
pub const E8_CODES_TYPE_INDEX: u32 = 1002;

/// A batch of vectors as a fory struct: one field, `values`, a dense
/// float32 array of the 8·N coordinates, vector by vector.
///
/// Its root message is the one [`encode_batch`](super::encode_batch) and
/// [`decode_batch`](super::decode_batch) write and read by hand (use those
/// for a batch on its own: they are faster and take a [`Policy`]). As a
/// field of your own fory struct, after [`register`](super::register), it
/// is read with [`Policy::Strict`].
///
/// In Python (pyfory 1.7.7, `xlang=True`):
///
/// ```python
/// @dataclass
/// class Gf8Batch:
///     values: pyfory.NDArray[pyfory.Float32] = None
/// fory.register_type(Gf8Batch, type_id=2401)
/// ```
///
/// ```
/// use fory::{Fory, ForyStruct};
/// use hydron_codec::fory::{self as hfory, Gf8Batch};
/// use hydron_core::Gf8;
///
/// #[derive(ForyStruct, Debug, PartialEq)]
/// struct Cloud { name: String, points: Gf8Batch }
///
/// let mut fory = hfory::xlang_fory()?;
/// fory.register::<Cloud>(1)?;
/// let v = Gf8::from_scalar(1.0)?;
/// let cloud = Cloud { name: "c".into(), points: Gf8Batch(vec![v, -v]) };
/// let back: Cloud = fory.deserialize(&fory.serialize(&cloud)?)?;
/// assert_eq!(back, cloud);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Gf8Batch(pub Vec<Gf8>);

impl From<Vec<Gf8>> for Gf8Batch {
    /// Wraps the vectors.
    ///
    /// ```
    /// use hydron_codec::fory::Gf8Batch;
    /// use hydron_core::Gf8;
    /// assert_eq!(Gf8Batch::from(vec![Gf8::ZERO; 2]).0.len(), 2);
    /// ```
    #[inline]
    fn from(vectors: Vec<Gf8>) -> Gf8Batch {
        Gf8Batch(vectors)
    }
}

impl From<Gf8Batch> for Vec<Gf8> {
    /// Unwraps the vectors.
    ///
    /// ```
    /// use hydron_codec::fory::Gf8Batch;
    /// use hydron_core::Gf8;
    /// let v: Vec<Gf8> = Gf8Batch(vec![Gf8::ZERO]).into();
    /// assert_eq!(v, [Gf8::ZERO]);
    /// ```
    #[inline]
    fn from(batch: Gf8Batch) -> Vec<Gf8> {
        batch.0
    }
}

/// E8 root codes as a fory struct: one field, `codes`, a dense uint8 array,
/// one byte per vector.
///
/// Its root message is the one [`encode_codes`](super::encode_codes) and
/// [`decode_codes`](super::decode_codes) write and read by hand. Read by
/// fory (after [`register`](super::register)), a code of 240 or more is an
/// error.
///
/// In Python (pyfory 1.7.7, `xlang=True`):
///
/// ```python
/// @dataclass
/// class E8Codes:
///     codes: pyfory.NDArray[pyfory.UInt8] = None
/// fory.register_type(E8Codes, type_id=2402)
/// ```
///
/// ```
/// use hydron_codec::fory::{self as hfory, E8Codes};
/// use hydron_core::E8Root;
///
/// let fory = hfory::xlang_fory()?;
/// let codes = E8Codes(vec![E8Root::new(0)?, E8Root::new(239)?]);
/// let bytes = fory.serialize(&codes)?;
/// assert_eq!(bytes, hfory::encode_codes(&codes.0));
/// assert_eq!(fory.deserialize::<E8Codes>(&bytes)?, codes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct E8Codes(pub Vec<E8Root>);

impl From<Vec<E8Root>> for E8Codes {
    /// Wraps the roots.
    ///
    /// ```
    /// use hydron_codec::fory::E8Codes;
    /// use hydron_core::E8Root;
    /// assert_eq!(E8Codes::from(vec![E8Root::new(3)?]).0[0].code(), 3);
    /// # Ok::<(), hydron_core::Gf8Error>(())
    /// ```
    #[inline]
    fn from(roots: Vec<E8Root>) -> E8Codes {
        E8Codes(roots)
    }
}

impl From<E8Codes> for Vec<E8Root> {
    /// Unwraps the roots.
    ///
    /// ```
    /// use hydron_codec::fory::E8Codes;
    /// let v: Vec<hydron_core::E8Root> = E8Codes::default().into();
    /// assert!(v.is_empty());
    /// ```
    #[inline]
    fn from(codes: E8Codes) -> Vec<E8Root> {
        codes.0
    }
}

/// The schemas, derived: only their field metadata is used, for the type
/// meta fory writes in compatible mode. They are never registered, so
/// their derive-assigned type indexes never meet a `Fory`.
pub(super) mod schema {
    #![allow(dead_code)] // built only by tests: the derived metadata is what is used

    #[derive(::fory::ForyStruct)]
    pub(in crate::fory) struct Gf8Batch {
        #[fory(array)]
        pub(in crate::fory) values: Vec<f32>,
    }

    #[derive(::fory::ForyStruct)]
    pub(in crate::fory) struct E8Codes {
        #[fory(array)]
        pub(in crate::fory) codes: Vec<u8>,
    }
}

/// The body of each type: what goes after the type info.
trait Body: Sized {
    /// The schema-consistent mode's struct hash (`i32`, written first when
    /// fory checks struct versions); the schema bytes of `wire` carry it.
    const VERSION_HASH: i32;

    fn write_body(&self, context: &mut WriteContext) -> Result<(), Error>;

    /// Reads the body from `input`; returns it and the bytes consumed.
    fn read_body(input: &[u8]) -> Result<(Self, usize), CodecError>;
}

impl Body for Gf8Batch {
    /// `18 89 ec 36` in the schema-consistent framing.
    const VERSION_HASH: i32 = 0x36ec_8918;

    fn write_body(&self, context: &mut WriteContext) -> Result<(), Error> {
        batch::check_len(self.0.len())
            .map_err(|e| Error::invalid_data(format!("Gf8Batch: {e}")))?;
        // Cannot truncate: checked against MAX_BATCH_LEN above.
        context.writer.write_var_u32((32 * self.0.len()) as u32);
        let arrays = Gf8::slice_as_arrays(&self.0);
        #[cfg(target_endian = "little")]
        context
            .writer
            .write_bytes(bytemuck::cast_slice::<[f32; 8], u8>(arrays));
        #[cfg(not(target_endian = "little"))]
        for x in arrays.as_flattened() {
            context.writer.write_f32(*x);
        }
        Ok(())
    }

    fn read_body(input: &[u8]) -> Result<(Gf8Batch, usize), CodecError> {
        let (data, end) = wire::read_array_field(input, 0, 4, 32, batch::FLOATS_WHAT)?;
        Ok((
            Gf8Batch(crate::payload::decode_payload(data, Policy::Strict)?),
            end,
        ))
    }
}

impl Body for E8Codes {
    /// `ba 8e 03 19` in the schema-consistent framing.
    const VERSION_HASH: i32 = 0x1903_8eba;

    fn write_body(&self, context: &mut WriteContext) -> Result<(), Error> {
        let len = u32::try_from(self.0.len()).map_err(|_| {
            Error::invalid_data(format!(
                "E8Codes: {} codes do not fit a fory uint8 array (at most {})",
                self.0.len(),
                u32::MAX
            ))
        })?;
        context.writer.write_var_u32(len);
        context
            .writer
            .write_bytes(bytemuck::cast_slice::<E8Root, u8>(&self.0));
        Ok(())
    }

    fn read_body(input: &[u8]) -> Result<(E8Codes, usize), CodecError> {
        let (data, end) = wire::read_array_field(input, 0, 1, 1, "codes")?;
        Ok((E8Codes(crate::payload::to_roots(data)?), end))
    }
}

/// Writes a body, with the version hash first when fory checks versions.
#[inline]
fn write_data<T: Body>(value: &T, context: &mut WriteContext) -> Result<(), Error> {
    if context.is_check_struct_version() {
        context.writer.write_i32(T::VERSION_HASH);
    }
    value.write_body(context)
}

/// Reads a body, checking the version hash when fory checks versions, and
/// in compatible mode the type meta in front of it ([`check_meta_before`]:
/// every path fory takes to a body comes here, including those where fory
/// read the type info itself: a field of a user's struct, the elements of
/// a list).
#[inline]
fn read_data<T: Body + StructSerializer>(
    context: &mut ReadContext,
    name: &str,
) -> Result<T, Error> {
    if context.is_compatible() {
        check_meta_before::<T>(context, name)?;
    }
    if context.is_check_struct_version() {
        let found = context.reader.read_i32()?;
        if found != T::VERSION_HASH {
            return Err(Error::invalid_data(format!(
                "{name}: struct schema hash {found:#x}, expected {:#x}",
                T::VERSION_HASH
            )));
        }
    }
    let start = context.reader.get_cursor();
    let (value, used) = T::read_body(context.reader.slice_after_cursor())
        .map_err(|e| Error::invalid_data(format!("{name} starting at byte {start}: {e}")))?;
    context.reader.skip(used)?;
    Ok(value)
}

/// Reads the reference flag in front of a value (when `ref_mode` has one)
/// and accepts only a value that is present: `NOT_NULL_VALUE` (-1), or,
/// under reference tracking, `REF_VALUE` (0, a first occurrence, whose
/// reference id is reserved as fory's derive does).
///
/// fory's derive reads a null flag (-3) as the type's default, so a null
/// `Gf8Batch` would read as an empty batch. Here it is an error: a value of
/// these types is never null (an optional one is an `Option<Gf8Batch>`,
/// whose serializer reads the flag itself and never calls this).
#[inline]
fn read_ref_flag(context: &mut ReadContext, ref_mode: RefMode, name: &str) -> Result<(), Error> {
    if ref_mode == RefMode::None {
        return Ok(());
    }
    let offset = context.reader.get_cursor();
    let flag = context.reader.read_i8()?;
    if flag == RefFlag::NotNullValue as i8 {
        return Ok(());
    }
    if flag == RefFlag::RefValue as i8 && ref_mode == RefMode::Tracking {
        context.ref_reader.reserve_ref_id();
        return Ok(());
    }
    Err(bad_ref_flag(name, offset, flag))
}

#[cold]
fn bad_ref_flag(name: &str, offset: usize, flag: i8) -> Error {
    let what = match flag {
        f if f == RefFlag::Null as i8 => {
            format!(
                "is null (-3), but {name} values are never null: read an optional one as Option<{name}>"
            )
        }
        f if f == RefFlag::Ref as i8 => {
            "is a back-reference (-2), which these values never are".into()
        }
        f if f == RefFlag::RefValue as i8 => {
            "is a tracked value (0), but reference tracking is off".into()
        }
        _ => format!("{flag} is not a fory reference flag"),
    };
    Error::invalid_data(format!(
        "{name} at byte {offset}: the reference flag {what}"
    ))
}

/// Reads the type info of a struct value in compatible mode, as fory's
/// derive does, and then checks the bytes it consumed.
///
/// fory identifies a type meta by the 52-bit hash in its 8-byte header:
/// when the hash equals that of the expected local type, fory skips the
/// meta body unread. A meta that names another type id, or another field
/// name or type, under an unchanged header would be taken for hydron's
/// type. So the bytes are compared with the meta fory writes for the
/// registered type: the type kind, the marker of a new meta, and the meta
/// itself byte for byte. (A marker that refers back to a meta read earlier
/// in the same message is left to fory, which checks that it resolved to
/// this type.)
fn read_checked_type_info<T: StructSerializer>(
    context: &mut ReadContext,
    name: &str,
) -> Result<Rc<TypeInfo>, Error> {
    let start = context.reader.get_cursor();
    let next_index = context.meta_resolver.reading_type_infos.len();
    let type_info = struct_::read_compatible_type_info::<T>(context)?;
    let local = context.get_provider_type_info(&std::any::TypeId::of::<T>())?;
    let raw = context
        .reader
        .sub_slice(start, context.reader.get_cursor())?;
    check_type_meta(raw, start, next_index, &local)
        .map_err(|why| Error::invalid_data(format!("{name} type info at {why}")))?;
    Ok(type_info)
}

/// The longest type meta body whose header fory's cache check skips
/// with a one-byte size (`0xff` means a varuint32 size follows).
const MAX_SHORT_META_BODY: usize = 254;

/// Looks back from the body about to be read for a type meta header with
/// the hash of `T`'s registered meta, and checks the meta it starts.
///
/// For a field of a user's struct, or the elements of a list, fory reads
/// the type info itself and calls [`Serializer::read_data`] or
/// `read_with_type_info`: the bytes of the type meta never reach
/// [`read_checked_type_info`]. In compatible mode they
/// immediately precede the body: `kind, marker, header (8 bytes), meta
/// body (size from the header)`. fory takes any meta whose header has the
/// registered 52-bit hash for `T` and skips its body unread. So every
/// 8-byte window that ends `size` bytes before the body and reads as a
/// header with that hash and that size (for every one-byte size) must be
/// followed by exactly the registered meta body.
///
/// Validated data cannot look like such a header, and a type meta that is
/// a back-reference, or a body that follows another body in a list,
/// carries no header in the window, so the check never refuses a message
/// fory wrote. What it cannot see: a meta with a header in the extended
/// size form (size byte `0xff`, a varuint32 after the header), which
/// hydron's metas (9 bytes) never use; `docs/fuzzing.md` lists it.
fn check_meta_before<T: StructSerializer>(context: &ReadContext, name: &str) -> Result<(), Error> {
    let cursor = context.reader.get_cursor();
    let local = context.get_provider_type_info(&std::any::TypeId::of::<T>())?;
    let def = local.get_type_def();
    let Some(header) = def.first_chunk::<8>() else {
        return Ok(());
    };
    let hash = |h: &[u8; 8]| i64::from_le_bytes(*h) >> META_HASH_SHIFT;
    let local_hash = hash(header);
    let window = context
        .reader
        .sub_slice(cursor.saturating_sub(8 + MAX_SHORT_META_BODY), cursor)?;
    for size in 0..=MAX_SHORT_META_BODY.min(window.len().saturating_sub(8)) {
        let at = window.len() - 8 - size;
        let Some(found) = window[at..].first_chunk::<8>() else {
            continue;
        };
        if usize::from(found[0]) == size && hash(found) == local_hash && window[at..] != def[..] {
            let start = cursor - (window.len() - at);
            return Err(Error::invalid_data(format!(
                "{name} type info at {}",
                meta_differs(&window[at..], &def, start)
            )));
        }
    }
    Ok(())
}

/// The bits of a type meta header below its 52-bit hash (fory's
/// `TYPE_META_HASH_SHIFT`).
const META_HASH_SHIFT: u32 = 12;

/// Checks `raw`, which starts at byte `start` of the input (a type kind
/// byte, a varuint32 meta marker, then, for a new meta, the meta), against
/// the registered type `local`; a new meta must be number `next_index`.
fn check_type_meta(
    raw: &[u8],
    start: usize,
    next_index: usize,
    local: &TypeInfo,
) -> Result<(), String> {
    let kind = struct_::actual_type_id(0, local.is_registered_by_name(), true);
    match raw.first() {
        Some(&found) if u32::from(found) == kind => {}
        Some(&found) => {
            return Err(format!(
                "byte {start}: fory type kind {found}, expected {kind} (a compatible struct)"
            ))
        }
        None => return Err(format!("byte {start}: no fory type kind")),
    }
    let (marker, at) = wire::read_varuint32(raw, 1, "the type meta marker")
        .map_err(|e| format!("byte {}: {e}", start + 1))?;
    if marker & 1 == 1 {
        return Ok(());
    }
    // fory numbers the metas of a message 0, 1, 2, … in the order they
    // appear, and ignores the number of a new one; fory's writers never
    // skip a number.
    if marker as usize != next_index << 1 {
        return Err(format!(
            "byte {}: type meta marker {marker:#x} is not {:#x}, the marker of the next new \
             type meta (number {next_index})",
            start + 1,
            next_index << 1
        ));
    }
    let def = local.get_type_def();
    if raw[at..] != def[..] {
        return Err(meta_differs(&raw[at..], &def, start + at));
    }
    Ok(())
}

/// Says where `meta`, found at byte `start`, first differs from `def`.
#[cold]
fn meta_differs(meta: &[u8], def: &[u8], start: usize) -> String {
    let first = meta.iter().zip(def).take_while(|(a, b)| a == b).count();
    format!(
        "byte {}: the type meta differs from the registered one ({} bytes from byte {start}): \
         it names another type id, type name, field name or field type",
        start + first,
        def.len(),
    )
}

/// The fory traits for a struct type with a hand-written body. The bodies
/// of `write`, `read` and `read_with_type_info` follow those fory's derive
/// generates for every struct (reference flag, type info, body), but are
/// stricter: a null reference flag is an error instead of the default
/// value ([`read_ref_flag`]), and the type meta is checked byte for byte
/// ([`read_checked_type_info`]).
macro_rules! fory_struct {
    ($ty:ident, $schema:ty, $index:expr) => {
        impl StructSerializer for $ty {
            #[inline(always)]
            fn type_index() -> u32 {
                $index
            }

            fn sorted_field_names() -> &'static [&'static str] {
                <$schema as StructSerializer>::sorted_field_names()
            }

            fn fields_info(type_resolver: &TypeResolver) -> Result<Vec<FieldInfo>, Error> {
                <$schema as StructSerializer>::fields_info(type_resolver)
            }

            fn variants_fields_info(
                _type_resolver: &TypeResolver,
            ) -> Result<Vec<(String, std::any::TypeId, Vec<FieldInfo>)>, Error> {
                Ok(Vec::new())
            }

            #[inline(never)]
            fn read_compatible(
                context: &mut ReadContext,
                type_info: &Rc<TypeInfo>,
            ) -> Result<$ty, Error> {
                if type_info.has_exact_local_schema() {
                    return read_data(context, stringify!($ty));
                }
                Err(Error::type_error(format!(
                    "{}: the sender's fields differ from hydron's ({:?}); \
                     schema evolution is not supported for this type",
                    stringify!($ty),
                    <Self as StructSerializer>::sorted_field_names(),
                )))
            }

            fn read_compatible_arc_any(
                context: &mut ReadContext,
                type_info: &Rc<TypeInfo>,
            ) -> Result<Arc<dyn std::any::Any + Send + Sync>, Error> {
                Ok(Arc::new(<Self as StructSerializer>::read_compatible(
                    context, type_info,
                )?))
            }
        }

        impl Serializer for $ty {
            type Target = $ty;

            // Every body starts with a length varint.
            const READ_DATA_ALWAYS_ADVANCES: bool = true;

            #[inline]
            fn write_data(value: &$ty, context: &mut WriteContext) -> Result<(), Error> {
                write_data(value, context)
            }

            #[inline]
            fn read_data(context: &mut ReadContext) -> Result<$ty, Error> {
                read_data(context, stringify!($ty))
            }

            #[inline]
            fn default_value(_context: &mut ReadContext) -> Result<$ty, Error> {
                Ok($ty::default())
            }

            #[inline]
            fn write(
                value: &$ty,
                context: &mut WriteContext,
                ref_mode: RefMode,
                write_type_info: bool,
            ) -> Result<(), Error> {
                match ref_mode {
                    RefMode::None => {}
                    RefMode::NullOnly => context.writer.write_i8(RefFlag::NotNullValue as i8),
                    RefMode::Tracking => {
                        context.writer.write_i8(RefFlag::RefValue as i8);
                        context.ref_writer.reserve_ref_id();
                    }
                }
                if write_type_info {
                    <Self as Serializer>::write_type_info(context)?;
                }
                <Self as Serializer>::write_data(value, context)
            }

            #[inline]
            fn read(
                context: &mut ReadContext,
                ref_mode: RefMode,
                read_type_info: bool,
            ) -> Result<$ty, Error> {
                read_ref_flag(context, ref_mode, stringify!($ty))?;
                if context.is_compatible() {
                    let type_info = if read_type_info {
                        read_checked_type_info::<Self>(context, stringify!($ty))?
                    } else {
                        context.get_provider_type_info(&std::any::TypeId::of::<Self>())?
                    };
                    <Self as StructSerializer>::read_compatible(context, &type_info)
                } else {
                    if read_type_info {
                        <Self as Serializer>::read_type_info(context)?;
                    }
                    <Self as Serializer>::read_data(context)
                }
            }

            #[inline]
            fn read_with_type_info(
                context: &mut ReadContext,
                ref_mode: RefMode,
                type_info: &Rc<TypeInfo>,
            ) -> Result<$ty, Error> {
                read_ref_flag(context, ref_mode, stringify!($ty))?;
                if context.is_compatible() {
                    <Self as StructSerializer>::read_compatible(context, type_info)
                } else {
                    <Self as Serializer>::read_data(context)
                }
            }

            #[inline]
            fn write_type_info(context: &mut WriteContext) -> Result<(), Error> {
                struct_::write_type_info_fast::<Self>(context)
            }

            #[inline]
            fn read_type_info(context: &mut ReadContext) -> Result<(), Error> {
                struct_::read_type_info_fast::<Self>(context)
            }

            #[inline]
            fn static_type_id() -> TypeId {
                TypeId::STRUCT
            }

            #[inline]
            fn reserved_space() -> usize {
                5
            }

            fn read_arc_any(
                context: &mut ReadContext,
            ) -> Result<Arc<dyn std::any::Any + Send + Sync>, Error> {
                Ok(Arc::new(<Self as Serializer>::read_data(context)?))
            }
        }
    };
}

fory_struct!(Gf8Batch, schema::Gf8Batch, GF8_BATCH_TYPE_INDEX);
fory_struct!(E8Codes, schema::E8Codes, E8_CODES_TYPE_INDEX);
