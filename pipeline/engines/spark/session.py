"""The SparkSession an evaluation runs on, and what is said when pyspark is not there."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pipeline.errors import SpecError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pipeline.spec.models import SparkSection

__all__ = ["INSTALL", "quiet", "require_pyspark", "session", "spark_version"]

INSTALL = "pip install 'irpipe[spark]'"


def require_pyspark(where: str = "settings.engine") -> None:
    """pyspark, pyarrow and pandas are importable, or a SpecError naming `where` and what to
    install. pyspark's Arrow maps need pandas although irpipe hands them none."""
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise SpecError(
            f"{where}: engine spark needs pyspark, pyarrow and pandas ({exc.name} is not "
            f"installed); "
            f"{INSTALL}"
        ) from None


@contextmanager
def quiet() -> Iterator[None]:
    """pyspark warns of pandas 3 as it starts and whenever it maps Arrow batches: irpipe hands it
    no pandas at all, so the warning is about nothing irpipe does."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
        yield


def session(section: SparkSection | None, threads: int | None = None) -> SparkSession:
    """The active session (a notebook's, a test's) as it is; under spark-submit, the session its
    command line configures; else one built from the spec's `spark:` section (without a master
    there, a local one with `threads` cores: the `threads` setting; all of them where None)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(section.app_name if section else "irpipe")
    if not _submitted():  # spark-submit's --master and --conf win over the spec's
        builder = _configured(builder, section, threads)
    try:
        with quiet():
            spark = builder.getOrCreate()
    except Exception as exc:  # Java missing, a bad master URL: Spark's own words, in one line
        raise SpecError(f"spark: cannot start a Spark session: {_first_line(exc)}") from None
    spark.sparkContext.setLogLevel("ERROR")  # irpipe reports what goes wrong itself
    return spark


def _submitted() -> bool:
    """Whether spark-submit started this Python (it hands the JVM gateway's port over)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _configured(builder, section: SparkSection | None, threads: int | None = None):
    master = section.master if section else None
    if master is None and threads is not None:
        master = f"local[{int(threads)}]"
    conf = {"spark.ui.showConsoleProgress": "false", **(section.conf if section else {})}
    if master is not None:
        builder = builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, str(value).lower() if isinstance(value, bool) else str(value))
    if (master is None or master.startswith("local")) and "PYSPARK_PYTHON" not in os.environ:
        # Local workers are this Python, with irpipe and DuckDB (pyspark would start `python3`).
        os.environ["PYSPARK_PYTHON"] = sys.executable
    return builder


def spark_version() -> str | None:
    """pyspark's version, as manifests and the history record it (None without pyspark)."""
    try:
        import pyspark
    except ImportError:
        return None
    return pyspark.__version__


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
