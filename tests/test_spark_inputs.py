"""The Spark engine reads what the DuckDB engine reads, and refuses what it refuses in the same
words: Parquet part files and URIs, BEIR and soft-label qrels, runs matching the qrels on any
shard, and bad inputs (the same message and error class on both engines). Spark runs as in
test_engine_spark.py (the `spark` fixture in conftest.py; helpers in spark_support.py).
"""

from __future__ import annotations

import json
import re
import shutil

import duckdb
import pytest
import yaml
from answer_sets import collection, write
from citation_sets import collection as citation_collection
from conftest import collection_spec, snapshot
from spark_support import (
    METRICS,
    QRELS,
    RUN,
    TABLES,
    same_error,
    same_rows,
    same_tables,
    spec_file,
)

from pipeline.errors import DuplicateError, InputDataError, SpecError
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, soft_labels, write_beir_qrels


def test_parquet_part_files_and_uris_are_read_where_they_live(spark, tmp_path):
    import duckdb

    data = generate(seed=5, queries=30, runs=2, extremes=True)
    text = collection_spec(tmp_path, data, ["AP", "nDCG@10", "P@5", "RelString"])
    expected = evaluate(spec_file(tmp_path / "text.yaml", text), write=False).con
    parts = tmp_path / "run0.parquet"
    parts.mkdir()
    con = duckdb.connect()
    read = "read_csv(?, delim=' ', header=false, columns={'qid':'VARCHAR','q0':'VARCHAR','docno':'VARCHAR','rank':'BIGINT','score':'DOUBLE','tag':'VARCHAR'})"
    con.execute(f"CREATE TABLE r AS SELECT * FROM {read}", [str(tmp_path / "run0.txt")])
    for i, half in enumerate(("qid < '5'", "qid >= '5'")):  # two part files, split by query
        con.execute(f"COPY (SELECT * FROM r WHERE {half}) TO '{parts}/part-{i}.parquet'")
    con.execute(
        "COPY (SELECT column0 AS qid, column2 AS docno, column3 AS rel FROM "
        f"read_csv('{tmp_path}/qrels.txt', delim=' ', header=false)) TO '{tmp_path}/qrels.parquet'"
    )
    (tmp_path / "text parts").mkdir()  # a space: Hadoop takes a path's text as it is
    shutil.copy(tmp_path / "run1.txt", tmp_path / "text parts" / "part 00000")
    spark_spec = {
        **text,
        "settings": {"engine": "spark"},
        "collections": {"c": {"qrels": "qrels.parquet"}},
        "runs": {
            "run0": {"path": "run0.parquet", "collection": "c"},
            "run1": {"path": f"file://{tmp_path}/text parts", "collection": "c"},
        },
    }
    got = evaluate(spec_file(tmp_path / "spark.yaml", spark_spec), write=False).con
    for table in TABLES:
        query = f"SELECT * FROM {table}"
        same_rows(got.execute(query).fetchall(), expected.execute(query).fetchall(), table)


BAD_INPUTS = {
    "a score that is not a number": ("run", RUN.replace("2.5", "2,5")),
    "too few fields in a run": ("run", RUN + "\n# a comment\n2 Q0 f 3\n"),
    "a grade that is not an integer": ("qrels", QRELS.replace("c 1", "c 1.5")),
    "a qrels file that looks like a run": ("qrels", RUN),
    "a document twice in a run": ("run", RUN + RUN.splitlines()[0] + "\n"),
    "a document twice in the qrels": ("qrels", QRELS + QRELS + QRELS),
    "an empty run": ("run", "\n# nothing\n"),
    "a run of other queries": ("run", RUN.replace("1 Q0", "7 Q0").replace("2 Q0", "8 Q0")),
    # trec_eval -c ranks a document for every query a run lacks: the check comes before that
    "a run of other queries, -c": ("run", RUN.replace("1 Q0", "7 Q0").replace("2 Q0", "8 Q0")),
    "a run of docnos spelt otherwise": ("run", RUN.upper()),
    "a run of docnos spelt otherwise, -c": ("run", RUN.upper()),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_inputs_are_reported_in_the_same_words(spark, tmp_path, case):
    which, text = BAD_INPUTS[case]
    (tmp_path / "qrels.txt").write_text(text if which == "qrels" else QRELS)
    (tmp_path / "run.txt").write_text(text if which == "run" else RUN)
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["AP"],
        "settings": {"missing_queries": "trec_eval_c"} if case.endswith("-c") else {},
    }
    path = spec_file(tmp_path / "spec.yaml", spec)
    duplicates = "twice" in case
    assert isinstance(same_error(path), DuplicateError) == duplicates


