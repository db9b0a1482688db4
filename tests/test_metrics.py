"""Every measure and parameter on small hand-checked cases (inline TREC text)."""

from __future__ import annotations

import math

import pytest

# One query, five retrieved documents; grades: a=2, b=0, (c unjudged), d=1, e=-1 (negative), and
# judged but never retrieved: f=3, g=0. Scores tie between b and c: docno descending puts c first.
QRELS = """
1 0 a 2
1 0 b 0
1 0 d 1
1 0 e -1
1 0 f 3
1 0 g 0
2 0 x 1
"""
RUN = """
1 Q0 a 1 5.0 t
1 Q0 b 2 4.0 t
1 Q0 c 3 4.0 t
1 Q0 d 4 3.0 t
1 Q0 e 5 2.0 t
"""
# Ranked: a(2) c(-1) b(0) d(1) e(-2).  R = 3 (a, d, f); judged non-relevant = 2 (b, g).
L2 = 1 / math.log2(2)
CASES = [
    ("P@2", 1 / 2),
    ("P@10", 2 / 10),
    ("P(rel=2)@5", 1 / 5),
    ("R@4", 2 / 3),
    ("R(rel=2)@5", 1 / 2),  # rel >= 2: a and f
    ("SetP", 2 / 5),
    ("SetR", 2 / 3),
    ("SetF", 2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3)),
    ("SetF(beta=0.5)", 1.25 * (2 / 5) * (2 / 3) / (0.25 * (2 / 5) + 2 / 3)),
    ("SetP@3", 1 / 3),
    ("SetF(beta=2)@1", 5 * 1 * (1 / 3) / (4 * 1 + 1 / 3)),
    ("NumRet", 5),
    ("NumRet@3", 3),
    ("NumRel", 3),
    ("NumRel(rel=2)", 2),
    ("NumRelRet", 2),
    ("AP", (1 + 2 / 4) / 3),
    ("AP@2", 1 / 3),
    ("AP(variant='capped')@2", 1 / 2),
    ("AP(rel=2)", 1 / 2),
    ("IPrec@0.0", 1),
    ("IPrec@0.5", 1 / 2),  # lround(1.5) = 2 relevant: best precision from rank 4 on
    ("IPrec(rounding='ceil')@0.5", 1 / 2),
    ("IPrec@1.0", 0),  # f is never retrieved
    ("RR", 1),
    ("RR(rel=3)", 0),
    ("SearchLength", 1),
    ("Rprec", 1 / 3),  # top 3: a, c, b
    ("Bpref", (1 + (1 - 1 / 2)) / 3),  # d is preceded by b: min(1, 3) / min(2, 3)
    ("Success@1", 1),
    ("Success(rel=3)@5", 0),
    ("CG@4", 3),
    ("CG(gain='exponential')", 4),
    ("DCG@4", 2 + 1 / math.log2(5)),
    ("DCG(discount='jarvelin')@4", 2 + 1 / math.log2(4)),
    ("DCG(gain={1:10,2:20})", 20 + 10 / math.log2(5)),
    ("nDCG", (2 + 1 / math.log2(5)) / (3 + 2 / math.log2(3) + 1 / math.log2(4))),
    ("nDCG@1", 2 / 3),
    ("nDCG(gain='exponential')@2", 3 / (7 + 3 / math.log2(3))),
    ("nDCG(discount='jarvelin')@2", 2 / (3 + 2 / math.log2(2))),
    (
        "nDCG(gain={0:0,1:1,2:1,3:1})",
        (1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / math.log2(4)),
    ),
    ("Fallout@3", 2 / (100 - 3)),  # c and b are not relevant; num_docs = 100
]


@pytest.mark.parametrize(("metric", "expected"), CASES)
def test_measure_on_hand_checked_query(evaluate_trec, metric, expected):
    per_query, _ = evaluate_trec(QRELS, RUN, [{"metric": metric, "label": "m"}], num_docs=100)
    assert per_query["1", "m"] == pytest.approx(expected, abs=1e-12)


