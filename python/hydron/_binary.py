"""The binary form: a header, chunks of fory ``Gf8Batch`` messages, a
trailer, each part with its CRC-32 (``docs/format.md``, section 3.2)."""

from __future__ import annotations

import struct
from typing import Iterator

import numpy as np

from . import fory as _fory
from ._container import (MAGIC, MAX_CHUNK_VECTORS, VERSION, Input, crc32, truncated)
from .errors import CorruptError, HydronError, Section, UnsupportedVersionError
from .policy import Policy, apply_policy

_HEADER_LEN = 20
_FRAME_LEN = 24
_CHUNK_TAG = b"CHNK"
_TRAILER_TAG = b"TAIL"
# A payload is 32 bytes per vector plus a fory header of a few dozen bytes.
_MAX_PAYLOAD_OVERHEAD = 4096


def _header(chunk_vectors: int) -> bytes:
    body = MAGIC + struct.pack("<HHI", VERSION, 0, chunk_vectors)
    return body + struct.pack("<I", crc32(body))


def _frame(tag: bytes, fmt: str, *fields: int) -> bytes:
    body = tag + struct.pack(fmt, *fields)
    return body + struct.pack("<I", crc32(body))


class Encoder:
    """Writes the binary form through ``sink``, one chunk at a time."""

    def __init__(self, sink, chunk_vectors: int):
        self.sink = sink
        self.chunk_vectors = chunk_vectors
        self.pending: list[np.ndarray] = []
        self.pending_len = 0
        self.chunks = 0
        self.vectors = 0
        sink(_header(chunk_vectors))

    def write(self, arr: np.ndarray) -> None:
        while len(arr):
            take = min(len(arr), self.chunk_vectors - self.pending_len)
            self.pending.append(arr[:take])
            self.pending_len += take
            arr = arr[take:]
            if self.pending_len == self.chunk_vectors:
                self._emit()

    def _emit(self) -> None:
        chunk = self.pending[0] if len(self.pending) == 1 else np.concatenate(self.pending)
        self.pending, self.pending_len = [], 0
        payload = _fory.encode_batch(chunk, policy=Policy.TRUSTED)
        frame = _frame(_CHUNK_TAG, "<QII", self.chunks, len(chunk), len(payload))
        self.sink(frame)
        self.sink(payload)
        self.sink(struct.pack("<I", crc32(payload, crc32(frame))))
        self.chunks += 1
        self.vectors += len(chunk)

    @property
    def written(self) -> int:
        """Vectors written so far, pending ones included."""
        return self.vectors + self.pending_len

    def finish(self) -> None:
        if self.pending_len:
            self._emit()
        self.sink(_frame(_TRAILER_TAG, "<QQ", self.chunks, self.vectors))


def _crc_problem(data: bytes, at: int) -> str | None:
    stored = struct.unpack_from("<I", data, at)[0]
    computed = crc32(data[:at])
    if stored != computed:
        return f"checksum mismatch (stored {stored:08x}, computed {computed:08x})"
    return None


def chunks(inp: Input, policy: Policy) -> Iterator[np.ndarray]:
    h = inp.read(_HEADER_LEN)
    if len(h) < _HEADER_LEN:
        raise truncated(inp.offset, Section.HEADER)

    def corrupt_header(detail: str) -> CorruptError:
        return CorruptError(Section.HEADER, 0, detail)

    if h[:8] != MAGIC:
        raise corrupt_header("bad magic bytes")
    problem = _crc_problem(h, 16)
    if problem:
        raise corrupt_header(problem)
    version, flags, max_count = struct.unpack_from("<HHI", h, 8)
    if version != VERSION:
        raise UnsupportedVersionError(version, VERSION)
    if flags:
        raise corrupt_header(f"reserved flags are {flags:#06x}, must be 0")
    if not 1 <= max_count <= MAX_CHUNK_VECTORS:
        raise corrupt_header(f"chunk size {max_count} is outside 1..={MAX_CHUNK_VECTORS}")

    k = 0
    total = 0
    while True:
        start = inp.offset
        frame = inp.read(_FRAME_LEN)
        if len(frame) < _FRAME_LEN:
            section = Section.TRAILER if _TRAILER_TAG.startswith(frame[:4]) else Section.chunk(k)
            raise truncated(inp.offset, section)
        tag = frame[:4]
        if tag == _TRAILER_TAG:
            problem = _crc_problem(frame, 20)
            if problem:
                raise CorruptError(Section.TRAILER, start, problem)
            chunks, vectors = struct.unpack_from("<QQ", frame, 4)
            if (chunks, vectors) != (k, total):
                raise CorruptError(Section.TRAILER, start,
                                   f"the trailer counts {chunks} chunks and {vectors} vectors, "
                                   f"the file holds {k} and {total}")
            extra = inp.rest_len()
            if extra:
                raise CorruptError(Section.TRAILER, start + _FRAME_LEN,
                                   f"{extra} unexpected bytes after the trailer")
            return
        if tag != _CHUNK_TAG:
            left = inp.left()
            at_end = left == 0 if left is not None else not inp.read(1)
            raise CorruptError(Section.TRAILER if at_end else Section.chunk(k), start,
                               "unknown frame tag " + " ".join(f"{b:02x}" for b in tag)
                               + ' (expected "CHNK" or "TAIL")')

        def corrupt(offset: int, detail: str) -> CorruptError:
            return CorruptError(Section.chunk(k), offset, detail)

        problem = _crc_problem(frame, 20)
        if problem:
            raise corrupt(start, f"frame header {problem}")
        index, count, payload_len = struct.unpack_from("<QII", frame, 4)
        if index != k:
            raise corrupt(start, f"the frame says chunk {index}, expected chunk {k} "
                                 f"(a chunk is missing or out of place)")
        if not 1 <= count <= max_count:
            raise corrupt(start, f"vector count {count} is outside 1..={max_count}")
        if not 32 * count <= payload_len <= 32 * count + _MAX_PAYLOAD_OVERHEAD:
            raise corrupt(start, f"payload length {payload_len} does not fit {count} vectors")
        left = inp.left()
        if left is not None and left < payload_len + 4:
            raise truncated(inp.size, Section.chunk(k))
        body = inp.read(payload_len + 4)  # bounded: at most 32 MiB + 4 KiB
        if len(body) < payload_len + 4:
            raise truncated(inp.offset, Section.chunk(k))
        payload = memoryview(body)[:payload_len]
        stored = struct.unpack_from("<I", body, payload_len)[0]
        computed = crc32(payload, crc32(frame))
        if stored != computed:
            raise corrupt(start, f"checksum mismatch (stored {stored:08x}, computed {computed:08x})")
        try:
            coords = _fory.batch_coordinates(payload)
        except HydronError as e:
            raise corrupt(start + _FRAME_LEN, f"the payload is not a valid fory batch: {e}") from None
        if len(coords) != count:
            raise corrupt(start + _FRAME_LEN,
                          f"the payload holds {len(coords)} vectors, the frame says {count}")
        chunk = apply_policy(coords.astype(np.float32), policy, first_index=total)
        k += 1
        total += count
        yield chunk


