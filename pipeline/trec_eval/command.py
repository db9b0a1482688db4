"""`irpipe trec-eval [flags] QRELS RUN`: a drop-in for trec_eval 10.0's command line.

It runs on the same registry and executor as `irpipe run`; this module only translates flags into a
spec, handles the two places where trec_eval's topic loop differs from a spec (`-c` scores missing
topics with a one-document bogus ranking; without `-c` a missing topic is fatal), and prints
trec_eval's text format.
"""

from __future__ import annotations

import getopt
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import __version__
from ..compile import AGGREGATE_SQL
from ..errors import DuplicateError, InputDataError, SpecError
from ..evaluate import validate
from ..execute import execute
from ..readers import Statement
from ..spec import LoadedSpec, Spec
from .measures import Selected, atol, select
from .output import print_report, runid_of

__all__ = ["main"]

USAGE = "usage: irpipe trec-eval [-h] [-q] [-n] [-c] [-J] [-l N] [-M N] [-N N] [-m measure[.params]] ... qrels run"
BOGUS_DOCNO = "ceci_nest_pas_un_docno"
RESET_BY_NAME = ("num_ret", "utility", "rbp_resid")  # trec_eval -c resets these exact names


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
    longs = ["help", "version", "measure=", "compatibility="]
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
    elif flag == "--compatibility":
        options.compatibility = value if value.startswith("trec_eval-") else f"trec_eval-{value}"
    elif flag in ("-R", "-T") and value not in ("qrels", "trec_results"):
        raise TrecEvalExit(f"format '{value}' is not supported (only qrels and trec_results)", 1)
    elif flag in ("-Z", "-o"):
        raise TrecEvalExit(f"{flag} is not supported by irpipe trec-eval", 1)
    return options


def evaluate(options: Options) -> int:
    """Evaluate and print; the exit code is 0, or trec_eval's for its fatal cases."""
    try:
        selected = select(options.measures)
    except SpecError as exc:  # trec_eval: 1 for names, 2 for bad parameters, 4 if computing fails
        raise TrecEvalExit(str(exc), getattr(exc, "trec_eval_exit", 1)) from None
    loaded = _spec(options, selected)
    try:
        plan = validate(loaded)
        if options.complete:
            plan = replace(plan, per_batch=[*_bogus_rows(), *plan.per_batch])
        con = execute(plan)
    except (SpecError, InputDataError) as exc:  # trec_eval stops duplicates with exit 4
        raise TrecEvalExit(str(exc), 4 if isinstance(exc, DuplicateError) else 2) from None
    missing = _missing_topics(con, options)
    if options.complete:
        _reset_bogus(con)
    print_report(con, selected, options, runid_of(Path(options.files[1])), before=missing[:1])
    if missing:
        raise TrecEvalExit(
            f"query '{missing[0]}' is in the qrels but not in the run; trec_eval 10.0 stops "
            "here (9.x skipped it); use -c to score missing queries 0",
            4,
        )
    return 0


def _spec(options: Options, selected: list[Selected]) -> LoadedSpec:
    qrels, run = options.files
    metrics = [
        {"metric": metric, "label": label, **params}
        for s in selected
        if s.measure.name != "runid"
        for label, metric, params in s.outputs
    ]
    data = {
        "collections": {"qrels": {"qrels": qrels, "num_docs": options.num_docs}},
        "runs": {"run": {"path": run, "collection": "qrels"}},
        "settings": {
            "relevance_level": options.level,
            "max_docs": options.max_docs,
            "judged_only": options.judged_only,
            "compatibility": options.compatibility,
            # Missing topics are fatal, or scored by the bogus ranking (-c), or skipped (9.x).
            "queries": "intersection" if options.compatibility == "trec_eval-9" else "qrels",
        },
        "metrics": metrics or [{"metric": "NumQ", "label": "num_q"}],
    }
    spec = Spec.model_validate(data, context={"base_dir": Path.cwd()})
    return LoadedSpec(spec=spec, path=Path("<trec-eval>"), sha256="")


def _bogus_rows() -> list[Statement]:
    """trec_eval -c evaluates a topic missing from the run as a one-document ranking that is not
    in the pool; doing the same gives its values by construction."""
    missing = "SELECT DISTINCT qid FROM qrels WHERE qid NOT IN (SELECT qid FROM run_rows)"
    return [
        Statement(f"CREATE TABLE bogus AS {missing}"),
        Statement(
            "INSERT INTO run_rows SELECT 'run', qid, ?, 1, 1.0, true FROM bogus", [BOGUS_DOCNO]
        ),
        # The bogus ranking makes the topic answered, as trec_eval evaluates it (-J can empty it).
        Statement("INSERT INTO present SELECT 'run', qid, 1 FROM bogus"),
    ]


def _missing_topics(con, options: Options) -> list[str]:
    if options.complete or options.compatibility == "trec_eval-9":
        return []
    rows = con.execute(
        "SELECT qid FROM facts WHERE qid NOT IN (SELECT qid FROM present) ORDER BY qid"
    ).fetchall()
    return [qid for (qid,) in rows]


def _reset_bogus(con) -> None:
    """trec_eval -c then zeroes these values of a bogus topic (by exact name, a quirk kept)."""
    bogus = "qid IN (SELECT qid FROM bogus)"
    names = ", ".join(f"'{n}'" for n in RESET_BY_NAME)
    con.execute(
        f"UPDATE per_query SET value = 0 WHERE {bogus} AND (metric IN ({names}) OR metric LIKE 'unj%')"
    )
    if "text" in [c[0] for c in con.execute("DESCRIBE per_query").fetchall()]:
        con.execute(f"UPDATE per_query SET text = '' WHERE {bogus} AND metric = 'relstring'")
    con.execute("DROP TABLE aggregate")
    con.execute(AGGREGATE_SQL)
