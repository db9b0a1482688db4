"""The sections of the dashboard's pages, as HTML: an evaluation's results (runs × metrics, with
the best value and significance marks), its checks, what changed against another evaluation, and
its provenance. Each section reads the history's records (`data`), never the database."""

from __future__ import annotations

from html import escape
from pathlib import PurePath
from typing import Any

from pipeline.dashboard.tables import Cell, number, table, text

__all__ = [
    "aggregate_changes",
    "aggregate_changes_table",
    "checks_section",
    "legend",
    "provenance_section",
    "query_changes_table",
    "reasons_list",
    "results_table",
]


def _best(rows: list[tuple], better: dict[str, str | None]) -> set[tuple[str, str]]:
    """(run, metric) of each metric's best value among the runs (ties all marked)."""
    best = set()
    for metric in {row[2] for row in rows}:
        values = {run: v for run, _, m, v, _ in rows if m == metric and v == v and v is not None}
        if values and better.get(metric):
            top = (max if better[metric] == "higher" else min)(values.values())
            best |= {(run, metric) for run, v in values.items() if v == top}
    return best


def results_table(
    evaluation: dict[str, Any], rows: list[tuple], collection: str, better: dict
) -> str:
    """Runs × metrics of one collection: 4 decimals, * the best value, the significance marks (▲
    better, ▼ worse, as the history recorded them), and the queries each run was averaged over."""
    rows = [r for r in rows if r[1] == collection]
    metrics = list(dict.fromkeys(r[2] for r in rows))
    runs = list(dict.fromkeys(r[0] for r in rows))
    values = {(r[0], r[2]): r for r in rows}
    marks = {(m["run"], m["metric"]): m["mark"] for m in _significance(evaluation)["marks"]
             if m["collection"] == collection}  # fmt: skip
    best = _best(rows, better)
    body = []
    for run in runs:
        cells = [text(run)]
        for metric in metrics:
            row = values.get((run, metric))
            cell = number(row[3] if row else None)
            cell.html += ("*" if (run, metric) in best else "") + escape(
                marks.get((run, metric), "")
            )
            cells.append(cell)
        queries = max((values[run, m][4] or 0 for m in metrics if (run, m) in values), default=0)
        cells.append(Cell(str(queries)))
        body.append((cells, {"run": run, "collection": collection}))
    headers = ["run", *((m, {"metric": m}) for m in metrics), "queries"]
    return table(headers, body, kind="results")


def _significance(evaluation: dict[str, Any]) -> dict[str, Any]:
    return evaluation["provenance"].get("significance") or {"marks": [], "legend": []}


def legend(evaluation: dict[str, Any]) -> str:
    """What the marks mean: * always, the significance marks as the comparison recorded them."""
    lines = ["* the best value of the metric among the collection's runs",
             *_significance(evaluation)["legend"]]  # fmt: skip
    return "".join(f"<p class='legend'>{escape(line)}</p>" for line in lines)


_ORDER = {"failed": 0, "skipped": 1, "passed": 2}


def checks_section(evaluation: dict[str, Any]) -> str:
    """The expected values and gates as `irpipe run` decided them: each failed or skipped check
    run by run, first, with its message; then each check that passed for every run it covers,
    in one line (the runs it passed for are counted)."""
    checks = evaluation["provenance"].get("checks")
    if checks is None:
        return "<p class='muted'>No checks recorded with this evaluation.</p>"
    failing = {(c["key"], c["metric"]) for c in checks if c["status"] != "passed"}
    rows = [_check_row(c, c["run"], c["message"]) for c in sorted(checks, key=_order)
            if c["status"] != "passed" or (c["key"], c["metric"]) in failing]  # fmt: skip
    passed: dict[tuple[str, str], list[dict]] = {}
    for c in checks:
        if (c["key"], c["metric"]) not in failing:
            passed.setdefault((c["key"], c["metric"]), []).append(c)
    for group in passed.values():
        runs = group[0]["run"] if len(group) == 1 else f"all {len(group)} runs"
        rows.append(_check_row(group[0], runs, "", single=len(group) == 1))
    headers = ["status", "check", "run", "metric", "against", "reference", "value",
               "difference", "limit", "message"]  # fmt: skip
    return table(headers, rows, kind="checks")


def _order(check: dict[str, Any]) -> int:
    return _ORDER.get(check["status"], 3)


def _check_row(c: dict[str, Any], runs: str, message: str, single: bool = True) -> tuple:
    """One check's row; a check summarized over several runs shows no run's numbers."""
    status = Cell(f"<span class='status {escape(c['status'])}'>{escape(c['status'])}</span>",
                  _order(c))  # fmt: skip
    numbers = [c["reference"], c["new"], c["difference"]] if single else [None, None, None]
    cells = [status, text(c["key"]), text(runs), text(c["metric"]), text(c["against"]),
             *map(number, numbers), number(c["limit"]), text(message)]  # fmt: skip
    tags = {"run": c["run"] if single else "", "metric": c["metric"], "collection": c["collection"]}
    return cells, tags


