"""SIGINT and SIGTERM at any moment: the handler in-process, then the real `irpipe run` interrupted
at many moments of a multi-second evaluation, while DuckDB spills, and during the final renames.

Every interrupted run must exit 130 (SIGINT) or 143 (SIGTERM) with one line on stderr and no
traceback, leave no temporary file (the outputs' `.tmp` files, DuckDB's `.tmp` spill directory), and
leave the earlier outputs byte for byte as they were, unless it says the final renames completed:
then every output is the new one.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
import yaml

from pipeline import interrupts
from pipeline.synthetic import generate, write_qrels, write_run

ROOT = Path(__file__).resolve().parents[1]
CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
NOTHING = r"Error: interrupted by {}: nothing was written \(earlier outputs are as they were, temporary files were removed\)\n"
RENAMED = r"Error: interrupted by {} during or after the final renames, which completed: every output is new and whole\n"
LINUX = Path("/proc/self/status").exists()
# What an interrupted DuckDB query raises, depending on where the signal found it.
STOPPED = (KeyboardInterrupt, RuntimeError, duckdb.InterruptException)


# --- the handler, in-process ---


def _send_later(signum: int, delay: float) -> threading.Timer:
    timer = threading.Timer(delay, os.kill, (os.getpid(), signum))
    timer.start()
    return timer


def test_a_signal_stops_a_running_duckdb_query_at_once():
    # Alone, this query takes minutes; DuckDB stops it only when told (see pipeline.interrupts).
    query = "SELECT count(*) FROM range(20_000_000_000) t(i) WHERE i % 7 = 3"
    with interrupts.handling():
        con = interrupts.watch(duckdb.connect())
        with pytest.raises(STOPPED), interrupts.armed():
            _send_later(signal.SIGTERM, 0.3)
            started = time.monotonic()
            con.execute(query).fetchall()
        elapsed = time.monotonic() - started
        assert interrupts.received() == signal.SIGTERM
    assert elapsed < 3, f"the query went on for {elapsed:.1f} s after the signal"


def test_a_second_signal_does_not_break_the_cleanup():
    cleaned = []
    with interrupts.handling():
        try:
            with interrupts.armed():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # interrupted long before
        except KeyboardInterrupt:
            os.kill(os.getpid(), signal.SIGTERM)  # the operator insists; cleanup goes on
            time.sleep(0.05)
            cleaned.append(True)
        assert interrupts.received() == signal.SIGINT
    assert cleaned == [True]


def test_outside_the_command_a_signal_is_only_recorded():
    with interrupts.handling():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # no exception: the CLI is reporting or cleaning up
        assert interrupts.received() == signal.SIGTERM


def test_a_signal_during_an_import_waits_for_the_next_checkpoint(tmp_path, monkeypatch, capfd):
    """irpipe imports DuckDB and writers lazily: a signal inside an import must not be raised there
    (importlib would print it as "ignored" and go on) but at the next checkpoint."""
    (tmp_path / "signalled_module.py").write_text(
        "import os, signal, time\nos.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(0.05)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    imported = []
    with interrupts.handling():
        with pytest.raises(KeyboardInterrupt), interrupts.armed():
            import signalled_module  # noqa: F401 -- completes: the signal is only recorded

            imported.append(True)
            interrupts.checkpoint()
        assert interrupts.received() == signal.SIGTERM
    assert imported == [True] and "signalled_module" in sys.modules
    assert "ignored" not in capfd.readouterr().err


def test_handlers_are_restored_and_connections_closed():
    before = {s: signal.getsignal(s) for s in interrupts.SIGNALS}
    with interrupts.handling():
        con = interrupts.watch(duckdb.connect())
    assert {s: signal.getsignal(s) for s in interrupts.SIGNALS} == before
    with pytest.raises(duckdb.ConnectionException):
        con.execute("SELECT 1")


def test_held_signals_wait_for_the_section_and_then_arrive():
    events = []
    with interrupts.handling():
        try:
            with interrupts.armed(), interrupts.held():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)
                events.append("section completed")
        except KeyboardInterrupt:
            events.append("interrupted")
    assert events == ["section completed", "interrupted"]


# --- the real CLI ---


def start(work: Path, *wrap: str) -> subprocess.Popen:
    """`irpipe run --quiet spec.yaml` in `work` (optionally through a wrapper script); its outputs'
    paths are relative to the spec, so that manifests differ between directories only in the
    spec's own (absolute) path."""
    command = [sys.executable, *(wrap or ("-m", "pipeline.cli")), "run", "--quiet", "spec.yaml"]
    env = {"IRPIPE_LOAD_PLUGINS": "", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def catches_sigterm(process: subprocess.Popen) -> bool:
    """Whether irpipe's handler is installed yet (before it, Python is still starting up)."""
    status = Path(f"/proc/{process.pid}/status").read_text()
    mask = int(re.search(r"^SigCgt:\s*([0-9a-f]+)$", status, re.M).group(1), 16)
    return bool(mask >> (signal.SIGTERM - 1) & 1)


def wait_for_handler(process: subprocess.Popen) -> None:
    while process.poll() is None and not catches_sigterm(process):
        time.sleep(0.002)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}  # fmt: skip


