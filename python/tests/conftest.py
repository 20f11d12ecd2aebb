"""Shared fixtures: paths to the golden files and to the interop directories.

Environment (set by ``python/run-tests.sh``):

- ``HYDRON_RUST_DIR``: files the Rust example ``interop_write`` wrote, which
  the tests decode;
- ``HYDRON_PY_DIR``: an empty directory the tests fill for the Rust test
  ``tests/python_interop.rs``;
- ``HYDRON_REQUIRE_INTEROP=1``: a missing directory fails the run instead of
  skipping the interop tests;
- ``HYDRON_REQUIRE_ALL=1`` (``scripts/test-all.sh``): every missing
  precondition fails instead of skipping: a Python package a test imports
  (:func:`require`, in place of ``pytest.importorskip``), a feature of the
  build that ``HYDRON_EXPECT_FEATURES`` does not say is left out
  (:func:`needs`), the interop directories, the ``hydron`` CLI, a platform
  facility (:func:`missing`).
"""

from __future__ import annotations

import importlib
import os
import pathlib
import sys
import threading
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parent.parent
REPO = PYTHON_DIR.parent
GOLDEN = REPO / "tests" / "golden"

sys.path.insert(0, str(PYTHON_DIR))

#: Every precondition must hold (``scripts/test-all.sh`` sets it).
REQUIRE_ALL = os.environ.get("HYDRON_REQUIRE_ALL") == "1"


def missing(what: str) -> None:
    """A precondition that does not hold: a failure under
    ``HYDRON_REQUIRE_ALL=1``, else a skip announced on stderr. Works at a
    test module's top level too."""
    if REQUIRE_ALL:
        pytest.fail(f"precondition missing (HYDRON_REQUIRE_ALL=1): {what}", pytrace=False)
    print(f"SKIPPED (precondition): {what}", file=sys.stderr)
    pytest.skip(what, allow_module_level=True)


def hydron_cli() -> str:
    """The ``hydron`` tool's path, ``$HYDRON_CLI`` (python/run-tests.sh
    builds it): a precondition."""
    path = os.environ.get("HYDRON_CLI")
    if not path:
        missing("HYDRON_CLI is not set: run python/run-tests.sh "
                "(or cargo build -p hydron-cli and set HYDRON_CLI)")
    return path


def require(module: str) -> ModuleType:
    """``pytest.importorskip(module)``, except that under
    ``HYDRON_REQUIRE_ALL=1`` a module that does not import fails."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing(f"the Python module {module!r} does not import ({e}); "
                "pip install -r python/requirements.txt")
        raise  # (not reached: missing() raises)


def _interop_dir(var: str) -> pathlib.Path:
    value = os.environ.get(var)
    if not value:
        if os.environ.get("HYDRON_REQUIRE_INTEROP") == "1":
            pytest.fail(f"{var} is not set (HYDRON_REQUIRE_INTEROP=1)")
        missing(f"{var} is not set: run python/run-tests.sh for the interop tests")
    path = pathlib.Path(value)
    if not path.is_dir():
        pytest.fail(f"{var}={value} is not a directory")
    return path


@pytest.fixture(scope="session")
def rust_dir() -> pathlib.Path:
    """The directory of Rust-written files (must not be empty)."""
    path = _interop_dir("HYDRON_RUST_DIR")
    if not any(path.iterdir()):
        pytest.fail(f"HYDRON_RUST_DIR={path} is empty")
    return path


@pytest.fixture(scope="session")
def py_dir() -> pathlib.Path:
    """The directory the Python side writes for Rust to read."""
    return _interop_dir("HYDRON_PY_DIR")


def unit_vectors(n: int, seed: int = 7) -> np.ndarray:
    """``n`` deterministic valid vectors (float32, unit norm), with a zero
    vector and a few edge cases first."""
    import hydron

    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, 8)).astype(np.float32)
    v[::5, 3] = 0.0
    v[::7] *= np.float32(1e-3)
    edge = np.array([
        [0, 0, 0, 0, 0, 0, 0, 0],
        [-0.0, 1, 0, -0.0, 0, 0, 0, 0],
        [1, 1e-40, -1e-7, 3e-9, 0, 0, 0, 0],
        [0, 0.6, 0.8, 0, 0, 0, 0, 0],
    ], dtype=np.float32)
    v[:min(n, 4)] = edge[:min(n, 4)]
    return hydron.apply_policy(v, "renormalize")


def needs(feature: str) -> pytest.MarkDecorator:
    """Marks a test that needs ``feature`` (``"arrow"``, ``"parquet"``) in
    the build of hydron: in a build without it, the test is skipped when
    ``HYDRON_EXPECT_FEATURES`` says the build leaves it out (as
    ``python/run-tests.sh`` says of its default build), and is otherwise a
    missing precondition (:func:`missing`: a failure under
    ``HYDRON_REQUIRE_ALL=1``)."""
    return pytest.mark.hydron_feature(feature)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "hydron_feature(name): the test needs that feature "
                                       "of the build (conftest.needs)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    import hydron

    for mark in item.iter_markers("hydron_feature"):
        feature = mark.args[0]
        if feature in hydron.FEATURES:
            continue
        expected = os.environ.get("HYDRON_EXPECT_FEATURES")
        if expected is not None and feature not in expected.split(","):
            pytest.skip(f"this build of hydron has no {feature!r} feature "
                        f"(HYDRON_EXPECT_FEATURES={expected!r})")
        missing(f"this build of hydron has no {feature!r} feature"
                + ("" if expected is None else
                   f", though HYDRON_EXPECT_FEATURES={expected!r} names it"))


needs_arrow = needs("arrow")
needs_parquet = needs("parquet")


def bits(a: np.ndarray) -> np.ndarray:
    """The float32 bit patterns, for exact comparisons (NaN, -0.0)."""
    return np.ascontiguousarray(a, dtype="<f4").view("<u4")


def seen_during(call: Callable[[], object]) -> dict[str, bool]:
    """What the main thread sees when it first runs again after a worker
    thread starts ``call``: with a switch interval of 10 s the interpreter
    never takes the GIL from a running thread on its own, so the main thread
    runs during the call (``{"in_call": True, "done": False}``) only if the
    call released the GIL. The call must return."""
    state = {"in_call": False, "done": False}

    def worker() -> None:
        state["in_call"] = True
        call()
        state["done"] = True

    old = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        t = threading.Thread(target=worker)
        t.start()
        seen = dict(state)
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert state["done"]
    return seen
