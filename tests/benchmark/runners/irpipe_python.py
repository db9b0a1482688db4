"""The Python path's cost: one metric, P@10, computed in SQL, in Python per query, or in Python over
whole batches (numpy), on the same run.

Usage: irpipe_python.py QRELS RUN MODE (sql | query | batch). Prints the mean, which must be the
same in every mode.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

from pipeline import evaluate
from pipeline.api import PythonMeasure, RankedParams, hookimpl
from pipeline.host import manager as plugins
from pipeline.measures import registry


class PythonP(PythonMeasure):
    """P@k, one Python call per query."""

    name = "PythonP"
    description = "precision at k, per query in Python"
    Params = RankedParams
    cutoff = "k"
    required = ("k",)

    def compute(self, p, query):
        return float(np.count_nonzero(query.grades[: p.k] >= query.level)) / p.k


class BatchP(PythonP):
    """P@k over a whole batch with numpy: one Python call per batch of queries."""

    name = "BatchP"
    description = "precision at k, vectorized in Python"

    def compute_batch(self, p, batch):
        lengths = np.diff(batch.offsets)
        position = np.arange(len(batch.grades)) - np.repeat(batch.offsets[:-1], lengths)
        hits = (batch.grades >= batch.level) & (position < p.k)
        owner = np.repeat(np.arange(len(batch)), lengths)
        return np.bincount(owner, hits.astype(float), len(batch)) / p.k


@hookimpl
def register_metrics():
    return [PythonP, BatchP]


METRIC = {"sql": "P@10", "query": "PythonP@10", "batch": "BatchP@10"}


def main(qrels: str, run: str, mode: str) -> None:
    pm = plugins.create_plugin_manager()
    pm.register(sys.modules[__name__], name="benchmark")
    registry._registry = registry.Registry.from_plugin_manager(pm)
    spec = {
        "collections": {"c": {"qrels": str(Path(qrels).resolve())}},
        "runs": {"r": {"path": str(Path(run).resolve()), "collection": "c"}},
        "metrics": [METRIC[mode]],
    }
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "spec.yaml"
        path.write_text(yaml.safe_dump(spec), encoding="utf-8")
        [(_, _, _, mean, n)] = evaluate(path, write=False).aggregate()
    print(f"{METRIC[mode]} {mean:.12f} over {n} queries")


if __name__ == "__main__":
    main(*sys.argv[1:])
