"""Writing the dashboard: every page and asset under a temporary directory beside the target,
which replaces the target only once all is written (a failure leaves the old site, or nothing),
and only if the target is a dashboard irpipe wrote (it holds `MARKER`) or new.
The same history gives the same bytes: pages hold no time of writing, and everything is sorted.
"""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

from pipeline.dashboard.data import HistoryData
from pipeline.dashboard.evaluation import comparison_page, evaluation_page
from pipeline.dashboard.index import index_page
from pipeline.dashboard.metrics import Metrics
from pipeline.errors import OutputError, SpecError
from pipeline.outputs.targets import MARKER, MARKER_TEXT, marked_site

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


def write_site(data: HistoryData, out: Path, detail: int, pair, metrics: Metrics) -> Path:
    """Write the site for `data` into `out` (replacing the dashboard it held), its metrics
    read as `metrics` says; `out/index.html`.
    A directory that is not a dashboard irpipe wrote is never replaced (`marked_site`)."""
    bundle = vega_bundle()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        _write_all(data, staging, bundle, detail, pair, metrics)
        _replace(out, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone once renamed; left only by a failure
    return out / "index.html"


def _replace(out: Path, staging: Path) -> None:
    """`staging` renamed to `out`; the dashboard `out` held (checked again: the directory may
    have changed since the spec was validated) moved aside first, then deleted."""
    if not out.exists():
        staging.rename(out)
        return
    if not (out.is_dir() and marked_site(out)):
        raise OutputError(f"{out}: no longer a dashboard irpipe wrote; it was left as it is")
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    out.rename(old / "site")
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def _write_all(data: HistoryData, root: Path, bundle: str, detail: int, pair, metrics) -> None:
    (root / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
    (root / "assets").mkdir()
    (root / "evaluations").mkdir()
    (root / "assets" / "vega.js").write_text(bundle, encoding="utf-8")
    for name in _ASSETS:
        text = resources.files("pipeline.dashboard").joinpath("assets", name).read_text("utf-8")
        (root / "assets" / name).write_text(text, encoding="utf-8")
    (root / "index.html").write_text(index_page(data, metrics, detail), encoding="utf-8")
    for evaluation in data.evaluations:
        page = evaluation_page(data, evaluation, metrics, detail)
        (root / "evaluations" / f"{evaluation['id']}.html").write_text(page, encoding="utf-8")
    if pair is not None:
        page = comparison_page(data, data.pairs[pair], metrics)
        (root / f"compare-{pair[0]}-{pair[1]}.html").write_text(page, encoding="utf-8")
