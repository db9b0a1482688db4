"""Writing the dashboard: every page and asset under a temporary directory beside the target,
which replaces the target only once all is written (a failure leaves the old site, or nothing).
The same history gives the same bytes: pages hold no time of writing, and everything is sorted.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

from pipeline.dashboard.data import HistoryData
from pipeline.dashboard.evaluation import comparison_page, evaluation_page
from pipeline.dashboard.index import index_page
from pipeline.dashboard.views import directions
from pipeline.errors import SpecError

__all__ = ["write_site"]

_ASSETS = ("dashboard.js", "dashboard.css")


def vega_bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed as one script (vl-convert's bundle: no network at view
    time); SpecError naming the extra when it is not installed."""
    try:
        import vl_convert
    except ImportError:
        raise SpecError(
            "irpipe dashboard needs the dashboard extra: pip install 'irpipe[dashboard]'"
        ) from None
    return vl_convert.javascript_bundle()


def write_site(data: HistoryData, out: Path, detail: int, pair=None) -> Path:
    """Write the site for `data` into `out` (replacing what it held); `out/index.html`."""
    bundle = vega_bundle()
    staging = out.parent / f".{out.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _write_all(data, staging, bundle, detail, pair)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = out.parent / f".{out.name}.old"
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return out / "index.html"


def _write_all(data: HistoryData, root: Path, bundle: str, detail: int, pair) -> None:
    (root / "assets").mkdir(parents=True)
    (root / "evaluations").mkdir()
    (root / "assets" / "vega.js").write_text(bundle, encoding="utf-8")
    for name in _ASSETS:
        text = resources.files("pipeline.dashboard").joinpath("assets", name).read_text("utf-8")
        (root / "assets" / name).write_text(text, encoding="utf-8")
    better = directions({(m, m) for e in data.evaluations for m in e["metrics"]})
    (root / "index.html").write_text(index_page(data, better, detail), encoding="utf-8")
    for evaluation in data.evaluations:
        page = evaluation_page(data, evaluation, better, detail)
        (root / "evaluations" / f"{evaluation['id']}.html").write_text(page, encoding="utf-8")
    if pair is not None:
        page = comparison_page(data, data.pairs[pair], better)
        (root / f"compare-{pair[0]}-{pair[1]}.html").write_text(page, encoding="utf-8")
