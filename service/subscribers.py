"""Bounded per-subscriber frame queues with explicit gaps.

The fan-out offers every frame to every subscriber without ever waiting; each subscriber's
websocket pump takes frames at whatever pace its client reads. A subscriber holds at most
``max_frames`` data frames: past that, frames are dropped and counted, and the client gets
``{"type": "gap", "dropped": N}`` exactly where they are missing (before the next frame that
fits, or as soon as the queue runs dry). So a slow client never slows the engine or anyone
else, and never loses frames silently.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable

from .frames import Encoding, gap_frame


class Subscriber:
    """``encoding``: the frames this subscriber reads (see :mod:`dcsm.service.frames`)."""

    def __init__(
        self,
        max_frames: int,
        on_drop: Callable[[int], None] | None = None,
        encoding: Encoding = "json",
    ) -> None:
        if max_frames < 1:
            raise ValueError(f"max_frames must be >= 1, got {max_frames}")
        self.max_frames = max_frames
        self.encoding: Encoding = encoding
        self._on_drop = on_drop
        self._queue: deque[tuple[bool, str]] = deque()  # (is data frame, text)
        self._data = 0
        self._dropped = 0
        self._closed = False
        self._wake = asyncio.Event()
        self.sent = 0
        self.dropped_total = 0

    def __len__(self) -> int:
        return self._data

    def offer(self, frame: str) -> None:
        """Queue ``frame`` or count it as dropped; never blocks."""
        if self._closed:
            return
        if self._data >= self.max_frames:
            self._dropped += 1
            self.dropped_total += 1
            if self._on_drop is not None:
                self._on_drop(1)
            return
        if self._dropped:
            self._queue.append((False, gap_frame(self._dropped)))
            self._dropped = 0
        self._queue.append((True, frame))
        self._data += 1
        self._wake.set()

    @property
    def room(self) -> int:
        """Data frames it would take now (0: closed or full, the next ones are dropped)."""
        return 0 if self._closed else max(0, self.max_frames - self._data)

    def offer_many(self, frames: list[str]) -> None:
        """Queue ``frames`` in order: those that fit, the rest counted as dropped at once
        (nothing here is per dropped frame: a full subscriber costs the fan-out nothing)."""
        self.drop_or_take(len(frames), frames)

    def drop(self, n: int) -> None:
        """``n`` frames this subscriber has no room for (the fan-out did not build them)."""
        self.drop_or_take(n, [])

    def drop_or_take(self, n: int, frames: list[str]) -> None:
        if self._closed or n <= 0:
            return
        take = min(self.room, len(frames))
        if take:
            if self._dropped:
                self._queue.append((False, gap_frame(self._dropped)))
                self._dropped = 0
            self._queue.extend(zip(itertools.repeat(True), frames[:take]))
            self._data += take
            self._wake.set()
        lost = n - take
        if lost:
            self._dropped += lost
            self.dropped_total += lost
            if self._on_drop is not None:
                self._on_drop(lost)

    def close(self, last_frame: str | None = None) -> None:
        """No more frames after ``last_frame`` (and any pending gap)."""
        if self._closed:
            return
        if self._dropped:
            self._queue.append((False, gap_frame(self._dropped)))
            self._dropped = 0
        if last_frame is not None:
            self._queue.append((False, last_frame))
        self._closed = True
        self._wake.set()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def idle(self) -> bool:
        """Nothing left to send."""
        return not self._queue and not self._dropped

    async def next(self) -> str | None:
        """The next frame to send; None once closed and empty."""
        while True:
            if self._queue:
                is_data, text = self._queue.popleft()
                if is_data:
                    self._data -= 1
                self.sent += 1
                return text
            if self._dropped:
                n, self._dropped = self._dropped, 0
                self.sent += 1
                return gap_frame(n)
            if self._closed:
                return None
            self._wake.clear()
            await self._wake.wait()
