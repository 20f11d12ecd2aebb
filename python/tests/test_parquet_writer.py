"""Parquet written in pieces: ``FileWriter(path, "parquet", ...)`` (or a
``.parquet`` / ``.pq`` name) holds about one row group whatever the file's
size, writes what pyarrow and Polars read bit for bit, cuts row groups and
compresses as asked, keeps the old file until ``finish`` and leaves
nothing after an abort, an exception or a collected writer; codes too
(``codes=True``, ``write_codes``)."""

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import hydron
from hydron import HydronError, InvalidVectorError

from conftest import bits, needs_parquet, require, seen_during, unit_vectors

pytestmark = needs_parquet

pa = require("pyarrow")
pq = require("pyarrow.parquet")
pl = require("polars")

V = unit_vectors(5000)
PIECES = [(0, 3), (3, 1000), (1000, 1001), (1001, 4567), (4567, 4567), (4567, 5000)]
#: Each compression name and what pyarrow's metadata calls it (LZ4_RAW is "LZ4").
COMPRESSIONS = {"none": "UNCOMPRESSED", "snappy": "SNAPPY", "zstd": "ZSTD", "zstd:9": "ZSTD",
                "lz4": "LZ4", "gzip": "GZIP"}


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool((bits(a) == bits(b)).all())


def row_groups(path) -> list[int]:
    meta = pq.ParquetFile(path).metadata
    return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]


def compressions(path) -> set[str]:
    meta = pq.ParquetFile(path).metadata
    return {meta.row_group(i).column(j).compression
            for i in range(meta.num_row_groups) for j in range(meta.num_columns)}


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_pieces_are_read_back_bit_for_bit_by_hydron_pyarrow_and_polars(tmp_path, compression):
    path = tmp_path / "v.parquet"
    with hydron.FileWriter(path, "parquet", compression=compression,
                           row_group_vectors=1000) as w:
        for a, b in PIECES:
            w.write(V[a:b])
            assert w.vectors == b
        assert not path.exists()  # nothing visible before finish
    assert os.listdir(tmp_path) == ["v.parquet"]
    assert row_groups(path) == [1000] * 5
    assert compressions(path) == {COMPRESSIONS[compression]}
    table = pq.read_table(path)
    assert table.schema.field("vector").type == pa.list_(
        pa.field("item", pa.float32(), nullable=False), 8)
    assert same(table.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, 8), V)
    frame = pl.read_parquet(path)
    assert frame.schema["vector"] == pl.Array(pl.Float32, 8)
    assert same(frame["vector"].to_numpy(), V)
    assert same(hydron.load_parquet(path), V)
    assert [len(c) for c in hydron.iter_parquet(path)] == [1000] * 5
    # The same file save_parquet writes from the whole array.
    whole = tmp_path / "whole.parquet"
    hydron.save_parquet(whole, V, compression=compression, row_group_vectors=1000)
    assert path.read_bytes() == whole.read_bytes()


def test_a_parquet_name_or_format_picks_parquet_with_save_parquets_defaults(tmp_path):
    v = np.tile(hydron.E8_ROOTS, (1100, 1))  # 264,000 vectors: one full default row group
    for name, form in [("a.parquet", None), ("b.PQ", None), ("c.hyd", "parquet"),
                       ("d", hydron.Format.PARQUET)]:
        with hydron.FileWriter(tmp_path / name, form) as w:
            w.write(v[:100_000])
            w.write(v[100_000:])
        assert hydron.detect_format(tmp_path / name) == hydron.Format.PARQUET, name
        assert row_groups(tmp_path / name) == [hydron.DEFAULT_ROW_GROUP_VECTORS, 1856], name
        assert compressions(tmp_path / name) == {"SNAPPY"}, name
        assert same(hydron.load(tmp_path / name), v), name
    with hydron.FileWriter(tmp_path / "e.parquet", "fory") as w:  # a container, asked for
        w.write(v[:10])
    assert hydron.detect_format(tmp_path / "e.parquet") == hydron.Format.FORY


