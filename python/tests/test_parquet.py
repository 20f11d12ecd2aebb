"""Parquet: hydron's files read by pyarrow, Polars and DuckDB bit for bit,
theirs read by hydron, atomic saves, streaming by row group, and hostile
files (wrong types, nulls, short rows, cuts, flipped bytes, special files)
as typed errors."""

import os
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hydron
from hydron import CorruptError, FormatError, HydronError, InvalidVectorError, Section

from conftest import bits, needs_parquet, require, unit_vectors

pytestmark = needs_parquet

pa = require("pyarrow")
pq = require("pyarrow.parquet")
pl = require("polars")
duckdb = require("duckdb")

V = unit_vectors(5000)
COMPRESSIONS = ["none", "snappy", "zstd", "zstd:9", "lz4", "gzip"]


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool((bits(a) == bits(b)).all())


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_pyarrow_polars_and_duckdb_read_hydron_files_bit_for_bit(tmp_path, compression):
    path = tmp_path / "v.parquet"
    hydron.save_parquet(path, V, compression=compression, row_group_vectors=1000)
    table = pq.read_table(path)
    assert table.schema.field("vector").type == pa.list_(
        pa.field("item", pa.float32(), nullable=False), 8)
    assert pq.ParquetFile(path).metadata.num_row_groups == 5
    assert same(table.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, 8), V)
    frame = pl.read_parquet(path)
    assert frame.schema["vector"] == pl.Array(pl.Float32, 8)
    assert same(frame["vector"].to_numpy(), V)
    got = duckdb.sql(f"SELECT vector FROM read_parquet('{path}')").fetchnumpy()["vector"]
    assert same(np.stack([np.asarray(r, np.float32) for r in got]), V)
    assert same(hydron.load_parquet(path), V)


def test_hydron_reads_files_pyarrow_polars_and_duckdb_write(tmp_path):
    fixed = pa.array(hydron.to_arrow(V))
    plain = pa.array(V.tolist(), pa.list_(pa.float32()))
    files = {}
    files["pyarrow-fixed"] = tmp_path / "a.parquet"
    pq.write_table(pa.table({"id": np.arange(len(V)), "vector": fixed}), files["pyarrow-fixed"],
                   row_group_size=700)
    files["pyarrow-list-dict-v1"] = tmp_path / "b.parquet"
    pq.write_table(pa.table({"vector": plain}), files["pyarrow-list-dict-v1"],
                   use_dictionary=True, data_page_version="1.0", compression="zstd")
    files["pyarrow-v2-nostats"] = tmp_path / "b2.parquet"
    pq.write_table(pa.table({"vector": plain}), files["pyarrow-v2-nostats"],
                   use_dictionary=False, data_page_version="2.0", write_statistics=False,
                   store_schema=False)
    # Byte-stream-split floats (pyarrow's option for float data), with and
    # without dictionary pages first, in data page v1 and v2.
    files["pyarrow-split-v1"] = tmp_path / "s1.parquet"
    pq.write_table(pa.table({"vector": fixed}), files["pyarrow-split-v1"], use_dictionary=False,
                   use_byte_stream_split=True, compression="none", data_page_size=4096)
    files["pyarrow-split-v2-dict"] = tmp_path / "s2.parquet"
    pq.write_table(pa.table({"vector": plain}), files["pyarrow-split-v2-dict"],
                   use_byte_stream_split=True, data_page_version="2.0", compression="zstd",
                   dictionary_pagesize_limit=1024, row_group_size=900)
    files["polars"] = tmp_path / "c.parquet"
    pl.DataFrame({"vector": pl.Series(V)}).write_parquet(files["polars"], row_group_size=1000)
    files["duckdb"] = tmp_path / "d.parquet"
    t = pa.table({"vector": plain})  # noqa: F841 (DuckDB's scan)
    duckdb.sql(f"COPY (SELECT vector FROM t) TO '{files['duckdb']}' (FORMAT parquet)")
    files["duckdb-float8"] = tmp_path / "e.parquet"
    duckdb.sql(f"COPY (SELECT vector::FLOAT[8] AS vector FROM t) TO '{files['duckdb-float8']}' "
               "(FORMAT parquet, ROW_GROUP_SIZE 1024)")
    for name, path in files.items():
        assert same(hydron.load_parquet(path), V), name
        assert same(hydron.load(path), V), name
        assert same(np.concatenate(list(hydron.iter_parquet(path))), V), name
        assert same(hydron.load_parquet(path.read_bytes()), V), name


