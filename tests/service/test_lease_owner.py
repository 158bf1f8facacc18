"""The input lease tells a dead owner on this host from a live one (no broker needed): a
restart after kill -9 waits for the dead owner's session instead of refusing to start."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from dcsm.service.ownership import InputLease


def _lease_told(owner: dict) -> InputLease:
    lease = InputLease("127.0.0.1:1", "t.updates", "g")
    lease._assignor.received = owner  # what the last assignment named as the owner
    return lease


def test_a_dead_owner_of_this_host_is_waited_for() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # exited and reaped: its pid names no process now
    assert _lease_told({"host": socket.gethostname(), "pid": proc.pid})._owner_died_here()


def test_a_live_or_remote_owner_is_not() -> None:
    here = socket.gethostname()
    assert not _lease_told({"host": here, "pid": os.getppid()})._owner_died_here()
    assert not _lease_told({"host": here, "pid": os.getpid()})._owner_died_here()
    assert not _lease_told({"host": here + "-other", "pid": 2**22 + 7})._owner_died_here()
    assert not _lease_told({})._owner_died_here()
