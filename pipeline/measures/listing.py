"""What `irpipe metrics` shows of each metric: its names (aliases, trec_eval's, the field's
lower-case ones), who provides it, what it is, and each parameter with its default; every metric,
or those a user names as a spec would (`nDCG`, `NDCG`, `ndcg_cut_10`, `mrr`, `nDCG@10`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pipeline.contract.measure import Measure
from pipeline.contract.python_measure import PythonMeasure
from pipeline.measures.field_names import FIELD_NAMES
from pipeline.measures.parameters import JUDGED_ONLY
from pipeline.measures.registry import Registry
from pipeline.measures.trec_names import trec_names

__all__ = ["MetricListing", "Parameter", "listings"]

_JUDGED_ONLY = "drop unjudged documents before computing this metric (trec_eval -J for it alone)"


@dataclass(frozen=True)
class Parameter:
    """One parameter of a metric: its name, default (None when required) and description."""

    name: str
    default: Any
    required: bool
    description: str
    own: bool = True  # False for judged_only, which irpipe gives every SQL metric

    def shown(self) -> str:
        """`name=default` as the table writes it (the name alone when required)."""
        return self.name if self.required else f"{self.name}={self.default!r}"


@dataclass(frozen=True)
class MetricListing:
    """One metric as `irpipe metrics` lists it."""

    name: str
    aliases: tuple[str, ...]
    provider: str
    description: str
    parameters: tuple[Parameter, ...]
    cutoff: str | None
    aggregator: str
    better: str | None

    def row(self) -> tuple[str, str, str, str, str]:
        """(metric, aliases, parameters, provided by, description): a row of the table. The
        parameters are the measure's own (`judged_only`, which every SQL metric takes, is in
        the definitions)."""
        own = [p.shown() for p in self.parameters if p.own]
        return (self.name, ", ".join(self.aliases), ", ".join(own), self.provider, self.description)

    def as_json(self) -> dict[str, Any]:
        """The listing as a JSON object (a default JSON cannot hold is its Python repr)."""
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "provided_by": self.provider,
            "description": self.description,
            "cutoff": self.cutoff,
            "aggregated": self.aggregator,
            "better": self.better,
            "parameters": [
                {
                    "name": p.name,
                    "default": _json_value(p.default),
                    "required": p.required,
                    "description": p.description,
                }
                for p in self.parameters
            ],
        }


def listings(registry: Registry, names: list[str] | tuple[str, ...] = ()) -> list[MetricListing]:
    """Every metric of the registry, in its order; or the metrics `names` name, in that order
    (each once). An unknown name raises the registry's SpecError, with its suggestions."""
    measures = registry.measures
    if names:
        measures = list(dict.fromkeys(m for name in names for m in _named(registry, name)))
    trec = trec_names()
    return [_listing(registry, measure, trec) for measure in measures]


def _named(registry: Registry, name: str) -> list[Measure]:
    """The measures `name` names: a name or alias, the field's lower-case name (a cutoff is not
    needed to look one up), or any metric string the registry resolves (`map`, `P_10`,
    `nDCG@10`); else the registry's SpecError."""
    field = FIELD_NAMES.get(name)
    measure = registry.measure_named(field.metric if field is not None else name)
    return [measure] if measure is not None else [m.measure for m in registry.resolve(name)]


def _listing(registry: Registry, measure: Measure, trec: dict[str, list[str]]) -> MetricListing:
    owner = registry.providers[measure.name]
    return MetricListing(
        name=measure.name,
        aliases=tuple(_aliases(measure, trec)),
        provider=owner.distribution or f"{owner.plugin} (no distribution)",
        description=measure.description,
        parameters=tuple(_parameters(measure)),
        cutoff=measure.cutoff,
        aggregator=measure.aggregator,
        better=measure.better,
    )


def _aliases(measure: Measure, trec: dict[str, list[str]]) -> list[str]:
    """Its aliases, then trec_eval's names for it, then the field's lower-case names (each once)."""
    field = [name for name, f in FIELD_NAMES.items() if f.metric == measure.name]
    return list(dict.fromkeys([*measure.aliases, *trec.get(measure.name, []), *field]))


def _parameters(measure: Measure) -> list[Parameter]:
    found = [
        Parameter(name, field.default, field.is_required(), field.description or "")
        for name, field in measure.Params.model_fields.items()
    ]
    if not isinstance(measure, PythonMeasure) and JUDGED_ONLY not in measure.Params.model_fields:
        found.append(Parameter(JUDGED_ONLY, False, False, _JUDGED_ONLY, own=False))
    return found


def _json_value(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value
