"""Idempotent HTTP ingest: ``POST /api/v1/updates`` with an ``Idempotency-Key`` header.

A retry with the same key and the same request, within ``idempotency_window_s`` of the
first, gets the first answer (same status, same body, plus ``Idempotent-Replayed: true``)
and applies nothing; the same key with a different request (body or ``wait``) is 422; a
retry while the first is still in flight waits for it. The keys survive a restart through
``idempotency.log`` in the state directory (a :class:`~dcsm.service.durable.RecordLog` of
JSON entries)::

    {"op": "begin", "key", "hash", "at", "wait", "log"}   before the updates are durable
    {"op": "done", "key", "status", "body"}                the answer, durable before the
                                                           fan-out moves past the updates
    {"op": "abandon", "key"}                               nothing was made durable

Why a crash at any moment neither loses an answer nor applies twice: ``begin`` is fsynced
before the updates are made durable, and ``done`` is written while the fan-out settles them
(for ``wait=false``: once they are durable), so before any checkpoint can cover them. After a
crash, a key with ``begin`` but no ``done`` is *unresolved*: a retry gets 409 until the replay
reaches its updates (which records ``done`` as the replay settles them) or shows that they
never became durable (then the key is forgotten and a retry applies them). Without Kafka,
``log`` is the update-log entry the updates take, which says at once; with Kafka the updates
carry the key in a ``dcsm-idempotency-key`` record header, and the ingest says when it has
read everything the topic held at start. Without a state directory keys live in memory only.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dcsm.model import OUTCOME_APPLIED, OUTCOME_NAMES, OUTCOME_NOOP

from .durable import RecordLog
from .errors import ServiceError

log = logging.getLogger("dcsm.service.idempotency")

HEADER = "Idempotency-Key"
RECORD_HEADER = "dcsm-idempotency-key"  # the Kafka record header that carries the key
MAX_KEY_CHARS = 255


class KeyReused(ServiceError):
    status = 422
    code = "idempotency_key_reused"


class KeyInProgress(ServiceError):
    status = 409
    code = "idempotency_key_in_progress"


def check_key(key: str) -> None:
    if not 0 < len(key) <= MAX_KEY_CHARS or not all(33 <= ord(ch) <= 126 for ch in key):
        raise ServiceError(
            f"{HEADER} must be 1 to {MAX_KEY_CHARS} visible ASCII characters",
            [{"field": HEADER, "reason": "1 to 255 visible ASCII characters"}],
        )


def request_hash(body: bytes, wait: bool) -> str:
    """What makes two requests the same: the exact body bytes and ``wait``."""
    return hashlib.sha256(b"wait=%d\n" % wait + body).hexdigest()


def updates_answer(
    count: int, position: dict[str, Any], seq: np.ndarray, outcome: np.ndarray
) -> dict[str, Any]:
    """The 200 body of applied updates: ``seq`` (int64) and ``outcome`` (uint8), one per
    update in request order."""
    codes, counts = np.unique(outcome, return_counts=True)
    rejected = np.flatnonzero((outcome != OUTCOME_APPLIED) & (outcome != OUTCOME_NOOP))
    first = int(seq[0]) if count else None
    return {
        "accepted": count,
        "first_seq": first,
        "last_seq": first + count - 1 if first is not None else None,
        "durable": position,
        "outcomes": {OUTCOME_NAMES[int(c)]: int(k) for c, k in zip(codes, counts, strict=True)},
        "rejected": [
            {"index": int(i), "seq": int(seq[i]), "reason": OUTCOME_NAMES[int(outcome[i])]}
            for i in rejected.tolist()
        ],
    }


@dataclass
class _Entry:
    hash: str
    at: float
    wait: bool
    log_index: int | None = None  # the update-log entry (no Kafka)
    begun: bool = True  # the begin entry is written (False: only reserved in memory)
    status: int | None = None  # None: not answered yet
    body: dict[str, Any] | None = None
    done: asyncio.Future[tuple[int, dict[str, Any]]] | None = None  # None: from before a restart


class IdempotencyStore:
    """Keys, their requests' hashes and first answers, for ``window_s`` seconds."""

    def __init__(
        self, path: Path | None, window_s: float, clock: Callable[[], float] = time.time
    ) -> None:
        self.window_s = window_s
        self._clock = clock
        self._keys: dict[str, _Entry] = {}
        self._by_log_index: dict[int, str] = {}
        self._log: RecordLog | None = None
        if path is not None:
            self._load(path)

    # -- persistence -----------------------------------------------------------------------

    def _load(self, path: Path) -> None:
        live: dict[str, list[dict[str, Any]]] = {}
        read = 0
        if path.exists():
            old = RecordLog(path)
            for _, payload in old.read_from(0):
                read += 1
                e = json.loads(payload)
                if e["op"] == "begin":
                    live[e["key"]] = [e]
                elif e["op"] == "done" and e["key"] in live:
                    live[e["key"]].append(e)
                elif e["op"] == "abandon":
                    live.pop(e["key"], None)
            old.close()
        horizon = self._clock() - self.window_s
        kept = [es for es in live.values() if es[0]["at"] >= horizon]
        if sum(len(es) for es in kept) != read:  # rewrite without what expired or was dropped
            tmp = path.with_name(path.name + ".tmp")
            tmp.unlink(missing_ok=True)
            fresh = RecordLog(tmp)
            for es in kept:
                for e in es:
                    fresh.append(json.dumps(e, separators=(",", ":")).encode())
            fresh.close()
            os.replace(tmp, path)
        self._log = RecordLog(path)
        for es in kept:
            b = es[0]
            entry = _Entry(b["hash"], b["at"], b["wait"], b.get("log"))
            if len(es) > 1:
                entry.status, entry.body = es[1]["status"], es[1]["body"]
            self._keys[b["key"]] = entry
            if entry.log_index is not None:
                self._by_log_index[entry.log_index] = b["key"]
        unresolved = sum(1 for e in self._keys.values() if e.status is None)
        if self._keys:
            log.info(
                "idempotency keys: %d within %.0fs, %d unresolved", len(self._keys),
                self.window_s, unresolved,
            )  # fmt: skip

    async def _write(self, entry: dict[str, Any]) -> None:
        if self._log is not None:
            payload = json.dumps(entry, separators=(",", ":")).encode()
            await asyncio.to_thread(self._log.append, payload)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    # -- what the API asks -----------------------------------------------------------------

    def _live(self, key: str) -> _Entry | None:
        entry = self._keys.get(key)
        if entry is not None and entry.at < self._clock() - self.window_s:
            self._forget(key)
            return None
        return entry

    def _forget(self, key: str) -> None:
        entry = self._keys.pop(key, None)
        if entry is not None and entry.log_index is not None:
            self._by_log_index.pop(entry.log_index, None)

    async def lookup(self, key: str, digest: str) -> tuple[int, dict[str, Any]] | None:
        """The first answer to ``key`` (waiting for it while in flight), or None: new key.
        KeyReused for another request under the key; KeyInProgress while unresolved after a
        restart."""
        entry = self._live(key)
        if entry is None:
            return None
        if entry.hash != digest:
            raise KeyReused(
                f"{HEADER} {key!r} was used for a different request (body or wait)",
                [{"field": HEADER, "reason": "already used for a different request"}],
            )
        if entry.status is not None and entry.body is not None:
            return entry.status, entry.body
        if entry.done is None:
            raise KeyInProgress(
                f"the request with {HEADER} {key!r} is being recovered after a restart; "
                "retry shortly"
            )
        return await asyncio.shield(entry.done)

    def reserve(self, key: str, digest: str, wait: bool) -> None:
        """Claim a new key (in memory; call right after :meth:`lookup` said None, with no
        await between, so that a concurrent retry waits for this request)."""
        entry = _Entry(digest, self._clock(), wait, begun=False)
        entry.done = asyncio.get_running_loop().create_future()
        self._keys[key] = entry

    def release(self, key: str, error: BaseException) -> None:
        """Drop a reservation whose request failed before :meth:`begin` (nothing durable)."""
        entry = self._keys.get(key)
        if entry is not None and not entry.begun:
            self._forget(key)
            self._fail(entry, error)

    @staticmethod
    def _fail(entry: _Entry, error: BaseException) -> None:
        if entry.done is not None and not entry.done.done():
            entry.done.set_exception(error)
            entry.done.exception()  # retrieved: no "never retrieved" warning if none waits

    async def begin(self, key: str, log_index: int | None = None) -> None:
        """Durably note a reserved key before its updates are made durable (``log_index``:
        the update-log entry they will take)."""
        entry = self._keys[key]
        entry.log_index = log_index
        if log_index is not None:
            self._by_log_index[log_index] = key
        entry.begun = True
        await self._write(
            {"op": "begin", "key": key, "hash": entry.hash, "at": entry.at, "wait": entry.wait,
             "log": log_index}
        )  # fmt: skip

    def answer(self, key: str) -> tuple[int, dict[str, Any]]:
        """The recorded answer of ``key`` (KeyError if none)."""
        entry = self._keys[key]
        if entry.status is None or entry.body is None:
            raise KeyError(key)
        return entry.status, entry.body

    async def complete(
        self, key: str, status: int, body: dict[str, Any], settled: bool = False
    ) -> None:
        """Record the answer (durably) unless one is recorded. ``settled``: called as the
        fan-out settles the updates; a ``wait=false`` request answers itself (202)."""
        entry = self._keys.get(key)
        if entry is None or entry.status is not None:
            return
        if settled and not entry.wait and entry.done is not None:
            return
        await self._write({"op": "done", "key": key, "status": status, "body": body})
        entry.status, entry.body = status, body
        if entry.done is not None and not entry.done.done():
            entry.done.set_result((status, body))

    async def abandon(self, key: str, error: BaseException | None = None) -> None:
        """Nothing under ``key`` became durable, or its updates failed: forget it, so that a
        retry applies them."""
        entry = self._keys.get(key)
        if entry is None or entry.status is not None:
            return
        self._forget(key)
        self._fail(entry, error or KeyInProgress("the first request failed; retry"))
        await self._write({"op": "abandon", "key": key})

    # -- recovery ------------------------------------------------------------------------

    def key_of_log_entry(self, index: int) -> str | None:
        """The key whose updates the update log holds at entry ``index``, if any."""
        return self._by_log_index.get(index)

    async def drop_unresolved(self, log_length: int | None = None) -> int:
        """Forget the unresolved keys whose updates never became durable: with ``log_length``
        (no Kafka) those whose update-log entry is not in the log; without (Kafka, once the
        ingest has read what the topic held at start) all that are left."""
        gone = [
            k
            for k, e in self._keys.items()
            if e.status is None
            and e.done is None
            and (log_length is None or e.log_index is None or e.log_index >= log_length)
        ]
        for key in gone:
            await self.abandon(key)
        if gone:
            log.info("idempotency: %d keys whose updates never became durable forgotten", len(gone))
        return len(gone)
