"""``hydron.save`` under the strict policy checks each chunk just before it
is written (so a large array is read from memory once). What a caller sees
is unchanged: a bad vector raises ``InvalidVectorError`` with its index in
the whole array, the target is left as it was, no temporary file stays
behind, a bad vector in the first chunk is reported before anything is
created, and a FIFO receives nothing when any vector is bad.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import hydron
from conftest import missing, unit_vectors

CHUNK = 64


def with_bad(n: int, bad: int) -> np.ndarray:
    v = unit_vectors(n)
    v[bad, 2] = np.nan
    return v


@pytest.mark.parametrize("form", ["fory", "jsonl"])
@pytest.mark.parametrize("bad", [0, 63, 64, 300, 999])
def test_a_bad_vector_leaves_the_target_and_the_directory_as_they_were(tmp_path, form, bad):
    path = tmp_path / "points.hyd"
    old = unit_vectors(10, seed=1)
    hydron.save(path, old, form, durable=False)
    before = path.read_bytes()
    with pytest.raises(hydron.InvalidVectorError) as e:
        hydron.save(path, with_bad(1000, bad), form, chunk_vectors=CHUNK, durable=False)
    assert e.value.index == bad
    assert e.value.coordinate == 2
    assert str(e.value) == f"vector {bad}: coordinate 2 is NaN"
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["points.hyd"]


def test_the_checked_save_writes_what_the_unchecked_one_does(tmp_path):
    v = unit_vectors(1000)
    for n in [0, 1, 63, 64, 65, 1000]:
        hydron.save(tmp_path / "strict.hyd", v[:n], chunk_vectors=CHUNK)
        hydron.save(tmp_path / "trusted.hyd", v[:n], chunk_vectors=CHUNK, policy="trusted")
        strict = (tmp_path / "strict.hyd").read_bytes()
        assert strict == (tmp_path / "trusted.hyd").read_bytes()
        assert strict == hydron.dumps(v[:n], chunk_vectors=CHUNK)


def test_a_bad_first_chunk_is_reported_before_the_file_is_created(tmp_path):
    """The vector error, not the missing directory: nothing was created."""
    with pytest.raises(hydron.InvalidVectorError) as e:
        hydron.save(tmp_path / "no" / "such" / "dir.hyd", with_bad(1000, 5),
                    chunk_vectors=CHUNK)
    assert e.value.index == 5


def test_a_fifo_receives_nothing_when_a_later_vector_is_bad(tmp_path):
    """A FIFO is written directly (there is no file to rename over it), so
    every vector is checked before the first byte goes out."""
    if not hasattr(os, "mkfifo"):
        missing("os.mkfifo (a platform with FIFOs)")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # A reader that does not block opening, so that the save does not wait
    # for one; the pipe's buffer (64 KiB) holds the chunks before the bad
    # vector, should any be written.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(hydron.InvalidVectorError) as e:
            hydron.save(fifo, with_bad(1000, 300), chunk_vectors=CHUNK)
        assert e.value.index == 300
        try:
            got = os.read(reader, 1 << 20)
        except BlockingIOError:  # a writer still open: nothing to read
            got = b""
        assert got == b""
    finally:
        os.close(reader)
    # The same FIFO takes a good save.
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("v", hydron.load(fifo)))
    thread.start()
    hydron.save(fifo, unit_vectors(100), chunk_vectors=CHUNK)
    thread.join(30)
    assert np.array_equal(result["v"], unit_vectors(100))
