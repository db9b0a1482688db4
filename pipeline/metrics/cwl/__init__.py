"""C/W/L user-model measures, equal to cwl_eval's (1.0.12) expected utility per query, and its
residual: INST, INSQ, BPM (static), NERR8, NERR9, NERR10, NERR11, SDCG, U and TBG.

Each is SQL over the canonical ranking (see `expected` for the framework, `gains` for how grades
become gains). cwl_eval reads a run's lines in the order of the file; irpipe ranks them by the
`ordering` setting, so the two agree whenever the file lists each query's documents in that
order, as TREC run writers do.

Imports: `pipeline.api` alone, as every built-in metric.
"""

from __future__ import annotations

from ...api import Measure, hookimpl
from .fixed import INSQ, SDCG, TBG, U
from .goal import BPM, INST
from .reach import NERR8, NERR9, NERR10, NERR11

__all__ = [
    "BPM",
    "INSQ",
    "INST",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "SDCG",
    "TBG",
    "U",
    "register_metrics",
]


@hookimpl
def register_metrics() -> list[type[Measure]]:
    """The C/W/L measures."""
    return [INST, INSQ, BPM, NERR8, NERR9, NERR10, NERR11, SDCG, U, TBG]
