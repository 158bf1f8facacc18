"""The GPU engine: host side of the DCSM persistent kernel (gpu/dcsm_kernel.cu).

Data flow (one way): ``apply`` admits updates on the host (ids, self loops, label
conflicts; :mod:`dcsm.engine.intern`), writes them as records into the pinned input ring
(a long write is also copied into a device mirror of the ring, which the kernel reads far
faster than host memory, before its tail is published), and pumps the two pinned output
rings (match records and per-update completion records) until every update of the batch
has completed. The device's vertex tables grow between two applies when new vertices need
room (the kernel is stopped and relaunched). Inside the kernel, updater warps batch and
apply updates to the multi-version graph while executor warps match earlier updates: that
overlap is DCSM's inter-batch parallelism, and it happens within one ``apply`` call as soon
as the call carries more than one kernel batch. A kernel batch closes at ``batch_size``
updates (b) or ``batch_timeout_us`` (t), but takes whatever else is already waiting, up to
``batch_cap``: under a backlog batches grow, and hub arrays are copied once for many
updates.

Query registration uploads the plan blob into a free slot (a copy on a side stream, no
kernel load), then sends a REGISTER record placed right before the first update with
``seq >= from_seq``, so the query sees exactly the updates it should.

``fixed_batch=b`` turns the engine into the GCSM-style baseline used for comparisons: each
``b`` updates are one kernel launch that first applies the whole batch and only then
matches it, with no overlap between batches.

Parts, each in its own module beside this one: :mod:`.input_ring` (the input ring's host
end), :mod:`.query_slots` (which query holds which kernel slot, control records waiting for
their update), :mod:`.call_result` (one call's completions and matches assembled into a
BatchResult), :mod:`.rings` (encoding records, decoding the output rings), :mod:`.pools`
(sizing and growing the device tables), :mod:`.mvg` (the graph's image in device memory),
:mod:`.diagnostics` (the kernel's state for people). This module owns the device buffers
and the kernel's lifetime, and runs the calls.

Static matching (``count_static``/``match_static``, used for ``dcsm match`` and inline
backfill) runs on the device (:mod:`.static_match`): the persistent kernel is stopped, the
live edges become a CSR snapshot, and the matcher counts or enumerates plan 0 over every
ordered edge; the next ``apply`` relaunches the persistent kernel. With ``static_beside``
the kernel leaves a block slot an SM free and ``static_snapshot`` hands that CSR to a second
matcher (:mod:`.device_snapshot`) that runs it beside the kernel while updates go on.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numba
import numpy as np

from dcsm.engine.bulk import intern_graph
from dcsm.engine.idtable import IdTable
from dcsm.engine.interface import NO_END, BatchResult, Engine, cap_deltas
from dcsm.engine.intern import ADMITTED, admit, admit_looked_up, grown, look_up_parallel
from dcsm.engine.plan import QueryPlan
from dcsm.errors import EngineError, EngineStopped
from dcsm.model import Graph, Pattern, UpdateBatch

from . import diagnostics, pools, rings
from . import layout as L
from .call_result import CallResult, concat_results
from .device_clock import DeviceClock
from .device_snapshot import DeviceSnapshot
from .input_ring import InputRing, as_words
from .loader import KernelConfig, field_offsets, load_kernel
from .mvg import (
    V_BLEN,
    V_CLS,
    V_LEN,
    V_SLAB,
    V_TOFF,
    VERSION_INTS,
    build_image,
    fill_entries,
    live_edges,
)
from .query_slots import QuerySlots
from .rings import MatchRows, drain_done, encode_updates, encode_updates_parallel
from .static_match import BESIDE_COUNT_MIN_BLOCKS, DeviceCsr, StaticMatcher

log = logging.getLogger("dcsm.gpu")

THREADS = 256
# Updates admitted and sent to the kernel at a time within one apply: an apply of n updates
# goes in pieces of n / _PIECES, kept within [_PIECE, _PIECE_MAX] (piece_size; a paced
# apply in pieces of _PIECE). The kernel starts on the first piece while the host prepares
# the next, and takes what the host has written as one batch (up to batch_cap): small
# pieces start the device early on a short apply, large ones make fewer, larger batches of
# a long one (a batch's jobs cost a fixed ~0.3 ms).
_PIECE = 4096
_PIECE_MAX = 16384
_PIECES = 16
# An unpaced apply's first piece holds at most this many (0: as many as the others): the
# device's first batch starts sooner, while the host admits the next piece. Session 37,
# call 3 (H200, 22 oracle count rows, 4 turns): the 8 light rows (Q_1, Q_5, Q_7, Q_10)
# 12.93-13.35 ms together against 13.29-13.80 with 0, lower in every turn; all rows 176.38
# against 178.62 ms (medians). A batch_cap of 32768 beside it gained too little to pay for
# the heavy rows it slowed.
_PIECE_FIRST = 2048
_ROWS = 1 << 16  # match records decoded per read of the output ring
# Between two pieces of an apply, read the completions once more than maxu / _READ_AHEAD
# updates sent have not had theirs read: the kernel takes update tau only once the host has
# read the completion of tau - maxu (slot_free), and an unpaced write pumps otherwise only
# when the input ring is full. 0: never.
_READ_AHEAD = 2


def uses_hub_bits(plan: QueryPlan) -> bool:
    """Whether some item of ``plan`` (counting) can test its last level by a hub bitmap
    (executor.cuh, hub_bits_for): that level n - 1 has exactly two backward neighbours, one
    matched before an item's level s (2 <= s < n - 1), the other at or after it. A 4-cycle
    can; a triangle (no level between the update's ends and the last) and a 4-clique (three
    backward neighbours) cannot."""
    last = plan.num_vertices - 1
    if last < 3:
        return False
    two = plan.bn_cnt[:, last] == 2
    j = plan.bn_pos[:, last, :2]
    lo, hi = j.min(axis=1), j.max(axis=1)
    return bool(np.any(two & (np.maximum(2, lo + 1) <= np.minimum(hi, last - 1))))


def piece_size(n: int) -> int:
    """Updates a piece of an apply of ``n`` updates holds (see ``_PIECES``)."""
    return min(max(_PIECE, n // _PIECES), _PIECE_MAX)


def piece_bounds(n: int, piece: int, first: int = 0) -> Iterator[tuple[int, int]]:
    """(lo, hi) of each piece of an apply of ``n`` updates: ``piece`` updates each, the
    first one at most ``first`` (0: no smaller)."""
    lo, hi = 0, min(n, min(piece, first) if first else piece)
    while lo < n:
        yield lo, hi
        lo, hi = hi, min(n, hi + piece)


# host_threads -1 picks this many where the process may run on at least _AUTO_CORES cores.
_AUTO_THREADS, _AUTO_CORES = 4, 8


def _host_threads(asked: int) -> int:
    """Numba threads an apply spreads its id lookups and encoding over (0: the calling
    thread alone): ``asked`` when >= 0; for -1, ``$DCSM_HOST_THREADS`` where set, else
    _AUTO_THREADS on a host of _AUTO_CORES cores or more, else 0. At most numba's."""
    n = asked
    if n < 0:
        env = os.environ.get("DCSM_HOST_THREADS")
        affinity = getattr(os, "sched_getaffinity", None)  # Linux: the cores this process may use
        cores = len(affinity(0)) if affinity else os.cpu_count() or 1
        n = int(env) if env else _AUTO_THREADS if cores >= _AUTO_CORES else 0
    return max(0, min(n, numba.config.NUMBA_NUM_THREADS))


