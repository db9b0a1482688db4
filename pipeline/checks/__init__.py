"""Expected values and regression gates: the spec's `expect:` and `gates:`, checked once an
evaluation is computed and written.

The flow: `plan.check_checks` resolves both sections against the runs, metrics and compare section
before any data is read (`irpipe validate` runs it); after `evaluate()` returns,
`verify.run_checks` reads the evaluation's tables (and the history's previous values) and decides
each check by the rules of `outcome`; a significant gate against the previous evaluation is tested
by `previous` with the compare package (numpy and scipy are imported only then). `irpipe run`
prints the failures and exits 5; `junit.write_junit` writes every check for CI.

Imports: the layers below (compare for significant gates, the plan's types, the spec).
"""

from pipeline.checks.outcome import CheckResult
from pipeline.checks.plan import check_checks, resolve_checks
from pipeline.checks.verify import run_checks

__all__ = ["CheckResult", "check_checks", "resolve_checks", "run_checks"]