def leftovers(directory: Path) -> list[str]:
    """Temporary files of any kind: outputs' `.tmp` files, write-ahead logs, DuckDB's spill."""
    found = [p for p in directory.rglob("*") if p.name.endswith((".tmp", ".wal"))]
    return sorted(str(p.relative_to(directory)) for p in found)


@dataclass(frozen=True)
class Setup:
    """Inputs, a spec writing three outputs, the outputs of an older spec and of this one."""

    spec: dict
    old: dict[str, bytes]
    new: dict[str, bytes]
    duration: float  # seconds from process start to exit, uninterrupted

    def workdir(self, parent: Path, name: str) -> Path:
        """A directory holding the spec and the older outputs, as a scheduled job finds them."""
        d = parent / name
        (d / "out").mkdir(parents=True)
        (d / "spec.yaml").write_text(yaml.safe_dump(self.spec, sort_keys=False))
        for file, data in self.old.items():
            (d / "out" / file).write_bytes(data)
        return d


OUTPUTS = [
    {"path": "out/per_query.parquet", "level": "query"},
    {"path": "out/summary.csv"},
    {"path": "out/all.duckdb", "level": "query"},
]


def prepare(d: Path, spec: dict, timed: int = 1) -> Setup:
    """Older outputs (another metric list), then this spec's outputs and its shortest duration."""
    old_dir = d / "older"
    (old_dir).mkdir()
    (old_dir / "spec.yaml").write_text(yaml.safe_dump({**spec, "metrics": ["P@5"]}))
    assert start(old_dir).wait() == 0
    old = snapshot(old_dir / "out")
    durations = []
    for i in range(timed):
        work = Setup(spec, old, {}, 0).workdir(d, f"reference{i}")
        began = time.monotonic()
        process = start(work)
        _, err = process.communicate()
        assert process.returncode == 0, err
        durations.append(time.monotonic() - began)
    return Setup(spec, old, snapshot(d / "reference0" / "out"), min(durations))


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory) -> Setup:
    """A multi-second evaluation: 9 runs of a synthetic collection (1,000 queries, graded)."""
    d = tmp_path_factory.mktemp("signals")
    collection = generate(2026, queries=1000, runs=3, float32_ties=False, skill=(2.0, 4.0, 6.0))
    write_qrels(collection.qrels, d / "qrels.txt")
    for name, run in collection.runs.items():
        for copy in range(3):  # evaluating a run costs the same whether or not it repeats
            write_run(run, d / f"{name}_{copy}.trec", tag=name)
    spec = {
        "collections": {"c": {"qrels": str(d / "qrels.txt")}},
        "runs": {"sys": {"path": str(d / "*.trec"), "collection": "c"}},
        "metrics": ["AP", "P@10", "nDCG@10", "RR", "R@100", "Bpref", "infAP", "set_F"],
        "outputs": OUTPUTS,
    }
    # The shortest of three: one timing taken while the machine was busy would place signals
    # after a quicker run's end, where Python's own handlers are back (exit 0 or -15).
    return prepare(d, spec, timed=3)


@dataclass
class Moment:
    signum: int
    delay: float  # seconds after the process started
    sent_at: float = 0.0
    result: tuple[int, str, str] | None = None
    before: dict[str, bytes] | None = None
    after: dict[str, bytes] | None = None
    left: list[str] | None = None


def interrupt(setup: Setup, d: Path, moment: Moment, ready=wait_for_handler) -> Moment:
    """Start a run, send the signal at the moment (once irpipe's handler is in place), collect."""
    d.mkdir(parents=True)
    work = setup.workdir(d, "job")
    moment.before = snapshot(work / "out")
    began = time.monotonic()
    process = start(work)
    ready(process)
    time.sleep(max(0.0, moment.delay - (time.monotonic() - began)))
    moment.sent_at = time.monotonic() - began
    if process.poll() is None:
        process.send_signal(moment.signum)
    out, err = process.communicate(timeout=120)
    moment.result = (process.returncode, out, err)
    moment.after, moment.left = snapshot(work / "out"), leftovers(work)
    return moment