@pytest.mark.parametrize("make, error, match", [
    (lambda p: hydron.FileWriter(p / "v.parquet", chunk_vectors=10), ValueError,
     "chunk_vectors is the chunk size of a hydron container; a Parquet FileWriter takes "
     "row_group_vectors"),
    (lambda p: hydron.FileWriter(p / "v.parquet", row_group_vectors=0), ValueError,
     "row_group_vectors must be a positive integer, got 0"),
    (lambda p: hydron.FileWriter(p / "v.parquet", compression="brotli"), ValueError,
     "compression"),
    (lambda p: hydron.FileWriter(p / "v.parquet", codes=True, policy="trusted"), ValueError,
     "takes no policy"),
    (lambda p: hydron.FileWriter(p / "v.hyd", compression="zstd"), ValueError,
     "compression is for a Parquet file"),
    (lambda p: hydron.FileWriter(p / "v.jsonl", row_group_vectors=10), ValueError,
     "row_group_vectors is for a Parquet file"),
    (lambda p: hydron.FileWriter(p / "v.hyd", "fory", codes=True), ValueError,
     "codes=True is for a Parquet file"),
    (lambda p: hydron.FileWriter(p / "v.hyd", "xml", compression="zstd"), ValueError,
     "unknown format 'xml': expected 'fory', 'jsonl' or 'parquet'"),
    (lambda p: hydron.FileWriter(p, "parquet"), OSError, "is a directory"),
])
def test_bad_arguments_are_refused_before_anything_is_created(tmp_path, make, error, match):
    with pytest.raises(error, match=match):
        make(tmp_path)
    assert os.listdir(tmp_path) == []


def test_abort_an_exception_or_an_error_leaves_the_old_file(tmp_path):
    path = tmp_path / "keep.parquet"
    hydron.save_parquet(path, V[:10])
    old = path.read_bytes()
    with pytest.raises(RuntimeError):
        with hydron.FileWriter(path, row_group_vectors=100) as w:
            w.write(V[:1000])      # row groups written to the temporary file
            raise RuntimeError("stop")
    for end in ("abort", "close"):
        w = hydron.FileWriter(path, row_group_vectors=100)
        w.write(V[:1000])
        getattr(w, end)()
        with pytest.raises(HydronError, match="closed"):
            w.write(V[:1])
        with pytest.raises(HydronError, match="closed"):
            w.finish()
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["keep.parquet"]
    # A write refused by its checks leaves the writer open; the file is
    # replaced only by finish.
    bad = V[:5].copy()
    bad[3, 2] = np.nan
    with hydron.FileWriter(path) as w:
        w.write(V[:100])
        with pytest.raises(InvalidVectorError, match="vector 3: coordinate 2 is NaN"):
            w.write(bad)
        for refused, kind in [(V[:5].astype(np.complex64), TypeError),
                              (np.zeros((5, 7), np.float32), ValueError)]:
            with pytest.raises(kind):
                w.write(refused)
        w.write(V[100:200])
        assert path.read_bytes() == old
    assert same(hydron.load_parquet(path), V[:200])
    assert os.listdir(tmp_path) == ["keep.parquet"]


