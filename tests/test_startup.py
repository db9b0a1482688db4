"""Start-up: a command imports only what it uses (speed is measured by the benchmark, not here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pipeline

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("duckdb", "rich", "pydantic", "yaml")


def _modules_after(code: str) -> set[str]:
    """The heavy modules imported by running `code` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint('|'.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.splitlines()[-1].split("|")) - {""}


def test_help_imports_no_heavy_library():
    code = "from pipeline.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    assert _modules_after(code) == set()


def test_validate_does_not_import_duckdb_or_rich():
    code = "from pipeline.cli import main\nmain(['validate', 'configs/quickstart.yaml'])"
    assert _modules_after(code) == {"pydantic", "yaml"}


def test_a_run_without_history_or_dashboard_imports_neither(tmp_path):
    """The quickstart keeps no history: its run imports neither the history's code nor the
    dashboard's."""
    import shutil

    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("out"))
    code = (
        "from pipeline.cli import main\n"
        f"main(['run', '--quiet', {str(tmp_path / 'configs' / 'quickstart.yaml')!r}])\n"
        "import sys\n"
        "print('|'.join(m for m in ('pipeline.history', 'pipeline.dashboard') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == ""


def test_every_public_name_resolves():
    assert set(pipeline.__all__) == {*pipeline._EXPORTS, "__version__"}
    for name in pipeline.__all__:
        assert getattr(pipeline, name) is not None


def test_no_module_is_named_like_an_export():
    """`pipeline.evaluate` is the function: no submodule of that name (nor of any other export)
    can replace it when it is imported, so the package needs no trick to keep its exports."""
    package = Path(pipeline.__file__).parent
    clashes = [
        n for n in pipeline.__all__ if (package / f"{n}.py").exists() or (package / n).is_dir()
    ]
    assert clashes == []
    code = "from pipeline.run.evaluation import compile_spec\nfrom pipeline import evaluate\nprint(type(evaluate).__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["function"]
