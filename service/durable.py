"""Append-only, fsynced logs in the state directory: the query log (registrations and
deletions, each durable before the API acknowledges it) and the update log (HTTP-ingested
updates when there is no Kafka, durable before they are acknowledged).

Both are files of framed records::

    offset  size  field
    0       4     length n of the payload, uint32 LE
    4       4     CRC-32 of the payload, uint32 LE
    8       n     payload

A record is *the next entry* only if it is whole and its CRC matches; the first one that is
not (a write torn by a crash) ends the log: opening truncates the file there and says so.
Entries are numbered from 0 in file order, like Kafka offsets.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger("dcsm.service.durable")

_FRAME = struct.Struct("<II")


class RecordLog:
    """One append-only file of framed records (see the module docstring).

    :meth:`append` writes, flushes and fsyncs before returning; it blocks, so callers on the
    event loop run it in a thread (``asyncio.to_thread``) one at a time.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._offsets: list[int] = []  # byte offset of each entry
        end = self._scan()
        self._fh = open(path, "ab")
        if self._fh.tell() != end:
            log.warning(
                "%s: dropped a torn record at byte %d (%d bytes) left by a crash",
                path, end, self._fh.tell() - end,
            )  # fmt: skip
            self._fh.truncate(end)
            self._fh.seek(end)
            os.fsync(self._fh.fileno())
        self._end = end

    def _scan(self) -> int:
        if not self.path.exists():
            return 0
        data = self.path.read_bytes()
        pos = 0
        while pos + _FRAME.size <= len(data):
            n, crc = _FRAME.unpack_from(data, pos)
            body = data[pos + _FRAME.size : pos + _FRAME.size + n]
            if len(body) != n or zlib.crc32(body) != crc:
                break
            self._offsets.append(pos)
            pos += _FRAME.size + n
        return pos

    def __len__(self) -> int:
        return len(self._offsets)

    def append(self, payload: bytes) -> int:
        """Write one record durably; its entry number."""
        self._fh.write(_FRAME.pack(len(payload), zlib.crc32(payload)) + payload)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._offsets.append(self._end)
        self._end += _FRAME.size + len(payload)
        return len(self._offsets) - 1

    def read_from(self, first: int) -> Iterator[tuple[int, bytes]]:
        """(entry number, payload) of every entry from ``first`` on."""
        if first >= len(self._offsets):
            return
        with open(self.path, "rb") as fh:
            fh.seek(self._offsets[first])
            for i in range(first, len(self._offsets)):
                n, _ = _FRAME.unpack(fh.read(_FRAME.size))
                yield i, fh.read(n)

    def close(self) -> None:
        self._fh.close()


class QueryLog:
    """Registrations and deletions as JSON entries of a :class:`RecordLog`::

    {"op": "register", "name", "qid", "spec", "mode", "encoding", "from_seq", "backfill",
     "created_at"}
    {"op": "unregister", "name", "qid", "from_seq"}
    """

    def __init__(self, path: Path) -> None:
        self._log = RecordLog(path)

    def __len__(self) -> int:
        return len(self._log)

    def append(self, entry: dict[str, Any]) -> int:
        return self._log.append(json.dumps(entry, separators=(",", ":")).encode())

    def entries(self, first: int = 0) -> list[dict[str, Any]]:
        return [json.loads(p) for _, p in self._log.read_from(first)]

    def close(self) -> None:
        self._log.close()
