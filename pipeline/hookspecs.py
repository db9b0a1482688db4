"""The plugin contract. Every hook is documented here; argument lists only ever grow.

A plugin is a module or object with functions decorated by `pipeline.hookimpl`, registered through the
`irpipe` entry-point group. irpipe's own measures and writers are plugins of exactly this kind
(`pipeline.plugins.DEFAULT_PLUGINS`).
"""

from __future__ import annotations

import pluggy

__all__ = ["hookimpl", "hookspec"]

hookspec = pluggy.HookspecMarker("irpipe")
hookimpl = pluggy.HookimplMarker("irpipe")


@hookspec
def register_metrics() -> list[type]:
    """Return a list of `pipeline.Measure` subclasses to make available by name.

    Results of all plugins are combined. Names and aliases share one namespace with the built-in
    measures and trec_eval's names (`map`, `P_10`), which are claimed first: a name already taken,
    one differing from another metric's only in case, or one that trec_eval's syntax reads is an
    error naming both distributions and classes (see `pipeline.namespace`). Each class is
    instantiated once, without arguments.
    """


@hookspec
def register_writers() -> list[type]:
    """Return a list of `pipeline.outputs.Writer` subclasses, each handling one or more suffixes.

    Results of all plugins are combined; two writers claiming the same suffix are an error.
    """
