"""Each column an input table gives irpipe, as irpipe's type, or one message saying what is wrong.

Ids become their exact text: any Arrow text type (string, large_string, string_view, dictionary-
encoded or not) as it is, an integer as its decimal text. Grades become integers (booleans are
grades 1 and 0; floats only when whole), or doubles under `grades: real`; scores doubles (booleans too, as they always were),
ranks integers (floats only when whole). Text is refused in all three, digits or not: a column's
type is what the frame says it holds, and text there is most often a file read without types or
a parse gone wrong upstream, which reading '1' as 1 would hide. A column of the wrong type is a SpecError naming the input, the column and, where one value is at
fault, its row, as floats in an id column always were. A missing value (a null; a NaN where a
grade belongs) is left to the engine, which names its row as it names a file's bad line
(InputDataError); only a missing rank is named here, since the engine does not check ranks.

Rows are numbered from 1 in the table's order, as the engine's reports number them, and named with
their qid and docno once these columns are read: `runs['bm25']: column 'rank', row 3 (qid '7',
docno 'd2'): 1.5 is not a whole number; ...`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import InputDataError, SpecError

__all__ = ["Place", "Rows", "array_of", "first_line", "is_text", "typed"]

#: what each column must hold, as messages say it
RULES = {
    "qid": "ids are text or integers",
    "docno": "ids are text or integers",
    "rel": "grades are integers",
    "score": "scores are numbers",
    "rank": "ranks are whole numbers",
    "subtopic": "subtopics are integers",
}
#: how decimal grades are read, where a grade must be whole
REAL_GRADES = " (decimal grades are read with settings={'grades': 'real'})"
#: why ranks may be fractions, and how to get whole ones
RANK_TIES = " (pandas' rank() gives tied rows their mean rank; rank(method='first') does not)"
#: how to make a column of numbers given as text hold numbers
_CONVERT = {
    "rel": "pandas: .astype(int); polars: .cast(pl.Int64)",
    "score": "pandas: pd.to_numeric(...); polars: .cast(pl.Float64)",
    "rank": "pandas: .astype(int); polars: .cast(pl.Int64)",
    "subtopic": "pandas: .astype(int); polars: .cast(pl.Int64)",
}


@dataclass
class Rows:
    """How messages name a row: its number from 1 in the table's order, with its qid and docno
    once `ids` holds these columns (typed: text)."""

    ids: dict[str, Any] = field(default_factory=dict)

    def at(self, index: int) -> str:
        """`row 3 (qid '7', docno 'd2')` for the row at 0-based `index`."""
        known = [f"{c} {self.ids[c][index].as_py()!r}" for c in ("qid", "docno") if c in self.ids]
        return f"row {index + 1}" + (f" ({', '.join(known)})" if known else "")


#: what a grade must hold, and how to make text hold it, under `grades: real`
_REAL = ("grades are numbers", _CONVERT["score"])


@dataclass(frozen=True)
class Place:
    """Where a column is, for messages: the input (`runs['bm25']`), the column's name in it,
    how its rows are named, and the `grades` setting (`real`: a grade may be a decimal)."""

    where: str
    name: str
    rows: Rows
    grades: str = "integer"

    def real(self, column: str) -> bool:
        """Whether `column` is a grade read as a decimal."""
        return column == "rel" and self.grades == "real"

    def rule(self, column: str) -> str:
        """What `column` must hold, as messages say it."""
        return _REAL[0] if self.real(column) else RULES[column]

    def __str__(self) -> str:
        return f"{self.where}: column {self.name!r}"

    def row(self, index: int) -> str:
        """The column and one of its rows (0-based `index`), for a message about one value."""
        return f"{self}, {self.rows.at(index)}"


def is_text(kind: Any) -> bool:
    """Whether an Arrow type is text: string, large_string or string_view."""
    import pyarrow as pa

    view = getattr(pa.types, "is_string_view", None)  # pyarrow 16 added string_view
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or bool(view and view(kind))


def typed(array: Any, column: str, place: Place, ranked: bool = False) -> Any:
    """The Arrow `array` holding irpipe's `column` as irpipe's type (module docstring), or None
    for a rank column that cannot order a list when none is ordered by rank (`ranked` false):
    trec_eval ignores a run file's rank field then, and irpipe a table's."""
    if column != "rank" or ranked:
        return _typed(array, column, place, ranked)
    try:
        return _typed(array, column, place, ranked)
    except SpecError:
        return None


def _typed(array: Any, column: str, place: Place, ranked: bool) -> Any:
    import pyarrow as pa

    try:
        if pa.types.is_dictionary(array.type):  # pandas' categories, polars' Categorical
            array = _decoded(array)
        if len(array) == 0:  # the engine says the table has no row
            return array.cast(_target(column))
        if column in ("qid", "docno"):
            return _ids(array, place)
        return _numbers(array, column, place, ranked)
    except pa.ArrowException as exc:  # a cast no check above foresaw: still name the column
        raise SpecError(
            f"{place} cannot be read: {first_line(exc)}; {place.rule(column)}"
        ) from None


def _decoded(array: Any) -> Any:
    """A dictionary-encoded column as its values; text as string first, since pyarrow cannot
    decode (take from) string_view values."""
    import pyarrow as pa

    chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
    plain = pa.string() if is_text(array.type.value_type) else array.type.value_type
    return pa.chunked_array(
        [pa.DictionaryArray.from_arrays(c.indices, c.dictionary.cast(plain)).dictionary_decode()
         for c in chunks],
        plain,
    )  # fmt: skip


def _ids(array: Any, place: Place) -> Any:
    """Ids as text (module docstring); floats refused, naming a missing value if there is one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if is_text(kind) or pa.types.is_integer(kind) or pa.types.is_null(kind):
        return array.cast(pa.string())
    if pa.types.is_floating(kind):
        missing = _first(pc.is_nan(array.fill_null(float("nan"))))
        why = f" ({place.rows.at(missing)} is missing)" if missing is not None else ""
        raise SpecError(
            f"{place} holds floats ({kind}){why}; ids are text: give them as strings or "
            "integers (a missing value makes pandas store integers as floats)"
        )
    raise SpecError(f"{place} holds {kind}; ids are text or integers")


