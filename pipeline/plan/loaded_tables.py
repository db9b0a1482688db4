"""The tables the inputs are loaded into, made empty before anything is read: the qrels' and the
subtopic qrels' (their grades typed by the `grades` setting: `number_fields.GRADE_TYPES`), and
the runs'. Pure, no I/O; the readers (`inputs`, `qrels_formats`, `table_inputs`) fill them."""

from __future__ import annotations

from pipeline.plan.number_fields import GRADE_TYPES
from pipeline.plan.statement import Statement

__all__ = [
    "INPUT_TABLES",
    "RUN_ROWS",
    "RUN_TABLES",
    "input_tables",
    "qrels_table",
    "subtopic_qrels_table",
]

#: the table a batch of runs is loaded into (made again after each batch is ranked and dropped)
RUN_ROWS = Statement(
    "CREATE TABLE run_rows (run VARCHAR, qid VARCHAR, docno VARCHAR, rank BIGINT, "
    "score DOUBLE, ok BOOLEAN)"
)


def qrels_table(grades: str = "integer") -> Statement:
    """The table the qrels are loaded into, made before anything is read: `rel` typed by the
    `grades` setting."""
    return Statement(
        "CREATE TABLE qrels (collection VARCHAR, qid VARCHAR, docno VARCHAR, "
        f"rel {GRADE_TYPES[grades]}, ok BOOLEAN)"
    )


def subtopic_qrels_table(grades: str = "integer") -> Statement:
    """The table subtopic qrels (ndeval's: qid subtopic docno grade) are loaded into, `rel`
    typed as the qrels' is; `qrels` then holds each document's highest grade
    (`pipeline.plan.qrels_formats.max_grades`)."""
    return Statement(
        "CREATE TABLE subtopic_qrels (collection VARCHAR, qid VARCHAR, docno VARCHAR, "
        f"rel {GRADE_TYPES[grades]}, subtopic INTEGER, ok BOOLEAN)"
    )


#: the tables the runs are loaded into, made once the qrels are read: the rows of a batch, and
#: the queries each run answers with how many documents each ranks, recorded as the run is loaded
#: (its rows are dropped once ranked)
RUN_TABLES = [
    RUN_ROWS,
    Statement("CREATE TABLE present (run VARCHAR, qid VARCHAR, retrieved BIGINT)"),
]


def input_tables(grades: str = "integer") -> list[Statement]:
    """Every table the inputs are loaded into, the grades typed by `grades`."""
    return [qrels_table(grades), subtopic_qrels_table(grades), *RUN_TABLES]


#: every table the inputs are loaded into, under the default, integer grades
INPUT_TABLES = input_tables()
