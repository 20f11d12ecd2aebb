"""Parquet data sets: a directory of part files, as pyarrow
(``write_to_dataset``), Dask (``to_parquet``), DuckDB (``COPY ... TO dir
(PER_THREAD_OUTPUT)``) and Polars (partitioned writes) write them, read by
``load``, ``load_parquet``, ``iter_parquet`` and ``iter_chunks`` bit for
bit: the ``.parquet`` files in the byte order of their relative paths,
``_`` and ``.`` names skipped. Errors name the file."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

import hydron
from hydron import FormatError, InvalidVectorError

from conftest import bits, needs_parquet, require, unit_vectors

pytestmark = needs_parquet

pa = require("pyarrow")
pq = require("pyarrow.parquet")

V = unit_vectors(6000)


def parts(root: pathlib.Path) -> list[pathlib.Path]:
    """The files of the data set at ``root`` by the documented rule, found
    independently of hydron: ``.parquet`` files below it, no path part
    starting with ``_`` or ``.``, sorted by the bytes of the relative
    path."""
    found = []
    for path in root.rglob("*.parquet"):
        rel = path.relative_to(root)
        if any(p.startswith(("_", ".")) for p in rel.parts) or not path.is_file():
            continue
        found.append(rel)
    found.sort(key=lambda rel: rel.as_posix().encode())
    return [root / rel for rel in found]


def pyarrow_vectors(path: pathlib.Path, column: str = "vector") -> np.ndarray:
    """The vectors of one file, as pyarrow reads them."""
    col = pq.read_table(path, columns=[column]).column(column).combine_chunks()
    return np.asarray(col.flatten().to_numpy(), dtype=np.float32).reshape(-1, 8)


def expected(root: pathlib.Path) -> np.ndarray:
    files = parts(root)
    assert len(files) >= 2, files
    return np.concatenate([pyarrow_vectors(f) for f in files])


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool((bits(a) == bits(b)).all())


def same_rows(a, b) -> bool:
    """The same rows, in any order (engines reorder rows by partition or
    thread)."""
    order = lambda x: np.lexsort(bits(x).T[::-1])  # noqa: E731
    return same(np.asarray(a)[order(a)], np.asarray(b)[order(b)])


def add_markers(root: pathlib.Path) -> None:
    """What Spark and Hadoop leave beside the parts, plus a stray part in a
    temporary directory: all skipped."""
    (root / "_SUCCESS").write_bytes(b"")
    (root / ".part.parquet.crc").write_bytes(b"crc")
    (root / "_temporary" / "0").mkdir(parents=True)
    hydron.save_parquet(root / "_temporary" / "0" / "part-0.parquet", V[:7])


def reads_back(root: pathlib.Path, want: np.ndarray) -> None:
    """Every reading function gives ``want`` from the directory, bit for
    bit, a chunk per row group."""
    assert same(hydron.load(root), want)
    assert same(hydron.load(str(root)), want)
    assert same(hydron.load_parquet(root), want)
    chunks = list(hydron.iter_parquet(root))
    assert len(chunks) >= len(parts(root))
    assert same(np.concatenate(chunks), want)
    assert hydron.iter_parquet(root).claimed_vectors == len(want)
    chunks = list(hydron.iter_chunks(root))
    assert same(np.concatenate(chunks), want)


def test_pyarrow_write_to_dataset(tmp_path):
    table = pa.table({"id": np.arange(len(V)), "vector": pa.array(hydron.to_arrow(V))})
    root = tmp_path / "flat"
    pq.write_to_dataset(table, root, max_rows_per_file=2000, row_group_size=500,
                        basename_template="part-{i}.parquet")
    pq.write_metadata(table.schema, root / "_common_metadata")
    add_markers(root)
    assert len(parts(root)) == 3
    want = expected(root)
    assert same(want, V), "one writer, files in order: the rows as written"
    reads_back(root, want)

    root = tmp_path / "hive"
    keyed = table.append_column("k", pa.array(np.arange(len(V)) % 3))
    pq.write_to_dataset(keyed, root, partition_cols=["k"])
    add_markers(root)
    assert [p.parent.name for p in parts(root)] == ["k=0", "k=1", "k=2"]
    want = expected(root)
    assert same_rows(want, V)
    reads_back(root, want)


def test_dask_to_parquet(tmp_path):
    dd = require("dask.dataframe")
    pd = require("pandas")
    vector_type = pa.list_(pa.float32(), 8)
    frame = pd.DataFrame({
        "vector": pd.array(pa.array(hydron.to_arrow(V)), dtype=pd.ArrowDtype(vector_type)),
        "id": np.arange(len(V)),
    })
    root = tmp_path / "dask"
    # The schema keeps the fixed_size_list<float32, 8> column (as
    # docs/at-scale.md writes vectors from Dask).
    dd.from_pandas(frame, npartitions=5).to_parquet(
        root, write_index=False, schema={"vector": vector_type, "id": pa.int64()},
        compute_kwargs={"scheduler": "synchronous"})
    assert [p.name for p in parts(root)] == [f"part.{i}.parquet" for i in range(5)]
    assert pq.read_schema(parts(root)[0]).field("vector").type.list_size == 8
    want = expected(root)
    assert same(want, V)
    reads_back(root, want)


def test_duckdb_per_thread_output(tmp_path):
    duckdb = require("duckdb")
    con = duckdb.connect()
    con.execute("SET threads = 4")
    table = pa.table({"id": np.arange(len(V)), "vector": pa.array(hydron.to_arrow(V))})
    con.register("t", table)
    root = tmp_path / "duck"
    con.execute(f"COPY (SELECT id, vector FROM t) TO '{root}' "
                "(FORMAT PARQUET, PER_THREAD_OUTPUT, ROW_GROUP_SIZE 2048, ROW_GROUPS_PER_FILE 1)")
    names = [p.name for p in parts(root)]
    assert len(names) >= 2 and all(n.startswith("data_") for n in names), names
    want = expected(root)
    assert same_rows(want, V)
    reads_back(root, want)


def test_polars_partitioned_and_several_parts(tmp_path):
    pl = require("polars")
    frame = pl.DataFrame({"k": np.arange(len(V)) % 4}).with_columns(
        pl.Series("vector", V, dtype=pl.Array(pl.Float32, 8)))
    root = tmp_path / "partitioned"
    frame.write_parquet(root, partition_by="k")
    assert [p.parent.name for p in parts(root)] == ["k=0", "k=1", "k=2", "k=3"]
    want = expected(root)
    assert same_rows(want, V)
    reads_back(root, want)

    root = tmp_path / "parts"
    root.mkdir()
    # Names whose byte order is not their numeric order: part-10 comes
    # before part-2, as pyarrow orders them.
    for i, start in enumerate(range(0, len(V), 500)):
        frame[start:start + 500].write_parquet(root / f"part-{i}.parquet",
                                               row_group_size=200)
    want = expected(root)
    assert [p.name for p in parts(root)][:3] == ["part-0.parquet", "part-1.parquet",
                                                 "part-10.parquet"]
    assert not same(want, V) and same_rows(want, V)
    reads_back(root, want)


def test_a_file_with_another_column_is_a_format_error_naming_it(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    hydron.save_parquet(root / "a.parquet", V[:100])
    other = root / "b.parquet"
    pq.write_table(pa.table({"embedding": pa.array(hydron.to_arrow(V[100:200]))}), other)
    for read in (hydron.load, hydron.load_parquet, hydron.iter_parquet, hydron.iter_chunks):
        with pytest.raises(FormatError) as caught:
            read(root)
        message = str(caught.value)
        assert message.startswith(f"{other}: this file reads column \"embedding\""), message
        assert f"as read from {root / 'a.parquet'}" in message, message
    # column= applies to every file: "embedding" is not in the first.
    with pytest.raises(FormatError, match="no column named \"embedding\""):
        hydron.load_parquet(root, column="embedding")
    os.remove(root / "a.parquet")
    pq.write_table(pa.table({"embedding": pa.array(hydron.to_arrow(V[:100]))}), root / "a.parquet")
    assert same(hydron.load_parquet(root, column="embedding"), V[:200])


def test_an_invalid_row_names_the_file_and_both_rows(tmp_path):
    root = tmp_path / "ds"
    (root / "k=1").mkdir(parents=True)
    hydron.save_parquet(root / "k=0.parquet", V[:300], row_group_vectors=100)
    bad = V[300:400].copy()
    bad[42, 3] = np.nan
    path = root / "k=1" / "part.parquet"
    pq.write_table(pa.table({"vector": pa.FixedSizeListArray.from_arrays(bad.ravel(), 8)}), path)
    for read in (hydron.load, hydron.load_parquet):
        with pytest.raises(InvalidVectorError) as caught:
            read(root)
        e = caught.value
        assert e.index == 42, "the row in its file"
        assert str(e).startswith(f"{path}: vector 42: "), str(e)
        assert str(e).endswith("(row 342 of the data set)"), str(e)
    chunks = []
    with pytest.raises(InvalidVectorError):
        for chunk in hydron.iter_parquet(root):
            chunks.append(chunk)
    assert same(np.concatenate(chunks), V[:300]), "the files before it are read"


def test_empty_directories_and_codes(tmp_path):
    empty = tmp_path / "empty"
    (empty / "k=1").mkdir(parents=True)
    (empty / "_SUCCESS").write_bytes(b"")
    for read in (hydron.load, hydron.load_parquet, hydron.iter_parquet, hydron.iter_chunks,
                 hydron.load_codes_parquet):
        with pytest.raises(FormatError, match="no .parquet files in this data set directory"):
            read(empty)
    root = tmp_path / "codes"
    root.mkdir()
    codes = hydron.nearest_roots(V)
    hydron.save_codes_parquet(root / "1.parquet", codes[3000:])
    hydron.save_codes_parquet(root / "0.parquet", codes[:3000])
    got = hydron.load_codes_parquet(root)
    assert got.dtype == np.uint8 and np.array_equal(got, codes)
