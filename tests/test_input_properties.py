"""Properties of reading inputs: random corruptions never crash, lenient numbers are C's numbers."""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import tempfile
from pathlib import Path

import duckdb
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import InputDataError, synthetic
from pipeline.cli import main
from pipeline.engines.duckdb.loading import load_files
from pipeline.inputs.format import Load
from pipeline.inputs.formats import qrels_format, run_format
from pipeline.inputs.loaded_tables import INPUT_TABLES

# Bytes that matter to a TREC reader: separators, line ends, comments, signs, number syntax, NUL,
# and bytes that are not UTF-8.
NASTY = b" \t\n\r#,.-+eE_xXnaif0123456789Q\x00\xff\xe9"

corruption = st.tuples(
    st.sampled_from(["insert", "replace", "delete", "truncate", "duplicate_line"]),
    st.floats(0, 1),
    st.binary(min_size=1, max_size=4).map(lambda b: bytes(NASTY[x % len(NASTY)] for x in b)),
)


def corrupt(data: bytes, op: str, where: float, payload: bytes) -> bytes:
    at = int(where * len(data))
    if op == "insert":
        return data[:at] + payload + data[at:]
    if op == "replace":
        return data[:at] + payload + data[at + len(payload) :]
    if op == "delete":
        return data[:at] + data[at + len(payload) :]
    if op == "truncate":
        return data[:at]
    lines = data.splitlines(keepends=True)
    i = int(where * (len(lines) - 1))
    return b"".join(lines[: i + 1] + lines[i:])


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10_000),
    target=st.sampled_from(["qrels.txt", "run.txt"]),
    corruptions=st.lists(corruption, min_size=1, max_size=3),
    mode=st.sampled_from(["strict", "lenient"]),
)
def test_random_corruptions_never_crash(capsys, seed, target, corruptions, mode):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        collection = synthetic.generate(seed, queries=4, runs=1)
        synthetic.write_qrels(collection.qrels, d / "qrels.txt")
        synthetic.write_run(collection.runs["run0"], d / "run.txt")
        data = (d / target).read_bytes()
        for op, where, payload in corruptions:
            data = corrupt(data, op, where, payload)
        (d / target).write_bytes(data)
        spec = {
            "collections": {"c": {"qrels": "qrels.txt"}},
            "runs": {"r": {"path": "run.txt", "collection": "c"}},
            "settings": {"input": mode},
            "metrics": ["AP", "nDCG@5"],
            "outputs": [{"path": "out/summary.csv"}],
        }
        (d / "spec.yaml").write_text(yaml.safe_dump(spec))
        code = main(["run", "--quiet", str(d / "spec.yaml")])
        err = capsys.readouterr().err
        assert code in (0, 3), err
        assert "Traceback" not in err
        if code:
            assert err.startswith(f"Error: {d}/")
            assert not (d / "out").exists()
        else:
            assert (d / "out" / "summary.csv").is_file()


# --- lenient numbers are what C's atof and atol read -------------------------------------------

LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
LIBC.atof.restype, LIBC.atof.argtypes = ctypes.c_double, [ctypes.c_char_p]
LIBC.atol.restype, LIBC.atol.argtypes = ctypes.c_long, [ctypes.c_char_p]

digits = st.text(alphabet="0123456789", max_size=4)
junk = st.text(alphabet=",_x.eE+-(a1", max_size=3)
decimal = st.tuples(
    st.sampled_from(["", "+", "-"]),
    digits,
    st.sampled_from(["", "."]),
    digits,
    st.sampled_from(["", "e", "E", "e+", "e-"]),
    digits,
    junk,
).map("".join)
special = st.tuples(
    st.sampled_from(["", "+", "-"]),
    st.sampled_from(["inf", "INF", "Infinity", "infin", "nan", "NaN", "nan(1)"]),
    junk,
).map("".join)
number_like = st.one_of(
    decimal.filter(bool),
    special,
    st.text(alphabet="0123456789+-.eExXinfatyINFATY,_(", min_size=1, max_size=12),
)


def lenient_values(tmp: Path, fields: list[str], qrels: bool) -> list:
    """Load one line per field with the field as score (run) or grade (qrels); return the values."""
    path = tmp / "file.txt"
    if qrels:
        path.write_text("".join(f"1 0 d{i} {f}\n" for i, f in enumerate(fields)))
        load, column, table = Load(path, "c", qrels_format(None, "lenient")), "rel", "qrels"
    else:
        path.write_text("".join(f"1 Q0 d{i} 1 {f} t\n" for i, f in enumerate(fields)))
        load, column, table = Load(path, "r", run_format("lenient"), ("c",)), "score", "run_rows"
    con = duckdb.connect()
    for statement in INPUT_TABLES:
        con.execute(statement.sql)
    load_files(con, [load])
    rows = con.execute(f"SELECT docno, {column} FROM {table}").fetchall()
    return [value for _, value in sorted(rows, key=lambda r: int(r[0][1:]))]


def is_hex(field: str) -> bool:
    return field.lstrip("+-")[:2].lower() == "0x"


@settings(max_examples=25, deadline=None)
@given(st.lists(number_like, min_size=1, max_size=40))
def test_lenient_scores_are_c_atof(fields):
    fields = [f for f in fields if not is_hex(f)]  # hexadecimal is reported, not read
    if not fields:
        return
    with tempfile.TemporaryDirectory() as tmp:
        values = lenient_values(Path(tmp), fields, qrels=False)
    for field, value in zip(fields, values, strict=True):
        expected = LIBC.atof(field.encode())
        assert value == expected or (math.isnan(value) and math.isnan(expected)), field


@settings(max_examples=25, deadline=None)
@given(st.lists(number_like, min_size=1, max_size=40))
def test_lenient_grades_are_c_atol(fields):
    fields = [f for f in fields if abs(LIBC.atol(f.encode())) < 2**31]  # beyond: an error
    if not fields:
        return
    with tempfile.TemporaryDirectory() as tmp:
        values = lenient_values(Path(tmp), fields, qrels=True)
    assert values == [LIBC.atol(f.encode()) for f in fields]


def test_lenient_hexadecimal_score_is_reported(tmp_path):
    with pytest.raises(InputDataError, match=r"file.txt:1: hexadecimal scores are not read"):
        lenient_values(tmp_path, ["0x1p3"], qrels=False)
