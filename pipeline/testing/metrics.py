"""The metric strings under check, resolved by the current registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.contract.measure import Measure
from pipeline.errors import SpecError
from pipeline.measures.registry import ResolvedMeasure, get_registry

__all__ = ["Metrics", "resolve", "resolve_metrics"]


@dataclass(frozen=True)
class Metrics:
    """Metric strings resolved: (string for the spec, its measures) each; a string whose measures
    were all named before is dropped, so that no measure is listed twice."""

    groups: tuple[tuple[str, tuple[ResolvedMeasure, ...]], ...]

    @property
    def spec(self) -> tuple[str, ...]:
        return tuple(text for text, _ in self.groups)

    @property
    def resolved(self) -> tuple[ResolvedMeasure, ...]:
        return tuple(r for _, found in self.groups for r in found)

    def where(self, keep: Callable[[ResolvedMeasure], bool]) -> Metrics:
        """The groups all of whose measures `keep` accepts."""
        return Metrics(tuple(g for g in self.groups if all(keep(r) for r in g[1])))


def resolve_metrics(measure: type[Measure], metrics: Sequence[str]) -> Metrics:
    """Each metric string resolved by the current registry, each checked to name `measure`."""
    if isinstance(metrics, str) or not metrics:
        raise ValueError(f"metrics must be a non-empty list of metric strings, not {metrics!r}")
    groups, seen = [], set()
    for text in metrics:
        found = resolve(measure, text)
        new = tuple(r for r in found if r.canonical not in seen)
        seen.update(r.canonical for r in new)
        if len(new) == len(found):
            groups.append((text, new))
        else:  # some named before: name only the new ones, by their canonical strings
            groups += [(r.canonical, (r,)) for r in new]
    return Metrics(tuple(groups))


def resolve(measure: type[Measure], text: str, params: dict | None = None) -> list[ResolvedMeasure]:
    """`text` resolved, failing unless it resolves to this very measure class."""
    try:
        found = get_registry().resolve(text, params)
    except SpecError as exc:
        raise AssertionError(f"metric {text!r} does not resolve: {exc}") from None
    for r in found:
        if type(r.measure) is not measure:
            raise AssertionError(
                f"metric {text!r} names {type(r.measure).__name__} ({r.canonical}), "
                f"not {measure.__name__}"
            )
    return found
