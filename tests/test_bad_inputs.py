"""Bad input never crashes, never lies, never half-writes: the real `irpipe run` on every bad input.

Each case starts from a good evaluation whose outputs exist, breaks one thing, and runs the command
(mostly `irpipe run`; also `validate --no-data` on a spec without its data, a spec naming a metric
of a broken plugin, and `schema --check` on a drifted schema): in the test's process, but for the
cases whose environment acts as the process starts (installed plugins, a module hidden by a
sitecustomize), which run in subprocesses of their own. It must exit with the
documented code (2 spec, 3 input data, 4 output, 6 history), name the file and line (or the spec key) on
stderr, print no traceback, and leave every earlier output byte-for-byte as it was, with no
temporary file beside it. Signals at any moment have their own battery: tests/test_interrupts.py.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import fake_distribution, irpipe_inprocess, snapshot

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "configs" / "irpipe.schema.json"
QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n2 0 e 0\n"
RUN = "1 Q0 a 1 3.5 sys\n1 Q0 b 2 2.5 sys\n1 Q0 c 3 1.5 sys\n2 Q0 d 1 1 sys\n2 Q0 e 2 0.5 sys\n"
SPEC = {
    "collections": {"c": {"qrels": "qrels.txt"}},
    "runs": {"r": {"path": "run.txt", "collection": "c"}},
    "metrics": ["AP", "P@2"],
    "outputs": [
        {"path": "out/summary.csv"},
        {"path": "out/per_query.parquet", "level": "query"},
        {"path": "out/all.duckdb"},
    ],
}
SPEC_ERROR, DATA_ERROR, OUTPUT_ERROR, HISTORY_ERROR = 2, 3, 4, 6


def irpipe(*args: str) -> object:
    """`irpipe ARGS` in this process: (returncode, stdout, stderr)."""
    return irpipe_inprocess(*args, cwd=ROOT)


def in_a_process(*args: str, **env: str) -> subprocess.CompletedProcess:
    """`irpipe ARGS` in a Python of its own, for an environment read as the process starts
    (PYTHONPATH, IRPIPE_LOAD_PLUGINS)."""
    command = [sys.executable, "-m", "pipeline.cli", *args]
    # No bytecode caches: a case's plugin or sitecustomize must leave its directory as it was.
    env = {"IRPIPE_LOAD_PLUGINS": "", "PATH": "/usr/bin:/bin", "COLUMNS": "200",
           "PYTHONDONTWRITEBYTECODE": "1", **env}  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)


# --- how a case breaks the good setup (each returns nothing, or a cleanup to call afterwards) ---


def write(name: str, data: str | bytes) -> Callable[[Path], None]:
    def change(d: Path) -> None:
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())

    return change


def line(name: str, number: int, text: str) -> Callable[[Path], None]:
    """Replace line `number` (1-based) of the good qrels or run file."""
    lines = (QRELS if name == "qrels.txt" else RUN).splitlines()
    lines[number - 1] = text
    return write(name, "\n".join(lines) + "\n")


def append(name: str, text: str) -> Callable[[Path], None]:
    return write(name, (QRELS if name == "qrels.txt" else RUN) + text)


def spec(change: Callable[[dict], None], *more: Callable[[Path], None]) -> Callable[[Path], None]:
    """Change the spec dict (and apply further changes to the directory)."""

    def apply(d: Path) -> None:
        data = yaml.safe_load((d / "spec.yaml").read_text())
        change(data)
        (d / "spec.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        for other in more:
            other(d)

    return apply


def settings(**values) -> Callable[[dict], None]:
    return lambda s: s.setdefault("settings", {}).update(values)


def lenient(*changes: Callable[[Path], None]) -> Callable[[Path], None]:
    return spec(settings(input="lenient"), *changes)


def run_path(path: str) -> Callable[[dict], None]:
    return lambda s: s["runs"]["r"].update(path=path)


def qrels_path(path: str) -> Callable[[dict], None]:
    return lambda s: s["collections"]["c"].update(qrels=path)


def add_output(path: str) -> Callable[[dict], None]:
    return lambda s: s["outputs"].append({"path": path})


def hold_database(name: str) -> Callable[[Path], Callable[[], None]]:
    """Another process opens the output database and keeps it open."""

    def change(d: Path) -> Callable[[], None]:
        code = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(60)"
        holder = subprocess.Popen(
            [sys.executable, "-c", code, str(d / name)], stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout.readline().strip() == "held"

        def release() -> None:
            holder.kill()
            holder.wait()

        return release

    return change


def history(where: str | dict, *more: Callable[[Path], object]) -> Callable[[Path], object]:
    """The spec keeps a history (`where`: its path, or the whole section); `more` prepares it.
    Returns the last cleanup that `more` gives (a held database's release)."""

    def apply(d: Path) -> object:
        spec(lambda s: s.update(history=where))(d)
        cleanups = [prepare(d) for prepare in more]
        return next((c for c in reversed(cleanups) if callable(c)), None)

    return apply


def database(name: str, *statements: str) -> Callable[[Path], None]:
    """A DuckDB database file made by `statements` (none: an empty database)."""

    def change(d: Path) -> None:
        import duckdb

        with duckdb.connect(str(d / name)) as con:
            for statement in statements:
                con.execute(statement)

    return change


HISTORY_OF_VERSION_3 = (
    "CREATE TABLE irpipe_history (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "INSERT INTO irpipe_history VALUES ('schema_version', '3'), ('created_by', '9.0')",
)


def compare(section: dict, *more: Callable[[Path], None], dense: str = "run.txt") -> Callable[[Path], None]:  # fmt: skip
    """Two runs of the collection, bm25 and dense, compared as `section` says."""

    def change(s: dict) -> None:
        s["runs"] = {"bm25": {"path": "run.txt", "collection": "c"},
                     "dense": {"path": dense, "collection": "c"}}  # fmt: skip
        s["compare"] = section

    return spec(change, *more)


def without(module: str) -> Callable[[Path], None]:
    """`module` cannot be imported (as on a machine without it): a finder in sitecustomize."""
    code = (f"import sys\nclass Without:\n    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.partition('.')[0] == {module!r}:\n"
            f"            raise ModuleNotFoundError(name)\nsys.meta_path.insert(0, Without())\n")  # fmt: skip

    def change(d: Path) -> None:
        (d / "site").mkdir()
        (d / "site/sitecustomize.py").write_text(code)

    return change


def checks(**sections) -> Callable[[Path], None]:
    """`expect:` and `gates:` entries in the spec (and metrics added to it)."""
    metrics = sections.pop("metrics", [])

    def change(s: dict) -> None:
        s.update(sections)
        s["metrics"].extend(metrics)

    return spec(change)


def runs(*names: str) -> Callable[[dict], None]:
    """The collection's runs are these, each reading the good run file."""
    return lambda s: s.update(runs={n: {"path": "run.txt", "collection": "c"} for n in names})


def EXPECT(**entry) -> list[dict]:  # noqa: N802 -- reads as a constant in CASES
    return [{"run": "r", "metric": "AP", "value": 0.5, **entry}]


def GATE(**entry) -> list[dict]:  # noqa: N802 -- reads as a constant in CASES
    return [{"metric": "AP", "against": "previous", **entry}]


SEVENTEEN = "".join(f"{q} 0 d{q} {q % 2}\n" for q in range(17))
SEVENTEEN_RUN = "".join(f"{q} Q0 d{q} 1 1.0 sys\n{q} Q0 e{q} 2 0.5 sys\n" for q in range(17))
GZ_RUN = gzip.compress(RUN.encode())
BIG_RUN = "".join(f"{q} Q0 d{q}_{i} {i} {1000 - i} sys\n" for q in (1, 2) for i in range(1, 2000))
BIG_QRELS = "".join(f"{q} 0 d{q}_{i} {i % 3}\n" for q in (1, 2) for i in range(1, 2000))
BINARY = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefg", "bcdefgh", strict=True)
)


def pools(*more: Callable[[Path], None], **keys) -> Callable[[Path], None]:
    """A pool `round1` of collection c (one output), with `keys` over its defaults."""
    pool = {"collection": "c", "outputs": [{"path": "out/pool.txt"}], **keys}
    return spec(lambda s: s.update(pools={"round1": pool}), *more)


