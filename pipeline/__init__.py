"""irpipe: a declarative, exact and fast evaluation pipeline for information retrieval."""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import InputDataError, IrpipeError, OutputError, PluginError, SpecError  # noqa: E402
from .evaluate import Evaluation, evaluate, validate  # noqa: E402
from .hookspecs import hookimpl  # noqa: E402
from .metrics.base import Columns, Measure, MeasureParams, RankedParams  # noqa: E402
from .spec import load_spec  # noqa: E402

__all__ = [
    "Columns",
    "Evaluation",
    "InputDataError",
    "IrpipeError",
    "Measure",
    "MeasureParams",
    "OutputError",
    "PluginError",
    "RankedParams",
    "SpecError",
    "__version__",
    "evaluate",
    "hookimpl",
    "load_spec",
    "validate",
]
