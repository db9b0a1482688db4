"""The spec's checks over an evaluation's tables, once everything is computed and written.

Expected values and gates against a run read `aggregate`; a significant gate against a run reads
the `comparison` row of the pair, the metric and the compare section's first test; a gate on a
statistic reads the rows of `agreement` or `correlation` it bounds (`bounds`). Gates against
the previous evaluation read what the history leaves on the connection before checks run, for
each (run, collection, metric) the latest earlier evaluation's values:

    previous_aggregate(run, collection, metric, value, evaluation_id)
    previous_per_query(run, collection, qid, metric, value, evaluation_id)

Without them (no history) or without a row for a gated run (a new run, a new metric), the gate
is skipped for that run with a warning naming the gate: a first night is not a failure.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pipeline.checks.bounds import BoundRule, bounded
from pipeline.checks.outcome import CheckResult, Significance, expected, gated, skipped
from pipeline.checks.plan import CheckPlan, GateRule
from pipeline.errors import IrpipeWarning

if TYPE_CHECKING:
    import duckdb

    from pipeline.spec import LoadedSpec

__all__ = ["run_checks"]

PREVIOUS_TABLES = ("previous_aggregate", "previous_per_query")


@dataclass(frozen=True)
class _Read:
    """What the checks read: the connection, aggregate values by (run, collection, metric), the
    resolved checks, and where the compare section is (for messages)."""

    con: duckdb.DuckDBPyConnection
    values: dict[tuple[str, str, str], float | None]
    checks: CheckPlan
    compare: str

    def value(self, run: str | None, collection: str, metric: str) -> float | None:
        """The run's aggregate of the metric under the collection (None: no row, or no value)."""
        return self.values.get((run, collection, metric))


def run_checks(
    con: duckdb.DuckDBPyConnection, loaded: LoadedSpec, checks: CheckPlan
) -> list[CheckResult]:
    """Every check of the spec (`checks`, resolved when it was validated), expected values
    first, then gates, each in spec order (a gate's runs in spec order too)."""
    if not (checks.expect or checks.gates or checks.bounds):
        return []
    rows = con.execute("SELECT run, collection, metric, value FROM aggregate").fetchall()
    values = {(run, collection, metric): value for run, collection, metric, value in rows}
    read = _Read(con, values, checks, loaded.where("compare"))
    results = [
        expected(e, e.collection, read.value(e.run, e.collection, e.metric.label))
        for e in read.checks.expect
    ]
    for rule in _in_spec_order(read.checks):
        if isinstance(rule, BoundRule):
            results += bounded(con, rule)
        else:
            results += _against_run(read, rule) if rule.against else _against_previous(read, rule)
    runs = loaded.spec.runs
    several = {name for name, run in runs.items() if len(run.collections) > 1}
    return [replace(r, several=r.run in several) for r in results]


def _in_spec_order(checks: CheckPlan) -> list[GateRule | BoundRule]:
    """The gates on metrics and on statistics, in the order the spec lists them."""
    return sorted([*checks.gates, *checks.bounds], key=lambda rule: int(rule.key.split(".")[1]))


def _against_run(read: _Read, rule: GateRule) -> list[CheckResult]:
    """A gate against another run of this evaluation."""
    label = rule.metric.label
    tested = _compared(read, rule) if rule.significant else {}
    return [
        gated(rule, (run, c), (read.value(rule.against, c, label), read.value(run, c, label)),
              test=tested.get((run, c)))
        for run, c in rule.runs
    ]  # fmt: skip


def _compared(read: _Read, rule: GateRule) -> dict[tuple[str, str], Significance]:
    """Each gated (run, collection)'s comparison with the reference run under that collection,
    by the compare section's first test (a pair is a row either way round: significance does
    not depend on which is the baseline)."""
    test = read.checks.tests.tests[0]
    rows = read.con.execute(
        "SELECT run, collection, baseline, p_adjusted, significant FROM comparison "
        "WHERE metric = $metric AND test = $test AND $against IN (run, baseline)",
        {"metric": rule.metric.label, "test": test, "against": rule.against},
    ).fetchall()
    return {
        (baseline if run == rule.against else run, c): Significance(test, p, bool(significant))
        for run, c, baseline, p, significant in rows
    }


