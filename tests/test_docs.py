"""The documentation runs as written: every shell and Python block of every page is run or says
why not, every marker is read by a test, every relative link leads somewhere, and every page is
one click from the front page. Blocks are found by their markers (tests/docblocks.py); a page's
run blocks run in order, as a reader would type them, in one temporary copy of configs/."""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from docblocks import (
    KEYS,
    ROOT,
    Block,
    all_blocks,
    blocks,
    marked,
    markers,
    marks_of,
    pages,
    read,
    region,
)

from pipeline.run.preflight import validate

FRONT = "README.md"
GUIDE = "configs/README.md"
FIRST_SCREEN = 70  # lines: both doors of the quick start begin above it
MOST_LINES = 350


# -- every block is run, or says why not -------------------------------------------------------


def _problems(block: Block) -> list[str]:
    """What is wrong with a block's marker, if anything."""
    unknown = set(block.marks) - KEYS
    if unknown:
        return [f"{block.where}: unknown marker keys {sorted(unknown)}; known: {sorted(KEYS)}"]
    if block.indent:
        return [f"{block.where}: an indented fence; write fences at the start of the line"]
    if not (block.is_shell or block.is_python):
        return []
    if "not run" in block.marks and not block.marks["not run"]:
        return [f"{block.where}: <!-- not run: ... --> must say why"]
    if not {"run", "test", "not run"} & set(block.marks):
        return [f"{block.where}: a {block.lang or 'shell'} block that is neither run nor marked "
                "<!-- not run: why -->"]  # fmt: skip
    return []


def test_every_shell_and_python_block_is_run_or_says_why():
    problems = [problem for block in all_blocks() for problem in _problems(block)]
    assert not problems, "\n".join(problems)


def test_an_output_follows_a_block_that_is_run():
    for page in pages():
        previous = None
        for block in blocks(page):
            if "output" in block.marks:
                assert previous is not None and "run" in previous.marks, (
                    f"{block.where}: an output block must follow a run block"
                )
            previous = block


def _names_read_by_tests() -> str:
    return "\n".join(path.read_text() for path in sorted((ROOT / "tests").glob("test_*.py")))


def _is_read(name: str, sources: str) -> bool:
    """A test names it as a string, or a family of names (`spec.Settings`) as `f"spec.{...}"`."""
    family = name.split(".")[0] if "." in name else None
    return f'"{name}"' in sources or (family is not None and f'f"{family}.{{' in sources)


def test_every_named_marker_is_read_by_a_test():
    """A name no test reads would be a block or a table that nothing checks."""
    sources, unread = _names_read_by_tests(), []
    for page in pages():
        named = [(n, m) for n, m in markers(page) if m.keys() & {"test", "table", "begin"}]
        for line, marks in named:
            for key in ("test", "table", "begin"):
                if key in marks and not _is_read(marks[key], sources):
                    unread.append(f"{page}:{line}: <!-- {key}: {marks[key]} --> is read by no test")
    assert not unread, "\n".join(unread)


def test_every_region_is_closed():
    for page in pages():
        found = [m for _, m in markers(page)]
        begun = [m["begin"] for m in found if "begin" in m]
        ended = [m["end"] for m in found if "end" in m]
        assert sorted(begun) == sorted(ended), f"{page}: regions {begun} closed by {ended}"


# -- the run blocks, page by page --------------------------------------------------------------


def _runs(page: str) -> bool:
    return any("run" in block.marks for block in blocks(page))


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch) -> Path:
    """A directory laid out as a clone's root for the blocks: a copy of configs/ (without what
    earlier evaluations wrote), and `irpipe` and `python` on PATH meaning this checkout's."""
    work = tmp_path / "work"
    shutil.copytree(
        ROOT / "configs", work / "configs", ignore=shutil.ignore_patterns("out", "results")
    )
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, command in (("irpipe", "-m pipeline.cli "), ("python", ""), ("python3", "")):
        script = bin_ / name
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" {command}"$@"\n')
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(work)
    return work


def _run_shell(block: Block, work: Path) -> str:
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", block.text], cwd=work, capture_output=True, text=True
    )
    assert done.returncode == 0, (
        f"{block.where} exited {done.returncode}:\n{block.text}\n{done.stdout}{done.stderr}"
    )
    return done.stdout


def _run_python(block: Block, namespace: dict) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.text, block.where, "exec"), namespace)
    return printed.getvalue()


def _words(text: str, work: Path) -> list[list[str]]:
    """Each line's words, paths under `work` shown relative to it: what an output block must
    match (column widths and trailing spaces aside)."""
    text = text.replace(f"{work}{os.sep}", "")
    return [line.split() for line in text.strip("\n").splitlines()]


