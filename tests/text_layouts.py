"""Every kind of whitespace trec_eval reads, per file and per line: the lines of a generated input
(pipeline.synthetic's writers) laid out again as the tools and people that write TREC text do.

`PER_FILE` layouts separate every field of the file by one delimiter (the Arrow reader's fast
path reads them); `PER_LINE` ones mix separators within the file or a line, pad, indent, add
comments or whitespace-only lines, or break the rule only past the head of the file (64 KiB),
where the reader finds it block by block (each is read the exact way).
"""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from pathlib import Path

__all__ = ["LAYOUTS", "PER_FILE", "PER_LINE", "write_layout"]

Lines = list[list[str]]
# C's isspace without the line ends: what trec_eval splits a line at.
_GAPS = [" ", "\t", "  ", " \t", "\t ", "\v", "\f", "\t\t", " \f "]
_HEAD = 1 << 16


def _joined(delimiter: str, end: str = "\n") -> Callable[[Lines, random.Random], str]:
    return lambda lines, rng: "".join(delimiter.join(fields) + end for fields in lines)


def _mixed(lines: Lines, rng: random.Random) -> str:
    """A separator drawn from C's whitespace for every gap."""
    return "".join("".join(f + rng.choice(_GAPS) for f in fs[:-1]) + fs[-1] + "\n" for fs in lines)


def _padded(lines: Lines, rng: random.Random) -> str:
    """printf-style columns: each field padded to its column's width, then a space."""
    widths = [max(len(fs[i]) for fs in lines) for i in range(len(lines[0]) - 1)]
    return "".join(
        "".join(f.ljust(w + 1) for f, w in zip(fs, widths, strict=False)) + fs[-1] + "\n"
        for fs in lines
    )


def _edited(delimiter: str, edit: Callable[[str, int], str], late: bool = False):
    """Single-delimited lines, one of them (the middle one, or the first past the head) edited."""

    def layout(lines: Lines, rng: random.Random) -> str:
        text = [delimiter.join(fields) + "\n" for fields in lines]
        at = len(text) // 2
        if late:  # the first line that starts past the head
            at = next(i for i in range(len(text)) if sum(map(len, text[:i])) > _HEAD)
        text[at] = edit(text[at], at)
        return "".join(text)

    return layout


def _one_more(line: str) -> str:
    return line.replace("\n", " x\n")


def _one_less(line: str) -> str:
    return line.rstrip("\n").rsplit(" ", 1)[0] + "\n"


def _comment(line: str) -> str:
    """A comment line of as many tab-separated fields as `line`."""
    return "\t".join(["#"] * len(line.split("\t"))) + "\n"


#: layout name -> (lines, rng) -> the file's text
PER_FILE = {
    "spaces": _joined(" "),
    "tabs": _joined("\t"),
    "tabs, CRLF": _joined("\t", "\r\n"),
    "spaces, no final line end": lambda lines, rng: _joined(" ")(lines, rng).removesuffix("\n"),
    "tabs, byte-order mark": lambda lines, rng: "\ufeff" + _joined("\t")(lines, rng),
    "spaces, blank lines": _edited(" ", lambda line, i: "\n\n" + line + "\n"),
}
PER_LINE = {
    "mixed": _mixed,
    "padded": _padded,
    "indented": _edited(" ", lambda line, i: "  " + line),
    "trailing blanks": _edited("\t", lambda line, i: line.replace("\n", " \t\n")),
    "comment line": _edited(" ", lambda line, i: "# written by a script\n" + line),
    "whitespace-only line": _edited("\t", lambda line, i: " \t \n" + line),
    "one space among tabs": _edited("\t", lambda line, i: line.replace("\t", " ", 1)),
    "a vertical tab": _edited(" ", lambda line, i: line.replace(" ", "\v", 1)),
    "a control character in a field": _edited(
        "\t", lambda line, i: line.replace("\t", "\x01\t", 1)
    ),
    "a carriage return alone": _edited(" ", lambda line, i: line.replace(" ", "\r", 1)),
    # Past the head, each with as many fields as its file's other lines to one delimiter: only
    # the proof of each block, not the field count, tells them apart.
    "late: a tab among spaces": _edited(
        " ", lambda line, i: _one_more(line.replace(" ", "\t", 1)), True
    ),
    "late: doubled space": _edited(
        " ", lambda line, i: _one_less(line.replace(" ", "  ", 1)), True
    ),
    "late: comment line": _edited("\t", lambda line, i: _comment(line) + line, True),
    "late: a carriage return ending a line": _edited(
        " ", lambda line, i: line.replace("\n", "\r"), True
    ),
    "late: form feed in a field": _edited(
        " ", lambda line, i: _one_more(line.replace(" ", "\f", 1)), True
    ),
}
LAYOUTS = {**PER_FILE, **PER_LINE}


def write_layout(lines: Lines, layout: str, path: Path, seed: int = 0) -> Path:
    """Write `lines` (each a list of fields) to `path` laid out as `layout`; gzip-compressed
    when `path` ends in .gz. The late layouts repeat the lines until the file passes its head."""
    size = sum(len(" ".join(fields)) + 1 for fields in lines)
    if layout.startswith("late") and size <= _HEAD:
        lines = lines * (_HEAD // size + 2)
    data = LAYOUTS[layout](lines, random.Random(seed)).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)
    return path
