"""ir_measures' diversity measures (its pyndeval provider, ndeval's C code): subtopic qrels and
TREC runs in (ir_measures' readers: a qrels line's second field is its `iteration`, which the
provider reads as the subtopic), means out as JSON (usage: common.py)."""

from __future__ import annotations

import ir_measures
from common import arguments, write


def main() -> None:
    """One evaluator for the qrels, then calc_aggregate every run, as its users do."""
    args = arguments(__doc__.split("\n")[0])
    measures = {name: ir_measures.parse_measure(name) for name in args.measures}
    qrels = list(ir_measures.read_trec_qrels(args.qrels))
    evaluator = ir_measures.evaluator(list(measures.values()), qrels)
    results = {}
    for run in args.runs:
        means = evaluator.calc_aggregate(ir_measures.read_trec_run(run))
        results[run] = {name: means[measure] for name, measure in measures.items()}
    write(args.out, results)


if __name__ == "__main__":
    main()
