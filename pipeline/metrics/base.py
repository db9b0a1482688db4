"""The measure contract: a definition (name, parameters, aggregator) and its SQL over the ranking.

A measure's `per_query` returns one SQL aggregate expression evaluated per (run, query) over the rows of
the canonical ranking. It reads the columns that `Columns` names, and asks `Columns` for running counts
(window columns, computed once for every measure) and per-query facts from the qrels (computed once
per collection). It never reads files, re-sorts the ranking, or loops over rows in Python.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Columns",
    "Gain",
    "LevelParams",
    "Measure",
    "MeasureParams",
    "RankedParams",
    "Rounding",
    "double",
]

Gain = Literal["linear", "exponential"] | dict[int, float]
Discount = Literal["standard", "jarvelin"]
Rounding = Literal["trec_eval", "ceil"]


class MeasureParams(BaseModel):
    """Base of every measure's parameter model: strict, frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class LevelParams(MeasureParams):
    """The relevance level of a binary measure."""

    rel: int | None = Field(None, description="grade >= rel is relevant (default: relevance_level)")


class RankedParams(LevelParams):
    """Parameters shared by binary measures over a ranking: a cutoff and a relevance level."""

    k: int | None = Field(None, gt=0, description="cutoff: only the first k ranks count")


class Measure(ABC):
    """A measure definition. Subclasses set the class attributes and implement `per_query`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type[MeasureParams]] = MeasureParams
    #: other names, each with the parameters it presets: {"map_cut": {}, "11pt_avg": {...}}
    aliases: ClassVar[dict[str, dict[str, Any]]] = {}
    #: the parameter that `@x` sets, or None if the measure takes no cutoff
    cutoff: ClassVar[str | None] = None
    #: parameters that must be given (besides the defaults), e.g. ("k",) for P
    required: ClassVar[tuple[str, ...]] = ()
    #: how per-query values combine: mean, gmean (floor 1e-5, as trec_eval), sum, or none
    aggregator: ClassVar[Literal["mean", "gmean", "sum", "none"]] = "mean"
    #: number (a DOUBLE in `value`) or text (a VARCHAR in `text`, e.g. relstring)
    kind: ClassVar[Literal["number", "text"]] = "number"
    #: collection fields the measure needs, e.g. ("num_docs",)
    needs: ClassVar[tuple[str, ...]] = ()
    #: which aggregate is best, so the console can mark the best run: "higher", "lower", or None
    #: when runs are not better or worse by it: counts, diagnostics (Unjudged, IDCG), and means
    #: over a different set of queries per run (SearchLength leaves out queries with no hit)
    better: ClassVar[Literal["higher", "lower"] | None] = "higher"

    #: the value depends only on where judged documents (grade >= 0 or negative judgments) rank,
    #: on facts and on the ranking's length (`Columns.num_ret`), and `missing` is the value when
    #: no judged document is retrieved: the executor may then skip unjudged rows once ranked
    judged_rows_suffice: ClassVar[bool] = False

    def judged_only_ok(self, p: Any) -> bool:
        """Whether these parameters keep the value a function of judged rows (see the flag)."""
        gain = getattr(p, "gain", None)
        negative_gain = isinstance(gain, dict) and any(g < 0 for g in gain)
        return self.judged_rows_suffice and not negative_gain

    def needed(self, p: Any) -> tuple[str, ...]:
        """Collection fields these parameters need (by default `needs`)."""
        return self.needs

    @abstractmethod
    def per_query(self, p: Any, c: Columns) -> str:
        """SQL aggregate expression giving the measure's value for one (run, query)."""

    def missing(self, p: Any, c: Columns) -> str:
        """SQL expression over query facts (and `Columns.num_ret`, 0 when the run lacks the query)
        for a query none of whose retrieved documents is judged, or that the run lacks (default 0)."""
        return "0"

    def empty(self, p: Any, c: Columns) -> str:
        """SQL value for a query the run answered but -J or -M emptied (default: as missing)."""
        return self.missing(p, c)


def double(value: float | int) -> str:
    """A float literal that DuckDB reads as DOUBLE (a bare 0.1 would be DECIMAL)."""
    return f"CAST({float(value)!r} AS DOUBLE)"


