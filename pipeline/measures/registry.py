"""Name -> measure resolution: names and aliases from every plugin, duplicates refused, "did you mean".

A spec entry resolves to one `ResolvedMeasure` (`pipeline.measures.resolved`) per cutoff: the measure,
its validated parameters, the canonical string (ir_measures style, defaults dropped) and the label used
in the tables. Only the front doors (`run/`, `cli/`, `notebook/`, `testing/`) ask for the registry;
the layers below are handed what it resolved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from pipeline.contract.measure import Measure
from pipeline.contract.metric_names import parse_metric
from pipeline.errors import SpecError
from pipeline.host.builtin import DEFAULT_PLUGINS
from pipeline.host.manager import CONTESTED_FIX, PluginManager, PluginState, get_plugin_manager
from pipeline.measures.field_names import FIELD_NAMES, REFUSED
from pipeline.measures.finite import non_finite
from pipeline.measures.namespace import Contest, Namespace, Owner, admitted, names_of
from pipeline.measures.parameters import (
    canonical_string,
    fill_default_cutoffs,
    parameter_error,
    split_judged_only,
)
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.measures.trec_names import ORDER as TREC_NAMES
from pipeline.measures.trec_names import translate
from pipeline.spec.base import close_matches

__all__ = ["Registry", "get_registry"]


@dataclass(frozen=True)
class _Entry:
    measure: Measure
    preset: dict[str, Any]
    owner: Owner


class Registry:
    """Every measure known to the plugin manager, by name and alias (see `pipeline.measures.namespace`:
    built-ins claim their names first, and no plugin can take or shadow a name)."""

    def __init__(
        self,
        measures: list[tuple[type[Measure], Owner | str]],
        refuse: Callable[[Owner, str, str], None] | None = None,
        failures: Callable[[], Sequence[PluginState]] = tuple,
        withhold: Callable[[Contest], None] | None = None,
    ) -> None:
        """`measures` are (class, owner). Given `refuse`, a plugin whose names clash with a
        built-in's (or among its own measures) is left out and passed to it with the message and
        a fix, and two plugins' measures whose names clash are both withheld and each `Contest`
        passed to `withhold`; without `refuse`, a clash raises PluginError. `failures` lists the
        plugins that failed to load: an unknown metric's error names them."""
        self._entries: dict[str, _Entry] = {}
        self.measures: list[Measure] = []
        self.providers: dict[str, Owner] = {}  # measure name -> who provides it
        self._failures = failures
        self._withheld: dict[str, str] = {}  # each name of a withheld measure -> why
        owned = [(cls, _owner(owner)) for cls, owner in measures]
        owned.sort(key=lambda item: not item[1].builtin)
        if refuse is not None:
            owned, contests = admitted(owned, refuse)
            self._withhold(contests, withhold)
        namespace = Namespace()
        for cls, owner in owned:
            measure = cls()
            self.measures.append(measure)
            self.providers[measure.name] = owner
            for name, preset, kind in names_of(measure):
                namespace.claim(name, kind, measure, owner)
                self._entries[name] = _Entry(measure, dict(preset), owner)

    def _withhold(self, contests: list[Contest], withhold: Callable[[Contest], None] | None):
        """Remember why each name of a withheld measure resolves to nothing; report each contest."""
        for contest in contests:
            for cls, _ in contest.measures:
                for name, _, _ in names_of(cls()):
                    self._withheld.setdefault(name, contest.message)
            if withhold is not None:
                withhold(contest)

    def resolve(self, text: str, params: dict[str, Any] | None = None, label: str | None = None):
        """Resolve a metric string plus extra parameters into one measure per cutoff.

        irpipe's grammar comes first (`nDCG@10`, `AP(rel=2)`); then the lower-case names the
        field writes after `@k` (`ndcg@10`, `mrr@10`: `pipeline.measures.field_names`); then
        trec_eval's names and `-m` syntax (`map`, `P_10`, `P.5,10`, `set_F.0.25`), translated as
        `irpipe trec-eval` does.
        """
        return self._resolve(text, params, label, hints=True)

    def _resolve(self, text: str, params: dict | None, label: str | None, hints: bool):
        """`resolve`; an unknown name's error suggests close names only with `hints` (a
        suggestion is checked by resolving it without, which cannot recurse)."""
        try:
            name, parsed, cutoff = parse_metric(text)
        except SpecError:
            name, parsed, cutoff = None, {}, None
        if name in self._entries:
            values = {**parsed, **(params or {})}
            return self._expand(self._entries[name], text, values, cutoff, label)
        field = self._field_name(name, cutoff)
        if field is not None:
            values = {**field.preset, **parsed, **(params or {})}
            return self._expand(self._entries[field.metric], text, values, cutoff, label)
        translated = translate(text)
        if translated is None:
            raise self._unknown(text, name, cutoff, hints)
        return [
            measure
            for printed, metric, preset in translated
            for measure in self._expand(
                self._entries[metric],
                text,
                {**preset, **(params or {})},
                None,
                label if len(translated) == 1 or label is None else f"{label}_{printed}",
            )
        ]

    def _field_name(self, name: str | None, cutoff: Any):
        """The field's name `name` stands for, given `@k` (or alone, for the few that do), if
        its measure is in this registry; else None."""
        field = FIELD_NAMES.get(name or "")
        if field is None or field.metric not in self._entries:
            return None
        return field if cutoff is not None or field.bare else None

    def _unknown(self, text: str, name: str | None, cutoff: Any, hints: bool) -> SpecError:
        if name is None:
            parse_metric(text)  # raises the grammar's own message
        if name in REFUSED:
            return SpecError(REFUSED[name].format(k=10 if cutoff is None else cutoff))
        if name in FIELD_NAMES and FIELD_NAMES[name].metric in self._entries:
            example = f"{FIELD_NAMES[name].metric}@10"
            return SpecError(f"'{name}' needs a cutoff: {name}@10 is {example}")
        if name in self._withheld:
            return SpecError(
                f"metric '{name}' is not available: {self._withheld[name]}; {CONTESTED_FIX}"
            )
        if name == "runid":
            return SpecError(
                "'runid' is trec_eval's run tag, not a metric: irpipe's tables name each run "
                "in their `run` column; remove it from metrics"
            )
        hint = self._suggestions(name, cutoff) if hints else []
        suggestion = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
        failed = _failed_plugins(self._failures())
        return SpecError(
            f"unknown metric '{name}'{suggestion} (irpipe metrics lists them all{failed})"
        )

    def _suggestions(self, name: str, cutoff: Any) -> list[str]:
        """Close names that resolve, spelled with the cutoff typed where they take one (`p@10`:
        'P@10'); never the name typed, never one twice."""
        names = [*self._entries, *TREC_NAMES, *FIELD_NAMES]
        spelled = []
        for hint in close_matches(name, names, n=3):
            tries = [f"{hint}@{cutoff!r}", hint] if cutoff is not None else [hint]
            spelled += [next((t for t in tries if self._resolves(t)), None)]
        return [h for h in dict.fromkeys(spelled) if h is not None]

    def _resolves(self, text: str) -> bool:
        try:
            self._resolve(text, None, None, hints=False)
        except SpecError:
            return False
        return True

    def _expand(self, entry: _Entry, text: str, values: dict, cutoff: Any, label: str | None):
        measure = entry.measure
        merged = {**entry.preset, **values}
        if cutoff is not None:
            if measure.cutoff is None:
                raise SpecError(f"'{text}': {measure.name} takes no cutoff")
            merged[measure.cutoff] = cutoff
        fill_default_cutoffs(measure, merged)
        cutoffs = merged.get(measure.cutoff) if measure.cutoff else None
        if not isinstance(cutoffs, list):
            return [self._validated(measure, merged, text, label)]
        # A list of cutoffs means one measure per cutoff; one label names each: nDCG_exp@5.
        return [
            self._validated(measure, {**merged, measure.cutoff: k}, text, label and f"{label}@{k}")
            for k in cutoffs
        ]

    def _validated(self, measure: Measure, values: dict, text: str, label: str | None):
        missing = [key for key in measure.required if values.get(key) is None]
        if missing:
            example = f"{measure.name}@10" if measure.cutoff in missing else measure.name
            raise SpecError(f"'{text}': {measure.name} needs {', '.join(missing)} (e.g. {example})")
        values, judged_only = split_judged_only(measure, values, text)
        found = non_finite(values)
        if found is not None:
            raise SpecError(found.message(text))
        try:
            params = measure.Params.model_validate(values)
        except ValidationError as exc:
            raise SpecError(parameter_error(text, measure, exc)) from None
        canonical = canonical_string(measure, params, judged_only)
        return ResolvedMeasure(
            measure, params, canonical, label or canonical, judged_only=judged_only
        )

    @classmethod
    def from_plugin_manager(cls, pm: PluginManager) -> Registry:
        """Every measure returned by the plugins' `register_metrics` hooks, checked (see
        `PluginManager.contributions`); a plugin whose names clash fails and is left out."""
        found = [
            (measure, _owner_of(pm, plugin))
            for plugin, classes in pm.contributions("register_metrics")
            for measure in classes
        ]

        def refuse(owner: Owner, message: str, fix: str) -> None:
            pm.fail(owner.plugin, message, fix)

        def withhold(contest: Contest) -> None:
            pm.withhold(
                {owner.plugin: cls.name for cls, owner in contest.measures}, contest.message
            )

        return cls(found, refuse=refuse, failures=pm.failures, withhold=withhold)

    def measure_named(self, name: str) -> Measure | None:
        """The measure whose name or alias `name` is (exactly), or None."""
        entry = self._entries.get(name)
        return entry.measure if entry is not None else None

    def names(self) -> list[str]:
        """Every name and alias, sorted."""
        return sorted(self._entries)


def _failed_plugins(failures: Sequence[PluginState]) -> str:
    """The plugins that failed to load, for an unknown metric: one of them may provide it, but
    what a failed plugin would have provided cannot be known. Each one's warning says more."""
    if len(failures) == 1:
        return f"; plugin '{failures[0].title()}' failed to load: {failures[0].reason}"
    if failures:
        titles = ", ".join(f"'{state.title()}'" for state in failures)
        return f"; {len(failures)} plugins failed to load ({titles}): their warnings say why"
    return ""


def _owner_of(pm: PluginManager, plugin: str) -> Owner:
    return Owner(pm.distribution(plugin), plugin, builtin=plugin in DEFAULT_PLUGINS)


def _owner(owner: Owner | str) -> Owner:
    """An owner given by its plugin's name alone: a built-in, or a plugin without distribution."""
    if isinstance(owner, Owner):
        return owner
    builtin = owner in DEFAULT_PLUGINS
    return Owner("irpipe" if builtin else None, owner, builtin)


_registry: Registry | None = None


def get_registry() -> Registry:
    """The registry built from the process-wide plugin manager."""
    global _registry
    if _registry is None:
        _registry = Registry.from_plugin_manager(get_plugin_manager())
    return _registry
