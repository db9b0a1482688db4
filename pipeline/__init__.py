"""irpipe: a declarative, exact and fast evaluation pipeline for information retrieval."""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Where each public name lives. They are imported on first use (PEP 562), so that `irpipe --help`
# and `irpipe validate` do not pay for DuckDB, and a command imports only what it uses.
_EXPORTS = {
    "Columns": "columns",
    "Evaluation": "evaluate",
    "InputDataError": "errors",
    "IrpipeError": "errors",
    "Measure": "measure",
    "MeasureParams": "measure",
    "OutputError": "errors",
    "PluginError": "errors",
    "RankedParams": "measure",
    "SpecError": "errors",
    "evaluate": "evaluate",
    "hookimpl": "hookspecs",
    "load_spec": "spec",
    "validate": "evaluate",
}

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

if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from pipeline.columns import Columns
    from pipeline.errors import InputDataError, IrpipeError, OutputError, PluginError, SpecError
    from pipeline.evaluate import Evaluation, evaluate, validate
    from pipeline.hookspecs import hookimpl
    from pipeline.measure import Measure, MeasureParams, RankedParams
    from pipeline.spec import load_spec


class _Package(types.ModuleType):
    """`pipeline.evaluate` is the function, as when it was imported eagerly. Python sets a package's
    attribute to each submodule it imports, so importing the module `pipeline.evaluate` (which
    `from pipeline.evaluate import manifest` does) would otherwise replace the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return  # the submodule stays reachable in sys.modules, where imports look first
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
