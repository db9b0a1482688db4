"""The history documents (`reports`) as text: lines and tables that `console.print_blocks` draws
(rich on a terminal, plain ASCII elsewhere). Nothing here reads the history or imports rich."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import IrpipeError

__all__ = [
    "Listing",
    "RecordedMetric",
    "describe",
    "diff_text",
    "history_text",
    "installed_measure",
    "recorded_metrics",
    "show_text",
]


@dataclass
class Listing:
    """A table: a title line (none when empty), headers (no header row when empty), rows of
    cells (a cell may hold several lines), the indices of right-aligned columns and of those
    that may wrap on a narrow terminal (the others keep their width)."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)
    wraps: set[int] = field(default_factory=set)


def shown(path: str) -> str:
    """A path relative to the working directory when it is below it, else as recorded."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _time(iso: str) -> str:
    """`2026-11-23 14:12:53` of `2026-11-23T14:12:53.794672Z` (the header says UTC)."""
    return iso[:19].replace("T", " ")


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


_SUBJECTS = {"run": "run {}", "qrels": "qrels of {}", "setting": "setting {}",
             "metric": "metric {}", "version": "{}", "plugin": "plugin {}"}  # fmt: skip


def describe(change: dict[str, Any], digests: bool = False) -> str:
    """One change (`queries.changes`) in words: `run dense changed`, `setting k: 1 -> 2`,
    `metric R@1000 added`, `irpipe 0.4 -> 0.5`; with `digests`, an input's digests too."""
    kind, name, what, old, new = (change[k] for k in ("kind", "name", "change", "old", "new"))
    if kind == "spec":
        return f"spec {shown(old)} -> {shown(new)}" if name == "path" else "spec content changed"
    subject = _SUBJECTS[kind].format(name)
    if kind in ("run", "qrels"):
        detail = f" ({_short(old)} -> {_short(new)})" if digests and what == "changed" else ""
        return f"{subject} {what}{detail}"
    if what != "changed":
        value = f": {new}" if what == "added" else f" (was {old})"
        return f"{subject} {what}{value}" if kind != "metric" else f"{subject} {what}"
    return f"{subject}{':' if kind in ('setting', 'metric') else ''} {old} -> {new}"


def _short(digest: str | None) -> str:
    return "-" if digest is None else digest[: digest.find(":") + 13]


def history_text(document: dict[str, Any]) -> list[Any]:
    """`irpipe history`: a title, then one row per evaluation, oldest first."""
    evaluations, spec = document["evaluations"], document["spec"]
    whose = f" of {shown(spec)}" if spec else ""
    count = f"{len(evaluations)} evaluation{'s' if len(evaluations) != 1 else ''}"
    title = f"History {shown(document['history'])}: {count}{whose}"
    if not evaluations:
        return [title]
    specs = [] if spec else ["spec"]
    headers = ["id", "started (UTC)", "took", *specs, "reused", "changes"]
    rows = [
        [str(e["id"]), _time(e["started"]), _duration(e["seconds"]),
         *([shown(e["spec"])] if not spec else []), f"{e['reused']} of {e['runs']}", _changes(e)]
        for e in evaluations
    ]  # fmt: skip
    wraps = {len(headers) - 1, *([3] if not spec else [])}
    return [
        Listing(f"{title}, oldest first", headers, rows, {0, 2}, wraps),
        "reused: runs whose results came from the history (the cache); changes: since the "
        "previous evaluation of the same spec",
    ]


def _changes(evaluation: dict[str, Any]) -> str:
    if evaluation["previous"] is None:
        return "first evaluation of the spec"
    return "\n".join(map(describe, evaluation["changes"])) or "no change"


def show_text(document: dict[str, Any]) -> list[Any]:
    """`irpipe show`, before its aggregate table (`console.print_results`)."""
    e = document["evaluation"]
    reused = sum(run["cached"] for run in e["runs"])
    facts = [
        ["history", shown(document["history"])],
        ["started", f"{_time(e['started'])} UTC, took {_duration(e['seconds'])}, on {e['host']}"],
        ["versions", _versions(e["versions"])],
        ["settings", ", ".join(f"{k} {_setting(v)}" for k, v in e["settings"].items())],
        ["runs", f"{len(e['runs'])}, {reused} of them reused from the history"],
    ]
    inputs = [
        [i["role"], i["name"], str(i["size"]), i["digest"], shown(i["path"])] for i in e["inputs"]
    ]
    return [
        f"Evaluation {e['id']} of {shown(e['spec'])}",
        *(f"  {key:<9} {value}" for key, value in facts),
        "",
        Listing("Inputs", ["role", "name", "bytes", "digest", "path"], inputs, {2}, {3, 4}),
        "",
    ]


def _versions(versions: dict[str, Any]) -> str:
    plugins = versions.get("plugins") or {}
    text = ", ".join(f"{name} {versions[name]}" for name in ("irpipe", "duckdb", "python"))
    listed = ", ".join(f"{name} {version}" for name, version in plugins.items())
    return f"{text}; plugins: {listed or 'none'}"


