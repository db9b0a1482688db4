"""The history: every evaluation recorded, and unchanged runs' results reused, never stale.

Real DuckDB history files, real spec files, generated collections with every hard case.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import collection_spec, evaluate_with_plugin, install_scaled_plugin

from pipeline.run.evaluation import evaluate
from pipeline.spec import Settings
from pipeline.synthetic import generate, write_run

METRICS = ["AP", "nDCG@10", "P@5", "RR", "gmAP", "num_ret", "RelString@5"]


@pytest.fixture
def collection(tmp_path: Path, write_spec):
    """A spec over a generated collection with three runs, and its history's path."""
    data = generate(11, queries=15, runs=3)
    spec = collection_spec(tmp_path, data, METRICS, history="history.duckdb")
    return spec, tmp_path / "history.duckdb"


def _tables(evaluation) -> dict[str, list[tuple]]:
    con = evaluation.con
    return {
        "per_query": con.execute("SELECT * FROM per_query").fetchall(),
        "aggregate": con.execute("SELECT * FROM aggregate").fetchall(),
    }


def _same(a: dict, b: dict) -> None:
    """Equal tables, NaN equal to NaN (DuckDB returns it for a NaN value)."""
    assert json.dumps(a, default=str) == json.dumps(b, default=str)


def test_an_unchanged_spec_reuses_every_run_with_the_same_tables(collection, write_spec):
    spec, history = collection
    path = write_spec(spec)
    first = evaluate(path, write=False)
    second = evaluate(path, write=False)
    assert first.keeper.reused == {}
    assert set(second.keeper.reused) == set(spec["runs"])
    assert second.sql.runs.batches == []  # no run file is read
    _same(_tables(first), _tables(second))
    with duckdb.connect(str(history), read_only=True) as con:
        assert con.execute("SELECT id FROM evaluations ORDER BY id").fetchall() == [(1,), (2,)]
        per_query = "SELECT run, collection, qid, metric, value, text FROM per_query"
        recorded = [
            con.execute(f"{per_query} WHERE evaluation_id = {i}").fetchall() for i in (1, 2)
        ]
    assert sorted(recorded[0]) == sorted(recorded[1])
    table = first.con.execute("SELECT * FROM per_query").fetchall()
    assert json.dumps(sorted(recorded[0])) == json.dumps(sorted(table))


@pytest.mark.parametrize(
    "settings",
    [{}, {"queries": "intersection"}, {"missing_queries": "trec_eval_c"}, {"judged_only": True}],
)
def test_reused_results_equal_a_fresh_evaluation_with_curves_and_a_new_run(
    collection, write_spec, tmp_path, settings
):
    spec, _ = collection
    spec = {**spec, "settings": settings}
    spec["outputs"] = [{"path": "out/curve.csv", "level": "pr_curve"}]
    path = write_spec(spec)
    evaluate(path)
    extra = generate(12, queries=15, runs=1).runs
    write_run(next(iter(extra.values())), tmp_path / "new.txt")
    spec["runs"] = {"new": {"path": "new.txt", "collection": "c"}, **spec["runs"]}
    path = write_spec(spec)
    reused = evaluate(path)
    assert set(reused.keeper.reused) == set(spec["runs"]) - {"new"}
    curve = (tmp_path / "out" / "curve.csv").read_text()
    fresh = evaluate(path, refresh=True)
    assert fresh.keeper.reused == {}
    _same(_tables(reused), _tables(fresh))
    assert (tmp_path / "out" / "curve.csv").read_text() == curve


def test_a_changed_run_file_recomputes_that_run_only(collection, write_spec, tmp_path):
    spec, history = collection
    path = write_spec(spec)
    evaluate(path, write=False)
    changed = tmp_path / "run1.txt"
    lines = changed.read_text().splitlines(keepends=True)
    changed.write_text("".join(lines[1:]))
    second = evaluate(path, write=False)
    assert set(second.keeper.reused) == {"run0", "run2"}
    fresh = evaluate(path, write=False, refresh=True)
    _same(_tables(second), _tables(fresh))
    with duckdb.connect(str(history), read_only=True) as con:
        flags = con.execute(
            "SELECT run, cached FROM evaluation_runs WHERE evaluation_id = 2 ORDER BY ordinal"
        ).fetchall()
    assert flags == [("run0", True), ("run1", False), ("run2", True)]