@pytest.mark.parametrize("page", [page for page in pages() if _runs(page)])
def test_the_page_runs_as_written(page, workspace):
    namespace: dict = {"__name__": "__docs__"}
    printed = ""
    for block in blocks(page):
        if "output" in block.marks:
            shown, got = _words(block.text, workspace), _words(printed, workspace)
            diff = "\n".join(difflib.unified_diff(
                [" ".join(w) for w in shown], [" ".join(w) for w in got], "shown", "printed",
                lineterm=""))  # fmt: skip
            assert got == shown, f"{block.where}: the block above prints otherwise:\n{diff}"
        elif "run" in block.marks:
            assert block.is_shell or block.is_python, f"{block.where}: only shell and Python run"
            run = _run_shell(block, workspace) if block.is_shell else None
            printed = run if run is not None else _run_python(block, namespace)


# -- blocks that cannot run still name real things -----------------------------------------------


def _commands(block: Block) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments and prompts dropped,
    split at `&&`, `||`, `;` and `|`."""
    text = re.sub(r"\\\n", " ", block.text)
    lines = [line.strip().removeprefix("$ ") for line in text.splitlines()]
    if block.lang not in {"sh", "bash", "shell", "zsh"}:  # a transcript: only its prompts
        lines = [line[2:] for line in block.text.splitlines() if line.startswith("$ ")]
    found = []
    for line in lines:
        tokens = shlex.split(line, comments=True)
        command: list[str] = []
        for token in [*tokens, "&&"]:
            if token in {"&&", "||", ";", "|"}:
                found += [command] if command else []
                command = []
            else:
                command.append(token)
    return found


def _irpipe_parses(arguments: list[str]) -> str | None:
    """Why irpipe's own parser refuses `arguments`, or None."""
    from pipeline.cli.parser import parser
    from pipeline.trec_eval.command import TrecEvalExit, parse

    try:
        if arguments[:1] == ["trec-eval"]:
            parse(arguments[1:])
        else:
            parser().parse_args(arguments)
    except (SystemExit, TrecEvalExit) as exc:
        return f"irpipe {' '.join(arguments)}: refused by irpipe's parser ({exc})"
    return None


def _extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


def _pip_problems(arguments: list[str], moved: bool) -> list[str]:
    """Extras that pyproject.toml lacks, and local packages that do not exist."""
    problems = []
    for argument in arguments:
        named = re.fullmatch(r"(irpipe|\.)\[([\w,-]+)\]", argument)
        if named and not moved:
            problems += [f"pip install {argument}: no extra {extra!r} in pyproject.toml"
                         for extra in named.group(2).split(",") if extra not in _extras()]  # fmt: skip
        elif argument.startswith("plugins/"):
            package = ROOT / argument.split("[")[0]
            problems += [] if (package / "pyproject.toml").exists() else [f"no package {package}"]
    return problems


def _not_run_problems(block: Block) -> list[str]:
    problems, moved = [], False
    for command in _commands(block):
        name = Path(command[0]).name
        moved = moved or name == "cd"
        if name == "irpipe" and not moved:
            problems += [p for p in [_irpipe_parses(command[1:])] if p]
        elif name == "pip" and command[1:2] == ["install"]:
            problems += _pip_problems(command[2:], moved)
        elif name.startswith("python") and command[1:2] and command[1].endswith(".py"):
            problems += [] if (ROOT / command[1]).exists() else [f"no script {command[1]}"]
    return [f"{block.where}: {problem}" for problem in problems]


def test_blocks_that_are_not_run_name_real_commands_extras_and_files():
    """What can be checked without running: each `irpipe` command parses with irpipe's own
    argument parser, each extra installed exists, each script and package named exists, and a
    Python block compiles."""
    problems = []
    for block in all_blocks():
        if "not run" not in block.marks:
            continue
        if block.is_python:
            compile(block.text, block.where, "exec")
        elif block.is_shell:
            problems += _not_run_problems(block)
    assert not problems, "\n".join(problems)


def test_the_not_run_check_can_fail():
    bad = Block("x.md", 1, "sh", "irpipe run --qiuet spec.yaml\npip install '.[nope]'\n",
                {"not run": "an example"}, "")  # fmt: skip
    assert len(_not_run_problems(bad)) == 2


# -- links and contents --------------------------------------------------------------------------

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _outside_fences(page: str) -> list[str]:
    """The page's lines but its fenced blocks."""
    inside = {n for b in blocks(page) for n in range(b.line - 1, b.line + b.text.count("\n") + 1)}
    return [line for n, line in enumerate(read(page).splitlines()) if n not in inside]


def _prose(page: str) -> str:
    """The page without its fenced blocks and inline code, where a link is only an example."""
    return re.sub(r"`[^`\n]*`", "", "\n".join(_outside_fences(page)))


