"""Arrow through the PyCapsule interface, against the real consumers and
producers: pyarrow, Polars and DuckDB take hydron's arrays without a copy,
and hydron reads theirs (fixed-size lists, plain lists, chunked arrays,
tables, streams) with every malformed layout a typed error naming the row."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hydron
from hydron import FormatError, InvalidVectorError

from conftest import bits, needs_arrow, require, unit_vectors

pytestmark = needs_arrow


def same(a, b) -> bool:
    """Equal bit for bit (NaN, -0.0), and of one shape."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool((bits(a) == bits(b)).all())

pa = require("pyarrow")
pl = require("polars")
duckdb = require("duckdb")

V = unit_vectors(1000)


def floats_of(array) -> np.ndarray:
    """The (N, 8) floats of a pyarrow fixed-size-list or list array."""
    return array.flatten().to_numpy(zero_copy_only=False).reshape(-1, 8)


def test_to_arrow_shares_the_numpy_memory():
    v = V.copy()
    a = pa.array(hydron.to_arrow(v))
    assert a.type == pa.list_(pa.field("item", pa.float32(), nullable=False), 8)
    assert len(a) == len(v)
    assert a.values.buffers()[1].address == v.ctypes.data  # no copy
    assert same(floats_of(a), v)
    del v  # the Arrow array keeps the numpy array alive
    assert same(floats_of(a), V)


def test_to_arrow_copies_strided_input_and_checks_it():
    strided = np.ascontiguousarray(np.repeat(V, 2, axis=0))[::2]
    assert not strided.flags.c_contiguous
    assert same(floats_of(pa.array(hydron.to_arrow(strided))), V)
    bad = V.copy()
    bad[17, 3] = np.nan
    with pytest.raises(InvalidVectorError) as e:
        hydron.to_arrow(bad)
    assert (e.value.index, e.value.coordinate) == (17, 3)
    scaled = V * 3
    assert np.allclose(floats_of(pa.array(hydron.to_arrow(scaled, policy="renormalize"))), V,
                       atol=1e-6)
    # Other real numbers are converted as np.asarray(x, np.float32) would.
    assert same(floats_of(pa.array(hydron.to_arrow(V.astype(np.float64)))), V)
    with pytest.raises(TypeError, match="expected real numbers"):
        hydron.to_arrow(V.astype(np.complex64))
    with pytest.raises(ValueError, match=r"\(N, 8\)"):
        hydron.to_arrow(np.zeros((3, 7), np.float32))
    assert len(pa.array(hydron.to_arrow(np.zeros((0, 8), np.float32)))) == 0


def test_the_table_goes_to_pyarrow_polars_and_duckdb_in_place():
    v = V.copy()
    t = hydron.to_arrow_table(v)
    table = pa.table(t)
    assert table.schema.field("vector").metadata == {b"hydron.type": b"gf8"}
    assert table.column("vector").chunk(0).values.buffers()[1].address == v.ctypes.data
    frame = pl.DataFrame(hydron.to_arrow_table(v))
    assert frame.schema["vector"] == pl.Array(pl.Float32, 8)
    assert same(frame["vector"].to_numpy(), v)
    assert same(pl.Series(hydron.to_arrow(v)).to_numpy(), v)
    t = hydron.to_arrow_table(v, column="emb")  # noqa: F841 (DuckDB finds it by name)
    got = duckdb.sql("SELECT emb[1] AS x0, emb[8] AS x7 FROM t").fetchnumpy()
    assert same(got["x0"], v[:, 0]) and same(got["x7"], v[:, 7])


def test_the_exports_are_read_as_often_as_asked_and_say_what_they_hold():
    a, t = hydron.to_arrow(V), hydron.to_arrow_table(V, column="emb")
    assert isinstance(a, hydron.ArrowArray) and isinstance(t, hydron.ArrowTable)
    assert len(a) == len(t) == len(V)
    assert repr(a) == "hydron.ArrowArray(FixedSizeList(8 x non-null Float32), 1000 rows)"
    assert repr(t).startswith("hydron.ArrowTable(emb: FixedSizeList(") and "1000 rows" in repr(t)
    for _ in range(3):
        assert same(floats_of(pa.array(a)), V)
        assert same(floats_of(pa.table(t).column("emb").combine_chunks()), V)
    assert pa.schema(t).field("emb").metadata == {b"hydron.type": b"gf8"}
    assert pa.field(a).type == pa.list_(pa.field("item", pa.float32(), nullable=False), 8)
    assert pa.array(hydron.codes_to_arrow(np.arange(240))).type == pa.uint8()
    # A consumer's requested schema is ignored, as the interface allows.
    wanted = pa.list_(pa.float64()).__arrow_c_schema__()
    schema, array = a.__arrow_c_array__(wanted)
    assert pa.Array._import_from_c_capsule(schema, array).type == pa.field(a).type
    assert pa.RecordBatchReader._import_from_c_capsule(
        t.__arrow_c_stream__(wanted)).read_all().num_rows == len(V)


