"""A forked child's calls work, with the parent's results.

hydron's large calls run on a thread pool (rayon's). A child made by
``fork()`` inherits that pool without its threads, so work handed to it
would wait for ever; hydron-core gives a forked child a pool of its own
(README, "Processes and fork"). Each test runs its scenario in a fresh
Python process of its own session with a deadline: a hang kills the whole
process group and fails the test instead of hanging the suite. Every
scenario first makes large calls in the parent, so that the pool runs
before the fork, and checks the child's results against the parent's, bit
for bit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from conftest import missing

DEADLINE_S = 180

# The work of every scenario: each function that can run on the pool, on
# inputs above every threshold at which it splits (300,000 vectors; a 9.6
# MB file, which `load` reads across the pool), plus a file object (the
# stream reader) and the small calls. `work` returns the results by name.
COMMON = textwrap.dedent('''
    import hashlib, os, signal, sys, threading, time, traceback
    import numpy as np
    import hydron

    N = 300_000

    def raw_vectors(seed=1, n=N):
        return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)

    def work(path, seed=1):
        raw = raw_vectors(seed)
        v = hydron.normalize(raw)
        hydron.validate(v)
        w = v[::-1].copy()
        out = {
            "normalize": v,
            "nearest_roots": hydron.nearest_roots(v),
            "nearest_roots_trusted": hydron.nearest_roots(v, trusted=True),
            "nearest_lattice_points": hydron.nearest_lattice_points(raw[:100_000] * 3),
            "dot": hydron.dot(v[0], v),
            "geodesic_distance": hydron.geodesic_distance(v, w),
            "slerp": hydron.slerp(v, w, 0.25),
            "decode_batch": hydron.decode_batch(hydron.encode_batch(v)),
            "small": hydron.nearest_roots(v[:10]),
        }
        hydron.save(path, v, durable=False)
        out["load"] = hydron.load(path)
        with open(path, "rb") as f:
            out["load_file_object"] = hydron.load(f)
        out["iter_chunks"] = np.concatenate(list(hydron.iter_chunks(path)))
        out["loads"] = hydron.loads(hydron.dumps(v))
        return out

    def digest(results):
        """The results as one hash per name (for results sent between processes)."""
        return {k: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
                for k, a in results.items()}

    def differences(expected, got):
        return [k for k in expected if not np.array_equal(expected[k], got[k])]

    def child_checks(expected, path):
        """In a forked child: run the work, compare, and leave with 0 (the
        same), 1 (other results) or 2 (an exception); SIGALRM ends a hang."""
        signal.alarm(120)
        try:
            bad = differences(expected, work(path))
            if bad:
                print("child: results differ:", bad, flush=True)
            os._exit(1 if bad else 0)
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(2)

    def wait_ok(pid):
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            sys.exit(f"the child was killed by signal {os.WTERMSIG(status)} "
                     "(14, SIGALRM: it hung)")
        code = os.WEXITSTATUS(status)
        if code:
            sys.exit(f"the child exited with {code}")
''')


def run_scenario(tmp_path, body: str) -> str:
    """Runs COMMON + body as a script in tmp_path, in a new session; fails
    on a non-zero exit, and on a hang (after DEADLINE_S) kills the session's
    processes (the script and every child it forked) and fails."""
    script = tmp_path / "scenario.py"
    script.write_text(COMMON + textwrap.dedent(body))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"the scenario hung for {DEADLINE_S} s and was killed:\n{out}")
    finally:
        # Whatever it left behind (a hung grandchild), killed.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, out
    return out


def needs_fork() -> None:
    if not hasattr(os, "fork"):
        missing("no os.fork on this platform")


def test_a_fork_after_large_calls_gets_the_parents_results(tmp_path):
    needs_fork()
    out = run_scenario(tmp_path, '''
        expected = work("parent.hyd")
        pid = os.fork()
        if pid == 0:
            child_checks(expected, "child.hyd")
        wait_ok(pid)
        # The parent's pool still works after the fork.
        assert not differences(expected, work("parent-again.hyd"))
        # A grandchild (a fork of a forked child) too. The child's pool is
        # built at its first large call, so RAYON_NUM_THREADS set before
        # that sizes it (here: this thread and one of the pool's).
        pid = os.fork()
        if pid == 0:
            signal.alarm(150)
            os.environ["RAYON_NUM_THREADS"] = "1"
            work("child2.hyd")
            if os.path.isdir("/proc/self/task") and len(os.listdir("/proc/self/task")) != 2:
                print("child threads:", os.listdir("/proc/self/task"), flush=True)
                os._exit(3)
            grandchild = os.fork()
            if grandchild == 0:
                child_checks(expected, "grandchild.hyd")
            wait_ok(grandchild)
            os._exit(0)
        wait_ok(pid)
        print("fork ok")
    ''')
    assert "fork ok" in out


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_pools_get_the_parents_results(tmp_path, method):
    import multiprocessing
    if method not in multiprocessing.get_all_start_methods():
        missing(f"no {method!r} start method on this platform")
    out = run_scenario(tmp_path, f'''
        import multiprocessing

        def task(seed):
            return digest(work(f"task-{{seed}}.hyd", seed))

        if __name__ == "__main__":
            # The pool runs in the parent before the workers are made.
            expected = {{seed: digest(work(f"parent-{{seed}}.hyd", seed)) for seed in (1, 2, 3, 4)}}
            with multiprocessing.get_context("{method}").Pool(2) as pool:
                got = dict(zip((1, 2, 3, 4), pool.map(task, (1, 2, 3, 4))))
            assert got == expected, [s for s in got if got[s] != expected[s]]
            print("pool ok")
    ''')
    assert "pool ok" in out


def test_a_fork_from_a_thread_while_another_is_inside_a_large_call(tmp_path):
    needs_fork()
    out = run_scenario(tmp_path, '''
        expected = work("parent.hyd")
        points = raw_vectors(2, 1_000_000) * 3
        inside = threading.Event()
        stop = threading.Event()
        calls = []

        def busy():
            # Large calls, one after another, each long enough (lattice
            # points: about 0.1 s) to be running when the fork comes.
            while not stop.is_set():
                inside.set()
                calls.append(hydron.nearest_lattice_points(points))
                inside.clear()

        def fork_here(result):
            # Holding the GIL, so `busy` is inside its call (it clears
            # `inside` only once the call has returned and it has the GIL).
            time.sleep(0.02)
            while not inside.is_set():
                time.sleep(0.001)
            result["inside"] = inside.is_set()
            pid = os.fork()
            if pid == 0:
                child_checks(expected, "child.hyd")
            result["pid"] = pid

        worker = threading.Thread(target=busy)
        worker.start()
        result = {}
        forker = threading.Thread(target=fork_here, args=(result,))
        forker.start()
        forker.join()
        stop.set()
        worker.join()
        assert result["inside"], "the fork did not overlap a call"
        wait_ok(result["pid"])
        assert all(np.array_equal(calls[0], c) for c in calls)
        print("thread fork ok", len(calls))
    ''')
    assert "thread fork ok" in out
