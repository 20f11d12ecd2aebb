"""An independent reading of hydron's binary formats in plain Python
(struct, zlib, numpy), straight from docs/format.md: a test oracle that pins
the spec, not a library. It trusts nothing it has not checked, but reports
only "bad" (AssertionError), not where: the native module does that.

- ``batch(data)``: a ``Gf8Batch`` fory message (§2.4), compatible or
  schema-consistent mode → ``(N, 8)`` float32.
- ``codes(data)``: an ``E8Codes`` message (§2.5) → uint8.
- ``container(data)``: the binary file form (§3.2) → ``(N, 8)`` float32 and
  the chunk sizes.
- ``write_container(vectors, chunk_vectors)``: the binary file form written
  from the same sections (the golden bytes of
  ``hydron-codec/tests/file_golden.rs`` are checked against it).
"""

import struct
import zlib

import numpy as np

BATCH = [bytes.fromhex("01ff1c00091059dbcf8d665cc1e1124c37540ba124"), bytes.fromhex("01ff1be1121889ec36")]
CODES = [bytes.fromhex("01ff1c000990e0fa6bb7a53bc1e2124c3089c32480"), bytes.fromhex("01ff1be212ba8e0319")]


def _varuint32(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(5):
        b = data[at + i]
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            assert i == 0 or b != 0, "varuint32 not in shortest form"
            assert value < 2**32
            return value, at + i + 1
    raise AssertionError("varuint32 longer than 5 bytes")


def _payload(data: bytes, prefixes: list[bytes]) -> bytes:
    # Byte 0: 0x01 (xlang) or 0x00; the rest of the prefix is fixed.
    prefix = next(p for p in prefixes if data[1:len(p)] == p[1:])
    assert data[0] in (0, 1) and len(data) >= len(prefix)
    length, at = _varuint32(data, len(prefix))
    assert len(data) - at == length, "length prefix does not match the bytes"
    return data[at:]


def batch(data: bytes) -> np.ndarray:
    payload = _payload(data, BATCH)
    assert len(payload) % 32 == 0
    return np.frombuffer(payload, "<f4").reshape(-1, 8).astype(np.float32)


def codes(data: bytes) -> np.ndarray:
    out = np.frombuffer(_payload(data, CODES), np.uint8).copy()
    assert (out < 240).all()
    return out


def container(data: bytes) -> tuple[np.ndarray, list[int]]:
    magic, version, flags, chunk_vectors, crc = struct.unpack_from("<8sHHII", data, 0)
    assert magic == b"\x89HYD\r\n\x1a\n" and zlib.crc32(data[:16]) == crc
    assert version == 1 and flags == 0 and 1 <= chunk_vectors <= 1 << 20
    at, parts, sizes = 20, [], []
    while data[at:at + 4] == b"CHNK":
        tag, index, count, length, frame_crc = struct.unpack_from("<4sQIII", data, at)
        assert zlib.crc32(data[at:at + 20]) == frame_crc and index == len(sizes)
        assert 1 <= count <= chunk_vectors and 32 * count <= length <= 32 * count + 4096
        end = at + 24 + length
        assert struct.unpack_from("<I", data, end)[0] == zlib.crc32(data[at:end])
        vectors = batch(data[at + 24:end])
        assert len(vectors) == count
        parts.append(vectors)
        sizes.append(count)
        at = end + 4
    tag, chunk_count, vector_count, crc = struct.unpack_from("<4sQQI", data, at)
    assert tag == b"TAIL" and zlib.crc32(data[at:at + 20]) == crc
    assert chunk_count == len(sizes) and vector_count == sum(sizes) and at + 24 == len(data)
    return (np.concatenate(parts) if parts else np.zeros((0, 8), np.float32)), sizes


def _varuint32_bytes(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def write_container(vectors: np.ndarray, chunk_vectors: int) -> bytes:
    """The binary file form (§3.2) of ``vectors`` with chunks of
    ``chunk_vectors``, written from the spec alone: the oracle's writer."""
    data = bytearray(struct.pack("<8sHHI", b"\x89HYD\r\n\x1a\n", 1, 0, chunk_vectors))
    data += struct.pack("<I", zlib.crc32(data))
    rows = np.ascontiguousarray(vectors, dtype="<f4").reshape(-1, 8)
    chunks = [rows[i:i + chunk_vectors] for i in range(0, len(rows), chunk_vectors)]
    for index, chunk in enumerate(chunks):
        raw = chunk.tobytes()
        message = BATCH[0] + _varuint32_bytes(len(raw)) + raw
        frame = bytearray(struct.pack("<4sQII", b"CHNK", index, len(chunk), len(message)))
        frame += struct.pack("<I", zlib.crc32(frame))
        frame += message
        data += frame + struct.pack("<I", zlib.crc32(frame))
    tail = struct.pack("<4sQQ", b"TAIL", len(chunks), len(rows))
    return bytes(data + tail + struct.pack("<I", zlib.crc32(tail)))
