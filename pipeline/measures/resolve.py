"""A spec's metric entries resolved to measures with validated parameters, and what each declares it
needs: the spec's labels are unique, and every collection has the fields its measures read."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pipeline.contract.columns import Columns, Need, Requirements, flatten
from pipeline.errors import PluginError, SpecError
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.spec import LoadedSpec, Settings

if TYPE_CHECKING:  # handed in by the front door: the plan imports this module, never the registry
    from pipeline.measures.registry import Registry

__all__ = [
    "columns_of",
    "declared_needs",
    "resolve_metrics",
]


def resolve_metrics(loaded: LoadedSpec, registry: Registry) -> list[ResolvedMeasure]:
    """Every metric entry of the spec, resolved and expanded, with errors naming file and key."""
    resolved: list[ResolvedMeasure] = []
    for i, item in enumerate(loaded.spec.metrics):
        try:
            found = registry.resolve(item.metric, item.params, item.label)
            resolved += [replace(m, provider=_provider(registry, m)) for m in found]
        except SpecError as exc:
            raise SpecError(f"{loaded.where('metrics', i)}: {exc}") from None
    _check_labels(loaded, resolved)
    _check_needs(loaded, resolved)
    return resolved


def _provider(registry: Registry, m: ResolvedMeasure) -> str:
    owner = registry.providers.get(m.measure.name)
    return owner.describe() if owner is not None else "irpipe"


def _check_labels(loaded: LoadedSpec, resolved: list[ResolvedMeasure]) -> None:
    seen: set[str] = set()
    for m in resolved:
        if m.label in seen:
            raise SpecError(
                f"{loaded.where('metrics')}: metric '{m.label}' is listed twice; "
                "remove one or give it a different label"
            )
        seen.add(m.label)


def _check_needs(loaded: LoadedSpec, resolved: list[ResolvedMeasure]) -> None:
    used = {run.collection for run in loaded.spec.runs.values()}
    c = columns_of(loaded.spec.settings)
    for m in resolved:
        for need in Requirements(declared_needs(m, c)).fields:
            for name in sorted(used):
                if getattr(loaded.spec.collections[name], need) is None:
                    raise SpecError(
                        f"{loaded.where('collections', name)}: {m.label} needs '{need}' "
                        f"for collection '{name}'; add {need}: <value> to it"
                    )


def columns_of(settings: Settings) -> Columns:
    """The columns measures are compiled against, under these settings."""
    return Columns(settings.relevance_level, settings.compatibility)


def declared_needs(m: ResolvedMeasure, c: Columns) -> tuple[Need, ...]:
    """What a measure declares it reads, with what those are built from."""
    try:
        return flatten(m.measure.needs(m.params, c))
    except PluginError as exc:
        raise PluginError(f"{m.label}: {exc}") from None