@contextlib.contextmanager
def numba_threads(n: int) -> Iterator[None]:
    """Numba's thread count for this thread's parallel calls: n inside, set back after (0:
    left alone, and numba's thread pool not started)."""
    if not n:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def too_small(what: str, need: int, capacity: str, have: int) -> str:
    """The error for a capacity the graph outgrows, naming the settings that raise it."""
    flag = capacity.replace("_", "-")
    return (
        f"the graph needs {need} {what}; {capacity}={have} (raise it: --gpu-{flag} of dcsm "
        f"serve, replay and match, gpu_{capacity} in the service settings, or "
        f"GpuEngine({capacity}=...); 0 sizes it from the graph and grows it)"
    )


def _over_offsets(slabs: int) -> str:
    return (
        f"a pool of {slabs} slabs: the kernel names slabs with 32-bit indices, so the "
        f"pool holds at most {pools.MAX_SLABS} slabs (512 GB of entries)"
    )


class GpuEngine(Engine):
    """DCSM on one CUDA device.

    Args:
        pool_slabs: slabs of 32 entries (16 B each) in the device pool; 0 (the default):
            sized from the graph and grown as it grows (:mod:`.pools`), else exactly this.
        max_vertices: the vertex tables' first capacity; it doubles, between two applies,
            whenever a graph or a stream needs more.
        max_versions: capacity of the version table; 0 (the default): like ``pool_slabs``.
        n_updaters: graph-updater warps (1-7).
        batch_size: updates that close a batch (b); batch_timeout_us: t; batch_cap: the
            most updates one batch takes when more are waiting.
        maxu: update slots (a power of two >= batch_cap); an update's slot is taken again
            only after the collector passed it, so fewer slots make the updater wait on it.
        in_cap: input ring records; out_cap: output ring int32 words (pinned).
        fixed_batch: run as the fixed-batch baseline with this batch size.
        blocks: grid size (default: as many co-resident blocks as fit).
        check: compile in the kernel's self-checks (default: ``DCSM_GPU_CHECK=1`` in the
            environment); a violated invariant then fails the ``apply`` that saw it.
        small_path: batches of at most 32 updates applied by one updater warp without the
            job pipeline: 0 never, 1 when the kernel's measured cost models say it is
            cheaper (default), 2 always.
        tail_div: a batch that inserts into a list appends a sorted tail after the list's
            current one in its slab run, keeping its base, while the tail holds at most
            1/tail_div of the base; else it merges base, tail and insertions into a new run.
            0: always merge (docs/delta-lists.md has the trade).
        static_beside: leave one block slot an SM free (unless ``blocks`` is given) and keep
            a second static matcher, so that :meth:`static_snapshot` gives a device snapshot
            that backfills match on while the persistent kernel runs (a static block starts
            only where one fits: ``bench/results/static/beside-1127/``).
        hub_bitmaps: bitmaps of hub lists the executors share (counting: a last level's
            membership tests in a list fixed for a whole item are bit tests, HUB_BITS_MIN in
            gpu/layout.cuh; the items testing one list at one tau share its bitmap), one bit
            a vertex each, carved at a launch from a self-sized slab pool's free top
            (:func:`.pools.hub_room`: no memory of their own, and given back when the pool
            fills; a pool of a given size has none) while a counting query that can use
            them is registered (``uses_hub_bits``: a 4-cycle, not a triangle or a
            4-clique); -1 (the default): one an executor warp, as many as the room holds;
            0: none. Measured in ``bench/results/gpu/session25``.
        host_threads: numba threads that an apply's id lookups and record encoding are
            spread over; 0: the calling thread alone; -1 (the default):
            ``$DCSM_HOST_THREADS`` where set, else 4 on a host of 8 cores or more, else
            0. 4 against 0 on one H200 host, in turns: the 22 oracle count rows 179.7
            against 184.7 ms, the heavy rows gaining most (``bench/results/gpu/session34``).
            Never more than 0 under numba's workqueue threading layer (its fallback where
            neither TBB nor OpenMP loads), where two parallel calls at once abort the
            process: a thread count asked for there is refused with EngineError, and -1
            falls back to 0.
    """

    backend = "gpu"
    _live: weakref.WeakSet[GpuEngine] = weakref.WeakSet()

    def __init__(
        self,
        *,
        pool_slabs: int = 0,
        max_vertices: int = 1 << 22,
        max_versions: int = 0,
        n_updaters: int = KernelConfig.n_updaters,
        batch_size: int = KernelConfig.batch_b,
        batch_timeout_us: float = KernelConfig.batch_timeout_ns / 1000,
        batch_cap: int = KernelConfig.batch_cap,
        maxu: int = KernelConfig.maxu,
        in_cap: int = 1 << 16,
        out_cap: int = 1 << 24,
        chunk: int = KernelConfig.chunk,
        fixed_batch: int | None = None,
        blocks: int | None = None,
        check: bool | None = None,
        small_path: int = KernelConfig.small_path,
        tail_div: int = KernelConfig.tail_div,
        pool_compact: int = 0,
        static_beside: bool = False,
        hub_bitmaps: int = -1,
        host_threads: int = -1,
    ) -> None:
        super().__init__()
        import cupy as cp

        self._cp = cp
        cfg = KernelConfig(
            n_updaters=n_updaters,
            batch_b=batch_size,
            # The baseline applies each fixed batch as one kernel batch.
            batch_cap=max(batch_cap, fixed_batch or 0),
            maxu=maxu,
            chunk=chunk,
            batch_timeout_ns=int(batch_timeout_us * 1000),
            check=int(os.environ.get("DCSM_GPU_CHECK") == "1" if check is None else check),
            small_path=small_path,
            tail_div=tail_div,
            extra=KernelConfig.extra_from_env(),
        )
        self.cfg = cfg
        # Every module loads before the kernel ever runs.
        self._kernel, sizes = load_kernel(cfg)
        self._side = cp.cuda.Stream(non_blocking=True)
        self._static = StaticMatcher(self._side)
        # static_snapshot's matcher (its own stream) and the lock its snapshots share.
        self._beside = None
        if static_beside:
            beside = StaticMatcher(event_waits=True, count_min_blocks=BESIDE_COUNT_MIN_BLOCKS)
            self._beside = (beside, threading.Lock())
        self._state_dtype = L.state_dtype(cfg)
        mirrors = {"State": self._state_dtype, "Upd": L.UPD, "Done": L.DONE, "InRec": L.IN_REC,
                   "Item": L.ITEM}  # fmt: skip
        for name, dtype in mirrors.items():
            if sizes[name] != dtype.itemsize:
                raise EngineError(f"gpu/layout.py: {name} is {dtype.itemsize} bytes, "
                                  f"the kernel's {sizes[name]}")  # fmt: skip
        mirrors.update({"DevStatus": L.DEV_STATUS, "HostCtl": L.HOST_CTL, "Version": L.VERSION})
        L.check_offsets(mirrors, field_offsets(cfg, L.mirrored_fields(mirrors)))
        self._fixed_batch = fixed_batch
        self._auto_slabs, self._auto_versions = pool_slabs <= 0, max_versions <= 0
        self._hub_slabs = 0  # slabs of the largest arrays a piece may copy (_reserves)
        self._compact = bool(pool_compact) and self._auto_slabs  # (self-sized pools only)
        self._compactions = 0  # of the slab pool (_compact_slabs)
        self._pool_looks = 0  # drains to look at the pools (_pools_in_reach)
        pool_slabs = pool_slabs if pool_slabs > 0 else pools.MIN_SLABS
        max_versions = max_versions if max_versions > 0 else pools.MIN_VERSIONS
        if pool_slabs > pools.MAX_SLABS:
            raise EngineError(_over_offsets(pool_slabs))
        self._nslabs = pool_slabs
        self._maxv = max_vertices
        self._maxver = max_versions
        # the hub bitmaps: words each, how many, the pool's top slabs they take (_set_hub_bits)
        self._hub_words = self._hub_slots = self._hub_carved = 0
        self._hub_request = hub_bitmaps
        self._hub_qids: set[int] = set()  # counting queries whose plans can use them
        z = cp.zeros
        self._d = {
            "vlab": z(max_vertices, np.int32),
            "ext": z(max_vertices, np.int64),
            "head": cp.full(max_vertices, -1, np.int32),
            "vmark": z(max_vertices, np.int32),
            "vseg": z(max_vertices, np.int32),
            "entries": z((pool_slabs * 32, 4), np.int32),
            "vers": z((max_versions, VERSION_INTS), np.int32),
            "slab_free": z(pools.ring_words(pool_slabs, cfg.nclass), np.int32),
            "ver_free": z(max_versions, np.int32),
            "gcq": z(max_versions, np.int32),
            "upd": cp.asarray(self._initial_upd()),
            "upd_count": z(cfg.maxu * cfg.qmax, np.uint64),
            "items": z((cfg.maxi, L.ITEM_INTS), np.int32),
            "item_free": cp.arange(cfg.maxi, dtype=np.int64),
            "item_stamp": cp.full(cfg.maxi, -1, np.int64),
            "plans": z(cfg.qmax * cfg.pmax * L.PLAN_INTS, np.int32),
            "chunkmask": z(cfg.maxchunk, np.uint32),
            "chunkoff": z(cfg.maxchunk, np.int32),
            "chunkseg": z(cfg.maxchunk, np.int32),
            "batch": z(sizes["Batch"], np.uint8),
            "in_mirror": z(in_cap * L.IN_REC.itemsize, np.uint8),
            "slab_owner": cp.full(pool_slabs, -1, np.int32),
            "task_mark": z(cfg.maxchunk if cfg.check else 1, np.uint64),
            "hub_state": z(1, np.uint64),  # sized at launch (_hub_bits_in_reach)
            "hub_key": z(2, np.uint64),
        }
        self._d["st"] = z(self._state_dtype.itemsize, np.uint8)
        self._pinned: dict[str, object] = {}
        self._in = self._pin("in_ring", in_cap, L.IN_REC)
        self._hctl = self._pin("hctl", 1, L.HOST_CTL)
        self._dstat = self._pin("dstat", 1, L.DEV_STATUS)
        ring_ptr = self._pinned["in_ring"].ptr  # type: ignore[attr-defined]
        self._ring = InputRing(cp, self._in, ring_ptr, self._d["in_mirror"], self._hctl,
                               self._dstat, self._side)  # fmt: skip
        self._out = self._pin("out", out_cap, np.int32)
        self._done = self._pin("done", cfg.maxu, L.DONE)
        self._done_counts = self._pin("done_counts", cfg.qmax * cfg.maxu, np.uint64).reshape(
            cfg.qmax, cfg.maxu
        )
        self._done["tau"] = -1
        # The Done ring's fields, as views for drain_done.
        self._done_fields = tuple(
            self._done[f] for f in ("tau", "outcome", "nonzero", "t_taken", "t_start", "t_finish")
        )
        self._ctx = self._make_ctx(in_cap, out_cap)
        self._stream = cp.cuda.Stream(non_blocking=True)
        st = np.zeros(1, self._state_dtype)
        st["next_tau"] = 1
        st["gc_ptr"] = 1
        st["q_from"] = NO_END
        st["q_until"] = 0
        st["hold"] = 1 if fixed_batch else 0
        self._put_state(st)
        self._warm_up(st[0])
        # Host-side admission state.
        self._ids = IdTable()  # external id -> internal id
        self._ext = np.zeros(1024, np.int64)
        self._vlab = np.zeros(1024, np.int32)
        self._meta = np.zeros(1, np.int64)
        self._host_threads = _host_threads(host_threads)
        if self._host_threads:
            self._warm_host_threads()
            if numba.threading_layer() == "workqueue":
                if host_threads > 0:
                    raise EngineError(
                        f"host_threads={host_threads}: numba's threading layer is workqueue, "
                        "which two parallel calls at once abort; install tbb or an OpenMP "
                        "runtime, or use 0"
                    )
                self._host_threads = 0
        self._slots = QuerySlots(cfg.qmax)
        self._caps: dict[int, int] = {}  # qid -> max_deltas, applied on the host result
        # Ring positions.
        self._next_tau = 1
        self._done_next = 1
        self._out_head = 0
        self._expect_records = 0
        self._got_records = 0
        self._running = False
        self._loaded = False
        # Records and completions read while no apply call collects them (then dropped).
        self._drain_rows = MatchRows(16, chunk_rows=_ROWS)
        nothing = UpdateBatch.from_arrays(np.zeros(0), np.zeros(0), np.zeros(0))
        self._no_collector = CallResult(nothing, 0, 1, np.zeros(0, np.int64))
        self._clock = DeviceClock(self._hctl, self._dstat)
        # Per update of the last apply call, when it entered, was taken, started, finished.
        self.last_timeline: dict[str, np.ndarray] = {}
        self._blocks = blocks or self._default_blocks(spare=int(static_beside))
        GpuEngine._live.add(self)

    # -- setup -----------------------------------------------------------------------------

    def _warm_up(self, state: np.void) -> None:
        """Compile and load every CuPy kernel that a table growth, a graph load or a static
        match's snapshot launches, now, before the persistent kernel runs (gpu-facts rule
        2): growing mid-stream otherwise stops the stream for seconds of NVRTC. Likewise the
        numba decoders that only embeddings mode runs (:func:`.rings.warm_up`)."""
        cp = self._cp
        rings.warm_up()  # and the host's numba decoders of embeddings mode
        pools.warm_up(cp, self._d, state, self.cfg.nclass)
        with self._side:  # load_graph's image fill, two versions of one entry each
            versions = cp.zeros((2, self._d["vers"].shape[1]), np.int32)
            versions[:, V_LEN] = versions[:, V_BLEN] = versions[:, V_TOFF] = 1
            versions[1, V_SLAB] = 1
            fill_entries(cp, cp.zeros((64, 4), np.int32), versions, cp.zeros(2, np.int32),
                         cp.zeros(2, np.int32))  # fmt: skip
            owner = cp.full(4, -1, np.int32)
            owner[cp.asarray(versions[:, V_SLAB])] = cp.arange(2, dtype=np.int32)
        self._side.synchronize()
        self._warm_snapshot()

    def _warm_host_threads(self) -> None:
        """Compile (or load from numba's cache) the parallel admission and encoding now, with
        the argument types an apply passes: compiled cold inside the first apply, the
        lookups alone took 465 ms on the development host."""
        with numba_threads(self._host_threads):
            ids, keys, op = np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int8)
            slots, words = self._ids.slots, np.zeros((0, L.IN_REC.itemsize // 8), np.int64)
            look_up_parallel(keys, keys, slots, ids, ids)
            admit_looked_up(op, keys, keys, ids, ids, slots, self._ext, self._vlab, self._meta,
                            op, ids, ids)  # fmt: skip
            encode_updates_parallel(words, op, ids, ids, ids, keys, keys, ids, ids, self._vlab,
                                    0, np.zeros(0), 0)  # fmt: skip

    def _warm_snapshot(self) -> None:
        """Run _snapshot's gather of the live edges (:func:`.mvg.live_edges`) on the pool and
        vertex tables as they are now, two vertices of one entry each: CuPy compiles its
        kernels for the sizes it meets (a scan over millions of vertices takes more kernels
        than one over two; a pool past 2^31 int32 words, 64-bit indexing). Warmed on tiny
        tables only, the first backfill of a 43M-edge graph compiled for 0.48 s at its
        snapshot, the stream stopped (bench/results/static/labels-1128/: the first service
        process on a fresh machine; later ones found the kernels in CuPy's disk cache).
        Called at construction and whenever a table grows, with the kernel stopped."""
        cp, d = self._cp, self._d
        with self._side:
            head = cp.full(d["head"].shape[0], -1, np.int32)
            head[:2] = cp.arange(2, dtype=np.int32)
            versions = cp.zeros((2, d["vers"].shape[1]), np.int32)
            versions[:, V_LEN] = versions[:, V_BLEN] = versions[:, V_TOFF] = 1
            versions[1, V_SLAB] = 1
            live_edges(cp, head, versions, d["entries"])  # what slabs 0 and 1 hold: unused
        self._side.synchronize()

    def _pin(self, name: str, n: int, dtype: np.dtype | type) -> np.ndarray:
        """Pinned host memory the kernel reads or writes directly (UVA pointer in Ctx)."""
        dtype = np.dtype(dtype)
        mem = self._cp.cuda.alloc_pinned_memory(max(1, n) * dtype.itemsize)
        self._pinned[name] = mem
        arr = np.frombuffer(mem, dtype, n)
        arr[...] = np.zeros(1, dtype)[0] if dtype.names else 0
        return arr

    def _initial_upd(self) -> np.ndarray:
        u = np.zeros(self.cfg.maxu, L.UPD)
        u["tau"] = -1
        u["done"] = -1
        return u.view(np.uint8)

    def _make_ctx(self, in_cap: int, out_cap: int):  # type: ignore[no-untyped-def]
        d = self._d
        ptr = {k: v.data.ptr for k, v in d.items()}
        ptr.update({k: m.ptr for k, m in self._pinned.items()})  # type: ignore[attr-defined]
        ptr.update(
            maxv=self._maxv, nslabs=self._nslabs, maxver=self._maxver,
            gcq_cap=d["gcq"].shape[0], in_cap=in_cap, out_cap=out_cap,
            bump_cap=self._bump_cap,
            hub_bits=ptr["entries"] + self._bump_cap * pools.SLAB_ENTRY_BYTES,
            hub_words=self._hub_words, hub_slots=self._hub_slots,
        )  # fmt: skip
        words = np.array([ptr[name] for name in L.CTX_FIELDS], np.uint64)
        return self._cp.asarray(words)

    def _default_blocks(self, spare: int = 0) -> int:
        """As many co-resident blocks as fit, less ``spare`` block slots an SM."""
        props = self._cp.cuda.runtime.getDeviceProperties(self._cp.cuda.Device().id)
        regs = max(1, int(self._kernel.num_regs))
        per_sm = max(1, min(65536 // (regs * THREADS), 2048 // THREADS) - spare)
        return int(props["multiProcessorCount"]) * per_sm

    def _get_state(self) -> np.ndarray:
        raw = self._d["st"].get(stream=self._side)
        self._side.synchronize()
        return raw.view(self._state_dtype).copy()

    def _put_state(self, st: np.ndarray) -> None:
        self._d["st"].set(st.view(np.uint8), stream=self._side)
        self._side.synchronize()

    # -- graph -----------------------------------------------------------------------------

    def _ensure_vertices(self, n: int) -> None:
        """Room for n vertices in the host tables (the device limit is checked on use)."""
        self._ext = grown(self._ext, n)
        self._vlab = grown(self._vlab, n)
        self._ids.ensure(n)

    def _vertices_in_reach(self, col: CallResult, piece: int) -> None:
        """Vertex tables with room for the new vertices of ``piece`` more updates (at most
        two each). The device's grow only when that bound passes them: first every update
        sent in this call (``col``) completes and its results are read, then the kernel
        stops, the tables double, and it is launched again. Reserving for a whole call
        instead doubled the tables of a 4.8M-vertex graph for an apply of 4.3M updates
        that brought few new vertices (a stop, a copy and a relaunch: 0.63 -> 1.11 s,
        ``bench/results/scale-up/cap-1128/``)."""
        need = int(self._meta[0]) + 2 * piece
        self._ensure_vertices(need)
        if need <= self._maxv:
            return
        self._settle(col)
        self._room_for_vertices(need)
        self._launch()

    def _room_for_vertices(self, need: int) -> None:
        """Device vertex tables for ``need`` vertices: when they hold fewer, their capacity
        doubles until it suffices."""
        cap = self._maxv
        while cap < need:
            cap *= 2
        self._resize(vertices=cap)

    def _resize(self, *, vertices: int = 0, slabs: int = 0, versions: int = 0) -> None:
        """Device tables for this many vertices, slabs and versions where they hold fewer
        (:mod:`.pools`): the kernel stops first, with every sent update applied and every
        result read, and the next apply relaunches it on the new tables."""
        if vertices <= self._maxv and slabs <= self._nslabs and versions <= self._maxver:
            return
        if slabs > pools.MAX_SLABS:
            raise EngineError(_over_offsets(slabs))
        self.stop()
        self._drop_hub_bits()
        if self._loaded:
            self._measure_hubs()
        cp = self._cp
        st = self._get_state()[0]
        what = ""
        try:
            if vertices > self._maxv:
                what = f"the vertex tables from {self._maxv} to {vertices} vertices"
                pools.grow_vertex_tables(cp, self._d, vertices)
                self._maxv = vertices
                log.info("grew %s", what)
            if slabs > self._nslabs:
                gib = slabs * pools.SLAB_BYTES / 2**30
                what = (
                    f"the slab pool from {self._nslabs} to {slabs} slabs "
                    f"({gib:.2f} GiB; {int(st['slabs_in_use'])} in use)"
                )
                pools.grow_slab_pool(cp, self._d, st, self._nslabs, slabs, self.cfg.nclass)
                self._nslabs = slabs
                log.info("grew %s", what)
            if versions > self._maxver:
                what = (
                    f"the version table from {self._maxver} to {versions} versions "
                    f"({int(st['versions_in_use'])} in use)"
                )
                pools.grow_version_table(cp, self._d, st, self._maxver, versions)
                self._maxver = versions
                log.info("grew %s", what)
        except cp.cuda.memory.OutOfMemoryError as exc:
            raise EngineError(
                f"growing {what} needs more device memory than is free "
                f"({cp.cuda.runtime.memGetInfo()[0] / 2**30:.2f} GiB): the graph needs more "
                "than this GPU holds"
            ) from exc
        finally:
            self._ctx = self._make_ctx(self._in.shape[0], self._out.shape[0])
            # The copies and the new Ctx (copied on the null stream) are on the device
            # before the kernel, launched on a non-blocking stream, runs.
            cp.cuda.Stream.null.synchronize()
        self._warm_snapshot()  # for the grown tables' sizes

    def _reserves(self) -> tuple[int, int]:
        """Versions and slabs that the updates sent before the host looks at the pools
        again may take (:mod:`.pools`): a version and a slab for each of up to two new
        vertices an update, for every update that can be sent and not yet completed (the
        input ring's records and the kernel's update slots: the host may run that far
        ahead); a new version for each of the <= 2 x batch_cap vertices one kernel batch
        touches, taken before their old ones are collected; and a new run for each array
        a piece copies, counted as the largest arrays (``_hub_slabs``). A fixed bound, so
        that the host looks only when the pools fill, not whenever it runs ahead."""
        in_flight = 2 * (self._in.shape[0] + self.cfg.maxu)
        return in_flight + 2 * self.cfg.batch_cap, in_flight + self._hub_slabs

    def _measure_hubs(self) -> None:
        """Slabs of the largest arrays one piece may copy: the 4 x _PIECE_MAX largest current
        runs (a piece touches at most 2 x _PIECE_MAX vertices and spans at most two batches).
        Only while the kernel is stopped: device work beside the persistent kernel (its
        allocations) may wait for it forever."""
        assert not self._running
        cls = pools.live_classes(self._cp, self._d["head"][: int(self._meta[0])], self._d["vers"])
        self._hub_slabs = pools.hub_reserve(self._cp, cls, 4 * _PIECE_MAX)

    def _pools_in_reach(self, col: CallResult) -> None:
        """Grow a self-sized pool that is filling up (:mod:`.pools`). When the collector's
        last snapshot and the reserves (:meth:`_reserves`: all the host may have sent ahead
        of the kernel included) are above the high-water mark, wait until every update sent
        has completed and been collected, compact the slab pool if only its bump region
        would make it grow (what is live below the live-water mark; with ``pool_compact``
        also whenever freed runs of the wrong size classes hold much of it), and grow a pool
        if what is then live is still above the live-water mark, or its bump region above
        the high-water mark."""
        s = self._dstat[0]
        rv, rs = self._reserves()
        slabs_seen = max(int(s["slabs_in_use"]), int(s["slab_bump"]))
        if not (
            (self._auto_slabs and pools.worth_a_look(slabs_seen, self._bump_cap, rs))
            or (self._auto_versions
                and pools.worth_a_look(int(s["versions_in_use"]), self._maxver, rv))
        ):  # fmt: skip
            return
        self._pool_looks += 1
        self._settle(col)
        now = self.wait_collected()
        if self._hub_carved:  # the hub bitmaps give the pool's top back first
            self.stop()
            self._drop_hub_bits()
        rv, rs = self._reserves()
        slabs, versions = now["slabs_in_use"], now["versions_in_use"]
        if self._auto_slabs and pools.compact_first(
            slabs, now["slab_bump"], self._nslabs, rs, self._compact
        ):
            now["slab_bump"] = self._compact_slabs()
        grow_slabs = self._auto_slabs and (
            pools.must_grow(slabs, self._nslabs, rs)
            or pools.worth_a_look(now["slab_bump"], self._nslabs, rs)
        )
        self._resize(
            slabs=min(pools.grown_to(self._nslabs, slabs, rs), pools.MAX_SLABS)
            if grow_slabs else 0,
            versions=pools.grown_to(self._maxver, versions, rv)
            if self._auto_versions and pools.must_grow(versions, self._maxver, rv) else 0,
        )  # fmt: skip
        self._launch()

    def _compact_slabs(self) -> int:
        """Pack the slab pool's owned runs at its front (:func:`.pools.compact_slab_pool`),
        with the kernel stopped; returns the new bump pointer. Short of device memory for
        the move's index arrays, the pool stays as it was (growth then decides)."""
        self.stop()
        self._drop_hub_bits()
        st = self._get_state()
        before = int(st["slab_bump"][0])
        try:
            with self._side:
                pools.compact_slab_pool(self._cp, self._d, st[0])
        except self._cp.cuda.memory.OutOfMemoryError:
            log.warning("too little device memory to compact the slab pool; left as it was")
            return before
        self._put_state(st)  # synchronizes the side stream, which moved the runs
        after = int(st["slab_bump"][0])
        self._dstat["slab_bump"] = after
        self._compactions += 1
        log.info("compacted the slab pool: bump pointer %d -> %d of %d slabs", before, after,
                 self._nslabs)  # fmt: skip
        return after

    def load_graph(self, graph: Graph) -> None:
        if self._loaded or self._next_tau > 1:
            raise EngineError("load_graph must come before any other graph change")
        g = intern_graph(graph)  # the CPU engine's numbering rule (dcsm.engine.bulk)
        nv = g.num_vertices
        img = build_image(nv, g.lo, g.hi, g.elab, self.cfg.nclass, start=g.start)
        need_slabs, need_versions = img.used_slabs, len(img.versions)
        if not self._auto_slabs and need_slabs > self._nslabs:
            raise EngineError(too_small("slabs", need_slabs, "pool_slabs", self._nslabs))
        if not self._auto_versions and need_versions > self._maxver:
            raise EngineError(too_small("versions", need_versions, "max_versions",
                                        self._maxver))  # fmt: skip
        self._room_for_vertices(nv)
        self._hub_slabs = pools.hub_reserve(np, img.versions[:, V_CLS], 4 * _PIECE_MAX)
        rv, rs = self._reserves()
        self._resize(
            slabs=max(need_slabs, min(pools.sized(need_slabs, pools.MIN_SLABS, rs),
                                      pools.MAX_SLABS)) if self._auto_slabs else 0,
            versions=pools.sized(need_versions, pools.MIN_VERSIONS, rv) if self._auto_versions
            else 0,
        )  # fmt: skip
        self._ids = g.ids
        self._ensure_vertices(nv)
        self._ext[:nv] = g.ext
        self._vlab[:nv] = g.vlab
        self._meta[0] = nv
        d, s = self._d, self._side
        cp = self._cp
        # The slab image (padded runs: several times the edges) is built on the device from
        # the compact lists, sent a piece at a time to bound the host's memory.
        with s:
            for versions, nbr, elab in img.lists():
                fill_entries(cp, d["entries"], cp.asarray(versions), cp.asarray(nbr),
                             cp.asarray(elab))  # fmt: skip
        d["vers"][: len(img.versions)].set(img.versions, stream=s)
        d["head"][:nv].set(img.head, stream=s)
        with s:  # each image run is owned by its version (read by the self-checks)
            runs = self._cp.asarray(img.versions[:, V_SLAB])
            d["slab_owner"][runs] = self._cp.arange(len(runs), dtype=np.int32)
        d["vlab"][:nv].set(self._vlab[:nv], stream=s)
        d["ext"][:nv].set(self._ext[:nv], stream=s)
        st = self._get_state()
        st["slab_bump"] = img.used_slabs
        st["slabs_in_use"] = img.used_slabs
        st["ver_bump"] = len(img.versions)
        st["versions_in_use"] = len(img.versions)
        self._rehearse_compaction(st[0])
        self._put_state(st)
        # What stats() shows until the collector's first snapshot.
        self._dstat["slabs_in_use"] = img.used_slabs
        self._dstat["slab_bump"] = img.used_slabs
        self._dstat["versions_in_use"] = len(img.versions)
        self._loaded = True

    def _rehearse_compaction(self, st: np.void) -> None:
        """Compact the image just loaded: its runs are packed already, so nothing moves, but
        CuPy compiles its kernels for the sizes it meets (scans over millions of versions
        take kernels that warm_up's tiny tables do not), and a stream's first compaction
        would compile them with the kernel stopped: the first 43M insertion of a fresh
        machine ran at 1.05M updates/s against 6.2-8.8M/s after, five kernels compiled in
        its timed apply (bench/results/gpu/session22/, call 2). Short of device memory for
        the move's index arrays it is skipped."""
        try:
            with self._side:
                pools.compact_slab_pool(self._cp, self._d, st)
        except self._cp.cuda.memory.OutOfMemoryError:
            log.warning("too little device memory to rehearse a compaction at load")
        self._side.synchronize()

    def export_graph(self) -> Graph:
        """The current graph (a checkpoint's): its live edges gathered on the device with
        the kernel stopped, so 12 bytes an edge cross to the host, never the slab pool."""
        self._drain_idle()
        nv = int(self._meta[0])
        s = self._side
        a, b, lab = (x.get(stream=s) for x in self._device_edges(nv))
        return Graph(
            vertex_ids=self._ext[:nv].copy(), vertex_labels=self._vlab[:nv].copy(),
            src=self._ext[a], dst=self._ext[b], edge_labels=lab,
        )  # fmt: skip

    def _device_edges(self, nv: int) -> tuple[Any, Any, Any]:
        """Current edges in internal ids (a < b, label) as device arrays on the side stream,
        with the kernel stopped (cupy's kernels do not run beside it)."""
        self.stop()
        d, s = self._d, self._side
        nver = int(self._get_state()["ver_bump"][0])
        with s:
            return live_edges(self._cp, d["head"][:nv], d["vers"][:nver], d["entries"])

    def _snapshot(self) -> DeviceCsr:
        """The current graph as a device CSR, with the persistent kernel stopped (the graph
        must not move while it is gathered, and csr_from_edges' sort is not run beside the
        kernel). The live edges are gathered on the device, on the matcher's stream: the
        pool (gigabytes at tens of millions of edges) never crosses to the host."""
        self.stop()
        nv = int(self._meta[0])
        a, b, lab = self._device_edges(nv)
        return self._static.csr_from_edges(nv, a, b, lab, self._vlab[:nv], self._ext[:nv])

    def static_snapshot(self) -> DeviceSnapshot | None:
        """With ``static_beside``: the current graph on the device, for a backfill that
        matches it on another thread while this engine goes on applying updates; None
        otherwise (static matching then runs here, with the kernel stopped)."""
        if self._beside is None:
            return None
        csr = self._snapshot()
        matcher, lock = self._beside
        snapshot = DeviceSnapshot(matcher, lock, csr, self._ext[: csr.nv].copy())
        # Back up before the backfill's first launch, so that no static grid holds the block
        # slots the kernel's blocks need. A precaution: the 0.3-0.7 s stops at a first
        # backfill in bench/results/static/labels-1128/ were CuPy compiling the snapshot's
        # kernels in a fresh process (branch snapshot-warm), with or without it.
        self._launch()
        return snapshot

    def count_static(self, pattern: Pattern) -> int:
        return self._static.count(self._snapshot(), pattern)

    def match_static(self, pattern: Pattern) -> np.ndarray:
        rows = self._static.match(self._snapshot(), pattern)
        return self._ext[rows]

    # -- queries ---------------------------------------------------------------------------

    def register(
        self,
        qid: int,
        pattern: Pattern,
        *,
        from_seq: int,
        count_only: bool = False,
        max_deltas: int | None = None,
    ) -> None:
        """``max_deltas``: the kernel has no cap, so every match is still materialised (on
        the device and on the host); ``apply`` then keeps at most ``max_deltas`` rows per
        update and counts the rest in ``BatchResult.overflow`` (``cap_deltas``, on the host
        result). It bounds what the service ships, not the engine's work or memory.

        A counting query that can use hub bitmaps (``hub_bitmaps``), registered while the
        kernel runs without them, stops it: the next apply launches it with them."""
        self._slots.check_room()
        plan = self.queries.register(qid, pattern, from_seq, count_only, max_deltas)
        if plan.num_plans > self.cfg.pmax:
            self.queries.unregister(qid, from_seq)
            raise EngineError(
                f"pattern needs {plan.num_plans} plans (two per edge, one per edge orbit "
                f"in count mode); the GPU engine takes at most {self.cfg.pmax}"
            )
        if count_only and uses_hub_bits(plan):
            if self._running and self._hub_bits_allowed and not self._hub_words:
                try:
                    self.stop()  # every update sent is applied and read; _launch sizes them
                except EngineError:
                    self.queries.unregister(qid, from_seq)
                    raise
            self._hub_qids.add(qid)
        slot = self._slots.take(qid, count_only, pattern.num_vertices)
        blob = L.plan_blob(plan).ravel()
        start = slot * self.cfg.pmax * L.PLAN_INTS
        self._d["plans"][start : start + blob.size].set(blob, stream=self._side)
        self._side.synchronize()
        if max_deltas is not None and not count_only:
            self._caps[qid] = max_deltas  # kept after unregister: qids are never reused
        self._slots.queue_control(from_seq, L.REC_REGISTER, slot, int(count_only),
                                  plan.num_plans)  # fmt: skip

    def unregister(self, qid: int, *, from_seq: int) -> None:
        self.queries.unregister(qid, from_seq)
        self._hub_qids.discard(qid)
        self._slots.queue_control(from_seq, L.REC_UNREGISTER, self._slots.release(qid), 0, 0)

    # -- running ---------------------------------------------------------------------------

    @property
    def _bump_cap(self) -> int:
        """Where the kernel's bump region ends: the slab pool less the hub bitmaps' top."""
        return self._nslabs - self._hub_carved

    @property
    def _hub_bits_allowed(self) -> bool:
        """Whether the engine carves hub bitmaps at all: asked for (``hub_bitmaps`` not 0)
        and a self-sized slab pool (one of a given size never looks, so it could not give
        them back)."""
        return self._hub_request != 0 and self._auto_slabs

    def _hub_bits_in_reach(self, slab_bump: int) -> None:
        """Hub bitmaps (executor.cuh, hub_bits_for) for the graph as it is, while the kernel
        is stopped and a query that can use them is registered (``_hub_qids``): when there
        are none yet or the graph's vertices have outgrown them, zeroed ones replace them
        (``hub_bitmaps``), in the slab pool's top, within the free room
        :func:`.pools.hub_room` leaves above the pool's bump pointer ``slab_bump``
        (``_hub_bits_allowed``: a look gives them back before the graph needs their
        slabs)."""
        if not self._hub_qids or not self._hub_bits_allowed:
            return
        room = pools.hub_room(self._nslabs, slab_bump, self._reserves()[1])
        words, slots = pools.hub_bitmaps(
            int(self._meta[0]), self._blocks * THREADS // 32, self._hub_request,
            room * pools.SLAB_ENTRY_BYTES,
        )  # fmt: skip
        if words > self._hub_words or slots > self._hub_slots:
            self._set_hub_bits(words, slots)

    def _drop_hub_bits(self) -> None:
        """Give the hub bitmaps' slabs back to the pool (the kernel stopped), so that the
        graph's runs, growing or compacted, have them; the next launch carves them again."""
        if self._hub_carved:
            self._set_hub_bits(0, 0)

    def _set_hub_bits(self, words: int, slots: int) -> None:
        """Replace the hub bitmaps (the kernel stopped) by ``slots`` zeroed ones of
        ``words`` words, carved from the slab pool's top: the kernel's bump region then ends
        below them (Ctx.bump_cap)."""
        cp = self._cp
        carved = pools.hub_slabs(words, slots)
        top = (self._nslabs - carved) * 32
        self._d["entries"][top : self._nslabs * 32] = 0
        self._d["hub_state"] = cp.zeros(max(1, slots), np.uint64)
        self._d["hub_key"] = cp.zeros(2 * max(1, slots), np.uint64)
        self._hub_words, self._hub_slots, self._hub_carved = words, slots, carved
        self._ctx = self._make_ctx(self._in.shape[0], self._out.shape[0])
        cp.cuda.Stream.null.synchronize()  # zeroed and copied before the kernel runs

    def _launch(self) -> None:
        if self._running:
            return
        st = self._get_state()
        self._hub_bits_in_reach(int(st["slab_bump"][0]))
        st["stop"] = 0
        st["item_ticket"] = st["item_reserve"]  # tickets of warps left waiting at the stop
        self._put_state(st)
        self._dstat["running"] = 0
        with self._stream:
            self._kernel((self._blocks,), (THREADS,), (self._ctx,))
        self._clock.at_launch(self._await_start(self._dstat["running"]))
        self._running = True

    def _await_start(self, running: np.ndarray, limit_s: float = 30.0) -> int:
        """Wait for the launched kernel's start flag; return the offset from its clock
        (%globaltimer, written just before the flag) to the host's (``time.time_ns``).
        The host reads its clock as soon as it sees the flag, so the offset is late by the
        flag's trip to host memory and one pass of a tight loop (a stream query, ~us, runs
        only every 4,096 passes); the running kernel's answers to clock pings replace it
        (:mod:`.device_clock`)."""
        deadline = time.monotonic() + limit_s
        spins = 0
        while running[0] != 1:
            spins += 1
            if spins & 4095 == 0:
                if self._stream.done:
                    raise EngineError("the persistent kernel exited at launch")
                if time.monotonic() > deadline:
                    raise EngineError(f"the persistent kernel did not start within {limit_s:g} s")
        now = time.time_ns()
        return now - int(self._dstat["clock_ns"][0])

    def stop(self, limit_s: float = 60.0) -> None:
        """Drain, stop the kernel and keep the graph (the next apply relaunches it)."""
        if not self._running:
            return
        self._ring.write(L.STOP_RECORD, self._waiter(None))
        self._wait_exit(limit_s)

    def _wait_exit(self, limit_s: float = 60.0) -> None:
        watch = _Watchdog(self, limit_s)
        while not self._stream.done:
            self._pump(None)
            watch.check()
        self._stream.synchronize()
        self._running = False
        self._check_error()

    def close(self) -> None:
        GpuEngine._live.discard(self)
        if self._running:
            self.stop()

    def memory_bytes(self) -> int:
        """Device memory allocated for the graph, rings and scratch, plus pinned host rings."""
        device = sum(int(a.nbytes) for a in self._d.values())
        rings = (self._in, self._hctl, self._dstat, self._out, self._done, self._done_counts)
        return device + sum(int(a.nbytes) for a in rings)

    def stats(self) -> dict[str, int]:
        """Pool usage and progress counters as last written by the collector."""
        s = self._dstat[0]
        out = {
            k: int(s[k])
            for k in (
                "slabs_in_use",
                "slab_bump",
                "versions_in_use",
                "gc_ptr",
                "completed",
                "gc_freed",
            )
        }
        out |= {
            "gc_queue": int(s["gc_queue"]),
            "donated": int(s["donated"]),
            "pool_slabs": self._nslabs,
            "pool_compactions": self._compactions,
            "pool_looks": self._pool_looks,
            "max_versions": self._maxver,
            "max_vertices": self._maxv,
            "hub_slots": self._hub_slots,  # hub bitmaps the executors share
            "hub_carved_slabs": self._hub_carved,  # the pool's top slabs they take
        }
        return out

    def clock_report(self) -> dict[str, float | None]:
        """How the device's times are mapped to the host's clock (:mod:`.device_clock`): the
        offset in use and half the width of its bounds (us), the answers kept, and the drift
        between the clocks over them (ppm; None before two answers a second apart)."""
        c = self._clock
        return {"offset_us": c.offset_ns / 1e3, "slack_us": c.slack_ns / 1e3,
                "answers": len(c.samples), "drift_ppm": c.drift_ppm()}  # fmt: skip

    def stall_report(self) -> str:
        """The kernel's counters now, read beside the running kernel: where a stall is
        (the job in progress, the rings, the pools and their free rings per size class)."""
        return diagnostics.stall_report(self._get_state()[0], self._ring.tail, self._nslabs,
                                        self._maxver, self.cfg.nclass)  # fmt: skip

    def updater_profile(self) -> dict[str, float]:
        """Mean microseconds per batch the updater spent in each phase and step since the
        engine was created, and the short path's figures (:func:`.diagnostics.updater_profile`)."""
        return diagnostics.updater_profile(self._get_state()[0])

    def wait_collected(self, timeout_s: float = 10.0) -> dict[str, int]:
        """Wait until the collector has passed every completed update and emptied its queue
        (all garbage returned to the pools); returns the stats then."""
        deadline = time.monotonic() + timeout_s
        while self._running and time.monotonic() < deadline:
            s = self.stats()
            if s["gc_ptr"] >= self._next_tau and s["gc_queue"] == 0:
                break
            time.sleep(0.0005)
        return self.stats()

    def _check_error(self) -> None:
        err = int(self._dstat["error"][0])
        if err:
            s = self._dstat[0]
            raise EngineStopped(
                f"GPU engine stopped: {L.ERRORS.get(err, f'error {err}')} ({s['slabs_in_use']} "
                f"of {self._bump_cap} slabs"
                + (f" ({self._hub_carved} more held hub bitmaps)" if self._hub_carved else "")
                + f" and {s['versions_in_use']} of {self._maxver} versions in use)"
            )

    def _raise_check_failures(self) -> None:
        st = self._get_state()[0]
        failed = [
            f"{int(st['check_count'][c])} x {what}, first {st['check_first'][c].tolist()}"
            for c, what in L.CHECKS.items()
            if st["check_count"][c]
        ]
        if failed:
            raise EngineError("GPU self-checks failed: " + "; ".join(failed))

    def _drain_idle(self) -> None:
        if self._running:
            self.stop()

    # -- applying updates ------------------------------------------------------------------

    def apply(self, batch: UpdateBatch) -> BatchResult:
        self._check_batch(batch)
        if self._fixed_batch:
            return cap_deltas(self._apply_fixed(batch, paced=False), self._caps)
        return cap_deltas(self._apply_stream(batch, len(batch)), self._caps)

    def apply_paced(self, batch: UpdateBatch) -> BatchResult:
        """Like ``apply``, but each update enters the engine no earlier than its arrival time
        ``batch.ts`` (epoch seconds): replays a stream at its recorded rate, so response
        time (arrival -> start of matching) can be measured."""
        self._check_batch(batch)
        if self._fixed_batch:
            return cap_deltas(self._apply_fixed(batch, paced=True), self._caps)
        return cap_deltas(self._apply_stream(batch, len(batch), paced=True), self._caps)

    def _apply_fixed(self, batch: UpdateBatch, paced: bool) -> BatchResult:
        parts = []
        b = self._fixed_batch or 1
        if not len(batch):
            return self._apply_stream(batch, 0)
        for i in range(0, len(batch), b):
            part = batch.slice(i, i + b)
            if paced:  # a fixed batch starts once its last update has arrived
                while time.time() < part.ts[-1]:
                    pass
            # One launch per batch, ended by STOP: no overlap with the next batch.
            parts.append(self._apply_stream(part, len(part), then_stop=True))
        return concat_results(parts)

    def _apply_stream(
        self, batch: UpdateBatch, n: int, then_stop: bool = False, paced: bool = False
    ) -> BatchResult:
        width = self.queries.max_vertices()  # before queries expire at the end of the batch
        # Admission writes every entry of these, a piece at a time: np.empty, since zeroing
        # them would be work done before the first piece is sent.
        outcome = np.empty(n, np.int8)
        a = np.empty(n, np.int32)
        b = np.empty(n, np.int32)
        self._launch()
        width = max(width, self._slots.width())
        col = CallResult(batch, self._next_tau, width, self._slots.qid)
        # Admit, encode and send the updates a piece at a time, so the kernel starts on the
        # first piece while the host prepares the next.
        # Paced: a piece is admitted only once the last one is written, as its records fall
        # due; a larger one would leave the stream's next records waiting on its admission.
        bounds = piece_bounds(n, _PIECE) if paced else piece_bounds(n, piece_size(n), _PIECE_FIRST)
        with numba_threads(self._host_threads):  # the pieces' parallel calls
            for lo, hi in bounds:
                self._vertices_in_reach(col, hi - lo)
                self._pools_in_reach(col)
                known = int(self._meta[0])  # vertices the device was sent before this piece
                if self._host_threads:
                    look_up_parallel(batch.u[lo:hi], batch.v[lo:hi], self._ids.slots, a[lo:hi],
                                     b[lo:hi])  # fmt: skip
                admitted = (admit_looked_up if self._host_threads else admit)(
                    batch.op[lo:hi], batch.u[lo:hi], batch.v[lo:hi], batch.u_label[lo:hi],
                    batch.v_label[lo:hi], self._ids.slots, self._ext, self._vlab, self._meta,
                    outcome[lo:hi], a[lo:hi], b[lo:hi],
                )  # fmt: skip
                # The last piece's copy into in_mirror has had this admission's time to finish:
                # publish its tail now rather than after this piece is written.
                self._ring.flush()
                if not paced and self._slots.due_by(int(batch.seq[lo])):
                    # Control records that go before the piece's first update (a query
                    # registered from it): written ahead, so that the piece itself may still go
                    # straight into the ring.
                    lead = self._slots.with_controls(
                        np.empty(0, L.IN_REC), batch.seq[lo : lo + 1], self._next_tau
                    )
                    self._ring.write(lead, self._waiter(col))
                whole = admitted == hi - lo
                controls_within = self._slots.due_by(int(batch.seq[hi - 1]))
                room = None
                if whole and not paced and not controls_within:
                    room = self._ring.room(hi - lo)
                if room is not None:
                    # The piece's records are written into the ring itself (no array between,
                    # no copy): a whole piece, no control record due within it, not paced.
                    first, rest = room
                    self._encode(first, batch, slice(lo, lo + len(first)), a, b, known)
                    if len(rest):
                        self._encode(rest, batch, slice(lo + len(first), hi), a, b, known)
                    self._next_tau += hi - lo
                    col.add_sent(np.arange(lo, hi))
                    self._ring.commit(hi - lo)
                else:
                    sent = lo + np.nonzero(outcome[lo:hi] == ADMITTED)[0]
                    recs = np.empty(admitted, L.IN_REC)
                    which = slice(lo, hi) if whole else sent
                    self._encode(as_words(recs), batch, which, a, b, known)
                    tau0 = self._next_tau
                    self._next_tau += admitted
                    col.add_sent(sent)
                    if controls_within:
                        recs = self._slots.with_controls(recs, batch.seq[sent], tau0)
                    # Control records carry arrival 0 and are due at once.
                    due = np.maximum.accumulate(recs["arrival_ns"]) if paced else None
                    written = self._ring.write(recs, self._waiter(col), due)
                    if written is not None:
                        col.add_entered(written[recs["kind"] <= L.REC_DELETE])
                if _READ_AHEAD and self._next_tau - self._done_next > self.cfg.maxu // _READ_AHEAD:
                    self._pump(col)
        if then_stop:
            self._ring.write(L.STOP_RECORD, self._waiter(col))
        self._settle(col)
        if then_stop:
            self._wait_exit()
        if self.cfg.check:
            self._raise_check_failures()
        if n:
            self.queries.advance(int(batch.seq[-1]))
        self.last_timeline = col.timeline()
        return col.result(outcome, self._ext)

    def _settle(self, col: CallResult) -> None:
        """Pump until every update sent so far has completed and its records are read."""
        watch = _Watchdog(self)
        while self._done_next < self._next_tau or self._got_records < self._expect_records:
            self._pump(col)
            watch.check()

    def _encode(
        self, out: np.ndarray, batch: UpdateBatch, sent: np.ndarray | slice, a: np.ndarray,
        b: np.ndarray, known: int,
    ) -> None:  # fmt: skip
        """Write the input records of the admitted updates ``sent`` (internal ids a, b) as
        the int64 word rows ``out`` (the ring's own slots, or a records array's): ``sent``
        is a slice when a piece is admitted whole (views, no gathers); vertices below
        ``known`` are the device's already (their labels go as -1)."""
        (encode_updates_parallel if self._host_threads else encode_updates)(
            out, batch.op[sent], a[sent], b[sent], batch.label[sent], batch.u[sent],
            batch.v[sent], batch.u_label[sent], batch.v_label[sent], self._vlab, known,
            batch.ts[sent], time.time_ns(),
        )  # fmt: skip

    def _waiter(self, col: CallResult | None) -> Callable[[], None]:
        """What a write into a full input ring does meanwhile: pump the output rings (the
        kernel may be waiting for room there), and raise on a kernel that stopped moving."""
        watch = _Watchdog(self)

        def wait() -> None:
            self._pump(col)
            watch.check()

        return wait

    def _pump(self, col: CallResult | None) -> None:
        """Publish finished input, read completion records, then match records, and hand
        both to the collector."""
        self._check_error()
        self._ring.flush()
        self._clock.tend()
        t = self._done_next
        limit = t + min(self.cfg.maxu, self._next_tau - t, 1 << 14)
        if limit > t:
            live = self._slots.live()
            sink = col if col is not None else self._no_collector
            m, expect, row_i, row_col, row_n = drain_done(
                *self._done_fields, self._done_counts, t, limit, live,
                self._slots.count_only[live],
                sink.tau0, sink.nsent, self._clock.offset_ns, sink.dev_outcome, sink.taken,
                sink.started, sink.finished,
            )  # fmt: skip
            self._expect_records += expect
            if len(row_i):
                sink.add_count_rows(row_i, self._slots.qid[live[row_col]], row_n)
            if m:
                if col is not None:
                    col.add_seen(t, m, time.time())
                self._done_next += m
                self._hctl["done_consumed"] = self._done_next - 1
        rows = self._drain_rows if col is None else col.rows
        tau0 = 0 if col is None else col.tau0
        # Room for every record the completed updates announced, in one step when possible.
        want = _ROWS if col is None else max(_ROWS, self._expect_records - self._got_records)
        while True:
            self._out_head, k = rows.read(self._out, self._out_head, self._slots.nverts, tau0,
                                          want)  # fmt: skip
            self._hctl["out_consumed"] = self._out_head
            self._got_records += k
            if col is None:
                rows.clear()
            if k < want:
                break
        self._free_finished_slots()

    def _free_finished_slots(self) -> None:
        """Recycle slots of unregistered queries once every update they saw has completed and
        all of their match records have been read (records are decoded by slot)."""
        if self._got_records >= self._expect_records:
            self._slots.free_finished(self._done_next - 1)


def _stop_all_at_exit() -> None:
    """A persistent kernel still running at interpreter exit would block the CUDA context
    teardown forever: stop every live engine, and if one cannot stop, leave at once."""
    for eng in list(GpuEngine._live):
        try:
            eng.stop(limit_s=10.0)
        except Exception as exc:  # noqa: BLE001 - last resort at exit
            print(f"dcsm: GPU kernel did not stop ({exc}); exiting without CUDA teardown",
                  file=sys.stderr)  # fmt: skip
            sys.stderr.flush()
            os._exit(3)


atexit.register(_stop_all_at_exit)


class _Watchdog:
    """Raises when the kernel makes no visible progress for ``limit_s`` seconds (a hang
    must surface as an error, not as a silent stall of the service)."""

    def __init__(self, eng: GpuEngine, limit_s: float = 60.0) -> None:
        self.eng = eng
        self.limit_s = limit_s
        self.mark = self._progress()
        self.since = time.monotonic()

    def _progress(self) -> tuple[int, int, int]:
        e = self.eng
        return (e._done_next, e._out_head, int(e._dstat["in_consumed"][0]))

    def check(self) -> None:
        now = self._progress()
        if now != self.mark:
            self.mark, self.since = now, time.monotonic()
        elif time.monotonic() - self.since > self.limit_s:
            d = self.eng._dstat[0]
            raise EngineError(
                f"GPU engine made no progress for {self.limit_s:.0f} s (consumed "
                f"{int(d['in_consumed'])} records, {int(d['completed'])} updates completed; "
                f"{self.eng.stall_report()})"
            )
