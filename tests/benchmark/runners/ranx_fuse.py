"""ranx: two runs fused, then the fused run evaluated, as a ranx user does it.

    ranx_fuse.py METHOD QRELS RUN_A RUN_B OUT   METHOD: rrf, or combsum (min-max normalized)

Reads the TREC files with ranx's readers, fuses with `ranx.fuse`, evaluates the five measures
(AP, P@10, R@100, RR, nDCG@10) with `ranx.evaluate`, and writes their means as JSON to OUT.
"""

from __future__ import annotations

import json
import sys

from ranx import Qrels, Run, evaluate, fuse

FIVE = ["map", "precision@10", "recall@100", "mrr", "ndcg@10"]


def main() -> None:
    method, qrels_path, a, b, out = sys.argv[1:]
    qrels = Qrels.from_file(qrels_path, kind="trec")
    runs = [Run.from_file(a, kind="trec"), Run.from_file(b, kind="trec")]
    if method == "rrf":
        fused = fuse(runs, norm=None, method="rrf", params={"k": 60})
    else:
        fused = fuse(runs, norm="min-max", method="sum")
    means = evaluate(qrels, fused, FIVE)
    with open(out, "w", encoding="utf-8") as found:
        json.dump({name: float(value) for name, value in means.items()}, found)


if __name__ == "__main__":
    main()
