"""An evaluation's steps, in order, as data: `pipeline.run.evaluation.evaluate` runs the stages
`stages` lists for a plan, and `irpipe compile` prints the same list, so what compile explains
is what runs (sqlmesh's plan stages, visited by its evaluator and its explainer alike).

Each stage is named for what it does; a stage the plan has no part for (no history, no pools, no
checks) is not in the list. `StageName` is the one list of the names: a new step of every
evaluation is a name there, a stage here, and its function in `evaluation`, whose table of
functions (`by_stage`) refuses a name missing or extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pipeline.run.evaluation_plan import EvaluationPlan

__all__ = ["Stage", "StageName", "by_stage", "stages"]

_T = TypeVar("_T")


class StageName(StrEnum):
    """Every stage's name, in the order an evaluation runs them."""

    CONNECT = "connect"
    DESCRIBE = "describe"
    REUSE = "reuse"
    TUNE = "tune"
    EXECUTE = "execute"
    POOL = "pool"
    COMPARE = "compare"
    AGREE = "agree"
    REPRODUCE = "reproduce"
    CHECK = "check"
    RECORD = "record"
    WRITE = "write"
    DASHBOARD = "dashboard"


def by_stage(functions: Mapping[StageName, _T]) -> dict[StageName, _T]:
    """`functions`, one for each stage's name: a TypeError (when the module that builds it is
    imported) if a name is missing or is not a stage's."""
    missing = [name.value for name in StageName if name not in functions]
    extra = [repr(name) for name in functions if not isinstance(name, StageName)]
    if missing or extra:
        raise TypeError(
            f"stage functions: missing: {', '.join(missing) or 'none'}; "
            f"not a StageName: {', '.join(extra) or 'none'}"
        )
    return dict(functions)


@dataclass(frozen=True)
class Stage:
    """One step of an evaluation: its `name` (the function `evaluate` runs for it) and what it
    does for this plan, in words (`irpipe compile`)."""

    name: StageName
    does: str


def stages(plan: EvaluationPlan, keeping: bool | None = None, writing: bool = True) -> list[Stage]:
    """The stages of evaluating `plan`, in order; `keeping`: with a history (the spec's, or
    `--history`; by default, whether the spec has one); `writing`: with its outputs."""
    history = plan.history
    keeping = history is not None if keeping is None else keeping
    found = [
        Stage(StageName.CONNECT, f"open the {plan.engine} engine"),
        Stage(StageName.DESCRIBE, "digest every input, for the provenance and the history's keys"),
        *_when(
            keeping, StageName.REUSE, "take the history's unchanged runs and the previous values"
        ),
        *_when(
            bool(plan.tunings), StageName.TUNE, "choose the tuned runs' weights by cross-validation"
        ),
        Stage(
            StageName.EXECUTE,
            "read, rank and measure every run" + (", and pool" if plan.pools else ""),
        ),
        *_when(bool(plan.pools), StageName.POOL, "finish the pools' tables"),
        *_when(_comparing(plan), StageName.COMPARE, _compares(plan)),
        *_when(
            plan.agreement is not None,
            StageName.AGREE,
            "compare the judgment sets' labels, and the orderings of the runs",
        ),  # fmt: skip
        *_when(
            plan.reproduction is not None,
            StageName.REPRODUCE,
            "measure how far the reproductions reproduce the original runs",
        ),
        *_when(_checks(plan), StageName.CHECK, "decide the expected values and gates"),
        *_when(
            keeping, StageName.RECORD, "append the evaluation and its checks in one transaction"
        ),
        *_when(writing and bool(plan.outputs), StageName.WRITE, "write every output, all or none"),
    ]
    dashboard = keeping and history is not None and history.dashboard is not None
    return found + _when(dashboard, StageName.DASHBOARD, "write the history's dashboard")


def _when(present: bool, name: StageName, does: str) -> list[Stage]:
    return [Stage(name, does)] if present else []


def _comparing(plan: EvaluationPlan) -> bool:
    return plan.comparing is not None or plan.discriminating is not None


def _compares(plan: EvaluationPlan) -> str:
    both = [
        *(["compare the runs"] if plan.comparing is not None else []),
        *(["count the pairs of runs each test tells apart"] if plan.discriminating else []),
    ]
    return ", and ".join(both)


def _checks(plan: EvaluationPlan) -> bool:
    checks = plan.checks
    return checks is not None and bool(checks.expect or checks.gates or checks.bounds)
