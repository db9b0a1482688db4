"""What a check found: one `CheckResult` per run and metric, and the rules that decide it. Pure.

A difference is always new minus reference. How much worse a value is follows the metric's
direction (`Measure.better`): a drop where higher is better, a rise where lower is better. An
expected value passes when it is no worse than `tolerance` (better by any amount passes, as in
Anserini's regressions) or, two-sided, within `tolerance` either way; a metric with no direction
is always checked both ways. A gate is broken by a worsening beyond `max_drop` (that is also
significant, for a significant gate). Limits are met at their edge: differences are compared with
`SLACK` of room, so that `tolerance: 0.0001` accepts 0.2180 against 0.2179, whose difference is
0.00010000000000000286 in binary floating point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .plan import Expectation, GateRule

__all__ = [
    "SLACK",
    "CheckResult",
    "Significance",
    "expected",
    "gated",
    "missing",
    "skipped",
    "worse_by",
]

SLACK = 1e-12  # far below any printed digit, far above the rounding of a difference near 1


@dataclass(frozen=True)
class CheckResult:
    """One check of one run and metric, as the console, JUnit and the tests read it.

    `against` says what `reference` is: `expected` (the pinned value), `previous` (the run's value
    in the evaluation `evaluation_id` of the history) or `run NAME` (that run's value now);
    `limit` is the tolerance or the largest drop; `p_value` the adjusted p-value of a significant
    gate's test; `two_sided` whether an expected value was checked both ways.
    """

    kind: Literal["expect", "gate"]
    key: str
    run: str
    collection: str
    metric: str
    against: str
    reference: float | None
    new: float | None
    limit: float
    status: Literal["passed", "failed", "skipped"]
    message: str
    evaluation_id: int | None = None
    p_value: float | None = None
    two_sided: bool = False

    @property
    def difference(self) -> float | None:
        """New minus reference, or None when either is missing."""
        if missing(self.new) or missing(self.reference):
            return None
        return self.new - self.reference

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def name(self) -> str:
        """How the check is named in reports: `gates.0 bm25 nDCG@10`."""
        return f"{self.key} {self.run} {self.metric}"


@dataclass(frozen=True)
class Significance:
    """A significant gate's test of one run against its reference."""

    test: str
    p_adjusted: float
    significant: bool


def worse_by(difference: float, better: str | None) -> float:
    """How much worse new is than its reference, given new minus reference."""
    return difference if better == "lower" else -difference


def expected(e: Expectation, collection: str, new: float | None) -> CheckResult:
    """The outcome of an expected value, given the run's aggregate (None: no value)."""
    both = e.two_sided or e.metric.better is None
    found = _result(
        e, "expect", e.run, collection, "expected", e.value, new, e.tolerance, two_sided=both
    )
    if missing(new):
        return found("failed", f"{e.metric.label} of run '{e.run}' has no value")
    difference = new - e.value
    off = abs(difference) if both else worse_by(difference, e.metric.better)
    sided = ", two-sided" if both else ""
    if off <= e.tolerance + SLACK:
        return found(
            "passed",
            f"{e.metric.label} is {new:.6g}, expected {e.value:.6g} "
            f"(tolerance {e.tolerance:g}{sided})",
        )
    how = ("above" if difference > 0 else "below") if both else "worse than"
    return found(
        "failed",
        f"{e.metric.label} is {new:.6g}, {how} the expected {e.value:.6g} by "
        f"{abs(difference):.6g} (tolerance {e.tolerance:g}{sided})",
    )


def gated(
    rule: GateRule,
    run: tuple[str, str],
    values: tuple[float | None, float | None],
    evaluation_id: int | None = None,
    test: Significance | None = None,
) -> CheckResult:
    """The outcome of a gate for `run` (name, collection), given (reference, new) values and,
    for a significant gate, the test of the two."""
    against = "previous" if rule.against is None else f"run {rule.against}"
    reference, new = values
    found = _result(
        rule,
        "gate",
        *run,
        against,
        reference,
        new,
        rule.max_drop,
        evaluation_id,
        None if test is None else test.p_adjusted,
    )
    for value, whose in ((new, run[0]), (reference, rule.against)):
        if missing(value):
            return found("failed", f"{rule.metric.label} of run '{whose}' has no value")
    drop = worse_by(new - reference, rule.metric.better)
    change = (
        f"{rule.metric.label} {_changed(drop)} against {_reference(rule, evaluation_id)} "
        f"({reference:.6g} -> {new:.6g})"
    )
    if drop <= rule.max_drop + SLACK:
        return found("passed", f"{change}; at most {rule.max_drop:g} is allowed")
    if test is not None and not test.significant:
        return found("passed", f"{change}, not significantly ({_tested(test)})")
    also = f", significantly ({_tested(test)})" if test is not None else ""
    return found("failed", f"{change}{also}; at most {rule.max_drop:g} is allowed")


def skipped(rule: GateRule, run: tuple[str, str], why: str) -> CheckResult:
    """A gate that could not be checked for `run` (name, collection): no previous value, or too
    few shared queries for its test."""
    against = "previous" if rule.against is None else f"run {rule.against}"
    return _result(rule, "gate", *run, against, None, None, rule.max_drop)("skipped", why)


def _result(
    check,
    kind: str,
    run: str,
    collection: str,
    against: str,
    reference,
    new,
    limit: float,
    evaluation_id=None,
    p_value=None,
    two_sided=False,
):
    """A CheckResult with everything but its status and message."""

    def make(status: str, message: str) -> CheckResult:
        return CheckResult(
            kind,
            check.key,
            run,
            collection,
            check.metric.label,
            against,
            reference,
            new,
            limit,
            status,
            message,
            evaluation_id,
            p_value,
            two_sided,
        )

    return make


def _changed(drop: float) -> str:
    if drop > 0:
        return f"dropped by {drop:.6g}"
    return f"improved by {-drop:.6g}" if drop < 0 else "did not change"


def _reference(rule: GateRule, evaluation_id: int | None) -> str:
    if rule.against is not None:
        return f"run '{rule.against}'"
    return f"evaluation {evaluation_id} (the previous one in the history)"


def _tested(test: Significance) -> str:
    return f"{test.test} test, adjusted p = {test.p_adjusted:.4g}"


def missing(value: float | None) -> bool:
    return value is None or math.isnan(value)
