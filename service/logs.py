"""Logging for every dcsm process: one text format or one JSON object per line (``--log-format``)
for the root logger and uvicorn's, and Kafka connection trouble logged per state change
instead of per retry.

A lost broker makes aiokafka log each failed connect, metadata refresh and fetch, several times
a second and for as long as the broker is gone. :class:`KafkaErrorFilter` (on the root handler)
lets one line per distinct message through per interval and counts every such record by kind;
:class:`ConnectionState` logs "kafka unreachable" once, and "reachable again after N s, M
failures" when it comes back. The counts are process-wide (aiokafka's loggers are), exported by
every :class:`~dcsm.service.metrics.Metrics` as ``dcsm_kafka_errors_total{kind}``.
"""

from __future__ import annotations

import asyncio
import faulthandler
import json
import logging
import sys
import threading
import time
from typing import Any

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: Loggers whose WARNING and ERROR records :class:`KafkaErrorFilter` rate-limits.
KAFKA_LOGGERS = ("aiokafka", "dcsm.service.ingest", "dcsm.service.outputs", "dcsm.client")
#: Kinds of ``dcsm_kafka_errors_total``: the first word found in the message, else "other".
_KINDS = ("connect", "metadata", "fetch", "produce", "commit", "coordinator", "delivery", "poll")

_counts: dict[str, int] = {}
_counts_lock = threading.Lock()


def count_kafka_error(kind: str) -> None:
    with _counts_lock:
        _counts[kind] = _counts.get(kind, 0) + 1


def kafka_error_counts() -> dict[str, int]:
    """Kafka errors of this process so far, by kind."""
    with _counts_lock:
        return dict(_counts)


def error_kind(message: str) -> str:
    low = message.lower()
    return next((k for k in _KINDS if k in low), "other")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (ISO 8601, UTC), level, logger, message, and exc_info
    (the formatted traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            out["exc_info"] = self.formatException(record.exc_info)
        elif record.exc_text:
            out["exc_info"] = record.exc_text
        if record.stack_info:
            out["stack_info"] = record.stack_info
        return json.dumps(out, ensure_ascii=False)


class KafkaErrorFilter(logging.Filter):
    """Lets through one WARNING/ERROR record per (logger, message template) per ``interval_s``
    from the Kafka loggers, counting all of them (:func:`kafka_error_counts`); a line let
    through after some were held back says how many. Other records pass untouched."""

    def __init__(self, interval_s: float = 30.0) -> None:
        super().__init__()
        self.interval_s = interval_s
        self._last: dict[tuple[str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not record.name.startswith(KAFKA_LOGGERS):
            return True
        template = str(record.msg)
        count_kafka_error(error_kind(template))
        key = (record.name, template)
        now = time.monotonic()
        with self._lock:
            last, held = self._last.get(key, (float("-inf"), 0))
            if now - last < self.interval_s:
                self._last[key] = (last, held + 1)
                return False
            self._last[key] = (now, 0)
        if held:
            record.msg = f"{template} ({held} like it in the last {now - last:.0f} s not shown)"
        # The traceback of a retry is the same every time: only the message is kept.
        record.exc_info = None
        record.exc_text = None
        return True


class ConnectionState:
    """Logs a connection's state changes once each: ``failed()`` on every failed attempt,
    ``ok()`` on every good one. Each failure counts under ``kind``."""

    def __init__(self, what: str, logger: logging.Logger) -> None:
        self.what = what
        self.log = logger
        self.up = True
        self.failures = 0
        self.since = 0.0

    def failed(self, exc: BaseException | str, kind: str = "connect") -> None:
        count_kafka_error(kind)
        self.failures += 1
        if self.up:
            self.up = False
            self.since = time.monotonic()
            why = str(exc) or type(exc).__name__
            self.log.warning(
                "%s unreachable: %s; retrying (logged again on recovery)", self.what, why
            )

    def ok(self) -> None:
        if not self.up:
            self.log.warning(
                "%s reachable again after %.0f s, %d failures",
                self.what, time.monotonic() - self.since, self.failures,
            )  # fmt: skip
        self.up = True
        self.failures = 0


def formatter(log_format: str) -> logging.Formatter:
    if log_format == "json":
        return JsonFormatter()
    if log_format == "text":
        return logging.Formatter(TEXT_FORMAT)
    raise ValueError(f"log format must be 'text' or 'json', got {log_format!r}")


def configure_logging(level: str, log_format: str = "text", interval_s: float = 30.0) -> None:
    """The root logger: one stderr handler in ``log_format`` at ``level``, with the Kafka
    error filter. Replaces any handler a previous call (or basicConfig) installed."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(log_format))
    handler.addFilter(KafkaErrorFilter(interval_s))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


def uvicorn_log_config(level: str) -> dict[str, Any]:
    """``uvicorn.Config(log_config=...)``: uvicorn's loggers propagate to the root handler
    (so they share its format) instead of installing their own."""
    named = {"level": level.upper(), "handlers": [], "propagate": True}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "loggers": {name: dict(named) for name in ("uvicorn", "uvicorn.error", "uvicorn.access")},
    }


def quiet_kafka() -> None:
    """Once stopping has begun: aiokafka's complaints about a broker going away with us are
    noise, so only its CRITICAL records remain."""
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)


def dump_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """The stack of every thread and of every task of ``loop``, on stderr (any thread): what
    a stop that hangs is waiting for."""
    faulthandler.dump_traceback(all_threads=True)
    try:
        tasks = list(asyncio.all_tasks(loop))
    except RuntimeError:  # the set changed while copied: one more try
        tasks = list(asyncio.all_tasks(loop))
    for task in tasks:
        task.print_stack(limit=8, file=sys.stderr)
    sys.stderr.flush()
