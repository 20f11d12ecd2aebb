"""The text form: JSON Lines with a header line, a checksum line after
every chunk and an end line (``docs/format.md``, section 3.3). Every
checksum line holds the CRC-32 of all bytes before it, and every control
line must be byte for byte the line the reader expects, so any flipped bit
is detected."""

from __future__ import annotations

import json as _stdjson
from typing import Iterator

import numpy as np

from ._container import (MAX_CHUNK_VECTORS, MAX_LINE_LEN, TEXT_MAGIC, VERSION, Input, crc32,
                         near, truncated)
from .errors import CorruptError, FormatError, HydronError, InvalidVectorError, Section, \
    UnsupportedVersionError
from .json import format_row, overflow_error, parse_row, rows_to_f32
from .policy import Policy, _bad_rows, _row_error, apply_policy

_HEADER_CRC_LEN = len(',"crc32":"00000000"}')


def _header_line(chunk_vectors: int) -> bytes:
    body = b'%s%d,"chunk_vectors":%d' % (TEXT_MAGIC, VERSION, chunk_vectors)
    return b'%s,"crc32":"%08x"}\n' % (body, crc32(body))


def _chunk_line(index: int, vectors: int, crc: int) -> bytes:
    return b'{"chunk":%d,"vectors":%d,"crc32":"%08x"}\n' % (index, vectors, crc)


def _end_line(chunks: int, vectors: int, crc: int) -> bytes:
    return b'{"end":true,"chunks":%d,"vectors":%d,"crc32":"%08x"}\n' % (chunks, vectors, crc)


class Encoder:
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
        self.crc = crc32(data, self.crc)
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

    @property
    def written(self) -> int:
        """Vectors written so far."""
        return self.vectors + self.in_chunk

    def finish(self) -> None:
        if self.in_chunk:
            self._close_chunk()
        self._put(_end_line(self.chunks, self.vectors, self.crc))


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
        if near(line, TEXT_MAGIC):
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
    stored, computed = int(hexdigits, 16), crc32(body)
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
    except (ValueError, RecursionError):  # RecursionError: deeply nested arrays
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
    def __init__(self, inp: Input, policy: Policy):
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
            raise truncated(inp.offset, Section.HEADER)
        else:
            raise FormatError("not a hydron file: it starts with '{' but its first line is not "
                              "a hydron header", offset=0)

    def _next_line(self) -> tuple[bytes, int, int, int, int]:
        """(content, how it ended, start offset, line number, CRC before)."""
        crc_before = self.crc
        start = self.inp.offset
        raw = self.inp.readline(MAX_LINE_LEN + 1)
        self.crc = crc32(raw, self.crc)
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
                self.crc = crc32(more, self.crc)
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
                raise truncated(self.inp.offset, section)
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


def chunks(inp: Input, policy: Policy) -> Iterator[np.ndarray]:
    decoder = _TextDecoder(inp, policy)
    while True:
        chunk = decoder.read_chunk()
        if chunk is None:
            return
        yield chunk


