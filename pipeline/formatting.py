"""How a value is shown, in the console and in text outputs alike: trec_eval's 4 decimals."""

from __future__ import annotations

from typing import Any

__all__ = [
    "format_value",
]


def format_value(value: Any, integral: bool = False) -> str:
    """4 decimals (trec_eval's %.4f), counts as integers, and empty for no value."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.0f}" if integral and value.is_integer() else f"{value:.4f}"
    return str(value)