def check(moment: Moment, setup: Setup) -> None:
    code, out, err = moment.result
    name = signal.Signals(moment.signum).name
    where = f"{name} at {moment.sent_at:.2f} s of {setup.duration:.2f} s"
    assert code == CODES[moment.signum], f"{where}: exit {code}, stderr {err!r}"
    assert "Traceback" not in err and out == "", where
    assert moment.left == [], f"{where}: left {moment.left}"
    if re.fullmatch(NOTHING.format(name), err):
        assert moment.after == moment.before, f"{where}: an earlier output changed"
    else:
        assert re.fullmatch(RENAMED.format(name), err), f"{where}: {err!r}"
        assert_new(moment.after, setup, where)


def assert_new(after: dict[str, bytes], setup: Setup, where: str) -> None:
    """Every output is this spec's, as an uninterrupted run writes it."""
    assert after.keys() == setup.new.keys(), where
    for file, data in setup.new.items():
        if not file.endswith(".duckdb"):
            assert timeless(after[file], file) == timeless(data, file), (where, file)


def timeless(data: bytes, file: str) -> bytes | dict:
    """A file's bytes; a manifest without what differs between two evaluations of the same spec
    in two directories: its start time and the spec's absolute path."""
    if not file.endswith(".manifest.json"):
        return data
    return {k: v for k, v in json.loads(data).items() if k not in ("started", "spec")}


MOMENTS = 32


@pytest.mark.skipif(not LINUX, reason="reads the signal mask from /proc")
def test_a_signal_at_any_moment_stops_the_run_cleanly(evaluation, tmp_path):
    rng = random.Random(15)
    signals = [signal.SIGINT, signal.SIGTERM] * (MOMENTS // 2)
    rng.shuffle(signals)
    # Spread over the whole run, spec loading to the final renames; the last 10% are left out
    # because an idle machine may finish sooner than the one that measured the duration.
    moments = [Moment(s, rng.uniform(0.0, 0.9) * evaluation.duration) for s in signals]
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [pool.submit(interrupt, evaluation, tmp_path / str(i), m) for i, m in enumerate(moments)]  # fmt: skip
        done = [job.result() for job in jobs]
    for i, m in enumerate(done):  # finished before the signal (a faster moment of the
        for attempt in range(3):  # machine, or a busier one when the run was timed): earlier
            if done[i].result[0] != 0:
                break
            retry = Moment(m.signum, m.delay * 0.6 ** (attempt + 1))
            done[i] = interrupt(evaluation, tmp_path / f"retry{i}-{attempt}", retry)
    print(f"run: {evaluation.duration:.2f} s; sent at", sorted(round(m.sent_at, 2) for m in done))
    for moment in done:
        check(moment, evaluation)
    assert len(done) >= 30 and {m.signum for m in done} == set(CODES)


SMALL_MACHINE = (os.cpu_count() or 1) <= 4


@pytest.fixture(scope="module")
def big_run(tmp_path_factory) -> tuple[Path, dict]:
    """One run of 400,000 lines under a 60 MB memory limit: with 2 to 4 threads, DuckDB spills to
    `.tmp` for a good part of the evaluation (with more, it runs out of memory at that limit)."""
    d = tmp_path_factory.mktemp("spill")
    rng = random.Random(15)
    qrels = [f"{q} 0 d{q}_{i} {rng.randint(0, 3)}\n" for q in range(2000) for i in range(0, 200, 7)]
    run = [f"{q} Q0 d{q}_{i} {i + 1} {1000 - i - rng.random():.6f} big\n" for q in range(2000) for i in range(200)]  # fmt: skip
    (d / "qrels.txt").write_text("".join(qrels))
    (d / "big.trec").write_text("".join(run))
    spec = {
        "collections": {"c": {"qrels": str(d / "qrels.txt")}},
        "runs": {"big": {"path": str(d / "big.trec"), "collection": "c"}},
        "settings": {"memory_limit": "60MB"},
        "metrics": ["AP", "P@10", "nDCG@10", "RR", "Bpref", "infAP"],
        "outputs": OUTPUTS,
    }
    return d, spec


def wait_for(path: Path, running) -> None:
    while running() and not path.is_dir():
        time.sleep(0.005)
    assert path.is_dir(), "DuckDB never spilled: raise the run's size or lower the limit"


def test_an_interrupted_spilling_evaluation_removes_the_spill_files(big_run, tmp_path, monkeypatch):
    from pipeline.engines.duckdb.executor import execute
    from pipeline.run.evaluation import validate

    _, spec = big_run
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.chdir(tmp_path)  # DuckDB spills to .tmp in the working directory
    plan = validate(tmp_path / "spec.yaml").sql
    spill = tmp_path / ".tmp"
    # Two threads whatever the machine, so that 60 MB spills rather than runs out of memory.
    con = duckdb.connect(config={"memory_limit": "60MB", "threads": 2})
    done = threading.Event()

    def stop_once_spilled() -> None:
        wait_for(spill, lambda: not done.is_set())
        os.kill(os.getpid(), signal.SIGTERM)

    with interrupts.handling():
        try:
            with pytest.raises(STOPPED), interrupts.armed():
                threading.Thread(target=stop_once_spilled, daemon=True).start()
                execute(plan, interrupts.watch(con))
        finally:
            done.set()
        assert interrupts.received() == signal.SIGTERM
    assert not spill.exists()


@pytest.fixture(scope="module")
def spilling(big_run) -> Setup:
    return prepare(*big_run)


@pytest.mark.skipif(not LINUX, reason="reads the signal mask from /proc")
@pytest.mark.skipif(not SMALL_MACHINE, reason="DuckDB runs out of memory at 60 MB with > 4 threads")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_duckdb_spills_removes_the_spill_files(spilling, tmp_path, signum):
    spill = tmp_path / "s" / "job" / ".tmp"

    def spilled(process: subprocess.Popen) -> None:
        wait_for(spill, lambda: process.poll() is None)

    moment = interrupt(spilling, tmp_path / "s", Moment(signum, 0.0), ready=spilled)
    check(moment, spilling)
    assert not spill.exists()


RENAME_AND_SIGNAL = """
import os, signal, sys
rename = os.replace
def replace(source, target):
    if not getattr(replace, "sent", False):  # the scheduler stops the job mid-rename
        replace.sent = True
        os.kill(os.getpid(), signal.SIG{})
    rename(source, target)
os.replace = replace
from pipeline.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("name", ["INT", "TERM"])
def test_a_signal_during_the_final_renames_lets_them_complete(evaluation, tmp_path, name):
    work = evaluation.workdir(tmp_path, "job")
    process = start(work, "-c", RENAME_AND_SIGNAL.format(name))
    out, err = process.communicate(timeout=120)
    signum = signal.Signals[f"SIG{name}"]
    moment = Moment(signum, 0.0, result=(process.returncode, out, err))
    moment.after, moment.left = snapshot(work / "out"), leftovers(work)
    check(moment, evaluation)
    assert re.fullmatch(RENAMED.format(f"SIG{name}"), err)


SIGNALS_AS_IT_EXITS = """
import atexit, os, signal, time
def signal_late():  # Ctrl-C, then the scheduler's SIGTERM, as the finished process exits
    os.kill(os.getpid(), signal.SIGINT)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.05)
