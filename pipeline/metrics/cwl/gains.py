"""The gains a C/W/L user model reads, as cwl_eval (1.0.12) reads them: each judged document's
gain in [0, 1]; an unjudged document gains 0 in the worst case and 1 in the best, and so does
each position past the end of the ranking (cwl_eval pads every ranking to `--max_depth`).

cwl_eval reads the fourth column of its gain file as the gain. irpipe reads a grade g as the
gain min(g, max_rel) / max_rel (so, by default, the grade itself: binary judgments and decimal
grades in [0, 1] are read as they are), unless `gains` names that grade's gain. A negative
judgment is judged, with gain 0 (cwl_eval refuses negative gains; ir_measures clips them to 0).
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from ...api import MeasureParams, Need, double

__all__ = [
    "BEST",
    "WORST",
    "Case",
    "CWLParams",
    "GoalParams",
    "cum_gain",
    "gain",
    "next_gain",
    "tag",
]

#: Which bound of the expected utility: unjudged documents and the padding gain 0, or 1.
Case = Literal["worst", "best"]
WORST: Case = "worst"
BEST: Case = "best"

Grade = Annotated[int, Field(ge=0)]
UnitGain = Annotated[float, Field(ge=0, le=1)]


class CWLParams(MeasureParams):
    """What every C/W/L measure takes: how grades become gains, cwl_eval's depth, and whether
    the value is the expected utility or its residual."""

    gains: dict[Grade, UnitGain] | None = Field(
        None, description="{grade: gain in [0, 1]}; grades it leaves out gain as max_rel says"
    )
    max_rel: float = Field(
        1.0,
        gt=0,
        description="a grade g gains min(g, max_rel) / max_rel (1: the grade is the gain, as "
        "cwl_eval reads its gain file; 3 for grades 0..3, as ir_measures' max_rel)",
    )
    max_depth: int = Field(
        1000, gt=0, description="cwl_eval's --max_depth: each ranking is cut or padded to it"
    )
    residual: bool = Field(
        False,
        description="the residual (cwl_eval -r): the expected utility if every unjudged and "
        "unretrieved document gained 1, minus it if they gained 0",
    )

    @field_validator("residual", mode="before")
    @classmethod
    def _word(cls, value: Any) -> Any:
        # `INST(residual=true)`: in a metric string a bare word is text; YAML's words are true
        # and false, and so are these (any other text is refused, as strict types are).
        return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


class GoalParams(CWLParams):
    """A C/W/L measure whose user wants a total gain T."""

    T: float = Field(1.0, gt=0, description="the gain the user wants (cwl_eval's T)")


def gain(p: CWLParams, case: Case) -> str:
    """SQL gain of the row's document: 0 or 1 (`case`) when unjudged (relv -1), 0 when judged
    negatively (relv -2), else its grade's. Grades may be decimals: nothing assumes integers."""
    unjudged = double(1 if case == BEST else 0)
    named = "".join(
        f" WHEN relv = {g} THEN {double(v)}" for g, v in sorted((p.gains or {}).items())
    )
    top = double(p.max_rel)
    scaled = f"least(relv, {top}) / {top}"
    judged = f"WHEN relv < 0 THEN {double(0)}{named} ELSE {scaled}"
    return f"(CASE WHEN relv = -1 THEN {unjudged} {judged} END)"


def tag(p: CWLParams, case: Case, *more: object) -> str:
    """A name part that encodes the gains (and `more`): equal tags, equal definitions."""
    key = repr((sorted((p.gains or {}).items()), p.max_rel, *more))
    return f"{hashlib.sha1(key.encode()).hexdigest()[:8]}_{case}"


def cum_gain(p: CWLParams, case: Case) -> Need:
    """Window column: the gain gathered at or above this rank."""
    return Need(f"cwl_gathered_{tag(p, case)}", "window", f"sum({gain(p, case)}) OVER ranking")


def next_gain(p: CWLParams, case: Case) -> Need:
    """Window column: the gain of the row below this one, or -1 on the ranking's last row."""
    sql = f"lead({gain(p, case)}, 1, {double(-1)}) OVER ranking"
    return Need(f"cwl_next_{tag(p, case)}", "window", sql)
