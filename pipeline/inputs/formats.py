"""The formats irpipe reads, one module each, and the questions the rest of the house asks them.

The spec names a collection's format from `QRELS_FORMATS`; the compiler asks `qrels_format` and
`run_format` how an input is read; the preflight asks `recognised_name` what a file's first line
shows (`recognise` does the reading); both engines run `after_loading` once inputs are loaded. A
new format is a module like `beir` (its name, its `read`, and `recognises` if its first line shows
it) added to `_QRELS` here (pipeline/README.md, "Add an input format").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from pipeline.inputs import (
    answers,
    assignment_labels,
    assignments,
    beir,
    nuggets,
    subtopics,
    support,
    trec_qrels,
    trec_run,
)
from pipeline.inputs.format import Format, Load
from pipeline.sql import Statement

__all__ = [
    "QRELS_FORMATS",
    "RUN_FORMATS",
    "after_loading",
    "qrels_format",
    "reads_tables",
    "runs_are",
    "recognised_name",
    "run_format",
]

# The qrels formats and the run formats, the first of each being the default.
_QRELS = {
    module.NAME: module
    for module in (trec_qrels, beir, subtopics, nuggets, assignment_labels, support)
}
_RUNS = {module.NAME: module for module in (trec_run, assignments, answers)}
#: the formats a collection's `format` may name, and a run's
QRELS_FORMATS = tuple(_QRELS)
RUN_FORMATS = tuple(_RUNS)


def qrels_format(name: str | None, mode: str = "strict", grades: str = "integer") -> Format:
    """How qrels of the format `name` (TREC's when None) are read under the `input` `mode` and
    the `grades` setting."""
    module = _QRELS[name or trec_qrels.NAME]
    return _noting(module, mode, lambda mode: module.read(mode, grades))


def run_format(mode: str = "strict", use_rank: bool = False, name: str | None = None) -> Format:
    """How a run of the format `name` (TREC's when None) is read under the `input` `mode`, its
    ranks checked where they order it."""
    module = _RUNS[name or trec_run.NAME]
    return _noting(module, mode, lambda mode: module.read(mode, use_rank))


def _noting(module, mode: str, read: Callable[[str], Format]) -> Format:
    """`read(mode)`; under `lenient`, for a format that says what it then reads otherwise
    (`LENIENT_READS`: generated answers' labels), counting the lines strict refuses."""
    reads = getattr(module, "LENIENT_READS", "")
    if mode != "lenient" or not reads:
        return read(mode)
    return replace(read(mode), lenient=read("strict").bad, lenient_reads=reads)


def reads_tables(name: str | None, run: bool = False) -> bool:
    """Whether an input of the format `name` (a run's, if `run`) may be a table (Parquet, a
    frame): the formats of text alone say no."""
    modules = _RUNS if run else _QRELS
    return modules[name or (trec_run.NAME if run else trec_qrels.NAME)].READS_TABLES


def runs_are(name: str | None) -> str:
    """What a run of the format `name` (TREC's when None) is to a measure: "rankings",
    "assignments" or "answers" (`Measure.reads`)."""
    return _RUNS[name or trec_run.NAME].RUNS_ARE


def recognised_name(first_line: str) -> str:
    """The qrels format a file's first line shows (a BEIR header is BEIR's), else TREC's."""
    fields = [f for f in re.split(r"[ \t\v\f\r\n]+", first_line.removeprefix("\ufeff")) if f]
    shown = [name for name, module in _QRELS.items() if _shows(module, fields)]
    return shown[0] if shown else trec_qrels.NAME


def _shows(module, fields: list[str]) -> bool:
    recognises = getattr(module, "recognises", None)
    return recognises is not None and recognises(fields)


def after_loading(loads: Sequence[Load]) -> list[Statement]:
    """What each format runs once its inputs of `loads` are loaded, given their names."""
    names: dict[Format, list[str]] = {}
    for load in loads:
        if load.format.after is not None:
            names.setdefault(load.format, []).append(load.name)
    return [fmt.after(found) for fmt, found in names.items() if fmt.after is not None]
