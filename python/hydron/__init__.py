"""hydron for Python: 8-dimensional geometry on the E8 lattice, and hydron's
fast, validated formats, on numpy arrays.

The work is done by the Rust crates (``hydron-core``: SIMD batch kernels;
``hydron-codec``: fory, JSON, the checksummed file container) through the
native module ``hydron._hydron``; this package re-exports it and adds the
:class:`Policy` and :class:`Format` names.

>>> import numpy as np, hydron
>>> v = hydron.normalize(np.array([[3, 4, 0, 0, 0, 0, 0, 0]], dtype=np.float32))
>>> v[0, :2].tolist()
[0.6000000238418579, 0.800000011920929]
>>> hydron.nearest_roots(v).tolist()
[0]
>>> msg = hydron.encode_batch(v)              # a fory Gf8Batch message
>>> bool((hydron.decode_batch(msg) == v).all())
True

Vectors are ``(N, 8)`` arrays, or one ``(8,)`` vector: C-contiguous, aligned
float32 ones are read in place, float32 arrays in any other layout are
copied by numpy first (lossless), and other real numbers (float64, float16,
integers, lists, ``__array__`` objects) are converted as
``np.asarray(x, dtype=np.float32)`` converts them (a finite value beyond
float32's range is an ``InvalidVectorError``). Masked arrays are refused.
Results are new, writable arrays (or ``out=``), with one vector's shape for
one vector. The README's "The numpy rules" has the table. Formats:
``docs/format.md`` in the repository.
"""

from __future__ import annotations

import enum
import os
import stat
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from . import _hydron
from ._hydron import (DEFAULT_CHUNK_VECTORS, DEFAULT_ROW_GROUP_VECTORS, FEATURES, MAX_BATCH_LEN,
                      MAX_CHUNK_VECTORS, MAX_CODES_LEN, NORM_TOLERANCE, ChunkIter, FileWriter,
                      LatticeCodes, LatticeQuantizer, backend, is_lattice_codes,
                      load_lattice_codes, save_lattice_codes,
                      codes_to_vectors, decode_batch, decode_codes, decode_gf8, decode_json,
                      decode_jsonl, dot, dumps, encode_batch, encode_codes, encode_gf8,
                      encode_json, encode_jsonl, geodesic_distance, iter_chunks, loads,
                      nearest_lattice_points, nearest_roots, normalize, slerp,
                      spherical_mean, validate)
from ._hydron import load as _load_vectors
from ._hydron import save as _save_vectors
from .errors import (CorruptError, FeatureNotBuiltError, FormatError, HydronError,
                     InvalidVectorError, Section, TruncatedError, UnsupportedVersionError,
                     feature_not_built)


