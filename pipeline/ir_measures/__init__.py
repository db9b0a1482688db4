"""irpipe as an ir_measures provider: `install()` puts it first in ir_measures' `DefaultPipeline`,
so `ir_measures.calc_aggregate`, `iter_calc`, `evaluator` (and PyTerrier's `pt.Experiment`, which
computes through them) compute through irpipe every measure it defines as ir_measures' pytrec_eval
provider does; the other measures fall through to the next provider. `provider` is the provider
object, for explicit use as ir_measures' own are (`provider.calc_aggregate(measures, qrels, run)`).

The numbers are pytrec_eval's: irpipe evaluates under trec_eval 9's settings
(`compatibility: trec_eval-9`: scores compared as C floats; the queries of both the run and the
qrels), and a qrels query the run lacks gets the measure's default, as ir_measures gives it. A
measure's string in ir_measures' syntax is irpipe's own (`P(rel=2)@10`, `nDCG@10`, `AP`).

ir_measures 0.4 has no entry point for providers: its pipeline is a fixed list, which `install`
changes at runtime (and `uninstall` restores).

Imports: ir_measures, and the Python door (`pipeline.notebook.Evaluator`) when an evaluator is made.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import ir_measures
from ir_measures import measures as _m
from ir_measures.providers.base import NOT_PROVIDED, Choices, Provider
from ir_measures.providers.base import Any as _Any
from ir_measures.providers.base import Evaluator as _Evaluator

__all__ = ["IrpipeProvider", "install", "provider", "uninstall"]

#: the settings under which irpipe computes as ir_measures' pytrec_eval provider does
SETTINGS = {"compatibility": "trec_eval-9", "queries": "intersection", "unmatched_runs": "allow"}
#: ir_measures' column names, as irpipe's (`columns=`)
COLUMNS = {"qid": "query_id", "docno": "doc_id", "rel": "relevance", "score": "score"}
_PLAIN = Choices(False)  # judged_only: not given to irpipe (its -J is a setting)


class IrpipeProvider(Provider):
    """irpipe as an ir_measures provider (see the module's docstring)."""

    NAME = "irpipe"
    SUPPORTED_MEASURES = [
        _m._P(cutoff=_Any(), rel=_Any(), judged_only=_PLAIN),
        _m._RR(cutoff=Choices(NOT_PROVIDED), rel=_Any(), judged_only=_PLAIN),
        _m._Rprec(rel=_Any(), judged_only=_PLAIN),
        _m._AP(cutoff=_Any(), rel=_Any(), judged_only=_PLAIN),
        _m._nDCG(
            cutoff=_Any(), dcg=Choices("log2"), gains=Choices(NOT_PROVIDED), judged_only=_PLAIN
        ),  # fmt: skip
        _m._R(cutoff=_Any(), judged_only=_PLAIN),
        _m._Bpref(rel=_Any()),
        _m._Success(rel=_Any(), cutoff=_Any(), judged_only=_PLAIN),
        _m._NumRet(rel=Choices(NOT_PROVIDED)),  # with rel, pytrec_eval counts relevant ones
    ]

    def _evaluator(self, measures: Iterable[Any], qrels: Any) -> IrpipeEvaluator:
        return IrpipeEvaluator(list(measures), qrels)

    def install_instructions(self) -> str:
        return "pip install 'irpipe[notebook]'"


class IrpipeEvaluator(_Evaluator):
    """One qrels and measures, for many runs: a `pipeline.Evaluator` under `SETTINGS`."""

    def __init__(self, measures: list[Any], qrels: Any) -> None:
        from pipeline.notebook import Evaluator

        frame = ir_measures.util.QrelsConverter(qrels).as_pd_dataframe()
        super().__init__(measures, set(frame["query_id"]))
        self._labels = {f"m{i}": m for i, m in enumerate(measures)}
        metrics = [{"metric": str(m), "label": label} for label, m in self._labels.items()]
        self._evaluate = Evaluator(frame, metrics, settings=SETTINGS, columns=COLUMNS)

    def _iter_calc(self, run: Any) -> Iterator[ir_measures.Metric]:
        frame = ir_measures.util.RunConverter(run).as_pd_dataframe()
        if not set(frame["query_id"]) & self.qrel_qids:  # nothing to score: every default
            return
        # in the run's order of queries, as pytrec_eval yields them: ir_measures' means then
        # add the same numbers in the same order
        order = {qid: i for i, qid in enumerate(dict.fromkeys(frame["query_id"]))}
        rows = sorted(self._evaluate(frame).per_query(to="rows"), key=lambda r: order[r.qid])
        for row in rows:
            yield ir_measures.Metric(row.qid, self._labels[row.metric], row.value)


#: the provider, for explicit use
provider = IrpipeProvider()


def install() -> IrpipeProvider:
    """Put irpipe first in ir_measures' `DefaultPipeline` (once), and return it."""
    providers = ir_measures.DefaultPipeline.providers
    if provider not in providers:
        providers.insert(0, provider)
    return provider


def uninstall() -> None:
    """Take irpipe out of ir_measures' `DefaultPipeline`."""
    providers = ir_measures.DefaultPipeline.providers
    while provider in providers:
        providers.remove(provider)