def test_missing_query_scores_zero_but_keeps_num_rel(evaluate_trec):
    per_query, aggregate = evaluate_trec(QRELS, RUN, ["AP", "NumRel", "SearchLength"])
    assert per_query["2", "AP"] == 0
    assert per_query["2", "NumRel"] == 1
    assert per_query["2", "SearchLength"] is None
    assert aggregate["AP"] == (pytest.approx((1 + 2 / 4) / 3 / 2), 2)
    assert aggregate["NumRel"] == (4, 2)
    assert aggregate["SearchLength"] == (1, 1)  # undefined values are not averaged


def test_intersection_averages_only_answered_queries(evaluate_trec):
    _, aggregate = evaluate_trec(QRELS, RUN, ["AP"], {"queries": "intersection"})
    assert aggregate["AP"] == (pytest.approx((1 + 2 / 4) / 3), 1)


def test_run_only_queries_are_ignored(evaluate_trec):
    run = RUN + "\n99 Q0 a 1 1.0 t"
    per_query, aggregate = evaluate_trec(QRELS, run, ["P@1"])
    assert {q for q, _ in per_query} == {"1", "2"}


def test_relevance_level_setting_applies_to_binary_measures_only(evaluate_trec):
    settings = {"relevance_level": 2}
    per_query, _ = evaluate_trec(QRELS, RUN, ["AP", "P(rel=1)@5", "nDCG@1"], settings)
    assert per_query["1", "AP"] == pytest.approx(1 / 2)
    assert per_query["1", "P(rel=1)@5"] == pytest.approx(2 / 5)
    assert per_query["1", "nDCG@1"] == pytest.approx(2 / 3)


def test_ties_break_by_docno_descending_bytewise(evaluate_trec):
    qrels = "1 0 10 1\n1 0 9 0"
    run = "1 Q0 10 1 1.0 t\n1 Q0 9 2 1.0 t"  # bytewise "9" > "10": 9 ranks first
    per_query, _ = evaluate_trec(qrels, run, ["RR"])
    assert per_query["1", "RR"] == 1 / 2


def test_ordering_rank_uses_the_rank_column(evaluate_trec):
    qrels = "1 0 a 1\n1 0 b 0"
    run = "1 Q0 a 2 9.0 t\n1 Q0 b 1 1.0 t"
    per_query, _ = evaluate_trec(qrels, run, ["RR"], {"ordering": "rank"})
    assert per_query["1", "RR"] == 1 / 2


def test_compatibility_9_ties_scores_equal_in_float32(evaluate_trec):
    qrels = "1 0 a 1\n1 0 b 0"
    run = "1 Q0 a 1 1.0000000001 t\n1 Q0 b 2 1.0 t"  # equal as float32; docno b > a
    per_query, _ = evaluate_trec(qrels, run, ["RR"], {"compatibility": "trec_eval-9"})
    assert per_query["1", "RR"] == 1 / 2
    per_query, _ = evaluate_trec(qrels, run, ["RR"])
    assert per_query["1", "RR"] == 1


def test_query_with_no_relevant_documents_scores_zero(evaluate_trec):
    per_query, _ = evaluate_trec(
        "1 0 a 0", "1 Q0 a 1 1 t", ["AP", "nDCG@5", "R@5", "Rprec", "Bpref"]
    )
    assert all(value == 0 for value in per_query.values())


def test_rr_with_cutoff(evaluate_trec):
    qrels = "1 0 a 0\n1 0 b 1"
    run = "1 Q0 a 1 2 t\n1 Q0 b 2 1 t"
    per_query, _ = evaluate_trec(qrels, run, ["RR@1", "RR@2"])
    assert (per_query["1", "RR@1"], per_query["1", "RR@2"]) == (0, 1 / 2)


def test_gzip_inputs_read_like_plain_ones(tmp_path, evaluate_trec):
    import gzip

    plain, _ = evaluate_trec(QRELS, RUN, ["AP", "nDCG@3"])
    for name, text in (("q.txt.gz", QRELS), ("r.trec.gz", RUN)):
        with gzip.open(tmp_path / name, "wt") as handle:
            handle.write(text.strip() + "\n")
    from pipeline.run.evaluation import evaluate

    spec = tmp_path / "gz.yaml"
    spec.write_text(
        "collections: {c: {qrels: q.txt.gz}}\nruns: {r: {path: r.trec.gz, collection: c}}\n"
        "metrics: [AP, nDCG@3]\n"
    )
    zipped = {(q, m): v for _, _, q, m, v in evaluate(spec, write=False).per_query()}
    assert zipped == plain
