"""Results that cannot be stale: each run's per-query values under each collection it is
evaluated under, found again by a key that covers everything that can change them.

The key of a run under a collection is the digest of: the run's file's content and the
collection's (qrels digest, or an overlay's definition and its sets' digests; size of the
collection, the qrels' format when given); the resolved settings; each metric's canonical form, parameters, aggregator and
kind, the SQL the plan runs for the measures (which holds every SQL measure's definition), and
the source of the module defining each measure's class (Python measures, and plugins edited in
place without a new version); the curve measures the same way; and the versions of irpipe,
DuckDB, Python and every loaded plugin. The run's name and path are not in it: a renamed or
moved file with the same content is the same run. Nor is the engine (`settings.engine`, and the
pyspark version the Spark engine records): both compute the same plan with the same DuckDB.
"""

from __future__ import annotations

import inspect
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.digest import digest_file, digest_text
from pipeline.history.store import ALIAS, insert_rows

if TYPE_CHECKING:
    import duckdb

    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.run.provenance import Input
    from pipeline.spec import LoadedSpec

__all__ = ["KEY_FORMAT", "cached_keys", "load_cached", "run_keys"]

KEY_FORMAT = 1  # changes when what a key covers changes: older keys then simply never match


def run_keys(
    loaded: LoadedSpec, plan: SqlPlan, inputs: list[Input], versions: dict
) -> dict[tuple[str, str], str]:
    """The result key of each run under each collection it is evaluated under, by (run,
    collection)."""
    spec = loaded.spec
    common = digest_text(
        {
            "format": KEY_FORMAT,
            "settings": _settings(spec.settings.resolved()),
            "metrics": [_measure(m) for m in plan.results.metrics],
            "curves": [_measure(m) for m in plan.results.curves],
            "sql": _plan_sql(plan),
            "versions": {k: v for k, v in versions.items() if k != "pyspark"},
        }
    )
    digests = {(i.role, i.name): i.digest for i in inputs}
    return {
        (name, collection): digest_text(
            {
                "common": common,
                "run": digests["run", name],
                "qrels": digests["qrels", collection],
                "collection": _collection(spec.collections[collection]),
                # a run's times, where it has some (a key without them stays the same)
                **({"latency": digests["latency", name]} if ("latency", name) in digests else {}),
            }
        )
        for name, run in spec.runs.items()
        for collection in run.collections
    }


#: settings left out of a key at their default: a key made before the setting existed stays
#: the same (`unmatched_runs: allow` is in it, so that a run reused under `error` was checked)
_NEW_DEFAULTS = {"grades": "integer", "unmatched_runs": "error"}


def _settings(resolved: dict) -> dict:
    """The settings that can change a number: not the engine, nor the threads; the newer ones
    only away from their defaults (`_NEW_DEFAULTS`)."""
    unset = {"engine", "threads", *(k for k, v in _NEW_DEFAULTS.items() if resolved.get(k) == v)}
    return {k: v for k, v in resolved.items() if k not in unset}


def _collection(collection) -> dict:
    """What of a collection can change its numbers beside its qrels' content: its size, and
    its qrels' `format` when given (a format left out is recognised from that content, which
    the key holds: a key made before the format existed stays the same)."""
    unset = {"format"} if collection.format is None else set()
    return collection.model_dump(mode="json", exclude={"qrels", *unset})


def _measure(m: ResolvedMeasure) -> dict:
    return {
        "metric": m.canonical,
        "label": m.label,
        "params": m.params.model_dump(mode="json"),
        "aggregator": m.aggregator,
        "kind": m.measure.kind,
        "source": _source_digest(type(m.measure)),
    }


@cache
def _source_digest(kind: type) -> str | None:
    """The digest of the file defining a measure class (None if it has no file)."""
    try:
        return digest_file(Path(inspect.getfile(kind)))
    except (TypeError, OSError):
        return None


def _plan_sql(plan: SqlPlan) -> str:
    """The SQL text (not the bound names) of the ranking, the result tables and each measure."""
    ranked, results = plan.runs.ranking, plan.results
    ranking = [ranked.statement, *([ranked.dense] if ranked.dense else [])]
    statements = [*ranking, *results.finish, *(probe for _, probe in results.probes)]
    return digest_text([statement.sql for statement in statements])


def cached_keys(
    con: duckdb.DuckDBPyConnection, keys: dict[tuple[str, str], str]
) -> dict[tuple[str, str], str]:
    """The (run, collection) pairs whose key the attached history holds: pair -> key."""
    found = {
        key
        for (key,) in con.execute(
            f"SELECT result_key FROM {ALIAS}.result_keys WHERE list_contains(?, result_key)",
            [sorted(set(keys.values()))],
        ).fetchall()
    }
    return {run: key for run, key in keys.items() if key in found}


def load_cached(con: duckdb.DuckDBPyConnection, pairs: dict[tuple[str, str], str]) -> None:
    """Copy the per-query rows of the cached (run, collection) pairs (`pairs`: pair -> key)
    from the attached history into the in-memory table `cached_values`, under the runs' and
    collections' current names."""
    rows = [(run, key, collection) for (run, collection), key in pairs.items()]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE cached_runs (run VARCHAR, result_key VARCHAR, "
        "collection VARCHAR)"
    )
    insert_rows(con, "cached_runs", rows)
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE cached_values AS
SELECT v.tbl, c.run, c.collection, v.qid, v.metric, v.value, v.text
FROM cached_runs c JOIN {ALIAS}.results v USING (result_key)"""
    )
