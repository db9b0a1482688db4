"""The conformance kit (pipeline.testing) on irpipe's own measures, and on measures that are wrong.

The references below are trec_eval 10.0's definitions (shared/reference/trec_eval-10.md, section 3)
written as plainly as possible in numpy; `test_references_agree_with_pytrec_eval` checks them
against pytrec_eval as well, so that the kit is not only checking irpipe against itself.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import pytrec_eval
from pydantic import BaseModel, ConfigDict, Field

from pipeline import PluginError, SpecError
from pipeline.api import Columns, Measure, PythonMeasure, RankedParams
from pipeline.measures.registry import get_registry
from pipeline.metrics.average_precision import AP, Bpref, GeometricAP
from pipeline.metrics.counts import NumRet
from pipeline.metrics.cumulative_gain import NCG, nDCG
from pipeline.metrics.precision import P, R, Success
from pipeline.metrics.rank_biased import RBP
from pipeline.metrics.reciprocal_rank import RR, SearchLength
from pipeline.metrics.set_based import SetF
from pipeline.synthetic import generate
from pipeline.testing import (
    check_judged_rows,
    check_measure,
    check_missing,
    check_names,
    check_params,
    check_reference,
    check_ties,
    installed,
)
from pipeline.testing.bench import make_query


# -- references: trec_eval 10.0's definitions -----------------------------------------------------
def level(q) -> int:
    """A grade >= level is relevant: the measure's `rel`, else the spec's (1 in the kit)."""
    return max(q.level, 0)


def top(p, q) -> np.ndarray:
    return q.grades if p.k is None else q.grades[: p.k]


def num_rel(p, q) -> int:
    return int((q.qrels >= level(q)).sum())


def precision(p, q) -> float:
    """Relevant in the top k / k, even when fewer than k were retrieved."""
    return int((top(p, q) >= level(q)).sum()) / p.k


def recall(p, q) -> float:
    r = num_rel(p, q)
    return int((top(p, q) >= level(q)).sum()) / r if r else 0.0


def average_precision(p, q) -> float:
    """Sum of the precisions at the relevant ranks (within k) / R."""
    ranks = np.flatnonzero(q.grades >= level(q)) + 1
    precisions = np.arange(1, len(ranks) + 1) / ranks
    within = precisions[ranks <= p.k] if p.k is not None else precisions
    r = num_rel(p, q)
    return float(within.sum()) / r if r else 0.0


def search_length(p, q) -> float | None:
    """The rank of the first relevant document (within k); no value when there is none."""
    hits = np.flatnonzero(top(p, q) >= level(q))
    return float(hits[0] + 1) if len(hits) else None


def gains(p, grades: np.ndarray) -> np.ndarray:
    """Linear: the grade; exponential: 2^grade - 1; unjudged and negative grades gain 0."""
    g = np.maximum(grades, 0).astype(float)
    return np.where(g > 0, 2.0**g - 1, 0.0) if p.gain == "exponential" else g


def dcg(g: np.ndarray, k: int | None) -> float:
    g = g if k is None else g[:k]
    return float((g / np.log2(np.arange(2, len(g) + 2))).sum())


def ndcg(p, q) -> float:
    """DCG@k / DCG@k of the ideal ranking of every judged document with a positive gain."""
    ideal = np.sort(gains(p, q.qrels))[::-1]
    best = dcg(ideal[ideal > 0], p.k)
    return dcg(gains(p, q.grades), p.k) / best if best > 0 else 0.0


def mapped_gains(p, grades: np.ndarray) -> np.ndarray:
    """nDCG's gains, a mapping too: a grade the mapping names gains its value (an unjudged or
    negatively judged document too); any other its linear or exponential gain."""
    table = p.gain if isinstance(p.gain, dict) else {}
    plain = gains(p if not table else _Linear, grades)
    return np.array([table.get(int(g), plain[i]) for i, g in enumerate(grades)], dtype=float)


class _Linear:
    gain = "linear"


def ncg(p, q) -> float:
    """Σ_{i<=k} gain(rank i) / Σ_{i<=k} gain(ideal i), the ideal being the judged documents
    (grades >= 0) by gain, highest first; 0 when the ideal's sum is 0."""
    ideal = np.sort(mapped_gains(p, q.qrels[q.qrels >= 0]))[::-1]
    best = float(sum(ideal[ideal > 0][: p.k]))
    return float(sum(mapped_gains(p, top(p, q)))) / best if best > 0 else 0.0


