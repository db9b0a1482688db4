"""irpipe: a declarative, exact and fast evaluation pipeline for information retrieval."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pipeline._version import __version__

# Where each public name lives. They are imported on first use (PEP 562), so that `irpipe --help`
# and `irpipe validate` do not pay for DuckDB, and a command imports only what it uses.
_EXPORTS = {
    "Columns": "contract.columns",
    "Evaluation": "run.evaluation",
    "Evaluator": "notebook",
    "InputDataError": "errors",
    "IrpipeError": "errors",
    "Measure": "contract.measure",
    "MeasureParams": "contract.measure",
    "OutputError": "errors",
    "PluginError": "errors",
    "RankedParams": "contract.measure",
    "SpecError": "errors",
    "Results": "notebook",
    "evaluate": "notebook",
    "hookimpl": "hookspecs",
    "load_spec": "spec",
    "validate": "run.preflight",
}

__all__ = [
    "Columns",
    "Evaluation",
    "Evaluator",
    "InputDataError",
    "IrpipeError",
    "Measure",
    "MeasureParams",
    "OutputError",
    "PluginError",
    "RankedParams",
    "Results",
    "SpecError",
    "__version__",
    "evaluate",
    "hookimpl",
    "load_spec",
    "validate",
]

if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from pipeline.contract.columns import Columns
    from pipeline.contract.measure import Measure, MeasureParams, RankedParams
    from pipeline.errors import InputDataError, IrpipeError, OutputError, PluginError, SpecError
    from pipeline.hookspecs import hookimpl
    from pipeline.notebook import Evaluator, Results, evaluate
    from pipeline.run.evaluation import Evaluation
    from pipeline.run.preflight import validate
    from pipeline.spec import load_spec


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
