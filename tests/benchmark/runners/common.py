"""What the library runners share: their command line, and the JSON they write.

Usage: <library>_eval.py QRELS OUT.json --runs RUN [RUN ...] --measures NAME [NAME ...]

A runner reads the qrels once and then evaluates the runs one after another in the same process,
as a user of the library does for a set of runs; OUT.json maps each RUN, as given, to its means.
"""

from __future__ import annotations

import argparse
import json

__all__ = ["arguments", "write"]


def arguments(description: str) -> argparse.Namespace:
    """qrels, out, runs and measures from the command line."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("qrels")
    parser.add_argument("out")
    parser.add_argument("--runs", nargs="+", required=True)
    parser.add_argument("--measures", nargs="+", required=True)
    return parser.parse_args()


def write(out: str, means: dict[str, dict[str, float]]) -> None:
    """Write {run: {measure: mean}} as JSON."""
    with open(out, "w") as handle:
        json.dump(means, handle)
