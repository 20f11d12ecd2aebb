"""The type stubs (hydron/_hydron.pyi) cannot drift from the native module:
mypy's stubtest (run by python/run-tests.sh) checks the signatures; this
checks the docstrings, the exported names, and runs the docstrings'
examples."""

import ast
import doctest
import inspect

import hydron
from hydron import _hydron

from conftest import PYTHON_DIR

STUB = PYTHON_DIR / "hydron" / "_hydron.pyi"


def stub_docs() -> dict[str, str]:
    docs = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            docs[node.name] = ast.get_docstring(node, clean=True)
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, ast.FunctionDef) and ast.get_docstring(sub):
                        docs[f"{node.name}.{sub.name}"] = ast.get_docstring(sub, clean=True)
    return docs


def test_every_native_docstring_is_the_stubs():
    docs = stub_docs()
    for name, doc in docs.items():
        obj = _hydron
        if not hasattr(_hydron, name.split(".")[0]):
            # Left out of this build: hydron has a stand-in that says so.
            assert name.split(".")[0] in hydron._NOT_BUILT, f"{name}: not in the module"
            continue
        for part in name.split("."):
            obj = getattr(obj, part)
        if name in ("ChunkIter.__iter__", "ChunkIter.__next__"):
            continue
        assert doc is not None, f"{name}: no docstring in the stub"
        assert inspect.cleandoc(obj.__doc__ or "") == doc, f"{name}: docstring differs from the stub"


def test_the_stub_names_everything_the_module_exports():
    public = {n for n in dir(_hydron) if not n.startswith("_")}
    in_stub = set(stub_docs()) | {"NORM_TOLERANCE", "DEFAULT_CHUNK_VECTORS", "MAX_CHUNK_VECTORS",
                                  "MAX_BATCH_LEN", "MAX_CODES_LEN",
                                  "DEFAULT_ROW_GROUP_VECTORS", "FEATURES"}
    assert public <= in_stub, public - in_stub
    assert set(hydron.__all__) <= set(dir(hydron))


def test_help_reads_like_numpy():
    doc = hydron.nearest_roots.__doc__
    for section in ("Parameters\n----------", "Returns\n-------", "Examples\n--------"):
        assert section in doc
    assert inspect.signature(hydron.nearest_roots).parameters["trusted"].default is False


def test_the_native_docstring_examples_run():
    result = doctest.testmod(_hydron, optionflags=doctest.ELLIPSIS, raise_on_error=False)
    assert result.attempted >= 20
    assert result.failed == 0
