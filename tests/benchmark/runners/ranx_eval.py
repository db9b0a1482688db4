"""ranx: TREC text in (Qrels/Run.from_file), means out as JSON (usage: common.py).

Metrics by ranx's names (map, precision@10, ...); the qrels are read once, each run in turn.
"""

from __future__ import annotations

from common import arguments, write
from ranx import Qrels, Run, evaluate


def main() -> None:
    """Read the qrels, then read and evaluate each run with ranx's reader and `evaluate`."""
    args = arguments(__doc__.split("\n")[0])
    qrels = Qrels.from_file(args.qrels, kind="trec")
    results = {}
    for path in args.runs:
        means = evaluate(qrels, Run.from_file(path, kind="trec"), list(args.measures))
        if not isinstance(means, dict):  # ranx returns a bare float for a single metric
            means = {args.measures[0]: means}
        results[path] = {name: float(value) for name, value in means.items()}
    write(args.out, results)


if __name__ == "__main__":
    main()
