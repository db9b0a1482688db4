"""Expected values and regression gates end to end: `irpipe run` (pipeline.cli.main) on a generated
collection, the real DuckDB tables, exit 5 after every output is written, the failed checks on
stderr, and the history's previous values as the TEMP tables it leaves on the connection."""

from __future__ import annotations

import importlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import irpipe_inprocess
from scipy import stats
from statsmodels.stats.multitest import multipletests

from pipeline.checks import run_checks
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

METRICS = ["AP", "nDCG@10", "Fallout@10", "NumRet"]
RUNS = ("run0", "run1", "run2")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """qrels and three runs that get better with their number (run0 is much worse than run2,
    run1 a little: with seed 7 the t test finds the first gap significant and not the second)."""
    d = tmp_path_factory.mktemp("data")
    generated = generate(7, queries=30, runs=3, float32_ties=False, skill=(0.0, 2.5, 3.0))
    write_qrels(generated.qrels, d / "qrels.txt")
    for name, run in generated.runs.items():
        write_run(run, d / f"{name}.trec", tag=name)
    return d


def spec_file(directory: Path, data: Path, **sections) -> Path:
    """A spec in `directory` over the generated data, with the given sections."""
    spec = {
        "collections": {"c": {"qrels": str(data / "qrels.txt"), "num_docs": 10000}},
        "runs": {name: {"path": str(data / f"{name}.trec"), "collection": "c"} for name in RUNS},
        "metrics": METRICS,
        "outputs": [{"path": "out/summary.csv"}],
        **sections,
    }
    path = directory / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def values(data, tmp_path_factory) -> dict[tuple[str, str], float]:
    """The aggregate of every (run, metric), as computed without checks."""
    evaluation = evaluate(spec_file(tmp_path_factory.mktemp("plain"), data), write=False)
    return {(run, metric): value for run, _, metric, value, _ in evaluation.aggregate()}


def expect(run: str, metric: str, value: float, **more) -> dict:
    return {"run": run, "metric": metric, "value": value, **more}


# --- expected values ---


@pytest.mark.parametrize(("offset", "code"), [(0.001 - 1e-7, 0), (0.001 + 1e-7, 5)])
def test_a_value_just_inside_its_tolerance_passes_and_just_outside_fails(
    tmp_path, data, values, offset, code
):
    pinned = values["run1", "AP"] + offset  # the run is worse than expected by `offset`
    spec = spec_file(tmp_path, data, expect=[expect("run1", "AP", pinned, tolerance=0.001)])
    assert irpipe_inprocess("run", "--quiet", spec)[0] == code


def test_the_default_tolerance_is_half_a_unit_of_the_fourth_decimal(tmp_path, data, values):
    v = values["run2", "AP"]
    inside = spec_file(tmp_path, data, expect=[expect("run2", "AP", v + 0.0000499)])
    assert irpipe_inprocess("run", "--quiet", inside)[0] == 0
    outside = spec_file(tmp_path, data, expect=[expect("run2", "AP", v + 0.0000501)])
    assert irpipe_inprocess("run", "--quiet", outside)[0] == 5


@pytest.mark.parametrize(("two_sided", "code"), [(False, 0), (True, 5)])
def test_better_than_expected_passes_unless_two_sided(tmp_path, data, values, two_sided, code):
    pinned = values["run2", "nDCG@10"] - 0.01  # the run does better than pinned
    entry = expect("run2", "nDCG@10", pinned, tolerance=0.001, two_sided=two_sided)
    assert irpipe_inprocess("run", "--quiet", spec_file(tmp_path, data, expect=[entry]))[0] == code


@pytest.mark.parametrize(("offset", "code"), [(0.00001, 0), (-0.00001, 5)])
def test_lower_is_better_metric_is_worse_when_it_rises(tmp_path, data, values, offset, code):
    # Fallout: a value below the pinned one is better (passes), above it worse (fails).
    pinned = values["run0", "Fallout@10"] + offset
    entry = expect("run0", "Fallout@10", pinned, tolerance=0.000001)
    assert irpipe_inprocess("run", "--quiet", spec_file(tmp_path, data, expect=[entry]))[0] == code


def test_a_count_has_no_better_side_and_is_checked_both_ways(tmp_path, data, values):
    entry = expect("run1", "NumRet", values["run1", "NumRet"] - 1, tolerance=0.5)
    code, _, err = irpipe_inprocess("run", "--quiet", spec_file(tmp_path, data, expect=[entry]))
    assert code == 5 and "+/- 0.5" in err


