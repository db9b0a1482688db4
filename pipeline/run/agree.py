"""`irpipe agree REFERENCE OTHER [--runs GLOB --metric M ...] [--thresholds 1,2,3]`: two judgment
sets compared without a spec, as `irpipe trec-eval` evaluates without one.

It builds the spec the flags describe, in memory (the two qrels files as collections named by
their files, an agreement entry, and with `--runs` the runs evaluated under both sets), and
evaluates it as `irpipe run` would, writing nothing: the same plan, the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.errors import SpecError
from pipeline.run.evaluation import Evaluation, evaluate
from pipeline.spec import LoadedSpec
from pipeline.spec.globs import expand_run_globs
from pipeline.spec.loader import spec_from_mapping

__all__ = ["DEFAULT_METRICS", "agree", "agreement_spec"]

#: the metrics the runs are ordered by when `--runs` is given without `--metric`
DEFAULT_METRICS = ("AP", "nDCG@10")
#: how messages name the spec the flags make
ORIGIN = Path("<irpipe agree>")


def agree(
    reference: str,
    other: str,
    runs: str | None = None,
    metrics: Sequence[str] = (),
    thresholds: Sequence[float] = (),
    format: str | None = None,
) -> Evaluation:
    """The evaluation of `agreement_spec`'s spec (nothing written, no history)."""
    spec = agreement_spec(reference, other, runs, metrics, thresholds, format)
    return evaluate(spec, write=False)


def agreement_spec(
    reference: str,
    other: str,
    runs: str | None = None,
    metrics: Sequence[str] = (),
    thresholds: Sequence[float] = (),
    format: str | None = None,
) -> LoadedSpec:
    """The spec `irpipe agree` evaluates: the qrels files `reference` and `other` (both read
    as `format`, where given) compared (at `thresholds` too), and the runs matching the pattern
    `runs`, each evaluated under both, by `metrics` (`DEFAULT_METRICS` if none)."""
    if metrics and runs is None:
        raise SpecError("--metric orders runs by a metric: give the runs too (--runs GLOB)")
    names = _set_names(reference, other)
    given = {"format": format} if format else {}
    collections = {name: {"qrels": str(Path(path).absolute()), **given}
                   for name, path in zip(names, (reference, other), strict=True)}  # fmt: skip
    data: dict = {
        "collections": collections,
        "agreement": [{"reference": names[0], "other": names[1], "thresholds": list(thresholds)}],
    }
    if runs is not None:
        data["runs"] = {"runs": {"path": runs, "collection": list(names)}}
        data["metrics"] = list(metrics or DEFAULT_METRICS)
        data = expand_run_globs(data, Path.cwd(), {}, ORIGIN)
    return spec_from_mapping(data, ORIGIN, "")


def _set_names(reference: str, other: str) -> tuple[str, str]:
    """The two sets' names: their files' names, or `reference` and `other` where those are
    the same (two files of one name in two directories)."""
    names = Path(reference).name, Path(other).name
    return ("reference", "other") if names[0] == names[1] else names
