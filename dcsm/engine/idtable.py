"""External vertex ids to internal ids: an open-addressing hash table in one numpy array.

Both engines map every external vertex id (any int64) to a dense internal id (int32, in
first-seen order). The map is read once or twice per update at admission and once per
endpoint at bulk load, so it is a flat array the numba kernels take as a plain argument
(a numba typed Dict cost 0.45 us per update at 4.3M updates and could not be built in
parallel):

=============  ==============  ======================================================
array          dtype           meaning
=============  ==============  ======================================================
``slots``      int64 (C, 2)    ``[key, value]`` per slot; value -1 marks a free slot
                               (every int64 is a valid key, so keys have no sentinel)
=============  ==============  ======================================================

Values are internal ids (int32 range) stored as int64 beside their key, so a probe reads
one 16-byte slot, one cache line: with separate key and value arrays every lookup of a
table larger than the cache missed twice (15 vs 33 M lookups/s in one thread, 4.8M keys).

C is a power of two. A key's home slot is the top log2(C) bits of ``key * 0x9E37...15``
mod 2^64 (Fibonacci hashing: consecutive ids land far apart, and the top bits of the
product depend on every bit of the key); collisions probe linearly. Nothing is ever
deleted, so a lookup stops at the first free slot. The owner keeps the load factor at most
1/2 (:meth:`IdTable.ensure` rehashes into a larger table before inserts that would pass
it), which keeps probe runs short.

Bulk inserts run in parallel without atomics: thread t owns the home slots of one
contiguous range of the table and inserts only the keys whose home lies there, probing
no further than its range's end; the few keys whose probe would cross into the next
range are inserted afterwards, sequentially, with ordinary wrap-around probing. A key
stored that way is still found by a plain lookup, because every slot between its home
and its place was occupied when it was placed, and occupied slots stay occupied.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

# 0x9E3779B97F4A7C15 (2^64 / golden ratio) as a signed int64: products wrap mod 2^64.
_MUL = np.int64(-7046029254386353131)
MIN_CAPACITY = 16
EMPTY = -1


@njit(cache=True, nogil=True, inline="always")
def _shift(cap):  # type: ignore[no-untyped-def]
    """64 - log2(cap) for a power of two cap >= 2 (the shift that keeps the top bits)."""
    b = 0
    while (np.int64(1) << b) < cap:
        b += 1
    return 64 - b


@njit(cache=True, nogil=True, inline="always")
def _home(key, shift, mask):  # type: ignore[no-untyped-def]
    # Arithmetic shift then mask: the top (64 - shift) bits of the wrapped product.
    return ((key * _MUL) >> shift) & mask


@njit(cache=True, nogil=True, inline="always")
def get(slots, shift, key):  # type: ignore[no-untyped-def]
    """The value of ``key``, or -1; ``shift`` is ``table_shift(slots)``."""
    mask = slots.shape[0] - 1
    s = _home(key, shift, mask)
    while True:
        v = slots[s, 1]
        if v < 0 or slots[s, 0] == key:
            return v
        s = (s + 1) & mask


@intrinsic
def _prefetch_row(typingctx, arr, row):  # type: ignore[no-untyped-def]
    """Ask the CPU to bring row ``row`` of the 2-D array ``arr`` into its caches
    (``llvm.prefetch``: a read, kept close), without waiting for it."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(row, types.Integer)):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        aryty = sig.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        r = context.cast(builder, args[1], sig.args[1], types.intp)
        zero = context.get_constant(types.intp, 0)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [r, zero])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        # rw 0 (read), locality 3 (keep in every level), cache type 1 (data).
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, row), codegen


@njit(cache=True, nogil=True, inline="always")
def prefetch(slots, shift, key):  # type: ignore[no-untyped-def]
    """Start loading ``key``'s home slot, for a lookup of it soon: a table larger than the
    caches misses on nearly every lookup, and a loop that prefetches the keys some
    lookups ahead overlaps those misses (a lookup pass of 2 x 1M keys in a table of 4.8M:
    23.7 -> 13.5 ns an update on the development host)."""
    _prefetch_row(slots, _home(key, shift, slots.shape[0] - 1))


@njit(cache=True, nogil=True, inline="always")
def put(slots, shift, key, val):  # type: ignore[no-untyped-def]
    """Insert key -> val unless key is present; returns the value stored for key now."""
    mask = slots.shape[0] - 1
    s = _home(key, shift, mask)
    while True:
        v = slots[s, 1]
        if v < 0:
            slots[s, 0] = key
            slots[s, 1] = val
            return val
        if slots[s, 0] == key:
            return v
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def table_shift(slots):  # type: ignore[no-untyped-def]
    return _shift(slots.shape[0])