def test_a_run_matches_the_qrels_if_any_shard_finds_a_judged_document(spark, tmp_path):
    """A run whose docnos are upper-cased but in one query, on four shards: judged documents in
    one shard are enough, as on one machine; none, and it is refused in the same words, at scale
    (`spark.per_query`) too; allowed, the upper-cased run's values agree."""
    data = generate(4, queries=12, runs=2)
    qid, kept = max((q, d) for q, docs in data.runs["run1"].items() for d in docs
                    if d in data.qrels.get(q, {}))  # fmt: skip
    data.runs["run1"] = {q: {(d if (q, d) == (qid, kept) else d.upper()): s for d, s in docs.items()}
                         for q, docs in data.runs["run1"].items()}  # fmt: skip
    spec = collection_spec(tmp_path, data, ["AP", "P@5"], spark={"partitions": 4})
    same_tables(spec, tmp_path)
    data.runs["run1"][qid][kept.upper()] = data.runs["run1"][qid].pop(kept)
    spec = collection_spec(tmp_path, data, ["AP"], spark={"partitions": 4})
    same_error(spec_file(tmp_path / "spec.yaml", spec), "run 'run1' retrieves no document judged")
    at_scale = {**spec, "spark": {**spec["spark"], "per_query": str(tmp_path / "per_query")}}
    same_error(spec_file(tmp_path / "scale.yaml", at_scale), "run 'run1' retrieves no document")
    same_tables({**spec, "settings": {"unmatched_runs": "allow"}}, tmp_path)


def test_beir_qrels_give_the_same_values_and_the_same_errors(spark, tmp_path):
    """BEIR qrels (tests/test_beir.py), recognised and named, plain and .gz: the same tables as on
    DuckDB, and a bad header, a decimal grade and a duplicate refused in the same words."""
    data = generate(seed=32, queries=20, runs=2, extremes=True)
    spec = collection_spec(tmp_path, data, METRICS[:12])
    write_beir_qrels(data.qrels, tmp_path / "test.tsv")
    write_beir_qrels(data.qrels, tmp_path / "test.tsv.gz")
    spec["collections"] = {
        "c": {"qrels": "test.tsv"},
        "z": {"qrels": "test.tsv.gz", "format": "beir"},
    }
    spec["runs"]["z"] = {**spec["runs"]["run0"], "collection": "z"}
    same_tables(spec, tmp_path)
    header = "query-id\tcorpus-id\tscore\n"
    for bad in (
        "query-id\tscore\n1\ta\t1\n",
        header + "1\ta\t0.5\n",
        header + "1\ta\t1\n1\ta\t0\n",
    ):
        (tmp_path / "test.tsv").write_text(bad)
        (tmp_path / "run.txt").write_text(RUN)
        spec = {"collections": {"c": {"qrels": "test.tsv"}}, "metrics": ["AP"],
                "runs": {"r": {"path": "run.txt", "collection": "c"}}}  # fmt: skip
        message = str(same_error(spec_file(tmp_path / "bad.yaml", spec)))
        assert re.match(r".*test.tsv:[12]: ", message), message


