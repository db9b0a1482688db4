"""The worked examples of the course material this project is built on, checked to their digits."""

from __future__ import annotations

import pytest
from conftest import ranking

TOPIC1 = ranking("1", {1, 3, 4, 5, 6, 10}, 10)
TOPIC2 = ranking("2", {1, 6, 10}, 10)


def test_precision_at_each_rank_and_ap_topic1(evaluate_trec):
    per_query, _ = evaluate_trec(*TOPIC1, [{"metric": "P", "k": list(range(1, 11))}, "AP"])
    expected = [1.00, 0.50, 0.67, 0.75, 0.80, 0.83, 0.71, 0.63, 0.56, 0.60]
    # The course rounds half up (5/8 -> .63), so compare to within half a unit of the last digit.
    assert [per_query["1", f"P@{k}"] for k in range(1, 11)] == pytest.approx(expected, abs=0.0051)
    assert per_query["1", "AP"] == pytest.approx((1 + 2 / 3 + 3 / 4 + 4 / 5 + 5 / 6 + 6 / 10) / 6)
    assert per_query["1", "AP"] == pytest.approx(0.78, abs=0.0051)


def test_eleven_point_ap_textbook_and_trec_eval_rounding(evaluate_trec):
    metrics = [
        {"metric": "AP", "variant": "interpolated_11pt", "rounding": "ceil", "label": "textbook"},
        {"metric": "AP", "variant": "interpolated_11pt", "label": "trec_eval"},
        {"metric": "11pt_avg", "label": "11pt_avg"},
    ]
    per_query, _ = evaluate_trec(*TOPIC1, metrics)
    # recall >= r: 1 at r <= 0.1, 5/6 up to r = 0.8, 0.6 at 0.9 and 1.0 -> 0.82
    assert per_query["1", "textbook"] == pytest.approx((2 + 7 * 5 / 6 + 2 * 0.6) / 11)
    assert per_query["1", "textbook"] == pytest.approx(0.82, abs=0.0051)
    # trec_eval 10.0 counts lround(r*6) relevant documents: r = 0.2 needs only 1, r = 0.9 only 5.
    assert per_query["1", "trec_eval"] == pytest.approx((3 + 7 * 5 / 6 + 0.6) / 11)
    assert per_query["1", "11pt_avg"] == per_query["1", "trec_eval"]


def test_map_over_two_topics(evaluate_trec):
    qrels, run = (a + "\n" + b for a, b in zip(TOPIC1, TOPIC2, strict=True))
    per_query, aggregate = evaluate_trec(qrels, run, ["AP"])
    assert per_query["2", "AP"] == pytest.approx(0.54, abs=0.0051)
    assert aggregate["AP"] == (pytest.approx((per_query["1", "AP"] + per_query["2", "AP"]) / 2), 2)
    assert aggregate["AP"][0] == pytest.approx(0.66, abs=0.0051)


def test_ap_system2_topic2(evaluate_trec):
    per_query, _ = evaluate_trec(*ranking("2", {2, 5, 7}, 10), ["AP"])
    assert per_query["2", "AP"] == pytest.approx((1 / 2 + 2 / 5 + 3 / 7) / 3)
    assert per_query["2", "AP"] == pytest.approx(0.44, abs=0.0051)


GRADES = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]


def test_graded_dcg_and_ndcg_exponential(evaluate_trec):
    run = "\n".join(f"1 Q0 d{i} {i} {100 - i} s" for i in range(1, 11))
    qrels = "\n".join(f"1 0 d{i} {g}" for i, g in enumerate(GRADES, 1))
    metric = {"gain": "exponential", "k": list(range(1, 11))}
    metrics = [{"metric": "DCG", **metric}, {"metric": "nDCG", **metric}]
    per_query, _ = evaluate_trec(qrels, run, metrics)
    dcg = [7.00, 8.89, 12.39, 12.39, 12.39, 12.75, 13.75, 14.70, 16.80, 16.80]
    ndcg = [1.00, 0.78, 0.83, 0.76, 0.71, 0.69, 0.73, 0.78, 0.90, 0.90]
    name = "{}(gain='exponential')@{}"
    assert [per_query["1", name.format("DCG", k)] for k in range(1, 11)] == pytest.approx(
        dcg, abs=0.0051
    )
    assert [per_query["1", name.format("nDCG", k)] for k in range(1, 11)] == pytest.approx(
        ndcg, abs=0.0051
    )


def test_mrr_over_three_queries(evaluate_trec):
    parts = [ranking(q, {first}, 6) for q, first in (("1", 2), ("2", 1), ("3", 5))]
    qrels, run = ("\n".join(p[i] for p in parts) for i in (0, 1))
    _, aggregate = evaluate_trec(qrels, run, ["RR", "SearchLength"])
    assert aggregate["RR"] == (pytest.approx((1 / 2 + 1 + 1 / 5) / 3), 3)
    assert aggregate["RR"][0] == pytest.approx(0.57, abs=0.0051)
    assert aggregate["SearchLength"] == (pytest.approx(8 / 3), 3)


def test_recall_at_each_rank(evaluate_trec):
    per_query, _ = evaluate_trec(
        *ranking("1", {2, 4, 5, 7}, 8), [{"metric": "R", "k": list(range(1, 9))}]
    )
    assert [per_query["1", f"R@{k}"] for k in range(1, 9)] == [0, 0.25, 0.25, 0.5, 0.75, 0.75, 1, 1]
