"""hydron's Arrow and Parquet paths against pyarrow's, and Dask on one worker
against two, in one run (issue 9). Every figure is a median; every
comparison a ratio within this run. Needs hydron built with Arrow and
Parquet (``bash python/run-tests.sh`` leaves that build in python/.venv;
else ``maturin develop --release --features full`` in python/).

    python/.venv/bin/python python/bench_arrow.py
    python/.venv/bin/python python/bench_arrow.py --n 100000 --runs 3 --dask-vectors 1000000   # smoke

Compared:
- Parquet write of N vectors (default 1,000,000): hydron.save_parquet of an
  (N, 8) float32 array vs pyarrow.parquet.write_table of the same data as a
  fixed_size_list<float, 8> table, uncompressed and snappy (both libraries'
  default codec), neither fsyncing;
- Parquet read: hydron.load_parquet (into a checked (N, 8) numpy array) vs
  pyarrow.parquet.read_table of the same file (an Arrow table, unchecked;
  and, for reference, with the conversion to an (N, 8) numpy array);
- the same for a file pyarrow wrote with BYTE_STREAM_SPLIT floats and no
  dictionary, a layout hydron reads through the parquet crate's Arrow
  reader rather than its own page reader;
- Arrow export (hydron.to_arrow, then pyarrow.array over the PyCapsule;
  with the default check of every vector, and trusted: no pass over the
  data) and
  import (hydron.from_arrow: a checked copy) for 1,000 and 10,000,000
  vectors;
- the Dask job of python/examples/dask_quantize.py (nearest roots and a
  distance filter over a Parquet dataset) on a LocalCluster of 1 worker
  process and of 2, over --dask-vectors vectors (default 10,000,000).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import shutil
import statistics
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import hydron

HERE = pathlib.Path(__file__).resolve().parent


def median_time(f, runs: int, setup=None) -> float:
    times = []
    for _ in range(runs):
        if setup:
            setup()
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:9.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:9.2f} µs"
    return f"{seconds * 1e9:9.1f} ns"


def unit(n: int, seed: int) -> np.ndarray:
    raw = np.random.default_rng(seed).standard_normal((n, 8), dtype=np.float32)
    return hydron.normalize(raw)


def parquet_rows(n: int, runs: int, tmp: pathlib.Path) -> list[tuple[str, float, float, str]]:
    v = unit(n, 0)
    table = pa.table({"vector": pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), 8)})
    rows = []
    for codec, pa_codec in (("none", "none"), ("snappy", "snappy")):
        h_path, p_path = tmp / f"h-{codec}.parquet", tmp / f"p-{codec}.parquet"
        t_h = median_time(lambda: hydron.save_parquet(h_path, v, compression=codec, durable=False), runs)
        t_p = median_time(lambda: pq.write_table(table, p_path, compression=pa_codec), runs)
        rows.append((f"write, {codec}", t_h, t_p, "pyarrow write_table"))
        t_h = median_time(lambda: hydron.load_parquet(h_path), runs)
        t_p = median_time(lambda: pq.read_table(h_path), runs)
        rows.append((f"read, {codec}", t_h, t_p, "pyarrow read_table (Arrow table, unchecked)"))

        def pa_numpy():
            col = pq.read_table(h_path).column("vector").combine_chunks()
            return col.values.to_numpy().reshape(-1, 8)

        t_pn = median_time(pa_numpy, runs)
        rows.append((f"read, {codec}", t_h, t_pn, "pyarrow read_table + to (N, 8) numpy"))
        # hydron reads pyarrow's own file as fast as its own.
        rows.append((f"read pyarrow's file, {codec}", median_time(lambda: hydron.load_parquet(p_path), runs),
                     median_time(lambda: pq.read_table(p_path), runs), "pyarrow read_table"))
        # A layout off hydron's fast path (BYTE_STREAM_SPLIT floats, no
        # dictionary): hydron reads it through the parquet crate's Arrow
        # reader, and checks it the same way.
        s_path = tmp / f"p-{codec}-split.parquet"
        pq.write_table(table, s_path, compression=pa_codec, use_dictionary=False, use_byte_stream_split=True)
        rows.append((f"read pyarrow's split file, {codec}", median_time(lambda: hydron.load_parquet(s_path), runs),
                     median_time(lambda: pq.read_table(s_path), runs), "pyarrow read_table"))
        assert np.array_equal(hydron.load_parquet(s_path).view(np.uint32), v.view(np.uint32))
        assert np.array_equal(hydron.load_parquet(p_path).view(np.uint32), v.view(np.uint32))
        assert np.array_equal(hydron.load_parquet(h_path).view(np.uint32), v.view(np.uint32))
    return rows


def arrow_rows(runs: int) -> list[tuple[str, float]]:
    rows = []
    for n in (1_000, 10_000_000):
        v = unit(n, 1)
        rows.append((f"to_arrow + pyarrow.array, {n:,} vectors (checked)",
                     median_time(lambda: pa.array(hydron.to_arrow(v)), max(runs, 7))))
        rows.append((f"to_arrow + pyarrow.array, {n:,} vectors (trusted)",
                     median_time(lambda: pa.array(hydron.to_arrow(v, policy="trusted")),
                                 max(runs, 7))))
        arr = pa.array(hydron.to_arrow(v))
        rows.append((f"from_arrow (checked copy into numpy), {n:,} vectors",
                     median_time(lambda: hydron.from_arrow(arr), runs)))
        rows.append((f"numpy copy of the same floats, {n:,} vectors",
                     median_time(lambda: v.copy(), runs)))
    return rows


def dask_rows(vectors: int, runs: int, tmp: pathlib.Path) -> list[tuple[str, float]]:
    from dask.distributed import Client, LocalCluster

    spec = importlib.util.spec_from_file_location("dq", HERE / "examples" / "dask_quantize.py")
    dq = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dq)
    data = tmp / "dask-data"
    dq.generate(str(data), vectors, files=40, row_group_vectors=125_000)
    rows = []
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None,
                          env=dq.ONE_THREAD_EACH) as cluster, Client(cluster):
            times = []
            for k in range(runs):
                out = tmp / f"dask-out-{workers}-{k}"
                times.append(dq.run(str(data), str(out)))
                shutil.rmtree(out)
            rows.append((f"Dask job, {vectors:,} vectors, {workers} worker process(es)",
                         statistics.median(times)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--dask-vectors", type=int, default=10_000_000)
    parser.add_argument("--dask-runs", type=int, default=3)
    parser.add_argument("--parquet-only", action="store_true", help="only the Parquet rows")
    args = parser.parse_args()
    print(f"hydron {hydron.__version__}, backend {hydron.backend()}, pyarrow {pa.__version__}, "
          f"numpy {np.__version__}, cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        print(f"\nParquet, {args.n:,} vectors (median of {args.runs}):")
        print(f"| {'':40} | hydron | compared with | hydron faster by |")
        for name, t_h, t_o, other in parquet_rows(args.n, args.runs, tmp):
            print(f"| {name:40} | {fmt(t_h)} | {fmt(t_o)} {other} | {t_o / t_h:.2f}x |")
        if args.parquet_only:
            return
        print("\nArrow (median):")
        for name, t in arrow_rows(args.runs):
            print(f"| {name:55} | {fmt(t)} |")
        print(f"\nDask (median of {args.dask_runs}):")
        rows = dask_rows(args.dask_vectors, args.dask_runs, tmp)
        for name, t in rows:
            print(f"| {name:55} | {fmt(t)} |")
        print(f"2 workers vs 1: {rows[0][1] / rows[1][1]:.2f}x")


if __name__ == "__main__":
    main()
