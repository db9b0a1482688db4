"""irpipe reading only: import, validate the spec, load its qrels and runs into DuckDB; no metrics.

Usage: irpipe_read.py SPEC. The proxy for "irpipe's time to only read one run": the plan is the one
`irpipe run` executes (the same fast pass and line checks), with its measure statements dropped.
"""

from __future__ import annotations

import dataclasses
import sys

from pipeline import validate
from pipeline.engines.duckdb.executor import execute
from pipeline.plan.sql_plan import Ranking
from pipeline.sql import Statement


def main(spec: str) -> None:
    """Execute the spec's loads and nothing else; print the rows loaded."""
    # Keep the loads, their checks and the tables they read; drop the ranking and the measures.
    no_ranking = Ranking(Statement("SELECT 1"), after=())
    plan = dataclasses.replace(validate(spec).sql, ranking=no_ranking, finish=[])
    con = execute(plan)
    rows = con.execute("SELECT count(*) FROM run_rows").fetchone()[0]
    print(f"loaded {rows} run rows")


if __name__ == "__main__":
    main(*sys.argv[1:])