def _numbers(array: Any, column: str, place: Place, ranked: bool) -> Any:
    """Grades and ranks as integers, scores (and grades under `grades: real`) as doubles
    (module docstring)."""
    import pyarrow as pa

    kind = array.type
    if is_text(kind):
        raise _text(array, column, place)
    numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
    if not (
        numeric
        or pa.types.is_null(kind)
        or (pa.types.is_boolean(kind) and column not in ("rank", "subtopic"))
    ):
        raise SpecError(f"{place} holds {kind}; {place.rule(column)}")
    if column == "score":  # a NaN stays: the engine says the score must be a finite number
        return array.cast(pa.float64())
    if column in ("rel", "subtopic") and pa.types.is_integer(kind):
        return array  # as it always was, and the digest of its data with it
    if place.real(column):  # a NaN is a missing grade, as for whole ones
        return _nan_as_null(array.cast(pa.float64()))
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        array = _whole(array, column, place)
    if column == "rank" and ranked:
        _every_rank(array, place)
    return array.cast(pa.int64())  # whole floats, and booleans as the grades 1 and 0


def _whole(array: Any, column: str, place: Place) -> Any:
    """Floats as whole floats where `column` needs integers, refusing the first that is not
    whole or is past 64 bits. A NaN is a missing value, as pandas reads it when it makes Arrow
    (polars keeps NaN apart from null: here it is null too, and the engine names its row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    floats = _nan_as_null(array.cast(pa.float64()))
    whole = pc.and_(pc.is_finite(floats), pc.equal(pc.floor(floats), floats))
    bad = _first(pc.invert(pc.and_(whole, pc.less(pc.abs(floats), 2.0**63))))
    if bad is not None:
        value = floats[bad].as_py()
        why = "is too large" if value.is_integer() else "is not a whole number"
        hints = {"rank": RANK_TIES, "rel": REAL_GRADES} if why.endswith("number") else {}
        raise SpecError(f"{place.row(bad)}: {value} {why}; {RULES[column]}{hints.get(column, '')}")
    return floats


def _nan_as_null(floats: Any) -> Any:
    """Doubles with each NaN a null: a missing value, as pandas reads it when it makes Arrow
    (polars keeps NaN apart from null: here it is null too, and the engine names its row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.if_else(pc.is_nan(floats), pa.scalar(None, pa.float64()), floats)


def _every_rank(array: Any, place: Place) -> None:
    """Under `ordering: rank` the ranks order the list: a missing one is a bad row, as a run
    file's rank field is under that setting."""
    import pyarrow.compute as pc

    missing = _first(pc.is_null(array))
    if missing is not None:
        raise InputDataError(
            f"{place.row(missing)}: the rank is missing; under settings={{'ordering': 'rank'}} "
            "every row needs one"
        )


def _text(array: Any, column: str, place: Place) -> SpecError:
    """The refusal of text where numbers belong: naming a value that is no number, if any."""
    values = array.to_pylist()  # only on the way to an error
    given = [i for i, value in enumerate(values) if value is not None]
    bad = next((i for i in given if not _parses(values[i])), None)
    if bad is not None:
        return SpecError(
            f"{place.row(bad)}: {values[bad]!r} is text, not a number; {place.rule(column)}"
        )
    shown = f", e.g. {values[given[0]]!r} on {place.rows.at(given[0])}" if given else ""
    return SpecError(
        f"{place} holds numbers as text{shown}; {place.rule(column)}: give numbers "
        f"({_REAL[1] if place.real(column) else _CONVERT[column]})"
    )


def array_of(values: list, column: str, place: Place) -> Any:
    """Python values (a dict's, named tuples', a pandas object column's; a missing one None) as
    an Arrow array, typed later by `typed`. Where Arrow finds no one type: ids each as their exact
    text (`_exact_text`); elsewhere the first value that is no number, named with its row."""
    import pyarrow as pa

    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowException, OverflowError) as exc:  # mixed types, or an int past 64 bits
        if column in ("qid", "docno"):
            return pa.array(_exact_text(values, place), pa.string())
        raise _no_number(values, column, place, exc) from None


