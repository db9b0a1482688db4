"""One namespace for every metric name: measure names, aliases and trec_eval's names.

A spec names a metric by any of them, so a name must never mean two things. Built-in measures claim
their names first, and trec_eval's names (`map`, `P_10`, `ndcg_cut.5,10`: irpipe translates them)
belong to irpipe too; then each plugin's measures claim theirs. A claim is refused, naming both
owners (distribution and class), when the name is already claimed (name or alias, by anyone), when it
differs only in case from a name of another measure (`Map` beside `map`), or when it is a trec_eval
name, or is read as one (`recall_at_k` would be trec_eval's `recall` with parameters `at_k`), or a
lower-case name the field writes (`hit_rate`, `mrr`: `pipeline.measures.field_names`), for another
measure. Lookups stay exact (`P` and `p` are not the same string), but names that differ
only in case must mean the same measure (`NDCG` is an alias of `nDCG`): anything else misleads a
reader of the spec.

`admitted` decides, from the claims, which measures a registry takes: a plugin whose names clash
with the built-ins' (or among its own) is refused whole; two plugins' measures whose names clash
are both withheld (a `Contest`), and everything else of both plugins is admitted.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.contract.measure import Measure
from pipeline.errors import PluginError
from pipeline.measures.field_names import FIELD_NAMES
from pipeline.measures.trec_names import BY_NAME, trec_names

__all__ = ["Contest", "Namespace", "Owner", "admitted", "names_of"]


@dataclass(frozen=True)
class Owner:
    """Who provides a measure: its distribution (`irpipe` for built-ins) and its plugin's name."""

    distribution: str | None
    plugin: str
    builtin: bool = False

    def describe(self) -> str:
        """`distribution 'name'`, or the plugin's name when it came without one."""
        if self.distribution:
            return f"distribution '{self.distribution}'"
        return f"plugin '{self.plugin}', registered without a distribution"


IRPIPE = Owner("irpipe", "irpipe", builtin=True)


@dataclass(frozen=True)
class _Claim:
    name: str
    kind: str  # "name", "alias", "trec_eval's name" or "ranx's name"
    measure: str  # the measure's name
    cls: type | None  # None for trec_eval names (the measure is irpipe's own)
    owner: Owner

    def describe(self) -> str:
        if self.cls is None:
            return f"{self.kind} '{self.name}' for {self.measure} ({self.owner.describe()})"
        cls = f"{self.cls.__module__}.{self.cls.__qualname__}"
        return f"{self.kind} '{self.name}' of {self.measure} (class {cls}, {self.owner.describe()})"


class Namespace:
    """Names claimed so far, by case-folded spelling; `claim` refuses any clash."""

    def __init__(self) -> None:
        self._exact: dict[str, _Claim] = {}
        self._folded: dict[str, _Claim] = {}
        self._trec = _trec_claims()
        self._field = _field_claims()

    def claim(self, name: str, kind: str, measure: object, owner: Owner) -> None:
        """Claim `name` for `measure` (an instance), or raise PluginError naming both owners."""
        new = _Claim(name, kind, measure.name, type(measure), owner)
        folded = self._folded.get(name.casefold())
        folded = None if folded is None or folded.cls is new.cls else folded
        trec = self._trec_claim(name)
        trec = None if trec is None or (owner.builtin and trec.measure == new.measure) else trec
        exact_trec = trec if trec is not None and trec.name == name.partition(".")[0] else None
        field = self._field.get(name.casefold())
        field = None if field is None or (owner.builtin and field.measure == new.measure) else field
        # The most telling clash first: the same name, then case, then trec_eval's syntax,
        # then the field's lower-case names.
        for other in (self._exact.get(name), exact_trec, folded, trec, field):
            if other is not None:
                self._refuse(new, other)
        self._exact[name] = new
        self._folded.setdefault(name.casefold(), new)

    def copy(self) -> Namespace:
        """An independent namespace with the same claims: where a plugin's names are tried out."""
        other = Namespace.__new__(Namespace)
        other._exact, other._folded = dict(self._exact), dict(self._folded)
        other._trec, other._field = self._trec, self._field  # never changed after construction
        return other

    def _trec_claim(self, name: str) -> _Claim | None:
        """The trec_eval name that `name` is, or is read as (any case): `map`, `P_10`, `P.5`."""
        folded = name.casefold()
        base = folded.partition(".")[0]
        if base in self._trec:
            return self._trec[base]
        prefixes = [folded[:i] for i in range(len(folded) - 1, 0, -1) if folded[i] == "_"]
        for prefix in prefixes:  # longest first, as trec_eval's names are read
            claim = self._trec.get(prefix)
            if claim is not None and _takes(BY_NAME[claim.name].kind, folded[len(prefix) + 1 :]):
                return claim
        return None

    @staticmethod
    def _refuse(new: _Claim, old: _Claim) -> None:
        raise PluginError(
            f"metric {new.describe()} clashes with {old.describe()}: {_reason(new.name, old.name)}. "
            "Names and aliases "
            "of every distribution share one namespace and built-in names cannot be taken: "
            f"rename the {new.kind}"
        )


