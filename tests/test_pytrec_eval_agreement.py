"""Differential tests: irpipe against pytrec_eval (trec_eval 9.x inside) on generated collections.

Every generated collection has score ties (also float32-only ties), graded and negative judgments,
unjudged retrieved documents, queries without relevant documents, queries missing from a run and
run-only queries. The metrics are trec_eval's `all_trec` set, translated by the same code as
`irpipe trec-eval`, so the names and parameters are checked too.
"""

from __future__ import annotations

import math

import pytest
import pytrec_eval
from pytrec_eval_ext import RelevanceEvaluator as TrecEvalCore

from pipeline.measures.trec_names import select
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run
from pipeline.trec_eval.command import parse, printed

NOT_IN_PYTREC_EVAL = {"runid", "relstring", "rbp", "rbp_resid", "unj"}
SELECTED = [s for s in select(["all_trec"]) if s.measure.name not in NOT_IN_PYTREC_EVAL]
METRICS = [{"metric": m, "label": label, **p} for s in SELECTED for label, m, p in s.outputs]
SUMMED = {s.outputs[0][0] for s in SELECTED if s.measure.integer}
LOGGED = {"gm_map", "gm_bpref"}  # pytrec_eval reports ln(max(value, 1e-5)) per query


def _irpipe(tmp_path, write_spec, collections, settings):
    """Evaluate every collection (a list) in one spec: collection i is `c<i>`, its runs
    `<i>/<name>`; per-query and aggregate values keyed by (i, run name, ...)."""
    spec = {"collections": {}, "runs": {}, "settings": settings, "metrics": METRICS}
    for i, collection in enumerate(collections):
        write_qrels(collection.qrels, tmp_path / f"qrels{i}.txt")
        spec["collections"][f"c{i}"] = {"qrels": f"qrels{i}.txt"}
        for name, run in collection.runs.items():
            write_run(run, tmp_path / f"{i}_{name}.trec", tag=name)
            spec["runs"][f"{i}/{name}"] = {"path": f"{i}_{name}.trec", "collection": f"c{i}"}
    evaluation = evaluate(write_spec(spec), write=False)
    per_query = {(*_key(r), q, m): v for r, _, q, m, v in evaluation.per_query()}
    aggregate = {(*_key(r), m): (v, n) for r, _, m, v, n in evaluation.aggregate()}
    return per_query, aggregate


def _key(run: str) -> tuple[int, str]:
    index, name = run.split("/", 1)
    return int(index), name


def _pytrec(collection, level, judged_only):
    names = {s.measure.name for s in SELECTED}
    evaluator = pytrec_eval.RelevanceEvaluator(
        collection.qrels, names, relevance_level=level, judged_docs_only_flag=judged_only
    )
    return {name: evaluator.evaluate(run) for name, run in collection.runs.items()}


def _same(ours, theirs) -> bool:
    if math.isnan(theirs):
        return ours is not None and math.isnan(ours)
    return ours == pytest.approx(theirs, abs=1e-9)


def _summary(metric, values):
    if metric in SUMMED:
        return sum(values)
    if metric in LOGGED:
        return pytrec_eval.compute_aggregated_measure(metric, values)
    return math.fsum(values) / len(values)


SEEDS = range(12)


@pytest.mark.parametrize(("level", "judged_only"), [(1, False), (2, False), (1, True), (2, True)])
def test_every_shared_measure_equals_pytrec_eval(tmp_path, write_spec, level, judged_only):
    """12 generated collections, evaluated in one spec (one evaluation per setting, not 48)."""
    collections = [generate(seed) for seed in SEEDS]
    settings = {
        "compatibility": "trec_eval-9",
        "relevance_level": level,
        "judged_only": judged_only,
    }
    per_query, aggregate = _irpipe(tmp_path, write_spec, collections, settings)
    for i, collection in enumerate(collections):
        for run, results in _pytrec(collection, level, judged_only).items():
            _check_run(per_query, aggregate, (i, run), results)


