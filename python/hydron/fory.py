"""Fory messages: a batch of vectors (``Gf8Batch``), one vector (``Gf8``),
E8 root codes (``E8Codes``), byte for byte as hydron's Rust codec and
pyfory 1.7.7 (xlang, compatible mode) write them.

Encoding goes through pyfory itself, with the types registered under
hydron's ids (2400, 2401, 2402), so the bytes are by construction what
generic fory writes; ``tests/golden/`` and the Rust interop tests prove that
they equal the Rust encoder's bytes. Decoding checks every framing byte by
hand first (pyfory's own reader ignores trailing bytes and silently
truncates oversized length prefixes), then copies the numbers out and
applies the :class:`~hydron.policy.Policy`. The byte layout is in
``docs/format.md`` ("Fory messages").
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pyfory
from pyfory.serializer import Serializer

from .errors import FormatError, HydronError, InvalidVectorError, TruncatedError
from .policy import Policy, apply_policy

__all__ = [
    "GF8_TYPE_ID", "GF8_BATCH_TYPE_ID", "E8_CODES_TYPE_ID", "MAX_BATCH_LEN", "MAX_CODES_LEN",
    "GF8_MESSAGE_LEN", "Gf8", "Gf8Batch", "E8Codes", "register", "make_fory",
    "encode_batch", "decode_batch", "encode_gf8", "decode_gf8", "encode_codes", "decode_codes",
    "as_vectors", "batch_coordinates", "E8_ROOTS", "codes_to_vectors",
]

GF8_TYPE_ID = 2400
GF8_BATCH_TYPE_ID = 2401
E8_CODES_TYPE_ID = 2402
#: The most vectors a batch message holds: its byte length 32·N is a varuint32.
MAX_BATCH_LEN = (2**32 - 1) // 32
#: The most codes a codes message holds.
MAX_CODES_LEN = 2**32 - 1
#: The length of a single-vector message.
GF8_MESSAGE_LEN = 37

# Fixed bytes of each message (byte 0, the header bitmap, may also be 0x00).
_BATCH_COMPATIBLE = bytes.fromhex("01ff1c00091059dbcf8d665cc1e1124c37540ba124")
_BATCH_SCHEMA = bytes.fromhex("01ff1be1121889ec36")
_CODES_COMPATIBLE = bytes.fromhex("01ff1c000990e0fa6bb7a53bc1e2124c3089c32480")
_CODES_SCHEMA = bytes.fromhex("01ff1be212ba8e0319")
_GF8_PREFIX = bytes.fromhex("01ff1fe012")
# Where the type id sits in each prefix (for a clearer error).
_TYPE_ID_AT = {_BATCH_COMPATIBLE: 13, _BATCH_SCHEMA: 3, _CODES_COMPATIBLE: 13,
               _CODES_SCHEMA: 3, _GF8_PREFIX: 3}
_KNOWN = [(_BATCH_COMPATIBLE, "a Gf8Batch message"), (_BATCH_SCHEMA, "a Gf8Batch message"),
          (_CODES_COMPATIBLE, "an E8Codes message"), (_CODES_SCHEMA, "an E8Codes message"),
          (_GF8_PREFIX, "a single Gf8 message")]


@dataclass
class Gf8Batch:
    """The fory struct of a batch: ``values`` holds the 8·N coordinates."""

    values: pyfory.NDArray[pyfory.Float32] = None


@dataclass
class E8Codes:
    """The fory struct of E8 codes: one uint8 code (0..240) per vector."""

    codes: pyfory.NDArray[pyfory.UInt8] = None


class Gf8:
    """One vector as a fory EXT value (type id 2400): ``coords`` holds its 8
    float32 coordinates."""

    __slots__ = ("coords",)

    def __init__(self, coords):
        self.coords = np.asarray(coords, dtype="<f4")

    def __repr__(self) -> str:
        return f"Gf8({self.coords.tolist()})"


class Gf8Serializer(Serializer):
    """pyfory serializer of :class:`Gf8`: the 32 bytes of the coordinates."""

    def write(self, ctx, value):
        coords = np.ascontiguousarray(value.coords, dtype="<f4")
        if coords.shape != (8,):
            raise HydronError(f"a Gf8 has 8 coordinates, got shape {coords.shape}")
        ctx.write_bytes(coords.tobytes())

    def read(self, ctx):
        return Gf8(np.frombuffer(ctx.read_bytes(32), dtype="<f4").copy())


def register(fory: pyfory.Fory) -> None:
    """Registers :class:`Gf8`, :class:`Gf8Batch` and :class:`E8Codes` with
    hydron's type ids, so that ``fory`` reads and writes them (also as
    fields of your own dataclasses) as Rust's ``hydron_codec::fory::register``
    does."""
    fory.register_type(Gf8, type_id=GF8_TYPE_ID,
                       serializer=Gf8Serializer(fory.type_resolver, Gf8))
    fory.register_type(Gf8Batch, type_id=GF8_BATCH_TYPE_ID)
    fory.register_type(E8Codes, type_id=E8_CODES_TYPE_ID)


def make_fory(compatible: bool = True) -> pyfory.Fory:
    """A new xlang ``pyfory.Fory`` with hydron's types registered."""
    fory = pyfory.Fory(xlang=True, compatible=compatible)
    register(fory)
    return fory


