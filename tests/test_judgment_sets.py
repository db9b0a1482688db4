"""Judgment sets: a run evaluated under several collections, and collections built from others.

A run under [human, llm, filled] gives, under each, exactly the rows (the same bytes in the
written tables) of a spec evaluating it under that one collection alone, for every built-in
measure under every setting that changes what a query's values are; its file is read once. An
overlay (`qrels: {overlay: [...]}`) gives exactly the values of the qrels file merged by hand
(hypothesis, label sets with holes on both sides). The history, the Python door, comparisons and
checks key a run by (run, collection). Bad specs: tests/test_bad_inputs.py (judgment sets).
"""

from __future__ import annotations

import ast
import csv
import io
import json
import random
from pathlib import Path
from xml.etree import ElementTree

import duckdb
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import SpecError
from pipeline import evaluate as evaluate_door
from pipeline.cli import main
from pipeline.engines.duckdb import loading
from pipeline.errors import IrpipeWarning
from pipeline.measures.registry import get_registry
from pipeline.outputs.plots import _DIFF, diff_figure
from pipeline.run.evaluation import evaluate
from pipeline.run.preflight import compile_spec
from pipeline.synthetic import generate, write_qrels, write_run

SETS = ["human", "llm", "filled"]
SETTINGS = [
    {},
    {"queries": "intersection"},
    {"missing_queries": "trec_eval_c"},
    {"judged_only": True, "max_docs": 15},
    {"compatibility": "trec_eval-9", "relevance_level": 2},
    {"ordering": "rank", "input": "lenient"},
]


def every_measure() -> list[str]:
    """Every built-in measure of rankings over ordinary qrels, once, by its canonical form
    (Fallout needs a cutoff); the diversity measures read subtopic qrels (tests/test_diversity.py),
    the nugget measures generated answers (tests/test_nuggets.py), Latency and QPS runs' times
    (tests/test_latency.py)."""
    registry, found = get_registry(), {}
    for name in registry.names():
        try:
            resolved = registry.resolve(name)
        except SpecError:
            resolved = registry.resolve(f"{name}@10")
        ordinary = [
            m for m in resolved
            if type(m.measure).__module__ != "pipeline.metrics.diversity"
            and m.measure.reads == "rankings"
            and "latency" not in m.needs_kinds
        ]  # fmt: skip
        found.update(dict.fromkeys(m.canonical for m in ordinary))
    return list(found)


def write_sets(directory: Path, seed: int, runs: int = 3) -> None:
    """Two judgment sets of partly the same queries (each has queries the other lacks, and
    documents the other does not judge), `filled.txt` the second's labels with its holes filled
    by the first's (by hand), and runs that miss queries, answer unjudged ones and retrieve
    unjudged documents."""
    human = generate(seed, queries=16, runs=runs, extremes=True)
    llm = generate(seed + 1000, queries=12).qrels
    write_qrels(human.qrels, directory / "human.txt")
    write_qrels(llm, directory / "llm.txt")
    write_qrels(_merged(llm, human.qrels), directory / "filled.txt")
    for name, run in human.runs.items():
        write_run(run, directory / f"{name}.txt")


def judgment_spec(runs: int, collection, metrics: list, **more) -> dict:
    """Runs run0... evaluated under `collection` (a name or a list); the collections human, llm,
    and filled (llm's labels, its holes filled by human's): those the runs need."""
    collections = {
        "human": {"qrels": "human.txt", "num_docs": 5000},
        "llm": {"qrels": "llm.txt", "num_docs": 5000},
        "filled": {"qrels": {"overlay": ["llm", "human"]}, "num_docs": 5000},
    }
    needed = SETS if "filled" in collection else collection
    return {
        "collections": {name: c for name, c in collections.items() if name in needed},
        "runs": {f"run{i}": {"path": f"run{i}.txt", "collection": collection} for i in range(runs)},
        "metrics": metrics,
        **more,
    }


def written(path: Path, spec: dict) -> Path:
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _tables(directory: Path, name: str, spec: dict) -> dict[str, list[str]]:
    """The query and aggregate tables `spec` writes, as CSV lines."""
    spec["outputs"] = [
        {"path": f"{name}/query.csv", "level": "query"},
        {"path": f"{name}/aggregate.csv"},
    ]
    evaluate(written(directory / f"{name}.yaml", spec))
    return {
        level: (directory / name / f"{level}.csv").read_text(encoding="utf-8").splitlines()
        for level in ("query", "aggregate")
    }