class Columns:
    """The canonical columns of the ranking, and a registry of the derived columns measures ask for.

    Row columns of the ranking: `rank` (1-based, after ordering) and `relv`, the judged grade of the
    document, or -1 if the qrels do not have it and -2 if its judgment is negative (trec_eval's
    RELVALUE_NONPOOL and RELVALUE_UNJUDGED).
    """

    rank = "rank"
    relv = "relv"

    def __init__(self, relevance_level: int, recall_rounding: str) -> None:
        self.relevance_level = relevance_level
        self.recall_rounding = recall_rounding
        self.windows: dict[str, str] = {}  # running values over the ranking, one window
        self.rank_windows: dict[str, str] = {}  # running values that need `rank` itself
        self.judged_windows: dict[str, str] = {}  # per-document values over the qrels
        self.facts: dict[str, str] = {}  # per-query aggregates over the qrels
        self.ideal_lists: dict[str, str] = {}  # gain tag -> SQL gain of `rel`, joined by rank
        self.length_needed = False  # some measure reads `num_ret`

    # -- row predicates --------------------------------------------------------------------------
    def level(self, p: Any) -> int:
        """The relevance level of a measure: its own `rel`, else the spec's setting."""
        rel = getattr(p, "rel", None)
        return self.relevance_level if rel is None else rel

    def relevant(self, level: int) -> str:
        """Predicate: this row is relevant at `level` (unjudged rows never are)."""
        return f"(relv >= {max(level, 0)})"

    def within(self, k: int | None) -> str:
        """Predicate: this row is within the cutoff (TRUE when there is none)."""
        return "TRUE" if k is None else f"(rank <= {int(k)})"

    def num_ret(self) -> str:
        """Column: the length of the query's ranking (after -M and -J), on every row; in `missing`,
        the length of a ranking none of whose documents is judged (0 when the run lacks the query)."""
        self.length_needed = True
        return "num_ret"

    def retrieved(self, k: int | None) -> str:
        """The number of documents retrieved within the cutoff (see `num_ret`)."""
        return self.num_ret() if k is None else f"least({self.num_ret()}, {int(k)})"

    # -- running counts over the ranking ---------------------------------------------------------
    def relevant_so_far(self, level: int) -> str:
        """Column: relevant rows at or above this rank."""
        return self._window(f"cum_rel_{_tag(level)}", self.relevant(level))

    def nonrelevant_so_far(self, level: int) -> str:
        """Column: judged non-relevant rows (0 <= grade < level) at or above this rank."""
        return self._window(f"cum_nonrel_{_tag(level)}", f"(relv >= 0 AND relv < {max(level, 0)})")

    def grade_so_far(self, grade: int) -> str:
        """Column: rows with exactly this relv (-1 unjudged, -2 negatively judged) so far."""
        return self._window(f"cum_grade_{_tag(grade)}", f"(relv = {int(grade)})")

    def gain_so_far(self, gain: Gain) -> str:
        """Column: the sum of gains at or above this rank."""
        name = f"cum_gain_{_gain_tag(gain)}"
        self.windows[name] = f"sum({self.gain(gain)}) OVER ranking"
        return name

    def dcg_so_far(self, gain: Gain) -> str:
        """Column: DCG (standard discount) at this rank; a second ordered pass, so use sparingly."""
        name = f"cum_dcg_{_gain_tag(gain)}"
        self.rank_windows[name] = f"sum({self.gain(gain)} / log2(rank + 1)) OVER by_rank"
        return name

    def ideal_at_rank(self, gain: Gain) -> dict[str, str]:
        """Columns of the ideal ranking (positive gains, by gain) at this row's rank, NULL beyond it.

        idcg: ideal DCG up to this position; cost: the sum of max(gain, 1) up to it; change: the
        ideal gain changes after this position; tail, tail_count: the sum of 1/idcg (and the count)
        over later positions followed by a change (trec_eval's Rndcg and G walk these).
        """
        tag = _gain_tag(gain)
        self.ideal_lists[tag] = self.gain(gain, "rel")
        return {
            part: f"ideal_{tag}_{part}" for part in ("idcg", "cost", "change", "tail", "tail_count")
        }

    def ideal_totals(self, gain: Gain) -> dict[str, str]:
        """Facts of the whole ideal ranking: its length, sum of gains, sum of max(gain, 1), DCG."""
        g = self.gain(gain, "rel")
        tag = _gain_tag(gain)
        return {
            "length": self._fact(f"ideal_len_{tag}", f"count(*) FILTER (WHERE {g} > 0)"),
            "gain": self._fact(f"ideal_sum_{tag}", f"coalesce(sum({g}) FILTER (WHERE {g} > 0), 0)"),
            "cost": self._fact(
                f"ideal_cost_{tag}", f"coalesce(sum(greatest({g}, 1)) FILTER (WHERE {g} > 0), 0)"
            ),
            "dcg": self.ideal_dcg(gain, "standard", None),
        }

    def max_grade(self) -> str:
        """Fact: the highest non-negative grade judged for the query (-1 if none)."""
        return self._fact("max_grade", "coalesce(max(rel) FILTER (WHERE rel >= 0), -1)")

    def _window(self, name: str, predicate: str) -> str:
        # A running sum is much cheaper in DuckDB than a running count(*) FILTER.
        self.windows[name] = f"CAST(sum(CAST({predicate} AS INTEGER)) OVER ranking AS BIGINT)"
        return name

    # -- per-query facts from the qrels ----------------------------------------------------------
    def num_rel(self, level: int) -> str:
        """Fact: judged documents with grade >= level (negative judgments never count)."""
        return self._fact(f"R_{_tag(level)}", f"count(*) FILTER (WHERE rel >= {max(level, 0)})")

    def num_nonrel(self, level: int) -> str:
        """Fact: judged documents with 0 <= grade < level."""
        expr = f"count(*) FILTER (WHERE rel >= 0 AND rel < {max(level, 0)})"
        return self._fact(f"NR_{_tag(level)}", expr)

    def num_docs(self) -> str:
        """Fact: the collection's size (`num_docs` in the spec)."""
        return self._fact("num_docs", "any_value(num_docs)")

    def ideal_dcg(self, gain: Gain, discount: Discount, k: int | None) -> str:
        """Fact: DCG of the ideal ranking (all judged documents sorted by gain) at cutoff k.

        As in trec_eval, only positive gains enter the ideal ranking.
        """
        g = self.gain(gain, "rel")
        irank = f"irank_{_gain_tag(gain)}"
        self.judged_windows[irank] = (
            f"row_number() OVER (PARTITION BY collection, qid ORDER BY {g} DESC)"
        )
        within = "" if k is None else f" AND {irank} <= {int(k)}"
        expr = f"coalesce(sum({g} / {self.discount(discount, irank)}) FILTER (WHERE {g} > 0{within}), 0)"
        return self._fact(f"idcg_{_gain_tag(gain)}_{discount}_{k or 'all'}", expr)

    def _fact(self, name: str, expr: str) -> str:
        self.facts[name] = expr
        return name

    # -- gains, discounts and recall cutoffs -----------------------------------------------------
    def gain(self, gain: Gain, column: str = "relv") -> str:
        """SQL gain of a grade: linear (the grade), exponential (2^g - 1) or a mapping.

        Grades below 0 (unjudged, negative judgments) have gain 0 unless the mapping names them;
        grades a mapping leaves out keep their linear gain, as in trec_eval.
        """
        if gain == "linear":
            return f"greatest({column}, 0)"
        if gain == "exponential":
            return f"(CASE WHEN {column} > 0 THEN pow(2, {column}) - 1 ELSE 0 END)"
        cases = " ".join(f"WHEN {int(g)} THEN {double(v)}" for g, v in sorted(gain.items()))
        return f"(CASE {column} {cases} ELSE greatest({column}, 0) END)"

    @staticmethod
    def discount(discount: Discount, rank: str = "rank") -> str:
        """SQL divisor of the gain at `rank`: log2(rank+1), or Järvelin's log2(max(rank, 2))."""
        return f"log2({rank} + 1)" if discount == "standard" else f"log2(greatest({rank}, 2))"

    def recall_reached(self, recall: float, level: int, rounding: str) -> str:
        """Predicate: the ranking has reached `recall` at or above this row.

        rounding 'ceil' is the textbook rule, recall >= r. 'trec_eval' counts relevant documents as
        trec_eval does: lround(r*R) in 10.0, (long)(r*R + 0.9) in 9.x (the compatibility setting).
        """
        so_far, num_rel = self.relevant_so_far(level), self.num_rel(level)
        if rounding == "ceil":
            return f"({so_far} / {num_rel} >= {double(recall)})"
        return f"({so_far} >= {self.recall_count(recall, num_rel, rounding)})"

    def recall_count(self, recall: float, num_rel: str, rounding: str) -> str:
        """SQL number of relevant documents that reaches `recall` (see `recall_reached`)."""
        x = f"({double(recall)} * {num_rel})"
        if rounding == "ceil":
            return f"ceil({x})"
        if self.recall_rounding == "trec_eval-9":
            return f"floor({x} + {double(0.9)})"
        return f"(floor({x}) + CASE WHEN {x} - floor({x}) >= 0.5 THEN 1 ELSE 0 END)"


def _tag(level: int) -> str:
    return str(int(level)).replace("-", "m")


def _gain_tag(gain: Gain) -> str:
    if isinstance(gain, str):
        return gain
    return hashlib.sha1(repr(sorted(gain.items())).encode()).hexdigest()[:8]
