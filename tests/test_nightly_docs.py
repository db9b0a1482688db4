"""The guide's nightly job (configs/README.md, its blocks marked `<!-- test: nightly-... -->`), as
cron, a systemd timer and a GitHub Actions job: each command run as shown, twice, in a copy of
configs/ standing for /srv/eval (the first night records and skips the
gate against `previous`; the second reuses every run and passes it). `irpipe` is this checkout's
CLI (`python -m pipeline.cli`); the Actions job's `pip install irpipe` step is the one not run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest
import yaml
from docblocks import marked

ROOT = Path(__file__).resolve().parents[1]
GUIDE = "configs/README.md"
IRPIPE = f"{sys.executable} -m pipeline.cli"


def _block(name: str) -> str:
    (block,) = marked(name, GUIDE)
    return block.text


def _cron() -> tuple[str, str]:
    (entry,) = _block("nightly-cron").strip().splitlines()
    schedule, command = entry.split(None, 5)[:5], entry.split(None, 5)[5]
    assert schedule == ["15", "2", "*", "*", "*"]
    return "/srv/eval", command


def _systemd() -> tuple[str, str]:
    service = _block("nightly-systemd-service").splitlines()
    service = dict(line.split("=", 1) for line in service if "=" in line)
    timer = _block("nightly-systemd-timer")
    assert "OnCalendar=*-*-* 02:15:00" in timer and service["Type"] == "oneshot"
    return service["WorkingDirectory"], service["ExecStart"]


def _actions() -> tuple[str, str]:
    steps = yaml.safe_load(_block("nightly-actions"))["jobs"]["evaluate"]["steps"]
    runs = [step["run"] for step in steps if "run" in step and step["run"] != "pip install irpipe"]
    return "", " && ".join(runs)  # the job runs in the checkout, where the spec is


JOBS = {"cron": _cron, "systemd": _systemd, "github_actions": _actions}


def _night(command: str, home: Path, workdir: str) -> subprocess.CompletedProcess:
    shell = command.replace("/usr/local/bin/irpipe", "irpipe").replace("/srv/eval", str(home))
    shell = re.sub(r"(^|&& )irpipe ", rf"\g<1>{IRPIPE} ", shell)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IRPIPE_LOAD_PLUGINS": ""}
    cwd = home if workdir in ("", "/srv/eval") else Path(workdir)
    return subprocess.run(["bash", "-c", shell], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("job", JOBS)
def test_the_nightly_job_runs_as_the_guide_shows_it(tmp_path, job):
    workdir, command = JOBS[job]()
    home = tmp_path / "eval"
    shutil.copytree(ROOT / "configs" / "data", home / "data")
    shutil.copy(ROOT / "configs" / "nightly.yaml", home)
    (home / "results").mkdir(exist_ok=True)  # the one-time set-up the guide names
    log = home / "nightly.log"  # the cron entry's; the others print to the job's own log
    for night in (1, 2):
        logged = log.read_text() if log.exists() else ""
        done = _night(command, home, workdir)
        said = done.stdout + done.stderr + (log.read_text()[len(logged) :] if log.exists() else "")
        assert done.returncode == 0, said
        if night == 1:  # the gate against previous has nothing to compare with yet
            assert re.fullmatch(r"Warning: .*gates\.0: no previous evaluation .* skipped\n", said)
        else:
            assert said == ""  # --quiet, every check passed
        suite = ET.parse(home / "results" / "junit.xml").getroot()
        assert int(suite.get("tests")) == 4 and int(suite.get("failures")) == 0
    with duckdb.connect(str(home / "results" / "history.duckdb"), read_only=True) as con:
        reused = con.execute(
            "SELECT evaluation_id, bool_and(cached) FROM evaluation_runs GROUP BY ALL ORDER BY 1"
        ).fetchall()
    assert reused == [(1, False), (2, True)]