def test_a_failure_exits_5_after_every_output_and_names_run_metric_and_values(
    tmp_path, data, values
):
    entries = [expect("run0", "AP", 0.5), expect("run1", "AP", values["run1", "AP"])]
    code, out, err = irpipe_inprocess("run", spec_file(tmp_path, data, expect=entries))
    assert code == 5
    assert (tmp_path / "out/summary.csv").is_file()  # written, and named in the summary
    assert "out/summary.csv" in out and "collection c, 30 queries" in out
    lines = err.splitlines()
    assert lines[0] == "Checks: 1 of 2 checks failed, 1 passed"
    assert lines[1].split() == ["check", "run", "metric", "against", "expected/previous", "new",
                                "difference", "allowed"]  # fmt: skip
    new = values["run0", "AP"]
    assert lines[3].split() == ["expect.0", "run0", "AP", "expected", "0.500000", f"{new:.6f}",
                                f"{new - 0.5:+.6f}", "worse", "by", "<=", "5e-05"]  # fmt: skip
    assert len(lines) == 4 and "Traceback" not in err


def test_all_passed_is_one_line_and_quiet_says_nothing(tmp_path, data, values):
    spec = spec_file(tmp_path, data, expect=[expect("run1", "AP", values["run1", "AP"])])
    code, out, err = irpipe_inprocess("run", spec)
    assert code == 0 and out.splitlines()[-1] == "Checks: 1 passed" and err == ""
    assert irpipe_inprocess("run", "--quiet", spec) == (0, "", "")


# --- gates against another run ---


@pytest.mark.parametrize(("slack", "code"), [(1e-6, 0), (-1e-6, 5)])
def test_a_gate_against_a_run_allows_max_drop(tmp_path, data, values, slack, code):
    drop = values["run2", "nDCG@10"] - values["run1", "nDCG@10"]
    gate = {
        "metric": "nDCG@10",
        "against": {"run": "run2"},
        "run": "run1",
        "max_drop": drop + slack,
    }
    assert irpipe_inprocess("run", "--quiet", spec_file(tmp_path, data, gates=[gate]))[0] == code


def test_a_gate_on_a_lower_is_better_metric_drops_when_it_rises(tmp_path, data, values):
    # run1 has the lowest Fallout: against it, run0 (+1.0e-5) stays within 2e-5 and run2
    # (+3.7e-5) does not; read as higher-is-better, both would have improved.
    fallout = {run: values[run, "Fallout@10"] for run in RUNS}
    assert fallout["run0"] - fallout["run1"] < 2e-5 < fallout["run2"] - fallout["run1"]
    gate = {"metric": "Fallout@10", "against": {"run": "run1"}, "max_drop": 2e-5}
    junit = tmp_path / "checks.xml"
    code, _, err = irpipe_inprocess("run", "--quiet", "--junit", junit, spec_file(tmp_path, data, gates=[gate]))  # fmt: skip
    assert code == 5
    assert [line.split()[:2] for line in err.splitlines()[3:]] == [["gates.0", "run2"]]
    assert "gates.0 run0 Fallout@10" in junit.read_text()  # the other run of the collection


def test_a_significant_gate_fails_only_where_the_comparison_is_significant(tmp_path, data, values):
    compare = {"baseline": "run2", "tests": ["t", "randomization"], "samples": 2000}
    gate = {"metric": "AP", "against": {"run": "run2"}, "significant": True}
    spec = spec_file(tmp_path, data, compare=compare, gates=[gate])
    evaluation = evaluate(spec)
    results = {
        r.run: r for r in run_checks(evaluation.con, evaluation.loaded, evaluation.plan.checks)
    }
    rows = evaluation.con.execute(
        "SELECT run, significant, p_adjusted FROM comparison WHERE metric = 'AP' AND test = 't'"
    ).fetchall()
    assert {run for run, *_ in rows} == {"run0", "run1"}
    for run, significant, p in rows:  # both runs are worse than run2: only significance decides
        assert values[run, "AP"] < values["run2", "AP"]
        assert (results[run].status, results[run].p_value) == ("failed" if significant else "passed", p)  # fmt: skip
    assert {r.status for r in results.values()} == {"passed", "failed"}  # the data tells them apart
    without = spec_file(tmp_path, data, compare=compare, gates=[{**gate, "significant": False}])
    assert irpipe_inprocess("run", "--quiet", without)[2].count("gates.0 ") == 2  # both drops fail


