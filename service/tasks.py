"""Stopping background asyncio tasks for good.

One ``cancel()`` is not always enough. Python 3.11's ``asyncio.wait_for`` returns the inner
result when the task is cancelled in the same loop pass as that result arrives, and the
cancellation is lost: a loop around it (a watchdog pinging the broker every second) runs on.
A drain that cancelled its tasks once and awaited them then waited out its whole timeout and
stopped without its final checkpoint (seen in ``tests/kafka``, once in a few runs).
:func:`cancel_and_wait` cancels again until every task has ended.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

log = logging.getLogger("dcsm.service")

#: Seconds a cancelled task may run on before it is cancelled again.
AGAIN_S = 0.5


async def cancel_and_wait(tasks: Iterable[asyncio.Task], again_s: float = AGAIN_S) -> None:
    """Cancel ``tasks`` and return once every one has ended, cancelling again any that is
    still running after ``again_s``. A task that had ended on an exception has it logged
    here, one line (not raised); the caller's own cancellation propagates as usual."""
    tasks = list(tasks)
    pending = {t for t in tasks if not t.done()}
    for t in pending:
        t.cancel()
    while pending:
        _, pending = await asyncio.wait(pending, timeout=again_s)
        for t in pending:
            log.info("task %s ran on after it was cancelled: cancelling it again", t.get_name())
            t.cancel()
    for t in tasks:
        if not t.cancelled() and (exc := t.exception()) is not None:
            log.warning("task %s had failed: %r", t.get_name(), exc)
