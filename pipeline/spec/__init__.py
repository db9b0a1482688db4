"""The spec: pydantic models of the YAML file and loading with errors that name file and key.

Imports: the foundation, pydantic and PyYAML.
"""

from pipeline.spec.loader import LoadedSpec, load_spec, parse_spec_text
from pipeline.spec.models import Collection, Compare, Expect, Gate, MetricItem, Run, Settings, Spec
from pipeline.spec.outputs import Output

__all__ = [
    "Collection",
    "Compare",
    "Expect",
    "Gate",
    "LoadedSpec",
    "MetricItem",
    "Output",
    "Run",
    "Settings",
    "Spec",
    "load_spec",
    "parse_spec_text",
]
