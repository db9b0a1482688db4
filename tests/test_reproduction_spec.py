"""The `reproduction:` section: its errors (each naming its key), both doors giving the same
table, and the rankings it compares read whatever the history holds and before trec_eval -c's
rankings of missing queries are added. The values themselves are checked against repro_eval in
tests/test_reproduction.py."""

from __future__ import annotations

import json
import re

import pytest
from conftest import irpipe_inprocess, yaml_file

from pipeline.errors import SpecError
from pipeline.notebook import evaluate as evaluate_python
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run
from pipeline.synthetic_reproduction import reproduce

ENTRY = {"original": ["b", "a"], "reproduced": ["b_rep", "a_rep"]}


@pytest.fixture
def files(tmp_path):
    """qrels.txt, other.txt, and runs b, a (judged by qrels.txt), their reproductions b_rep,
    a_rep, and the same files again as other runs o_b, o_a (judged by other.txt)."""
    data = generate(3, queries=10, runs=2, float32_ties=False, skill=(2.0, 4.0))
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    write_qrels(generate(4, queries=8).qrels, tmp_path / "other.txt")
    for i, (name, run) in enumerate(zip("ba", data.runs.values(), strict=True)):
        write_run(run, tmp_path / f"{name}.trec", tag=name)
        write_run(reproduce(run, i, lost_topics=0.2), tmp_path / f"{name}_rep.trec")
    return tmp_path


def _spec(**more) -> dict:
    runs = {
        name: {"path": f"{name}.trec", "collection": "c"} for name in ("b", "a", "b_rep", "a_rep")
    }
    runs |= {f"o_{n}": {"path": f"{n}.trec", "collection": "o"} for n in "ba"}
    spec = {"collections": {"c": {"qrels": "qrels.txt"}, "o": {"qrels": "other.txt"}},
            "runs": runs, "metrics": ["AP", "nDCG@10"], "reproduction": [ENTRY]}  # fmt: skip
    return spec | more


ERRORS = [
    ({"reproduction": [{**ENTRY, "reproduced": ["b_rep", "a_rp"]}]},
     r"reproduction\.0\.reproduced\.1: unknown run 'a_rp'; did you mean 'a_rep'\?"),
    ({"reproduction": [{**ENTRY, "reproduced": ["b_rep"]}]},
     r"reproduced: 1 run\(s\) for 2 original run\(s\); give one reproduction for each"),
    ({"reproduction": [{**ENTRY, "original": ["b", "b"]}]}, r"original: a run is listed twice"),
    ({"reproduction": [{**ENTRY, "reproduced": ["b", "a_rep"]}]},
     r"reproduction\.0\.reproduced\.0: 'b' is the original run itself"),
    ({"reproduction": [{**ENTRY, "reproduced": ["o_b", "a_rep"]}]},
     r"reproduction\.0: say which collection the runs o_b, a_rep are compared under "
     r"\(reproduced_collection: NAME\): no collection has them all"),
    ({"reproduction": [{**ENTRY, "collection": "o"}]},
     r"reproduction\.0\.collection: run 'b' is not evaluated under 'o'"),
    ({"reproduction": [{**ENTRY, "collection": "x"}]},
     r"reproduction\.0\.collection: unknown collection 'x'"),
    ({"reproduction": [{**ENTRY, "rbo_p": 1}]}, r"rbo_p"),
    ({"metrics": ["num_ret"]}, r"reproduction: no metric of the spec is a mean over queries"),
    ({"reproduction": [], "outputs": [{"path": "r.csv", "level": "reproduction"}]},
     r"outputs\.0\.level: level reproduction needs a reproduction entry"),
    ({"settings": {"engine": "spark"}},
     r"reproduction: reproductions are measured on the duckdb engine"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "message"), ERRORS)
def test_a_wrong_entry_is_a_spec_error_naming_its_key(files, change, message):
    spec = yaml_file(files / "spec.yaml", _spec(**change))
    done = irpipe_inprocess("validate", spec, cwd=files)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert re.search(message, done.stderr), done.stderr


def test_compile_shows_each_entry_and_the_stage(files):
    done = irpipe_inprocess("compile", yaml_file(files / "spec.yaml", _spec()), cwd=files)
    assert done.returncode == 0, done.stderr
    assert '-- reproduction {"collection": "c", "depth": 1000, "entry": 0' in done.stdout
    assert "reproduce: measure how far the reproductions reproduce the original runs" in done.stdout


