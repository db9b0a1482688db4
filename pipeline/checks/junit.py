"""`irpipe run --junit PATH`: the checks as JUnit XML, which every CI system shows as tests.

One testsuite named `irpipe`, one testcase per check (classname `irpipe.expect` or
`irpipe.gates`, name `<key> <run> <metric>`; for a gate on a statistic, `<key>
<reference>~<other> <statistic>`), a `<failure>` for a failed check and a `<skipped>`
for a gate that could not be checked; the message is the check's own. A spec without checks gives
an empty testsuite, so a CI step that always reads the file never finds it missing. The file is
written to a temporary name beside it and renamed, like every output.
"""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from pipeline import interrupts
from pipeline.checks.outcome import CheckResult
from pipeline.errors import OutputError

__all__ = ["check_junit_path", "junit_xml", "write_junit"]


def check_junit_path(path: Path) -> None:
    """Refuse, before anything is evaluated, a report that could not be written."""
    if not path.parent.is_dir():
        raise OutputError(
            f"--junit {path}: the directory {path.parent} does not exist; create it, or name "
            "a file in an existing directory"
        )
    if path.is_dir():
        raise OutputError(f"--junit {path}: is a directory; name a file such as checks.xml")


def junit_xml(results: list[CheckResult], spec: Path) -> bytes:
    """The JUnit XML document of `results` (from the spec at `spec`)."""
    suite = ET.Element("testsuite", {"name": "irpipe", **_counts(results)})
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="spec", value=str(spec))
    for result in results:
        case = ET.SubElement(
            suite, "testcase", classname=f"irpipe.{result.key.split('.')[0]}", name=result.name
        )
        if result.status == "failed":
            failure = ET.SubElement(case, "failure", message=result.message, type=result.kind)
            failure.text = _details(result)
        elif result.status == "skipped":
            ET.SubElement(case, "skipped", message=result.message)
        else:
            ET.SubElement(case, "system-out").text = result.message
    root = ET.Element("testsuites", {"name": "irpipe", **_counts(results)})
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _counts(results: list[CheckResult]) -> dict[str, str]:
    status = [r.status for r in results]
    return {
        "tests": str(len(status)),
        "failures": str(status.count("failed")),
        "errors": "0",
        "skipped": str(status.count("skipped")),
    }


def _details(result: CheckResult) -> str:
    """The failure's numbers, one per line, for a CI page that shows the body."""
    lines = [
        f"run: {result.run}",
        f"collection: {result.collection}",
        f"metric: {result.metric}",
        f"against: {result.against}",
        f"reference: {result.reference!r}",
        f"new: {result.new!r}",
        f"difference: {result.difference!r}",
    ]
    if result.kind == "bound":
        lines += [f"{side}: {bound!r}" for side, bound in (("min", result.low), ("max", result.high))
                  if bound is not None]  # fmt: skip
    else:
        lines.append(f"{'tolerance' if result.kind == 'expect' else 'max_drop'}: {result.limit!r}")
    if result.evaluation_id is not None:
        lines.append(f"previous evaluation: {result.evaluation_id}")
    if result.p_value is not None:
        lines.append(f"adjusted p-value: {result.p_value!r}")
    return "\n".join(lines)


def write_junit(results: list[CheckResult], path: Path, spec: Path) -> None:
    """Write the report to `path` atomically: a temporary file in its directory, then a rename."""
    data = junit_xml(results, spec)
    temp = None
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        with interrupts.held():
            os.replace(temp, path)
            temp = None
    except OSError as exc:
        raise OutputError(f"--junit {path}: cannot write the report ({exc.strerror})") from None
    finally:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
