"""The spec's checks over an evaluation's tables, once everything is computed and written.

Expected values and gates against a run read `aggregate`; a significant gate against a run reads
the `comparison` row of the pair, the metric and the compare section's first test. Gates against
the previous evaluation read what the history leaves on the connection before checks run, for
each (run, collection, metric) the latest earlier evaluation's values:

    previous_aggregate(run, collection, metric, value, evaluation_id)
    previous_per_query(run, collection, qid, metric, value, evaluation_id)

Without them (no history) or without a row for a gated run (a new run, a new metric), the gate
is skipped for that run with a warning naming the gate: a first night is not a failure.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from ..errors import IrpipeWarning
from .outcome import CheckResult, Significance, expected, gated, skipped
from .plan import CheckPlan, GateRule, resolve_checks

if TYPE_CHECKING:
    import duckdb

    from ..compile import Plan
    from ..spec import LoadedSpec

__all__ = ["run_checks"]

PREVIOUS_TABLES = ("previous_aggregate", "previous_per_query")


def run_checks(con: duckdb.DuckDBPyConnection, loaded: LoadedSpec, plan: Plan) -> list[CheckResult]:
    """Every check of the spec, expected values first, then gates, each in spec order (a gate's
    runs in spec order too)."""
    if not (loaded.spec.expect or loaded.spec.gates):
        return []
    checks = resolve_checks(loaded, plan.metrics)
    values = dict(
        ((run, metric), value)
        for run, metric, value in con.execute("SELECT run, metric, value FROM aggregate").fetchall()
    )
    collection = {name: run.collection for name, run in loaded.spec.runs.items()}
    results = [
        expected(e, collection[e.run], values.get((e.run, e.metric.label))) for e in checks.expect
    ]
    for rule in checks.gates:
        gate = _against_run if rule.against is not None else _against_previous
        results += gate(con, rule, values, collection, checks, loaded.where("compare"))
    return results


def _against_run(con, rule: GateRule, values: dict, collection: dict, checks: CheckPlan, _where):
    """A gate against another run of this evaluation."""
    reference = values.get((rule.against, rule.metric.label))
    tested = _compared(con, rule, checks) if rule.significant else {}
    return [
        gated(
            rule,
            (run, collection[run]),
            (reference, values.get((run, rule.metric.label))),
            test=tested.get(run),
        )
        for run in rule.runs
    ]


def _compared(con, rule: GateRule, checks: CheckPlan) -> dict[str, Significance]:
    """Each gated run's comparison with the reference run, by the compare section's first test
    (a pair is a row either way round: significance does not depend on which is the baseline)."""
    test = checks.tests.tests[0]
    rows = con.execute(
        "SELECT run, baseline, p_adjusted, significant FROM comparison "
        "WHERE metric = $metric AND test = $test AND $against IN (run, baseline)",
        {"metric": rule.metric.label, "test": test, "against": rule.against},
    ).fetchall()
    return {
        (baseline if run == rule.against else run): Significance(test, p, bool(significant))
        for run, baseline, p, significant in rows
    }


def _against_previous(con, rule: GateRule, values: dict, collection: dict, checks, where: str):
    """A gate against the previous evaluation in the history: runs without a previous value are
    skipped (one warning per gate and reason); a significant gate tests the others together."""
    previous = _previous(con, rule)
    runs = [(run, collection[run]) for run in rule.runs]
    found = {run: previous[run] for run in runs if run in (previous or {})}
    tested: dict = {}
    if rule.significant and found:
        from .previous import previous_tests  # numpy and scipy: only for significant gates

        tested = previous_tests(con, rule, list(found), checks.tests, where)
    _warn_missing(rule, [run for run in runs if run not in found], previous is None)
    _warn_untested(rule, {run: why for run, why in tested.items() if isinstance(why, str)})
    return [_previous_result(rule, run, found, tested, values) for run in runs]


def _previous_result(rule: GateRule, run, found: dict, tested: dict, values: dict) -> CheckResult:
    if run not in found:
        return skipped(rule, run, f"no previous evaluation of run '{run[0]}' in the history")
    if isinstance(tested.get(run), str):
        return skipped(rule, run, tested[run])
    (reference, evaluation_id), new = found[run], values.get((run[0], rule.metric.label))
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
    """Whether every table (or view) of `names` exists, temporary or not."""
    found = con.execute(
        "SELECT count(DISTINCT table_name) FROM information_schema.tables "
        "WHERE list_contains($names, table_name)",
        {"names": list(names)},
    ).fetchone()[0]
    return found == len(names)


def _warn_missing(rule: GateRule, runs: list[tuple[str, str]], no_history: bool) -> None:
    if not runs:
        return
    why = " (this evaluation keeps no history)" if no_history else ""
    _warn(
        f"{rule.where}: no previous evaluation of {_named(runs)} ({rule.metric.label}) in the "
        f"history{why}; the gate is skipped"
    )


def _warn_untested(rule: GateRule, reasons: dict) -> None:
    for (run, _), why in reasons.items():
        _warn(f"{rule.where}: run '{run}': {why}; the gate is skipped")


def _named(runs: list[tuple[str, str]]) -> str:
    names = ", ".join(f"'{run}'" for run, _ in runs)
    return f"run {names}" if len(runs) == 1 else f"runs {names}"


def _warn(message: str) -> None:
    warnings.warn(IrpipeWarning(message), stacklevel=3)
