"""Progress while `irpipe run` evaluates: the executor's steps (pipeline/progress.py), the bar drawn
from them (pipeline/console/progress_bar.py), and the real CLI on a pseudo-terminal and on pipes.

The bar appears only after `DELAY` (1 s) of evaluation; the CLI tests that want to see it set
IRPIPE_PROGRESS_DELAY=0 instead of evaluating for seconds, and the in-process tests give the
delay to `ProgressBar` directly.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import pty
import re
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import duckdb
import pytest
from conftest import irpipe_inprocess
from rich.console import Console

from pipeline.api import PythonMeasure
from pipeline.console.progress_bar import ProgressBar, progress_bar
from pipeline.engines.duckdb.executor import _Steps, execute
from pipeline.plan import batches
from pipeline.progress import Progress, Step, Tally, current, observing
from pipeline.run.evaluation import validate
from pipeline.testing import installed

ROOT = Path(__file__).resolve().parents[1]
ESC = b"\x1b"
ERASE = b"\x1b[2K"  # rich erases each line of the bar, the last thing it draws
SHOW_CURSOR = b"\x1b[?25h"
# SGR colour codes: foreground and background, 8, 16, 256 colours and RGB.
COLOUR = re.compile(rb"\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


# --- what the executor reports ---


@pytest.mark.parametrize(
    ("step", "text"),
    [
        (Step("loading", "run", ("bm25",), 2, 5), "loading run bm25 (batch 2/5)"),
        (Step("ranking", "run", ("bm25",), 1, 1), "ranking run bm25"),
        (
            Step("checking", "run", ("g/a", "g/b", "g/c"), 1, 3),
            "checking 3 runs (batch 1/3)",
        ),  # fmt: skip
        (Step("loading", "qrels", ("dl19",)), "loading qrels dl19"),
        (Step("preparing", "qrels", ("dl19", "dl20")), "preparing 2 qrels"),
        (Step("computing", "metrics"), "computing metrics"),
        (Step("computing", "Python metrics"), "computing Python metrics"),
    ],
)
def test_a_step_says_what_it_does(step, text):
    assert step.describe() == text


def test_the_tally_counts_finished_steps_and_the_furthest_fraction_of_the_running_one():
    tally = Tally(total=400)
    assert tally.now(-1.0) == (0, "starting")
    tally.step(Step("loading", "run", ("a",), work=200))
    assert tally.now(-1.0) == (0, "loading run a")  # DuckDB cannot tell yet
    assert tally.now(0.5) == (100, "loading run a")
    assert tally.now(0.25) == (100, "loading run a")  # a shorter statement after a longer one
    assert tally.now(-1.0) == (100, "loading run a")
    tally.step(Step("ranking", "run", ("a",), work=200))
    assert tally.now(-1.0) == (200, "ranking run a")
    assert tally.now(1.7) == (400, "ranking run a")  # never beyond the step, nor the total
    tally.step(Step("computing", "metrics"))
    assert tally.now(0.5) == (400, "computing metrics")


class Recorder(Progress):
    """Every call the executor makes, in order."""

    def __init__(self, polls: bool = False) -> None:
        self.polls = polls
        self.calls: list[tuple] = []

    def started(self, total, fraction):
        self.calls.append(("started", total))
        self.fraction = fraction

    def step(self, step):
        self.calls.append(("step", step))

    def finished(self):
        self.calls.append(("finished",))

    @property
    def steps(self) -> list[Step]:
        return [call[1] for call in self.calls if call[0] == "step"]


@pytest.fixture
def three_runs(tmp_path, write_spec) -> Path:
    """A spec over one collection and three runs of 7 lines each."""
    qrels = "".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(2) for d in range(4))
    (tmp_path / "qrels.txt").write_text(qrels)
    runs = {}
    for name in ("a", "b", "c"):
        lines = [f"q{q} Q0 d{d} {d + 1} {10 - d} {name}\n" for q in range(2) for d in range(3)]
        (tmp_path / f"{name}.trec").write_text("".join(lines) + "q0 Q0 d9 9 1 x\n")
        runs[name] = {"path": f"{name}.trec", "collection": "c"}
    return write_spec(
        {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": runs, "metrics": ["AP", "P@5"]}
    )


def test_the_executor_reports_each_step_with_its_share_of_the_work(three_runs, monkeypatch):
    monkeypatch.setattr(batches, "BATCH_BYTES", 250)  # a, b in one batch (2 x 107 bytes), c alone
    plan = validate(three_runs).sql
    recorder = Recorder()
    execute(plan, progress=recorder)
    assert [step.describe() for step in recorder.steps] == [
        "loading qrels c",
        "preparing qrels c",
        "loading 2 runs (batch 1/2)",
        "checking 2 runs (batch 1/2)",
        "ranking 2 runs (batch 1/2)",
        "loading run c (batch 2/2)",
        "checking run c (batch 2/2)",
        "ranking run c (batch 2/2)",
        "computing metrics",
    ]
    qrels, run = (three_runs.parent / name for name in ("qrels.txt", "a.trec"))
    size, run = qrels.stat().st_size, run.stat().st_size  # the runs are of one size
    # A file's bytes when it is loaded, a run's half again when checked and when ranked.
    works = [size, 0, 2 * run, run, run, run, run // 2, run // 2, 0]
    assert [step.work for step in recorder.steps] == works
    assert recorder.calls[0] == ("started", sum(works))
    assert recorder.calls[-1] == ("finished",)


class Judged(PythonMeasure):
    """The number of judged documents retrieved, one query at a time in Python."""

    name = "ProgressJudged"
    description = "judged documents retrieved, in Python"

    def compute(self, p, query):
        return float((query.grades >= 0).sum())


def test_python_metrics_are_a_step_of_their_own(three_runs):
    pytest.importorskip("pyarrow")
    three_runs.write_text(three_runs.read_text().replace("- P@5", "- ProgressJudged"))
    recorder = Recorder()
    with installed(Judged):
        plan = validate(three_runs).sql
        assert plan.results.python
        execute(plan, progress=recorder)
    assert [s.describe() for s in recorder.steps][-2:] == [
        "computing Python metrics",
        "computing metrics",
    ]


def test_a_failed_evaluation_still_finishes_its_progress(three_runs):
    (three_runs.parent / "b.trec").write_text("q0 Q0 d1 1 not-a-score b\n")
    recorder = Recorder()
    with pytest.raises(Exception, match="b.trec"):
        execute(validate(three_runs).sql, progress=recorder)
    assert recorder.calls[-1] == ("finished",)
    assert recorder.steps[-1].describe() == "loading 3 runs"


def test_the_installed_observer_is_used_without_an_argument(three_runs):
    recorder = Recorder()
    plan = validate(three_runs).sql
    with observing(recorder):
        assert current() is recorder
        execute(plan)
    assert type(current()) is Progress  # the default again, which ignores everything
    assert recorder.calls[-1] == ("finished",)
    execute(plan)  # outside: nothing is reported
    assert recorder.calls[-1] == ("finished",) and len(recorder.steps) == 6


@pytest.mark.parametrize("polls", [False, True])
def test_duckdb_tracks_progress_only_for_an_observer_that_polls_and_never_prints_it(
    three_runs, polls, capfd
):
    recorder = Recorder(polls=polls)
    con = execute(validate(three_runs).sql, progress=recorder)
    setting = con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0]
    assert setting is polls
    if polls:
        assert con.execute("SELECT current_setting('enable_progress_bar_print')").fetchone() == (
            False,
        )
    assert recorder.fraction() <= 0  # no statement runs
    con.close()
    assert recorder.fraction() < 0  # closed: no error either
    assert capfd.readouterr() == ("", "")


def test_the_fraction_polled_from_another_thread_moves_during_one_long_statement(three_runs, capfd):
    recorder = Recorder(polls=True)
    con = duckdb.connect()
    _Steps(validate(three_runs).sql, recorder).start(con)
    # Alone, this statement takes minutes; it is stopped once a fraction between 0 and 1 is seen.
    query = "SELECT count(*) FROM range(20_000_000_000) t(i) WHERE i % 7 = 3"
    worker = threading.Thread(target=lambda: _stopped(con, query), daemon=True)
    worker.start()
    seen = []
    while worker.is_alive() and not any(0 < f < 1 for f in seen):
        seen.append(recorder.fraction())
        time.sleep(0.02)
    con.interrupt()
    worker.join(30)
    assert any(0 < f < 1 for f in seen), seen
    assert capfd.readouterr() == ("", "")  # DuckDB's own bar printed nothing


def _stopped(con: duckdb.DuckDBPyConnection, query: str) -> None:
    with contextlib.suppress(duckdb.InterruptException, RuntimeError):  # interrupted
        con.execute(query).fetchall()


# --- the bar, in-process ---


def _terminal_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=100, color_system="standard"), out


def _steps_of_a_run() -> list[Step]:
    return [
        Step("loading", "qrels", ("c",), work=10),
        Step("loading", "run", ("bm25",), 1, 2, work=100),
        Step("ranking", "run", ("bm25",), 1, 2, work=50),
        Step("computing", "metrics"),
    ]


def test_the_bar_stays_hidden_for_an_evaluation_shorter_than_the_delay():
    console, out = _terminal_console()
    bar = ProgressBar(console, delay=30)
    bar.started(160, lambda: 0.5)
    for step in _steps_of_a_run():
        bar.step(step)
    assert bar._thread.daemon  # never keeps the process alive
    bar.finished()
    assert out.getvalue() == ""
    assert not bar._thread.is_alive()


def _wait_for(predicate, what: str) -> None:
    for _ in range(1000):
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def test_the_bar_shows_the_step_and_the_work_done_and_is_erased_at_the_end():
    console, out = _terminal_console()
    bar = ProgressBar(console, delay=0)
    fraction = [-1.0]
    bar.started(160, lambda: fraction[0])
    steps = _steps_of_a_run()
    bar.step(steps[0])
    bar.step(steps[1])
    fraction[0] = 0.5  # half of the run's 100 is loaded: (10 + 50) / 160
    _wait_for(lambda: "loading run bm25 (batch 1/2)" in out.getvalue(), "the loading step drawn")
    _wait_for(lambda: "38%" in out.getvalue(), "the polled fraction drawn")
    bar.step(steps[2])
    bar.step(steps[3])
    bar.finished()
    bar.finished()  # again, as the CLI does on its way out: nothing more happens
    text = out.getvalue()
    last = text.rindex("computing metrics")  # drawn once more as the bar stops
    assert "100%" in text[last:]
    assert text.endswith("\x1b[2K") and "\x1b[?25h" in text[last:]  # erased, cursor back
    assert not bar._thread.is_alive()


def test_a_warning_written_while_the_bar_is_shown_goes_above_it(capsys):
    console, out = _terminal_console()
    bar = ProgressBar(console, delay=0)
    bar.started(100, lambda: -1.0)
    bar.step(Step("loading", "run", ("bm25",), work=100))
    _wait_for(lambda: "loading run bm25" in out.getvalue(), "the bar drawn")
    sys.stderr.write("Warning: something doubtful\n")
    bar.finished()
    assert "Warning: something doubtful" in out.getvalue()  # drawn by the bar's console
    assert capsys.readouterr().err == ""  # not written across the bar
    assert sys.stderr.write("restored\n") and capsys.readouterr().err == "restored\n"


def test_no_bar_when_quiet_or_when_stderr_is_not_a_terminal(monkeypatch):
    assert type(progress_bar(quiet=True)) is Progress
    assert type(progress_bar()) is Progress  # pytest captures stderr: not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich would call a pipe a terminal
    assert type(progress_bar()) is Progress


# --- the real CLI, on a pseudo-terminal and on pipes ---


ENV = {"IRPIPE_LOAD_PLUGINS": "", "PATH": "/usr/bin:/bin", "TERM": "xterm-256color"}


def irpipe(
    args: list[str],
    cwd: Path,
    terminal: bool = True,
    env: dict | None = None,
    code: str | None = None,
    signal_when: tuple[bytes, int] | None = None,
) -> tuple[int, bytes, bytes]:
    """Run irpipe (or `code`, a script, with args) with stdout a pipe and stderr a
    pseudo-terminal 100 columns wide (a process of its own), or a pipe (irpipe in the test's
    process); its exit code, stdout and stderr as bytes. `signal_when` = (text, signum): send
    signum once stderr shows text."""
    if not terminal and code is None and signal_when is None:
        done = irpipe_inprocess(*args, cwd=cwd, TERM=ENV["TERM"], **(env or {}))
        return done.returncode, done.stdout.encode(), done.stderr.encode()
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "pipeline.cli"]
    environment = {**ENV, "PYTHONPATH": str(ROOT), **(env or {})}
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen(
        [*command, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
        cwd=cwd,
        env=environment,
    )
    os.close(follower)
    err = bytearray()
    seen = threading.Event()

    def read() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the process and its children closed the terminal
                return
            if not chunk:
                return
            err.extend(chunk)
            if signal_when and signal_when[0] in err:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if signal_when:
        assert seen.wait(60), bytes(err)
        process.send_signal(signal_when[1])
    out = process.stdout.read()
    process.wait(60)
    reader.join(10)
    os.close(leader)
    return process.returncode, out, bytes(err)


def after_the_bar(err: bytes) -> bytes:
    """What stderr shows once the bar is erased: everything after its last erase, which must
    come after the cursor is shown again."""
    assert SHOW_CURSOR in err[err.rindex(b"%") :], err[-300:]
    return err[err.rindex(ERASE) + len(ERASE) :]


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A spec over one run of a million lines (34 MB): 1,000 queries of 1,000 documents."""
    d = tmp_path_factory.mktemp("big")
    qrels = [f"{q} 0 d{q}_{i * 37} {i % 3}\n" for q in range(1000) for i in range(8)]
    (d / "qrels.txt").write_text("".join(qrels))
    with (d / "big.trec").open("w") as f:
        for q in range(1000):
            f.write("".join(f"{q} Q0 d{q}_{i} {i + 1} {1000 - i}.5 big\n" for i in range(1000)))
    (d / "spec.yaml").write_text(
        "collections: {c: {qrels: qrels.txt}, unused: {qrels: qrels.txt}}\n"
        "runs: {big: {path: big.trec, collection: c}}\n"
        "metrics: [AP, P@10, nDCG@10]\n"
    )
    return d / "spec.yaml"


