"""`Experiment`: PyTerrier's `pt.Experiment`, computed by irpipe. The same keywords, the same
frame (`name`, the measures, `mrt`, and with a baseline `<m> +`, `<m> -`, `<m> p-value`, with a
correction `<m> reject` and `<m> p-value corrected`), and the numbers `pt.Experiment` gives
(ir_measures' pytrec_eval provider: irpipe's `trec_eval-9` settings, every qrels query averaged,
one a system did not answer scoring 0); the whole `Results` beside it on request.

Systems are PyTerrier transformers (run on the topics and timed) or result frames; PyTerrier is
needed only for transformers (`pip install 'irpipe[pyterrier]'`): frames need the Python door
alone (`irpipe[notebook]`), and a baseline scipy (`irpipe[compare]`).

Imports: the Python door (`pipeline.notebook`), pandas; nothing of PyTerrier's.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.errors import SpecError
from pipeline.notebook import Results, evaluate
from pipeline.pyterrier.frames import _frame

__all__ = ["Experiment"]

#: irpipe's settings for pt.Experiment's numbers
SETTINGS = {"compatibility": "trec_eval-9", "queries": "qrels", "unmatched_runs": "allow"}
#: the corrections pt.Experiment names that irpipe's comparisons apply
CORRECTIONS = {"bonferroni": "bonferroni", "holm": "holm", "fdr_bh": "bh"}
#: measures whose mean pt.Experiment does not take: their sum over the queries
_SUMMED = {"num_q", "num_rel", "num_ret", "num_rel_ret", "NumQ", "NumRel", "NumRet", "NumRelRet"}
_SAVE_MODES = ("warn", "error", "reuse", "overwrite")


def Experiment(  # noqa: N802 - pt.Experiment's name, so that a notebook changes one import
    retr_systems: Sequence[Any] | Mapping[str, Any],
    topics: Any,
    qrels: Any,
    eval_metrics: Sequence[Any],
    names: Sequence[str] | None = None,
    perquery: bool | str = False,
    baseline: int | str | Sequence[int | str] | None = None,
    test: str = "t",
    correction: str | None = None,
    correction_alpha: float = 0.05,
    highlight: str | None = None,
    round: int | Mapping[str, int] | None = None,  # noqa: A002 - pt.Experiment's keyword
    save_dir: str | os.PathLike | None = None,
    save_mode: str = "warn",
    results: bool = False,
):
    """pt.Experiment's frame for `retr_systems` (a list, or a dict of names to systems; each a
    PyTerrier transformer or a result frame) on `topics` (a frame with `qid`) and `qrels` (a
    frame with `qid`, `docno`, `label`), each measure of `eval_metrics` (trec_eval names, as
    `"map"` or `"ndcg_cut_10"`, ir_measures' strings or measures, and `"mrt"`) a column named as
    given. `baseline`: a system's index or name, or a list of them (each other system is then
    compared with each, the columns named `<m> +  vs <baseline>`); `test`: `"t"` (paired t-test)
    or `"wilcoxon"`; `correction`: `"bonferroni"`, `"holm"` or `"fdr_bh"`; `perquery`: True for
    the frame (name, qid, measure, value), `"both"` for both frames. `save_dir`: a directory
    whose irpipe history (`irpipe.duckdb`) keeps every evaluation and gives back the values of a
    system evaluated before on the same rows (`save_mode="overwrite"` evaluates again,
    `"error"` refuses a directory holding one). `results=True` returns `(frame, Results)`."""
    systems = _named(retr_systems, names)
    baselines = _baselines(baseline, list(systems), perquery)
    metrics, mrt = _metrics(eval_metrics)
    runs, times = _ran(systems, topics, per_query=_timed(metrics))
    qrels = _judged(qrels, topics)
    history = _history(save_dir, save_mode)
    _check_comparing(baselines, test, correction)
    found: list[tuple[str | None, Results]] = [
        (b, evaluate(qrels=qrels, runs=runs, metrics=metrics, settings=SETTINGS,
                     compare=_compare(b, test, correction, correction_alpha), **history))
        for b in baselines or [None]
    ]  # fmt: skip
    frame = _frame(found, systems, metrics, perquery, round, highlight, correction_alpha)
    if mrt and perquery is not True:
        means = frame[0] if perquery == "both" else frame
        means.insert(1 + len(metrics), "mrt", [times[n] / _queries(qrels) for n in systems])
    return (frame, found[0][1]) if results else frame


def _named(retr_systems: Any, names: Sequence[str] | None) -> dict[str, Any]:
    """The systems by name: a dict's keys, `names`, or each transformer's `str()` (a frame's
    `run1`, `run2`, ...: PyTerrier's `str()` of a frame is its printout)."""
    if isinstance(retr_systems, Mapping):
        return dict(retr_systems)
    if not isinstance(retr_systems, list | tuple):
        raise SpecError(
            f"retr_systems: give a list or a dict of systems, not {type(retr_systems).__name__}"
        )
    if names is not None and len(names) != len(retr_systems):
        raise SpecError(f"names: {len(names)} names for {len(retr_systems)} systems")
    if names is None:
        names = [f"run{i}" if _is_frame(s) else str(s) for i, s in enumerate(retr_systems, 1)]
    if len(set(names)) < len(names):
        raise SpecError(f"names: {list(names)} repeat a name; give each system its own")
    return dict(zip(names, retr_systems, strict=True))


def _is_frame(system: Any) -> bool:
    """A system given by its results (a frame, a table, a path: what `evaluate` reads), not a
    transformer to run (a pandas frame has a `transform` method too)."""
    table = hasattr(system, "columns") or hasattr(system, "column_names")
    return (
        table or isinstance(system, str | os.PathLike | Mapping) or not hasattr(system, "transform")
    )


def _baselines(baseline: Any, names: list[str], perquery: Any) -> list[str]:
    """The baselines' names (an index or a name each)."""
    if baseline is None:
        return []
    if perquery:
        raise SpecError("baseline: comparisons are reported with the means; give perquery=False")
    given = baseline if isinstance(baseline, list | tuple) else [baseline]
    found = []
    for b in given:
        if isinstance(b, int) and 0 <= b < len(names):
            found.append(names[b])
        elif isinstance(b, str) and b in names:
            found.append(b)
        else:
            raise SpecError(f"baseline: {b!r} is neither a system's index nor its name {names}")
    return found


def _metrics(eval_metrics: Sequence[Any]) -> tuple[list[dict[str, str]], bool]:
    """Each measure as a metric of the spec, labelled as given; and whether `mrt` is asked."""
    if isinstance(eval_metrics, str):
        eval_metrics = [eval_metrics]
    labels = [m if isinstance(m, str) else str(m) for m in eval_metrics]
    metrics = [{"metric": label, "label": label} for label in labels if label != "mrt"]
    return metrics, "mrt" in labels


#: the metrics of runs' per-query times (`pipeline.metrics.latency`), by their names' start
_LATENCY_METRICS = ("Latency", "QPS")


def _timed(metrics: list[dict[str, str]]) -> bool:
    """Whether a metric reads the runs' per-query times: transformers are then run a query at
    a time, each timed."""
    return any(m["metric"].startswith(_LATENCY_METRICS) for m in metrics)


def _ran(
    systems: dict[str, Any], topics: Any, per_query: bool = False
) -> tuple[dict[str, Any], dict[str, float]]:
    """Each system's result frame (a transformer run on the topics), and the milliseconds its
    run took (0 for a frame given). `per_query`: a transformer is run on each query alone, its
    frame given each query's time in milliseconds (`latency_ms`, which Latency and QPS read),
    and its run's time is their sum."""
    runs, times = {}, {}
    for name, system in systems.items():
        if per_query and not _is_frame(system):
            runs[name], times[name] = _per_query(system, topics)
            continue
        started = time.perf_counter()
        runs[name] = system if _is_frame(system) else system.transform(topics)
        times[name] = 0.0 if _is_frame(system) else (time.perf_counter() - started) * 1000
    return runs, times


def _per_query(system: Any, topics: Any) -> tuple[Any, float]:
    """A transformer run on each topic alone: its results with each query's milliseconds
    (`latency_ms`), and their sum."""
    import pandas as pd

    frames, spent = [], {}
    for qid, topic in topics.groupby("qid", sort=False):
        started = time.perf_counter()
        frames.append(system.transform(topic))
        spent[qid] = (time.perf_counter() - started) * 1000
    results = pd.concat(frames, ignore_index=True)
    return results.assign(latency_ms=results["qid"].map(spent)), sum(spent.values())


def _judged(qrels: Any, topics: Any) -> Any:
    """The qrels of the topics' queries (`filter_by_topics`, pt.Experiment's default)."""
    import pandas as pd

    if not isinstance(qrels, pd.DataFrame) or "qid" not in getattr(topics, "columns", ()):
        return qrels
    kept = qrels[qrels["qid"].isin(set(topics["qid"]))]
    if kept.empty:
        raise SpecError("qrels: no query of the topics is judged; give the topics' qrels")
    return kept


def _queries(qrels: Any) -> int:
    return qrels["qid"].nunique()


def _check_comparing(baselines: list[str], test: str, correction: str | None) -> None:
    if correction is not None and not baselines:
        raise SpecError("correction: a correction needs a baseline; give baseline=")
    if test not in ("t", "wilcoxon"):
        raise SpecError(f"test: {test!r}; give 't' or 'wilcoxon'")
    if correction is not None and correction not in CORRECTIONS:
        raise SpecError(f"correction: {correction!r}; give one of {sorted(CORRECTIONS)}")


def _compare(baseline: str | None, test: str, correction: str | None, alpha: float) -> Any:
    """The comparisons of every other system with `baseline`, as a spec's `compare` (each
    baseline's family corrected apart, as pt.Experiment corrects its one baseline's)."""
    if baseline is None:
        return None
    chosen = CORRECTIONS.get(correction, "none")
    return {"baseline": baseline, "tests": [test], "correction": chosen, "alpha": alpha}


def _history(save_dir: Any, save_mode: str) -> dict[str, Any]:
    """The evaluation's history in `save_dir`, reused unless `save_mode` says otherwise."""
    if save_dir is None:
        return {}
    if save_mode not in _SAVE_MODES:
        raise SpecError(f"save_mode: {save_mode!r}; give one of {list(_SAVE_MODES)}")
    if not os.path.isdir(save_dir):
        raise SpecError(f"save_dir: {save_dir} is not a directory")
    path = os.path.join(save_dir, "irpipe.duckdb")
    if os.path.exists(path) and save_mode in ("warn", "error"):
        message = (f"save_dir: {path} holds earlier evaluations; set save_mode='reuse' to reuse "
                   "their values, or 'overwrite' to evaluate again")  # fmt: skip
        if save_mode == "error":
            raise SpecError(message)
        warnings.warn(message, stacklevel=3)
    return {"history": path, "refresh": save_mode == "overwrite"}