# --- gates against the previous evaluation (the history's TEMP tables) ---


def with_previous(con, aggregate: str, per_query: str | None = None):
    """Leave previous_aggregate and previous_per_query on the evaluation's connection, made by the
    SQL given (over its own tables), as the history does before checks run."""
    per_query = per_query or "SELECT run, collection, qid, metric, value, 41 FROM per_query"
    con.execute(f"CREATE OR REPLACE TEMP TABLE previous_aggregate AS {aggregate}")
    con.execute(f"CREATE OR REPLACE TEMP TABLE previous_per_query AS {per_query}")
    return con


def remember(monkeypatch, aggregate: str, per_query: str | None = None) -> None:
    """Every evaluation's checks (its stage `check`) read the previous tables that
    `with_previous` makes, as if a history had kept them."""
    module = importlib.import_module("pipeline.checks")  # the check stage imports it then
    real = module.run_checks
    monkeypatch.setattr(
        module,
        "run_checks",
        lambda con, *args: real(with_previous(con, aggregate, per_query), *args),
    )


def checked(spec: Path, aggregate: str, per_query: str | None = None):
    """The evaluation of `spec` with those previous tables, and its checks' results."""
    evaluation = evaluate(spec)
    with_previous(evaluation.con, aggregate, per_query)
    return evaluation, run_checks(evaluation.con, evaluation.loaded, evaluation.plan.checks)


PREVIOUS = "SELECT run, collection, metric, value + {shift} AS value, 41::BIGINT AS evaluation_id FROM aggregate"  # fmt: skip


@pytest.mark.parametrize(("max_drop", "code"), [(0.01 + 1e-9, 0), (0.01 - 1e-9, 5)])
def test_a_gate_against_previous_reads_the_history(tmp_path, data, monkeypatch, max_drop, code):
    remember(monkeypatch, PREVIOUS.format(shift=0.01))  # every value was 0.01 higher before
    gate = {"metric": "AP", "against": "previous", "run": "run1", "max_drop": max_drop}
    result, _, err = irpipe_inprocess("run", "--quiet", spec_file(tmp_path, data, gates=[gate]))
    assert result == code
    if code:
        assert err.splitlines()[3].split()[:4] == ["gates.0", "run1", "AP", "evaluation"]


def test_without_history_a_previous_gate_is_skipped_with_a_warning(tmp_path, data):
    gate = {"metric": "nDCG@10", "max_drop": 0.005, "against": "previous"}
    junit = tmp_path / "checks.xml"
    code, out, err = irpipe_inprocess("run", "--quiet", "--junit", junit, spec_file(tmp_path, data, gates=[gate]))  # fmt: skip
    assert (code, out) == (0, "")
    assert re.fullmatch(
        rf"Warning: {tmp_path}/spec\.yaml:\d+: gates\.0: no previous evaluation of runs 'run0', "
        r"'run1', 'run2' \(nDCG@10\) in the history \(none is kept: give the spec a history, or "
        r"run with --history PATH\); the gate is skipped\n",
        err,
    )
    assert junit.read_text().count("<skipped ") == 3


def test_a_run_new_since_the_previous_evaluation_is_skipped_and_the_others_checked(
    tmp_path, data, monkeypatch
):
    remember(monkeypatch, PREVIOUS.format(shift=1.0) + " WHERE run <> 'run2'")
    gate = {"metric": "AP", "against": "previous"}
    code, _, err = irpipe_inprocess("run", "--quiet", spec_file(tmp_path, data, gates=[gate]))
    assert code == 5
    assert "gates.0: no previous evaluation of run 'run2' (AP) in the history; the gate" in err
    assert "Checks: 2 of 3 checks failed, 1 skipped" in err