UNUSED = (
    b"Warning: spec.yaml:1: collections.unused: no run is evaluated against collection 'unused'"
)


def test_a_terminal_shows_progress_on_stderr_and_erases_it(big):
    code, out, err = irpipe(["run", big.name], big.parent, env={"IRPIPE_PROGRESS_DELAY": "0"})
    assert code == 0, err
    assert b"loading run big" in err and b"computing metrics" in err
    shown = re.findall(rb"run big[^\r]*?(\d+)%", err)
    assert any(0 < int(p) < 100 for p in shown), shown
    assert COLOUR.search(err)  # the bar is coloured on a terminal ...
    assert after_the_bar(err) == b""  # ... and nothing of it stays
    assert err.startswith(UNUSED)  # validation warned before the bar appeared
    assert ESC not in out and b"collection c, 1000 queries" in out  # stdout is a pipe


def test_off_a_terminal_there_is_no_progress_and_no_escape_code(big):
    code, out, err = irpipe(
        ["run", big.name], big.parent, terminal=False, env={"IRPIPE_PROGRESS_DELAY": "0"}
    )
    assert code == 0, err
    assert err == UNUSED + b"; its qrels are checked, nothing else\n"
    assert ESC not in out and b"collection c, 1000 queries" in out


@pytest.mark.parametrize("variable", ["FORCE_COLOR", "TTY_COMPATIBLE"])
def test_a_pipe_stays_plain_when_the_environment_asks_rich_for_colour(big, variable):
    env = {"IRPIPE_PROGRESS_DELAY": "0", variable: "1"}  # rich would call a pipe a terminal
    code, out, err = irpipe(["run", big.name], big.parent, terminal=False, env=env)
    assert code == 0, err
    assert err == UNUSED + b"; its qrels are checked, nothing else\n"
    assert ESC not in out and out.isascii() and b"collection c, 1000 queries" in out
    code, out, _ = irpipe(["metrics"], big.parent, terminal=False, env=env)
    assert code == 0 and ESC not in out and b"nDCG" in out


