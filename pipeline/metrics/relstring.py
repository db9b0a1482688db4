"""relstring: the grades of the first k documents as a string (a text measure, no average)."""

from __future__ import annotations

from pydantic import Field

from ..api import Columns, Measure, MeasureParams, hookimpl


class RelStringParams(MeasureParams):
    k: int = Field(10, description="number of leading documents shown")


class RelString(Measure[RelStringParams]):
    """One character per document: the grade 0–9, '>' above 9, '-' not in the qrels, '.' judged
    negative (trec_eval relstring); a decimal grade (`grades: real`) shows its whole part (0.7
    is '0', 9.5 is '9'). Per query only."""

    name = "RelString"
    better = None  # text
    description = "grades of the first k documents as a string (per query only)"
    Params = RelStringParams
    cutoff = "k"
    kind = "text"
    aggregator = "none"

    def per_query(self, p: RelStringParams, c: Columns) -> str:
        digit = "CAST(CAST(floor(relv) AS BIGINT) AS VARCHAR)"  # a decimal grade's whole part
        char = f"CASE WHEN relv >= 10 THEN '>' WHEN relv >= 0 THEN {digit} WHEN relv = -1 THEN '-' ELSE '.' END"
        return (
            f"coalesce(string_agg({char}, '' ORDER BY rank) FILTER (WHERE rank <= {int(p.k)}), '')"
        )

    def missing(self, p: RelStringParams, c: Columns) -> str:
        return "''"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [RelString]
