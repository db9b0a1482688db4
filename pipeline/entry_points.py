"""Installed distributions' entry points, read once per state of the installation.

Finding entry points reads the metadata of every installed distribution, so its cost grows with the
environment: a researcher's has several hundred distributions, and irpipe would pay for them in
every process (twice: for its plugins and for pydantic's). The groups irpipe reads are kept in a
small JSON file in the user's cache directory, keyed by the import path and the modification time
of each of its entries. Installing, upgrading or removing a distribution adds or removes a
directory in one of those entries, which changes that entry's time, so the key changes and the
metadata is read again; otherwise a process reads one small file.

`IRPIPE_CACHE_DIR` names the directory (default `$XDG_CACHE_HOME/irpipe`, else `~/.cache/irpipe`);
a directory that cannot be written only means the metadata is read every time.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GROUPS", "InstalledEntryPoint", "entry_points", "quiet_pydantic_plugins"]

#: The groups kept: irpipe's plugins, and pydantic's (which pydantic itself would look up).
GROUPS = ("irpipe", "pydantic")
_FORMAT = 1


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
    if entry_points("pydantic"):
        return
    import importlib

    loader = importlib.import_module("pydantic.plugin._loader")
    # Only a loader that has not looked yet (and, with another pydantic, one that has the same
    # cache: otherwise nothing is changed and pydantic reads the metadata itself).
    if getattr(loader, "_plugins", False) is None:
        loader._plugins = {}


#: This process's last reading: (installation key, entry points).
_found: tuple[list[list], list[InstalledEntryPoint]] | None = None


def _installed() -> list[InstalledEntryPoint]:
    """The kept groups' entry points: this process's last reading while the installation is as it
    was (a test may put a distribution on the path), else the cache file's, else the metadata's."""
    global _found
    key = _installation_key()
    if _found is None or _found[0] != key:
        found = _read_cache(key)
        if found is None:
            found = _scan()
            _write_cache(key, found)
        _found = (key, found)
    return _found[1]


def _installation_key() -> list[list]:
    """The interpreter, and each import path entry with its modification time (None if absent)."""
    entries: list[list] = [[sys.executable, sys.version, _FORMAT]]
    for entry in sys.path:
        path = os.path.abspath(entry or ".")
        try:
            entries.append([path, os.stat(path).st_mtime_ns])
        except OSError:
            entries.append([path, None])
    return entries


def _scan() -> list[InstalledEntryPoint]:
    """Every distribution's entry points of the kept groups, read from its metadata."""
    from importlib.metadata import entry_points as installed

    found = []
    for group in GROUPS:
        for ep in installed(group=group):
            dist = ep.dist
            name, version = (dist.name, dist.version) if dist is not None else (None, None)
            found.append(InstalledEntryPoint(group, ep.name, ep.value, name, version))
    return found


def _cache_file() -> Path:
    """One file per environment, so that two virtual environments do not overwrite each other's."""
    configured = os.environ.get("IRPIPE_CACHE_DIR")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(configured) if configured else Path(base) / "irpipe"
    return folder / f"entry-points-{zlib.crc32(sys.prefix.encode()):08x}.json"


def _read_cache(key: list[list]) -> list[InstalledEntryPoint] | None:
    try:
        kept = json.loads(_cache_file().read_text(encoding="utf-8"))
        if kept["key"] != key:
            return None
        return [InstalledEntryPoint(**ep) for ep in kept["entry_points"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(key: list[list], found: list[InstalledEntryPoint]) -> None:
    """Write atomically (processes may start side by side); a failure leaves no cache, no error."""
    path = _cache_file()
    text = json.dumps({"key": key, "entry_points": [ep.__dict__ for ep in found]})
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
