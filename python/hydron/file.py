"""The hydron file container (``docs/format.md``, section 3): batches of
vectors on disk, chunked and checksummed, in a binary form (chunks of fory
``Gf8Batch`` messages) or a text form (JSON Lines with a header line,
checksum lines and an end line).

- :func:`save` / :func:`dumps` write a whole array; :class:`FileWriter`
  writes in pieces. Saving is atomic: a temporary file in the target's
  directory, ``fsync``, ``os.replace``, ``fsync`` of the directory.
- :func:`load` / :func:`loads` read a whole file (either form, detected from
  the content); :func:`iter_chunks` streams it, one chunk (one numpy array)
  at a time, in memory bounded by the chunk size.
- Every check of the Rust reader is made, in the same order: a flipped bit
  anywhere is a :class:`CorruptError` naming the header, chunk *k* or the
  trailer; a file cut short at any byte is a :class:`TruncatedError`; a
  foreign file is a :class:`FormatError`; the vectors are checked by the
  :class:`~hydron.policy.Policy` (:class:`InvalidVectorError`).
"""

from __future__ import annotations

import enum
import io
import itertools
import json as _stdjson
import os
import struct
import zlib
from typing import BinaryIO, Iterator

import numpy as np

from . import fory as _fory
from .errors import (CorruptError, FormatError, HydronError, InvalidVectorError, Section,
                     TruncatedError, UnsupportedVersionError)
from .json import format_row, overflow_error, parse_row, rows_to_f32
from .policy import Policy, _bad_rows, _row_error, apply_policy

__all__ = [
    "Format", "MAGIC", "TEXT_MAGIC", "VERSION", "DEFAULT_CHUNK_VECTORS", "MAX_CHUNK_VECTORS",
    "MAX_LINE_LEN", "FileWriter", "save", "dumps", "load", "loads", "iter_chunks",
    "detect_format",
]

#: The first 8 bytes of a binary file.
MAGIC = b"\x89HYD\r\n\x1a\n"
#: The start of a text file: its header line up to the version.
TEXT_MAGIC = b'{"format":"hydron-gf8-jsonl","version":'
#: The container version written and read.
VERSION = 1
#: Vectors per chunk unless told otherwise.
DEFAULT_CHUNK_VECTORS = 65_536
#: The largest chunk.
MAX_CHUNK_VECTORS = 1 << 20
#: The longest line of the text form (newline excluded).
MAX_LINE_LEN = 4096

_HEADER_LEN = 20
_FRAME_LEN = 24
_CHUNK_TAG = b"CHNK"
_TRAILER_TAG = b"TAIL"
_MAX_PAYLOAD_OVERHEAD = 4096
_HEAD_LEN = 64
_HEADER_CRC_LEN = len(',"crc32":"00000000"}')


class Format(str, enum.Enum):
    """The two forms of a hydron file. Functions also accept the strings
    ``"fory"`` and ``"jsonl"``."""

    #: Binary: chunks of fory batch messages. Compact and fast.
    FORY = "fory"
    #: Text: JSON Lines, one vector per line, with checksum lines.
    JSONL = "jsonl"

    @classmethod
    def of(cls, value: "Format | str") -> "Format":
        """The form named by ``value``."""
        try:
            return cls(value.lower() if isinstance(value, str) else value)
        except ValueError:
            raise ValueError(f"unknown format {value!r}: expected 'fory' or 'jsonl'") from None


def _check_chunk_vectors(n: int) -> int:
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_CHUNK_VECTORS:
        raise ValueError(f"chunk_vectors must be an integer in 1..={MAX_CHUNK_VECTORS}, got {n!r}")
    return int(n)


def _crc(data: bytes, crc: int = 0) -> int:
    return zlib.crc32(data, crc) & 0xFFFFFFFF


# ================================================================ writing


def _header(chunk_vectors: int) -> bytes:
    body = MAGIC + struct.pack("<HHI", VERSION, 0, chunk_vectors)
    return body + struct.pack("<I", _crc(body))


def _frame(tag: bytes, fmt: str, *fields: int) -> bytes:
    body = tag + struct.pack(fmt, *fields)
    return body + struct.pack("<I", _crc(body))


def _header_line(chunk_vectors: int) -> bytes:
    body = b'%s%d,"chunk_vectors":%d' % (TEXT_MAGIC, VERSION, chunk_vectors)
    return b'%s,"crc32":"%08x"}\n' % (body, _crc(body))


