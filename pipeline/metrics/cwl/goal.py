"""C/W/L measures whose user wants a total gain T and reads on by what is gathered so far:
INST (Moffat, Bailey, Scholer and Thomas, ADCS 2015) and the static Bejeweled Player Model
(Zhang, Liu, Li, Zhang, Xu and Ma, SIGIR 2017), as cwl_eval computes them with unit costs.

G(i) is the gain gathered at positions 1 ... i, a window column; what the user does next is a
function of it, so each is a second window over the ranking.
"""

from __future__ import annotations

from pydantic import Field

from ...api import Need, double
from .expected import CWLMeasure, Product, depth_reached, running_product, tail_sum, within
from .gains import BEST, Case, GoalParams, cum_gain, gain, tag

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

    def reading_on(self, p: GoalParams, case: Case) -> Product:
        """P: the running product of C down the ranking."""
        gathered = cum_gain(p, case)
        left = f"(rank + {double(2 * p.T)} - {gathered})"  # i + T + T(i)
        factor = f"pow(({left} - 1) / {left}, 2)"
        return running_product(f"cwl_inst_{tag(p, case, p.T)}", factor, (gathered,))

    def case_needs(self, p: GoalParams, case: Case) -> tuple[Need, ...]:
        reach = self.reading_on(p, case)
        return (reach.zeros, reach.nonzero)

    def expected_utility(self, p: GoalParams, case: Case) -> str:
        reach, g, depth = self.reading_on(p, case), gain(p, case), int(p.max_depth)
        rows = f"FILTER (WHERE {within(p)})"
        end = f"coalesce(product({reach.factor}) {rows}, 1)"  # P(n')
        gathered = f"coalesce(max({cum_gain(p, case)}) {rows}, 0)"  # G(n'): gains are >= 0
        n = depth_reached(p)
        if case == BEST:
            c = f"({n} + {double(2 * p.T)} - {gathered})"
            ratio = f"pow(({c} - 1) / {c}, 2)"
            tail = f"{end} * {tail_sum('0', f'{depth} - {n} - 1', lambda t: f'pow({ratio}, {t})')}"
            gained = tail
        else:
            b = f"({double(2 * p.T)} - {gathered})"
            spread = tail_sum(f"{n} + 1", str(depth), lambda j: f"1 / pow({j} - 1 + {b}, 2)")
            tail = f"{end} * pow({n} + {b}, 2) * {spread}"
            gained = double(0)
        weight = reach.before()
        return (
            f"((coalesce(sum({g} * {weight}) {rows}, 0) + {gained})"
            f" / (coalesce(sum({weight}) {rows}, 0) + {tail}))"
        )


class BPMParams(GoalParams):
    K: int = Field(
        10, gt=0, description="the documents the user will read at most (cwl_eval's cost K)"
    )


class BPM(CWLMeasure):
    """The static Bejeweled Player Model: the user reads on while G(i) < T and i < K, so reads
    the first s positions, s = min(first i with G(i) >= T, K, max_depth), each with weight 1/s:

        BPM = G(s) / s

    Past the ranking, the worst case gathers nothing, the best case 1 a position.
    """

    name = "BPM"
    description = "C/W/L static Bejeweled Player Model: read until gain T or K documents"
    Params = BPMParams
    cutoff = "K"

    def satisfied(self, p: BPMParams, case: Case) -> Need:
        """Second window column: the positions at or above this one where G has reached T."""
        gathered = cum_gain(p, case)
        sql = f"CAST(sum(CAST({gathered} >= {double(p.T)} AS INTEGER)) OVER by_rank AS BIGINT)"
        return Need(f"cwl_bpm_{tag(p, case, p.T)}", "rank_window", sql, (gathered,))

    def case_needs(self, p: BPMParams, case: Case) -> tuple[Need, ...]:
        return (self.satisfied(p, case),)

    def expected_utility(self, p: BPMParams, case: Case) -> str:
        gathered, satisfied = cum_gain(p, case), self.satisfied(p, case)
        last, n = min(int(p.K), int(p.max_depth)), depth_reached(p)
        here = f"CAST({gathered} >= {double(p.T)} AS INTEGER)"
        read = f"FILTER (WHERE rank <= {last} AND {satisfied} - {here} = 0)"
        unmet = f"count(*) FILTER (WHERE {gathered} >= {double(p.T)} AND {within(p)}) = 0"
        room = f"({last} - {n})"  # padding positions the user may still read
        if case == BEST:
            top = f"coalesce(max({gathered}) FILTER (WHERE {within(p)}), 0)"
            padding = f"least({room}, ceil({double(p.T)} - {top}))"
            gained = f"(CASE WHEN {unmet} AND {room} > 0 THEN {padding} ELSE 0 END)"
            tail = gained
        else:
            tail = f"(CASE WHEN {unmet} AND {room} > 0 THEN {room} ELSE 0 END)"
            gained = double(0)
        return (
            f"((coalesce(sum({gain(p, case)}) {read}, 0) + {gained}) / (count(*) {read} + {tail}))"
        )
