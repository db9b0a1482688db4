"""irpipe's conformance kit (`pipeline.testing.check_measure`): each measure against its plain-Python
definition in reference.py, per query, on the kit's generated collections, ties included (the kit
hands the reference the grades in irpipe's order)."""

from __future__ import annotations

import reference
from irpipe_usermodels import ERR, Compat, Judged

from pipeline.testing import check_measure

# ERR's running product is exp of a running sum of logarithms: within about 1e-16 of the plain
# product. Compat and Judged use the references' arithmetic, in their order: equal to the last bit.
TOLERANCE = 1e-12


def test_err_passes_the_kit():
    metrics = [
        f"usermodels.{m}"
        for m in ("ERR", "ERR@1", "ERR@5", "ERR@20", "ERR(max_grade=2)@10", "ERR(max_grade=7)")
    ]
    check_measure(ERR, _err, metrics, tolerance=TOLERANCE)


def test_compat_passes_the_kit():
    metrics = ["Compat", "Compat(p=0.5)", "Compat(normalize=False,p=0.8)", "Compat(p=1.0)"]
    check_measure(Compat, _compat, metrics, tolerance=TOLERANCE)


def test_judged_passes_the_kit():
    metrics = ["Judged", "Judged@1", "Judged@3", "Judged@10"]
    check_measure(Judged, _judged, metrics, tolerance=TOLERANCE)


def _err(params, query) -> float:
    return reference.err(query.grades.tolist(), params.k, params.max_grade)


def _compat(params, query) -> float:
    return reference.compat(query.grades.tolist(), query.qrels.tolist(), params.p, params.normalize)


def _judged(params, query) -> float:
    return reference.judged(query.grades.tolist(), params.k)
