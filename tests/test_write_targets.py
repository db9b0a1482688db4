"""Nothing irpipe writes replaces what it did not write (`pipeline.outputs.targets`).

By hand: the dashboard (by the spec and by `irpipe dashboard --out`), `to_spec`, and the rules
themselves. Then a property: a spec whose outputs, history and dashboard are drawn among the paths
of a directory that holds the inputs, the spec and files of the user's, evaluated by the Python
door: either it is refused with a SpecError before anything is written, or it succeeds and every
file that is not one irpipe writes is as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import irpipe_inprocess, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import IrpipeError, SpecError, evaluate
from pipeline.outputs.targets import MARKER, TO_SPEC_HEADER, Kept, Written, check_written

QRELS = "1 0 a 2\n1 0 b 0\n2 0 d 1\n"
RUN = "1 Q0 a 1 3.5 sys\n1 Q0 b 2 2.5 sys\n2 Q0 d 1 1 sys\n"


def inputs(directory: Path) -> Path:
    """qrels, a run and a spec over them (no outputs) in `directory`; the spec."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "qrels.txt").write_text(QRELS)
    (directory / "run.txt").write_text(RUN)
    return write_spec(directory, {})


def write_spec(directory: Path, more: dict) -> Path:
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["AP"],
        **more,
    }
    (directory / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return directory / "spec.yaml"


# --- the dashboard ---


def test_a_dashboard_replaces_the_one_it_wrote_and_marks_it(tmp_path):
    spec = write_spec(
        inputs(tmp_path).parent, {"history": {"path": "h.duckdb", "dashboard": "site"}}
    )
    for _ in range(2):
        result = irpipe_inprocess("run", "--quiet", str(spec))
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / MARKER).is_file()
    assert sorted(p.name for p in (tmp_path / "site" / "evaluations").iterdir()) == [
        "1.html",
        "2.html",
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left


def test_a_dashboard_of_an_earlier_irpipe_without_the_marker_is_still_replaced(tmp_path):
    spec = write_spec(
        inputs(tmp_path).parent, {"history": {"path": "h.duckdb", "dashboard": "site"}}
    )
    assert irpipe_inprocess("run", "--quiet", str(spec)).returncode == 0
    (tmp_path / "site" / MARKER).unlink()  # as irpipe wrote it before the marker
    result = irpipe_inprocess("run", "--quiet", str(spec))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / MARKER).is_file()


def test_a_users_directory_is_never_replaced_by_the_dashboard_command(tmp_path):
    spec = write_spec(inputs(tmp_path).parent, {"history": "h.duckdb"})
    assert irpipe_inprocess("run", "--quiet", str(spec)).returncode == 0
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "index.html").write_text("my own page")
    before = snapshot(tmp_path)
    result = irpipe_inprocess("dashboard", str(tmp_path / "h.duckdb"), "--out", str(photos))
    assert result.returncode == 2
    assert result.stderr == (
        f"Error: --out: {photos} exists and is not a dashboard irpipe wrote (no {MARKER} in it), "
        "and the dashboard replaces its directory whole; name a new or empty directory\n"
    )
    assert snapshot(tmp_path) == before


def test_the_python_door_refuses_what_irpipe_run_refuses(tmp_path):
    spec = write_spec(inputs(tmp_path).parent, {"history": {"path": "h.duckdb", "dashboard": "."}})
    before = snapshot(tmp_path)
    with pytest.raises(SpecError, match=r"history\.dashboard: \S+ is the spec's directory"):
        evaluate(spec)
    assert snapshot(tmp_path) == before


# --- to_spec ---


def results():
    return evaluate(qrels={"1": {"a": 1}}, runs={"bm25": {"1": {"a": 2.0}}}, metrics=["AP"])


def test_to_spec_into_a_file_is_named(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SpecError, match=r"^to_spec\('\S+/notes\.txt'\): \S+ is a file; give a new or empty directory$"):  # fmt: skip
        results().to_spec(tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_to_spec_replaces_its_own_files_and_never_a_users(tmp_path):
    ours = results()
    spec = ours.to_spec(tmp_path / "experiment")
    assert spec.read_text().startswith(TO_SPEC_HEADER + "\n")
    assert ours.to_spec(tmp_path / "experiment") == spec  # its own: replaced
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "spec.yaml").write_text("my spec\n")
    (tmp_path / "mine" / "other.txt").write_text("kept\n")
    before = snapshot(tmp_path / "mine")
    with pytest.raises(SpecError, match=r"spec\.yaml exists, and \S+/mine is not a directory to_spec wrote"):  # fmt: skip
        ours.to_spec(tmp_path / "mine")
    assert snapshot(tmp_path / "mine") == before
    (tmp_path / "mine" / "spec.yaml").unlink()  # beside files of the user's, only new files
    ours.to_spec(tmp_path / "mine")
    assert (tmp_path / "mine" / "other.txt").read_text() == "kept\n"


