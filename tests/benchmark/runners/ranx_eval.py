"""ranx: TREC text in (Qrels/Run.from_file), means out as JSON.

Usage: ranx_eval.py QRELS RUN OUT.json METRIC... (ranx names: map, precision@10, ...)
"""

from __future__ import annotations

import json
import sys

from ranx import Qrels, Run, evaluate


def main(qrels_path: str, run_path: str, out: str, *metrics: str) -> None:
    """Read both files with ranx's readers and write evaluate's means by metric name."""
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    means = evaluate(qrels, run, list(metrics))
    if not isinstance(means, dict):  # ranx returns a bare float for a single metric
        means = {metrics[0]: means}
    with open(out, "w") as handle:
        json.dump({name: float(value) for name, value in means.items()}, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