def test_soft_labels_give_the_same_values_and_the_same_errors(spark, tmp_path):
    """Decimal grades (`grades: real`, tests/test_soft_labels.py) at the level 0.5, as text read
    on the workers, as BEIR TSV and as Parquet of doubles: the same tables as on DuckDB; a grade
    that is not finite refused in the same words."""
    data = generate(seed=5, queries=20, runs=2, extremes=True)
    data.qrels = soft_labels(data.qrels, 5)
    real = {"grades": "real", "relevance_level": 0.5}
    spec = collection_spec(tmp_path, data, [*METRICS, "G", "RnDCG"], settings=real)
    spec["collections"]["c"]["num_docs"] = 5000
    same_tables(spec, tmp_path)
    write_beir_qrels(data.qrels, tmp_path / "test.tsv")
    rows = [(q, d, float(g)) for q, docs in data.qrels.items() for d, g in docs.items()]
    duckdb.sql(f"COPY (SELECT * FROM (VALUES {', '.join(map(repr, rows))}) t(qid, docno, rel)) "
               f"TO '{tmp_path / 'q.parquet'}' (FORMAT parquet)")  # fmt: skip
    for qrels in ("test.tsv", "q.parquet"):
        spec["collections"]["c"]["qrels"] = qrels
        same_tables(spec, tmp_path)
    (tmp_path / "qrels.txt").write_text(QRELS.replace("c 1", "c inf"))
    (tmp_path / "run.txt").write_text(RUN)
    bad = {"collections": {"c": {"qrels": "qrels.txt"}}, "metrics": ["AP"], "settings": real,
           "runs": {"r": {"path": "run.txt", "collection": "c"}}}  # fmt: skip
    message = str(same_error(spec_file(tmp_path / "bad.yaml", bad)))
    assert "qrels.txt:3: the relevance grade must be a finite number, found 'inf'" in message


def test_a_bad_line_in_a_part_file_is_named_by_that_file(spark, tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    parts = tmp_path / "run"
    parts.mkdir()
    (parts / "part-0").write_text(RUN)
    (parts / "part-1").write_text("3 Q0 x 1 1 sys\n\n3 Q0 y 2 high sys\n")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run", "collection": "c"}},
        "metrics": ["AP"],
        "settings": {"engine": "spark"},
    }
    with pytest.raises(InputDataError, match=r"run/part-1:3: the score must be a number, found 'high': '3 Q0 y 2 high sys'"):  # fmt: skip
        evaluate(spec_file(tmp_path / "spec.yaml", spec), write=False)


def test_a_uri_needs_the_spark_engine(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "hdfs://namenode/runs/r", "collection": "c"}},
        "metrics": ["AP"],
    }
    with pytest.raises(SpecError, match=r"runs.r.path: hdfs://namenode/runs/r is a URI, which only the Spark engine reads"):  # fmt: skip
        evaluate(spec_file(tmp_path / "spec.yaml", spec), write=False)


def test_a_spec_of_uris_validates_without_data_or_spark(tmp_path):
    from pipeline.run.evaluation import validate

    spec = {
        "collections": {"c": {"qrels": "s3a://lake/qrels/"}},
        "runs": {"r": {"path": "hdfs://namenode/runs/r/*.parquet", "collection": "c"}},
        "metrics": ["AP"],
        "settings": {"engine": "spark"},
        "spark": {"master": "yarn", "partitions": 400, "per_query": "s3a://lake/out/pq"},
    }
    plan = validate(spec_file(tmp_path / "spec.yaml", spec), data=False).sql
    assert [load.path for load in plan.loads] == [
        "s3a://lake/qrels/",
        "hdfs://namenode/runs/r/*.parquet",
    ]


def test_on_the_command_line_a_bad_input_is_one_message_and_its_exit_code(spark, tmp_path, capsys):
    from pipeline.cli import main

    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN.replace("2.5", "high"))
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}, "s": {"path": "nowhere://x/r", "collection": "c"}},
        "metrics": ["AP"],
    }  # fmt: skip
    path = str(spec_file(tmp_path / "spec.yaml", spec))
    assert main(["run", "--quiet", "--engine", "spark", path]) == 2  # the URI, before any data
    err = capsys.readouterr().err
    assert "nowhere://x/r: Spark cannot list it:" in err and "Traceback" not in err
    del spec["runs"]["s"]
    path = str(spec_file(tmp_path / "spec.yaml", spec))
    assert main(["run", "--quiet", "--engine", "spark", path]) == 3
    err = capsys.readouterr().err
    assert f"{tmp_path}/run.txt:2: the score must be a number, found 'high'" in err
    assert "Traceback" not in err


