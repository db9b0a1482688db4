"""Plots as writers, `.png` and `.svg`: precision-recall curves (`level: pr_plot`), per-query
differences against a baseline run (`level: diff_plot`) and the achieved significance level
curves of discriminative power (`level: asl_plot`, `asl_plot.py`), drawn by matplotlib, the optional extra
`irpipe[plot]`. matplotlib is imported only to check that it is there (when a spec with a plot is
validated) and to draw.

The same tables give the same bytes: matplotlib's default style whatever the user's matplotlibrc
says, SVG with a fixed hash salt (it names the clip paths) and no date, text kept as text. No pyplot:
a figure of its own on an Agg canvas, so no global figure state and no backend switched in the
process of a program that uses irpipe as a library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pipeline.contract.writer import Writer
from pipeline.errors import SpecError
from pipeline.hookspecs import hookimpl
from pipeline.outputs.asl_plot import ASL_COLUMNS, asl_figure
from pipeline.plan.output_tables import is_curve_table
from pipeline.plan.tradeoff import is_tradeoff_table, wide_apart
from pipeline.spec.levels import PLOT_LEVELS
from pipeline.sql import quote_identifier

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["INSTALL", "PngWriter", "SvgWriter", "diff_figure", "pr_figure", "tradeoff_figure"]

INSTALL = "pip install 'irpipe[plot]'"
#: on top of matplotlib's defaults; names are data, never mathtext (`$` is a dollar)
_STYLE = {
    "svg.hashsalt": "irpipe",
    "svg.fonttype": "none",
    "font.size": 9,
    "text.parse_math": False,
    "path.simplify": False,  # every recall level stays a vertex of its line
}
_DPI = 150
_DASHES = ("-", "--", ":", "-.")  # colours repeat after ten runs; the dash tells them apart
_OUTCOMES = {"better": "tab:green", "worse": "tab:red", "tied": "0.55"}
_QID_TICKS = 60  # up to this many queries, each bar is labelled with its query id


class PlotWriter(Writer):
    """A figure of a curve table (`derived.curve_table`) or of a difference table."""

    levels = PLOT_LEVELS
    format: ClassVar[str]

    def check_available(self) -> None:
        """matplotlib is an optional extra: say how to install it before any data is read."""
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise SpecError(
                f"{self.format.upper()} plots need matplotlib, which cannot be imported ({exc}); "
                f"install it with: {INSTALL}"
            ) from None

    def write(self, con, table, path, manifest):
        import matplotlib.style

        columns, draw = (
            (_CURVE, pr_figure) if is_curve_table(table)
            else (_TRADEOFF, tradeoff_figure) if is_tradeoff_table(table)
            else (_DIFF, diff_figure)
        )  # fmt: skip
        if table == DISCRIMINATION_PAIRS:
            alpha = manifest["discrimination"]["alpha"]
            columns, draw = ASL_COLUMNS, lambda rows: asl_figure(rows, alpha, _figure)
        rows = con.execute(f"SELECT {columns} FROM {quote_identifier(table)}").fetchall()
        with matplotlib.style.context(["default", _STYLE]):
            figure = draw(rows)
            # The date would make every SVG differ; the creator (matplotlib's version) stays.
            metadata = {"Date": None} if self.format == "svg" else {}
            figure.savefig(path, format=self.format, dpi=_DPI, metadata=metadata)


_CURVE = "collection, run, recall, precision, n_queries"
#: the table of every pair's p-value, which the ASL curves draw (`compare.discrimination`)
DISCRIMINATION_PAIRS = "discrimination_pairs"
_DIFF = "collection, run, baseline, metric, qid, difference, outcome"
_TRADEOFF = "collection, run, metric, value, latency, latency_value, pareto, faster"


class PngWriter(PlotWriter):
    suffixes = (".png",)
    format = "png"


class SvgWriter(PlotWriter):
    suffixes = (".svg",)
    format = "svg"


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def pr_figure(rows: list[tuple]) -> Figure:
    """One axes per collection (runs of different collections are not comparable), one line per
    run: interpolated precision at each recall level. `rows`: (collection, run, recall,
    precision, n_queries), each run's levels in order."""
    curves: dict[str, dict[str, list[tuple]]] = {}
    for collection, run, *point in rows:
        curves.setdefault(collection, {}).setdefault(run, []).append(point)
    figure = _figure(4.8 * len(curves), 4.4)
    axes = figure.subplots(1, len(curves), squeeze=False)[0]
    for index, (ax, (collection, runs)) in enumerate(zip(axes, curves.items(), strict=True)):
        _draw_curves(ax, index, collection, runs)
    return figure


