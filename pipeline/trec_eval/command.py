"""`irpipe trec-eval [flags] QRELS RUN`: a drop-in for trec_eval 10.0's command line.

It is `irpipe run` with trec_eval's settings: this module translates flags into a spec (`-c` is the
`missing_queries: trec_eval_c` setting, `-J`, `-M`, `-l` are settings too), evaluates it, and prints
with the trec_eval text writer, laid out as trec_eval lays out the measures asked for. It adds one
rule of trec_eval's topic loop: without `-c`, a qrels topic the run lacks is fatal.
"""

from __future__ import annotations

import getopt
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pipeline._version import __version__
from pipeline.engines import ENGINES, execute
from pipeline.errors import DuplicateError, InputDataError, SpecError
from pipeline.measures.trec_names import Selected, atol, select
from pipeline.outputs.trec_eval import RUNID, Line, render, runid_of
from pipeline.run.preflight import validate
from pipeline.spec import LoadedSpec, Spec

__all__ = ["main", "parse", "printed"]

USAGE = "usage: irpipe trec-eval [-h] [-q] [-n] [-c] [-J] [-l N] [-M N] [-N N] [-m measure[.params]] ... [--engine duckdb|spark] qrels run"


class TrecEvalExit(Exception):
    """A trec_eval fatal case: its message and trec_eval's exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Options:
    """trec_eval's command line."""

    per_query: bool = False
    summary: bool = True
    complete: bool = False
    judged_only: bool = False
    level: int = 1
    max_docs: int | None = None
    num_docs: int = 0
    measures: list[str] = field(default_factory=list)
    compatibility: str = "trec_eval-10"
    engine: str = "duckdb"
    files: list[str] = field(default_factory=list)


def main(argv: list[str]) -> int:
    """Run trec_eval's command line; return trec_eval's exit code."""
    try:
        options = parse(argv)
        if options is None:
            return 0
        return evaluate(options)
    except TrecEvalExit as exc:
        sys.stderr.write(f"irpipe trec-eval: {exc}\n")
        return exc.code


def parse(argv: list[str]) -> Options | None:
    """Options from trec_eval's flags (getopt "hvqm:cl:nD:JN:M:R:T:oZ:"); None after -h or -v."""
    longs = ["help", "version", "measure=", "compatibility=", "engine="]
    try:
        pairs, files = getopt.gnu_getopt(argv, "hvqm:cl:nD:JN:M:R:T:oZ:", longs)
    except getopt.GetoptError as exc:
        raise TrecEvalExit(f"{exc}\n{USAGE}", 1) from None
    options = Options(files=files)
    for flag, value in pairs:
        if _apply(options, flag, value) is None:
            return None
    if len(files) != 2:
        raise TrecEvalExit(f"expected 2 files (qrels and run), got {len(files)}\n{USAGE}", 1)
    return options


def _apply(options: Options, flag: str, value: str) -> Options | None:
    if flag in ("-h", "--help"):
        print(USAGE)
        return None
    if flag in ("-v", "--version"):
        sys.stderr.write(f"irpipe {__version__} trec-eval (trec_eval 10.0 semantics)\n")
        return None
    simple = {
        "-q": ("per_query", True),
        "-n": ("summary", False),
        "-c": ("complete", True),
        "-J": ("judged_only", True),
    }
    if flag in simple:
        setattr(options, *simple[flag])
    elif flag in ("-m", "--measure"):
        options.measures.append(value)
    elif flag in ("-l", "-M", "-N"):
        setattr(options, {"-l": "level", "-M": "max_docs", "-N": "num_docs"}[flag], atol(value))
    elif flag == "--engine":
        if value not in ENGINES:
            raise TrecEvalExit(f"--engine: expected one of {', '.join(ENGINES)}, got {value!r}", 1)
        options.engine = value
    elif flag == "--compatibility":
        options.compatibility = value if value.startswith("trec_eval-") else f"trec_eval-{value}"
    elif flag in ("-R", "-T") and value not in ("qrels", "trec_results"):
        raise TrecEvalExit(f"format '{value}' is not supported (only qrels and trec_results)", 1)
    elif flag in ("-Z", "-o"):
        raise TrecEvalExit(f"{flag} is not supported by irpipe trec-eval", 1)
    return options