def test_spark_refuses_the_parquet_files_duckdb_refuses(spark, tmp_path, capsys):
    """Parquet ids that are floats, a file that is not Parquet, fractional grades: the same
    one-line refusal on both engines (tests/test_user_errors.py has the DuckDB cases), here
    to share this file's Spark session."""
    from test_user_errors import (
        DATA_ERROR,
        FLOAT_DOCNOS,
        FRACTIONAL_GRADES,
        RUN_A,
        case_dir,
        parquet,
        spec_of,
    )

    from pipeline.cli import main

    case = case_dir(tmp_path, spec_of({"p": {"path": "p.parquet", "collection": "c"}}))
    parquet(case / "p.parquet", FLOAT_DOCNOS, "qid, docno, score")
    spec = str(case / "spec.yaml")
    before = snapshot(case)
    said = {}
    for engine in ("duckdb", "spark"):
        assert main(["run", "--quiet", "--engine", engine, spec]) == DATA_ERROR
        said[engine] = capsys.readouterr().err
    assert said["spark"] == said["duckdb"]
    assert re.fullmatch(r"Error: \S+/p\.parquet: column 'docno' holds floats \(double\).*\n", said["spark"])  # fmt: skip
    (case / "p.parquet").write_text(RUN_A)
    before["p.parquet"] = RUN_A.encode()
    assert main(["run", "--quiet", "--engine", "spark", spec]) == DATA_ERROR
    err = capsys.readouterr().err
    assert re.fullmatch(r"Error: \S+/p\.parquet: not a valid Parquet file \(.*is not a Parquet file.*\n", err)  # fmt: skip
    assert snapshot(case) == before
    spec_data = yaml.safe_load((case / "spec.yaml").read_text())
    spec_data["collections"]["c"]["qrels"] = "q.parquet"
    (case / "spec.yaml").write_text(yaml.safe_dump(spec_data, sort_keys=False))
    parquet(case / "q.parquet", FRACTIONAL_GRADES, "qid, docno, rel")
    (case / "p.parquet").unlink()
    spec_data["runs"].pop("p")
    (case / "spec.yaml").write_text(yaml.safe_dump(spec_data, sort_keys=False))
    assert main(["run", "--quiet", "--engine", "spark", spec]) == DATA_ERROR
    err = capsys.readouterr().err
    assert re.search(r"q\.parquet: .*rel must be an integer, found 2\.5", err), err


def test_answers_give_the_same_values_and_the_same_errors(spark, tmp_path):
    """Nuggets and assignments (tests/answer_sets.py), read on Spark's workers by the same SQL:
    the same nugget scores and exact means as on one machine, and the same words for a nugget
    the collection does not hold."""
    spec, _ = collection(tmp_path, 11, runs=2)
    same_tables(spec)
    lines = [json.loads(line) for line in (tmp_path / "run1.jsonl").read_text().splitlines()]
    first = next(line for line in lines if line["nuggets"])
    first["nuggets"][0]["text"] = "another nugget"
    write(tmp_path / "run1.jsonl", lines)
    said = f"run 'run1' has the nugget 'another nugget' ({first['nuggets'][0]['importance']}) in query '{first['qid']}'"
    same_error(spec, match=re.escape(said))


def test_answers_citations_give_the_same_values_and_the_same_errors(spark, tmp_path):
    """Answers and support judgments (tests/citation_sets.py), read on Spark's workers by the
    same SQL: the same support values and means as on one machine, and the same words for a
    citation no judgment judges, at scale (`spark.per_query`) too."""
    spec, _ = citation_collection(tmp_path, 12, runs=2)
    same_tables(spec)
    judgments = (tmp_path / "support.txt").read_text().splitlines()
    (tmp_path / "support.txt").write_text("".join(line + "\n" for line in judgments[1:]))
    run, qid, sentence, docid, _ = judgments[0].split()
    said = f"run '{run}', query '{qid}': sentence {sentence} cites '{docid}'"
    same_error(spec, match=said)
    scale = {**yaml.safe_load(spec.read_text()), "spark": {"per_query": str(tmp_path / "pq")}}
    same_error(spec_file(tmp_path / "scale.yaml", scale), match=said)  # at scale too
