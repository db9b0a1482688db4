"""Each measure equals ir_measures' value on every query of generated collections (see generate.py).

ERR is compared on both runs (ir_measures' ERR is gdeval.pl, which orders ties as irpipe does);
Judged and Compat on the tie-free run only, since their providers order ties by docno ascending
(and Compat's ideal ranking by score and qrels order). ERR and Judged are evaluated twice: alone,
where irpipe may rank judged rows only, and beside Compat, which makes it rank every row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import generate
import ir_measures
import numpy as np
import pytest
import reference
from ir_measures import ERR, Compat, Judged

from pipeline import evaluate

COLLECTIONS = 30
ERR_METRICS = {f"usermodels.ERR@{k}": ERR @ k for k in (1, 2, 3, 5, 10, 20, 1000)}
JUDGED_METRICS = {"Judged": Judged, **{f"Judged@{k}": Judged @ k for k in (1, 2, 5, 10, 1000)}}
COMPAT_METRICS = {
    "Compat": Compat,
    "Compat(p=0.5)": Compat(p=0.5),
    "Compat(p=0.8)": Compat(p=0.8),
    "Compat(p=0.99)": Compat(p=0.99),
    "Compat(normalize=False)": Compat(normalize=False),
    "Compat(normalize=False,p=0.8)": Compat(p=0.8, normalize=False),
}
#: gdeval.pl prints ERR with 5 decimals: ir_measures' value is within half a unit of the 5th of
#: irpipe's exact one (plus irpipe's own floating-point error, far below 1e-12).
ROUNDING = 5e-6 + 1e-12


@dataclass(frozen=True)
class Compared:
    """One collection with irpipe's values ({(plan, run, qid, metric): value}, plan "alone" or
    "beside_compat"), its means ({(plan, run, metric): (value, n_queries)}) and ir_measures'
    values ({(run, qid, metric): value})."""

    collection: generate.Collection
    irpipe: dict[tuple[str, str, str, str], float]
    means: dict[tuple[str, str, str], tuple[float, int]]
    ir_measures: dict[tuple[str, str, str], float]


@pytest.fixture(scope="module")
def compared(tmp_path_factory) -> list[Compared]:
    rng = np.random.default_rng(20240611)
    directory = tmp_path_factory.mktemp("collections")
    collections = {f"c{i}": generate.collection(rng) for i in range(COLLECTIONS)}
    for name, collection in collections.items():
        collection.write(directory / name, rng)
    alone = [*ERR_METRICS, *JUDGED_METRICS]
    values, means = _irpipe(directory, collections, "alone", alone)
    more = _irpipe(directory, collections, "beside_compat", [*alone, *COMPAT_METRICS])
    values, means = values | more[0], means | more[1]
    return [
        Compared(c, _of(values, name), _of(means, name), _ir_measures(c))
        for name, c in collections.items()
    ]


def _irpipe(directory: Path, collections: dict, plan: str, metrics: list[str]):
    """irpipe's per-query values and means of every run of every collection (one spec, so one
    evaluation), keyed by (plan, collection, run, ...)."""
    runs = {
        f"{name}_{run}": {"path": f"{name}/{run}.txt", "collection": name}
        for name in collections
        for run in ("tied", "tie_free")
    }
    spec = {
        "collections": {name: {"qrels": f"{name}/qrels.txt"} for name in collections},
        "runs": runs,
        "metrics": metrics,
    }
    path = directory / f"{plan}.yaml"
    path.write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
    evaluation = evaluate(path, write=False)
    values = {
        (plan, c, r.removeprefix(f"{c}_"), q, m): v
        for r, c, q, m, v in evaluation.per_query(to="rows")
    }
    means = {
        (plan, c, r.removeprefix(f"{c}_"), m): (v, n)
        for r, c, m, v, n in evaluation.aggregate(to="rows")
    }
    return values, means


def _of(table: dict[tuple, object], collection: str) -> dict[tuple, object]:
    """The entries of one collection, without the collection in the key."""
    return {(plan, *rest): v for (plan, c, *rest), v in table.items() if c == collection}


def _ir_measures(collection: generate.Collection) -> dict[tuple[str, str, str], float]:
    """ir_measures' values: ERR of both runs, every measure of the tie-free run."""
    every = ERR_METRICS | JUDGED_METRICS | COMPAT_METRICS
    found = {}
    for run, metrics in (("tied", ERR_METRICS), ("tie_free", every)):
        names = {measure: text for text, measure in metrics.items()}
        values = ir_measures.iter_calc(
            list(metrics.values()), collection.qrels, getattr(collection, run)
        )
        found |= {(run, m.query_id, names[m.measure]): m.value for m in values}
    return found


