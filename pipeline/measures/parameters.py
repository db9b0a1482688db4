"""A metric string's parameters, as the registry reads them: the cutoffs trec_eval gives a bare
name, `judged_only` (which every SQL measure takes), the canonical string (defaults dropped) and
the message naming a bad parameter."""

from __future__ import annotations

from pydantic import ValidationError

from pipeline.contract.measure import Measure, MeasureParams
from pipeline.contract.metric_names import format_metric
from pipeline.contract.python_measure import PythonMeasure
from pipeline.errors import SpecError
from pipeline.measures.trec_names import default_cutoffs

__all__ = [
    "JUDGED_ONLY",
    "canonical_string",
    "fill_default_cutoffs",
    "parameter_error",
    "parameter_names",
    "split_judged_only",
]


_TREC_CUTOFFS = default_cutoffs()


def fill_default_cutoffs(measure: Measure, values: dict) -> None:
    """A measure that cannot do without a cutoff, given none, takes trec_eval's default cutoffs
    for it: a bare `P` is trec_eval's `P` (P@5 ... P@1000), and `R` is `recall`, so no name works
    bare in trec_eval and fails in a spec."""
    key = measure.cutoff
    if key not in measure.required or values.get(key) is not None:
        return
    trec_key, defaults = _TREC_CUTOFFS.get(measure.name, (None, ()))
    if trec_key == key:
        values[key] = list(defaults)


#: the parameter every SQL measure takes (unless its own Params has it): trec_eval -J for it alone
JUDGED_ONLY = "judged_only"


def split_judged_only(measure: Measure, values: dict, text: str) -> tuple[dict, bool]:
    """The values without `judged_only`, and its value (a boolean; False when not given)."""
    if JUDGED_ONLY in measure.Params.model_fields or JUDGED_ONLY not in values:
        return values, False
    values = dict(values)
    judged_only = values.pop(JUDGED_ONLY)
    if not isinstance(judged_only, bool):
        raise SpecError(f"'{text}': parameter 'judged_only': Input should be true or false")
    if judged_only and not measure.judged_only_applies:
        raise SpecError(
            f"'{text}': {measure.name} takes no judged_only: its value does not rank documents, "
            "so there are no unjudged ones to drop; leave judged_only out"
        )
    if judged_only and isinstance(measure, PythonMeasure):
        raise SpecError(
            f"'{text}': {measure.name} is computed in Python and takes no judged_only; "
            "set judged_only: true in settings to drop unjudged documents for every metric"
        )
    return values, judged_only


def parameter_names(measure: Measure) -> list[str]:
    """The parameters a metric string may give the measure."""
    fields = list(measure.Params.model_fields)
    sql = not isinstance(measure, PythonMeasure)
    return fields + [JUDGED_ONLY] if sql and JUDGED_ONLY not in fields else fields


def canonical_string(measure: Measure, params: MeasureParams, judged_only: bool = False) -> str:
    given = params.model_dump(exclude_defaults=True)
    cutoff = given.pop(measure.cutoff, None) if measure.cutoff else None
    if judged_only:
        given[JUDGED_ONLY] = True
    return format_metric(measure.name, given, cutoff)


def parameter_error(text: str, measure: Measure, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        key = ".".join(str(part) for part in error["loc"])
        if error["type"] == "extra_forbidden":
            allowed = ", ".join(parameter_names(measure))
            problems.append(f"unknown parameter '{key}' of {measure.name}; allowed: {allowed}")
        else:
            problems.append(f"parameter '{key}': {error['msg']}")
    return f"'{text}': " + "; ".join(problems)
