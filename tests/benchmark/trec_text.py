"""TREC text as the tools that write it do: tabs, single spaces, padded columns, or a mixture.

Every style is one trec_eval reads (it splits on any run of C whitespace): separators are spaces and
tabs only, and no line starts with one. A file is written once, through a temporary name, so an
interrupted run never leaves half a file that a later run would take as done.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["STYLES", "write_columns"]

# style -> (separators, their probabilities, probability of trailing whitespace on a line)
_DRAWN = {
    "tabs": (["\t"], [1.0], 0.0),
    "spaces": ([" "], [1.0], 0.0),
    # A tab-separated file that a second script appended to or edited by hand.
    "mostly tabs": (["\t", " ", "\t ", " \t", "  "], [0.8, 0.08, 0.04, 0.04, 0.04], 0.02),
    # Mixtures within a line: a separator is drawn for every gap.
    "mixed": ([" ", "\t", "  ", " \t", "\t ", "   "], [0.35, 0.3, 0.1, 0.1, 0.1, 0.05], 0.1),
}
# "padded": printf-style columns (`%-12s`), left-aligned with runs of spaces.
STYLES = [*_DRAWN, "padded"]


def write_columns(
    path: Path, columns: list[np.ndarray], style: str, rng: np.random.Generator
) -> None:
    """Write the columns as lines separated in `style`, unless `path` already exists."""
    if path.exists():
        return
    fields = [np.asarray(column).astype(str) for column in columns]
    gaps = _padded(fields) if style == "padded" else _drawn(len(fields[0]), len(fields), style, rng)
    pieces = [piece for pair in zip(fields, gaps, strict=True) for piece in pair]
    text = "\n".join(map("".join, zip(*pieces, strict=True))) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(text, encoding="utf-8")
    temp.rename(path)


def _drawn(lines: int, fields: int, style: str, rng: np.random.Generator) -> list[np.ndarray]:
    """A separator after each field but the last, drawn per line; then the line's trailing part."""
    choices, weights, trailing = _DRAWN[style]
    gaps = list(np.array(choices)[rng.choice(len(choices), size=(fields - 1, lines), p=weights)])
    ends = np.where(rng.random(lines) < trailing, np.where(rng.random(lines) < 0.5, " ", "\t"), "")
    return [*gaps, ends]


def _padded(fields: list[np.ndarray]) -> list[np.ndarray]:
    """Each field but the last padded to its column's width, plus one space."""
    gaps = []
    for field in fields[:-1]:
        lengths = np.char.str_len(field)
        gaps.append(np.char.multiply(" ", lengths.max() - lengths + 1))
    return [*gaps, np.full(len(fields[0]), "")]
