"""The validate suite: start-up (`irpipe --help`, `irpipe validate` on the quickstart, and the same
with 450 more distributions installed) and `irpipe validate` on the suites' specs."""

from __future__ import annotations

from pathlib import Path

from context import TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import table
from tools import FIVE, OFFICIAL, irpipe_executable, write_spec

__all__ = ["validate"]

QUICKSTART = Path(__file__).resolve().parents[2] / "configs" / "quickstart.yaml"
QUICK = "`irpipe validate configs/quickstart.yaml`"
CROWDED = f"{QUICK}, 450 more distributions installed"
#: how many distributions a researcher's environment adds to the benchmark's own (~90)
MORE_DISTRIBUTIONS = 450


def validate(ctx: Context) -> None:
    """Start-up (`irpipe --help`, `irpipe validate` on the quickstart) and the suites' specs."""
    work = ctx.results / "validate"
    startup = _startup_jobs(work)
    timings = measured(take_turns(startup | _validate_jobs(ctx, work), ctx.repeat))
    rows = [timing_row(what, t) for what, t in timings.items()]
    ctx.report.sections.append(
        "## validate: start-up and `irpipe validate SPEC` (process start to exit, no data read)\n\n"
        + table(TIMING_HEADERS, rows)
    )
    for what in startup:
        if what != CROWDED:
            ctx.report.target(f"startup: {what} (s)", timings[what].wall, 0.150, stretch=0.100)
    added = timings[CROWDED].wall - timings[QUICK].wall
    ctx.report.target("startup: 450 more distributions installed, added (s)", added, 0.020)
    suites = [t.wall for what, t in timings.items() if what not in startup]
    ctx.report.target("validate: import + validate (s)", max(suites), 0.5)


def _startup_jobs(work: Path) -> dict[str, tuple[list[str], Path]]:
    """What a user waits for first: the help text, and validating the quickstart spec."""
    irpipe = irpipe_executable()
    crowded = f"PYTHONPATH={_distributions(work / 'distributions', MORE_DISTRIBUTIONS)}"
    commands = {
        "`irpipe --help`": [irpipe, "--help"],
        QUICK: [irpipe, "validate", str(QUICKSTART)],
        CROWDED: ["env", crowded, irpipe, "validate", str(QUICKSTART)],
    }
    return {what: (cmd, work / f"startup{i}.log") for i, (what, cmd) in enumerate(commands.items())}


def _validate_jobs(ctx: Context, work: Path) -> dict[str, tuple[list[str], Path]]:
    """`irpipe validate` on a spec with the five and one with the official measures.

    They name the run100k files: validation reads no data, so the 7M files need not exist.
    """
    data = ctx.everyday("run100k")
    jobs = {}
    for suite in (FIVE, OFFICIAL):
        metrics = [m.irpipe for m in suite.metrics if m.irpipe]
        spec = write_spec(work / f"{suite.name}.yaml", data.qrels, data.runs, metrics, work / "out")
        command = [irpipe_executable(), "validate", str(spec)]
        jobs[f"{suite.name} ({len(metrics)} metrics)"] = (command, work / f"{suite.name}.log")
    return jobs


def _distributions(root: Path, count: int) -> Path:
    """`count` distributions' metadata as pip leaves it (a `.dist-info` with METADATA and entry
    points, no code) in `root`, which a PYTHONPATH then puts among the installed ones."""
    for i in range(count):
        info = root / f"bench_dist_{i:03d}-1.0.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        name = f"bench-dist-{i:03d}"
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        scripts = f"[console_scripts]\n{name} = bench_dist_{i:03d}:main\n"
        (info / "entry_points.txt").write_text(scripts)
    return root
