"""The command line's arguments: every command, its arguments and options, and their types.

Imports: nothing of irpipe (the commands themselves are `commands.py`'s).
"""

from __future__ import annotations

import argparse

from pipeline.inputs.formats import QRELS_FORMATS

__all__ = ["parser"]


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="irpipe", description="Declarative, exact and fast IR evaluation."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in (
        ("run", "evaluate a spec and write its outputs"),
        ("validate", "check a spec without reading any data"),
        ("compile", "print the SQL a spec compiles to (reads no data)"),
        ("pool", "build the spec's judgment pools and write their outputs"),
    ):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("spec", help="path of the YAML spec")
        if name == "run":
            sub.add_argument("--quiet", action="store_true", help="do not print the results table")
            sub.add_argument(
                "--junit",
                metavar="PATH",
                help="write the expected values and gates as JUnit XML (for CI) to PATH",
            )
            sub.add_argument(
                "--history", metavar="PATH", help="record in this history (over the spec's)"
            )
            sub.add_argument(
                "--refresh",
                action="store_true",
                help="evaluate every run again, reusing nothing from the history",
            )
            sub.add_argument(
                "--engine",
                choices=("duckdb", "spark"),
                help="evaluate on this engine (over the spec's settings.engine)",
            )
            sub.add_argument(
                "--threads",
                type=_threads,
                metavar="N",
                help="DuckDB's threads, or a local Spark's cores (over the spec's settings.threads)",
            )
        if name == "validate":
            sub.add_argument(
                "--no-data",
                action="store_true",
                help="check the spec alone: do not touch the input files (a run pattern stays one run)",
            )
    verify = commands.add_parser(
        "verify", help="evaluate an output again from its manifest and compare the bytes"
    )
    verify.add_argument(
        "output", help="an output irpipe wrote (its <file>.manifest.json beside it)"
    )
    schema = commands.add_parser("schema", help="print the spec's JSON Schema (for editors)")
    schema.add_argument("--check", metavar="FILE", help="fail unless FILE is exactly that schema")
    metrics = commands.add_parser("metrics", help="list every metric, its aliases and parameters")
    metrics.add_argument(
        "names", metavar="NAME", nargs="*",
        help="only these metrics (a name, alias, trec_eval name or metric string), each with "
        "its parameters' defaults and definitions",
    )  # fmt: skip
    metrics.add_argument("--json", action="store_true", help="print the list as JSON")
    plugins = commands.add_parser(
        "plugins", help="list every plugin: its distribution, metrics, writers and state"
    )
    plugins.add_argument("--json", action="store_true", help="print the list as JSON")
    _history_commands(commands)
    commands.add_parser(
        "trec-eval", help="trec_eval 10.0's command line: irpipe trec-eval [flags] QRELS RUN"
    )
    _agree_command(commands)
    new_plugin = commands.add_parser("new-plugin", help="create a plugin package from a template")
    new_plugin.add_argument("name", help="the plugin's name, e.g. err or err-ia")
    new_plugin.add_argument("--dir", default=".", help="where to create irpipe-NAME/ (default: .)")
    new_plugin.set_defaults(command="new_plugin")
    return parser


def _threads(value: str) -> int:
    """`--threads N`: a whole number of at least 1."""
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value!r}")
    return int(value)


def _history_commands(commands) -> None:
    """`irpipe history`, `show` and `diff`: reading the history (see pipeline.history.documents)."""
    history = commands.add_parser("history", help="list the evaluations a history holds")
    show = commands.add_parser("show", help="one evaluation of a history and its results")
    show.add_argument("id", type=int, help="the evaluation's id (irpipe history lists them)")
    diff = commands.add_parser("diff", help="which values changed between two evaluations, and why")
    diff.add_argument("a", metavar="ID_A", type=int, help="the evaluation compared against")
    diff.add_argument("b", metavar="ID_B", type=int, help="the evaluation compared")
    history.add_argument(
        "spec", metavar="SPEC", nargs="?",
        help="only this spec's evaluations; its `history:` is read unless --history is given",
    )  # fmt: skip
    for sub in (show, diff):
        sub.add_argument(
            "spec", metavar="SPEC", nargs="?", help="a spec whose `history:` names the history"
        )
    for sub in (history, show, diff):
        sub.add_argument("--history", metavar="PATH", help="the history file (over the spec's)")
        sub.add_argument("--json", action="store_true", help="print a JSON document")
    history.add_argument("--last", metavar="N", type=_positive, help="only the last N evaluations")
    dashboard = commands.add_parser(
        "dashboard", help="write a static site of a history's evaluations (irpipe[dashboard])"
    )
    dashboard.add_argument("history", metavar="HISTORY", help="the history file")
    dashboard.add_argument("--out", metavar="DIR", required=True, help="the site's directory")
    dashboard.add_argument(
        "--detail", metavar="N", type=_positive, default=30,
        help="the latest N evaluations show their per-query differences (default: 30)",
    )  # fmt: skip
    dashboard.add_argument(
        "--compare", metavar=("ID_A", "ID_B"), type=int, nargs=2,
        help="also a page of evaluation ID_B against ID_A (compare-A-B.html)",
    )  # fmt: skip


def _agree_command(commands) -> None:
    """`irpipe agree`: two judgment sets compared without a spec (see pipeline.run.agree)."""
    agree = commands.add_parser(
        "agree", help="compare two qrels files' labels, and how they order runs (no spec needed)"
    )
    agree.add_argument("reference", metavar="REFERENCE", help="the reference qrels file")
    agree.add_argument("other", metavar="OTHER", help="the qrels file compared with it")
    agree.add_argument(
        "--runs", metavar="GLOB", help="runs evaluated under both, whose orderings are compared"
    )
    agree.add_argument(
        "--metric", metavar="M", action="append",
        help="a metric the runs are ordered by, once per metric (default with --runs: AP, nDCG@10)",
    )  # fmt: skip
    agree.add_argument(
        "--format", choices=QRELS_FORMATS,
        help="how both files are read (default: each recognised, else TREC qrels); assignments: "
        "nuggetizer's assignment JSONL, each (run_id, qid, nugget) a judgment",
    )  # fmt: skip
    agree.add_argument(
        "--thresholds", metavar="T,T,...", type=_numbers,
        help="grades at which the labels are also compared as relevant or not, e.g. 1,2,3",
    )  # fmt: skip


def _numbers(text: str) -> list[int | float]:
    """`1,2,3` or `0.5`: numbers separated by commas."""
    try:
        return [float(t) if "." in t or "e" in t.lower() else int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas, got {text!r}"
        ) from None


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)
