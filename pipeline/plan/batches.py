"""Runs in batches: how many runs the executor loads and ranks in one statement. Pure, no I/O.

Many small runs in one batch cost one statement's fixed cost instead of one per run; a cap on a
batch's text keeps memory at about what one large run needs.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.inputs.format import Load

__all__ = ["BATCH_BYTES", "GZIP_RATIO", "batched", "text_size"]

#: Bytes of run text loaded at once: a batch is ranked in one statement, so many small runs cost
#: one statement's fixed cost, while memory holds at most about one large (7M-line) run.
BATCH_BYTES = 256 << 20
#: A gzip-compressed run is counted at this many times its size.
GZIP_RATIO = 4


def batched(runs: list[Load], sizes: dict[Path, int]) -> list[list[Load]]:
    """The runs in spec order, cut into batches of at most BATCH_BYTES of text (a larger run is a
    batch of its own); a file of unknown size counts as empty."""
    batches: list[list[Load]] = []
    total = 0
    for load in runs:
        size = text_size(load, sizes.get(load.path, 0))
        if not batches or total + size > BATCH_BYTES:
            batches.append([])
            total = 0
        batches[-1].append(load)
        total += size
    return batches


def text_size(load: Load, size: int) -> int:
    """About how many bytes of text a file of `size` bytes holds (a .gz file is compressed)."""
    return size * (GZIP_RATIO if Path(load.path).suffix == ".gz" else 1)  # a URI is text too
