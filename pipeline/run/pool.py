"""`irpipe pool`: a spec's judgment pools built and written without evaluating, unless a pool
leaves runs out (which needs every run's values: then the whole evaluation runs, unremembered)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import SpecError
from pipeline.measures.registry import get_registry
from pipeline.measures.resolve import resolve_metrics
from pipeline.outputs import write_outputs
from pipeline.pools import finish_pools, pool_outputs, pool_pass, pool_plans
from pipeline.pools.plan import PoolPlan
from pipeline.run.evaluation import evaluate
from pipeline.run.input_files import with_qrels_formats
from pipeline.run.preflight import check_pool_inputs
from pipeline.run.provenance import inputs_of, now, record_metrics
from pipeline.spec import LoadedSpec, load_spec

if TYPE_CHECKING:
    import duckdb

__all__ = ["Pooled", "build_pools"]


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
    loaded = spec if isinstance(spec, LoadedSpec) else load_spec(spec)
    loaded = with_qrels_formats(loaded)  # before any file is read: the formats it shows
    metrics = resolve_metrics(loaded, get_registry())
    plans = pool_plans(loaded, metrics)
    if not plans:
        raise SpecError(f"{loaded.path}: no pools to build; add a `pools:` section")
    if any(plan.leaves_out for plan in plans):  # needs every run's full values: evaluate
        evaluation = evaluate(loaded, write=False, remember=False)
        con, recorded = evaluation.con, evaluation.recorded
    else:
        sizes = check_pool_inputs(loaded)
        recorded = record_metrics(loaded, metrics, plans, inputs_of(loaded), now())
        con = pool_pass(loaded, plans, sizes)
        finish_pools(con, loaded, plans, metrics)
    if write:
        write_outputs(con, pool_outputs(plans), recorded)
    return Pooled(loaded, plans, con, recorded)
