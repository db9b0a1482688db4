"""`irpipe new-plugin NAME`: a plugin package made from the template in pipeline/templates/plugin.

The template's files (package data) are filled by plain string substitution of `{{key}}` tokens
(`PluginNames`' fields, and irpipe's version), and the package is written to a temporary folder
beside its destination, then renamed: a failure leaves nothing half-written.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import asdict, dataclass
from importlib.resources import files
from pathlib import Path

from pipeline._version import __version__
from pipeline.errors import OutputError, PluginError, SpecError

__all__ = ["FILES", "PluginNames", "create_plugin", "plugin_names", "render"]

#: template file -> its path in the new package (tokens are filled in paths too)
FILES = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "package_init.py.tmpl": "{{package}}/__init__.py",
    "test_conformance.py.tmpl": "tests/test_conformance.py",
    "workflow_test.yml.tmpl": ".github/workflows/test.yml",
}
_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


@dataclass(frozen=True)
class PluginNames:
    """What a plugin's NAME becomes: `err-ia` gives the distribution `irpipe-err-ia`, the
    package `irpipe_err_ia` and the measure `ErrIa`; `name` is the entry point's name."""

    name: str
    distribution: str
    package: str
    Measure: str  # noqa: N815 -- the template's token reads as the class it names


def plugin_names(name: str) -> PluginNames:
    """The names of a plugin called `name`, or SpecError if it is not a plugin name."""
    if not _NAME.fullmatch(name):
        raise SpecError(
            f"{name!r} is not a plugin name: use lowercase letters and digits, starting with a "
            "letter, in words joined by single - or _ (e.g. err or err-ia)"
        )
    words = re.split(r"[-_]", name)
    measure = "".join(word[:1].upper() + word[1:] for word in words)
    return PluginNames(name, f"irpipe-{name}", f"irpipe_{'_'.join(words)}", measure)


def render(text: str, names: PluginNames) -> str:
    """The template text with every `{{key}}` token replaced."""
    for key, value in {**asdict(names), "irpipe_version": __version__}.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def create_plugin(name: str, directory: Path) -> Path:
    """Create the package `irpipe-NAME/` in `directory` (made if missing); return its path."""
    names = plugin_names(name)
    _check_metric_name(names)
    target = directory / names.distribution
    if target.exists():
        raise OutputError(f"{target} already exists; choose another NAME or --dir")
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{names.distribution}-", dir=directory))
    try:
        _write_files(staging, names)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _write_files(root: Path, names: PluginNames) -> None:
    template = files("pipeline") / "templates" / "plugin"
    for source, destination in FILES.items():
        path = root / render(destination, names)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render((template / source).read_text(encoding="utf-8"), names), "utf-8")


def _check_metric_name(names: PluginNames) -> None:
    """The template's measure must be registrable beside every metric installed now."""
    from pipeline.contract.measure import Measure
    from pipeline.measures.namespace import Owner
    from pipeline.testing.install import registry_with

    attributes = {"name": names.Measure, "per_query": None, "__module__": names.package}
    probe = type(names.Measure, (Measure,), attributes)
    try:
        registry_with([probe], Owner(names.distribution, names.package))
    except PluginError as exc:
        raise SpecError(
            f"plugin name {names.name!r} would make the metric {names.Measure!r}, which irpipe "
            f"cannot register ({exc}); choose another NAME"
        ) from None
