"""ir_metadata (ir-metadata.org): a run file's description, YAML in the `#` lines that open it.

A block begins with the line `# ir_metadata.start` and ends with `# ir_metadata.end`; every line
between is YAML behind a `#` (one space after it is dropped too, so `#   cpu:` keeps its
indentation). Only the lines that open the file are read: those whose first non-blank character is
`#`, and blank lines among them. The run readers skip the same lines, so a run with a block reads
as one without.

Two readers: `HeadLines`, fed the blocks that digesting a file reads anyway (no second read), and
`read_head`, which opens a file (a compressed one too) and reads its opening lines alone. `parse`
turns the lines into the block's mapping, or an `InputDataError` naming the file and the line.
"""

from __future__ import annotations

import bz2
import datetime
import gzip
import lzma
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import yaml

from pipeline.errors import InputDataError

__all__ = [
    "END",
    "START",
    "HeadLines",
    "is_compressed",
    "parse",
    "read_block",
    "read_head",
    "tag_of",
]

START = "ir_metadata.start"
END = "ir_metadata.end"

_BLANK = b" \t\r\v\f\n"
_CHUNK = 1 << 16


def _opens_file(line: bytes) -> bool:
    """Whether a line belongs to the opening lines: blank, or a comment."""
    text = line.lstrip(_BLANK)
    return not text or text.startswith(b"#")


class HeadLines:
    """The opening lines of a file, fed its bytes block by block (`digest_file`'s `watch`):
    returns False once a line that is neither blank nor a comment is found."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self._partial = b""
        self._done = False

    def __call__(self, block: bytes) -> bool:
        data, start = self._partial + block, 0
        while (end := data.find(b"\n", start)) >= 0:
            if not self._take(data[start:end]):
                return False
            start = end + 1
        self._partial = data[start:]
        if self._partial and not _opens_file(self._partial[:_CHUNK]):
            self._done = True  # a data line, however long, ends the head
        return not self._done

    def finish(self) -> list[bytes]:
        """The opening lines, once the whole file (or its head) was fed."""
        if not self._done and self._partial:
            self._take(self._partial)
        self._partial = b""
        return self.lines

    def _take(self, line: bytes) -> bool:
        if self._done or not _opens_file(line):
            self._done = True
            return False
        self.lines.append(line)
        return True


#: the compressions whose text Python reads (a Zstandard file's where Python can: 3.14's
#: `compression.zstd`; DuckDB reads the run itself either way)
_COMPRESSIONS = {".gz": gzip, ".bz2": bz2, ".xz": lzma, ".zst": None}


def _open(path: Path) -> IO[bytes] | None:
    """The file's text as bytes (decompressed), or None where its compression is not read."""
    suffix = path.suffix.lower()
    module = _COMPRESSIONS.get(suffix)
    if suffix == ".zst":
        try:
            from compression import zstd as module  # type: ignore[import-not-found,no-redef]
        except ImportError:
            return None
    return module.open(path, "rb") if module is not None else path.open("rb")


def is_compressed(path: Path) -> bool:
    """Whether the file's text is compressed (its head is read by `read_head`, not the digest)."""
    return path.suffix.lower() in _COMPRESSIONS


def read_head(path: Path) -> list[bytes] | None:
    """The opening lines of the file at `path` (decompressed), reading nothing past them; None
    where its compression cannot be read here (Zstandard before Python 3.14) or it does not
    decompress."""
    try:
        handle = _open(path)
        if handle is None:
            return None
        head = HeadLines()
        with handle:
            chunk = handle.read(_CHUNK)
            while chunk and head(chunk):  # until the head ends, or the file does
                chunk = handle.read(_CHUNK)
    except (OSError, EOFError, lzma.LZMAError):
        # A file that does not decompress has no block to record; reading it says what is wrong
        # with it in the input rules' words (a truncated gzip, a .gz that is not gzip).
        return None
    return head.finish()


def read_block(path: Path) -> dict[str, Any] | None:
    """The ir_metadata block of the run file at `path`, or None where it has none."""
    lines = read_head(path)
    return None if lines is None else parse(lines, str(path))


def parse(lines: Sequence[bytes], source: str) -> dict[str, Any] | None:
    """The block among a file's opening `lines` as a mapping of JSON values (None without a
    block); InputDataError naming `source` and the line where the block is not YAML."""
    start = _marker(lines, START, 0)
    if start is None:
        return None
    end = _marker(lines, END, start + 1)
    if end is None:
        raise InputDataError(
            f"{source}:{start + 1}: '# {START}' has no '# {END}' in the comment lines that open "
            f"the file; end the block with the line '# {END}'"
        )
    body = [_text(lines[i], source, i + 1) for i in range(start + 1, end)]
    return _mapping(_load("\n".join(body), source, start + 2), source, start + 1)


def _marker(lines: Sequence[bytes], marker: str, first: int) -> int | None:
    wanted = marker.encode()
    for index in range(first, len(lines)):
        if lines[index].strip(_BLANK).lstrip(b"#").strip(_BLANK) == wanted:
            return index
    return None


def _text(line: bytes, source: str, number: int) -> str:
    """A block line as YAML: the `#` and one space after it dropped, the line end too."""
    content = line.rstrip(b"\r\n").lstrip(b" \t").removeprefix(b"#").removeprefix(b" ")
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        raise InputDataError(
            f"{source}:{number}: the ir_metadata block is not UTF-8 text; save it as UTF-8"
        ) from None


class _Loader(yaml.SafeLoader):
    """YAML's safe loader, with dates and times kept as the text written (a manifest is JSON)."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def _load(text: str, source: str, first_line: int) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + (mark.line if mark is not None else 0)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context, began = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and began is not None and began.line != getattr(mark, "line", None):
            problem += f", {context} begun on line {first_line + began.line}"
        raise InputDataError(
            f"{source}:{line}: the ir_metadata block is not valid YAML ({problem}); correct "
            f"it (each line is YAML after '# '), or remove the block"
        ) from None


def _mapping(value: Any, source: str, line: int) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputDataError(
            f"{source}:{line}: the ir_metadata block is a YAML {type(value).__name__}, not a "
            "mapping of sections (tag:, actor:, platform:, ...)"
        )
    return _plain(value)


def _plain(value: Any) -> Any:
    """The value as JSON holds it: string keys, lists for sets and tuples."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(item) for item in value]
    if isinstance(value, bytes | datetime.date):
        return str(value)
    return value


def tag_of(block: dict[str, Any] | None, source: str) -> str:
    """The block's `tag`, the run's name (an InputDataError where there is none)."""
    tag = (block or {}).get("tag")
    if isinstance(tag, bool) or not isinstance(tag, str | int) or not str(tag).strip():
        found = "has no ir_metadata block" if block is None else "has no tag in its ir_metadata"
        raise InputDataError(
            f"{source}: {found}, and names: ir_metadata names each run by it; add "
            f"'# tag: NAME' to its block (between '# {START}' and '# {END}'), or remove names"
        )
    return str(tag).strip()