def _takes(kind: str, text: str) -> bool:
    """Whether trec_eval reads `text` as the parameters of a measure of `kind`: a cutoff is a
    number (`P_10`; `P_IA` is no cutoff, and ir_measures' intent-aware precision)."""
    if kind == "plain":
        return False
    return kind not in ("long_cut", "double_cut") or text[:1] in "0123456789+-."


def _reason(name: str, other: str) -> str:
    base = name.partition(".")[0]  # trec_eval's `-m` syntax: P.5,10 is P with parameters
    if base == other:
        return "the same name"
    if base.casefold() == other.casefold():
        return "the names differ only in case"
    return f"trec_eval's syntax reads it as '{other}' with parameters"


def _trec_claims() -> dict[str, _Claim]:
    """trec_eval's names (case-folded) and the irpipe measure each translates to."""
    claims = {}
    for measure, names in trec_names().items():
        for name in names:
            claims[name.casefold()] = _Claim(name, "trec_eval's name", measure, None, IRPIPE)
    return claims


def _field_claims() -> dict[str, _Claim]:
    """The lower-case names the field writes after `@k` (case-folded), and irpipe's measure for
    each: `hit_rate` is Success's, and no plugin's."""
    return {
        name.casefold(): _Claim(name, f"{field.source}'s name", field.metric, None, IRPIPE)
        for name, field in FIELD_NAMES.items()
    }


def names_of(measure: Measure) -> list[tuple[str, dict, str]]:
    """(name, preset parameters, kind) for the measure's name and each alias."""
    aliases = [(alias, preset, "alias") for alias, preset in measure.aliases.items()]
    return [(measure.name, {}, "name"), *aliases]


def admitted(
    owned: list[tuple[type[Measure], Owner]], refuse: Callable[[Owner, str, str], None]
) -> tuple[list[tuple[type[Measure], Owner]], list[Contest]]:
    """The measures irpipe uses, and the contests between plugins. Built-ins claim first and
    never clash (else it is a bug in irpipe: raise). Each plugin is tried beside them alone: one
    whose names clash with theirs, or among its own measures, is broken wherever it is installed,
    and is passed to `refuse`. Then two plugins' measures whose names clash are both withheld,
    so that what a name means never depends on which plugin loaded first, while every other
    measure of both plugins stays in use."""
    groups: dict[Owner, list[type[Measure]]] = {}
    for cls, owner in owned:
        groups.setdefault(owner, []).append(cls)
    builtins = Namespace()
    for owner in [owner for owner in groups if owner.builtin]:
        _claim(builtins, groups, owner, {})
    refused: dict[Owner, tuple[str, str]] = {}  # owner -> (message, fix)
    plugins = [owner for owner in groups if not owner.builtin]
    for owner in plugins:
        _claim(builtins.copy(), groups, owner, refused)
    for owner, (message, fix) in refused.items():
        refuse(owner, message, fix)
    clean = [owner for owner in plugins if owner not in refused]
    contests = _contests(builtins, [(cls, owner) for owner in clean for cls in groups[owner]])
    withheld = {measure for contest in contests for measure in contest.measures}
    kept = [(cls, owner) for cls, owner in owned if owner not in refused]
    return [measure for measure in kept if measure not in withheld], contests


@dataclass(frozen=True)
class Contest:
    """Two plugins' measures whose names clash, and the namespace's message naming both."""

    measures: tuple[tuple[type[Measure], Owner], tuple[type[Measure], Owner]]
    message: str


def _contests(builtins: Namespace, measures: list[tuple[type[Measure], Owner]]) -> list[Contest]:
    """Every pair of measures of two different plugins whose names clash (each plugin's own
    names were already claimed beside the built-ins' without a clash)."""
    contests = []
    for a, b in itertools.combinations(measures, 2):
        if a[1] == b[1]:
            continue
        try:
            _claim_measures(builtins.copy(), [a, b])
        except PluginError as exc:
            contests.append(Contest((a, b), str(exc)))
    return contests


def _claim(namespace: Namespace, groups: dict, owner: Owner, refused: dict) -> None:
    """Claim the names of each of the owner's measures in turn; on a clash, the owner is refused
    with its message (a built-in's clash is raised: `refused` is only for plugins)."""
    try:
        _claim_measures(namespace, [(cls, owner) for cls in groups[owner]])
    except PluginError as exc:
        if owner.builtin:
            raise
        refused.setdefault(owner, (str(exc), "upgrade the plugin, or report it to its authors"))


def _claim_measures(namespace: Namespace, measures: list[tuple[type[Measure], Owner]]) -> None:
    """Claim every name and alias of each measure, or raise the namespace's PluginError."""
    for cls, owner in measures:
        measure = cls()
        for name, _, kind in names_of(measure):
            namespace.claim(name, kind, measure, owner)
