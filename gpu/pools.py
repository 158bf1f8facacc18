"""How large the GPU engine's device tables are, and how they grow.

Three capacities bound what the device holds: the slab pool (adjacency entries, 32 to a
slab), the version table (one row per vertex version) and the vertex tables. Left at 0 in
the settings, the pool and the version table are sized from the graph being loaded
(``HEADROOM`` x what it needs) and grow as a stream outgrows them; a value given is kept
exactly (a stream that outgrows it fails with an error naming the setting). The vertex
tables always grow, by doubling.

The slab pool can also be compacted (its owned runs moved to the front) when freed runs
of the wrong size classes hold much of it.

Nothing changes size, or moves, while the persistent kernel runs. The engine stops it
(every update sent so far applied, every result read), and the functions below allocate the
larger buffers, copy what is live to the same indices, and lay the free rings out again for
their new capacity; the next apply relaunches the kernel. A ring's slot for its k-th element is
k mod its capacity, with head and tail counters that only grow (in ``State``), so moving
it means writing elements [head, tail) at their new positions.

Layout of what moves (gpu/layout.cuh), each buffer a key of the engine's device dict:

    entries    int32 (nslabs * 32, 4)   indexed by slab * 32; [0, slab_bump * 32) in use
    slab_owner int32 (nslabs,)          by slab; -1 where no version owns the run
    slab_free  int32 (ring_words)       one ring per size class c, nslabs >> c slots, at
                                        class_base(nslabs, c); State.free_head/tail[c]
    vers       int32 (maxver, VERSION_INTS)  by version id; [0, ver_bump) in use
    ver_free   int32 (maxver,)          ring; State.ver_free_head/tail
    gcq        int32 (maxver,)          ring of retired versions; State.gcq_head/tail
    vlab, ext, head, vmark, vseg        by vertex

Functions take the array module (numpy or cupy) as ``xp``, so the host tests exercise the
same code the device runs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .mvg import V_CLS, V_KEPT, V_SLAB

# A pool whose GC snapshot shows more than HIGH_WATER of it in use (garbage included) is
# looked at: the engine drains, lets the collector catch up, and grows it when what is then
# in use is still above LIVE_WATER. A new capacity is at least GROWTH x the old one and
# HEADROOM x what is in use, so right after growing it holds at most 2x what is live, and
# the share left free (>= 15 %) absorbs a piece of updates and its garbage. ``reserve``
# adds what the updates sent before the engine looks again may take for sure, which the
# pool must have free (the kernel waits for the collector otherwise, and fails when
# nothing else can free any): a version and at least one slab for every new vertex, a new
# version for every vertex one kernel batch touches, and a new run for each of the arrays a
# piece of updates may copy, counted as the largest arrays (GpuEngine._reserves).
#
# Slabs are looked at by the bump pointer as well as by what is in use: a freed run goes
# back to the free ring of its own size class, so a growing array that needs a larger class
# than any free run takes fresh slabs from the bump region, and once that is spent the pool
# is full whatever the other classes hold.
#
# A pool that would grow for its bump region alone (what is live below LIVE_WATER) is
# compacted instead (compact_first; compact_slab_pool: the owned runs packed at the front,
# the rest bump region again). On the 43M-edge triangle insertion (one H200, four turns
# each against the code before, bench/results/gpu/session19/): the pool stays at 11.6M
# slabs, 6.9 GB, 1.98x the bytes in use, where it grew to 15.1M slabs, 8.7 GB, 2.50x in two
# of four turns, and the device's peak is 9.5 GB instead of 17.2 GB (a growth holds both
# pools while it copies); the rate is level (7.37, 7.15 and 7.15M updates/s against 7.55,
# 7.14 and 7.13M after each side's first run, 5.81 and 6.59M).
# With ``pool_compact``, the engine also compacts at any look where its bump pointer stands
# more than COMPACT_SHARE of its capacity above what is in use. Most of that gap is the runs
# the last batches freed, which the next batches take again, so compaction then recurs: on
# a 43M-edge insertion at batches of 16,384, 11 times for 2.0x the bytes in use instead of
# 2.5x, at 4.7M instead of 6.0M updates/s. Off by default.
HIGH_WATER = 0.85
LIVE_WATER = 0.7  # below 1 / HEADROOM: a pool just grown is not grown again at once
COMPACT_SHARE = 0.2
GROWTH = 1.3
# 1.6 before list tails (docs/delta-lists.md): a 43M-edge insertion's pool then held about
# four batches' replaced runs above what was live; with tails it stays within 1.1x of its
# load (bench/results/scale-up/s10-1128/).
HEADROOM = 1.5
MIN_SLABS = 1 << 16  # 32 MiB of entries
MIN_VERSIONS = 1 << 16
# Slab indices are int32 in the kernel (Version.slab, the free rings; entry offsets are
# 64-bit): 2^30 slabs are 512 GB of entries, more than one GPU holds.
MAX_SLABS = (1 << 30) - 1
SLAB_BYTES = 32 * 16 + 4 + 8  # a slab's entries, its slab_owner word, its free-ring words
ROUND = 1024  # capacities are multiples of this

VERTEX_TABLES = {"vlab": 0, "ext": 0, "head": -1, "vmark": 0, "vseg": 0}  # fill values


def sized(live: int, floor: int, reserve: int = 0) -> int:
    """A first capacity for ``live`` units: HEADROOM x (live + reserve), at least
    ``floor``."""
    return _rounded(max(floor, (live + reserve) * HEADROOM))


def grown_to(cap: int, live: int, reserve: int = 0) -> int:
    """The next capacity of a pool of ``cap`` that holds ``live`` after collection."""
    return _rounded(max(cap * GROWTH, (live + reserve) * HEADROOM))


def worth_a_look(in_use: int, cap: int, reserve: int = 0) -> bool:
    return in_use + reserve > HIGH_WATER * cap


def must_grow(live: int, cap: int, reserve: int = 0) -> bool:
    return live + reserve > LIVE_WATER * cap


def worth_compacting(bump: int, in_use: int, cap: int) -> bool:
    return bump - in_use > COMPACT_SHARE * cap


def compact_first(live: int, bump: int, cap: int, reserve: int, always: bool) -> bool:
    """Whether a look at a self-sized slab pool of ``cap`` (``live`` slabs in use after
    collection, its bump pointer at ``bump``) compacts it before deciding on growth: when
    only its bump region would make it grow, or, ``always`` (``pool_compact``), whenever
    freed runs hold much of it."""
    bump_only = worth_a_look(bump, cap, reserve) and not must_grow(live, cap, reserve)
    return bump_only or (always and worth_compacting(bump, live, cap))


def largest_runs(xp: Any, cls: Any, k: int) -> int:
    """Slabs in the ``k`` largest runs of size classes ``cls`` (a run of class c is 2^c
    slabs): what one piece of updates touching the ``k`` largest arrays copies at most."""
    runs = xp.ones(len(cls), np.int64) << cls.astype(np.int64)
    if len(runs) > k:
        runs = xp.partition(runs, len(runs) - k)[len(runs) - k :]
    return int(runs.sum())


def hub_reserve(xp: Any, cls: Any, k: int) -> int:
    """The slab reserve for the arrays a piece of updates copies: the ``k`` largest runs,
    at most a quarter of all runs (on a small graph the k largest are all of them, and a
    piece touches only some; the kernel waits for the collector when short)."""
    return min(largest_runs(xp, cls, k), largest_runs(xp, cls, len(cls)) // 4)


def live_classes(xp: Any, head: Any, vers: Any) -> Any:
    """Size class of every vertex's newest version (``head``: the vertices' version ids,
    -1 for none; ``vers``: the version table)."""
    return vers[head[head >= 0], V_CLS]


def warm_up(xp: Any, d: dict[str, Any], state: np.void, nclass: int) -> None:
    """Run every table growth, a compaction and the hub measure once on tiny tables shaped
    like ``d``'s (and a state record like ``state``), so that each CuPy kernel they launch
    is compiled and loaded before the persistent kernel runs: a growth or compaction in the
    middle of a stream otherwise stops it for seconds of NVRTC (3 s at the first growth of
    a 43M insertion)."""
    n = 64
    tiny = {name: xp.full(n, fill, d[name].dtype) for name, fill in VERTEX_TABLES.items()}
    tiny["head"][:8] = xp.arange(8, dtype=tiny["head"].dtype)
    tiny.update(
        entries=xp.zeros((n * 32, 4), d["entries"].dtype),
        slab_owner=xp.full(n, -1, d["slab_owner"].dtype),
        slab_free=xp.zeros(ring_words(n, nclass), d["slab_free"].dtype),
        vers=xp.zeros((n, d["vers"].shape[1]), d["vers"].dtype),
        ver_free=xp.zeros(n, d["ver_free"].dtype),
        gcq=xp.zeros(n, d["gcq"].dtype),
    )
    st = np.zeros(1, state.dtype)[0]
    for name in ("slab_bump", "ver_bump", "ver_free_tail", "gcq_tail"):
        st[name] = 1
    st["free_tail"][0] = 1  # one ring of each kind to move
    grow_slab_pool(xp, tiny, st, n, 2 * n, nclass)
    grow_version_table(xp, tiny, st, n, 2 * n)
    grow_vertex_tables(xp, tiny, 2 * n)
    # Version 0 owns slab 0, version 1 is kept (its run is version 0's), version 2 is free:
    # every branch of the compaction runs (a CuPy kernel compiles at its first launch, and
    # an empty array launches none).
    tiny["vers"][1, V_KEPT] = 1
    tiny["ver_free"][1] = 2
    st["ver_bump"], st["ver_free_head"], st["ver_free_tail"], st["slabs_in_use"] = 3, 1, 2, 1
    compact_slab_pool(xp, tiny, st)
    hub_reserve(xp, live_classes(xp, tiny["head"], tiny["vers"]), 4)  # 8 runs: a partition


# Hub bitmaps (gpu/executor.cuh, hub_bits_for): one bit a vertex, for the graph's vertices
# rounded up to HUB_BITS_ROUND. They take no memory of their own: the engine carves them
# from the slab pool's top (the kernel's bump region then ends below them), out of
# HUB_ROOM_SHARE of the room between the pool's look threshold (HIGH_WATER of what the
# graph may use, the reserves counted) and its capacity. The rest of that room is what the
# stream may take before the engine looks at the pool; a look gives the bitmaps' slabs back
# first (the pool's capacity is the graph's again), and the next launch carves what is then
# free.
HUB_BITS_ROUND = 1 << 16
HUB_ROOM_SHARE = 2 / 3
SLAB_ENTRY_BYTES = 32 * 16  # a slab's entries, where the bitmaps lie


def hub_room(cap: int, bump: int, reserve: int) -> int:
    """Slabs the hub bitmaps may take from the top of a pool of ``cap`` slabs whose bump
    pointer is at ``bump``, ``reserve`` slabs kept free (GpuEngine._reserves)."""
    free_above_look = cap - math.ceil((bump + reserve) / HIGH_WATER)
    return max(0, int(free_above_look * HUB_ROOM_SHARE))


def hub_slabs(words: int, slots: int) -> int:
    """Slabs that ``slots`` hub bitmaps of ``words`` words each take from the pool's top."""
    return -(-slots * words * 4 // SLAB_ENTRY_BYTES)


def hub_bitmaps(vertices: int, warps: int, request: int, budget: int) -> tuple[int, int]:
    """(words each, how many) hub bitmaps for a graph of ``vertices``: ``request`` of them
    (-1: one for each of ``warps`` executor warps; never more), as many of those as fit in
    ``budget`` bytes (the carved room, :func:`hub_room`)."""
    words = -(-max(1, vertices) // HUB_BITS_ROUND) * HUB_BITS_ROUND // 32
    count = warps if request < 0 else min(warps, request)
    return words, min(count, budget // (4 * words))


def _rounded(n: float) -> int:
    return -(-int(n) // ROUND) * ROUND


def class_base(nslabs: int, cls: int) -> int:
    """Where size class ``cls``'s free ring starts in slab_free (collector.cuh)."""
    return sum(nslabs >> c for c in range(cls))


def ring_words(nslabs: int, nclass: int) -> int:
    return class_base(nslabs, nclass) + 1


def move_ring(
    xp: Any, src: Any, src_base: int, src_cap: int, dst: Any, dst_base: int, dst_cap: int,
    head: int, tail: int,
) -> None:  # fmt: skip
    """Copy a ring's elements [head, tail) from a ring of ``src_cap`` slots at ``src_base``
    of ``src`` to one of ``dst_cap`` slots at ``dst_base`` of ``dst``."""
    if tail > head:
        k = xp.arange(head, tail, dtype=np.int64)
        dst[dst_base + k % dst_cap] = src[src_base + k % src_cap]


def grow_slab_pool(xp: Any, d: dict[str, Any], st: np.void, old: int, new: int,
                   nclass: int) -> None:  # fmt: skip
    """Replace entries, slab_owner and slab_free in ``d`` by ones for ``new`` slabs."""
    used = int(st["slab_bump"]) * 32
    entries = xp.zeros((new * 32, 4), np.int32)
    entries[:used] = d["entries"][:used]
    owner = xp.full(new, -1, np.int32)
    owner[:old] = d["slab_owner"]
    free = xp.zeros(ring_words(new, nclass), np.int32)
    for c in range(nclass):
        move_ring(xp, d["slab_free"], class_base(old, c), old >> c, free, class_base(new, c),
                  new >> c, int(st["free_head"][c]), int(st["free_tail"][c]))  # fmt: skip
    d.update(entries=entries, slab_owner=owner, slab_free=free)


def compact_slab_pool(xp: Any, d: dict[str, Any], st: np.void, chunk: int = 1 << 18) -> int:
    """Move every run a version owns to the front of the pool, in pool order, and empty the
    free rings: the whole rest becomes bump region again. Returns the slabs in use (the new
    bump pointer); ``st`` (the kernel's State, stopped) gets the new bump and ring heads.

    A freed run goes back to its own class's ring, where only a list of that class takes
    it again, so the bump pointer stands above what is live by the runs those rings hold.
    Versions in use are those not in ver_free: the live ones and the retired ones still in
    the GC queue; each owns its run unless it is ``kept`` (its run then belongs to a later
    version, and moves with it). A run only moves down (runs are taken in pool order and
    packed), so they move ``chunk`` slabs at a time, in order, through a buffer of that
    size: no slice overwrites a slab a later one reads."""
    nver = int(st["ver_bump"])
    vers = d["vers"]
    in_use = xp.ones(nver, bool)
    h, t = int(st["ver_free_head"]), int(st["ver_free_tail"])
    if t > h:
        k = xp.arange(h, t, dtype=np.int64)
        in_use[d["ver_free"][k % d["ver_free"].shape[0]]] = False
    sharers = xp.flatnonzero(in_use & (vers[:nver, V_KEPT] != 0))
    v = xp.flatnonzero(in_use & (vers[:nver, V_KEPT] == 0))
    slab = vers[v, V_SLAB].astype(np.int64)
    order = xp.argsort(slab, kind="stable")
    v, slab = v[order], slab[order]
    size = xp.int64(1) << vers[v, V_CLS].astype(np.int64)
    end = xp.cumsum(size)
    total = int(end[-1]) if len(v) else 0
    if total != int(st["slabs_in_use"]):
        raise RuntimeError(
            f"owned runs hold {total} slabs but the pool counts {int(st['slabs_in_use'])} "
            "in use: not compacting a pool whose books do not balance"
        )
    if len(v) and bool((slab[1:] < slab[:-1] + size[:-1]).any()):
        raise RuntimeError("two owned slab runs overlap: not compacting")
    # A kept version's run is an owner's (at[] names it): it moves with it.
    shared = vers[sharers, V_SLAB].astype(np.int64)
    at = xp.searchsorted(slab, shared).clip(0, max(len(slab) - 1, 0))
    if len(sharers) and (not len(v) or bool((slab[at] != shared).any())):
        raise RuntimeError("a kept version's run has no owner: not compacting")
    new = end - size
    # Slab i of the packed pool comes from slab src[i] of the old one.
    i = xp.arange(total, dtype=np.int64)
    which = xp.searchsorted(end, i, side="right")  # the run packed slab i belongs to
    src = slab[which] + (i - new[which])
    ent = d["entries"].reshape(-1, 32, d["entries"].shape[1])
    buf = xp.empty((min(chunk, total), *ent.shape[1:]), ent.dtype)  # nothing allocated below
    new32, v32 = new.astype(np.int32), v.astype(np.int32)
    for a in range(0, total, chunk):
        b = min(total, a + chunk)
        xp.take(ent, src[a:b], axis=0, out=buf[: b - a])
        ent[a:b] = buf[: b - a]
    vers[sharers, V_SLAB] = new32[at]
    vers[v, V_SLAB] = new32
    d["slab_owner"][:] = -1
    d["slab_owner"][new] = v32
    st["slab_bump"] = total
    st["free_head"][:] = st["free_tail"]
    return total


def grow_version_table(xp: Any, d: dict[str, Any], st: np.void, old: int, new: int) -> None:
    """Replace vers, ver_free and gcq in ``d`` by ones for ``new`` versions."""
    vers = xp.zeros((new, d["vers"].shape[1]), np.int32)
    used = int(st["ver_bump"])
    vers[:used] = d["vers"][:used]
    ver_free = xp.zeros(new, np.int32)
    move_ring(xp, d["ver_free"], 0, old, ver_free, 0, new, int(st["ver_free_head"]),
              int(st["ver_free_tail"]))  # fmt: skip
    gcq = xp.zeros(new, np.int32)
    move_ring(xp, d["gcq"], 0, d["gcq"].shape[0], gcq, 0, new, int(st["gcq_head"]),
              int(st["gcq_tail"]))  # fmt: skip
    d.update(vers=vers, ver_free=ver_free, gcq=gcq)


def grow_vertex_tables(xp: Any, d: dict[str, Any], new: int) -> None:
    """Replace the per-vertex tables in ``d`` by ones for ``new`` vertices."""
    for name, fill in VERTEX_TABLES.items():
        old = d[name]
        table = xp.full(new, fill, old.dtype)
        table[: old.shape[0]] = old
        d[name] = table
