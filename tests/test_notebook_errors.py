"""The Python door's arguments and tables: every shape it accepts gives the values of the plain
form, and everything it refuses is one line of irpipe's own error class naming the keyword, the
column and, where one value is at fault, its row (counted from 1, with its qid and docno), never
a pandas, polars or pyarrow exception."""

from __future__ import annotations

import re

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import Evaluator, InputDataError, SpecError, evaluate
from pipeline.errors import IrpipeError
from pipeline.synthetic import generate

QRELS = {"1": {"a": 1, "b": 0}, "2": {"c": 2}}
RUN = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})


def _refused(error: type[IrpipeError], message: str, **keywords) -> str:
    """The one line `evaluate(**keywords)` refuses with, of class `error` exactly."""
    keywords = {"qrels": QRELS, "runs": RUN, "metrics": ["AP"], **keywords}
    with pytest.raises(IrpipeError) as caught:  # anything else leaks, and fails the test
        evaluate(**keywords)
    assert type(caught.value) is error, caught.value
    assert re.search(message, str(caught.value)), str(caught.value)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def _run(**columns) -> pd.DataFrame:
    return RUN.assign(**columns)


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        # 1. grades given as text, even as digits: a column's type says what it holds
        ({"qrels": pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": ["1", "0"]})},
         SpecError, r"^qrels\['default'\]: column 'rel' holds numbers as text, e\.g\. '1' on "
         r"row 1 \(qid '1', docno 'a'\); grades are integers: give numbers \(pandas: "
         r"\.astype\(int\)"),
        # 2. a dict by query whose scores are words
        ({"runs": {"1": {"a": "high"}}}, SpecError,
         r"^runs\['run1'\]: column 'score', row 1 \(qid '1', docno 'a'\): 'high' is text, not "
         r"a number; scores are numbers$"),
        # 3. a polars frame whose score column is text
        ({"runs": {"bm25": pl.from_pandas(_run(score=["2", "one", "1"]))}}, SpecError,
         r"^runs\['bm25'\]: column 'score', row 2 \(qid '1', docno 'b'\): 'one' is text"),
        ({"runs": {"bm25": pl.from_pandas(_run(score=["2", "1", "1"]))}}, SpecError,
         r"^runs\['bm25'\]: column 'score' holds numbers as text, e\.g\. '2' on row 1 .*"
         r"polars: \.cast\(pl\.Float64\)"),
        # 4. pandas' rank() gives ties their mean rank
        ({"runs": {"bm25": _run(rank=[1.0, 2.5, 1.0]).drop(columns="score")},
          "settings": {"ordering": "rank"}}, SpecError,
         r"^runs\['bm25'\]: column 'rank', row 2 \(qid '1', docno 'b'\): 2\.5 is not a whole "
         r"number; ranks are whole numbers \(pandas' rank\(\) gives tied rows their mean rank; "
         r"rank\(method='first'\) does not\)$"),
        ({"runs": {"bm25": _run(rank=[1, None, 1]).astype({"rank": "Int64"})},
          "settings": {"ordering": "rank"}}, InputDataError,
         r"^runs\['bm25'\]: column 'rank', row 2 \(qid '1', docno 'b'\): the rank is missing; "
         r"under settings=\{'ordering': 'rank'\} every row needs one$"),
        # 5. mixed ids: an int or a str is its text; a float in among them has none
        ({"runs": _run(qid=pd.Series(["1", 1, 2.5], dtype=object))}, SpecError,
         r"^runs\['run1'\]: column 'qid', row 3: 2\.5 is a float; ids are text or integers$"),
        # 6. a dict by query whose documents are not pairs
        ({"runs": {"1": [("a", 2.0), ("b",)]}}, SpecError,
         r"^runs\['run1'\]\['1'\]\[1\]: expected a pair \(docno, value\), found \('b',\)$"),
        ({"runs": {"bm25": {"1": {"a": 1.0}, "2": 3.0}}}, SpecError,
         r"^runs\['bm25'\]\['2'\]: expected \{docno: value\} or \[\(docno, value\), \.\.\.\], "
         r"found float$"),
        # 7. keywords of the wrong shape
        ({"settings": "trec_eval-9"}, SpecError,
         r"^settings='trec_eval-9': give a mapping, as a spec's settings section is, e\.g\. "
         r"settings=\{'compatibility': 'trec_eval-9'\}$"),
        ({"columns": ["qid", "docno"]}, SpecError,
         r"^columns=\['qid', 'docno'\]: give a mapping of irpipe's column names to the table's"),
        ({"columns": {"passage_id": "docno"}}, SpecError,
         r"^columns: 'passage_id' is not one of irpipe's columns \(qid, docno, rel, score, "
         r"rank, subtopic\); .* did you mean \{'docno': 'passage_id'\}\?$"),
        ({"compare": "bm25"}, SpecError,
         r"^compare='bm25': give a mapping, .* e\.g\. compare=\{'baseline': 'bm25'\}$"),
        ({"metrics": "nDCG@10"}, SpecError,
         r"^metrics='nDCG@10': give a list of metrics, e\.g\. metrics=\['nDCG@10'\]$"),
        ({"runs": RUN["score"]}, SpecError,
         r"^runs\['run1'\]: cannot read a pandas Series; give a DataFrame"),
        # 9. what else a frame may hold
        ({"runs": _run(qid=[1, None, 2])}, SpecError,
         r"^runs\['run1'\]: column 'qid' holds floats \(double\) \(row 2 is missing\); ids are "
         r"text: give them as strings or integers"),
        ({"runs": _run(docno=["a", None, "c"])}, InputDataError,
         r"^runs\['run1'\]: row 2: the docno is missing"),
        ({"runs": _run(score=[2.0, None, 1.0])}, InputDataError,
         r"^runs\['run1'\]: row 2: the score is missing"),
        ({"runs": pl.from_pandas(RUN).with_columns(score=pl.Series([2.0, float("nan"), 1.0]))},
         InputDataError, r"^runs\['run1'\]: row 2: the score must be a finite number"),
        ({"qrels": pl.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"],
                                 "rel": [1.0, float("nan")]})},
         InputDataError, r"^qrels\['default'\]: row 2: the relevance grade is missing"),
        ({"qrels": pl.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [0.5, float("inf")]}),
          "settings": {"grades": "real"}},
         InputDataError, r"^qrels\['default'\]: row 2: the relevance grade must be a finite number"),
        ({"qrels": pd.DataFrame({"qid": ["1"], "docno": ["a"], "rel": ["0.5"]}),
          "settings": {"grades": "real"}}, SpecError,
         r"^qrels\['default'\]: column 'rel' holds numbers as text, e\.g\. '0\.5' on row 1 .*; "
         r"grades are numbers: give numbers \(pandas: pd\.to_numeric"),
        ({"metrics": ["P(rel=0.5)@2"]}, SpecError, r"metrics\.0: P\(rel=0\.5\)@2: rel=0\.5 is a "
         r"decimal, and grades are integers: give an integer, or read decimal grades with "
         r"settings: \{grades: real\}$"),
        ({"qrels": {"1": {"a": 1.5}}}, SpecError,
         r"^qrels\['default'\]: column 'rel', row 1 \(qid '1', docno 'a'\): 1\.5 is not a whole "
         r"number; grades are integers \(decimal grades are read with settings=\{'grades': "
         r"'real'\}\)$"),
        ({"runs": _run(score=pd.Series([2.0, "x", 1.0], dtype=object))}, SpecError,
         r"^runs\['run1'\]: column 'score', row 2 \(qid '1', docno 'b'\): 'x' is text, not a "
         r"number"),
        ({"runs": pd.DataFrame({"qid": [], "docno": [], "score": []})}, InputDataError,
         r"^runs\['run1'\]: no data: the table has no row$"),
        ({"runs": _run(qid=pd.to_datetime(["2020-01-01"] * 3))}, SpecError,
         r"^runs\['run1'\]: column 'qid' holds timestamp\[.*\]; ids are text or integers$"),
        ({"runs": pd.concat([RUN, RUN[["score"]]], axis=1)}, SpecError,
         r"^runs\['run1'\]: column 'score' appears 2 times; rename all but one$"),
        ({"runs": pl.LazyFrame({"qid": ["x"], "docno": ["a"], "score": [1.0]}).with_columns(
            pl.col("qid").cast(pl.Int64))}, InputDataError,
         r"^runs\['run1'\]: the polars LazyFrame could not be read: conversion from `str`"),
        ({"runs": duckdb.connect().sql(
            "SELECT v::INTEGER AS qid, 'a' AS docno, 1.0 AS score FROM (VALUES ('x')) t(v)")},
         InputDataError, r"^runs\['run1'\]: the DuckDB relation could not be read: Conversion"),
    ],
)  # fmt: skip
def test_what_the_door_refuses_is_one_line_naming_the_keyword_column_and_row(
    keywords, error, message
):
    _refused(error, message, **keywords)