def _check_run(per_query, aggregate, run: tuple[int, str], results: dict) -> None:
    """Every per-query value and aggregate of one run (collection index, name) against
    pytrec_eval's `results`."""
    assert {q for (*r, q, _) in per_query if tuple(r) == run} == set(results)
    for qid, values in results.items():
        for metric in (m["label"] for m in METRICS):
            ours = per_query[(*run, qid, metric)]
            if metric in LOGGED:
                ours = math.log(max(ours, 1e-5))
            assert _same(ours, values[metric]), (run, qid, metric, ours, values[metric])
    for metric in (m["label"] for m in METRICS):
        want = _summary(metric, [values[metric] for values in results.values()])
        value, n = aggregate[(*run, metric)]
        assert _same(value, want) and n == len(results), (run, metric, value, want)


def test_trec_eval_10_mode_equals_pytrec_eval_where_they_agree(tmp_path, write_spec):
    """Without float32-only ties, 10.0 and 9.x differ only in iprec/11pt recall rounding and in
    the query set; both are fixed here to isolate everything else."""
    collections = [generate(seed, float32_ties=False) for seed in range(100, 110)]
    per_query, _ = _irpipe(tmp_path, write_spec, collections, {"queries": "intersection"})
    for i, collection in enumerate(collections):
        for run, results in _pytrec(collection, 1, False).items():
            for qid, values in results.items():
                for metric in (m["label"] for m in METRICS):
                    if metric.startswith(("iprec_at_recall", "11pt_avg")):
                        continue
                    ours = per_query[i, run, qid, metric]
                    ours = math.log(max(ours, 1e-5)) if metric in LOGGED else ours
                    assert _same(ours, values[metric]), (i, run, qid, metric)


# -- the trec_eval door, byte for byte ---------------------------------------------------------
# `irpipe trec-eval` on 17 runs of 50 Robust-shaped queries (grades 0-2, negative judgments, ties,
# unjudged documents, topics a run lacks), against trec_eval's print of pytrec_eval's doubles
# (`%-22s\t%s\t%6.4f`, the summary summed in qid order as trec_eval sums). pytrec_eval is
# trec_eval 9.x: 10.0 differs only in iprec_at_recall and 11pt_avg (lround), checked in 9.x mode.

ROBUST = generate(2003, queries=50, runs=17, max_grade=2, float32_ties=False)
PARAMETRISED = [
    "P.5,10,7",
    "recall.3,25",
    "ndcg_cut.5,23",
    "map_cut.7,50",
    "relative_P.3,8",
    "success.1,3",
    "Rprec_mult.0.5,1.5",
    "utility.2,-1,0.5,0",
    "ndcg.-1=1,-2=3,1=2",
    "ndcg_rel.-2=1,0=1",
    "G.0=0.5,-1=2",
    "Rndcg.2=1,1=3",
]
DOOR_CASES = {
    "10.0 -c, all_trec": (["-c", "-m", "all_trec"], "all_trec"),
    "10.0 -c, parameters": (["-c", *(f"-m{m}" for m in PARAMETRISED), "-mset_F.2"], ""),
    "9.x, all_trec": (["--compatibility", "9", "-m", "all_trec"], "all_trec"),
    "9.x -l2 -J, parameters": (
        ["--compatibility", "9", "-l2", "-J", "-mset_F.0.5", "-m11pt_avg..25,.5,.75"]
        + ["-miprec_at_recall..15,.33,.7", *(f"-m{m}" for m in PARAMETRISED)],
        "",
    ),
}
# TrecEvalCore is pytrec_eval's own class, without the wrapper that refuses -m parameters it
# cannot parse (gains as key=value pairs, negative numbers: ndcg.-1=1, utility.2,-1,0,0).
BOGUS = {"ceci_nest_pas_un_docno": 1.0}  # trec_eval -c's ranking for a topic the run lacks
LOST_IN_10 = {"iprec_at_recall", "11pt_avg"}  # 9.x's recall rounding: no 10.0 reference


