"""The metric grammar: `nDCG(gain='exponential')@10` <-> (name, params), parsed with `ast`, never eval.

A metric string is `Name` (or a plugin's qualified `plugin.Name`), optionally `(key=value, ...)`
with Python literals (a bare word is a string, but `true` and `false` are booleans, as in YAML),
optionally `@cutoff`. The canonical string sorts parameters and drops defaults, so equal metrics compare
equal and deduplicate.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from pipeline.errors import SpecError

__all__ = ["parse_metric", "format_metric"]

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][\w.\-]*")


def parse_metric(text: str) -> tuple[str, dict[str, Any], int | float | None]:
    """Split `text` into (name, keyword parameters, cutoff or None)."""
    body, cutoff = _split_cutoff(text.strip())
    if _PLAIN_NAME.fullmatch(body):  # also trec_eval names: 11pt_avg, iprec_at_recall_0.10
        return body, {}, cutoff
    try:
        tree = ast.parse(body, mode="eval").body
    except SyntaxError:
        raise SpecError(
            f"'{text}' is not a metric string; expected e.g. P@10 or AP(rel=2)"
        ) from None
    if _dotted(tree) is not None:
        return _dotted(tree), {}, cutoff
    if isinstance(tree, ast.Call) and _dotted(tree.func) is not None and not tree.args:
        params = {kw.arg: _literal(kw.value, text) for kw in tree.keywords if kw.arg}
        if len(params) != len(tree.keywords):
            raise SpecError(f"'{text}': parameters must be written key=value")
        return _dotted(tree.func), params, cutoff
    raise SpecError(f"'{text}': expected Name, Name@k or Name(key=value, ...)@k")


def _dotted(node: ast.expr) -> str | None:
    """`Name` or `plugin.Name` (a plugin's measure under its namespace), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def format_metric(name: str, params: dict[str, Any], cutoff: Any = None) -> str:
    """The canonical string: parameters sorted by key, values as Python literals."""
    inner = ",".join(f"{key}={_repr(value)}" for key, value in sorted(params.items()))
    text = f"{name}({inner})" if inner else name
    return f"{text}@{_repr(cutoff)}" if cutoff is not None else text


def _split_cutoff(text: str) -> tuple[str, int | float | None]:
    body, sep, tail = text.rpartition("@")
    if not sep or ")" in tail:
        return text, None
    try:
        value = ast.literal_eval(tail.strip())
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(f"'{text}': the cutoff after '@' must be a number, got '{tail}'")
    return body, value


def _literal(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Name):  # bare words are strings (gain=exponential), as in YAML
        return _BOOLEANS.get(node.id, node.id)
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise SpecError(f"'{text}': parameter values must be literals") from None


_BOOLEANS = {"true": True, "false": False}


def _repr(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{_repr(k)}:{_repr(v)}" for k, v in sorted(value.items())) + "}"
    return repr(value)
