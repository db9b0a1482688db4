"""The CLI's commands, each a few lines over the library."""

from __future__ import annotations

import argparse
import sys

from pipeline.errors import ExitCode

__all__ = [
    "agree",
    "compile",
    "dashboard",
    "diff",
    "history",
    "metrics",
    "new_plugin",
    "plugins",
    "pool",
    "run",
    "schema",
    "show",
    "trec_eval",
    "validate",
    "verify",
]


def run(args: argparse.Namespace) -> int:
    """`irpipe run SPEC [--junit PATH]`: evaluate (every stage: checks, history, outputs,
    dashboard), print the aggregate table and the checks, write the JUnit report; exit 5 when
    an expected value or a gate failed, every output written."""
    from pathlib import Path

    junit = Path(args.junit) if args.junit else None
    if junit is not None:  # before the evaluation, which may take an hour
        from pipeline.checks.junit import check_junit_path
        from pipeline.run.writes import check_report

        check_junit_path(junit)
        check_report(args.spec, junit)
    evaluation = _evaluate(args)
    if not args.quiet:
        _print_summary(evaluation)
    evaluation.warn()  # after the summary: a gate skipped follows the table it is about
    if junit is not None:
        from pipeline.checks.junit import write_junit

        write_junit(evaluation.checks, junit, evaluation.loaded.path)
    if evaluation.checks:  # rich is imported only to print something (--quiet prints nothing)
        from pipeline.console.draw import print_checks

        print_checks(evaluation.checks, args.quiet)
    return ExitCode.CHECKS if evaluation.failed else ExitCode.OK


def _print_summary(evaluation) -> None:
    """The aggregate table, its marks, the files written and what the history reused."""
    from pipeline.console.draw import print_results

    outputs = [job.path for job in evaluation.plan.outputs]  # a per-run output's every file
    notes = [note] if (note := evaluation.history_note()) else []
    rows, metrics = evaluation.aggregate() + evaluation.suite_means(), evaluation.plan.metrics
    if evaluation.plan.agreement is not None:
        _print_judgments(evaluation)
    suites = evaluation.loaded.spec.suites
    print_results(rows, metrics, outputs, None, evaluation.significance(), notes, suites)


def _print_judgments(evaluation) -> None:
    """The judgment sets' agreement, their pairs by grade and the orderings' correlations,
    before the summary."""
    _print_judgment_tables({table: evaluation.rows(table) for table in _judgment_tables()})


def _judgment_tables() -> list[str]:
    """The tables of an evaluation's comparisons of judgment sets, in the order they are
    printed (imported here: `irpipe --help` starts without the spec's models)."""
    from pipeline.spec.levels import LEVELS

    return [record.table for record in LEVELS if record.is_judgment]


def _print_judgment_tables(rows: dict[str, list[tuple]]) -> None:
    """The agreement, the pairs by grade and the correlations, from each table's rows."""
    from pipeline.console.draw import print_blocks
    from pipeline.console.judgments import agreement_tables, confusion_tables, correlation_tables

    tables = agreement_tables(rows["agreement"]) + confusion_tables(rows["confusion"])
    tables += correlation_tables(rows["correlation"])
    print_blocks([block for table in tables for block in (table, "")])


def _evaluate(args: argparse.Namespace):
    """The evaluation of `irpipe run`. On a terminal, a long one shows a progress bar on stderr
    (`pipeline.console.progress_bar`)."""
    from pipeline.progress import Progress, observing
    from pipeline.run.evaluation import evaluate

    progress = Progress()  # shows nothing: a pipe or --quiet never needs rich
    if not args.quiet and sys.stderr.isatty():
        from pipeline.console.progress_bar import progress_bar

        progress = progress_bar()
    try:
        with observing(progress):
            return evaluate(
                args.spec,
                history=args.history,
                refresh=args.refresh,
                engine=args.engine,
                threads=args.threads,
            )
    finally:
        progress.finished()  # the bar is erased before anything else is printed


