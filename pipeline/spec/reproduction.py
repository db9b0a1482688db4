"""The `reproduction:` section of a spec: original runs and their reproductions, compared as
repro_eval (Breuer et al., SIGIR 2020) compares them.

Checked like every section (strict, unknown keys named); what needs the runs, their collections
and the metrics is checked in `pipeline.reproduction.entries`, before any data is read.
"""

from __future__ import annotations

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from pipeline.spec.base import StrictModel

__all__ = ["Reproduction"]

_RUNS = {"minItems": 1, "uniqueItems": True}


class Reproduction(StrictModel):
    """Original runs (a baseline first, then advanced runs) and their reproductions, in the same
    order: under the same collection a reproducibility study, under another a replicability
    one."""

    original: list[str] = Field(
        description="the original runs: the baseline first, then the advanced runs",
        json_schema_extra=_RUNS,
    )
    reproduced: list[str] = Field(
        description="their reproductions, one for each original run, in the same order",
        json_schema_extra=_RUNS,
    )
    collection: str | None = Field(
        None, description="the collection the original runs are evaluated under; none: the one "
        "they share",
    )  # fmt: skip
    reproduced_collection: str | None = Field(
        None, description="the collection the reproductions are evaluated under; another than "
        "`collection` makes a replicability study; none: the original runs' collection if the "
        "reproductions are evaluated under it, else the one they share",
    )  # fmt: skip
    depth: int = Field(
        1000, ge=1, description="the rankings' depth compared by ktu and rbo (repro_eval's 1000)"
    )
    rbo_p: float = Field(
        0.95, gt=0, lt=1, description="the persistence p of rbo, in (0, 1) (repro_eval's 0.95)"
    )

    @model_validator(mode="after")
    def _paired(self) -> Reproduction:
        if not self.original:
            raise _invalid("original: name the original runs, the baseline first")
        if len(self.reproduced) != len(self.original):
            raise _invalid(
                f"reproduced: {len(self.reproduced)} run(s) for {len(self.original)} original "
                "run(s); give one reproduction for each original run, in the same order"
            )
        for key in ("original", "reproduced"):
            runs = getattr(self, key)
            if len(set(runs)) < len(runs):
                raise _invalid(f"{key}: a run is listed twice; list each once")
        return self


def _invalid(message: str) -> PydanticCustomError:
    return PydanticCustomError("invalid", "{message}", {"message": message})
