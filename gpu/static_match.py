"""Static subgraph matching on the GPU: count or enumerate every match of a pattern in a CSR
snapshot of the data graph (backfill on registration, ``dcsm match --backend gpu``).

Idea
----
Exactly the CPU engine's static matching (:func:`dcsm.engine.cpu_kernels.static_matches`):
the pattern's :func:`~dcsm.engine.plan.static_plan` runs from every ordered data edge with
the pattern's symmetry broken, so it finds one embedding of each automorphism orbit (one
subgraph's representative for a ``distinct`` pattern); each found embedding stands for |Aut|
(the plan's ``weight``), written as the plan's ``images``. The symmetry constraints compare
external ids for ``distinct`` patterns (the CPU's representative) and the degree order
otherwise. The snapshot numbers its vertices by label, then degree
(:func:`csr_from_edges`), so the degree order is its ids within a label, and each label's
neighbours are one run of a list: a level scans only the run of its vertex's label, cut
further by its symmetry constraints (binary searches); the constrained vertices are the
low-degree ones, and a hub's neighbours above it are few. The kernels
(``static_match.cu``, beside this file) walk the plan depth first, a warp at a time,
evaluating 32 candidates a window, one per lane, as the GPU static matchers gMatch and EGSM
do. Enumerating, warps claim start edges from one counter; counting, they claim units of
work (``static_units``: the windows of each start edge's level 2), so a hub's start edge is
shared by many warps. The graph never
changes during a call, so there are no versions, no timestamps and no work items, unlike the
persistent kernel's executor.

Counting is one launch. It walks only the pattern's core: trailing pendant vertices (one
edge back, labels that keep them apart) are counted as the product of their candidate
ranges, and a pattern with pendants starts on the edge that leaves the most of them last
(:meth:`DevicePlan.for_graph`).

Enumerating is bounded: a first launch counts the matches of each start edge of a segment
of ``segment_starts`` start edges, the host cuts the segment into waves of at most
``chunk_rows`` rows (a start edge with more matches is split by rank, see the .cu header),
and each wave fills one reused buffer that is copied out and yielded.

=========================  ===============================================================
name here                  meaning
=========================  ===============================================================
start edge t               entry t of ``nbr``: the ordered data edge (row of t, nbr[t])
``per_start``              matches of each start edge of a segment (uint64)
wave                       start edges [ta, tb] of a segment whose matches, less the
                           ``skip`` first of ta and past the ``take`` first of tb, fill
                           one buffer
=========================  ===============================================================

Every CUDA module this file uses loads in :class:`StaticMatcher`'s constructor (gpu-facts
rule 2: nothing may load while the persistent kernel runs): the kernels are launched once on
a small graph there, and a count uses no CuPy operation that launches a kernel of its own
(only allocation, memset and copies; the units' prefix sum is the .cu's own).
:func:`csr_from_edges` sorts with ``cupy.argsort`` (Thrust), warmed in the constructor on
2^17 keys.

Beside the persistent kernel. Its 2 blocks an SM leave 24,576 registers; the matcher beside
it caps its count kernels at 32 registers (:data:`BESIDE_COUNT_MIN_BLOCKS`), so that three
static blocks fit there, with 2.5 KB of shared memory each. Measured on an
H200 (2026-11-27, ``bench/debug/static_beside_kernel.py``, ``bench/results/static/
beside-1127/``): every step of a count ran at once beside the running kernel except
``cupy.cumsum``, which waited until the kernel stopped; the count's prefix sum is now its
own kernels. Counting and enumerating a snapshot ran beside the kernel in the GPU test of
:mod:`.device_snapshot` (with a block slot an SM left free: a static block starts only
where one fits). :func:`csr_from_edges` sorts with ``cupy.argsort`` and is only called with
the kernel stopped (``GpuEngine._snapshot``).

References: gMatch (the GPU matcher whose test suite supplies oracle-github; warp-level
candidate windows); Sun & Luo, "Efficient GPU-accelerated subgraph matching", SIGMOD 2023
(EGSM); Grochow & Kellis, RECOMB 2007 (the symmetry masks, built in plan.py).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from dcsm.engine.plan import QueryPlan, plan_query, static_plan
from dcsm.engine.snapshot import past_64_in_a_slice
from dcsm.errors import EngineError
from dcsm.model import ANY_LABEL, MAX_PATTERN_VERTICES, Graph, Pattern

from .label_count import BESIDE_THREADS, LabelCounter, counts_on_device
from .label_count import THREADS as LABEL_THREADS
from .loader import kernel_source

SOURCE = Path(__file__).with_name("static_match.cu")
K = MAX_PATTERN_VERTICES
THREADS = 256  # per block: 8 warps
SCAN_BLOCKS = 1024  # most blocks of the units' prefix sum (one chunk of entries each)
SP_ELAB, SP_VLABEL = 1, 2  # the .cu's plan blob (SP_*): where its fields are
SP_BNCNT = SP_VLABEL + K
SP_SYMLT = SP_BNCNT + K
SP_SYMGT = SP_SYMLT + K
SP_BNPOS = SP_SYMGT + 2 * K
SP_BNELAB = SP_BNPOS + K * K
SP_ORDER = SP_BNELAB + K * K
SP_TAIL = SP_ORDER + 1 + 2 * K
SP_INTS = SP_TAIL + 1
ORDER_EXT, ORDER_DEGREE = 0, 1  # what the symmetry constraints compare (SP_ORDER)
CTL_CLAIM, CTL_TOTAL, CTL_ROWS, CTL_ERROR, CTL_TOTAL_HI = range(5)
ERR_COUNT_OVERFLOW = 8  # the .cu's ERR_COUNT_OVERFLOW (an EngineError, not a ValueError)
ERRORS = {
    1: "a wave's rows did not fit its buffer",
    2: "an edge with lo >= hi or an endpoint outside [0, nv)",
    4: "an edge given twice",
    ERR_COUNT_OVERFLOW: (
        "the number of matches passed 2^128 - 1 (or one start edge's 2^64 - 1 when enumerating)"
    ),
}
NO_LIMIT = np.uint64(2**64 - 1)
_MAX_GRID = 1 << 16  # blocks of the grid-stride CSR kernels


# The count kernels' minimum of blocks an SM (COUNT_MIN_BLOCKS, capping their registers) for
# the matcher beside the persistent kernel, whose 2 blocks an SM of 80 registers leave 24,576
# of 65,536: NVRTC (CUDA 13, sm_90) gives static_count 64 registers (16,384 a block of 256),
# so one static block an SM fitted beside it; at 40 (6 blocks) two fit, at 32 (8) three.
# The 5-vertex-path backfill of bench/backfill_beside.py on one H200, 2026-11-28: 29.7 s
# uncapped, 16.5 s at 6, 12.5 s at 8, the other query's p99 level
# (bench/results/backfill/README.md). `dcsm match` and inline backfills keep the uncapped
# build, the one the static benchmarks measured.
BESIDE_COUNT_MIN_BLOCKS = 8


@functools.cache
def load_module(threads: int = THREADS, defines: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    """The compiled kernel module (CuPy caches it by source text and options), with the
    knobs at the top of the source set by ``defines`` ("-DNAME=VALUE" options)."""
    import cupy as cp

    # --device-int128: the counts are unsigned __int128 (NVRTC needs it asked for).
    # $DCSM_STATIC_DEFINES: further -D options, for A/B runs; a knob named there wins.
    extra = tuple(os.environ.get("DCSM_STATIC_DEFINES", "").split())
    named = {d.split("=")[0] for d in extra}
    ours = tuple(d for d in defines if d.split("=")[0] not in named)
    options = (
        "-std=c++17",
        "--device-int128",
        f"-DKMAX={K}",
        f"-DTHREADS={threads}",
        *ours,
        *extra,
    )
    return cp.RawModule(code=kernel_source(SOURCE), options=options)


@dataclass(frozen=True)
class DevicePlan:
    """What the matching kernels run: plan 0 of a :class:`QueryPlan`.

    Attributes:
        blob: int32 (SP_INTS,); the .cu's plan blob (order, labels, constraints, SP_ORDER).
        weight: embeddings each found match stands for.
        images: int32 (weight, n); row k turns a found match into its k-th embedding
            (``row[x] = found[images[k, x]]``), row 0 the identity.
        starts: for counting a pattern with pendants, the blob of every start edge's plan
            (the same constraints, weight and order; :meth:`for_graph` picks one).
    """

    blob: np.ndarray
    weight: int
    images: np.ndarray
    starts: tuple[np.ndarray, ...] = ()
    _graph_blobs: dict[tuple[int | None, bool], np.ndarray] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def n(self) -> int:
        return int(self.blob[0])

    def for_graph(self, elab_one: int | None, count: bool) -> np.ndarray:
        """The blob for one snapshot: where every edge has label ``elab_one``, the plan's
        edges of that label are edges of any label (the kernels then read no edge label).
        When ``count``ing, SP_TAIL is the first of the last steps that are counted as a
        product instead of walked (:func:`tail_start`), and of the plans in ``starts`` (one
        a start edge, when the pattern has pendants) the one with the most such steps runs,
        the first of equals. Computed once per label and purpose (read-only)."""
        key = (elab_one, count)
        if key not in self._graph_blobs:
            if count:
                lifted = [_lift_edge_label(b, elab_one) for b in self.starts or (self.blob,)]
                tails = [tail_start(b) for b in lifted]
                blob = lifted[int(np.argmin(tails))]  # the first of equals
                blob[SP_TAIL] = min(tails)
            else:
                blob = _lift_edge_label(self.blob, elab_one)
                blob[SP_TAIL] = self.n
            blob.flags.writeable = False
            self._graph_blobs[key] = blob
        return self._graph_blobs[key]


def _lift_edge_label(blob: np.ndarray, elab_one: int | None) -> np.ndarray:
    """A copy of ``blob`` whose edges of label ``elab_one`` take any label."""
    blob = blob.copy()
    if elab_one is not None:
        for at in (slice(SP_ELAB, SP_ELAB + 1), slice(SP_BNELAB, SP_BNELAB + K * K)):
            part = blob[at]
            part[part == elab_one] = ANY_LABEL
    return blob


def tail_start(blob: np.ndarray) -> int:
    """The first step t >= 2 of the plan blob such that the steps [t, n) can be counted as
    the product of their candidate counts (the .cu's tail_product), n if there is none:
    each has one backward neighbour, matched before t, joined by an edge of any label;
    symmetry constraints only against steps before t (on the degree order, where they
    narrow a range); and, when there are several, fixed vertex labels all different, so no
    two can take the same vertex. Then a match of steps [0, t) has exactly that many
    extensions."""
    n = int(blob[0])
    bn_cnt = blob[SP_BNCNT : SP_BNCNT + n]
    bn_first = blob[SP_BNPOS : SP_BNPOS + K * K : K][:n]
    bn_elab = blob[SP_BNELAB : SP_BNELAB + K * K : K][:n]
    vlabel = blob[SP_VLABEL : SP_VLABEL + n]
    sym = blob[SP_SYMLT : SP_SYMLT + n] | blob[SP_SYMGT : SP_SYMGT + n]
    degree_order = int(blob[SP_ORDER]) == ORDER_DEGREE
    for t in range(2, n):
        steps = range(t, n)
        if not all(bn_cnt[i] == 1 and bn_first[i] < t and bn_elab[i] == ANY_LABEL for i in steps):
            continue
        if any(sym[i] and (not degree_order or sym[i] >> t) for i in steps):
            continue
        labels = vlabel[t:]
        if n - t > 1 and (ANY_LABEL in labels or len(set(labels.tolist())) < n - t):
            continue
        return t
    return n


# Device plans of patterns by shape, labels and distinct (at most _PLANS_MAX, then cleared).
_PLANS: dict[tuple, DevicePlan] = {}
_PLANS_MAX = 256


def device_plan(plan: QueryPlan | Pattern, count: bool = False) -> DevicePlan:
    """Plan 0 of ``plan`` (a pattern: its :func:`static_plan`) for the kernels; ``count``:
    for counting only.

    An embeddings plan whose symmetry is broken (plan 0 has constraints) finds one match
    per orbit: its ``weight`` and ``images`` apply and the constraints compare the degree
    order. A ``distinct`` pattern's constraints compare external ids, so that it writes the
    CPU's representative of each subgraph, but the degree order when only counting (any
    order keeps one embedding a subgraph). A plan without constraints (``plan_query``,
    ``orbit_plans``) finds every match once; its ``weight`` means nothing here."""
    if isinstance(plan, Pattern):
        key = (plan.shape_key, plan.distinct, count)
        if key not in _PLANS:  # a 6-clique's plan (720 images) takes ~10 ms to build
            if len(_PLANS) >= _PLANS_MAX:
                _PLANS.clear()
            dp = device_plan(static_plan(plan), count)
            if count and plan.num_vertices > 2 and 1 in np.bincount(plan.edges.ravel()):
                every = plan_query(plan, break_symmetry=True)  # pendants: try every start
                order = int(dp.blob[SP_ORDER])
                blobs = (plan_blob(every, order, p) for p in range(every.num_plans))
                dp = replace(dp, starts=tuple(blobs))
            _PLANS[key] = dp
        return _PLANS[key]
    n = plan.num_vertices
    broken = bool(plan.sym_lt[0].any() or plan.sym_gt[0].any())
    weight, images, order = 1, np.arange(n, dtype=np.int32)[None, :], ORDER_EXT
    if broken and not plan.pattern.distinct:
        weight = int(plan.weight[0])
        images = np.ascontiguousarray(plan.images[0, :weight, :n], np.int32)
        order = ORDER_DEGREE
    elif broken and count:
        order = ORDER_DEGREE
    return DevicePlan(plan_blob(plan, order), weight, images)


def plan_blob(plan: QueryPlan, order: int = ORDER_EXT, p: int = 0) -> np.ndarray:
    """Plan ``p`` of ``plan`` as the kernels' int32 blob (SP_* layout), shape (SP_INTS,);
    ``order``: what its symmetry constraints compare (ORDER_EXT or ORDER_DEGREE)."""
    n = plan.num_vertices
    if not 2 <= n <= K:
        raise ValueError(f"pattern has {n} vertices; the static matcher takes 2..{K}")
    if plan.order.shape[1:] != (K,) or plan.bn_pos.shape[1:] != (K, K):
        raise ValueError(f"plan arrays are padded to {plan.order.shape[1]}, not {K}")
    parts = [
        [n, int(plan.start_elabel[p])],
        plan.vlabel[p],
        plan.bn_cnt[p],
        plan.sym_lt[p],
        plan.sym_gt[p],
        plan.pos[p],
        plan.bn_pos[p].ravel(),
        plan.bn_elabel[p].ravel(),
        [order],
        np.zeros(2 * K),  # SP_IDLO, SP_IDHI: each block fills them in
        [n],  # SP_TAIL: DevicePlan.for_graph sets it
    ]
    blob = np.concatenate([np.asarray(p, np.int64) for p in parts]).astype(np.int32)
    assert blob.shape == (SP_INTS,)
    return blob


@dataclass(frozen=True)
class DeviceCsr:
    """A graph snapshot in device memory (CuPy arrays), its vertices 0..nv-1 numbered by
    label and degree: vertex r is the r-th of the caller's vertices by (label, degree,
    caller's id), so each label's vertices are one run of ids.

    Attributes:
        off: int64 (nv + 1,); row x is nbr[off[x]:off[x + 1]]; off[0] = 0.
        nbr: int32 (>= off[nv],); neighbour ids, ascending within each row, each
            undirected edge in both rows.
        elab: int32, like nbr; the edge label beside each entry.
        vlab: int32 (nv,); vertex labels.
        ext: int64 (nv,); external vertex ids (``distinct`` patterns compare them).
        orig: int32 (nv,); the caller's id of each vertex (match rows are written in it).
        elab_one: the label every edge has, or None (several labels, or no edges).
    """

    off: Any
    nbr: Any
    elab: Any
    vlab: Any
    ext: Any
    orig: Any
    elab_one: int | None = None

    @property
    def nv(self) -> int:
        return int(self.off.shape[0]) - 1

    def check(self) -> None:
        """Raise ValueError when a shape or dtype is not the documented one."""
        want = {
            "off": np.int64,
            "nbr": np.int32,
            "elab": np.int32,
            "vlab": np.int32,
            "ext": np.int64,
            "orig": np.int32,
        }
        for name, dtype in want.items():
            a = getattr(self, name)
            if a.dtype != dtype or a.ndim != 1 or not a.flags.c_contiguous:
                raise ValueError(
                    f"csr.{name}: want a contiguous 1-d {np.dtype(dtype)} array, "
                    f"got {a.dtype} with shape {a.shape}"
                )
        nv = self.nv
        if nv < 0 or nv >= 2**31:
            raise ValueError(f"csr.off has {self.off.shape[0]} entries: nv must be in [0, 2^31)")
        if not self.vlab.shape[0] == self.ext.shape[0] == self.orig.shape[0] == nv:
            raise ValueError(
                f"csr: vlab {self.vlab.shape}, ext {self.ext.shape} and orig "
                f"{self.orig.shape} need ({nv},)"
            )
        if self.elab.shape != self.nbr.shape:
            raise ValueError(f"csr: elab {self.elab.shape} differs from nbr {self.nbr.shape}")


def _blocks(n: int) -> int:
    return max(1, min(_MAX_GRID, -(-n // THREADS)))


def _on_device(cp: Any, x: Any, dtypes: tuple[type, ...], name: str, stream: Any) -> Any:
    """``x`` as a contiguous 1-d device array of one of ``dtypes``: a CuPy array must already
    be one (converting it would launch a kernel); a host array is converted on the host (to
    ``dtypes[0]`` unless it has a listed dtype) and copied on ``stream``."""
    allowed = [np.dtype(d) for d in dtypes]
    if isinstance(x, cp.ndarray):
        if x.dtype not in allowed or x.ndim != 1 or not x.flags.c_contiguous:
            names = " or ".join(d.name for d in allowed)
            raise TypeError(
                f"{name}: want a contiguous 1-d {names} array, got {x.dtype} with shape {x.shape}"
            )
        return x
    host = np.asarray(x).reshape(-1)
    if host.dtype not in allowed:
        if host.size and not np.issubdtype(host.dtype, np.integer):
            raise TypeError(f"{name}: want integers, got {host.dtype}")
        info = np.iinfo(allowed[0].type)  # type: ignore[type-var]
        if host.size and (host.min() < info.min or host.max() > info.max):
            raise ValueError(f"{name}: values outside {allowed[0].name}")
        host = host.astype(allowed[0])
    host = np.ascontiguousarray(host)
    out = cp.empty(host.shape, host.dtype)
    out.set(host, stream=stream)
    return out


def _raise_errors(bits: int, where: str) -> None:
    """A kernel's error bits as an exception: EngineError for a count too large to hold
    (the graph and pattern are fine, the answer is not representable), ValueError for the
    rest (the caller's input or arithmetic is wrong)."""
    if bits:
        what = "; ".join(msg for bit, msg in ERRORS.items() if bits & bit)
        kind = EngineError if bits == ERR_COUNT_OVERFLOW else ValueError
        raise kind(f"{where}: {what}")


def csr_from_edges(
    nv: int, lo: Any, hi: Any, lab: Any, vlab: Any, ext: Any, *, stream: Any = None
) -> DeviceCsr:
    """Build a :class:`DeviceCsr` on the device from undirected edges, its vertices
    numbered by label and degree.

    Args:
        nv: number of vertices (internal ids 0..nv-1).
        lo, hi: int32 or int64 (ne,); edge k joins lo[k] < hi[k], each edge once.
        lab: int32 (ne,); edge labels.
        vlab: int32 (nv,); ext: int64 (nv,); vertex labels and external ids.
        stream: CuPy stream for every step (default: the current one).

    Host (NumPy) arrays are converted and copied; device (CuPy) arrays must already have a
    listed dtype and are only read. Launches csr_vertex_init and csr_degrees (write vkey),
    ``cupy.argsort`` (vkey -> vorder), csr_label_keys (vkey again), ``cupy.argsort``
    (vkey -> vorder), csr_relabel (writes rank, orig and the snapshot's
    vlab, ext), csr_keys (reads lo, hi, rank; writes keys), ``cupy.argsort`` (keys ->
    order), csr_gather (writes nbr, elab, row), csr_offsets (row -> off), csr_label_span
    (reads lab: whether one label is on every edge, ``DeviceCsr.elab_one``), then waits for
    the stream to read the error flags: raises ValueError for a self loop, a reversed or
    out-of-range edge, or a repeated edge.
    """
    import cupy as cp

    mod = load_module()
    stream = stream if stream is not None else cp.cuda.get_current_stream()
    if not 0 <= nv < 2**31:
        raise ValueError(f"nv={nv} must be in [0, 2^31)")
    ne = len(lo)
    if len(hi) != ne or len(lab) != ne:
        raise ValueError(f"lo, hi, lab lengths differ: {ne}, {len(hi)}, {len(lab)}")
    if len(vlab) != nv or len(ext) != nv:
        raise ValueError(f"vlab and ext need {nv} entries, got {len(vlab)} and {len(ext)}")
    if ne and nv < 2:
        raise ValueError(f"{ne} edges on {nv} vertices")
    with stream:
        idx: tuple[type, ...] = (np.int64, np.int32)
        d_lo = _on_device(cp, lo, idx, "lo", stream)
        d_hi = _on_device(cp, hi, (d_lo.dtype.type,), "hi", stream)
        d_lab = _on_device(cp, lab, (np.int32,), "lab", stream)
        d_vlab = _on_device(cp, vlab, (np.int32,), "vlab", stream)
        d_ext = _on_device(cp, ext, (np.int64,), "ext", stream)
        ctl = cp.empty(4, np.uint64)
        ctl.data.memset_async(0, ctl.nbytes, stream)
        m = 2 * ne
        off = cp.empty(nv + 1, np.int64)
        nbr = cp.empty(m, np.int32)
        elab = cp.empty(m, np.int32)
        row = cp.empty(m, np.int32)
        width = "i32" if d_lo.dtype == np.int32 else "i64"
        # The vertices by (degree, id), then by (label, that place).
        vkey = cp.empty(nv, np.int64)
        mod.get_function("csr_vertex_init")((_blocks(nv),), (THREADS,), (vkey, np.int32(nv)))
        if ne:
            mod.get_function("csr_degrees_" + width)(
                (_blocks(ne),), (THREADS,), (d_lo, d_hi, np.int64(ne), np.int32(nv), vkey, ctl)
            )
        vorder = cp.argsort(vkey) if nv else cp.empty(0, np.int64)
        if vorder.dtype != np.int64:  # the kernels read int64 indices
            raise TypeError(f"cupy.argsort returned {vorder.dtype}, want int64")
        mod.get_function("csr_label_keys")(
            (_blocks(nv),), (THREADS,), (vorder, np.int32(nv), d_vlab, vkey)
        )
        vorder = cp.argsort(vkey) if nv else vorder
        rank, orig, s_vlab = (cp.empty(nv, np.int32) for _ in range(3))
        s_ext = cp.empty(nv, np.int64)
        mod.get_function("csr_relabel")(
            (_blocks(nv),), (THREADS,),
            (vorder, np.int32(nv), d_vlab, d_ext, rank, orig, s_vlab, s_ext),
        )  # fmt: skip
        if ne:
            keys = cp.empty(m, np.int64)
            mod.get_function("csr_keys_" + width)(
                (_blocks(ne),),
                (THREADS,),
                (d_lo, d_hi, np.int64(ne), np.int32(nv), rank, keys, ctl),
            )
            order = cp.argsort(keys)
            if order.dtype != np.int64:  # the kernel reads int64 indices
                raise TypeError(f"cupy.argsort returned {order.dtype}, want int64")
            mod.get_function("csr_gather")(
                (_blocks(m),),
                (THREADS,),
                (keys, order, d_lab, np.int64(ne), np.int32(nv), nbr, elab, row, ctl),
            )
        mod.get_function("csr_offsets")(
            (_blocks(nv + 1),), (THREADS,), (row, np.int64(m), np.int32(nv), off)
        )
        span = cp.empty(2, np.uint32)
        span.data.memset_async(0, span.nbytes, stream)
        if ne:
            mod.get_function("csr_label_span")(
                (_blocks(ne),), (THREADS,), (d_lab, np.int64(ne), span)
            )
    _raise_errors(int(ctl.get(stream=stream)[CTL_ERROR]), "csr_from_edges")
    # span: the largest label + 2^31 and the largest 2^32 - 1 - (label + 2^31), as uint32.
    hi, not_lo = (int(x) for x in span.get(stream=stream))
    one = ne > 0 and hi == 0xFFFFFFFF - not_lo
    elab_one = hi - (1 << 31) if one else None
    return DeviceCsr(
        off=off, nbr=nbr, elab=elab, vlab=s_vlab, ext=s_ext, orig=orig, elab_one=elab_one
    )


class StaticMatcher:
    """Counts and enumerates static matches on one CUDA stream.

    Construct it before the persistent kernel starts (it compiles, loads and warms every
    kernel it uses), and call it while that kernel is stopped (module docstring). Calls may
    come from one thread at a time per matcher (they share its stream); each call
    allocates its own buffers from CuPy's pool.

    Args:
        stream: CuPy stream every launch and copy goes on (default: a new non-blocking
            one, gpu-facts rule 3).
        event_waits: before each copy to the host, wait for the stream on a blocking-sync
            event (the thread sleeps in the driver, the GIL released), so that no copy of
            this thread is in flight while a launch runs. For a matcher on its own thread
            beside the persistent kernel: a blocking copy to pageable memory waits out the
            whole launch inside the driver, and the engine thread's own CUDA calls (the
            input ring's copies and events) were seen waiting meanwhile
            (``bench/results/backfill/README.md``, 2026-11-28: polling an event instead
            halved the stream's p50 while a backfill ran; the event wait did better still).
        count_min_blocks: the count kernels' minimum of blocks an SM, capping their
            registers (0: ptxas' own count). The matcher beside the persistent kernel takes
            :data:`BESIDE_COUNT_MIN_BLOCKS`.
    """

    def __init__(
        self, stream: Any = None, *, event_waits: bool = False, count_min_blocks: int = 0
    ) -> None:
        import cupy as cp

        self._cp = cp
        self.stream = stream if stream is not None else cp.cuda.Stream(non_blocking=True)
        self.event_waits = event_waits
        with self.stream:
            self._dummy = cp.empty(2, np.uint64)  # stands for per_start / out when unused
        if count_min_blocks < 0:
            raise ValueError(f"count_min_blocks must be >= 0, got {count_min_blocks}")
        caps = (f"-DCOUNT_MIN_BLOCKS={count_min_blocks}",) if count_min_blocks else ()
        mod = load_module(defines=caps)
        self._kernels = {
            name: mod.get_function(name)
            for name in (
                "static_units",
                "static_count",
                "static_count4",
                "static_count_starts",
                "static_emit",
            )
        }
        self._scan = [mod.get_function(name) for name in ("units_chunk_sums", "units_scan")]
        label_threads = BESIDE_THREADS if count_min_blocks else LABEL_THREADS
        self._labels = LabelCounter(self.stream, self._host, count_min_blocks,
                                    threads=label_threads)  # fmt: skip
        sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
        self._max_blocks = {}
        for name, fn in self._kernels.items():
            regs = max(1, int(fn.num_regs))
            per_sm = max(1, min(65536 // (regs * THREADS), 2048 // THREADS))
            self._max_blocks[name] = sms * per_sm
        self._warm()

    # -- public ------------------------------------------------------------------------

    def csr_from_edges(self, nv: int, lo: Any, hi: Any, lab: Any, vlab: Any, ext: Any) -> DeviceCsr:
        """:func:`csr_from_edges` on this matcher's stream."""
        return csr_from_edges(nv, lo, hi, lab, vlab, ext, stream=self.stream)

    def csr_from_graph(self, graph: Graph) -> DeviceCsr:
        """A host graph's device CSR (vertex i of ``graph.vertex_ids`` is vertex i of the
        edge list given to :func:`csr_from_edges`, which numbers the snapshot its way)."""
        ids = graph.vertex_ids
        sorter = np.argsort(ids, kind="stable")
        a = sorter[np.searchsorted(ids, graph.src, sorter=sorter)]
        b = sorter[np.searchsorted(ids, graph.dst, sorter=sorter)]
        return self.csr_from_edges(len(ids), np.minimum(a, b), np.maximum(a, b),
                                   graph.edge_labels, graph.vertex_labels, ids)  # fmt: skip

    def count(
        self,
        csr: DeviceCsr,
        plan: QueryPlan | Pattern,
        starts: tuple[int, int] | None = None,
        *,
        by_labels: bool = True,
    ) -> int:
        """Number of matches (embeddings; subgraphs for a ``distinct`` pattern), exact.

        A tree or a cycle whose vertex labels are fixed and all different, and a 4-cycle or a
        diamond of one label or a 4-cycle of two labels taking turns, is counted without a
        search (:mod:`.label_count`) unless ``by_labels`` is off, or a count passes 2^64 - 1
        on the way there. Otherwise:

        static_units gives each start edge its units of work (the windows of its level 2),
        their prefix sum is taken (:meth:`_prefix_sum`), and one static_count launch runs
        every unit (warps claim units, so a hub's start is shared by many warps; it writes
        only its ctl words); then waits for the stream. The found matches times the plan's
        weight. ``starts``: only the matches found from start edges [t0, t1) (every match
        is found from one start edge, so the counts of consecutive ranges add up)."""
        dp = device_plan(plan, count=True)
        t0, t1 = self._starts(csr, starts)
        if t0 == t1:
            return 0
        if by_labels and isinstance(plan, Pattern) and counts_on_device(plan):
            counted = self._labels.count(csr, plan, t0, t1)
            if counted is not None:
                return counted
            if (t0, t1) != (0, self.start_edges(csr)):  # the search's slices are others
                raise EngineError(past_64_in_a_slice(plan))
        blob = dp.for_graph(csr.elab_one, count=True)
        with self.stream:
            d_plan = self._upload(dp, csr, count=True)
            ctl = self._ctl()
            units = self._cp.empty(t1 - t0, np.uint64)
            self._launch("static_units", csr, d_plan, t0, t1, ctl, per=units)
            self._prefix_sum(units)
            kernel = "static_count4" if dp.n == 4 and blob[SP_TAIL] == 4 else "static_count"
            self._launch(kernel, csr, d_plan, t0, t1, ctl, per=units)
        got = self._host(ctl)  # waits for the launch (d_plan lives until then)
        _raise_errors(int(got[CTL_ERROR]), kernel)
        return (int(got[CTL_TOTAL]) | int(got[CTL_TOTAL_HI]) << 64) * dp.weight

    def enumerate(
        self,
        csr: DeviceCsr,
        plan: QueryPlan | Pattern,
        chunk_rows: int = 1 << 20,
        segment_starts: int = 1 << 22,
        starts: tuple[int, int] | None = None,
    ) -> Iterator[np.ndarray]:
        """Yield every match as int32 rows (k, n), k <= max(``chunk_rows``, the plan's
        weight): row[x] is the internal id of the data vertex matched to query vertex x.

        Per segment of ``segment_starts`` start edges: static_count_starts (writes
        per_start, in found matches), a copy of those counts to the host, then one
        static_emit per wave (writes the images of at most chunk_rows // weight found
        matches, at least one, into one reused buffer), each followed by a copy of its rows
        to the host. Device memory stays at chunk_rows * n * 4 + segment_starts * 8 bytes
        whatever the number of matches. The order of rows within a chunk is not defined.
        ``starts``: only the matches found from start edges [t0, t1)."""
        dp = device_plan(plan)
        n, w = dp.n, dp.weight
        if chunk_rows < 1 or segment_starts < 1:
            raise ValueError(
                f"chunk_rows={chunk_rows} and segment_starts={segment_starts} must be >= 1"
            )
        t0, t1 = self._starts(csr, starts)
        if t0 == t1:
            return
        cp, s = self._cp, self.stream
        found_max = max(1, chunk_rows // w)  # found matches a wave
        with s:
            d_plan = self._upload(dp, csr, count=False)
            per = cp.empty(min(segment_starts, t1 - t0), np.uint64)
            ctl = self._ctl()
        out = None
        for s0 in range(t0, t1, segment_starts):
            s1 = min(t1, s0 + segment_starts)
            with s:
                ctl.data.memset_async(0, ctl.nbytes, s)
                self._launch("static_count_starts", csr, d_plan, s0, s1, ctl, per=per)
            counts = self._host(per[: s1 - s0])
            _raise_errors(int(self._host(ctl)[CTL_ERROR]), "static_count_starts")
            prefix = np.cumsum(counts, dtype=np.uint64)
            total = int(prefix[-1])
            done = 0
            while done < total:
                end = min(total, done + found_max)
                rows = (end - done) * w
                # The wave: from the start holding rank `done` to the one holding `end - 1`.
                ta = int(np.searchsorted(prefix, np.uint64(done), side="right"))
                tb = int(np.searchsorted(prefix, np.uint64(end - 1), side="right"))
                skip = done - (int(prefix[ta - 1]) if ta else 0)
                take = end - (int(prefix[tb - 1]) if tb else 0)
                with s:
                    if out is None or out.shape[0] < rows:  # rows <= chunk_rows
                        out = cp.empty((rows, n), np.int32)
                    ctl.data.memset_async(0, ctl.nbytes, s)
                    self._launch(
                        "static_emit",
                        csr,
                        d_plan,
                        s0 + ta,
                        s0 + tb + 1,
                        ctl,
                        skip=skip,
                        take=take,
                        out=out,
                        cap=rows,
                    )
                got = self._host(ctl)
                _raise_errors(int(got[CTL_ERROR]), "static_emit")
                if int(got[CTL_ROWS]) != rows:
                    raise RuntimeError(
                        f"static_emit wrote {int(got[CTL_ROWS])} rows of starts "
                        f"[{s0 + ta}, {s0 + tb}], the count said {rows}"
                    )
                yield self._host(out[:rows])
                done = end

    def match(
        self, csr: DeviceCsr, plan: QueryPlan | Pattern, chunk_rows: int = 1 << 20
    ) -> np.ndarray:
        """Every match as one int32 array (k, n) of internal ids (see :meth:`enumerate`)."""
        n = plan.num_vertices if isinstance(plan, Pattern) else plan.pattern.num_vertices
        parts = list(self.enumerate(csr, plan, chunk_rows=chunk_rows))
        return np.concatenate(parts) if parts else np.zeros((0, n), np.int32)

    # -- internals ---------------------------------------------------------------------

    def _starts(self, csr: DeviceCsr, starts: tuple[int, int] | None) -> tuple[int, int]:
        """The start edges [t0, t1) asked for (all of them by default), checked."""
        m = self.start_edges(csr)
        t0, t1 = (0, m) if starts is None else starts
        if not 0 <= t0 <= t1 <= m:
            raise ValueError(f"start edges [{t0}, {t1}) are not within [0, {m})")
        return t0, t1

    def start_edges(self, csr: DeviceCsr) -> int:
        """The snapshot's start edges (its entries, off[nv]: one small copy), once its
        arrays are checked."""
        csr.check()
        m = int(self._host(csr.off[csr.nv :])[0])
        if not 0 <= m <= csr.nbr.shape[0]:
            raise ValueError(f"csr.off[nv] = {m}, but nbr has {csr.nbr.shape[0]} entries")
        return m

    def _host(self, a: Any) -> np.ndarray:
        """``a`` copied to the host once this matcher's stream has done everything before
        the copy (see ``event_waits``: the copy then starts on an idle stream)."""
        if self.event_waits:
            done = self._cp.cuda.Event(block=True, disable_timing=True)
            done.record(self.stream)
            done.synchronize()
        return a.get(stream=self.stream)

    def _upload(self, dp: DevicePlan, csr: DeviceCsr, count: bool) -> tuple[Any, Any, int]:
        """The plan for ``csr`` on the device (:meth:`DevicePlan.for_graph`): (blob, images,
        weight)."""
        blob = self._cp.empty(dp.blob.shape, np.int32)
        blob.set(dp.for_graph(csr.elab_one, count), stream=self.stream)
        images = self._cp.empty(dp.images.size, np.int32)
        images.set(dp.images.ravel(), stream=self.stream)
        return blob, images, dp.weight

    def _prefix_sum(self, a: Any) -> None:
        """a (uint64, 1-d) made its inclusive prefix sum in place, on the current stream (the
        .cu's units_chunk_sums and units_scan)."""
        n = a.shape[0]
        g = max(1, min(SCAN_BLOCKS, -(-n // THREADS)))
        sums = self._cp.empty(g, np.uint64)
        chunk_sums, scan = self._scan
        chunk_sums((g,), (THREADS,), (a, np.int64(n), sums))
        scan((1,), (THREADS,), (sums, np.int64(g), sums))
        scan((g,), (THREADS,), (a, np.int64(n), sums))

    def _ctl(self) -> Any:
        ctl = self._cp.empty(5, np.uint64)
        ctl.data.memset_async(0, ctl.nbytes, self.stream)
        return ctl

    def _launch(
        self,
        name: str,
        csr: DeviceCsr,
        d_plan: tuple[Any, Any, int],
        t0: int,
        t1: int,
        ctl: Any,
        *,
        per: Any = None,
        skip: int = 0,
        take: int = 0,
        out: Any = None,
        cap: int = 0,
    ) -> None:
        """Launch a matching kernel over start edges [t0, t1) on the current stream (the
        caller enters ``with self.stream``); ``per``/``out`` default to a one-word dummy."""
        warps = THREADS // 32
        blocks = max(1, min(self._max_blocks[name], -(-(t1 - t0) // warps)))
        dummy = self._dummy
        args = (
            csr.off,
            csr.nbr,
            csr.elab,
            csr.vlab,
            csr.ext,
            csr.orig,
            np.int32(csr.nv),
            d_plan[0],
            d_plan[1],
            np.int32(d_plan[2]),
            np.int64(t0),
            np.int64(t1),
            np.uint64(skip),
            np.uint64(take),
            ctl,
            dummy if per is None else per,
            dummy if out is None else out,
            np.uint64(cap),
        )
        self._kernels[name]((blocks,), (THREADS,), args)

    def _warm(self) -> None:
        """Run every kernel once (and cupy.argsort on 2^17 keys, past Thrust's single-tile
        size), so that none loads later."""
        cp = self._cp
        rng = np.random.default_rng(0)
        nv = 1 << 12
        a, b = rng.integers(0, nv, 1 << 17), rng.integers(0, nv, 1 << 17)
        key = np.unique(np.minimum(a, b) * nv + np.maximum(a, b))
        key = key[key // nv != key % nv][: 1 << 16]
        lo, hi = (key // nv).astype(np.int32), (key % nv).astype(np.int32)
        with self.stream:
            d_lo, d_hi = cp.asarray(lo), cp.asarray(hi)
        vlab = rng.integers(0, 2, nv).astype(np.int32)
        ext = np.arange(nv, dtype=np.int64)
        lab = np.zeros(len(lo), np.int32)
        csr = self.csr_from_edges(nv, d_lo, d_hi, lab, vlab, ext)
        self.csr_from_edges(
            nv, lo[:100].astype(np.int64), hi[:100].astype(np.int64), lab[:100], vlab, ext
        )
        tri = Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
        edge = Pattern.build("edge", [0, None], [(0, 1, None)])
        for pattern in (tri, edge):
            self.count(csr, pattern)
            for _ in self.enumerate(csr, pattern, chunk_rows=1000):
                pass
        # the label counter's kernels: a labelled tree, a labelled cycle, a 4-cycle, a diamond
        self.count(csr, Pattern.build("ltree", [1, 0], [(0, 1, None)]))
        self.count(csr, Pattern.build("lcycle", [0, 1, 2], [(0, 1, None), (1, 2, None),
                                                            (2, 0, None)]))  # fmt: skip
        self.count(csr, Pattern.build("c4", [None] * 4, [(i, (i + 1) % 4, None) for i in range(4)]))
        self.count(csr, Pattern.build("diamond", [None] * 4, [(0, 1, None), (1, 2, None),
                                                              (2, 0, None), (1, 3, None),
                                                              (3, 2, None)]))  # fmt: skip
        self.stream.synchronize()
