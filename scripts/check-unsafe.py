#!/usr/bin/env python3
"""Checks that docs/fuzzing.md's Miri table names every `unsafe` in the library.

Lists every `unsafe` block, `unsafe fn`, `unsafe impl`, `unsafe trait` and
`unsafe extern` block in hydron-core/src and hydron-codec/src, outside
`#[cfg(test)]` items (test code is not the library), and fails (exit 1),
naming each, if the Miri table of docs/fuzzing.md ("Unsafe code under
Miri") lacks one, or names one that is not there.

The matching rule. A site is named by its file and its function:

- an `unsafe` block by the innermost `fn` around it (closures and nested
  blocks do not count; a block outside any `fn` by `(module)`);
- an `unsafe fn` by its own name;
- an `unsafe impl Trait for Type` by `Trait for Type` (the last segment of
  each path, without generics), an `unsafe trait` by its name, an `unsafe
  extern` block by `extern`.

The table's "where" column lists, in backticks, a file (its path from the
repository root, ending in `.rs`) and then the functions of that file it
covers, as many files as needed:

    | ... | `hydron-core/src/gf8.rs` `vec_from_arrays`, `slice_from_arrays` | `a_test` |

A site is covered when some row names its file and, after that file and
before the next, its function; that row's "test" column must name at least
one test (in backticks). Every (file, function) a row names must be a site.
Several blocks in one function share its entry.

Usage: python3 scripts/check-unsafe.py [--list] [--doc PATH] [--root DIR]
  --list  also print every site found (file:line, kind, function)
Exit status: 0 when the table and the code agree, 1 otherwise, 2 on a
usage or parse error. Python 3 standard library only.
"""

import argparse
import os
import re
import sys

SOURCE_DIRS = ("hydron-core/src", "hydron-codec/src")
DOC = "docs/fuzzing.md"
SECTION = "## Unsafe code under Miri"

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ParseError(Exception):
    pass


def tokens(text):
    """Yields (kind, value, line) for Rust source, without comments, string,
    char and number literals (each becomes one 'lit' token); kinds are
    'ident', 'lit' and 'punct' (one character)."""
    i, n, line = 0, len(text), 1

    def skip_string(j, raw_hashes=None):
        # `j` is just past the opening quote.
        nonlocal line
        if raw_hashes is not None:
            close = '"' + "#" * raw_hashes
            end = text.find(close, j)
            if end < 0:
                raise ParseError(f"line {line}: unterminated raw string")
            line += text.count("\n", j, end)
            return end + len(close)
        while j < n:
            c = text[j]
            if c == "\\":
                if text[j + 1 : j + 2] == "\n":
                    line += 1
                j += 2
                continue
            if c == "\n":
                line += 1
            if c == '"':
                return j + 1
            j += 1
        raise ParseError(f"line {line}: unterminated string")

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while depth and j < n:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    if text[j] == "\n":
                        line += 1
                    j += 1
            if depth:
                raise ParseError(f"line {line}: unterminated comment")
            i = j
        elif c == '"':
            start = line
            i = skip_string(i + 1)
            yield ("lit", '""', start)
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if text[i + 1 : i + 2] == "\\":
                end = text.find("'", i + 3)
                if end < 0:
                    raise ParseError(f"line {line}: unterminated char")
                yield ("lit", "''", line)
                i = end + 1
            elif text[i + 2 : i + 3] == "'":
                yield ("lit", "''", line)
                i += 3
            else:
                m = IDENT.match(text, i + 1)
                yield ("punct", "'", line)
                i = m.end() if m else i + 1
        elif c.isalpha() or c == "_":
            m = IDENT.match(text, i)
            word = m.group()
            j = m.end()
            # Prefixed literals: b"", r"", r#""#, br"", c"", b'x'.
            if word in ("b", "r", "br", "c", "cr") and j < n and text[j] in "\"#'":
                if text[j] == "'" and word == "b":
                    end = text.find("'", j + 2 if text[j + 1] == "\\" else j + 1)
                    yield ("lit", "''", line)
                    i = end + 1
                    continue
                if text[j] == "#" and "r" in word:
                    k = j
                    while k < n and text[k] == "#":
                        k += 1
                    if k < n and text[k] == '"':
                        start = line
                        i = skip_string(k + 1, raw_hashes=k - j)
                        yield ("lit", '""', start)
                        continue
                    if word == "r":  # a raw identifier, r#type
                        m2 = IDENT.match(text, j + 1)
                        yield ("ident", m2.group(), line)
                        i = m2.end()
                        continue
                if text[j] == '"':
                    start = line
                    i = skip_string(j + 1, raw_hashes=0 if "r" in word else None)
                    yield ("lit", '""', start)
                    continue
            yield ("ident", word, line)
            i = j
        elif c.isdigit():
            m = re.compile(r"[0-9][0-9A-Za-z_]*(\.[0-9][0-9A-Za-z_]*)?").match(text, i)
            yield ("lit", "0", line)
            i = m.end()
        else:
            yield ("punct", c, line)
            i += 1


