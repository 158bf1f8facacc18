"""kcat (librdkafka's command-line client, Debian package ``kcat``) as the producer of
``dcsm.updates`` and the consumer of ``dcsm.matches``: JSON records from its stdin (one per
line), binary batches from files (one file, one message), and the match records read back
with their keys and headers, checked against the CPU engine oracle.

Debian bookworm's kcat is linked with librdkafka 2.0.2, which cannot talk to tansu: tansu
sends the KIP-482 tagged fields of an ApiVersions v3 response (SupportedFeatures, ...) even
at their defaults, and librdkafka before 2.2.0 skips tagged fields one byte short
(confluentinc/librdkafka#4278), so every connection fails with "Read underflow" and kcat
exits with "All broker connections are down". (Apache Kafka omits tagged fields at their
defaults, which is why that librdkafka works against it.) Against such a kcat the test runs
the same kcat binary on the librdkafka that the confluent-kafka wheel bundles (>= 2.2),
through LD_LIBRARY_PATH, and skips saying so where that is not installed either.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from neighbours_common import (
    INSTALL,
    Record,
    Workload,
    need_tool,
    read_until,
    register_queries,
    wait_processed,
)

pytestmark = pytest.mark.kafka


FIXED = (2, 2, 0)  # first librdkafka that skips tagged fields right (#4278)


def librdkafka_version(kcat_path: str, env: dict[str, str] | None = None) -> tuple[int, ...]:
    out = subprocess.run([kcat_path, "-V"], capture_output=True, text=True, env=env, timeout=30)
    m = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)", out.stdout + out.stderr)
    assert m, out.stdout + out.stderr
    return tuple(int(x) for x in m.groups())


def bundled_librdkafka() -> Path | None:
    """The librdkafka shared library inside the confluent-kafka wheel, if installed."""
    try:
        import confluent_kafka
    except ImportError:
        return None
    libs = Path(confluent_kafka.__file__).parent.parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka*.so*"))
    return found[0] if found else None


class Kcat:
    """kcat with a librdkafka that can talk to tansu (see the module docstring)."""

    def __init__(self, workdir: Path) -> None:
        self.path = need_tool("kcat")
        self.env: dict[str, str] | None = None
        own = librdkafka_version(self.path)
        self.librdkafka = own
        if own < FIXED:
            lib = bundled_librdkafka()
            if lib is None:
                pytest.skip(
                    f"kcat is linked with librdkafka {'.'.join(map(str, own))}, which misreads "
                    "tansu's ApiVersions tagged fields (fixed in 2.2.0, librdkafka#4278), and "
                    f"confluent-kafka's librdkafka is not installed (run `{INSTALL}`)"
                )
            shim = workdir / "librdkafka"
            shim.mkdir(exist_ok=True)
            (shim / "librdkafka.so.1").symlink_to(lib)
            old = os.environ.get("LD_LIBRARY_PATH")
            self.env = {**os.environ, "LD_LIBRARY_PATH": f"{shim}:{old}" if old else str(shim)}
            self.librdkafka = librdkafka_version(self.path, self.env)
            assert self.librdkafka >= FIXED, self.librdkafka

    def __call__(self, bootstrap: str, *args: str, stdin: bytes | None = None) -> bytes:
        r = subprocess.run(
            [self.path, "-b", bootstrap, "-q", *args],
            input=stdin, capture_output=True, timeout=60, env=self.env,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        return r.stdout


def consume_envelopes(kcat: Kcat, bootstrap: str, topic: str) -> list[Record]:
    """The whole topic, as kcat's JSON envelopes (``-J``): key, headers, payload."""
    out = kcat(bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-J")
    recs = []
    for line in out.decode().splitlines():
        env = json.loads(line)
        h = env.get("headers") or []  # [name, value, name, value, ...]
        headers = {h[i]: h[i + 1].encode() for i in range(0, len(h), 2)}
        key = env["key"].encode() if env.get("key") is not None else None
        recs.append(Record(key, headers, env["payload"].encode()))
    return recs


def consume_formatted(kcat: Kcat, bootstrap: str, topic: str) -> list[tuple[str, str, str]]:
    """The whole topic through ``-f '%k\\t%h\\t%s\\n'``: key, headers, value as kcat prints
    them (frames are one-line JSON, so one line each)."""
    out = kcat(bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-f", "%k\t%h\t%s\n")
    return [tuple(line.split("\t", 2)) for line in out.decode().splitlines()]  # type: ignore[misc]


def test_kcat_produces_json_and_binary_and_reads_matches(
    broker, topics, make_service, tmp_path
) -> None:
    kcat = Kcat(tmp_path)
    w = Workload.make()
    svc = make_service()
    register_queries(svc.base_url)

    json_lines = [r for r, k in zip(w.records, w.kinds, strict=True) if k != "binary"]
    assert all(b"\n" not in r for r in json_lines)
    kcat(broker.bootstrap, "-P", "-t", topics.updates, stdin=b"\n".join(json_lines) + b"\n")
    files = []
    for i, (rec, kind) in enumerate(zip(w.records, w.kinds, strict=True)):
        if kind == "binary":
            f = tmp_path / f"batch{i:03d}.dcsb"
            f.write_bytes(rec)
            files.append(str(f))
    assert files and any(b"\n" in (tmp_path / f).read_bytes() for f in files)  # lines would split
    kcat(broker.bootstrap, "-P", "-t", topics.updates, *files)

    status = wait_processed(svc.base_url, len(w.batch) - 1)
    assert status["next_seq"] == len(w.batch)  # every update arrived, none split or lost

    expected, exp_counts = w.expected()
    seen = read_until(
        lambda: consume_envelopes(kcat, broker.bootstrap, topics.matches),
        len(expected),
        len(exp_counts),
    )
    assert seen.deltas == expected
    assert seen.counts == exp_counts
    assert seen.frames["tri"] == len(expected) // 2  # one json frame per delta
    assert seen.frames["trib"] < seen.frames["tri"]  # batch frames carry many rows

    # The same records through kcat's format string: key, "id=<hex>" header, value.
    lines = consume_formatted(kcat, broker.bootstrap, topics.matches)
    assert len(lines) == sum(seen.frames.values())
    for key, header, value in lines:
        frame = json.loads(value)
        assert key == frame["query"]
        if "id" in frame:
            assert header == f"id={frame['id']}"
