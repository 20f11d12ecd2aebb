"""Quantize a Parquet dataset of hydron vectors on a Dask cluster.

Each partition (one Parquet row group) is read by Dask's Parquet reader
(pyarrow), handed to hydron through Arrow without copying the floats, and
quantized by hydron's native kernels: the nearest E8 root of every vector,
and a geodesic-distance filter against a query vector. The codes go back
to Parquet, written by Dask. The same program runs on a laptop, on the
2-worker local cluster the test command starts, or on many machines:

    # one machine: start a local cluster of 2 worker processes
    python examples/dask_quantize.py --generate 10000000 --workers 2 data out

    # many machines: point it at a running scheduler
    #   (dask scheduler  on one machine; dask worker tcp://HOST:8786  on each)
    python examples/dask_quantize.py --scheduler tcp://HOST:8786 s3://bucket/data s3://bucket/out

The input is any directory (or URL Dask reads) of Parquet files with a
vector column (hydron's, pyarrow's, Polars', DuckDB's); the output has one
row per input vector, in input order: ``code`` (uint8, the nearest E8
root) and ``near`` (bool, within ``--max-angle`` radians of the query).
``--check`` recomputes the answer in this process with hydron alone and
compares, exactly. Needs hydron built with Arrow and Parquet:
``pip install ./python -C maturin.build-args="--features full"``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import hydron

#: The query vector of the filter: the first E8 root, (1, 1, 0, ..., 0)/sqrt(2).
QUERY = hydron.E8_ROOTS[0]

#: The environment of each worker process: hydron's kernels on one thread
#: (they use every core by default, through rayon), since Dask already runs
#: one task per core; the same advice Dask gives for numpy's BLAS threads.
ONE_THREAD_EACH = {"RAYON_NUM_THREADS": "1"}


def generate(directory: str, vectors: int, files: int, row_group_vectors: int, seed: int = 0) -> None:
    """Write ``vectors`` random unit vectors as ``files`` hydron Parquet files."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    per_file = -(-vectors // files)
    for k in range(files):
        n = min(per_file, vectors - k * per_file)
        if n <= 0:
            break
        raw = rng.standard_normal((n, 8), dtype=np.float32)
        hydron.save_parquet(
            os.path.join(directory, f"part-{k:04d}.parquet"),
            hydron.normalize(raw),
            row_group_vectors=row_group_vectors,
            durable=False,
        )


def quantize_partition(part: pd.DataFrame, query: np.ndarray, max_angle: float) -> pd.DataFrame:
    """One partition: nearest E8 roots and the distance filter, by hydron."""
    # pandas holds the column as Arrow; pa.array gives it back without a
    # copy, and hydron reads its float buffer in place (checking every
    # vector as it copies it out).
    vectors = hydron.from_arrow(pa.array(part["vector"].array))
    codes = hydron.nearest_roots(vectors)
    near = hydron.geodesic_distance(query, vectors) <= max_angle
    return pd.DataFrame({"code": codes, "near": near}, index=part.index)


def run(source: str, target: str, query: np.ndarray = QUERY, max_angle: float = 1.0) -> float:
    """The Dask job: read, quantize each partition, write; on the cluster of
    the current ``dask.distributed.Client``. Returns seconds."""
    import dask.dataframe as dd

    start = time.perf_counter()
    frame = dd.read_parquet(
        source, columns=["vector"], dtype_backend="pyarrow", split_row_groups=True
    )
    meta = pd.DataFrame({"code": pd.Series([], dtype="uint8"), "near": pd.Series([], dtype="bool")})
    result = frame.map_partitions(quantize_partition, query, max_angle, meta=meta)
    result.to_parquet(target, write_index=False, compute=True)
    return time.perf_counter() - start


def parquet_files(location: str):
    """The file system of ``location`` (a directory or a URL: ``s3://...``,
    through fsspec, as Dask reads it) and its Parquet files in the order
    Dask reads them: natural order, so ``part-2`` comes before ``part-10``
    and ``part.2`` before ``part.10``."""
    import fsspec
    from dask.utils import natural_sort_key

    fs, root = fsspec.core.url_to_fs(location)
    return fs, sorted(fs.glob(root.rstrip("/") + "/*.parquet"), key=natural_sort_key)


def single_process(source: str, query: np.ndarray = QUERY, max_angle: float = 1.0):
    """The same answer in this process, with hydron alone."""
    from fsspec.implementations.local import LocalFileSystem

    fs, paths = parquet_files(source)
    codes, near = [], []
    for path in paths:
        if isinstance(fs, LocalFileSystem):
            vectors = hydron.load_parquet(path)
        else:
            with fs.open(path, "rb") as f:  # read whole, at most 1 GiB a file
                vectors = hydron.load_parquet(f)
        codes.append(hydron.nearest_roots(vectors))
        near.append(hydron.geodesic_distance(query, vectors) <= max_angle)
    return np.concatenate(codes), np.concatenate(near)


def read_result(target: str):
    """The job's output, in partition order (``part.0``, ``part.1``, ...)."""
    fs, paths = parquet_files(target)
    table = pa.concat_tables(pq.read_table(p, filesystem=fs) for p in paths)
    return (
        table.column("code").to_numpy(),
        table.column("near").to_numpy(zero_copy_only=False),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="directory of Parquet files")
    parser.add_argument("output", help="directory for the codes")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a running Dask scheduler")
    where.add_argument("--workers", type=int, default=2, help="local worker processes (default 2)")
    parser.add_argument("--generate", type=int, metavar="N", help="first write N random vectors")
    parser.add_argument("--files", type=int, default=40, help="files to generate (default 40)")
    parser.add_argument("--row-group-vectors", type=int, default=125_000)
    parser.add_argument("--max-angle", type=float, default=1.0, help="filter radius, radians")
    parser.add_argument("--check", action="store_true", help="compare with a single-process run")
    args = parser.parse_args()

    from dask.distributed import Client, LocalCluster

    if args.generate:
        generate(args.input, args.generate, args.files, args.row_group_vectors)
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None,
                               env=ONE_THREAD_EACH)
        client = Client(cluster)
    with client:
        seconds = run(args.input, args.output, max_angle=args.max_angle)
    codes, near = read_result(args.output)
    print(f"quantized {len(codes)} vectors in {seconds:.2f} s on {args.scheduler or f'{args.workers} local workers'};"
          f" {int(near.sum())} within {args.max_angle} rad of the query")
    if args.check:
        want_codes, want_near = single_process(args.input, max_angle=args.max_angle)
        assert np.array_equal(codes, want_codes) and np.array_equal(near, want_near)
        print("identical to the single-process run")


if __name__ == "__main__":
    main()
