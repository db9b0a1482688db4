"""ir_measures: TREC text in (its own readers), means out as JSON (usage: common.py).

Measures by ir_measures' names (AP, P@10, ...). The qrels go into one `ir_measures.evaluator`,
which then takes each run in turn: the library's way to score several runs on one collection.
"""

from __future__ import annotations

import ir_measures
from common import arguments, write


def main() -> None:
    """Build the evaluator once, then calc_aggregate every run read with ir_measures' reader."""
    args = arguments(__doc__.split("\n")[0])
    measures = {name: ir_measures.parse_measure(name) for name in args.measures}
    evaluator = ir_measures.evaluator(
        list(measures.values()), ir_measures.read_trec_qrels(args.qrels)
    )
    results = {}
    for run in args.runs:
        means = evaluator.calc_aggregate(ir_measures.read_trec_run(run))
        results[run] = {name: means[measure] for name, measure in measures.items()}
    write(args.out, results)


if __name__ == "__main__":
    main()
