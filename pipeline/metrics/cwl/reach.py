"""The NERR measures (Azzopardi, Mackenzie and Moffat, "ERR is not C/W/L", ICTIR 2021): C/W/L
versions of ERR, whose user stops at a document with the chance of its gain:

    C(i) = b(i) (1 - g(i)),   so   P(i-1) = B(i) R(i-1),   R(i) = (1 - g(1)) ... (1 - g(i))

with B(i) = b(1) ... b(i-1) in closed form: NERR8@k, B = 1; NERR9@k, B = 1/i; both stop
after position k. NERR10(p), B = p^(i-1); NERR11(T), B = (2T / (i - 1 + 2T))^2.

R is one running product down the ranking, whatever the measure. Past the ranking's end (its
n' positions), R stays R(n') in the worst case (the padding gains 0), so the tail adds
R(n') (B(n'+1) + ... + B(K)); in the best case the padding gains 1 and stops the user at once:
the tail is position n'+1 alone, with weight and gain B(n'+1) R(n').
"""

from __future__ import annotations

from abc import abstractmethod
from functools import partial

from pydantic import Field

from ...api import Columns, Need, double
from .expected import CWLMeasure, depth_reached, running_product, tail_sum, weighted_sums
from .fixed import goal_discount
from .gains import BEST, Case, CWLParams, GoalParams, gain, next_gain, tag

__all__ = ["NERR8", "NERR9", "NERR10", "NERR11", "Reach"]


def reading_on(p: CWLParams, case: Case) -> Need:
    """R(i): the product of 1 - g down to this row."""
    return running_product(f"cwl_reach_{tag(p, case)}", f"(1 - {gain(p, case)})")


class Reach(CWLMeasure):
    """A NERR measure: B(i) (`base`) and the depth K its user can reach (`depth`)."""

    @abstractmethod
    def base(self, p: CWLParams, rank: str) -> str:
        """SQL B(rank) = b(1) ... b(rank - 1)."""

    def depth(self, p: CWLParams) -> int:
        """K: P(i - 1) is 0 for every position i > K."""
        return int(p.max_depth)

    def case_needs(self, p: CWLParams, c: Columns, case: Case) -> tuple[Need, ...]:
        return (reading_on(p, case), next_gain(p, case))

    def expected_utility(self, p: CWLParams, case: Case) -> str:
        reach, base = reading_on(p, case), partial(self.base, p)
        gathered, weights = weighted_sums(
            gain(p, case), next_gain(p, case), reach, base, self.depth(p)
        )
        tail = self.tail(p, case)
        gained = tail if case == BEST else double(0)  # the padding gains 1 or 0
        return f"(({gathered} + {gained}) / ({weights} + {tail}))"

    def tail(self, p: CWLParams, case: Case) -> str:
        """SQL: the sum of B(j) R(j - 1) over the padding positions j = n' + 1 ... K."""
        k, n, base = self.depth(p), depth_reached(p), partial(self.base, p)
        # R at the last position read (R never rises)
        end = f"coalesce(min({reading_on(p, case)}) FILTER (WHERE rank <= {k}), 1)"
        if case == BEST:
            return f"(CASE WHEN {n} < {k} THEN {base(f'({n} + 1)')} * {end} ELSE 0 END)"
        return f"{end} * {tail_sum(f'{n} + 1', str(k), base)}"


class CutoffParams(CWLParams):
    k: int | None = Field(None, gt=0, description="cutoff: the user stops after position k")


class NERR8(Reach):
    """NERR, equation 8: C(i) = 1 - g(i) for i < k, 0 from k on."""

    name = "NERR8"
    description = "C/W/L ERR (eq. 8): stop at a document with the chance of its gain, by k"
    Params = CutoffParams
    cutoff = "k"
    required = ("k",)

    def base(self, p: CutoffParams, rank: str) -> str:
        return double(1)

    def depth(self, p: CutoffParams) -> int:
        return min(int(p.k), int(p.max_depth))


class NERR9(NERR8):
    """NERR, equation 9: C(i) = i / (i + 1) (1 - g(i)) for i < k, 0 from k on."""

    name = "NERR9"
    description = "C/W/L ERR (eq. 9): ERR's 1/i discount as a user model, stopping by k"

    def base(self, p: CutoffParams, rank: str) -> str:
        return f"(1 / {rank})"


class PersistenceParams(CWLParams):
    p: float = Field(0.9, gt=0, lt=1, description="persistence: the chance of reading on")


class NERR10(Reach):
    """NERR, equation 10: C(i) = p (1 - g(i)) (RBP's user who also stops when satisfied)."""

    name = "NERR10"
    description = "C/W/L ERR (eq. 10): RBP's persistence p, and stopping when satisfied"
    Params = PersistenceParams

    def base(self, p: PersistenceParams, rank: str) -> str:
        return f"pow({double(p.p)}, {rank} - 1)"


class NERR11(Reach):
    """NERR, equation 11: C(i) = ((i + 2T - 1) / (i + 2T))^2 (1 - g(i)) (INSQ's user who
    also stops when satisfied)."""

    name = "NERR11"
    description = "C/W/L ERR (eq. 11): INSQ's goal T, and stopping when satisfied"
    Params = GoalParams

    def base(self, p: GoalParams, rank: str) -> str:
        return goal_discount(p, rank)