def test_no_color_leaves_the_bar_without_colour(big):
    env = {"IRPIPE_PROGRESS_DELAY": "0", "NO_COLOR": "1"}
    code, _, err = irpipe(["run", big.name], big.parent, env=env)
    assert code == 0, err
    assert b"computing metrics" in err and not COLOUR.search(err)


@pytest.fixture
def quickstart(tmp_path) -> Path:
    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("out"))
    return tmp_path / "configs" / "quickstart.yaml"


def test_a_short_evaluation_on_a_terminal_prints_nothing_extra(quickstart):
    code, out, err = irpipe(["run", quickstart.name], quickstart.parent)  # the default delay
    assert code == 0, err
    assert err == b"" and b"nDCG@10" in out


def test_quiet_shows_no_progress_on_a_terminal(quickstart):
    env = {"IRPIPE_PROGRESS_DELAY": "0"}
    code, out, err = irpipe(["run", "--quiet", quickstart.name], quickstart.parent, env=env)
    assert (code, out, err) == (0, b"", b"")


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_an_error_comes_after_the_bar_is_erased_and_carries_no_escape_code(quickstart, terminal):
    (quickstart.parent / "data" / "bm25.trec").write_text("q1 Q0 d1 1 not-a-score bm25\n")
    env = {"IRPIPE_PROGRESS_DELAY": "0"}
    code, out, err = irpipe(["run", quickstart.name], quickstart.parent, terminal, env)
    assert code == 3 and out == b""
    error = after_the_bar(err) if terminal else err
    assert error.startswith(b"Error: ") and b"bm25.trec:1" in error
    assert ESC not in error and b"Traceback" not in err


