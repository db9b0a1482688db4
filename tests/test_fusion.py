"""Fused runs: each method and normalization by hand on a small case, against ranx's fusion on
generated runs (in a process of its own, numba compiling ranx once into a cache kept between
runs of the suite), and as runs of a spec: evaluated, compared, written, recorded and reused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline import evaluate
from pipeline.errors import SpecError

A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d1 1 1.0 a\n"
B = "q1 Q0 d2 1 0.9 b\nq1 Q0 d4 2 0.5 b\nq3 Q0 d9 1 4.0 b\n"
QRELS = "q1 0 d2 1\nq1 0 d3 1\nq2 0 d1 1\nq3 0 d9 1\n"


def _small(tmp_path: Path, fused: dict[str, dict], **keys) -> dict:
    """A spec over the small case's files (written): runs a and b, then `fused`, and `keys`."""
    (tmp_path / "a.txt").write_text(A)
    (tmp_path / "b.txt").write_text(B)
    (tmp_path / "qrels.txt").write_text(QRELS)
    files = {"a": {"path": "a.txt", "collection": "c"}, "b": {"path": "b.txt", "collection": "c"}}
    return {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": {**files, **fused},
            "metrics": ["AP"], **keys}  # fmt: skip


def _fused(tmp_path: Path, **fusion) -> dict[str, list[tuple[str, float]]]:
    """Each query's fused documents and scores, in rank order, as its `run` output writes them."""
    outputs = [{"path": "f.trec", "level": "run", "run": "f"}]
    spec = _small(tmp_path, {"f": {"fuse": ["a", "b"], **fusion}}, outputs=outputs)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    evaluate(tmp_path / "spec.yaml")
    found: dict[str, list[tuple[str, float]]] = {}
    for line in (tmp_path / "f.trec").read_text().splitlines():
        qid, _, docno, rank, score, tag = line.split()
        assert tag == "f" and int(rank) == len(found.get(qid, [])) + 1
        found.setdefault(qid, []).append((docno, float(score)))
    return found


# q1: a ranks d1 d2 d3 (3, 2, 1); b ranks d2 d4 (0.9, 0.5). q2 only in a, q3 only in b.
HAND = {
    "rrf": ({"k": 60}, [("d2", 1 / 62 + 1 / 61), ("d1", 1 / 61), ("d4", 1 / 62), ("d3", 1 / 63)]),
    "combsum": (
        {},
        [("d2", 1.5), ("d1", 1.0), ("d4", 0.0), ("d3", 0.0)],
    ),  # min-max; ties: docno desc
    "combmnz": ({}, [("d2", 3.0), ("d1", 1.0), ("d4", 0.0), ("d3", 0.0)]),
    "combanz": ({}, [("d1", 1.0), ("d2", 0.75), ("d4", 0.0), ("d3", 0.0)]),
    "combmax": ({}, [("d2", 1.0), ("d1", 1.0), ("d4", 0.0), ("d3", 0.0)]),
    "combmin": ({}, [("d1", 1.0), ("d2", 0.5), ("d4", 0.0), ("d3", 0.0)]),
    "combmed": ({}, [("d1", 1.0), ("d2", 0.75), ("d4", 0.0), ("d3", 0.0)]),
    "isr": ({}, [("d2", 2.5), ("d1", 1.0), ("d4", 0.25), ("d3", 1 / 9)]),
    "log_isr": ({}, [("d2", 1.25 * 0.6931471805599453), ("d4", 0.0), ("d3", 0.0), ("d1", 0.0)]),
    # 4 candidates: a gives 4, 3, 2 and d4 (4 - 3 + 1) / 2; b gives 4, 3 and d1, d3 1.5 each
    "borda": ({}, [("d2", 7.0), ("d1", 5.5), ("d4", 4.0), ("d3", 3.5)]),
    # pairwise majorities: d2 beats d3 and d4, ties d1; d1 beats d3, ties d4; d4 ties d3
    "condorcet": ({}, [("d2", 2.0), ("d1", 1.0), ("d4", -1.0), ("d3", -2.0)]),
}


@pytest.mark.parametrize("method", HAND)
def test_each_method_as_computed_by_hand(tmp_path, method):
    params, expected = HAND[method]
    found = _fused(tmp_path, method=method, **params)
    _same(found["q1"], expected)
    assert {q for q in found} == {
        "q1",
        "q2",
        "q3",
    }  # a query one input lacks is fused from the other


