"""C/W/L measures (pipeline/metrics/cwl) against cwl_eval 1.0.12, the tool that defines them.

Three ways: irpipe's conformance kit with cwl_eval's own Python classes as the reference, on
generated hard collections (ties, grades 0..4, negative judgments, unjudged documents, queries
missing from runs, emptied rankings), every measure with and without its residual, to 1e-9; the
`cwl-eval` command itself on generated TREC files, at the 4 decimals it prints; and worked
examples small enough to check by hand.
"""

from __future__ import annotations

import logging
import math
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest
from cwl.ruler.measures.cwl_bpm import BPMCWLMetric
from cwl.ruler.measures.cwl_dcg import NDCGCWLMetric
from cwl.ruler.measures.cwl_insq import INSQCWLMetric
from cwl.ruler.measures.cwl_inst import INSTCWLMetric
from cwl.ruler.measures.cwl_nerr import (
    NERReq8CWLMetric,
    NERReq9CWLMetric,
    NERReq10CWLMetric,
    NERReq11CWLMetric,
)
from cwl.ruler.measures.cwl_tbg import TBGCWLMetric
from cwl.ruler.measures.cwl_umeasure import UMeasureCWLMetric
from cwl.ruler.ranking import Ranking

from pipeline.api import Query
from pipeline.measures.registry import get_registry
from pipeline.metrics.cwl import BPM, INSQ, INST, NERR8, NERR9, NERR10, NERR11, SDCG, TBG, U
from pipeline.metrics.cwl.gains import BEST, WORST, CWLParams, gain
from pipeline.notebook import evaluate
from pipeline.synthetic import generate
from pipeline.testing import check_measure

logging.getLogger("cwl").disabled = True  # cwl_eval logs every vector at DEBUG

#: irpipe's measure -> cwl_eval's metric class, built from irpipe's parameters
CWL_EVAL = {
    "INST": lambda p: INSTCWLMetric(p.T),
    "INSQ": lambda p: INSQCWLMetric(p.T),
    "BPM": lambda p: BPMCWLMetric(p.T, p.K),
    "NERR8": lambda p: NERReq8CWLMetric(p.k),
    "NERR9": lambda p: NERReq9CWLMetric(p.k),
    "NERR10": lambda p: NERReq10CWLMetric(p.p),
    "NERR11": lambda p: NERReq11CWLMetric(p.T),
    "SDCG": lambda p: NDCGCWLMetric(p.k),
    "U": lambda p: UMeasureCWLMetric(p.L),
    "TBG": lambda p: TBGCWLMetric(p.halflife),
}


def cwl_gain(p: CWLParams, grade: int) -> float:
    """The gain a C/W/L user would write in cwl_eval's gain file for a grade (NaN: unjudged)."""
    if grade == -1:
        return math.nan
    if grade < 0:
        return 0.0
    if p.gains and grade in p.gains:
        return p.gains[grade]
    return min(grade, p.max_rel) / p.max_rel


def cwl_eval_value(name: str):
    """The conformance kit's reference: cwl_eval's own classes on the query's ranking."""

    def reference(p, query: Query) -> float:
        gains = np.array([cwl_gain(p, g) for g in query.grades], dtype=float)
        ranking = Ranking("q", gains, np.full(len(gains), np.nan), max_n=p.max_depth)
        metric = CWL_EVAL[name](p)
        metric.residuals = p.residual
        metric.measure(ranking)
        return metric.residual_expected_utility if p.residual else metric.expected_utility

    return reference


