"""An example plugin: it uses only irpipe's public API, `pipeline.api`.

After `pip install plugins/irpipe-judged`, every spec can name `Assessed@10`.
"""

from __future__ import annotations

from pipeline.api import Columns, Measure, RankedParams, hookimpl


class Assessed(Measure[RankedParams]):
    """Share of the first k retrieved documents that have a judgment of grade >= 0.

    Divided by the number of documents actually in the top k, so a short ranking is not penalised;
    a negative judgment counts as unjudged, as in trec_eval (and as the pools' Judged@k counts).
    ir_measures' `Judged` (plugins/irpipe-usermodels) counts every qrels line instead, so the two
    have different names and install side by side.
    """

    name = "Assessed"
    description = "share of the top k documents judged with a grade >= 0"
    Params = RankedParams
    aliases = {"assessed": {}}
    cutoff = "k"

    def per_query(self, p: RankedParams, c: Columns) -> str:
        within = c.within(p.k)
        return (
            f"count(*) FILTER (WHERE {c.relv} >= 0 AND {within}) / count(*) FILTER (WHERE {within})"
        )


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [Assessed]