def test_every_output_s_manifest_names_the_entries_and_the_variants(files, write_spec):
    outputs = [{"path": "out/r.csv", "level": "reproduction"}]
    evaluate(write_spec(_spec(outputs=outputs)))
    manifest = json.loads((files / "out" / "r.csv.manifest.json").read_text())
    recorded = manifest["reproduction"]
    assert recorded["entries"][0]["original"] == ["b", "a"] and recorded["metrics"] == [
        "AP",
        "nDCG@10",
    ]
    assert recorded["rbo"].startswith("repro_eval 0.5.0's (Clarke et al.'s Compatibility code)")
    assert recorded["ktu"].startswith("repro_eval 0.5.0's: Kendall's tau between the documents")


def _rows(table) -> list[tuple]:
    return [tuple(None if v != v else v for v in row) for row in table.itertuples(index=False)]


def test_both_doors_give_the_same_table(files, monkeypatch):
    """The spec, and the same runs given to the Python door by keyword."""
    spec = evaluate_python(yaml_file(files / "spec.yaml", _spec()))
    monkeypatch.chdir(files)
    runs = {
        name: {"run": f"{name}.trec", "collection": "c"} for name in ("b", "a", "b_rep", "a_rep")
    }
    keywords = evaluate_python(qrels={"c": "qrels.txt"}, runs=runs, metrics=["AP", "nDCG@10"],
                               reproduction=[ENTRY])  # fmt: skip
    assert _rows(keywords.reproduction()) == _rows(spec.reproduction())
    assert {r[7] for r in _rows(spec.reproduction())} == {"ktu", "rbo", "rmse", "nrmse",
                                                         "p_value", "er", "delta_ri"}  # fmt: skip
    with pytest.raises(SpecError, match=r"reproduction\(\): no reproductions were measured"):
        evaluate_python(qrels={"c": "qrels.txt"}, runs=runs, metrics=["AP"]).reproduction()


def test_a_run_reproduced_exactly(files, write_spec):
    """A reproduction that is the original file: τ Union 1 on every topic, RMSE 0, p = 1, ER 1,
    and RBO 1 where the rankings are as deep as `depth` (not a rounding above)."""
    spec = _spec(reproduction=[{"original": ["b", "a"], "reproduced": ["o_b", "o_a"],
                                "reproduced_collection": "c", "depth": 20}])  # fmt: skip
    spec["runs"]["o_b"]["collection"] = spec["runs"]["o_a"]["collection"] = ["c", "o"]
    rows = evaluate(write_spec(spec), write=False).rows("reproduction")
    values = {}
    for row in rows:
        values.setdefault(row[7], set()).add(row[10])
    assert rows[0][1] == "reproducibility"
    assert values["ktu"] == {1.0} and values["rmse"] == {0.0} and values["nrmse"] == {0.0}
    assert values["p_value"] == {1.0} and values["er"] == {1.0} and values["delta_ri"] == {0.0}
    deep = {q for q, n in _lengths(files, "b").items() if n >= 20}
    rbo = {row[9]: row[10] for row in rows if row[3] == "b" and row[7] == "rbo"}
    assert deep and {rbo[q] for q in deep} == {1.0} and max(rbo.values()) == 1.0


def _lengths(files, name: str) -> dict[str, int]:
    """Each topic's number of documents in a run file."""
    found: dict[str, int] = {}
    for line in (files / f"{name}.trec").read_text().splitlines():
        found[line.split()[0]] = found.get(line.split()[0], 0) + 1
    return found


def _topics(evaluation, measure: str = "ktu") -> dict[str, set[str]]:
    """Each original run's topics with a row of `measure`."""
    found: dict[str, set[str]] = {}
    for row in evaluation.rows("reproduction"):
        if row[7] == measure and row[9] is not None:
            found.setdefault(row[3], set()).add(row[9])
    return found


def _answered(files, name: str) -> set[str]:
    return {line.split()[0] for line in (files / f"{name}.trec").read_text().splitlines()}


def test_the_rankings_are_compared_as_the_files_hold_them(files, write_spec):
    """Under trec_eval -c (a one-document ranking added for each qrels query a run lacks), the
    topics compared are still those both files rank."""
    spec = _spec(settings={"missing_queries": "trec_eval_c"})
    topics = _topics(evaluate(write_spec(spec), write=False))
    for name in "ba":
        assert topics[name] == _answered(files, name) & _answered(files, f"{name}_rep")


def test_the_rankings_are_read_whatever_the_history_holds(files, write_spec):
    """The second evaluation reuses every run's values from the history, and still reads the
    rankings it compares."""
    spec = write_spec(_spec(history={"path": "history.duckdb"}))
    first = evaluate(spec, write=False)
    second = evaluate(spec, write=False)
    assert second.keeper.reused
    assert _topics(second) == _topics(first) != {}
    assert second.rows("reproduction") == first.rows("reproduction")
