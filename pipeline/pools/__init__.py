"""Judgment pools from runs, and how far the pooled collection can be trusted (issue: building
test collections).

`irpipe run` pools in the evaluation's own pass over the runs (`with_pools`, then
`finish_pools`); `irpipe pool` (`build_pools`) writes only the pools' outputs, and reads the runs
in a pass of its own unless a pool leaves runs out, which needs the evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.pools.build import finish_pools, pool_pass, with_pools
from pipeline.pools.plan import PoolPlan, pool_plans

if TYPE_CHECKING:
    import duckdb

    from pipeline.spec import LoadedSpec

__all__ = ["PoolPlan", "Pooled", "build_pools", "finish_pools", "pool_outputs", "pool_plans",
           "with_pools"]  # fmt: skip

#: the table each pool output level writes, by the pool's index
_TABLES = {
    "pool": "pool_{}",
    "contributions": "contributions_{}",
    "pool_stats": "pool_stats_{}",
    "leave_one_out": "leave_one_out_{}",
}


def pool_outputs(plans: list[PoolPlan]) -> list[tuple[str, Path, str]]:
    """(table, path, level) of every pool output, for `write_outputs`."""
    return [
        (_TABLES[level].format(plan.index), path, level)
        for plan in plans
        for path, level in plan.outputs
    ]


@dataclass
class Pooled:
    """The pools of a spec, built: the connection holding their tables, and their record."""

    loaded: LoadedSpec
    plans: list[PoolPlan]
    con: duckdb.DuckDBPyConnection
    recorded: dict

    def summary(self) -> list[str]:
        """One line per pool: its method, its runs, how much there is to judge, where it went."""
        lines = []
        for plan in self.plans:
            documents, queries = self.con.execute(
                f"SELECT count(*), count(DISTINCT qid) FROM pool_{plan.index}"
            ).fetchone()
            written = ", ".join(_shown(path) for path, _ in plan.outputs) or "no outputs"
            lines.append(
                f"pool {plan.name!r} ({plan.kind} {plan.size} over {len(plan.runs)} runs, seed "
                f"{plan.seed}): {documents:,} documents to judge in {queries:,} queries; "
                f"wrote {written}"
            )
        return lines

    def documents(self) -> list[tuple]:
        """(pool, qid, docno, position) of every document to judge, pool by pool."""
        return [
            row
            for plan in self.plans
            for row in self.con.execute(
                f"SELECT pool, qid, docno, position FROM pool_{plan.index}"
            ).fetchall()
        ]


def _shown(path: Path) -> str:
    """A path as a person would type it: relative to the working directory when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def build_pools(spec: str | Path | LoadedSpec, write: bool = True) -> Pooled:
    """Build every pool of the spec and write the pools' outputs (`irpipe pool`)."""
    from pipeline.errors import SpecError
    from pipeline.measures.registry import get_registry
    from pipeline.outputs import write_outputs
    from pipeline.plan.compile import resolve_metrics
    from pipeline.run.evaluation import check_pool_inputs, evaluate
    from pipeline.run.provenance import inputs_of, now, record_metrics
    from pipeline.spec import LoadedSpec, load_spec

    loaded = spec if isinstance(spec, LoadedSpec) else load_spec(spec)
    metrics = resolve_metrics(loaded, get_registry())
    plans = pool_plans(loaded, metrics)
    if not plans:
        raise SpecError(f"{loaded.path}: no pools to build; add a `pools:` section")
    if any(plan.leaves_out for plan in plans):  # needs every run's full values: evaluate
        evaluation = evaluate(loaded, write=False, remember=False)
        con, recorded = evaluation.con, evaluation.recorded
    else:
        sizes = check_pool_inputs(loaded)
        recorded = record_metrics(loaded, metrics, inputs_of(loaded), now())
        con = pool_pass(loaded, plans, sizes)
        finish_pools(con, loaded, plans, metrics)
    if write:
        write_outputs(con, pool_outputs(plans), recorded)
    return Pooled(loaded, plans, con, recorded)
