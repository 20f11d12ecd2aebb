"""The native module of hydron (Rust: hydron-core and hydron-codec through
PyO3). Import the names from ``hydron``."""

import os
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Final, Literal, final, overload

import numpy as np
import numpy.typing as npt

__all__ = [
    "ArrowArray",
    "ArrowTable",
    "to_arrow_table",
    "to_arrow",
    "save_parquet",
    "save_codes_parquet",
    "load_parquet",
    "load_codes_parquet",
    "iter_parquet",
    "from_arrow",
    "codes_to_arrow",
    "codes_from_arrow",
    "ChunkIter",
    "DEFAULT_CHUNK_VECTORS",
    "FileWriter",
    "LatticeCodes",
    "LatticeQuantizer",
    "save_lattice_codes",
    "load_lattice_codes",
    "is_lattice_codes",
    "_load_file_object",
    "MAX_BATCH_LEN",
    "MAX_CHUNK_VECTORS",
    "MAX_CODES_LEN",
    "DEFAULT_ROW_GROUP_VECTORS",
    "FEATURES",
    "ParquetChunkIter",
    "NORM_TOLERANCE",
    "backend",
    "codes_to_vectors",
    "decode_batch",
    "decode_codes",
    "decode_gf8",
    "decode_json",
    "decode_jsonl",
    "detect_format",
    "dot",
    "dumps",
    "e8_roots",
    "encode_batch",
    "encode_codes",
    "encode_gf8",
    "encode_json",
    "encode_jsonl",
    "geodesic_distance",
    "iter_chunks",
    "load",
    "loads",
    "nearest_lattice_points",
    "nearest_roots",
    "normalize",
    "save",
    "slerp",
    "spherical_mean",
    "validate",
]

_F32 = npt.NDArray[np.float32]
#: Vectors: a (N, 8) or (8,) array of real numbers, or anything numpy
#: converts to one (lists, float64, ``__array__`` objects).
_Vectors = npt.ArrayLike
_Data = bytes | bytearray | memoryview
_Path = str | os.PathLike[str]

NORM_TOLERANCE: Final[float]
DEFAULT_CHUNK_VECTORS: Final[int]
MAX_CHUNK_VECTORS: Final[int]
MAX_BATCH_LEN: Final[int]
MAX_CODES_LEN: Final[int]
DEFAULT_ROW_GROUP_VECTORS: Final[int]
#: The optional parts this build has: a subset of {"arrow", "parquet"}
#: (``pip install ./python`` builds neither, ``--features full`` both).
FEATURES: Final[frozenset[str]]

def normalize(vectors: _Vectors, *, policy: str | None = None,
              out: _F32 | None = None) -> _F32:
    """Scale vectors onto the unit sphere.

    Parameters
    ----------
    vectors : array_like, shape (N, 8) or (8,)
        Any finite vectors (float32 read in place when C-contiguous; other
        real numbers converted as ``np.asarray(x, dtype=np.float32)``).
    policy : {None, "strict", "renormalize", "trusted"}, optional
        None (the default) scales every vector (zero stays zero), as Rust's
        ``batch::normalize``. With a policy, the vectors are treated as a
        decoder treats them: ``"renormalize"`` scales only the vectors that
        are not unit (unit ones are kept bit for bit), ``"strict"`` checks
        them and returns a copy, ``"trusted"`` copies them unchecked.
    out : ndarray, float32, optional
        Where to write the result (C-contiguous, of the result's shape, not
        sharing memory with ``vectors``), instead of a new array; returned.
        Only without ``policy``.

    Returns
    -------
    ndarray, float32, shape (N, 8) or (8,)
        A new array (or ``out``).

    Raises
    ------
    InvalidVectorError
        A NaN or infinite coordinate (``.index``, ``.coordinate``), or with
        ``policy="strict"`` a vector that is not of unit norm (``.norm``).
    TypeError, ValueError
        Not real numbers; not of shape (N, 8) or (8,); a bad ``out``.

    Examples
    --------
    >>> import numpy as np, hydron
    >>> hydron.normalize(np.array([[0, 3, 0, 4, 0, 0, 0, 0]], np.float32))[0, 1]
    np.float32(0.6)
    >>> hydron.normalize([3.0, 4, 0, 0, 0, 0, 0, 0])[:2].tolist()
    [0.6000000238418579, 0.800000011920929]
    """

def validate(vectors: _Vectors) -> None:
    """Check that every vector is finite and of unit norm, or exactly zero.

    The check is the one every strict decoder makes:
    ``|‖x‖² − 1| ≤ 2e-5`` with the squared norm summed in float32.

    Parameters
    ----------
    vectors : array_like, shape (N, 8) or (8,)

    Raises
    ------
    InvalidVectorError
        For the first bad vector: ``.index``, and ``.coordinate`` (NaN,
        infinity) or ``.norm``.

    Examples
    --------
    >>> import numpy as np, hydron
    >>> v = np.zeros((3, 8), np.float32); v[2, 5] = np.nan
    >>> hydron.validate(v)
    Traceback (most recent call last):
    hydron.errors.InvalidVectorError: vector 2: coordinate 5 is NaN
    """

@overload
def nearest_roots(vectors: _Vectors, *, strict: bool = False, trusted: bool = False,
                  out: None = None) -> npt.NDArray[np.uint8] | np.uint8: ...
