"""Entry points are read from the installation's metadata once per state of the installation:
later processes read the cache, and installing or removing a distribution is seen at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import entry_points
from tests.conftest import fake_distribution

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "configs" / "quickstart.yaml"

# A process that validates the quickstart and says how often the metadata of every installed
# distribution was read (a discovery without a name: a lookup by name is not a scan).
SCANS = """
import importlib.metadata as metadata, sys
scans = []
discover = metadata.Distribution.discover.__func__
def counted(cls, **kwargs):
    if kwargs.get("name") is None:
        scans.append(1)
    return discover(cls, **kwargs)
metadata.Distribution.discover = classmethod(counted)
from pipeline.cli import main
code = main(["validate", sys.argv[1]])
print("scans", len(scans), "exit", code)
"""


def _scans(cache: Path, path: Path | None = None, cwd: Path = ROOT) -> int:
    env = {"IRPIPE_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    if path is not None:
        env["PYTHONPATH"] = str(path)
    spec = str(QUICKSTART)
    done = subprocess.run(
        [sys.executable, "-c", SCANS, spec], capture_output=True, text=True, cwd=cwd, env=env
    )
    assert done.returncode == 0, done.stderr
    *_, scans, _, code = done.stdout.split()
    assert code == "0", done.stdout  # the spec validated
    return int(scans)


def test_a_second_process_reads_no_distributions_metadata(tmp_path):
    """Neither irpipe nor pydantic scans the installation once the cache holds it."""
    assert _scans(tmp_path / "cache") >= 1
    assert _scans(tmp_path / "cache") == 0


def test_files_written_in_the_working_directory_change_nothing(tmp_path):
    """The working directory is on the path (`python -c`, notebooks): what an evaluation writes
    there is no distribution, and reads nothing again."""
    work = tmp_path / "work"
    work.mkdir()
    _scans(tmp_path / "cache", cwd=work)
    (work / "out.csv").write_text("written\n")
    (work / "out").mkdir()
    assert _scans(tmp_path / "cache", cwd=work) == 0


def test_a_distribution_installed_later_is_found(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _scans(tmp_path / "cache", site)
    assert _scans(tmp_path / "cache", site) == 0
    fake_distribution(site, "irpipe-late", {"late": "irpipe_late"})
    assert _scans(tmp_path / "cache", site) >= 1  # the site's time changed: read again
    file = tmp_path / "cache" / entry_points._cache_file(str(site)).name
    cached = json.loads(file.read_text())["distributions"]
    assert ["irpipe_late", [{"group": "irpipe", "name": "late", "value": "irpipe_late",
            "distribution": "irpipe-late", "version": "1.0"}]] in cached  # fmt: skip


def test_scripts_run_from_many_directories_share_one_cache(tmp_path):
    """A script's directory is first on its path; holding no distribution, it needs no file, so
    the cache does not grow with the places scripts run from."""
    cache = tmp_path / "cache"
    files = []
    for place in ("one", "two", "three"):
        script = tmp_path / place / "evaluate.py"
        script.parent.mkdir()
        script.write_text(f"from pipeline.cli import main\nmain(['validate', '{QUICKSTART}'])\n")
        env = {"IRPIPE_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
        done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True)
        assert done.returncode == 0, done.stderr
        files.append(sorted(path.name for path in cache.iterdir()))
    assert files[0] and files[0] == files[1] == files[2]


def test_in_one_process_a_new_path_entry_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("IRPIPE_CACHE_DIR", str(tmp_path / "cache"))
    before = {ep.name for ep in entry_points.entry_points("irpipe")}
    site = fake_distribution(tmp_path / "site", "irpipe-extra", {"extra": "irpipe_extra"})
    monkeypatch.syspath_prepend(str(site))
    after = entry_points.entry_points("irpipe")
    assert {ep.name for ep in after} == before | {"extra"}
    [extra] = [ep for ep in after if ep.name == "extra"]
    assert (extra.distribution, extra.version, extra.value) == (
        "irpipe-extra",
        "1.0",
        "irpipe_extra",
    )


def test_an_earlier_distribution_of_a_name_shadows_a_later_one(tmp_path, monkeypatch):
    """As importlib reads them: the first distribution of a name on the path is the one."""
    monkeypatch.setenv("IRPIPE_CACHE_DIR", str(tmp_path / "cache"))
    late = fake_distribution(tmp_path / "late", "irpipe-twin", {"late": "irpipe_late"})
    early = fake_distribution(tmp_path / "early", "irpipe_twin", {"early": "irpipe_early"})
    monkeypatch.syspath_prepend(str(late))
    monkeypatch.syspath_prepend(str(early))
    assert entry_points.entry_points("irpipe") == _read_by_importlib("irpipe")
    assert "early" in {ep.name for ep in entry_points.entry_points("irpipe")}


def _read_by_importlib(group: str) -> list[entry_points.InstalledEntryPoint]:
    """The group's entry points as importlib reads them, with no cache."""
    from importlib.metadata import entry_points as installed

    return [
        entry_points.InstalledEntryPoint(group, ep.name, ep.value, ep.dist.name, ep.dist.version)
        for ep in installed(group=group)
    ]


def test_a_cache_that_cannot_be_written_only_costs_a_reading(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("IRPIPE_CACHE_DIR", str(blocked / "cache"))
    monkeypatch.setattr(entry_points, "_found", None)
    assert entry_points.entry_points("irpipe") == _read_by_importlib("irpipe")
    assert blocked.read_text() == "not a directory"


@pytest.mark.parametrize("text", ["{", '{"key": 1}', '{"key": [], "entry_points": [{"x": 1}]}'])
def test_a_damaged_cache_is_read_again(tmp_path, monkeypatch, text):
    monkeypatch.setenv("IRPIPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(entry_points, "_found", None)
    for entry in sys.path:
        entry_points._cache_file(entry).write_text(text)
    assert entry_points.entry_points("irpipe") == _read_by_importlib("irpipe")
    site = next(entry for entry in sys.path if entry_points._metadata_in(entry))
    assert json.loads(entry_points._cache_file(site).read_text())["key"]  # rewritten whole


PYDANTIC_PLUGIN = """
class Plugin:
    def new_schema_validator(self, *args, **kwargs):
        print("pydantic plugin called")
        return None, None, None

plugin = Plugin()
"""


def test_an_installed_pydantic_plugin_is_still_loaded_by_pydantic(tmp_path):
    site = tmp_path / "site"
    info = site / "observer-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: observer\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nobserver = observer:plugin\n")
    (site / "observer.py").write_text(PYDANTIC_PLUGIN)
    for _ in range(2):  # the first process fills the cache, the second reads it
        env = {"IRPIPE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(site)}
        done = subprocess.run(
            [sys.executable, "-m", "pipeline.cli", "validate", "configs/quickstart.yaml"],
            capture_output=True, text=True, cwd=ROOT, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "pydantic plugin called" in done.stdout