def _draw_curves(ax: Axes, index: int, collection: str, runs: dict[str, list[tuple]]) -> None:
    # The query count goes in the title, or beside each run when runs averaged different numbers.
    counts = {points[0][2] for points in runs.values()}
    lines = [_draw_line(ax, f"pr-{index}-{i}", i, points) for i, points in enumerate(runs.values())]
    labels = [run if len(counts) == 1 else f"{run} ({p[0][2]} queries)" for run, p in runs.items()]
    title = f"{collection} ({next(iter(counts))} queries)" if len(counts) == 1 else collection
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="recall", ylabel="interpolated precision", title=title)
    ax.grid(True, linewidth=0.5, alpha=0.4)
    # Handles given explicitly: a run named "_x" is still listed (matplotlib skips such labels).
    ax.legend(lines, labels, loc="upper right", fontsize="small", ncols=1 + len(lines) // 16)


def _draw_line(ax: Axes, gid: str, i: int, points: list[tuple]):
    """Run i's curve, its id `gid` in an SVG: (recall, precision, n_queries) in recall order."""
    recall, precision, _ = zip(*points, strict=True)
    (line,) = ax.plot(
        recall,
        precision,
        color=f"C{i % 10}",
        linestyle=_DASHES[i // 10 % len(_DASHES)],
        marker="o" if len(points) <= 11 else None,  # 101 markers would hide the line
        markersize=3,
        clip_on=False,  # the points at recall 0 and 1 sit on the frame
        gid=gid,
    )
    return line


def diff_figure(rows: list[tuple]) -> Figure:
    """One panel per run (and collection, for a baseline evaluated under several): the
    per-query differences of a metric against the baseline, as bars sorted from the best gain
    to the worst loss. `rows`: (collection, run, baseline, metric, qid, difference, outcome),
    each run's queries in that order."""
    several = len({row[0] for row in rows}) > 1
    panels: dict[str, list[tuple]] = {}
    for collection, run, *rest in rows:
        panels.setdefault(f"{run} ({collection})" if several else run, []).append(rest)
    figure = _figure(8.0, 0.8 + 2.4 * max(len(panels), 1))
    if not panels:  # no query was evaluated for a run and the baseline both
        figure.text(0.5, 0.5, "no query to compare", ha="center", va="center")
        return figure
    axes = figure.subplots(len(panels), 1, squeeze=False, sharey=True)[:, 0]
    # One scale for every panel, symmetric, so that gains and losses compare at a glance.
    limit = max(abs(row[5]) for row in rows) * 1.05 or 1.0
    for ax, (run, bars) in zip(axes, panels.items(), strict=True):
        _draw_differences(ax, run, bars, limit)
    baseline, metric = rows[0][2], rows[0][3]
    figure.suptitle(f"{metric}: per-query difference to {baseline}")
    return figure


def _draw_differences(ax: Axes, run: str, bars: list[tuple], limit: float) -> None:
    baseline, metric, qids, heights, outcomes = zip(*bars, strict=True)
    ax.bar(range(len(bars)), heights, width=0.8, color=[_OUTCOMES[o] for o in outcomes])
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set(xlim=(-0.6, len(bars) - 0.4), ylim=(-limit, limit), title=f"{run} vs {baseline[0]}")
    ax.set_ylabel(f"difference in {metric[0]}")
    if len(bars) <= _QID_TICKS:
        ax.set_xticks(range(len(bars)), qids, rotation=90, fontsize="x-small")
    else:
        ax.set_xticks([])
    ax.set_xlabel(f"{len(bars)} queries, sorted by difference")
    # The legend goes above the lower end: gains sit left and losses right, or the other way
    # round for a metric where lower is better.
    _legend_counts(ax, outcomes, "upper right" if heights[-1] <= heights[0] else "upper left")


def _legend_counts(ax: Axes, outcomes: tuple[str, ...], loc: str) -> None:
    """Wins, losses and ties in the legend: how many queries got better, worse or stayed."""
    from matplotlib.patches import Patch

    handles = [Patch(color=colour) for colour in _OUTCOMES.values()]
    labels = [f"{outcome}: {outcomes.count(outcome)}" for outcome in _OUTCOMES]
    ax.legend(handles, labels, loc=loc, fontsize="small")


def tradeoff_figure(rows: list[tuple]) -> Figure:
    """One axes per collection: each run a point, the latency statistic across and the
    effectiveness metric up, the runs on the Pareto front filled and joined by a step line,
    the others hollow. `rows`: (collection, run, metric, value, latency, latency_value,
    pareto, faster)."""
    panels: dict[str, list[tuple]] = {}
    for collection, *rest in rows:
        panels.setdefault(collection, []).append(rest)
    figure = _figure(5.2 * max(len(panels), 1), 4.4)
    if not panels:  # no run has both values
        figure.text(0.5, 0.5, "no run has both values", ha="center", va="center")
        return figure
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for ax, (collection, points) in zip(axes, panels.items(), strict=True):
        _draw_tradeoff(ax, collection, points)
    return figure


def _draw_tradeoff(ax: Axes, collection: str, points: list[tuple]) -> None:
    _, metric, _, latency, _, _, faster = points[0]
    front = sorted((p for p in points if p[5]), key=lambda p: p[4])
    if len(front) > 1:
        # between two runs of the front, the line holds the value of the one whose latency is
        # the better there: the left one's where lower is better, the right one's for QPS
        xs, ys = [p[4] for p in front], [p[2] for p in front]
        where = "post" if faster < 0 else "pre"
        ax.step(xs, ys, where=where, color="C0", linewidth=1, alpha=0.6, gid="pareto-front")
    for i, (run, _, value, _, latency_value, pareto, _) in enumerate(points):
        ax.plot([latency_value], [value], marker="o", markersize=7, linestyle="none",
                color="C0", markerfacecolor="C0" if pareto else "white",
                gid=f"point-{i}-{'front' if pareto else 'dominated'}")  # fmt: skip
        ax.annotate(run, (latency_value, value), textcoords="offset points",
                    xytext=(5, 4 if i % 2 == 0 else -11),
                    fontsize="small")  # fmt: skip
    if wide_apart([p[4] for p in points]):
        ax.set_xscale("log")
    ax.set(xlabel=latency, ylabel=metric, title=f"{collection}: {metric} against {latency}")
    ax.grid(True, linewidth=0.5, alpha=0.4)
    _legend_front(ax)


def _legend_front(ax: Axes) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", linestyle="none", color="C0", markerfacecolor=face)
               for face in ("C0", "white")]  # fmt: skip
    ax.legend(handles, ["Pareto front", "dominated"], loc="lower right", fontsize="small")


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [PngWriter, SvgWriter]