OPEN = {"{": "}", "(": ")", "[": "]"}
CLOSE = {v: k for k, v in OPEN.items()}


def is_test_cfg(attr_tokens):
    """Whether an attribute's tokens (inside `#[...]`) are `cfg(test)` or
    `cfg(all(test, ...))`."""
    words = [v for _, v, _ in attr_tokens]
    return words[:4] == ["cfg", "(", "test", ")"] or words[:6] == [
        "cfg",
        "(",
        "all",
        "(",
        "test",
        ",",
    ]


def sites(path):
    """The `unsafe` sites of one file: (line, kind, name) for each, outside
    `#[cfg(test)]` items."""
    with open(path, encoding="utf-8") as f:
        toks = list(tokens(f.read()))
    found = []
    # The stack of open delimiters: (char, fn name or None, is test).
    stack = []
    pending_fn = None  # (name, depth) of a `fn` whose body is next
    pending_test = None  # depth at which a #[cfg(test)] item starts
    i = 0

    def current_fn():
        for _, name, _ in reversed(stack):
            if name is not None:
                return name
        return None

    def in_test():
        return any(test for _, _, test in stack)

    while i < len(toks):
        kind, value, line = toks[i]
        depth = len(stack)
        if value == "#" and i + 1 < len(toks) and toks[i + 1][1] in ("[", "!"):
            # An attribute: its tokens up to the matching `]`.
            j = i + 1 if toks[i + 1][1] == "[" else i + 2
            if toks[j][1] != "[":
                i += 1
                continue
            level, k = 0, j
            while k < len(toks):
                if toks[k][1] == "[":
                    level += 1
                elif toks[k][1] == "]":
                    level -= 1
                    if level == 0:
                        break
                k += 1
            inner = toks[j + 1 : k]
            if toks[i + 1][1] == "[" and is_test_cfg(inner):
                pending_test = depth
            if any(v == "unsafe" for _, v, _ in inner) and not in_test():
                found.append((line, "attribute", current_fn() or "(module)"))
            i = k + 1
            continue
        if kind == "ident" and value == "fn" and i + 1 < len(toks):
            name = toks[i + 1][1]
            if toks[i + 1][0] == "ident":
                pending_fn = (name, depth)
        elif kind == "ident" and value == "unsafe" and not in_test():
            nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
            if nxt == "{":
                found.append((line, "block", current_fn() or "(module)"))
            elif nxt in ("fn", "extern") and i + 2 < len(toks):
                # `unsafe fn f`, `unsafe extern "C" fn f`, `unsafe extern {`.
                k = i + 1
                while k < len(toks) and toks[k][1] not in ("fn", "{", ";"):
                    k += 1
                if k < len(toks) and toks[k][1] == "fn":
                    found.append((line, "fn", toks[k + 1][1]))
                else:
                    found.append((line, "extern", "extern"))
            elif nxt == "impl":
                # `unsafe impl<..> path::Trait<..> for path::Type<..> {`
                k, words, angle = i + 2, [], 0
                while k < len(toks) and toks[k][1] not in ("{", "where"):
                    v = toks[k][1]
                    if v == "<":
                        angle += 1
                    elif v == ">":
                        angle -= 1
                    elif angle == 0 and toks[k][0] == "ident":
                        words.append(v)
                    elif angle == 0 and v == ":" and toks[k + 1][1] == ":":
                        if words and words[-1] != "for":
                            words.pop()  # a path segment before `::`
                        k += 1
                    k += 1
                if "for" in words:
                    at = words.index("for")
                    trait = words[at - 1] if at else "?"
                    rest = words[at + 1 :]
                    name = f"{trait} for {rest[-1] if rest else '?'}"
                else:
                    name = words[-1] if words else "?"
                found.append((line, "impl", name))
            elif nxt == "trait":
                found.append((line, "trait", toks[i + 2][1]))
            else:
                found.append((line, "unsafe " + nxt, current_fn() or "(module)"))
        elif value in OPEN:
            name = None
            if value == "{" and pending_fn is not None and pending_fn[1] == depth:
                name = pending_fn[0]
                pending_fn = None
            test = value == "{" and pending_test is not None and pending_test == depth
            if test:
                pending_test = None
            stack.append((value, name, test))
        elif value in CLOSE:
            if not stack or stack[-1][0] != CLOSE[value]:
                raise ParseError(f"{path}:{line}: unbalanced '{value}'")
            stack.pop()
        elif value == ";":
            if pending_fn is not None and pending_fn[1] == depth:
                pending_fn = None  # a declaration without a body
            if pending_test is not None and pending_test == depth:
                pending_test = None  # `#[cfg(test)] mod x;` or a `use`
        i += 1
    if stack:
        raise ParseError(f"{path}: {len(stack)} unclosed delimiters")
    return found