def _chunk_line(index: int, vectors: int, crc: int) -> bytes:
    return b'{"chunk":%d,"vectors":%d,"crc32":"%08x"}\n' % (index, vectors, crc)


def _end_line(chunks: int, vectors: int, crc: int) -> bytes:
    return b'{"end":true,"chunks":%d,"vectors":%d,"crc32":"%08x"}\n' % (chunks, vectors, crc)


class _BinaryEncoder:
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
        self.sink(struct.pack("<I", _crc(payload, _crc(frame))))
        self.chunks += 1
        self.vectors += len(chunk)

    def finish(self) -> None:
        if self.pending_len:
            self._emit()
        self.sink(_frame(_TRAILER_TAG, "<QQ", self.chunks, self.vectors))


class _TextEncoder:
    """Writes the text form through ``sink``, keeping the running CRC."""

    _BATCH = 4096

    def __init__(self, sink, chunk_vectors: int):
        self.sink = sink
        self.crc = 0
        self.chunk_vectors = chunk_vectors
        self.in_chunk = 0
        self.chunks = 0
        self.vectors = 0
        self._put(_header_line(chunk_vectors))

    def _put(self, data: bytes) -> None:
        self.crc = _crc(data, self.crc)
        self.sink(data)

    def write(self, arr: np.ndarray) -> None:
        finite = np.isfinite(arr).all(axis=1)
        if not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            err = _row_error(arr[i], self.vectors + self.in_chunk + i)
            raise InvalidVectorError(err.index, f"{err.reason}: JSON cannot hold it",
                                     coordinate=err.coordinate)
        while len(arr):
            take = min(len(arr), self.chunk_vectors - self.in_chunk, self._BATCH)
            text = "".join(format_row(row) + "\n" for row in arr[:take])
            self._put(text.encode("ascii"))
            self.in_chunk += take
            arr = arr[take:]
            if self.in_chunk == self.chunk_vectors:
                self._close_chunk()

    def _close_chunk(self) -> None:
        self._put(_chunk_line(self.chunks, self.in_chunk, self.crc))
        self.chunks += 1
        self.vectors += self.in_chunk
        self.in_chunk = 0

    def finish(self) -> None:
        if self.in_chunk:
            self._close_chunk()
        self._put(_end_line(self.chunks, self.vectors, self.crc))


def _encoder(sink, form: "Format | str", chunk_vectors: int):
    form = Format.of(form)
    cls = _BinaryEncoder if form is Format.FORY else _TextEncoder
    return cls(sink, _check_chunk_vectors(chunk_vectors))


def _prepare(vectors, policy: "Policy | str") -> np.ndarray:
    """Vectors as (N, 8) float32, checked (or renormalized) by ``policy``."""
    arr = _fory.as_vectors(vectors)
    if Policy.of(policy) is Policy.RENORMALIZE:
        arr = arr.copy()
    return apply_policy(arr, policy)


_temp_counter = itertools.count()


