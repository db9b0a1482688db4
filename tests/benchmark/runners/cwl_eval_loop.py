"""cwl_eval: its `cwl-eval` command once per run, as a C/W/L user evaluates a track's runs.

Usage: cwl_eval_loop.py GAINS METRICS OUT_DIR RUN [RUN ...]

Each run's output (topic, metric, EU, ...) goes to OUT_DIR/<run's file name>.txt; cwl-eval's log
(cwl.log) goes to OUT_DIR too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> None:
    """One cwl-eval process per run, one after another."""
    gains, metrics = (str(Path(arg).resolve()) for arg in sys.argv[1:3])
    out = Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    command = Path(sys.executable).parent / "cwl-eval"
    for run in sys.argv[4:]:
        with (out / f"{Path(run).name}.txt").open("w") as printed:
            subprocess.run(
                [sys.executable, str(command), gains, str(Path(run).resolve()), "-m", metrics],
                stdout=printed, cwd=out, check=True,
            )  # fmt: skip


if __name__ == "__main__":
    main()
