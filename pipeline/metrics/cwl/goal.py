"""C/W/L measures whose user wants a total gain T and reads on by what is gathered so far:
INST (Moffat, Bailey, Scholer and Thomas, ADCS 2015) and the static Bejeweled Player Model
(Zhang, Liu, Li, Zhang, Xu and Ma, SIGIR 2017), as cwl_eval computes them with unit costs.

G(i) is the gain gathered at positions 1 ... i, a window column; what the user does next is a
function of it. BPM needs G alone; INST's product of C is a second window over the ranking,
ordered by rank, since each C reads G.
"""

from __future__ import annotations

from pydantic import Field

from ...api import Columns, Need, double
from .expected import (
    CWLMeasure,
    depth_reached,
    running_product,
    tail_sum,
    weighted_sums,
    within,
)
from .gains import BEST, Case, GoalParams, cum_gain, gain, next_gain, tag

__all__ = ["BPM", "INST"]


class INST(CWLMeasure):
    """INST: with T(i) = T - G(i), the user reads on with

        C(i) = ((i + T + T(i) - 1) / (i + T + T(i)))^2

    Past the ranking's n' positions, G stays G(n') in the worst case, and the product of the
    C telescopes: P(j - 1) = P(n') ((n' + b) / (j - 1 + b))^2, b = 2T - G(n'). In the best case
    each padding position gains 1, so C is constant there: P(j - 1) = P(n') r^(j - 1 - n'),
    r = ((c - 1) / c)^2, c = n' + 2T - G(n').
    """

    name = "INST"
    description = "C/W/L INST: a user who wants gain T reads on less as gain is gathered"
    Params = GoalParams

    def continuing(self, p: GoalParams, case: Case) -> str:
        """SQL C(i) of the row."""
        left = f"(rank + {double(2 * p.T)} - {cum_gain(p, case)})"  # i + T + T(i)
        return f"pow(({left} - 1) / {left}, 2)"

    def reading_on(self, p: GoalParams, case: Case) -> Need:
        """P(i): the product of C down to this row (a second pass: C reads G)."""
        name = f"cwl_inst_{tag(p, case, p.T)}"
        return running_product(name, self.continuing(p, case), (cum_gain(p, case),))

    def case_needs(self, p: GoalParams, c: Columns, case: Case) -> tuple[Need, ...]:
        return (self.reading_on(p, case), next_gain(p, case))

    def expected_utility(self, p: GoalParams, case: Case) -> str:
        reach, depth = self.reading_on(p, case), int(p.max_depth)
        gathered, weights = weighted_sums(
            gain(p, case), next_gain(p, case), reach, lambda rank: double(1), depth
        )
        tail = self.tail(p, case)
        gained = tail if case == BEST else double(0)  # the padding gains 1 or 0
        return f"(({gathered} + {gained}) / ({weights} + {tail}))"

    def tail(self, p: GoalParams, case: Case) -> str:
        """SQL: the sum of P(j - 1) over the padding positions j = n' + 1 ... N."""
        depth, n, rows = int(p.max_depth), depth_reached(p), f"FILTER (WHERE {within(p)})"
        end = f"coalesce(product({self.continuing(p, case)}) {rows}, 1)"  # P(n')
        total = f"coalesce(max({cum_gain(p, case)}) {rows}, 0)"  # G(n'): gains are >= 0
        if case == BEST:
            c = f"({n} + {double(2 * p.T)} - {total})"
            ratio = f"pow(({c} - 1) / {c}, 2)"
            return f"{end} * {tail_sum('0', f'{depth} - {n} - 1', lambda t: f'pow({ratio}, {t})')}"
        b = f"({double(2 * p.T)} - {total})"
        spread = tail_sum(f"{n} + 1", str(depth), lambda j: f"1 / pow({j} - 1 + {b}, 2)")
        return f"{end} * pow({n} + {b}, 2) * {spread}"


class BPMParams(GoalParams):
    K: int = Field(
        10, gt=0, description="the documents the user will read at most (cwl_eval's cost K)"
    )


class BPM(CWLMeasure):
    """The static Bejeweled Player Model: the user reads on while G(i) < T and i < K, so reads
    the first s positions, s = min(first i with G(i) >= T, K, max_depth), each with weight 1/s:

        BPM = G(s) / s

    G never falls (gains are >= 0), so the first row where G(i) >= T is the one with the least
    rank among them, and G(s) the least G among them. If the ranking has none within K, the user
    reads on into the padding: in the worst case gathering nothing, up to K; in the best case 1
    a position, until G reaches T.
    """

    name = "BPM"
    description = "C/W/L static Bejeweled Player Model: read until gain T or K documents"
    Params = BPMParams
    cutoff = "K"

    def case_needs(self, p: BPMParams, c: Columns, case: Case) -> tuple[Need, ...]:
        return (cum_gain(p, case),)

    def expected_utility(self, p: BPMParams, case: Case) -> str:
        gathered, last = cum_gain(p, case), self.last(p)
        met = f"FILTER (WHERE {gathered} >= {double(p.T)} AND rank <= {last})"
        read = f"least({depth_reached(p)}, {last})"  # the ranking's positions read, T unmet
        tail = self.tail(p, case)
        gained = tail if case == BEST else double(0)  # the padding gains 1 or 0
        unmet = f"({self.gathered(p, case)} + {gained}) / ({read} + {tail})"
        reached = f"min({gathered}) {met} / min(rank) {met}"  # G(s) / s, s within the ranking
        return f"(CASE WHEN count(*) {met} = 0 THEN {unmet} ELSE {reached} END)"

    def last(self, p: BPMParams) -> int:
        """The last position the user may read: K, or max_depth."""
        return min(int(p.K), int(p.max_depth))

    def gathered(self, p: BPMParams, case: Case) -> str:
        """SQL aggregate: G at the last position of the ranking the user may read."""
        return f"coalesce(max({cum_gain(p, case)}) FILTER (WHERE rank <= {self.last(p)}), 0)"

    def tail(self, p: BPMParams, case: Case) -> str:
        """SQL: how many padding positions the user reads when the ranking does not reach T:
        every one up to K in the worst case, until G reaches T in the best."""
        room = f"({self.last(p)} - {depth_reached(p)})"
        if case == BEST:
            padding = f"least({room}, ceil({double(p.T)} - {self.gathered(p, case)}))"
            return f"(CASE WHEN {room} > 0 THEN {padding} ELSE 0 END)"
        return f"greatest({room}, 0)"
