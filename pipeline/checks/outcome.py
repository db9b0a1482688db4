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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pipeline.checks.plan import Expectation, GateRule

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
    gate's test; `two_sided` whether an expected value was checked both ways; `several` whether
    the run is evaluated under several collections (its name then says which: `shown_run`). A
    gate on a statistic of the judgment sets' comparisons (`kind` bound, `checks.bounds`) has no
    reference (`against` is `bounds`): `run` is the pair compared (`reference~other`), `metric`
    the statistic, `new` its value, and `low` and `high` its bounds (None: none that side).
    """

    kind: Literal["expect", "gate", "bound"]
    key: str
    run: str
    collection: str
    metric: str
    against: str
    reference: float | None
    new: float | None
    limit: float
    status: Literal["passed", "failed", "skipped"] = "failed"  # until decided
    message: str = ""
    evaluation_id: int | None = None
    p_value: float | None = None
    two_sided: bool = False
    several: bool = False
    low: float | None = None
    high: float | None = None

    def as_record(self) -> dict:
        """As the history keeps it (JSON: a missing or non-finite number is null)."""
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__}
        fields.update(name=self.name, difference=self.difference)
        return {
            k: None if isinstance(v, float) and not math.isfinite(v) else v
            for k, v in fields.items()
        }

    @property
    def difference(self) -> float | None:
        """New minus reference, or None when either is missing."""
        if missing(self.new) or missing(self.reference):
            return None
        return self.new - self.reference

    @property
    def passed(self) -> bool:
        """Whether the check passed (a skipped gate did not, and did not fail either)."""
        return self.status == "passed"

    @property
    def shown_run(self) -> str:
        """The run as reports name it: `bm25`, or `bm25 (human)` for a run evaluated under
        several collections."""
        return f"{self.run} ({self.collection})" if self.several else self.run

    @property
    def name(self) -> str:
        """How the check is named in reports: `gates.0 bm25 nDCG@10` (`gates.0 bm25 (human)
        nDCG@10` for a run evaluated under several collections)."""
        return f"{self.key} {self.shown_run} {self.metric}"


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
    draft = CheckResult(
        kind="expect", key=e.key, run=e.run, collection=collection, metric=e.metric.label,
        against="expected", reference=e.value, new=new, limit=e.tolerance, two_sided=both,
    )  # fmt: skip
    if missing(new):
        return replace(draft, message=f"{e.metric.label} of run '{e.run}' has no value")
    difference = new - e.value
    off = abs(difference) if both else worse_by(difference, e.metric.better)
    limit = f"(tolerance {e.tolerance:g}{', two-sided' if both else ''})"
    if off <= e.tolerance + SLACK:
        message = f"{e.metric.label} is {new:.6g}, expected {e.value:.6g} {limit}"
        return replace(draft, status="passed", message=message)
    how = ("above" if difference > 0 else "below") if both else "worse than"
    message = f"{e.metric.label} is {new:.6g}, {how} the expected {e.value:.6g} by "
    return replace(draft, message=f"{message}{abs(difference):.6g} {limit}")


def gated(
    rule: GateRule,
    run: tuple[str, str],
    values: tuple[float | None, float | None],
    evaluation_id: int | None = None,
    test: Significance | None = None,
) -> CheckResult:
    """The outcome of a gate for `run` (name, collection), given (reference, new) values and,
    for a significant gate, the test of the two."""
    reference, new = values
    p_value = None if test is None else test.p_adjusted
    draft = _draft(rule, run, reference, new, evaluation_id=evaluation_id, p_value=p_value)
    for value, whose in ((new, run[0]), (reference, rule.against)):
        if missing(value):
            return replace(draft, message=f"{rule.metric.label} of run '{whose}' has no value")
    drop = worse_by(new - reference, rule.metric.better)
    change = (
        f"{rule.metric.label} {_changed(drop)} against {_reference(rule, evaluation_id)} "
        f"({reference:.6g} -> {new:.6g})"
    )
    allowed = f"at most {rule.max_drop:g} is allowed"
    if drop <= rule.max_drop + SLACK:
        return replace(draft, status="passed", message=f"{change}; {allowed}")
    if test is not None and not test.significant:
        return replace(
            draft, status="passed", message=f"{change}, not significantly ({_tested(test)})"
        )
    also = f", significantly ({_tested(test)})" if test is not None else ""
    return replace(draft, message=f"{change}{also}; {allowed}")


def skipped(rule: GateRule, run: tuple[str, str], why: str) -> CheckResult:
    """A gate that could not be checked for `run` (name, collection): no previous value, or too
    few shared queries for its test."""
    return replace(_draft(rule, run), status="skipped", message=why)


def _draft(rule: GateRule, run: tuple[str, str], reference=None, new=None, **more) -> CheckResult:
    """A gate's result for `run` (name, collection) before it is decided."""
    name, collection = run
    return CheckResult(
        kind="gate", key=rule.key, run=name, collection=collection, metric=rule.metric.label,
        against=_against(rule), reference=reference, new=new, limit=rule.max_drop, **more,
    )  # fmt: skip


def _against(rule: GateRule) -> str:
    return "previous" if rule.against is None else f"run {rule.against}"


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
    """No value: None (SQL NULL) or NaN."""
    return value is None or math.isnan(value)
