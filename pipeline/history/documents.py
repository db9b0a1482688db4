"""The history read back: the documents `irpipe history`, `irpipe show` and `irpipe diff` print
(with `--json` as they are, otherwise drawn by `views`). configs/REFERENCE.md documents their
keys; keys are only ever added.

A history is read with the file attached read-only, for as long as the queries take: a job that
wants to write waits at most that long, and a reader waits for a writer (up to the lock timeout)
as a writer does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import HistoryError, SpecError
from pipeline.formatting import json_text
from pipeline.history import queries, store
from pipeline.history.judgments import as_records, judgment_rows, statistic_changes

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "Source",
    "diff_document",
    "dumps",
    "history_document",
    "locate",
    "reading",
    "require",
    "show_document",
]


@dataclass(frozen=True)
class Source:
    """Where to read: the history file, how long to wait for a job writing it, and the spec
    whose evaluations `irpipe history` lists (its absolute path, as recorded; None: every one)."""

    path: Path
    lock_timeout: float
    spec: str | None = None


def locate(spec: str | None, history: str | None) -> Source:
    """The history of `--history` (then SPEC only selects evaluations, by its absolute path, and
    is not read: a deleted spec's evaluations can still be listed), else the spec's `history:`."""
    from pipeline.spec import load_spec
    from pipeline.spec.history import History

    if history is not None:
        default = History.model_fields["lock_timeout"].default
        return Source(Path(history), default, str(Path(spec).resolve()) if spec else None)
    if spec is None:
        raise SpecError("give a SPEC whose `history:` names the history, or --history PATH")
    loaded = load_spec(spec, patterns="keep")
    configured = loaded.spec.history
    if configured is None:
        raise SpecError(
            f"{spec}: the spec has no `history:`; add one (history: results/history.duckdb), "
            "or give --history PATH"
        )
    return Source(configured.path, configured.lock_timeout, str(loaded.path.resolve()))


@contextmanager
def reading(source: Source) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection with the history attached read-only; a clear error when there is none."""
    import duckdb

    con = duckdb.connect()
    try:
        with store.attached(con, source.path, source.lock_timeout, write=False) as ready:
            if not ready:
                why = "the file does not exist" if not source.path.exists() else "it is empty"
                raise HistoryError(
                    f"no history at {source.path} ({why}); an evaluation with a history "
                    "(`history:` in its spec, or irpipe run --history PATH) creates it"
                )
            yield con
    finally:
        con.close()


def require(con: duckdb.DuckDBPyConnection, path: Path, ids: list[int]) -> None:
    """Every id names an evaluation of the history; else an error saying which ids exist."""
    unknown = sorted(set(ids) - queries.known(con, ids))
    if not unknown:
        return
    count, low, high = queries.id_range(con)
    holds = "no evaluation yet" if count == 0 else f"{count} evaluations, ids {low} to {high}"
    names = ", ".join(str(i) for i in unknown)
    raise SpecError(f"{path}: no evaluation {names} in this history; it holds {holds}")


def history_document(source: Source, last: int | None = None) -> dict[str, Any]:
    """`irpipe history`: the evaluations (of the source's spec, when given; the `last` ones, when
    given), oldest first, each with what changed since the previous evaluation of its spec."""
    with reading(source) as con:
        evaluations = queries.listing(con, source.spec, last)
        pairs = [(e["previous"], e["id"]) for e in evaluations if e["previous"] is not None]
        changes = queries.changes(con, pairs)
    by_evaluation: dict[int, list[dict]] = {}
    for change in changes:
        by_evaluation.setdefault(change.pop("evaluation"), []).append(change)
    return {
        "history": str(source.path.resolve()),
        "spec": source.spec,
        "evaluations": [{**e, "changes": by_evaluation.get(e["id"], [])} for e in evaluations],
    }


def show_document(source: Source, evaluation_id: int) -> dict[str, Any]:
    """`irpipe show`: one evaluation, what it was made of, its aggregate table, and its
    judgment sets' comparisons (`agreement`, `confusion`, `correlation`: empty without)."""
    with reading(source) as con:
        require(con, source.path, [evaluation_id])
        found = queries.evaluation(con, evaluation_id)
        runs = queries.runs(con, evaluation_id)
        metrics = queries.metrics(con, evaluation_id)
        aggregates = queries.aggregates(con, evaluation_id)
        judged = as_records(judgment_rows(con, [evaluation_id]))
    provenance = found.pop("provenance")
    recorded = {key: provenance.get(key) for key in ("versions", "settings", "inputs")}
    evaluation = {**found, **recorded, "metrics": metrics, "runs": runs, "provenance": provenance}
    return {
        "history": str(source.path.resolve()),
        "evaluation": evaluation,
        "aggregates": aggregates,
        **judged,
    }


def diff_document(source: Source, a: int, b: int) -> dict[str, Any]:
    """`irpipe diff`: what differs from evaluation `a` to `b` that can change numbers (the
    reasons), which values changed, and which statistics of the judgment sets' comparisons."""
    with reading(source) as con:
        require(con, source.path, [a, b])
        heads = [_head(queries.evaluation(con, i)) for i in (a, b)]
        changes = queries.changes(con, [(a, b)])
        for change in changes:
            del change["evaluation"]
        values, unchanged = queries.value_changes(con, a, b, any(map(_can_change, changes)))
        same = queries.same_results(con, a, b)
        statistics = statistic_changes(con, a, b)
    return {
        "history": str(source.path.resolve()),
        "a": heads[0],
        "b": heads[1],
        "changes": changes,
        "same_results": same,
        "values": values,
        "unchanged_values": unchanged,
        "unexplained_values": sum(not v["explained"] for v in values),
        "statistics": statistics,
    }


def _head(found: dict[str, Any]) -> dict[str, Any]:
    return {key: found[key] for key in ("id", "started", "finished", "seconds", "host", "spec")}


def _can_change(change: dict[str, Any]) -> bool:
    """Whether a difference other than in input files can change every value: a setting, a
    metric, a version, the spec's content (not its path alone)."""
    spec_path = change["kind"] == "spec" and change["name"] == "path"
    return change["kind"] not in ("run", "qrels") and not spec_path


def dumps(document: dict[str, Any]) -> str:
    """The document as JSON text; NaN and infinities (not JSON) become null."""
    return json_text(document, indent=2, ensure_ascii=False)
