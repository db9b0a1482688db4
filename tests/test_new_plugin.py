"""`irpipe new-plugin`: a package from the template installs, passes its own conformance test and
evaluates through `irpipe run`, in a virtual environment of its own; bad names are refused."""

from __future__ import annotations

import csv
import os
import re
import site
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from pipeline.cli import main
from pipeline.cli.new_plugin import FILES, plugin_names, render


def _new_plugin(directory: Path, name: str = "demo") -> Path:
    assert main(["new-plugin", name, "--dir", str(directory)]) == 0
    return directory / f"irpipe-{name}"


def test_the_template_fills_every_file(tmp_path, capsys):
    root = _new_plugin(tmp_path, "err-ia")
    assert f"created {root}" in capsys.readouterr().out
    made = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert made == sorted(render(path, plugin_names("err-ia")) for path in FILES.values())
    assert not any("{{" in (root / path).read_text() for path in made)
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    assert pyproject["project"]["name"] == "irpipe-err-ia"
    assert pyproject["project"]["entry-points"]["irpipe"] == {"err-ia": "irpipe_err_ia"}
    assert pyproject["project"]["dependencies"][0].startswith("irpipe>=")
    source = (root / "irpipe_err_ia" / "__init__.py").read_text()
    assert "class ErrIa(Measure[RankedParams])" in source and "from pipeline.api import" in source
    assert "pip install" in (root / ".github" / "workflows" / "test.yml").read_text()


@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        ("Err", 2, r"'Err' is not a plugin name: use lowercase letters"),
        ("my metric", 2, r"'my metric' is not a plugin name"),
        ("9lives", 2, r"'9lives' is not a plugin name"),
        ("err--ia", 2, r"'err--ia' is not a plugin name"),
        ("recall", 2, r"plugin name 'recall' would make the metric 'Recall', which irpipe cannot"),
        ("map", 2, r"would make the metric 'Map'.*differ only in case"),
    ],
)
def test_a_bad_name_is_refused_without_a_traceback(tmp_path, capsys, name, code, message):
    assert main(["new-plugin", name, "--dir", str(tmp_path)]) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing made
    assert re.search(message, " ".join(err.split())), err


def test_an_existing_package_is_not_overwritten(tmp_path, capsys):
    root = _new_plugin(tmp_path)
    (root / "README.md").write_text("mine")
    assert main(["new-plugin", "demo", "--dir", str(tmp_path)]) == 4
    assert "irpipe-demo already exists" in capsys.readouterr().err
    assert (root / "README.md").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["irpipe-demo"]  # no staging left


def _venv(path: Path) -> Path:
    """A virtual environment that sees this one's packages (irpipe, pytest, setuptools): with
    --system-site-packages, and, since this one may be a venv itself, its site directories added
    (by a .pth line, so their own .pth files, such as an editable install's, are read too)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(path)],
        check=True,
    )
    python = path / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    line = "import site; " + "; ".join(f"site.addsitedir({d!r})" for d in dirs)
    (Path(purelib.strip()) / "_irpipe_test_environment.pth").write_text(line + "\n")
    return python


def _run(args: list, cwd: Path | None = None) -> str:
    env = {**os.environ, "IRPIPE_LOAD_PLUGINS": "demo"}  # the new plugin's entry point, alone
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _spec(directory: Path) -> Path:
    """One query: judged a (1), b (0), c (2) and x unjudged, ranked a x b c."""
    (directory / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n1 0 c 2\n")
    (directory / "run.trec").write_text("1 Q0 a 1 4 t\n1 Q0 x 2 3 t\n1 Q0 b 3 2 t\n1 Q0 c 4 1 t\n")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.trec", "collection": "c"}},
        "metrics": ["Demo@5", "Demo(rel=2)@2"],
        "outputs": [{"path": "results.csv"}],
    }
    (directory / "spec.yaml").write_text(yaml.safe_dump(spec))
    return directory / "spec.yaml"


def test_a_new_plugin_installs_passes_its_tests_and_evaluates(tmp_path):
    root = _new_plugin(tmp_path)
    python = _venv(tmp_path / "env")
    pip = [python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index"]
    _run([*pip, "--disable-pip-version-check", "--quiet", root])
    assert "1 passed" in _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root)
    _run([python, "-m", "pipeline.cli", "run", "--quiet", _spec(tmp_path)], cwd=tmp_path)
    with (tmp_path / "results.csv").open() as handle:
        values = {row["metric"]: float(row["value"]) for row in csv.DictReader(handle)}
    assert values == {"Demo@5": pytest.approx(2 / 3), "Demo(rel=2)@2": 0.0}
    installed = _run(
        [python, "-c", "import irpipe_demo; print(irpipe_demo.__file__)"], cwd=tmp_path
    )
    assert installed.startswith(str(tmp_path / "env"))  # the package, not its source folder


def test_the_kits_example_proves_the_templates_measure_right(tmp_path, monkeypatch):
    """The conformance kit's example in plugins/README.md (`<!-- test: kit-example -->`), run as
    a plugin author runs it: its test function, against the package `irpipe new-plugin judged-p`
    makes, not installed (the kit registers the measure for its own evaluations)."""
    from docblocks import marked

    root = _new_plugin(tmp_path, "judged-p")
    monkeypatch.syspath_prepend(str(root))
    (block,) = marked("kit-example", "plugins/README.md")
    namespace: dict = {}
    exec(compile(block.text, "plugins/README.md kit example", "exec"), namespace)
    namespace["test_judged_p"]()
    monkeypatch.delitem(sys.modules, "irpipe_judged_p")