def _under(lines: list[str], collection: str) -> list[str]:
    """The header, and the rows of `collection` (column 2 of both tables), as written."""
    rows = [next(csv.reader(io.StringIO(line))) for line in lines]
    assert rows[0][:2] == ["run", "collection"]
    return [
        line for line, row in zip(lines, rows, strict=True) if row[1] in (collection, "collection")
    ]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: ",".join(s) or "defaults")
def test_a_run_under_several_sets_has_each_sets_rows_as_it_alone_gives_them(tmp_path, setting):
    write_sets(tmp_path, seed=len(str(setting)))
    metrics = every_measure()
    both = _tables(tmp_path, "all", judgment_spec(3, SETS, metrics, settings=setting))
    for collection in SETS:
        alone = _tables(
            tmp_path, collection, judgment_spec(3, collection, metrics, settings=setting)
        )
        for level, lines in alone.items():
            assert len(lines) > 1
            assert _under(both[level], collection) == lines, (collection, level)
    rows = list(csv.reader(both["aggregate"][1:]))
    pairs = list(dict.fromkeys((row[0], row[1]) for row in rows))
    # runs in spec order, each run's collections in its list's order
    assert pairs == [(f"run{i}", c) for i in range(3) for c in SETS]


def test_a_run_file_is_read_once_whatever_its_collections(tmp_path, capsys, monkeypatch):
    write_sets(tmp_path, seed=5)
    path = written(tmp_path / "spec.yaml", judgment_spec(3, SETS, ["AP", "nDCG@10"]))
    loads = compile_spec(path).sql.runs.loads
    assert [(load.path.name, load.collections) for load in loads] == [
        (f"run{i}.txt", tuple(SETS)) for i in range(3)
    ]
    assert main(["compile", str(path)]) == 0
    shown = capsys.readouterr().out
    fast = next(part for part in shown.split(";\n\n") if 'INSERT INTO "run_rows"' in part)
    files = [p for line in fast.splitlines() if line.startswith("-- parameters:")
             for p in ast.literal_eval(line.removeprefix("-- parameters:"))[1]]  # fmt: skip
    assert sorted(Path(f).name for f in files) == ["run0.txt", "run1.txt", "run2.txt"]
    read = []  # what the engine reads when it evaluates

    def reading(loads):
        read.extend(load.path.name for load in loads)
        return inserting(loads)

    inserting = loading.insert_lines
    monkeypatch.setattr(loading, "insert_lines", reading)
    evaluate(path, write=False)
    assert sorted(read) == ["human.txt", "llm.txt", "run0.txt", "run1.txt", "run2.txt"]


def _merged(first: dict, second: dict) -> dict:
    """An overlay by hand: each query's `first` labels, its holes filled by `second`'s."""
    merged = {q: dict(docs) for q, docs in second.items()}
    for qid, docs in first.items():
        merged.setdefault(qid, {}).update(docs)
    return merged


QIDS = [str(q) for q in range(1, 7)]
DOCS = [f"d{d}" for d in range(30)]
# A set judges two queries or more (every run shares one with it) and holds every grade.
labels = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1, 0, 0, 1, 2, 3]), min_size=1),
    min_size=2,
)


def _runs(seed: int) -> dict[str, dict[str, dict[str, float]]]:
    """Two runs over QIDS (run0 misses the last, and answers one of its own) retrieving judged
    and unjudged documents (d30...), with ties."""
    rng = random.Random(seed)
    ranked = {}
    for name, qids in (("run0", [*QIDS[:-1], "99"]), ("run1", QIDS)):
        docs = [f"d{d}" for d in range(40)]
        ranked[name] = {q: {d: round(rng.uniform(0, 5), 1) for d in rng.sample(docs, 15)}
                        for q in qids}  # fmt: skip
    return ranked