def reciprocal_rank(p, q) -> float:
    hits = np.flatnonzero(top(p, q) >= level(q))
    return 1.0 / (hits[0] + 1) if len(hits) else 0.0


def bpref(p, q) -> float:
    """Skip unjudged documents; each relevant one adds 1 - min(nr, R) / min(NR, R), nr the
    judged non-relevant documents above it, NR all judged non-relevant ones."""
    relevant, nonrelevant = num_rel(p, q), int(((q.qrels >= 0) & (q.qrels < level(q))).sum())
    total, seen = 0.0, 0
    for grade in top(p, q):
        if grade >= level(q):
            total += 1 - min(seen, relevant) / min(nonrelevant, relevant) if seen else 1.0
        elif grade >= 0:
            seen += 1
    return total / relevant if relevant else 0.0


def set_f(p, q) -> float:
    """(beta² + 1) P R / (beta² P + R) of the retrieved set (its first k), 0 without a hit."""
    ranking = top(p, q)
    hits = int((ranking >= level(q)).sum())
    if hits == 0:
        return 0.0
    prec, rec, b2 = hits / len(ranking), hits / num_rel(p, q), p.beta**2
    return (b2 + 1) * prec * rec / (b2 * prec + rec)


def num_ret(p, q) -> float:
    return float(len(top(p, q)))


def success(p, q) -> float:
    return float((top(p, q) >= level(q)).any())


def rbp(p, q) -> float:
    """(1 - p) Σ gain(rank) p^(rank-1); the query's gain table (grades 0..its highest judged one,
    then the mapping) scaled to [0, 1] by (g - min)/(max - min) when a gain leaves it."""
    judged = q.qrels[q.qrels >= 0]
    table = {g: float(g) for g in range(int(judged.max()) + 1 if len(judged) else 0)}
    table.update(p.gain or {})
    low, high = min([0.0, *table.values()]), max([0.0, *table.values()])
    scale = low < 0 or high > 1
    raw = [table.get(int(g)) for g in q.grades]
    g = [0.0 if v is None else (v - low) / (high - low) if scale else v for v in raw]
    return (1 - p.p) * sum(v * p.p**i for i, v in enumerate(g))


BUILT_INS = [
    (P, precision, ["P@5", "P(rel=2)@10", "P@1"]),
    (R, recall, ["R@10", "R(rel=3)@30"]),
    (AP, average_precision, ["AP", "AP@10", "AP(rel=2)"]),
    (GeometricAP, average_precision, ["gmAP"]),  # the geometric mean of the per-query values
    (SearchLength, search_length, ["SearchLength", "SearchLength@5"]),  # None: left out of means
    (nDCG, ndcg, ["nDCG", "nDCG@10", "nDCG(gain='exponential')@5", "nDCG(gain='exponential')"]),
    (NCG, ncg, ["NCG", "NCG@10", "NCG(gain='exponential')@5", "NCG(gain={-1: 0.5, 2: 5})@20"]),
    (RR, reciprocal_rank, ["RR", "RR@3", "RR(rel=2)"]),
    (Bpref, bpref, ["Bpref", "Bpref(rel=2)"]),
    (SetF, set_f, ["SetF", "SetF(beta=0.5)", "SetF@10"]),
    (NumRet, num_ret, ["NumRet", "NumRet@20"]),
    (Success, success, ["Success@1", "Success(rel=3)@5"]),
    (RBP, rbp, ["RBP", "RBP(p=0.8)", "RBP(gain={1: 0.5, 3: 2.0})"]),
]