GRADED = "gains={1:0.25,2:0.5,3:0.75,4:1.0}"
# Each measure's first metric at cwl_eval's depth (1000: its reference, padding to that depth in
# Python, costs most of the time), the others at depths past the rankings' 40 documents or
# within them.
KIT = [
    (INST, ["INST(residual=True)", "INST(T=0.5,max_depth=50)",
            "INST(T=3.0,max_rel=4.0,max_depth=50)",
            f"INST(T=2.0,residual=True,{GRADED},max_depth=50)",
            "INST(max_depth=15,residual=True)"]),
    (INSQ, ["INSQ(residual=True)", "INSQ(T=2.0,max_rel=4.0,max_depth=50)",
            f"INSQ(residual=True,{GRADED},max_depth=15)"]),
    (BPM, ["BPM(residual=True)", "BPM(T=2.0,max_depth=50)@20",
           "BPM(T=1.5,max_rel=4.0,max_depth=50)@5",
           f"BPM(T=3.0,residual=True,{GRADED},max_depth=50)@20",
           "BPM(T=3.0,max_depth=12,residual=True)@20"]),
    (NERR8, ["NERR8(residual=True)@10", "NERR8(max_rel=4.0,max_depth=50)@5",
             f"NERR8(residual=True,{GRADED},max_depth=6)@10"]),
    (NERR9, ["NERR9(residual=True)@10", "NERR9(max_rel=4.0,max_depth=50)@5",
             f"NERR9(residual=True,{GRADED},max_depth=6)@10"]),
    (NERR10, ["NERR10(residual=True)", "NERR10(p=0.5,max_rel=4.0,max_depth=50)",
              f"NERR10(p=0.8,residual=True,{GRADED},max_depth=15)"]),
    (NERR11, ["NERR11(residual=True)", "NERR11(T=2.0,max_rel=4.0,max_depth=50)",
              f"NERR11(residual=True,{GRADED},max_depth=15)"]),
    (SDCG, ["SDCG(residual=True)@10", "SDCG(max_rel=4.0,max_depth=50)@5",
            f"SDCG(residual=True,{GRADED},max_depth=6)@10"]),
    (U, ["U(residual=True)", "U(L=20.0,max_rel=4.0,max_depth=50)",
         f"U(L=10.0,residual=True,{GRADED},max_depth=15)"]),
    (TBG, ["TBG(residual=True)", "TBG(halflife=5.0,max_rel=4.0,max_depth=50)",
           f"TBG(halflife=3.0,residual=True,{GRADED},max_depth=15)"]),
]  # fmt: skip


@pytest.mark.parametrize(("measure", "metrics"), KIT, ids=[m.name for m, _ in KIT])
def test_every_measure_and_residual_equals_cwl_eval_s_classes(measure, metrics):
    check_measure(measure, cwl_eval_value(measure.name), metrics, collections=6)


# -- the cwl-eval command ----------------------------------------------------------------------
#: irpipe's metric (gains: grade / 3, as ir_measures' max_rel) and cwl_eval's line for it
COMMAND = [
    ("INST(T=1.0,max_rel=3.0)", "INSTCWLMetric(1.0)"),
    ("INST(T=0.5,max_rel=3.0)", "INSTCWLMetric(0.5)"),
    ("INSQ(T=2.0,max_rel=3.0)", "INSQCWLMetric(2.0)"),
    ("BPM(T=1.0,max_rel=3.0)@10", "BPMCWLMetric(1.0,10)"),
    ("BPM(T=2.0,max_rel=3.0)@20", "BPMCWLMetric(2.0,20)"),
    ("NERR8(max_rel=3.0)@10", "NERReq8CWLMetric(10)"),
    ("NERR9(max_rel=3.0)@10", "NERReq9CWLMetric(10)"),
    ("NERR10(p=0.9,max_rel=3.0)", "NERReq10CWLMetric(0.9)"),
    ("NERR11(T=2.0,max_rel=3.0)", "NERReq11CWLMetric(2.0)"),
    ("SDCG(max_rel=3.0)@10", "NDCGCWLMetric(10)"),
    ("U(L=50.0,max_rel=3.0)", "UMeasureCWLMetric(50.0)"),
    ("TBG(halflife=20.0,max_rel=3.0)", "TBGCWLMetric(20.0)"),
]
PRINTED = 0.5e-4 + 1e-12  # cwl-eval prints 4 decimals


def write_gains(qrels: dict, path: Path) -> None:
    """cwl_eval's gain file for grades 0..3 read as grade / 3 (negative judgments gain 0)."""
    lines = [f"{q} 0 {d} {max(g, 0) / 3!r}" for q, docs in qrels.items() for d, g in docs.items()]
    path.write_text("\n".join(lines) + "\n")


