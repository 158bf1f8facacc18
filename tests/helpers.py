"""Helpers for the tests that drive a real service: websocket and topic collectors, request
bodies, the test patterns, and the oracle. (The ``dcsm serve`` subprocess itself is
:class:`dcsm.loadgen.embedded.ServiceProcess`, which ``dcsm loadgen --embedded`` uses too.)

Every test folder imports this module as ``helpers`` (pytest puts ``tests/`` on ``sys.path``
for the root ``conftest.py``, as for ``refdata`` and ``nx_reference``).

The oracle runs the CPU engine directly, one engine per query (so nothing the service does
with several queries in one engine, its batching or its plumbing, leaks into the expected
output), and returns deltas as comparable tuples ``(query, sign, seq, match)``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from dcsm.engine import make_engine
from dcsm.engine.short_cycles import ring_shape
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.model import Graph, Pattern, UpdateBatch

Delta = tuple[str, int, int, tuple[int, ...]]  # (query, sign, seq, match)

# Patterns the tests use: a triangle, a vertex-labelled path, a 4-cycle (distinct).
TRI = Pattern.build("tri", [None, None, None], [(0, 1, None), (1, 2, None), (0, 2, None)])
PATH = Pattern.build("path", [0, 1, 0], [(0, 1, None), (1, 2, None)])
SQUARE = Pattern.build(
    "square", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None), (0, 3, None)], distinct=True
)


def spec(pattern: Pattern, **extra: Any) -> dict[str, Any]:
    """The QuerySpec JSON body of ``pattern`` (plus extra keys, e.g. mode or name)."""
    from dcsm.schemas import QuerySpec

    return QuerySpec.from_pattern(pattern).model_dump() | extra


def warm_engine_cache(backend: str = "cpu") -> None:
    """Compile the engine's JIT code once (numba caches it on disk), so services started
    afterwards are ready in about a second instead of spending their timeout compiling."""
    from dcsm.engine import warm_up

    warm_up(backend)


def oracle_deltas(
    updates: UpdateBatch,
    queries: Sequence[tuple[Pattern, int]],
    graph: Graph | None = None,
    backend: str = "cpu",
) -> list[Delta]:
    """Deltas of each (pattern, from_seq) over ``updates`` (seqs as given), sorted."""
    out: list[Delta] = []
    for pattern, from_seq in queries:
        eng = make_engine(backend)
        if graph is not None and graph.num_edges:
            eng.load_graph(graph)
        eng.register(0, pattern, from_seq=from_seq)
        d = eng.apply(updates).deltas
        n = pattern.num_vertices
        out.extend(
            (pattern.name, int(s), int(q), tuple(m[:n]))
            for s, q, m in zip(d.sign.tolist(), d.seq.tolist(), d.match.tolist(), strict=True)
        )
        eng.close()
    return sorted(out)


def oracle_counts(
    updates: UpdateBatch, pattern: Pattern, from_seq: int = 0, graph: Graph | None = None
) -> dict[int, int]:
    """Count-mode oracle: {seq: signed count} for one pattern."""
    eng = make_engine("cpu")
    if graph is not None and graph.num_edges:
        eng.load_graph(graph)
    eng.register(0, pattern, from_seq=from_seq, count_only=True)
    c = eng.apply(updates).counts
    return {int(q): int(s) * int(k) for q, s, k in zip(c.seq, c.sign, c.count, strict=True)}


def as_delta(frame: dict[str, Any]) -> Delta:
    return (frame["query"], int(frame["sign"]), int(frame["seq"]), tuple(frame["match"]))


async def wait_processed(client: Any, seq: int, timeout_s: float = 60.0) -> dict[str, Any]:
    """Poll /api/v1/status until every update up to ``seq`` is fanned out (the rows of a
    query still backfilling beside the stream follow its backfill)."""
    deadline = time.monotonic() + timeout_s
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        status = (await client.get("/api/v1/status")).json()
        if status["processed_seq"] >= seq:
            return status
        await asyncio.sleep(0.05)
    raise TimeoutError(f"processed_seq {status.get('processed_seq')} < {seq} after {timeout_s}s")


async def read_frames(
    ws: Any, until: int = 0, timeout_s: float = 60.0, stop_on_idle_s: float = 0.5
) -> list[dict[str, Any]]:
    """Parsed frames from a websocket: stops at close, at ``timeout_s``, or once at least
    ``until`` delta frames arrived and then ``stop_on_idle_s`` passed without a frame (so
    unexpected extras are caught too)."""
    frames: list[dict[str, Any]] = []
    deltas = 0
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        wait = min(left, stop_on_idle_s) if deltas >= until else left
        try:
            text = await asyncio.wait_for(ws.recv(), wait)
        except TimeoutError:
            if deltas >= until:
                break
            continue
        except Exception:  # closed
            break
        frame = json.loads(text)
        frames.append(frame)
        if "type" not in frame:
            deltas += 1
    return frames


async def consume_topic(
    bootstrap: str,
    topic: str,
    count: int,
    timeout_s: float,
    idle_s: float = 1.0,
    enough: Callable[[list[Any]], bool] | None = None,
) -> list[Any]:
    """Records of ``topic`` from the beginning: at least ``count`` (or until ``enough(records)``
    holds), then until ``idle_s`` passes with nothing new (so extras are caught), or
    ``timeout_s``."""
    from aiokafka import AIOKafkaConsumer

    c = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await c.start()
    out: list[Any] = []
    deadline = time.monotonic() + timeout_s
    last_new = time.monotonic()
    try:
        while time.monotonic() < deadline:
            got = await c.getmany(timeout_ms=200)
            for msgs in got.values():
                out.extend(msgs)
                last_new = time.monotonic()
            done = enough(out) if enough is not None else len(out) >= count
            if done and time.monotonic() - last_new >= idle_s:
                break
    finally:
        await c.stop()
    return out


def sorted_deltas(frames: Iterable[dict[str, Any]]) -> list[Delta]:
    return sorted(as_delta(f) for f in frames if "type" not in f)


def metric_value(text: str, sample: str, **labels: str) -> float:
    """Value of one sample (e.g. ``dcsm_dead_letters_total``, reason="malformed") in a
    Prometheus text exposition; 0 when absent."""
    from prometheus_client.parser import text_string_to_metric_families

    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == sample and s.labels == labels:
                return float(s.value)
    return 0.0


def http_client(base_url: str, timeout_s: float = 60.0) -> Any:
    """An httpx.AsyncClient for a loopback service that ignores proxy settings."""
    import httpx

    return httpx.AsyncClient(base_url=base_url, timeout=timeout_s, trust_env=False)


def ws_connect(url: str, **kwargs: Any) -> Any:
    """websockets.connect for loopback: no proxy, no compression (frames stay countable)."""
    from websockets.asyncio.client import connect

    return connect(url, proxy=None, compression=None, max_size=None, **kwargs)


def updates_json(batch: UpdateBatch) -> list[dict[str, Any]]:
    from dcsm.service.codec import encode_json_updates

    return encode_json_updates(batch)


def bench_script(name: str) -> ModuleType:
    """``bench/<name>.py`` as a module, loaded once (bench/ is scripts, not a package)."""
    module_name = f"dcsm_bench_{name}"
    if module_name not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "bench" / f"{name}.py"
        found = importlib.util.spec_from_file_location(module_name, path)
        assert found is not None and found.loader is not None
        module = importlib.util.module_from_spec(found)
        sys.modules[module_name] = module  # dataclasses look their module up while it executes
        found.loader.exec_module(module)
    return sys.modules[module_name]


def ring_kind(pattern: Pattern) -> str | None:
    """The ring ``pattern`` is counted as without a search (``ring_shape``'s kind:
    "triangle", "cycle4", "tailed" or "diamond"), or None."""
    shape = ring_shape(pattern)
    return None if shape is None else shape.kind


def counted_as_searched(snap: StaticSnapshot, pattern: Pattern, slices: int = 5) -> int:
    """The search's count of ``pattern`` in ``snap`` (run with emit, which enumerates; at
    least one match), after asserting that a count without rows, and the counts of
    ``slices`` slices of roots summed, give the same (for the patterns counted per root
    without a search)."""
    searched, rows = snap.run(pattern, 0, snap.num_vertices, emit=True)
    assert len(rows) == searched > 0
    assert snap.run(pattern, 0, snap.num_vertices, emit=False)[0] == searched
    cuts, _work = snap.slices(slices)
    parts = [
        snap.run(pattern, int(lo), int(hi), emit=False)[0]
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)
    ]
    assert sum(parts) == searched
    return searched