OVERLAY_METRICS = ["AP", "nDCG@10", "P@5", "R@10", "RR", "Rprec", "Bpref", "infAP", "NumRel",
                   "NumRelRet", "Unjudged@10", "RelString", "Fallout@10", "gmAP"]  # fmt: skip


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(a=labels, b=labels, c=labels, seed=st.integers(0, 1000))
def test_an_overlay_gives_the_values_of_its_sets_merged_by_hand(tmp_path_factory, a, b, c, seed):
    directory = tmp_path_factory.mktemp("overlay")
    for name, qrels in {"a": a, "b": b, "c": c, "ab": _merged(a, b)}.items():
        write_qrels(qrels, directory / f"{name}.txt")
    write_qrels(_merged(c, _merged(a, b)), directory / "cab.txt")
    runs = _runs(seed)
    for name, run in runs.items():
        write_run(run, directory / f"{name}.txt")
    overlays = {"o": {"overlay": ["a", "b"]}, "oo": {"overlay": ["c", "o"]}}
    files = {n: {"qrels": f"{n}.txt", "num_docs": 100} for n in ("a", "b", "c", "ab", "cab")}
    spec = {
        "collections": {**files, **{n: {"qrels": q, "num_docs": 100} for n, q in overlays.items()}},
        "runs": {n: {"path": f"{n}.txt", "collection": ["o", "ab", "oo", "cab"]} for n in runs},
        "metrics": OVERLAY_METRICS,
        # Random labels may judge none of a run's documents: its values (zeros) are compared too.
        "settings": {"missing_queries": "trec_eval_c", "unmatched_runs": "allow"},
    }
    rows = evaluate(written(directory / "spec.yaml", spec), write=False).per_query()
    by = {name: [(r, q, m, v) for r, c, q, m, v in rows if c == name] for name in files | overlays}
    assert by["o"] == by["ab"] and by["o"]
    assert by["oo"] == by["cab"]


def test_an_overlay_is_recorded_by_its_definition_and_its_sets_digests(tmp_path):
    write_sets(tmp_path, seed=8, runs=2)
    spec = judgment_spec(2, SETS, ["AP"], outputs=[{"path": "out/a.csv"}])
    evaluate(written(tmp_path / "spec.yaml", spec))
    recorded = json.loads((tmp_path / "out" / "a.csv.manifest.json").read_text())
    qrels = {i["name"]: i for i in recorded["inputs"] if i["role"] == "qrels"}
    assert list(qrels) == SETS
    assert qrels["filled"]["path"] == 'overlay {"overlay": ["llm", "human"]}'
    before = qrels["filled"]["digest"]
    write_qrels(generate(99, queries=12).qrels, tmp_path / "llm.txt")  # a set changes
    evaluate(tmp_path / "spec.yaml")
    recorded = json.loads((tmp_path / "out" / "a.csv.manifest.json").read_text())
    after = {i["name"]: i["digest"] for i in recorded["inputs"]}
    assert after["filled"] != before and after["human"] == qrels["human"]["digest"]


def test_the_history_keys_a_run_by_its_collections(tmp_path):
    write_sets(tmp_path, seed=11)
    spec = judgment_spec(3, SETS, ["AP", "P@10"], history={"path": "h.duckdb"})
    spec["runs"]["run2"]["collection"] = "human"
    path = written(tmp_path / "spec.yaml", spec)
    first = evaluate(path, write=False)
    assert first.keeper.reused == {}
    table = first.con.execute("SELECT * FROM per_query").fetchall()
    second = evaluate(path, write=False)
    assert {run: set(sets) for run, sets in second.keeper.reused.items()} == {
        "run0": set(SETS), "run1": set(SETS), "run2": {"human"}
    }  # fmt: skip
    assert "all 3 runs unchanged" in second.history_note()
    assert second.sql.qrels.loads == []  # the keys cover both sets, and the overlay of them
    assert second.con.execute("SELECT * FROM per_query").fetchall() == table
    # llm's labels change, and so the overlay's: runs under them are evaluated again, under all
    # their collections; run2, under human alone, is reused
    write_qrels(generate(77, queries=12).qrels, tmp_path / "llm.txt")
    third = evaluate(path, write=False)
    assert set(third.keeper.reused) == {"run2"}
    assert [load.name for load in third.sql.qrels.loads] == ["human", "llm"]  # the overlay's sets
    human = "SELECT * FROM per_query WHERE collection = 'human'"
    assert third.con.execute(human).fetchall() == first.con.execute(human).fetchall()
    fresh = evaluate(path, write=False, refresh=True)
    assert fresh.con.execute("SELECT * FROM per_query").fetchall() == (
        third.con.execute("SELECT * FROM per_query").fetchall()
    )
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        kept = con.execute(
            "SELECT run, collection, cached FROM evaluation_runs WHERE evaluation_id = 3 "
            "ORDER BY ordinal"
        ).fetchall()
    assert kept == [(f"run{i}", c, False) for i in range(2) for c in SETS] + [
        ("run2", "human", True)
    ]


