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

import io
import itertools
import os
from typing import BinaryIO, Iterator

import numpy as np

from . import _binary, _text
from . import fory as _fory
from ._container import (DEFAULT_CHUNK_VECTORS, HEAD_LEN, MAGIC, MAX_CHUNK_VECTORS, MAX_LINE_LEN,
                         TEXT_MAGIC, VERSION, Format, check_chunk_vectors, detect, open_input,
                         size_of)
from .errors import HydronError
from .policy import Policy, apply_policy

__all__ = [
    "Format", "MAGIC", "TEXT_MAGIC", "VERSION", "DEFAULT_CHUNK_VECTORS", "MAX_CHUNK_VECTORS",
    "MAX_LINE_LEN", "FileWriter", "save", "dumps", "load", "loads", "iter_chunks",
    "detect_format",
]

def _encoder(sink, form: "Format | str", chunk_vectors: int):
    form = Format.of(form)
    cls = _binary.Encoder if form is Format.FORY else _text.Encoder
    return cls(sink, check_chunk_vectors(chunk_vectors))


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
        check_chunk_vectors(chunk_vectors)
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
        return self._encoder.written

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


# ---------------------------------------------------------------- public


def _chunks_of(f: BinaryIO, size: int | None, policy: "Policy | str") -> Iterator[np.ndarray]:
    policy = Policy.of(policy)
    inp, form = open_input(f, size)
    if form is Format.FORY:
        yield from _binary.chunks(inp, policy)
    else:
        yield from _text.chunks(inp, policy)


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
        yield from _chunks_of(source, size_of(source), policy)


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
        head = bytes(source[:HEAD_LEN])
        return detect(head, len(source) <= HEAD_LEN)
    with open(source, "rb") as f:
        head = f.read(HEAD_LEN)
        return detect(head, len(head) < HEAD_LEN or f.read(1) == b"")
