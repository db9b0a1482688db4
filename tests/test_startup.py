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


#: what a plain evaluation (no history, comparisons, checks, pools, judgment sets compared or
#: tuned runs, nothing printed) has no use for
UNUSED_BY_A_PLAIN_RUN = (
    "pipeline.history", "pipeline.dashboard", "pipeline.checks", "pipeline.compare",
    "pipeline.agreement", "pipeline.pools", "pipeline.console", "pipeline.plan.tuning_trials",
    "pipeline.frames.convert", "rich", "numpy", "scipy", "pyarrow", "matplotlib",
)  # fmt: skip


def _imported_by(tmp_path, command: list[str]) -> list[str]:
    """Which of UNUSED_BY_A_PLAIN_RUN a command on a copy of the configs imports."""
    import shutil

    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("out"))
    argv = [*command, str(tmp_path / "configs" / "quickstart.yaml")]
    code = (
        "import sys\n"
        "from pipeline.cli import main\n"
        f"assert main({argv!r}) == 0\n"
        f"print('|'.join(m for m in {UNUSED_BY_A_PLAIN_RUN!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return [name for name in out.stdout.splitlines()[-1].split("|") if name]


def test_a_plain_run_imports_only_what_it_uses(tmp_path):
    """The quickstart keeps no history, compares nothing, checks nothing and pools nothing: its
    quiet run imports none of their packages, nor a library it does not call."""
    assert _imported_by(tmp_path, ["run", "--quiet"]) == []


def test_validate_imports_only_what_it_checks(tmp_path):
    assert _imported_by(tmp_path, ["validate"]) == []


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