@njit(parallel=True, cache=True)
def _insert_many(keys, vals, slots, nthreads):  # type: ignore[no-untyped-def]
    """Insert keys[i] -> vals[i] (see the module docstring for the parallel scheme).
    Returns the smallest i whose key was already present (or repeated in keys), else -1;
    such a key keeps the value stored first."""
    cap = slots.shape[0]
    mask = cap - 1
    shift = _shift(cap)
    n = keys.shape[0]
    late = np.zeros(n, np.bool_)
    dup = np.zeros(n, np.bool_)
    for t in prange(nthreads):
        s0 = cap * t // nthreads
        s1 = cap * (t + 1) // nthreads
        for i in range(n):
            key = keys[i]
            s = _home(key, shift, mask)
            if s < s0 or s >= s1:
                continue
            while s < s1:
                if slots[s, 1] < 0:
                    slots[s, 0] = key
                    slots[s, 1] = vals[i]
                    break
                if slots[s, 0] == key:
                    dup[i] = True
                    break
                s += 1
            if s == s1:
                late[i] = True
    first = -1
    for i in range(n):
        if late[i]:
            if get(slots, shift, keys[i]) >= 0:
                dup[i] = True
            else:
                put(slots, shift, keys[i], vals[i])
        if dup[i] and first < 0:
            first = i
    return first


@njit(parallel=True, cache=True)
def lookup_many(slots, query, out):  # type: ignore[no-untyped-def]
    """out[i] = the value of query[i], or -1."""
    shift = _shift(slots.shape[0])
    for i in prange(query.shape[0]):
        out[i] = get(slots, shift, query[i])


@njit(cache=True)
def distinct(xs):  # type: ignore[no-untyped-def]
    """The distinct values of int64 ``xs`` in first-seen order (one table pass, no sort)."""
    cap = MIN_CAPACITY
    while cap < 2 * xs.shape[0]:
        cap *= 2
    slots = np.full((cap, 2), -1, np.int64)
    shift = _shift(cap)
    out = np.empty(xs.shape[0], np.int64)
    n = 0
    for i in range(xs.shape[0]):
        if put(slots, shift, xs[i], n) == n:
            out[n] = xs[i]
            n += 1
    return out[:n]


def capacity_for(n: int) -> int:
    """The smallest power of two table that holds n keys at load factor <= 1/2."""
    cap = MIN_CAPACITY
    while cap < 2 * n:
        cap *= 2
    return cap


class DuplicateKeyError(ValueError):
    """A key given to :meth:`IdTable.insert` is already in the table (or given twice)."""

    def __init__(self, key: int) -> None:
        super().__init__(f"key {key} is already in the table")
        self.key = key


class IdTable:
    """The hash table (module docstring). ``slots`` is replaced by :meth:`ensure`: kernels
    take it afresh after every call of it.

    The table does not count its keys (admission inserts inside a kernel); the caller
    passes the count to :meth:`ensure` (the engines: their vertex count).
    """

    def __init__(self, room: int = 512) -> None:
        """An empty table with room for ``room`` keys."""
        self.slots = _empty(capacity_for(room))

    @property
    def capacity(self) -> int:
        return int(self.slots.shape[0])

    def __len__(self) -> int:
        """Stored keys (a scan of the table: for tests and checks, not hot paths)."""
        return int(np.count_nonzero(self.slots[:, 1] >= 0))

    @classmethod
    def from_keys(cls, keys: np.ndarray, vals: np.ndarray | None = None) -> IdTable:
        """A table mapping keys[i] -> vals[i] (default i); int64 ``keys`` (n,), ``vals``
        (n,) in 0..2^31-1. Raises :class:`DuplicateKeyError` when a key repeats."""
        table = cls(len(keys))
        table.insert(keys, vals)
        return table

    def ensure(self, n: int) -> None:
        """Room for n keys in all at load factor <= 1/2 (rehashing into a table at least
        twice as large when needed)."""
        if 2 * n <= self.capacity:
            return
        old = self.slots[self.slots[:, 1] >= 0]
        self.slots = _empty(max(capacity_for(n), 2 * self.capacity))
        _insert_many(old[:, 0].copy(), old[:, 1].copy(), self.slots, _threads(len(old)))

    def insert(self, keys: np.ndarray, vals: np.ndarray | None = None) -> None:
        """Insert keys[i] -> vals[i] (default i). The caller made room (:meth:`ensure`) for
        them; raises :class:`DuplicateKeyError` for a key already present or repeated (the
        other keys are inserted all the same)."""
        keys = np.ascontiguousarray(keys, np.int64)
        vals = np.arange(len(keys)) if vals is None else np.ascontiguousarray(vals, np.int64)
        if len(vals) != len(keys):
            raise ValueError(f"{len(keys)} keys but {len(vals)} values")
        if len(keys) and (vals.min() < 0 or vals.max() > 2**31 - 1):
            raise ValueError("values must be in 0..2^31-1 (-1 marks a free slot)")
        first = _insert_many(keys, vals, self.slots, _threads(len(keys)))
        if first >= 0:
            raise DuplicateKeyError(int(keys[first]))

    def lookup(self, query: np.ndarray) -> np.ndarray:
        """int32 values of the int64 ``query`` ids (n,), -1 where absent."""
        query = np.ascontiguousarray(query, np.int64)
        out = np.empty(len(query), np.int32)
        lookup_many(self.slots, query, out)
        return out


def _empty(cap: int) -> np.ndarray:
    return np.full((cap, 2), EMPTY, np.int64)


def _threads(n: int) -> int:
    """Threads for a bulk insert of n keys: one below 64K keys (not worth the wake-up)."""
    return 1 if n < 1 << 16 else numba.get_num_threads()
