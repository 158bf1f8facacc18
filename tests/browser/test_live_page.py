"""The live page in a real headless Chromium against a running ``dcsm demo`` (its own tansu
broker, the CPU engine): the demo's queries appear with their patterns, matches are drawn,
the charts fill, a query registered and deleted through the page's form comes and goes, a
gap frame is shown, ``/docs`` renders Swagger UI, and neither page fetches anything from
another host.

A screenshot of the live page is written to ``$DCSM_SCREENSHOT`` when set
(``scripts/live-page.sh`` sets it to ``docs/live-page.png``), else into the test's tmp dir.
Skips with the reason where Chromium (``bash scripts/install-chromium.sh``) or tansu is
missing.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from cdp_browser import Browser, Page, chromium_binary
from helpers import warm_engine_cache

from dcsm.service.broker import free_port, tansu_binary
from dcsm.service.errors import ConfigError

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1440, 900
DEMO_QUERIES = 4


class Demo:
    """``dcsm demo --plain`` in a subprocess; its output collected by a thread."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dcsm.service", "demo", "--backend", "cpu", "--plain", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
        )  # fmt: skip
        self.lines: list[str] = []
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def output(self, tail: int = 40) -> str:
        return "\n".join(self.lines[-tail:])

    def page_url(self, timeout_s: float = 120) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in self.lines:
                if line.startswith("live page: "):
                    return self._listening(line.split()[2], deadline)
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"dcsm demo printed no page URL:\n{self.output()}")

    def _listening(self, url: str, deadline: float) -> str:
        """``url`` once its server answers (the demo prints it just before it listens)."""
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(url + "healthz", timeout=2, trust_env=False).status_code == 200:
                    return url
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"nothing answers at {url}:\n{self.output()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _requirements() -> str:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium not installed: bash scripts/install-chromium.sh")
    try:
        tansu_binary()
    except ConfigError as exc:
        pytest.skip(f"tansu broker unavailable: {exc}")
    return binary


def _foreign(requests: list[str], origin: str) -> list[str]:
    """Requested URLs that are neither this service nor inline data."""
    host = urlsplit(origin).netloc
    inline = ("data:", "about:", "blob:")
    return [u for u in requests if not u.startswith(inline) and urlsplit(u).netloc != host]


def _count(selector: str) -> str:
    return f"document.querySelectorAll({selector!r}).length"


async def _drive(binary: str, url: str, profile: Path, screenshot: Path) -> dict[str, object]:
    async with Browser(binary, profile) as browser:
        page = await browser.new_page(WIDTH, HEIGHT)
        await page.goto(url)
        try:
            return await _exercise(browser, page, url, screenshot)
        except TimeoutError as exc:
            events = await page.evaluate("document.getElementById('events').innerText")
            events += await page.evaluate(
                "JSON.stringify([...dcsmPage.state.queries.values()].map(q => [q.name, "
                "q.ws && q.ws.readyState, q.rowsSeen, q.recent.length, q.dom.ws.textContent, "
                "q.stats]))"
            )
            raise AssertionError(
                f"{exc}\n--- page events ---\n{events}\n--- exceptions: {page.exceptions}, "
                f"console errors: {page.console_errors}, failed loads: {page.failed}"
            ) from exc