def verify(args: argparse.Namespace) -> int:
    """`irpipe verify OUTPUT`: check the inputs its manifest names, evaluate again and compare
    the bytes; exit 0 when they are the same, 5 naming the first row that differs (an input
    whose digest changed is exit 3, raised on the way)."""
    from pipeline.run.reproduce import verify as reproduce

    verdict = reproduce(args.output)
    print(verdict.message())
    return ExitCode.OK if verdict.same else ExitCode.CHECKS


def agree(args: argparse.Namespace) -> int:
    """`irpipe agree REFERENCE OTHER [--runs GLOB --metric M ...] [--thresholds 1,2,3]`: the
    agreement of two qrels files and, with runs, the correlations of their orderings, printed
    as `irpipe run` prints them (a spec built in memory; nothing written)."""
    from pipeline.run.agree import agree as compare_sets

    metrics, thresholds = args.metric or (), args.thresholds or ()
    evaluation = compare_sets(
        args.reference, args.other, args.runs, metrics, thresholds, args.format
    )
    _print_judgments(evaluation)
    if args.runs is not None:
        from pipeline.console.draw import print_results

        print_results(evaluation.aggregate(), evaluation.plan.metrics, None)
    return ExitCode.OK


def pool(args: argparse.Namespace) -> int:
    """`irpipe pool SPEC`: build every pool of the spec, write the pools' outputs (and nothing
    else), and say what each holds."""
    from pipeline.run.pool import build_pools

    pooled = build_pools(args.spec)
    for line in pooled.summary():
        print(line)
    return ExitCode.OK


def validate(args: argparse.Namespace) -> int:
    """`irpipe validate [--no-data] SPEC`: everything short of reading data (with --no-data,
    without touching the input files at all)."""
    from pipeline.run.preflight import validate as validate_spec

    plan = validate_spec(args.spec, data=not args.no_data)
    loads = plan.sql.loads
    if args.no_data:
        runs = sum(bool(load.collections) for load in loads)
        print(f"{args.spec}: valid without data ({len(plan.metrics)} metrics, {runs} runs)")
    else:
        print(f"{args.spec}: valid ({len(plan.metrics)} metrics, {len(loads)} input files)")
    return ExitCode.OK


def compile(args: argparse.Namespace) -> int:  # noqa: A001 -- the command's name
    """`irpipe compile SPEC`: print the evaluation's plan, its SQL first; the input files need
    not exist."""
    from pipeline.run.preflight import compile_spec

    print(compile_spec(args.spec).text(), end="")
    return ExitCode.OK


def schema(args: argparse.Namespace) -> int:
    """`irpipe schema [--check FILE]`: print the spec's JSON Schema, or check that FILE is it."""
    from pathlib import Path

    from pipeline.spec.schema import check_schema_file, schema_text

    if args.check is None:
        print(schema_text(), end="")
    else:
        check_schema_file(Path(args.check))
        print(f"{args.check}: the schema of this irpipe's spec models")
    return ExitCode.OK


def metrics(args: argparse.Namespace) -> int:
    """`irpipe metrics [NAME ...] [--json]`: every registered metric, from the registry, with its
    aliases, trec_eval names and the distribution that provides it; or only the metrics named
    (a name, alias, trec_eval name or metric string; exit 2 for an unknown one, with close
    names), each with its parameters' defaults and definitions."""
    from pipeline.measures.listing import listings
    from pipeline.measures.registry import get_registry

    found = listings(get_registry(), args.names)
    if args.json:
        import json

        print(json.dumps([listing.as_json() for listing in found], indent=2))
        return ExitCode.OK
    from pipeline.console.draw import print_metrics

    rows = [listing.row() for listing in found]
    print_metrics(rows, found) if args.names else print_metrics(rows)
    return ExitCode.OK


