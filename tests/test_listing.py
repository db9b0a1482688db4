"""`irpipe metrics NAME ...`: one metric looked up by any name a spec takes (canonical, alias,
trec_eval's, the field's lower-case one, a metric string), its row and its definition, as text
or JSON; an unknown name is exit 2 with close names; off a terminal, plain ASCII."""

from __future__ import annotations

import json
import re

import pytest

from pipeline import cli
from pipeline.errors import ExitCode

BOX_DRAWING = re.compile("[\u2500-\u257f]")


def metrics(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["metrics", *args])
    out, err = capsys.readouterr()
    return code, out, err


def rows(out: str) -> list[str]:
    """The metric of each row of the table (the lines before the first blank one, under the
    header and its dashed line)."""
    table = out.split("\n\n")[0].splitlines()
    return [line.split()[0] for line in table[2:]]


@pytest.mark.parametrize(
    ("names", "listed"),
    [
        (["nDCG"], ["nDCG"]),
        (["NDCG", "ndcg_cut_10", "nDCG@10"], ["nDCG"]),  # one metric, however it is named
        (["map", "mrr", "hit_rate"], ["AP", "RR", "Success"]),
        (["P_10", "R-Prec"], ["P", "Rprec"]),
    ],
)
def test_named_metrics_print_only_their_rows_and_definitions(capsys, names, listed):
    code, out, err = metrics(capsys, *names)
    assert (code, err) == (ExitCode.OK, "")
    assert rows(out) == listed
    definitions = re.findall(r"^(\w+): ", out, flags=re.MULTILINE)
    assert definitions == listed


def test_a_definition_gives_each_parameter_with_its_default(capsys):
    _, out, _ = metrics(capsys, "nDCG")
    definition = out.split("\n\n")[1]
    assert definition.startswith("nDCG: normalised DCG")
    assert re.search(r"^  also named: NDCG, ndcg, ndcg_cut", definition, re.MULTILINE)
    assert re.search(r"^    gain='linear' +linear \(the grade\)", definition, re.MULTILINE)
    assert re.search(r"^    k=None +cutoff: only the first k ranks count", definition, re.MULTILINE)
    assert re.search(r"^    judged_only=False +drop unjudged", definition, re.MULTILINE)


def test_json_gives_the_same_definitions(capsys):
    code, out, _ = metrics(capsys, "--json", "SetF", "mrr")
    assert code == ExitCode.OK
    found = json.loads(out)
    assert [m["name"] for m in found] == ["SetF", "RR"]
    beta = next(p for p in found[0]["parameters"] if p["name"] == "beta")
    assert (beta["default"], beta["required"]) == (1.0, False) and beta["description"]
    assert {"MRR", "recip_rank", "mrr"} <= set(found[1]["aliases"])
    assert (found[1]["cutoff"], found[1]["aggregated"], found[1]["better"]) == (
        "k",
        "mean",
        "higher",
    )


def test_json_without_names_lists_every_metric(capsys):
    from pipeline.measures.registry import get_registry

    _, out, _ = metrics(capsys, "--json")
    assert [m["name"] for m in json.loads(out)] == [m.name for m in get_registry().measures]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nDGC", r"^Error: unknown metric 'nDGC'; did you mean 'nDCG'"),
        ("hits", r"^Error: ranx's hits@10 .* write P@10"),
    ],
)
def test_an_unknown_name_is_exit_2_with_a_spelling_that_works(capsys, name, message):
    code, out, err = metrics(capsys, "AP", name)
    assert (code, out) == (ExitCode.SPEC, "")
    assert re.search(message, err) and "Traceback" not in err


@pytest.mark.parametrize("args", [[], ["nDCG", "AP"]])
def test_off_a_terminal_the_listing_is_plain_ascii(capsys, args):
    _, out, _ = metrics(capsys, *args)
    assert not BOX_DRAWING.search(out)
    assert re.match(r"metric +aliases \(and trec_eval names\) +parameters", out)
    assert re.match(r"-+ -+ -+ -+ -+$", out.splitlines()[1])