@pytest.mark.parametrize(
    ("arguments", "keywords", "message"),
    [
        ((QRELS, "AP"), {}, r"^metrics='AP': give a list of metrics, e\.g\. metrics=\['AP'\]$"),
        ((QRELS, {"metric": "P", "k": 10}), {}, r"^metrics=\{'metric': 'P', 'k': 10\}: give a "
         r"list of metrics, e\.g\. metrics=\[\{'metric': 'P', 'k': 10\}\]$"),
        ((QRELS, ["AP"]), {"settings": "trec_eval-9"}, r"^settings='trec_eval-9': give a mapping"),
        ((QRELS, ["AP"]), {"columns": ["qid"]}, r"^columns=\['qid'\]: give a mapping"),
        ((QRELS, ["AP"]), {"columns": {"docno": 1.5}}, r"^columns\['docno'\]: give the table's "
         r"column name, not 1\.5$"),
    ],
)  # fmt: skip
def test_an_evaluator_refuses_the_same_shapes(arguments, keywords, message):
    with pytest.raises(SpecError, match=message):
        Evaluator(*arguments, **keywords)


def _per_query(qrels, runs, **keywords) -> list:
    results = evaluate(qrels=qrels, runs=runs, metrics=["AP", "nDCG@10", "P@5"], **keywords)
    return sorted(results.evaluation.per_query())