def plugins(args: argparse.Namespace) -> int:
    """`irpipe plugins [--json]`: every plugin (the built-ins, then each entry point) with its
    distribution, version, metrics, writers and state (loaded, failed with why, or skipped)."""
    from pipeline.host.manager import get_plugin_manager
    from pipeline.measures.registry import get_registry

    registry = get_registry()  # first: a plugin whose metric names clash fails here
    rows = get_plugin_manager().listing(registry.providers)
    if args.json:
        import json

        print(json.dumps(rows, indent=2))
    else:
        from pipeline.console.draw import print_plugins

        print_plugins(rows)
    return ExitCode.OK


def trec_eval(args: argparse.Namespace) -> int:
    """`irpipe trec-eval [flags] QRELS RUN`: trec_eval 10.0's command line and exit codes."""
    from pipeline.trec_eval.command import main

    return main(args.arguments)


def new_plugin(args: argparse.Namespace) -> int:
    """`irpipe new-plugin NAME [--dir DIR]`: a plugin package from irpipe's template."""
    from pathlib import Path

    from pipeline.cli.new_plugin import create_plugin

    path = create_plugin(args.name, Path(args.dir))
    print(f"created {path}; next: cd {path} && pip install -e '.[test]' && python -m pytest")
    return ExitCode.OK


def history(args: argparse.Namespace) -> int:
    """`irpipe history [SPEC] [--history PATH] [--last N] [--json]`: the evaluations, oldest
    first, each with what changed since the previous evaluation of its spec."""
    from pipeline.history.documents import history_document, locate
    from pipeline.history.views import history_text

    document = history_document(locate(args.spec, args.history), args.last)
    _print(document, args.json, history_text)
    return ExitCode.OK


def show(args: argparse.Namespace) -> int:
    """`irpipe show ID [SPEC] [--history PATH] [--json]`: one evaluation and its aggregates."""
    from pipeline.history.documents import locate, show_document
    from pipeline.history.views import recorded_metrics, show_text

    document = show_document(locate(args.spec, args.history), args.id)
    if _print(document, args.json, show_text):
        return ExitCode.OK
    from pipeline.console.draw import print_results
    from pipeline.measures.registry import get_registry

    metrics, lost = recorded_metrics(document["evaluation"]["metrics"], get_registry())
    rows = [tuple(row.values()) for row in document["aggregates"]]
    notes = [f"Not installed now, so not marked: {', '.join(lost)}"] if lost else []
    _print_recorded_judgments(document)
    print_results(rows, metrics, None, notes=notes)
    return ExitCode.OK


def _print_recorded_judgments(document: dict) -> None:
    """An evaluation's judgment sets' comparisons as the history recorded them, as `irpipe
    run` printed them."""
    tables = {name: [tuple(row.values()) for row in document[name]] for name in _judgment_tables()}
    _print_judgment_tables(tables)


def diff(args: argparse.Namespace) -> int:
    """`irpipe diff ID_A ID_B [SPEC] [--history PATH] [--json]`: the values that changed from
    A to B, and what differs between them that can change values."""
    from pipeline.history.documents import diff_document, locate
    from pipeline.history.views import diff_text

    document = diff_document(locate(args.spec, args.history), args.a, args.b)
    _print(document, args.json, diff_text)
    return ExitCode.OK


def dashboard(args: argparse.Namespace) -> int:
    """`irpipe dashboard HISTORY --out DIR [--detail N] [--compare A B]`: the history's static
    site; prints the path of its index page."""
    from pathlib import Path

    from pipeline.dashboard import write_dashboard

    compare = tuple(args.compare) if args.compare else None
    from pipeline.measures.registry import get_registry

    index = write_dashboard(Path(args.history), Path(args.out), detail=args.detail,
                            compare=compare, registry=get_registry())  # fmt: skip
    print(index)
    return ExitCode.OK


def _print(document: dict, as_json: bool, text) -> bool:
    """The document as JSON (then True: nothing else to print), or drawn by `text`."""
    if as_json:
        from pipeline.history.documents import dumps

        print(dumps(document))
        return True
    from pipeline.console.draw import print_blocks

    print_blocks(text(document))
    return False
