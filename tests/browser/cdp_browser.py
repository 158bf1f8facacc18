"""A headless Chromium driven over the Chrome DevTools Protocol, with nothing but the
``websockets`` package: enough to load a page, evaluate JavaScript in it, watch what it
fetches and what it throws, and take a screenshot.

Chromium is started with ``--remote-debugging-port=0`` and writes the port it chose and the
browser target's path to ``DevToolsActivePort`` in its profile directory; one websocket to
that target carries every command, page commands through a flattened session.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser")


def chromium_binary() -> str | None:
    """The Chromium executable ($DCSM_CHROMIUM, else Debian's ``chromium``), or None."""
    override = os.environ.get("DCSM_CHROMIUM")
    if override:
        return override if os.access(override, os.X_OK) else None
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


class CdpError(RuntimeError):
    pass


class Browser:
    """``async with Browser(binary, profile_dir) as b: page = await b.new_page(w, h)``."""

    def __init__(self, binary: str, profile_dir: Path) -> None:
        self.binary = binary
        self.profile_dir = profile_dir
        self.proc: subprocess.Popen[bytes] | None = None
        self._ws: Any = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._listeners: list[tuple[str | None, Any]] = []
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Browser:
        from websockets.asyncio.client import connect

        self.profile_dir.mkdir(parents=True, exist_ok=True)
        port_file = self.profile_dir / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)
        self._log = open(self.profile_dir / "chromium.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                self.binary, "--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--mute-audio",
                "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                "--proxy-server=direct://", "--proxy-bypass-list=*",
                "--remote-debugging-port=0", "--remote-allow-origins=*",
                f"--user-data-dir={self.profile_dir}", "about:blank",
            ],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            text = port_file.read_text() if port_file.exists() else ""
            if text.count("\n") >= 1 and text.split("\n")[1].strip():
                break
            if self.proc.poll() is not None:
                raise CdpError(f"chromium exited with {self.proc.returncode}: {self.log()}")
            if time.monotonic() > deadline:
                raise CdpError(f"chromium did not open its debugging port: {self.log()}")
            await asyncio.sleep(0.1)
        port, path = text.split("\n")[:2]
        self._ws = await connect(
            f"ws://127.0.0.1:{port.strip()}{path.strip()}", proxy=None, max_size=None
        )
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._ws is not None:
            try:
                await asyncio.wait_for(self.send("Browser.close"), 5)
            except Exception:
                pass
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
        if self.proc is not None:
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def log(self, tail: int = 3000) -> str:
        path = self.profile_dir / "chromium.log"
        return path.read_text(errors="replace")[-tail:] if path.exists() else ""

    async def _read(self) -> None:
        async for text in self._ws:
            msg = json.loads(text)
            if "id" in msg:
                fut = self._pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                continue
            for session, callback in self._listeners:
                if session is None or session == msg.get("sessionId"):
                    callback(msg["method"], msg.get("params", {}))

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        msg_id = next(self._ids)
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session is not None:
            msg["sessionId"] = session
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        await self._ws.send(json.dumps(msg))
        reply = await asyncio.wait_for(fut, 60)
        if "error" in reply:
            raise CdpError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def new_page(self, width: int, height: int) -> Page:
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        page = Page(self, attached["sessionId"], width, height)
        self._listeners.append((page.session, page.on_event))
        for domain in ("Page", "Runtime", "Network"):
            await page.send(f"{domain}.enable")
        await page.resize(width, height)
        return page


class Page:
    """One tab: records every URL it requests and every uncaught JavaScript exception."""

    def __init__(self, browser: Browser, session: str, width: int, height: int) -> None:
        self.browser = browser
        self.session = session
        self.width = width
        self.height = height
        self.requests: list[str] = []
        self.exceptions: list[str] = []
        self.console_errors: list[str] = []
        self.failed: list[str] = []

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Network.loadingFailed":
            self.failed.append(f"{params.get('errorText')} ({params.get('type')})")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            exc = details.get("exception", {})
            self.exceptions.append(exc.get("description") or details.get("text", "?"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            args = params.get("args", [])
            self.console_errors.append(" ".join(str(a.get("value", a.get("description")))
                                                for a in args))  # fmt: skip

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.browser.send(method, params, self.session)

    async def resize(self, width: int, height: int) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    async def goto(self, url: str) -> None:
        reply = await self.send("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise CdpError(f"navigate {url}: {reply['errorText']}")

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise CdpError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def wait_for(self, expression: str, timeout_s: float, poll_s: float = 0.25) -> Any:
        """Evaluate ``expression`` until its value (by JSON: a DOM node is ``{}``, so use
        ``!!``) is truthy; that value."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression!r} still falsy after {timeout_s} s")
            await asyncio.sleep(poll_s)

    async def screenshot(self, path: Path, full_page: bool = True) -> None:
        """A PNG of the page (its whole height when ``full_page``)."""
        if full_page:
            metrics = await self.send("Page.getLayoutMetrics")
            height = int(metrics["cssContentSize"]["height"])
            await self.resize(self.width, max(self.height, height))
            await asyncio.sleep(0.3)  # a frame at the new size
        shot = await self.send("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(shot["data"]))
        if full_page:
            await self.resize(self.width, self.height)