def another_collection(d: Path) -> None:
    """A second collection c2 and its run r2, in the spec."""
    spec(lambda s: (s["collections"].update(c2={"qrels": "qrels.txt"}),
                    s["runs"].update(r2={"path": "run.txt", "collection": "c2"})))(d)  # fmt: skip


def judgment_sets(
    collection: object = ("c", "llm"), *more: Callable[[Path], None], **collections: object
) -> Callable[[Path], None]:
    """A second judgment set `llm` (and `collections`, by name: their qrels), and the run
    evaluated under `collection`."""

    def change(s: dict) -> None:
        s["collections"]["llm"] = {"qrels": "llm.txt"}
        s["collections"].update({n: {"qrels": q} for n, q in collections.items()})
        s["runs"]["r"]["collection"] = (
            list(collection) if isinstance(collection, tuple) else collection
        )

    return spec(change, write("llm.txt", QRELS.replace(" 2\n", " 1\n")), *more)


def on_llm(s: dict) -> None:
    """A run evaluated under the judgment set `llm` alone."""
    s["runs"]["r2"] = {"path": "run.txt", "collection": "llm"}


def remove(*names: str) -> Callable[[Path], None]:
    """The data is not on this machine (a spec checked in CI, its data on the cluster)."""
    return lambda d: [(d / name).unlink() for name in names] and None


def plugin(
    distribution: str, entry: str, *measures: tuple[str, str, dict]
) -> Callable[[Path], None]:
    """A plugin distribution in `site/` (on PYTHONPATH), each measure given as (class, name, aliases)."""

    def change(d: Path) -> None:
        module = f"{entry}_metrics"
        source = ["from pipeline import Measure, RankedParams, hookimpl"]
        for cls, name, aliases in measures:
            source += [f"class {cls}(Measure):", f"    name = {name!r}", "    description = 'x'",
                       "    Params = RankedParams", f"    aliases = {aliases!r}",
                       "    def per_query(self, p, c):", "        return '0.5'"]  # fmt: skip
        source += ["@hookimpl", "def register_metrics():", f"    return [{', '.join(m[0] for m in measures)}]"]  # fmt: skip
        fake_distribution(
            d / "site", distribution, {entry: module}, **{module: "\n".join(source) + "\n"}
        )

    return change


def source_plugin(source: str) -> Callable[[Path], None]:
    """The distribution irpipe-broken 1.0 in `site/`, its entry point `broken` naming a module
    of this source."""
    return lambda d: (
        fake_distribution(
            d / "site", "irpipe-broken", {"broken": "broken_metrics"}, broken_metrics=source
        )
        and None
    )


def uses(metric: str, *plugins: Callable[[Path], None]) -> Callable[[Path], None]:
    """Install the plugins and name `metric`, which one of them would provide, in the spec."""
    return spec(lambda s: s["metrics"].append(metric), *plugins)


def LOAD(names: str) -> tuple[tuple[str, str], ...]:  # noqa: N802 -- reads as a constant in CASES
    return (("PYTHONPATH", "{d}/site"), ("IRPIPE_LOAD_PLUGINS", names))


def WARNED(entry: str) -> str:  # noqa: N802 -- reads as a constant in CASES
    """The start of the warning for the plugin of entry point `entry` (distribution irpipe-<entry>)."""
    return rf"irpipe: plugin 'irpipe-{entry} 1\.0' \(entry point '{entry}'\) was not loaded: "


HOOK = "from pipeline.api import hookimpl\n@hookimpl\ndef register_metrics():\n"
BROKEN_MEASURE = """from pipeline.api import Measure, RankedParams
class Broken(Measure):
    name = "Broken"
    description = "broken"
    Params = RankedParams
    def per_query(self, p, c):
        return "0.5"
"""
XLSX_WRITER = """from pipeline.api import Writer, hookimpl
class Xlsx(Writer):
    suffixes = (".xlsx", ".csv")
    def write(self, con, table, path, manifest):
        path.write_text("a spreadsheet")
@hookimpl
def register_writers():
    return [Xlsx]
"""


def edit(name: str, old: str, new: str) -> Callable[[Path], None]:
    def change(d: Path) -> None:
        (d / name).write_text((d / name).read_text().replace(old, new, 1))

    return change


@dataclass(frozen=True)
class Case:
    id: str
    change: Callable[[Path], object]
    code: int
    message: str  # a regular expression that stderr must contain
    command: tuple[str, ...] = ("run", "--quiet")  # "{d}" is the case's directory
    target: str = "spec.yaml"  # the file in the case's directory given last on the command line
    env: tuple[tuple[str, str], ...] = ()  # extra environment; "{d}" is the case's directory


