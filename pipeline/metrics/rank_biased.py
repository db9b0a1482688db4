"""Rank-biased precision (Moffat and Zobel) and its residual: as trec_eval computes them, and as
rbp_eval does (`variant='rbp_eval'`).

rbp_eval (William Webber's C tool for Moffat and Zobel's RBP, read from its version 0.5) gives
each query, w_i = (1 - p) p^(i-1) being the weight of rank i,

    RBP@k      = sum_{i <= min(n, k)} g_i * w_i
    residual@k = p^min(n, k) + sum_{unjudged i <= min(n, k)} w_i

with g_i 1 for a grade of at least the relevance level and 0 otherwise (its default on integer
grades, `-a`, or `-b level`). The residual is what RBP could still gain: the weight of the unjudged
documents and of the ranks past the ranking's end. Tied documents (rbp_eval's default `-s`: equal
scores; `-r`: equal ranks in the file) each weigh the mean weight of the ranks the tie covers, times
the share of those ranks within k when k cuts the tie. A negative grade is a document pooled but
not judged, as in trec_eval: unjudged, gain 0 (rbp_eval refuses negative grades). rbp_eval prints
only the queries the run answers that the qrels judge, and averages those (`reported_queries`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from ..api import Columns, LevelParams, Measure, MeasureParams, double, grade_literal, hookimpl
from .reported_queries import answered, answered_needs


class RBPParams(LevelParams):
    """RBP's parameters; `rel` (from LevelParams) is rbp_eval's threshold, read only by it."""

    p: float = Field(0.9, gt=0, lt=1, description="persistence: chance of reading on")
    gain: dict[int | float, float] | None = Field(
        None, description="{grade: gain} replacing grades (trec_eval rbp.1=0.5,...)"
    )
    k: int | None = Field(None, gt=0, description="depth: only the first k ranks count")
    residual: bool = Field(
        False, description="the residual (unjudged and unseen documents' weight) instead of RBP"
    )
    variant: Literal["standard", "rbp_eval"] = Field(
        "standard",
        description="standard: trec_eval's rbp and rbp_resid; rbp_eval: rbp_eval's",
        validate_default=True,  # rel without variant=rbp_eval is checked too
    )

    @field_validator("variant")
    @classmethod
    def _one_gain_rule(cls, variant: str, info: ValidationInfo) -> str:
        """trec_eval scales grades (or `gain`); rbp_eval makes them binary at `rel`."""
        if variant == "rbp_eval" and info.data.get("gain") is not None:
            raise ValueError("variant 'rbp_eval' makes grades binary at rel; remove gain")
        if variant == "standard" and info.data.get("rel") is not None:
            raise ValueError("rel is rbp_eval's threshold; add variant=rbp_eval, or remove rel")
        return variant


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
    """(1 − p) · Σ gain(rank) · p^(rank−1), or its residual (`residual=true`): under
    `variant='standard'` gains scaled to [0, 1] per query as trec_eval does, and the residual as
    trec_eval's rbp_resid (`RBPResid`); under `variant='rbp_eval'`, rbp_eval's (module docstring).

    trec_eval 10.0 reads two uninitialised variables here (its output depends on the measure
    computed before); irpipe implements the intended definition, min and max over the gains and 0.
    """

    judged_rows_suffice = True

    name = "RBP"
    description = "rank-biased precision with persistence p (or its residual)"
    Params = RBPParams
    cutoff = "k"

    def judged_only_ok(self, p: RBPParams) -> bool:
        # trec_eval's residual counts every unjudged row, and rbp_eval's ties every tied row.
        return super().judged_only_ok(p) and p.variant == "standard" and not p.residual

    def needs(self, p: RBPParams, c: Columns):
        if p.variant == "rbp_eval":
            return (*answered_needs(c), c.tie_first(), c.tie_size())
        if p.residual:
            return ()
        table = (c.qrels_grades(),) if p.gain and c.grades == "real" else ()
        return (c.max_grade(), *table)

    def per_query(self, p: RBPParams, c: Columns) -> str:
        if p.variant == "rbp_eval":
            return rbp_eval(p, c)
        if p.residual:
            return trec_eval_residual(p.p, c, p.k)
        persistence = double(p.p)
        terms = f"{_scaled_gain(p, c)} * pow({persistence}, rank - 1)"
        total = f"coalesce(sum({terms}) FILTER (WHERE {c.within(p.k)}), 0)"
        return f"(1.0 - {persistence}) * {total}"

    def missing(self, p: RBPParams, c: Columns) -> str:
        if p.variant == "rbp_eval":  # nothing judged retrieved: everything is residual
            return answered(c, self.empty(p, c))
        return "0"

    def empty(self, p: RBPParams, c: Columns) -> str:
        return "1" if p.residual and p.variant == "rbp_eval" else "0"


def rbp_eval(p: RBPParams, c: Columns) -> str:
    """rbp_eval's RBP@k, or its residual (module docstring): each row weighs the mean weight of
    the ranks its tie covers, first to first + size - 1, times the share of them within k."""
    persistence, first, size = double(p.p), c.tie_first(), c.tie_size()
    weight = f"pow({persistence}, {first} - 1) * (1 - pow({persistence}, {size})) / {size}"
    if p.k is not None:
        weight += f" * greatest(0, least({first} + {size} - 1, {int(p.k)}) - {first} + 1) / {size}"
    if p.residual:
        unjudged = f"coalesce(sum({weight}) FILTER (WHERE relv < 0), 0)"
        return f"pow({persistence}, any_value({c.retrieved(p.k)})) + {unjudged}"
    gain = f"CAST({c.relevant(c.level(p))} AS INTEGER)"
    return f"coalesce(sum({gain} * {weight}), 0)"


def trec_eval_residual(p: float, c: Columns, k: int | None = None) -> str:
    """trec_eval's rbp_resid over the first k rows: p^n + (1 − p) Σ p^(rank−1) over the rows
    below 0 (unjudged, negatively judged), or 0 when there is none."""
    persistence, within = double(p), c.within(k)
    unjudged = f"sum(pow({persistence}, rank - 1)) FILTER (WHERE relv < 0 AND {within})"
    residual = (
        f"pow({persistence}, count(*) FILTER (WHERE {within})) + (1 - {persistence}) * {unjudged}"
    )
    return (
        f"(CASE WHEN count(*) FILTER (WHERE relv < 0 AND {within}) > 0 THEN {residual} ELSE 0 END)"
    )


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
        return trec_eval_residual(p.p, c)


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [RBP, RBPResid]