def test_the_python_door_evaluates_each_run_under_each_set(tmp_path):
    import pandas as pd

    write_sets(tmp_path, seed=13, runs=2)
    path = written(tmp_path / "spec.yaml", judgment_spec(2, ["human", "llm"], ["AP", "nDCG@10"]))
    expected = evaluate(path, write=False).aggregate()
    rows = [line.split() for line in (tmp_path / "llm.txt").read_text().splitlines()]
    llm = pd.DataFrame(
        [(q, d, int(g)) for q, _, d, g in rows], columns=["query_id", "doc_id", "relevance"]
    )
    filled = {"overlay": ["llm", "human"]}
    got = evaluate_door(
        qrels={"human": str(tmp_path / "human.txt"), "llm": llm, "filled": filled},
        runs={"run0": str(tmp_path / "run0.txt"), "run1": str(tmp_path / "run1.txt")},
        metrics=["AP", "nDCG@10"],
    )
    rows = got.aggregate(to="rows")
    assert [row for row in rows if row[1] != "filled"] == expected
    overlaid = judgment_spec(2, "filled", ["AP", "nDCG@10"])
    assert [row for row in rows if row[1] == "filled"] == evaluate(
        written(tmp_path / "filled.yaml", overlaid), write=False
    ).aggregate()
    again = evaluate(got.to_spec(tmp_path / "experiment"), write=False)  # the llm frame: Parquet
    assert again.aggregate() == rows
    with pytest.warns(IrpipeWarning, match="no run is evaluated against collection 'human'"):
        one = evaluate_door(
            qrels={"human": str(tmp_path / "human.txt"), "llm": llm},
            runs={"run0": {"run": str(tmp_path / "run0.txt"), "collection": "llm"}},
            metrics=["AP"],
        )
    assert [row[:2] for row in one.aggregate(to="rows")] == [("run0", "llm")]


def test_comparisons_stay_within_each_collection(tmp_path):
    write_sets(tmp_path, seed=17)
    compare = {"tests": ["t", "randomization"], "samples": 2000}
    spec = judgment_spec(3, ["human", "llm"], ["AP", "P@10"], compare=compare)
    spec["runs"]["run2"]["collection"] = "human"
    both = evaluate(written(tmp_path / "both.yaml", spec), write=False)
    rows = both.con.execute("SELECT * FROM comparison").fetchall()
    pairs = list(dict.fromkeys((c, r, b) for c, r, b, *_ in rows))
    assert pairs == [("human", "run1", "run0"), ("human", "run2", "run0"),
                     ("human", "run2", "run1"), ("llm", "run1", "run0")]  # fmt: skip
    for collection in ("human", "llm"):
        alone = judgment_spec(3, collection, ["AP", "P@10"], compare=compare)
        if collection == "llm":
            del alone["runs"]["run2"]
        got = evaluate(written(tmp_path / f"{collection}.yaml", alone), write=False).con
        mine = [row for row in rows if row[0] == collection]
        theirs = got.execute("SELECT * FROM comparison").fetchall()
        # the same tests, differences and p-values; adjusted p-values are corrected over every
        # comparison of a metric and a test in the spec (a family), here of both collections
        assert [r[:12] + r[14:] for r in mine] == [r[:12] + r[14:] for r in theirs]
    diff = {"path": "diff.svg", "level": "diff_plot", "metric": "AP", "baseline": "run0"}
    spec["outputs"] = [diff]
    con = evaluate(written(tmp_path / "both.yaml", spec), write=False).con
    rows = con.execute(f"SELECT {_DIFF} FROM diff_plot_0").fetchall()
    titles = [ax.get_title() for ax in diff_figure(rows).axes]
    assert titles == ["run1 (human) vs run0", "run1 (llm) vs run0", "run2 (human) vs run0"]
    baseline = {**compare, "baseline": "run1"}
    spec["compare"] = baseline
    rows = evaluate(written(tmp_path / "b.yaml", spec), write=False).con.execute(
        "SELECT DISTINCT collection, run, baseline FROM comparison ORDER BY ALL"
    )
    assert rows.fetchall() == [("human", "run0", "run1"), ("human", "run2", "run1"),
                               ("llm", "run0", "run1")]  # fmt: skip


