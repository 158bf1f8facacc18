"""Clean stops (issue 15, item 4) and quiet broker loss (item 5): real processes, real
signals, then no process of the run left and only a handful of log lines."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.service.broker import TansuBroker

pytestmark = pytest.mark.kafka


def _descendants(pid: int) -> set[int]:
    """Live descendants of ``pid`` (by /proc ppid), zombies excluded."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parent[int(entry)] = int(fields[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = {c for c, pp in parent.items() if pp == p}
        out |= kids
        todo += kids
    return out


def _alive(pids: set[int]) -> set[int]:
    left = set()
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    left.add(p)
        except OSError:
            pass
    return left


def _interrupt_and_check(proc: subprocess.Popen[str], kids: set[int], what: str) -> None:
    """Ctrl-C to the process group: exit 130 within 20 s, no child left within 5 s more,
    at most five stderr lines."""
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=20)
    took = time.monotonic() - t0
    assert proc.returncode == 130, err[-2000:]
    deadline = time.monotonic() + 5
    while _alive(kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(kids), "children left behind"
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) <= 5, err[-3000:]
    print(f"{what} stopped in {took:.1f}s, {len(lines)} stderr lines")


def test_sigint_mid_demo_stops_everything(tmp_path, broker) -> None:
    argv = ["--duration", "120", "--rate", "1000", "--vertices", "2000", "--plain"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcsm.service", "demo", "--backend", "cpu", *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # streaming, and a few seconds into it
            if line.startswith("t=") and float(line[2:].split("s", 1)[0]) > 3:
                break
        kids = _descendants(proc.pid)
        assert kids, "the demo should have started its broker"
        _interrupt_and_check(proc, kids, "demo")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_broker_loss_logs_a_handful_and_sigterm_still_exits(tmp_path) -> None:
    b = TansuBroker().start()
    svc = ServiceProcess("--kafka-acks", "1", kafka=b.bootstrap, workdir=tmp_path).start()
    try:
        before = len(svc.log(1_000_000).splitlines())
        b.stop()
        time.sleep(5)
        new = svc.log(1_000_000).splitlines()[before:]
        noisy = [x for x in new if " ERROR " in x or " WARNING " in x]
        assert len(noisy) <= 10, "\n".join(noisy)
        r = httpx.get(svc.base_url + "/readyz", timeout=5, trust_env=False)
        assert r.status_code == 503
        assert svc.proc is not None and svc.proc.poll() is None
        t0 = time.monotonic()
        svc.proc.send_signal(signal.SIGTERM)
        rc = svc.proc.wait(15)
        took = time.monotonic() - t0
        assert rc == 0, svc.log()
        print(f"broker gone: {len(noisy)} warning/error lines in 5 s; SIGTERM exit in {took:.1f}s")
    finally:
        svc.kill()
        b.stop()


def test_sigint_mid_loadgen_stops_everything(tmp_path) -> None:
    argv = ["--embedded", "--backend", "cpu", "--rates", "2000", "--duration", "120",
            "--vertices", "2000", "--out", str(tmp_path / "out")]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcsm.service", "loadgen", *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        start_new_session=True,
    )  # fmt: skip
    try:
        # Streaming: the broker, the service and the producer process are all up.
        deadline = time.monotonic() + 120
        while len(_descendants(proc.pid)) < 3 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            time.sleep(0.2)
        time.sleep(3)
        kids = _descendants(proc.pid)
        assert len(kids) >= 3, "loadgen should have started its broker, service and producer"
        _interrupt_and_check(proc, kids, "loadgen")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_stop_without_its_final_checkpoint_exits_1(make_service, tmp_path) -> None:
    """SIGTERM whose final checkpoint cannot be written (a directory stands where its
    temporary file goes): exit code 1 and an error line saying why, so that a supervisor
    knows the next start resumes from the last checkpoint and sends again what this process
    emitted after it. A drain that times out or fails says so the same way."""
    state = tmp_path / "state"
    svc = make_service("--checkpoint-interval-s", "3600", state_dir=state)
    (state / "checkpoint.tmp").mkdir()
    rc = svc.terminate(60)
    log = svc.log(1_000_000)
    assert rc == 1, log
    lines = [x for x in log.splitlines() if "the final checkpoint failed" in x]
    assert len(lines) == 1 and "the next start resumes from the last one" in lines[0], log