def _setting(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@dataclass(frozen=True)
class _Measure:
    aggregator: str
    better: str | None


@dataclass(frozen=True)
class RecordedMetric:
    """A metric as the history recorded it, with what the summary reads of a resolved one."""

    label: str
    measure: _Measure

    @property
    def better(self) -> str | None:
        return self.measure.better

    @property
    def aggregator(self) -> str:
        """How its per-query values combined, as recorded (a resolved metric's `aggregator`)."""
        return self.measure.aggregator


def recorded_metrics(
    metrics: list[dict[str, Any]], registry
) -> tuple[list[RecordedMetric], list[str]]:
    """The evaluation's metrics for `console.print_results`, whether higher or lower is better
    taken from the measure now installed (in `registry`); and the labels of those that no
    longer resolve (a plugin uninstalled): their values are printed without a best mark."""
    recorded, lost = [], []
    for m in metrics:
        installed = installed_measure(m["metric"], registry)
        if installed is None:
            lost.append(m["label"])
        better = None if installed is None else installed.better
        recorded.append(RecordedMetric(m["label"], _Measure(m["aggregator"], better)))
    return recorded, lost


def installed_measure(canonical: str, registry):
    """The measure a recorded canonical form names, as the measures installed now (`registry`)
    define it; None where none does (a plugin uninstalled since)."""
    try:
        return registry.resolve(canonical)[0]
    except (IrpipeError, IndexError):
        return None


def diff_text(document: dict[str, Any]) -> list[Any]:
    """`irpipe diff`: the two evaluations, what differs between them, the values that changed."""
    a, b = document["a"], document["b"]
    width = max(len(str(a["id"])), len(str(b["id"])))
    return [
        f"Evaluations {a['id']} and {b['id']} of {shown(document['history'])}",
        *(
            f"  {name} {e['id']:>{width}}  {_time(e['started'])} UTC  {shown(e['spec'])}"
            for name, e in (("A", a), ("B", b))
        ),
        "",
        *_reasons(document),
        "",
        *_values(document),
        *_statistics(document),
    ]


def _reasons(document: dict[str, Any]) -> list[str]:
    a, b = document["a"]["id"], document["b"]["id"]
    changes = document["changes"]
    if not changes:
        return [f"What differs from {a} to {b}: nothing recorded (the same input files, "
                "settings, metrics, versions and spec)"]  # fmt: skip
    lines = [f"What differs from {a} to {b}:"]
    lines += [f"  {describe(change, digests=True)}" for change in changes]
    if document["same_results"]:
        runs = ", ".join(r["run"] for r in document["same_results"])
        lines.append(f"Same results in both (the same result key, so the same rows): {runs}")
    return lines


def _values(document: dict[str, Any]) -> list[Any]:
    values, unchanged = document["values"], document["unchanged_values"]
    if not values:
        return [f"No value changed: all {unchanged} aggregate values are equal to the last bit, "
                "and so are the per-query values."]  # fmt: skip
    a, b = document["a"]["id"], document["b"]["id"]
    rows = [[v["collection"], v["run"], v["metric"], *_numbers(v), str(v["queries_changed"])]
            for v in values]  # fmt: skip
    headers = ["collection", "run", "metric", str(a), str(b), "difference", "queries changed"]
    title = f"Changed values ({len(values)}; {unchanged} unchanged, equal to the last bit)"
    blocks: list[Any] = [Listing(title, headers, rows, {3, 4, 5, 6})]
    if document["unexplained_values"]:
        runs = sorted({v["run"] for v in values if not v["explained"]})
        count = document["unexplained_values"]
        blocks.append(
            f"Reproducibility problem: {count} value{'s' if count != 1 else ''} of "
            f"{', '.join(runs)} changed although nothing recorded that can change them did "
            "(input files, settings, metrics, versions, spec)."
        )
    return blocks


def _statistics(document: dict[str, Any]) -> list[Any]:
    """The judgment sets' statistics that changed (none printed when none did)."""
    found = document.get("statistics") or []
    if not found:
        return []
    a, b = document["a"]["id"], document["b"]["id"]
    rows = [[f"{s['other']} against {s['reference']}", s["collection"] or "", s["metric"] or "",
             s["statistic"], *_numbers(s)] for s in found]  # fmt: skip
    headers = ["compared", "collection", "metric", "statistic", str(a), str(b), "difference"]
    return ["", Listing(f"Changed statistics of the judgment sets' comparisons ({len(found)})",
                        headers, rows, {4, 5, 6})]  # fmt: skip


def _numbers(value: dict[str, Any]) -> list[str]:
    """A, B and B - A: 6 significant digits, or all 17 where that is what tells A from B."""
    a, b, difference = value["a"], value["b"], value["difference"]
    digits = 17 if a is not None and b is not None and a != b and f"{a:.6g}" == f"{b:.6g}" else 6
    return [_number(a, digits), _number(b, digits), _number(difference, 6, "+")]


def _number(value: float | None, digits: int, sign: str = "") -> str:
    return "-" if value is None else f"{value:{sign}.{digits}g}"
