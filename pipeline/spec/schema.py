"""The spec's JSON Schema, generated from its pydantic models, for editors and other tools.

The repository commits it as `configs/irpipe.schema.json` (a test fails when it and the models
differ); `irpipe schema` prints the schema of the installed version. The schema describes the
shape of a spec; what needs the registry or the files (metric names and parameters, collections
named by runs, outputs written twice) is checked by `irpipe validate`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.errors import SpecError
from pipeline.spec.models import Spec

__all__ = ["check_schema_file", "spec_schema", "schema_text"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def spec_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a spec."""
    schema = Spec.model_json_schema(mode="validation")
    return {"$schema": DIALECT, **schema, "title": "irpipe spec"}


def schema_text() -> str:
    """The schema as the committed file holds it: indented JSON and a final newline."""
    return json.dumps(spec_schema(), indent=2, ensure_ascii=False) + "\n"


def check_schema_file(path: Path) -> None:
    """Raise SpecError unless the file at `path` is exactly the models' schema."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: cannot read the schema ({exc})") from None
    expected = schema_text()
    if text != expected:
        pairs = zip(text.splitlines(), expected.splitlines(), strict=False)
        line = next((i for i, (a, b) in enumerate(pairs, 1) if a != b), None)
        line = line or min(len(text.splitlines()), len(expected.splitlines())) + 1
        raise SpecError(
            f"{path}:{line}: the schema differs from the spec's models of this irpipe; "
            f"regenerate it: irpipe schema > {path}"
        )
