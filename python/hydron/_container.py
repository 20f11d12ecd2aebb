"""What both forms of the container share: constants, the CRC, the input
stream with its offset, and form detection (``docs/format.md``, section 3)."""

from __future__ import annotations

import enum
import io
import zlib
from typing import BinaryIO

import numpy as np

from .errors import CorruptError, FormatError, Section, TruncatedError

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

#: Bytes read to tell the forms apart.
HEAD_LEN = 64


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


def check_chunk_vectors(n: int) -> int:
    """``n`` if it is a valid chunk size, else ValueError."""
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_CHUNK_VECTORS:
        raise ValueError(f"chunk_vectors must be an integer in 1..={MAX_CHUNK_VECTORS}, got {n!r}")
    return int(n)


def crc32(data, crc: int = 0) -> int:
    """CRC-32/ISO-HDLC (zlib's), continuing from ``crc``."""
    return zlib.crc32(data, crc) & 0xFFFFFFFF


def truncated(offset: int, section: Section) -> TruncatedError:
    return TruncatedError(f"truncated: the data ends at byte offset {offset}, in {section}",
                          offset=offset, section=section)


class Input:
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


def near(head: bytes, magic: bytes) -> bool:
    """Whether ``head`` holds all of ``magic`` with at most 2 bits changed."""
    return len(head) >= len(magic) and sum(
        bin(a ^ b).count("1") for a, b in zip(head, magic)) <= 2


def detect(head: bytes, whole: bool) -> Format:
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
    if near(head, MAGIC):
        raise CorruptError(Section.HEADER, 0, "the binary magic bytes are damaged")
    if near(head, TEXT_MAGIC):
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


def size_of(f) -> int | None:
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


def open_input(f: BinaryIO, size: int | None) -> tuple[Input, Format]:
    inp = Input(f, size)
    head = inp.read(HEAD_LEN)
    whole = len(head) < HEAD_LEN or (size is not None and size == len(head))
    form = detect(head, whole)
    inp.unread(head)
    return inp, form
