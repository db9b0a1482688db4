"""Worked examples, computed by hand, and the parameters each measure accepts."""

from __future__ import annotations

import pytest

from pipeline import SpecError
from pipeline.api import Need

# Query 1: the ranking is z (no qrels line), b (2), a (4), c (a negative grade), e (no line).
# Query 2 is missing from the run; query 3 has no relevant document.
QRELS = """
1 0 a 4
1 0 b 2
1 0 c -1
1 0 d 0
2 0 x 1
3 0 y 0
"""
RUN = """
1 Q0 z 1 9 t
1 Q0 b 2 8 t
1 Q0 a 3 7 t
1 Q0 c 4 6 t
1 Q0 e 5 5 t
3 Q0 y 1 1 t
"""

CASES = [
    # R(2) = 3/16 at rank 2; R(4) = 15/16 at rank 3, reached with 1 - 3/16
    ("usermodels.ERR@20", {"1": 3 / 16 / 2 + 15 / 16 * 13 / 16 / 3, "2": 0, "3": 0}),
    ("usermodels.ERR@2", {"1": 3 / 16 / 2, "2": 0, "3": 0}),
    ("usermodels.ERR", {"1": 3 / 16 / 2 + 15 / 16 * 13 / 16 / 3, "2": 0, "3": 0}),
    # max_grade 2: R(2) = 3/4, and grade 4 counts as 2
    ("usermodels.ERR(max_grade=2)@20", {"1": 3 / 4 / 2 + 3 / 4 * 1 / 4 / 3, "2": 0, "3": 0}),
    # b, a and c (negative) are judged; 5 documents retrieved, 2 in the top 2, 1 for query 3
    ("Judged@10", {"1": 3 / 5, "2": 0, "3": 1}),
    ("Judged@2", {"1": 1 / 2, "2": 0, "3": 1}),
    ("Judged", {"1": 3 / 5, "2": 0, "3": 1}),
]


@pytest.mark.parametrize(("metric", "expected"), CASES, ids=[m for m, _ in CASES])
def test_hand_computed_values(evaluate_trec, metric, expected):
    values = evaluate_trec(QRELS, RUN, [metric])
    assert {q: values[q, metric] for q in expected} == pytest.approx(expected, abs=1e-15)


def test_compat_by_hand(evaluate_trec):
    """Ideal [2, 1]; the ranking x (unjudged), a (2), b (1): O = 0, 1, 2 over depth D = 3."""
    qrels, run = "1 0 a 2\n1 0 b 1", "1 Q0 x 1 3 t\n1 Q0 a 2 2 t\n1 Q0 b 3 1 t"
    metrics = ["Compat(p=0.5)", "Compat(normalize=False,p=0.5)", "Compat(p=1.0)"]
    values = evaluate_trec(qrels, run, metrics)
    found = 1 / 2 * 1 / 2 + 1 / 4 * 2 / 3  # sum p^(d-1) O(d)/d at p = 1/2
    best = 1 + 1 / 2 + 1 / 4 * 2 / 3  # the ideal's own O = 1, 2, 2
    assert values["1", "Compat(p=0.5)"] == pytest.approx(found / best, abs=1e-15)
    assert values["1", "Compat(normalize=False,p=0.5)"] == pytest.approx(found / (7 / 4), abs=1e-15)
    assert values["1", "Compat(p=1.0)"] == pytest.approx(
        (1 / 2 + 2 / 3) / (1 + 1 + 2 / 3), abs=1e-15
    )


def test_an_ideal_ranking_has_compat_1(evaluate_trec):
    qrels, run = "1 0 a 2\n1 0 b 1\n1 0 c 0", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t"
    values = evaluate_trec(qrels, run, ["Compat", "Compat(normalize=False)"])
    assert (values["1", "Compat"], values["1", "Compat(normalize=False)"]) == (1.0, 1.0)


@pytest.mark.parametrize(
    "metric",
    [
        "Compat(p=0)",
        "Compat(p=1.5)",
        "Compat(normalize=1)",
        "usermodels.ERR(max_grade=0)",
        "Judged(rel=1)",
    ],
)
def test_bad_parameters_are_spec_errors(evaluate_trec, metric):
    with pytest.raises(SpecError, match=r"Compat|ERR|Judged"):
        evaluate_trec(QRELS, RUN, [metric])


def test_defaults_drop_out_of_the_names(evaluate_trec):
    metrics = ["Compat(p=0.95,normalize=True)", "usermodels.ERR(max_grade=4)@20", "Judged@10"]
    assert {m for _, m in evaluate_trec(QRELS, RUN, metrics)} == {
        "Compat",
        "usermodels.ERR@20",
        "Judged@10",
    }


def test_err_declares_its_window_column_under_the_plugins_name():
    from irpipe_usermodels import ERR
    from irpipe_usermodels.err import ERRParams

    [need] = ERR().needs(ERRParams(max_grade=3), None)
    assert isinstance(need, Need) and (str(need), need.kind) == ("usermodels_err_reach_3", "window")
