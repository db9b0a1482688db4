"""The plugin manager: built-in plugins first, then the `irpipe` entry points of installed packages.

`IRPIPE_LOAD_PLUGINS` limits which entry-point plugins load (comma-separated names, empty for none);
the tests set it to empty so that plugins installed on the machine never change their results.

A broken plugin does not take the others down. One that fails to import, implements a hook irpipe
does not have (or none), whose hook raises or returns anything but valid measure or writer classes
(`pipeline.host.checks`), whose writer takes a suffix already taken, or whose metric names clash
with the built-ins' or among its own (`pipeline.measures.registry`) is marked failed with a one-line reason
and fix, unregistered (none of its measures or writers is used), and reported once as a
`PluginWarning` naming its distribution and version. A built-in plugin that fails is a bug in
irpipe and raises. Two plugins whose metrics clash with each other stay loaded: the clashing
metrics of both are withheld (`PluginManager.withhold`), every other one is used.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pluggy

from pipeline import hookspecs
from pipeline._version import __version__
from pipeline.entry_points import InstalledEntryPoint, entry_points
from pipeline.errors import IrpipeWarning, PluginError, PluginWarning
from pipeline.hookspecs import HOOKS
from pipeline.host.builtin import DEFAULT_PLUGINS

__all__ = [
    "CONTESTED_FIX",
    "PluginManager",
    "PluginState",
    "create_plugin_manager",
    "get_plugin_manager",
]

_BUG = "a bug in the plugin: upgrade it, or report it to its authors"
#: What a user can do about two plugins' metrics whose names clash: both are withheld.
CONTESTED_FIX = (
    "two installed plugins define it, so neither's is used (their other metrics are): uninstall "
    "one of the two plugins, or ask one's authors to rename it"
)


@dataclass
class PluginState:
    """One plugin and what became of it: `loaded`, `failed` (with a reason and a fix), or
    `skipped` (an entry point that IRPIPE_LOAD_PLUGINS leaves out)."""

    plugin: str  # the name it is registered under: its entry point's, or its module's
    distribution: str | None = None
    version: str | None = None
    entry_point: str | None = None  # what the entry point names (`module:attr`), if it is one
    state: Literal["loaded", "failed", "skipped"] = "loaded"
    reason: str | None = None
    fix: str | None = None
    exception: BaseException | None = field(default=None, repr=False)
    #: metrics of a loaded plugin left out because another plugin defines the same name
    withheld: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        """`reason; fix` for a failed plugin, else None."""
        return f"{self.reason}; {self.fix}" if self.state == "failed" else None

    def title(self) -> str:
        """What a user installed, `irpipe-judged 0.1.0`; the plugin's name without a distribution."""
        if self.distribution is None:
            return self.plugin
        return f"{self.distribution} {self.version}" if self.version else self.distribution

    def describe(self) -> str:
        """`plugin 'irpipe-judged 0.1.0' (entry point 'judged')`, as messages name a plugin."""
        if self.plugin in DEFAULT_PLUGINS:
            return f"built-in plugin '{self.plugin}'"
        if self.entry_point is not None:
            return f"plugin '{self.title()}' (entry point '{self.plugin}')"
        if self.distribution is not None:
            return f"plugin '{self.title()}' (registered as '{self.plugin}')"
        return f"plugin '{self.plugin}' (registered without a distribution)"


