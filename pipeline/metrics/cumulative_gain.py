"""Graded measures: cumulative gain, discounted cumulative gain and its normalised form."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from ..api import Columns, Gain, Measure, MeasureParams, dcg, hookimpl
from .reported_queries import gdeval_empty, gdeval_missing, gdeval_needs, gdeval_reported


class GainParams(MeasureParams):
    k: int | None = Field(None, gt=0, description="cutoff: only the first k ranks count")
    gain: Gain = Field(
        "linear", description="linear (the grade), exponential (2^grade - 1) or {grade: gain}"
    )
    discount: Literal["standard", "jarvelin"] = Field(
        "standard", description="standard: 1/log2(rank+1); jarvelin: 1 at rank 1, then 1/log2(rank)"
    )


class DCG(Measure[GainParams]):
    """Discounted cumulative gain."""

    judged_rows_suffice = True

    name = "DCG"
    description = "discounted cumulative gain"
    Params = GainParams
    cutoff = "k"

    def per_query(self, p: GainParams, c: Columns) -> str:
        return dcg(c, p.gain, p.discount, p.k)


class NDCGParams(GainParams):
    variant: Literal["standard", "gdeval"] = Field(
        "standard",
        description="standard: trec_eval's ndcg_cut; gdeval: gdeval.pl's (exponential gain, "
        "its queries: those with a grade above 0; queries: qrels is gdeval.pl -c)",
    )

    @field_validator("variant")
    @classmethod
    def _gdeval_sets_gains(cls, variant: str, info: ValidationInfo) -> str:
        """gdeval.pl fixes the gain and the discount: another one would not be its nDCG."""
        defaults = {"gain": "linear", "discount": "standard"}
        given = [key for key, value in defaults.items() if info.data.get(key, value) != value]
        if variant == "gdeval" and given:
            raise ValueError(
                f"variant 'gdeval' sets gain (2^grade - 1) and discount itself; remove {given[0]}"
            )
        return variant


class nDCG(Measure[NDCGParams]):  # noqa: N801 -- the name users write
    """DCG divided by the DCG of the ideal ranking of all judged documents; 0 when that is 0.
    `variant='gdeval'` is gdeval.pl's nDCG@k: exponential gain, and only the queries it reports
    (`reported_queries`)."""

    judged_rows_suffice = True

    name = "nDCG"
    description = "normalised DCG (ideal: all judged documents sorted by gain)"
    Params = NDCGParams
    aliases = {"NDCG": {}}
    cutoff = "k"

    def needs(self, p: NDCGParams, c: Columns):
        return (c.ideal_dcg(_gain(p), p.discount, p.k), *gdeval_needs(p, c))

    def per_query(self, p: NDCGParams, c: Columns) -> str:
        gain = _gain(p)
        ideal = f"any_value({c.ideal_dcg(gain, p.discount, p.k)})"
        value = f"(CASE WHEN {ideal} > 0 THEN {dcg(c, gain, p.discount, p.k)} / {ideal} ELSE 0 END)"
        return gdeval_reported(p, c, value)

    def missing(self, p: NDCGParams, c: Columns) -> str:
        return gdeval_missing(p, c)

    def empty(self, p: NDCGParams, c: Columns) -> str:
        return gdeval_empty(p, c)


def _gain(p: NDCGParams) -> Gain:
    """gdeval.pl's gain is 2^grade - 1 (its log discount cancels out of the ratio)."""
    return "exponential" if p.variant == "gdeval" else p.gain


class IDCG(Measure[GainParams]):
    """DCG of the ideal ranking: all judged documents with positive gain, sorted by gain."""

    judged_rows_suffice = True

    name = "IDCG"
    better = None  # from the qrels alone: the same for every run
    description = "ideal DCG (the denominator of nDCG)"
    Params = GainParams
    cutoff = "k"

    def needs(self, p: GainParams, c: Columns):
        return (c.ideal_dcg(p.gain, p.discount, p.k),)

    def per_query(self, p: GainParams, c: Columns) -> str:
        return f"any_value({c.ideal_dcg(p.gain, p.discount, p.k)})"

    def missing(self, p: GainParams, c: Columns) -> str:
        return c.ideal_dcg(p.gain, p.discount, p.k)


class CGParams(MeasureParams):
    k: int | None = Field(None, gt=0, description="cutoff: only the first k ranks count")
    gain: Gain = Field("linear", description="linear, exponential or {grade: gain}")


class CG(Measure[CGParams]):
    """Cumulative gain: the sum of gains in the top k, undiscounted."""

    judged_rows_suffice = True

    name = "CG"
    description = "cumulative gain (no discount)"
    Params = CGParams
    cutoff = "k"

    def per_query(self, p: CGParams, c: Columns) -> str:
        return f"coalesce(sum({c.gain(p.gain)}) FILTER (WHERE {c.within(p.k)}), 0)"


class NCG(Measure[CGParams]):
    """Normalised cumulative gain: CG@k over the CG@k of the ideal ranking (the k largest gains
    judged), with nDCG's gains; 0 when the ideal's is 0. Reported at TREC Deep Learning."""

    judged_rows_suffice = True

    name = "NCG"
    description = "normalised cumulative gain: CG@k / the ideal ranking's CG@k"
    Params = CGParams
    cutoff = "k"

    def needs(self, p: CGParams, c: Columns):
        return (c.ideal_cg(p.gain, p.k),)

    def per_query(self, p: CGParams, c: Columns) -> str:
        ideal = f"any_value({c.ideal_cg(p.gain, p.k)})"
        cg = f"coalesce(sum({c.gain(p.gain)}) FILTER (WHERE {c.within(p.k)}), 0)"
        return f"(CASE WHEN {ideal} > 0 THEN {cg} / {ideal} ELSE 0 END)"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [DCG, nDCG, IDCG, CG, NCG]
