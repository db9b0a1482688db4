"""irpipe-usermodels: ERR@k, Compat(p) and Judged@k, each equal to ir_measures' value.

Built only on irpipe's plugin contract (`pipeline.api`). After `pip install plugins/irpipe-usermodels`,
every spec can name `usermodels.ERR@20` (under the plugin's name: irpipe has a built-in `ERR`),
`Compat(p=0.8)` and `Judged@10`. It installs beside the example
plugin irpipe-judged, whose `Assessed@k` counts only grades >= 0.
"""

from __future__ import annotations

from pipeline.api import Measure, hookimpl

from .compat import Compat
from .err import ERR
from .judged import Judged

__all__ = ["ERR", "Compat", "Judged", "register_metrics"]


@hookimpl
def register_metrics() -> list[type[Measure]]:
    """The plugin's measures."""
    return [ERR, Compat, Judged]