_local = threading.local()


def _fory() -> pyfory.Fory:
    """This thread's encoder (a ``Fory`` is not thread-safe)."""
    fory = getattr(_local, "fory", None)
    if fory is None:
        fory = _local.fory = make_fory(True)
    return fory


def as_vectors(vectors, *, what: str = "vectors") -> np.ndarray:
    """``vectors`` as a C-contiguous little-endian float32 array of shape
    (N, 8) (a view when it already is one)."""
    arr = np.asarray(vectors)
    if arr.ndim == 1 and arr.size == 0:
        arr = arr.reshape(0, 8)
    if arr.ndim != 2 or arr.shape[1] != 8:
        raise HydronError(f"{what} must have shape (N, 8), got {arr.shape}")
    return np.ascontiguousarray(arr, dtype="<f4")


# ---------------------------------------------------------------- encoding


def encode_batch(vectors, *, policy: Policy | str = Policy.STRICT) -> bytes:
    """The ``Gf8Batch`` message of an (N, 8) array of vectors.

    The vectors are checked first by ``policy`` (by default invalid vectors
    raise :class:`InvalidVectorError`; ``"renormalize"`` writes them
    normalized; ``"trusted"`` writes any numbers).

    >>> import numpy as np
    >>> msg = encode_batch(np.eye(8, dtype=np.float32)[:1])
    >>> len(msg), msg[:3].hex()
    (54, '01ff1c')
    """
    arr = as_vectors(vectors)
    if len(arr) > MAX_BATCH_LEN:
        raise HydronError(f"a batch message holds at most {MAX_BATCH_LEN} vectors, got {len(arr)}")
    if Policy.of(policy) is Policy.RENORMALIZE:
        arr = arr.copy()
    apply_policy(arr, policy)
    return _fory().serialize(Gf8Batch(arr.reshape(-1)))


def encode_gf8(vector, *, policy: Policy | str = Policy.STRICT) -> bytes:
    """The 37-byte ``Gf8`` message of one vector (8 coordinates).

    >>> encode_gf8([0, 0.6, 0.8, 0, 0, 0, 0, 0]).hex()[:10]
    '01ff1fe012'
    """
    arr = np.asarray(vector, dtype="<f4")
    if arr.shape != (8,):
        raise HydronError(f"a vector must have shape (8,), got {arr.shape}")
    arr = apply_policy(arr.reshape(1, 8).copy(), policy)[0]
    return _fory().serialize(Gf8(arr))


