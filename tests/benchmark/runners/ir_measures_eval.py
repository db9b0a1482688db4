"""ir_measures: TREC text in (its own readers), means out as JSON.

Usage: ir_measures_eval.py QRELS RUN OUT.json MEASURE... (ir_measures names: AP, P@10, ...)
"""

from __future__ import annotations

import json
import sys

import ir_measures


def main(qrels_path: str, run_path: str, out: str, *names: str) -> None:
    """Read both files with ir_measures' readers and write calc_aggregate's values by name."""
    measures = {name: ir_measures.parse_measure(name) for name in names}
    means = ir_measures.calc_aggregate(
        list(measures.values()),
        ir_measures.read_trec_qrels(qrels_path),
        ir_measures.read_trec_run(run_path),
    )
    with open(out, "w") as handle:
        json.dump({name: means[measure] for name, measure in measures.items()}, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