def write_ranked(run: dict, path: Path, docnos: str = "descending") -> None:
    """A TREC run, each query's lines by score descending, tied scores by docno (bytewise)
    descending (irpipe's order) or ascending, ranks numbering the lines."""

    def ordered(docs: dict) -> list:
        if docnos == "descending":
            return sorted(docs.items(), key=lambda item: (item[1], item[0].encode()), reverse=True)
        return sorted(docs.items(), key=lambda item: (-item[1], item[0].encode()))

    lines = [
        f"{q} Q0 {d} {i} {s!r} r"
        for q, docs in run.items()
        for i, (d, s) in enumerate(ordered(docs), 1)
    ]
    path.write_text("\n".join(lines) + "\n")


def cwl_eval_command(tmp_path: Path, gains: Path, run: Path) -> dict[tuple[str, int], tuple]:
    """(qid, metric's position in COMMAND) -> (EU, ResEU) as `cwl-eval -r` prints them."""
    metrics = tmp_path / "metrics.txt"
    metrics.write_text("".join(f"{line}\n" for _, line in COMMAND))
    script = Path(sys.executable).parent / "cwl-eval"
    done = subprocess.run(
        [sys.executable, str(script), str(gains), str(run), "-m", str(metrics), "-r"],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    )  # fmt: skip
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    seen: dict[str, int] = {}
    printed = {}
    for row in rows:  # each query's lines come in the order of the metrics file
        i = seen[row[0]] = seen.get(row[0], -1) + 1
        printed[row[0], i] = (float(row[2]), float(row[7]))
    return printed


def irpipe_values(qrels: Path, run: Path, **settings) -> dict[tuple[str, int], tuple]:
    """(qid, metric's position in COMMAND) -> (value, residual), irpipe's."""
    metrics = []
    for i, (metric, _) in enumerate(COMMAND):
        metrics += [{"metric": metric, "label": f"eu{i}"}, {"metric": metric, "label": f"res{i}",
                                                            "residual": True}]  # fmt: skip
    table = evaluate(qrels=str(qrels), runs={"r": str(run)}, metrics=metrics, settings=settings)
    values = {(r.qid, r.metric): r.value for r in table.per_query().itertuples()}
    qids = {qid for qid, _ in values}
    return {
        (q, i): (values[q, f"eu{i}"], values[q, f"res{i}"])
        for q in qids
        for i in range(len(COMMAND))
    }


@pytest.mark.parametrize("seed", [3, 4])
def test_the_cwl_eval_command_prints_the_same_values(tmp_path, seed):
    data = generate(seed, queries=20, runs=1, max_grade=3)
    run = next(iter(data.runs.values()))
    write_gains(data.qrels, tmp_path / "gains.txt")
    write_ranked(run, tmp_path / "run.txt")
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in data.qrels.items() for d, g in docs.items())
    )
    printed = cwl_eval_command(tmp_path, tmp_path / "gains.txt", tmp_path / "run.txt")
    ours = irpipe_values(tmp_path / "qrels.txt", tmp_path / "run.txt")
    compared = [key for key in printed if key[0] in data.qrels]
    assert len(compared) > 10 * len(COMMAND)
    for key in compared:
        for got, want in zip(ours[key], printed[key], strict=True):
            assert abs(got - want) <= PRINTED, (key, COMMAND[key[1]][0], ours[key], printed[key])
    # cwl_eval prints nothing for a query the run lacks: irpipe scores it 0, residual 1, as
    # cwl_eval's classes do an empty ranking.
    missing = set(data.qrels) - set(run)
    assert missing
    assert {ours[q, i] for q in missing for i in range(len(COMMAND))} == {(0.0, 1.0)}