def test_a_collection_with_one_run_is_not_compared_under_it(tmp_path):
    write_sets(tmp_path, seed=41, runs=2)
    spec = judgment_spec(2, "human", ["AP"], compare={"tests": ["t"]})
    spec["collections"]["llm"] = {"qrels": "llm.txt"}
    spec["runs"]["run0"]["collection"] = ["human", "llm"]
    with pytest.warns(IrpipeWarning, match=r"compare: collection 'llm' has one run \('run0'\)"):
        con = evaluate(written(tmp_path / "spec.yaml", spec), write=False).con
    found = con.execute("SELECT DISTINCT collection, run, baseline FROM comparison").fetchall()
    assert found == [("human", "run1", "run0")]
    spec["runs"]["run0"]["collection"] = "human"  # no collection has two runs: nothing to compare
    spec["runs"]["run1"]["collection"] = "llm"
    with pytest.raises(SpecError, match=r"compare: collection 'human' has one run \('run0'\)"):
        evaluate(written(tmp_path / "spec.yaml", spec), write=False)


def test_checks_name_the_collection_of_a_run_under_several(tmp_path):
    write_sets(tmp_path, seed=19, runs=2)
    spec = judgment_spec(2, ["human", "llm"], ["AP"], history={"path": "h.duckdb"})
    path = written(tmp_path / "spec.yaml", spec)
    values = {(r, c): v for r, c, _, v, _ in evaluate(path, write=False).aggregate()}
    spec["expect"] = [
        {"run": "run0", "collection": "llm", "metric": "AP", "value": values["run0", "llm"]}
    ]
    spec["gates"] = [
        {"metric": "AP", "against": "previous"},
        {"metric": "AP", "against": {"run": "run0"}, "max_drop": 1},
        {"metric": "AP", "against": "previous", "collection": "human"},
    ]
    evaluation = evaluate(written(tmp_path / "spec.yaml", spec), write=False)
    found = [(r.key, r.run, r.collection, r.status, r.reference) for r in evaluation.checks]
    assert found == [
        ("expect.0", "run0", "llm", "passed", values["run0", "llm"]),
        ("gates.0", "run0", "human", "passed", values["run0", "human"]),
        ("gates.0", "run0", "llm", "passed", values["run0", "llm"]),
        ("gates.0", "run1", "human", "passed", values["run1", "human"]),
        ("gates.0", "run1", "llm", "passed", values["run1", "llm"]),
        ("gates.1", "run1", "human", "passed", values["run0", "human"]),
        ("gates.1", "run1", "llm", "passed", values["run0", "llm"]),
        ("gates.2", "run0", "human", "passed", values["run0", "human"]),
        ("gates.2", "run1", "human", "passed", values["run1", "human"]),
    ]
    assert evaluation.checks[1].name == "gates.0 run0 (human) AP"
    spec["expect"][0]["value"] += 0.1  # fails: the report says under which set
    junit = tmp_path / "checks.xml"
    assert main(["run", "--quiet", "--junit", str(junit), str(tmp_path / "spec.yaml")]) == 0
    written(tmp_path / "spec.yaml", spec)
    assert main(["run", "--quiet", "--junit", str(junit), str(tmp_path / "spec.yaml")]) == 5
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    failed = [case.get("name") for case in cases if case.find("failure") is not None]
    assert failed == ["expect.0 run0 (llm) AP"]


