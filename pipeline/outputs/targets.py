"""What irpipe may write: every path it writes or replaces, checked before any data is read.

A path irpipe writes (`Written`: an output and its manifest, the dashboard's directory, the
history, a JUnit report, the files `to_spec` writes) must not be, hold or lie inside a path it must
keep (`Kept`: an input, the spec, the spec's directory, or another path it writes). Where a path
already exists, irpipe replaces it only if irpipe wrote it: an output has its manifest beside it,
the dashboard's directory holds `MARKER` (or the layout of a site of an earlier irpipe), a JUnit
report is irpipe's suite, a `to_spec` directory's spec begins with `TO_SPEC_HEADER`. Anything
else is refused with the key that named the path, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import SpecError

__all__ = [
    "MARKER",
    "MARKER_TEXT",
    "TO_SPEC_HEADER",
    "Kept",
    "Written",
    "check_written",
    "manifest_of",
    "marked_site",
]

#: the file that marks a directory as a dashboard irpipe wrote (and may replace)
MARKER = ".irpipe-dashboard"
MARKER_TEXT = (
    "A dashboard written by irpipe. `irpipe dashboard --out` and a spec's history.dashboard\n"
    "replace this directory whole: keep nothing of your own in it.\n"
)
#: the first line of a spec `Results.to_spec` writes (its directory's files are irpipe's)
TO_SPEC_HEADER = "# Written by irpipe's Results.to_spec: its files are replaced by the next one."

#: the entries of a dashboard written before `MARKER` existed, recognised as one
_EARLIER_SITE = {"index.html", "assets", "evaluations"}


@dataclass(frozen=True)
class Kept:
    """A path irpipe must not write, replace or delete: `what` names it in messages, `fix` says
    what to do instead. Files may be written inside an `enclosing` directory (the spec's)."""

    path: Path
    what: str
    fix: str = "name another path"
    enclosing: bool = False
    also: bool = False  # another path irpipe writes: "is also outputs.0"


@dataclass(frozen=True)
class Written:
    """A path irpipe writes: `kind` is "output" (a file with its manifest beside it),
    "dashboard" (a directory replaced whole), "history" (a DuckDB file appended to), "report"
    (a JUnit file) or "to_spec" (a file of a `to_spec` directory). `key` names it to others,
    `where` begins messages about it (`spec.yaml:12: outputs.0.path`)."""

    path: Path
    kind: str
    key: str
    where: str

    def paths(self) -> tuple[Path, ...]:
        """Every path it writes (an output's manifest too)."""
        return (self.path, manifest_of(self.path)) if self.kind == "output" else (self.path,)

    def as_kept(self) -> list[Kept]:
        """How it stands in the way of another path irpipe writes (an output's manifest too)."""
        if self.kind == "output":
            manifest = Kept(manifest_of(self.path), f"the manifest of {self.key}")
            return [Kept(self.path, self.key, "name each output once", also=True), manifest]
        noun = _NOUNS[self.kind]
        return [Kept(self.path, noun if self.key == "history" else f"{noun} ({self.key})")]


_NOUNS = {
    "dashboard": "the dashboard",
    "history": "the history",
    "report": "the JUnit report",
    "to_spec": "a file to_spec writes",
}


def manifest_of(path: Path) -> Path:
    """The manifest written beside an output."""
    return path.with_name(path.name + ".manifest.json")


def check_written(written: Iterable[Written], kept: Iterable[Kept]) -> None:
    """SpecError (naming the key and the path) for the first path in `written` that is, holds or
    lies inside a path in `kept` or another in `written`, or that replaces what irpipe did not
    write."""
    # A directory replaced whole first: what it would delete says most about the mistake.
    written = sorted((_resolved(w) for w in written), key=lambda w: w.kind != "dashboard")
    keeping = {k.path.resolve(): k for k in kept}
    for index, target in enumerate(written):
        # Of two targets named alike, the later is the mistake; nesting is found from either.
        earlier = _kept_of(written[:index])
        _check_same(target, {**keeping, **earlier})
        _check_nested(target, {**keeping, **earlier, **_kept_of(written[index + 1 :])})
        _check_replaceable(target)


def _kept_of(written: list[Written]) -> dict[Path, Kept]:
    return {kept.path: kept for target in written for kept in target.as_kept()}


def _resolved(target: Written) -> Written:
    """The target with its path made absolute, symbolic links followed: two names of one file
    are one path."""
    return Written(target.path.resolve(), target.kind, target.key, target.where)


def _check_same(target: Written, kept: dict[Path, Kept]) -> None:
    """Neither the target nor its manifest is a path irpipe keeps or writes otherwise."""
    for path in target.paths():
        found = kept.get(path)
        if found is None:
            continue
        own = "" if path == target.path else f"'s manifest {path.name}"
        also = "also " if found.also else ""
        fix = "name another path" if found.also and target.kind != "output" else found.fix
        raise SpecError(f"{target.where}: {target.path}{own} is {also}{found.what}; {fix}")


def _check_nested(target: Written, kept: dict[Path, Kept]) -> None:
    """The target lies inside no path irpipe keeps (but the spec's directory), and a directory
    replaced whole holds none."""
    for parent in target.path.parents:
        found = kept.get(parent)
        if found is not None and not found.enclosing:
            raise SpecError(
                f"{target.where}: {target.path} lies inside {found.what} ({parent}); name a path "
                "outside it"
            )
    if target.kind == "dashboard":
        _check_holds_nothing(target, kept)


def _check_holds_nothing(target: Written, kept: dict[Path, Kept]) -> None:
    """A directory replaced whole holds nothing irpipe must keep."""
    for path, found in kept.items():
        if target.path in path.parents:
            raise SpecError(
                f"{target.where}: {target.path} holds {found.what} ({path}), and the dashboard "
                "replaces its directory whole; name a directory of its own"
            )


def _check_replaceable(target: Written) -> None:
    """An existing path is replaced only where irpipe wrote it."""
    path = target.path
    if not path.exists():
        if not path.is_symlink():
            return
        raise SpecError(f"{target.where}: {path} is a broken symbolic link; name another path")
    problem = _REPLACEABLE[target.kind](path)
    if problem:
        raise SpecError(f"{target.where}: {path} {problem}")


def _output(path: Path) -> str | None:
    if path.is_dir():
        return "is a directory; name a file"
    if not manifest_of(path).is_file():
        return (
            f"exists and irpipe did not write it (no {manifest_of(path).name} beside it); "
            "move it away or name another path"
        )
    return None


def _dashboard(path: Path) -> str | None:
    if not path.is_dir():
        return "is a file, and the dashboard is a directory; name a new or empty directory"
    if marked_site(path):
        return None
    return (
        f"exists and is not a dashboard irpipe wrote (no {MARKER} in it), and the dashboard "
        "replaces its directory whole; name a new or empty directory"
    )


def marked_site(path: Path) -> bool:
    """Whether a directory is empty or a dashboard irpipe wrote (so it may be replaced)."""
    names = {entry.name for entry in path.iterdir()}
    if not names or MARKER in names:
        return True
    assets = path / "assets"
    return names <= _EARLIER_SITE | _compare_pages(names) and (assets / "vega.js").is_file()


def _compare_pages(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith("compare-") and n.endswith(".html")}


def _history(path: Path) -> str | None:
    # Whether it is a history (and of this version) is the history's own check, exit 6.
    return "is a directory; the history is a DuckDB file" if path.is_dir() else None


def _report(path: Path) -> str | None:
    if path.is_dir():
        return "is a directory; name a file such as checks.xml"
    with path.open("rb") as file:
        head = file.read(512)
    if b'<testsuite name="irpipe"' in head:
        return None
    return "exists and is not a JUnit report irpipe wrote; move it away or name another path"


def _to_spec(path: Path) -> str | None:
    if path.is_dir():
        return "is a directory; to_spec writes a file there"
    spec = path.parent / "spec.yaml"
    if spec.is_file() and spec.read_text("utf-8", errors="replace").startswith(TO_SPEC_HEADER):
        return None
    return (
        f"exists, and {path.parent} is not a directory to_spec wrote (its spec.yaml does not "
        "begin with irpipe's header); give to_spec a new or empty directory"
    )


_REPLACEABLE = {
    "output": _output,
    "dashboard": _dashboard,
    "history": _history,
    "report": _report,
    "to_spec": _to_spec,
}