atexit.register(signal_late)
from pipeline.cli import irpipe
irpipe()
"""


def test_a_signal_after_the_work_is_reported_changes_nothing(evaluation, tmp_path):
    """Once `irpipe` has written and reported, the process only exits. A signal then is ignored:
    given back to Python, it would end a completed evaluation as "killed by SIGINT", silently
    (Python's finalization resets its handlers to the system's default)."""
    work = evaluation.workdir(tmp_path, "job")
    process = start(work, "-c", SIGNALS_AS_IT_EXITS)
    out, err = process.communicate(timeout=120)
    assert (process.returncode, out, err) == (0, "", "")
    assert_new(snapshot(work / "out"), evaluation, "signals as it exits")
    assert leftovers(work) == []


def _discriminators(schema: object) -> list:
    """The discriminator functions in a pydantic core schema, however deep."""
    if isinstance(schema, dict):
        found = [schema["discriminator"]] if callable(schema.get("discriminator")) else []
        return found + [f for value in schema.values() for f in _discriminators(value)]
    if isinstance(schema, list | tuple):
        return [f for value in schema for f in _discriminators(value)]
    return []


def test_a_signal_inside_a_spec_discriminator_waits_for_the_checkpoint():
    """pydantic-core calls the spec's discriminators (a run's kind, a gate's, a qrels') where a
    KeyboardInterrupt can be printed as "Exception ignored" and lost (seen once in CI: a
    traceback on stderr): each is marked, and a signal while one runs is recorded and raised at
    the next checkpoint."""
    from pipeline.spec.models import Spec

    Spec.model_rebuild()
    found = _discriminators(Spec.__pydantic_core_schema__)
    assert len({f.__code__ for f in found}) >= 3
    assert all(interrupts.defers(f) for f in found), [f.__name__ for f in found]

    @interrupts.deferring
    def discriminator(value: object) -> str:
        os.kill(os.getpid(), signal.SIGINT)
        # Python runs the handler between bytecodes: a thousand of them here, after the kill
        return "file" if sum(i for i in range(1000)) else "overlay"

    with interrupts.handling(), interrupts.armed():
        assert discriminator({}) == "file"
        assert interrupts.received() == signal.SIGINT
        with pytest.raises(KeyboardInterrupt):
            interrupts.checkpoint()