def encode_codes(codes) -> bytes:
    """The ``E8Codes`` message of E8 root codes (integers in 0..240).

    >>> encode_codes([0, 239])[-3:].hex()
    '0200ef'
    """
    arr = np.asarray(codes)
    if arr.ndim != 1:
        raise HydronError(f"codes must be one-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise HydronError(f"codes must be integers, got dtype {arr.dtype}")
    if len(arr) > MAX_CODES_LEN:
        raise HydronError(f"a codes message holds at most {MAX_CODES_LEN} codes, got {len(arr)}")
    bad = np.flatnonzero((arr < 0) | (arr >= 240)) if arr.size else arr
    if len(bad):
        i = int(bad[0])
        raise InvalidVectorError(i, f"E8 root code {int(arr[i])} is out of range (0..240)",
                                 code=int(arr[i]))
    return _fory().serialize(E8Codes(np.ascontiguousarray(arr, dtype=np.uint8)))


# ---------------------------------------------------------------- decoding


def _view(data) -> memoryview:
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"expected bytes-like data, got {type(data).__name__}") from None
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def _check_prefix(buf: memoryview, prefixes: list[bytes], what: str) -> bytes:
    """Which of ``prefixes`` (same first two bytes) ``buf`` starts with;
    byte 0 may be 0x00 (native mode) or 0x01 (xlang)."""
    n = len(buf)
    if n == 0:
        raise TruncatedError(f"input ends early: {what} is empty", offset=0)
    if buf[0] not in (0x00, 0x01):
        raise FormatError(
            f"byte offset 0: found 0x{buf[0]:02x}, expected 0x01 (fory xlang header): "
            f"not a fory message", offset=0)
    best, best_at = None, -1
    for p in prefixes:
        at = next((i for i in range(1, min(n, len(p))) if buf[i] != p[i]), None)
        if at is None:
            if n < len(p):
                raise TruncatedError(
                    f"input ends early: {what} needs {len(p)} header bytes, only {n} remain",
                    offset=0)
            return p
        if at > best_at:
            best, best_at = p, at
    found = buf[best_at]
    hint = ""
    for known, name in _KNOWN:
        if known is not best and n >= len(known) and bytes(buf[1:len(known)]) == known[1:]:
            hint = f" (this is {name})"
    tid = _TYPE_ID_AT[best]
    if tid <= best_at < tid + 2:
        raise FormatError(f"byte offset {best_at}: wrong fory type id, found byte 0x{found:02x}, "
                          f"expected 0x{best[best_at]:02x} ({what}){hint}", offset=best_at)
    raise FormatError(f"byte offset {best_at}: found 0x{found:02x}, expected 0x{best[best_at]:02x} "
                      f"({what} header){hint}", offset=best_at)


def _varuint32(buf: memoryview, at: int, what: str) -> tuple[int, int]:
    """Reads a canonical varuint32 at ``at``; returns (value, next offset)."""
    value = 0
    for i in range(5):
        if at + i >= len(buf):
            raise TruncatedError(f"input ends early: the length of {what} at byte offset {at} "
                                 f"is cut off after {i} bytes", offset=at)
        b = buf[at + i]
        if i == 4 and b > 0x0F:
            raise FormatError(f"byte offset {at}: the varuint32 length of {what} does not fit "
                              f"in 32 bits", offset=at)
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            if b == 0 and i > 0:
                raise FormatError(f"byte offset {at}: the varuint32 length of {what} is not in "
                                  f"its shortest form", offset=at)
            return value, at + i + 1
    raise AssertionError("unreachable")  # pragma: no cover


def _sized_tail(buf: memoryview, at: int, length: int, what: str) -> None:
    left = len(buf) - at
    if length > left:
        raise TruncatedError(f"input ends early: {what} at byte offset {at} needs {length} bytes, "
                             f"only {left} remain", offset=at)
    if length < left:
        raise FormatError(f"{left - length} trailing bytes after the end of the message at byte "
                          f"offset {at + length}", offset=at + length)


