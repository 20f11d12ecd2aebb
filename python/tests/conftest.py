"""Shared fixtures: paths to the golden files and to the interop directories.

Environment (set by ``python/run-tests.sh``):

- ``HYDRON_RUST_DIR``: files the Rust example ``interop_write`` wrote, which
  the tests decode;
- ``HYDRON_PY_DIR``: an empty directory the tests fill for the Rust test
  ``tests/python_interop.rs``;
- ``HYDRON_REQUIRE_INTEROP=1``: a missing directory fails the run instead of
  skipping the interop tests.
"""

from __future__ import annotations

import os
import pathlib
import sys

import numpy as np
import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parent.parent
REPO = PYTHON_DIR.parent
GOLDEN = REPO / "tests" / "golden"

sys.path.insert(0, str(PYTHON_DIR))


def _interop_dir(var: str) -> pathlib.Path:
    value = os.environ.get(var)
    if not value:
        if os.environ.get("HYDRON_REQUIRE_INTEROP") == "1":
            pytest.fail(f"{var} is not set (HYDRON_REQUIRE_INTEROP=1)")
        pytest.skip(f"{var} is not set: run python/run-tests.sh for the interop tests")
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


def needs(feature: str):
    """Skips a test in a build of hydron without ``feature`` (``"arrow"``,
    ``"parquet"``); ``python/run-tests.sh`` runs the tests in both builds."""
    import hydron
    return pytest.mark.skipif(feature not in hydron.FEATURES,
                              reason=f"this build of hydron has no {feature!r} feature")


needs_arrow = needs("arrow")
needs_parquet = needs("parquet")


def bits(a: np.ndarray) -> np.ndarray:
    """The float32 bit patterns, for exact comparisons (NaN, -0.0)."""
    return np.ascontiguousarray(a, dtype="<f4").view("<u4")
