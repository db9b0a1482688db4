"""The dashboard's HTML tables: every value escaped, every row and cell tagged with its run,
metric and collection (the page's filters hide the others), every header sortable by the page's
script. A table's size matters (a history's every evaluation has a page): a metric's column is
tagged on its header alone, and a cell holds a sort key only where its text does not give one."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from pipeline.formatting import format_value

__all__ = ["Cell", "attrs", "link", "number", "table", "text"]


class Cell:
    """A table cell: what it shows (HTML, already escaped), how it sorts when its text does not
    say (the page's script sorts by the number a cell shows, else by its text), its tags."""

    def __init__(self, html: str, sort: float | str | None = None, **tags: str) -> None:
        self.html, self.sort, self.tags = html, sort, tags

    def render(self) -> str:
        sort = "" if self.sort is None else f' data-sort="{escape(str(self.sort))}"'
        return f"<td{sort}{attrs(self.tags)}>{self.html}</td>"


def attrs(tags: dict[str, Any]) -> str:
    """`data-run="..."` and the like, for the filters (empty values left out)."""
    return "".join(f' data-{k}="{escape(str(v))}"' for k, v in tags.items() if v not in (None, ""))


def link(href: str, text: str) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def number(value: float | None, **tags: str) -> Cell:
    """A value as trec_eval prints it (4 decimals), which the page's script sorts by."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Cell("–", None, **tags)
    return Cell(escape(format_value(value)), None, **tags)


def text(value: Any, **tags: str) -> Cell:
    return Cell(escape("" if value is None else str(value)), None, **tags)


def table(
    headers: Sequence[str | tuple[str, dict]],
    rows: Sequence[tuple[Sequence[Cell], dict]],
    caption: str = "",
    kind: str = "",
) -> str:
    """A sortable table; a header may carry tags (a metric's column), a row its tags."""
    head = "".join(
        f"<th{attrs(h[1])}>{escape(h[0])}</th>" if isinstance(h, tuple) else f"<th>{escape(h)}</th>"
        for h in headers
    )
    body = "\n".join(
        f"<tr{attrs(tags)}>{''.join(c.render() for c in cells)}</tr>" for cells, tags in rows
    )
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (
        f'<table class="sortable {kind}">{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>\n{body}\n</tbody></table>"
    )
