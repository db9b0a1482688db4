"""trec_eval's measures as irpipe metrics: names, `-m` parameter syntax, nicknames and print order.

Each trec_eval measure maps to registry metrics; this module only translates names and parameters
(following trec_eval 10.0's meas_init.c) and never computes anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import SpecError

__all__ = [
    "NICKNAMES",
    "ORDER",
    "MeasureInitError",
    "Selected",
    "TrecMeasure",
    "default_cutoffs",
    "select",
    "translate",
    "trec_names",
]


class MeasureInitError(SpecError):
    """Bad parameters of a known measure (trec_eval: "Cannot initialize measure", exit 2)."""

    trec_eval_exit = 2


class MeasureCalcError(SpecError):
    """Parameters trec_eval accepts but cannot compute with (exit 4)."""

    trec_eval_exit = 4


CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALLS = tuple(i / 10 for i in range(11))

Build = Callable[[Any], tuple[str, dict]]


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: how its parameters parse, its defaults, and the metric per value."""

    name: str
    kind: str  # plain, long_cut, double_cut, double_list, pairs
    build: Build
    default: tuple = ()
    integer: bool = False  # printed with %ld
    summary: bool = True  # has an `all` row
    per_query: bool = True  # has per-topic rows


def _plain(metric: str, **params: Any) -> Build:
    return lambda _: (metric, dict(params))


def _cut(metric: str, key: str = "k") -> Build:
    return lambda value: (metric, {key: value})


def _gains(metric: str, keys: tuple[str, ...] = ("gain",)) -> Build:
    def build(pairs: list[tuple[str, float]]) -> tuple[str, dict]:
        gains = {int(k): v for k, v in pairs if re.fullmatch(r"[+-]?\d+", k)}
        params: dict[str, Any] = {"gain": gains} if gains and "gain" in keys else {}
        for k, v in pairs:
            if k == "p" and "p" in keys:
                params["p"] = v
        return metric, params

    return build


def _utility(values: list[float]) -> tuple[str, dict]:
    if len(values) != 4:
        raise MeasureCalcError("utility needs exactly 4 coefficients (a,b,c,d)")
    return "Utility", dict(zip("abcd", values, strict=True))


def _beta_squared(value: float) -> dict:
    """trec_eval's set_F parameter is β², used as written: `beta2`, not `beta` = its square root
    (squared again, sqrt(2) gives 2.0000000000000004). 1 is SetF's default (1·1 is exactly 1)."""
    return {} if value == 1.0 else {"beta2": value}


def _eleven_point(levels: list[float]) -> dict:
    params: dict[str, Any] = {"variant": "interpolated_11pt"}
    if tuple(levels) != RECALLS:
        params["recall_levels"] = list(levels)
    return params


