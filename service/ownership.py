"""One owner of the input: a lease on ``dcsm.updates`` through the Kafka group protocol.

Records are consumed with an explicit assignment (so a restart seeks exactly to its
checkpoint's offsets), which by itself lets any number of services read the same topic. The
lease closes that gap: every service joins the group ``<consumer group>.owner`` subscribed
to the input topic, and the group's leader assigns the topic's partition to the member that
joined first (each member's subscription carries its start time). Exactly one live member is
the owner; the others get nothing. A member that gets nothing refuses to start, naming the
owner (its host, pid and client id) in one line. A member killed with ``kill -9`` stays in the
group until its session times out (``session_timeout_ms``): a restart waits for that, then
owns the input. Where the service has a state directory it keeps its member id there
(``lease-member.json``), and a restart on that directory whose predecessor's pid is gone (same
boot, same pid namespace) removes that member from the group first (a LeaveGroup in its name,
as a clean stop sends), instead of waiting out the dead leader's session. The removal uses
aiokafka's group coordinator (private; aiokafka >= 0.13): where it fails, the restart waits.

The lease group holds no offsets: the consumer group proper keeps them, committed at
checkpoints (see :mod:`dcsm.service.ingest`). A group apart because a broker rejects offset
commits outside a group's generation while that group has members.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .tasks import cancel_and_wait

log = logging.getLogger("dcsm.service.ownership")

# The log line of a lease taken, with the seconds it took (read by bench/chaos.py and the
# ownership tests; InputLease.acquire writes it).
HELD_LINE = re.compile(r"input lease on \S+ held after ([0-9.]+)s")

_LEAVE_TIMEOUT_S = 10.0  # finding the coordinator, then removing an exited service's member
_PID_MAX = 1 << 22  # Linux's largest pid_max


def _pid_gone(pid: int) -> bool:
    """No process of this pid namespace has ``pid`` (false for a number no pid can be:
    os.kill would raise OverflowError on one past a C int)."""
    if not 0 < pid <= _PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def _pid_namespace() -> str:
    """This machine's boot and pid namespace ("" where /proc does not say): processes with
    the same value look up each other's pids."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}/{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return ""


class InputOwned(ConfigError):
    """Another service owns the input topic."""


def _lease_assignor(identity: dict[str, Any]) -> type:
    """An assignor class (aiokafka calls assignors as classes) that gives every partition to
    the member that started first and tells every other member who that is."""
    from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
    from aiokafka.coordinator.protocol import (
        ConsumerProtocolMemberAssignment,
        ConsumerProtocolMemberMetadata,
    )

    me = json.dumps(identity).encode()

    class LeaseAssignor(AbstractPartitionAssignor):
        name = "dcsm-lease"
        version = 0
        received: dict[str, Any] | None = None

        @classmethod
        def metadata(cls, topics: Iterable[str]) -> ConsumerProtocolMemberMetadata:
            return ConsumerProtocolMemberMetadata(cls.version, list(topics), me)

        @classmethod
        def assign(
            cls, cluster: Any, members: Mapping[str, ConsumerProtocolMemberMetadata]
        ) -> dict[str, ConsumerProtocolMemberAssignment]:
            def started(member: str) -> tuple[float, str]:
                try:
                    return float(json.loads(members[member].user_data)["started"]), member
                except (ValueError, KeyError, TypeError):
                    return float("inf"), member

            owner = min(members, key=started)
            try:
                who = json.loads(members[owner].user_data)
            except ValueError:
                who = {}
            who["member"] = owner
            note = json.dumps(who).encode()
            out = {}
            for member, meta in members.items():
                parts = []
                if member == owner:
                    for topic in meta.subscription:
                        ps = cluster.partitions_for_topic(topic) or ()
                        parts.append((topic, sorted(ps)))
                out[member] = ConsumerProtocolMemberAssignment(cls.version, parts, note)
            return out

        @classmethod
        def on_assignment(cls, assignment: ConsumerProtocolMemberAssignment) -> None:
            try:
                cls.received = json.loads(assignment.user_data)
            except ValueError:
                cls.received = None

    return LeaseAssignor


