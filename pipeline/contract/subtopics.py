"""Derived columns over subtopic judgments (ndeval's qrels, `qid subtopic docno grade`), which
intent-aware (diversity) measures read. Pure, no I/O; `Columns` offers them by name.

A document is relevant to a subtopic when its grade there is at least the measure's level; every
column below counts those (document, subtopic) pairs only, as ndeval does, which reads any grade
above 1 as 1. Three kinds, each built once by the compiler (`pipeline.plan.subtopic_tables`):

subtopic        per ranked row, an aggregate over the row's relevant subtopics, each with `seen`
                (how many documents ranked above it cover that subtopic), `nrel` (how many
                documents the qrels judge relevant to it) and `subtopic`; a sum of decimals is
                taken in subtopic order (`summed_in_order`), as ndeval sums, so that its value
                is the same bits on every run however the rows arrive
subtopic_ideal  the greedy ideal ranking (ndeval's) of a query's documents, as rows (pos, gain)
subtopic_fact   per query, an aggregate over the relevant pairs (`subtopic`) or over an ideal
                ranking's rows (`pos`, `gain`, summed in `pos` order): the number of subtopics,
                the ideal's DCG, ...
"""

from __future__ import annotations

from collections.abc import Callable

from pipeline.contract.needs import Need, level_tag

__all__ = [
    "SubtopicColumns",
    "SubtopicIdeal",
    "SubtopicNeed",
    "discounted",
    "novelty_factor",
    "summed_in_order",
]


class SubtopicNeed(Need):
    """A derived column over the subtopic judgments relevant at `level`: per ranked row (kind
    `subtopic`) or per query (`subtopic_fact`, aggregated over the rows of `source`: the table
    of relevant pairs, or an ideal ranking's)."""

    level: int | float
    source: str

    def __new__(
        cls, name: str, kind: str, sql: str, level: int | float, source: str = "", requires=()
    ) -> SubtopicNeed:
        self = super().__new__(cls, name, kind, sql, tuple(requires))  # type: ignore[arg-type]
        object.__setattr__(self, "level", level)
        object.__setattr__(self, "source", source or relevant_table(level))
        return self


class SubtopicIdeal(Need):
    """ndeval's greedy ideal ranking at `level` and `alpha`, to `depth` (None: every document
    that adds gain): at each rank, the document whose subtopics add the most novelty gain, a tie
    going to the greatest docno. Its table's rows: (collection, qid, pos, gain)."""

    level: int | float
    alpha: float
    depth: int | None

    def __new__(cls, level: int | float, alpha: float, depth: int | None) -> SubtopicIdeal:
        name = f"div_ideal_{level_tag(level)}_{_alpha_tag(alpha)}_{depth or 'all'}"
        self = super().__new__(cls, name, "subtopic_ideal", "")
        for key, value in (("level", level), ("alpha", alpha), ("depth", depth)):
            object.__setattr__(self, key, value)
        return self

    @property
    def family(self) -> str:
        """The name shared by the ideal rankings of one level and alpha, whatever their depth:
        the deepest is built, the others are its first ranks."""
        return str(self).rpartition("_")[0]


def relevant_table(level: int | float) -> str:
    """The table of (collection, qid, subtopic, docno, nrel) relevant at `level`."""
    return f"subtopic_relevant_{level_tag(level)}"


def summed_in_order(term: str, order: str) -> str:
    """SQL aggregate: the sum of `term` over the group's rows, added one by one in `order` (a
    column), as ndeval adds: DuckDB's sum adds in the order rows arrive, which threads change,
    unless given an order (as the compiler gives every plain sum of a measure:
    `pipeline.plan.in_order`)."""
    return f"sum({term} ORDER BY {order})"


def novelty_factor(alpha: float) -> str:
    """SQL DOUBLE 1 - alpha: a subtopic's gain is (1 - alpha)^(documents above covering it)."""
    return f"CAST({1.0 - float(alpha)!r} AS DOUBLE)"


