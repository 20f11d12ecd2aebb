"""List offsets that lie, handed over through the Arrow PyCapsule
interface: every kind of list, through every kind of source, is an
``InvalidVectorError`` whose ``.index`` is the row (counted across
chunks), not arrow-rs's layout message (which names no row)."""

import numpy as np
import pytest

import hydron
from hydron import InvalidVectorError

from conftest import needs_arrow, require

pytestmark = needs_arrow

pa = require("pyarrow")

VALUES = pa.array(np.zeros(40, np.float32))


def list_array(offsets, large):
    """A list (or large list) of float32 with these offsets over 40 zeros,
    built from buffers (pyarrow checks only that they are not negative and
    stay within the values)."""
    kind = pa.large_list(pa.float32()) if large else pa.list_(pa.float32())
    dtype = np.int64 if large else np.int32
    buffer = pa.py_buffer(np.array(offsets, dtype).tobytes())
    return pa.Array.from_buffers(kind, len(offsets) - 1, [None, buffer], children=[VALUES])


def sources(bad, large):
    """The bad array as each kind of source, with the row its first row
    has in it: alone, after a good chunk of one row, in a record batch, in
    a table after a good chunk."""
    good = list_array([0, 8], large)
    chunked = pa.chunked_array([good, bad])
    return [
        ("array", bad, 0),
        ("chunked array", chunked, 1),
        ("record batch", pa.record_batch({"vector": bad}), 0),
        ("table", pa.table({"vector": chunked}), 1),
    ]


# The offsets, and the row they make wrong.
FAULTS = [
    ("an offset before the one before it", [0, 8, 16, 8, 16], 2, "offset 8 is before 16"),
    ("a first row past its second", [8, 0, 8], 0, "offset 0 is before 8"),
    ("a row of 7", [0, 8, 15, 23], 1, "has 7 values"),
]


@pytest.mark.parametrize("large", [False, True], ids=["list", "large_list"])
@pytest.mark.parametrize("fault", FAULTS, ids=[f[0] for f in FAULTS])
def test_bad_list_offsets_name_the_row(fault, large):
    _, offsets, row, words = fault
    for kind, source, shift in sources(list_array(offsets, large), large):
        with pytest.raises(InvalidVectorError) as caught:
            hydron.from_arrow(source)
        assert caught.value.index == row + shift, (kind, str(caught.value))
        assert words in str(caught.value), (kind, str(caught.value))
        assert f"row {row + shift}" in str(caught.value), (kind, str(caught.value))
