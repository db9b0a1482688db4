"""Judgment pools from runs, and how far the pooled collection can be trusted (issue: building
test collections).

`irpipe run` pools in the evaluation's own pass over the runs (`with_pools`, then
`finish_pools`); `irpipe pool` (`pipeline.run.pool.build_pools`) writes only the pools' outputs,
and reads the runs in a pass of its own unless a pool leaves runs out, which needs the evaluation.

Imports: the plan's SQL building blocks, the spec and the measures; the DuckDB engine to read
runs in a pass of its own.
"""

from __future__ import annotations

from pipeline.plan.output_jobs import OutputJob
from pipeline.pools.build import finish_pools, pool_pass, with_pools
from pipeline.pools.plan import PoolPlan, pool_plans

__all__ = ["PoolPlan", "finish_pools", "pool_outputs", "pool_pass", "pool_plans", "with_pools"]


def pool_outputs(plans: list[PoolPlan]) -> list[OutputJob]:
    """Every pool output, for `write_outputs`: each level of a pool writes the table named by
    the level and the pool's index (`pool_0`, `leave_one_out_1`), which `pools.sql` and
    `pools.leave_out` make."""
    return [
        OutputJob(f"{level}_{plan.index}", path, level)
        for plan in plans
        for path, level in plan.outputs
    ]