def _exact_text(values: list, place: Place) -> list[str | None]:
    """Ids of mixed types (a pandas object column of '1' and 2, a dict's keys) each as its exact
    text: a str as it is, an integer as its decimal text, which is how a column of integers is
    read, so '2' and 2 are one id. A float or anything else has no exact text and is refused, as
    a column of floats is."""
    texts: list[str | None] = []
    for i, value in enumerate(values):
        if value is None or isinstance(value, str):
            texts.append(value)
        elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
            texts.append(str(int(value)))
        else:
            raise SpecError(
                f"{place.row(i)}: {value!r} is a {type(value).__name__}; ids are text or integers"
            )
    return texts


def _no_number(values: list, column: str, place: Place, exc: Exception) -> SpecError:
    """The refusal of a column of Python values where numbers belong."""
    bad = next((i for i, v in enumerate(values) if v is not None and not _number(v)), None)
    if bad is None:
        return SpecError(f"{place} cannot be read: {first_line(exc)}; {place.rule(column)}")
    value = values[bad]
    what = "text" if isinstance(value, str) else f"a {type(value).__name__}"
    return SpecError(f"{place.row(bad)}: {value!r} is {what}, not a number; {place.rule(column)}")


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, complex)


def _parses(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _first(mask: Any) -> int | None:
    """The 0-based index of the first true value of a boolean array (nulls are false), or None."""
    import pyarrow.compute as pc

    index = pc.index(mask.fill_null(False), True).as_py()
    return None if index < 0 else index


def first_line(exc: BaseException) -> str:
    """An exception's first line (a library's message may run to many), or its class's name."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _target(column: str) -> Any:
    import pyarrow as pa

    return {"qid": pa.string(), "docno": pa.string(), "rel": pa.int64(), "score": pa.float64(),
            "rank": pa.int64(), "subtopic": pa.int64()}[column]  # fmt: skip
