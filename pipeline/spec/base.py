"""What every section of the spec is built on: a strict, frozen model that names unknown keys, paths
resolved against the spec's directory, and "did you mean" hints."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationInfo,
    model_validator,
)
from pydantic_core import PydanticCustomError

from pipeline.entry_points import quiet_pydantic_plugins

# Pydantic looks for its plugins (reading every distribution's metadata) when it first builds a
# validator; irpipe's cache of the installation tells it beforehand when none is installed.
quiet_pydantic_plugins()

__all__ = [
    "StrictModel",
    "at_key",
    "close_matches",
    "did_you_mean",
    "resolve_path",
    "string_or_mapping",
    "unknown_key_error",
]


class StrictModel(BaseModel):
    """Frozen, strict, and unknown keys are reported with the allowed ones."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.model_config.get("extra") == "forbid":
            allowed = list(cls.model_fields)
            for key in data:
                if key not in allowed:
                    raise unknown_key_error(key, allowed)
        return data


def unknown_key_error(key: Any, allowed: list[str]) -> PydanticCustomError:
    """The error for a key the model does not know, with a "did you mean" and the allowed keys."""
    return PydanticCustomError(
        "unknown_key",
        "unknown key; {hint}allowed: {allowed}",
        {"key": key, "hint": did_you_mean(str(key), allowed), "allowed": ", ".join(allowed)},
    )


def resolve_path(path: Path, info: ValidationInfo) -> Path:
    """`path` relative to the spec's directory (the validation context's `base_dir`)."""
    base = (info.context or {}).get("base_dir")
    return path if path.is_absolute() or base is None else Path(base) / path


def string_or_mapping(short: str) -> Callable[[dict[str, Any]], None]:
    """A JSON Schema hook for a model also written as a string, its short form (`short` describes
    it): the schema says "a string or the mapping", as the model's validator accepts."""

    def hook(schema: dict[str, Any]) -> None:
        mapping = dict(schema)
        schema.clear()
        schema["title"], schema["description"] = mapping.pop("title"), mapping.pop("description")
        schema["anyOf"] = [{"type": "string", "description": short}, mapping]

    return hook


def did_you_mean(word: str, options: list[str]) -> str:
    """A "did you mean 'x'? " hint, or an empty string when nothing is close."""
    close = close_matches(word, options, n=1)
    return f"did you mean '{close[0]}'? " if close else ""


def close_matches(word: str, options: list[str], n: int = 3) -> list[str]:
    """The options closest to `word`, best first, each once and never `word` itself (it is
    what was typed and refused): the same word in another case first (`p` -> `P`), then
    difflib's closest spellings."""
    others = [option for option in dict.fromkeys(options) if option != word]
    same = [option for option in others if option.casefold() == word.casefold()]
    close = difflib.get_close_matches(word, others, n=n)
    return list(dict.fromkeys([*same, *close]))[:n]


def at_key(loc: tuple, message: str) -> PydanticCustomError:
    """An error of the whole spec that is about one key (`loc`): the loader names that key's
    line (a model validator's own errors have no location)."""
    return PydanticCustomError("at_key", "{message}", {"loc": loc, "message": message})