@pytest.mark.parametrize(
    ("measure", "reference", "metrics"), BUILT_INS, ids=[m.__name__ for m, _, _ in BUILT_INS]
)
def test_built_in_measures_pass_the_kit(measure, reference, metrics):
    check_measure(measure, reference, metrics, collections=15)


# -- the references, checked by pytrec_eval (trec_eval 9.x inside) ---------------------------------
PYTREC = {  # pytrec_eval's name -> (reference, irpipe metric)
    "P_5": (precision, "P@5"),
    "recall_10": (recall, "R@10"),
    "map": (average_precision, "AP"),
    "map_cut_10": (average_precision, "AP@10"),
    "ndcg": (ndcg, "nDCG"),
    "ndcg_cut_10": (ndcg, "nDCG@10"),
    "recip_rank": (reciprocal_rank, "RR"),
    "bpref": (bpref, "Bpref"),
    "set_F": (set_f, "SetF"),
    "num_ret": (num_ret, "NumRet"),
    "success_5": (success, "Success@5"),
}


def _ranked_grades(judged: dict[str, int], scores: dict[str, float]) -> list[int]:
    """Grades in trec_eval 9.x's order (score descending as a C float, then docno descending);
    -1 for a document not in the qrels, -2 for a negative judgment."""
    ordered = sorted(scores, key=str.encode, reverse=True)
    ordered.sort(key=lambda d: np.float32(scores[d]), reverse=True)
    return [-1 if d not in judged else -2 if judged[d] < 0 else judged[d] for d in ordered]


@pytest.mark.parametrize("seed", range(4))
def test_references_agree_with_pytrec_eval(seed):
    collection = generate(seed, max_grade=4)
    names = {name.rstrip("_0123456789") for name in PYTREC}
    evaluator = pytrec_eval.RelevanceEvaluator(collection.qrels, names)
    resolved = {name: get_registry().resolve(metric)[0] for name, (_, metric) in PYTREC.items()}
    for run in collection.runs.values():
        for qid, values in evaluator.evaluate(run).items():
            judged = collection.qrels[qid]
            query = make_query(_ranked_grades(judged, run[qid]), judged.values())
            for name, (reference, _) in PYTREC.items():
                want = values[name]
                assert reference(resolved[name].params, query) == pytest.approx(want), (qid, name)


# -- a measure computed in Python, and a reference that orders ties its own way --------------------
class PythonRR(PythonMeasure):
    """RR computed in Python over the ranked grades (the Python path of the contract)."""

    name = "PythonRR"
    description = "reciprocal rank, in Python"
    Params = RankedParams
    cutoff = "k"

    def compute(self, p, query):
        return reciprocal_rank(p, query)


def test_a_python_measure_passes_the_kit():
    """With ties=False too: the reference is compared on collections without ties, the tie and
    judged-rows checks still run on collections with them."""
    metrics = ["PythonRR", "PythonRR(rel=2)@5"]
    check_measure(PythonRR, reciprocal_rank, metrics, collections=5, ties=False)


def test_ties_false_spares_a_reference_that_breaks_ties_its_own_way():
    """A reference that sees tied documents in another order (docno ascending, say) differs on
    collections with ties, and agrees without them."""

    def reversed_ties(p, q):  # a tie order the reference cannot see: rank by grade within ties
        return reciprocal_rank(p, q) if len(q.grades) < 2 else reciprocal_rank(p, _flip(q))

    with pytest.raises(AssertionError, match=r"RR differs from the reference"):
        check_reference(RR, reversed_ties, ["RR"], collections=5)
    check_reference(RR, reciprocal_rank, ["RR"], collections=5, ties=False)


def _flip(q):
    """The query with its first two ranks swapped: what a different tie order can do."""
    grades = q.grades.copy()
    grades[[0, 1]] = grades[[1, 0]]
    return make_query(grades, q.qrels)


