"""The dashboard: a static site of a history's evaluations (`irpipe dashboard HISTORY --out
DIR`, or `history: {dashboard: DIR}` in a spec), opened from the file system or any static host,
with nothing fetched at view time. `data` reads the history, `metrics` how each of its metrics
reads (which value is better, which are latency statistics), `tradeoff` each evaluation's
effectiveness against latency; `index` and `evaluation` are the pages, made of `page`, `views`
and `tables`; `charts` are Vega-Lite specifications that the pages' script
(`assets/dashboard.js`) draws with the Vega bundle of vl-convert (the `dashboard` extra),
written beside the pages; `site` writes them all.

Imports: the history (read-only), the measures (each metric's better direction), the plan's
Pareto front (`plan.tradeoff`), the foundation; vl-convert for the bundle.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DETAIL", "write_dashboard"]

#: how many of the latest evaluations show their per-query differences by default
DETAIL = 30


def write_dashboard(
    history: Path,
    out: Path,
    lock_timeout: float = 60.0,
    detail: int = DETAIL,
    compare: tuple[int, int] | None = None,
    where: str = "--out",
    *,
    registry,
) -> Path:
    """Write the site of `history` into the directory `out`; the path of its index page.
    `detail`: the latest evaluations whose pages show per-query differences; `compare`: a pair
    of evaluation ids (old, new) that gets a page of its own. A history that is missing, locked
    past `lock_timeout`, not a history or of a newer version is a HistoryError; nothing is
    written then. `out` is refused (SpecError naming `where`, the key or flag that gave it)
    where it is or holds the history, or is not a dashboard irpipe wrote."""
    from pipeline.dashboard.data import read_history
    from pipeline.dashboard.metrics import read_metrics
    from pipeline.dashboard.site import vega_bundle, write_site
    from pipeline.dashboard.tradeoff import read_tradeoffs
    from pipeline.history.documents import Source, reading, require

    vega_bundle()  # the extra is there, before reading anything
    _check_out(Path(history), Path(out), where)
    source = Source(Path(history), lock_timeout)
    with reading(source) as con:
        if compare is not None:
            require(con, source.path, list(compare))
        data = read_history(con, str(source.path.resolve()), detail, compare)
        metrics = read_metrics(data.evaluations, registry)
        data.tradeoffs = read_tradeoffs(con, data.evaluations, metrics)
    if not data.evaluations:
        from pipeline.errors import HistoryError

        raise HistoryError(f"{history}: the history holds no evaluation yet; nothing to show")
    return write_site(data, Path(out), detail, compare, metrics)


def _check_out(history: Path, out: Path, where: str) -> None:
    """The site's directory may be replaced: not the history, nor a directory holding it, nor
    one irpipe did not write."""
    from pipeline.outputs.targets import Kept, Written, check_written

    check_written([Written(out, "dashboard", where, where)], [Kept(history, "the history")])
