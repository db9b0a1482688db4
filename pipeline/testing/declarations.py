"""Checks 1 and 2, on what a measure declares: its parameters and its names (no data read)."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any

from pipeline.contract.columns import Columns
from pipeline.contract.measure import Measure
from pipeline.errors import SpecError
from pipeline.measures.registry import ResolvedMeasure, get_registry
from pipeline.measures.resolve import declared_needs
from pipeline.testing.install import installed
from pipeline.testing.metrics import resolve, resolve_metrics

__all__ = ["check_names", "check_params", "wrong_value"]

UNKNOWN_PARAMETER = "no_such_parameter"


# -- 1. parameters --------------------------------------------------------------------------------
def check_params(measure: type[Measure], metrics: Sequence[str]) -> None:
    """Starting from the parameters of each metric string: an unknown parameter, a value of a wrong
    type and a missing required parameter are refused with SpecError (irpipe's strict pydantic),
    and the measure compiles given its required parameters alone."""
    with installed(measure):
        for r in resolve_metrics(measure, metrics).resolved:
            base = _base_params(measure, r)
            _refuses_wrong(measure, base)
            for key in _required(measure):
                _refuses_without(measure, base, key)
            _compiles(measure, {key: base.get(key) for key in _required(measure)})


def _refuses_wrong(measure: type[Measure], base: dict[str, Any]) -> None:
    """An unknown parameter, and for each parameter a value of a type it does not take."""
    _refuses(
        measure, {**base, UNKNOWN_PARAMETER: 1}, f"the unknown parameter {UNKNOWN_PARAMETER!r}"
    )
    for key, field in measure.Params.model_fields.items():
        wrong = wrong_value(field.annotation)
        if wrong is not None:
            _refuses(measure, {**base, key: wrong}, f"{key}={wrong!r}, a {type(wrong).__name__}")


def _base_params(measure: type[Measure], r: ResolvedMeasure) -> dict[str, Any]:
    """The metric's parameters as a dict, checked to resolve to the same parameters again."""
    base = r.params.model_dump()
    again = resolve(measure, measure.name, base)
    if [a.params for a in again] != [r.params]:
        raise AssertionError(
            f"{r.canonical}: its parameters {base} given to {measure.name} resolve to "
            f"{[a.canonical for a in again]}; model_dump() must give back what validates to them"
        )
    return base


def _refuses(measure: type[Measure], params: dict[str, Any], what: str) -> None:
    if _resolved_or_refused(measure, params, what):
        raise AssertionError(
            f"{measure.__name__} accepted {what} ({params}); its Params must refuse it: derive "
            "Params from pipeline.api.MeasureParams (strict types, unknown parameters forbidden)"
        )


def _resolved_or_refused(measure: type[Measure], params: dict[str, Any], what: str) -> list:
    """The measure resolved with `params`, or [] if irpipe refused them with SpecError."""
    try:
        return get_registry().resolve(measure.name, params)
    except SpecError:
        return []
    except Exception as exc:
        raise AssertionError(
            f"{measure.__name__}: {what} raised {type(exc).__name__} ({exc}) instead of irpipe's "
            "SpecError; derive Params from pipeline.api.MeasureParams"
        ) from exc


def _required(measure: type[Measure]) -> list[str]:
    """`required`, and the Params fields without a default."""
    fields = measure.Params.model_fields
    return list(
        dict.fromkeys([*measure.required, *(k for k, f in fields.items() if f.is_required())])
    )


def _refuses_without(measure: type[Measure], base: dict[str, Any], key: str) -> None:
    params = {k: v for k, v in base.items() if k != key}
    found = _resolved_or_refused(measure, params, f"no {key!r}")
    # irpipe's own P, R, ... take trec_eval's default cutoffs instead (P is P@5 ... P@1000)
    if found and not all(getattr(r.params, key, None) is not None for r in found):
        names = [r.canonical for r in found]
        raise AssertionError(
            f"{measure.__name__} resolved without its required parameter {key!r} to {names}; "
            f"list it in `required` (or give the Params field no default)"
        )


def _compiles(measure: type[Measure], params: dict[str, Any]) -> None:
    """With every other parameter at its default, the measure's SQL compiles (a parameter it
    cannot do without belongs in `required`)."""
    for r in resolve(measure, measure.name, params):
        for part in ("per_query", "missing", "empty"):
            try:
                view = Columns().bound(declared_needs(r, Columns()), f"metric {r.label!r}")
                getattr(r.measure, part)(r.params, view)  # as the compiler asks for it
            except Exception as exc:
                raise AssertionError(
                    f"{r.canonical}, given only its required parameters {params}, does not "
                    f"compile: its {part} raised {type(exc).__name__}: {exc}; list the parameters "
                    "it cannot do without in `required`"
                ) from exc


_PROBES: tuple[Any, ...] = ("1", 1, [1], {"1": 1})


def wrong_value(annotation: Any) -> Any:
    """A value whose type the annotation does not accept (such as "1" for an int, which lax
    validation would convert), or None when it accepts anything."""
    accepted = _types(annotation)
    if object in accepted:
        return None
    return next((p for p in _PROBES if type(p) not in accepted), None)


def _types(annotation: Any) -> set[type]:
    """The Python types a field annotation accepts, as far as the probes need (object: any)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_types(a) for a in args))
    if origin is typing.Literal:
        return {type(v) for v in args}
    if origin is typing.Annotated:
        return _types(args[0])
    if origin is not None:
        return {origin} if isinstance(origin, type) else {object}
    if annotation is None or annotation is type(None):
        return {type(None)}
    if not isinstance(annotation, type) or annotation is object:
        return {object}
    return {float, int} if annotation is float else {annotation}  # strict floats take ints


# -- 2. names -------------------------------------------------------------------------------------
def check_names(measure: type[Measure], metrics: Sequence[str]) -> None:
    """Each metric's canonical name resolves to the same canonical name and parameters, and each
    alias resolves to the measure with its preset parameters."""
    with installed(measure):
        found = resolve_metrics(measure, metrics).resolved
        for r in found:
            _round_trip(measure, r)
        for alias, preset in measure.aliases.items():
            _alias_resolves(measure, alias, preset, found[0])


def _round_trip(measure: type[Measure], r: ResolvedMeasure) -> None:
    try:
        again = get_registry().resolve(r.canonical)
    except SpecError as exc:
        raise AssertionError(
            f"the canonical name {r.canonical!r} does not resolve: {exc}"
        ) from None
    if [(type(a.measure), a.canonical, a.params) for a in again] != [
        (measure, r.canonical, r.params)
    ]:
        got = "; ".join(f"{a.canonical} with {a.params!r}" for a in again)
        raise AssertionError(
            f"the canonical name {r.canonical!r} (parameters {r.params!r}) resolves to {got}: a "
            "canonical name must give back the same measure and parameters (is a parameter "
            "excluded from model_dump, or changed again by a validator?)"
        )


def _alias_resolves(measure: type[Measure], alias: str, preset: dict, r: ResolvedMeasure) -> None:
    given = {k: v for k, v in r.params.model_dump(exclude_defaults=True).items() if k not in preset}
    via_alias = resolve(measure, alias, given)
    via_name = resolve(measure, measure.name, {**given, **preset})
    if [(a.canonical, a.params) for a in via_alias] != [(a.canonical, a.params) for a in via_name]:
        raise AssertionError(
            f"alias {alias!r} with {given} resolves to {[a.canonical for a in via_alias]}, but "
            f"{measure.name} with its preset {preset} to {[a.canonical for a in via_name]}"
        )
