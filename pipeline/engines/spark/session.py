"""The SparkSession an evaluation runs on, and what is said when pyspark is not there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import SpecError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ...spec.models import SparkSection

__all__ = ["INSTALL", "require_pyspark", "session", "spark_version"]

INSTALL = "pip install 'irpipe[spark]'"


def require_pyspark(where: str = "settings.engine") -> None:
    """pyspark and pyarrow are importable, or a SpecError naming `where` and what to install."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise SpecError(
            f"{where}: engine spark needs pyspark and pyarrow ({exc.name} is not installed); "
            f"{INSTALL}"
        ) from None


def session(section: SparkSection | None) -> SparkSession:
    """The active session (spark-submit's, or the caller's) as it is; else one built from the
    spec's `spark:` section (master, app name, configuration)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(section.app_name if section else "irpipe")
    if section is not None and section.master:
        builder = builder.master(section.master)
    for key, value in (section.conf if section else {}).items():
        builder = builder.config(key, str(value).lower() if isinstance(value, bool) else str(value))
    try:
        return builder.getOrCreate()
    except Exception as exc:  # Java missing, a bad master URL: Spark's own words, in one line
        raise SpecError(f"spark: cannot start a Spark session: {_first_line(exc)}") from None


def spark_version() -> str | None:
    """pyspark's version, as manifests and the history record it (None without pyspark)."""
    try:
        import pyspark
    except ImportError:
        return None
    return pyspark.__version__


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