class PluginManager(pluggy.PluginManager):
    """pluggy's manager, also knowing which distribution provided each plugin and what became of
    every plugin that is not built in (`records`)."""

    def __init__(self) -> None:
        super().__init__("irpipe")
        self.distributions: dict[str, str] = {}  # plugin name -> distribution name
        self.records: list[PluginState] = []  # entry points, and plugins that failed
        self._results: dict[tuple, list[type]] = {}  # each hook implementation's checked result

    def distribution(self, plugin_name: str) -> str | None:
        """`irpipe` for a built-in, its distribution for an entry point, None if registered
        directly (by a test or an embedding program)."""
        if plugin_name in DEFAULT_PLUGINS:
            return "irpipe"
        return self.distributions.get(plugin_name)

    def states(self) -> list[PluginState]:
        """Every plugin: the built-ins, the entry points (by name), then plugins registered
        directly; each loaded, failed or skipped."""
        builtins = [PluginState(name, "irpipe", __version__) for name in DEFAULT_PLUGINS]
        recorded = {state.plugin for state in self.records}
        direct = [
            PluginState(name, self.distributions.get(name))
            for name, plugin in self.list_name_plugin()
            if plugin is not None and name not in DEFAULT_PLUGINS and name not in recorded
        ]
        return [*builtins, *self.records, *direct]

    def listing(self, providers: Mapping[str, Any]) -> list[dict[str, Any]]:
        """`irpipe plugins`: for each plugin of `states`, its name, distribution, version, state,
        error, and the metrics and writer suffixes it provides (none unless loaded).
        `providers` maps each metric to its owner (`Registry.providers`)."""
        metrics: dict[str, list[str]] = {}
        for name, owner in providers.items():
            metrics.setdefault(owner.plugin, []).append(name)
        writers = {
            plugin: [suffix for cls in classes for suffix in cls.suffixes]
            for plugin, classes in self.contributions("register_writers")
        }
        return [
            {
                "plugin": state.plugin,
                "distribution": state.distribution,
                "version": state.version,
                "state": state.state,
                "error": state.error,
                "metrics": metrics.get(state.plugin, []) if state.state == "loaded" else [],
                "writers": writers.get(state.plugin, []) if state.state == "loaded" else [],
                "withheld": state.withheld,
            }
            for state in self.states()
        ]

    def failures(self) -> list[PluginState]:
        """The plugins that failed, in the order they load (entry points by name)."""
        return [state for state in self.records if state.state == "failed"]

    def fail(self, plugin: str, reason: str, fix: str, exception: Exception | None = None) -> None:
        """Unregister `plugin` and report it as failed (once: a plugin no longer registered is
        left alone). A built-in plugin raises instead: that is a bug in irpipe."""
        if plugin in DEFAULT_PLUGINS:
            raise RuntimeError(f"built-in plugin {plugin}: {reason}") from exception
        if self.get_plugin(plugin) is None:
            return
        state = self._record(plugin)
        self.unregister(name=plugin)
        self.mark_failed(state, reason, fix, exception)

    def withhold(self, metrics: Mapping[str, str], reason: str) -> None:
        """Two loaded plugins (keys) define metrics (values) whose names clash: record each as
        withheld and warn once, naming both. The plugins stay loaded with their other metrics."""
        for plugin, metric in metrics.items():
            self._record(plugin).withheld.append(metric)
        plugins = " and ".join(self._record(plugin).describe() for plugin in metrics)
        message = f"{plugins}: {reason}; {CONTESTED_FIX}"
        warnings.warn(PluginWarning(message), stacklevel=3)

    def mark_failed(self, state: PluginState, reason: str, fix: str, exception=None) -> None:
        """Mark `state` failed and warn, naming the plugin's distribution and version."""
        state.state, state.reason, state.fix, state.exception = "failed", reason, fix, exception
        message = f"{state.describe()} was not loaded: {state.error}"
        warnings.warn(PluginWarning(message, exception), stacklevel=3)

    def _record(self, plugin: str) -> PluginState:
        """The record of a registered plugin (made now for one registered directly)."""
        for state in self.records:
            if state.plugin == plugin and state.state == "loaded":
                return state
        self.records.append(PluginState(plugin, self.distributions.get(plugin)))
        return self.records[-1]

    def contributions(self, hook: str) -> list[tuple[str, list[type]]]:
        """(plugin name, classes) from each registered plugin's `hook`: each implementation is
        called once and its result checked; a plugin whose hook raises or returns anything but
        the classes the hook promises fails (see `pipeline.host.checks`)."""
        found = []
        for impl in getattr(self.hook, hook).get_hookimpls():
            key = (hook, impl.plugin_name, impl.function)
            if key not in self._results:
                self._results[key] = self._called(hook, impl)
            if self.get_plugin(impl.plugin_name) is not None:
                found.append((impl.plugin_name, self._results[key]))
        return found

    def _called(self, hook: str, impl: pluggy.HookImpl) -> list[type]:
        from pipeline.host.checks import BrokenPlugin, checked, one_line

        try:
            return checked(hook, impl.function())
        except BrokenPlugin as exc:
            self.fail(impl.plugin_name, exc.reason, exc.fix, exc)
        except Exception as exc:  # the plugin's own code: anything may come out of it
            self.fail(impl.plugin_name, f"its {hook} hook raised {one_line(exc)}", _BUG, exc)
        return []

    def check_plugins(self) -> None:
        """Fail each plugin that implements a hook irpipe does not have, or none; whose hooks
        raise or return anything but the promised classes; or whose writers claim a suffix
        that another writer claims too."""
        from pipeline.host.checks import check_hook_names, check_suffixes

        check_hook_names(self)
        for hook in HOOKS:
            self.contributions(hook)
        check_suffixes(self)


