"""Rank-biased precision (Moffat and Zobel) and its residual, as trec_eval computes them."""

from __future__ import annotations

from pydantic import Field

from ..api import Columns, Measure, MeasureParams, double, grade_literal, hookimpl


class RBPParams(MeasureParams):
    p: float = Field(0.9, gt=0, lt=1, description="persistence: chance of reading on")
    gain: dict[int | float, float] | None = Field(
        None, description="{grade: gain} replacing grades (trec_eval rbp.1=0.5,...)"
    )


def _scaled_gain(p: RBPParams, c: Columns) -> str:
    """trec_eval rescales the query's gain table to [0, 1] when a gain leaves it: (g − min)/(max − min),
    with min and max taken over the table and 0. Grades outside the table (unjudged) gain 0."""
    mapping = p.gain or {}
    values = "".join(f", {double(v)}" for v in mapping.values())
    high = f"greatest(0, {_largest_linear_grade(c, mapping)}{values})"
    low = f"least(0{values})"
    whens = " ".join(
        f"WHEN relv = {grade_literal(g)} THEN {double(v)}" for g, v in sorted(mapping.items())
    )
    raw = f"(CASE {whens} WHEN relv >= 0 THEN CAST(relv AS DOUBLE) END)"
    scaled = (
        f"CASE WHEN {low} < 0 OR {high} > 1 THEN ({raw} - {low}) / ({high} - {low}) ELSE {raw} END"
    )
    return f"coalesce({scaled}, 0)"


def _largest_linear_grade(c: Columns, mapping: dict[int | float, float]) -> str:
    """The largest grade of the query's gain table that the mapping leaves at its linear gain
    (0 if none). As trec_eval's, the table holds every integer from 0 to the highest grade
    judged (`top`); under `grades: real`, the grades judged (0 and up)."""
    top = c.max_grade()
    if not mapping:
        return top
    keys = ", ".join(grade_literal(k) for k in mapping)
    if c.grades == "real":
        unmapped = f"list_filter({c.qrels_grades()}, lambda g: g >= 0 AND g NOT IN ({keys}))"
        return f"coalesce(list_max({unmapped}), 0)"
    whens = " ".join(
        f"WHEN {top} - {i} >= 0 AND {top} - {i} NOT IN ({keys}) THEN {top} - {i}"
        for i in range(len(mapping) + 1)  # at most len(mapping) grades are taken
    )
    return f"CASE {whens} ELSE 0 END"


class RBP(Measure[RBPParams]):
    """(1 − p) · Σ gain(rank) · p^(rank−1), gains scaled to [0, 1] per query as trec_eval does.

    trec_eval 10.0 reads two uninitialised variables here (its output depends on the measure
    computed before); irpipe implements the intended definition, min and max over the gains and 0.
    """

    judged_rows_suffice = True

    name = "RBP"
    description = "rank-biased precision with persistence p"
    Params = RBPParams

    def needs(self, p: RBPParams, c: Columns):
        table = (c.qrels_grades(),) if p.gain and c.grades == "real" else ()
        return (c.max_grade(), *table)

    def per_query(self, p: RBPParams, c: Columns) -> str:
        terms = f"{_scaled_gain(p, c)} * pow({double(p.p)}, rank - 1)"
        return f"(1.0 - {double(p.p)}) * coalesce(sum({terms}), 0)"


class RBPResidParams(MeasureParams):
    p: float = Field(0.9, gt=0, lt=1, description="persistence: chance of reading on")


class RBPResid(Measure[RBPResidParams]):
    """The RBP residual: how much RBP could rise if every unjudged retrieved document (and every
    document past the end) were fully relevant; 0 when nothing retrieved is unjudged."""

    name = "RBPResid"
    better = None  # the uncertainty of RBP, not a quality
    description = "rank-biased precision residual (unjudged and unseen documents)"
    Params = RBPResidParams

    def per_query(self, p: RBPResidParams, c: Columns) -> str:
        persistence = double(p.p)
        unjudged = f"sum(pow({persistence}, rank - 1)) FILTER (WHERE relv < 0)"
        residual = f"pow({persistence}, count(*)) + (1 - {persistence}) * {unjudged}"
        return f"(CASE WHEN count(*) FILTER (WHERE relv < 0) > 0 THEN {residual} ELSE 0 END)"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [RBP, RBPResid]