MEASURES = [
    TrecMeasure("runid", "plain", _plain("runid"), per_query=False),
    TrecMeasure("num_q", "plain", _plain("NumQ"), integer=True, per_query=False),
    TrecMeasure("num_ret", "plain", _plain("NumRet"), integer=True),
    TrecMeasure("num_rel", "plain", _plain("NumRel"), integer=True),
    TrecMeasure("num_rel_ret", "plain", _plain("NumRelRet"), integer=True),
    TrecMeasure("map", "plain", _plain("AP")),
    TrecMeasure("gm_map", "plain", _plain("gmAP"), per_query=False),
    TrecMeasure("Rprec", "plain", _plain("Rprec")),
    TrecMeasure("bpref", "plain", _plain("Bpref")),
    TrecMeasure("recip_rank", "plain", _plain("RR")),
    TrecMeasure("iprec_at_recall", "double_cut", _cut("IPrec", "recall"), RECALLS),
    TrecMeasure("P", "long_cut", _cut("P"), CUTOFFS),
    TrecMeasure(
        "relstring",
        "double_list",
        lambda v: ("RelString", {"k": int(v[0])}),
        (10.0,),
        summary=False,
    ),
    TrecMeasure("recall", "long_cut", _cut("R"), CUTOFFS),
    TrecMeasure("infAP", "plain", _plain("infAP")),
    TrecMeasure("gm_bpref", "plain", _plain("gmBpref"), per_query=False),
    TrecMeasure(
        "Rprec_mult", "double_cut", _cut("Rprec", "mult"), tuple(i / 5 for i in range(1, 11))
    ),
    TrecMeasure("utility", "double_list", _utility, (1.0, -1.0, 0.0, 0.0)),
    TrecMeasure("11pt_avg", "double_list", lambda v: ("AP", _eleven_point(v)), RECALLS),
    TrecMeasure("binG", "plain", _plain("BinG")),
    TrecMeasure("G", "pairs", _gains("G")),
    TrecMeasure("dcg", "pairs", _gains("DCG")),
    TrecMeasure("ideal_dcg", "pairs", _gains("IDCG")),
    TrecMeasure("ndcg", "pairs", _gains("nDCG")),
    TrecMeasure("ndcg_rel", "pairs", _gains("nDCGRel")),
    TrecMeasure("Rndcg", "pairs", _gains("RnDCG")),
    TrecMeasure("ndcg_cut", "long_cut", _cut("nDCG"), CUTOFFS),
    TrecMeasure("map_cut", "long_cut", _cut("AP"), CUTOFFS),
    TrecMeasure("relative_P", "long_cut", _cut("RelativeP"), CUTOFFS),
    TrecMeasure("success", "long_cut", _cut("Success"), (1, 5, 10)),
    TrecMeasure("set_P", "plain", _plain("SetP")),
    TrecMeasure("set_relative_P", "plain", _plain("SetRelativeP")),
    TrecMeasure("set_recall", "plain", _plain("SetR")),
    TrecMeasure("set_map", "plain", _plain("SetAP")),
    TrecMeasure("set_F", "double_list", lambda v: ("SetF", _beta_squared(v[0])), (1.0,)),
    TrecMeasure("num_nonrel_judged_ret", "plain", _plain("NumNonRelJudgedRet"), integer=True),
    TrecMeasure("yaap", "plain", _plain("YAAP")),
    TrecMeasure("rbp", "pairs", _gains("RBP", ("gain", "p"))),
    TrecMeasure("rbp_resid", "pairs", _gains("RBPResid", ("p",))),
    TrecMeasure("unj", "long_cut", _cut("Unjudged"), (5, 10, 20)),
]
BY_NAME = {m.name: m for m in MEASURES}
ORDER = [m.name for m in MEASURES]  # trec_eval prints in this fixed order, not command order

OFFICIAL = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
)
NICKNAMES = {
    "official": OFFICIAL.split(),
    "all_trec": (
        f"{OFFICIAL} relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg "
        "relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall "
        "set_relative_P set_map set_F num_nonrel_judged_ret"
    ).split(),
    "set": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
}


@dataclass(frozen=True)
class Selected:
    """A selected measure with its output names and the metric (name, params) behind each."""

    measure: TrecMeasure
    outputs: list[tuple[str, str, dict]] = field(default_factory=list)


def select(arguments: list[str]) -> list[Selected]:
    """The measures that `-m` arguments select, in trec_eval's print order."""
    params: dict[str, str | None] = {}
    for argument in arguments or ["official"]:
        name, dot, text = argument.partition(".")
        if dot and not text:
            raise SpecError(f"empty parameter list in '-m {argument}' (illegal measure '{name}')")
        for member in NICKNAMES.get(name, [name]):
            if member not in BY_NAME:
                raise SpecError(f"illegal measure '{name}'")
            if params.get(member) is None:  # the first parameters given win
                params[member] = text if dot and member == name else None
    return [_expand(BY_NAME[n], params[n]) for n in ORDER if n in params]


