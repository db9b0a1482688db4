"""The plugin contract. Every hook is documented here; argument lists only ever grow.

A plugin is a module or object with functions decorated by `pipeline.hookimpl`, registered through the
`irpipe` entry-point group. irpipe's own measures and writers are plugins of exactly this kind
(`pipeline.host.manager.DEFAULT_PLUGINS`).
"""

from __future__ import annotations

import pluggy

__all__ = [
    "HOOKS",
    "hookimpl",
    "hookspec",
]

hookspec = pluggy.HookspecMarker("irpipe")
hookimpl = pluggy.HookimplMarker("irpipe")


@hookspec
def register_metrics() -> list[type]:
    """Return a list of `pipeline.api.Measure` (or `PythonMeasure`) subclasses to make available
    by name.

    Results of all plugins are combined. Names and aliases share one namespace with the built-in
    measures and trec_eval's names (`map`, `P_10`), which are claimed first: a name already taken,
    one differing from another metric's only in case, or one that trec_eval's syntax reads fails
    the plugin, with a warning naming both distributions and classes (see `pipeline.measures.namespace`);
    so does a class that is not a valid measure. A failed plugin contributes nothing; the others
    and the built-ins keep working. Each class is instantiated once, without arguments.
    """


@hookspec
def register_writers() -> list[type]:
    """Return a list of `pipeline.api.Writer` subclasses, each handling one or more suffixes.

    Results of all plugins are combined; a plugin whose writer claims a suffix another writer has
    fails (with a warning naming both), as does one returning something that is not a Writer.
    """


#: every hook of this contract, by name (the host checks that a plugin implements only these)
HOOKS = ("register_metrics", "register_writers")
