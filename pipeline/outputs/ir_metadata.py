"""A run's ir_metadata (ir-metadata.org) as a YAML file (`level: ir_metadata`), one per run.

What the run file's own block says (`pipeline.spec.ir_metadata`, kept in the manifest's inputs),
merged with what the evaluation knows, in the format's sections:

- `research goal.evaluation`: `reported_measures` (the metrics' labels, in the spec's order), and
  irpipe's: `measures` (each metric's definition and parameters), `settings` (the evaluation's),
  `values` and `n_queries` (the run's aggregate); with a compare section, `significance test`
  (`name` and `correction method`, with alpha, samples and seed) and `baseline`;
- `platform.software.libraries`: irpipe's and DuckDB's versions (`name==version`), a plugin's,
  and pyspark's on Spark;
- `data.test collection`: the collection's `name`, its `qrels` and their `qrels digest`.

Merging keeps every key of the run's block; where both give a mapping they are merged, where both
give a list the evaluation's items are added after the run's, and a value the evaluation knows
(its measures, its qrels) replaces the run's. `tag` is the block's, or the run's name.
"""

from __future__ import annotations

from typing import Any

import yaml

from pipeline.contract.writer import Writer
from pipeline.hookspecs import hookimpl
from pipeline.spec.levels import PER_RUN_LEVELS
from pipeline.sql import quote_identifier

__all__ = ["IrMetadataWriter", "document", "merged"]


class IrMetadataWriter(Writer):
    """One run's ir_metadata under one collection, as YAML (keys in the format's order)."""

    suffixes = (".yaml", ".yml")
    levels = PER_RUN_LEVELS

    def write(self, con, table, path, manifest):
        rows = con.execute(
            f"SELECT collection, run, metric, value, n_queries FROM {quote_identifier(table)}"
        ).fetchall()
        text = yaml.safe_dump(
            document(manifest, rows), sort_keys=False, allow_unicode=True, width=100
        )
        path.write_text(text, encoding="utf-8")


def document(manifest: dict[str, Any], rows: list[tuple]) -> dict[str, Any]:
    """The YAML document of the run and collection of `rows` (its aggregate rows: collection,
    run, metric, value, n_queries), from the evaluation's `manifest`."""
    collection, run = rows[0][0], rows[0][1]
    own = _input(manifest, "run", run).get("ir_metadata") or {}
    known = {
        "tag": own.get("tag", run),
        "research goal": {"evaluation": _evaluation(manifest, rows)},
        "platform": {"software": {"libraries": _libraries(manifest["versions"])}},
        "data": {"test collection": _collection(manifest, collection)},
    }
    return merged(own, known)


def _input(manifest: dict[str, Any], role: str, name: str) -> dict[str, Any]:
    found = (i for i in manifest["inputs"] if i["role"] == role and i["name"] == name)
    return next(found, {})


def _evaluation(manifest: dict[str, Any], rows: list[tuple]) -> dict[str, Any]:
    """What was measured, how, and the run's values."""
    found = {
        "reported_measures": [m["label"] for m in manifest["metrics"]],
        "measures": [
            {key: m[key] for key in ("label", "metric", "params", "aggregator")}
            for m in manifest["metrics"]
        ],
        "settings": manifest["settings"],
        "values": {metric: value for _, _, metric, value, _ in rows},
        "n_queries": {metric: n for _, _, metric, _, n in rows},
    }
    compare = manifest.get("compare")
    if compare is not None:
        found["significance test"] = [_test(compare, test) for test in compare["tests"]]
        if compare.get("baseline") is not None:
            baseline = compare["baseline"]
            found["baseline"] = baseline if isinstance(baseline, list) else [baseline]
    return found


def _test(compare: dict[str, Any], test: str) -> dict[str, Any]:
    return {
        "name": test,
        "correction method": compare["correction"],
        "alpha": compare["alpha"],
        "samples": compare["samples"],
        "seed": compare["seed"],
    }


def _libraries(versions: dict[str, Any]) -> list[str]:
    """The software that computed the numbers, as `name==version`."""
    named = {"irpipe": versions["irpipe"], "duckdb": versions["duckdb"]}
    named |= versions.get("plugins", {})
    if "pyspark" in versions:
        named["pyspark"] = versions["pyspark"]
    return [f"{name}=={version}" for name, version in named.items()]


def _collection(manifest: dict[str, Any], collection: str) -> dict[str, Any]:
    qrels = _input(manifest, "qrels", collection)
    return {"name": collection, "qrels": qrels.get("path"), "qrels digest": qrels.get("digest")}


def merged(own: Any, known: Any) -> Any:
    """`known` laid over `own`: mappings merged key by key (the run's keys first), lists
    joined (the evaluation's items not already there, after the run's), else `known`."""
    if isinstance(own, dict) and isinstance(known, dict):
        keys = [*own, *(key for key in known if key not in own)]
        return {
            key: merged(own[key], known[key]) if key in own and key in known else
            (known[key] if key in known else own[key])
            for key in keys
        }  # fmt: skip
    if isinstance(own, list) and isinstance(known, list):
        return [*own, *(item for item in known if item not in own)]
    return known


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [IrMetadataWriter]