@overload
def nearest_roots(vectors: _Vectors, *, strict: bool = False, trusted: bool = False,
                  out: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The nearest E8 root of each vector's direction, as its code (0..240).

    Closed form, O(8) per vector, in hydron-core's SIMD batch kernel (AVX2
    when the CPU has it): the root of largest cosine, as a brute-force
    search over ``E8_ROOTS`` finds it, except that two roots whose cosines
    differ by less than about 2e-7 are decided by the float32 rounding of
    their scores (the same on every CPU); on an exact tie the lower code
    wins. A zero vector gets code 0 when its zeros are positive; a negative
    zero counts as a minus sign, so ``[-0.0] * 8`` gets code 3.

    Any finite vector has a direction: a vector of unit norm (within
    ``NORM_TOLERANCE``) or zero is quantized as it is, any other is first
    scaled as :func:`normalize` scales it, so for such a vector
    ``nearest_roots(raw) == nearest_roots(normalize(raw))``.

    Parameters
    ----------
    vectors : array_like, shape (N, 8) or (8,)
        Finite vectors.
    strict : bool, default False
        Refuse a vector that is not of unit norm (or zero), instead of
        taking its direction.
    trusted : bool, default False
        Skip every check, and the scaling: the vectors must be unit or zero
        (garbage in, a meaningless but harmless code out).
    out : ndarray, uint8, optional
        Where to write the codes (C-contiguous, shape (N,), or () for one
        vector), instead of a new array; returned.

    Returns
    -------
    ndarray, uint8, shape (N,), or numpy.uint8 for one (8,) vector
        ``E8_ROOTS[codes]`` are the roots.

    Raises
    ------
    InvalidVectorError
        A NaN or infinite coordinate; with ``strict``, a vector that is not
        of unit norm (``.norm``).

    Examples
    --------
    >>> import numpy as np, hydron
    >>> hydron.nearest_roots(hydron.E8_ROOTS[[5, 200]]).tolist()
    [5, 200]
    >>> int(hydron.nearest_roots(3 * hydron.E8_ROOTS[7]))
    7
    """

def codes_to_vectors(codes: npt.ArrayLike) -> _F32:
    """The unit E8 roots of codes.

    Parameters
    ----------
    codes : array_like of int, shape (N,), or one code
        Each in 0..240 (a uint8 array, or any integers).

    Returns
    -------
    ndarray, float32, shape (N, 8), or (8,) for one code

    Raises
    ------
    InvalidVectorError
        A code out of range (``.index``, ``.code``).

    Examples
    --------
    >>> import hydron
    >>> hydron.codes_to_vectors([0])[0, :3].tolist()
    [0.7071067690849304, 0.7071067690849304, 0.0]
    >>> hydron.codes_to_vectors(0).shape
    (8,)
    """

def nearest_lattice_points(points: _Vectors, *,
                           out: npt.NDArray[np.int32] | None = None) -> npt.NDArray[np.int32]:
    """The nearest point of the E8 lattice to each point (Conway–Sloane).

    Parameters
    ----------
    points : array_like, shape (N, 8) or (8,)
        Any finite points with ``|x_i| ≤ 4194304``.
    out : ndarray, int32, optional
        Where to write the result (C-contiguous, of the result's shape),
        instead of a new array; returned.

    Returns
    -------
    ndarray, int32, shape (N, 8) or (8,)
        The lattice points' coordinates doubled (exact integers; divide by
        2 for the coordinates).

    Raises
    ------
    InvalidVectorError
        A NaN, infinite or out-of-range coordinate (``.index``,
        ``.coordinate``).

    Examples
    --------
    >>> import numpy as np, hydron
    >>> hydron.nearest_lattice_points(np.full((1, 8), 0.6, np.float32)).tolist()
    [[1, 1, 1, 1, 1, 1, 1, 1]]
    """

@overload
def dot(a: _Vectors, b: _Vectors, *, out: None = None) -> _F32 | np.float32: ...
@overload
def dot(a: _Vectors, b: _Vectors, *, out: _F32) -> _F32:
    """Dot products of unit vectors.

    Parameters
    ----------
    a, b : array_like, shape (N, 8), (1, 8) or (8,)
        Row-wise when both are (N, 8); one vector (8,) or row (1, 8) against
        every row of the other (the SIMD one-against-many kernel), as numpy
        broadcasts.
    out : ndarray, float32, optional
        Where to write the result (C-contiguous, of the result's shape),
        instead of a new array; returned.

    Returns
    -------
    ndarray, float32, shape (N,), or numpy.float32 when both are (8,)

    Raises
    ------
    InvalidVectorError
        An invalid vector. ``ValueError`` for row counts that do not
        broadcast.

    Examples
    --------
    >>> import hydron
    >>> hydron.dot(hydron.E8_ROOTS[0], hydron.E8_ROOTS[:2]).tolist()
    [0.9999999403953552, 0.0]
    """

@overload
def geodesic_distance(a: _Vectors, b: _Vectors, *, out: None = None) -> _F32 | np.float32: ...
@overload
def geodesic_distance(a: _Vectors, b: _Vectors, *, out: _F32) -> _F32:
    """Angles (great-circle distances on S⁷) between unit vectors, in radians.

    The stable ``2·atan2(‖a − b‖, ‖a + b‖)``, by the SIMD batch kernels
    (across threads for large inputs), which check the vectors in the same
    pass: in float32 arithmetic, within 5 ulp of the exact angle (0.5 on
    average), and in float64 within 1e-3 rad of 0 and π, within 1 ulp;
    unlike ``arccos`` of the dot product, accurate near 0 and π. A zero
    vector is π/2 from any unit vector.

    Parameters
    ----------
    a, b : array_like, shape (N, 8), (1, 8) or (8,)
        Row-wise, or one vector against many, as :func:`dot`.
    out : ndarray, float32, optional
        Where to write the result, as for :func:`dot`.

    Returns
    -------
    ndarray, float32, shape (N,), or numpy.float32 when both are (8,)

    Examples
    --------
    >>> import hydron
    >>> round(float(hydron.geodesic_distance(hydron.E8_ROOTS[0], hydron.E8_ROOTS[1])), 4)
    1.5708
    """

def slerp(a: _Vectors, b: _Vectors, t: float | npt.ArrayLike) -> _F32:
    """Spherical linear interpolation from ``a`` (t = 0) to ``b`` (t = 1).

    Computed in float64 by the SIMD batch kernels (across threads for large
    inputs, the vectors checked in the same pass) and rounded once; the cases of Rust's ``Gf8::slerp`` (opposite
    vectors follow a fixed half circle, a zero vector gives the other's
    direction).

    Parameters
    ----------
    a, b : array_like, shape (N, 8), (1, 8) or (8,)
        Row-wise, or one vector against many, as :func:`dot`.
    t : float or array_like of float, shape (N,)
        Finite, and clamped to [0, 1] as Rust's ``Gf8::slerp`` clamps it:
        t ≤ 0 gives ``a`` and t ≥ 1 gives ``b``, bit for bit. An array
        gives one parameter per row, broadcast with ``a`` and ``b``.

    Returns
    -------
    ndarray, float32, shape (N, 8), or (8,) when ``a`` and ``b`` are (8,)
    and ``t`` is a number

    Examples
    --------
    >>> import hydron
    >>> mid = hydron.slerp(hydron.E8_ROOTS[0], hydron.E8_ROOTS[1], 0.5)
    >>> mid.shape
    (8,)
    >>> hydron.slerp(hydron.E8_ROOTS[0], hydron.E8_ROOTS[1], [0, 0.5, 1]).shape
    (3, 8)
    """

def spherical_mean(points: _Vectors, weights: npt.ArrayLike | None = None) -> _F32:
    """The spherical (Karcher) mean of unit vectors, optionally weighted.

    Parameters
    ----------
    points : array_like, shape (N, 8) or (8,)
        N ≥ 1 unit vectors.
    weights : array_like of float, shape (N,), optional
        Finite and non-negative.

    Returns
    -------
    ndarray, float32, shape (8,)

    Raises
    ------
    HydronError
        No points, or no unique mean (points spread over the sphere).
    InvalidVectorError
        An invalid point, or a bad weight (``.index``).

    Examples
    --------
    >>> import hydron
    >>> m = hydron.spherical_mean(hydron.E8_ROOTS[[0, 0]])
    >>> bool((m == hydron.E8_ROOTS[0]).all())
    True
    """

def e8_roots() -> _F32:
    """The 240 unit E8 roots in code order, as a new (240, 8) array
    (``hydron.E8_ROOTS`` is a read-only copy)."""

def backend() -> str:
    """Which batch-kernel backend runs: ``"avx2+fma"``, ``"portable"`` or
    ``"scalar"``."""

def encode_batch(vectors: _Vectors, *, policy: str | None = None) -> bytes:
    """The fory ``Gf8Batch`` message of vectors (what Rust's
    ``fory::encode_batch`` writes; stock pyfory reads it).

    Parameters
    ----------
    vectors : ndarray, float32, shape (N, 8)
    policy : {"strict", "renormalize", "trusted"}, default "strict"
        How the vectors are checked before writing.

    Returns
    -------
    bytes

    Examples
    --------
    >>> import numpy as np, hydron
    >>> len(hydron.encode_batch(np.zeros((1, 8), np.float32)))
    54
    """

def decode_batch(data: _Data, *, policy: str | None = None) -> _F32:
    """Decode a fory ``Gf8Batch`` message into a new (N, 8) float32 array.

    Every framing byte and length is checked before anything is allocated;
    the vectors are checked by ``policy`` (default ``"strict"``).

    Raises
    ------
    FormatError, TruncatedError
        Malformed or cut-off bytes (``.offset``).
    InvalidVectorError
        A vector the policy rejects (``.index``, ``.coordinate``, and
        ``.offset``: the byte offset of the vector in ``data``).

    Examples
    --------
    >>> import hydron
    >>> hydron.decode_batch(hydron.encode_batch(hydron.E8_ROOTS)).shape
    (240, 8)
    """

def encode_gf8(vector: _Vectors, *, policy: str | None = None) -> bytes:
    """The 37-byte fory ``Gf8`` message of one vector (shape (8,))."""

def decode_gf8(data: _Data, *, policy: str | None = None) -> _F32:
    """Decode a 37-byte ``Gf8`` message into a float32 array of shape (8,)."""

def encode_codes(codes: npt.ArrayLike) -> bytes:
    """The fory ``E8Codes`` message of E8 root codes (integers in 0..240)."""

def decode_codes(data: _Data) -> npt.NDArray[np.uint8]:
    """Decode an ``E8Codes`` message into a new uint8 array; a code ≥ 240
    raises :class:`InvalidVectorError` naming its index."""

def encode_json(vectors: _Vectors, *, policy: str | None = None) -> bytes:
    """A JSON array ``[[x0, …, x7], …]`` (UTF-8), each float32 written as
    the shortest decimal that reads back to the same bits. JSON has no NaN
    or infinity: a vector holding one raises InvalidVectorError, whatever
    the policy."""

def decode_json(data: _Data | str, *, policy: str | None = None) -> _F32:
    """Decode a JSON array of vectors; errors name the line, column, vector
    and coordinate."""

def encode_jsonl(vectors: _Vectors, *, policy: str | None = None) -> bytes:
    """JSON Lines: one ``[x0, …, x7]`` per line (no container framing).
    JSON has no NaN or infinity: a vector holding one raises
    InvalidVectorError, whatever the policy."""

def decode_jsonl(data: _Data | str, *, policy: str | None = None) -> _F32:
    """Decode JSON Lines of vectors; errors name the line and vector."""

def save(path: _Path, vectors: _Vectors, format: str | None = None, *,
         chunk_vectors: int = 65536, durable: bool = True,
         policy: str | None = None) -> None:
    """Save vectors to a hydron file, atomically.

    Parameters
    ----------
    path : str or os.PathLike
    vectors : ndarray, float32, shape (N, 8)
    format : {"fory", "jsonl", "parquet"}, optional
        Binary (chunks of fory batch messages), text (JSON Lines with
        checksum lines), or Parquet (written as :func:`save_parquet` writes
        it, Snappy-compressed, with row groups of ``chunk_vectors``
        vectors). By default the name decides: ``.parquet`` or ``.pq`` is
        Parquet, ``.jsonl`` JSON Lines, any other name the binary form; a
        ``.json`` name is refused (``ValueError``: hydron files are not a
        plain JSON array, see :func:`encode_json`).
    chunk_vectors : int, default 65536
        Vectors per checksummed chunk, 1..=1048576 (the row group size
        for Parquet: note that :func:`save_parquet`'s own default is
        262144).
    durable : bool, default True
        fsync the file and its directory before returning.
    policy : {"strict", "renormalize", "trusted"}, default "strict"

    The data goes to a temporary file next to ``path`` that is renamed
    over it only when complete: ``path`` is never left half-written.

    Examples
    --------
    >>> import os, tempfile, hydron
    >>> path = os.path.join(tempfile.mkdtemp(), "roots.hyd")
    >>> hydron.save(path, hydron.E8_ROOTS)
    >>> hydron.load(path).shape
    (240, 8)
    """

def dumps(vectors: _Vectors, format: str | None = None, *, chunk_vectors: int = 65536,
          policy: str | None = None) -> bytes:
    """The bytes of a whole hydron file holding ``vectors`` (what
    :func:`save` writes; ``format="parquet"`` gives a Parquet file)."""

def load(source: _Path | Any, *, policy: str | None = None) -> _F32:
    """Read a whole hydron file (either form, or Parquet: detected from the
    content) into a new (N, 8) float32 array.

    ``source`` is a path (read chunk by chunk into one preallocated array;
    a large binary file across every core; a directory is a Parquet data
    set, read as :func:`load_parquet` reads it) or a binary file object such as
    ``sys.stdin.buffer`` or a pipe (decoded as it is read, so memory grows
    only with what the data has proven to hold, and data that is not a
    hydron file is refused after its first bytes; a Parquet file object is
    read whole, at most 1 GiB, else :class:`HydronError`). Every checksum
    is checked: :class:`CorruptError`, :class:`TruncatedError`,
    :class:`FormatError` name the section and byte offset; I/O failures are
    ``OSError``.
    """

def loads(data: _Data, *, policy: str | None = None) -> _F32:
    """Decode a whole hydron file (or Parquet file) held in memory.

    Examples
    --------
    >>> import hydron
    >>> hydron.loads(b"")
    Traceback (most recent call last):
    hydron.errors.FormatError: not a hydron file: it is empty
    """

def iter_chunks(source: _Path | Any, *, policy: str | None = None) -> ChunkIter:
    """Read a hydron file chunk by chunk: one (n, 8) float32 array per chunk.

    From a path, only one chunk is in memory at a time; the trailer is
    checked when the iterator is exhausted (consume it to the end before
    trusting that the file is complete). A Parquet file at a path yields
    one array per row group, each checked against its checksum (as
    :func:`iter_parquet`), and so does a directory, read as a Parquet data
    set file after file. A binary file object is read the same way, as a
    stream; a Parquet file object is read whole (at most 1 GiB) and yields
    one array.
    """

@final
class ChunkIter(Iterator[_F32]):
    """The iterator :func:`iter_chunks` returns."""

    def __iter__(self) -> ChunkIter: ...
    def __next__(self) -> _F32: ...

def detect_format(source: _Path | _Data) -> str:
    """``"fory"``, ``"jsonl"`` or ``"parquet"``: the form of a file, from its first
    bytes (use ``hydron.detect_format``, which returns a ``Format``)."""

@final
class FileWriter:
    """Writes a hydron file, or a Parquet file, in pieces, atomically.

    Data goes to a temporary file next to ``path``; :meth:`finish` writes
    the last chunk and the trailer (the last row group and the footer),
    syncs it (unless ``durable=False``) and renames it over ``path``. After
    an error, :meth:`abort`, or without :meth:`finish`, the temporary file
    is removed and ``path`` is left as it was. As a context manager it
    finishes on a normal exit and aborts on an exception; a normal exit
    after a write failed inside the block (its error caught) raises
    ``HydronError``, since nothing was saved. Vectors are checked by
    ``policy`` as they are written. ``path`` is made absolute when the
    writer is created. One writer may be shared by threads: calls take
    turns. Without ``format`` the name decides as for :func:`save`:
    ``.parquet`` or ``.pq`` is Parquet, ``.jsonl`` JSON Lines, any other
    name the binary form. A writer collected unfinished (neither finished,
    aborted nor closed) emits a ``ResourceWarning``, as an unclosed Python
    file does.

    Parquet (in a build with it, see ``FEATURES``; else
    :class:`FeatureNotBuiltError`, before anything is created) is written as
    :func:`save_parquet` writes it, holding about one row group in memory
    whatever the file's size: ``compression`` (default ``"snappy"``) and
    ``row_group_vectors`` (default 262144) are its options, and are refused
    for the other formats, as ``chunk_vectors`` (default 65536) is refused
    for Parquet. With ``codes=True`` the file holds E8 root codes (one
    ``uint8`` column, ``"code"``, as :func:`save_codes_parquet` writes),
    written with :meth:`write_codes`; a ``policy`` is then refused (every
    code is checked).

    Examples
    --------
    >>> import os, tempfile, numpy as np, hydron
    >>> path = os.path.join(tempfile.mkdtemp(), "points.hyd")
    >>> with hydron.FileWriter(path, "fory", chunk_vectors=2) as w:
    ...     w.write(np.eye(8, dtype=np.float32)[:3])
    ...     w.write(np.zeros((1, 8), dtype=np.float32))
    >>> hydron.load(path).shape
    (4, 8)
    """

    def __new__(cls, path: _Path, format: str | None = None, *,
                chunk_vectors: int | None = None, durable: bool = True,
                policy: str | None = None, compression: str | None = None,
                row_group_vectors: int | None = None, codes: bool = False) -> FileWriter: ...
    @property
    def vectors(self) -> int:
        """How many vectors (or codes) have been written."""
    @property
    def path(self) -> str:
        """The target path."""
    def write(self, vectors: _Vectors) -> None:
        """Write (N, 8) vectors; chunks (row groups) are cut at the chunk size
        whatever the sizes of the calls. Input refused by its checks (dtype,
        shape, policy) writes nothing and leaves the writer open; an error
        while writing spends it."""
    def write_codes(self, codes: npt.ArrayLike) -> None:
        """Write E8 root codes (a one-dimensional array of integers in 0..240)
        to a Parquet file of codes (``codes=True``); row groups are cut at
        ``row_group_vectors`` whatever the sizes of the calls. Codes refused
        by their checks write nothing and leave the writer open."""
    def finish(self) -> None:
        """Complete the file and rename it over the target."""
    def abort(self) -> None:
        """Remove the temporary file; the target is left as it was."""
    def close(self) -> None:
        """Abort unless finished: the same as :meth:`abort` (for code that
        closes writers in a ``finally``)."""
    def __enter__(self) -> FileWriter: ...
    def __exit__(self, exc_type: type[BaseException] | None,
                 _exc: BaseException | None = None,
                 _tb: TracebackType | None = None) -> None: ...

# Arrow (the PyCapsule interface) and Parquet.

@final
class ArrowArray:
    """An Arrow array exported by hydron (``to_arrow``, ``codes_to_arrow``).

    It implements the Arrow PyCapsule interface (``__arrow_c_array__``,
    ``__arrow_c_schema__``): ``pyarrow.array(a)``, ``polars.Series(a)`` and
    ``nanoarrow.Array(a)`` take it without a copy, as often as asked.

    Examples
    --------
    >>> import hydron
    >>> a = hydron.to_arrow(hydron.E8_ROOTS)
    >>> len(a)
    240
    >>> a
    hydron.ArrowArray(FixedSizeList(8 x non-null Float32), 240 rows)
    """

    def __arrow_c_schema__(self) -> object:
        """The array's field as an ``arrow_schema`` capsule."""
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """The field and the array as ``(arrow_schema, arrow_array)`` capsules,
        sharing the array's memory. ``requested_schema`` is ignored, as the
        interface allows: the data has one layout."""
    def __len__(self) -> int: ...
    def __array__(self, dtype: npt.DTypeLike | None = None,
                  copy: bool | None = None) -> npt.NDArray[Any]:
        """The data as a read-only numpy array sharing its memory: ``(N, 8)``
        float32 for vectors, ``(N,)`` uint8 for codes (``np.asarray(a)``).
        ``dtype`` converts (a copy); ``copy=True`` always copies,
        ``copy=False`` refuses to.
        """