def test_a_fused_run_of_runs_under_several_sets_is_evaluated_under_each(tmp_path):
    write_sets(tmp_path, seed=23, runs=2)
    spec = judgment_spec(2, ["human", "filled"], ["AP", "nDCG@10"])
    spec["runs"]["fused"] = {"fuse": ["run0", "run1"]}
    spec["runs"]["on_human"] = {"fuse": ["run0", "run1"], "collection": "human"}
    rows = evaluate(written(tmp_path / "spec.yaml", spec), write=False).aggregate()
    pairs = list(dict.fromkeys((run, collection) for run, collection, *_ in rows))
    assert pairs[4:] == [("fused", "human"), ("fused", "filled"), ("on_human", "human")]
    values = {(r, c, m): v for r, c, m, v, _ in rows}
    assert values["fused", "human", "AP"] == values["on_human", "human", "AP"]


def test_a_tuned_run_and_leave_one_out_under_an_overlay_are_those_of_its_merged_file(tmp_path):
    write_sets(tmp_path, seed=31)
    tuned = {"fuse": ["run0", "run1"], "collection": "filled", "tune": {"metric": "AP", "folds": 3}}
    pool = {"collection": "filled", "outputs": [{"path": "loo.csv", "level": "leave_one_out"}]}
    found = {}
    for name, filled in (("overlay", None), ("file", {"qrels": "filled.txt", "num_docs": 5000})):
        spec = judgment_spec(3, ["human", "filled"], ["AP", "nDCG@10"])
        if filled is not None:
            spec["collections"]["filled"] = filled
            del spec["collections"]["llm"]
        spec["runs"]["tuned"] = tuned
        spec["outputs"] = [{"path": f"{name}.csv"}]
        evaluate(written(tmp_path / f"{name}.yaml", spec))
        found[name] = (tmp_path / f"{name}.csv").read_text()
        del spec["runs"]["tuned"]  # leave-one-out: the runs submitted (tests/test_pools.py)
        spec["pools"] = {"p": pool}
        evaluate(written(tmp_path / f"{name}.yaml", spec))
        found[name, "loo"] = (tmp_path / "loo.csv").read_text()
    assert found["overlay"] == found["file"] and "tuned,filled,AP" in found["file"]
    assert found["overlay", "loo"] == found["file", "loo"]
    assert found["file", "loo"].count("\np,filled,") == 6  # three runs, two metrics


def test_the_dashboard_shows_each_collection_of_a_run(tmp_path):
    from pipeline.dashboard import write_dashboard

    write_sets(tmp_path, seed=37, runs=2)
    spec = judgment_spec(2, SETS, ["AP"], history={"path": "h.duckdb"})
    path = written(tmp_path / "spec.yaml", spec)
    evaluate(path)
    evaluate(path)
    write_dashboard(tmp_path / "h.duckdb", tmp_path / "site", registry=get_registry())
    page = (tmp_path / "site" / "evaluations" / "2.html").read_text()
    sections = page.split("<section data-collection=")[1:]
    assert [section.split("'")[1] for section in sections] == SETS
    assert all("run0" in section and "run1" in section for section in sections)


def test_a_pool_takes_every_run_evaluated_under_its_collection(tmp_path):
    write_sets(tmp_path, seed=29)
    spec = judgment_spec(3, ["human", "filled"], ["AP"])
    spec["runs"]["run2"]["collection"] = "llm"
    spec["pools"] = {"p": {"collection": "filled", "outputs": [{"path": "pool.txt"}]}}
    evaluate(written(tmp_path / "spec.yaml", spec))  # pooled in the evaluation's pass
    evaluated = (tmp_path / "pool.txt").read_text()
    assert main(["pool", str(tmp_path / "spec.yaml")]) == 0  # pooled in a pass of its own
    assert (tmp_path / "pool.txt").read_text() == evaluated
    pooled = {tuple(line.split()[::2]) for line in evaluated.splitlines()}
    top = {(q, d) for i in (0, 1) for q, docs in _ranked(tmp_path / f"run{i}.txt").items()
           for d in docs[:100]}  # fmt: skip
    assert pooled == top


def _ranked(path: Path) -> dict[str, list[str]]:
    """A run file's documents per query, ranked by score (descending), then docno (descending)."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        qid, _, docno, _, score, _ = line.split()
        rows.setdefault(qid, []).append((float(score), docno))
    return {q: [d for _, d in sorted(docs, reverse=True)] for q, docs in rows.items()}
