"""Which runs a check reads, under which collections, resolved against the spec's runs before
any data is read (`pipeline.checks.plan`), each error naming its key.

A run evaluated under several collections has a value under each: an expected value is under
the one it names (`collection`, required then), and a gate checks each of the run's collections
apart (or the one its `collection` names), a gate against a run comparing the values under the
collections the two runs share. A run of a path pattern left unexpanded (`validate --no-data`)
is known by its pattern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.errors import SpecError
from pipeline.spec.base import did_you_mean

if TYPE_CHECKING:
    from pipeline.spec import LoadedSpec

__all__ = ["check_run", "expected_collection", "gated_runs"]


def expected_collection(loaded: LoadedSpec, i: int) -> str:
    """The collection expected value i is under: the one it names, which must be one of its
    run's, or the run's only one."""
    entry = loaded.spec.expect[i]
    collections = _collections_of(loaded, entry.run)
    if entry.collection is not None:
        _check_collection(loaded, ("expect", i, "collection"), entry.run, entry.collection)
        return entry.collection
    if len(collections) > 1:
        raise SpecError(
            f"{loaded.where('expect', i)}: run '{entry.run}' is evaluated under "
            f"{_listed(collections)}, with a value under each: name the collection the expected "
            f"value is under (collection: {collections[0]})"
        )
    return collections[0]


def _collections_of(loaded: LoadedSpec, name: str) -> tuple[str, ...]:
    """The collections run `name` is evaluated under (a run of a pattern left unexpanded: the
    pattern's)."""
    runs = loaded.spec.runs
    if name in runs:
        return runs[name].collections
    return next(r.collections for key, r in runs.items() if name.startswith(f"{key}/"))


def _check_collection(loaded: LoadedSpec, key: tuple, run: str, collection: str) -> None:
    """`collection` is one that `run` is evaluated under."""
    collections = _collections_of(loaded, run)
    if collection not in collections:
        raise SpecError(
            f"{loaded.where(*key)}: run '{run}' is not evaluated under collection "
            f"'{collection}'; {did_you_mean(collection, list(collections))}its collections: "
            f"{', '.join(collections)}"
        )


def _listed(names: tuple[str, ...]) -> str:
    """'a', 'b' and 'c'."""
    quoted = [f"'{name}'" for name in names]
    return ", ".join(quoted[:-1]) + f" and {quoted[-1]}" if len(quoted) > 1 else quoted[0]


def check_run(loaded: LoadedSpec, key: tuple, name: str, data: bool) -> None:
    """`name` is a run of the spec (or, without data, may be one of a pattern left unexpanded):
    else a SpecError naming `key`."""
    runs = loaded.spec.runs
    if name in runs or (not data and _kept_pattern_run(loaded, name)):
        return
    raise SpecError(
        f"{loaded.where(*key)}: unknown run '{name}'; {did_you_mean(name, list(runs))}"
        f"runs: {', '.join(runs)}"
    )


def _kept_pattern_run(loaded: LoadedSpec, name: str) -> bool:
    """Whether `name` can be a run of a path pattern left unexpanded (`validate --no-data`)."""
    return any(
        name.startswith(f"{key}/") and any(c in str(run.path) for c in "*?[")
        for key, run in loaded.spec.file_runs().items()
    )


def gated_runs(
    loaded: LoadedSpec, i: int, against: str | None, data: bool
) -> tuple[tuple[str, str], ...]:
    """The (run, collection) pairs gate i checks: its `run`, or every run (against a run: every
    other run of the reference's collections), under each collection it is evaluated under (or
    the gate's `collection`)."""
    gate, runs = loaded.spec.gates[i], loaded.spec.runs
    if gate.run is not None:
        check_run(loaded, ("gates", i, "run"), gate.run, data)
    if against is not None:
        check_run(loaded, ("gates", i, "against", "run"), against, data)
    _check_gate_collection(loaded, i, gate.run if against is None else against)
    if against is None:
        names = (gate.run,) if gate.run is not None else tuple(runs)
        return tuple((n, c) for n in names for c in _collections_of(loaded, n)
                     if gate.collection in (None, c))  # fmt: skip
    if against not in runs:  # a kept pattern: known with the data
        return tuple((gate.run, c) for c in _collections_of(loaded, gate.run)) if gate.run else ()
    return _beside(loaded, i, against)


def _check_gate_collection(loaded: LoadedSpec, i: int, run: str | None) -> None:
    """Gate i's `collection`, if given, is one that `run` (its run, or the run it is against)
    is evaluated under; for a gate of every run, one that some run is evaluated under."""
    collection, key = loaded.spec.gates[i].collection, ("gates", i, "collection")
    if collection is None:
        return
    if run is not None:
        _check_collection(loaded, key, run, collection)
        return
    used = list(dict.fromkeys(c for r in loaded.spec.runs.values() for c in r.collections))
    if collection not in used:
        raise SpecError(
            f"{loaded.where(*key)}: no run is evaluated under collection '{collection}'; "
            f"{did_you_mean(collection, used)}the runs' collections: {', '.join(used)}"
        )


def _beside(loaded: LoadedSpec, i: int, against: str) -> tuple[tuple[str, str], ...]:
    """The (run, collection) pairs gate i compares with the run `against` under the same
    collection: its `run`, else each collection's other runs."""
    gate, runs = loaded.spec.gates[i], loaded.spec.runs
    collections = [c for c in runs[against].collections if gate.collection in (None, c)]
    if gate.run is not None and gate.run in runs:
        if gate.run == against:
            raise SpecError(
                f"{loaded.where('gates', i, 'run')}: '{against}' is the run the gate "
                "compares against; name another run, or leave run out"
            )
        shared = tuple((gate.run, c) for c in runs[gate.run].collections if c in collections)
        if not shared:
            raise SpecError(
                f"{loaded.where('gates', i, 'run')}: run '{gate.run}' is evaluated on collection "
                f"{_listed(runs[gate.run].collections)}, and '{against}' on "
                f"{_listed(tuple(collections))}: values on different queries cannot be compared"
            )
        return shared
    others = tuple((n, c) for n, r in runs.items() if n != against
                   for c in r.collections if c in collections)  # fmt: skip
    if not others:
        raise SpecError(
            f"{loaded.where('gates', i, 'against', 'run')}: '{against}' is the only run of "
            f"collection {_listed(tuple(collections))}: there is no other run to gate against it"
        )
    return others
