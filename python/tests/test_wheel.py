"""``pip wheel ./python`` gives a proper wheel (the default build, as
``pip install ./python`` makes it) that installs into a fresh virtual
environment and works there: its metadata (licence expression and files,
readme, classifiers, project URLs, the numpy requirement) and its files
(the native module, the stubs, ``py.typed``, the licences in
``.dist-info/licenses``).

The build reuses the repository's cargo target directory, so after a
``maturin develop`` of the default build it compiles only what changed
(about a minute on 2 cores from the Rust sources of hydron-py alone); the
fresh environment is made without network access: the wheel is installed
with ``--no-index --no-deps``, and numpy, which it requires, is lent to it
from this environment on ``PYTHONPATH`` (so that ``hydron`` can only come
from the wheel).
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import PYTHON_DIR, REPO, missing


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    if shutil.which("cargo") is None:
        missing("no cargo on PATH: the wheel builds the native module")
    out = tmp_path_factory.mktemp("wheel")
    env = dict(os.environ, CARGO_TARGET_DIR=str(REPO / "target"),
               PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-w", str(out), str(PYTHON_DIR)],
                           env=env, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout + build.stderr
    (path,) = out.glob("hydron-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_has_the_metadata_of_a_published_package(wheel):
    names = wheel.namelist()
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    meta = email.parser.Parser().parsestr(wheel.read(metadata).decode())
    assert meta["Name"] == "hydron"
    assert meta["License-Expression"] == "MIT OR Apache-2.0"
    assert sorted(meta.get_all("License-File")) == ["LICENSE-APACHE", "LICENSE-MIT"]
    assert meta["Requires-Python"] == ">=3.11"
    assert meta.get_all("Requires-Dist") == ["numpy>=1.24"]
    assert meta["Description-Content-Type"].startswith("text/markdown")
    assert meta.get_payload().startswith("# hydron for Python")
    classifiers = meta.get_all("Classifier")
    for wanted in ("Typing :: Typed", "Programming Language :: Python :: 3.11",
                   "Operating System :: POSIX :: Linux", "Programming Language :: Rust"):
        assert wanted in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Repository", "Documentation", "Format specification"} <= set(urls)
    dist_info = metadata.rsplit("/", 1)[0]
    for name in ("LICENSE-MIT", "LICENSE-APACHE"):
        assert wheel.read(f"{dist_info}/licenses/{name}") == (REPO / name).read_bytes()
    for name in ("hydron/__init__.py", "hydron/errors.py", "hydron/_hydron.pyi",
                 "hydron/py.typed"):
        assert name in names, name
    assert any(n.startswith("hydron/_hydron.") and n.endswith(".so") for n in names), names


def test_the_wheel_installs_into_a_fresh_environment_and_works(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "--no-deps",
                              wheel.filename], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    lent = tmp_path / "lent"
    lent.mkdir()
    import numpy
    (lent / "numpy").symlink_to(os.path.dirname(numpy.__file__))
    libs = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    if os.path.isdir(libs):
        (lent / "numpy.libs").symlink_to(libs)
    check = subprocess.run([str(python), "-c", """
import importlib.metadata as md, sys, numpy as np, hydron
assert hydron.__file__.startswith(sys.prefix), hydron.__file__
assert hydron.FEATURES == frozenset(), hydron.FEATURES
v = hydron.normalize(np.random.default_rng(0).standard_normal((1000, 8)))
assert (hydron.decode_batch(hydron.encode_batch(v)) == v).all()
assert hydron.nearest_roots(v).shape == (1000,)
files = {str(f) for f in md.files("hydron")}
assert any(f.endswith("licenses/LICENSE-MIT") for f in files), files
print("wheel ok")
"""], env=dict(os.environ, PYTHONPATH=str(lent)), cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    assert check.returncode == 0 and "wheel ok" in check.stdout, check.stdout + check.stderr