def test_a_failed_write_spends_the_writer_and_saves_nothing(tmp_path):
    """A disk error while writing: the writer is spent, and leaving the
    with block says nothing was saved. (A file size limit makes the error:
    RLIMIT_FSIZE, in a subprocess, with SIGXFSZ ignored.)"""
    path = tmp_path / "big.parquet"
    hydron.save_parquet(path, V[:10])
    code = f"""
import resource, signal, sys, numpy as np, hydron
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
v = np.tile(hydron.E8_ROOTS, (1000, 1))
try:
    with hydron.FileWriter({str(path)!r}, compression="none", row_group_vectors=10_000) as w:
        try:
            for _ in range(10):
                w.write(v)
        except OSError as e:
            print("write failed:", e.errno)
except hydron.HydronError as e:
    print("exit:", e)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "write failed: 27", done.stdout  # EFBIG
    assert "nothing was saved: an earlier write failed" in lines[1], done.stdout
    assert same(hydron.load_parquet(path), V[:10])
    assert os.listdir(tmp_path) == ["big.parquet"]


def test_an_unfinished_writer_warns_when_collected_and_leaves_nothing(tmp_path):
    w = hydron.FileWriter(tmp_path / "w.parquet")
    w.write(V[:3])
    with pytest.warns(ResourceWarning, match=r"w\.parquet.* was never finished: 3 vectors "
                                             r"written and discarded, nothing saved"):
        del w
        gc.collect()
    w = hydron.FileWriter(tmp_path / "c.parquet", codes=True)
    w.write_codes([1, 2])
    with pytest.warns(ResourceWarning, match=r"c\.parquet.* was never finished: 2 codes"):
        del w
        gc.collect()
    assert os.listdir(tmp_path) == []


def test_codes_in_pieces(tmp_path):
    codes = hydron.nearest_roots(V)
    path = tmp_path / "codes.parquet"
    with hydron.FileWriter(path, codes=True, compression="zstd", row_group_vectors=999) as w:
        for a, b in PIECES:
            w.write_codes(codes[a:b])
        w.write_codes(np.uint8(7))             # one code
        w.write_codes([])                      # none
        assert w.vectors == len(codes) + 1
        # Refused by their checks, leaving the writer open:
        with pytest.raises(InvalidVectorError, match="vector 1: E8 root code 240 is out of range"):
            w.write_codes([3, 240])
        with pytest.raises(TypeError, match="this FileWriter writes codes"):
            w.write(V[:1])
        w.write_codes(np.array([239], np.int64))
    want = np.concatenate([codes, [7, 239]]).astype(np.uint8)
    assert (hydron.load_codes_parquet(path) == want).all()
    table = pq.read_table(path)
    assert table.schema.field("code").type == pa.uint8()
    assert (table.column("code").to_numpy() == want).all()
    assert (pl.read_parquet(path)["code"].to_numpy() == want).all()
    assert row_groups(path) == [999] * 5 + [7]
    assert compressions(path) == {"ZSTD"}
    whole = tmp_path / "whole.parquet"
    hydron.save_codes_parquet(whole, want, compression="zstd", row_group_vectors=999)
    assert path.read_bytes() == whole.read_bytes()
    with hydron.FileWriter(tmp_path / "v.parquet") as w:
        with pytest.raises(TypeError, match=r"write_codes needs a Parquet file of codes"):
            w.write_codes(codes)
        w.write(V[:2])
    with hydron.FileWriter(tmp_path / "v.hyd") as c:
        with pytest.raises(TypeError, match=r"write_codes needs a Parquet file of codes"):
            c.write_codes(codes)
    assert same(hydron.load(tmp_path / "v.parquet"), V[:2])


SHARED = """
import sys, threading, numpy as np, hydron
v = np.tile(hydron.E8_ROOTS, (100, 1))
w = hydron.FileWriter(sys.argv[1], durable=False, row_group_vectors=5000)
ts = [threading.Thread(target=lambda: [w.write(v) for _ in range(20)]) for _ in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]
w.finish()
got = hydron.load_parquet(sys.argv[1])
print(len(got), int((np.unique(got, axis=0) == np.unique(v, axis=0)).all()))
"""


def test_a_writer_shared_by_threads_takes_turns(tmp_path):
    """In a subprocess with a timeout, so that a deadlock fails the test."""
    path = tmp_path / "t.parquet"
    done = subprocess.run([sys.executable, "-c", SHARED, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(2 * 20 * 24_000), "1"]
    assert row_groups(path) == [5000] * 192


def test_a_large_write_releases_the_gil(tmp_path):
    """With a switch interval of 10 s the main thread runs while the worker
    is inside ``write`` only if the call released the GIL."""
    big = np.tile(unit_vectors(1024), (512, 1))
    # (Trusted: no check of the vectors, which releases the GIL by itself.)
    w = hydron.FileWriter(tmp_path / "g.parquet", compression="none", durable=False,
                          policy="trusted")
    seen = seen_during(lambda: w.write(big))
    assert seen == {"in_call": True, "done": False}
    w.finish()
    assert same(hydron.load_parquet(tmp_path / "g.parquet"), big)


PEAK = """
import resource, sys, numpy as np, hydron
n, piece, whole = int(sys.argv[2]), 65_536, sys.argv[3] == "whole"

def part(i):
    rng = np.random.default_rng(i)
    return hydron.normalize(rng.standard_normal((piece, 8), dtype=np.float32))

part(0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if whole:  # the control: the whole array in memory, as save_parquet needs it
    hydron.save_parquet(sys.argv[1], np.concatenate([part(i) for i in range(n // piece)]),
                        compression="none")
else:
    with hydron.FileWriter(sys.argv[1], compression="none", durable=False) as w:
        for i in range(n // piece):
            w.write(part(i))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_peak_memory_stays_near_one_row_group_whatever_the_file_size(tmp_path):
    """2M vectors (64 MiB) written in pieces of 64k: the peak RSS grows by
    far less than the array (one default row group is 8 MiB). Writing the
    whole array with save_parquet (the control, run by hand) grows it by
    more than 64 MiB."""
    n = 2 * 1024 * 1024
    path = tmp_path / "big.parquet"
    done = subprocess.run([sys.executable, "-c", PEAK, str(path), str(n), "pieces"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    grown_mib = int(done.stdout) / 1024  # ru_maxrss is in KiB on Linux
    whole_mib = n * 32 / (1 << 20)
    assert grown_mib < whole_mib / 3, f"peak RSS grew by {grown_mib:.1f} MiB"
    assert row_groups(path) == [hydron.DEFAULT_ROW_GROUP_VECTORS] * 8
    rng = np.random.default_rng(5)
    want = hydron.normalize(rng.standard_normal((65_536, 8), dtype=np.float32))
    second = [chunk for _, chunk in zip(range(2), hydron.iter_parquet(path))][1]
    assert same(second[65_536:2 * 65_536], want)  # the sixth piece
