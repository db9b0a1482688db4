"""Intent-aware (diversity) measures over subtopic qrels, as ndeval (the TREC Web track's tool,
version 4.5) computes them, under ir_measures' names: alpha-DCG and alpha-nDCG (Clarke et al.,
SIGIR 2008), ERR-IA and nERR-IA (Chapelle et al., CIKM 2009), NRBP and nNRBP (Clarke et al.,
ICTIR 2009), P-IA and AP-IA (Agrawal et al., WSDM 2009), and subtopic recall.

A document is relevant to a subtopic when its grade there reaches the level (ndeval reads every
grade above 1 as 1). The document at rank i gains, for each subtopic it is relevant to,
(1 - alpha)^c, c being the documents above it relevant to that subtopic. S is the query's number
of subtopics with a relevant document; a query with none scores 0. ndeval's "collection-
independent" normalisation divides by an ideal that covers every subtopic at every rank
(S (1 - alpha)^(i-1) at rank i), except at k = 1, where it leaves the value as it is (ndeval
normalises from its second rank on); the "n" measures divide by the same sum over ndeval's greedy
ideal ranking of the judged documents. Beyond ndeval's depth of 20, the same definitions.
"""

from __future__ import annotations

from math import log2

from pydantic import Field

from ..api import Columns, LevelParams, Measure, double, hookimpl

_ALPHA = "redundancy intolerance: a subtopic's gain is (1 - alpha)^(documents above covering it)"


class CutoffParams(LevelParams):
    k: int | None = Field(None, gt=0, description="cutoff: only the first k ranks count")


class AlphaParams(CutoffParams):
    alpha: float = Field(0.5, ge=0, le=1, description=_ALPHA)


class NRBPParams(LevelParams):
    alpha: float = Field(0.5, ge=0, le=1, description=_ALPHA)
    beta: float = Field(0.5, ge=0, le=1, description="patience: the chance of reading on")


def _novelty_sum(p, c: Columns, discount: str | float, k: int | None) -> str:
    """Aggregate: the novelty gains of the ranking to rank k, discounted by 1/log2(i+1) ("log2"),
    1/i ("rank") or beta^(i-1) (a number)."""
    gain = c.novelty_gain(c.level(p), p.alpha)
    within = c.within(k)
    if isinstance(discount, float):  # beta^(rank-1), as ndeval's decay (0^0 is 1)
        term = f"{gain} * pow({double(discount)}, rank - 1)"
    else:
        term = f"{gain} / {'log2(rank + 1)' if discount == 'log2' else 'rank'}"
    return f"coalesce(sum({term}) FILTER (WHERE {within}), 0)"


def _ideal_ideal(alpha: float, discount: str, k: int) -> float:
    """ndeval's "ideal ideal" per subtopic: sum over ranks 1..k of (1 - alpha)^(i-1), discounted."""
    factor = {"log2": lambda i: 1 / log2(i + 1), "rank": lambda i: 1 / i}[discount]
    return sum((1 - alpha) ** (i - 1) * factor(i) for i in range(1, k + 1))


def _subtopics(p, c: Columns) -> str:
    return f"any_value({c.num_subtopics(c.level(p))})"


def _per_subtopic(value: str, p, c: Columns, times: int = 1) -> str:
    """`value` divided by `times` the query's subtopics S (0 when it has none)."""
    s = _subtopics(p, c)
    return f"(CASE WHEN {s} > 0 THEN {value} / ({int(times)} * {s}) ELSE 0 END)"


def _normalised(raw: str, ideal: str) -> str:
    """`raw` over the ideal ranking's value, 0 where the run gains nothing (ndeval's rule)."""
    return f"(CASE WHEN {raw} > 0 THEN {raw} / {ideal} ELSE 0 END)"


class _Novelty(Measure[AlphaParams]):
    """alpha-DCG@k or ERR-IA@k (by `discount`), normalised by ndeval's ideal ideal."""

    judged_rows_suffice = True
    Params = AlphaParams
    cutoff = "k"
    required = ("k",)
    discount = "log2"

    def needs(self, p: AlphaParams, c: Columns):
        return (c.novelty_gain(c.level(p), p.alpha), c.num_subtopics(c.level(p)))

    def per_query(self, p: AlphaParams, c: Columns) -> str:
        raw = _novelty_sum(p, c, self.discount, p.k)
        if p.k == 1:  # ndeval normalises from rank 2 on
            return raw
        ideal = double(_ideal_ideal(p.alpha, self.discount, int(p.k)))
        return _per_subtopic(f"{raw} / {ideal}", p, c)


class _NormalisedNovelty(Measure[AlphaParams]):
    """alpha-nDCG@k or nERR-IA@k: over the same sum of ndeval's greedy ideal ranking."""

    judged_rows_suffice = True
    Params = AlphaParams
    cutoff = "k"
    required = ("k",)
    discount = "log2"

    def needs(self, p: AlphaParams, c: Columns):
        level = c.level(p)
        return (c.novelty_gain(level, p.alpha), c.ideal_novelty(level, p.alpha, self.discount, p.k))

    def per_query(self, p: AlphaParams, c: Columns) -> str:
        ideal = f"any_value({c.ideal_novelty(c.level(p), p.alpha, self.discount, p.k)})"
        return _normalised(_novelty_sum(p, c, self.discount, p.k), ideal)