def test_a_significant_gate_against_previous_is_the_paired_test_of_the_two_evaluations(
    tmp_path, data, monkeypatch
):
    # Before: run0 higher on every query by 0.02 to 0.06 (a clear drop now); run1 higher by
    # 0.004 on average, up and down by 0.1 (a drop, but not a significant one).
    shift = ("CASE run WHEN 'run0' THEN 0.02 + 0.01 * (q % 5) "
             "ELSE 0.004 + CASE WHEN q % 2 = 0 THEN 0.1 ELSE -0.1 END END")  # fmt: skip
    ranked = "SELECT *, dense_rank() OVER (ORDER BY qid) AS q FROM per_query WHERE metric = 'AP'"
    per_query = f"SELECT run, collection, qid, metric, value + {shift} AS value, 41 FROM ({ranked})"
    aggregate = ("SELECT run, collection, metric, avg(value) AS value, 41::BIGINT AS evaluation_id "
                 f"FROM ({per_query}) GROUP BY ALL")  # fmt: skip
    remember(monkeypatch, aggregate, per_query)
    gate = {"metric": "AP", "against": "previous", "significant": True}
    gates = [{**gate, "run": "run0"}, {**gate, "run": "run1"}, {**gate, "run": "run1", "significant": False}]  # fmt: skip
    spec = spec_file(tmp_path, data, gates=gates)
    code, _, err = irpipe_inprocess("run", "--quiet", spec)
    assert code == 5
    failed = [line.split()[:2] for line in err.splitlines()[3:]]
    assert failed == [["gates.0", "run0"], ["gates.2", "run1"]]  # gates.1: a drop, not significant
    evaluation, results = checked(spec, aggregate, per_query)
    for result in results[:2]:  # one run per gate: no correction
        now, before = paired(evaluation.con, result.run)
        assert result.p_value == pytest.approx(stats.ttest_rel(now, before).pvalue, abs=1e-12)


def test_a_gates_runs_are_one_family_for_the_correction(tmp_path, data):
    # a pattern of differences per run, each scaled otherwise: three different p-values
    scale = "CASE run WHEN 'run0' THEN 0.01 WHEN 'run1' THEN 0.02 ELSE 0.03 END"
    shift = f"0.01 + {scale} * ((dense_rank() OVER (PARTITION BY run ORDER BY qid)) % 3)"
    per_query = f"SELECT run, collection, qid, metric, value + {shift} AS value, 41 FROM per_query"
    gate = {"metric": "nDCG@10", "against": "previous", "significant": True}
    spec = spec_file(tmp_path, data, gates=[gate], compare={"tests": ["t"], "correction": "bh"})
    evaluation, results = checked(spec, PREVIOUS.format(shift=0.01), per_query)
    raw = [stats.ttest_rel(*paired(evaluation.con, r.run, "nDCG@10")).pvalue for r in results]
    adjusted = multipletests(raw, method="fdr_bh")[1]
    assert [r.p_value for r in results] == pytest.approx(list(adjusted), abs=1e-12)
    assert len({round(p, 12) for p in raw}) == 3  # three tests, not one repeated


def paired(con, run: str, metric: str = "AP") -> tuple[np.ndarray, np.ndarray]:
    """A run's values now and in previous_per_query, on the queries both have, by query id."""
    rows = con.execute(
        "SELECT n.value, b.value FROM per_query n JOIN previous_per_query b USING (run, qid, metric) "
        "WHERE run = ? AND metric = ? ORDER BY qid",
        [run, metric],
    ).fetchall()
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])


def test_gates_against_previous_with_the_real_history(tmp_path, data, values):
    # The runs are copied, so that one can get worse between two nights.
    for name in ("qrels.txt", *(f"{run}.trec" for run in RUNS)):
        shutil.copy(data / name, tmp_path / name)
    gates = [
        {"metric": "AP", "against": "previous", "max_drop": 0.001},
        {"metric": "nDCG@10", "against": "previous", "run": "run2", "significant": True},
    ]
    spec = spec_file(tmp_path, tmp_path, gates=gates, history={"path": "history.duckdb"})
    first = irpipe_inprocess("run", "--quiet", spec)
    assert first[0] == 0 and "gates.0: no previous evaluation of runs 'run0', 'run1', 'run2' (AP) in the history; the gate is skipped" in first[2]  # fmt: skip
    second = irpipe_inprocess("run", spec)
    assert second[0] == 0 and second[1].splitlines()[-1] == "Checks: 4 passed"
    shutil.copy(tmp_path / "run0.trec", tmp_path / "run2.trec")  # run2 is now as bad as run0
    third = irpipe_inprocess("run", "--quiet", spec)
    assert third[0] == 5
    rows = [line.split() for line in third[2].splitlines()[3:]]
    assert [row[:4] for row in rows] == [["gates.0", "run2", "AP", "evaluation"],
                                         ["gates.1", "run2", "nDCG@10", "evaluation"]]  # fmt: skip
    assert [row[4:7] for row in rows] == [
        ["2", f"{values['run2', metric]:.6f}", f"{values['run0', metric]:.6f}"]
        for metric in ("AP", "nDCG@10")
    ]
