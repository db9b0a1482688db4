"""Installed distributions' entry points, read once per state of the installation.

Finding entry points reads the metadata of every installed distribution, so its cost grows with the
environment: a researcher's has several hundred distributions, and irpipe would pay for them in
every process (twice: for its plugins and for pydantic's). The groups irpipe reads are kept in the
user's cache directory, one small JSON file per import path entry that holds distributions (a
site-packages directory, an egg), keyed by the names and modification times of the distributions'
metadata directories in it (a listing, not a reading). Installing, upgrading or removing a
distribution adds, replaces or removes such a directory, so the key changes and that entry's
metadata is read again; otherwise a process reads one small file per such entry. Entries without
distributions (a script's directory, the working directory) need no file, so the cache holds one
file per environment whatever the scripts run in it.

`IRPIPE_CACHE_DIR` names the directory (default `$XDG_CACHE_HOME/irpipe`, else `~/.cache/irpipe`);
a directory that cannot be written only means the metadata is read every time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GROUPS", "InstalledEntryPoint", "entry_points", "quiet_pydantic_plugins"]

#: The groups kept: irpipe's plugins, and pydantic's (which pydantic itself would look up).
GROUPS = ("irpipe", "pydantic")
_FORMAT = 2


@dataclass(frozen=True)
class InstalledEntryPoint:
    """One entry point and the distribution that declares it."""

    group: str
    name: str
    value: str  # `module:attr`, as the distribution declares it
    distribution: str | None
    version: str | None

    def load(self) -> object:
        """Import what the entry point names."""
        from importlib.metadata import EntryPoint

        return EntryPoint(self.name, self.value, self.group).load()


def entry_points(group: str) -> list[InstalledEntryPoint]:
    """The installed entry points of `group` (one of GROUPS), from the cache when it is current."""
    return [ep for ep in _installed() if ep.group == group]


def quiet_pydantic_plugins() -> None:
    """Spare pydantic its own reading of every distribution's metadata when none declares a
    pydantic plugin: its loader is told there are none, which is what its reading would find.
    Where a plugin is installed, pydantic finds and loads it as it always does."""
    import importlib

    try:
        loader = importlib.import_module("pydantic.plugin._loader")
    except ImportError:  # a pydantic without this loader reads the metadata itself
        return
    # Only a loader that has not looked yet (a pydantic whose loader differs is left to look).
    if getattr(loader, "_plugins", False) is None and not entry_points("pydantic"):
        loader._plugins = {}


#: This process's last reading: (installation key, entry points).
_found: tuple[list, list[InstalledEntryPoint]] | None = None

#: One path entry's distributions, in the order importlib finds them: (normalized name, the kept
#: groups' entry points it declares).
Distributions = list[tuple[str, list[InstalledEntryPoint]]]


def _installed() -> list[InstalledEntryPoint]:
    """The kept groups' entry points: this process's last reading while the installation is as it
    was (a test may put a distribution on the path), else each path entry's cached reading, else
    its metadata's."""
    global _found
    listings = [(entry, _metadata_in(os.path.abspath(entry or "."))) for entry in sys.path]
    if _found is None or _found[0] != listings:
        held = [_distributions_in(entry, listing) for entry, listing in listings if listing]
        _found = (listings, _first_of_each(held))
    return _found[1]


def _first_of_each(held: list[Distributions]) -> list[InstalledEntryPoint]:
    """The entry points of the first distribution of each name along the path, as importlib
    shadows a distribution by an earlier one of the same name."""
    seen: set[str] = set()
    found = []
    for distributions in held:
        for name, declared in distributions:
            if name not in seen:
                seen.add(name)
                found.extend(declared)
    return found


def _metadata_in(path: str) -> list | int | None:
    """What a path entry holds for importlib.metadata: a directory's `*.dist-info` and
    `*.egg-info`, each with its modification time (the directory's own time would be cheaper, but
    the working directory is often on the path and changes with every file written there); an
    archive's own time."""
    try:
        if not os.path.isdir(path):
            return os.stat(path).st_mtime_ns
        with os.scandir(path) as found:
            return sorted(
                [item.name, item.stat().st_mtime_ns]
                for item in found
                if item.name.endswith((".dist-info", ".egg-info"))
            )
    except OSError:
        return None


def _distributions_in(entry: str, listing: list | int) -> Distributions:
    """One path entry's distributions: from its cache file while the listing is the same."""
    path = _cache_file(entry)
    key = [os.path.abspath(entry or "."), listing, _FORMAT]
    found = _read_cache(path, key)
    if found is None:
        found = _scan(entry)
        _write_cache(path, key, found)
    return found


def _scan(entry: str) -> Distributions:
    """A path entry's distributions and their kept groups' entry points, read from the metadata."""
    from importlib.metadata import distributions

    found = []
    for dist in distributions(path=[entry]):
        declared = [ep for ep in dist.entry_points if ep.group in GROUPS]
        name, version = (dist.name, dist.version) if declared else (None, None)
        kept = [InstalledEntryPoint(ep.group, ep.name, ep.value, name, version) for ep in declared]
        found.append((_normalized(dist), kept))
    return found


def _normalized(dist) -> str:
    """The name importlib tells distributions apart by (its private `_normalized_name`, which a
    distribution read from a directory takes from the directory's name)."""
    name = getattr(dist, "_normalized_name", None) or dist.metadata["Name"] or ""
    return re.sub(r"[-_.]+", "_", name).lower()


def _cache_file(entry: str) -> Path:
    """The file keeping one path entry's reading: one per site-packages directory or egg."""
    configured = os.environ.get("IRPIPE_CACHE_DIR")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(configured) if configured else Path(base) / "irpipe"
    where = zlib.crc32(os.path.abspath(entry or ".").encode())
    return folder / f"entry-points-{where:08x}.json"


def _read_cache(path: Path, key: list) -> Distributions | None:
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept["key"] != key:
            return None
        return [
            (name, [InstalledEntryPoint(**ep) for ep in declared])
            for name, declared in kept["distributions"]
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(path: Path, key: list, found: Distributions) -> None:
    """Write atomically (processes may start side by side); a failure leaves no cache, no error."""
    kept = [[name, [ep.__dict__ for ep in declared]] for name, declared in found]
    text = json.dumps({"key": key, "distributions": kept})
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
