"""`nDCG(variant=gdeval)@k` and `ERR(variant=gdeval)@k` are gdeval.pl's, query by query and on
average; the built-in `ERR@k` is the same formula under irpipe's settings.

The reference is the gdeval.pl (v1.2a, the TREC Web track's) that ir_measures ships, run with perl
on generated collections: grades 0-4, negative grades, unjudged documents, score ties (docno
decides), queries the runs lack, queries without a grade above 0, a query all of whose documents
tie (`synthetic.EXTREMES`). ir_measures' copy does not print the mean (its `amean` line) and has no
`-c` (the TREC Web track's script averages over every qrels query with a grade above 0 with it, a
query the run lacks printed and counted as 0): the tests run a copy with the mean and `-c` put
back, printing its numbers with 5 decimals, and a copy printing them with 17 significant digits,
so that irpipe's unrounded values are compared with gdeval's own unrounded arithmetic (1e-12) as
well as with its printed lines (half a unit of the 5th decimal). `queries: qrels` (the default) is
`gdeval.pl -c`, `queries: intersection` gdeval.pl without it.
"""

from __future__ import annotations

import math
import re
import subprocess
from pathlib import Path

import ir_measures
import pytest
from conftest import spec_of_runs, yaml_file

from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels

GDEVAL = Path(ir_measures.__file__).parent / "bin" / "gdeval.pl"
CUTOFFS = (1, 3, 10, 20, 1000)
COLLECTIONS = 8
PRINTED = 5e-6 + 1e-12  # gdeval.pl prints 5 decimals
EXACT = 1e-12


def gdeval_copy(directory: Path, number: str) -> Path:
    """gdeval.pl with its mean line put back (the TREC script prints `runid,amean,nDCG,ERR`, the
    mean over the topics it printed), its `-c` flag (each qrels topic with a grade above 0 that
    the run lacks prints 0 and counts in the mean), and its numbers printed with `number`."""
    text = GDEVAL.read_text(encoding="utf-8")
    text = re.sub(r"# (\$(ndcg|err)Total \+= \$\2;)", r"\1", text)
    flag = 'if ($#ARGV >= 0 && $ARGV[0] eq "-c") { $cflag = 1; shift; }\n'
    text = text.replace("die $usage unless $#ARGV == 2;", flag + "die $usage unless $#ARGV == 2;")
    text = text.replace("    $topics++;\n", "    $topics++;\n    $printed{$topic} = 1;\n", 1)
    complete = (
        "if ($cflag) { for $topic (sort { $a <=> $b } keys %seen) { next if $printed{$topic};\n"
        '  $topics++; printf "$runid,$topic,%.5f,%.5f\\n", 0, 0; } }\n'
    )
    mean = (
        'if ($topics > 0) { printf "$runid,amean,%.5f,%.5f\\n", '
        "$ndcgTotal / $topics, $errTotal / $topics; }\n"
        'else { print "$runid,amean,0.00000,0.00000\\n"; }\n\nexit 0;'
    )
    text = text.replace("\nexit 0;", "\n" + complete + mean, 1).replace("%.5f", number)
    assert text.count("$ndcgTotal += $ndcg") == 1 and "amean" in text, "gdeval.pl changed"
    assert text.count("$cflag") == 2 and text.count("$printed{$topic}") == 2, "gdeval.pl changed"
    path = directory / f"gdeval_{len(number)}.pl"
    path.write_text(text, encoding="utf-8")
    return path