# -- measures that are wrong: each fails its check, with a report that says where -----------------
class LaxParams(BaseModel):
    """pydantic's defaults: lax types ("5" becomes 5) and unknown keys ignored."""

    k: int | None = None
    rel: int | None = None


class NotForbidding(RankedParams):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)


class NotStrict(RankedParams):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


def _precision_like(name: str, params: type) -> type[Measure]:
    return type(name, (P,), {"name": name, "Params": params, "aliases": {}})


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (LaxParams, r"LaxP accepted the unknown parameter 'no_such_parameter'"),
        (NotForbidding, r"accepted the unknown parameter 'no_such_parameter'"),
        (
            NotStrict,
            r"LaxP accepted \w+='1', a str .*derive Params from pipeline.api.MeasureParams",
        ),
    ],
    ids=["lax", "extra-ignored", "not-strict"],
)
def test_check_params_fails_a_lax_parameter_model(params, message):
    with pytest.raises(AssertionError, match=message):
        check_params(_precision_like("LaxP", params), ["LaxP@5"])


class Optional(P):
    """P whose cutoff is not required: P without k would compile `int(None)`."""

    name = "OptionalP"
    aliases = {}
    required = ()


def test_check_params_fails_a_parameter_it_cannot_do_without_that_is_not_required():
    message = r"OptionalP, given only its required parameters \{\}, does not compile: its per_query"
    with pytest.raises(AssertionError, match=message):
        check_params(Optional, ["OptionalP@5"])


class WeightedParams(RankedParams):
    weight: float = Field(1.0, exclude=True)  # left out of model_dump, so of the canonical name


class WeightedP(P):
    name = "WeightedP"
    aliases = {"weighted_precision": {}}
    Params = WeightedParams

    def per_query(self, p, c: Columns) -> str:
        return f"{p.weight!r} * {super().per_query(p, c)}"


def test_check_names_fails_a_canonical_name_that_loses_a_parameter():
    with pytest.raises(
        AssertionError, match=r"canonical name 'WeightedP@5' \(parameters .*weight=2.0.*resolves to"
    ):
        check_names(WeightedP, ["WeightedP(weight=2.0)@5"])


class MissRate(Measure):
    """1 - P@k, but a query the run lacks scores 0 (the default `missing`): its miss rate is 1."""

    name = "MissRate"
    description = "share of the top k that is not relevant"
    Params = RankedParams
    cutoff = "k"
    required = ("k",)

    def per_query(self, p, c: Columns) -> str:
        return f"1 - {c.relevant_within(p)} / {int(p.k)}"


def miss_rate(p, q) -> float:
    return 1 - precision(p, q)


DATA_REPORT = (
    r"collection seed \d+, run run\d\S*, qid \S+: \w[^:]*? [-\d.e]+, \w[^:]*? [-\d.e]+\n    ranking"
)


def test_check_missing_fails_a_wrong_missing_value():
    message = r"MissRate on queries the run lacks .* not the reference's value on an empty ranking"
    with pytest.raises(AssertionError, match=message) as failed:
        check_missing(MissRate, miss_rate, ["MissRate@5"], collections=3)
    assert "expected 1.0, got 0.0" in str(failed.value)
    assert re.search(DATA_REPORT, str(failed.value))


class FileRankRR(Measure):
    """RR by the file's rank column: different for tied rows written in another order."""

    name = "FileRankRR"
    description = "reciprocal rank by the file's rank column"
    Params = RankedParams
    cutoff = "k"

    def per_query(self, p, c: Columns) -> str:
        first = f"min(file_rank) FILTER (WHERE {c.relevant(c.level(p))})"
        return f"coalesce(1 / {first}, 0)"


def test_check_ties_fails_a_measure_that_reads_the_file_order():
    message = r"FileRankRR changes when tied rows are reversed in the run file: \d+ of \d+ values"
    with pytest.raises(AssertionError, match=message) as failed:
        check_ties(FileRankRR, ["FileRankRR"], collections=3)
    assert re.search(r"as generated [\d.]+, tied rows reversed [\d.]+", str(failed.value))
    assert re.search(DATA_REPORT, str(failed.value))