@pytest.fixture(scope="module")
def robust_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("robust")
    write_qrels(ROBUST.qrels, folder / "qrels.txt")
    for name, run in ROBUST.runs.items():
        write_run(run, folder / f"{name}.trec", tag=name)
    return folder / "qrels.txt", [folder / f"{name}.trec" for name in ROBUST.runs]


@pytest.mark.parametrize("case", sorted(DOOR_CASES))
def test_trec_eval_door_prints_trec_eval_bytes(robust_files, case):
    """Every measure pytrec_eval shares with `-m all_trec` and each parametrised form: the door's
    text equals trec_eval's, line for line (the other measures are left out of both)."""
    flags, nickname = DOOR_CASES[case]
    qrels, runs = robust_files
    options = parse([*flags, "-q", str(qrels), str(runs[0])])
    text = printed(options, runs).splitlines()
    expected = _trec_eval_text(options, [nickname] if nickname else options.measures)
    shared = {line.split("\t")[0] for line in expected}
    ours = [line for line in text if line.split("\t")[0] in shared]
    assert len(ours) == len(expected)
    wrong = [(a, b) for a, b in zip(ours, expected, strict=True) if a != b]
    assert not wrong, f"{len(wrong)} lines differ, e.g. {wrong[:3]}"


def _trec_eval_text(options, arguments: list[str]) -> list[str]:
    """trec_eval's lines for every run of ROBUST, from pytrec_eval's per-query doubles."""
    nine = options.compatibility == "trec_eval-9"
    dropped = NOT_IN_PYTREC_EVAL | (set() if nine else LOST_IN_10)
    selected = [s for s in select(arguments) if s.measure.name not in dropped]
    names = {s.measure.name for s in selected}
    wanted = [a for a in arguments if a.partition(".")[0] in names]
    if arguments == ["all_trec"]:
        wanted = sorted(names)
    # -c zeroes these for a lacking topic, by exact name: `utility_2,-1,0,0` keeps its value
    reset = {"num_ret", "utility"} & {label for s in selected for label, *_ in s.outputs}
    lines = []
    for name, run in ROBUST.runs.items():
        if options.complete:  # -c: a lacking topic is scored on trec_eval's bogus ranking
            run = {qid: run.get(qid, BOGUS) for qid in ROBUST.qrels}
        values = TrecEvalCore(
            ROBUST.qrels, set(wanted), options.level, options.judged_only
        ).evaluate(run)
        for qid in ROBUST.qrels if options.complete else ():
            if qid not in ROBUST.runs[name]:
                values[qid].update(dict.fromkeys(reset, 0.0))
        lines += _printed(selected, values)
    return lines


def _printed(selected, values: dict[str, dict[str, float]]) -> list[str]:
    qids = sorted(values)  # bytewise, as trec_eval orders topics
    rows = [(s, label) for s in selected for label, *_ in s.outputs]
    lines = [
        _line(s, label, qid, values[qid][_pytrec_name(s, label)])
        for qid in qids
        for s, label in rows
        if s.measure.per_query
    ]
    for s, label in rows:
        total = 0.0
        for qid in qids:  # trec_eval's sum: sequential, in topic order
            total += values[qid][_pytrec_name(s, label)] if s.measure.name != "num_q" else 1
        if s.measure.name.startswith("gm_"):
            total = math.exp(total / len(qids))
        elif not s.measure.integer:
            total /= len(qids)
        lines.append(_line(s, label, "all", total))
    return lines


def _pytrec_name(selected, label: str) -> str:
    """pytrec_eval's name of a value: trec_eval's label, bare for a measure of listed values."""
    return label if selected.measure.kind in ("long_cut", "double_cut") else selected.measure.name


def _line(selected, label: str, qid: str, value: float) -> str:
    if selected.measure.integer:
        return f"{label:<22}\t{qid}\t{int(value)}"
    return f"{label:<22}\t{qid}\t{'  -nan' if math.isnan(value) else f'{value:6.4f}'}"
