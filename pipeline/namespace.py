"""One namespace for every metric name: measure names, aliases and trec_eval's names.

A spec names a metric by any of them, so a name must never mean two things. Built-in measures claim
their names first, and trec_eval's names (`map`, `P_10`, `ndcg_cut.5,10`: irpipe translates them)
belong to irpipe too; then each plugin's measures claim theirs. A claim is refused, naming both
owners (distribution and class), when the name is already claimed (name or alias, by anyone), when it
differs only in case from a name of another measure (`Map` beside `map`), or when it is a trec_eval
name, or is read as one (`recall_at_k` would be trec_eval's `recall` with parameters `at_k`), for
another measure. Lookups stay exact (`P` and `p` are not the same string), but names that differ
only in case must mean the same measure (`NDCG` is an alias of `nDCG`): anything else misleads a
reader of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import PluginError
from .trec_eval.measures import BY_NAME, trec_names

__all__ = ["Namespace", "Owner"]


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
    kind: str  # "name", "alias" or "trec_eval name"
    measure: str  # the measure's name
    cls: type | None  # None for trec_eval names (the measure is irpipe's own)
    owner: Owner

    def describe(self) -> str:
        if self.cls is None:
            return f"trec_eval's name '{self.name}' for {self.measure} ({self.owner.describe()})"
        cls = f"{self.cls.__module__}.{self.cls.__qualname__}"
        return f"{self.kind} '{self.name}' of {self.measure} (class {cls}, {self.owner.describe()})"


class Namespace:
    """Names claimed so far, by case-folded spelling; `claim` refuses any clash."""

    def __init__(self) -> None:
        self._exact: dict[str, _Claim] = {}
        self._folded: dict[str, _Claim] = {}
        self._trec = _trec_claims()

    def claim(self, name: str, kind: str, measure: object, owner: Owner) -> None:
        """Claim `name` for `measure` (an instance), or raise PluginError naming both owners."""
        new = _Claim(name, kind, measure.name, type(measure), owner)
        folded = self._folded.get(name.casefold())
        folded = None if folded is None or folded.cls is new.cls else folded
        trec = self._trec_claim(name)
        trec = None if trec is None or (owner.builtin and trec.measure == new.measure) else trec
        exact_trec = trec if trec is not None and trec.name == name.partition(".")[0] else None
        # The most telling clash first: the same name, then case, then trec_eval's syntax.
        for other in (self._exact.get(name), exact_trec, folded, trec):
            if other is not None:
                self._refuse(new, other)
        self._exact[name] = new
        self._folded.setdefault(name.casefold(), new)

    def copy(self) -> Namespace:
        """An independent namespace with the same claims: where a plugin's names are tried out."""
        other = Namespace.__new__(Namespace)
        other._exact, other._folded = dict(self._exact), dict(self._folded)
        other._trec = self._trec  # never changed after construction
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
            if claim is not None and BY_NAME[claim.name].kind != "plain":
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
            claims[name.casefold()] = _Claim(name, "trec_eval name", measure, None, IRPIPE)
    return claims
