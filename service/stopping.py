"""Ctrl-C and SIGTERM for the commands that own child processes (``dcsm demo``, ``dcsm loadgen
--embedded``): the first signal starts a clean stop, which must end within a grace period;
a second signal, or the grace period running out, kills the children and exits at once.

The children (broker, service) run in their own sessions, so a terminal's Ctrl-C reaches only
the parent, which stops them in order: Kafka clients first, the broker last, so nothing logs
about a broker that went away under it.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType

from .logs import quiet_kafka

log = logging.getLogger("dcsm.stop")

#: Seconds a clean stop may take before the children are killed and the process exits.
GRACE_S = 10.0


class StopOnSignal:
    """``install()`` SIGINT/SIGTERM handlers. The first signal quiets aiokafka, arms a
    watchdog of ``grace_s`` and calls ``on_first(sig)`` (which starts the clean stop: cancel
    the main task, raise KeyboardInterrupt, ...); a second signal or the watchdog calls each
    of ``kills`` and exits with 128 + the first signal's number."""

    def __init__(self, on_first: Callable[[int], None], grace_s: float = GRACE_S) -> None:
        self.on_first = on_first
        self.grace_s = grace_s
        self.kills: list[Callable[[], None]] = []
        self.signum: int | None = None
        self._timer: threading.Timer | None = None

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)

    def install(self) -> StopOnSignal:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)
        return self

    def uninstall(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(
                sig, signal.SIG_DFL if sig == signal.SIGTERM else signal.default_int_handler
            )
        if self._timer is not None:
            self._timer.cancel()

    def _handle(self, sig: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            self.force("second signal")
            return
        self.signum = sig
        quiet_kafka()
        self._timer = threading.Timer(
            self.grace_s, self.force, (f"not stopped in {self.grace_s:g} s",)
        )
        self._timer.daemon = True
        self._timer.start()
        self.on_first(sig)

    def force(self, why: str) -> None:
        """Kill the children and exit now (any thread)."""
        log.warning("%s: killing child processes and exiting", why)
        for kill in self.kills:
            try:
                kill()
            except Exception:  # noqa: BLE001 - exiting anyway
                pass
        logging.shutdown()
        os._exit(self.exit_code)