class FileWriter:
    """Writes a hydron file in pieces, atomically.

    Data goes to a temporary file ``.NAME.PID-N.tmp`` next to ``path``;
    :meth:`finish` writes the last chunk and the trailer, flushes it to disk
    (unless ``durable=False``) and renames it over ``path``. If anything
    fails, or the writer is closed or dropped without :meth:`finish`, the
    temporary file is removed and ``path`` is left as it was. As a context
    manager it finishes on a normal exit and aborts on an exception.

    Vectors are checked by ``policy`` as they are written (the default,
    ``"strict"``, raises :class:`InvalidVectorError` for invalid vectors, so
    no reader will reject the file).

    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "points.hyd")
    >>> with FileWriter(path, "fory", chunk_vectors=2) as w:
    ...     w.write(np.eye(8, dtype=np.float32)[:3])
    ...     w.write(np.zeros((1, 8), dtype=np.float32))
    >>> load(path).shape
    (4, 8)
    """

    def __init__(self, path, format: "Format | str" = Format.FORY, *,
                 chunk_vectors: int = DEFAULT_CHUNK_VECTORS, durable: bool = True,
                 policy: "Policy | str" = Policy.STRICT):
        self.path = os.fspath(path)
        self.format = Format.of(format)
        self.policy = Policy.of(policy)
        self.durable = durable
        _check_chunk_vectors(chunk_vectors)
        directory, name = os.path.split(os.path.abspath(self.path))
        self._dir = directory
        self._temp = os.path.join(directory, f".{name}.{os.getpid()}-{next(_temp_counter)}.tmp")
        fd = os.open(self._temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666)
        self._file: BinaryIO | None = os.fdopen(fd, "wb", buffering=1 << 16)
        try:
            self._encoder = _encoder(self._file.write, self.format, chunk_vectors)
        except BaseException:
            self.abort()
            raise

    @property
    def vectors(self) -> int:
        """How many vectors have been written."""
        e = self._encoder
        return e.vectors + (e.pending_len if isinstance(e, _BinaryEncoder) else e.in_chunk)

    def write(self, vectors) -> None:
        """Writes an (N, 8) array of vectors (chunks are cut at the chunk
        size whatever the sizes of the calls). After an error the writer is
        spent: the temporary file is removed."""
        if self._file is None:
            raise HydronError(f"{self.path}: the writer is closed")
        try:
            self._encoder.write(_prepare(vectors, self.policy))
        except BaseException:
            self.abort()
            raise

    def finish(self) -> None:
        """Completes the file and renames it over the target."""
        if self._file is None:
            raise HydronError(f"{self.path}: the writer is closed")
        try:
            self._encoder.finish()
            self._file.flush()
            if self.durable:
                os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            os.replace(self._temp, self.path)
        except BaseException:
            self.abort()
            raise
        self._temp = None
        if self.durable and os.name == "posix":
            fd = os.open(self._dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def abort(self) -> None:
        """Drops what was written: removes the temporary file (the target is
        untouched). Safe to call more than once."""
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
        if self._temp is not None:
            try:
                os.unlink(self._temp)
            except FileNotFoundError:
                pass
            self._temp = None

    close = abort

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.finish()
        else:
            self.abort()

    def __del__(self) -> None:
        if getattr(self, "_temp", None) is not None:
            self.abort()


def save(path, vectors, format: "Format | str" = Format.FORY, *,
         chunk_vectors: int = DEFAULT_CHUNK_VECTORS, durable: bool = True,
         policy: "Policy | str" = Policy.STRICT) -> None:
    """Saves an (N, 8) array of vectors to ``path``, atomically.

    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "points.jsonl")
    >>> save(path, np.eye(8, dtype=np.float32), "jsonl", chunk_vectors=4)
    >>> bool((load(path) == np.eye(8)).all())
    True
    """
    with FileWriter(path, format, chunk_vectors=chunk_vectors, durable=durable,
                    policy=policy) as w:
        w.write(vectors)


def dumps(vectors, format: "Format | str" = Format.FORY, *,
          chunk_vectors: int = DEFAULT_CHUNK_VECTORS,
          policy: "Policy | str" = Policy.STRICT) -> bytes:
    """The bytes of a whole hydron file holding ``vectors`` (what
    :func:`save` writes), byte-identical to Rust's ``file::to_vec``.

    >>> import numpy as np
    >>> print(dumps(np.zeros((1, 8), dtype=np.float32), "jsonl").decode(), end="")
    {"format":"hydron-gf8-jsonl","version":1,"chunk_vectors":65536,"crc32":"3f31e721"}
    [0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]
    {"chunk":0,"vectors":1,"crc32":"b4cf9f4b"}
    {"end":true,"chunks":1,"vectors":1,"crc32":"574ed82e"}
    """
    parts: list[bytes] = []
    encoder = _encoder(parts.append, format, chunk_vectors)
    encoder.write(_prepare(vectors, policy))
    encoder.finish()
    return b"".join(parts)


# ================================================================ reading


class _Input:
    """A binary stream with its offset, its size if known, and pushback."""

    def __init__(self, f: BinaryIO, size: int | None):
        self.f = f
        self.size = size
        self.offset = 0
        self.pushed = b""

    def left(self) -> int | None:
        return None if self.size is None else self.size - self.offset

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes (fewer only at the end of the data)."""
        out = self.pushed[:n]
        self.pushed = self.pushed[n:]
        parts = [out]
        got = len(out)
        while got < n:
            more = self.f.read(n - got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        data = b"".join(parts) if len(parts) > 1 else out
        self.offset += len(data)
        return data

    def readline(self, limit: int) -> bytes:
        """Up to and including the next newline, at most ``limit`` bytes."""
        if self.pushed:
            i = self.pushed.find(b"\n", 0, limit)
            if i >= 0 or len(self.pushed) >= limit:
                end = i + 1 if i >= 0 else limit
                data, self.pushed = self.pushed[:end], self.pushed[end:]
                self.offset += len(data)
                return data
            data, self.pushed = self.pushed, b""
            data += self.f.readline(limit - len(data))
        else:
            data = self.f.readline(limit)
        self.offset += len(data)
        return data

    def unread(self, data: bytes) -> None:
        self.pushed = data + self.pushed
        self.offset -= len(data)

    def rest_len(self) -> int:
        """How many bytes are left (reads them if the size is unknown)."""
        if self.size is not None:
            return self.size - self.offset
        n = 0
        while True:
            chunk = self.read(1 << 16)
            if not chunk:
                return n
            n += len(chunk)


def _near(head: bytes, magic: bytes) -> bool:
    """Whether ``head`` holds all of ``magic`` with at most 2 bits changed."""
    return len(head) >= len(magic) and sum(
        bin(a ^ b).count("1") for a, b in zip(head, magic)) <= 2


def _detect(head: bytes, whole: bool) -> Format:
    """The form of data starting with ``head`` (``whole``: that is all)."""
    if not head:
        raise FormatError("not a hydron file: it is empty", offset=0)
    if head.startswith(MAGIC):
        return Format.FORY
    if head.startswith(TEXT_MAGIC) or (whole and TEXT_MAGIC.startswith(head)):
        return Format.JSONL
    if whole and MAGIC.startswith(head):
        raise TruncatedError(f"truncated: the data ends at byte offset {len(head)}, in the header",
                             offset=len(head), section=Section.HEADER)
    if _near(head, MAGIC):
        raise CorruptError(Section.HEADER, 0, "the binary magic bytes are damaged")
    if _near(head, TEXT_MAGIC):
        raise CorruptError(Section.HEADER, 0, "the text header line is damaged")
    if head[:1] == b"{":
        raise FormatError("not a hydron file: it starts with '{' but its first line is not a "
                          "hydron header", offset=0)
    hint = ""
    if head.startswith(b"\x89PNG"):
        hint = " (a PNG image)"
    elif head[:1] == b"[":
        hint = " (a plain JSON array?)"
    elif head[:3] in (b"\x01\xff\x1c", b"\x01\xff\x1b", b"\x01\xff\x1f"):
        hint = " (a bare fory message? read it with hydron.decode_batch)"
    shown = " ".join(f"{b:02x}" for b in head[:8])
    raise FormatError(f"not a hydron file: it starts with {shown}{hint}", offset=0)


def _size_of(f) -> int | None:
    """Bytes left in a file object from its position, or None."""
    try:
        if not f.seekable():
            return None
        pos = f.tell()
        end = f.seek(0, io.SEEK_END)
        f.seek(pos)
        return end - pos
    except (AttributeError, OSError, ValueError):
        return None


def _open_input(f: BinaryIO, size: int | None) -> tuple[_Input, Format]:
    inp = _Input(f, size)
    head = inp.read(_HEAD_LEN)
    whole = len(head) < _HEAD_LEN or (size is not None and size == len(head))
    form = _detect(head, whole)
    inp.unread(head)
    return inp, form


# ---------------------------------------------------------------- binary


def _truncated(offset: int, section: Section) -> TruncatedError:
    return TruncatedError(f"truncated: the data ends at byte offset {offset}, in {section}",
                          offset=offset, section=section)


def _crc_problem(data: bytes, at: int) -> str | None:
    stored = struct.unpack_from("<I", data, at)[0]
    computed = _crc(data[:at])
    if stored != computed:
        return f"checksum mismatch (stored {stored:08x}, computed {computed:08x})"
    return None


def _binary_chunks(inp: _Input, policy: Policy) -> Iterator[np.ndarray]:
    h = inp.read(_HEADER_LEN)
    if len(h) < _HEADER_LEN:
        raise _truncated(inp.offset, Section.HEADER)

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
            raise _truncated(inp.offset, section)
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
            raise _truncated(inp.size, Section.chunk(k))
        body = inp.read(payload_len + 4)  # bounded: at most 32 MiB + 4 KiB
        if len(body) < payload_len + 4:
            raise _truncated(inp.offset, Section.chunk(k))
        payload = memoryview(body)[:payload_len]
        stored = struct.unpack_from("<I", body, payload_len)[0]
        computed = _crc(payload, _crc(frame))
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


# ---------------------------------------------------------------- text

_NEWLINE, _EOF, _UNTERMINATED, _TOO_LONG = range(4)


def _bit_distance(a: bytes, b: bytes) -> int:
    return sum(bin(x ^ y).count("1") for x, y in zip(a, b))


def _leading_number(s: bytes) -> tuple[int, bytes] | None:
    digits = len(s) - len(s.lstrip(b"0123456789"))
    if digits == 0 or digits > 19:
        return None
    return int(s[:digits]), s[digits:]


def _parse_header(line: bytes) -> int:
    def corrupt(detail: str) -> CorruptError:
        return CorruptError(Section.HEADER, 0, detail)

    if not line.startswith(TEXT_MAGIC):
        if _near(line, TEXT_MAGIC):
            raise corrupt("the header line is damaged")
        raise FormatError("not a hydron file: it starts with '{' but its first line is not a "
                          "hydron header", offset=0)
    split = len(line) - _HEADER_CRC_LEN
    if split < len(TEXT_MAGIC):
        raise corrupt("the header line is too short")
    body, end = line[:split], line[split:]
    hexdigits = end[len(b',"crc32":"'):-2]
    if (not end.startswith(b',"crc32":"') or not end.endswith(b'"}') or len(hexdigits) != 8
            or hexdigits.strip(b"0123456789abcdef")):
        raise corrupt("the header line does not end with its checksum")
    stored, computed = int(hexdigits, 16), _crc(body)
    if stored != computed:
        raise corrupt(f"checksum mismatch (stored {stored:08x}, computed {computed:08x})")
    parsed = _leading_number(body[len(TEXT_MAGIC):])
    if parsed is None:
        raise corrupt("the version is not a number")
    version, rest = parsed
    if version != VERSION:
        raise UnsupportedVersionError(min(version, 2**32 - 1), VERSION)
    parsed = (_leading_number(rest[len(b',"chunk_vectors":'):])
              if rest.startswith(b',"chunk_vectors":') else None)
    if parsed is None:
        raise corrupt("the header line is not canonical")
    chunk_vectors = parsed[0]
    if not 1 <= chunk_vectors <= MAX_CHUNK_VECTORS:
        raise corrupt(f"chunk size {chunk_vectors} is out of range")
    if line != _header_line(chunk_vectors)[:-1]:
        raise corrupt("the header line is not canonical")
    return chunk_vectors


def _explain_mismatch(line: bytes, k: int, n: int, chunks: int, vectors: int, crc: int) -> str:
    """Why a control line is not the one expected."""
    try:
        obj = _stdjson.loads(line)
    except ValueError:
        return "not a valid checksum or end line"
    if not isinstance(obj, dict):
        return "not a valid checksum or end line"
    computed = f"{crc:08x}"
    stored = obj.get("crc32")
    if isinstance(stored, str) and stored != computed:
        return f"checksum mismatch (stored {stored}, computed {computed})"
    if "chunk" in obj:
        if n == 0:
            return "a checksum line with no vector lines before it"
        if obj.get("chunk") != k:
            return f"the line says chunk {obj.get('chunk')!r}, expected chunk {k}"
        if obj.get("vectors") != n:
            return f"the line counts {obj.get('vectors')!r} vectors, {n} vector lines precede it"
    elif "end" in obj:
        if n > 0:
            return f"the end line follows {n} vectors without a checksum line"
        if obj.get("chunks") != chunks or obj.get("vectors") != vectors:
            return (f"the end line counts {obj.get('chunks')!r} chunks and "
                    f"{obj.get('vectors')!r} vectors, the file holds {chunks} and {vectors}")
    return "the line is not in canonical form"


class _TextDecoder:
    def __init__(self, inp: _Input, policy: Policy):
        self.inp = inp
        self.policy = policy
        self.crc = 0
        self.line_no = 0
        self.chunks = 0
        self.vectors = 0
        line, end, _start, _number, _crc_before = self._next_line()
        if end == _NEWLINE:
            self.chunk_vectors = _parse_header(line)
        elif end == _EOF:
            raise FormatError("not a hydron file: it is empty", offset=0)
        elif end == _TOO_LONG:
            raise CorruptError(Section.HEADER, 0,
                               f"the header line is longer than {MAX_LINE_LEN} bytes")
        elif TEXT_MAGIC.startswith(line) or line.startswith(TEXT_MAGIC):
            raise _truncated(inp.offset, Section.HEADER)
        else:
            raise FormatError("not a hydron file: it starts with '{' but its first line is not "
                              "a hydron header", offset=0)

    def _next_line(self) -> tuple[bytes, int, int, int, int]:
        """(content, how it ended, start offset, line number, CRC before)."""
        crc_before = self.crc
        start = self.inp.offset
        raw = self.inp.readline(MAX_LINE_LEN + 1)
        self.crc = _crc(raw, self.crc)
        if raw.endswith(b"\n"):
            line, end = raw[:-1], _NEWLINE
        elif not raw:
            return b"", _EOF, start, self.line_no, crc_before
        elif len(raw) <= MAX_LINE_LEN:
            line, end = raw, _UNTERMINATED
        else:
            # Too long: skip to the next newline without keeping it.
            while True:
                more = self.inp.readline(1 << 16)
                self.crc = _crc(more, self.crc)
                if not more or more.endswith(b"\n"):
                    break
            line, end = b"", _TOO_LONG
        self.line_no += 1
        return line, end, start, self.line_no, crc_before

    def _first_error(self, rows, texts, numbers, deferred):
        """The chunk's values and its first bad line's error (or None), and
        whether that error is a vector the policy rejects (not damage)."""
        values = rows_to_f32(np.array(rows, dtype=np.float64).reshape(-1, 8),
                             lambda r: texts[r])
        overflow = np.flatnonzero(np.isinf(values).any(axis=1))
        o = int(overflow[0]) if overflow.size else None
        checked = values[:o] if o is not None else values
        if self.policy is Policy.STRICT:
            bad = _bad_rows(checked)
            if bad.size:
                p = int(bad[0])
                err = _row_error(checked[p], self.vectors + p)
                return values, err.at(self.vectors + p, line=numbers[p]), True
        if o is not None:
            c = int(np.flatnonzero(np.isinf(values[o]))[0])
            return values, overflow_error(texts[o], c, line=numbers[o],
                                          vector=self.vectors + o), False
        if deferred is not None:
            return values, deferred, False
        return values, None, False

    def _check_count(self, n: int, k: int, chunk_start: int) -> None:
        if n > self.chunk_vectors:
            raise CorruptError(Section.chunk(k), chunk_start,
                               f"more than {self.chunk_vectors} vector lines without a checksum "
                               f"line (line {self.line_no})")

    def read_chunk(self) -> np.ndarray | None:
        """The next chunk's vectors, or None after the end line."""
        k = self.chunks
        chunk_start = self.inp.offset
        n = 0
        rows: list[list[float]] = []
        texts: list[bytes] = []
        numbers: list[int] = []
        deferred: HydronError | None = None
        while True:
            line, end, start, number, crc_before = self._next_line()
            if end in (_EOF, _UNTERMINATED):
                _values, first, is_vector = self._first_error(rows, texts, numbers, deferred)
                if first is not None and not is_vector:
                    raise CorruptError(Section.chunk(k), chunk_start,
                                       f"no checksum line before the data ends; first bad line: "
                                       f"{first}")
                if n == 0 and end == _UNTERMINATED:
                    expected = _end_line(self.chunks, self.vectors, crc_before)
                    if len(line) == len(expected) and _bit_distance(line, expected) <= 2:
                        raise CorruptError(Section.TRAILER, start,
                                           f"line {number}: the end line is damaged and has no "
                                           f"newline")
                section = (Section.chunk(k) if n > 0 or line.startswith(b'{"chunk"')
                           else Section.TRAILER)
                raise _truncated(self.inp.offset, section)
            if end == _TOO_LONG:
                n += 1
                if deferred is None:
                    deferred = FormatError(f"line {number} is longer than {MAX_LINE_LEN} bytes",
                                           line=number)
                self._check_count(n, k, chunk_start)
                continue
            if n == 0:
                expected = _end_line(self.chunks, self.vectors, crc_before)[:-1]
                if line == expected:
                    self._at_end()
                    return None
                near_end = len(line) == len(expected) and _bit_distance(line, expected) <= 2
                if near_end or line[:1] == b"{":
                    raise CorruptError(
                        Section.TRAILER if near_end else Section.chunk(k), start,
                        f"line {number}: " + _explain_mismatch(line, k, 0, self.chunks,
                                                               self.vectors, crc_before))
            elif line[:1] == b"{":
                return self._close_chunk(line, number, crc_before, n, k, chunk_start,
                                         rows, texts, numbers, deferred)
            n += 1
            self._check_count(n, k, chunk_start)
            if deferred is not None:
                continue
            try:
                rows.append(parse_row(line, line=number, vector=self.vectors + n - 1))
            except FormatError as e:
                deferred = e
                continue
            texts.append(line)
            numbers.append(number)

    def _close_chunk(self, line, number, crc_before, n, k, chunk_start,
                     rows, texts, numbers, deferred) -> np.ndarray:
        expected = _chunk_line(k, n, crc_before)[:-1]
        if line != expected:
            raise CorruptError(Section.chunk(k), chunk_start,
                               f"line {number}: " + _explain_mismatch(
                                   line, k, n, self.chunks, self.vectors + n, crc_before))
        values, first, _is_vector = self._first_error(rows, texts, numbers, deferred)
        if first is not None:
            raise first
        apply_policy(values, self.policy, first_index=self.vectors)
        self.chunks += 1
        self.vectors += n
        return values

    def _at_end(self) -> None:
        at = self.inp.offset
        extra = self.inp.rest_len()
        if extra:
            raise CorruptError(Section.TRAILER, at, f"{extra} unexpected bytes after the end line")


def _text_chunks(inp: _Input, policy: Policy) -> Iterator[np.ndarray]:
    decoder = _TextDecoder(inp, policy)
    while True:
        chunk = decoder.read_chunk()
        if chunk is None:
            return
        yield chunk


# ---------------------------------------------------------------- public


def _chunks_of(f: BinaryIO, size: int | None, policy: "Policy | str") -> Iterator[np.ndarray]:
    policy = Policy.of(policy)
    inp, form = _open_input(f, size)
    if form is Format.FORY:
        yield from _binary_chunks(inp, policy)
    else:
        yield from _text_chunks(inp, policy)


def _with_path(path: str, e: HydronError) -> HydronError:
    """Prefixes an error's message with the file name (keeping its type
    and attributes)."""
    e.args = (f"{path}: {e.args[0]}",) + e.args[1:]
    e.path = path
    return e


def iter_chunks(source, *, policy: "Policy | str" = Policy.STRICT) -> Iterator[np.ndarray]:
    """Reads a hydron file (either form) chunk by chunk: yields one
    (n, 8) float32 array per chunk, checked by ``policy``.

    ``source`` is a path or a binary file object (read from its current
    position). Memory is bounded by one chunk. The trailer is checked when
    the generator is exhausted: consume it to the end before trusting that
    the file is complete.

    >>> import numpy as np
    >>> data = dumps(np.eye(8, dtype=np.float32), chunk_vectors=3)
    >>> [len(c) for c in iter_chunks(io.BytesIO(data))]
    [3, 3, 2]
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            try:
                yield from _chunks_of(f, size, policy)
            except HydronError as e:
                raise _with_path(path, e) from None
    else:
        yield from _chunks_of(source, _size_of(source), policy)


def load(source, *, policy: "Policy | str" = Policy.STRICT) -> np.ndarray:
    """Reads a whole hydron file (either form) into an (N, 8) float32 array.

    ``source`` is a path or a binary file object; for bytes use
    :func:`loads`.
    """
    chunks = list(iter_chunks(source, policy=policy))
    if not chunks:
        return np.zeros((0, 8), dtype=np.float32)
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def loads(data, *, policy: "Policy | str" = Policy.STRICT) -> np.ndarray:
    """Decodes a whole hydron file held in memory (``bytes`` or any
    bytes-like object).

    >>> loads(b"")
    Traceback (most recent call last):
    hydron.errors.FormatError: not a hydron file: it is empty
    """
    return load(io.BytesIO(data), policy=policy)


def detect_format(source) -> Format:
    """Which form a hydron file is in, from its first bytes (``source`` is a
    path or bytes); raises :class:`FormatError` (or :class:`CorruptError`
    for a damaged magic) if it is not a hydron file. Checks nothing else.

    >>> detect_format(b"\\x89HYD\\r\\n\\x1a\\n" + bytes(36)).value
    'fory'
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        head = bytes(source[:_HEAD_LEN])
        return _detect(head, len(source) <= _HEAD_LEN)
    with open(source, "rb") as f:
        head = f.read(_HEAD_LEN)
        return _detect(head, len(head) < _HEAD_LEN or f.read(1) == b"")