@final
class ArrowTable:
    """An Arrow table exported by hydron (``to_arrow_table``).

    It implements ``__arrow_c_stream__`` (and ``__arrow_c_schema__``):
    ``pyarrow.table(t)``, ``polars.DataFrame(t)`` and DuckDB
    (``duckdb.sql("SELECT ... FROM t")``) read it without a copy, as often as
    asked.

    Examples
    --------
    >>> import hydron
    >>> t = hydron.to_arrow_table(hydron.E8_ROOTS)
    >>> len(t)
    240
    """

    def __arrow_c_schema__(self) -> object:
        """The table's schema as an ``arrow_schema`` capsule."""
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The record batches as an ``arrow_array_stream`` capsule, sharing their
        memory. ``requested_schema`` is ignored, as the interface allows."""
    def __len__(self) -> int: ...

def to_arrow(vectors: _Vectors, *, policy: str | None = None) -> ArrowArray:
    """Vectors as an Arrow array, without copying: a ``FixedSizeList<float32, 8>``
    whose values are the numpy array's own memory.

    The result implements the Arrow PyCapsule interface
    (``__arrow_c_array__``, ``__arrow_c_schema__``), so every Arrow library
    takes it without a copy: ``pyarrow.array(a)``, ``polars.Series(a)``,
    ``nanoarrow.Array(a)``. Like ``pyarrow.array(ndarray)`` it shares memory
    with ``vectors`` (a C-contiguous, aligned float32 array; other layouts
    are copied): do not modify ``vectors`` while the Arrow data is in use.

    Parameters
    ----------
    vectors : ndarray, float32, shape (N, 8)
    policy : {"strict", "renormalize", "trusted"}, default "strict"
        Checked before export (in place; ``"renormalize"`` exports a
        renormalized copy).

    Returns
    -------
    ArrowArray
        An Arrow PyCapsule exporter (``len()`` is the number of vectors).

    Examples
    --------
    >>> import hydron, pyarrow as pa
    >>> a = pa.array(hydron.to_arrow(hydron.E8_ROOTS))
    >>> a.type
    FixedSizeListType(fixed_size_list<item: float not null>[8])
    >>> len(a)
    240
    """

def to_arrow_table(vectors: _Vectors, *, column: str = "vector",
                   policy: str | None = None) -> ArrowTable:
    """Vectors as a one-column Arrow table (column ``column``, default
    ``"vector"``, marked ``hydron.type = gf8``), without copying the floats.

    The result implements ``__arrow_c_stream__``: ``pyarrow.table(t)``,
    ``polars.DataFrame(t)``, and DuckDB
    (``duckdb.sql("SELECT ... FROM t")``) read it in place. It shares memory
    with ``vectors``, as :func:`to_arrow` does.

    Examples
    --------
    >>> import hydron, pyarrow as pa
    >>> pa.table(hydron.to_arrow_table(hydron.E8_ROOTS)).schema.field("vector").metadata
    {b'hydron.type': b'gf8'}
    """

def codes_to_arrow(codes: npt.ArrayLike) -> ArrowArray:
    """E8 root codes (integers in 0..240) as an Arrow ``uint8`` array.

    Any integer array or sequence; each code is checked, then copied into
    the Arrow array (one byte per code).

    Examples
    --------
    >>> import numpy as np, hydron, pyarrow as pa
    >>> pa.array(hydron.codes_to_arrow(np.array([0, 239], np.uint8))).to_pylist()
    [0, 239]
    """

def from_arrow(source: Any, *, column: str | None = None,
               policy: str | None = None) -> _F32:
    """Vectors from Arrow data, checked: a new ``(N, 8)`` float32 array.

    ``source`` is anything that exports Arrow through the PyCapsule interface:
    an array or chunked array of ``FixedSizeList<float32, 8>`` (or a list of
    float32 whose rows all hold 8 values: what Parquet readers such as
    DuckDB return), or a record batch, table or stream with such a column
    (``column``, else the column marked ``hydron.type = gf8``, else the one
    named ``"vector"``, else the only list-of-floats column). The floats are
    read in place and copied once, checked by ``policy`` in the same pass.

    Raises
    ------
    InvalidVectorError
        A vector the policy rejects, a null row or coordinate, a row of
        another length than 8, or list offsets that lie (below zero,
        decreasing, past the values): ``.index`` is the row.
    FormatError
        No such column, or a column of another type (float64, integers).
    TypeError
        ``source`` is not Arrow data.

    Examples
    --------
    >>> import hydron, pyarrow as pa
    >>> table = pa.table({"id": list(range(240)), "vector": pa.array(hydron.to_arrow(hydron.E8_ROOTS))})
    >>> hydron.from_arrow(table).shape
    (240, 8)
    >>> hydron.from_arrow(pa.array([[1.0] * 7], pa.list_(pa.float32())))
    Traceback (most recent call last):
    hydron.errors.InvalidVectorError: row 0 has 7 values; a vector has 8
    """

def codes_from_arrow(source: Any, *, column: str | None = None) -> npt.NDArray[np.uint8]:
    """E8 root codes from Arrow data (a ``uint8`` array, chunked array, or a
    table's code column), checked: a new ``uint8`` array.

    Examples
    --------
    >>> import hydron, pyarrow as pa
    >>> hydron.codes_from_arrow(pa.array([3, 240], pa.uint8()))
    Traceback (most recent call last):
    hydron.errors.InvalidVectorError: vector 1: E8 root code 240 is out of range (0..240)
    """

def save_parquet(path: _Path, vectors: _Vectors, *, compression: str = "snappy",
                 row_group_vectors: int = 262144, durable: bool = True,
                 policy: str | None = None) -> None:
    """Save vectors to a Parquet file, atomically.

    One column, ``"vector"``: a list of 8 float32 per row (the Arrow type
    ``FixedSizeList<float32, 8>``, restored by pyarrow from the file's Arrow
    schema; DuckDB reads ``FLOAT[]``, Polars ``Array(Float32, 8)``), with a
    CRC-32 of every row group in the footer that hydron checks on reading.

    Parameters
    ----------
    path : str or os.PathLike
    vectors : ndarray, float32, shape (N, 8)
    compression : str, default "snappy"
        ``"none"``, ``"snappy"``, ``"zstd"`` or ``"zstd:LEVEL"``, ``"lz4"``,
        ``"gzip"`` or ``"gzip:LEVEL"``.
    row_group_vectors : int, default 262144
        Rows per row group (the unit of streaming and of Dask partitions).
    durable : bool, default True
        fsync the file and its directory before returning.
    policy : {"strict", "renormalize", "trusted"}, default "strict"

    The file is written next to ``path`` and renamed over it only when
    complete (a replaced file keeps its permissions; a symbolic link is
    followed and stays). A FIFO or a character device at ``path`` is
    written to directly; a directory or any other kind of file is refused.

    Examples
    --------
    >>> import os, tempfile, hydron
    >>> path = os.path.join(tempfile.mkdtemp(), "roots.parquet")
    >>> hydron.save_parquet(path, hydron.E8_ROOTS, compression="zstd")
    >>> hydron.load_parquet(path).shape
    (240, 8)
    """

def save_codes_parquet(path: _Path, codes: npt.ArrayLike, *, compression: str = "snappy",
                       row_group_vectors: int = 262144, durable: bool = True) -> None:
    """Save E8 root codes to a Parquet file (one ``uint8`` column,
    ``"code"``), atomically; the options are :func:`save_parquet`'s.

    Examples
    --------
    >>> import os, tempfile, hydron
    >>> path = os.path.join(tempfile.mkdtemp(), "codes.parquet")
    >>> hydron.save_codes_parquet(path, hydron.nearest_roots(hydron.E8_ROOTS))
    >>> hydron.load_codes_parquet(path)[:4].tolist()
    [0, 1, 2, 3]
    """

def load_parquet(source: _Path | _Data | Any, *, column: str | None = None,
                 policy: str | None = None) -> _F32:
    """Read the vectors of a Parquet file into a new (N, 8) float32 array.

    ``source`` is a path (read row group by row group; a directory is a
    data set, see below), ``bytes``, or a
    binary file object (read whole, at most 1 GiB, else
    :class:`HydronError`: Parquet is read from its end). The vector column is ``column``, else
    the column marked ``hydron.type = gf8``, else ``"vector"``, else the
    only list-of-floats column; it may be a fixed-size list or a list whose
    rows all hold 8 float32 (what pyarrow, Polars and DuckDB write). Every
    vector is checked by ``policy``, and a hydron file's row-group
    checksums are verified.

    A directory is read as one data set: the ``.parquet`` files in it and
    its subdirectories (Hive ``key=value`` directories too), in the byte
    order of their relative paths, skipping names that start with ``_`` or
    ``.`` (``_SUCCESS``, ``.crc`` files), one row group in memory at a
    time. Every file must hold the same column (else :class:`FormatError`);
    an error in a file names it (``.index`` is the row in that file, and
    the message gives the data set's row too).

    Raises
    ------
    InvalidVectorError
        A vector the policy rejects, a null, or a row that does not hold 8
        values (``.index`` is the row).
    FormatError
        Not Parquet, no vector column, or a column of another type.
    CorruptError
        A damaged file: a bad footer or page, a checksum that does not match
        (``.row_group``).

    Examples
    --------
    >>> import hydron
    >>> hydron.load_parquet(b"PAR1")
    Traceback (most recent call last):
    hydron.errors.CorruptError: Parquet: ...
    """

def load_codes_parquet(source: _Path | _Data | Any, *,
                       column: str | None = None) -> npt.NDArray[np.uint8]:
    """Read the E8 root codes of a Parquet file (a ``uint8`` column: ``column``,
    else the one marked ``hydron.type = e8-code``, else ``"code"``, else the
    only integer column) into a new uint8 array; every code is checked.
    """

def iter_parquet(source: _Path | _Data | Any, *, column: str | None = None,
                 policy: str | None = None) -> ParquetChunkIter:
    """Read a Parquet file row group by row group: one (n, 8) float32 array at
    a time (a whole row group in the common layout, else batches of at most
    65,536 rows), each checked by ``policy``. Memory stays flat whatever
    the file's size. Arguments as :func:`load_parquet`; a directory is read
    as one data set, file after file.

    Examples
    --------
    >>> import os, tempfile, hydron
    >>> path = os.path.join(tempfile.mkdtemp(), "roots.parquet")
    >>> hydron.save_parquet(path, hydron.E8_ROOTS, row_group_vectors=100)
    >>> [len(chunk) for chunk in hydron.iter_parquet(path)]
    [100, 100, 40]
    """

@final
class ParquetChunkIter(Iterator[_F32]):
    """The iterator :func:`iter_parquet` returns."""

    def __iter__(self) -> ParquetChunkIter: ...
    def __next__(self) -> _F32: ...
    @property
    def claimed_vectors(self) -> int:
        """The number of rows the file's footer claims (checked against each
        row group as it is read)."""

# The lattice quantizer (hydron_core::quant).

@final
class LatticeQuantizer:
    """A lattice quantizer: float vectors of any dimension to compact codes,
    with no training.

    Each vector is padded with zeros to a multiple of 8 coordinates, rotated
    (random signs and a fast Walsh–Hadamard transform drawn from ``seed``;
    ``rotate=None`` turns it on when ``dim > 8``), divided by its scale,
    and each 8-dim block is given a code: at ``bits=2`` bits per
    coordinate, the 16-bit code of its nearest point of the E8P codebook
    (2^16 points of the E8 lattice + 1/4, exact); at ``bits=4``, a 32-bit
    code of a point of an E8 shell and a gain. ``code_size`` is the bytes
    per vector. With ``scale="vector"`` (the default) each vector's scale
    is one float32 stored beside its codes, so vectors of any norm work;
    ``scale="unit"`` stores none and takes every vector to have norm 1;
    ``scale="direction"`` encodes as ``"unit"`` (the same codes) but
    ``decode`` divides each vector by its norm (norm 1; a zero vector
    stays 0) and ``search`` measures those unit vectors: for data known to
    be unit, or whose direction is all that matters (better recall; NMSE
    on unit data a little different). Other rates raise ``HydronError``.

    Examples
    --------
    >>> import numpy as np, hydron
    >>> q = hydron.LatticeQuantizer(384)
    >>> q.code_size, q.rotate
    (96, True)
    >>> x = np.random.default_rng(0).standard_normal((1000, 384), dtype=np.float32)
    >>> codes = q.encode(x)
    >>> codes.codes.shape, codes.scales.shape
    ((1000, 96), (1000,))
    >>> y = q.decode(codes)
    >>> bool(((x - y) ** 2).sum() / (x ** 2).sum() < 0.1)
    True
    >>> distances, ids = q.search(codes, x[:5], k=3)
    >>> ids[:, 0].tolist()
    [0, 1, 2, 3, 4]
    """

    def __new__(cls, dim: int, bits: int = 2, seed: int = 0, rotate: bool | None = None, *,
                scale: Literal["vector", "unit", "direction"] = "vector") -> LatticeQuantizer: ...
    @property
    def dim(self) -> int:
        """The dimension of the vectors."""
    @property
    def bits(self) -> int:
        """Bits per coordinate (of the vector padded to a multiple of 8)."""
    @property
    def seed(self) -> int:
        """The seed of the rotation."""
    @property
    def rotate(self) -> bool:
        """Whether the vectors are rotated before they are quantized."""
    @property
    def scale(self) -> Literal["vector", "unit", "direction"]:
        """``"vector"`` (one float32 scale per vector), ``"unit"`` (none) or
        ``"direction"`` (none; decoded vectors of norm 1).
        """
    @property
    def code_size(self) -> int:
        """Code bytes per vector (the scale is apart)."""
    def encode(self, x: npt.ArrayLike) -> LatticeCodes:
        """Encode vectors: ``x`` is ``(N, dim)``, or one ``(dim,)`` vector (one
        row of codes), of any real numbers (converted as
        ``np.asarray(x, dtype=np.float32)``). Returns a
        :class:`LatticeCodes`. A NaN or infinite coordinate raises
        ``InvalidVectorError`` (``.index``, ``.coordinate``).
        """
    def decode(self, codes: LatticeCodes) -> _F32:
        """Decode codes made by a quantizer of the same parameters: a new
        ``(N, dim)`` float32 array.
        """
    def search(self, codes: LatticeCodes, queries: npt.ArrayLike, k: int,
               metric: Literal["l2", "ip"] = "l2") -> tuple[_F32, npt.NDArray[np.int64]]:
        """The ``k`` nearest of ``codes`` to each query: ``(distances, ids)``,
        float32 and int64 arrays of shape ``(Q, min(k, N))`` for ``(Q, dim)``
        queries (``(min(k, N),)`` for one ``(dim,)`` query), best first.
        ``metric="l2"``: squared Euclidean distances, smallest first;
        ``"ip"``: inner products, largest first. Equal distances rank by the
        smaller id. Distances are asymmetric: the float queries against each
        code, decoded in registers (never the whole database), in float32.
        For ``dim`` a multiple of 8, L2 is the distance to ``decode``'s
        vector; otherwise it also counts the reconstruction's part in the
        padding coordinates. With ``scale="direction"`` each vector is its
        reconstruction divided by its norm (padding coordinates included):
        ``ip`` is ``q·ĉ/‖ĉ‖`` and ``l2`` is ``‖q‖² + 1 − 2 q·ĉ/‖ĉ‖``, which
        for ``dim`` a multiple of 8 are those of ``decode``'s vector.
        ``k`` must be at least 1.
        """

@final
class LatticeCodes:
    """Codes of a :class:`LatticeQuantizer`: ``codes``, a ``(N, code_size)``
    uint8 array; ``scales``, a ``(N,)`` float32 array (``None`` when
    ``scale`` is ``"unit"`` or ``"direction"``); and the parameters of the
    quantizer that reads them (``dim``, ``bits``, ``seed``, ``rotate``,
    ``scale``; ``quantizer`` builds it).

    ``LatticeCodes(codes, scales, *, dim, bits=2, seed=0, rotate=None,
    scale=None)`` makes them from arrays (saved ones, say): ``codes`` must
    be a uint8 array of shape ``(N, code_size)``, ``scales`` ``None`` (unit
    or direction mode) or ``N`` finite non-negative numbers (converted to
    float32). ``scale=None`` is ``"vector"`` with scales and ``"unit"``
    without; ``"direction"`` needs ``scales=None``. C-contiguous arrays of
    the right dtype are kept as they are, not copied.

    Examples
    --------
    >>> import numpy as np, hydron
    >>> q = hydron.LatticeQuantizer(12, seed=7)
    >>> c = q.encode(np.ones((2, 12)))
    >>> len(c), c.codes.dtype, c.scales.dtype
    (2, dtype('uint8'), dtype('float32'))
    >>> again = hydron.LatticeCodes(c.codes, c.scales, dim=12, seed=7)
    >>> bool((q.decode(again) == q.decode(c)).all())
    True
    """

    def __new__(cls, codes: npt.ArrayLike, scales: npt.ArrayLike | None, *, dim: int,
                bits: int = 2, seed: int = 0, rotate: bool | None = None,
                scale: Literal["vector", "unit", "direction"] | None = None) -> LatticeCodes: ...
    @property
    def codes(self) -> npt.NDArray[np.uint8]:
        """The codes: a ``(N, code_size)`` uint8 array."""
    @property
    def scales(self) -> _F32 | None:
        """One float32 scale per vector, or ``None`` (``scale="unit"`` or
        ``"direction"``).
        """
    @property
    def dim(self) -> int:
        """The dimension of the vectors."""
    @property
    def bits(self) -> int:
        """Bits per coordinate."""
    @property
    def seed(self) -> int:
        """The seed of the rotation."""
    @property
    def rotate(self) -> bool:
        """Whether the vectors were rotated."""
    @property
    def scale(self) -> Literal["vector", "unit", "direction"]:
        """``"vector"`` (with scales), ``"unit"`` or ``"direction"`` (none)."""
    @property
    def code_size(self) -> int:
        """Code bytes per vector."""
    @property
    def quantizer(self) -> LatticeQuantizer:
        """The quantizer that reads these codes (a new one, of the same
        parameters).
        """
    def __len__(self) -> int: ...


def save_lattice_codes(path: _Path, codes: LatticeCodes, format: str | None = None, *,
                       durable: bool = True) -> None:
    """Save lattice codes to a file, atomically.

    ``hydron.save(path, codes)`` calls this for a :class:`LatticeCodes`.

    Parameters
    ----------
    path : str or os.PathLike
    codes : LatticeCodes
    format : {"fory", "parquet"}, optional
        One fory ``LatticeCodes`` message (docs/format.md section 7.1, which
        stock pyfory reads), or Parquet (section 7.2: a
        ``FixedSizeBinary(code_size)`` column ``code``, a float32 column
        ``scale`` unless ``scale="unit"``, the parameters in the footer).
        Default: Parquet for a name ending in ``.parquet`` or ``.pq``, else
        the fory message.
    durable : bool
        Flush the file and its directory to disk around the rename.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, hydron
    >>> q = hydron.LatticeQuantizer(12, seed=3)
    >>> codes = q.encode(np.ones((2, 12), np.float32))
    >>> path = os.path.join(tempfile.mkdtemp(), "codes.fory")
    >>> hydron.save_lattice_codes(path, codes)
    >>> back = hydron.load_lattice_codes(path)
    >>> (back.dim, back.seed, len(back), bool((back.codes == codes.codes).all()))
    (12, 3, 2, True)
    """

def load_lattice_codes(source: _Path | Any) -> LatticeCodes | _F32:
    """Load lattice codes from a file: a fory ``LatticeCodes`` message or
    Parquet (detected from the content), every parameter, length, code and
    scale checked (docs/format.md section 7).

    ``source`` is a path or a binary file object (``open(..., "rb")``, a
    pipe, ``sys.stdin.buffer``, ``io.BytesIO``). Each is read once: a
    message only as far as its own lengths reach, so that a FIFO, a device
    or a stream that is not a message ends in an error after the bytes that
    show it; Parquet from a file object (or a FIFO) is read whole, at most
    1 GiB, as a message from one.

    ``hydron.load(source)`` calls this for lattice codes.

    Returns
    -------
    LatticeCodes
        With ``scale`` ``"vector"``, ``"unit"`` or ``"direction"`` as
        stored. For a file of ``Gf8`` codes (``hydron quantize --bits
        16|32``: scale mode ``direction``, dimension 8, rotation off, so
        also what ``LatticeQuantizer(8, ..., rotate=False,
        scale="direction")`` saves): their unit vectors, a new (N, 8) float32
        array, the same numbers as that quantizer's ``decode`` (bit for bit
        at 2 bits, to the last bit at 4).

    Raises
    ------
    CorruptError
        Parameters that disagree with the data: ``offset`` is the byte offset
        of the field in a fory message, ``row`` the vector (both ``None``
        where there is no one place).
    FormatError, TruncatedError, OSError
        Not a file of lattice codes, cut short, or unreadable.
    HydronError
        A stream longer than 1 GiB (or a message claiming more).
    TypeError
        A text-mode file object, or something that is neither a path nor a
        file object.
    """

def _load_file_object(source: Any, *, policy: str | None = None) -> Any:
    """What ``hydron.load`` reads from a binary file object, or from the path
    of a FIFO or a device (opened once; errors name it), read once: lattice
    codes (a fory ``LatticeCodes`` message, or Parquet with the
    ``hydron.quant.*`` footer keys) as :func:`load_lattice_codes` gives
    them, anything else as vectors (a new (N, 8) float32 array).

    A message is read as far as its lengths reach, a container as it
    arrives, Parquet whole (at most 1 GiB). ``policy`` applies to vectors:
    given for lattice codes, it is a ``TypeError``.
    """

def is_lattice_codes(path: _Path) -> bool:
    """Whether ``path`` is a regular file of lattice codes (a fory
    ``LatticeCodes`` message, or Parquet with the ``hydron.quant.*`` footer
    keys): what :func:`hydron.load` checks first. Reads its first 16 bytes
    (and a Parquet file's footer).
    """
