"""The C/W/L framework's expected utility, in SQL over the canonical ranking (Moffat, Bailey,
Scholer and Thomas, TOIS 2017; cwl_eval, Azzopardi, Thomas and Moffat, SIGIR 2019).

A user reads position 1, and reads on from position i to i+1 with probability C(i); W(i), the
share of attention position i gets, is the chance of reaching it, normalised:

    P(0) = 1,  P(i) = C(1) ... C(i),  W(i) = P(i-1) / (P(0) + ... + P(N-1))
    EU   = W(1) g(1) + ... + W(N) g(N)

over N = max_depth positions, as cwl_eval computes it: the ranking cut at N, or padded to N with
documents that gain 0 (the worst case, the value) or 1 (the best case). Unjudged documents gain
the same. The residual is the best case minus the worst. A query without a ranking is all
padding: 0, and a residual of 1.

The positions past the end of the ranking (the tail) have no row: each measure sums them in
closed form, or as a sum over a list of positions (`tail_sum`), from the state the ranking ends
in. Running products over the ranking are window columns (`running_product`); each measure
writes its sums over P(i - 1) as sums over the P(j) of the rows above, so that one window column
of inclusive products serves.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from ...api import Columns, Measure, Need, double
from .gains import BEST, WORST, Case, CWLParams

__all__ = [
    "CWLMeasure",
    "depth_reached",
    "running_product",
    "tail_sum",
    "weighted_sums",
    "within",
]


class CWLMeasure(Measure[Any]):
    """A C/W/L measure: its expected utility per query (the worst case, as cwl_eval's EU column),
    or with `residual`, the best case minus that (cwl_eval -r's ResEU column)."""

    Params = CWLParams

    def needs(self, p: Any, c: Columns) -> tuple[Need, ...]:
        cases = (WORST, BEST) if p.residual else (WORST,)
        return tuple(need for case in cases for need in self.case_needs(p, c, case))

    def case_needs(self, p: Any, c: Columns, case: Case) -> tuple[Need, ...]:
        """The derived columns the expected utility of `case` reads (none by default)."""
        return ()

    def per_query(self, p: Any, c: Columns) -> str:
        return self.residual(p) if p.residual else self.expected_utility(p, WORST)

    @abstractmethod
    def expected_utility(self, p: Any, case: Case) -> str:
        """SQL aggregate: the expected utility of the ranking when unjudged documents and the
        padding gain as `case` says."""

    def residual(self, p: Any) -> str:
        """SQL aggregate: the best case's expected utility minus the worst's."""
        return f"({self.expected_utility(p, BEST)} - {self.expected_utility(p, WORST)})"

    def missing(self, p: Any, c: Columns) -> str:
        # No ranking: N positions of padding, which gain 0 in the worst case and 1 in the best
        # (the weights sum to 1).
        return "1" if p.residual else "0"


def within(p: CWLParams) -> str:
    """Predicate: the row is within cwl_eval's depth (`max_depth`)."""
    return f"(rank <= {int(p.max_depth)})"


def depth_reached(p: CWLParams) -> str:
    """Aggregate: how many positions the ranking fills, n' = min(its length, max_depth); the
    tail is positions n'+1 ... max_depth."""
    return f"count(*) FILTER (WHERE {within(p)})"


def tail_sum(first: str, last: str, term: Callable[[str], str]) -> str:
    """SQL: term(j) summed over the positions j = first ... last (0 when first > last)."""
    terms = f"list_transform(range({first}, ({last}) + 1), lambda cwl_j: {term('cwl_j')})"
    return f"coalesce(list_sum({terms}), {double(0)})"


def running_product(name: str, factor: str, requires: tuple[Need, ...] = ()) -> Need:
    """Column: the product of `factor` (SQL over a row) at and above this row. Over the row
    columns alone it is a window column of the first pass; over window columns (`requires`), of
    the second, ordered by rank."""
    if requires:
        return Need(name, "rank_window", f"product({factor}) OVER by_rank", requires)
    return Need(name, "window", f"product({factor}) OVER ranking")


def weighted_sums(
    g: str, next_gain: Need, reach: Need, base: Callable[[str], str], last: int
) -> tuple[str, str]:
    """SQL aggregates (sum of B(i) g(i) P(i-1), sum of B(i) P(i-1)) over the positions i = 1 ...
    `last` that the ranking fills: position 1 (P(0) = 1), then each row j above position `last`
    and above the ranking's end, which holds P(j) (`reach`) and g(j + 1) (`next_gain`, -1 below
    the end), for position j + 1. Every term is >= 0: a ranking that gains nothing sums to
    exactly 0."""
    above = f"FILTER (WHERE rank < {int(last)} AND {next_gain} >= 0)"
    after, first = base("(rank + 1)"), f"coalesce(sum({g}) FILTER (WHERE rank = 1), 0)"
    gained = f"{base('1')} * {first} + coalesce(sum({after} * {next_gain} * {reach}) {above}, 0)"
    weights = f"{base('1')} + coalesce(sum({after} * {reach}) {above}, 0)"
    return f"({gained})", f"({weights})"