class Exporter:
    """Arrow data that hands out the capsules it is given."""

    def __init__(self, method, value):
        setattr(self, method, lambda requested_schema=None: value)


def test_capsules_that_break_the_interface_are_errors_not_crashes():
    pair = pa.array(hydron.to_arrow(V)).__arrow_c_array__()
    once = Exporter("__arrow_c_array__", pair)
    assert same(hydron.from_arrow(once), V)
    with pytest.raises(FormatError, match="already consumed"):
        hydron.from_arrow(once)
    stream = Exporter("__arrow_c_stream__", pa.chunked_array([pa.array(hydron.to_arrow(V))])
                      .__arrow_c_stream__())
    assert same(hydron.from_arrow(stream), V)
    with pytest.raises(FormatError, match="already consumed"):
        hydron.from_arrow(stream)
    with pytest.raises(TypeError, match="pair of capsules"):
        hydron.from_arrow(Exporter("__arrow_c_array__", (1, 2)))
    with pytest.raises(TypeError, match="no capsule"):
        hydron.from_arrow(Exporter("__arrow_c_stream__", "stream"))
    with pytest.raises(ValueError, match="incorrect name"):  # the capsules swapped
        hydron.from_arrow(Exporter("__arrow_c_array__", pa.array([1.0]).__arrow_c_array__()[::-1]))


def test_a_stream_that_fails_part_way_is_an_error_with_the_producers_message():
    batch = pa.table(hydron.to_arrow_table(V)).to_batches()[0]

    def batches():
        yield batch
        raise RuntimeError("the producer broke")

    reader = pa.RecordBatchReader.from_batches(batch.schema, batches())
    with pytest.raises(FormatError, match="the producer broke"):
        hydron.from_arrow(reader)


def test_from_arrow_reads_every_producer():
    fixed = pa.array(hydron.to_arrow(V))
    plain = pa.array(V.tolist(), pa.list_(pa.float32()))
    large = pa.array(V.tolist(), pa.large_list(pa.float32()))
    for source in [
        fixed, plain, large,
        pa.chunked_array([fixed[:300], fixed[300:]]),
        pa.table({"id": np.arange(len(V)), "vector": fixed}),
        pa.RecordBatch.from_pydict({"x": plain}),
        pl.Series("v", V),
        pl.DataFrame({"id": np.arange(len(V)), "vector": pl.Series(V)}),
    ]:
        assert same(hydron.from_arrow(source), V), type(source)
    t = pa.table({"vector": plain})  # noqa: F841 (DuckDB's scan)
    relation = duckdb.sql("SELECT vector::FLOAT[8] AS vector FROM t")
    assert same(hydron.from_arrow(relation), V)
    assert same(hydron.from_arrow(duckdb.sql("SELECT vector FROM t")), V)
    # A slice reads from its offset.
    assert same(hydron.from_arrow(fixed.slice(10, 5)), V[10:15])
    assert same(hydron.from_arrow(plain.slice(10, 5)), V[10:15])


def test_from_arrow_picks_the_column():
    fixed = pa.array(hydron.to_arrow(V))
    table = pa.table({"a": fixed, "b": fixed.slice(0, len(V))})
    with pytest.raises(FormatError, match=r"which vector column\? 2 columns could be it"):
        hydron.from_arrow(table)
    assert same(hydron.from_arrow(table, column="b"), V)
    with pytest.raises(FormatError, match="no column 'c'|no column \"c\""):
        hydron.from_arrow(table, column="c")
    marked = pa.table(hydron.to_arrow_table(V, column="emb")).append_column("other", fixed)
    assert same(hydron.from_arrow(marked), V)
    with pytest.raises(FormatError, match="no vector column"):
        hydron.from_arrow(pa.table({"id": [1, 2]}))


