"""The error contract, by property: one thing wrong at a time, drawn by hypothesis, in a directory
that a good evaluation has already written its outputs into, through each door.

A mistake is a change to the spec, to an input file or to a path irpipe would write. Whatever
hypothesis draws (a key, a metric, a setting, a value, a line, a field, a path), the evaluation
raises the mistake's error class (the command exits with its code, prints one `Error: ` line and
no traceback), the message names the key, or the file and the line, and not one file of the
directory changed: no output replaced, no temporary file left, nothing of the user's touched.
tests/test_bad_inputs.py holds the hand-written cases; this finds the ones nobody wrote down.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import irpipe_inprocess, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import InputDataError, IrpipeError, SpecError, evaluate
from pipeline.errors import DuplicateError

QRELS = ["1 0 a 2", "1 0 b 0", "1 0 c 1", "2 0 d 1", "2 0 e 0"]
RUN = [
    "1 Q0 a 1 3.5 sys",
    "1 Q0 b 2 2.5 sys",
    "1 Q0 c 3 1.5 sys",
    "2 Q0 d 1 1 sys",
    "2 Q0 e 2 0.5 sys",
]
SPEC = {
    "collections": {"c": {"qrels": "qrels.txt"}},
    "runs": {"r": {"path": "run.txt", "collection": "c"}},
    "metrics": ["AP", "P@2"],
    "outputs": [{"path": "out/summary.csv"}, {"path": "out/per_query.parquet", "level": "query"}],
}
TOP_KEYS = {"collections", "runs", "settings", "metrics", "outputs", "compare", "expect", "gates",
            "history", "pools", "spark"}  # fmt: skip
SUFFIXES = {".csv", ".db", ".duckdb", ".htm", ".html", ".jsonl", ".markdown", ".md", ".ndjson",
            ".parquet", ".png", ".qrels", ".run", ".svg", ".tex", ".trec", ".trec_eval", ".tsv",
            ".txt"}  # fmt: skip


@dataclass(frozen=True)
class Mistake:
    """One thing wrong: `apply` makes it in a good directory; the evaluation must raise `error`
    with a message matching `names`."""

    what: str
    apply: Callable[[Path], None]
    error: type[IrpipeError]
    names: str


def edit_spec(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(d: Path) -> None:
        spec = yaml.safe_load((d / "spec.yaml").read_text())
        change(spec)
        (d / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))

    return apply


def edit_lines(name: str, change: Callable[[list[str]], None]) -> Callable[[Path], None]:
    def apply(d: Path) -> None:
        lines = (d / name).read_text().splitlines()
        change(lines)
        (d / name).write_text("\n".join(lines) + "\n")

    return apply


def replaced(lines: list[str], number: int, text: str) -> None:
    lines[number - 1] = text


words = st.from_regex(r"[a-z][a-z_]{2,9}", fullmatch=True)
not_numbers = st.from_regex(r"[a-zA-Z][a-zA-Z_]{0,6}", fullmatch=True).filter(
    lambda w: w.lower() not in {"nan", "inf", "infinity", "e"}
)


@st.composite
def spec_mistakes(draw) -> Mistake:
    """A key, a metric, a setting or a reference of the spec gone wrong."""
    kind = draw(st.sampled_from(["key", "metric", "cutoff", "setting", "collection", "suffix",
                                 "qrels"]))  # fmt: skip
    if kind == "key":
        key = draw(words.filter(lambda w: w not in TOP_KEYS))
        return Mistake(kind, edit_spec(lambda s: s.update({key: 1})), SpecError,
                       rf"spec\.yaml:(\d+:)? {key}: unknown key")  # fmt: skip
    if kind == "metric":
        name = "Xx" + draw(words)
        return Mistake(kind, edit_spec(lambda s: s["metrics"].append(name)), SpecError,
                       rf"metrics\.2: unknown metric '{name}'")  # fmt: skip
    if kind == "cutoff":
        k = draw(st.integers(-1000, 0))
        return Mistake(kind, edit_spec(lambda s: s["metrics"].append({"metric": "P", "k": k})),
                       SpecError, r"metrics\.2: .*parameter 'k'")  # fmt: skip
    if kind == "setting":
        name = draw(st.sampled_from(["ordering", "queries", "relevance_level", "compatibility",
                                     "input", "engine"]))  # fmt: skip
        value = draw(not_numbers.filter(lambda w: w not in {"rank", "qrels", "run", "lenient"}))
        return Mistake(kind, edit_spec(lambda s: s.setdefault("settings", {}).update({name: value})),
                       SpecError, rf"spec\.yaml:(\d+:)? settings\.{name}: ")  # fmt: skip
    if kind == "collection":
        name = draw(words.filter(lambda w: w != "c"))
        return Mistake(kind, edit_spec(lambda s: s["runs"]["r"].update(collection=name)),
                       SpecError, rf"runs\.r\.collection: .*{name}")  # fmt: skip
    if kind == "suffix":
        suffix = "." + draw(words.filter(lambda w: f".{w}" not in SUFFIXES))
        path = f"out/table{suffix}"
        return Mistake(kind, edit_spec(lambda s: s["outputs"].append({"path": path})), SpecError,
                       rf"outputs\.2\.path: \S+: no writer for '\{suffix}'")  # fmt: skip
    name = draw(words) + ".txt"
    return Mistake(kind, edit_spec(lambda s: s["collections"]["c"].update(qrels=name)), SpecError,
                   rf"collections\.c\.qrels: \S+/{name} does not exist")  # fmt: skip


@st.composite
def data_mistakes(draw) -> Mistake:
    """A line of the run or of the qrels gone wrong: a field lost, a number that is not one, a
    document listed twice."""
    number = draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["run_field", "run_score", "qrels_grade", "run_twice"]))
    if kind == "run_field":
        fields = RUN[number - 1].split()
        del fields[draw(st.integers(0, 5))]
        text = " ".join(fields)
        return Mistake(kind, edit_lines("run.txt", lambda ls: replaced(ls, number, text)),
                       InputDataError, rf"run\.txt:{number}: expected 6 fields")  # fmt: skip
    if kind == "run_score":
        fields = RUN[number - 1].split()
        fields[4] = draw(not_numbers)
        text = " ".join(fields)
        return Mistake(kind, edit_lines("run.txt", lambda ls: replaced(ls, number, text)),
                       InputDataError, rf"run\.txt:{number}: the score must be a number")  # fmt: skip
    if kind == "qrels_grade":
        grade = draw(not_numbers | st.from_regex(r"[0-9]\.[0-9]*[1-9]", fullmatch=True))
        text = " ".join([*QRELS[number - 1].split()[:3], grade])
        return Mistake(kind, edit_lines("qrels.txt", lambda ls: replaced(ls, number, text)),
                       InputDataError, rf"qrels\.txt:{number}: the relevance grade must be an integer")  # fmt: skip
    again = RUN[number - 1].replace(" sys", "").rsplit(" ", 2)[0] + " 9 0.25 sys"
    return Mistake(kind, edit_lines("run.txt", lambda ls: ls.append(again)), DuplicateError,
                   rf"run\.txt:{number}: query '\d' has document '\w' again on line 6")  # fmt: skip


@st.composite
def write_mistakes(draw) -> Mistake:
    """A path irpipe would write that is an input, the spec, a file of the user's, or a
    directory holding what it keeps."""
    kind = draw(st.sampled_from(["output", "dashboard", "history"]))
    if kind == "output":
        path = draw(st.sampled_from(["mine.csv", "out", "mine", "out/summary.csv", "run.txt"]))
        return Mistake(kind, edit_spec(lambda s: s["outputs"].append({"path": path})), SpecError,
                       r"spec\.yaml:(\d+:)? outputs\.2\.(path|level): ")  # fmt: skip
    if kind == "dashboard":
        path = draw(st.sampled_from(["out", ".", "..", "run.txt", "mine.csv", "mine", "h.duckdb"]))
        section = {"path": "h.duckdb", "dashboard": path}
        return Mistake(kind, edit_spec(lambda s: s.update(history=section)), SpecError,
                       r"spec\.yaml:(\d+:)? history(\.dashboard)?: ")  # fmt: skip
    path = draw(st.sampled_from(["run.txt", "qrels.txt", "spec.yaml", "out/summary.csv", "mine"]))
    return Mistake(kind, edit_spec(lambda s: s.update(history=path)), SpecError,
                   r"spec\.yaml:(\d+:)? (history|outputs\.0\.path): ")  # fmt: skip


mistakes = st.one_of(spec_mistakes(), data_mistakes(), write_mistakes())


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """Good inputs, a spec, the outputs of its evaluation, and files of the user's."""
    d = tmp_path_factory.mktemp("good")
    (d / "qrels.txt").write_text("\n".join(QRELS) + "\n")
    (d / "run.txt").write_text("\n".join(RUN) + "\n")
    (d / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    evaluate(d / "spec.yaml")
    (d / "mine.csv").write_text("the user's,table\n")
    (d / "mine").mkdir()
    (d / "mine" / "notes.txt").write_text("the user's notes\n")
    return d


def prepared(good: Path, factory, mistake: Mistake) -> tuple[Path, dict]:
    """A copy of the good directory with the mistake made, and what it holds then."""
    d = factory.mktemp("case") / "case"
    shutil.copytree(good, d)
    mistake.apply(d)
    return d, snapshot(d.parent)


def examples(count: int) -> settings:
    return settings(max_examples=count, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip


@examples(120)
@given(mistake=mistakes)
def test_the_spec_door_raises_the_mistake_s_error_naming_it_and_writes_nothing(
    good, tmp_path_factory, mistake
):
    d, before = prepared(good, tmp_path_factory, mistake)
    with pytest.raises(IrpipeError) as raised:
        evaluate(d / "spec.yaml")
    assert type(raised.value) is mistake.error, (mistake.what, str(raised.value))
    assert re.search(mistake.names, str(raised.value)), (mistake.what, str(raised.value))
    assert snapshot(d.parent) == before


@examples(25)
@given(mistake=mistakes)
def test_the_command_exits_with_the_mistake_s_code_in_one_line(good, tmp_path_factory, mistake):
    d, before = prepared(good, tmp_path_factory, mistake)
    result = irpipe_inprocess("run", "--quiet", d / "spec.yaml")
    assert result.returncode == mistake.error.exit_code, result.stderr
    assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr
    assert re.search(mistake.names, result.stderr), result.stderr
    assert snapshot(d.parent) == before


#: the keyword door's spellings of the spec's mistakes that a call can make
keyword_mistakes = st.one_of(
    st.builds(lambda w: ({"metrics": ["AP", "Xx" + w]}, r"metrics\.1: unknown metric"), words),
    st.builds(
        lambda k: ({"metrics": [{"metric": "P", "k": k}]}, r"metrics\.0: .*parameter 'k'"),
        st.integers(-1000, 0),
    ),  # fmt: skip
    st.builds(
        lambda name, value: ({"settings": {name: value}}, rf"settings\.{name}: "),
        st.sampled_from(["ordering", "queries", "relevance_level", "compatibility", "input"]),
        not_numbers.filter(lambda w: w not in {"rank", "qrels", "run", "lenient"}),
    ),
    st.builds(
        lambda w: ({"settings": {w: 1}}, rf"settings\.{w}: unknown key"),
        words.filter(
            lambda w: (
                w
                not in {
                    "relevance_level",
                    "ordering",
                    "queries",
                    "missing_queries",
                    "compatibility",
                    "max_docs",
                    "judged_only",
                    "input",
                    "memory_limit",
                    "engine",
                }
            )
        ),
    ),  # fmt: skip
)


@examples(60)
@given(mistake=keyword_mistakes)
def test_the_keyword_door_names_the_keyword_s_entry(tmp_path, monkeypatch, mistake):
    keywords, names = mistake
    monkeypatch.chdir(tmp_path)  # the door's spec lives in the working directory
    keywords = {"metrics": ["AP"], **keywords}
    with pytest.raises(SpecError, match=names):
        evaluate(qrels={"1": {"a": 1, "b": 0}}, runs={"r": {"1": {"a": 2.0, "b": 1.0}}}, **keywords)
    assert list(tmp_path.iterdir()) == []
