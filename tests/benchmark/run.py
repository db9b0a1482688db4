"""irpipe's benchmark: irpipe against trec_eval, pytrec_eval, ir_measures and ranx on the same files.

    python tests/benchmark/run.py [--size 7M] [--repeat 3] [--tools irpipe,trec_eval,...]
                                  [--suite track|grid|run100k|five|official|pooled|scale|runs10|spill|
                                           validate|python|significance|history|pools|spark|notebook|loop|
                                           dashboard|fusion|judgments|cwl|diversity|answers|everyday|all]
                                  [--data DIR] [--out FILE] [--trec-eval PATH] [--memory-limit 256MB]

`everyday` is track, grid and run100k (a TREC track's submissions, a grid search, one 100k-line
run); `all` is every suite. Data is generated once into --data (never committed); the markdown
report is printed and written to --out, each tool's outputs and logs beside it in work/. Not a
test: nothing here fails because a machine is slow.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from generate import SIZES
from measure import require_gnu_time
from report import Report, machine
from suites import SUITE_GROUPS, SUITE_NAMES, Context, run_suite
from tools import make_tools

HERE = Path(__file__).resolve().parent
TOOLS = "irpipe,trec_eval,pytrec_eval,ir_measures,ranx"


def parse_args() -> argparse.Namespace:
    """The command line; every option has a default, so no argument runs everything."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="7M", choices=list(SIZES), help="run lines")
    parser.add_argument("--repeat", type=int, default=3, help="measured runs after a warm-up")
    parser.add_argument("--tools", default=TOOLS, help="comma-separated, compared in this order")
    parser.add_argument("--suite", default="all", choices=[*SUITE_NAMES, *SUITE_GROUPS])
    parser.add_argument("--data", type=Path, default=HERE / "data", help="generated data")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "latest.md")
    parser.add_argument("--trec-eval", help="the trec_eval binary (default: trec_eval on PATH)")
    parser.add_argument("--memory-limit", default="256MB", help="DuckDB memory_limit for spill")
    return parser.parse_args()


def main() -> None:
    """Run the chosen suites, then print the report and write it to --out."""
    args = parse_args()
    require_gnu_time()
    # Every tool runs as installed: an installed package's modules are compiled once (pip does it
    # at install), so a process that may not write bytecode would time compiling, not running.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    trec_eval = args.trec_eval or shutil.which("trec_eval")
    tools = make_tools(args.tools.split(","), trec_eval)
    ctx = Context(
        size=args.size,
        repeat=args.repeat,
        tools=tools,
        data=args.data,
        results=args.out.parent / "work",
        memory_limit=args.memory_limit,
        report=Report([("command", " ".join(["run.py", *sys.argv[1:]])), *machine(trec_eval)]),
    )
    for name in SUITE_GROUPS.get(args.suite, [args.suite]):
        run_suite(ctx, name)
    text = ctx.report.render()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
