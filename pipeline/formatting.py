"""How a value is shown, in the console and in text outputs alike: trec_eval's 4 decimals; and
records (manifests, the history's provenance, `--json` documents) as JSON text, which has no NaN."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = [
    "finite",
    "format_value",
    "json_text",
]


def format_value(value: Any, integral: bool = False) -> str:
    """4 decimals (trec_eval's %.4f), counts as integers, and empty for no value."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.0f}" if integral and value.is_integer() else f"{value:.4f}"
    return str(value)


def finite(value: Any) -> Any:
    """`value` (JSON-able: dicts, lists, scalars) with each NaN or infinity as None: a value
    that is undefined (a mean over no query) is null in JSON, which has no NaN."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [finite(item) for item in value]
    if isinstance(value, tuple):
        return tuple(finite(item) for item in value)
    return value


def json_text(value: Any, **options: Any) -> str:
    """`value` as JSON text (json.dumps `options`), NaN and infinities as null (`finite`):
    never the `NaN` that Python's json writes and no JSON reader accepts."""
    return json.dumps(finite(value), allow_nan=False, **options)