def _same(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [d for d, _ in found] == [d for d, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-12)


def test_weights_depth_and_normalizations_by_hand(tmp_path):
    weighted = _fused(tmp_path, fuse={"a": 0.3, "b": 0.7}, method="wsum")["q1"]
    _same(weighted, [("d2", 0.85), ("d1", 0.3), ("d4", 0.0), ("d3", 0.0)])
    mnz = _fused(tmp_path, fuse={"a": 0.3, "b": 0.7}, method="wmnz")["q1"]  # sum(x) * sum(w)
    _same(mnz, [("d2", 1.5), ("d1", 0.3), ("d4", 0.0), ("d3", 0.0)])
    cut = _fused(tmp_path, method="rrf", k=0, depth=1)["q1"]  # each input's first document
    _same(cut, [("d2", 1.0), ("d1", 1.0)])
    by_sum = _fused(tmp_path, method="combsum", norm="sum")["q1"]  # (s - min) / (sum - n min)
    _same(by_sum, [("d2", 1 / 3 + 0.4 / 0.4), ("d1", 2 / 3), ("d4", 0.0), ("d3", 0.0)])
    by_rank = _fused(tmp_path, method="combsum", norm="rank")["q1"]  # 1 - (pos - 1) / n
    _same(by_rank, [("d2", 2 / 3 + 1), ("d1", 1.0), ("d4", 0.5), ("d3", 1 / 3)])


def test_a_fused_run_is_evaluated_compared_and_recorded_like_a_file_run(tmp_path):
    spec = _small(tmp_path, {"f": {"fuse": ["?"], "method": "rrf", "k": 1}},
                  history="h.duckdb", compare={"baseline": "f"})  # fmt: skip
    spec["metrics"] = ["AP", "RR"]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    first = evaluate(path)
    values = {(r, m): v for r, _, m, v, _ in first.aggregate(to="rows")}
    # f ranks q1: d2 (1/3 + 1/2), d1, d4, d3; q2: d1; q3: d9; AP over the qrels' 3 queries
    assert values["f", "AP"] == pytest.approx((1 + (1 + 2 / 4) / 2 + 1) / 3)
    assert first.evaluation.con.execute(
        "SELECT count(*) FROM comparison WHERE baseline = 'f'"
    ).fetchone()[0]
    recorded = {i["name"]: i for i in first.evaluation.recorded["inputs"]}
    assert recorded["f"]["path"].startswith('fuse {"inputs": [["a", 1.0], ["b", 1.0]], "k": 1')
    assert evaluate(path).evaluation.keeper.reused.keys() == {"a", "b", "f"}  # nothing changed
    spec["runs"]["f"]["k"] = 60
    path.write_text(yaml.safe_dump(spec))
    assert evaluate(path).evaluation.keeper.reused.keys() == {
        "a",
        "b",
    }  # its inputs read again, to fuse only
    (tmp_path / "b.txt").write_text(B.replace("0.5", "0.95"))
    assert evaluate(path).evaluation.keeper.reused.keys() == {
        "a"
    }  # an input changed: so did the fusion


@pytest.mark.parametrize(
    "fused, message",
    [
        ({"fuse": ["a", "nope"]}, r"runs\.f\.fuse: no run 'nope'; the runs: a, b"),
        ({"fuse": ["a"]}, r"fusing needs two runs or more, found \['a'\]"),
        ({"fuse": {"a": 1, "b": 2}, "method": "combsum"}, "method combsum takes no weights"),
        ({"fuse": ["a", "b"], "method": "avg"}, "method"),
        ({"fuse": ["a", "g"]}, r"no run 'g' \(a fused run: fuse its inputs instead\)"),
    ],
)
def test_a_wrong_fusion_is_one_error_naming_its_key(tmp_path, fused, message):
    spec = _small(tmp_path, {"g": {"fuse": ["a", "b"]}, "f": fused})
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(SpecError, match=message):
        evaluate(tmp_path / "spec.yaml", write=False)


# ranx's methods and normalizations by irpipe's names (condorcet is left out: ranx sorts with a
# comparison that is not transitive, over candidates in set order, so its order is not defined)
RANX_METHODS = {"combsum": "sum", "combmnz": "mnz", "combanz": "anz", "combmax": "max",
                "combmin": "min", "combmed": "med", "wsum": "wsum", "wmnz": "wmnz"}  # fmt: skip
RANK_METHODS = {"rrf": "rrf", "isr": "isr", "log_isr": "log_isr", "borda": "bordafuse"}
RANX_NORMS = {"none": None, "min-max": "min-max", "max": "max", "sum": "sum",
              "z-score": "zmuv", "rank": "rank", "borda": "borda"}  # fmt: skip
WEIGHTS = {"r0": 0.5, "r1": 0.3, "r2": 0.2}

RANX = """
import json, sys
from ranx import Run, fuse
runs = [Run(json.load(open(p))) for p in sys.argv[2:5]]
found = {}
for name, (method, norm, params) in json.load(open(sys.argv[1])).items():
    found[name] = fuse(runs, norm=norm, method=method, params=params).to_dict()
json.dump(found, sys.stdout)
"""


def _generated_runs(root: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Three runs of 12 queries, 20 to 40 documents each out of 60, distinct scores (ranx breaks
    ties its own way), every run answering every query (ranx fuses the first run's queries)."""
    import random

    rng = random.Random(25)
    runs = {}
    for r in range(3):
        run = {}
        for q in range(12):
            docs = rng.sample(range(60), rng.randint(20, 40))
            run[f"q{q}"] = {f"d{d}": round(rng.uniform(-5, 20), 6) + d * 1e-9 for d in docs}
        runs[f"r{r}"] = run
        lines = [f"{q} Q0 {d} 0 {s!r} r{r}" for q, docs in run.items() for d, s in docs.items()]
        (root / f"r{r}.txt").write_text("\n".join(lines) + "\n")
        (root / f"r{r}.json").write_text(json.dumps(run))
    return runs


def test_equal_to_ranx_where_the_definitions_agree(tmp_path):
    pytest.importorskip("ranx")
    _generated_runs(tmp_path)
    (tmp_path / "qrels.txt").write_text("q0 0 d1 1\n")
    fusions, asked = {}, {}
    for ours, theirs in RANX_METHODS.items():
        for norm, ranx_norm in RANX_NORMS.items():
            name = f"{ours}.{norm}"
            weighted = ours in ("wsum", "wmnz")
            fusions[name] = {"fuse": WEIGHTS if weighted else list(WEIGHTS), "method": ours,
                             "norm": norm}  # fmt: skip
            asked[name] = [
                theirs,
                ranx_norm,
                {"weights": list(WEIGHTS.values())} if weighted else {},
            ]
    for ours, theirs in RANK_METHODS.items():
        fusions[ours] = {"fuse": list(WEIGHTS), "method": ours}  # a rank method: norm none
        asked[ours] = [theirs, None, {"k": 60} if ours == "rrf" else {}]
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {**{r: {"path": f"{r}.txt", "collection": "c"} for r in WEIGHTS}, **fusions},
        "metrics": ["AP"],
        "outputs": [{"path": f"{n}.trec", "level": "run", "run": n} for n in fusions],
        "settings": {"unmatched_runs": "allow"},  # the fused runs are compared, not the qrels' 0s
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    evaluate(tmp_path / "spec.yaml")
    (tmp_path / "asked.json").write_text(json.dumps(asked))
    # ranx's functions run as the Python they are written in: numba compiling them for 36
    # queries took 20 s with its cache warm and 100 s cold; run as written, 4 s (importing ranx).
    done = subprocess.run(
        [sys.executable, "-c", RANX, "asked.json", "r0.json", "r1.json", "r2.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout)
    for name in fusions:
        ours: dict[str, dict[str, float]] = {}
        for line in (tmp_path / f"{name}.trec").read_text().splitlines():
            qid, _, docno, _, score, _ = line.split()
            ours.setdefault(qid, {})[docno] = float(score)
        assert ours.keys() == theirs[name].keys(), name
        for qid, docs in ours.items():
            assert docs == pytest.approx(theirs[name][qid], rel=1e-9, abs=1e-12), (name, qid)


def _track(tmp_path: Path, runs: int = 3) -> dict:
    """A generated collection of 30 queries and `runs` runs of different skill, as files."""
    from pipeline.synthetic import generate, write_qrels, write_run

    data = generate(31, queries=30, runs=runs, skill=(1.5, 0.5, 1.0)[:runs], ties=False)
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    for name, run in data.runs.items():
        write_run(run, tmp_path / f"{name}.txt", tag=name)
    return {name: {"path": f"{name}.txt", "collection": "c"} for name in data.runs}


def test_tuned_weights_are_chosen_on_the_other_folds_and_held_out(tmp_path):
    """Against fused runs of every weighting given explicitly: each fold's weights are the best
    mean on the other folds' queries, and its queries take that weighting's values."""
    import numpy as np

    from pipeline.plan.tuning_trials import weightings

    runs = _track(tmp_path)
    grid = weightings(3, 0.25)
    explicit = {f"w{i}": {"fuse": dict(zip(runs, w, strict=True)), "method": "wsum"}
                for i, w in enumerate(grid)}  # fmt: skip
    tune = {"metric": "nDCG@10", "grid": 0.25, "folds": 3, "seed": 7}
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {**runs, **explicit, "t": {"fuse": list(runs), "method": "wsum", "tune": tune}},
        "metrics": ["nDCG@10"],
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    done = evaluate(tmp_path / "spec.yaml", write=False)
    per_query = {(r, q): v for r, _, q, _, v in done.per_query(to="rows")}
    qids = sorted({q for _, q in per_query})
    values = np.array([[per_query[f"w{i}", q] for q in qids] for i in range(len(grid))])
    folds = np.random.default_rng(7).permutation(len(qids)) % 3
    chosen = done.evaluation.recorded["tuning"]["t"]
    for fold in range(3):
        best = int(np.argmax(values[:, folds != fold].mean(axis=1)))
        assert chosen["folds"][fold]["weights"] == dict(zip(runs, grid[best], strict=True))
        for i in np.flatnonzero(folds == fold):
            assert per_query["t", qids[i]] == pytest.approx(values[best, i], abs=1e-12)
    mean = {(r, m): v for r, _, m, v, _ in done.aggregate(to="rows")}["t", "nDCG@10"]
    assert chosen["cross_validated"] == pytest.approx(mean, abs=1e-12)
    assert len(chosen["folds"]) == 3 and chosen["weightings"] == len(grid) == 15


def _tuned_spec(tmp_path: Path) -> Path:
    """A run tuned on two inputs at a grid of 0.5, one input named as a trial would be."""
    runs = _track(tmp_path, 2)
    runs["t weighting 1"] = runs.pop("run1")
    tune = {"metric": "AP", "grid": 0.5, "folds": 2}
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "metrics": ["AP"],
            "runs": {**runs, "t": {"fuse": list(runs), "method": "wsum", "tune": tune}}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    return tmp_path / "spec.yaml"


def test_the_trials_are_planned_at_validation_each_run_named_plainly_by_its_weighting(tmp_path):
    from pipeline import validate

    (tuning,) = validate(_tuned_spec(tmp_path)).tunings
    assert tuning.run == "t" and tuning.inputs == ("run0", "t weighting 1")
    assert tuning.grid == ((0.0, 1.0), (0.5, 0.5), (1.0, 0.0))
    # Apart from the input of the same name: every trial's name steps aside, none is parsed.
    assert tuning.trials == ("t weighting 0'", "t weighting 1'", "t weighting 2'")
    assert tuning.metric.label == "AP" and [m.label for m in tuning.sql.results.metrics] == ["AP"]
    fused = {f.name: f.statements[0].params for f in tuning.sql.runs.fusions}
    assert list(fused) == list(tuning.trials)
    for name, weights in zip(tuning.trials, tuning.grid, strict=True):
        assert fused[name] == ["run0", weights[0], 0, "t weighting 1", weights[1], 1, name]
    names = [load.name for load in tuning.sql.runs.loads] + list(fused)
    assert all(name.isprintable() for name in names), names


def test_a_tuned_evaluation_validates_and_compiles_nothing_and_opens_one_connection(
    tmp_path, monkeypatch
):
    import pipeline.engines.duckdb.executor as executor
    import pipeline.plan.tuning_trials
    import pipeline.run.preflight
    from pipeline import validate

    plan = validate(_tuned_spec(tmp_path))
    never = [(pipeline.run.preflight, "validate"), (pipeline.run.preflight, "compile_plan"),
             (pipeline.plan.tuning_trials, "compile_plan")]  # fmt: skip
    for module, name in never:
        monkeypatch.setattr(module, name, lambda *args, _name=name, **kw: pytest.fail(_name))
    connections = []
    original = executor.connection
    monkeypatch.setattr(executor, "connection", lambda *a: connections.append(a) or original(*a))
    done = evaluate(plan, write=False).evaluation
    assert len(connections) == 1 and set(done.recorded["tuning"]) == {"t"}
    # The trials' tables were made apart from the evaluation's, and are gone.
    schemas = done.con.execute("SELECT DISTINCT schema_name FROM information_schema.schemata")
    assert "tuning" not in {name for (name,) in schemas.fetchall()}
    assert {run for run, *_ in done.aggregate()} == {"run0", "t weighting 1", "t"}


@pytest.mark.parametrize(
    "tune, message",
    [
        ({"fuse": ["run0", "run1"], "method": "combsum"}, "tune chooses the weights of rrf"),
        ({"fuse": {"run0": 1, "run1": 1}, "method": "wsum"}, "give the runs as a list"),
        ({"fuse": ["run0", "run1"], "method": "wsum", "grid": 0.3}, r"1 / 0\.3 is not whole"),
    ],
)
def test_a_wrong_tuning_is_named(tmp_path, tune, message):
    runs = _track(tmp_path, 2)
    grid = tune.pop("grid", 0.1)
    fused = {**tune, "tune": {"metric": "AP", "grid": grid}}
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": {**runs, "t": fused},
            "metrics": ["AP"]}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(SpecError, match=message):
        evaluate(tmp_path / "spec.yaml", write=False)


def test_a_notebook_fuses_frames_as_a_spec_fuses_files(tmp_path):
    pd = pytest.importorskip("pandas")
    runs = _track(tmp_path, 2)
    spec = {"collections": {"c": {"qrels": "qrels.txt"}},
            "runs": {**runs, "rrf": {"fuse": list(runs), "k": 10}}, "metrics": ["AP", "nDCG@10"]}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    from_files = evaluate(tmp_path / "spec.yaml", write=False).aggregate(to="rows")
    names = ["qid", "Q0", "docno", "rank", "score", "tag"]
    frames = {name: pd.read_csv(tmp_path / run["path"], sep=" ", names=names, dtype={"qid": str})
              for name, run in runs.items()}  # fmt: skip
    results = evaluate(qrels=str(tmp_path / "qrels.txt"), metrics=["AP", "nDCG@10"],
                       runs={**frames, "rrf": {"fuse": list(runs), "k": 10}})  # fmt: skip
    found = {tuple(r) for r in results.aggregate().itertuples(index=False)}
    assert found == {(r, "default", m, v, n) for r, _, m, v, n in from_files}
    assert any(r == "rrf" for r, *_ in found)


@pytest.mark.parametrize(
    "keys, message",
    [
        ({"outputs": [{"path": "a.trec", "level": "run", "run": "a"}]},
         r"outputs\.0\.run: 'a' is not a fused run of this spec .* the fused runs: f"),
        ({"outputs": [{"path": "f.trec", "level": "run"}]}, "level run needs run: the name"),
        ({"outputs": [{"path": "f.csv", "level": "aggregate", "run": "f"}]}, r"outputs\.0\.run"),
        ({"pools": {"p": {"collection": "c", "runs": ["f"]}}},
         r"run 'f' is fused from a, b; a pool holds the runs submitted"),
        ({"settings": {"engine": "spark"}},
         r"runs\.f: fused runs are computed by the duckdb engine"),
    ],
)  # fmt: skip
def test_what_a_fused_run_cannot_be_given_is_named(tmp_path, keys, message):
    spec = _small(tmp_path, {"f": {"fuse": ["a", "b"]}}, **keys)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(SpecError, match=message):
        evaluate(tmp_path / "spec.yaml", write=False)
    assert not list(tmp_path.glob("*.trec")) and not list(tmp_path.glob("*.csv"))


def test_runs_all_pools_the_submitted_runs_only(tmp_path):
    from pipeline.run.preflight import validate
    from pipeline.spec import load_spec

    spec = _small(tmp_path, {"f": {"fuse": ["a", "b"]}},
                  pools={"p": {"collection": "c", "runs": "all"}})  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    (pool,) = validate(load_spec(tmp_path / "spec.yaml")).pools
    assert pool.runs == ("a", "b")