async def _exercise(browser: Browser, page: Page, url: str, screenshot: Path) -> dict[str, object]:
    # Engine warm-up, then the demo registers its queries and starts streaming.
    await page.wait_for(f"{_count('.query-card')} >= {DEMO_QUERIES}", timeout_s=180)
    await page.wait_for(f"{_count('.match')} > 0", timeout_s=120)
    # A query registered through the page's own form.
    await page.evaluate(
        """(() => {
            document.getElementById('f-name').value = 'page-path';
            document.getElementById('f-labels').value = '2, 1, 2';
            document.getElementById('f-edges').value = '0-1 1-2';
            document.getElementById('f-mode').value = 'embeddings';
            document.getElementById('f-distinct').checked = true;
            document.getElementById('f-edges').dispatchEvent(new Event('input'));
            document.getElementById('register').requestSubmit();
        })()"""
    )
    await page.wait_for(
        "!!document.querySelector('.query-card[data-name=\"page-path\"] .match')", 60
    )
    # Enough history for the charts: twenty polls of every query.
    await page.wait_for(
        "Math.min(...[...dcsmPage.state.queries.values()].map(q => q.history.t.length)) >= 20",
        timeout_s=90,
    )
    await page.wait_for("dcsmPage.state.history.t.length >= 10", timeout_s=30)
    found = await page.evaluate(
        """(() => {
            const cards = [...document.querySelectorAll('.query-card')];
            return {
                cards: cards.map(c => c.dataset.name),
                matches: document.querySelectorAll('.match').length,
                matchVertices: document.querySelectorAll('.match svg .vertex').length,
                patternVertices: cards.map(c => c.querySelectorAll('svg.pattern .vertex').length),
                chartPaths: document.querySelectorAll('svg.chart path').length,
                plus: cards.map(c => c.querySelector('.plus.big').textContent),
                countRows: document.querySelectorAll('.count-row').length,
                throughput: document.getElementById('t-throughput').textContent,
                conn: document.getElementById('conn').textContent,
            };
        })()"""
    )
    await page.screenshot(screenshot)
    local = {"live": _foreign(page.requests, url), "exceptions": list(page.exceptions)}

    # Delete the form's query with the card's button (two clicks: arm, confirm).
    await page.evaluate(
        """(() => {
            const b = document.querySelector('.query-card[data-name="page-path"] button');
            b.click(); b.click();
        })()"""
    )
    await page.wait_for("!document.querySelector('.query-card[data-name=\"page-path\"]')", 30)
    found["events"] = await page.evaluate("document.getElementById('events').textContent")
    # A gap frame as the service sends it, through the page's own frame handler.
    await page.evaluate(
        "dcsmPage.onFrame('triangle', {type: 'gap', dropped: 7}); dcsmPage.render()"
    )
    found["gap"] = await page.evaluate(
        "document.querySelector('.query-card[data-name=\"triangle\"] .gap-on').textContent"
    )
    found["gapMarks"] = await page.evaluate(_count(".query-card .gap-mark"))

    docs = await browser.new_page(WIDTH, HEIGHT)
    await docs.goto(url + "docs")
    await docs.wait_for(f"{_count('.swagger-ui .opblock')} >= 5", timeout_s=60)
    local["docs"] = _foreign(docs.requests, url)
    local["docs_exceptions"] = list(docs.exceptions)
    found["local"] = local
    found["docs_requests"] = len(docs.requests)
    return found


def _check(found: dict) -> None:
    local = found["local"]
    assert local == {"live": [], "exceptions": [], "docs": [], "docs_exceptions": []}, local
    assert {"triangle", "rgb-triangle", "diamond", "square"} <= set(found["cards"])
    assert found["conn"] == "connected"
    # Every pattern is drawn with its vertices; every drawn match has its pattern's shape.
    assert all(n >= 3 for n in found["patternVertices"]), found["patternVertices"]
    assert found["matches"] > 0 and found["matchVertices"] >= 3 * found["matches"]
    assert found["countRows"] > 0  # the count-mode square
    assert found["chartPaths"] >= 2 + 2 * len(found["cards"])
    assert found["throughput"] not in ("-", "- /s")
    assert "page-path registered" in found["events"] and "page-path deleted" in found["events"]
    assert "7 frame(s) dropped" in found["gap"] and found["gapMarks"] >= 2
    assert found["docs_requests"] >= 3  # the page, Swagger UI's script and style, the schema


def test_live_page_in_chromium(tmp_path: Path) -> None:
    binary = _requirements()
    warm_engine_cache()  # the demo's engine is ready in seconds
    port = free_port()
    demo = Demo(
        tmp_path, "--port", str(port), "--rate", "800", "--duration", "120",
        "--vertices", "20000", "--seed", "7",
    )  # fmt: skip
    screenshot = Path(os.environ.get("DCSM_SCREENSHOT") or tmp_path / "live-page.png")
    try:
        url = demo.page_url()
        assert url == f"http://127.0.0.1:{port}/"
        found = asyncio.run(_drive(binary, url, tmp_path / "chromium-profile", screenshot))
    except Exception as exc:
        raise AssertionError(f"{exc}\n--- dcsm demo output ---\n{demo.output()}") from exc
    finally:
        demo.stop()
    _check(found)
    assert screenshot.stat().st_size > 10_000
    print(f"screenshot: {screenshot}")