def test_a_stream_whose_batches_break_its_schema_is_an_error_not_a_panic():
    vectors = pa.array(hydron.to_arrow(V))
    schema = pa.schema({"vector": vectors.type})
    liars = [pa.array([1, 2, 3]),                                    # no children
             # Valid vectors in another layout: a list whose offsets start
             # at 8, which read as a fixed-size list would be V[0:3], not V[1:4].
             pa.ListArray.from_arrays(pa.array([8, 16, 24, 32], pa.int32()),
                                      pa.array(V[:4].ravel())),
             pa.array(np.ones(12, np.float32)),                      # flat floats
             pa.FixedSizeListArray.from_arrays(pa.array(np.ones(12, np.float32)), 4)]

    for liar in liars:
        def batches(liar=liar):
            yield pa.record_batch({"vector": vectors})
            yield pa.record_batch({"vector": liar})

        reader = pa.RecordBatchReader.from_batches(schema, batches())
        with pytest.raises(FormatError, match="does not match its declared type"):
            hydron.from_arrow(reader)


def test_a_null_struct_row_is_a_null_vector():
    rows = [V[0].tolist(), V[1].tolist(), V[2].tolist()]
    struct = pa.struct([("vector", pa.list_(pa.float32(), 8))])
    with pytest.raises(InvalidVectorError, match="row 1: the row is null") as e:
        hydron.from_arrow(pa.array([{"vector": rows[0]}, None, {"vector": rows[2]}], struct))
    assert e.value.index == 1
    # The child still holds a valid vector under the null: it must not show.
    masked = pa.StructArray.from_arrays([pa.array(hydron.to_arrow(V[:3]))], names=["vector"],
                                        mask=pa.array([False, False, True]))
    with pytest.raises(InvalidVectorError, match="row 2: the row is null"):
        hydron.from_arrow(masked)
    # Rows counted across chunks, as a chunked struct column.
    with pytest.raises(InvalidVectorError, match="row 5: the row is null") as e:
        hydron.from_arrow(pa.chunked_array([pa.array([{"vector": r} for r in rows], masked.type),
                                            masked]))
    assert e.value.index == 5
    assert same(hydron.from_arrow(masked.slice(0, 2)), V[:2])


def test_bad_arrow_data_names_the_row():
    rows = V[:5].tolist()
    short = rows[:3] + [rows[3][:7]] + rows[4:]
    with pytest.raises(InvalidVectorError, match="row 3 has 7 values") as e:
        hydron.from_arrow(pa.array(short, pa.list_(pa.float32())))
    assert e.value.index == 3
    long = rows[:2] + [rows[2] + [0.0]] + rows[3:]
    with pytest.raises(InvalidVectorError, match="row 2 has 9 values"):
        hydron.from_arrow(pa.array(long, pa.list_(pa.float32())))
    # Rows counted across chunks.
    chunked = pa.chunked_array([pa.array(rows, pa.list_(pa.float32())),
                                pa.array(short, pa.list_(pa.float32()))])
    with pytest.raises(InvalidVectorError) as e:
        hydron.from_arrow(chunked)
    assert e.value.index == 8
    with pytest.raises(InvalidVectorError, match="row 1: the row is null") as e:
        hydron.from_arrow(pa.array([rows[0], None, rows[2]], pa.list_(pa.float32(), 8)))
    assert e.value.index == 1
    holed = [list(r) for r in rows]
    holed[4][6] = None
    with pytest.raises(InvalidVectorError, match="row 4: coordinate 6 is null") as e:
        hydron.from_arrow(pa.array(holed, pa.list_(pa.float32(), 8)))
    assert (e.value.index, e.value.coordinate) == (4, 6)
    with pytest.raises(FormatError, match="Float64"):
        hydron.from_arrow(pa.array(rows, pa.list_(pa.float64(), 8)))
    with pytest.raises(FormatError, match="Int32"):
        hydron.from_arrow(pa.array([[1] * 8], pa.list_(pa.int32(), 8)))
    nan = V[:3].copy()
    nan[2, 5] = np.inf
    with pytest.raises(InvalidVectorError) as e:
        hydron.from_arrow(pa.array(hydron.to_arrow(nan, policy="trusted")))
    assert (e.value.index, e.value.coordinate) == (2, 5)
    with pytest.raises(TypeError, match="expected Arrow data"):
        hydron.from_arrow(V)
    with pytest.raises(TypeError, match="expected Arrow data"):
        hydron.from_arrow([[0.0] * 8])