def reasons_list(reasons: list[dict[str, Any]]) -> str:
    """What differs between two evaluations that can change numbers, one line each."""
    if not reasons:
        return "<p>Nothing that can change numbers differs (same inputs, settings, metrics, versions).</p>"
    items = "".join(
        f"<li><b>{escape(r['kind'])}</b> {escape(str(r['name']))}: {escape(r['change'])}"
        f"{_short(r['old'], r['new'])}</li>"
        for r in reasons
    )
    return f"<ul class='reasons'>{items}</ul>"


def _short(old: Any, new: Any) -> str:
    def clip(value: Any) -> str:
        text = str(value)
        return text if len(text) <= 24 else text[:21] + "…"

    if old is None or new is None:
        return ""
    return f" ({escape(clip(old))} → {escape(clip(new))})"


def aggregate_changes(old_rows: list[tuple], new_rows: list[tuple]) -> list[tuple]:
    """(collection, run, metric, old, new) of every aggregate value that differs."""
    old = {(r[1], r[0], r[2]): r[3] for r in old_rows}
    changed = []
    for run, collection, metric, value, _ in new_rows:
        before = old.get((collection, run, metric))
        if before != value and not (before != before and value != value):  # NaN equals NaN
            changed.append((collection, run, metric, before, value))
    return changed


def aggregate_changes_table(changes: list[tuple], better: dict[str, str | None]) -> str:
    """The aggregate values that changed (`aggregate_changes`), each change marked better or
    worse in its metric's direction (`better`, by label)."""
    rows = [
        ([text(c), text(r), text(m), number(a), number(b), _difference(a, b, better.get(m))],
         {"collection": c, "run": r, "metric": m})
        for c, r, m, a, b in changes
    ]  # fmt: skip
    return table(["collection", "run", "metric", "before", "now", "Δ"], rows, kind="changes")


def _difference(old: float | None, new: float | None, better: str | None) -> Cell:
    """A change: its arrow says which way the value went, its colour whether that is better
    (where the metric has a direction: a latency that rises is worse)."""
    if old is None or new is None:
        return Cell("–")
    delta = new - old
    if not (delta > 0 or delta < 0):  # unchanged, or not a number
        return Cell(f"{delta:+.4f}")
    kind = "up" if delta > 0 else "down"
    if better is not None:
        kind += " better" if (delta > 0) == (better == "higher") else " worse"
    return Cell(f"<span class='{kind}'>{delta:+.4f}</span>")


def query_changes_table(
    queries: list[tuple], better: dict[str, str | None], limit: int | None = None
) -> str:
    """The per-query values that changed, the largest changes first, each marked better or
    worse in the direction of its metric's per-query values (`better`, by label)."""
    ordered = sorted(queries, key=lambda q: -abs((q[5] or 0) - (q[4] or 0)))[:limit]
    rows = [
        ([text(c), text(r), text(m), text(q), number(a), number(b),
          _difference(a, b, better.get(m))],
         {"collection": c, "run": r, "metric": m})
        for c, r, m, q, a, b in ordered
    ]  # fmt: skip
    headers = ["collection", "run", "metric", "query", "before", "now", "Δ"]
    return table(headers, rows, kind="queries")


def provenance_section(evaluation: dict[str, Any]) -> str:
    """Where the numbers came from: spec, inputs with sizes and digests (a path inside the
    spec's directory is shown from it), versions, settings."""
    p = evaluation["provenance"]
    facts = [("spec", p.get("spec")), ("spec sha256", p.get("spec_sha256")),
             ("spec digest (canonical)", p.get("spec_canonical")), ("host", evaluation["host"]),
             ("started", evaluation["started"]), ("finished", evaluation["finished"]),
             ("seconds", evaluation["seconds"])]  # fmt: skip
    versions = p.get("versions", {})
    facts += [(f"version: {name}", value) for name, value in sorted(versions.items())
              if not isinstance(value, dict)]  # fmt: skip
    facts += [
        (f"plugin: {name}", value) for name, value in sorted(versions.get("plugins", {}).items())
    ]
    facts += [(f"setting: {name}", value) for name, value in sorted(p.get("settings", {}).items())]
    rows = [([text(name), text(value)], {}) for name, value in facts]
    spec_directory = str(PurePath(p.get("spec") or "").parent) + "/"
    inputs = [
        ([text(i.get("role")), text(i.get("name")),
          text(str(i.get("path")).removeprefix(spec_directory)),
          Cell(f"{i.get('size', 0):,}"), text(i.get("digest"))],
         {"collection": i.get("name") if i.get("role") == "qrels" else "",
          "run": i.get("name") if i.get("role") == "run" else ""})
        for i in p.get("inputs", [])
    ]  # fmt: skip
    headers = ["role", "name", "path (from the spec's directory)", "bytes", "digest"]
    return table(["fact", "value"], rows, kind="facts") + table(headers, inputs, kind="inputs")