def test_codes_files_both_ways(tmp_path):
    codes = hydron.nearest_roots(V)
    path = tmp_path / "codes.parquet"
    hydron.save_codes_parquet(path, codes, compression="zstd", row_group_vectors=999)
    assert (pq.read_table(path).column("code").to_numpy() == codes).all()
    assert (pl.read_parquet(path)["code"].to_numpy() == codes).all()
    assert (hydron.load_codes_parquet(path) == codes).all()
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"id": np.arange(len(codes)), "e8": pa.array(codes, pa.uint8())}),
                   other)
    assert (hydron.load_codes_parquet(other, column="e8") == codes).all()
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"code": pa.array([1, 2, 250], pa.uint8())}), bad)
    with pytest.raises(InvalidVectorError, match="vector 2: E8 root code 250") as e:
        hydron.load_codes_parquet(bad)
    assert e.value.index == 2


def test_streaming_save_load_and_the_generic_entry_points(tmp_path):
    path = tmp_path / "v.parquet"
    hydron.save_parquet(path, V, row_group_vectors=2048)
    it = hydron.iter_parquet(path)
    assert it.claimed_vectors == len(V)
    assert [len(c) for c in it] == [2048, 2048, 904]
    assert next(it, None) is None
    # hydron.save picks Parquet from the suffix or format=, load from the magic.
    for name, fmt in [("w.parquet", None), ("w.pq", None), ("w.data", "parquet")]:
        p = tmp_path / name
        hydron.save(p, V, fmt, chunk_vectors=1000)
        assert p.read_bytes()[:4] == b"PAR1"
        assert hydron.detect_format(p) == hydron.Format.PARQUET
        assert pq.ParquetFile(p).metadata.num_row_groups == 5
        assert same(hydron.load(p), V)
        with open(p, "rb") as f:
            assert same(hydron.load(f), V)
    data = hydron.dumps(V, "parquet")
    assert data[:4] == b"PAR1" and same(hydron.loads(data), V)
    assert same(hydron.loads(bytearray(data)), V)
    empty = tmp_path / "empty.parquet"
    hydron.save_parquet(empty, np.zeros((0, 8), np.float32))
    assert hydron.load_parquet(empty).shape == (0, 8)
    assert pq.read_table(empty).num_rows == 0


def test_saves_are_atomic_and_refuse_what_is_not_a_regular_file(tmp_path):
    path = tmp_path / "keep.parquet"
    hydron.save_parquet(path, V[:10])
    good = path.read_bytes()
    bad = V[:10].copy()
    bad[7, 1] = np.nan
    with pytest.raises(InvalidVectorError):
        hydron.save_parquet(path, bad)
    assert path.read_bytes() == good
    with pytest.raises(ValueError, match="compression"):
        hydron.save_parquet(path, V, compression="brotli:99")
    with pytest.raises(ValueError, match="row_group_vectors"):
        hydron.save_parquet(path, V, row_group_vectors=0)
    assert path.read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == ["keep.parquet"]  # no temporary file left
    directory = tmp_path / "dir.parquet"
    directory.mkdir()
    with pytest.raises(OSError):
        hydron.save_parquet(directory, V)
    assert directory.is_dir()


def test_special_files_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.parquet"
    os.mkfifo(fifo)
    result = []

    def read():
        try:
            hydron.load_parquet(fifo)
        except OSError as e:
            result.append(e)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "load_parquet blocked on a FIFO"
    assert result and "not a regular file" in str(result[0])
    with pytest.raises(OSError):
        hydron.load_parquet("/dev/zero")


