"""`RBP(p=..., variant=rbp_eval)` and its residual (`residual=true`) are rbp_eval's.

rbp_eval (C, not on PyPI) is read from its source: RBP = sum g_i w_i, w_i = (1 - p) p^(i-1), with
grades made binary at the relevance level (its default on integer grades), and a residual of
p^min(n, k) plus the weight of the unjudged ranks, per query of the run that the qrels know,
averaged over those; by default it ranks by score, and tied documents share the mean weight of
the ranks they cover (the share within the depth k when k cuts them). The reference here is
cwl-eval's RBP with residuals (`-r`), through its own classes, unrounded: on runs without ties its
expected utility in the worst case (unjudged documents gain 0) and the best case minus it (they
gain 1, as do the ranks past the ranking's end, up to cwl's depth of 1000); on runs with ties,
rbp_eval's rule applied to cwl's weights and gains. cwl reads a run in file order, which the tests
write as irpipe orders it (score descending, then docno descending); irpipe sorts it itself. Where
the definitions meet (binary grades, no ties; a retrieved unjudged document), trec_eval's own rbp
and rbp_resid output (tests/golden) is the reference too.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from conftest import spec_of_runs, yaml_file
from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
from cwl.ruler.ranking import RankingMaker
from cwl.seeker.trec_qrel_handler import TrecQrelHandler

from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels

GOLDEN = Path(__file__).parent / "golden" / "binary"
EXACT = 1e-12
#: (p, rel, k): persistences, binary thresholds (None: relevance_level) and depths
CASES = [(p, rel, k) for p in (0.5, 0.8, 0.95) for rel in (None, 2) for k in (None, 5)]


def metric(p: float, rel: int | None, k: int | None, residual: bool = False) -> str:
    """The canonical label: parameters sorted, defaults dropped."""
    params = [
        f"p={p!r}",
        *([f"rel={rel}"] if rel else []),
        *(["residual=True"] if residual else []),
    ]
    return f"RBP({','.join(params)},variant='rbp_eval')" + (f"@{k}" if k else "")


def ordered(run: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """Each query's documents as irpipe orders them: score descending, then docno descending."""
    return {q: sorted(docs, key=lambda d: (docs[d], d), reverse=True) for q, docs in run.items()}