def _pairs(compared: list[Compared], metrics: dict, runs: tuple[str, ...]):
    """(collection, key, irpipe's value, ir_measures' value) of every compared query."""
    for c in compared:
        for (plan, run, qid, metric), value in c.irpipe.items():
            if metric in metrics and run in runs:
                yield c.collection, (plan, run, qid, metric), value, c.ir_measures[run, qid, metric]


def test_every_qrels_query_has_a_value_and_no_other(compared):
    for c in compared:
        ours = {(run, qid, metric) for _, run, qid, metric in c.irpipe}
        theirs = {(run, qid, metric) for run, qid, metric in c.ir_measures}
        assert theirs <= ours
        assert {qid for _, qid, _ in ours} == set(c.collection.qrels)


def test_err_is_gdeval_without_its_rounding(compared):
    for collection, (plan, run, qid, metric), ours, theirs in _pairs(
        compared, ERR_METRICS, ("tied", "tie_free")
    ):
        ranked = _ranked_grades(collection, run, qid)
        exact = reference.err(ranked, ERR_METRICS[metric]["cutoff"])
        where = (plan, run, qid, metric, ranked)
        assert abs(ours - exact) <= 1e-12, where
        assert reference.gdeval_rounding(exact) == theirs, where
        assert abs(ours - theirs) <= ROUNDING, where


def test_judged_equals_ir_measures(compared):
    for _, key, ours, theirs in _pairs(compared, JUDGED_METRICS, ("tie_free",)):
        assert ours == theirs, key


def test_compat_equals_ir_measures(compared):
    for _, key, ours, theirs in _pairs(compared, COMPAT_METRICS, ("tie_free",)):
        assert ours == theirs, key  # the same arithmetic in the same order: to the last bit


def test_means_are_over_every_qrels_query(compared):
    """ir_measures' mean (of ERR values rounded to 5 decimals) against irpipe's exact one."""
    for c in compared:
        for (plan, run, metric), (mean, n) in c.means.items():
            theirs = [v for (r, _, m), v in c.ir_measures.items() if (r, m) == (run, metric)]
            if theirs:
                assert n == len(c.collection.qrels) == len(theirs)
                tolerance = ROUNDING if metric in ERR_METRICS else 1e-12
                assert abs(mean - sum(theirs) / n) <= tolerance, (plan, run, metric)


def test_the_collections_hold_every_case(compared):
    """The comparisons above cover what they claim (else they could pass by luck)."""
    seen = {case for c in compared for case in _cases(c.collection)}
    assert seen == {
        "query the run lacks", "query without relevant documents", "negative grade retrieved",
        "unjudged document retrieved", "grade 4 retrieved", "tied scores", "sparse judgments",
    }  # fmt: skip


def _cases(collection: generate.Collection):
    for qid, grades in collection.qrels.items():
        run = collection.tied.get(qid)
        if run is None:
            yield "query the run lacks"
        if not any(g > 0 for g in grades.values()):
            yield "query without relevant documents"
        ranked = _ranked_grades(collection, "tied", qid)
        yield from (name for grade, name in _GRADE_CASES.items() if grade in ranked)
        if run and len(set(run.values())) < len(run):
            yield "tied scores"
        if run and len(run) > 50 and len(grades) <= 6:
            yield "sparse judgments"


_GRADE_CASES = {
    -2: "negative grade retrieved",
    -1: "unjudged document retrieved",
    4: "grade 4 retrieved",
}


def _ranked_grades(collection: generate.Collection, run: str, qid: str) -> list[int]:
    """The query's ranked grades in irpipe's order: -1 without a qrels line, -2 a negative grade."""
    docs = getattr(collection, run).get(qid, {})
    grades = collection.qrels.get(qid, {})
    return [_state(grades.get(d)) for d in generate.trec_eval_order(docs)]


def _state(grade: int | None) -> int:
    return -1 if grade is None else -2 if grade < 0 else grade
