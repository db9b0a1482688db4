"""Names irpipe gives to what it loads or evaluates beside the spec's own: a tuned fused run's
trial runs (`tuning_trials`), a pool's `exclude` qrels (`pipeline.pools.plan`). Pure, no I/O.

Such a name is plain text, recorded in the plan that uses it and never parsed back: what it
stands for is read from the plan. A spec may name its runs and collections anything, so a
generated name steps aside from every name the spec gives rather than count on one nobody
would write.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

__all__ = ["apart_from"]


def apart_from(names: Iterable[str], taken: Collection[str]) -> tuple[str, ...]:
    """The `names`, each with as many primes (') as it takes for none to be one of `taken`:
    `t weighting 3` stays so unless the spec has a run of that name."""
    found = tuple(names)
    while any(name in taken for name in found):
        found = tuple(f"{name}'" for name in found)
    return found