class InputLease:
    """Membership of the lease group; :meth:`acquire` returns once this service owns the
    input topic, or raises :class:`InputOwned`."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        group: str,
        session_timeout_ms: int = 10_000,
        client_options: dict[str, Any] | None = None,
        member_file: Path | None = None,
    ) -> None:
        self.topic = topic
        self.group = f"{group}.owner"
        self.identity = {
            "host": socket.gethostname(), "pid": os.getpid(), "started": time.time(),
        }  # fmt: skip
        self._member_file = member_file  # where this service keeps its member id
        self._bootstrap = bootstrap
        self._session_timeout_ms = session_timeout_ms
        self._client_options = client_options or {}
        self._assignor = _lease_assignor(self.identity)
        self._consumer: Any = None
        self._keep: asyncio.Task[None] | None = None
        self.owner = False

    async def acquire(self, timeout_s: float = 120.0) -> None:
        from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

        lease = self
        t0 = time.monotonic()
        deadline = t0 + timeout_s

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                pass

            async def on_partitions_assigned(self, assigned: Any) -> None:
                owner = bool(assigned)
                if lease.owner and not owner:
                    log.error(
                        "input lease on %s lost to %s: another service may be consuming it",
                        lease.topic, lease.describe_owner(),
                    )  # fmt: skip
                lease.owner = owner
                if owner and lease._keep is not None:  # held: a rejoin may bring a new id
                    lease._write_member_file()
                decided.set()

        decided = asyncio.Event()
        c = AIOKafkaConsumer(
            bootstrap_servers=self._bootstrap,
            group_id=self.group,
            client_id=f"dcsm-{self.identity['host']}-{self.identity['pid']}",
            enable_auto_commit=False,
            partition_assignment_strategy=(self._assignor,),
            session_timeout_ms=self._session_timeout_ms,
            heartbeat_interval_ms=max(100, self._session_timeout_ms // 5),
            rebalance_timeout_ms=self._session_timeout_ms,
            **self._client_options,
        )
        await c.start()
        self._consumer = c
        await self._remove_member_left_here()
        c.subscribe([self.topic], listener=Listener())
        # Assignment happens while the consumer fetches: poll (it never holds records long,
        # it reads nothing: paused as soon as it owns the partition).
        while not decided.is_set():
            if time.monotonic() > deadline:
                await self.release()
                raise InputOwned(
                    f"no answer from the group {self.group!r} on {self.topic} within "
                    f"{timeout_s:.0f} s: cannot tell whether another service owns the input"
                )
            try:
                await asyncio.wait_for(decided.wait(), 0.2)
            except TimeoutError:
                pass
        c.pause(*c.assignment())
        # A service of this host killed with kill -9 stays the owner until its session times
        # out: wait for that (polling, so that the rebalance reaches this member) instead of
        # refusing to start.
        if not self.owner and self._owner_died_here():
            log.info("input lease on %s: the owner (%s) has exited; waiting for its session to "
                     "end", self.topic, self.describe_owner())  # fmt: skip
        while not self.owner and self._owner_died_here() and time.monotonic() < deadline:
            await self._poll()
        if not self.owner:
            who = self.describe_owner()
            await self.release()
            raise InputOwned(
                f"{self.topic} is already consumed by another dcsm service ({who}, lease group "
                f"{self.group!r}): stop it first, or use another --consumer-group / "
                "--updates-topic"
            )
        self._keep = asyncio.create_task(self._keep_alive(), name="dcsm-input-lease")
        self._write_member_file()
        log.info(
            "input lease on %s held after %.1fs (group %s)",
            self.topic, time.monotonic() - t0, self.group,
        )  # fmt: skip

    def _owner(self) -> dict[str, Any]:
        """The owner the last assignment named (host, pid, member), or {}."""
        return getattr(self._assignor, "received", None) or {}

    def _owner_died_here(self) -> bool:
        """Is the owner named in the last assignment a process of this host that has exited?"""
        who = self._owner()
        pid = who.get("pid")
        if who.get("host") != self.identity["host"] or not isinstance(pid, int):
            return False
        if pid == self.identity["pid"]:
            return False
        return _pid_gone(pid)

    def _write_member_file(self) -> None:
        """This member's id, pid and pid namespace in the state directory (atomically), kept
        after a clean stop too (aiokafka sends no LeaveGroup for a generation 0 member, and
        one that fails is not retried). Only a restart's speed depends on it."""
        if self._member_file is None:
            return
        try:
            member = str(self._consumer._coordinator.member_id)  # aiokafka's, private
        except AttributeError as exc:
            log.warning("input lease: this member's id not found (%s)", exc)
            return
        mine = {"group": self.group, "member": member, "pid": self.identity["pid"],
                "pids": _pid_namespace()}  # fmt: skip
        tmp = self._member_file.with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps(mine))
            tmp.replace(self._member_file)
        except OSError as exc:
            log.warning("cannot write %s: %s", self._member_file, exc)

    async def _remove_member_left_here(self) -> None:
        """The member a service of this state directory left in the group when it was
        killed: removed where its pid is surely gone (this boot, this pid namespace), so that
        the join does not wait for its session to end (the dead member may be the leader)."""
        try:
            left = json.loads(self._member_file.read_text()) if self._member_file else None
        except (OSError, ValueError):
            return
        if not isinstance(left, dict) or left.get("group") != self.group:
            return
        member, pid, pids = left.get("member"), left.get("pid"), _pid_namespace()
        if not (isinstance(member, str) and member and type(pid) is int and pids):
            return
        if pid == self.identity["pid"] or left.get("pids") != pids or not _pid_gone(pid):
            return
        try:  # aiokafka's coordinator and request (private; aiokafka >= 0.13), bounded
            from aiokafka.errors import for_code
            from aiokafka.protocol.group import LeaveGroupRequest

            coordinator = self._consumer._coordinator
            await asyncio.wait_for(coordinator.ensure_coordinator_known(), _LEAVE_TIMEOUT_S)
            leave = LeaveGroupRequest(self.group, member)
            resp = await asyncio.wait_for(coordinator._send_req(leave), _LEAVE_TIMEOUT_S)
            error = for_code(resp.error_code).__name__ if resp.error_code else ""
        except Exception as exc:
            log.info("input lease on %s: the exited service's member not removed: %r",
                     self.topic, exc)  # fmt: skip
            return
        if error:  # UnknownMemberIdError: the broker has dropped it already
            log.info("input lease on %s: the exited service's member not removed from %s: %s",
                     self.topic, self.group, error)  # fmt: skip
        else:
            log.info("input lease on %s: removed the member of the exited service (pid %d) of "
                     "this state directory from %s", self.topic, pid, self.group)  # fmt: skip

    def describe_owner(self) -> str:
        who = self._owner()
        return (
            f"host {who.get('host', '?')} pid {who.get('pid', '?')} member {who.get('member', '?')}"
        )

    async def _poll(self) -> None:
        """One poll of the lease consumer (paused: it reads nothing), so that rebalances
        reach this member."""
        c = self._consumer
        c.pause(*c.assignment())
        try:
            await c.getmany(timeout_ms=500)
        except Exception as exc:  # broker hiccups: aiokafka reconnects
            log.debug("input lease poll: %s", exc)
            await asyncio.sleep(0.5)

    async def _keep_alive(self) -> None:
        """aiokafka heartbeats in the background; rebalances are served while polling."""
        while True:
            await self._poll()

    async def release(self) -> None:
        keep = self._keep
        if keep is not None:
            await cancel_and_wait([keep])
            self._keep = None
        if self._consumer is not None:
            c, self._consumer = self._consumer, None
            await c.stop()
