"""The install check's groundwork: its settings, its failure, pyproject.toml's extras and floors,
and the workspace and case directories whose commands run in a clean virtual environment.

Imported by outputs.py, cases.py and check.py beside it (the script's directory is on sys.path).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FLOORS = Path(__file__).resolve().parent / "floors.txt"
#: Extras of pyproject.toml that users do not install: they get no case.
NOT_USER_EXTRAS = frozenset({"test", "bench"})
#: pip's options: quiet; and no bytecode compiled at install (half of installing scipy's time),
#: Python compiles what a case imports.
PIP_OPTIONS = ("--disable-pip-version-check", "-q")
PIP_INSTALL = ("install", *PIP_OPTIONS, "--no-compile")
#: Seconds any one command may take (a Spark that hangs must not hang the CI).
TIMEOUT = 900
#: How irpipe's warnings start on stderr: its own, and a plugin's it did not load.
IRPIPE_WARNINGS = ("Warning:", "irpipe: plugin")


class CheckFailed(Exception):
    """A case's expectation failed; the message says which."""


def require(condition: object, message: str) -> None:
    """Fail the case with `message` unless `condition` holds."""
    if not condition:
        raise CheckFailed(message)


def canonical(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(version: str) -> tuple[int, ...]:
    """A release number without its trailing zeros: 1.5, 1.5.0 and 1.5.0.0 are one key."""
    parts = [int(part) for part in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def pyproject(root: Path = REPO) -> dict:
    """pyproject.toml's [project] table."""
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def user_extras(project: dict) -> list[str]:
    """The extras a user installs: all of [project.optional-dependencies] but test and bench."""
    return [
        name for name in project.get("optional-dependencies", {}) if name not in NOT_USER_EXTRAS
    ]


def core_floors(project: dict) -> dict[str, str]:
    """Each core dependency's declared floor (`name>=floor`), by canonical name; a dependency
    without a floor fails the check."""
    floors = {}
    for requirement in project["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group()
        floor = re.search(r">=\s*([0-9][0-9.]*)", requirement)
        require(floor, f"pyproject.toml: core dependency {requirement!r} declares no floor (>=)")
        floors[canonical(name)] = floor.group(1)
    return floors


def floor_pins(path: Path = FLOORS) -> dict[str, str]:
    """floors.txt's pins (`name==version`; comments and blank lines skipped), by canonical name."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = (part.strip() for part in line.split("=="))
            pins[canonical(name)] = version
    return pins


def pins_drift(pins: dict[str, str], floors: dict[str, str]) -> list[str]:
    """How floors.txt differs from pyproject.toml's floors: one line a difference."""
    problems = [
        f"{name}: pyproject.toml has no core dependency of this name"
        for name in pins.keys() - floors.keys()
    ]
    problems += [
        f"{name}>={floors[name]}: floors.txt lacks its pin" for name in floors.keys() - pins.keys()
    ]
    for name in sorted(pins.keys() & floors.keys()):
        if version_key(pins[name]) != version_key(floors[name]):
            problems.append(
                f"{name}: floors.txt pins {pins[name]}, pyproject.toml's floor is {floors[name]}"
            )
    return problems


def clean_env(venv: Path) -> dict[str, str]:
    """This process's environment for a command of `venv`: its bin/ first on PATH, and nothing
    that would let another environment, user site-packages or irpipe setting leak in."""
    leaks = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_TARGET", "PIP_PREFIX")
    env = {key: value for key, value in os.environ.items() if key not in leaks}
    env = {key: value for key, value in env.items() if not key.startswith(("IRPIPE_", "PYSPARK_"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONNOUSERSITE"] = "1"
    return env


def run_logged(
    command: list[str], log: Path, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess:
    """Run `command`, append it, its output and its exit code and time to `log`; a timeout fails
    the case."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ (cd {cwd} && {' '.join(command)})\n")
    start = time.monotonic()
    try:
        result = subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
    except subprocess.TimeoutExpired as exc:
        raise CheckFailed(f"{' '.join(command)}: no answer in {TIMEOUT} s") from exc
    with log.open("a", encoding="utf-8") as out:
        out.write(result.stdout + result.stderr)
        out.write(f"[exit {result.returncode}, {time.monotonic() - start:.1f} s]\n")
    return result


@dataclass
class Workspace:
    """What the cases share: the copy of the working tree, the wheels built from it once, each
    case's outcome (as a future, so that a case can wait for another's) and the logs directory."""

    root: Path
    logs: Path
    outcomes: dict[str, cf.Future]
    keep: bool = False

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def wheels(self) -> Path:
        return self.root / "wheels"

    @property
    def pip(self) -> Path:
        """The Python of the one environment with pip: it builds the wheels and installs into
        every case's environment (`pip --python`), which has no pip of its own."""
        return self.root / "pip" / "bin" / "python"

    def wheel(self, name: str) -> Path:
        """The wheel built for distribution `name`."""
        pattern = f"{canonical(name).replace('-', '_')}-*.whl"
        found = sorted(self.wheels.glob(pattern))
        require(len(found) == 1, f"expected one wheel {pattern} in {self.wheels}, found {found}")
        return found[0]

    def irpipe(self, extra: str | None = None) -> str:
        """The requirement installing irpipe's wheel, with `extra`."""
        return f"{self.wheel('irpipe')}[{extra}]" if extra else str(self.wheel("irpipe"))

    def plugins(self) -> dict[str, Path]:
        """Every package under plugins/: its distribution name and wheel."""
        names = [
            pyproject(path.parent)["name"]
            for path in sorted(self.src.glob("plugins/*/pyproject.toml"))
        ]
        return {name: self.wheel(name) for name in names}

    def work_of(self, name: str) -> Path:
        """The configs/ copy of case `name` once that case has passed; fails if it failed."""
        outcome = self.outcomes[name].result()
        require(outcome.ok, f"the {name} case failed, so there is nothing to compare with")
        return outcome.work


class Case:
    """One case's directory: its virtual environment, its copy of configs/ and its log."""

    def __init__(self, name: str, ws: Workspace) -> None:
        self.name, self.ws = name, ws
        self.root = ws.root / "cases" / name
        self.venv, self.work = self.root / "venv", self.root / "configs"
        self.log = ws.logs / f"{name}.log"

    def run(self, *command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """Run a command in this case's environment (in its configs/ copy unless `cwd`); a
        non-zero exit fails the case."""
        argv = [str(part) for part in command]
        result = run_logged(argv, self.log, cwd or self.work, clean_env(self.venv))
        shown = " ".join([Path(argv[0]).name, *argv[1:4]])
        require(result.returncode == 0, f"`{shown} ...` exited {result.returncode}")
        return result

    def setup(self, *requirements: str | Path, options: tuple[str, ...] = ()) -> None:
        """A new virtual environment holding only `requirements`, and a fresh copy of configs/."""
        shutil.copytree(self.ws.src / "configs", self.work)
        self.run(sys.executable, "-m", "venv", "--without-pip", self.venv)
        python = self.venv / "bin" / "python"
        self.run(
            self.ws.pip, "-m", "pip", "--python", python, *PIP_INSTALL, *options, *requirements
        )

    def python(self, *args: str | Path) -> subprocess.CompletedProcess:
        """The environment's Python."""
        return self.run(self.venv / "bin" / "python", *args)

    def python_json(self, code: str, *args: str | Path) -> object:
        """What a snippet run by the environment's Python prints as JSON."""
        return json.loads(self.python("-c", code, *args).stdout)

    def irpipe(self, *args: str | Path) -> subprocess.CompletedProcess:
        """The environment's `irpipe` command, in the configs/ copy: it must exit 0 and warn of
        nothing (no `Warning: ...` line on stderr, nor a refused plugin's `irpipe: plugin ...`)."""
        result = self.run(self.venv / "bin" / "irpipe", *args)
        warned = [line for line in result.stderr.splitlines() if line.startswith(IRPIPE_WARNINGS)]
        require(not warned, f"irpipe {args[0]} warned:\n" + "\n".join(warned))
        return result

    def spec(self, name: str) -> dict:
        """A spec of the configs/ copy, parsed by the environment's own PyYAML."""
        code = "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"
        return self.python_json(code, self.work / name)

    def write_spec(self, name: str, spec: dict) -> str:
        """Write `spec` into the configs/ copy (JSON is YAML) and return its name."""
        (self.work / name).write_text(json.dumps(spec, indent=2), encoding="utf-8")
        return name