def _change_qrels(tmp_path: Path, spec: dict) -> dict:
    qrels = tmp_path / "qrels.txt"
    text = qrels.read_text()
    if "never_retrieved" not in text:  # the same change when made twice
        qrels.write_text(text + "1 0 never_retrieved 1\n")
    return spec


def _change_setting(tmp_path: Path, spec: dict) -> dict:
    return {**spec, "settings": {"relevance_level": 2}}


def _read_grades_as_real(tmp_path: Path, spec: dict) -> dict:
    return {**spec, "settings": {"grades": "real"}}


def _allow_unmatched_runs(tmp_path: Path, spec: dict) -> dict:
    return {**spec, "settings": {"unmatched_runs": "allow"}}


def _change_parameter(tmp_path: Path, spec: dict) -> dict:
    return {**spec, "metrics": [*METRICS[:1], "nDCG@20", *METRICS[2:]]}


def _add_metric(tmp_path: Path, spec: dict) -> dict:
    return {**spec, "metrics": [*METRICS, "R@100"]}


def _change_collection(tmp_path: Path, spec: dict) -> dict:
    return {**spec, "collections": {"c": {"qrels": "qrels.txt", "num_docs": 5000}}}


def _change_irpipe(monkeypatch) -> None:
    monkeypatch.setattr("pipeline.run.provenance.__version__", "999.0")


def _change_duckdb(monkeypatch) -> None:
    from pipeline.run import provenance

    real = provenance._installed_version
    monkeypatch.setattr(
        provenance, "_installed_version", lambda d: "0.0.1" if d == "duckdb" else real(d)
    )


def _change_python(monkeypatch) -> None:
    monkeypatch.setattr("pipeline.run.provenance.platform.python_version", lambda: "3.99.0")


@pytest.mark.parametrize(
    "change",
    [_change_qrels, _change_setting, _read_grades_as_real, _allow_unmatched_runs,
     _change_parameter, _add_metric, _change_collection],
)  # fmt: skip
def test_each_ingredient_of_the_spec_recomputes_every_run(collection, write_spec, tmp_path, change):
    spec, _ = collection
    evaluate(write_spec(spec), write=False)
    changed = evaluate(write_spec(change(tmp_path, spec)), write=False)
    assert changed.keeper.reused == {}
    again = evaluate(write_spec(change(tmp_path, spec)), write=False)
    assert set(again.keeper.reused) == set(spec["runs"])


@pytest.mark.parametrize(("setting", "default"), [("grades", "integer"), ("unmatched_runs", "error")])  # fmt: skip
def test_a_newer_setting_at_its_default_reuses_what_was_computed_before_it(
    collection, write_spec, monkeypatch, setting, default
):
    """A history made before `grades` (or `unmatched_runs`) existed, its settings without it,
    is reused under the setting's default: the key holds the setting only away from it."""
    spec, _ = collection
    resolved = Settings.resolved
    with monkeypatch.context() as before:
        before.setattr(Settings, "resolved", lambda self: {k: v for k, v in resolved(self).items() if k != setting})  # fmt: skip
        evaluate(write_spec(spec), write=False)
    named = evaluate(write_spec({**spec, "settings": {setting: default}}), write=False)
    assert set(named.keeper.reused) == set(spec["runs"])


@pytest.mark.parametrize("change", [_change_irpipe, _change_duckdb, _change_python])
def test_each_version_recomputes_every_run(collection, write_spec, monkeypatch, change):
    spec, _ = collection
    path = write_spec(spec)
    evaluate(path, write=False)
    change(monkeypatch)
    assert evaluate(path, write=False).keeper.reused == {}


def test_renaming_or_moving_a_run_file_reuses_it(collection, write_spec, tmp_path):
    spec, _ = collection
    evaluate(write_spec(spec), write=False)
    (tmp_path / "run2.txt").rename(tmp_path / "moved.txt")
    runs = dict(spec["runs"])
    runs["renamed"] = {"path": "moved.txt", "collection": "c"}
    del runs["run2"]
    moved = evaluate(write_spec({**spec, "runs": runs}), write=False)
    assert set(moved.keeper.reused) == {"run0", "run1", "renamed"}
    names = {row[0] for row in moved.con.execute("SELECT run FROM per_query").fetchall()}
    assert names == {"run0", "run1", "renamed"}


