"""The evaluation plan: every part built once by validation, read by each step, shown whole by
`irpipe compile`; and the engines behind one protocol, told trec_eval -c's mode by the plan."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from conftest import irpipe_inprocess

import pipeline.checks.plan
import pipeline.compare.plan
import pipeline.pools
import pipeline.run.preflight
from pipeline import validate
from pipeline.engines import ENGINES, engine_named
from pipeline.run.evaluation import evaluate

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.fixture
def everything(tmp_path: Path) -> Path:
    """The quickstart's data with comparisons, checks, a pool, outputs and a history."""
    shutil.copytree(CONFIGS / "data", tmp_path / "data")
    spec = yaml.safe_load((CONFIGS / "compare.yaml").read_text())
    spec["outputs"] = [{"path": "out/summary.csv", "level": "aggregate"}]
    spec["expect"] = [{"run": "bm25", "metric": "AP", "value": 0.2179}]
    spec["gates"] = [{"metric": "nDCG@10", "max_drop": 0.005, "against": "previous"}]
    spec["pools"] = {"round1": {"collection": "sample", "runs": ["dense"], "method": {"depth": 5}, "outputs": [
        {"path": "out/pool.txt", "level": "pool"}]}}  # fmt: skip
    spec["history"] = "out/history.duckdb"
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _counting(monkeypatch, calls: list, module, name: str) -> None:
    """Count the calls of `module.name` into `calls`."""
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


def test_each_part_of_an_evaluation_is_built_once(everything, monkeypatch):
    calls: list[str] = []
    _counting(monkeypatch, calls, pipeline.compare.plan, "compare_plan")
    _counting(monkeypatch, calls, pipeline.checks.plan, "resolve_checks")
    _counting(monkeypatch, calls, pipeline.pools, "pool_plans")
    _counting(monkeypatch, calls, pipeline.run.preflight, "compile_plan")
    for _ in range(2):  # the second takes results from the history: nothing is compiled again
        calls.clear()
        evaluation = evaluate(everything)
        assert sorted(calls) == ["compare_plan", "compile_plan", "pool_plans", "resolve_checks"]
    # The pooled run is read again (the pool needs its rows); the other's values are the history's.
    assert evaluation.sql.runs.cached == {"bm25"}
    assert [load.name for load in evaluation.sql.runs.loads] == ["dense"]


def test_the_plan_holds_every_part(everything):
    plan = validate(everything)
    assert plan.comparing.baseline == "bm25" and plan.comparing.tests == ("t", "randomization")
    assert [e.run for e in plan.checks.expect] == ["bm25"]
    assert [g.against for g in plan.checks.gates] == [None]
    assert [p.name for p in plan.pools] == ["round1"]
    assert [(job.table, job.level) for job in plan.outputs] == [
        ("aggregate", "aggregate"),
        ("pool_0", "pool"),
    ]
    assert plan.history.path == everything.parent / "out" / "history.duckdb"
    assert plan.metrics == plan.sql.results.metrics and plan.engine == "duckdb"


def test_compile_prints_the_sql_then_every_other_part(everything):
    done = irpipe_inprocess("compile", everything)
    assert done.returncode == 0, done.stderr
    shown = done.stdout
    sql, parts = shown.split("\n-- the evaluation's other parts:\n")
    assert sql == validate(everything, data=False).sql.sql_text()
    lines = parts.splitlines()
    assert lines[0] == "-- engine: duckdb"
    assert lines[1].startswith('-- compare: {"alpha": 0.05, "baseline": "bm25"')
    assert lines[2] == "-- expect.0: bm25 AP = 0.2179 ± 5e-05"
    assert lines[3] == (
        "-- gates.0: nDCG@10 of bm25, dense drops at most 0.005 against the previous evaluation"
    )
    assert lines[4].startswith('-- pool {"collection": "sample", "exclude": null')
    assert lines[5].endswith("out/summary.csv (aggregate) <- table aggregate")
    assert lines[6].endswith("out/pool.txt (pool) <- table pool_0")
    assert lines[7].endswith("out/history.duckdb")


def test_compile_prints_each_tunings_sql_then_the_evaluations(write_spec, tmp_path):
    """The trials that choose a tuned run's weights are part of the plan, shown where they run:
    before the evaluation's SQL."""
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n2 0 b 1\n")
    for name in ("x", "y"):
        (tmp_path / f"{name}.txt").write_text("1 Q0 a 1 1.0 r\n2 Q0 b 1 1.0 r\n")
    runs = {name: {"path": f"{name}.txt", "collection": "c"} for name in ("x", "y")}
    tune = {"metric": "AP", "grid": 0.5, "folds": 2, "seed": 3}
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "metrics": ["AP"],
            "runs": {**runs, "t": {"fuse": ["x", "y"], "method": "wsum", "tune": tune}}}  # fmt: skip
    path = write_spec(spec)
    done = irpipe_inprocess("compile", path)
    assert done.returncode == 0, done.stderr
    shown = done.stdout
    plan = validate(path, data=False)
    (tuning,) = plan.tunings
    tuned, rest = shown.split(
        "-- then the evaluation, each tuned run fused by the weights chosen:\n"
    )
    assert tuned == tuning.text()
    about, sql = tuned.split("\nCREATE TABLE qrels", 1)
    assert " ".join(line.removeprefix("-- ") for line in about.splitlines()) == (
        "first, the weights of fused run 't' (runs.t.tune): each of the 3 weightings of x, y on a "
        "grid of 0.5 is a run of its own ('t weighting 0' to 't weighting 2'), evaluated by AP "
        "alone; each of 2 folds of the queries (seed 3) is fused by the weighting best on the "
        "other folds:"
    )
    assert f"CREATE TABLE qrels{sql}" == tuning.sql.sql_text() + "\n"
    assert rest.split("\n-- the evaluation's other parts:\n")[0] == plan.sql.sql_text()


@pytest.mark.parametrize(
    ("settings", "stated"),
    [
        ({}, False),
        ({"missing_queries": "trec_eval_c"}, True),
        ({"missing_queries": "trec_eval_c", "queries": "intersection"}, False),
    ],
)
def test_the_plan_states_trec_eval_c_mode(write_spec, tmp_path, settings, stated):
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n2 0 b 1\n")
    (tmp_path / "run.txt").write_text("1 Q0 a 1 1.0 r\n")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["AP"],
        "settings": settings,
    }
    plan = validate(write_spec(spec)).sql
    assert plan.runs.missing_rankings is stated
    assert bool(plan.runs.per_batch) is stated  # the DuckDB engine's own form of the mode


def test_every_engine_is_an_engine():
    for name in ENGINES:
        engine = engine_named(name)
        assert isinstance(engine.reuses_results, bool)
        assert all(callable(getattr(engine, m)) for m in ("connect", "describe", "execute"))
    assert engine_named("duckdb").reuses_results and not engine_named("spark").reuses_results