def slug(heading: str) -> str:
    """A heading's anchor as code hosts make it: lower case, punctuation dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: str) -> set[str]:
    """The anchors of a page's headings (a repeated one gets -1, -2, ...)."""
    found: set[str] = set()
    for line in _outside_fences(page):
        heading = re.match(r"#{1,6} (.*)", line)
        if heading:
            base = slug(re.sub(r"`", "", heading.group(1)))
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def links(page: str) -> list[tuple[str, str]]:
    """Each relative link of a page: (target file, relative to the root; anchor or '')."""
    found = []
    for target in _LINK.findall(_prose(page)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        where = (ROOT / page).parent / path if path else ROOT / page
        found.append((os.path.relpath(where.resolve(), ROOT), anchor))
    return found


def test_every_relative_link_leads_to_a_file_and_a_heading():
    broken = []
    for page in pages():
        for target, anchor in links(page):
            if not (ROOT / target).exists():
                broken.append(f"{page}: {target} does not exist")
            elif anchor and anchor not in anchors(Path(target).as_posix()):
                broken.append(f"{page}: {target} has no heading #{anchor}")
    assert not broken, "\n".join(broken)


def test_a_broken_link_is_found():
    assert (
        slug("Looking back: irpipe history, show, diff") == "looking-back-irpipe-history-show-diff"
    )
    assert slug("trec_eval's command line") == "trec_evals-command-line"
    assert "the-house-how-the-code-is-laid-out" in anchors("pipeline/README.md")
    assert "no-such-heading" not in anchors("pipeline/README.md")


def test_every_page_is_one_click_from_the_front_pages_contents():
    listed = {
        Path(target.split("#")[0]).as_posix() for target in _LINK.findall(region(FRONT, "contents"))
    }
    missing = sorted(set(pages()) - {FRONT} - listed)
    assert not missing, f"not in the front page's contents: {missing}"


# -- the front page ------------------------------------------------------------------------------


def test_the_front_page_is_short_and_opens_both_doors_on_its_first_screen():
    assert len(read(FRONT).splitlines()) <= MOST_LINES
    runs = [b for b in blocks(FRONT) if "run" in b.marks]
    shell = next(b for b in runs if b.is_shell)
    python = next(b for b in runs if b.is_python)
    assert "irpipe run configs/quickstart.yaml" in shell.text
    assert "evaluate(" in python.text and "metrics=" in python.text
    assert max(shell.line, python.line) < FIRST_SCREEN


def test_ci_runs_the_front_pages_test_command_verbatim():
    (block,) = marked("test-command", FRONT)
    (command,) = block.text.strip().splitlines()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert any(line == command or line.startswith(f"{command} ||") for line in ci), (
        f".ci/run does not run the front page's test command: {command}"
    )
    assert "test" in _extras()


# -- the example specs ---------------------------------------------------------------------------


def test_every_example_spec_is_run_by_the_guide():
    """Each spec of configs/ has its section in the guide, with a block the suite runs."""
    run = "".join(block.text for block in blocks(GUIDE) if "run" in block.marks)
    specs = sorted(path.name for path in (ROOT / "configs").glob("*.yaml"))
    assert specs, "no example specs"
    unrun = [name for name in specs if f"configs/{name}" not in run]
    assert not unrun, f"no run block of {GUIDE} runs {unrun}"
    linked = {Path(target).name for target, _ in links(GUIDE)}
    assert set(specs) <= linked, f"{GUIDE} does not link {sorted(set(specs) - linked)}"


@pytest.mark.parametrize("name", ["spec-anatomy", "spark-lake-spec"])
def test_the_guides_specs_without_files_are_valid(name, tmp_path):
    (block,) = marked(name, GUIDE)
    spec = tmp_path / "spec.yaml"
    spec.write_text(block.text)
    assert validate(spec, data=False).metrics


def test_a_marker_line_is_read_as_keys():
    assert marks_of("<!-- test: x; not run: a reason; with a semicolon -->") == {
        "test": "x",
        "not run": "a reason; with a semicolon",
    }
    assert marks_of("<!-- run -->") == {"run": ""}
    assert marks_of("not a marker") is None


def test_the_guides_pandas_reader_reads_tabs_and_spaces_alike(tmp_path):
    """TREC distributes runs separated by tabs, others by spaces, some by both: the helper the
    guide gives a notebook reads each to the same frame."""
    from pipeline.synthetic import generate, write_run

    (block,) = marked("trec-frame", GUIDE)
    code = block.text.split("\nqrels = ")[0]  # the helper alone: the lines after read the sample
    namespace: dict = {}
    exec(code, namespace)
    write_run(generate(5).runs["run0"], tmp_path / "spaces.trec")
    text = (tmp_path / "spaces.trec").read_text()
    (tmp_path / "tabs.trec").write_text(text.replace(" ", "\t"))
    (tmp_path / "mixed.trec").write_text(text.replace(" Q0 ", "\tQ0  "))
    columns = ["qid", "Q0", "docno", "rank", "score", "tag"]
    spaces, tabs, mixed = (namespace["trec_frame"](tmp_path / f"{name}.trec", columns)
                           for name in ("spaces", "tabs", "mixed"))  # fmt: skip
    assert list(spaces.columns) == columns and len(spaces) == text.count("\n")
    assert spaces.equals(tabs) and spaces.equals(mixed)