CASES = [
    # run files: fields
    Case("run_5_fields", line("run.txt", 2, "1 Q0 b 2 2.5"), DATA_ERROR, r"/run\.txt:2: expected 6 fields \(qid Q0 docno rank score tag\), found 5: '1 Q0 b 2 2\.5'"),
    Case("run_1_field", line("run.txt", 4, "garbage"), DATA_ERROR, r"/run\.txt:4: expected 6 fields .*found 1"),
    Case("run_tabs_5_fields", line("run.txt", 3, "1\tQ0\tc\t3\t1.5"), DATA_ERROR, r"/run\.txt:3: expected 6 fields .*found 5"),
    Case("run_lone_cr_splits_line", line("run.txt", 2, "1 Q0 b\r2 2.5 sys"), DATA_ERROR, r"/run\.txt:2: expected 6 fields .*found 3"),
    # run files: scores
    Case("run_score_comma", line("run.txt", 2, "1 Q0 b 2 1,5 sys"), DATA_ERROR, r"/run\.txt:2: the score must be a number, found '1,5'.*\nhint: .*input: lenient"),
    Case("run_score_text", line("run.txt", 5, "2 Q0 e 2 high sys"), DATA_ERROR, r"/run\.txt:5: the score must be a number, found 'high'"),
    Case("run_score_nan", line("run.txt", 1, "1 Q0 a 1 nan sys"), DATA_ERROR, r"/run\.txt:1: the score must be a finite number, found 'nan'"),
    Case("run_score_inf", line("run.txt", 1, "1 Q0 a 1 inf sys"), DATA_ERROR, r"/run\.txt:1: the score must be a finite number, found 'inf'"),
    Case("run_score_minus_inf", line("run.txt", 3, "1 Q0 c 3 -Infinity sys"), DATA_ERROR, r"/run\.txt:3: the score must be a finite number, found '-Infinity'"),
    Case("run_score_overflow", line("run.txt", 3, "1 Q0 c 3 1e400 sys"), DATA_ERROR, r"/run\.txt:3: the score must be a finite number, found '1e400'"),
    Case("run_score_underscore", line("run.txt", 2, "1 Q0 b 2 2_5 sys"), DATA_ERROR, r"/run\.txt:2: the score must be a number, found '2_5'"),
    Case("run_score_hex", line("run.txt", 2, "1 Q0 b 2 0x10 sys"), DATA_ERROR, r"/run\.txt:2: the score must be a number, found '0x10'"),
    Case("run_many_bad_lines", write("run.txt", RUN.replace(" sys", "")), DATA_ERROR, r"/run\.txt:1: expected 6 fields(.|\n)*/run\.txt:5: expected(.|\n)*$"),
    Case("run_rank_not_integer", spec(settings(ordering="rank"), line("run.txt", 2, "1 Q0 b 2.0 2.5 sys")), DATA_ERROR, r"/run\.txt:2: the rank \(settings\.ordering: rank\) must be an integer, found '2\.0'"),
    # run files: whole-file problems
    Case("run_duplicate_doc", append("run.txt", "1 Q0 a 4 0.5 sys\n"), DATA_ERROR, r"/run\.txt:1: query '1' has document 'a' again on line 6\n.*1 duplicate \(qid, docno\) pair"),
    Case("run_many_duplicates", write("run.txt", RUN * 20), DATA_ERROR, r"/run\.txt:1: query '1' has document 'a' again on lines 6, 11, 16, 21, 26 and 14 more\n(.*\n){4}.*: 5 duplicate"),
    Case("run_empty", write("run.txt", ""), DATA_ERROR, r"/run\.txt: no data: the file is empty"),
    Case("run_only_comments", write("run.txt", "# a header\n\n   \n# another\n"), DATA_ERROR, r"/run\.txt: no data"),
    Case("run_no_shared_queries", write("run.txt", RUN.replace("1 Q0", "7 Q0").replace("2 Q0", "8 Q0")), DATA_ERROR, r"/run\.txt: run 'r' shares no query with collection 'c' \(run queries: '7', '8'"),
    Case("run_docnos_spelt_otherwise", write("run.txt", RUN.replace(" a ", " A ").replace(" b ", " B ").replace(" c ", " C ").replace(" d ", " D ").replace(" e ", " E ")), DATA_ERROR, r"/run\.txt: run 'r' retrieves no document judged in collection 'c' in any of the 2 queries they share \(query '1': the run's documents 'A', 'B', 'C', \.\.\.; the qrels' 'a', 'b', 'c', \.\.\.\); are the docnos .* set `settings: \{unmatched_runs: allow\}`$"),
    Case("run_gz_truncated", spec(run_path("run.txt.gz"), write("run.txt.gz", gzip.compress(BIG_RUN.encode())[:2000])), DATA_ERROR, r"/run\.txt\.gz: the gzip file is truncated"),
    Case("run_gz_not_gzip", spec(run_path("run.gz"), write("run.gz", RUN)), DATA_ERROR, r"/run\.gz: the name ends in \.gz but the file is not gzip-compressed"),
    Case("run_gzip_without_suffix", write("run.txt", GZ_RUN), DATA_ERROR, r"/run\.txt:1: the file is gzip-compressed; name it \*\.gz"),
    Case("run_binary", write("run.txt", BINARY), DATA_ERROR, r"/run\.txt:1: not UTF-8 text"),
    Case("run_latin1", write("run.txt", RUN.encode() + b"2 Q0 caf\xe9 3 0.1 sys\n"), DATA_ERROR, r"/run\.txt:6: not UTF-8 text"),
    Case("run_utf16", write("run.txt", RUN.encode("utf-16")), DATA_ERROR, r"/run\.txt:1: not UTF-8 text"),
    Case("run_utf16_no_bom", write("run.txt", RUN.encode("utf-16-le")), DATA_ERROR, r"/run\.txt:1: a NUL byte: not a text file"),
    Case("run_nul_in_docno", line("run.txt", 2, "1 Q0 b\x00 2 2.5 sys"), DATA_ERROR, r"/run\.txt:2: a NUL byte"),
    Case("run_line_too_long", append("run.txt", "x" * 2_100_000 + "\n"), DATA_ERROR, r"/run\.txt:6: a line longer than 2 MB"),
    # lenient mode keeps what trec_eval itself refuses
    Case("lenient_run_duplicate_doc", lenient(append("run.txt", "2 Q0 d 9 0 sys\n")), DATA_ERROR, r"/run\.txt:4: query '2' has document 'd' again on line 6"),
    Case("lenient_run_5_fields", lenient(line("run.txt", 2, "1 Q0 b 2 2.5")), DATA_ERROR, r"/run\.txt:2: expected 6 fields"),
    Case("lenient_run_hex_score", lenient(line("run.txt", 2, "1 Q0 b 2 0x1p3 sys")), DATA_ERROR, r"/run\.txt:2: hexadecimal scores are not read, found '0x1p3'"),
    Case("lenient_run_empty", lenient(write("run.txt", "\n")), DATA_ERROR, r"/run\.txt: no data"),
    # qrels files
    Case("qrels_3_fields", line("qrels.txt", 2, "1 0 b"), DATA_ERROR, r"/qrels\.txt:2: expected 4 fields \(qid iter docno rel\), found 3"),
    Case("qrels_5_fields", line("qrels.txt", 3, "1 0 c 1 extra"), DATA_ERROR, r"/qrels\.txt:3: expected 4 fields .*found 5"),
    Case("qrels_and_run_swapped", spec(lambda s: (run_path("qrels.txt")(s), qrels_path("run.txt")(s))), DATA_ERROR, r"/run\.txt:1: expected 4 fields .*found 6(.|\n)*hint: the lines look like a run file; are the qrels and run swapped\?"),
    Case("qrels_grade_decimal", line("qrels.txt", 1, "1 0 a 1.7"), DATA_ERROR, r"/qrels\.txt:1: the relevance grade must be an integer, found '1\.7' \(decimal grades are read with settings: \{grades: real\}\): '1 0 a 1\.7'\n$"),
    Case("qrels_grade_suffix", line("qrels.txt", 1, "1 0 a 2x"), DATA_ERROR, r"/qrels\.txt:1: the relevance grade must be an integer, found '2x'"),
    Case("qrels_grade_text", line("qrels.txt", 4, "2 0 d high"), DATA_ERROR, r"/qrels\.txt:4: the relevance grade must be an integer, found 'high'"),
    Case("qrels_grade_exponent", line("qrels.txt", 4, "2 0 d 1e2"), DATA_ERROR, r"/qrels\.txt:4: the relevance grade must be an integer, found '1e2' \(decimal grades are read with settings: \{grades: real\}\)"),
    Case("qrels_grade_hex", line("qrels.txt", 4, "2 0 d 0x1"), DATA_ERROR, r"/qrels\.txt:4: the relevance grade must be an integer, found '0x1'"),
    Case("qrels_grade_too_large", line("qrels.txt", 2, "1 0 b 99999999999"), DATA_ERROR, r"/qrels\.txt:2: the relevance grade '99999999999' is out of range"),
    Case("qrels_duplicate", append("qrels.txt", "1 0 b 1\n"), DATA_ERROR, r"/qrels\.txt:2: query '1' has document 'b' again on line 6"),
    Case("qrels_empty", write("qrels.txt", b""), DATA_ERROR, r"/qrels\.txt: no data"),
    Case("qrels_only_comments", write("qrels.txt", "# judged by nobody\n"), DATA_ERROR, r"/qrels\.txt: no data"),
    Case("qrels_gz_truncated", spec(qrels_path("qrels.gz"), write("qrels.gz", gzip.compress(BIG_QRELS.encode())[:2000])), DATA_ERROR, r"/qrels\.gz: the gzip file is truncated"),
    Case("qrels_binary", write("qrels.txt", BINARY), DATA_ERROR, r"/qrels\.txt:1: not UTF-8 text"),
    Case("real_qrels_grade_nan", spec(settings(grades="real"), line("qrels.txt", 1, "1 0 a nan")), DATA_ERROR, r"/qrels\.txt:1: the relevance grade must be a finite number, found 'nan'"),
    Case("real_qrels_grade_overflow", spec(settings(grades="real"), line("qrels.txt", 2, "1 0 b 1e400")), DATA_ERROR, r"/qrels\.txt:2: the relevance grade must be a finite number, found '1e400'"),
    Case("real_qrels_grade_text", spec(settings(grades="real"), line("qrels.txt", 4, "2 0 d high")), DATA_ERROR, r"/qrels\.txt:4: the relevance grade must be a number, found 'high'"),
    Case("real_qrels_grade_comma", spec(settings(grades="real"), line("qrels.txt", 4, "2 0 d 0,5")), DATA_ERROR, r"/qrels\.txt:4: the relevance grade must be a number, found '0,5'.*\nhint: .*input: lenient"),
    Case("real_lenient_qrels_grade_inf", lenient(spec(settings(grades="real")), line("qrels.txt", 1, "1 0 a -inf")), DATA_ERROR, r"/qrels\.txt:1: the relevance grade must be a finite number, found '-inf'"),
    Case("real_lenient_qrels_grade_hex", lenient(spec(settings(grades="real")), line("qrels.txt", 1, "1 0 a 0x1p3")), DATA_ERROR, r"/qrels\.txt:1: hexadecimal grades are not read, found '0x1p3'"),
    Case("lenient_qrels_grade_too_large", lenient(line("qrels.txt", 2, "1 0 b 99999999999")), DATA_ERROR, r"/qrels\.txt:2: the relevance grade '99999999999' is out of range"),
    Case("lenient_qrels_3_fields", lenient(line("qrels.txt", 2, "1 0 b")), DATA_ERROR, r"/qrels\.txt:2: expected 4 fields"),
    Case("lenient_qrels_duplicate", lenient(append("qrels.txt", "2 0 e 1\n")), DATA_ERROR, r"/qrels\.txt:5: query '2' has document 'e' again on line 6"),
    # the spec
    Case("spec_unknown_setting", spec(settings(inptu="lenient")), SPEC_ERROR, r"/spec\.yaml:\d+: settings\.inptu: unknown key; did you mean 'input'\?"),
    Case("spec_bad_grades", spec(settings(grades="float")), SPEC_ERROR, r"/spec\.yaml:\d+: settings\.grades: Input should be 'integer' or 'real'"),
    Case("spec_decimal_level_integer_grades", spec(settings(relevance_level=0.5)), SPEC_ERROR, r"/spec\.yaml:\d+: settings\.relevance_level: 0\.5 is a decimal, and grades are integers: give an integer, or read decimal grades with settings: \{grades: real\}\n$"),
    Case("spec_decimal_rel_integer_grades", spec(lambda s: s["metrics"].append("P(rel=0.5)@2")), SPEC_ERROR, r"/spec\.yaml:\d+: metrics\.2: P\(rel=0\.5\)@2: rel=0\.5 is a decimal, and grades are integers: give an integer, or read decimal grades with settings: \{grades: real\}"),
    Case("spec_decimal_gain_integer_grades", spec(lambda s: s["metrics"].append({"metric": "nDCG", "gain": {0.5: 1.0}})), SPEC_ERROR, r"/spec\.yaml:\d+: metrics\.2: nDCG\(gain=\{0\.5:1\.0\}\): the gain of grade 0\.5 is a decimal, and grades are integers"),
    Case("spec_bad_input_mode", spec(settings(input="loose")), SPEC_ERROR, r"/spec\.yaml:\d+: settings\.input: Input should be 'strict' or 'lenient'"),
    Case("spec_memory_limit_too_low", spec(settings(memory_limit="1MB")), SPEC_ERROR, r"settings\.memory_limit: 1MB is too little for DuckDB \(Out of Memory Error.*\); raise it"),
    Case("spec_glob_matches_nothing", spec(run_path("runs/*.trec")), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.r\.path: no file matches the pattern 'runs/\*\.trec'"),
    Case("spec_missing_run_file", spec(run_path("nope.trec")), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.r\.path: .*nope\.trec does not exist"),
    Case("spec_unknown_collection", spec(lambda s: s["runs"]["r"].update(collection="d")), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.r\.collection: unknown collection 'd'"),
    Case("spec_output_twice", spec(add_output("out/summary.csv")), SPEC_ERROR, r"/spec\.yaml:\d+: outputs\.3\.path: .*summary\.csv is also outputs\.0"),
    Case("spec_output_replaces_input", spec(lambda s: (add_output("run.txt.csv")(s), qrels_path("run.txt.csv")(s)), write("run.txt.csv", QRELS)), SPEC_ERROR, r"/spec\.yaml:\d+: outputs\.3\.path: .*run\.txt\.csv is an input of this spec"),
    Case("spec_run_not_a_mapping", spec(lambda s: s["runs"].update(r=["run.txt"])), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.r: expected a mapping with the keys: path, collection"),
    Case("spec_path_not_a_string", spec(run_path(3)), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.r\.path: expected a file path \(a string\)"),
    Case("spec_unknown_metric", spec(lambda s: s["metrics"].append("nDGC@10")), SPEC_ERROR, r"/spec\.yaml:\d+: metrics\.2: unknown metric 'nDGC'; did you mean 'nDCG@10'"),
    Case("spec_duplicate_key", write("spec.yaml", yaml.safe_dump(SPEC) + "metrics: [AP]\n"), SPEC_ERROR, r"/spec\.yaml:\d+: metrics: duplicate key"),
    Case("spec_yaml_tag", write("spec.yaml", "collections: !!python/object/apply:os.system ['true']\n"), SPEC_ERROR, r"/spec\.yaml:1: invalid YAML: tag"),
    Case("spec_alias_bomb", write("spec.yaml", ALIAS_BOMB), SPEC_ERROR, r"/spec\.yaml: invalid YAML: more than 100,000 values"),
    Case("spec_nested_too_deeply", write("spec.yaml", "x: " + "[" * 3000 + "]" * 3000 + "\n"), SPEC_ERROR, r"/spec\.yaml: invalid YAML: nested too deeply"),
    Case("spec_not_a_mapping", write("spec.yaml", "- runs\n- metrics\n"), SPEC_ERROR, r"/spec\.yaml: the spec must be a YAML mapping"),
    Case("spec_not_utf8", write("spec.yaml", b"metrics: [caf\xe9]\n"), SPEC_ERROR, r"/spec\.yaml: the spec is not UTF-8 text"),
    Case("spec_bad_yaml", write("spec.yaml", "runs: {r: [\n"), SPEC_ERROR, r"/spec\.yaml:\d+: invalid YAML"),
    # outputs
    Case("output_directory_is_a_file", spec(add_output("blocked/x.csv"), write("blocked", "a file")), OUTPUT_ERROR, r"cannot write outputs: .*/blocked"),
    Case("output_target_is_a_directory", spec(add_output("out/sub.csv"), lambda d: (d / "out/sub.csv").mkdir()), SPEC_ERROR, r"/spec\.yaml:\d+: outputs\.3\.path: \S+/out/sub\.csv is a directory; name a file"),
    # what irpipe writes never replaces what it did not write, nor what it reads
    Case("output_replaces_a_users_file", spec(add_output("notes.csv"), write("notes.csv", "mine\n")), SPEC_ERROR, r"/spec\.yaml:\d+: outputs\.3\.path: \S+/notes\.csv exists and irpipe did not write it \(no notes\.csv\.manifest\.json beside it\); move it away or name another path"),
    Case("output_manifest_is_an_input", spec(lambda s: (add_output("x.csv")(s), qrels_path("x.csv.manifest.json")(s)), write("x.csv.manifest.json", QRELS)), SPEC_ERROR, r"outputs\.3\.path: \S+/x\.csv's manifest x\.csv\.manifest\.json is an input of this spec \(collections\.c\.qrels\)"),
    Case("dashboard_is_the_outputs_directory", history({"path": "hist.duckdb", "dashboard": "out"}), SPEC_ERROR, r"^Error: \S+/spec\.yaml:\d+: history\.dashboard: \S+/out holds outputs\.0 \(\S+/out/summary\.csv\), and the dashboard replaces its directory whole; name a directory of its own\n$"),
    Case("dashboard_is_the_spec_directory", history({"path": "hist.duckdb", "dashboard": "."}), SPEC_ERROR, r"^Error: \S+/spec\.yaml:\d+: history\.dashboard: \S+/case is the spec's directory; name another path\n$"),
    Case("dashboard_holds_the_spec", history({"path": "hist.duckdb", "dashboard": ".."}), SPEC_ERROR, r"history\.dashboard: \S+ holds the spec \(\S+/case/spec\.yaml\)"),
    Case("dashboard_is_a_file", history({"path": "hist.duckdb", "dashboard": "notes.txt"}, write("notes.txt", "mine\n")), SPEC_ERROR, r"history\.dashboard: \S+/notes\.txt is a file, and the dashboard is a directory; name a new or empty directory"),
    Case("dashboard_is_the_history", history({"path": "hist.duckdb", "dashboard": "hist.duckdb"}), SPEC_ERROR, r"/spec\.yaml:\d+: history: \S+/hist\.duckdb is the dashboard \(history\.dashboard\); name another path"),
    Case("dashboard_is_an_input", history({"path": "hist.duckdb", "dashboard": "run.txt"}), SPEC_ERROR, r"history\.dashboard: \S+/run\.txt is an input of this spec \(runs\.r\.path\)"),
    Case("dashboard_is_a_users_directory", history({"path": "hist.duckdb", "dashboard": "photos"}, write("photos/cat.jpg", "meow")), SPEC_ERROR, r"history\.dashboard: \S+/photos exists and is not a dashboard irpipe wrote \(no \.irpipe-dashboard in it\), and the dashboard replaces its directory whole; name a new or empty directory"),
    Case("dashboard_command_holds_the_history", history("hist.duckdb"), SPEC_ERROR, r"^Error: --out: \S+/case holds the history \(\S+/hist\.duckdb\), and the dashboard replaces its directory whole", command=("dashboard", "--out", "{d}"), target="hist.duckdb"),
    Case("dashboard_command_is_the_history", history("hist.duckdb"), SPEC_ERROR, r"^Error: --out: \S+/hist\.duckdb is the history; name another path", command=("dashboard", "--out", "{d}/hist.duckdb"), target="hist.duckdb"),
    Case("history_is_an_input", history("run.txt"), SPEC_ERROR, r"/spec\.yaml:\d+: history: \S+/run\.txt is an input of this spec \(runs\.r\.path\); writing it would replace the data"),
    Case("history_is_an_output", history("out/summary.csv"), SPEC_ERROR, r"/spec\.yaml:\d+: history: \S+/out/summary\.csv is also outputs\.0; name another path"),
    Case("history_cli_is_an_output", line("run.txt", 2, "garbage"), SPEC_ERROR, r"^Error: --history: \S+/out/summary\.csv is also outputs\.0; name another path", command=("run", "--quiet", "--history", "{d}/out/summary.csv")),
    Case("junit_is_the_spec", line("run.txt", 2, "garbage"), SPEC_ERROR, r"^Error: --junit: \S+/spec\.yaml is the spec; name another path", command=("run", "--quiet", "--junit", "{d}/spec.yaml")),
    Case("junit_is_a_manifest", line("run.txt", 2, "garbage"), SPEC_ERROR, r"^Error: --junit: \S+/summary\.csv\.manifest\.json is the manifest of outputs\.0; name another path", command=("run", "--quiet", "--junit", "{d}/out/summary.csv.manifest.json")),
    Case("output_database_held", hold_database("out/all.duckdb"), OUTPUT_ERROR, r"/out/all\.duckdb: the database is open in process \d+; close it there and rerun"),
    # a spec checked without its data (validate --no-data) is still checked whole
    Case("no_data_unknown_metric", spec(lambda s: s["metrics"].append("nDGC@10"), remove("run.txt", "qrels.txt")), SPEC_ERROR, r"/spec\.yaml:\d+: metrics\.2: unknown metric 'nDGC'; did you mean 'nDCG@10'", command=("validate", "--no-data")),
    Case("no_data_unknown_trec_eval_name", spec(lambda s: s["metrics"].append("recip_rnak"), remove("run.txt")), SPEC_ERROR, r"metrics\.2: unknown metric 'recip_rnak'; did you mean 'recip_rank'", command=("validate", "--no-data")),
    Case("no_data_bad_parameter", spec(lambda s: s["metrics"].append({"metric": "nDCG", "gain": "cubic"}), remove("run.txt")), SPEC_ERROR, r"metrics\.2: 'nDCG': parameter 'gain.*Input should be 'linear' or 'exponential'", command=("validate", "--no-data")),
    Case("no_data_output_without_writer", spec(lambda s: (add_output("results.xlsx")(s)), remove("run.txt")), SPEC_ERROR, r"outputs\.3\.path: .*no writer for '\.xlsx'", command=("validate", "--no-data")),
    # C/W/L measures: gains in [0, 1] (cwl_eval accepts others silently), T > 0, p in (0, 1), k > 0
    Case("cwl_gain_above_one", spec(lambda s: s["metrics"].append({"metric": "INST", "gains": {1: 0.5, 2: 1.5}})), SPEC_ERROR, r"/spec\.yaml:\d+: metrics\.2: 'INST': parameter 'gains\.2': Input should be less than or equal to 1$"),
    Case("cwl_negative_gain", spec(lambda s: s["metrics"].append("BPM(gains={1:-0.5})")), SPEC_ERROR, r"metrics\.2: 'BPM\(gains=\{1:-0\.5\}\)': parameter 'gains\.1': Input should be greater than or equal to 0$"),
    Case("cwl_goal_not_positive", spec(lambda s: s["metrics"].append("INST(T=0)"), remove("run.txt")), SPEC_ERROR, r"metrics\.2: 'INST\(T=0\)': parameter 'T': Input should be greater than 0$", command=("validate", "--no-data")),
    Case("cwl_persistence_outside", spec(lambda s: s["metrics"].append("NERR10(p=1.0)")), SPEC_ERROR, r"metrics\.2: 'NERR10\(p=1\.0\)': parameter 'p': Input should be less than 1$"),
    Case("cwl_cutoff_zero", spec(lambda s: s["metrics"].append("NERR8@0")), SPEC_ERROR, r"metrics\.2: 'NERR8@0': parameter 'k': Input should be greater than 0$"),
    Case("cwl_residual_gated", checks(gates=GATE(metric="INST(residual=True)"), metrics=["INST(residual=true)"]), SPEC_ERROR, r"gates\.0\.metric: INST\(residual=True\) is a count or a diagnostic: neither a higher nor a lower value is better, so it cannot drop"),
    # a broken plugin fails alone, with a warning naming its distribution and the fix; a spec naming
    # one of its metrics is told which plugins failed (what a failed plugin provides is unknown)
    Case("plugin_alias_takes_trec_eval_map", uses("Evil", plugin("irpipe-evil", "evil", ("Evil", "Evil", {"map": {}}))), SPEC_ERROR, WARNED("evil") + r"metric alias 'map' of Evil \(class evil_metrics\.Evil, distribution 'irpipe-evil'\) clashes with trec_eval's name 'map' for AP \(distribution 'irpipe'\): the same name(.|\n)*Error: .*metrics\.2: unknown metric 'Evil' \(irpipe metrics lists them all; plugin 'irpipe-evil 1\.0' failed to load: metric alias 'map'", env=LOAD("evil")),
    Case("plugin_alias_takes_builtin_alias", uses("Evil", plugin("irpipe-evil", "evil", ("Evil", "Evil", {"MRR": {}}))), SPEC_ERROR, WARNED("evil") + r"metric alias 'MRR' of Evil .* clashes with alias 'MRR' of RR \(class pipeline\.metrics\.reciprocal_rank\.RR, distribution 'irpipe'\)", env=LOAD("evil")),
    Case("plugin_name_differs_in_case", uses("Ndcg", plugin("irpipe-evil", "evil", ("Evil", "Ndcg", {}))), SPEC_ERROR, WARNED("evil") + r"metric name 'Ndcg' of Ndcg .* clashes with name 'nDCG' of nDCG .*: the names differ only in case(.|\n)*unknown metric 'Ndcg'; did you mean", env=LOAD("evil")),
    Case("plugins_clash_with_each_other", uses("One", plugin("irpipe-one", "one", ("One", "One", {"shared": {}})), plugin("irpipe-two", "two", ("Two", "Two", {"shared": {}}))), SPEC_ERROR, r"irpipe: plugin 'irpipe-one 1\.0' \(entry point 'one'\) and plugin 'irpipe-two 1\.0' \(entry point 'two'\): metric alias 'shared' of Two \(class two_metrics\.Two, distribution 'irpipe-two'\) clashes with alias 'shared' of One \(class one_metrics\.One, distribution 'irpipe-one'\): the same name.*; two installed plugins define it, so neither's is used \(their other metrics are\): uninstall one of the two plugins, or ask one's authors to rename it\n(.|\n)*metric 'One' is not available: metric alias 'shared' of Two", env=LOAD("one,two")),
    Case("plugin_import_error", uses("Broken", source_plugin("import irpipe_no_such_dependency\n")), SPEC_ERROR, WARNED("broken") + r"importing broken_metrics raised ModuleNotFoundError: No module named 'irpipe_no_such_dependency'; reinstall or upgrade it(.|\n)*unknown metric 'Broken' \(irpipe metrics lists them all; plugin 'irpipe-broken 1\.0' failed to load: importing", env=LOAD("broken")),
    Case("plugin_syntax_error", uses("Broken", source_plugin("def register_metrics(:\n")), SPEC_ERROR, WARNED("broken") + r"importing broken_metrics raised SyntaxError: .*\(broken_metrics\.py, line 1\)", env=LOAD("broken")),
    Case("plugin_hook_raises", uses("Broken", source_plugin(HOOK + "    raise RuntimeError('no licence file')\n")), SPEC_ERROR, WARNED("broken") + r"its register_metrics hook raised RuntimeError: no licence file; a bug in the plugin: upgrade it, or report it to its authors", env=LOAD("broken")),
    Case("plugin_returns_non_measure", uses("Broken", source_plugin(HOOK + "    return ['Broken@10']\n")), SPEC_ERROR, WARNED("broken") + r"register_metrics returned 'Broken@10' \(a str\), not a class; its register_metrics must return a list of pipeline\.api\.Measure subclasses", env=LOAD("broken")),
    Case("plugin_params_not_pydantic", uses("Broken", source_plugin(BROKEN_MEASURE.replace("= RankedParams", "= dict") + HOOK + "    return [Broken]\n")), SPEC_ERROR, WARNED("broken") + r"measure class broken_metrics\.Broken: Params is class builtins\.dict, not a pydantic model", env=LOAD("broken")),
    Case("plugin_misspelt_hook", uses("Broken", source_plugin(BROKEN_MEASURE + HOOK.replace("metrics", "metric") + "    return [Broken]\n")), SPEC_ERROR, WARNED("broken") + r"it implements 'register_metric', which is not an irpipe hook \(did you mean 'register_metrics'\?\); rename it to 'register_metrics'", env=LOAD("broken")),
    Case("plugin_writer_takes_csv", spec(add_output("out/table.xlsx"), source_plugin(XLSX_WRITER)), SPEC_ERROR, WARNED("broken") + r"writers pipeline\.outputs\.CsvWriter \(irpipe\) and broken_metrics\.Xlsx \(irpipe-broken\) claim the same suffix '\.csv'(.|\n)*Error: .*outputs\.3\.path: .*no writer for '\.xlsx'", env=LOAD("broken")),
    # comparing runs (compare:)
    Case("compare_unknown_baseline", compare({"baseline": "bm52"}), SPEC_ERROR, r"/spec\.yaml:\d+: compare\.baseline: unknown run 'bm52'; did you mean 'bm25'\? runs: bm25, dense"),
    Case("compare_unknown_metric", compare({"metrics": ["AP", "P@3"]}), SPEC_ERROR, r"/spec\.yaml:\d+: compare\.metrics\.1: 'P@3' is not a metric of this spec; did you mean 'P@2'\? compare names metrics as the tables do: AP, P@2"),
    Case("compare_test_typo", compare({"tests": ["t", "randomisation"]}), SPEC_ERROR, r"/spec\.yaml:\d+: compare\.tests: unknown test 'randomisation'; did you mean 'randomization'\? known: t, wilcoxon, sign, randomization, bootstrap"),
    Case("compare_correction_typo", compare({"correction": "holmes"}), SPEC_ERROR, r"compare\.correction: unknown correction 'holmes'; did you mean 'holm'\?"),
    Case("compare_alpha_zero", compare({"alpha": 0}), SPEC_ERROR, r"/spec\.yaml:\d+: compare\.alpha: Input should be greater than 0"),
    Case("compare_alpha_one", compare({"alpha": 1.0}), SPEC_ERROR, r"/spec\.yaml:\d+: compare\.alpha: Input should be less than 1"),
    Case("compare_no_samples", compare({"samples": 0}), SPEC_ERROR, r"compare\.samples: expected a number of samples \(at least 1\) or 'exact', found 0"),
    Case("compare_one_run", spec(lambda s: s.update(compare={})), SPEC_ERROR, r"/spec\.yaml:\d+: compare: collection 'c' has one run \('r'\): there is nothing to compare it with"),
    Case("compare_one_shared_query", compare({"tests": ["t"]}, spec(settings(queries="intersection")), write("run2.txt", RUN.splitlines()[0] + "\n"), dense="run2.txt"), DATA_ERROR, r"/spec\.yaml:\d+: compare: run 'dense' and baseline 'bm25' share 1 query with a value of AP in collection 'c'; a paired test needs at least 2"),
    Case("compare_text_metric", compare({"metrics": ["RelString"]}, spec(lambda s: s["metrics"].append("RelString"))), SPEC_ERROR, r"compare\.metrics\.0: 'RelString' has no per-query numbers to compare \(a text metric\)"),
    Case("compare_level_without_section", spec(lambda s: s["outputs"].append({"path": "out/c.csv", "level": "comparison"})), SPEC_ERROR, r"outputs\.3\.level: level comparison needs a compare section in the spec"),
    Case("compare_level_tex_aggregate", compare({}, spec(add_output("out/table.tex"))), SPEC_ERROR, r"/spec\.yaml: outputs\.3\.level: a \.tex output cannot be level 'aggregate' \(\.tex writes: report\); level aggregate is written to: \.csv, "),
    Case("compare_bootstrap_exact", compare({"tests": ["bootstrap"], "samples": "exact"}), SPEC_ERROR, r"compare\.samples: exact enumerates the randomization test's sign flips; the bootstrap needs a number of samples"),
    Case("compare_exact_too_many_queries", compare({"samples": "exact"}, write("qrels.txt", SEVENTEEN), write("run.txt", SEVENTEEN_RUN)), SPEC_ERROR, r"compare\.samples: exact enumerates all 2\^n sign flips, for at most 16 queries; AP in collection 'c' has 17"),
    Case("compare_without_scipy", compare({}, without("scipy")), SPEC_ERROR, r"/spec\.yaml:\d+: compare: comparing runs needs scipy, which is not installed: pip install 'irpipe\[compare\]'", env=(("PYTHONPATH", "{d}/site"),)),
    # expected values and gates (expect:, gates:), checked before any data is read
    Case("expect_unknown_run", checks(expect=EXPECT(run="rr")), SPEC_ERROR, r"/spec\.yaml:\d+: expect\.0\.run: unknown run 'rr'; did you mean 'r'\? runs: r"),
    Case("expect_unknown_metric", checks(expect=EXPECT(metric="P@3")), SPEC_ERROR, r"/spec\.yaml:\d+: expect\.0\.metric: 'P@3' is not a metric of this spec; did you mean 'P@2'\? name metrics as the tables do: AP, P@2"),
    Case("expect_text_metric", checks(expect=EXPECT(metric="RelString"), metrics=["RelString"]), SPEC_ERROR, r"expect\.0\.metric: 'RelString' is a text metric: it has no value to check"),
    Case("expect_negative_tolerance", checks(expect=EXPECT(tolerance=-0.001)), SPEC_ERROR, r"/spec\.yaml:\d+: expect\.0\.tolerance: Input should be greater than or equal to 0"),
    Case("expect_value_not_a_number", checks(expect=EXPECT(value="0.2179")), SPEC_ERROR, r"/spec\.yaml:\d+: expect\.0\.value: Input should be a valid number"),
    Case("expect_unknown_key", checks(expect=EXPECT(tolerence=0.1)), SPEC_ERROR, r"/spec\.yaml:\d+: expect\.0\.tolerence: unknown key; did you mean 'tolerance'\? allowed: run, metric, value, tolerance, two_sided, collection"),
    Case("gate_negative_max_drop", checks(gates=GATE(max_drop=-0.01)), SPEC_ERROR, r"/spec\.yaml:\d+: gates\.0\.max_drop: Input should be greater than or equal to 0"),
    Case("gate_unknown_key", checks(gates=GATE(max_dorp=0.01)), SPEC_ERROR, r"/spec\.yaml:\d+: gates\.0\.max_dorp: unknown key; did you mean 'max_drop'\? allowed: metric, against, max_drop, run, significant"),
    Case("gate_without_against", checks(gates=[{"metric": "AP"}]), SPEC_ERROR, r"/spec\.yaml: gates\.0\.against: Field required"),
    Case("gate_against_typo", checks(gates=GATE(against="prevous")), SPEC_ERROR, r"/spec\.yaml:\d+: gates\.0\.against: expected 'previous' or a mapping \{run: NAME\}, found 'prevous'"),
    Case("gate_against_unknown_run", checks(gates=GATE(against={"run": "bm25"})), SPEC_ERROR, r"/spec\.yaml:\d+: gates\.0\.against\.run: unknown run 'bm25'; runs: r"),
    Case("gate_against_the_only_run", checks(gates=GATE(against={"run": "r"})), SPEC_ERROR, r"gates\.0\.against\.run: 'r' is the only run of collection 'c': there is no other run to gate against it"),
    Case("gate_unknown_run", checks(gates=GATE(run="rr")), SPEC_ERROR, r"/spec\.yaml:\d+: gates\.0\.run: unknown run 'rr'; did you mean 'r'\?"),
    Case("gate_metric_without_direction", checks(gates=GATE(metric="NumRet"), metrics=["NumRet"]), SPEC_ERROR, r"gates\.0\.metric: NumRet is a count or a diagnostic: neither a higher nor a lower value is better, so it cannot drop"),
    Case("gate_significant_without_compare", spec(runs("bm25", "dense"), checks(gates=GATE(against={"run": "bm25"}, significant=True))), SPEC_ERROR, r"/spec\.yaml:\d+: gates\.0\.significant: a significant gate against run 'bm25' reads the comparisons, and the spec has no compare section"),
    Case("gate_significant_pair_not_compared", compare({"baseline": "bm25"}, spec(lambda s: s["runs"].update(third={"path": "run.txt", "collection": "c"})), checks(gates=GATE(against={"run": "dense"}, run="third", significant=True))), SPEC_ERROR, r"gates\.0\.significant: the compare section does not compare run 'third' with 'dense' \(its baseline is 'bm25'\)"),
    Case("gate_significant_metric_not_compared", compare({"metrics": ["AP"]}, checks(gates=GATE(metric="P@2", against={"run": "bm25"}, significant=True))), SPEC_ERROR, r"gates\.0\.significant: the compare section does not compare P@2 \(its metrics: AP\)"),
    Case("gate_significant_without_scipy", spec(lambda s: s.update(gates=GATE(significant=True)), without("scipy")), SPEC_ERROR, r"/spec\.yaml:\d+: gates\.0\.significant: a significance test needs scipy, which is not installed: pip install 'irpipe\[compare\]'", env=(("PYTHONPATH", "{d}/site"),)),
    # found before the data is read: the run file is broken too, and the error is the report's
    Case("junit_missing_directory", line("run.txt", 2, "garbage"), OUTPUT_ERROR, r"^Error: --junit /nonexistent-irpipe-dir/checks\.xml: the directory /nonexistent-irpipe-dir does not exist; create it", command=("run", "--quiet", "--junit", "/nonexistent-irpipe-dir/checks.xml")),
    Case("no_data_expect_unknown_run", checks(expect=EXPECT(run="rr")), SPEC_ERROR, r"expect\.0\.run: unknown run 'rr'", command=("validate", "--no-data")),
    # the history: not a history, one of another irpipe, held by another job, nowhere to go
    Case("history_not_duckdb", history("hist.duckdb", write("hist.duckdb", "not a database\n" * 500)), HISTORY_ERROR, r"/hist\.duckdb: not a DuckDB database, so not an irpipe history; give another path"),
    Case("history_not_a_history", history("hist.duckdb", database("hist.duckdb", "CREATE TABLE sales (amount INTEGER)")), HISTORY_ERROR, r"/hist\.duckdb: a DuckDB database but not an irpipe history \(its tables: sales\); give another path"),
    Case("history_newer_schema", history("hist.duckdb", database("hist.duckdb", *HISTORY_OF_VERSION_3)), HISTORY_ERROR, r"/hist\.duckdb: history schema version 3 \(made by irpipe 9\.0\), this irpipe reads version 2; upgrade irpipe to read it"),
    Case("history_unknown_schema", history("hist.duckdb", database("hist.duckdb", *HISTORY_OF_VERSION_3[:1], "INSERT INTO irpipe_history VALUES ('schema_version', 'beta')")), HISTORY_ERROR, r"history schema version unknown, this irpipe reads version 2; it cannot be migrated; start a new history"),
    Case("history_locked", history({"path": "hist.duckdb", "lock_timeout": 0.5}, database("hist.duckdb"), hold_database("hist.duckdb")), HISTORY_ERROR, r"/hist\.duckdb: the history is in use by process \d+ \(.*\), still after 0\.5 s; wait for it to finish, or raise history\.lock_timeout"),
    Case("history_under_a_file", history("results/hist.duckdb", write("results", "a file\n")), SPEC_ERROR, r"/spec\.yaml:\d+: history: \S+/results is a file, not a directory, so the history \S+ cannot be made; give another path"),
    Case("history_cli_under_a_file", write("results", "a file\n"), SPEC_ERROR, r"--history: \S+/results is a file, not a directory, so the history \S+ cannot be made; give another path", command=("run", "--quiet", "--history", "{d}/results/h.duckdb")),
    Case("history_negative_timeout", history({"path": "hist.duckdb", "lock_timeout": -1}), SPEC_ERROR, r"/spec\.yaml:\d+: history\.lock_timeout: Input should be greater than 0"),
    # judgment sets: a run under several collections, a collection overlaying others
    Case("run_collections_unknown", judgment_sets(("c", "lmm")), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.r\.collection\.1: unknown collection 'lmm'; did you mean 'llm'\? defined: c, llm"),
    Case("run_collections_twice", judgment_sets(("c", "llm", "c")), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.r\.collection: a collection is listed twice; list each once"),
    Case("run_collections_empty", judgment_sets(()), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.r\.collection: give a collection's name, or a list of one or more"),
    Case("run_collections_not_names", judgment_sets(("c", 3)), SPEC_ERROR, r"runs\.r\.collection: expected a collection's name or a list of names, found \['c', 3\]"),
    Case("run_matches_no_judgment_of_one_set", judgment_sets(("c", "llm"), write("llm.txt", "1 0 z 1\n2 0 y 1\n")), DATA_ERROR, r"/run\.txt: run 'r' retrieves no document judged in collection 'llm' in any of the 2 queries they share \(query '1': the run's documents 'a', 'b', 'c', \.\.\.; the qrels' 'z', \.\.\.\)"),
    Case("run_shares_no_query_with_one_set", judgment_sets(("c", "llm"), write("llm.txt", "9 0 a 1\n")), DATA_ERROR, r"/run\.txt: run 'r' shares no query with collection 'llm' \(run queries: '1', '2', \.\.\.; qrels queries: '9', \.\.\.\)"),
    Case("overlay_unknown_set", judgment_sets("c", both={"overlay": ["c", "lml"]}), SPEC_ERROR, r"/spec\.yaml:\d+: collections\.both\.qrels\.overlay\.1: unknown collection 'lml'; did you mean 'llm'\?"),
    Case("overlay_of_one_set", judgment_sets("c", both={"overlay": ["llm"]}), SPEC_ERROR, r"/spec\.yaml:\d+: collections\.both\.qrels\.overlay: an overlay is built from two judgment sets or more, found 1"),
    Case("overlay_cycle", judgment_sets("c", a={"overlay": ["llm", "b"]}, b={"overlay": ["a", "c"]}), SPEC_ERROR, r"/spec\.yaml:\d+: collections\.a\.qrels\.overlay: the overlays form a cycle \(a -> b -> a\): a judgment set cannot be built from itself"),
    Case("overlay_with_format", judgment_sets("c", spec(lambda s: s["collections"]["both"].update(format="trec")), both={"overlay": ["c", "llm"]}), SPEC_ERROR, r"^Error: \S+/spec\.yaml:\d+: collections\.both: format says how a qrels file is read; an overlay reads no file", ),
    Case("expect_of_a_run_under_two_sets", judgment_sets(("c", "llm"), checks(expect=EXPECT())), SPEC_ERROR, r"/spec\.yaml:\d+: expect\.0: run 'r' is evaluated under 'c' and 'llm', with a value under each: name the collection the expected value is under \(collection: c\)"),
    Case("expect_under_another_set", judgment_sets("c", checks(expect=EXPECT(collection="llm")), spec(on_llm)), SPEC_ERROR, r"/spec\.yaml:\d+: expect\.0\.collection: run 'r' is not evaluated under collection 'llm'; its collections: c"),
    Case("gate_under_another_set", judgment_sets("c", checks(gates=GATE(collection="lmm")), spec(on_llm)), SPEC_ERROR, r"/spec\.yaml:\d+: gates\.0\.collection: no run is evaluated under collection 'lmm'; did you mean 'llm'\? the runs' collections: c, llm"),
    Case("fused_runs_of_different_sets", judgment_sets(("c", "llm"), spec(lambda s: s["runs"].update(c_only={"path": "run.txt", "collection": "c"}, f={"fuse": ["r", "c_only"]}))), SPEC_ERROR, r"/spec\.yaml:\d+: runs\.f\.fuse: its runs are of different collections \(r: c, llm; c_only: c\); fuse runs of one collection, or name those it is evaluated under \(they share c\)"),
    # pools: each bad key named, before any data is read; an exclusion list of another collection
    Case("pool_depth_zero", pools(method={"depth": 0}), SPEC_ERROR, r"/spec\.yaml:\d+: pools\.round1\.method: depth: the depth must be at least 1, not 0"),
    Case("pool_two_methods", pools(method={"depth": 10, "rrf": 100}), SPEC_ERROR, r"pools\.round1\.method: give one method and its size, e\.g\. \{depth: 100\}; methods: depth, rrf, combsum, uniform"),
    Case("pool_runs_of_two_collections", pools(another_collection, runs=["r", "r2"]), SPEC_ERROR, r"pools\.round1\.runs\.1: run 'r2' is of collection 'c2', and the pool of 'c'; a pool holds the runs of one collection"),
    Case("pool_unknown_run", pools(runs=["q"]), SPEC_ERROR, r"pools\.round1\.runs\.0: unknown run 'q'; .*defined: r"),
    Case("pool_seed_not_integer", pools(seed="seven"), SPEC_ERROR, r"pools\.round1\.seed: Input should be a valid integer"),
    Case("pool_seed_fraction", pools(seed=7.5), SPEC_ERROR, r"pools\.round1\.seed: Input should be a valid integer"),
    Case("pool_groups_match_nothing", pools(groups="^team-"), SPEC_ERROR, r"pools\.round1\.groups: the pattern '\^team-' matches none of the pool's runs \(r\); every run would be a group of its own: fix the pattern or remove `groups`"),
    Case("pool_groups_not_a_pattern", pools(groups="(team"), SPEC_ERROR, r"pools\.round1\.groups: not a regular expression: missing \)"),
    Case("pool_exclude_of_another_collection", pools(write("judged.txt", "99 0 zz 1\n"), exclude="judged.txt"), DATA_ERROR, r"pools\.round1\.exclude: \S+/judged\.txt shares no query with the runs of pool 'round1': qrels of another collection\? give the judgments of collection 'c'"),
    Case("pool_exclude_missing", pools(exclude="judged.txt"), SPEC_ERROR, r"pools\.round1\.exclude: \S+/judged\.txt does not exist"),
    Case("pool_level_without_writer", pools(outputs=[{"path": "out/loo.txt", "level": "leave_one_out"}]), SPEC_ERROR, r"pools\.round1\.outputs\.0\.level: a \.txt output cannot be level 'leave_one_out' \(\.txt writes: pool\)"),
    Case("pool_output_is_an_input", pools(outputs=[{"path": "run.txt"}]), SPEC_ERROR, r"pools\.round1\.outputs\.0\.path: \S+/run\.txt is an input of this spec \(runs\.r\.path\); writing it would replace the data"),
    Case("pool_output_is_a_spec_output", pools(outputs=[{"path": "out/summary.csv", "level": "pool_stats"}]), SPEC_ERROR, r"pools\.round1\.outputs\.0\.path: \S+/summary\.csv is also outputs\.0; name each output once"),
    Case("pool_command_without_pools", lambda d: None, SPEC_ERROR, r"/spec\.yaml: no pools to build; add a `pools:` section", command=("pool",)),
    Case("pool_leave_one_out_of_text_metrics", pools(spec(lambda s: s.update(metrics=["relstring"])), outputs=[{"path": "out/loo.csv", "level": "leave_one_out"}]), SPEC_ERROR, r"pools\.round1\.outputs\.0\.level: leave_one_out compares metrics with a number per query, and the spec has none"),
    Case("run_of_a_collection_without_qrels", spec(lambda s: s["collections"]["c"].pop("qrels")), SPEC_ERROR, r"collections\.c: no qrels, but runs are evaluated against it \(r\); add qrels: PATH once judged \(before judging, `irpipe pool SPEC` builds its pools\)"),
    # the committed JSON Schema and the spec's models drift apart
    Case("schema_drift", lambda d: (shutil.copy(SCHEMA, d / "irpipe.schema.json"), edit("irpipe.schema.json", '"rank"', '"score"')(d)), SPEC_ERROR, r"/irpipe\.schema\.json:\d+: the schema differs from the spec's models of this irpipe; regenerate it: irpipe schema > .*irpipe\.schema\.json", command=("schema", "--check"), target="irpipe.schema.json"),
    Case("schema_missing", lambda d: None, SPEC_ERROR, r"/irpipe\.schema\.json: cannot read the schema", command=("schema", "--check"), target="irpipe.schema.json"),
]  # fmt: skip


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """A directory with good inputs, a spec, and the outputs of a successful run."""
    d = tmp_path_factory.mktemp("good")
    (d / "qrels.txt").write_text(QRELS)
    (d / "run.txt").write_text(RUN)
    (d / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    result = irpipe("run", "--quiet", str(d / "spec.yaml"))
    assert result.returncode == 0, result.stderr
    return d


@dataclass
class Outcome:
    result: object = None  # what irpipe_inprocess or in_a_process returned
    before: dict[str, bytes] | None = None
    after: dict[str, bytes] | None = None
    error: BaseException | None = None


@pytest.fixture(scope="module")
def outcomes(good, tmp_path_factory, request) -> dict[str, Outcome]:
    """Every selected case: those with an environment of their own in subprocesses, at once (each
    is mostly Python start-up), while the others run in this process, one after the other."""
    selected = {
        item.callspec.params["case"].id
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_bad_input"
    }

    def run(case: Case) -> Outcome:
        try:
            d = tmp_path_factory.mktemp(case.id) / "case"
            shutil.copytree(good, d)
            cleanup = case.change(d)
            before = snapshot(d)  # the whole directory: inputs, spec, outputs, anything else
            env = {key: value.format(d=d) for key, value in case.env}
            try:
                command = [*(part.format(d=d) for part in case.command), str(d / case.target)]
                result = in_a_process(*command, **env) if env else irpipe(*command)
            finally:
                if callable(cleanup):
                    cleanup()
            return Outcome(result, before, snapshot(d))
        except Exception as exc:  # reported by the case's own test
            return Outcome(error=exc)

    cases = [c for c in CASES if c.id in selected]
    with ThreadPoolExecutor(max_workers=8) as pool:
        started = {c.id: pool.submit(run, c) for c in cases if c.env}
        # In this process one at a time: the command changes its cwd, streams and environment.
        here = {c.id: run(c) for c in cases if not c.env}
        return {**here, **{key: future.result() for key, future in started.items()}}


def test_there_are_enough_cases():
    assert len(CASES) >= 40 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(outcomes, case):
    outcome = outcomes[case.id]
    if outcome.error:
        raise outcome.error
    result = outcome.result
    assert result.returncode == case.code, result.stderr
    assert "Traceback" not in result.stderr
    # A broken plugin's warning comes first, one line each; then the one error.
    assert re.sub(r"\A(irpipe: plugin .*\n)*", "", result.stderr).startswith("Error: ")
    assert re.search(case.message, result.stderr), result.stderr
    assert outcome.after == outcome.before  # nothing changed, no temporary file left


def test_few_samples_are_a_warning_not_an_error(good, tmp_path):
    d = tmp_path / "case"
    shutil.copytree(good, d)
    compare({"tests": ["randomization"], "samples": 500})(d)
    result = irpipe("run", "--quiet", str(d / "spec.yaml"))
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(
        r"Warning: \S+/spec\.yaml:\d+: compare\.samples: 500 samples give p-values no finer than "
        r"1/501; use at least 1000 \(100000 is usual\)\n",
        result.stderr,
    )


def test_a_gate_against_previous_without_history_is_a_warning_not_an_error(good, tmp_path):
    d = tmp_path / "case"
    shutil.copytree(good, d)
    checks(gates=GATE(max_drop=0.005))(d)
    result = irpipe("run", "--quiet", "--junit", str(d / "checks.xml"), str(d / "spec.yaml"))
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(
        r"Warning: \S+/spec\.yaml:\d+: gates\.0: no previous evaluation of run 'r' \(AP\) in the "
        r"history \(none is kept: give the spec a history, or run with --history PATH\); the gate "
        r"is skipped\n",
        result.stderr,
    )
    assert '<skipped message="no previous evaluation of run' in (d / "checks.xml").read_text()


def test_debug_shows_the_traceback_and_keeps_the_exit_code(good, tmp_path):
    d = tmp_path / "case"
    shutil.copytree(good, d)
    line("run.txt", 2, "1 Q0 b 2 1,5 sys")(d)
    result = irpipe("--debug", "run", "--quiet", str(d / "spec.yaml"))
    assert result.returncode == DATA_ERROR
    assert "Traceback" in result.stderr and "the score must be a number" in result.stderr
