"""NaN and infinity in a metric's parameters: YAML's `.nan` and `.inf`, `1e999` in a metric
string. No measure is defined there, and a NaN passes every bound a parameter declares
(`gt=0` is False for NaN, but so is its negation), so each is refused naming where it is."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["NonFinite", "non_finite"]


@dataclass(frozen=True)
class NonFinite:
    """The first NaN or infinity among parameters: the parameter's key, where in it, the number."""

    key: str
    where: str  # "parameter 'gain.1'" or "a key of parameter 'gain'"
    number: float

    def message(self, text: str) -> str:
        """The error's text for metric `text`."""
        return f"'{text}': {self.where} is {self.number!r}; parameters must be finite numbers"


def non_finite(params: dict[str, Any]) -> NonFinite | None:
    """The first parameter that is, or holds (in a mapping's keys or values, or a list), NaN or
    an infinity; None when every number is finite."""
    for key, value in params.items():
        found = _find(value, str(key))
        if found is not None:
            return NonFinite(str(key), *found)
    return None


def _find(value: Any, path: str) -> tuple[str, float] | None:
    if isinstance(value, float):
        return None if math.isfinite(value) else (f"parameter '{path}'", value)
    if isinstance(value, dict):
        keys = [k for k in value if isinstance(k, float) and not math.isfinite(k)]
        if keys:
            return f"a key of parameter '{path}'", keys[0]
        items = [(v, f"{path}.{k}") for k, v in value.items()]
    elif isinstance(value, list | tuple):
        items = [(v, f"{path}.{i}") for i, v in enumerate(value)]
    else:
        return None
    return next((found for v, p in items if (found := _find(v, p)) is not None), None)
