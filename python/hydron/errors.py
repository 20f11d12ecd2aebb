"""The exceptions hydron raises.

Every error is a :class:`HydronError` (itself a :class:`ValueError`), raised
from the Rust error of the same kind, and its message (the Rust message)
says what is wrong and where: the vector and coordinate, the byte offset,
the chunk, the line.

``HydronError``
    ``FormatError``: not this kind of data, or malformed framing (wrong magic
    or header bytes, wrong type id, a bad varint, a length that does not fit,
    trailing bytes, bad JSON).

        ``UnsupportedVersionError``: a hydron file of a version this reader
        does not know.

    ``TruncatedError``: the input ends early (a file cut short, a message
    whose length prefix claims more bytes than there are).

    ``CorruptError``: a checksum or framing check of a file failed; names the
    section (header, chunk *k*, trailer; row group *k* of a Parquet file).

    ``FeatureNotBuiltError`` (also a ``NotImplementedError``): the call needs
    Arrow or Parquet, which this build of hydron left out
    (``hydron.FEATURES`` lists what it has).

    ``InvalidVectorError``: a vector the policy rejects (NaN, infinity, not of
    unit norm), an E8 code out of range, or an Arrow/Parquet row that is null,
    does not hold 8 values or whose list offsets lie; names the vector (row)
    index and the coordinate, norm or code.

I/O failures (a missing file, a directory that cannot be written) are the
built-in ``OSError`` subclasses (``FileNotFoundError``, ...), with the path.
"""

from __future__ import annotations

__all__ = [
    "HydronError",
    "FormatError",
    "UnsupportedVersionError",
    "TruncatedError",
    "CorruptError",
    "InvalidVectorError",
    "FeatureNotBuiltError",
    "Section",
]


class HydronError(ValueError):
    """Base class of every hydron error. ``offset`` is the byte offset of
    the problem when there is one (else ``None``)."""

    def __init__(self, message: str, *, offset: int | None = None):
        super().__init__(message)
        self.offset = offset


class FormatError(HydronError):
    """The data is not of the expected kind, or its framing is malformed.

    ``offset`` is the byte offset of the problem when known; ``line`` and
    ``column`` (1-based) are set for JSON text; ``row_group`` for a Parquet
    row group compressed with a codec hydron does not read (Brotli, LZO).
    """

    def __init__(self, message: str, *, offset: int | None = None,
                 line: int | None = None, column: int | None = None,
                 row_group: int | None = None):
        super().__init__(message, offset=offset)
        self.line = line
        self.column = column
        self.row_group = row_group


class UnsupportedVersionError(FormatError):
    """A hydron file of a container version this reader cannot read
    (``found``, ``supported``)."""

    def __init__(self, message: str, *, found: int, supported: int):
        super().__init__(message)
        self.found = found
        self.supported = supported


class Section:
    """A part of a file: ``Section.HEADER``, ``Section.TRAILER`` or
    ``Section.chunk(k)`` of a container, ``Section.row_group(k)`` of a
    Parquet file. ``str()`` gives ``"the header"``, ``"chunk 3"``,
    ``"the trailer"``, ``"row group 2"``."""

    HEADER: "Section"
    TRAILER: "Section"

    __slots__ = ("kind", "index")

    def __init__(self, kind: str, index: int | None = None):
        self.kind = kind
        self.index = index

    @classmethod
    def chunk(cls, index: int) -> "Section":
        """The chunk with this 0-based index."""
        return cls("chunk", index)

    @classmethod
    def row_group(cls, index: int) -> "Section":
        """The Parquet row group with this 0-based index."""
        return cls("row group", index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Section) and (self.kind, self.index) == (other.kind, other.index)

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    def __str__(self) -> str:
        if self.index is not None:
            return f"{self.kind} {self.index}"
        return f"the {self.kind}"

    def __repr__(self) -> str:
        if self.index is not None:
            return f"Section.{self.kind.replace(' ', '_')}({self.index})"
        return f"Section.{self.kind.upper()}"


Section.HEADER = Section("header")
Section.TRAILER = Section("trailer")


class TruncatedError(HydronError):
    """The input ends before the data does.

    ``offset`` is where the input ends (or where the incomplete part starts,
    for a message); ``section`` is the container part that is missing or
    incomplete (``None`` for a single fory message).
    """

    def __init__(self, message: str, *, offset: int, section: Section | None = None):
        super().__init__(message, offset=offset)
        self.section = section

    @property
    def chunk(self) -> int | None:
        """The index of the incomplete chunk, if a chunk is named."""
        return self.section.index if self.section is not None else None


class CorruptError(HydronError):
    """A checksum or framing check failed: the data was altered.

    ``section`` names the damaged part (a container's header, chunk or
    trailer; a Parquet file's row group; ``None`` when the damage is not in
    one part, such as a Parquet footer), ``offset`` the byte offset where
    that part starts or where the check failed (``None`` when unknown),
    ``detail`` which check failed.
    """

    def __init__(self, message: str, *, section: Section | None = None,
                 offset: int | None = None, detail: str = ""):
        super().__init__(message, offset=offset)
        self.section = section
        self.detail = detail

    @property
    def chunk(self) -> int | None:
        """The index of the damaged chunk of a container, or ``None``."""
        s = self.section
        return s.index if s is not None and s.kind == "chunk" else None

    @property
    def row_group(self) -> int | None:
        """The index of the damaged row group of a Parquet file, or
        ``None``."""
        s = self.section
        return s.index if s is not None and s.kind == "row group" else None


class InvalidVectorError(HydronError):
    """A vector (or E8 code) that the policy rejects.

    ``index`` is the vector's index in the batch or file; ``coordinate`` is
    set for a NaN or infinite coordinate, ``norm`` for a finite vector that is
    not of unit norm, ``code`` for an E8 code out of range, ``line`` for a
    vector read from a line of text; ``reason`` is what is wrong, without
    the place.
    """

    def __init__(self, message: str, *, index: int, reason: str = "",
                 coordinate: int | None = None, norm: float | None = None,
                 code: int | None = None, line: int | None = None,
                 offset: int | None = None):
        super().__init__(message, offset=offset)
        self.index = index
        self.reason = reason
        self.coordinate = coordinate
        self.norm = norm
        self.code = code
        self.line = line


#: The command (run from the repository's root) that builds and installs
#: hydron with every feature.
FULL_BUILD_COMMAND = 'pip install ./python -C maturin.build-args="--features full"'

_FEATURE_NAMES = {"arrow": "Arrow", "parquet": "Parquet"}


class FeatureNotBuiltError(HydronError, NotImplementedError):
    """The call needs a part of hydron that this build of its native module
    left out: ``feature`` is ``"arrow"`` (the Arrow PyCapsule functions) or
    ``"parquet"`` (Parquet files). ``pip install ./python`` builds neither;
    the message gives the command that builds both
    (:data:`FULL_BUILD_COMMAND`). ``hydron.FEATURES`` says what a build has.
    """

    def __init__(self, message: str, *, feature: str):
        super().__init__(message)
        self.feature = feature


def feature_not_built(what: str, feature: str) -> FeatureNotBuiltError:
    """The error for ``what`` (a function's name, or the file it was given),
    which needs ``feature``."""
    return FeatureNotBuiltError(
        f"{what}: this build of hydron has no {_FEATURE_NAMES.get(feature, feature)} support "
        f"(its native module was built without the {feature!r} feature); build it in with "
        f"`{FULL_BUILD_COMMAND}` from the repository's root",
        feature=feature,
    )
