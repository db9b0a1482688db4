"""The benchmark's report: machine and versions, markdown tables, targets, agreement warnings."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Report", "agreement", "machine", "table"]

TOLERANCE = 1e-4  # trec_eval prints 4 decimals, so its own rounding stays within half of this
PACKAGES = ["irpipe", "duckdb", "pytrec-eval-terrier", "ir-measures", "ranx", "numpy"]


def table(headers: list[str], rows: list[list]) -> str:
    """A markdown table; floats are shown with 2 decimals."""
    cells = [[f"{c:.2f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])


def machine(trec_eval: str | None) -> list[tuple[str, str]]:
    """(item, value) pairs: date, CPU, cores, RAM, OS, Python and every tool's version."""
    items = [
        ("date", datetime.datetime.now().astimezone().isoformat(timespec="minutes")),
        ("CPU", _cpu_model()),
        ("cores", str(os.cpu_count())),
        ("RAM", _ram()),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
    ]
    items += [(name, _version(name)) for name in PACKAGES]
    return items + [("trec_eval", _trec_eval_version(trec_eval))]


def _cpu_model() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:  # not Linux
        lines = []
    for line in lines:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _ram() -> str:
    try:
        total_kb = int(Path("/proc/meminfo").read_text().split()[1])  # MemTotal comes first
        return f"{total_kb / 2**20:.1f} GB"
    except (OSError, ValueError, IndexError):
        return "unknown"


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _trec_eval_version(binary: str | None) -> str:
    if not binary:
        return "not found"
    done = subprocess.run([binary, "-v"], capture_output=True, text=True)
    return (done.stdout + done.stderr).strip().splitlines()[0] + f" ({binary})"


def agreement(results: dict[str, dict[str, float]], reference: str) -> list[str]:
    """One warning per tool that reports a shared value differently from the reference tool."""
    if reference not in results:
        return []
    ours = results[reference]
    warnings = []
    for tool, theirs in results.items():
        shared = sorted(theirs.keys() & ours.keys())
        differ = [
            f"{n} ({theirs[n]:.6f} vs {ours[n]:.6f})" for n in shared if _differ(theirs[n], ours[n])
        ]
        if differ:
            warnings.append(f"WARNING: {tool} disagrees with {reference} on {', '.join(differ)}")
    return warnings


def _differ(a: float, b: float) -> bool:
    return abs(a - b) > TOLERANCE


@dataclass
class Report:
    """Sections in the order run, plus the targets they checked."""

    header: list[tuple[str, str]]
    sections: list[str] = field(default_factory=list)
    targets: list[list] = field(default_factory=list)

    def target(
        self,
        name: str,
        value: float,
        limit: float,
        stretch: float | None = None,
        strict: bool = False,
    ) -> None:
        """Record a ratio against its target (lower is better; `strict`: below, not at, the limit)."""
        met = value < limit if strict else value <= limit
        verdict = "met" if met else "missed"
        if stretch is not None and value <= stretch:
            verdict += " (stretch met)"
        goal = f"{'<' if strict else '<='} {limit}" + (f" (stretch {stretch})" if stretch else "")
        self.targets.append([name, f"{value:.3f}", goal, verdict])

    def figure(self, name: str, value: float) -> None:
        """Record a ratio the report shows beside the targets, with no goal of its own."""
        self.targets.append([name, f"{value:.3f}", "-", "reported"])

    def render(self) -> str:
        """The whole report as markdown."""
        parts = ["# irpipe benchmark", table(["", ""], [list(item) for item in self.header])]
        parts += self.sections
        if self.targets:
            headers = ["target", "measured", "goal", "verdict"]
            parts += ["## Targets", table(headers, self.targets)]
        return "\n\n".join(parts) + "\n"
