"""Any input a notebook holds, as the Arrow table irpipe reads (`pipeline.plan.table_inputs`).

A path stays a path (read as a file is). A pandas, polars or pyarrow table, an Arrow stream, a
DuckDB relation, a dict of dicts (`{qid: {docno: score}}`, pytrec_eval's and ranx's shape) and an
iterable of named tuples (ir_measures' and ir_datasets' shape, read once) all become one Arrow
table with the columns `qid`, `docno` and `rel` (qrels) or `qid`, `docno`, `score` and `rank`
(runs). Columns are found by the names the field uses, or mapped with `columns=`. Ids that are
integers become their exact decimal text; ids that are floats are refused (a NaN made them floats,
or 1.0 would be read as "1.0"). What a row holds is then checked by the engine, as a file's lines
are, with messages naming the input and the row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pipeline.errors import SpecError

__all__ = ["ALIASES", "is_path", "table_of"]

#: each column's names in the field's tools, in the order they are looked for: PyTerrier frames
#: (qid, docno, score, rank, label: its `query` column is the query's text, its `docid` an
#: index's number), ir_measures and ir_datasets (query_id, doc_id, relevance), ranx and others
ALIASES = {
    "qid": ("qid", "query_id", "topic_id", "topic"),
    "docno": ("docno", "doc_id", "docid", "did"),
    "rel": ("rel", "relevance", "label", "grade", "judgment"),
    "score": ("score", "sim", "similarity"),
    "rank": ("rank",),
}
_WANTED = {"qrels": ("qid", "docno", "rel"), "run": ("qid", "docno", "score", "rank")}
_INNER = {"qrels": "rel", "run": "score"}  # a dict of dicts holds these


def is_path(value: Any) -> bool:
    """Whether an input names a file (or an ir_datasets id, read through its own door)."""
    return isinstance(value, str | Path)


def table_of(
    value: Any,
    kind: str,
    where: str,
    columns: Mapping[str, str] | None = None,
    ranked: bool = False,
):
    """The Arrow table of `value`, a `kind` ("qrels" or "run") input named `where` in messages;
    `columns` maps irpipe's column names to the input's. `ranked` (the `ordering: rank`
    setting): a run with ranks and no scores is taken, each score the negated rank."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table, mapped = _arrow(value, kind, where), columns or {}
    found = {c: _column(table, c, mapped) for c in _WANTED[kind]}
    rank_only = ranked and kind == "run" and found["score"] is None and found["rank"] is not None
    for column, name in found.items():
        if name is None and column != "rank" and not (column == "score" and rank_only):
            raise _missing(table, column, where, mapped, kind == "run")
    arrays = {c: _typed(table.column(name), c, where, name) for c, name in found.items() if name}
    if rank_only:  # ordered by rank alone, whose ties the docno breaks as trec_eval does
        arrays["score"] = pc.negate(arrays["rank"].cast(pa.float64()))
    return pa.table(arrays)


def _arrow(value: Any, kind: str, where: str):
    """Any tabular value as an Arrow table, without copying where Arrow can share memory."""
    import pyarrow as pa

    if isinstance(value, pa.Table):
        return value
    if isinstance(value, pa.RecordBatchReader | pa.RecordBatch):
        return (
            pa.Table.from_batches([value])
            if isinstance(value, pa.RecordBatch)
            else value.read_all()
        )
    module = type(value).__module__.split(".")[0]
    if module == "pandas":
        return pa.Table.from_pandas(value, preserve_index=False)
    if module == "polars":
        return value.to_arrow()
    if module == "duckdb":
        return value.to_arrow_table()
    if hasattr(value, "__arrow_c_stream__"):  # any other Arrow producer
        return pa.RecordBatchReader.from_stream(value).read_all()
    if isinstance(value, Mapping):
        return _from_mapping(value, kind, where)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        return _from_rows(value, kind, where)
    raise SpecError(
        f"{where}: cannot read a {type(value).__name__}; give a path, a pandas, polars or Arrow "
        f"table, a DuckDB relation, a dict {{qid: {{docno: value}}}} or named tuples"
    )


def _from_mapping(value: Mapping, kind: str, where: str):
    """`{qid: {docno: value}}` (pytrec_eval's and ranx's shape) as a table."""
    import pyarrow as pa

    qids, docnos, values = [], [], []
    for qid, inner in value.items():
        if not isinstance(inner, Mapping):
            raise SpecError(
                f"{where}[{qid!r}]: expected a dict {{docno: value}}, found {type(inner).__name__}"
            )
        qids += [qid] * len(inner)
        docnos += list(inner)
        values += list(inner.values())
    return pa.table({"qid": qids, "docno": docnos, _INNER[kind]: values})


def _from_rows(rows: Iterable, kind: str, where: str):
    """Named tuples (ir_measures' Qrel and ScoredDoc, ir_datasets' records), read once."""
    import pyarrow as pa

    rows = list(rows)  # an iterator is read once, here, and never again
    if not rows:
        raise SpecError(f"{where}: no rows: the iterable was empty (or already read)")
    fields = getattr(rows[0], "_fields", None)
    if fields is None:
        raise SpecError(
            f"{where}: rows must be named tuples (query_id, doc_id, ...), found "
            f"{type(rows[0]).__name__}"
        )
    return pa.table({f: [getattr(r, f) for r in rows] for f in fields})


def _column(table, column: str, mapped: Mapping[str, str]) -> str | None:
    """The input's column holding irpipe's `column`, or None."""
    names = table.column_names
    if mapped.get(column) in names:  # a mapping names the column of the inputs that have it
        return mapped[column]
    lowered = {name.lower(): name for name in names}
    return next((lowered[a] for a in ALIASES[column] if a in lowered), None)


def _missing(table, column: str, where: str, mapped: Mapping[str, str], run: bool) -> SpecError:
    """The message for a column the input lacks, saying how to name or map it."""
    given = f"no column {mapped[column]!r} (columns=) nor" if column in mapped else "no"
    hint = ""
    if run and column == "score" and _column(table, "rank", mapped):
        hint = "; or, for a ranking without scores, settings={'ordering': 'rank'}"
    return SpecError(
        f"{where}: {given} {column} column among {', '.join(table.column_names)}; name it one "
        f"of {', '.join(ALIASES[column])}, or map it: columns={{{column!r}: 'your_name'}}{hint}"
    )


def _typed(array, column: str, where: str, name: str):
    """A column as irpipe's type: ids as exact text, scores as doubles, grades as integers."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        array, kind = array.cast(kind.value_type), kind.value_type
    if column in ("qid", "docno"):
        if pa.types.is_floating(kind):
            raise SpecError(
                f"{where}: column {name!r} holds floats ({kind}); ids are text: give them as "
                "strings or integers (a missing value makes pandas store integers as floats)"
            )
        if not (pa.types.is_integer(kind) or pa.types.is_string(kind)
                or pa.types.is_large_string(kind)):  # fmt: skip
            raise SpecError(f"{where}: column {name!r} holds {kind}; ids are text or integers")
        return array.cast(pa.string())
    if column == "rel":
        if pa.types.is_floating(kind):
            whole = pc.all(pc.equal(pc.floor(array), array)).as_py()
            if whole is False:
                raise SpecError(f"{where}: column {name!r} holds fractions; grades are integers")
        return array.cast(pa.int64(), safe=False) if not pa.types.is_integer(kind) else array
    return array.cast(pa.float64() if column == "score" else pa.int64())
