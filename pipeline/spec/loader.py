"""Load a YAML spec safely: no tags, no duplicate keys, and a line number for every key."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pipeline.errors import IrpipeWarning, SpecError
from pipeline.spec import models
from pipeline.spec.base import did_you_mean
from pipeline.spec.checks import GATE_KINDS
from pipeline.spec.globs import expand_run_globs
from pipeline.spec.inputs import SPELLINGS
from pipeline.spec.models import Spec

__all__ = ["LoadedSpec", "load_spec", "parse_spec_text", "spec_from_mapping"]


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec with where it came from: its file, its hash and a key -> line map; and
    the inputs given as tables rather than files (the Python door's frames, by their
    `memory://` path in the spec)."""

    spec: Spec
    path: Path
    sha256: str
    lines: dict[tuple, int] = field(default_factory=dict, compare=False)
    #: Arrow tables by the name the engine registers them under (`table_rows.memory_view`)
    tables: dict[str, Any] = field(default_factory=dict, compare=False)
    #: the qrels format a pool's `exclude` file shows in its first line, by its path as text (the
    #: preflight's `with_qrels_formats`; a collection's is written into the spec itself)
    formats: dict[str, str] = field(default_factory=dict, compare=False)

    def where(self, *key: str | int) -> str:
        """`file:line: dotted.key` for messages about a key of this spec, as the spec spells it
        (`nuggets:` where the model reads `qrels:`: `SPELLINGS`)."""
        key = _as_spelt(self.lines, tuple(key))
        line = self.lines.get(key)
        dotted = ".".join(str(k) for k in key)
        return f"{self.path}:{line}: {dotted}" if line else f"{self.path}: {dotted}"


def _as_spelt(lines: dict[tuple, int], key: tuple) -> tuple:
    """`key`, or the spelling of its last part that the spec wrote instead (`SPELLINGS`)."""
    if key in lines or not key:
        return key
    spelt = [k for k, read_as in SPELLINGS.items() if read_as == key[-1]]
    return next((key[:-1] + (k,) for k in spelt if key[:-1] + (k,) in lines), key)


