"""Any input a notebook holds, as the Arrow table irpipe reads (`pipeline.inputs.table_rows`).

A path stays a path (read as a file is). A pandas or polars frame (a LazyFrame is collected), a
pyarrow table, an Arrow stream, a DuckDB relation, a dict by query (`{qid: {docno: score}}`,
pytrec_eval's and ranx's shape, or `{qid: [(docno, score), ...]}`) and an iterable of named tuples
(ir_measures' and ir_datasets' shape, read once) all become one Arrow table with the columns
`qid`, `docno`, `rel` and, for subtopic qrels, `subtopic` (qrels) or `qid`, `docno`, `score` and
`rank` (runs). Columns are found by
the names the field uses, or mapped with `columns=`; only those are read, so the others (a
PyTerrier frame's query text) may hold anything. Each is typed by `column_types`: ids as their
exact text, floats in an id column refused (a NaN made them floats, or 1.0 would be read as
"1.0"), and every column of the wrong type refused naming the input, the column and the row. What
a row holds is then checked by the engine, as a file's lines are, with messages naming the input
and the row. No library's exception leaves here: each becomes a SpecError or an InputDataError.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pipeline.errors import InputDataError, SpecError
from pipeline.frames.column_types import Place, Rows, array_of, first_line, typed
from pipeline.frames.python_forms import FORMS, by_query, from_mapping, from_rows

__all__ = ["ALIASES", "by_query", "check_columns", "is_path", "table_of"]

#: each column's names in the field's tools, in the order they are looked for: PyTerrier frames
#: (qid, docno, score, rank, label: its `query` column is the query's text, its `docid` an
#: index's number), ir_measures and ir_datasets (query_id, doc_id, relevance), ranx and others
ALIASES = {
    "qid": ("qid", "query_id", "topic_id", "topic"),
    "docno": ("docno", "doc_id", "docid", "did"),
    "rel": ("rel", "relevance", "label", "grade", "judgment"),
    "score": ("score", "sim", "similarity"),
    "rank": ("rank",),
    "subtopic": ("subtopic", "subtopic_id"),
}
_WANTED = {"qrels": ("qid", "docno", "rel", "subtopic"), "run": ("qid", "docno", "score", "rank")}
#: columns an input may lack: a run's rank, and the subtopic, which only subtopic qrels have
_OPTIONAL = ("rank", "subtopic")


def is_path(value: Any) -> bool:
    """Whether an input names a file (or an ir_datasets id, read through its own door)."""
    return isinstance(value, str | Path)


def check_columns(columns: Any) -> None:
    """`columns=` maps irpipe's column names to the table's (`{"docno": "passage_id"}`; a pandas
    frame's label may be an integer): a SpecError saying how, for anything else."""
    if columns is None:
        return
    if not isinstance(columns, Mapping):
        raise SpecError(
            f"columns={columns!r}: give a mapping of irpipe's column names to the table's, "
            "e.g. columns={'docno': 'passage_id'}"
        )
    for ours, theirs in columns.items():
        if ours not in ALIASES:
            flipped = f"; did you mean {{{theirs!r}: {ours!r}}}?" if theirs in ALIASES else ""
            raise SpecError(
                f"columns: {ours!r} is not one of irpipe's columns ({', '.join(ALIASES)}); each "
                f"key is irpipe's name, its value the table's{flipped}"
            )
        if not isinstance(theirs, str | int) or isinstance(theirs, bool):
            raise SpecError(f"columns[{ours!r}]: give the table's column name, not {theirs!r}")


def table_of(
    value: Any,
    kind: str,
    where: str,
    columns: Mapping[str, str] | None = None,
    ranked: bool = False,
    grades: str = "integer",
):
    """The Arrow table of `value`, a `kind` ("qrels" or "run") input named `where` in messages;
    `columns` maps irpipe's column names to the input's. `ranked` (the `ordering: rank`
    setting): a run with ranks and no scores is taken, each score the negated rank. `grades`
    (the setting): `real` reads decimal grades."""
    import pyarrow as pa
    import pyarrow.compute as pc

    source, mapped = _source(value, kind, where), {k: str(v) for k, v in (columns or {}).items()}
    names = _names(source, where)
    found = {c: _column(names, c, mapped) for c in _WANTED[kind]}
    rank_only = ranked and kind == "run" and found["score"] is None and found["rank"] is not None
    for column, name in found.items():
        if name is None and column not in _OPTIONAL and not (column == "score" and rank_only):
            raise _missing(names, column, where, mapped, kind == "run")
    # PyTerrier's docid, found by its name rather than mapped, may be its index's numbers.
    unmapped_docid = found["docno"].lower() == "docid" and mapped.get("docno") != found["docno"]
    source = _collected(source, found, where)
    arrays = _read(source, found, where, ranked, grades, unmapped_docid)
    if rank_only:  # ordered by rank alone, whose ties the docno breaks as trec_eval does
        arrays["score"] = pc.negate(arrays["rank"].cast(pa.float64()))
    return pa.table(arrays)


def _read(
    source: Any,
    found: dict[str, str | None],
    where: str,
    ranked: bool,
    grades: str,
    unmapped_docid: bool = False,
) -> dict:
    """The columns `found` names, typed; ids first, so that messages name a row by its ids.
    `unmapped_docid`: the docno column is a `docid` found by its name, refused if integers."""
    rows, arrays = Rows(), {}
    for column, name in found.items():
        if name is not None:
            place = Place(where, name, rows, grades)
            raw = _raw(source, name, column, place)
            if column == "docno" and unmapped_docid:
                _no_internal_ids(raw, place)
            array = typed(raw, column, place, ranked)
            if array is not None:  # None: a rank column no ordering reads, left out
                arrays[column] = array
            if column in ("qid", "docno"):
                rows.ids[column] = array
    return arrays


def _source(value: Any, kind: str, where: str) -> Any:
    """Any tabular value as a table whose columns are read one by one: an Arrow table (shared,
    not copied, where Arrow can), a pandas or polars frame, or Python columns (a dict of lists)."""
    import pyarrow as pa

    if isinstance(value, pa.Table):
        return value
    if isinstance(value, pa.RecordBatch):
        return pa.Table.from_batches([value])
    library = _library(value)
    if library in ("pandas", "polars"):
        return _frame(value, library, where)
    if isinstance(value, pa.RecordBatchReader):
        return _reading(value.read_all, "Arrow stream", where)
    if library == "duckdb":
        return _reading(value.to_arrow_table, "DuckDB relation", where)
    if hasattr(value, "__arrow_c_stream__"):  # any other Arrow producer
        stream = "Arrow stream"
        return _reading(lambda: pa.RecordBatchReader.from_stream(value).read_all(), stream, where)
    if isinstance(value, Mapping):
        return from_mapping(value, kind, where)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        return from_rows(value, where)
    raise SpecError(f"{where}: cannot read a {type(value).__name__}; give {FORMS}")


def _library(value: Any) -> str:
    """The library whose table `value` is (its class's or a base's), or ""."""
    for cls in type(value).__mro__:
        if (library := cls.__module__.split(".")[0]) in ("pandas", "polars", "duckdb"):
            return library
    return ""


def _frame(value: Any, library: str, where: str) -> Any:
    """A pandas or polars frame as it is (a LazyFrame is collected once its columns are known)."""
    if any(cls.__name__ in ("DataFrame", "LazyFrame") for cls in type(value).__mro__):
        return value
    raise SpecError(
        f"{where}: cannot read a {library} {type(value).__name__}; give a DataFrame with the "
        "columns by name (a Series: .to_frame(), or .reset_index() for one indexed by qid)"
    )


def _reading(read, what: str, where: str) -> Any:
    """What `read` returns: the rows of a stream or relation, which may fail only now (a query
    that fails, a file gone): InputDataError with the library's first line, not its exception."""
    try:
        return read()
    except Exception as exc:  # the library's own class: pyarrow's, duckdb's, the producer's
        raise InputDataError(f"{where}: the {what} could not be read: {first_line(exc)}") from None


def _names(source: Any, where: str) -> list[str]:
    """The source's column names, as text (a pandas frame's may be integers)."""
    if isinstance(source, dict):
        return list(source)
    if _library(source) == "pandas":
        return [str(name) for name in source.columns]
    if type(source).__name__ == "LazyFrame":  # its plan may fail already (a file gone)
        return _reading(lambda: source.collect_schema().names(), "polars LazyFrame", where)
    return source.columns if _library(source) == "polars" else source.column_names


def _collected(source: Any, found: dict[str, str | None], where: str) -> Any:
    """A polars LazyFrame's columns `found` names, collected (a frame is what the call means:
    there is nothing else to read it as); any other source as it is."""
    if type(source).__name__ != "LazyFrame":
        return source
    wanted = [name for name in found.values() if name is not None]
    return _reading(lambda: source.select(wanted).collect(), "polars LazyFrame", where)


def _raw(source: Any, name: str, column: str, place: Place) -> Any:
    """The source's column `name` as Arrow, as it is (`typed` makes it irpipe's type)."""
    if isinstance(source, dict):
        return array_of(source[name], column, place)
    library = _library(source)
    if library == "polars":
        return _polars_column(source, name, place)
    names = _names(source, place.where)
    if names.count(name) > 1:
        raise SpecError(f"{place} appears {names.count(name)} times; rename all but one")
    if library == "pandas":
        return _pandas_column(source.iloc[:, names.index(name)], column, place)
    return source.column(name)


def _pandas_column(series: Any, column: str, place: Place) -> Any:
    """A pandas column as Arrow (NaN and pd.NA as nulls); an object column Arrow finds no one
    type for (ids '1' and 2, a score 'x' among numbers) is read value by value (`array_of`)."""
    import pyarrow as pa

    try:
        return pa.array(series, from_pandas=True)
    except (pa.ArrowException, OverflowError):
        return array_of(series.astype(object).where(series.notna(), None).tolist(), column, place)


def _polars_column(frame: Any, name: str, place: Place) -> Any:
    """A polars column as Arrow; one that has no Arrow form (an Object column) is named."""
    try:
        return frame.get_column(name).to_arrow()
    except Exception as exc:  # polars' errors, or Arrow's: this column cannot become Arrow
        raise SpecError(f"{place} cannot be read as Arrow: {first_line(exc)}") from None


def _column(names: list[str], column: str, mapped: Mapping[str, str]) -> str | None:
    """The input's column holding irpipe's `column`, or None."""
    if mapped.get(column) in names:  # a mapping names the column of the inputs that have it
        return mapped[column]
    lowered = {name.lower(): name for name in names}
    return next((lowered[a] for a in ALIASES[column] if a in lowered), None)


#: the columns of TREC's files by number, as `read_csv(header=None)` names them
_TREC_LAYOUTS = {
    (True, 6): ("qid Q0 docno rank score tag", {"qid": 0, "docno": 2, "rank": 3, "score": 4}),
    (False, 4): ("qid iter docno rel", {"qid": 0, "docno": 2, "rel": 3}),
}


def _no_internal_ids(array: Any, place: Place) -> None:
    """A `docid` column of integers, the only document column: PyTerrier's internal numbers,
    which match no qrels' docno (every measure would be 0), refused unless mapped by name."""
    import pyarrow as pa

    kind = array.type.value_type if pa.types.is_dictionary(array.type) else array.type
    if pa.types.is_integer(kind):
        raise SpecError(
            f"{place} holds integers ({kind}) and the table has no docno column: PyTerrier's "
            "docid is its index's number for a document, not the collection's docno, and matches "
            "no judgment; give the docno column (PyTerrier's retrievers add it with "
            "metadata=['docno']), or, if these are the collection's own document ids, map them: "
            f"columns={{'docno': {place.name!r}}}"
        )


def _missing(names: list[str], column: str, where: str, mapped: Mapping[str, str], run: bool):
    """The message for a column the input lacks, saying how to name or map it."""
    if names and all(name.isdigit() for name in names) and column not in mapped:
        return _numbered(names, where, run)
    given = f"no column {mapped[column]!r} (columns=) nor" if column in mapped else "no"
    hint = ""
    if run and column == "score" and _column(names, "rank", mapped):
        hint = "; or, for a ranking without scores, settings={'ordering': 'rank'}"
    return SpecError(
        f"{where}: {given} {column} column among {', '.join(names)}; name it one "
        f"of {', '.join(ALIASES[column])}, or map it: columns={{{column!r}: 'your_name'}}{hint}"
    )


def _numbered(names: list[str], where: str, run: bool) -> SpecError:
    """The message for a table whose columns are numbers (pandas' `read_csv(header=None)`):
    the mapping of TREC's layout when it has that many columns."""
    layout = _TREC_LAYOUTS.get((run, len(names)))
    wanted = "qid, docno, score" if run else "qid, docno, rel"
    if layout is None:
        how = f"map them by number: columns={{'qid': 0, 'docno': 1, ...}} ({wanted})"
    else:
        how = f"map them as TREC's layout ({layout[0]}) places them: columns={layout[1]!r}"
    return SpecError(
        f"{where}: its columns are numbered ({', '.join(names)}), as pandas' "
        f"read_csv(header=None) numbers them; {how}, or name them as the file is read "
        "(pandas: names=[...])"
    )