_manager: PluginManager | None = None


def get_plugin_manager() -> PluginManager:
    """The process-wide plugin manager, created on first use."""
    global _manager
    if _manager is None:
        _manager = create_plugin_manager()
    return _manager


def create_plugin_manager() -> PluginManager:
    """A new plugin manager with the built-in plugins and the allowed entry-point plugins, each
    checked: a broken entry-point plugin is failed and reported, never raised."""
    pm = PluginManager()
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    _load_entry_points(pm)
    pm.check_plugins()
    try:  # only built-ins are left to break it: a bug in irpipe
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin!r} implements an unknown hook: {exc}") from None
    return pm


def _load_entry_points(pm: PluginManager) -> None:
    allowed = os.environ.get("IRPIPE_LOAD_PLUGINS")
    names = None if allowed is None else {n.strip() for n in allowed.split(",") if n.strip()}
    # By name, so the same installation loads (and reports) its plugins in the same order.
    found = sorted(entry_points("irpipe"), key=_load_order)
    for ep in found:
        state = _state_of(ep)
        pm.records.append(state)
        if names is None or ep.name in names:
            _load(pm, ep, state)
        else:
            state.state = "skipped"
    unknown = sorted((names or set()) - {ep.name for ep in found})
    if unknown:  # a typo here would otherwise leave a plugin out without a word
        installed = ", ".join(sorted({ep.name for ep in found})) or "none"
        warnings.warn(
            IrpipeWarning(
                f"IRPIPE_LOAD_PLUGINS names {', '.join(map(repr, unknown))}, which no installed "
                f"distribution provides as an irpipe entry point (installed: {installed})"
            ),
            stacklevel=3,
        )


def _load_order(ep: InstalledEntryPoint) -> tuple[str, str, str]:
    """By entry-point name, then distribution: of two with one name, the same one always loads."""
    return ep.name, ep.distribution or "", ep.value


def _state_of(ep: InstalledEntryPoint) -> PluginState:
    return PluginState(ep.name, ep.distribution, ep.version, entry_point=ep.value)


def _load(pm: PluginManager, ep: InstalledEntryPoint, state: PluginState) -> None:
    """Import and register one entry point; any failure fails its plugin alone."""
    from pipeline.host.checks import one_line

    if pm.get_plugin(ep.name) is not None:
        other = pm.distribution(ep.name) or ep.name
        reason = f"the entry point name '{ep.name}' is taken by distribution '{other}'"
        pm.mark_failed(state, reason, "uninstall one of the two distributions")
        return
    try:
        plugin = ep.load()
    except (Exception, SystemExit) as exc:  # a plugin's import may raise anything, even exit
        reason = f"importing {ep.value} raised {one_line(exc)}"
        fix = "reinstall or upgrade it (a dependency may be missing), or report it to its authors"
        pm.mark_failed(state, reason, fix, exc)
        return
    problem = _registration_problem(pm, ep.name, plugin)
    if problem is not None:
        pm.mark_failed(state, *problem)
    elif state.distribution:  # messages name what a user installed: the distribution
        pm.distributions[ep.name] = state.distribution


def _registration_problem(pm: PluginManager, name: str, plugin: object) -> tuple | None:
    """Register `plugin`; (reason, fix, exception) if pluggy refused it."""
    from pipeline.host.checks import one_line

    other = pm.get_name(plugin)
    if other is not None:
        return f"it names the same object as plugin '{other}'", "remove one of the entry points"
    try:
        pm.register(plugin, name=name)
    except Exception as exc:  # pluggy leaves half a registration behind when a hook is refused
        if pm.get_plugin(name) is not None:
            pm.unregister(name=name)
        if not isinstance(exc, pluggy.PluginValidationError):
            return f"registering it raised {one_line(exc)}", _BUG, exc
        reason = "its hooks do not match irpipe's: " + " ".join(str(exc).splitlines()[1:])
        fix = "a hook takes only the arguments pipeline/hookspecs.py lists (or upgrade irpipe)"
        return reason, fix, exc
    return None