def test_hostile_files_are_typed_errors(tmp_path):
    rows = V[:50].tolist()

    def written(table, name, **kw):
        p = tmp_path / name
        pq.write_table(table, p, **kw)
        return p

    f64 = written(pa.table({"vector": pa.array(rows, pa.list_(pa.float64(), 8))}), "f64.parquet")
    with pytest.raises(FormatError, match="Float64"):
        hydron.load_parquet(f64)
    ints = written(pa.table({"vector": pa.array([[1] * 8] * 3, pa.list_(pa.int32()))}),
                   "int.parquet")
    with pytest.raises(FormatError, match="Int32"):
        hydron.load_parquet(ints)
    short = rows[:41] + [rows[41][:7]] + rows[42:]
    seven = written(pa.table({"vector": pa.array(short, pa.list_(pa.float32()))}), "7.parquet")
    with pytest.raises(InvalidVectorError, match="row 41 has 7 values") as e:
        hydron.load_parquet(seven)
    assert e.value.index == 41
    nine = rows[:3] + [rows[3] + [0.0]] + rows[4:]
    with pytest.raises(InvalidVectorError, match="row 3 has 9 values"):
        hydron.load_parquet(written(pa.table({"vector": pa.array(nine, pa.list_(pa.float32()))}),
                                    "9.parquet"))
    nulls = rows[:5] + [None] + rows[6:]
    with pytest.raises(InvalidVectorError, match="row 5: the row is null") as e:
        hydron.load_parquet(written(pa.table({"vector": pa.array(nulls, pa.list_(pa.float32()))}),
                                    "null.parquet"))
    assert e.value.index == 5
    with pytest.raises(FormatError, match="no vector column"):
        hydron.load_parquet(written(pa.table({"id": [1, 2]}), "none.parquet"))
    with pytest.raises(FormatError):
        hydron.load_parquet(b"not parquet at all")


@pytest.mark.parametrize("layout", [
    {},
    {"use_dictionary": False},
    {"use_dictionary": False, "use_byte_stream_split": True},
    {"use_dictionary": False, "use_byte_stream_split": True, "data_page_version": "2.0",
     "compression": "zstd"},
])
def test_a_bad_vector_in_a_pyarrow_file_is_named_in_every_page_layout(tmp_path, layout):
    bad = V.copy()
    bad[3210, 5] = np.nan
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"vector": pa.array(hydron.to_arrow(bad, policy="trusted"))}), path,
                   row_group_size=1000, data_page_size=2048, **layout)
    with pytest.raises(InvalidVectorError, match="vector 3210: coordinate 5 is NaN") as e:
        hydron.load_parquet(path)
    assert (e.value.index, e.value.coordinate) == (3210, 5)
    bad[3210] = V[3210] * 2
    pq.write_table(pa.table({"vector": pa.array(hydron.to_arrow(bad, policy="trusted"))}), path,
                   row_group_size=1000, data_page_size=2048, **layout)
    with pytest.raises(InvalidVectorError, match="vector 3210") as e:
        hydron.load_parquet(path)
    assert same(hydron.load_parquet(path, policy="trusted"), bad)


def footer_of_empty_schema_elements(count: int) -> bytes:
    """A Parquet file whose footer's schema claims ``count`` elements, all
    present and empty."""
    n, varint = count, bytearray()
    while n >= 0x80:
        varint.append((n & 0x7F) | 0x80)
        n >>= 7
    varint.append(n)
    footer = bytes([0x15, 0x04, 0x19, 0xFC]) + bytes(varint) + bytes(count) + b"\x00"
    return b"PAR1" + footer + len(footer).to_bytes(4, "little") + b"PAR1"


def test_footer_containers_are_limited_as_pyarrow_limits_them(tmp_path):
    # The parquet crate reserves a list's memory from its claimed count;
    # hydron refuses a container of more than 10^6 elements, as pyarrow does.
    over, at = tmp_path / "over.parquet", tmp_path / "at.parquet"
    over.write_bytes(footer_of_empty_schema_elements(1_000_001))
    at.write_bytes(footer_of_empty_schema_elements(1_000_000))
    with pytest.raises(OSError, match="Exceeded size limit"):
        pq.read_table(over)
    with pytest.raises(CorruptError, match="claims 1000001 elements, more than the 1000000"):
        hydron.load_parquet(over)
    with pytest.raises(OSError, match="Invalid data"):  # past the limit check
        pq.read_table(at)
    # Past the limit check, hydron's schema check: the root claims no
    # children, so element 1 is outside its tree.
    with pytest.raises(CorruptError, match="schema element 1 is outside the root's tree"):
        hydron.load_parquet(at)