def load_spec(path: str | Path, patterns: str = "expand") -> LoadedSpec:
    """Read, parse and validate the spec at `path`; paths inside resolve relative to it.

    `patterns` says what a run whose path is a glob pattern becomes: `expand` (one run per
    matching file; none is an error), `expand_or_keep` (a pattern matching nothing stays one run
    named by its key) or `keep` (no directory is listed: every pattern stays one run).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{path}: cannot read the spec ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{path}: the spec is not UTF-8 text") from None
    return parse_spec_text(text, path, hashlib.sha256(raw).hexdigest(), patterns)


def parse_spec_text(
    text: str, path: Path, sha256: str = "", patterns: str = "expand"
) -> LoadedSpec:
    """Parse YAML text as a spec located at `path` (used for relative paths and messages)."""
    try:
        node = _compose(text, path)
        data = _to_python(node, path, (), _Budget()) if node is not None else None
        lines = dict(_key_lines(node, ())) if node is not None else {}
    except RecursionError:
        raise SpecError(f"{path}: invalid YAML: nested too deeply to be a spec") from None
    if not isinstance(data, dict):
        raise SpecError(
            f"{path}: the spec must be a YAML mapping with keys such as 'runs' and 'metrics'"
        )
    base_dir = path.parent.resolve()
    if patterns != "keep":
        data = expand_run_globs(data, base_dir, lines, path, required=patterns == "expand")
    return spec_from_mapping(data, path, sha256, lines)


def spec_from_mapping(
    data: dict[str, Any],
    path: Path,
    sha256: str,
    lines: dict[tuple, int] | None = None,
    tables: dict[str, Any] | None = None,
) -> LoadedSpec:
    """Validate a spec given as a mapping (a YAML file's, or the Python door's); `path` names
    where it came from in messages, and relative paths resolve against its directory."""
    lines = lines or {}
    loaded = LoadedSpec(spec=Spec.model_construct(), path=path, sha256=sha256, lines=lines)
    try:
        spec = Spec.model_validate(data, context={"base_dir": path.parent.resolve()})
    except ValidationError as exc:
        raise SpecError(_first_error(exc, loaded)) from None
    loaded = LoadedSpec(spec=spec, path=path, sha256=sha256, lines=lines, tables=tables or {})
    _check_run_collections(loaded)
    _warn_unused_collections(loaded)
    return loaded


def _check_run_collections(loaded: LoadedSpec) -> None:
    known = list(loaded.spec.collections)
    for name, run in loaded.spec.runs.items():
        for i, collection in enumerate(run.collections):
            if collection not in known:
                index = [i] if isinstance(run.collection, list) else []
                raise SpecError(
                    f"{loaded.where('runs', name, 'collection', *index)}: unknown collection "
                    f"'{collection}'; "
                    f"{did_you_mean(collection, known)}defined: {', '.join(known)}"
                )


def _warn_unused_collections(loaded: LoadedSpec) -> None:
    # Not an error: a spec may keep a collection for later; but it is worth a word in a nightly log.
    # A set an overlay is built from is used by it, and so is one an agreement entry compares.
    spec = loaded.spec
    used = {c for run in spec.runs.values() for c in run.collections}
    used |= {s for c in spec.collections.values() for s in c.overlay}
    used |= {name for entry in spec.agreement for name in (entry.reference, entry.other)}
    for name in loaded.spec.collections:
        if name not in used:
            warnings.warn(
                IrpipeWarning(
                    f"{loaded.where('collections', name)}: no run is evaluated against collection "
                    f"'{name}'; its qrels are checked, nothing else"
                ),
                stacklevel=3,
            )


def _compose(text: str, path: Path) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(f"{where}: invalid YAML: {problem}") from None


_PLAIN_TAGS = {
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")
}


class _Budget:
    """Counts the nodes built: YAML aliases can make a short text expand exponentially."""

    LIMIT = 100_000

    def __init__(self) -> None:
        self.left = self.LIMIT

    def spend(self, path: Path) -> None:
        self.left -= 1
        if self.left < 0:
            raise SpecError(
                f"{path}: invalid YAML: more than {self.LIMIT:,} values once aliases are expanded"
            )


def _to_python(node: yaml.Node, path: Path, key: tuple, budget: _Budget) -> Any:
    """Build plain data from a node tree, refusing duplicate keys (PyYAML keeps the last one)
    and tags (a spec is data: no objects, sets or timestamps)."""
    budget.spend(path)
    if node.tag not in _PLAIN_TAGS:
        raise SpecError(
            f"{path}:{node.start_mark.line + 1}: invalid YAML: tag '{node.tag}' is not allowed; "
            "a spec holds plain values, lists and mappings"
        )
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            name = _scalar(key_node, path)
            if name in out:
                dotted = ".".join(str(k) for k in (*key, name))
                raise SpecError(
                    f"{path}:{key_node.start_mark.line + 1}: {dotted}: duplicate key "
                    f"(first given on an earlier line); keep one"
                )
            out[name] = _to_python(value_node, path, (*key, name), budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, path, (*key, i), budget) for i, item in enumerate(node.value)]
    return _scalar(node, path)


def _scalar(node: yaml.Node, path: Path) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise SpecError(f"{path}:{node.start_mark.line + 1}: a mapping key must be a plain value")
    try:
        return _construct(node)
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}:{node.start_mark.line + 1}: {exc}") from None


def _construct(node: yaml.ScalarNode) -> Any:
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


def _key_lines(node: yaml.Node, key: tuple):
    yield key, node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                yield from _key_lines(value_node, (*key, key_node.value))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _key_lines(item, (*key, i))


#: the tags of a collection's qrels (`models.QrelsSource`) in an error's location
_QRELS_KINDS = (("qrels", "file"), ("qrels", "overlay"))


def _first_error(exc: ValidationError, loaded: LoadedSpec) -> str:
    """One line per problem, each `file:line: dotted.key: message`."""
    messages = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        if error["type"] == "unknown_key":
            loc = (*loc, error["ctx"]["key"])
        if error["type"] == "at_key":
            loc = tuple(error["ctx"]["loc"])
        if loc[:1] == ("runs",) and loc[2:3] in (("file",), ("fused",)):
            loc = loc[:2] + loc[3:]  # the kind of run (a file, or fused) is not a key
        if loc[:1] == ("collections",) and loc[2:4] in _QRELS_KINDS and error["type"] != "at_key":
            loc = loc[:3] + loc[4:]  # nor the kind of qrels (a file, or an overlay)
        if loc[:1] == ("gates",) and loc[2:3] in [(kind,) for kind in GATE_KINDS]:
            loc = loc[:2] + loc[3:]  # nor the kind of gate (a metric's drop, a statistic's bounds)
        messages.append(f"{loaded.where(*loc)}: {_message(error)}")
    return "\n".join(dict.fromkeys(messages))


def _message(error: dict) -> str:
    """pydantic's message, in the spec's terms where pydantic speaks of Python classes."""
    if error["type"] == "model_type":
        model = getattr(models, error["ctx"]["class_name"], None)
        if model is not None:
            return f"expected a mapping with the keys: {', '.join(model.model_fields)}"
    if error["type"] == "is_instance_of" and error["ctx"].get("class") == "Path":
        return "expected a file path (a string)"
    if error["type"] == "finite_number":
        return f"{error['input']!r} is not a finite number; give a number (not .nan or .inf)"
    return error["msg"]
