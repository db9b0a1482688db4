"""A spec's metric entries resolved to measures with validated parameters, and what each declares it
needs: the spec's labels are unique, every collection has the fields its measures read, and a
decimal relevance level or gain grade comes with decimal grades (`grades: real`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pipeline.contract.columns import Columns, Need, Requirements, flatten
from pipeline.errors import PluginError, SpecError
from pipeline.inputs.formats import runs_are
from pipeline.measures.finite import non_finite
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.spec import LoadedSpec, Settings

if TYPE_CHECKING:  # handed in by the front door: the plan imports this module, never the registry
    from pipeline.measures.registry import Registry

__all__ = [
    "check_needs",
    "columns_of",
    "declared_needs",
    "resolve_metric",
    "resolve_metrics",
]


def resolve_metrics(loaded: LoadedSpec, registry: Registry) -> list[ResolvedMeasure]:
    """Every metric entry of the spec, resolved and expanded, with errors naming file and key."""
    resolved: list[ResolvedMeasure] = []
    for i, item in enumerate(loaded.spec.metrics):
        found = non_finite(item.params)
        if found is not None:  # a key of the entry's mapping: name its line
            where = loaded.where("metrics", i, found.key)
            raise SpecError(f"{where}: {found.message(item.metric)}")
        try:
            found = resolve_metric(registry, item.metric, item.params, item.label)
            _check_decimals(loaded.spec.settings, found)
        except SpecError as exc:
            raise SpecError(f"{loaded.where('metrics', i)}: {exc}") from None
        resolved += found
    _check_labels(loaded, resolved)
    _check_runs(loaded, resolved)
    _check_judged_only(loaded, resolved)
    check_needs(loaded, resolved, {c for run in loaded.spec.runs.values() for c in run.collections})
    return resolved


def resolve_metric(
    registry: Registry, text: str, params: dict | None = None, label: str | None = None
) -> list[ResolvedMeasure]:
    """One metric string (with its parameters and label) resolved by `registry`: one measure
    per cutoff, each naming who provides it."""
    found = registry.resolve(text, params, label)
    return [replace(m, provider=_provider(registry, m)) for m in found]


def _provider(registry: Registry, m: ResolvedMeasure) -> str:
    owner = registry.providers.get(m.measure.name)
    return owner.describe() if owner is not None else "irpipe"


def _check_decimals(settings: Settings, found: list[ResolvedMeasure]) -> None:
    """Under integer grades, a decimal `rel` or gain grade is a SpecError naming the setting."""
    if settings.grades == "real":
        return
    for m in found:
        given = _decimal_grade(m.params)
        if given:
            raise SpecError(
                f"{m.label}: {given} is a decimal, and grades are integers: give an integer, "
                "or read decimal grades with settings: {grades: real}"
            )


def _decimal_grade(params) -> str:
    """What of a measure's parameters is a decimal grade (its level `rel`, a gain mapping's
    grade), as a message names it; "" if none is."""
    rel, gain = getattr(params, "rel", None), getattr(params, "gain", None)
    if isinstance(rel, float):
        return f"rel={rel!r}"
    decimals = [g for g in gain if isinstance(g, float)] if isinstance(gain, dict) else []
    return f"the gain of grade {decimals[0]!r}" if decimals else ""


def _check_judged_only(loaded: LoadedSpec, resolved: list[ResolvedMeasure]) -> None:
    """`settings.judged_only` drops an answer's uncited sentences, which are no unjudged
    documents: a spec error naming the first metric that reads answers."""
    if not loaded.spec.settings.judged_only:
        return
    answers = next((m for m in resolved if m.measure.reads == "answers"), None)
    if answers is not None:
        raise SpecError(
            f"{loaded.where('settings', 'judged_only')}: judged_only drops a ranking's unjudged "
            f"documents, and metric '{answers.label}' scores answers, whose uncited sentences "
            "it would drop: leave judged_only out"
        )


#: what a run of each kind holds (`Measure.reads`), as messages say it
_KINDS = {
    "rankings": "rankings",
    "assignments": "an answer's nugget assignments",
    "answers": "generated answers (their citations)",
}


def _check_runs(loaded: LoadedSpec, resolved: list[ResolvedMeasure]) -> None:
    """Each metric scores the kind of run every run of the spec is (rankings, or generated
    answers' assignments): a SpecError naming the first run and metric that differ."""
    for name, run in loaded.spec.runs.items():
        kind = runs_are(getattr(run, "format", None))
        other = next((m for m in resolved if m.measure.reads != kind), None)
        if other is not None:
            raise SpecError(
                f"{loaded.where('runs', name)}: run '{name}' holds {_KINDS[kind]}, and metric "
                f"'{other.label}' scores {_KINDS[other.measure.reads]}: a spec evaluates one kind "
                "of run (rankings: runs.NAME.path; nugget assignments: runs.NAME.assignments; "
                "answers and their citations: runs.NAME.answers)"
            )


def _check_labels(loaded: LoadedSpec, resolved: list[ResolvedMeasure]) -> None:
    seen: set[str] = set()
    for m in resolved:
        if m.label in seen:
            raise SpecError(
                f"{loaded.where('metrics')}: metric '{m.label}' is listed twice; "
                "remove one or give it a different label"
            )
        seen.add(m.label)


def check_needs(loaded: LoadedSpec, resolved: list[ResolvedMeasure], collections: set[str]) -> None:
    """Each of `collections` has the fields the measures read (`num_docs`, ...): a SpecError
    naming the collection's key and the field to add."""
    c = columns_of(loaded.spec.settings)
    for m in resolved:
        required = Requirements(declared_needs(m, c))
        for need in required.fields:
            for name in sorted(collections):
                if getattr(loaded.spec.collections[name], need) is None:
                    raise SpecError(
                        f"{loaded.where('collections', name)}: {m.label} needs '{need}' "
                        f"for collection '{name}'; add {need}: <value> to it"
                    )
        if any(n.kind.startswith("subtopic") for n in required.needs):
            _check_subtopics(loaded, m, collections)


def _check_subtopics(loaded: LoadedSpec, m: ResolvedMeasure, collections: set[str]) -> None:
    """A measure over subtopic judgments (a diversity measure) reads collections whose qrels
    are subtopic qrels: a SpecError naming the format setting for any other (only a format
    says so: a subtopic file's lines look like TREC's)."""
    for name in sorted(collections):
        collection = loaded.spec.collections[name]
        if collection.qrels is not None and collection.format != "subtopics":
            given = f"format: {collection.format}" if collection.format else "no format given"
            raise SpecError(
                f"{loaded.where('collections', name)}: {m.label} reads subtopic judgments, but "
                f"collection '{name}' has ordinary qrels ({given}); if its qrels are subtopic "
                f"qrels (qid subtopic docno grade, as ndeval reads them), set "
                f"collections.{name}.format: subtopics"
            )


def columns_of(settings: Settings) -> Columns:
    """The columns measures are compiled against, under these settings."""
    return Columns(settings.relevance_level, settings.compatibility, grades=settings.grades)


def declared_needs(m: ResolvedMeasure, c: Columns) -> tuple[Need, ...]:
    """What a measure declares it reads, with what those are built from."""
    try:
        return flatten(m.measure.needs(m.params, c))
    except PluginError as exc:
        raise PluginError(f"{m.label}: {exc}") from None
