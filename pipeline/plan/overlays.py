"""Judgment sets built from others (`qrels: {overlay: [human, umbrela]}`) as SQL: each overlay's
rows inserted into `qrels` from the rows of its sets, already loaded and checked, before any
table is made from the qrels. Pure, no I/O.

Per (qid, docno), the overlay holds the row of the first set, in its list's order, that has one,
whatever its grade (a negative grade is a judgment too): the first set's labels, its holes
filled by the next set's, and so on. Each set holds a pair at most once (the input checks), so
the choice is exact. Overlays are built in the spec's `overlays()` order, each after the sets it
reads, so an overlay may read another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.sql import Statement

if TYPE_CHECKING:
    from pipeline.spec import Spec

__all__ = ["needed_collections", "overlay_statements"]

# The first set's row of each pair: the smallest position in the list (bound) of the sets.
_OVERLAY = """
INSERT INTO qrels
SELECT ?, qid, docno, arg_min(rel, list_position(?::VARCHAR[], collection)), true
FROM qrels
WHERE list_contains(?::VARCHAR[], collection)
GROUP BY qid, docno"""


def overlay_statements(spec: Spec, names: list[str] | None = None) -> list[Statement]:
    """The statements that build the spec's overlays (those among `names`, if given, and the
    overlays they read), in an order that builds each after its sets."""
    wanted = set(spec.collections if names is None else _needed(spec, names))
    statements = []
    for name in spec.overlays():
        if name in wanted:
            sets = list(spec.collections[name].overlay)
            statements.append(Statement(_OVERLAY, [name, sets, sets]))
    return statements


def needed_collections(spec: Spec, names: list[str]) -> list[str]:
    """`names` and every collection their overlays read, in the spec's order."""
    found = set(_needed(spec, names))
    return [name for name in spec.collections if name in found]


def _needed(spec: Spec, names: list[str]) -> list[str]:
    """`names` and the collections their overlays read, at any depth (an overlay is acyclic)."""
    found: list[str] = []
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in found:
            found.append(name)
            todo += spec.collections[name].overlay
    return found