def write_ordered_run(run: dict[str, dict[str, float]], path: Path, k: int | None = None) -> None:
    """A TREC run in irpipe's order, each ranking cut at k: what rbp_eval and cwl read in order."""
    lines = [
        f"{q} Q0 {d} {i} {run[q][d]!r} t"
        for q, docs in ordered(run).items()
        for i, d in enumerate(docs[:k], 1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_gains(qrels: dict[str, dict[str, int]], rel: int, path: Path) -> None:
    """cwl's gain file: 1 from grade `rel` on, else 0; a negative grade is not judged."""
    lines = [
        f"{q} 0 {d} {int(g >= rel)}" for q, docs in qrels.items() for d, g in docs.items() if g >= 0
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def cwl_rankings(gains: Path, run: Path) -> dict[str, tuple[object, list[float]]]:
    """{qid: (cwl's Ranking, the scores in file order)}, the run read as `cwl-eval` reads it."""
    handler, makers, scores = TrecQrelHandler(str(gains)), {}, {}
    for line in run.read_text().splitlines():
        qid, element, docno, _, score, _ = line.split()
        makers.setdefault(qid, RankingMaker(qid, handler)).add(docno, element)
        scores.setdefault(qid, []).append(float(score))
    return {qid: (maker.get_ranking(), scores[qid]) for qid, maker in makers.items()}


def cwl_rbp(gains: Path, run: Path, p: float) -> dict[str, tuple[float, float]]:
    """{qid: (RBP, residual)}: cwl-eval's expected utility and residual (`-r`)."""
    found = {}
    for qid, (ranking, _) in cwl_rankings(gains, run).items():
        measure = RBPCWLMetric(theta=p)
        measure.residuals = True
        measure.measure(ranking)
        found[qid] = (measure.expected_utility, measure.residual_expected_utility)
    return found


def tied_rbp(gains: Path, run: Path, p: float, k: int | None) -> dict[str, tuple[float, float]]:
    """{qid: (RBP@k, residual@k)} by rbp_eval's rule for ties (a tie's documents share the mean
    of cwl's weights over the ranks it covers; a tie cut by k counts its share within k) over
    cwl's weights and gains (worst case: unjudged gain 0; best case: 1)."""
    found = {}
    for qid, (ranking, scores) in cwl_rankings(gains, run).items():
        weights = RBPCWLMetric(theta=p).w_vector(ranking)
        worst, best = ranking.get_gain_vector(True), ranking.get_gain_vector(False)
        n = len(scores)
        depth = n if k is None else min(k, n)
        value, residual = 0.0, sum(weights[depth:])  # the ranks past the depth: p^depth
        for first, size in _ties(scores):
            share = max(0, min(first + size, depth) - first) / size
            weight = sum(weights[first : first + size]) / size * share
            for i in range(first, first + size):
                value += worst[i] * weight
                residual += (best[i] - worst[i]) * weight
        found[qid] = (value, residual)
    return found


def _ties(scores: list[float]) -> list[tuple[int, int]]:
    """(first index, size) of each run of equal scores."""
    ties, first = [], 0
    for i in range(1, len(scores) + 1):
        if i == len(scores) or scores[i] != scores[first]:
            ties.append((first, i - first))
            first = i
    return ties


@pytest.fixture(scope="module", params=[False, True], ids=["tie_free", "tied"])
def compared(request, tmp_path_factory):
    """irpipe's values per collection and run (with score ties or without), for every case."""
    root = tmp_path_factory.mktemp("rbp_eval")
    found = []
    for seed in range(6):
        directory = root / f"c{seed}"
        directory.mkdir()
        data = generate(seed, queries=14, runs=2, max_grade=3, ties=request.param, extremes=True)
        write_qrels(data.qrels, directory / "qrels.txt")
        for name, run in data.runs.items():
            write_ordered_run(run, directory / f"{name}.txt")
        evaluation = evaluate(_spec(directory, data.runs), write=False)
        per_query = {(r, q, m): v for r, _, q, m, v in evaluation.per_query()}
        means = {(r, m): (v, n) for r, _, m, v, n in evaluation.aggregate()}
        found.append((directory, data, per_query, means, request.param))
    return found


def reference(directory: Path, run: dict, p: float, k: int | None, ties: bool) -> dict:
    """{qid: (RBP@k, residual@k)}: cwl-eval's on the run cut at k, or without ties rbp_eval's
    rule over cwl's weights (gains in directory/gains.txt)."""
    write_ordered_run(run, directory / "cut.txt", None if ties else k)
    if ties:
        return tied_rbp(directory / "gains.txt", directory / "cut.txt", p, k)
    return cwl_rbp(directory / "gains.txt", directory / "cut.txt", p)


def _spec(directory: Path, runs: dict, settings: dict | None = None) -> Path:
    names = [metric(*case, residual=r) for case in CASES for r in (False, True)]
    return yaml_file(directory / "spec.yaml", spec_of_runs(runs, names, settings=settings or {}))


def test_every_query_and_mean_is_rbp_eval_s(compared):
    checked = 0
    for directory, data, per_query, means, ties in compared:
        for p, rel, k in CASES:
            write_gains(data.qrels, rel or 1, directory / "gains.txt")
            for run_name, run in data.runs.items():
                theirs = reference(directory, run, p, k, ties)
                reported = sorted(set(run) & set(data.qrels))  # rbp_eval's queries
                for i, residual in enumerate((False, True)):
                    label = metric(p, rel, k, residual)
                    ours = {q: per_query[run_name, q, label] for q in data.qrels}
                    assert {q for q, v in ours.items() if v is not None} == set(reported)
                    for q in reported:
                        assert math.isclose(ours[q], theirs[q][i], abs_tol=EXACT), (label, q)
                        checked += 1
                    mean = sum(theirs[q][i] for q in reported) / len(reported)
                    assert means[run_name, label][1] == len(reported)
                    assert math.isclose(means[run_name, label][0], mean, abs_tol=EXACT)
    assert checked > 2000


def test_no_query_setting_changes_which_queries_rbp_eval_averages(compared, tmp_path):
    directory, data, _, means, _ = compared[0]
    spec = _spec(directory, data.runs, {"queries": "intersection"})
    again = {(r, m): (v, n) for r, _, m, v, n in evaluate(spec, write=False).aggregate()}
    assert again.keys() == means.keys()
    for key, (value, n) in again.items():  # a sum SQL does not order may differ in its last bit
        assert n == means[key][1] and math.isclose(value, means[key][0], abs_tol=EXACT), key


def _tied_queries(run: Path) -> set[str]:
    """The queries of a run file with two documents of equal score."""
    scores: dict[str, list[float]] = {}
    for line in run.read_text().splitlines():
        qid, _, _, _, score, _ = line.split()
        scores.setdefault(qid, []).append(float(score))
    return {q for q, found in scores.items() if len(set(found)) < len(found)}


def _golden(measure: str) -> dict[str, float]:
    """trec_eval 10.0's per-query values of `measure` on the binary collection (-q, no -c)."""
    lines = (GOLDEN / "all_trec_missing.out").read_text().splitlines()
    rows = [line.split() for line in lines]
    return {q: float(v) for name, q, v in rows if name == measure and q != "all"}


def test_where_the_definitions_meet_trec_eval_s_rbp_and_rbp_resid(tmp_path):
    """Binary grades, no tie: rbp is rbp_eval's RBP. A retrieved unjudged document, no tie:
    rbp_resid is its residual (trec_eval's is 0 when there is none; rbp_eval's is then p^n)."""
    spec = {
        "collections": {"c": {"qrels": str(GOLDEN / "qrels.txt")}},
        "runs": {"r": {"path": str(GOLDEN / "run.trec"), "collection": "c"}},
        "metrics": ["RBP(variant=rbp_eval)", "RBP(variant=rbp_eval,residual=true)"],
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    ours = {
        (q, m): v for _, _, q, m, v in evaluate(tmp_path / "spec.yaml", write=False).per_query()
    }
    rbp, resid = _golden("rbp"), _golden("rbp_resid")
    assert {q for q, m in ours if ours[q, m] is not None} == set(rbp)
    for q in set(rbp) - _tied_queries(GOLDEN / "run.trec"):  # trec_eval breaks ties by docno
        assert abs(ours[q, "RBP(variant='rbp_eval')"] - rbp[q]) <= 5e-5 + EXACT, q
        residual = ours[q, "RBP(residual=True,variant='rbp_eval')"]
        assert abs(residual - resid[q]) <= 5e-5 + EXACT if resid[q] > 0 else residual > 0, q
    assert sum(v > 0 for v in resid.values()) >= 5  # compared, not only skipped


PLAIN = (
    "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 z 1",
    "1 Q0 a 1 4 t\n1 Q0 b 2 3 t\n1 Q0 x 3 2 t\n1 Q0 c 4 1 t",
)
#: a (grade 1), then b (1), x (unjudged) and d (0) tied at score 2, then e (1)
TIED = ("1 0 a 1\n1 0 b 1\n1 0 d 0\n1 0 e 1\n2 0 z 1",
        "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 x 3 2 t\n1 Q0 d 4 2 t\n1 Q0 e 5 1 t")  # fmt: skip
TIE = (1 / 4 + 1 / 8 + 1 / 16) / 3  # the mean weight of ranks 2 to 4 at p = 1/2


@pytest.mark.parametrize(
    ("files", "metric", "expected"),
    [
        # grades 1 (a), 0 (b), unjudged (x), 2 (c) in that order; p = 1/2
        (PLAIN, "RBP(p=0.5,variant=rbp_eval)", 0.5 * (1 + 1 / 8)),
        (PLAIN, "RBP(p=0.5,variant=rbp_eval,rel=2)", 0.5 / 8),
        (PLAIN, "RBP(p=0.5,variant=rbp_eval,residual=true)", 1 / 16 + 0.5 / 4),
        (PLAIN, "RBP(p=0.5,variant=rbp_eval,residual=true)@2", 1 / 4),
        (PLAIN, "RBP(p=0.5,variant=rbp_eval)@3", 0.5),
        # the tie: each of b, x, d weighs TIE; cut at 3, two thirds of it
        (TIED, "RBP(p=0.5,variant=rbp_eval)", 1 / 2 + TIE + 1 / 32),
        (TIED, "RBP(p=0.5,variant=rbp_eval)@3", 1 / 2 + TIE * 2 / 3),
        (TIED, "RBP(p=0.5,variant=rbp_eval,residual=true)", 1 / 32 + TIE),
        (TIED, "RBP(p=0.5,variant=rbp_eval,residual=true)@3", 1 / 8 + TIE * 2 / 3),
    ],
)
def test_worked_examples(tmp_path, files, metric, expected):
    (tmp_path / "q.txt").write_text(files[0] + "\n")
    (tmp_path / "r.txt").write_text(files[1] + "\n")
    spec = {
        "collections": {"c": {"qrels": "q.txt"}},
        "runs": {"r": {"path": "r.txt", "collection": "c"}},
        "metrics": [metric],
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    values = {q: v for _, _, q, _, v in evaluate(tmp_path / "spec.yaml", write=False).per_query()}
    assert values == {"1": pytest.approx(expected, abs=1e-15), "2": None}


def test_a_residual_is_neither_better_higher_nor_lower():
    """The console's best mark, gates and diff plots read `better`: a residual has none."""
    from pipeline.measures.registry import get_registry

    resolve = get_registry().resolve
    assert [m.better for m in resolve("RBP(p=0.8,variant=rbp_eval)")] == ["higher"]
    assert [m.better for m in resolve("RBP(p=0.8,variant=rbp_eval,residual=true)")] == [None]
    assert [m.better for m in resolve("RBP(residual=true)")] == [None]
