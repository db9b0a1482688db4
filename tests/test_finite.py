"""NaN and infinity (YAML's `.nan` and `.inf`, `1e999` in a metric string) in a metric's
parameters and in the expected values, tolerances, drops and bounds of the checks: exit 2
naming the file, the line and the key (or, in a metric string, the metric and the parameter)."""

from __future__ import annotations

import math
import textwrap

import pytest
from pydantic import ValidationError

from pipeline import SpecError, cli
from pipeline.errors import ExitCode
from pipeline.measures.registry import get_registry

HEAD = """\
collections:
  c: {qrels: qrels.txt}
runs:
  r: {path: run.txt, collection: c}
"""


def refused(tmp_path, capsys, body: str) -> str:
    """The error `irpipe validate --no-data` gives the spec HEAD + body (exit 2), its first line."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(HEAD + textwrap.dedent(body), encoding="utf-8")
    code = cli.main(["validate", "--no-data", str(spec)])
    err = capsys.readouterr().err
    assert code == ExitCode.SPEC, err
    assert err.startswith(f"Error: {spec}:") and "Traceback" not in err
    return err.removeprefix(f"Error: {spec}")


METRICS = [
    # (the metrics section, the message after the spec's path)
    (
        "metrics:\n  - AP\n  - {metric: SetF, beta: .inf}\n",
        ":7: metrics.1.beta: 'SetF': parameter 'beta' is inf; parameters must be finite numbers",
    ),
    (
        "metrics:\n  - AP\n  - metric: Utility\n    a: .nan\n",
        ":8: metrics.1.a: 'Utility': parameter 'a' is nan",
    ),
    (
        "metrics:\n  - metric: nDCG@10\n    gain: {0: 0, 1: -.inf}\n",
        ":7: metrics.0.gain: 'nDCG@10': parameter 'gain.1' is -inf",
    ),
    (
        "metrics:\n  - AP\n  - SetF(beta=1e999)\n",
        ":7: metrics.1: 'SetF(beta=1e999)': parameter 'beta' is inf; parameters must be finite",
    ),
    (
        "metrics:\n  - 'nDCG(gain={1e999: 1})@10'\n",
        ":6: metrics.0: 'nDCG(gain={1e999: 1})@10': a key of parameter 'gain' is inf",
    ),
    ("metrics:\n  - set_F.1e999\n", ":6: metrics.0: 'set_F.1e999': parameter 'beta2' is inf"),
]


@pytest.mark.parametrize(("body", "message"), METRICS)
def test_a_non_finite_parameter_is_exit_2_naming_its_key(tmp_path, capsys, body, message):
    assert refused(tmp_path, capsys, body).startswith(message)


CHECKS = [
    (
        "expect:\n  - {run: r, metric: AP, value: .nan}\n",
        ":7: expect.0.value: nan is not a finite number; give a number (not .nan or .inf)",
    ),
    (
        "expect:\n  - run: r\n    metric: AP\n    value: 0.3\n    tolerance: .inf\n",
        ":10: expect.0.tolerance: inf is not a finite number",
    ),
    (
        "gates:\n  - {metric: AP, against: {run: r}, max_drop: .inf}\n",
        ":7: gates.0.max_drop: inf is not a finite number",
    ),
    (
        "gates:\n  - {statistic: cohen_kappa, reference: a, other: b, min: -.inf}\n",
        ":7: gates.0.min: -inf is not a finite number",
    ),
]


@pytest.mark.parametrize(("body", "message"), CHECKS)
def test_a_non_finite_expected_value_is_exit_2_naming_its_key(tmp_path, capsys, body, message):
    assert refused(tmp_path, capsys, "metrics: [AP]\n" + body).startswith(message)


def test_the_parameter_models_refuse_them_too():
    """What a plugin or the Python door validates without the registry's check."""
    setf = get_registry().measure_named("SetF")
    with pytest.raises(ValidationError, match="finite number"):
        setf.Params.model_validate({"beta": math.nan})
    ndcg = get_registry().measure_named("nDCG")
    with pytest.raises(ValidationError, match="finite number"):
        ndcg.Params.model_validate({"gain": {1: math.inf}})


@pytest.mark.parametrize(
    ("text", "params", "message"),
    [
        ("P", {"k": [5, math.inf]}, r"^'P': parameter 'k' is inf"),
        ("RBP", {"p": math.nan}, r"^'RBP': parameter 'p' is nan"),
        ("INST", {"gains": {1: 0.5, 2: math.nan}}, r"^'INST': parameter 'gains\.2' is nan"),
    ],
)
def test_the_registry_names_the_metric_and_parameter(text, params, message):
    with pytest.raises(SpecError, match=message):
        get_registry().resolve(text, params)
