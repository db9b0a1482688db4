"""C/W/L measures whose user reads on whatever the gains: scaled DCG, INSQ, the U-measure and
time-biased gain (every document costs 1, as in cwl_eval without a cost file).

Their weights are a function of the position alone, w(i) over positions 1 ... N = max_depth:

    EU       = sum over ranked rows of g(i) w(i) / (w(1) + ... + w(N))
    residual = 1 - sum over judged rows of w(i) / (w(1) + ... + w(N))

(the best case gives each unjudged position and each position past the ranking its full
weight). Both read only the judged rows and their ranks.
"""

from __future__ import annotations

from abc import abstractmethod

from pydantic import Field

from ...api import double
from .expected import CWLMeasure, tail_sum, within
from .gains import Case, CWLParams, GoalParams, gain

__all__ = ["INSQ", "SDCG", "TBG", "U", "FixedWeights", "goal_discount"]


class FixedWeights(CWLMeasure):
    """A C/W/L measure whose weights depend on the position alone (see the module)."""

    judged_rows_suffice = True

    @abstractmethod
    def weight(self, p: CWLParams, rank: str) -> str:
        """SQL w(rank), the unnormalised weight of a position (1-based)."""

    def total(self, p: CWLParams) -> str:
        """SQL w(1) + ... + w(max_depth), a constant."""
        return tail_sum("1", str(int(p.max_depth)), lambda j: self.weight(p, j))

    def expected_utility(self, p: CWLParams, case: Case) -> str:
        share = f"sum({gain(p, case)} * {self.weight(p, 'rank')}) FILTER (WHERE {within(p)})"
        return f"(coalesce({share}, 0) / {self.total(p)})"

    def residual(self, p: CWLParams) -> str:
        judged = f"sum({self.weight(p, 'rank')}) FILTER (WHERE relv <> -1 AND {within(p)})"
        return f"(1 - coalesce({judged}, 0) / {self.total(p)})"


class SDCGParams(CWLParams):
    k: int | None = Field(None, gt=0, description="cutoff: the user reads the first k positions")


class SDCG(FixedWeights):
    """Scaled DCG@k (cwl_eval's NDCG-k): DCG's discount made a distribution over the first k
    positions, w(i) = 1 / log2(i + 1) for i <= k. Not trec_eval's nDCG: no ideal ranking."""

    name = "SDCG"
    description = "C/W/L scaled DCG@k: discount 1/log2(i+1) over k positions (cwl_eval NDCG-k)"
    Params = SDCGParams
    cutoff = "k"
    required = ("k",)

    def weight(self, p: SDCGParams, rank: str) -> str:
        return f"(CASE WHEN {rank} <= {int(p.k)} THEN 1 / log2({rank} + 1) ELSE {double(0)} END)"


def goal_discount(p: GoalParams, rank: str) -> str:
    """SQL (2T / (rank - 1 + 2T))^2: the chance that INSQ's user, wanting gain T, reaches a
    position, the product of ((i + 2T - 1) / (i + 2T))^2 over the positions i above it."""
    twice = double(2 * p.T)
    return f"pow({twice} / ({rank} - 1 + {twice}), 2)"


class INSQ(FixedWeights):
    """INSQ (Moffat, Scholer and Thomas, ADCS 2012): C(i) = ((i + 2T - 1) / (i + 2T))^2, so
    w(i) = (2T / (i - 1 + 2T))^2."""

    name = "INSQ"
    description = "C/W/L INSQ: a user who wants gain T reads on with ((i+2T-1)/(i+2T))^2"
    Params = GoalParams

    def weight(self, p: GoalParams, rank: str) -> str:
        return goal_discount(p, rank)


class UParams(CWLParams):
    L: float = Field(1000.0, gt=0, description="the reading cost at which attention is gone")
    # cwl_eval gives position N no weight: at depth 1 no position has any.
    max_depth: int = Field(
        1000, gt=1, description="cwl_eval's --max_depth: each ranking is cut or padded to it"
    )


class U(FixedWeights):
    """The U-measure (Sakai and Dou, SIGIR 2013), as cwl_eval has it with unit costs:
    w(i) = max(0, 1 - (i - 1) / L) for i < N, and w(N) = 0."""

    name = "U"
    description = "C/W/L U-measure: attention falls linearly to 0 after L documents"
    Params = UParams

    def weight(self, p: UParams, rank: str) -> str:
        decay = f"greatest({double(0)}, 1 - ({rank} - 1) / {double(p.L)})"
        return f"(CASE WHEN {rank} < {int(p.max_depth)} THEN {decay} ELSE {double(0)} END)"


class TBGParams(CWLParams):
    halflife: float = Field(224.0, gt=0, description="documents read until attention halves")


class TBG(FixedWeights):
    """Time-biased gain (Smucker and Clarke, SIGIR 2012), as cwl_eval has it with unit costs:
    w(i) = 2^(-(i - 1) / halflife)."""

    name = "TBG"
    description = "C/W/L time-biased gain: attention halves every halflife documents"
    Params = TBGParams

    def weight(self, p: TBGParams, rank: str) -> str:
        return f"pow(2, -({rank} - 1) / {double(p.halflife)})"
