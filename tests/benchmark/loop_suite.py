"""The loop suite (issue 43): an evaluator called again and again in one process, as a training
loop's validation or a parameter sweep calls it, on the issue's shape: 50 queries × 100
documents, nDCG@10 and RR. irpipe's `Evaluator(qrels, metrics)(run)` (its aggregate read as a
frame), pytrec_eval's `RelevanceEvaluator.evaluate` (its dicts built from the frame in its
time) and ir_measures' `evaluator(...).calc_aggregate` take turns call by call in the same
process (runners/loop.py), so that each meets the same machine; the report gives each tool's
median call and checks that the three agree to 1e-12 on every mean. Targets: irpipe at most
pytrec_eval's time (0.5× the goal).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from context import Context
from report import table

__all__ = ["loop"]

RUNNER = Path(__file__).resolve().parent / "runners" / "loop.py"
TOOLS = ("irpipe", "pytrec_eval", "ir_measures")


def loop(ctx: Context) -> None:
    """Every tool's median call over `ctx.repeat` rounds of 20 calls each, in turns."""
    found = json.loads(
        subprocess.run(
            [sys.executable, str(RUNNER), str(max(ctx.repeat, 3) * 20)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout  # fmt: skip
    )
    calls = found["calls"]
    rows = [[tool, calls[tool] * 1000, calls[tool] / calls["pytrec_eval"]] for tool in TOOLS]
    ctx.report.sections.append(
        "## loop: an evaluator called in a loop, 50 queries × 100 documents, nDCG@10 and RR\n\n"
        + table(["", "the call (ms, median)", "/ pytrec_eval"], rows)
        + f"\n\nThe three agree on every mean (largest difference {found['difference']:.1e})."
    )
    ctx.report.target("loop: Evaluator / pytrec_eval", calls["irpipe"] / calls["pytrec_eval"],
                      1.0, stretch=0.5)  # fmt: skip
