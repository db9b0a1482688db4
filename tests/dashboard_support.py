"""What the dashboard's browser tests share (tests/test_dashboard.py, the site of a nightly
history; tests/test_dashboard_latency.py, of a history with latency): a page opened in headless
Chromium (Debian's, which .ci/run installs) through Playwright, with what it logged and
requested. The browser itself is conftest.py's `browser` fixture."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
# As the probe of this kind of machine started it: no background connections to refuse.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync", "--disable-quic"]  # fmt: skip


class Opened:
    """A page opened in the browser, with what it logged and requested."""

    def __init__(self, browser, path: Path, width: int = 1280) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"pageerror {error}"))
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready=true]", timeout=30_000)

    def _console(self, message) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"{message.type} {message.text}")

    def draw_all(self) -> None:
        """Scroll to each chart the filters leave, and wait until it is drawn (a chart is
        drawn when it comes near the screen)."""
        self.page.wait_for_selector("body[data-ready=true]")
        for chart in self.page.locator(".chart:not(.filtered-out)").all():
            chart.scroll_into_view_if_needed()
            chart.locator("svg, canvas").first.wait_for(timeout=30_000)
        self.page.wait_for_function(
            "Array.from(document.querySelectorAll('.chart:not(.filtered-out)'))"
            ".every(c => c.dataset.drawn === 'true')"
        )

    def cells(self, selector: str) -> list[list[str]]:
        return self.page.eval_on_selector_all(
            f"{selector} tbody tr:not(.filtered-out)",
            "rows => rows.map(r => Array.from(r.children).map(c => c.textContent))",
        )

    def close(self) -> None:
        self.page.close()