def gdeval(
    script: Path, qrels: Path, run: Path, k: int, complete: bool = False
) -> dict[str, tuple[float, float]]:
    """{topic or 'amean': (nDCG@k, ERR@k)} as the script prints them (with -c if `complete`)."""
    flags = ["-c"] if complete else []
    done = subprocess.run(
        ["perl", str(script), *flags, str(qrels), str(run), str(k)], capture_output=True, text=True
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    lines = [line.split(",") for line in done.stdout.splitlines()[1:]]
    return {topic: (float(ndcg), float(err)) for _, topic, ndcg, err in lines}


def write_numeric_run(run: dict[str, dict[str, float]], path: Path) -> None:
    """A TREC run; gdeval.pl needs numeric topics, so the run-only queries are left out."""
    lines = [
        f"{q} Q0 {d} {i} {s!r} gdrun"
        for q, docs in run.items()
        if q.isdigit()
        for i, (d, s) in enumerate(docs.items(), 1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def metrics() -> list[str]:
    return [f"{name}(variant=gdeval)@{k}" for k in CUTOFFS for name in ("nDCG", "ERR")] + [
        f"ERR@{k}" for k in CUTOFFS
    ]


QUERIES = {"qrels": True, "intersection": False}  # the setting: gdeval.pl -c or not


@pytest.fixture(scope="module", params=sorted(QUERIES))
def compared(request, tmp_path_factory):
    """Per collection and run: irpipe's per-query values and means under a `queries` setting, and
    gdeval's lines (with -c under `qrels`), printed (5 decimals) and unrounded (%.17g), at every
    cutoff."""
    root = tmp_path_factory.mktemp("gdeval")
    scripts = {"printed": gdeval_copy(root, "%.5f"), "exact": gdeval_copy(root, "%.17g")}
    complete = QUERIES[request.param]
    found = []
    for seed in range(COLLECTIONS):
        directory = root / f"c{seed}"
        directory.mkdir()
        data = generate(seed, queries=14, runs=2, max_grade=4, extremes=True)
        write_qrels(data.qrels, directory / "qrels.txt")
        for name, run in data.runs.items():
            write_numeric_run(run, directory / f"{name}.txt")
        spec = _spec(directory, data.runs, {"queries": request.param})
        evaluation = evaluate(spec, write=False)
        per_query = {(r, q, m): v for r, _, q, m, v in evaluation.per_query()}
        means = {(r, m): (v, n) for r, _, m, v, n in evaluation.aggregate()}
        for name in data.runs:
            run = directory / f"{name}.txt"
            lines = {
                (how, k): gdeval(script, directory / "qrels.txt", run, k, complete)
                for how, script in scripts.items()
                for k in CUTOFFS
            }
            found.append((data, name, per_query, means, lines, request.param))
    return found


def _spec(directory: Path, runs: dict, settings: dict | None = None) -> Path:
    spec = spec_of_runs(runs, metrics(), settings=settings or {})
    return yaml_file(directory / "spec.yaml", spec)


@pytest.mark.parametrize("how", ["printed", "exact"])
def test_every_query_line_is_gdeval_s(compared, how):
    tolerance = PRINTED if how == "printed" else EXACT
    checked = 0
    for _, run, per_query, _, lines, _ in compared:
        for k in CUTOFFS:
            theirs = {q: v for q, v in lines[how, k].items() if q != "amean"}
            for i, name in enumerate(("nDCG", "ERR")):
                metric = f"{name}(variant='gdeval')@{k}"
                ours = {q: v for (r, q, m), v in per_query.items() if (r, m) == (run, metric)}
                reported = {q: v for q, v in ours.items() if v is not None}
                assert set(reported) == set(theirs), (run, metric)  # the same queries
                for q, value in reported.items():
                    assert abs(value - theirs[q][i]) <= tolerance, (run, q, metric)
                    checked += 1
    assert checked > 1000


@pytest.mark.parametrize("how", ["printed", "exact"])
def test_the_mean_is_gdeval_s_amean_line(compared, how):
    tolerance = PRINTED if how == "printed" else EXACT
    for _, run, _, means, lines, _ in compared:
        for k in CUTOFFS:
            printed = len(lines[how, k]) - 1
            for i, name in enumerate(("nDCG", "ERR")):
                value, n_queries = means[run, f"{name}(variant='gdeval')@{k}"]
                assert n_queries == printed
                assert abs(value - lines[how, k]["amean"][i]) <= tolerance, (run, name, k)


def test_err_is_gdeval_s_formula_under_irpipe_s_query_set(compared):
    """The default variant: gdeval's value where gdeval prints one, 0 for every other query of
    the `queries` setting (one the run lacks, or without a grade above 0), averaged over them."""
    for data, run, per_query, means, lines, setting in compared:
        answered = set(data.qrels) & set(data.runs[run])
        queries = set(data.qrels) if setting == "qrels" else answered
        for k in CUTOFFS:
            exact = lines["exact", k]
            values = {q: v for (r, q, m), v in per_query.items() if (r, m) == (run, f"ERR@{k}")}
            assert set(values) == queries
            for q, value in values.items():
                assert math.isclose(value, exact[q][1] if q in exact else 0.0, abs_tol=EXACT)
            assert means[run, f"ERR@{k}"][1] == len(queries)


def test_the_judged_rows_plan_gives_the_full_plan_s_values(tmp_path):
    """Alone, the gdeval metrics rank only judged rows; beside Unjudged@10, every row."""
    data = generate(5, queries=20, runs=2, max_grade=4, extremes=True)
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    for name, run in data.runs.items():
        write_numeric_run(run, tmp_path / f"{name}.txt")
    alone = _values(_spec(tmp_path, data.runs))
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec.read_text().replace("metrics:", "metrics:\n- Unjudged@10"))
    beside = _values(spec)
    assert {key: v for key, v in beside.items() if key[2] != "Unjudged@10"} == alone


def _values(spec: Path) -> dict:
    return {(r, q, m): v for r, _, q, m, v in evaluate(spec, write=False).per_query()}


@pytest.mark.parametrize(
    ("qrels", "run", "expected"),
    [
        # grades 4 then 2: nDCG = (15 + 3/log2 3)... the run puts 2 first; ERR = 3/16 + 13/16*15/16/2
        (
            "7 0 a 4\n7 0 b 2",
            "7 Q0 b 1 2 t\n7 Q0 a 2 1 t",
            ((3 + 15 / math.log2(3)) / (15 + 3 / math.log2(3)), 3 / 16 + 13 / 16 * 15 / 16 / 2),
        ),
        # a tie at score 1: docno descending puts b (grade 1) before a (grade 3)
        (
            "7 0 a 3\n7 0 b 1",
            "7 Q0 a 1 1 t\n7 Q0 b 2 1 t",
            ((1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3)), 1 / 16 + 15 / 16 * 7 / 16 / 2),
        ),
        # no grade above 0: gdeval prints no line, irpipe gives no value
        ("7 0 a 0\n7 0 b -1", "7 Q0 a 1 1 t", (None, None)),
    ],
    ids=["graded", "tie", "no_relevant"],
)
def test_worked_examples(tmp_path, qrels, run, expected):
    (tmp_path / "qrels.txt").write_text(qrels + "\n")
    (tmp_path / "r.txt").write_text(run + "\n")
    spec = _spec(tmp_path, {"r": None})
    spec.write_text(spec.read_text().replace("- ERR@1\n", "- ERR@1\n- nDCG(variant=gdeval)\n"))
    values = _values(spec)
    ndcg, err = (
        values["r", "7", "nDCG(variant='gdeval')@20"],
        values["r", "7", "ERR(variant='gdeval')@20"],
    )
    if expected[0] is None:
        assert (ndcg, err) == (None, None)
    else:
        assert (ndcg, err) == (
            pytest.approx(expected[0], abs=1e-15),
            pytest.approx(expected[1], abs=1e-15),
        )
        assert values["r", "7", "nDCG(variant='gdeval')"] == pytest.approx(expected[0], abs=1e-15)
