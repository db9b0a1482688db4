#!/usr/bin/env python3
"""Install check: every user extra of irpipe works installed alone, and the core at its floors.

The test suite runs with the `test` extra, which installs everything: an extra that misses one of
its own dependencies (issue 21: `irpipe[spark]` without pandas) or a floor of pyproject.toml that
the code has outgrown passes there unseen. Here each case gets a NEW virtual environment holding
only what it names, installed from one wheel built from this working tree, and runs its feature
end to end through the real `irpipe` command on a temporary copy of configs/:

    base      irpipe alone: `irpipe run` on the quickstart, and `irpipe trec-eval`
    spark     irpipe[spark]: the quickstart on the Spark engine equals the base case's summary
    compare   irpipe[compare]: configs/compare.yaml's comparison table, with p-values
    plot      irpipe[plot]: configs/pr_curves.yaml's PNG and SVG files, opened and checked
    arrays    irpipe[arrays] and plugins/irpipe-usermodels: usermodels.ERR@10 and its Python measures
    notebook  irpipe[notebook]: the quickstart's files as pandas frames through the Python door
    irds      irpipe[irds]: an ir_datasets id, from its local cache, as the qrels
    dashboard irpipe[dashboard]: the history's site, opened in Chromium's headless mode
    plugins   irpipe and every package under plugins/: all their metrics load and evaluate
    floors    irpipe[test] with each core dependency at its floor (floors.txt): the core tests

Every user extra of pyproject.toml (all but `test` and `bench`) must have a case of its name. The
cases run in parallel; nothing is written into the repository. Run with the system Python:

    python3 tests/installs/check.py [--jobs N] [--keep] [CASE ...]

It prints a table (case, seconds, ok/FAILED, and the tail of a failed case's log) and exits 1 if
any case failed. The logs are kept, in a directory it names, only then.

This module runs the check; beside it, support.py holds its groundwork (settings, pyproject.toml's
extras and floors, the workspace and each case's environment), cases.py the cases and outputs.py
the reading of their outputs. None is named test_*.py: pytest must not collect them.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# This script's directory is first on sys.path when it runs as a script, from any directory: the
# sibling modules import as `support`, `cases` and `outputs`, without a package or `-m`. Importing
# them must not write their bytecode into the repository (tests/installs/__pycache__/).
sys.dont_write_bytecode = True
import cases  # noqa: E402
from cases import CASES, NEEDS, NOT_EXTRA_CASES  # noqa: E402
from support import (  # noqa: E402
    PIP_OPTIONS,
    REPO,
    Case,
    CheckFailed,
    Workspace,
    clean_env,
    pyproject,
    run_logged,
    user_extras,
)

LOG_TAIL = 40
#: Where a new extra's case goes (coverage's message names it).
CASES_MODULE = Path(cases.__file__).name


@dataclass
class Outcome:
    """How a case went: seconds, ok, and why not."""

    name: str
    seconds: float
    ok: bool
    message: str = ""
    work: Path | None = None


def attempt(name: str, ws: Workspace) -> Outcome:
    """Run one case; any failure becomes its outcome (a bug in the check too, with its type)."""
    case, start = Case(name, ws), time.monotonic()
    try:
        CASES[name](case)
    except CheckFailed as exc:
        return Outcome(name, time.monotonic() - start, False, str(exc))
    except Exception as exc:  # noqa: BLE001 -- reported as the case's failure
        return Outcome(name, time.monotonic() - start, False, f"{type(exc).__name__}: {exc}")
    finally:
        if not ws.keep:  # pyspark's environment is half a gigabyte
            shutil.rmtree(case.venv, ignore_errors=True)
    return Outcome(name, time.monotonic() - start, True, work=case.work)


def coverage(project: dict) -> Outcome:
    """Every user extra has a case of its name, and every case but base, plugins and floors is an
    extra's (pip installs an unknown extra without a word: its case would test nothing)."""
    extras, cases = set(user_extras(project)), set(CASES) - NOT_EXTRA_CASES
    problems = [
        f"extra {e!r} has no case: add one to {CASES_MODULE} (a function case_{e}, in "
        f"CASES, that installs irpipe[{e}] alone and runs its feature end to end)"
        for e in sorted(extras - cases)
    ]
    problems += [f"case {c!r}: pyproject.toml has no extra {c!r}" for c in sorted(cases - extras)]
    return Outcome("extras", 0.0, not problems, "\n".join(problems))