def test_a_plugin_edited_in_place_or_upgraded_recomputes(collection, write_spec, tmp_path):
    """The plugin's source is part of the key, so is its version: neither can go stale."""
    spec, _ = collection
    path = write_spec({**spec, "metrics": ["Scaled", "AP"]})
    root = tmp_path / "site"
    install_scaled_plugin(root, "1.0", "2.0")
    assert evaluate_with_plugin(root, path) == "0"
    assert evaluate_with_plugin(root, path) == "3"
    install_scaled_plugin(root, "1.0", "3.0")  # the same version, edited in place
    assert evaluate_with_plugin(root, path) == "0"
    assert evaluate_with_plugin(root, path) == "3"
    install_scaled_plugin(root, "1.1", "3.0")  # the same source, another version
    assert evaluate_with_plugin(root, path) == "0"


def test_the_manifest_and_the_history_hold_the_same_record(collection, write_spec, tmp_path):
    spec, history = collection
    spec["outputs"] = [{"path": "out/summary.csv", "level": "aggregate"}]
    evaluate(write_spec(spec))
    manifest = json.loads((tmp_path / "out" / "summary.csv.manifest.json").read_text())
    with duckdb.connect(str(history), read_only=True) as con:
        (provenance,) = con.execute("SELECT provenance FROM evaluations").fetchone()
        inputs = con.execute("SELECT role, name, size, digest FROM inputs").fetchall()
    recorded = json.loads(provenance)
    assert {k: v for k, v in manifest.items() if k != "table"} == recorded
    assert recorded["evaluation_id"] == 1 and recorded["history"] == str(history)
    assert recorded["versions"]["duckdb"] == duckdb.__version__
    from pipeline.digest import digest_file

    digest = digest_file(tmp_path / "run0.txt")
    assert ("run", "run0", (tmp_path / "run0.txt").stat().st_size, digest) in inputs


def test_previous_values_are_the_latest_earlier_evaluation_of_the_spec(
    collection, write_spec, tmp_path
):
    spec, history = collection
    spec = {**spec, "gates": [{"metric": "AP", "against": "previous", "max_drop": 1}]}
    path = write_spec(spec)  # the gate reads the previous values
    first = evaluate(path, write=False)
    other = write_spec(spec, name="other.yaml")  # another spec in the same history
    evaluate(other, write=False, refresh=True)
    second = evaluate(path, write=False)
    rows = second.con.execute(
        "SELECT run, metric, value, evaluation_id FROM previous_aggregate ORDER BY ALL"
    ).fetchall()
    expected = first.con.execute(
        "SELECT run, metric, value, 1 FROM aggregate ORDER BY ALL"
    ).fetchall()
    assert rows == expected
    per_query = second.con.execute(
        "SELECT run, qid, metric, value FROM previous_per_query ORDER BY ALL"
    ).fetchall()
    numbers = first.con.execute(
        "SELECT p.run, p.qid, p.metric, p.value FROM per_query p JOIN metrics m USING (metric) "
        "WHERE m.aggregator <> 'none' ORDER BY ALL"
    ).fetchall()
    assert json.dumps(per_query) == json.dumps(numbers)


def test_the_canonical_digest_ignores_layout_and_the_spec_directory(
    collection, write_spec, tmp_path
):
    from pipeline.run.provenance import canonical_digest
    from pipeline.spec import load_spec

    spec, _ = collection
    first = canonical_digest(load_spec(write_spec(spec)))
    reordered = dict(reversed(list(spec.items())))
    text = "# nightly\n" + yaml.safe_dump(reordered, sort_keys=True, indent=4)
    (tmp_path / "again.yaml").write_text(text)
    assert canonical_digest(load_spec(tmp_path / "again.yaml")) == first
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    for file in tmp_path.glob("*.txt"):
        (moved / file.name).write_bytes(file.read_bytes())
    (moved / "spec.yaml").write_text(text)
    assert canonical_digest(load_spec(moved / "spec.yaml")) == first
    changed = {**spec, "metrics": [*METRICS, "R@10"]}
    assert canonical_digest(load_spec(write_spec(changed))) != first


def test_the_history_and_its_directories_are_made_when_missing(collection, write_spec, tmp_path):
    spec, _ = collection
    evaluation = evaluate(write_spec({**spec, "history": "results/nightly/history.duckdb"}))
    assert evaluation.keeper.evaluation == 1
    assert (tmp_path / "results" / "nightly" / "history.duckdb").is_file()
