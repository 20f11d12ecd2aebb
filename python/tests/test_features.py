"""What a build without Arrow or Parquet does (``pip install ./python``
builds neither; ``python/run-tests.sh`` runs every test in that build and
in the full one): the same names, and a FeatureNotBuiltError that names
the feature and the command that builds it in, from every function and
from every reader given a Parquet file, before any data is read."""

import io
import os

import numpy as np
import pytest

import hydron
from hydron import FeatureNotBuiltError, HydronError
from hydron.errors import FULL_BUILD_COMMAND

from conftest import missing, unit_vectors

GATED_FUNCTIONS = {
    "to_arrow": ("arrow", lambda: hydron.to_arrow(hydron.E8_ROOTS)),
    "to_arrow_table": ("arrow", lambda: hydron.to_arrow_table(hydron.E8_ROOTS)),
    "from_arrow": ("arrow", lambda: hydron.from_arrow(None)),
    "codes_to_arrow": ("arrow", lambda: hydron.codes_to_arrow(np.zeros(3, np.uint8))),
    "codes_from_arrow": ("arrow", lambda: hydron.codes_from_arrow(None)),
    "ArrowArray": ("arrow", lambda: hydron.ArrowArray()),
    "ArrowTable": ("arrow", lambda: hydron.ArrowTable()),
    "save_parquet": ("parquet", lambda: hydron.save_parquet("never.parquet", hydron.E8_ROOTS)),
    "save_codes_parquet": ("parquet",
                           lambda: hydron.save_codes_parquet("never.parquet", np.zeros(3, np.uint8))),
    "load_parquet": ("parquet", lambda: hydron.load_parquet(b"PAR1")),
    "load_codes_parquet": ("parquet", lambda: hydron.load_codes_parquet(b"PAR1")),
    "iter_parquet": ("parquet", lambda: hydron.iter_parquet(b"PAR1")),
}


def test_the_build_is_the_one_the_test_run_asked_for():
    """run-tests.sh says which build it made; a wrong one (everything
    skipped, or the lean build never tested) fails here."""
    assert hydron.FEATURES <= {"arrow", "parquet"}
    assert isinstance(hydron.FEATURES, frozenset)
    if "parquet" in hydron.FEATURES:
        assert "arrow" in hydron.FEATURES  # Parquet brings arrow-rs, and Arrow with it
    expected = os.environ.get("HYDRON_EXPECT_FEATURES")
    if expected is None:
        missing("HYDRON_EXPECT_FEATURES is not set (python/run-tests.sh sets it)")
    assert hydron.FEATURES == frozenset(f for f in expected.split(",") if f)


def test_every_build_has_every_name():
    for name in hydron.__all__:
        assert hasattr(hydron, name), name
    assert set(GATED_FUNCTIONS) <= set(hydron.__all__)


@pytest.mark.parametrize("name", sorted(GATED_FUNCTIONS))
def test_a_left_out_function_says_what_it_needs_and_how_to_get_it(name, tmp_path, monkeypatch):
    feature, call = GATED_FUNCTIONS[name]
    if feature in hydron.FEATURES:
        assert getattr(hydron, name) is getattr(hydron._hydron, name)
        return
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FeatureNotBuiltError) as caught:
        call()
    error = caught.value
    assert error.feature == feature
    assert isinstance(error, HydronError) and isinstance(error, NotImplementedError)
    assert str(error).startswith(f"hydron.{name}: this build of hydron has no ")
    assert FULL_BUILD_COMMAND in str(error)
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.fixture
def parquet_file(tmp_path):
    """A Parquet file of vectors written by pyarrow (not by hydron, which may
    not have Parquet in this build)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    v = unit_vectors(100)
    column = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), 8)
    path = tmp_path / "points.parquet"
    pq.write_table(pa.table({"vector": column}), path)
    return path, v


class _ParquetStream(io.RawIOBase):
    """A Parquet file's bytes as a file object that counts what is read."""

    def __init__(self, data: bytes):
        self.data, self.taken = data, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        n = min(len(buffer), len(self.data) - self.taken)
        buffer[:n] = self.data[self.taken:self.taken + n]
        self.taken += n
        return n


def test_every_reader_reads_a_parquet_file_or_says_it_cannot(parquet_file):
    path, v = parquet_file
    data = path.read_bytes()
    readers = {
        "load(path)": lambda: hydron.load(path),
        "load(str)": lambda: hydron.load(str(path)),
        "loads(bytes)": lambda: hydron.loads(data),
        "loads(bytearray)": lambda: hydron.loads(bytearray(data)),
        "iter_chunks(path)": lambda: np.concatenate(list(hydron.iter_chunks(path))),
    }
    for what, read in readers.items():
        if "parquet" in hydron.FEATURES:
            assert (read() == v).all(), what
            continue
        with pytest.raises(FeatureNotBuiltError, match="has no Parquet support") as caught:
            read()
        assert caught.value.feature == "parquet", what
        if "path" in what or "str" in what:
            assert str(path) in str(caught.value), what
    assert hydron.detect_format(path) == hydron.Format.PARQUET  # told in every build


