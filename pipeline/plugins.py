"""The plugin manager: built-in plugins first, then the `irpipe` entry points of installed packages.

`IRPIPE_LOAD_PLUGINS` limits which entry-point plugins load (comma-separated names, empty for none);
the tests set it to empty so that plugins installed on the machine never change their results.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

import pluggy

from . import hookspecs
from .errors import PluginError

__all__ = ["DEFAULT_PLUGINS", "PluginManager", "create_plugin_manager", "get_plugin_manager"]

DEFAULT_PLUGINS = (
    "pipeline.metrics.counts",
    "pipeline.metrics.precision",
    "pipeline.metrics.set_based",
    "pipeline.metrics.average_precision",
    "pipeline.metrics.reciprocal_rank",
    "pipeline.metrics.cumulative_gain",
    "pipeline.metrics.gain_experimental",
    "pipeline.metrics.rank_biased",
    "pipeline.metrics.relstring",
    "pipeline.outputs",
    "pipeline.outputs.trec_eval",
)


class PluginManager(pluggy.PluginManager):
    """pluggy's manager, also knowing which distribution provided each plugin."""

    def __init__(self) -> None:
        super().__init__("irpipe")
        self.distributions: dict[str, str] = {}  # plugin name -> distribution name

    def distribution(self, plugin_name: str) -> str | None:
        """`irpipe` for a built-in, its distribution for an entry point, None if registered
        directly (by a test or an embedding program)."""
        if plugin_name in DEFAULT_PLUGINS:
            return "irpipe"
        return self.distributions.get(plugin_name)


_manager: PluginManager | None = None


def get_plugin_manager() -> PluginManager:
    """The process-wide plugin manager, created on first use."""
    global _manager
    if _manager is None:
        _manager = create_plugin_manager()
    return _manager


def create_plugin_manager() -> PluginManager:
    """A new plugin manager with the built-in plugins and the allowed entry-point plugins."""
    pm = PluginManager()
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    _load_entry_points(pm)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin!r} implements an unknown hook: {exc}") from None
    return pm


def _load_entry_points(pm: PluginManager) -> None:
    allowed = os.environ.get("IRPIPE_LOAD_PLUGINS")
    names = None if allowed is None else {n.strip() for n in allowed.split(",") if n.strip()}
    for ep in entry_points(group="irpipe"):
        wanted = names is None or ep.name in names
        if wanted and pm.get_plugin(ep.name) is None and not pm.is_blocked(ep.name):
            pm.register(ep.load(), name=ep.name)
            if ep.dist is not None:  # messages name what a user installed: the distribution
                pm.distributions[ep.name] = ep.dist.name