def table_rows(doc_path):
    """The Miri table's rows: (line, where cell, test cell)."""
    with open(doc_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        start = next(k for k, l in enumerate(lines) if l.strip() == SECTION)
    except StopIteration:
        raise ParseError(f"{doc_path}: no section {SECTION!r}")
    rows, header = [], None
    for k in range(start + 1, len(lines)):
        l = lines[k].strip()
        if l.startswith("## "):
            break
        if not l.startswith("|"):
            if header is not None and rows:
                break  # the end of the first table
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", l.strip("|"))]
        if header is None:
            header = [c.lower() for c in cells]
            if not any(h.startswith("where") for h in header) or "test" not in header:
                raise ParseError(
                    f"{doc_path}:{k + 1}: the table needs a 'where' and a 'test' column"
                )
            where_col = next(c for c, h in enumerate(header) if h.startswith("where"))
            test_col = header.index("test")
            continue
        if set(l.replace("|", "").strip()) <= set("-: "):
            continue  # the separator row
        if len(cells) != len(header):
            raise ParseError(f"{doc_path}:{k + 1}: {len(cells)} cells, not {len(header)}")
        rows.append((k + 1, cells[where_col], cells[test_col]))
    if header is None:
        raise ParseError(f"{doc_path}: no table under {SECTION!r}")
    return rows


def named_sites(where):
    """The (file, function) pairs a "where" cell names."""
    pairs, current = [], None
    for span in re.findall(r"`([^`]+)`", where):
        span = span.strip()
        if span.endswith(".rs"):
            current = span
        elif current is not None:
            pairs.append((current, span))
    return pairs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list", action="store_true", help="print every site")
    parser.add_argument("--doc", default=DOC)
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = parser.parse_args()
    root = os.path.normpath(args.root)
    doc = os.path.join(root, args.doc)

    try:
        found = {}  # (file, name) -> [(line, kind)]
        for src in SOURCE_DIRS:
            for dirpath, _, files in os.walk(os.path.join(root, src)):
                for name in sorted(files):
                    if not name.endswith(".rs"):
                        continue
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, root).replace(os.sep, "/")
                    for line, kind, fn in sites(path):
                        found.setdefault((rel, fn), []).append((line, kind))
        rows = table_rows(doc)
    except (ParseError, OSError) as e:
        print(f"check-unsafe: {e}", file=sys.stderr)
        return 2

    listed = sorted(
        (rel, line, kind, fn) for (rel, fn), where in found.items() for line, kind in where
    )
    if args.list:
        for rel, line, kind, fn in listed:
            print(f"{rel}:{line}: unsafe {kind} in `{fn}`")

    problems = []
    for line, where, test in rows:
        pairs = named_sites(where)
        has_test = bool(re.search(r"`[^`]+`", test))
        for pair in pairs:
            if pair not in found:
                problems.append(
                    f"{args.doc}:{line}: names `{pair[1]}` in `{pair[0]}`, "
                    "which has no unsafe code there (moved or renamed?)"
                )
            elif not has_test:
                problems.append(f"{args.doc}:{line}: no test named for `{pair[1]}`")
    named = {pair for _, w, _ in rows for pair in named_sites(w)}
    for rel, line, kind, fn in listed:
        if (rel, fn) not in named:
            problems.append(
                f"{rel}:{line}: unsafe {kind} in `{fn}` is not in {args.doc}'s Miri table"
            )
    if problems:
        for p in problems:
            print(p, file=sys.stderr)
        print(
            f"check-unsafe: {len(problems)} problem(s); see the matching rule in "
            "scripts/check-unsafe.py",
            file=sys.stderr,
        )
        return 1
    count = sum(len(w) for w in found.values())
    print(
        f"check-unsafe: {count} unsafe sites in {len(found)} functions, "
        f"each in {args.doc}'s Miri table with a test"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