# The ranking statement of the quickstart's first batch made long by a real DuckDB query that,
# alone, takes minutes, so that the signal comes while the bar polls a running statement.
SLOW_RANKING = """
import sys
from pipeline.engines.duckdb import executor
from pipeline.engines.duckdb.steps import run_all
from pipeline.sql import Statement
rank = executor.rank
def slow(con, runs, batch, per_batch=None, **given):
    run_all(con, [Statement("SELECT count(*) FROM range(20_000_000_000) t(i) WHERE i % 7 = 3")])
    rank(con, runs, batch, per_batch, **given)
executor.rank = slow
from pipeline.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_bar_is_shown_stops_the_run_and_erases_the_bar(quickstart, signum):
    env = {"IRPIPE_PROGRESS_DELAY": "0"}
    code, out, err = irpipe(
        ["run", quickstart.name],
        quickstart.parent,
        env=env,
        code=SLOW_RANKING,
        signal_when=(b"ranking", signum),
    )
    assert code == {signal.SIGINT: 130, signal.SIGTERM: 143}[signum], err
    name = signal.Signals(signum).name.encode()
    assert after_the_bar(err) == (
        b"Error: interrupted by " + name + b": nothing was written (earlier outputs are as they "
        b"were, temporary files were removed)\r\n"
    )
    assert out == b"" and b"Traceback" not in err
