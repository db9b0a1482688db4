"""An evaluation's steps, in order, as data: `pipeline.run.evaluation.evaluate` runs the stages
`stages` lists for a plan, and `irpipe compile` prints the same list, so what compile explains
is what runs (sqlmesh's plan stages, visited by its evaluator and its explainer alike).

Each stage is named for what it does; a stage the plan has no part for (no history, no pools, no
checks) is not in the list. A new step of every evaluation is a stage here and a function of
that name in `evaluation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.run.evaluation_plan import EvaluationPlan

__all__ = ["Stage", "stages"]


@dataclass(frozen=True)
class Stage:
    """One step of an evaluation: its `name` (the function `evaluate` runs for it) and what it
    does for this plan, in words (`irpipe compile`)."""

    name: str
    does: str


def stages(plan: EvaluationPlan, keeping: bool | None = None, writing: bool = True) -> list[Stage]:
    """The stages of evaluating `plan`, in order; `keeping`: with a history (the spec's, or
    `--history`; by default, whether the spec has one); `writing`: with its outputs."""
    history = plan.history
    keeping = history is not None if keeping is None else keeping
    found = [
        Stage("connect", f"open the {plan.engine} engine"),
        Stage("describe", "digest every input, for the provenance and the history's keys"),
        *_when(keeping, "reuse", "take the history's unchanged runs and the previous values"),
        *_when(bool(plan.tunings), "tune", "choose the tuned runs' weights by cross-validation"),
        Stage("execute", "read, rank and measure every run" + (", and pool" if plan.pools else "")),
        *_when(bool(plan.pools), "pool", "finish the pools' tables"),
        *_when(plan.comparing is not None, "compare", "compare the runs"),
        *_when(
            plan.judging is not None,
            "agree",
            "compare the judgment sets' labels, and the orderings of the runs",
        ),  # fmt: skip
        *_when(_checks(plan), "check", "decide the expected values and gates"),
        *_when(keeping, "record", "append the evaluation and its checks in one transaction"),
        *_when(writing and bool(plan.outputs), "write", "write every output, all or none"),
    ]
    dashboard = keeping and history is not None and history.dashboard is not None
    return found + _when(dashboard, "dashboard", "write the history's dashboard")


def _when(present: bool, name: str, does: str) -> list[Stage]:
    return [Stage(name, does)] if present else []


def _checks(plan: EvaluationPlan) -> bool:
    checks = plan.checks
    return checks is not None and bool(checks.expect or checks.gates or checks.bounds)
