"""The plugin's tests evaluate through an irpipe where this package is installed (its entry point).

Only this plugin loads: another installed plugin could define a clashing name (irpipe-judged's
`Judged`) or change nothing, and neither belongs in these results.
"""

from __future__ import annotations

import os

os.environ["IRPIPE_LOAD_PLUGINS"] = "usermodels"