def test_a_dict_of_docno_score_pairs_gives_the_values_of_the_dict_of_dicts():
    data = generate(3, queries=12, runs=2, extremes=True)
    pairs = {name: {q: list(docs.items()) for q, docs in run.items()}
             for name, run in data.runs.items()}  # fmt: skip
    qrels = {q: [(d, g) for d, g in docs.items()] for q, docs in data.qrels.items()}
    expected = _per_query(data.qrels, data.runs)
    assert _per_query(qrels, pairs) == expected
    assert _per_query(data.qrels, pairs["run0"]) == _per_query(data.qrels, data.runs["run0"])


def test_ids_of_mixed_types_are_each_their_exact_text():
    mixed = _run(qid=pd.Series(["1", 1, 2], dtype=object), docno=pd.Series([7, "b", "c"]))
    text = _run(qid=["1", "1", "2"], docno=["7", "b", "c"])
    qrels = {"1": {"7": 1, "b": 0}, 2: {"c": 2}}  # the keys of a dict mix them too
    assert _per_query(qrels, mixed) == _per_query(QRELS | {"1": {"7": 1, "b": 0}}, text)
    assert _per_query(QRELS, {1: {"a": 1.0}, "2": {"c": 1.0}}) == _per_query(
        QRELS, {"1": {"a": 1.0}, "2": {"c": 1.0}}
    )


@pytest.mark.parametrize(
    "kind",
    [pa.string_view(), pa.large_string(), pa.dictionary(pa.int32(), pa.string_view()),
     pa.dictionary(pa.int8(), pa.large_string())],
)  # fmt: skip
def test_every_arrow_text_type_is_read_as_text(kind):
    def table(ids):
        return pa.table({"qid": pa.array(ids).cast(kind), "docno": ["a", "b", "c"],
                         "score": [2.0, 1.0, 1.0]})  # fmt: skip

    assert _per_query(QRELS, table(["1", "1", "2"])) == _per_query(QRELS, RUN)


def test_text_is_read_where_pyarrow_has_no_string_view(monkeypatch):
    """pyarrow 14 and 15 have no `is_string_view`: the check must not need it."""
    monkeypatch.delattr(pa.types, "is_string_view")
    assert _per_query(QRELS, pa.Table.from_pandas(RUN)) == _per_query(QRELS, RUN)