def copy_tree(ws: Workspace) -> None:
    """Copy the working tree (tracked files and untracked ones git does not ignore) to ws.src."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    for name in listed.stdout.decode().split("\0"):
        if name and (REPO / name).is_file():  # a tracked file deleted in the tree is listed
            (ws.src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, ws.src / name)


def build_wheels(ws: Workspace) -> Outcome:
    """Copy the working tree, make the environment with pip, and build irpipe's wheel and every
    plugin's, once, from the copy (building in place writes build/ and *.egg-info)."""
    start = time.monotonic()
    try:
        copy_tree(ws)
    except (OSError, subprocess.CalledProcessError) as exc:  # not a git checkout, or no git
        return Outcome("wheels", 0.0, False, f"cannot copy the working tree: {exc}")
    plugins = sorted(path.parent for path in ws.src.glob("plugins/*/pyproject.toml"))
    build = ("wheel", *PIP_OPTIONS, "--no-deps", "-w", ws.wheels, ws.src, *plugins)
    for step in ((sys.executable, "-m", "venv", ws.pip.parents[1]), (ws.pip, "-m", "pip", *build)):
        failure = build_step([str(part) for part in step], ws)
        if failure:
            return Outcome("wheels", time.monotonic() - start, False, failure)
    return Outcome("wheels", time.monotonic() - start, True)


def build_step(command: list[str], ws: Workspace) -> str:
    """Run one command of the build, logged in wheels.log; why it failed, or ''."""
    result = run_logged(command, ws.logs / "wheels.log", ws.root, clean_env(ws.pip.parents[1]))
    return f"`{' '.join(command[1:4])} ...` exited {result.returncode}" if result.returncode else ""


def run_cases(ws: Workspace, names: list[str], jobs: int) -> list[Outcome]:
    """Run the cases `names` in `jobs` threads (each case's commands are processes)."""
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        for name in names:
            ws.outcomes[name] = pool.submit(attempt, name, ws)
        return [ws.outcomes[name].result() for name in names]


def selected(requested: list[str]) -> list[str]:
    """The cases to run, in CASES's order: those requested (all by default) and those they need."""
    unknown = sorted(set(requested) - set(CASES))
    if unknown:
        sys.exit(f"unknown cases {unknown}; the cases are {list(CASES)}")
    wanted = set(requested or CASES)
    wanted |= {need for name in wanted for need in NEEDS.get(name, ())}
    return [name for name in CASES if name in wanted]


def report(outcomes: list[Outcome], logs: Path) -> None:
    """The table: case, seconds, ok/FAILED; under a failure, its message and its log's tail."""
    print(f"{'case':<10} {'seconds':>8}  result")
    for outcome in outcomes:
        print(f"{outcome.name:<10} {outcome.seconds:>8.1f}  {'ok' if outcome.ok else 'FAILED'}")
    for outcome in (o for o in outcomes if not o.ok):
        print(f"\n--- {outcome.name} FAILED: {outcome.message}")
        log = logs / f"{outcome.name}.log"
        if log.is_file():
            tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL:]
            print(f"--- the last {len(tail)} lines of {log}:", *tail, sep="\n")


def main(argv: list[str] | None = None) -> int:
    """Check; 0 if every case passed, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "cases", nargs="*", metavar="CASE", help=f"only these (default: all of {', '.join(CASES)})"
    )
    parser.add_argument("--jobs", type=int, default=3, help="cases run at once (default: 3)")
    parser.add_argument("--keep", action="store_true", help="keep the environments and logs")
    args = parser.parse_args(argv)
    return 0 if check(selected(args.cases), args.jobs, args.keep) else 1


def check(names: list[str], jobs: int, keep: bool) -> bool:
    """Build the wheels and run the cases in temporary directories, report, clean up; True if
    every case passed."""
    root, logs = (Path(tempfile.mkdtemp(prefix=f"irpipe-install{x}-")) for x in ("", "-logs"))
    ws = Workspace(root, logs, {}, keep)
    try:
        outcomes = [coverage(pyproject()), built := build_wheels(ws)]
        outcomes += run_cases(ws, names, jobs) if built.ok else []
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    report(outcomes, logs)
    return conclude(all(outcome.ok for outcome in outcomes), ws)


def conclude(ok: bool, ws: Workspace) -> bool:
    """Print the verdict and what is kept: the logs if a case failed, all with --keep (else the
    logs are removed). Returns `ok`."""
    kept = [f"logs in {ws.logs}"] if not ok or ws.keep else []
    kept += [f"environments in {ws.root}"] if ws.keep else []
    if not kept:
        shutil.rmtree(ws.logs)
    print("\n" + "; ".join(["all ok" if ok else "FAILED", *kept]))
    return ok


if __name__ == "__main__":
    sys.exit(main())