def test_every_cut_and_flipped_byte_is_an_error_never_a_crash(tmp_path):
    path = tmp_path / "v.parquet"
    hydron.save_parquet(path, V[:300], compression="none", row_group_vectors=100)
    data = path.read_bytes()
    for end in range(0, len(data), max(1, len(data) // 300)):
        with pytest.raises(HydronError):
            hydron.load_parquet(data[:end])
    # A changed coordinate is caught by hydron's row-group CRC-32 (arrow-rs
    # writes no page checksums), and names the row group.
    values_start = data.find(V[150].tobytes())
    assert values_start > 0
    damaged = bytearray(data)
    damaged[values_start + 5] ^= 0x01
    with pytest.raises(CorruptError) as e:
        hydron.load_parquet(bytes(damaged), policy="trusted")
    assert e.value.row_group == 1 and e.value.section == Section.row_group(1)
    rng = np.random.default_rng(5)
    for at in rng.integers(0, len(data), 400):
        flipped = bytearray(data)
        flipped[at] ^= 1 << int(rng.integers(0, 8))
        try:
            out = hydron.load_parquet(bytes(flipped))
        except HydronError:
            continue
        assert same(out, V[:300])  # a flip in unused metadata changes nothing


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 3000), st.integers(1, 1500), st.sampled_from(COMPRESSIONS))
def test_any_size_and_row_group_round_trips(tmp_path_factory, n, group, compression):
    path = tmp_path_factory.mktemp("p") / "v.parquet"
    v = V[:n]
    hydron.save_parquet(path, v, compression=compression, row_group_vectors=group, durable=False)
    assert same(hydron.load_parquet(path), v)
    table = pq.read_table(path)
    assert table.num_rows == n
    if n:
        assert same(table.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, 8), v)


def test_a_codec_hydron_does_not_read_is_a_format_error_not_corruption(tmp_path):
    """Brotli (which pyarrow, Polars and DuckDB can write) is not compiled
    into hydron: the file is well formed, so it is a FormatError naming the
    codec and the row group, not a CorruptError."""
    brotli = tmp_path / "brotli.parquet"
    pq.write_table(pa.table({"vector": pa.array(hydron.to_arrow(V[:100]))}), brotli,
                   compression="brotli")
    for read in (hydron.load_parquet, hydron.load, lambda p: list(hydron.iter_parquet(p))):
        with pytest.raises(FormatError, match="compressed with BROTLI, which hydron does not read") as e:
            read(brotli)
        assert not isinstance(e.value, CorruptError) and e.value.row_group == 0
    if os.environ.get("HYDRON_CLI"):  # set by python/run-tests.sh
        import subprocess
        done = subprocess.run([os.environ["HYDRON_CLI"], "validate", str(brotli)],
                              capture_output=True, text=True)
        assert done.returncode == 4 and "BROTLI" in done.stderr, done.stderr
    path = tmp_path / "other.parquet"
    # The other codecs pyarrow writes are read.
    for codec in ("zstd", "snappy", "gzip", "lz4", "none"):
        pq.write_table(pa.table({"vector": pa.array(hydron.to_arrow(V[:100]))}), path,
                       compression=codec)
        assert same(hydron.load_parquet(path), V[:100])


def test_a_directory_is_read_as_a_data_set(tmp_path):
    # (python/tests/test_dataset.py has the data sets engines write.)
    (tmp_path / "dataset").mkdir()
    for read in (hydron.load_parquet, hydron.load_codes_parquet, hydron.iter_parquet):
        with pytest.raises(FormatError, match="no .parquet files in this data set directory"):
            read(tmp_path / "dataset")


def test_iter_chunks_reads_a_parquet_path_row_group_by_row_group(tmp_path):
    # `load(path)` and `iter_chunks(file object)` read Parquet; the path
    # form of iter_chunks refused it as "not a hydron file".
    v = np.tile(hydron.E8_ROOTS, (3, 1))
    path = tmp_path / "v.parquet"
    hydron.save_parquet(path, v, row_group_vectors=100)
    chunks = list(hydron.iter_chunks(path))
    assert [len(c) for c in chunks] == [len(c) for c in hydron.iter_parquet(path)]
    assert [len(c) for c in chunks] == [100] * 7 + [20]
    assert (bits(np.concatenate(chunks)) == bits(v)).all()
    with open(path, "rb") as f:
        assert (bits(np.concatenate(list(hydron.iter_chunks(f)))) == bits(v)).all()
    data = bytearray(path.read_bytes())
    data[200] ^= 0x40                  # inside the first row group's data
    path.write_bytes(bytes(data))
    with pytest.raises(hydron.HydronError):
        list(hydron.iter_chunks(path))
