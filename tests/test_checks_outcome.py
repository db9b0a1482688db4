"""The rules that decide a check, on values given directly: limits met at their edge (decimal
tolerances against binary differences), directions, missing values, and how a failure reads."""

from __future__ import annotations

import math

import pytest

from pipeline.checks.outcome import Significance, expected, gated, worse_by
from pipeline.checks.plan import Expectation, GateRule, Target
from pipeline.checks.rows import table_rows, tally

AP = Target("AP", "mean", "higher")
FALLOUT = Target("Fallout@10", "mean", "lower")
NUMRET = Target("NumRet", "sum", None)


def expectation(value: float, tolerance: float, metric: Target = AP, two_sided: bool = False):
    return Expectation("expect.0", "spec.yaml:3: expect.0", "bm25", "c", metric, value, tolerance,
                       two_sided)  # fmt: skip


def gate(max_drop: float, metric: Target = AP, against: str | None = "bm25") -> GateRule:
    runs = (("dense", "c"),)
    return GateRule("gates.0", "spec.yaml:9: gates.0", metric, max_drop, against, runs, False)


@pytest.mark.parametrize(
    ("new", "status"),
    [(0.2178, "passed"), (0.2180, "passed"), (0.21781, "passed"), (0.2177, "failed"),
     (0.217799, "failed"), (0.9, "passed")],
)  # fmt: skip
def test_a_decimal_tolerance_is_met_at_its_edge(new, status):
    # 0.2179 - 0.2178 is 0.00010000000000000286 in binary: still within a tolerance of 0.0001
    assert 0.2179 - 0.2178 > 0.0001
    assert expected(expectation(0.2179, 0.0001), "c", new).status == status


@pytest.mark.parametrize(("new", "status"), [(0.2180, "passed"), (0.2178, "passed"),
                                             (0.21801, "failed"), (0.21779, "failed")])  # fmt: skip
def test_two_sided_fails_beyond_the_tolerance_either_way(new, status):
    assert expected(expectation(0.2179, 0.0001, two_sided=True), "c", new).status == status


@pytest.mark.parametrize(("new", "status"), [(0.10, "passed"), (0.13, "failed")])
def test_an_expected_value_of_a_lower_is_better_metric(new, status):
    assert expected(expectation(0.12, 0.001, FALLOUT), "c", new).status == status


@pytest.mark.parametrize(("new", "status"), [(80.0, "passed"), (81.0, "failed"), (79.0, "failed")])
def test_a_count_is_checked_both_ways_whatever_two_sided_says(new, status):
    result = expected(expectation(80.0, 0.5, NUMRET), "c", new)
    assert (result.status, result.two_sided) == (status, True)


@pytest.mark.parametrize("new", [None, math.nan])
def test_no_value_fails(new):
    result = expected(expectation(0.2, 1.0), "c", new)
    assert (result.status, result.message) == ("failed", "AP of run 'bm25' has no value")


def test_a_failed_expectation_says_by_how_much_and_which_way():
    result = expected(expectation(0.2179, 0.0001), "c", 0.2150)
    assert result.message == "AP is 0.215, worse than the expected 0.2179 by 0.0029 (tolerance 0.0001)"  # fmt: skip
    assert result.difference == pytest.approx(-0.0029)
    above = expected(expectation(0.2179, 0.0001, two_sided=True), "c", 0.2200)
    assert above.message.startswith("AP is 0.22, above the expected 0.2179 by 0.0021")


@pytest.mark.parametrize(("new", "status"), [(0.300 - 0.005, "passed"), (0.300 - 0.00501, "failed"),
                                             (0.9, "passed")])  # fmt: skip
def test_a_gate_allows_max_drop_exactly(new, status):
    assert gated(gate(0.005), ("dense", "c"), (0.300, new)).status == status


@pytest.mark.parametrize(
    ("new", "status"), [(0.105, "passed"), (0.10501, "failed"), (0.0, "passed")]
)
def test_a_gate_on_a_lower_is_better_metric_is_broken_by_a_rise(new, status):
    assert gated(gate(0.005, FALLOUT), ("dense", "c"), (0.100, new)).status == status


def test_a_significant_gate_fails_on_a_significant_drop_only():
    values = (0.3, 0.2)
    quiet = gated(gate(0.0), ("dense", "c"), values, test=Significance("t", 0.2, False))
    loud = gated(gate(0.0), ("dense", "c"), values, test=Significance("t", 0.01, True))
    assert (quiet.status, loud.status) == ("passed", "failed")
    assert loud.message == (
        "AP dropped by 0.1 against run 'bm25' (0.3 -> 0.2), significantly (t test, adjusted "
        "p = 0.01); at most 0 is allowed"
    )
    # a significant improvement is no regression
    better = gated(gate(0.0), ("dense", "c"), (0.2, 0.3), test=Significance("t", 0.01, True))
    assert better.status == "passed"


def test_a_gate_against_previous_names_the_evaluation():
    result = gated(gate(0.0, against=None), ("dense", "c"), (0.3, 0.29), evaluation_id=17)
    assert result.message.startswith("AP dropped by 0.01 against evaluation 17 (the previous")
    assert table_rows([result])[0][3] == "evaluation 17"


def test_a_missing_reference_run_value_fails():
    result = gated(gate(0.0), ("dense", "c"), (math.nan, 0.3))
    assert (result.status, result.message) == ("failed", "AP of run 'bm25' has no value")


def test_worse_by_follows_the_direction():
    assert worse_by(-0.1, "higher") == 0.1 and worse_by(-0.1, "lower") == -0.1


def test_the_rows_and_tally_of_a_table():
    results = [expected(expectation(0.5, 0.001), "c", 0.25), expected(expectation(80.0, 0, NUMRET), "c", 79.0)]  # fmt: skip
    assert table_rows(results) == [
        ("expect.0", "bm25", "AP", "expected", "0.500000", "0.250000", "-0.250000", "worse by <= 0.001"),
        ("expect.0", "bm25", "NumRet", "expected", "80", "79", "-1", "+/- 0"),
    ]  # fmt: skip
    passed = expected(expectation(0.5, 0.001), "c", 0.5)
    assert tally(results) == "2 of 2 checks failed"
    assert tally([*results, passed]) == "2 of 3 checks failed, 1 passed"
    assert tally([passed]) == "1 passed"
