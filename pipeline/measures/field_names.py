"""The lower-case names the field writes after `@k`: ranx's (`ndcg@10`, `map@100`, `mrr@10`,
`hit_rate@10`) and trec_eval's names given a cutoff (`ndcg_cut@10`, `success@10`).

irpipe's grammar is ir_measures' (`nDCG@10`, `AP@100`, `RR@10`), and trec_eval's names are
aliases that carry their own parameters (`ndcg_cut_10`, `map`). A ranx user types `ndcg@10`: each
name here is mapped only where its meaning is unambiguous and is irpipe's measure, value for
value (ranx's `map@100` is AP cut at 100 over all relevant documents, trec_eval's map_cut_100;
its `ndcg` has linear gains and `ndcg_burges` exponential ones, both with the log2(rank+1)
discount). A name that means something irpipe computes differently (ranx's `hits@k` is averaged,
irpipe's NumRelRet summed) is refused with the spelling that works, never evaluated as something
near it. The label of a mapped name is irpipe's canonical one (`ndcg@10` is `nDCG@10` in every
table), as the CamelCase spelling's is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FIELD_NAMES", "REFUSED", "FieldName"]


@dataclass(frozen=True)
class FieldName:
    """What a lower-case name means: irpipe's measure, the parameters the name presets, and
    whether the name stands alone (without `@k`, where trec_eval's name of the same spelling,
    if any, is read first)."""

    metric: str
    preset: dict[str, Any] = field(default_factory=dict)
    bare: bool = False
    source: str = "ranx"


#: name -> what it means; `irpipe metrics` lists each beside its measure
FIELD_NAMES: dict[str, FieldName] = {
    "ndcg": FieldName("nDCG"),
    "ndcg_cut": FieldName("nDCG", source="trec_eval"),
    "ndcg_burges": FieldName("nDCG", {"gain": "exponential"}),
    "dcg": FieldName("DCG"),
    "dcg_burges": FieldName("DCG", {"gain": "exponential"}),
    "map": FieldName("AP"),
    "map_cut": FieldName("AP", source="trec_eval"),
    "recall": FieldName("R"),
    "mrr": FieldName("RR", bare=True),
    "recip_rank": FieldName("RR", source="trec_eval"),
    "success": FieldName("Success", source="trec_eval"),
    "hit_rate": FieldName("Success"),
    "r-precision": FieldName("Rprec", bare=True),
}

#: ranx names that irpipe does not compute as ranx does: the message says what to write instead
#: (`{k}` is the cutoff typed, 10 when none was)
REFUSED: dict[str, str] = {
    "hits": (
        "ranx's hits@{k} (relevant documents in the top {k}, averaged over queries) is not an "
        "irpipe metric: NumRelRet@{k} counts them but sums over queries, and P@{k} is "
        "hits@{k} / {k}; write P@{k}"
    ),
    "f1": (
        "ranx's f1@{k} (the harmonic mean of P@{k} and R@{k}) is not an irpipe metric: "
        "SetF(k={k}) divides by the documents retrieved, not by {k}; write P@{k} and R@{k}"
    ),
}
