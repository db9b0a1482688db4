"""The driver program for spark-submit: `irpipe run --engine spark` with its arguments.

    spark-submit --master yarn --conf spark.executor.memory=8g \\
        "$(python -c 'import pipeline.cli.spark_submit as m; print(m.__file__)')" spec.yaml

spark-submit starts the JVM with its master and configuration, and the session irpipe then gets
is that one (the spec's `spark:` section is ignored under spark-submit). The arguments are those
of `irpipe run` (`--quiet`, `--history PATH`, `--junit PATH`), and so is the exit code.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    """`irpipe run --engine spark ARGS`; its exit code (`exiting`: as in `pipeline.cli.main`)."""
    from pipeline.cli import main as irpipe

    args = list(sys.argv[1:] if argv is None else argv)
    debug = ["--debug"] if "--debug" in args else []
    rest = [a for a in args if a != "--debug"]
    return irpipe([*debug, "run", "--engine", "spark", *rest], exiting=exiting)


if __name__ == "__main__":
    sys.exit(main(exiting=True))
