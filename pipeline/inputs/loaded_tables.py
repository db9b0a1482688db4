"""The tables inputs are loaded into, declared once: their columns and types, the column naming
each input's rows, what a row may not repeat. Every format fills one of them; the engines make
them empty before anything is read (`input_tables`) and read their declarations instead of
naming them (the Spark engine's rows, a Parquet input's columns, the checks of a shard). Pure,
no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.inputs.rules import GRADE_TYPES
from pipeline.sql import Statement

__all__ = [
    "GRADE",
    "INPUT_TABLES",
    "LATENCY",
    "LOADED_TABLES",
    "QRELS",
    "RUNS",
    "RUN_ROWS",
    "RUN_TABLES",
    "SUBTOPIC_QRELS",
    "Column",
    "LoadedTable",
    "input_tables",
]

#: the type of a grade column: INTEGER, or DOUBLE under `grades: real` (`GRADE_TYPES`)
GRADE = "GRADE"


@dataclass(frozen=True)
class Column:
    """A column of a loaded table: its name and DuckDB type (`GRADE`: by the `grades` setting).
    A table input may lack an `optional` column (read as NULL); a `natural` one holds
    non-negative integers."""

    name: str
    type: str
    optional: bool = False
    natural: bool = False
    #: its values may not be negative (a time)
    nonnegative: bool = False
    #: how messages name a value of it ("the score")
    said: str = ""


@dataclass(frozen=True)
class LoadedTable:
    """A table inputs are loaded into: `key` names each input's rows (its collection or run),
    then `columns`, then `ok` (false for a row that breaks a rule). `kind` is what messages call
    its inputs ("qrels" or "run"); `identity` the columns a row may not repeat (none: its rows
    may repeat, as a query timed several times)."""

    name: str
    kind: str
    key: str
    columns: tuple[Column, ...]
    identity: tuple[str, ...] = ("qid", "docno")

    def typed(self, grades: str = "integer") -> dict[str, str]:
        """Each column's DuckDB type, a grade's by the `grades` setting."""
        return {c.name: GRADE_TYPES[grades] if c.type == GRADE else c.type for c in self.columns}

    def natural(self) -> list[str]:
        """The columns that hold non-negative integers (a subtopic)."""
        return [c.name for c in self.columns if c.natural]

    def nonnegative(self) -> list[str]:
        """The columns whose values may not be negative (a time)."""
        return [c.name for c in self.columns if c.nonnegative]

    def said(self, column: str) -> str:
        """How messages name a value of `column` ("the score")."""
        return next(c.said for c in self.columns if c.name == column) or f"the {column}"

    def finite(self, grades: str = "integer") -> list[str]:
        """The columns whose values must be finite numbers: every DOUBLE one (a score, a real
        grade)."""
        return [name for name, kind in self.typed(grades).items() if kind == "DOUBLE"]

    def create(self, grades: str = "integer") -> Statement:
        """The empty table, made before anything is read."""
        columns = "".join(f", {c} {t}" for c, t in self.typed(grades).items())
        # The names are this module's constants, plain identifiers: written as they are.
        return Statement(f"CREATE TABLE {self.name} ({self.key} VARCHAR{columns}, ok BOOLEAN)")


_IDS = (Column("qid", "VARCHAR"), Column("docno", "VARCHAR"))
#: judgments: a document's grade for a query
_GRADE = Column("rel", GRADE, said="the relevance grade")
QRELS = LoadedTable("qrels", "qrels", "collection", (*_IDS, _GRADE))
#: ndeval's judgments per subtopic; `qrels` then holds each document's highest grade
#: (`subtopics.max_grades`), which every measure but the diversity ones reads
SUBTOPIC_QRELS = LoadedTable(
    "subtopic_qrels",
    "qrels",
    "collection",
    (*_IDS, _GRADE, Column("subtopic", "INTEGER", natural=True, said="the subtopic")),
    ("qid", "subtopic", "docno"),
)
#: a batch of runs' rows (made again after each batch is ranked and dropped)
RUNS = LoadedTable(
    "run_rows",
    "run",
    "run",
    (*_IDS, Column("rank", "BIGINT", optional=True), Column("score", "DOUBLE", said="the score")),
)
#: the times a run took to answer its queries, in milliseconds: a query may be timed several
#: times (repetitions: its median counts, `query_latency`), so nothing is a duplicate
LATENCY = LoadedTable(
    "latency", "latency", "run", (Column("qid", "VARCHAR"), Column("ms", "DOUBLE", nonnegative=True, said="the time")),
    (),
)  # fmt: skip
#: every loaded table, by name
LOADED_TABLES = {table.name: table for table in (QRELS, SUBTOPIC_QRELS, RUNS, LATENCY)}

#: the statement making `run_rows`
RUN_ROWS = RUNS.create()
#: each run's latency per query, the median of its timings (`pipeline.plan.latency`)
QUERY_LATENCY = Statement("CREATE TABLE query_latency (run VARCHAR, qid VARCHAR, ms DOUBLE)")
#: the tables the runs are loaded into, made once the qrels are read: the rows of a batch, and
#: the queries each run answers with how many documents each ranks, recorded as the run is loaded
#: (its rows are dropped once ranked)
RUN_TABLES = [
    RUN_ROWS,
    Statement("CREATE TABLE present (run VARCHAR, qid VARCHAR, retrieved BIGINT)"),
    LATENCY.create(),
    QUERY_LATENCY,
]


def input_tables(grades: str = "integer") -> list[Statement]:
    """Every table the inputs are loaded into, the grades typed by `grades`."""
    judged = [t.create(grades) for t in LOADED_TABLES.values() if t.kind == "qrels"]
    return [*judged, *RUN_TABLES]


#: every table the inputs are loaded into, under the default, integer grades
INPUT_TABLES = input_tables()
