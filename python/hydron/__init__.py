"""hydron for Python: read and write hydron's fory messages and files as
numpy ``(N, 8)`` float32 arrays, byte-compatible with the Rust crates.

>>> import numpy as np, hydron
>>> v = np.zeros((2, 8), dtype=np.float32); v[:, 0] = 1
>>> msg = hydron.encode_batch(v)            # a fory Gf8Batch message
>>> bool((hydron.decode_batch(msg) == v).all())
True
>>> bool((hydron.loads(hydron.dumps(v, "jsonl")) == v).all())
True

Formats: ``docs/format.md`` in the repository.
"""

from .errors import (CorruptError, FormatError, HydronError, InvalidVectorError, Section,
                     TruncatedError, UnsupportedVersionError)
from .file import (DEFAULT_CHUNK_VECTORS, MAX_CHUNK_VECTORS, FileWriter, Format, detect_format,
                   dumps, iter_chunks, load, loads, save)
from .fory import (E8_ROOTS, codes_to_vectors, decode_batch, decode_codes, decode_gf8,
                   encode_batch, encode_codes, encode_gf8, make_fory, register)
from .policy import NORM_TOLERANCE, Policy, apply_policy

__version__ = "0.1.0"

__all__ = [
    "HydronError", "FormatError", "UnsupportedVersionError", "TruncatedError", "CorruptError",
    "InvalidVectorError", "Section",
    "Policy", "NORM_TOLERANCE", "apply_policy",
    "encode_batch", "decode_batch", "encode_gf8", "decode_gf8", "encode_codes", "decode_codes",
    "E8_ROOTS", "codes_to_vectors", "make_fory", "register",
    "Format", "FileWriter", "save", "dumps", "load", "loads", "iter_chunks", "detect_format",
    "DEFAULT_CHUNK_VECTORS", "MAX_CHUNK_VECTORS",
]