def test_cwl_eval_reads_the_file_s_order_which_ordering_rank_follows(tmp_path):
    """cwl_eval reads a run's lines in the file's order, never its scores: a file listing tied
    documents by docno ascending is read so by cwl_eval, and by irpipe under `ordering: rank`
    (ranks numbering the lines), but not under irpipe's default order (docno descending)."""
    data = generate(5, queries=20, runs=1, max_grade=3)
    write_gains(data.qrels, tmp_path / "gains.txt")
    write_ranked(next(iter(data.runs.values())), tmp_path / "run.txt", "ascending")
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in data.qrels.items() for d, g in docs.items())
    )
    printed = cwl_eval_command(tmp_path, tmp_path / "gains.txt", tmp_path / "run.txt")
    by_rank = irpipe_values(tmp_path / "qrels.txt", tmp_path / "run.txt", ordering="rank")
    by_score = irpipe_values(tmp_path / "qrels.txt", tmp_path / "run.txt")
    keys = [key for key in printed if key[0] in data.qrels]
    assert all(
        abs(got - want) <= PRINTED
        for key in keys
        for got, want in zip(by_rank[key], printed[key], strict=True)
    )
    assert any(abs(by_score[key][0] - printed[key][0]) > PRINTED for key in keys)


# -- worked examples ------------------------------------------------------------------------------
QRELS = "1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 n -1\n"
RUN = "1 Q0 b 1 4 r\n1 Q0 a 2 3 r\n1 Q0 x 3 2 r\n1 Q0 c 4 1 r\n1 Q0 n 5 0 r\n"


@pytest.mark.parametrize(
    ("metric", "value"),
    [
        # Gains b 0.5, a 1, x unjudged, c 0, n judged negative: 0. G: 0.5, 1.5, ...
        ("BPM(max_rel=2.0)", 1.5 / 2),  # G(2) >= T = 1: two documents read
        ("BPM(max_rel=2.0,residual=True)", 0.0),  # x is never read
        ("BPM(T=2.0,max_rel=2.0)", 1.5 / 10),  # never G >= 2: K = 10 documents read
        ("BPM(T=2.0,max_rel=2.0,residual=True)", 2.5 / 3 - 1.5 / 10),  # x gaining 1: 3 read
        ("NERR8(max_rel=2.0)@2", (0.5 + 0.5 * 1) / (1 + 0.5)),  # C(1) = 1 - 0.5
        ("NERR8(max_rel=2.0,residual=True)@2", 0.0),
        ("SDCG(max_rel=2.0)@2", (0.5 + 1 / math.log2(3)) / (1 + 1 / math.log2(3))),
        # Gains as written: b 0.25, a 1, then 3 positions (x unjudged) of 5 with weight 1 - 0.2i
        ("U(L=5.0,gains={1:0.25,2:1.0},max_depth=6)", (0.25 + 0.8) / 3),
        ("U(L=5.0,gains={1:0.25,2:1.0},max_depth=6,residual=True)", (0.6 + 0.0 + 0.0) / 3),
    ],
)
def test_worked_examples(tmp_path, metric, value):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    table = evaluate(
        qrels=str(tmp_path / "qrels.txt"), runs={"r": str(tmp_path / "run.txt")}, metrics=[metric]
    ).per_query()
    assert table.value.tolist() == pytest.approx([value], abs=1e-15)


# -- gains, directions ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "worst", "best"),
    [
        ({}, [0, 0, 0.0, 0.25, 0.7, 1, 1], [1, 0, 0.0, 0.25, 0.7, 1, 1]),
        ({"max_rel": 4.0}, [0, 0, 0.0, 0.0625, 0.175, 0.25, 0.625], None),
        ({"gains": {1: 0.5}}, [0, 0, 0.0, 0.25, 0.7, 0.5, 1], None),
    ],
)
def test_decimal_grades_are_read_as_they_are(params, worst, best):
    """Grades are not assumed to be integers (`grades: real`): decimal grades in [0, 1] are
    gains as cwl_eval reads them; relv -1 is unjudged, -2 judged negatively."""
    p = CWLParams.model_validate(params)
    relv = "(VALUES (-1.0), (-2.0), (0.0), (0.25), (0.7), (1.0), (2.5)) t(relv)"
    for case, want in ((WORST, worst), (BEST, best)):
        if want is not None:
            got = duckdb.sql(f"SELECT {gain(p, case)} FROM {relv}").fetchall()
            assert [g for (g,) in got] == pytest.approx(want, abs=1e-15)


def test_a_residual_marks_no_best_run():
    value, residual = (get_registry().resolve(text)[0] for text in ("INST", "INST(residual=true)"))
    assert (value.better, residual.better) == ("higher", None)
    assert residual.canonical == "INST(residual=True)"
