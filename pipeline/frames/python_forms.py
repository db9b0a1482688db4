"""Inputs given as Python values rather than tables: a dict by query (`{qid: {docno: value}}`,
pytrec_eval's and ranx's shape, or `{qid: [(docno, value), ...]}`) and named tuples (ir_measures'
and ir_datasets' rows, read once), as Python columns (a dict of lists, by column name) that
`convert` reads as it reads a table's columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pipeline.errors import SpecError

__all__ = ["FORMS", "by_query", "from_mapping", "from_rows"]

_INNER = {"qrels": "rel", "run": "score"}  # a dict by query holds these

#: what a call may give, for the message refusing anything else
FORMS = (
    "a path, a pandas or polars frame, an Arrow table or stream, a DuckDB relation, a dict "
    "{qid: {docno: value}} or {qid: [(docno, value), ...]}, or named tuples"
)


def by_query(value: Any) -> bool:
    """Whether `value` is one input given by query, `{qid: {docno: value}}` or `{qid: [(docno,
    value), ...]}`, rather than inputs by name (`{"bm25": frame}`, `{"dl19": {qid: ...}}`)."""
    return isinstance(value, Mapping) and bool(value) and all(map(_documents, value.values()))


#: keys of a spec's run or collection entry, which a query's documents never hold together
#: with their own (a run's `collection`, a fusion's `fuse`, a collection's `format`, `num_docs`,
#: generated answers' `nuggets`, `assignments`, `support` and `answers`, a run's `latency`)
_SPEC_KEYS = frozenset(
    {"collection", "fuse", "format", "num_docs", "nuggets", "assignments", "support", "answers",
     "latency"}
)  # fmt: skip


def _documents(value: Any) -> bool:
    """Whether a value is one query's documents (its first is enough to tell): `{docno: value}`,
    not a spec's `{"fuse": [...]}`, `{"run": ..., "collection": ...}` nor `{"qrels": ...,
    "format": ...}`; or `[(docno, value)]`."""
    if isinstance(value, Mapping):
        first = next(iter(value.values()), None)
        return not (_SPEC_KEYS & value.keys()) and not isinstance(first, Mapping | list | tuple)
    return isinstance(value, list | tuple) and bool(value) and _pair(value[0])


def _pair(item: Any) -> bool:
    """A (docno, value) pair: two items, not a named tuple (ir_measures' rows are read as such)."""
    return isinstance(item, tuple | list) and len(item) == 2 and not hasattr(item, "_fields")


def from_mapping(value: Mapping, kind: str, where: str) -> dict[str, list]:
    """`{qid: {docno: value}}` (pytrec_eval's and ranx's shape) or `{qid: [(docno, value), ...]}`
    as Python columns."""
    qids, docnos, values = [], [], []
    for qid, documents in value.items():
        found, given = _query_documents(documents, f"{where}[{qid!r}]")
        qids += [qid] * len(found)
        docnos += found
        values += given
    return {"qid": qids, "docno": docnos, _INNER[kind]: values}


def _query_documents(documents: Any, where: str) -> tuple[list, list]:
    """One query's docnos and values, from `{docno: value}` or `[(docno, value), ...]`."""
    if isinstance(documents, Mapping):
        return list(documents), list(documents.values())
    if not isinstance(documents, list | tuple):
        raise SpecError(
            f"{where}: expected {{docno: value}} or [(docno, value), ...], found "
            f"{type(documents).__name__}"
        )
    for i, item in enumerate(documents):
        if not _pair(item):
            raise SpecError(f"{where}[{i}]: expected a pair (docno, value), found {item!r:.60}")
    return [docno for docno, _ in documents], [value for _, value in documents]


def from_rows(rows: Iterable, where: str) -> dict[str, list]:
    """Named tuples (ir_measures' Qrel and ScoredDoc, ir_datasets' records), read once, as
    Python columns."""
    rows = list(rows)  # an iterator is read once, here, and never again
    if not rows:
        raise SpecError(f"{where}: no rows: the iterable was empty (or already read)")
    fields = getattr(rows[0], "_fields", None)
    if fields is None:
        raise SpecError(
            f"{where}: rows must be named tuples (query_id, doc_id, ...), found "
            f"{type(rows[0]).__name__}; or give {FORMS}"
        )
    try:
        return {name: [getattr(row, name) for row in rows] for name in fields}
    except AttributeError:  # rows of more than one shape
        bad = next(i for i, row in enumerate(rows) if not all(hasattr(row, f) for f in fields))
        raise SpecError(
            f"{where}: row {bad + 1} lacks a field of row 1 ({', '.join(fields)}): give rows "
            "of one shape"
        ) from None