def evaluate(options: Options) -> int:
    """Evaluate and print; the exit code is 0, or trec_eval's for its fatal cases."""
    selected = _select(options)
    run = Path(options.files[1])
    con = _execute(options, selected, {"run": run})
    missing = _missing_topics(con, options)
    runid = runid_of(run)
    text = render(
        con,
        _layout(selected),
        options.per_query,
        options.summary,
        before=missing[0] if missing else None,
        runid=lambda _: runid,
    )
    print(text, end="")
    if missing:
        raise TrecEvalExit(
            f"query '{missing[0]}' is in the qrels but not in the run; trec_eval 10.0 stops "
            "here (9.x skipped it); use -c to score missing queries 0",
            4,
        )
    return 0


def printed(options: Options, runs: list[Path]) -> str:
    """What the door prints for each run of `runs` in turn, as one call per run would print it
    (each with `options`' flags and qrels), evaluated in one pass. The runs must answer every
    qrels topic unless -c (or 9.x) says how to treat a missing one."""
    selected = _select(options)
    names = {f"run{i}": path for i, path in enumerate(runs)}
    con = _execute(options, selected, names)
    if _missing_topics(con, options):
        raise TrecEvalExit("a run lacks a qrels topic: use -c", 4)
    return render(
        con,
        _layout(selected),
        options.per_query,
        options.summary,
        runid=lambda name: runid_of(names[name]),
    )


def _select(options: Options) -> list[Selected]:
    try:
        return select(options.measures)
    except SpecError as exc:  # trec_eval: 1 for names, 2 for bad parameters, 4 if computing fails
        raise TrecEvalExit(str(exc), getattr(exc, "trec_eval_exit", 1)) from None


def _execute(options: Options, selected: list[Selected], runs: dict[str, Path]):
    loaded = _spec(options, selected, runs)
    try:
        return execute(validate(loaded).sql, loaded)
    except (SpecError, InputDataError) as exc:  # trec_eval stops duplicates with exit 4
        raise TrecEvalExit(str(exc), 4 if isinstance(exc, DuplicateError) else 2) from None


def _spec(options: Options, selected: list[Selected], runs: dict[str, Path]) -> LoadedSpec:
    metrics = [
        {"metric": metric, "label": label, **params}
        for s in selected
        if s.measure.name != "runid"
        for label, metric, params in s.outputs
    ]
    data = {
        "collections": {"qrels": {"qrels": options.files[0], "num_docs": options.num_docs}},
        "runs": {name: {"path": str(path), "collection": "qrels"} for name, path in runs.items()},
        "settings": {
            "relevance_level": options.level,
            "max_docs": options.max_docs,
            "judged_only": options.judged_only,
            "compatibility": options.compatibility,
            "missing_queries": "trec_eval_c" if options.complete else "value",
            # Missing topics are fatal, or scored as missing rankings (-c), or skipped (9.x).
            "queries": "intersection" if options.compatibility == "trec_eval-9" else "qrels",
            "engine": options.engine,
            # trec_eval evaluates a run whose docnos match no judgment (its zeros are its output).
            "unmatched_runs": "allow",
        },
        "metrics": metrics or [{"metric": "NumQ", "label": "num_q"}],
    }
    spec = Spec.model_validate(data, context={"base_dir": Path.cwd()})
    return LoadedSpec(spec=spec, path=Path("<trec-eval>"), sha256="")


def _layout(selected: list[Selected]) -> list[Line]:
    """The measures asked for, as trec_eval prints them."""
    lines = []
    for s in selected:
        if s.measure.name == "runid":
            lines.append(RUNID)
            continue
        m, text = s.measure, s.measure.name == "relstring"
        lines += [Line(label, m.per_query, m.summary, m.integer, text) for label, *_ in s.outputs]
    return lines


def _missing_topics(con, options: Options) -> list[str]:
    if options.complete or options.compatibility == "trec_eval-9":
        return []
    rows = con.execute(
        "SELECT qid FROM facts WHERE qid NOT IN (SELECT qid FROM present) ORDER BY qid"
    ).fetchall()
    return [qid for (qid,) in rows]
