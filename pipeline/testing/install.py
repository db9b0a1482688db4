"""`installed`: measures registered for the evaluations inside a block, as a plugin registers them.

The block swaps the process-wide registry (`pipeline.measures.registry.get_registry`) for one holding every
measure already known plus the new ones, claimed under the same namespace rules (a clash raises
PluginError naming both), and puts the previous registry back on the way out. Not thread-safe: it
is meant for tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from pipeline.contract.measure import Measure
from pipeline.errors import PluginError
from pipeline.host.checks import BrokenPlugin, checked
from pipeline.measures import registry as registry_module
from pipeline.measures.namespace import Owner
from pipeline.measures.registry import Registry, get_registry

__all__ = ["installed", "is_registered", "registry_with"]

#: Who provides the measures of `installed` in messages (as a plugin registered without a package).
OWNER = Owner(None, "pipeline.testing.installed")


def registry_with(classes: Iterable[type[Measure]], owner: Owner = OWNER) -> Registry:
    """A registry of the current registry's measures plus `classes`, provided by `owner`."""
    current = get_registry()
    known = [(type(m), current.providers[m.name]) for m in current.measures]
    return Registry([*known, *((cls, owner) for cls in classes)])


def is_registered(cls: type[Measure]) -> bool:
    """Whether the current registry holds this very class (a built-in, or an installed plugin's)."""
    return any(type(m) is cls for m in get_registry().measures)


@contextmanager
def installed(*classes: type[Measure]) -> Iterator[Registry]:
    """Register measure classes for every evaluation inside the block; yields the registry.

    Each class is first checked as a plugin's are when plugins load (PluginError if it would fail
    them). A class the registry already holds (a built-in, or a plugin installed in the
    environment) is left as it is, so a conformance test passes whether or not its plugin is
    installed.
    """
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, Measure)):
            raise TypeError(f"installed() takes Measure subclasses, not {cls!r}")
    try:  # the checks a plugin's register_metrics result passes when plugins load
        checked("register_metrics", list(classes))
    except BrokenPlugin as exc:
        raise PluginError(str(exc)) from None
    new = [cls for cls in dict.fromkeys(classes) if not is_registered(cls)]
    if not new:
        yield get_registry()
        return
    previous, registry = get_registry(), registry_with(new)
    registry_module._registry = registry
    try:
        yield registry
    finally:
        registry_module._registry = previous
