"""The achieved significance level curves (`level: asl_plot`, Sakai 2006): per collection, one
line per metric and test through the pairs of runs' p-values, sorted, after the correction, with
the significance level drawn across; the pairs left of where a line crosses it are the pairs the
test tells apart. Drawn by `plots.PlotWriter` (matplotlib's style, no pyplot)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["ASL_COLUMNS", "asl_figure"]

#: what the figure reads of `discrimination_pairs`, each family's pairs in order
ASL_COLUMNS = "collection, metric, test, position, p_adjusted, significant"


def asl_figure(rows: list[tuple], alpha: float, new_figure) -> Figure:
    """One axes per collection, one line per (metric, test): the adjusted p-value of each pair,
    sorted; `new_figure(width, height)` makes the empty figure."""
    panels: dict[str, dict[tuple[str, str], list[tuple]]] = {}
    for collection, metric, test, *point in rows:
        panels.setdefault(collection, {}).setdefault((metric, test), []).append(point)
    figure = new_figure(4.8 * max(len(panels), 1), 4.4)
    if not panels:
        figure.text(0.5, 0.5, "no pair of runs to compare", ha="center", va="center")
        return figure
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for ax, (collection, lines) in zip(axes, panels.items(), strict=True):
        for i, ((metric, test), points) in enumerate(lines.items()):
            positions, p_values, significant = zip(*points, strict=True)
            label = f"{metric}, {test} ({sum(significant)}/{len(points)} significant)"
            ax.plot(positions, p_values, color=f"C{i % 10}", marker="o", markersize=3,
                    label=label, gid=f"asl-{collection}-{i}")  # fmt: skip
        ax.axhline(alpha, color="black", linestyle="--", linewidth=0.8, label=f"alpha = {alpha}")
        pairs = max(len(points) for points in lines.values())
        ax.set(xlim=(0.5, pairs + 0.5), ylim=(0, 1), title=collection,
               xlabel="pairs of runs, by p-value", ylabel="achieved significance level")  # fmt: skip
        ax.grid(True, linewidth=0.5, alpha=0.4)
        ax.legend(loc="upper left", fontsize="small")
    return figure
