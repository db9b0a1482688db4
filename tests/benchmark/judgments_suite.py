"""The judgments suite (issue 32): the agreement of two label sets of 1M pairs each, with every
statistic at the grades and at three thresholds.

labels   a human-like set of 1,000,000 pairs (2,000 queries × 500 documents, grades 0..3, most 0)
         and an LLM-like set of 1,000,000 more: it judges 90% of the human pairs again, leniently
         (a fifth of the non-relevant ones called relevant, a grade drifting now and then), and
         100,000 pairs the human set never judged. Deterministic (numpy, a fixed seed).
jobs     `irpipe agree human.txt llm.txt --thresholds 1,2,3`, process start to exit, against
         runners/judgments_reference.py: the same files read by pandas, joined on (qid, docno),
         and every statistic computed by scikit-learn (cohen_kappa_score unweighted, linear and
         quadratic; precision, recall and f1 at each threshold) and the krippendorff package
         (alpha nominal, ordinal and interval, with the value domain of the grades seen), in one
         process. Both print every statistic; they must agree within 1e-4.
         Targets: irpipe at most 2 s, and at most 0.5× the reference's time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from context import TIMING_HEADERS, Context, measured, progress, timing_row
from measure import take_turns
from report import agreement, table
from tools import irpipe_executable

__all__ = ["judgments", "write_label_sets"]

RUNNER = Path(__file__).resolve().parent / "runners" / "judgments_reference.py"
QUERIES, DOCUMENTS, EXTRA = 2_000, 500, 100_000
THRESHOLDS = "1,2,3"
SEED = 32


def write_label_sets(directory: Path) -> tuple[Path, Path]:
    """human.txt and llm.txt in `directory` (written once), as TREC qrels."""
    human, llm = directory / "human.txt", directory / "llm.txt"
    if human.exists() and llm.exists():
        return human, llm
    progress(f"data judgments in {directory}")
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    qids = np.repeat(np.arange(QUERIES), DOCUMENTS)
    docs = np.tile(np.arange(DOCUMENTS), QUERIES)
    grades = rng.choice(4, size=qids.size, p=[0.6, 0.2, 0.12, 0.08])
    _write(human, qids, docs, grades)
    again = rng.random(qids.size) < 0.9
    lenient = (grades == 0) & (rng.random(qids.size) < 0.2)
    drift = np.where(rng.random(qids.size) < 0.15, rng.choice([-1, 1], size=qids.size), 0)
    judged = np.clip(np.where(lenient, rng.choice([1, 2], size=qids.size), grades + drift), 0, 3)
    extra_q = rng.integers(0, QUERIES, EXTRA)
    extra_d = DOCUMENTS + rng.permutation(QUERIES * DOCUMENTS)[:EXTRA]  # new documents
    extra_g = rng.choice(3, size=EXTRA, p=[0.6, 0.3, 0.1])
    _write(llm, np.concatenate([qids[again], extra_q]), np.concatenate([docs[again], extra_d]),
           np.concatenate([judged[again], extra_g]))  # fmt: skip
    return human, llm


def _write(path: Path, qids: np.ndarray, docs: np.ndarray, grades: np.ndarray) -> None:
    lines = [f"q{q} 0 d{d} {g}\n" for q, d, g in zip(qids, docs, grades, strict=True)]
    path.write_text("".join(lines), encoding="utf-8")


def judgments(ctx: Context) -> None:
    """Time both jobs in turns; check that they print the same statistics."""
    human, llm = write_label_sets(ctx.data / "judgments")
    work = ctx.results / "judgments"
    jobs = {
        "`irpipe agree`": (
            [irpipe_executable(), "agree", str(human), str(llm), "--thresholds", THRESHOLDS],
            work / "irpipe.log",
        ),
        "scikit-learn + krippendorff": (
            [sys.executable, str(RUNNER), str(human), str(llm), THRESHOLDS],
            work / "reference.log",
        ),
    }
    timings = measured(take_turns(jobs, ctx.repeat))
    ours, theirs = (t.wall for t in timings.values())
    values = {"irpipe": _printed(work / "irpipe.log"), "reference": _listed(work / "reference.log")}
    same = agreement(values, "reference") or [f"the same {len(values['irpipe'])} statistics"]
    rows = [timing_row(what, t) for what, t in timings.items()]
    ctx.report.sections.append(
        "## judgments: agreement of two label sets of 1M pairs, every statistic, thresholds "
        f"{THRESHOLDS}\n\n{table(TIMING_HEADERS, rows)}\n\n{'; '.join(same)}."
    )
    ctx.report.target("judgments: irpipe agree, 1M pairs (s)", ours, 2.0)
    ctx.report.target("judgments: irpipe / scikit-learn + krippendorff", ours / theirs, 0.5)


def _printed(log: Path) -> dict[str, float]:
    """The statistics `irpipe agree` printed: its table's rows, by grades and thresholds."""
    lines = log.read_text().splitlines()
    suffixes = ["", *(f"@{t}" for t in THRESHOLDS.split(","))]
    found = {}
    for line in lines[3:]:
        cells = line.split()
        if len(cells) != len(suffixes) + 1:
            break
        found.update({cells[0] + s: float(v) for s, v in zip(suffixes, cells[1:], strict=True)
                      if v != "-"})  # fmt: skip
    return found


def _listed(log: Path) -> dict[str, float]:
    """The reference's `statistic value` lines."""
    pairs = (line.split() for line in log.read_text().splitlines() if line.strip())
    return {name: float(value) for name, value in pairs}
