"""The SQL building blocks of measures: the ranking's columns, and the derived columns a measure
declares it needs. The one place where measure SQL is made; pure, no I/O.

A measure's SQL reads the ranking's row columns (`rank`, `relv`) and derived columns: running
counts over the ranking, per-query facts from the qrels, the ideal ranking beside each row, the
ranking's length, collection fields. Each derived column is a `Need`: a string (the column's name,
so it drops into SQL text) that also carries how the compiler builds it. A measure lists its needs
in `Measure.needs`; the compiler builds each once for every measure, then calls `per_query` with
a `Columns` bound to those needs, which refuses any need that was not declared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pipeline.contract.needs import (
    IdealAtRank,
    IdealTotals,
    Need,
    NeedKind,
    Requirements,
    flatten,
    level_tag,
)
from pipeline.contract.subtopics import SubtopicColumns
from pipeline.errors import PluginError

__all__ = [
    "Columns",
    "Discount",
    "Gain",
    "IdealAtRank",
    "IdealTotals",
    "Need",
    "NeedKind",
    "Requirements",
    "Rounding",
    "dcg",
    "double",
    "flatten",
    "grade_literal",
    "ratio",
]

#: a gain: linear, exponential, or a mapping of grades (integers; decimals under `grades: real`)
Gain = Literal["linear", "exponential"] | dict[int | float, float]
Discount = Literal["standard", "jarvelin"]
Rounding = Literal["trec_eval", "ceil"]


def double(value: float | int) -> str:
    """A float literal that DuckDB reads as DOUBLE (a bare 0.1 would be DECIMAL)."""
    return f"CAST({float(value)!r} AS DOUBLE)"


def grade_literal(grade: int | float) -> str:
    """A grade or a relevance level as SQL: an integer as its digits, a decimal (`grades:
    real`) as a DOUBLE."""
    return str(grade) if isinstance(grade, int) else double(grade)


def ratio(numerator: str, denominator: str) -> str:
    """numerator / denominator, or 0 when the denominator is not positive (trec_eval's rule)."""
    return f"(CASE WHEN {denominator} > 0 THEN {numerator} / {denominator} ELSE 0 END)"


def dcg(c: Columns, gain: Gain, discount: Discount = "standard", k: int | None = None) -> str:
    """SQL DCG of the ranking (a per-query aggregate), up to rank k if given."""
    term = f"{c.gain(gain)} / {c.discount(discount)}"
    return f"coalesce(sum({term}) FILTER (WHERE {c.within(k)}), 0)"


@dataclass(frozen=True)
class Columns(SubtopicColumns):
    """The canonical columns of the ranking, and the derived columns measures may declare
    (those over subtopic judgments: `SubtopicColumns`).

    Row columns of the ranking: `rank` (1-based, after ordering) and `relv`, the judged grade of the
    document, or -1 if the qrels do not have it and -2 if its judgment is negative (trec_eval's
    RELVALUE_NONPOOL and RELVALUE_UNJUDGED). Methods that return a `Need` name a derived column;
    bound to a measure's declared needs (`bound`), they refuse any other.

    `grades` is the spec's setting: `integer`, or `real`, where grades (`relv`, `rel`), relevance
    levels and a gain mapping's grades may be decimals (`rel` and `relv` are then DOUBLE).
    """

    relevance_level: int | float = 1
    recall_rounding: str = "trec_eval-10"
    declared: frozenset[str] | None = None
    owner: str = field(default="", compare=False)
    grades: str = "integer"

    rank = "rank"
    relv = "relv"
    #: the row's document (for a generated answer's citation, `sentence<TAB>docid<TAB>run`:
    #: `pipeline.inputs.answers`)
    docno = "docno"
    #: the row's score in its run (for an answer's assignments, the assignment's: 2 support, 1
    #: partial support, 0 none; `pipeline.inputs.assignments`)
    score = "score"

    def bound(self, needs: Iterable[Need], owner: str) -> Columns:
        """These columns, allowing only `needs` (for `per_query`, `missing`, `empty` of `owner`)."""
        return replace(self, declared=frozenset(needs), owner=owner)

    def _use(self, need: Need, how: str) -> Need:
        if self.declared is not None and any(n not in self.declared for n in need.closure()):
            raise PluginError(
                f"{self.owner} reads the derived column {str(need)!r} without declaring it; "
                f"add c.{how} to what its needs() returns"
            )
        return need

    # -- row predicates --------------------------------------------------------------------------
    def level(self, p: Any) -> int | float:
        """The relevance level of a measure: its own `rel`, else the spec's setting."""
        rel = getattr(p, "rel", None)
        return self.relevance_level if rel is None else rel

    def relevant(self, level: int | float) -> str:
        """Predicate: this row is relevant at `level` (unjudged rows never are)."""
        return f"(relv >= {grade_literal(max(level, 0))})"

    def within(self, k: int | None) -> str:
        """Predicate: this row is within the cutoff (TRUE when there is none)."""
        return "TRUE" if k is None else f"(rank <= {int(k)})"

    def relevant_within(self, p: Any) -> str:
        """Aggregate: relevant rows within the cutoff `p.k` at the measure's level."""
        return f"count(*) FILTER (WHERE {self.relevant(self.level(p))} AND {self.within(p.k)})"

    def retrieved_within(self, p: Any) -> str:
        """Aggregate: documents retrieved within the cutoff `p.k` (needs `num_ret`)."""
        return f"any_value({self.retrieved(p.k)})"

    def relevant_total(self, p: Any) -> str:
        """Aggregate: the query's relevant documents at the measure's level (needs `num_rel`)."""
        return f"any_value({self.num_rel(self.level(p))})"

    # -- the ranking's length ---------------------------------------------------------------------
    def num_ret(self) -> Need:
        """Column: the length of the query's ranking (after -M and -J), on every row; in `missing`,
        the length of a ranking none of whose documents is judged (0 when the run lacks the query)."""
        return self._use(Need("num_ret", "length", ""), "num_ret()")

    def retrieved(self, k: int | None) -> str:
        """The number of documents retrieved within the cutoff (needs `num_ret`)."""
        return self.num_ret() if k is None else f"least({self.num_ret()}, {int(k)})"

    # -- the run's time ----------------------------------------------------------------------------
    def query_ms(self) -> Need:
        """Column: the run's latency for the query in milliseconds (the median of its timings in
        `runs.NAME.latency`), on every row of its ranking; NULL where the run has no time for
        it. Read with it, a measure needs every row ranked (the judged rows alone may be none)."""
        return self._use(Need("query_ms", "latency", "ms"), "query_ms()")

    # -- ties ------------------------------------------------------------------------------------
    def tie_first(self) -> Need:
        """Column: the first rank of this row's tie, the rows of equal score (of equal rank in
        the file under `ordering: rank`), which docno orders among themselves. Read with it, a
        measure needs every row ranked: irpipe never ranks judged rows alone for it."""
        return self._use(Need("tie_first", "tie", "first"), "tie_first()")

    def tie_size(self) -> Need:
        """Column: how many rows this row's tie holds (1 for a row tied with none)."""
        return self._use(Need("tie_size", "tie", "size"), "tie_size()")

    # -- running counts over the ranking ---------------------------------------------------------
    def relevant_so_far(self, level: int | float) -> Need:
        """Column: relevant rows at or above this rank."""
        need = _window(f"cum_rel_{level_tag(level)}", self.relevant(level))
        return self._use(need, f"relevant_so_far({level})")

    def nonrelevant_so_far(self, level: int | float) -> Need:
        """Column: judged non-relevant rows (0 <= grade < level) at or above this rank."""
        below = f"(relv >= 0 AND relv < {grade_literal(max(level, 0))})"
        need = _window(f"cum_nonrel_{level_tag(level)}", below)
        return self._use(need, f"nonrelevant_so_far({level})")

    def grade_so_far(self, grade: int) -> Need:
        """Column: rows with exactly this relv (-1 unjudged, -2 negatively judged) so far."""
        need = _window(f"cum_grade_{level_tag(grade)}", f"(relv = {int(grade)})")
        return self._use(need, f"grade_so_far({grade})")

    def gain_so_far(self, gain: Gain) -> Need:
        """Column: the sum of gains at or above this rank."""
        sql = exact_running_sum(self.gain(gain), "ranking")
        return self._use(Need(f"cum_gain_{_gain_tag(gain)}", "window", sql), "gain_so_far(gain)")

    def dcg_so_far(self, gain: Gain) -> Need:
        """Column: DCG (standard discount) at this rank; a second ordered pass, so use sparingly."""
        sql = exact_running_sum(f"{self.gain(gain)} / log2(rank + 1)", "by_rank")
        need = Need(f"cum_dcg_{_gain_tag(gain)}", "rank_window", sql)
        return self._use(need, "dcg_so_far(gain)")

    def ideal_at_rank(self, gain: Gain) -> IdealAtRank:
        """Columns of the ideal ranking at this row's rank (see `IdealAtRank`)."""
        need = IdealAtRank(f"ideal_{_gain_tag(gain)}", "ideal", self.ideal_gain(gain))
        return self._use(need, "ideal_at_rank(gain)")

    # -- per-query facts from the qrels ----------------------------------------------------------
    def num_rel(self, level: int | float) -> Need:
        """Fact: judged documents with grade >= level (negative judgments never count)."""
        expr = f"count(*) FILTER (WHERE rel >= {grade_literal(max(level, 0))})"
        need = _fact(f"R_{level_tag(level)}", expr)
        return self._use(need, f"num_rel({level})")

    def num_nonrel(self, level: int | float) -> Need:
        """Fact: judged documents with 0 <= grade < level."""
        expr = f"count(*) FILTER (WHERE rel >= 0 AND rel < {grade_literal(max(level, 0))})"
        return self._use(_fact(f"NR_{level_tag(level)}", expr), f"num_nonrel({level})")

    def max_grade(self) -> Need:
        """Fact: the highest non-negative grade judged for the query (-1 if none)."""
        need = _fact("max_grade", "coalesce(max(rel) FILTER (WHERE rel >= 0), -1)")
        return self._use(need, "max_grade()")

    def num_docs(self) -> Need:
        """Fact: the collection's size (`num_docs` in the spec, which must then be set)."""
        need = Need("num_docs", "fact", "any_value(num_docs)", field="num_docs")
        return self._use(need, "num_docs()")

    def qrels_grades(self) -> Need:
        """Fact: the query's judged grades (negative judgments included), highest first."""
        need = _fact("qrels_grades", "list(rel ORDER BY rel DESC)")
        return self._use(need, "qrels_grades()")

    def ideal_dcg(self, gain: Gain, discount: Discount, k: int | None) -> Need:
        """Fact: DCG of the ideal ranking (all judged documents sorted by gain) at cutoff k.

        As in trec_eval, only positive gains enter the ideal ranking.
        """
        g = self.ideal_gain(gain)
        irank = self._ideal_rank(g, gain)
        within = "" if k is None else f" AND {irank} <= {int(k)}"
        # added in ideal rank order, as trec_eval adds (facts otherwise add in docno order)
        term = f"{g} / {self.discount(discount, irank)} ORDER BY {irank}"
        expr = f"coalesce(sum({term}) FILTER (WHERE {g} > 0{within}), 0)"
        need = Need(f"idcg_{_gain_tag(gain)}_{discount}_{k or 'all'}", "fact", expr, (irank,))
        return self._use(need, f"ideal_dcg(gain, {discount!r}, {k})")

    def ideal_cg(self, gain: Gain, k: int | None) -> Need:
        """Fact: cumulative gain of the ideal ranking at cutoff k: the k largest positive gains
        of the query's judgments (negative judgments never enter it), summed in ideal order."""
        g = self.ideal_gain(gain)
        irank = self._ideal_rank(g, gain)
        within = "" if k is None else f" AND {irank} <= {int(k)}"
        expr = f"coalesce(sum({g} ORDER BY {irank}) FILTER (WHERE {g} > 0{within}), 0)"
        need = Need(f"icg_{_gain_tag(gain)}_{k or 'all'}", "fact", expr, (irank,))
        return self._use(need, f"ideal_cg(gain, {k})")

    @staticmethod
    def _ideal_rank(g: str, gain: Gain) -> Need:
        """The rank of each judgment in the ideal ranking (by gain, highest first)."""
        return Need(
            f"irank_{_gain_tag(gain)}",
            "judged_window",
            f"row_number() OVER (PARTITION BY collection, qid ORDER BY {g} DESC)",
        )

    def ideal_totals(self, gain: Gain) -> IdealTotals:
        """Facts of the whole ideal ranking (see `IdealTotals`); declare the group as it is."""
        g, tag = self.ideal_gain(gain), _gain_tag(gain)
        positive = f"FILTER (WHERE {g} > 0)"
        return IdealTotals(
            self._use(_fact(f"ideal_len_{tag}", f"count(*) {positive}"), "ideal_totals(gain)"),
            self._use(
                _fact(f"ideal_sum_{tag}", f"coalesce(sum({g}) {positive}, 0)"), "ideal_totals(gain)"
            ),
            self._use(
                _fact(f"ideal_cost_{tag}", f"coalesce(sum(greatest({g}, 1)) {positive}, 0)"),
                "ideal_totals(gain)",
            ),
            self.ideal_dcg(gain, "standard", None),
        )

    # -- gains, discounts and recall cutoffs -----------------------------------------------------
    def gain(self, gain: Gain, column: str = "relv") -> str:
        """SQL gain of a grade: linear (the grade), exponential (2^g - 1) or a mapping (of exact
        grades: a decimal one under `grades: real`).

        Grades below 0 (unjudged, negative judgments) have gain 0 unless the mapping names them;
        grades a mapping leaves out keep their linear gain, as in trec_eval.
        """
        if gain == "linear":
            return f"greatest({column}, 0)"
        if gain == "exponential":
            return f"(CASE WHEN {column} > 0 THEN pow(2, {column}) - 1 ELSE 0 END)"
        cases = " ".join(
            f"WHEN {grade_literal(g)} THEN {double(v)}" for g, v in sorted(gain.items())
        )
        return f"(CASE {column} {cases} ELSE greatest({column}, 0) END)"

    def ideal_gain(self, gain: Gain) -> str:
        """SQL gain of a judgment (`rel`) in the ideal ranking. A negative judgment never enters
        it, even where a mapping gives its grade a gain: trec_eval's ideal list repeats each gain
        as often as its grade is judged, and counts grades >= 0 only (a mapping's -1 or -2 gains
        the retrieved unjudged documents, not the ideal)."""
        g = self.gain(gain, "rel")
        if isinstance(gain, dict) and any(grade < 0 for grade in gain):
            return f"(CASE WHEN rel >= 0 THEN {g} ELSE 0 END)"
        return g

    @staticmethod
    def discount(discount: Discount, rank: str = "rank") -> str:
        """SQL divisor of the gain at `rank`: log2(rank+1), or Järvelin's log2(max(rank, 2))."""
        return f"log2({rank} + 1)" if discount == "standard" else f"log2(greatest({rank}, 2))"

    def recall_reached(self, recall: float, level: int | float, rounding: str) -> str:
        """Predicate: the ranking has reached `recall` at or above this row (needs
        `relevant_so_far(level)` and `num_rel(level)`).

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


#: 2^64, the scale of an exact running sum's terms
_FIXED_POINT = "18446744073709551616.0"


def exact_running_sum(term: str, window: str) -> str:
    """SQL: the running sum of `term` (a DOUBLE) over `window`, added exactly: each term as a
    128-bit count of 2^-64 (exact for any term of at least 2^-12; a smaller one to 2^-65),
    the total rounded once to a double. DuckDB's window adds doubles in a tree whose grouping
    follows the rows beside them, so a ranking that held other rows (the judged-rows plan's,
    a Spark shard's) could give another last bit; integers add alike in any grouping."""
    scaled = f"CAST(round(({term}) * {_FIXED_POINT}) AS HUGEINT)"
    return f"(CAST(sum({scaled}) OVER {window} AS DOUBLE) / {_FIXED_POINT})"


def _window(name: str, predicate: str) -> Need:
    # A running sum is much cheaper in DuckDB than a running count(*) FILTER.
    return Need(name, "window", f"CAST(sum(CAST({predicate} AS INTEGER)) OVER ranking AS BIGINT)")


def _fact(name: str, expr: str) -> Need:
    return Need(name, "fact", expr)


def _gain_tag(gain: Gain) -> str:
    if isinstance(gain, str):
        return gain
    return hashlib.sha1(repr(sorted(gain.items())).encode()).hexdigest()[:8]
