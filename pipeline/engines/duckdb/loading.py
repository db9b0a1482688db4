"""Loading and checking inputs on DuckDB: a batch's files and tables in one statement each, then
the file-level checks (bad lines, empty files, duplicates, runs sharing no query with their
qrels or retrieving none of their judged documents), each reported for the first input in spec
order that fails it, in the words of `pipeline.inputs.checks`; then what the inputs' formats run
once loaded. The executor calls these for the qrels and for each batch of runs, and the pools'
own pass over the runs does too."""

from __future__ import annotations

import warnings

import duckdb

from pipeline import interrupts
from pipeline.engines.duckdb.read_errors import reading
from pipeline.engines.duckdb.steps import fetch_all, one, run_all
from pipeline.engines.duckdb.table_loads import insert_tables, report_bad_rows, report_duplicates
from pipeline.errors import DuplicateError, InputDataError, IrpipeWarning
from pipeline.inputs import checks as check
from pipeline.inputs import latency, messages
from pipeline.inputs.format import Load
from pipeline.inputs.formats import after_loading
from pipeline.inputs.table_rows import is_table_input
from pipeline.inputs.text_lines import insert_lines, lenient_lines, problem_lines
from pipeline.plan import unmatched_runs as unmatched
from pipeline.plan.sql_plan import RunsPart

__all__ = [
    "check_duplicates",
    "check_judged",
    "check_lines",
    "check_matches",
    "check_shared_queries",
    "insert_inputs",
    "load_files",
    "load_latency",
    "note_lenient",
]


def load_files(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """One pass over every file at once, reporting a file with bad lines; then the file-level
    checks; then what the files' formats run once they are loaded (`after_loading`: subtopic
    qrels give `qrels` their documents' highest grades). A problem is reported for the first file (in spec order) that has one, as if the
    files had been loaded one by one."""
    insert_inputs(con, loads)
    check_lines(con, loads)
    note_lenient(con, loads)
    check_duplicates(con, loads)
    run_all(con, after_loading(loads))


def check_lines(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """No file holds a bad line (the first few are reported, by line number), nor is empty."""
    counts = {name: (rows, bad) for name, rows, bad in fetch_all(con, check.summary(loads))}
    for load in loads:
        rows, bad = counts.get(load.name, (0, 0))
        if bad and is_table_input(load.path):
            report_bad_rows(con, load, bad)
        if bad:
            raise InputDataError(messages.problems_message(load, _problems(con, load), bad))
        if rows == 0:
            raise InputDataError(messages.empty_message(load))


def note_lenient(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """A warning per file read under `input: lenient` whose lines hold what strict refuses (an
    unknown assignment, read as no support), with how many lines: a score that counts them is
    not the one a strict reading refuses to give."""
    for load in loads:
        if load.format.lenient and not is_table_input(load.path):
            (lines,) = one(con, lenient_lines(load))
            if lines:
                warnings.warn(IrpipeWarning(messages.lenient_message(load, lines)), stacklevel=2)


def check_duplicates(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """No file of a batch holds a (qid, docno) twice; else the first such file in spec order is
    read again, with line numbers, for its report (only a file that truly holds one)."""
    hashes = one(con, check.colliding_hashes(loads))[0]
    if not hashes:
        return
    duplicated = {name for (name,) in fetch_all(con, check.duplicated_files(loads, hashes))}
    for load in loads:
        if load.name in duplicated and is_table_input(load.path):
            report_duplicates(con, load)
        if load.name in duplicated:
            raise DuplicateError(
                messages.duplicates_message(load, fetch_all(con, check.duplicates(load)))
            )


def insert_inputs(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """A batch's table inputs in one statement, then its text files in one per format."""
    tables = [load for load in loads if is_table_input(load.path)]
    if tables:
        _naming_the_input(con, tables, insert_tables)
    texts = [load for load in loads if not is_table_input(load.path)]
    for fmt in dict.fromkeys(load.format for load in texts):
        same = [load for load in texts if load.format == fmt]
        _naming_the_input(con, same, lambda con, loads: run_all(con, [insert_lines(loads)]))


def _naming_the_input(con: duckdb.DuckDBPyConnection, loads: list[Load], insert) -> None:
    """`insert` of all inputs in one statement; if DuckDB cannot read one, each alone names it."""
    try:
        insert(con, loads)
    except duckdb.Error:
        if interrupts.received() is not None:
            raise  # stopped by a signal: no file is to blame, and nothing more is read
        if len(loads) == 1:
            with reading(loads[0]):
                raise
        for load in loads:  # the failed statement inserted nothing
            with reading(load):
                insert(con, [load])
        raise


def _problems(con: duckdb.DuckDBPyConnection, load: Load) -> list[tuple]:
    """The first bad lines of a file: (line number, line, problem)."""
    with reading(load):
        return fetch_all(con, problem_lines(load))


def check_shared_queries(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """Each run shares a query with each collection it is evaluated under (in spec order)."""
    shared = {(run, c): n for run, c, n in fetch_all(con, check.shared_counts(loads))}
    for load in loads:
        for collection in load.collections:
            if not shared.get((load.name, collection)):
                row = one(con, check.shared_queries(load, collection))
                raise InputDataError(messages.no_shared_queries_message(load, collection, row))


def check_matches(con: duckdb.DuckDBPyConnection, runs: RunsPart, batch: list[Load]) -> None:
    """Each run retrieves a document its qrels judge, unless the spec allows it not to."""
    loads = {load.name: load for load in batch if load.name not in runs.fusion_only}
    if runs.unmatched_runs_fail and loads:
        found = fetch_all(con, unmatched.unmatched_runs(list(loads.values())))
        if found:
            run, collection, _, qid = row = found[0]
            docnos, judged = one(con, unmatched.examples(run, collection, qid))
            raise InputDataError(unmatched.unmatched_message(loads[run], row, docnos, judged))


def check_judged(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """Each run whose format wants every row judged (an answer's assignments) names only the
    documents (nuggets) its collections judge: the first one that does not is named."""
    statement = check.unjudged_rows(loads)
    found = fetch_all(con, statement) if statement else []
    if found:
        run, collection, qid, docno = found[0]
        load = next(load for load in loads if load.name == run)
        raise InputDataError(messages.unjudged_message(load, collection, qid, docno))


def load_latency(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """The latency inputs of a batch of runs (recorded in `present`): loaded and checked line by
    line as any input, each timing only its run's queries (the first that does not is named by
    its line); then what their format runs once loaded: each query's median time, which the
    measures read."""
    if not loads:
        return
    insert_inputs(con, loads)
    check_lines(con, loads)
    note_lenient(con, loads)
    for run, qid in fetch_all(con, latency.unanswered(loads)):
        load = next(load for load in loads if load.name == run)
        found = None if is_table_input(load.path) else one(con, latency.unanswered_line(load, qid))
        raise InputDataError(latency.unanswered_message(load, qid, found))
    run_all(con, after_loading(loads))