@pytest.mark.parametrize("reader", [hydron.load, hydron.iter_chunks])
def test_a_parquet_file_object_is_refused_after_its_first_bytes(parquet_file, reader):
    path, v = parquet_file
    stream = _ParquetStream(path.read_bytes() + bytes(1 << 20))
    if "parquet" in hydron.FEATURES:
        return  # read whole (tests/test_file.py, tests/test_parquet.py)
    with pytest.raises(FeatureNotBuiltError, match="the file object holds a Parquet file"):
        reader(io.BufferedReader(stream))
    assert stream.taken <= 1 << 20  # the head and one buffer, not the megabyte after


@pytest.mark.parametrize("save", [
    lambda p: hydron.save(p / "v.parquet", hydron.E8_ROOTS),
    lambda p: hydron.save(p / "v.pq", hydron.E8_ROOTS),
    lambda p: hydron.save(p / "v.hyd", hydron.E8_ROOTS, format="parquet"),
    lambda p: hydron.save(p / "v.hyd", hydron.E8_ROOTS, hydron.Format.PARQUET),
    lambda p: hydron.dumps(hydron.E8_ROOTS, "parquet"),
    lambda p: hydron.FileWriter(p / "v.parquet").finish(),
    lambda p: hydron.FileWriter(p / "v.PQ", compression="zstd", row_group_vectors=10).finish(),
    lambda p: hydron.FileWriter(p / "v.hyd", "parquet").finish(),
    lambda p: hydron.FileWriter(p / "v.hyd", hydron.Format.PARQUET).finish(),
    lambda p: hydron.FileWriter(p / "c.parquet", codes=True).finish(),
])
def test_writing_parquet_is_refused_before_anything_is_written(tmp_path, save):
    if "parquet" in hydron.FEATURES:
        save(tmp_path)
        return
    with pytest.raises(FeatureNotBuiltError, match="writing Parquet: this build"):
        save(tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_parquet_file_writer_leaves_the_old_file(tmp_path):
    """Refused before the temporary file is made: what is at the path stays."""
    path = tmp_path / "keep.parquet"
    path.write_bytes(b"old")
    if "parquet" in hydron.FEATURES:
        return  # (tests/test_parquet_writer.py)
    with pytest.raises(FeatureNotBuiltError, match="writing Parquet: this build") as caught:
        hydron.FileWriter(path)
    assert caught.value.feature == "parquet"
    assert FULL_BUILD_COMMAND in str(caught.value)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["keep.parquet"]


def test_the_bad_arguments_of_a_parquet_save_are_still_named_first(tmp_path):
    """The chunk size is checked as in every build (a wrong value is the
    caller's error whatever the build)."""
    with pytest.raises(ValueError, match="chunk_vectors"):
        hydron.save(tmp_path / "v.parquet", hydron.E8_ROOTS, chunk_vectors=0)



READ_STDIN = """
import sys, hydron
try:
    v = hydron.load(sys.stdin.buffer)
except hydron.FeatureNotBuiltError as e:
    print("refused", e.feature, e)
else:
    print("read", len(v))
"""


@pytest.mark.parametrize("source", ["pipe", "fifo"])
def test_parquet_on_stdin_from_a_pipe_or_a_fifo(parquet_file, tmp_path, source):
    """Parquet through a real pipe or FIFO on stdin: read whole in a build
    with Parquet; in one without, refused by name while the writer still
    has megabytes to send, and nothing hangs (how much is read is counted
    by the test above)."""
    import subprocess
    import sys
    path, v = parquet_file
    data = path.read_bytes()
    if "parquet" not in hydron.FEATURES:
        data += bytes(8 << 20)  # far more than a pipe holds
    reader = [sys.executable, "-c", READ_STDIN]
    if source == "fifo":
        fifo = tmp_path / "in.fifo"
        os.mkfifo(fifo)
        feed = subprocess.Popen([sys.executable, "-c", "import shutil, sys; "
                                 "shutil.copyfileobj(sys.stdin.buffer, open(sys.argv[1], 'wb'))",
                                 str(fifo)], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
        with open(fifo, "rb") as stdin:
            child = subprocess.Popen(reader, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
    else:
        child = subprocess.Popen(reader, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        feed = child
    # (communicate takes a reader that stops early: a broken pipe is ignored)
    if feed is child:
        out, err = child.communicate(data, timeout=120)
    else:
        feed.communicate(data, timeout=120)
        out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    if "parquet" in hydron.FEATURES:
        assert out.split() == [b"read", str(len(v)).encode()]
    else:
        assert out.startswith(b"refused parquet the file object holds a Parquet file: "), out
        assert FULL_BUILD_COMMAND.encode() in out
