"""The documentation as the doc tests read it: its pages, their fenced blocks, tables and regions,
each found by an explicit marker, never by a heading or by order.

A marker is an HTML comment on the line right before what it marks; its keys combine with `;`
(`<!-- test: test-command; not run: why -->`):

    run              a shell or Python block that tests/test_docs.py runs
    output           a block showing what the run block before it prints (compared)
    test: NAME       a block that a test reads by NAME (several blocks may share one)
    not run: WHY     a shell or Python block that cannot run here, and why
    table: NAME      the table that follows, checked against the code
    begin: NAME      the start of a region that a test reads, up to `<!-- end: NAME -->`

Not a test module (pytest collects `test_*.py` only): the doc tests import it.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SHELL = frozenset({"sh", "bash", "shell", "console", "zsh"})
PYTHON = frozenset({"python", "py", "pycon"})
KEYS = frozenset({"run", "output", "test", "not run", "table", "begin", "end"})
#: folders that hold no page of the documentation: generated data, builds, environments
SKIPPED = frozenset({"__pycache__", "node_modules", "build", "dist"})
# What git ignores and running the examples writes (the quickstart's outputs hold a summary.md).
SKIPPED_PATHS = frozenset({"tests/benchmark/data", "tests/benchmark/results", "configs/out", "out"})

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_MARKER = re.compile(r"^<!--\s*(.*?)\s*-->$")
_CODE = re.compile(r"`([^`]+)`")
_NEXT_KEY = re.compile(r";\s*(?=(?:run|output|test|not run|table|begin|end)\b)")


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: where it starts, its language, its text and its marker's keys."""

    page: str
    line: int  # of the opening fence, from 1
    lang: str
    text: str
    marks: dict[str, str]
    indent: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def is_shell(self) -> bool:
        """A shell block, or a transcript of one (its first line a `$ ` prompt)."""
        first = next((line for line in self.text.splitlines() if line.strip()), "")
        return self.lang in SHELL or first.startswith("$ ")

    @property
    def is_python(self) -> bool:
        return self.lang in PYTHON


def pages() -> list[str]:
    """Every Markdown page of the repository, as paths relative to its root (posix), leaving out
    hidden folders, virtual environments, builds and generated benchmark data."""
    found = []
    for directory, dirs, files in os.walk(ROOT):
        here = Path(directory).relative_to(ROOT)
        dirs[:] = sorted(d for d in dirs if _is_documented(here / d))
        found += [(here / name).as_posix() for name in sorted(files) if name.endswith(".md")]
    return sorted(found)


def _is_documented(folder: Path) -> bool:
    name = folder.name
    if name.startswith(".") or name in SKIPPED or name.endswith(".egg-info"):
        return False
    return folder.as_posix() not in SKIPPED_PATHS and not (ROOT / folder / "pyvenv.cfg").exists()


@functools.cache
def read(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def marks_of(line: str) -> dict[str, str] | None:
    """The keys of a marker line (`<!-- run -->` gives {"run": ""}), or None if it is not one."""
    found = _MARKER.match(line.strip())
    if found is None:
        return None
    fields = _NEXT_KEY.split(found.group(1))  # a `;` in a reason is prose, not a new key
    pairs = (field.split(":", 1) for field in fields if field.strip())
    return {pair[0].strip().lower(): (pair[1].strip() if len(pair) > 1 else "") for pair in pairs}


@functools.cache
def blocks(page: str) -> tuple[Block, ...]:
    """The page's fenced blocks, in order, each with the marker on the line before it."""
    lines, found, i = read(page).splitlines(), [], 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence, lang = opening.groups()
        end = next(
            (j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)
             and not lines[j].strip().strip(fence[0])),
            len(lines),
        )  # fmt: skip
        marks = (marks_of(lines[i - 1]) if i > 0 else None) or {}
        text = "\n".join(lines[i + 1 : end]) + "\n"
        found.append(Block(page, i + 1, lang.lower(), text, marks, indent))
        i = end + 1
    return tuple(found)


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def marked(name: str, page: str | None = None) -> list[Block]:
    """The blocks marked `<!-- test: NAME -->` (in `page`, or in any page); at least one."""
    found = [b for b in (blocks(page) if page else all_blocks()) if b.marks.get("test") == name]
    assert found, f"no block is marked <!-- test: {name} -->"
    return found


def region(page: str, name: str) -> str:
    """The text between `<!-- begin: NAME -->` and `<!-- end: NAME -->` in `page`."""
    text = read(page)
    begin, end = f"<!-- begin: {name} -->", f"<!-- end: {name} -->"
    assert text.count(begin) == 1 and text.count(end) == 1, f"{page}: no single region {name}"
    return text[text.index(begin) + len(begin) : text.index(end)]


def region_blocks(page: str, name: str) -> list[Block]:
    """The fenced blocks inside a region of `page`."""
    start = read(page)[: read(page).index(f"<!-- begin: {name} -->")].count("\n") + 1
    stop = read(page)[: read(page).index(f"<!-- end: {name} -->")].count("\n") + 1
    return [block for block in blocks(page) if start < block.line < stop]


def table(page: str, name: str) -> list[dict[str, str]]:
    """The rows of the table after `<!-- table: NAME -->` in `page`, as {header: cell}."""
    lines = read(page).splitlines()
    starts = [i for i, line in enumerate(lines) if marks_of(line) == {"table": name}]
    assert len(starts) == 1, f"{page}: {len(starts)} tables are marked <!-- table: {name} -->"
    rows = []
    for line in lines[starts[0] + 1 :]:
        if not line.startswith("|"):
            break
        rows.append(cells(line))
    header, body = rows[0], rows[2:]  # rows[1] is the |---| line
    return [dict(zip(header, row, strict=True)) for row in body]


def tables_named(name: str) -> list[tuple[str, list[dict[str, str]]]]:
    """Every table marked `<!-- table: NAME -->`, in any page, with its page."""
    return [
        (page, table(page, name))
        for page in pages()
        if any(marks_of(line) == {"table": name} for line in read(page).splitlines())
    ]


def cells(line: str) -> list[str]:
    """The cells of a table row; `\\|` is a `|` inside a cell, as code hosts render it."""
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [part.strip().replace("\\|", "|") for part in parts]


def code(cell: str) -> list[str]:
    """The code spans of a cell, in order: `` `AP`, `map` `` gives ["AP", "map"]."""
    return _CODE.findall(cell)


def first_code(cell: str) -> str:
    spans = code(cell)
    assert spans, f"no `code` in {cell!r}"
    return spans[0]


def markers(page: str) -> list[tuple[int, dict[str, str]]]:
    """Every marker of a page outside fenced blocks, with its line number (from 1)."""
    inside = {n for b in blocks(page) for n in range(b.line, b.line + b.text.count("\n") + 2)}
    return [
        (n, found)
        for n, line in enumerate(read(page).splitlines(), 1)
        if n not in inside and (found := marks_of(line)) is not None
    ]