class alpha_DCG(_Novelty):  # noqa: N801 -- the name users write
    """alpha-DCG@k: sum of novelty gains / log2(i + 1), over S times the ideal ideal's."""

    name = "alpha_DCG"
    description = "alpha-DCG at k (ndeval): novelty-discounted DCG, intent-aware"


class alpha_nDCG(_NormalisedNovelty):  # noqa: N801
    """alpha-nDCG@k: alpha-DCG over the greedy ideal ranking's."""

    name = "alpha_nDCG"
    description = "alpha-nDCG at k (ndeval): alpha-DCG / the greedy ideal ranking's"


class ERR_IA(_Novelty):  # noqa: N801
    """ERR-IA@k as ndeval computes it: sum of novelty gains / i, over S times the ideal ideal's."""

    name = "ERR_IA"
    description = "intent-aware expected reciprocal rank at k (ndeval)"
    discount = "rank"


class nERR_IA(_NormalisedNovelty):  # noqa: N801
    """nERR-IA@k: ERR-IA over the greedy ideal ranking's."""

    name = "nERR_IA"
    description = "normalised ERR-IA at k (ndeval): / the greedy ideal ranking's"
    discount = "rank"


class NRBP(Measure[NRBPParams]):
    """Novelty- and rank-biased precision: (1 - (1 - alpha) beta) / S times the sum over the whole
    ranking of novelty gains * beta^(i-1)."""

    judged_rows_suffice = True
    name = "NRBP"
    description = "novelty- and rank-biased precision (ndeval)"
    Params = NRBPParams

    def needs(self, p: NRBPParams, c: Columns):
        return (c.novelty_gain(c.level(p), p.alpha), c.num_subtopics(c.level(p)))

    def per_query(self, p: NRBPParams, c: Columns) -> str:
        scale = double(1 - (1 - p.alpha) * p.beta)
        return _per_subtopic(f"{scale} * {_novelty_sum(p, c, float(p.beta), None)}", p, c)


class nNRBP(Measure[NRBPParams]):  # noqa: N801
    """NRBP over the greedy ideal ranking's (all of it); 0 for a query with no relevant
    document, where ndeval divides 0 by 0."""

    judged_rows_suffice = True
    name = "nNRBP"
    description = "normalised NRBP (ndeval): / the greedy ideal ranking's"
    Params = NRBPParams

    def needs(self, p: NRBPParams, c: Columns):
        level = c.level(p)
        return (c.novelty_gain(level, p.alpha), c.ideal_novelty(level, p.alpha, float(p.beta)))

    def per_query(self, p: NRBPParams, c: Columns) -> str:
        ideal = f"any_value({c.ideal_novelty(c.level(p), p.alpha, float(p.beta))})"
        return _normalised(_novelty_sum(p, c, float(p.beta), None), ideal)


class P_IA(Measure[CutoffParams]):  # noqa: N801
    """Intent-aware precision at k: relevant (document, subtopic) pairs in the top k / (k S)."""

    judged_rows_suffice = True
    name = "P_IA"
    description = "intent-aware precision at k (ndeval): mean over subtopics of P@k"
    Params = CutoffParams
    cutoff = "k"
    required = ("k",)

    def needs(self, p: CutoffParams, c: Columns):
        return (c.subtopics_covered(c.level(p)), c.num_subtopics(c.level(p)))

    def per_query(self, p: CutoffParams, c: Columns) -> str:
        pairs = c.subtopics_covered(c.level(p))
        covered = f"coalesce(sum({pairs}) FILTER (WHERE {c.within(p.k)}), 0)"
        return _per_subtopic(covered, p, c, times=int(p.k))


class StRecall(Measure[CutoffParams]):
    """Subtopic recall at k: the subtopics the top k cover / S."""

    judged_rows_suffice = True
    name = "StRecall"
    description = "subtopic recall at k (ndeval's strec): subtopics covered / subtopics"
    Params = CutoffParams
    cutoff = "k"
    required = ("k",)

    def needs(self, p: CutoffParams, c: Columns):
        return (c.new_subtopics(c.level(p)), c.num_subtopics(c.level(p)))

    def per_query(self, p: CutoffParams, c: Columns) -> str:
        new = c.new_subtopics(c.level(p))
        return _per_subtopic(f"coalesce(sum({new}) FILTER (WHERE {c.within(p.k)}), 0)", p, c)


class AP_IA(Measure[LevelParams]):  # noqa: N801
    """Intent-aware average precision: the mean over subtopics of each subtopic's AP, whole
    ranking (ndeval's MAP-IA, per query)."""

    judged_rows_suffice = True
    name = "AP_IA"
    description = "intent-aware average precision (ndeval's MAP-IA): mean over subtopics of AP"
    Params = LevelParams
    aliases = {"MAP_IA": {}}

    def needs(self, p: LevelParams, c: Columns):
        return (c.subtopic_precision(c.level(p)), c.num_subtopics(c.level(p)))

    def per_query(self, p: LevelParams, c: Columns) -> str:
        precision = c.subtopic_precision(c.level(p))
        return _per_subtopic(f"coalesce(sum({precision} / rank), 0)", p, c)


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [alpha_DCG, alpha_nDCG, ERR_IA, nERR_IA, NRBP, nNRBP, P_IA, AP_IA, StRecall]
