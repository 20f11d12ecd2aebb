"""The tour and the Arrow/Parquet section of python/README.md run as
written (on fewer vectors)."""

import os
import re

import hydron

from conftest import PYTHON_DIR


def test_readme_tour_runs(tmp_path):
    text = (PYTHON_DIR / "README.md").read_text()
    tour = text.split("## A short tour", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", tour.split("\n## ", 1)[0], re.S)
    arrow = text.split("## Arrow, Parquet and Dask", 1)[1]
    (arrow_code,) = re.findall(r"```python\n(.*?)```", arrow.split("\n## ", 1)[0], re.S)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        scope: dict = {}
        exec(code.replace("1_000_000", "20_000"), scope)
        if hydron.FEATURES >= {"arrow", "parquet"}:
            exec(arrow_code, scope)
    finally:
        os.chdir(cwd)
    assert (tmp_path / "points.hyd").exists() and (tmp_path / "stream.jsonl").exists()
    if hydron.FEATURES >= {"arrow", "parquet"}:
        assert (tmp_path / "points.parquet").read_bytes()[:4] == b"PAR1"
        assert (tmp_path / "codes.parquet").exists()


def test_readme_tour_passes_mypy_strict(tmp_path):
    """The tour type-checks under ``mypy --strict`` against the package's
    stubs (``hydron/_hydron.pyi``) and annotations: a result's type allows
    what the tour does with it (``geodesic_distance(...).mean()``), and no
    name the tour uses is untyped or missing (``apply_policy``,
    ``ChunkIter``)."""
    import subprocess
    import sys

    text = (PYTHON_DIR / "README.md").read_text()
    tour = text.split("## A short tour", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", tour.split("\n## ", 1)[0], re.S)
    (tmp_path / "tour.py").write_text(code)
    env = dict(os.environ, MYPYPATH=str(PYTHON_DIR),
               MYPY_CACHE_DIR=str(PYTHON_DIR.parent / "target" / "mypy-cache-readme"))
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                          "tour.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr


def test_root_readme_python_example_runs(tmp_path):
    """The Python example of the repository's README.md runs as written
    (on fewer vectors)."""
    text = (PYTHON_DIR.parent / "README.md").read_text()
    section = text.split("\n## Python", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(code.replace("1_000_000", "20_000").replace("10_000", "1_000"), {})
    finally:
        os.chdir(cwd)
    assert (tmp_path / "points.hyd").exists() and (tmp_path / "codes.hyq").exists()