def _not_built(name: str, feature: str) -> Any:
    """A function (or, for a class name, a class) called ``name`` that
    raises :class:`FeatureNotBuiltError` for ``feature``."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise feature_not_built(f"hydron.{name}", feature)

    doc = (f"Not in this build of hydron, which has no {feature!r} feature "
           f"(``hydron.FEATURES``): raises FeatureNotBuiltError.")
    if name[0].isupper():
        return type(name, (), {"__new__": refuse, "__doc__": doc, "__module__": __name__})
    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = doc
    return refuse


# The names of the native module that need a feature (see FEATURES), and
# those this build left out. In place of each left-out function or class,
# the package has one of the same name that raises FeatureNotBuiltError
# (made at the end of this file), so that every build has the same names.
_GATED = {
    "arrow": ("ArrowArray", "ArrowTable", "to_arrow", "to_arrow_table", "from_arrow",
              "codes_to_arrow", "codes_from_arrow"),
    "parquet": ("save_parquet", "load_parquet", "save_codes_parquet", "load_codes_parquet",
                "iter_parquet", "ParquetChunkIter"),
}
_NOT_BUILT = {name: feature for feature, names in _GATED.items() if feature not in FEATURES
              for name in names}
if TYPE_CHECKING or "arrow" in FEATURES:
    from ._hydron import (ArrowArray, ArrowTable, codes_from_arrow, codes_to_arrow,
                          from_arrow, to_arrow, to_arrow_table)
if TYPE_CHECKING or "parquet" in FEATURES:
    from ._hydron import (ParquetChunkIter, iter_parquet, load_codes_parquet, load_parquet,
                          save_codes_parquet, save_parquet)

__version__ = "0.1.0"


class Policy(str, enum.Enum):
    """What a decoder (or encoder) does with each vector, as Rust's
    ``hydron_codec::Policy``.

    ``STRICT`` (the default): every vector must be finite and of unit norm
    (``|‖x‖² − 1| ≤ 2e-5`` in float32), or exactly zero; anything else raises
    :class:`InvalidVectorError` naming the vector and the coordinate (NaN,
    infinity) or the norm.

    ``RENORMALIZE``: finite vectors that are not unit are scaled onto the
    sphere (valid ones are kept bit for bit); NaN and infinity still raise.

    ``TRUSTED``: no check at all. Only for data you wrote or checked.

    Functions also accept the strings ``"strict"``, ``"renormalize"``,
    ``"trusted"``.
    """

    STRICT = "strict"
    RENORMALIZE = "renormalize"
    TRUSTED = "trusted"


class Format(str, enum.Enum):
    """The forms of a file hydron reads and writes. Functions also accept
    the strings ``"fory"``, ``"jsonl"`` and ``"parquet"``."""

    #: Binary: chunks of fory batch messages. Compact and fast.
    FORY = "fory"
    #: Text: JSON Lines, one vector per line, with checksum lines.
    JSONL = "jsonl"
    #: Parquet: one column of 8 float32 per row, for pyarrow, Polars,
    #: DuckDB and Dask (:func:`save_parquet`, :func:`load_parquet`,
    #: :class:`FileWriter` in pieces; in a build with Parquet, see
    #: ``FEATURES``).
    PARQUET = "parquet"


#: The 240 unit E8 roots in code order (read-only), bit for bit
#: hydron-core's ``E8_ROOTS``: ``E8_ROOTS[nearest_roots(v)]`` are the roots.
E8_ROOTS = _hydron.e8_roots()
E8_ROOTS.setflags(write=False)


def apply_policy(vectors: npt.ArrayLike,
                 policy: Policy | str = Policy.STRICT) -> npt.NDArray[np.float32]:
    """The vectors checked (``"strict"``), renormalized (``"renormalize"``)
    or taken as they are (``"trusted"``): a new ``(N, 8)`` float32 array.
    The same as ``normalize(vectors, policy=policy)``.

    >>> import numpy as np
    >>> apply_policy(np.array([[0, 2, 0, 0, 0, 0, 0, 0]], np.float32), "renormalize")[0, 1]
    np.float32(1.0)
    """
    return normalize(vectors, policy=policy)


def detect_format(source: str | os.PathLike[str] | bytes | bytearray | memoryview) -> Format:
    """Which form a hydron file is in, from its first bytes (``source`` is a
    path or bytes); raises :class:`FormatError` (or :class:`CorruptError`
    for a damaged magic, :class:`TruncatedError` for a cut one) if it is not
    a hydron file. Checks nothing else.

    >>> detect_format(b"\\x89HYD\\r\\n\\x1a\\n" + bytes(36)).value
    'fory'
    """
    return Format(_hydron.detect_format(source))


def save(path: str | os.PathLike[str], vectors: npt.ArrayLike | LatticeCodes,
         format: str | None = None, *, chunk_vectors: int = 65536, durable: bool = True,
         policy: str | None = None) -> None:
    # A LatticeCodes goes to save_lattice_codes; anything else is vectors.
    if isinstance(vectors, LatticeCodes):
        if chunk_vectors != 65536 or policy is not None:
            raise TypeError("save: chunk_vectors= and policy= apply to vectors, "
                            "not to LatticeCodes")
        save_lattice_codes(path, vectors, format, durable=durable)
        return
    _save_vectors(path, vectors, format, chunk_vectors=chunk_vectors, durable=durable,
                  policy=policy)


def _is_stream_path(path: str | os.PathLike[str]) -> bool:
    # A path that exists and is neither a regular file nor a directory: a
    # FIFO, a character or block device. (Only stat: nothing is opened.)
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def load(source: str | os.PathLike[str] | Any, *, policy: str | None = None) -> Any:
    # A file of lattice codes goes to load_lattice_codes; anything else is
    # read as vectors. A file object, or a FIFO or a device by its path, is
    # read once, by _load_file_object, which tells codes from its content
    # (a FIFO opened twice would hang). (Typed Any, as numpy's ``np.load``,
    # since what comes back depends on the file.)
    if isinstance(source, (str, os.PathLike)):
        if _is_stream_path(source):
            return _hydron._load_file_object(source, policy=policy)
        if is_lattice_codes(source):
            if policy is not None:
                raise TypeError("load: policy= applies to vectors, not to lattice codes")
            return load_lattice_codes(source)
    elif hasattr(source, "read"):
        return _hydron._load_file_object(source, policy=policy)
    return _load_vectors(source, policy=policy)


save.__doc__ = (_save_vectors.__doc__ or "") + """

