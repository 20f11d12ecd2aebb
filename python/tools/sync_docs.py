"""Copies the docstrings of python/hydron/_hydron.pyi (the one place they
are written) onto the PyO3 items of hydron-py/src/*.rs as `///` comments, so
that help() at run time shows the same text. tests/test_stubs.py fails when
they differ; run this after editing a docstring in the stub:

    python3 python/tools/sync_docs.py
"""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def stub_docs() -> dict[str, str]:
    docs = {}
    for node in ast.parse((ROOT / "python/hydron/_hydron.pyi").read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node):
            docs[node.name] = ast.get_docstring(node, clean=True)
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef) and ast.get_docstring(sub):
                    docs[f"{node.name}.{sub.name}"] = ast.get_docstring(sub, clean=True)
    return docs


def comment(text: str, indent: str) -> list[str]:
    return [f"{indent}///{' ' + line if line else ''}" for line in text.split("\n")]


def sync(path: pathlib.Path, docs: dict[str, str]) -> None:
    lines = path.read_text().split("\n")
    out: list[str] = []
    cls = None
    for i, line in enumerate(lines):
        if m := re.match(r"^impl (\w+) \{", line):
            cls = m.group(1) if out and out[-1].strip() == "#[pymethods]" else None
        key = indent = None
        if m := re.match(r"^(\s*)#\[(pyfunction|pyclass)", line):
            item = next(re.search(r"\b(?:fn|struct)\s+(\w+)", x) for x in lines[i:]
                        if re.search(r"\b(?:fn|struct)\s+(\w+)", x))
            key, indent = item.group(1), m.group(1)
        elif cls and (m := re.match(r"^(\s*)(#\[getter\]|fn (\w+)\()", line)) and \
                not (out and out[-1].strip() == "#[getter]"):
            name = re.search(r"fn (\w+)\(", line if "fn " in line else lines[i + 1]).group(1)
            key, indent = f"{cls}.{name}", m.group(1)
        if key in docs:
            while out and out[-1].strip().startswith("///"):
                out.pop()
            out += comment(docs[key], indent)
        out.append(line)
    path.write_text("\n".join(out))


if __name__ == "__main__":
    docs = stub_docs()
    for rs in sorted((ROOT / "hydron-py/src").glob("*.rs")):
        sync(rs, docs)