def translate(text: str) -> list[tuple[str, str, dict]] | None:
    """The metrics a trec_eval name stands for in a spec, or None if it is not one.

    Both spellings work: `-m` syntax (`P.5,10`, `set_F.0.25`, `ndcg.1=3,2=9`) and printed names
    (`P_10`, `iprec_at_recall_0.10`, `set_F_0.25`, `utility_2,-1,0,0`); a bare name gives
    trec_eval's defaults (`map_cut` is map_cut_5 ... map_cut_1000).
    """
    name, dot, params = text.partition(".")
    if name not in BY_NAME:
        name, params = _split_printed(text)
        if name is None:
            return None
    if name == "runid" or (dot and not params):
        return None
    return _expand(BY_NAME[name], params or None).outputs


def default_cutoffs() -> dict[str, tuple[str, tuple]]:
    """irpipe metric -> (its cutoff parameter, trec_eval's default values), for every trec_eval
    measure printed once per cutoff: P -> ("k", (5, ..., 1000)), IPrec -> ("recall", (0.0, ...)).

    The first trec_eval measure behind a metric wins (AP gets map_cut's, not 11pt_avg's).
    """
    found: dict[str, tuple[str, tuple]] = {}
    for measure in MEASURES:
        if measure.kind in ("long_cut", "double_cut"):
            metric, params = measure.build(measure.default[0])
            found.setdefault(metric, (next(iter(params)), measure.default))
    return found


def trec_names() -> dict[str, list[str]]:
    """irpipe metric name -> the trec_eval names that translate to it (for `irpipe metrics`)."""
    names: dict[str, list[str]] = {}
    for measure in MEASURES[1:]:  # runid is not a metric
        metric = _expand(measure, None).outputs[0][1]
        names.setdefault(metric, []).append(measure.name)
    return names


def _split_printed(text: str) -> tuple[str | None, str]:
    """`P_10` -> ("P", "10"): the longest trec_eval name followed by '_' and parameters."""
    for end in range(len(text) - 1, 0, -1):
        if text[end] == "_" and text[:end] in BY_NAME and BY_NAME[text[:end]].kind != "plain":
            return text[:end], text[end + 1 :]
    return None, ""


def _expand(measure: TrecMeasure, text: str | None) -> Selected:
    values = _parse(measure, text) if text is not None else list(measure.default)
    if measure.kind in ("long_cut", "double_cut"):
        outputs = [(_cut_name(measure, v), *measure.build(v)) for v in values]
    else:
        name = measure.name if text is None else f"{measure.name}_{text}"
        outputs = [(name, *measure.build(values))]
    return Selected(measure, outputs)


def _cut_name(measure: TrecMeasure, value: float) -> str:
    return (
        f"{measure.name}_{value}" if measure.kind == "long_cut" else f"{measure.name}_{value:3.2f}"
    )


def _parse(measure: TrecMeasure, text: str) -> list:
    items = text.split(",")
    if measure.kind == "long_cut":
        return _checked_cutoffs(sorted(atol(i) for i in items), positive=True)
    if measure.kind == "double_cut":
        return _checked_cutoffs(sorted(atof(i) for i in items), positive=False)
    if measure.kind == "pairs":
        if not all("=" in i for i in items):
            raise MeasureInitError(f"malformed pair parameters in '{text}' (write key=value)")
        return [(k, atof(v)) for k, _, v in (i.partition("=") for i in items)]
    return [atof(i) for i in items]


def _checked_cutoffs(values: list, positive: bool) -> list:
    if positive and values[0] <= 0:
        raise MeasureInitError(f"cutoffs must be positive, got {values[0]}")
    if len(set(values)) != len(values):
        raise MeasureInitError(f"duplicate cutoffs in {values}")
    return values


def atol(text: str) -> int:
    """C atol: leading blanks, a sign, digits; anything else stops the parse (0 if none)."""
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


def atof(text: str) -> float:
    """C atof for decimal numbers: the longest numeric prefix (0.0 if none)."""
    match = re.match(r"\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)", text)
    return float(match.group(1)) if match else 0.0
