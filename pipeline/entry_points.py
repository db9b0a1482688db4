"""Installed distributions' entry points, read once per state of the installation.

Finding entry points reads the metadata of every installed distribution, so its cost grows with the
environment: a researcher's has several hundred distributions, and irpipe would pay for them in
every process (twice: for its plugins and for pydantic's). The groups irpipe reads are kept in a
small JSON file in the user's cache directory, keyed by the import path and, in each of its
entries, the names and modification times of the distributions' metadata directories (a listing,
not a reading). Installing, upgrading or removing a distribution adds, replaces or removes such a
directory, so the key changes and the metadata is read again; otherwise a process reads one small
file.

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


def _installation_key() -> list:
    """The interpreter, and for each import path entry the distributions' metadata it holds, each
    with its modification time: a directory's `*.dist-info` and `*.egg-info` (what importlib.metadata
    reads), an archive's own time. The entries' own times would be cheaper, but the first entry is
    often the working directory, whose time changes with every file written there."""
    key: list = [sys.executable, sys.version, _FORMAT]
    for entry in sys.path:
        key.append([entry, _metadata_in(os.path.abspath(entry or "."))])
    return key


def _metadata_in(path: str) -> list | int | None:
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
    """One file per environment and import path, so that two virtual environments (or two
    PYTHONPATHs) do not overwrite each other's readings."""
    configured = os.environ.get("IRPIPE_CACHE_DIR")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(configured) if configured else Path(base) / "irpipe"
    where = zlib.crc32("\0".join([sys.prefix, *sys.path]).encode())
    return folder / f"entry-points-{where:08x}.json"


def _read_cache(key: list) -> list[InstalledEntryPoint] | None:
    try:
        kept = json.loads(_cache_file().read_text(encoding="utf-8"))
        if kept["key"] != key:
            return None
        return [InstalledEntryPoint(**ep) for ep in kept["entry_points"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(key: list, found: list[InstalledEntryPoint]) -> None:
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