def test_codes_both_ways():
    codes = hydron.nearest_roots(V)
    a = pa.array(hydron.codes_to_arrow(codes))
    assert a.type == pa.uint8()
    assert (a.to_numpy() == codes).all()
    assert (hydron.codes_from_arrow(a) == codes).all()
    assert (hydron.codes_from_arrow(pl.Series(codes)) == codes).all()
    assert (hydron.codes_from_arrow(pa.table({"vector": pa.array(hydron.to_arrow(V)),
                                              "code": a})) == codes).all()
    with pytest.raises(InvalidVectorError, match="vector 1: E8 root code 240") as e:
        hydron.codes_from_arrow(pa.array([0, 240], pa.uint8()))
    assert e.value.index == 1
    with pytest.raises(InvalidVectorError, match="row 1: the row is null"):
        hydron.codes_from_arrow(pa.array([0, None], pa.uint8()))
    with pytest.raises(FormatError, match="Int64"):
        hydron.codes_from_arrow(pa.array([0, 1]))
    with pytest.raises(InvalidVectorError):
        hydron.codes_to_arrow(np.array([0, 240]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(-1, 1, width=32), min_size=8, max_size=8), max_size=50))
def test_any_batch_round_trips_through_pyarrow_bit_for_bit(rows):
    try:
        v = hydron.normalize(np.array(rows, np.float32).reshape(-1, 8))
    except hydron.HydronError:
        assume(False)
    a = pa.array(hydron.to_arrow(v))
    assert same(hydron.from_arrow(a), v)
    assert same(hydron.from_arrow(pa.array(v.tolist(), pa.list_(pa.float32()))), v)


def test_a_column_name_for_a_single_column_must_be_its_own():
    arr = pa.array(hydron.to_arrow(V))
    with pytest.raises(ValueError, match="not a table, record batch or struct array"):
        hydron.from_arrow(arr, column="nope")
    import polars as pl
    series = pl.Series("vector", V)
    assert same(hydron.from_arrow(series, column="vector"), V)
    with pytest.raises(ValueError, match='column "other": .*named "vector"'):
        hydron.from_arrow(series, column="other")


def test_a_column_arrow_rs_cannot_import_says_to_select_the_vector_column():
    import polars as pl
    df = pl.DataFrame({"n": [None] * 3,
                       "vector": pl.Series(V[:3], dtype=pl.Array(pl.Float32, 8))})
    with pytest.raises(FormatError, match=r'pass only the vector column \(df.select\("vector"\)'):
        hydron.from_arrow(df)
    assert same(hydron.from_arrow(df.select("vector")), V[:3])


def test_numpy_reads_an_arrow_array_as_its_vectors_or_codes():
    """``np.asarray(to_arrow(v))`` is the (N, 8) view of the same memory
    (read-only, as numpy views of Arrow buffers are), not a 0-d object array."""
    v = unit_vectors(300)
    a = hydron.to_arrow(v)
    view = np.asarray(a)
    assert view.shape == (300, 8) and view.dtype == np.float32 and same(view, v)
    assert np.shares_memory(view, v) and not view.flags.writeable
    part = np.asarray(hydron.to_arrow(v[10:20]))
    assert same(part, v[10:20])
    wide = np.asarray(a, dtype=np.float64)
    assert wide.dtype == np.float64 and (wide == v).all() and not np.shares_memory(wide, v)
    copied = a.__array__(copy=True)
    assert same(copied, v) and not np.shares_memory(copied, v)
    with pytest.raises(ValueError, match="copy=False"):
        a.__array__(np.float64, copy=False)
    assert np.shares_memory(a.__array__(np.float32, copy=False), v)
    codes = np.asarray(hydron.codes_to_arrow([0, 7, 239]))
    assert codes.dtype == np.uint8 and codes.tolist() == [0, 7, 239]
    # The view outlives the ArrowArray it came from.
    view = np.asarray(hydron.to_arrow(v.copy()))
    import gc
    gc.collect()
    assert same(view, v)