def test_pandas_extension_types_lazy_frames_and_booleans_read_as_their_plain_forms():
    expected = _per_query(QRELS, RUN)
    assert _per_query(QRELS, RUN.astype({"qid": "string[pyarrow]", "docno": "category"})) == (
        expected
    )
    numbered = {"10": {"a": 1, "b": 0}, "20": {"c": 2}}
    ints = RUN.assign(qid=pd.array([10, 10, 20], dtype="Int64"))
    assert _per_query(numbered, ints) == _per_query(numbered, RUN.assign(qid=["10", "10", "20"]))
    assert _per_query(QRELS, pl.from_pandas(RUN).lazy()) == expected
    binary = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [True, False]})
    assert _per_query(binary, RUN) == _per_query(binary.astype({"rel": int}), RUN)
    evaluator = Evaluator(pl.from_pandas(binary).lazy(), ["AP", "nDCG@10", "P@5"])
    found = evaluator(pl.from_pandas(RUN).lazy()).aggregate()
    alone = evaluate(qrels=binary, runs={"run": RUN}, metrics=["AP", "nDCG@10", "P@5"])
    assert found.equals(alone.aggregate())


def test_ranks_are_read_when_whole_and_ignored_when_no_ordering_reads_them():
    ranked = {"ordering": "rank"}
    ints = _run(rank=[1, 2, 1]).drop(columns="score")
    floats = ints.astype({"rank": float})
    assert _per_query(QRELS, floats, settings=ranked) == _per_query(QRELS, ints, settings=ranked)
    ties = _run(rank=[1.5, 1.5, 1.0])  # as pandas' rank() gives them: trec_eval reads no rank
    assert _per_query(QRELS, ties) == _per_query(QRELS, RUN)


def test_only_the_columns_read_are_converted_and_integer_labels_may_be_mapped():
    """A PyTerrier frame's other columns (the query's text, a vector) may hold anything, and a
    frame read without a header (`header=None`) has the columns 0, 1, 2, ..."""
    extra = RUN.assign(query=["q", 2, None], vector=[[0.1], {"x": 1}, object()])
    assert _per_query(QRELS, extra) == _per_query(QRELS, RUN)
    unnamed = RUN.set_axis([0, 1, 2], axis=1)
    mapped = {"qid": 0, "docno": 1, "score": 2}
    assert _per_query(QRELS, unnamed, columns=mapped) == _per_query(QRELS, RUN)


#: one thing wrong at a time: (name, columns it applies to)
MUTATIONS = {
    "none": ("qid", "docno", "score", "rel"),
    "null": ("qid", "docno", "score", "rel"),
    "text": ("score", "rel"),
    "fraction": ("rel",),
    "float id": ("qid", "docno"),
    "date id": ("qid", "docno"),
}


@st.composite
def _broken(draw):
    """A qrels or run frame (pandas, polars or Arrow) with at most one thing wrong, and where."""
    kind = draw(st.sampled_from(["qrels", "run"]))
    n = draw(st.integers(2, 6))
    frame = pd.DataFrame({"qid": [str(i % 2 + 1) for i in range(n)],
                          "docno": [f"d{i}" for i in range(n)]})  # fmt: skip
    if kind == "qrels":
        frame["rel"] = [i % 3 for i in range(n)]
    else:
        frame["score"] = [float(n - i) for i in range(n)]
    mutation = draw(st.sampled_from([m for m, on in MUTATIONS.items() if set(on) & {*frame}]))
    column = draw(st.sampled_from([c for c in MUTATIONS[mutation] if c in frame.columns]))
    row = draw(st.integers(0, n - 1))
    frame = _mutate(frame, mutation, column, row)
    library = draw(st.sampled_from([pd.DataFrame, pl.from_pandas, pa.Table.from_pandas]))
    return kind, library(frame), mutation, column, row


