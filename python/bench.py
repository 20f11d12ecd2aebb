"""Decode speed of 1,048,576 vectors (32 MiB) with the Python package.

    python/.venv/bin/python python/bench.py

Prints the best of 5 runs for each case: a fory batch message under each
policy, and a whole binary file (in memory, 16 chunks of 65,536).
"""

import time

import numpy as np

import hydron

N = 1 << 20


def best(f, runs=5):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    v = hydron.apply_policy(rng.standard_normal((N, 8)).astype(np.float32), "renormalize")
    msg = hydron.encode_batch(v)
    data = hydron.dumps(v, "fory")
    print(f"{N} vectors, message {len(msg)} bytes, file {len(data)} bytes")
    cases = [
        ("encode_batch (strict)", lambda: hydron.encode_batch(v)),
        ("decode_batch strict", lambda: hydron.decode_batch(msg)),
        ("decode_batch renormalize", lambda: hydron.decode_batch(msg, policy="renormalize")),
        ("decode_batch trusted", lambda: hydron.decode_batch(msg, policy="trusted")),
        ("loads (binary file) strict", lambda: hydron.loads(data)),
    ]
    for name, f in cases:
        t = best(f)
        print(f"{name:28} {t * 1e3:7.1f} ms  {N / t / 1e6:6.1f} M vectors/s  "
              f"{32 * N / t / 2**30:5.2f} GiB/s")


if __name__ == "__main__":
    main()