class ShortP(P):
    """Precision over min(k, retrieved): not trec_eval's P, which divides by k."""

    name = "ShortP"
    aliases = {}
    judged_rows_suffice = False

    def per_query(self, p, c: Columns) -> str:
        return f"{c.relevant_within(p)} / least({int(p.k)}, count(*))"


def test_check_reference_fails_a_measure_that_is_not_its_definition():
    with pytest.raises(AssertionError, match=r"ShortP differs from the reference") as failed:
        check_reference(ShortP, precision, ["ShortP@10"], collections=3)
    assert re.search(DATA_REPORT, str(failed.value))
    assert "pipeline.synthetic.generate(S, " in str(failed.value)


class UnjudgedShare(Measure):
    """Claims judged_rows_suffice, but counts unjudged rows, which the judged-rows plan drops."""

    name = "UnjudgedShare"
    description = "share of the top k that is unjudged"
    Params = RankedParams
    cutoff = "k"
    required = ("k",)
    judged_rows_suffice = True

    def per_query(self, p, c: Columns) -> str:
        return f"count(*) FILTER (WHERE relv < 0 AND {c.within(p.k)}) / {int(p.k)}"


def test_check_judged_rows_fails_a_false_claim():
    message = r"UnjudgedShare claims judged_rows_suffice, but the judged-rows plan \(only judged"
    with pytest.raises(AssertionError, match=message) as failed:
        check_judged_rows(UnjudgedShare, ["UnjudgedShare@10"], collections=3)
    assert re.search(r"full ranking [\d.]+, judged-rows plan [\d.]+", str(failed.value))


def test_check_measure_stops_at_the_first_failing_check():
    with pytest.raises(AssertionError, match=r"MissRate on queries the run lacks"):
        check_measure(MissRate, miss_rate, ["MissRate@5"], collections=2)


def test_a_metric_of_another_measure_is_refused():
    with pytest.raises(AssertionError, match=r"metric 'AP' names AP \(AP\), not P"):
        check_params(P, ["AP"])


def test_a_reference_that_raises_is_reported_with_the_query():
    def broken(p, q):
        return q.grades[0]  # fails on an empty ranking

    with pytest.raises(AssertionError, match=r"the reference raised IndexError: .* grades \[\]"):
        check_missing(RR, broken, ["RR"], collections=1)


# -- installed --------------------------------------------------------------------------------------
def test_installed_registers_for_the_block_only(evaluate_trec):
    assert "MissRate" not in get_registry().names()
    with installed(MissRate, MissRate) as registry:
        assert get_registry() is registry
        per_query, _ = evaluate_trec("1 0 a 1", "1 Q0 a 1 2 t\n1 Q0 b 2 1 t", ["MissRate@2"])
        assert per_query["1", "MissRate@2"] == 0.5
    assert "MissRate" not in get_registry().names()


def test_installed_leaves_a_registered_measure_as_it_is():
    before = get_registry()
    with installed(P) as registry:
        assert registry is before


def test_installed_refuses_a_name_that_is_taken():
    taken = type("Taken", (MissRate,), {"name": "MAP"})
    with pytest.raises(PluginError, match=r"'MAP'"), installed(taken):
        pass
    with pytest.raises(TypeError, match=r"Measure subclasses"), installed(MissRate()):
        pass
    nameless = type("Nameless", (MissRate,), {"description": None})
    with pytest.raises(PluginError, match=r"Nameless has no description"), installed(nameless):
        pass


def test_an_unknown_metric_is_reported_as_such():
    with pytest.raises(AssertionError, match=r"metric 'Nope@5' does not resolve: unknown metric"):
        check_names(P, ["Nope@5"])
    with pytest.raises(SpecError):
        get_registry().resolve("MissRate@5")