def _against_previous(read: _Read, rule: GateRule) -> list[CheckResult]:
    """A gate against the previous evaluation in the history: runs without a previous value are
    skipped (one warning per gate and reason); a significant gate tests the others together."""
    previous = _previous(read.con, rule)
    runs = list(rule.runs)
    found = {run: previous[run] for run in runs if run in (previous or {})}
    tested: dict = {}
    if rule.significant and found:
        from pipeline.checks.previous import (
            previous_tests,  # numpy and scipy: only for significant gates
        )

        tested = previous_tests(read.con, rule, list(found), read.checks.tests, read.compare)
    _warn_missing(rule, [run for run in runs if run not in found], previous is None)
    _warn_untested(rule, {run: why for run, why in tested.items() if isinstance(why, str)})
    return [_previous_result(read, rule, run, found, tested) for run in runs]


def _previous_result(read: _Read, rule: GateRule, run, found: dict, tested: dict) -> CheckResult:
    """One run's outcome against its previous value (skipped without one, or untestable)."""
    if run not in found:
        return skipped(rule, run, f"no previous evaluation of run '{run[0]}' in the history")
    if isinstance(tested.get(run), str):
        return skipped(rule, run, tested[run])
    (reference, evaluation_id), new = found[run], read.value(*run, rule.metric.label)
    return gated(rule, run, (reference, new), evaluation_id, tested.get(run))


def _previous(con, rule: GateRule) -> dict[tuple[str, str], tuple[float, int]] | None:
    """(value, evaluation id) of each (run, collection) in the history's previous evaluation of
    the gate's metric; None when the connection has no history tables."""
    if not _has_tables(con, PREVIOUS_TABLES):
        return None
    rows = con.execute(
        "SELECT run, collection, value, evaluation_id FROM previous_aggregate "
        "WHERE metric = ? AND value IS NOT NULL AND NOT isnan(value)",
        [rule.metric.label],
    ).fetchall()
    return {
        (run, collection): (value, evaluation_id) for run, collection, value, evaluation_id in rows
    }


def _has_tables(con, names: tuple[str, ...]) -> bool:
    """Whether every table of `names` exists, temporary or not (duckdb_tables(): a millisecond,
    where information_schema takes twenty)."""
    found = con.execute(
        "SELECT count(DISTINCT table_name) FROM duckdb_tables() "
        "WHERE list_contains($names, table_name)",
        {"names": list(names)},
    ).fetchone()[0]
    return found == len(names)


def _warn_missing(rule: GateRule, runs: list[tuple[str, str]], no_history: bool) -> None:
    if not runs:
        return
    why = (
        " (none is kept: give the spec a history, or run with --history PATH)" if no_history else ""
    )
    _warn(
        f"{rule.where}: no previous evaluation of {_named(runs)} ({rule.metric.label}) in the "
        f"history{why}; the gate is skipped"
    )


def _warn_untested(rule: GateRule, reasons: dict) -> None:
    for (run, _), why in reasons.items():
        _warn(f"{rule.where}: run '{run}': {why}; the gate is skipped")


def _named(runs: list[tuple[str, str]]) -> str:
    """The runs of (run, collection) pairs, each once (a run may be gated under several)."""
    names = list(dict.fromkeys(run for run, _ in runs))
    shown = ", ".join(f"'{run}'" for run in names)
    return f"run {shown}" if len(names) == 1 else f"runs {shown}"


def _warn(message: str) -> None:
    warnings.warn(IrpipeWarning(message), stacklevel=3)
