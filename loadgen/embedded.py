"""``dcsm serve`` as a subprocess on a free loopback port: what ``dcsm loadgen --embedded``
measures, and what the service and broker tests drive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dcsm.service.broker import free_port


class ServiceProcess:
    """``python -m dcsm.service serve`` on a free loopback port.

    ``args`` are extra CLI flags; ``backend`` is the engine (``cpu`` by default, so tests
    behave alike with and without a GPU). The state dir defaults to a fresh temp dir (pass
    ``state_dir`` to share one across restarts, and ``port`` to restart on the same port).
    The log is kept in ``log_path``.
    """

    def __init__(
        self,
        *args: str,
        kafka: str | None = None,
        backend: str = "cpu",
        state_dir: str | Path | None = None,
        env: dict[str, str] | None = None,
        workdir: str | Path | None = None,
        port: int | None = None,
        own_session: bool = False,
    ) -> None:
        self.port = port or free_port()
        self._dir = Path(workdir or tempfile.mkdtemp(prefix="dcsm-svc-"))
        self.state_dir = Path(state_dir) if state_dir else self._dir / "state"
        self.log_path = self._dir / f"serve-{self.port}.log"
        cmd = [sys.executable, "-m", "dcsm.service", "serve", "--port", str(self.port)]
        cmd += ["--state-dir", str(self.state_dir), "--backend", backend]
        if kafka:
            cmd += ["--kafka", kafka]
        self.cmd = cmd + list(args)
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        # own_session: a terminal's Ctrl-C reaches only the owner, which then stops it.
        self.own_session = own_session

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def ws_url(self, name: str, kind: str = "matches", **params: Any) -> str:
        q = "&".join(f"{k}={v}" for k, v in params.items())
        return f"ws://127.0.0.1:{self.port}/api/v1/queries/{name}/{kind}" + (f"?{q}" if q else "")

    def start(self, timeout_s: float = 120.0) -> ServiceProcess:
        import httpx

        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            self.cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=self.env, start_new_session=self.own_session,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dcsm serve exited with {self.proc.returncode}: {self.log()}")
            try:
                r = httpx.get(self.base_url + "/readyz", timeout=1, trust_env=False)
                if r.status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise TimeoutError(f"dcsm serve not ready in {timeout_s:.0f}s: {self.log()}")

    def log(self, tail: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def terminate(self, timeout_s: float = 180.0) -> int:
        """SIGTERM (graceful drain + final checkpoint) and wait; the exit code. A service
        still running after ``timeout_s`` is killed, and a TimeoutError carries its log's end
        (the service itself gives up, with every task's stack in the log, well before)."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TimeoutError(
                f"dcsm serve not stopped {timeout_s:.0f}s after SIGTERM: {self.log(12_000)}"
            ) from None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> ServiceProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.terminate()
