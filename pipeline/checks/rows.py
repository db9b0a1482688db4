"""The checks as `irpipe run` prints them: a row per failed check and a line of counts. Pure
(`pipeline.console.draw` draws them with rich)."""

from __future__ import annotations

from pipeline.checks.outcome import CheckResult, missing

__all__ = ["COLUMNS", "NUMBERS", "table_rows", "tally"]

#: the columns of the console's table of failed checks
COLUMNS = ("check", "run", "metric", "against", "expected/previous", "new", "difference", "allowed")
NUMBERS = ("expected/previous", "new", "difference")


def table_rows(results: list[CheckResult]) -> list[tuple[str, ...]]:
    """One row of `COLUMNS` per result, as the console prints failed checks."""
    return [
        (
            r.key,
            r.shown_run,
            r.metric,
            _against(r),
            _shown(r.reference),
            _shown(r.new),
            _shown(r.difference, sign=True),
            _allowed(r),
        )
        for r in results
    ]


def tally(results: list[CheckResult]) -> str:
    """`2 of 7 checks failed, 4 passed, 1 skipped`, or `6 passed, 1 skipped` (no part that is
    zero, but the passed when nothing failed)."""
    count = {s: sum(r.status == s for r in results) for s in ("failed", "passed", "skipped")}
    parts = [f"{count['passed']} passed"] if count["passed"] or not count["failed"] else []
    parts += [f"{count['skipped']} skipped"] if count["skipped"] else []
    if count["failed"]:
        noun = "check" if len(results) == 1 else "checks"
        parts.insert(0, f"{count['failed']} of {len(results)} {noun} failed")
    return ", ".join(parts)


def _against(r: CheckResult) -> str:
    return f"evaluation {r.evaluation_id}" if r.evaluation_id is not None else r.against


def _allowed(r: CheckResult) -> str:
    if r.kind == "bound":
        bounds = [
            f">= {r.low:g}" if r.low is not None else "",
            f"<= {r.high:g}" if r.high is not None else "",
        ]
        return " and ".join(b for b in bounds if b)
    if r.kind == "expect":
        return f"+/- {r.limit:g}" if r.two_sided else f"worse by <= {r.limit:g}"
    significant = "" if r.p_value is None else f", if significant (p = {r.p_value:.4g})"
    return f"drop <= {r.limit:g}{significant}"


def _shown(value: float | None, sign: bool = False) -> str:
    """Six decimals (two more than the tables, enough to see a tolerance of 1e-5 broken); whole
    numbers (counts) as integers; `-` for no value."""
    if missing(value):
        return "-"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):+d}" if sign else str(int(value))
    return f"{value:+.6f}" if sign else f"{value:.6f}"