Notes
-----
A :class:`LatticeCodes` in place of ``vectors`` is saved by
:func:`save_lattice_codes` (``format`` ``"fory"`` or ``"parquet"``, by
default from the name; ``chunk_vectors`` and ``policy`` do not apply).
"""
load.__doc__ = (_load_vectors.__doc__ or "") + """

Notes
-----
A file of lattice codes (:func:`is_lattice_codes`) is read by
:func:`load_lattice_codes`: a :class:`LatticeCodes` (or, for ``Gf8`` codes,
their unit vectors). So is a binary file object, or the path of a FIFO or
a device, that holds lattice codes (a fory ``LatticeCodes`` message, or
Parquet with the ``hydron.quant.*`` footer keys), told from its content and
read once (Parquet whole, at most 1 GiB); ``policy`` applies to vectors only
(``TypeError`` for codes).
"""

__all__ = [
    "HydronError", "FormatError", "UnsupportedVersionError", "TruncatedError", "CorruptError",
    "InvalidVectorError", "FeatureNotBuiltError", "Section", "Policy", "Format", "FEATURES",
    "NORM_TOLERANCE", "DEFAULT_CHUNK_VECTORS", "MAX_CHUNK_VECTORS", "MAX_BATCH_LEN",
    "MAX_CODES_LEN", "E8_ROOTS",
    "normalize", "validate", "apply_policy", "nearest_roots", "codes_to_vectors",
    "nearest_lattice_points", "dot", "geodesic_distance", "slerp", "spherical_mean", "backend",
    "encode_batch", "decode_batch", "encode_gf8", "decode_gf8", "encode_codes", "decode_codes",
    "encode_json", "decode_json", "encode_jsonl", "decode_jsonl",
    "save", "load", "dumps", "loads", "iter_chunks", "ChunkIter", "FileWriter", "detect_format",
    "LatticeQuantizer", "LatticeCodes", "save_lattice_codes", "load_lattice_codes",
    "is_lattice_codes",
    "DEFAULT_ROW_GROUP_VECTORS", "ArrowArray", "ArrowTable", "to_arrow", "to_arrow_table", "from_arrow", "codes_to_arrow",
    "codes_from_arrow", "save_parquet", "load_parquet", "save_codes_parquet",
    "load_codes_parquet", "iter_parquet", "ParquetChunkIter",
]

globals().update({name: _not_built(name, feature) for name, feature in _NOT_BUILT.items()
                  if name in __all__})
