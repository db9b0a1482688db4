"""An example plugin: it uses only irpipe's public API, `pipeline.api`.

After `pip install plugins/irpipe-judged`, every spec can name `Judged@10`.
"""

from __future__ import annotations

from typing import Any

from pipeline.api import Columns, Measure, RankedParams, hookimpl


class Judged(Measure):
    """Share of the first k retrieved documents that have a judgment (of any grade >= 0).

    Divided by the number of documents actually in the top k, so a short ranking is not penalised;
    a negative judgment counts as unjudged, as in trec_eval.
    """

    name = "Judged"
    description = "share of the top k documents that are judged"
    Params = RankedParams
    aliases = {"judged": {}}
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        within = c.within(p.k)
        return (
            f"count(*) FILTER (WHERE {c.relv} >= 0 AND {within}) / count(*) FILTER (WHERE {within})"
        )


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [Judged]