def discounted(gain: str, rank: str, discount: str | float) -> str:
    """SQL `gain` discounted at `rank`: "log2" 1/log2(rank+1) (DCG), "rank" 1/rank (ERR-IA), a
    number beta: beta^(rank-1) (NRBP)."""
    if discount == "log2":
        return f"{gain} / log2({rank} + 1)"
    if discount == "rank":
        return f"{gain} / {rank}"
    return f"{gain} * pow(CAST({float(discount)!r} AS DOUBLE), {rank} - 1)"


class SubtopicColumns:
    """The subtopic columns `Columns` offers (mixed into it): each method names a `Need`,
    refused by a bound `Columns` unless the measure declared it (`Columns._use`)."""

    #: Columns' own: the need, once checked against what the measure declared
    _use: Callable[[Need, str], Need]

    def novelty_gain(self, level: int | float, alpha: float) -> Need:
        """Row: the sum over the document's relevant subtopics of (1 - alpha)^seen: alpha-DCG's
        and ERR-IA's gain (ndeval's `score`)."""
        sql = summed_in_order(f"pow({novelty_factor(alpha)}, seen)", "subtopic")
        need = SubtopicNeed(
            f"div_gain_{level_tag(level)}_{_alpha_tag(alpha)}", "subtopic", sql, level
        )
        return self._use(need, f"novelty_gain({level}, {alpha})")

    def subtopics_covered(self, level: int | float) -> Need:
        """Row: how many subtopics the document is relevant to (P-IA's count)."""
        need = SubtopicNeed(f"div_count_{level_tag(level)}", "subtopic", "count(*)", level)
        return self._use(need, f"subtopics_covered({level})")

    def new_subtopics(self, level: int | float) -> Need:
        """Row: how many of the document's subtopics no document above covers (subtopic recall)."""
        sql = "count(*) FILTER (WHERE seen = 0)"
        need = SubtopicNeed(f"div_new_{level_tag(level)}", "subtopic", sql, level)
        return self._use(need, f"new_subtopics({level})")

    def subtopic_precision(self, level: int | float) -> Need:
        """Row: the sum over the document's subtopics of (seen + 1) / nrel, its subtopics'
        precision at this rank each divided by the subtopic's relevant documents (AP-IA)."""
        sql = summed_in_order("(seen + 1) / nrel", "subtopic")
        need = SubtopicNeed(f"div_prec_{level_tag(level)}", "subtopic", sql, level)
        return self._use(need, f"subtopic_precision({level})")

    def num_subtopics(self, level: int | float) -> Need:
        """Fact: the query's subtopics with a relevant document (ndeval's actualSubtopics)."""
        sql = "count(DISTINCT subtopic)"
        need = SubtopicNeed(f"div_subtopics_{level_tag(level)}", "subtopic_fact", sql, level)
        return self._use(need, f"num_subtopics({level})")

    def ideal_novelty(
        self, level: int | float, alpha: float, discount: str | float, k: int | None = None
    ) -> Need:
        """Fact: the sum of the greedy ideal ranking's gains discounted by `discount`
        (`discounted`) to rank k (all of it without one): ideal alpha-DCG, ERR-IA or NRBP."""
        ideal = SubtopicIdeal(level, alpha, k)
        term = discounted("gain", "pos", discount)
        tag = discount if isinstance(discount, str) else f"p{_alpha_tag(discount)}"
        name = f"div_ideal_{tag}_{level_tag(level)}_{_alpha_tag(alpha)}_{k or 'all'}"
        summed = summed_in_order(term, "pos")
        need = SubtopicNeed(name, "subtopic_fact", summed, level, str(ideal), (ideal,))
        return self._use(need, f"ideal_novelty({level}, {alpha}, {discount!r}, {k})")


def _alpha_tag(value: float) -> str:
    """A number as a name's part: 0.5 -> 0p5."""
    return repr(float(value)).replace(".", "p").replace("-", "m")
