"""The SQL plan as text (`irpipe compile`): every statement in the order an engine runs it, its
parameters shown in comments, and each step that depends on the data (which ranking a batch
takes, the slices a large batch is ranked in) shown with the SQL that decides it. Pure, no I/O."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.inputs.format import Load
from pipeline.inputs.formats import after_loading
from pipeline.inputs.table_rows import insert_rows, is_table_input, table_columns
from pipeline.inputs.text_lines import insert_lines
from pipeline.plan.slices import (
    ONE_COLLECTION,
    PUT_BACK,
    PUT_BACK_RUNS,
    SET_ASIDE,
    SET_ASIDE_RUNS,
    SLICE_ROWS,
    slice_rows,
)
from pipeline.sql import Statement

if TYPE_CHECKING:
    from pipeline.plan.sql_plan import Ranking, SqlPlan

__all__ = ["plan_text"]


def plan_text(plan: SqlPlan) -> str:
    """The whole plan as SQL text, parameters shown in comments."""
    qrels, runs, results = plan.qrels, plan.runs, plan.results
    parts = [_show(s) for s in qrels.input_tables]
    parts += [_show_load([load]) for load in qrels.loads]
    parts += [_show(s) for s in after_loading(qrels.loads)]
    parts += [_show(s) for s in plan.setup]
    for batch in runs.batches:
        parts += [_show_load(batch), *(_show(s) for s in runs.fusing(batch))]
        parts += [_show(s) for s in runs.per_batch]
        parts += _show_ranking(runs.ranking, batch)
    parts += [_show(s) for s in (*results.finish, *results.outputs)]
    return "\n\n".join(parts) + "\n"


def _show_ranking(ranking: Ranking, batch: list[Load]) -> list[str]:
    collections = ranking.collections(batch)
    if not collections:
        return [*_show_rows(ranking, batch), *(_show(s) for s in ranking.after)]
    each = [_show(Statement(ONE_COLLECTION, [c])) for c in collections]
    return [
        "-- a run is evaluated under several collections: the batch is ranked under one at a "
        f"time ({', '.join(collections)}), `runs` holding that collection's rows:\n"
        + _show(Statement(SET_ASIDE_RUNS)),
        "-- for each collection, then the ranking below:\n" + "\n".join(each),
        *_show_rows(ranking, batch),
        _show(Statement(PUT_BACK_RUNS)),
        *(_show(s) for s in ranking.after),
    ]


def _show_rows(ranking: Ranking, batch: list[Load]) -> list[str]:
    parts = [_show(ranking.statement)]
    test = ranking.test(batch)
    if test is not None and ranking.dense is not None:
        parts = [f"-- if this is false:\n{_show(test)}", *parts]
        parts.append(f"-- else, the batch's queries being mostly judged:\n{_show(ranking.dense)}")
    if ranking.full or ranking.dense is not None:
        parts.append(_show_slices(ranking, batch))
    return parts


def _show_slices(ranking: Ranking, batch: list[Load]) -> str:
    """How the full plan ranks a batch of more than SLICE_ROWS rows: in slices of queries."""
    first, last = (
        Statement(slice_rows(False), ["<first qid>", "<next slice's first qid>"]),
        Statement(slice_rows(True), ["<last slice's first qid>"]),
    )
    steps = [Statement(SET_ASIDE), first, last, Statement(PUT_BACK)]
    shown = "\n".join(_show(step) for step in [ranking.slices(batch), *steps])
    return (
        f"-- the full plan ranks a batch of more than {SLICE_ROWS} rows in slices of whole "
        "queries: the first qid of each slice, the rows set aside, then for each slice a view of its rows "
        "as run_rows and the ranking above, then the rows put back:\n" + shown
    )


def _show_load(loads: list[Load]) -> str:
    tables = [load for load in loads if is_table_input(load.path)]
    texts = [load for load in loads if not is_table_input(load.path)]
    shown = []
    if tables:  # every column shown; a run without a rank column reads NULL for it
        columns = [set(table_columns(load)) for load in tables]
        shown.append(f"-- the table inputs:\n{_show(insert_rows(tables, columns))}")
    if texts:
        shown.append(_show(insert_lines(texts)))
    return "\n\n".join(shown)


def _show(statement: Statement) -> str:
    sql = "\n".join(line.rstrip() for line in statement.sql.strip("\n").splitlines())
    params = f"-- parameters: {statement.params!r}\n" if statement.params else ""
    return f"{params}{sql};"