def batch_coordinates(data) -> np.ndarray:
    """The (N, 8) float32 coordinates of a ``Gf8Batch`` message, framing
    checked, numbers not (a read-only view into ``data``)."""
    buf = _view(data)
    prefix = _check_prefix(buf, [_BATCH_COMPATIBLE, _BATCH_SCHEMA], "a Gf8Batch message")
    length, at = _varuint32(buf, len(prefix), "the float32 array")
    if length % 4:
        raise FormatError(f"byte offset {len(prefix)}: the float32 array's byte length {length} "
                          f"is not a multiple of 4", offset=len(prefix))
    if length % 32:
        raise FormatError(f"byte offset {len(prefix)}: the float32 array holds {length // 4} "
                          f"numbers, not a multiple of 8 (whole vectors)", offset=len(prefix))
    _sized_tail(buf, at, length, "the float32 array")
    return np.frombuffer(buf, dtype="<f4", count=length // 4, offset=at).reshape(-1, 8)


def decode_batch(data, *, policy: Policy | str = Policy.STRICT) -> np.ndarray:
    """Decodes a ``Gf8Batch`` message (compatible or schema-consistent mode)
    into a new (N, 8) float32 array, checked by ``policy``.

    Raises :class:`FormatError`, :class:`TruncatedError` or
    :class:`InvalidVectorError`.

    >>> import numpy as np
    >>> v = np.zeros((3, 8), dtype=np.float32); v[:, 1] = 1
    >>> bool((decode_batch(encode_batch(v)) == v).all())
    True
    """
    return apply_policy(batch_coordinates(data).astype(np.float32), policy)


def decode_gf8(data, *, policy: Policy | str = Policy.STRICT) -> np.ndarray:
    """Decodes a 37-byte ``Gf8`` message into a float32 array of shape (8,).

    >>> decode_gf8(encode_gf8([0, 0, 1, 0, 0, 0, 0, 0])).tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    buf = _view(data)
    prefix = _check_prefix(buf, [_GF8_PREFIX], "a Gf8 message")
    _sized_tail(buf, len(prefix), 32, "the 8 coordinates")
    row = np.frombuffer(buf, dtype="<f4", count=8, offset=len(prefix)).astype(np.float32)
    return apply_policy(row.reshape(1, 8), policy)[0]


def decode_codes(data) -> np.ndarray:
    """Decodes an ``E8Codes`` message into a new uint8 array; a code >= 240
    raises :class:`InvalidVectorError` naming its index.

    >>> decode_codes(encode_codes([0, 1, 239])).tolist()
    [0, 1, 239]
    """
    buf = _view(data)
    prefix = _check_prefix(buf, [_CODES_COMPATIBLE, _CODES_SCHEMA], "an E8Codes message")
    length, at = _varuint32(buf, len(prefix), "the uint8 array")
    _sized_tail(buf, at, length, "the uint8 array")
    codes = np.frombuffer(buf, dtype=np.uint8, count=length, offset=at).copy()
    bad = np.flatnonzero(codes >= 240)
    if bad.size:
        i = int(bad[0])
        raise InvalidVectorError(i, f"E8 root code {int(codes[i])} is out of range (0..240)",
                                 code=int(codes[i]))
    return codes


# ---------------------------------------------------------------- E8 roots


def _build_roots() -> np.ndarray:
    inv_sqrt_2 = np.float32(0.70710677)  # f32::consts::FRAC_1_SQRT_2
    inv_sqrt_8 = np.float32(0.35355338)
    roots = np.zeros((240, 8), dtype=np.float32)
    code = 0
    for i in range(8):
        for j in range(i + 1, 8):
            for signs in range(4):
                roots[code, i] = -inv_sqrt_2 if signs & 1 else inv_sqrt_2
                roots[code, j] = -inv_sqrt_2 if signs & 2 else inv_sqrt_2
                code += 1
    for half in range(128):
        mask = (half << 1) | (bin(half).count("1") & 1)
        roots[112 + half] = [-inv_sqrt_8 if mask >> k & 1 else inv_sqrt_8 for k in range(8)]
    roots.setflags(write=False)
    return roots


#: The 240 unit E8 roots in code order (bit for bit hydron-core's ``E8_ROOTS``).
E8_ROOTS = _build_roots()


def codes_to_vectors(codes) -> np.ndarray:
    """The unit vectors of E8 root codes: an (N, 8) float32 array.

    >>> codes_to_vectors([0])[0, :2].tolist() == [np.float32(0.70710677)] * 2
    True
    """
    arr = np.asarray(codes)
    if arr.size and (arr.min() < 0 or arr.max() >= 240):
        i = int(np.flatnonzero((arr < 0) | (arr >= 240))[0])
        raise InvalidVectorError(i, f"E8 root code {int(arr[i])} is out of range (0..240)",
                                 code=int(arr[i]))
    return E8_ROOTS[arr.astype(np.intp)]
