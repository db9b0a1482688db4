"""What a re-run with a history reads: the inputs' digests and the history's rows, and no more.

A qrels file is read (and checked) only when a run evaluated now, a comparison of judgment sets
or trec_eval -c's aggregate needs it, or when no run uses its collection; the gates' previous
values only when a gate compares with them. Whatever is left unread, the tables and the written
files are those of an evaluation that reads everything (`--refresh`), byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import collection_spec

from pipeline.errors import DuplicateError
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

METRICS = ["AP", "nDCG@10", "P@5", "RR", "gmAP", "num_ret", "RelString@5"]
OUTPUTS = ["query.csv", "aggregate.csv", "query.parquet"]


def _spec(tmp_path: Path, settings: dict | None = None) -> dict:
    """Three runs on collection `c`, one on `d` (other qrels), a history, and the outputs."""
    data = generate(21, queries=15, runs=4)
    spec = collection_spec(tmp_path, data, METRICS, history="history.duckdb")
    write_qrels(generate(22, queries=15).qrels, tmp_path / "other.txt")
    spec["collections"]["d"] = {"qrels": "other.txt"}
    spec["runs"]["run3"]["collection"] = "d"
    spec["outputs"] = [
        {"path": "out/query.csv", "level": "query"},
        {"path": "out/aggregate.csv", "level": "aggregate"},
        {"path": "out/query.parquet", "level": "query"},
    ]
    return {**spec, "settings": settings or {}}


def _written(tmp_path: Path) -> dict[str, bytes]:
    return {name: (tmp_path / "out" / name).read_bytes() for name in OUTPUTS}


def _read(evaluation) -> set[str]:
    """The collections whose qrels the evaluation loaded."""
    return {load.name for load in evaluation.sql.qrels.loads}


def _temporary(evaluation) -> set[str]:
    rows = evaluation.con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary")
    return {name for (name,) in rows.fetchall()}


def _same_as_refreshed(path: Path, tmp_path: Path, reused) -> None:
    """The reusing evaluation's tables and files equal those of one that reads everything."""
    written = _written(tmp_path)
    fresh = evaluate(path, refresh=True)
    assert _read(fresh) == {"c", "d"} and fresh.keeper.reused == {}  # every qrels file
    for table in ("per_query", "aggregate"):
        assert reused.rows(table) == fresh.rows(table)
    assert _written(tmp_path) == written


@pytest.mark.parametrize("settings", [{}, {"queries": "intersection"}, {"judged_only": True}])
def test_an_unchanged_rerun_reads_no_input_and_no_previous_value(tmp_path, write_spec, settings):
    path = write_spec(_spec(tmp_path, settings))
    first = evaluate(path)
    assert _read(first) == {"c", "d"}
    again = evaluate(path)
    assert set(again.keeper.reused) == {"run0", "run1", "run2", "run3"}
    assert (again.sql.qrels.loads, again.sql.runs.batches) == ([], [])
    assert not {"previous_aggregate", "previous_per_query"} & _temporary(again)
    _same_as_refreshed(path, tmp_path, again)


@pytest.mark.parametrize(("overlay", "read"), [(False, {"d"}), (True, {"c", "d"})])
def test_only_the_qrels_of_the_runs_evaluated_are_read(tmp_path, write_spec, overlay, read):
    """run3 changes: its collection's qrels are read, and with run3 under an overlay of d and
    c, the qrels of both sets (c's own runs are reused all the same)."""
    spec = _spec(tmp_path)
    if overlay:
        spec["collections"]["o"] = {"qrels": {"overlay": ["d", "c"]}}
        spec["runs"]["run3"]["collection"] = "o"
    path = write_spec(spec)
    evaluate(path)
    assert not _read(evaluate(path))  # the keys under the overlay cover its sets
    write_run(generate(23, queries=15, runs=1).runs["run0"], tmp_path / "run3.txt")
    changed = evaluate(path)
    assert set(changed.keeper.reused) == {"run0", "run1", "run2"}
    assert _read(changed) == read
    _same_as_refreshed(path, tmp_path, changed)


def test_trec_eval_c_reads_the_qrels_its_aggregate_counts(tmp_path, write_spec):
    path = write_spec(_spec(tmp_path, {"missing_queries": "trec_eval_c"}))
    evaluate(path)
    again = evaluate(path)
    assert len(again.keeper.reused) == 4 and _read(again) == {"c", "d"}
    _same_as_refreshed(path, tmp_path, again)


def test_a_collection_no_run_uses_is_still_read_and_checked(tmp_path, write_spec):
    spec = _spec(tmp_path)
    write_qrels(generate(24, queries=5).qrels, tmp_path / "unused.txt")
    spec["collections"]["unused"] = {"qrels": "unused.txt"}
    path = write_spec(spec)
    with pytest.warns(UserWarning):
        evaluate(path)
    with pytest.warns(UserWarning):
        again = evaluate(path)
    assert len(again.keeper.reused) == 4 and _read(again) == {"unused"}
    first = (tmp_path / "unused.txt").read_text().splitlines(keepends=True)[0]
    with (tmp_path / "unused.txt").open("a") as qrels:
        qrels.write(first)  # a judgment twice: the Input rules stop the run
    with pytest.warns(UserWarning), pytest.raises(DuplicateError, match="unused.txt"):
        evaluate(path)


def test_a_gate_against_the_previous_evaluation_reads_its_values(tmp_path, write_spec):
    spec = _spec(tmp_path)
    spec["gates"] = [{"metric": "AP", "against": "previous", "max_drop": 0.01}]
    path = write_spec(spec)
    evaluate(path)
    again = evaluate(path)
    assert {"previous_aggregate", "previous_per_query"} <= _temporary(again)
    assert again.rows("previous_aggregate") and not again.failed
