"""Measures of the retrieved set (or of its first k documents): P, R, F, relative P, set AP, utility."""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from ..api import Columns, Measure, RankedParams, double, hookimpl, ratio


class SetP(Measure[RankedParams]):
    """Precision of the retrieved set (of the first k documents if k is given)."""

    judged_rows_suffice = True

    name = "SetP"
    description = "set precision: relevant retrieved / retrieved"
    Params = RankedParams
    cutoff = "k"

    def needs(self, p: RankedParams, c: Columns):
        return (c.num_ret(),)

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return ratio(c.relevant_within(p), c.retrieved_within(p))


class SetR(Measure[RankedParams]):
    """Recall of the retrieved set (of the first k documents if k is given)."""

    judged_rows_suffice = True

    name = "SetR"
    description = "set recall: relevant retrieved / relevant"
    Params = RankedParams
    cutoff = "k"

    def needs(self, p: RankedParams, c: Columns):
        return (c.num_rel(c.level(p)),)

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return ratio(c.relevant_within(p), c.relevant_total(p))


class FParams(RankedParams):
    beta: float = Field(1.0, gt=0, description="weight of recall: F = (b²+1)PR / (b²P + R)")
    beta2: float | None = Field(
        None,
        ge=0,
        description="β² itself, used as written (trec_eval's set_F.x: set_F.2 is beta2=2); "
        "instead of beta",
    )

    @field_validator("beta2")
    @classmethod
    def _one_weight(cls, beta2: float | None, info: ValidationInfo) -> float | None:
        """β or β², not both: each says how much recall weighs."""
        if beta2 is not None and info.data.get("beta", 1.0) != 1.0:
            raise ValueError("give beta or beta2 (= beta²), not both")
        return beta2

    def beta_squared(self) -> float:
        """β² as the formula uses it: beta2 as written (trec_eval's arithmetic), else beta·beta."""
        return self.beta2 if self.beta2 is not None else self.beta * self.beta


class SetF(Measure[FParams]):
    """F-measure of the retrieved set: (β²+1)·P·R / (β²·P + R), 0 when nothing relevant is found.

    trec_eval's `set_F.x` takes x = β² and uses it as written: it is `beta2` (`set_F.2` is
    SetF(beta2=2.0)), since the square of sqrt(2) is not 2 in doubles and can change a printed digit.
    """

    judged_rows_suffice = True

    name = "SetF"
    description = "set F-measure with weight beta on recall"
    Params = FParams
    aliases = {"F": {}}
    cutoff = "k"

    def needs(self, p: FParams, c: Columns):
        return (c.num_ret(), c.num_rel(c.level(p)))

    def per_query(self, p: FParams, c: Columns) -> str:
        hits = c.relevant_within(p)
        precision = f"({hits} / {c.retrieved_within(p)})"
        recall = f"({hits} / {c.relevant_total(p)})"
        b2 = double(p.beta_squared())
        f = f"({b2} + 1) * {precision} * {recall} / ({b2} * {precision} + {recall})"
        return f"(CASE WHEN {hits} > 0 THEN {f} ELSE 0 END)"


class SetRelativeP(Measure[RankedParams]):
    """Relevant retrieved / min(retrieved, relevant): precision relative to the best possible."""

    judged_rows_suffice = True

    name = "SetRelativeP"
    description = "relative set precision: relevant retrieved / min(retrieved, relevant)"
    Params = RankedParams
    cutoff = "k"

    def needs(self, p: RankedParams, c: Columns):
        return (c.num_ret(), c.num_rel(c.level(p)))

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return ratio(c.relevant_within(p), f"least({c.retrieved_within(p)}, {c.relevant_total(p)})")


class SetAP(Measure[RankedParams]):
    """Unranked AP: (relevant retrieved)² / (retrieved × relevant) = set precision × set recall."""

    judged_rows_suffice = True

    name = "SetAP"
    description = "set AP: relevant retrieved² / (retrieved × relevant)"
    Params = RankedParams
    cutoff = "k"

    def needs(self, p: RankedParams, c: Columns):
        return (c.num_ret(), c.num_rel(c.level(p)))

    def per_query(self, p: RankedParams, c: Columns) -> str:
        hits = f"CAST({c.relevant_within(p)} AS DOUBLE)"
        denominator = f"(CAST({c.retrieved_within(p)} AS DOUBLE) * {c.relevant_total(p)})"
        return ratio(f"({hits} * {hits})", denominator)


class UtilityParams(RankedParams):
    a: float = Field(1.0, description="gain per relevant retrieved document")
    b: float = Field(-1.0, description="gain per non-relevant retrieved document")
    c: float = Field(0.0, description="gain per relevant document not retrieved")
    d: float = Field(
        0.0, description="gain per non-relevant document not retrieved (needs num_docs)"
    )


class Utility(Measure[UtilityParams]):
    """Linear utility a·RR + b·(n−RR) + c·(R−RR) + d·(N+RR−n−R); averaged over queries, as trec_eval."""

    judged_rows_suffice = True

    name = "Utility"
    description = "linear set utility with coefficients a, b, c, d"
    Params = UtilityParams
    cutoff = "k"

    def needs(self, p: UtilityParams, c: Columns):
        size = (c.num_docs(),) if p.d != 0 else ()  # num_docs must then be set in the spec
        return (c.num_ret(), c.num_rel(c.level(p)), *size)

    def per_query(self, p: UtilityParams, c: Columns) -> str:
        rr, n, r = c.relevant_within(p), c.retrieved_within(p), c.relevant_total(p)
        size = f"any_value({c.num_docs()})" if p.d != 0 else "0"
        return (
            f"{double(p.a)} * {rr} + {double(p.b)} * ({n} - {rr}) + {double(p.c)} * ({r} - {rr})"
            f" + {double(p.d)} * ({size} + {rr} - {n} - {r})"
        )

    def missing(self, p: UtilityParams, c: Columns) -> str:
        # Nothing relevant retrieved: each retrieved document counts as non-relevant.
        size = c.num_docs() if p.d != 0 else "0"
        n, r = c.retrieved(p.k), c.num_rel(c.level(p))
        return f"{double(p.b)} * {n} + {double(p.c)} * {r} + {double(p.d)} * ({size} - {n} - {r})"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [SetP, SetR, SetF, SetRelativeP, SetAP, Utility]
