"""What a plugin must be, checked when plugins load, before irpipe uses any of it.

Its hooks must be irpipe's (`check_hook_names`: a misspelt one would never be called). A hook
returns a list of classes; each is checked for what irpipe reads from it (a measure's name,
description and pydantic `Params`; a writer's `suffixes`) and created, as the registry and the
writers create it (`checked`, raising `BrokenPlugin`); and a suffix has one writer
(`check_suffixes`). So a broken plugin is reported by its distribution when plugins load, and
never fails an evaluation halfway. `pipeline.host.manager` fails the plugin; the others work.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from pipeline.contract.measure import Measure
from pipeline.contract.python_measure import PythonMeasure
from pipeline.contract.writer import Writer
from pipeline.hookspecs import HOOKS
from pipeline.host.builtin import DEFAULT_PLUGINS

if TYPE_CHECKING:
    from pipeline.host.manager import PluginManager

__all__ = ["BrokenPlugin", "check_hook_names", "check_suffixes", "checked", "one_line"]

_HOOKSPECS = "see pipeline/hookspecs.py"
_FIXES = {  # for the plugin's authors: what the hook must return
    "register_metrics": "its register_metrics must return a list of pipeline.api.Measure subclasses, "
    f"each setting name, description and Params (a pydantic model; {_HOOKSPECS})",
    "register_writers": "its register_writers must return a list of pipeline.api.Writer "
    f"subclasses, each setting suffixes such as ('.xlsx',) ({_HOOKSPECS})",
}

_NO_HOOK = (
    f"point the entry point at the module whose {' or '.join(HOOKS)} carries @pipeline.api.hookimpl"
)


class BrokenPlugin(Exception):
    """A plugin breaks the contract: `reason` says what is wrong, `fix` what to do about it."""

    def __init__(self, reason: str, fix: str) -> None:
        super().__init__(f"{reason}; {fix}")
        self.reason = reason
        self.fix = fix


def checked(hook: str, result: object) -> list[type]:
    """The classes a hook returned, once each passes its checks; else raise BrokenPlugin."""
    check = {"register_metrics": _check_measure, "register_writers": _check_writer}[hook]
    if result is None:  # a hook with nothing to add (pluggy drops None results too)
        return []
    if not isinstance(result, list | tuple):
        raise BrokenPlugin(f"{hook} returned {_what(result)}, not a list", _FIXES[hook])
    for item in result:
        if not isinstance(item, type):
            raise BrokenPlugin(f"{hook} returned {_what(item)}, not a class", _FIXES[hook])
        check(item, _FIXES[hook])
    return list(result)


def one_line(exc: BaseException) -> str:
    """`ValueError: the first line of its message`: a reason fits on one line."""
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def check_hook_names(pm: PluginManager) -> None:
    """pluggy's `check_pending`, failing each plugin alone: a misspelt hook would never be
    called, and a plugin with no hook at all is an entry point aimed at the wrong object."""
    for name, caller in list(vars(pm.hook).items()):
        if name.startswith("_") or caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if not impl.optionalhook and impl.plugin_name not in DEFAULT_PLUGINS:
                pm.fail(impl.plugin_name, *_unknown_hook(name))
    for name, plugin in pm.list_name_plugin():
        if plugin is not None and name not in DEFAULT_PLUGINS and not pm.get_hookcallers(plugin):
            pm.fail(name, "it implements no irpipe hook", _NO_HOOK)


def _unknown_hook(name: str) -> tuple[str, str]:
    close = difflib.get_close_matches(name, HOOKS, n=1)
    guess = f" (did you mean '{close[0]}'?)" if close else ""
    reason = f"it implements '{name}', which is not an irpipe hook{guess}"
    rename = f"rename it to '{close[0]}'" if close else f"irpipe's hooks are {', '.join(HOOKS)}"
    return reason, f"{rename}, or mark it @hookimpl(optionalhook=True) if it may be absent"


def check_suffixes(pm: PluginManager) -> None:
    """Every suffix has one writer at each level (writers may share a suffix by level, as the
    `.md` pivot and report do): each plugin among two or more claimants fails, so an output's
    format never depends on which plugin loaded first (built-in suffixes stay)."""
    claims: dict[str, list[tuple[str, type]]] = {}
    for plugin, classes in pm.contributions("register_writers"):
        for cls in classes:
            for suffix in dict.fromkeys(cls.suffixes):
                claims.setdefault(suffix, []).append((plugin, cls))
    for suffix, claimants in claims.items():
        owners = [o for o in claimants if any(o is not p and _share_level(o, p) for p in claimants)]
        if len(owners) < 2:
            continue
        named = " and ".join(
            f"{cls.__module__}.{cls.__qualname__} ({pm.distribution(p) or p})" for p, cls in owners
        )
        reason = f"writers {named} claim the same suffix '{suffix}'"
        fix = "a suffix has one writer and built-in suffixes cannot be taken: rename it"
        for plugin in [p for p, _ in owners if p not in DEFAULT_PLUGINS] or [owners[0][0]]:
            pm.fail(plugin, reason, fix)


def _share_level(one: tuple[str, type], other: tuple[str, type]) -> bool:
    default = ("query", "aggregate")  # Writer's
    levels = (set(getattr(cls, "levels", default) or ()) for _, cls in (one, other))
    return bool(next(levels) & next(levels))


def _check_measure(cls: type, fix: str) -> None:
    where = f"measure class {_name(cls)}"
    if not issubclass(cls, Measure):
        raise BrokenPlugin(f"class {_name(cls)} is not a subclass of pipeline.api.Measure", fix)
    _check_metric_name(cls, where, fix)
    if not _text(getattr(cls, "description", None)):
        raise BrokenPlugin(f"{where} has no description (a one-line string)", fix)
    params = getattr(cls, "Params", None)
    if not (isinstance(params, type) and issubclass(params, BaseModel)):
        raise BrokenPlugin(f"{where}: Params is {_what(params)}, not a pydantic model", fix)
    _check_parameter_names(cls, where, fix)
    _check_python_path(cls, where, fix)
    _created(cls, where, "implement per_query")


def _check_python_path(cls: type, where: str, fix: str) -> None:
    """A PythonMeasure must compute something: `compute` (one query) or `compute_batch` (many)."""
    if not issubclass(cls, PythonMeasure):
        return
    if cls.compute is PythonMeasure.compute and cls.compute_batch is PythonMeasure.compute_batch:
        raise BrokenPlugin(f"{where} implements neither compute nor compute_batch", fix)


def _check_metric_name(cls: type, where: str, fix: str) -> None:
    from pipeline.contract.metric_names import parse_metric
    from pipeline.errors import SpecError

    name = getattr(cls, "name", None)
    if not _text(name):
        raise BrokenPlugin(f"{where} has no name (a string such as 'Judged')", fix)
    try:
        readable = parse_metric(name) == (name, {}, None)
    except SpecError:
        readable = False
    if not readable:  # a spec could never name it
        raise BrokenPlugin(f"{where} is named {name!r}, which no spec can write", fix)
    aliases = getattr(cls, "aliases", None)
    if not isinstance(aliases, dict) or not all(isinstance(a, str) for a in aliases):
        raise BrokenPlugin(f"{where}: aliases is {_what(aliases)}, not a dict by name", fix)


def _check_parameter_names(cls: type, where: str, fix: str) -> None:
    """`cutoff` and `required` name parameters: the registry sets and checks them by name."""
    fields = cls.Params.model_fields
    cutoff = getattr(cls, "cutoff", None)
    if cutoff is not None and cutoff not in fields:
        raise BrokenPlugin(f"{where}: its cutoff {cutoff!r} is not a field of its Params", fix)
    unknown = [key for key in getattr(cls, "required", ()) if key not in fields]
    if unknown:
        raise BrokenPlugin(f"{where} requires {unknown}, which are not fields of its Params", fix)


def _check_writer(cls: type, fix: str) -> None:

    where = f"writer class {_name(cls)}"
    if not issubclass(cls, Writer):
        raise BrokenPlugin(f"class {_name(cls)} is not a subclass of pipeline.api.Writer", fix)
    suffixes = getattr(cls, "suffixes", None)
    if not isinstance(suffixes, list | tuple) or not suffixes:
        raise BrokenPlugin(f"{where} has no suffixes (a tuple such as ('.xlsx',))", fix)
    for suffix in suffixes:
        # An output's suffix is looked up lower-cased: '.XLSX' would never be chosen.
        if not (_text(suffix) and suffix.startswith(".") and suffix == suffix.lower()):
            raise BrokenPlugin(f"{where}: suffix {suffix!r} is not '.' and lower-case text", fix)
    _created(cls, where, "implement write")


def _created(cls: type, where: str, hint: str) -> Any:
    """An instance, as the registry and the writers make one: without arguments."""
    try:
        return cls()
    except Exception as exc:
        fix = f"{hint}; irpipe creates each class without arguments"
        raise BrokenPlugin(f"{where} cannot be created: {one_line(exc)}", fix) from exc


def _text(value: object) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _what(value: object) -> str:
    """A short account of a value: `'P@10' (a str)`, or which class an instance is of."""
    if isinstance(value, type):
        return f"class {_name(value)}"
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    if type(value).__module__ != "builtins":
        return f"an instance of {_name(type(value))} (return the class itself)"
    return f"{shown} (a {type(value).__name__})"