def test_to_spec_never_writes_over_an_input_given_as_a_file(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    experiment = tmp_path / "experiment"
    experiment.mkdir()
    (experiment / "spec.yaml").write_text(TO_SPEC_HEADER + "\n")  # a directory to_spec wrote
    qrels = experiment / "runs.bm25.parquet"  # the name to_spec gives the run bm25's table
    pq.write_table(pa.table({"qid": ["1"], "docno": ["a"], "rel": [1]}), qrels)
    before = qrels.read_bytes()
    ours = evaluate(qrels=str(qrels), runs={"bm25": {"1": {"a": 2.0}}}, metrics=["AP"])
    with pytest.raises(SpecError, match=r"^to_spec\('\S+'\): \S+/runs\.bm25\.parquet is an input of these results; name another directory$"):  # fmt: skip
        ours.to_spec(experiment)
    assert qrels.read_bytes() == before


# --- the rules ---


def test_a_target_that_is_a_symbolic_link_to_an_input_is_that_input(tmp_path):
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "out.csv").symlink_to(tmp_path / "run.txt")
    written = [Written(tmp_path / "out.csv", "output", "outputs.0", "outputs.0.path")]
    with pytest.raises(SpecError, match=r"^outputs\.0\.path: \S+/run\.txt is an input \(runs\.r\.path\); keep it$"):  # fmt: skip
        check_written(written, [Kept(tmp_path / "run.txt", "an input (runs.r.path)", "keep it")])


def test_an_empty_directory_may_become_the_dashboard_but_not_one_holding_an_output(tmp_path):
    (tmp_path / "site").mkdir()
    site = Written(tmp_path / "site", "dashboard", "history.dashboard", "history.dashboard")
    check_written([site], [])
    inside = Written(tmp_path / "site" / "a.csv", "output", "outputs.0", "outputs.0.path")
    with pytest.raises(SpecError, match=r"^history\.dashboard: \S+/site holds outputs\.0 \(\S+/site/a\.csv\), and the dashboard replaces its directory whole"):  # fmt: skip
        check_written([inside, site], [])
    report = Written(tmp_path / "site" / "j.xml", "report", "--junit", "--junit")
    dashboard = Kept(tmp_path / "site", "the dashboard (--out)")
    with pytest.raises(SpecError, match=r"^--junit: \S+/j\.xml lies inside the dashboard \(--out\) \(\S+/site\); name a path outside it$"):  # fmt: skip
        check_written([report], [dashboard])


# --- the property ---

#: the names a generated spec draws its paths from: inputs, the spec, the user's files, new names
NAMES = ["qrels.txt", "run.txt", "spec.yaml", ".", "..", "mine", "mine/notes.txt", "out",
         "out/a.csv", "out/b.csv", "site", "site/x.csv", "h.duckdb", "new/c.csv", "notes.csv"]  # fmt: skip


@st.composite
def layouts(draw):
    """A spec's outputs (0 to 3), history (or none) and dashboard (or none), among NAMES."""
    outputs = draw(st.lists(st.sampled_from(NAMES), max_size=3))
    history = draw(st.none() | st.sampled_from(NAMES))
    dashboard = draw(st.none() | st.sampled_from(NAMES)) if history else None
    return outputs, history, dashboard


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(layout=layouts())
def test_evaluating_refuses_or_leaves_everything_else_as_it_was(tmp_path_factory, layout):
    outputs, history, dashboard = layout
    root = tmp_path_factory.mktemp("layout")
    case = root / "case"
    inputs(case)
    (case / "mine").mkdir()
    (case / "mine" / "notes.txt").write_text("mine\n")
    (case / "notes.csv").write_text("a,b\n")
    section = {"history": {"path": history, **({"dashboard": dashboard} if dashboard else {})}}
    more = {"outputs": [{"path": _suffixed(o)} for o in outputs], **(section if history else {})}
    spec = write_spec(case, more)
    before = snapshot(root)
    try:
        evaluate(spec)
    except IrpipeError:  # a spec error, or a history that is not one (exit 6)
        assert snapshot(root) == before  # refused: nothing written, nothing removed
        return
    written = {(case / _suffixed(o)).resolve() for o in outputs}
    written |= {p.with_name(p.name + ".manifest.json") for p in written}
    written |= {(case / history).resolve()} if history else set()
    site = (case / dashboard).resolve() if dashboard else None
    after = snapshot(root)
    for name, content in before.items():  # the user's files, the spec, the inputs
        path = (root / name).resolve()
        if path in written or (site is not None and (path == site or site in path.parents)):
            continue
        assert after.get(name, "gone") == content, name


def _suffixed(name: str) -> str:
    """An output needs a writer's suffix: a name without one is taken as NAME.csv."""
    return name if name.endswith(".csv") else f"{name}.csv"
