"""Agreement of two qrels files as a researcher computes it today: pandas reads both, an inner
join keeps the pairs both judge, scikit-learn and the krippendorff package compute each
statistic, at the grades and at each threshold. Prints `statistic value` lines, named as irpipe
names them.

Usage: judgments_reference.py REFERENCE OTHER THRESHOLDS   (THRESHOLDS: 1,2,3)
"""

from __future__ import annotations

import sys

import krippendorff
import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score


def read(path: str) -> pd.DataFrame:
    names = ["qid", "iter", "docno", "rel"]
    return pd.read_csv(path, sep=" ", header=None, names=names, dtype={"qid": str, "docno": str})


def statistics(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    domain = np.unique(np.concatenate([a, b]))
    found = {"agreement": float(np.mean(a == b))}
    for name, weights in (("", None), ("_linear", "linear"), ("_quadratic", "quadratic")):
        found["cohen_kappa" + name] = cohen_kappa_score(a, b, weights=weights)
    for level in ("nominal", "ordinal", "interval"):
        found[f"krippendorff_alpha_{level}"] = krippendorff.alpha(
            np.vstack([a, b]).astype(float), value_domain=domain, level_of_measurement=level
        )
    return found


def main() -> None:
    reference, other, thresholds = sys.argv[1], sys.argv[2], sys.argv[3]
    both = read(reference).merge(read(other), on=["qid", "docno"], suffixes=("_r", "_o"))
    a, b = both["rel_r"].to_numpy(), both["rel_o"].to_numpy()
    found = statistics(a, b)
    for t in thresholds.split(","):
        x, y = (a >= int(t)).astype(int), (b >= int(t)).astype(int)
        binary = {**statistics(x, y), "precision": precision_score(x, y),
                  "recall": recall_score(x, y), "f1": f1_score(x, y)}  # fmt: skip
        found.update({f"{name}@{t}": value for name, value in binary.items()})
    for name, value in found.items():
        print(name, repr(float(value)))


if __name__ == "__main__":
    main()