def _mutate(frame: pd.DataFrame, mutation: str, column: str, row: int) -> pd.DataFrame:
    values = frame[column].astype(object).tolist()
    if mutation == "null":
        values[row] = None
    elif mutation == "text":  # polars and Arrow make the whole column text: one word in it
        values = [str(v) for v in values]
        values[row] = "many"
    elif mutation == "fraction":
        values[row] = 0.5
    elif mutation == "float id":
        values = [float(i) for i in range(len(values))]
    elif mutation == "date id":
        values = pd.to_datetime([f"2020-01-0{i % 9 + 1}" for i in range(len(values))])
    return frame.assign(**{column: values}) if mutation != "none" else frame


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_broken())
def test_a_frame_with_one_thing_wrong_raises_irpipe_errors_naming_the_column(case):
    kind, table, mutation, column, row = case
    # the other side retrieves (or judges) the table's documents d0 and d1
    other = {"1": {"d0": 1}, "2": {"d1": 1}}
    qrels, runs = (table, other) if kind == "qrels" else (other, table)
    if mutation == "none":
        assert evaluate(qrels=qrels, runs=runs, metrics=["AP"]).aggregate()["value"].notna().all()
        return
    with pytest.raises((SpecError, InputDataError)) as caught:  # nothing else may leave
        evaluate(qrels=qrels, runs=runs, metrics=["AP"])
    message = str(caught.value)
    assert column in message and "\n" not in message, message
    if mutation in ("null", "text", "fraction"):  # one value at fault: its row is named
        assert f"row {row + 1}" in message, message


def _trec_frame(text: str) -> pd.DataFrame:
    """A TREC file read as pandas reads it without a header: columns 0, 1, 2, ..."""
    import io

    return pd.read_csv(io.StringIO(text), sep=r"\s+", header=None, dtype={0: str, 2: str})


TREC_QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 2\n"
TREC_RUN = "1 Q0 a 1 2.0 x\n1 Q0 b 2 1.0 x\n2 Q0 c 1 1.0 x\n"
#: a PyTerrier result frame that lost its docno: `docid` is the index's number for a document
INTERNAL_IDS = RUN.drop(columns="docno").assign(docid=[10, 11, 12], rank=[0, 1, 0])


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"runs": INTERNAL_IDS},
         r"^runs\['run1'\]: column 'docid' holds integers \(int64\) and the table has no docno "
         r"column: PyTerrier's docid is its index's number for a document, not the collection's "
         r"docno, .*map them: (columns=\{'docno': 'docid'\})$"),
        ({"qrels": _trec_frame(TREC_QRELS)},
         r"^qrels\['default'\]: its columns are numbered \(0, 1, 2, 3\), as pandas' "
         r"read_csv\(header=None\) numbers them; map them as TREC's layout \(qid iter docno rel\) "
         r"places them: (columns=\{'qid': 0, 'docno': 2, 'rel': 3\}), or name them"),
        ({"runs": _trec_frame(TREC_RUN)},
         r"^runs\['run1'\]: its columns are numbered \(0, 1, 2, 3, 4, 5\), .*TREC's layout \(qid "
         r"Q0 docno rank score tag\) places them: (columns=\{'qid': 0, 'docno': 2, 'rank': 3, "
         r"'score': 4\}), or name them as the file is read \(pandas: names=\[\.\.\.\]\)$"),
        ({"runs": RUN.set_axis([0, 1, 2], axis=1)},
         r"^runs\['run1'\]: its columns are numbered \(0, 1, 2\), .*map them by number: "
         r"columns=\{'qid': 0, 'docno': 1, \.\.\.\} \(qid, docno, score\)"),
    ],
)  # fmt: skip
def test_a_frame_without_named_document_ids_is_refused_naming_the_mapping(keywords, message):
    """PyTerrier's integer `docid` alone, or columns numbered by read_csv(header=None): refused
    (they would match no judgment, or nothing at all), with a mapping that then reads them."""
    import ast

    refused = _refused(SpecError, message, **keywords)
    mapping = re.search(message, refused).group(1) if "(columns=" in message else None
    if mapping is not None:  # the mapping the message names evaluates the frame
        columns = ast.literal_eval(mapping.removeprefix("columns="))
        qrels = {"1": {"10": 1, "a": 1}, "2": {"12": 1, "c": 2}}
        keywords = {"qrels": qrels, "runs": RUN, **keywords}
        assert evaluate(metrics=["AP"], columns=columns, **keywords).aggregate()["value"][0] > 0


def test_a_pyterrier_frame_is_read_by_its_docno_beside_its_docid():
    frame = RUN.assign(docid=[10, 11, 12], rank=[0, 1, 0], query=["q one", "q one", "q two"])
    assert _per_query(QRELS, frame) == _per_query(QRELS, RUN)
